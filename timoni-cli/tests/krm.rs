//! End-to-end tests of `timoni fn` and `timoni fn vet`, the KRM function: the real binary fed the
//! `ResourceList`s of `testdata/krm/` on stdin (run in that directory, so that the relative
//! module paths reach `testdata/timoni/module`), with snapshots of stdout, stderr and the exit
//! code. The OCI cases (hermetic fetch from the cache) are in `oci.rs`, beside the registry.

mod common;

use std::path::{Path, PathBuf};

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/testdata/krm")
}

/// Runs `timoni ARGS < testdata/krm/INPUT` and renders what a user sees.
fn run(args: &[&str], input: &str) -> String {
    let dir = testdata();
    let text = std::fs::read_to_string(dir.join(input)).unwrap();
    let mut shown: Vec<&str> = args.to_vec();
    shown.push("<");
    shown.push(input);
    let out = common::run_timoni(
        &dir,
        args,
        Some(&text),
        &["TIMONI_KUBE_VERSION", "TIMONI_CACHE_DIR", "TIMONI_CACHING"],
        &[],
        Some(&dir),
    );
    // Show the redirection in the command line of the snapshot.
    out.replacen(
        &format!("$ timoni {}", args.join(" ")),
        &format!("$ timoni {}", shown.join(" ")),
        1,
    )
}

#[test]
fn fn_appends_the_instance_objects_to_the_kept_items() {
    insta::assert_snapshot!(run(&["fn"], "instance.yaml"));
}

#[test]
fn fn_builds_bundles_instance_by_instance() {
    insta::assert_snapshot!(run(&["fn"], "bundle.yaml"));
}

#[test]
fn fn_output_is_deterministic() {
    let a = run(&["fn"], "bundle.yaml");
    let b = run(&["fn"], "bundle.yaml");
    assert_eq!(a, b);
}

#[test]
fn fn_errors_are_results_and_a_non_zero_exit() {
    let mut all = String::new();
    for input in [
        "bad-config.yaml",
        "build-error.yaml",
        "oci-offline.yaml",
        "not-a-list.yaml",
        "no-config.yaml",
    ] {
        all.push_str(&run(&["fn", "--cache-dir", "no-cache"], input));
        all.push('\n');
    }
    assert!(!testdata().join("no-cache").exists(), "nothing written");
    insta::assert_snapshot!(all);
}

#[test]
fn fn_vet_reports_each_violation_with_its_field_path() {
    let out = run(&["fn", "vet"], "vet-broken.yaml");
    assert!(out.contains("exit: 1"), "{out}");
    // Three broken objects: exactly three results, each with a field path.
    let results = out.split("results:\n").nth(1).unwrap_or("");
    let results = results.split("--- stderr").next().unwrap();
    assert_eq!(results.matches("\n  severity: error").count(), 3, "{out}");
    assert_eq!(results.matches("- field:\n    path: ").count(), 3, "{out}");
    insta::assert_snapshot!(out);
}

#[test]
fn fn_vet_passes_valid_items_and_warns_about_unknown_kinds() {
    insta::assert_snapshot!(run(&["fn", "vet"], "vet-valid.yaml"));
}

#[test]
fn fn_vet_uses_the_crd_schemas_of_a_bundles_modules() {
    let out = run(&["fn", "vet"], "vet-crd.yaml");
    insta::assert_snapshot!(out);
}
