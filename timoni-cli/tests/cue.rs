//! End-to-end tests of `timoni cue …`: the real binary on the packages in `testdata/cue/`, with
//! its stdout, stderr and exit code as insta snapshots. Each snapshot starts with the command.

use std::path::Path;
use std::process::{Command, Stdio};

/// Runs `timoni cue ARGS` in `testdata/cue/<dir>` and renders what a user would see.
fn cue(dir: &str, args: &[&str]) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/testdata/cue");
    let out = Command::new(env!("CARGO_BIN_EXE_timoni"))
        .arg("cue")
        .args(args)
        .current_dir(root.join(dir))
        .env_remove("NO_COLOR")
        .stdin(Stdio::null())
        .output()
        .expect("run timoni");
    format!(
        "$ timoni cue {}\nexit: {}\n--- stdout\n{}--- stderr\n{}",
        args.join(" "),
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    )
}

#[test]
fn export_prints_json_by_default() {
    insta::assert_snapshot!(cue("ok", &["export", "app.cue", "selector.cue"]));
}

#[test]
fn export_prints_yaml_for_a_directory() {
    insta::assert_snapshot!(cue("ok", &["export", "--out", "yaml", "."]));
}

#[test]
fn export_selects_a_path_with_e() {
    insta::assert_snapshot!(cue("ok", &["export", "-e", "spec.selector"]));
}

#[test]
fn export_errors_are_in_cue_shape_and_fail() {
    insta::assert_snapshot!(cue("conflict", &["export"]));
}

#[test]
fn eval_prints_cue_with_definitions_and_constraints() {
    insta::assert_snapshot!(cue("ok", &["eval"]));
}

#[test]
fn eval_fails_on_errors() {
    insta::assert_snapshot!(cue("conflict", &["eval", "in.cue"]));
}

#[test]
fn eval_ignore_shows_errors_in_place() {
    insta::assert_snapshot!(cue("conflict", &["eval", "-i", "in.cue"]));
}

#[test]
fn eval_leaves_incomplete_values_unless_concrete() {
    insta::assert_snapshot!(cue("incomplete", &["eval"]));
    let concrete = cue("incomplete", &["eval", "-c"]);
    assert!(concrete.contains("exit: 1"), "{concrete}");
}

#[test]
fn vet_concrete_fails_on_a_missing_required_field() {
    insta::assert_snapshot!(cue("incomplete", &["vet", "-c"]));
}

#[test]
fn vet_allows_incomplete_values_with_a_note() {
    insta::assert_snapshot!(cue("incomplete", &["vet"]));
}

#[test]
fn vet_passes_silently() {
    insta::assert_snapshot!(cue("ok", &["vet", "-c"]));
}

#[test]
fn a_missing_file_is_one_clear_error() {
    insta::assert_snapshot!(cue("ok", &["eval", "nope.cue"]));
}

#[test]
fn an_unknown_tag_is_an_error() {
    insta::assert_snapshot!(cue("ok", &["export", "-t", "env=prod"]));
}

/// A module whose `cue.mod/module.cue` declares no `language: version:` is refused as `cue`
/// refuses it, before the unknown tag `mv` is noticed.
#[test]
fn a_module_without_a_language_version_is_refused() {
    insta::assert_snapshot!(cue(
        "nolang",
        &["export", "-t", "name=demo", "-t", "mv=1.0.0", "./"]
    ));
}

#[test]
fn export_loads_a_module_with_imports_tags_and_if() {
    insta::assert_snapshot!(cue(
        "module",
        &["export", "-e", "timoni.apply", "-t", "name=demo", "./"]
    ));
    insta::assert_snapshot!(
        "export_loads_a_module_debug",
        cue(
            "module",
            &[
                "export",
                "-e",
                "values",
                "-t",
                "name=demo",
                "-t",
                "debug",
                "./"
            ]
        )
    );
}

#[test]
fn typed_tags_check_their_value() {
    insta::assert_snapshot!(cue(
        "module",
        &["export", "-t", "name=demo", "-t", "replicas=x", "./"]
    ));
}

#[test]
fn vet_checks_every_document_of_a_data_file() {
    insta::assert_snapshot!(cue("data", &["vet", "schema.cue", "ok.yaml"]));
}

#[test]
fn export_unifies_a_json_file_with_the_schema() {
    insta::assert_snapshot!(cue("data", &["export", "schema.cue", "good.json"]));
}

#[test]
fn fmt_checks_files_like_timoni_fmt() {
    insta::assert_snapshot!(cue("ok", &["fmt", "--diff", "."]));
}

/// The binary does not load the C math library: `pow` and `log2`, the only functions of it
/// that anything calls, are defined in `main.rs`, which saves every run the mapping of
/// `libm.so` (about 500 KiB of peak RSS). `ldd` lists what the dynamic loader maps.
#[test]
fn the_binary_does_not_load_libm() {
    let out = match Command::new("ldd")
        .arg(env!("CARGO_BIN_EXE_timoni"))
        .output()
    {
        Ok(out) => out,
        Err(e) => {
            eprintln!(
                "!!!!!!!! SKIP: ldd cannot run ({e}): not checking the libraries timoni loads"
            );
            return;
        }
    };
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "ldd failed:\n{text}");
    assert!(text.contains("libc.so"), "unexpected ldd output:\n{text}");
    assert!(!text.contains("libm.so"), "timoni loads libm:\n{text}");
}
