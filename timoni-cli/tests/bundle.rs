//! End-to-end tests of `timoni bundle build|vet` and `timoni runtime build` on the bundles in
//! `testdata/timoni/bundles/` (two instances of the small test module), as insta snapshots.

mod common;

use std::path::{Path, PathBuf};

fn bundles() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/testdata/timoni/bundles")
}

fn run(args: &[&str], env: &[(&str, &str)], stdin: Option<&str>) -> String {
    // Errors in the module name its files by their absolute paths.
    let testdata = bundles().parent().unwrap().to_path_buf();
    common::run_timoni(
        &bundles(),
        args,
        stdin,
        &["TIMONI_KUBE_VERSION", "DOMAIN"],
        env,
        Some(&testdata),
    )
}

#[test]
fn bundle_build_prints_instances_in_order_with_sorted_objects() {
    insta::assert_snapshot!(run(&["bundle", "build", "-f", "demo.cue"], &[], None));
}

#[test]
fn bundle_build_injects_runtime_values_for_the_selected_cluster() {
    insta::assert_snapshot!(run(
        &[
            "bundle",
            "build",
            "-f",
            "demo.cue",
            "-f",
            "override.yaml",
            "--runtime-from-env",
            "-r",
            "runtime.cue",
            "--runtime-cluster",
            "PROD-EU",
            "--mask-secrets",
        ],
        &[("DOMAIN", "env.example")],
        None
    ));
}

#[test]
fn bundle_build_output_is_the_same_at_any_concurrency() {
    let one = run(
        &["bundle", "build", "-f", "demo.cue", "--concurrency", "1"],
        &[],
        None,
    );
    let four = run(
        &["bundle", "build", "-f", "demo.cue", "--concurrency", "4"],
        &[],
        None,
    );
    assert_eq!(
        one.replace("--concurrency 1", ""),
        four.replace("--concurrency 4", "")
    );
}

/// Sections past the memory the run keeps them in (1 MiB) go to a temporary file: five
/// instances with a 200 KB annotation each come out whole, in bundle order, at any concurrency.
#[test]
fn bundle_build_output_larger_than_kept_in_memory_comes_out_whole_and_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let module = bundles().parent().unwrap().join("module");
    let names = ["echo", "alpha", "delta", "charlie", "bravo"];
    let mut text =
        String::from("bundle: {\n\tapiVersion: \"v1alpha1\"\n\tname: \"big\"\n\tinstances: {\n");
    for (i, name) in names.iter().enumerate() {
        let filler = format!("{i}").repeat(200_000);
        text.push_str(&format!(
            "\t\t{name}: {{module: url: \"file://{}\", namespace: \"ns\", values: annotations: big: \"{filler}\"}}\n",
            module.display()
        ));
    }
    text.push_str("\t}\n}\n");
    std::fs::write(dir.path().join("big.cue"), text).unwrap();
    let build = |concurrency: &str| {
        common::stdout_of(
            std::process::Command::new(env!("CARGO_BIN_EXE_timoni"))
                .args([
                    "bundle",
                    "build",
                    "-f",
                    "big.cue",
                    "--concurrency",
                    concurrency,
                ])
                .current_dir(dir.path())
                .env_remove("TIMONI_KUBE_VERSION"),
        )
    };
    let one = build("1");
    assert!(one.len() > 1 << 20, "{} bytes", one.len());
    let sections: Vec<&str> = one.split("---\n# Instance: ").skip(1).collect();
    assert_eq!(sections.len(), names.len());
    for (i, (section, name)) in sections.iter().zip(names).enumerate() {
        assert!(section.starts_with(&format!("{name}\n")), "{name}");
        // Each of the instance's two config maps holds its filler whole, and no other.
        let filler = format!("{i}").repeat(200_000);
        assert_eq!(section.matches(filler.as_str()).count(), 2, "{name}");
        for j in (0..names.len()).filter(|&j| j != i) {
            assert!(
                !section.contains(&format!("{j}").repeat(1000)),
                "{name} holds {j}"
            );
        }
    }
    assert_eq!(build("3"), one);
}

#[test]
fn bundle_build_writes_one_file_per_object_with_output_dir() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let text = run(
        &["bundle", "build", "-f", "demo.cue", "--output-dir", out],
        &[],
        None,
    );
    assert!(text.contains("exit: 0"), "{text}");
    let mut files: Vec<String> = walk(dir.path())
        .iter()
        .map(|p| p.strip_prefix(dir.path()).unwrap().display().to_string())
        .collect();
    files.sort();
    assert_eq!(
        files,
        [
            "backend/v1_configmap_backend-client.yaml",
            "backend/v1_configmap_backend-server.yaml",
            "backend/v1_secret_backend.yaml",
            "frontend/v1_configmap_frontend-client.yaml",
        ]
    );
    let secret =
        std::fs::read_to_string(dir.path().join("backend/v1_secret_backend.yaml")).unwrap();
    assert!(secret.contains("password: hunter2"), "{secret}");
}

/// As in Timoni, each instance's files are written as soon as it is built: when one fails,
/// the others' files are there, and no instance is reported.
#[test]
fn bundle_build_output_dir_keeps_the_instances_built_before_a_failure() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let text = run(
        &[
            "bundle",
            "build",
            "-f",
            "bad-instance.cue",
            "--output-dir",
            out,
        ],
        &[],
        None,
    );
    assert!(text.contains("exit: 1"), "{text}");
    assert!(text.contains("build failed for backend"), "{text}");
    assert!(!text.contains("exported"), "{text}");
    let files: Vec<String> = walk(dir.path())
        .iter()
        .map(|p| p.strip_prefix(dir.path()).unwrap().display().to_string())
        .collect();
    assert_eq!(files, ["frontend/v1_configmap_frontend-client.yaml"]);
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn bundle_vet_lists_instances_per_cluster() {
    insta::assert_snapshot!(run(
        &["bundle", "vet", "-f", "demo.cue", "-r", "runtime.cue"],
        &[],
        None
    ));
}

#[test]
fn bundle_vet_prints_the_value_per_named_cluster() {
    insta::assert_snapshot!(run(
        &[
            "bundle",
            "vet",
            "-f",
            "demo.cue",
            "-f",
            "-",
            "-r",
            "runtime.cue",
            "--runtime-group",
            "Staging",
            "--print-value",
        ],
        &[],
        Some("bundle: instances: frontend: values: client: enabled: true\n")
    ));
}

#[test]
fn bundle_errors_are_one_clear_message() {
    let mut all = String::new();
    for (args, env) in [
        (&["bundle", "vet", "-f", "invalid.cue"][..], &[][..]),
        (&["bundle", "vet", "-f", "empty.cue"], &[]),
        (
            &[
                "bundle",
                "build",
                "-f",
                "bad-number.cue",
                "--runtime-from-env",
            ],
            &[("PORT", "s3cr3t")],
        ),
        // One instance of two fails: nothing is printed, as in Timoni.
        (&["bundle", "build", "-f", "bad-instance.cue"], &[]),
        (
            &["bundle", "build", "-f", "demo.cue", "-r", "runtime.cue"],
            &[],
        ),
        (
            &[
                "bundle",
                "build",
                "-f",
                "demo.cue",
                "-r",
                "runtime.cue",
                "--runtime-cluster",
                "nope",
            ],
            &[],
        ),
    ] {
        all.push_str(&run(args, env, None));
        all.push('\n');
    }
    insta::assert_snapshot!(all);
}

#[test]
fn runtime_build_prints_the_values_of_each_cluster() {
    insta::assert_snapshot!(run(&["runtime", "build", "-f", "runtime.cue"], &[], None));
}
