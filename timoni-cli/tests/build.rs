//! End-to-end tests of `timoni build`: the real binary on the small module in
//! `testdata/timoni/` (snapshots of what a user sees), and on the seven Timoni modules of the
//! shared conformance corpus, whose objects must equal `expected-build.json` in order.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/testdata/timoni")
}

/// Runs `timoni ARGS` in `dir` with `stdin` and renders the command, exit code and output.
fn run_in(dir: &Path, args: &[&str], stdin: Option<&str>, env: &[(&str, &str)]) -> String {
    let root = testdata();
    common::run_timoni(dir, args, stdin, &["TIMONI_KUBE_VERSION"], env, Some(&root))
}

fn timoni(args: &[&str]) -> String {
    run_in(&testdata().join("module"), args, None, &[])
}

#[test]
fn build_prints_yaml_documents_with_the_default_values() {
    insta::assert_snapshot!(timoni(&["build", "demo", ".", "-n", "apps"]));
}

#[test]
fn build_merges_values_files_in_order() {
    insta::assert_snapshot!(timoni(&[
        "build",
        "demo",
        "file://.",
        "-f",
        "../values/external.cue",
        "-f",
        "../values/external.yaml",
        "-f",
        "../values/external.json",
        "-o",
        "json"
    ]));
}

#[test]
fn build_reads_values_from_stdin() {
    insta::assert_snapshot!(run_in(
        &testdata().join("module"),
        &[
            "template",
            "demo",
            ".",
            "-f",
            "-",
            "-f",
            "../values/client-only.cue"
        ],
        Some("values: domain: \"stdin.example\"\n"),
        &[]
    ));
}

#[test]
fn build_with_debug_uses_debug_values_and_masks_secrets() {
    insta::assert_snapshot!(timoni(&["build", "demo", ".", "--debug", "--mask-secrets"]));
}

#[test]
fn build_kube_version_comes_from_the_environment() {
    insta::assert_snapshot!(run_in(
        &testdata().join("module"),
        &["build", "demo", ".", "-f", "../values/client-only.cue"],
        None,
        &[("TIMONI_KUBE_VERSION", "1.19.0")]
    ));
}

#[test]
fn build_errors_are_one_clear_message() {
    let mut all = String::new();
    for args in [
        &["build", "demo", ".", "-f", "../values/too-many-ports.cue"][..],
        &["build", "demo", ".", "-f", "../values/bad-syntax.cue"],
        &["build", "demo", ".", "-f", "../values/invalid.cue"],
        &["build", "demo", ".", "-f", "../values/bad-name.cue"],
        &["build", "demo", ".", "-f", "../values/values.toml"],
        &["build", "demo", ".", "-p", "test"],
        &["build", "demo", "../values"],
        // A malformed OCI URL fails before any network access.
        &["build", "demo", "oci://ghcr.io/Example/demo"],
    ] {
        all.push_str(&timoni(args));
        all.push('\n');
    }
    insta::assert_snapshot!(all);
}

/// A module whose `cue.mod/module.cue` declares no `language: version:` is refused with
/// Timoni's words (and how to fix it), by `build` and by `mod vet`.
#[test]
fn a_module_without_a_language_version_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let module = tmp.path().join("module");
    copy_dir(&testdata().join("module"), &module);
    std::fs::write(
        module.join("cue.mod/module.cue"),
        "module: \"timoni.sh/demo\"\n",
    )
    .unwrap();
    let mut all = String::new();
    for args in [&["build", "demo", "."][..], &["mod", "vet"]] {
        all.push_str(&run_in(&module, args, None, &[]));
        all.push('\n');
    }
    insta::assert_snapshot!(all);
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.path().is_dir() {
            copy_dir(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

/// The shared corpus's Timoni modules, or `None` (with a loud reason) when it is absent.
fn corpus_modules() -> Option<Vec<PathBuf>> {
    let dir = common::corpus_path("timoni")?;
    let Ok(entries) = std::fs::read_dir(&dir) else {
        panic!("{} is not a readable directory", dir.display());
    };
    let mut cases: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("expected-build.json").is_file())
        .collect();
    cases.sort();
    Some(cases)
}

fn data_to_json(d: &cue_eval::encode::Data) -> serde_json::Value {
    serde_json::from_str(&cue_eval::encode::to_json_indent(d, false)).unwrap()
}

#[test]
fn build_of_the_corpus_modules_gives_the_expected_objects_in_order() {
    let Some(cases) = corpus_modules() else {
        return;
    };
    assert_eq!(cases.len(), 7, "expected the 7 Timoni cases");
    for case in cases {
        let expected: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(case.join("expected-build.json")).unwrap(),
        )
        .unwrap();
        let sets: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(expected["stdout"].as_str().unwrap()).unwrap();
        let want: Vec<serde_json::Value> = sets
            .values()
            .flat_map(|s| s.as_array().unwrap().clone())
            .collect();
        let module = case.join("module");
        let module = module.to_str().unwrap();
        let json = Command::new(env!("CARGO_BIN_EXE_timoni"))
            .args(["build", "test", module, "-n", "default", "-o", "json"])
            .env_remove("TIMONI_KUBE_VERSION")
            .output()
            .unwrap();
        assert!(
            json.status.success(),
            "{}: {}",
            case.display(),
            String::from_utf8_lossy(&json.stderr)
        );
        let list: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
        assert_eq!(list["kind"], "List");
        assert_eq!(
            list["items"].as_array().unwrap(),
            &want,
            "{}: -o json",
            case.display()
        );

        // An empty values file takes the merge path (values.cue replaced in memory) and must
        // change nothing.
        let empty = tempfile::NamedTempFile::with_suffix(".cue").unwrap();
        std::fs::write(empty.path(), "values: {}\n").unwrap();
        let merged = Command::new(env!("CARGO_BIN_EXE_timoni"))
            .args(["build", "test", module, "-n", "default", "-o", "json", "-f"])
            .arg(empty.path())
            .env_remove("TIMONI_KUBE_VERSION")
            .output()
            .unwrap();
        assert!(
            merged.status.success(),
            "{}: {}",
            case.display(),
            String::from_utf8_lossy(&merged.stderr)
        );
        assert_eq!(
            merged.stdout,
            json.stdout,
            "{}: -f with empty values",
            case.display()
        );

        let yaml = Command::new(env!("CARGO_BIN_EXE_timoni"))
            .args(["build", "test", module, "-n", "default"])
            .env_remove("TIMONI_KUBE_VERSION")
            .output()
            .unwrap();
        assert!(yaml.status.success());
        let text = String::from_utf8(yaml.stdout).unwrap();
        assert!(
            text.ends_with("---\n"),
            "every YAML document is followed by ---"
        );
        let docs: Vec<serde_json::Value> = cue_eval::decode::yaml(&text)
            .unwrap()
            .iter()
            .filter(|d| !matches!(d, cue_eval::encode::Data::Null))
            .map(data_to_json)
            .collect();
        assert_eq!(docs, want, "{}: -o yaml", case.display());
    }
}
