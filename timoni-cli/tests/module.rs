//! End-to-end tests of `timoni mod vet`, `timoni mod show config`, `timoni version` and
//! `timoni completion` on the small module in `testdata/timoni/module`, as insta snapshots.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn module() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/testdata/timoni/module")
}

fn run(dir: &Path, args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_timoni"))
        .args(args)
        .current_dir(dir)
        .env_remove("TIMONI_KUBE_VERSION")
        .stdin(Stdio::null())
        .output()
        .expect("run timoni");
    format!(
        "$ timoni {}\nexit: {}\n--- stdout\n{}\n--- stderr\n{}",
        args.join(" "),
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout),
        common::redact_log_times(&String::from_utf8_lossy(&out.stderr)),
    )
}

#[test]
fn mod_vet_lists_resources_images_and_the_module() {
    insta::assert_snapshot!(run(&module(), &["mod", "vet"]));
}

#[test]
fn mod_vet_debug_uses_the_debug_values() {
    insta::assert_snapshot!(run(
        &module(),
        &["mod", "lint", ".", "--debug", "--name", "dbg"]
    ));
}

/// The starter `mod init` writes ships `debug_values.cue`: `mod vet --debug` vets with it, and
/// Timoni's documented `--values debug_values.cue` builds with it.
#[test]
fn the_starter_vets_and_builds_with_its_debug_values() {
    let tmp = tempfile::tempdir().unwrap();
    let init = run(tmp.path(), &["mod", "init", "demo"]);
    assert!(init.contains("exit: 0"), "{init}");
    let dir = tmp.path().join("demo");
    let vet = run(&dir, &["mod", "vet", "--debug"]);
    let build = run(
        &dir,
        &[
            "build",
            "demo",
            ".",
            "--values",
            "debug_values.cue",
            "-n",
            "dbg",
        ],
    );
    let deployment = build
        .split("\n---\n")
        .find(|d| d.contains("kind: Deployment"))
        .expect("a Deployment")
        .to_string();
    insta::assert_snapshot!(format!("{vet}\n{deployment}"));
}

/// `mod show readme` prints the module's README.md; a module without one is one clear error.
#[test]
fn mod_show_readme_prints_the_readme() {
    let tmp = tempfile::tempdir().unwrap();
    let copied = Command::new("cp")
        .arg("-r")
        .arg(module())
        .arg(tmp.path())
        .status()
        .unwrap();
    assert!(copied.success());
    let dir = tmp.path().join("module");
    let missing = run(&dir, &["mod", "show", "readme"]);
    std::fs::write(dir.join("README.md"), "# demo\n\nA module.\n").unwrap();
    let shown = run(&dir, &["mod", "show", "readme", "."]);
    insta::assert_snapshot!(format!("{missing}\n{shown}"));
}

/// Without `debug_values.cue`, `--debug` vets with the default values and says so, as Timoni.
#[test]
fn mod_vet_debug_without_debug_values_falls_back_to_the_defaults() {
    let tmp = tempfile::tempdir().unwrap();
    let copied = Command::new("cp")
        .arg("-r")
        .arg(module())
        .arg(tmp.path())
        .status()
        .unwrap();
    assert!(copied.success());
    let dir = tmp.path().join("module");
    std::fs::remove_file(dir.join("debug_values.cue")).unwrap();
    insta::assert_snapshot!(run(&dir, &["mod", "vet", ".", "--debug"]));
}

#[test]
fn mod_vet_fails_on_invalid_values() {
    insta::assert_snapshot!(run(
        &module(),
        &["mod", "vet", "-f", "../values/invalid.cue"]
    ));
}

#[test]
fn mod_show_config_prints_the_documented_schema() {
    insta::assert_snapshot!(run(&module(), &["mod", "show", "config"]));
}

#[test]
fn mod_show_config_writes_a_readme_table() {
    let dir = tempfile::tempdir().unwrap();
    let readme = dir.path().join("README.md");
    std::fs::write(
        &readme,
        "# Demo\n\n## Configuration\n\n| Old | Table |\n|-----|-------|\n| `x:` | `int` |\n\n## License\n\nApache-2.0\n",
    )
    .unwrap();
    let out = run(
        &module(),
        &["mod", "show", "config", ".", "-o", readme.to_str().unwrap()],
    );
    assert!(out.contains("exit: 0"), "{out}");
    insta::assert_snapshot!(std::fs::read_to_string(&readme).unwrap());
}

#[test]
fn version_prints_yaml_or_json() {
    let dir = module();
    let text = run(&dir, &["version"]) + &run(&dir, &["version", "-o", "json"]);
    insta::assert_snapshot!(text.replace(env!("CARGO_PKG_VERSION"), "[VERSION]"));
}

#[test]
fn completion_scripts_are_generated_for_every_shell() {
    for shell in ["bash", "zsh", "fish", "powershell"] {
        let out = Command::new(env!("CARGO_BIN_EXE_timoni"))
            .args(["completion", shell])
            .output()
            .unwrap();
        assert!(out.status.success(), "{shell}");
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(
            text.contains("timoni") && text.contains("bundle"),
            "{shell}"
        );
    }
}

/// Timoni's `mod_show_config_test.go` expectations, on its test module (the corpus's
/// `testdata-module`), read in place.
#[test]
fn mod_show_config_of_timonis_test_module_has_what_timonis_test_expects() {
    let Some(module) = common::corpus_path("timoni/testdata-module/module") else {
        return;
    };
    let text = common::stdout_of(
        Command::new(env!("CARGO_BIN_EXE_timoni"))
            .args(["mod", "show", "config"])
            .arg(&module),
    );
    assert!(text.starts_with("#Config: {"), "{text}");
    for want in [
        "enabled: *true | bool",
        "repository: *\"cgr.dev/chainguard/timoni\" | string",
        "server: enabled: *true | bool",
        "// Annotations applied to pods\n\tpodAnnotations?: {[string]: string}",
        "team: \"test\"\n",
        "domain: *\"example.internal\" | string",
    ] {
        assert!(text.contains(want), "missing {want:?} in:\n{text}");
    }
    for unwanted in ["kubeVersion!", "moduleVersion!"] {
        assert!(!text.contains(unwanted), "{unwanted} in:\n{text}");
    }
}

/// `mod show config -o` writes a local module's README; for an OCI module it is Timoni's error,
/// before anything is pulled.
#[test]
fn mod_show_config_output_is_refused_for_oci_modules() {
    let out = run(
        &module(),
        &[
            "mod",
            "show",
            "config",
            "oci://127.0.0.1:1/x",
            "-o",
            "README.md",
        ],
    );
    insta::assert_snapshot!(out, @r"
    $ timoni mod show config oci://127.0.0.1:1/x -o README.md
    exit: 1
    --- stdout

    --- stderr
    [HH:MM] ERR --output is not supported for OCI modules, the README is published with the artifact
    ");
}
