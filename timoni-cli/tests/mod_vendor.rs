//! End-to-end tests of the provisional `timoni mod init` and `timoni mod vendor crd`: the real
//! binary in a temporary directory, with stdout, stderr and exit code as insta snapshots (the
//! temporary path is redacted to `[TMP]`). The module `mod init` writes must export the starter's
//! objects, and vendored CRD schemas must accept sample custom resources.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn run(dir: &Path, args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_timoni"))
        .args(args)
        .current_dir(dir)
        .env_remove("NO_COLOR")
        .stdin(Stdio::null())
        .output()
        .expect("run timoni");
    let tmp = dir.display().to_string();
    let code = out.status.code().unwrap_or(-1);
    (
        code,
        format!(
            "exit: {code}\n--- stdout\n{}--- stderr\n{}",
            String::from_utf8_lossy(&out.stdout).replace(&tmp, "[TMP]"),
            common::redact_log_times(&String::from_utf8_lossy(&out.stderr)).replace(&tmp, "[TMP]"),
        ),
    )
}

const EXPORT: [&str; 13] = [
    "cue",
    "export",
    "-e",
    "timoni.apply",
    "--out",
    "json",
    "-t",
    "name=demo",
    "-t",
    "namespace=default",
    "-t",
    "mv=0.0.0-devel",
    "-t",
];

fn export(module: &Path, kv: &str) -> (i32, String) {
    let mut args: Vec<&str> = EXPORT.to_vec();
    let kv = format!("kv={kv}");
    args.push(&kv);
    args.push(".");
    run(module, &args)
}

#[test]
fn init_writes_a_module_that_exports_its_objects() {
    let tmp = tempfile::tempdir().unwrap();
    let (code, out) = run(tmp.path(), &["mod", "init", "demo", "x"]);
    assert_eq!(code, 0, "{out}");
    insta::assert_snapshot!("init", out);
    let module = tmp.path().join("x/demo");
    let (code, out) = export(&module, "1.34.0");
    assert_eq!(code, 0, "{out}");
    let kinds: Vec<&str> = out
        .lines()
        .filter_map(|l| l.trim().strip_prefix("\"kind\": "))
        .collect();
    assert_eq!(
        kinds,
        ["\"ServiceAccount\",", "\"Service\",", "\"Deployment\","]
    );
    insta::assert_snapshot!("init_export", out);
}

#[test]
fn the_starter_refuses_an_old_cluster() {
    let tmp = tempfile::tempdir().unwrap();
    run(tmp.path(), &["mod", "init", "demo"]);
    let module = tmp.path().join("demo");
    let (code, out) = run(
        &module,
        &[
            "cue",
            "export",
            "-e",
            "timoni.instance.config.clusterVersion",
            "-t",
            "name=demo",
            "-t",
            "namespace=default",
            "-t",
            "mv=0.0.0-devel",
            "-t",
            "kv=1.19.0",
            ".",
        ],
    );
    assert_ne!(code, 0);
    assert!(
        out.contains("invalid value 19 (out of bound >=20)"),
        "{out}"
    );
}

#[test]
fn init_never_overwrites_and_checks_the_name() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("demo")).unwrap();
    std::fs::write(tmp.path().join("demo/keep.txt"), "mine").unwrap();
    let (_, out) = run(tmp.path(), &["mod", "init", "demo"]);
    insta::assert_snapshot!("init_existing", out);
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("demo/keep.txt")).unwrap(),
        "mine"
    );
    let (_, out) = run(tmp.path(), &["mod", "init", "My_App"]);
    insta::assert_snapshot!("init_bad_name", out);
}

/// Without `-v`, the schemas embedded in the binary, with no network; with `-v`, the registry
/// (here a port where nothing listens: the error keeps its cause).
#[test]
fn vendor_k8s_without_a_version_writes_the_embedded_schemas() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir(tmp.path().join("cue.mod")).unwrap();
    let (_, ok) = run(tmp.path(), &["mod", "vendor", "k8s"]);
    let (_, other) = run(
        tmp.path(),
        &[
            "mod",
            "vendor",
            "k8s",
            "-v",
            "1.28",
            "--repository",
            "oci://127.0.0.1:9/kubernetes-schema",
        ],
    );
    insta::assert_snapshot!("vendor_k8s", format!("{ok}\n{other}"));
    assert!(
        tmp.path()
            .join("cue.mod/gen/k8s.io/apimachinery/pkg/apis/meta/v1/types_go_gen.cue")
            .is_file()
    );
}

fn widgets_crd() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../timoni-core/tests/testdata/crd/widgets.yaml")
}

#[test]
fn vendored_crds_accept_custom_resources() {
    let tmp = tempfile::tempdir().unwrap();
    run(tmp.path(), &["mod", "init", "demo"]);
    let module = tmp.path().join("demo");
    std::fs::copy(widgets_crd(), module.join("widgets.yaml")).unwrap();
    let (code, out) = run(&module, &["mod", "vendor", "crd", "-f", "widgets.yaml"]);
    assert_eq!(code, 0, "{out}");
    insta::assert_snapshot!("vendor_crd", out);
    assert!(
        module
            .join("cue.mod/gen/example.dev/widget/v1/types_gen.cue")
            .is_file()
    );
    std::fs::create_dir(module.join("check")).unwrap();
    std::fs::write(
        module.join("check/check.cue"),
        r#"package check

import widget "example.dev/widget/v1"

ok: widget.#Widget & {
	metadata: name: "w"
	spec: {colour: "red", replicas: 3, extra: {known: true, other: 1}}
}
"#,
    )
    .unwrap();
    let (code, out) = run(&module, &["cue", "export", "-e", "ok", "./check"]);
    assert_eq!(code, 0, "{out}");
    insta::assert_snapshot!("vendor_crd_accepts", out);
    // Two sources, an unknown colour, too many replicas: each is an error.
    std::fs::write(
        module.join("check/check.cue"),
        r#"package check

import widget "example.dev/widget/v1"

bad: widget.#Widget & {
	metadata: name: "w"
	spec: {colour: "pink", replicas: 11, source: {git: "g", oci: "o"}}
}
"#,
    )
    .unwrap();
    let (code, out) = run(&module, &["cue", "export", "-e", "bad", "./check"]);
    assert_ne!(code, 0, "{out}");
    for field in ["spec.colour", "spec.replicas", "spec.source"] {
        assert!(out.contains(field), "{field} not reported:\n{out}");
    }
}

#[test]
fn vendor_crd_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let (_, no_cue_mod) = run(
        tmp.path(),
        &[
            "mod",
            "vendor",
            "crd",
            "-f",
            &widgets_crd().display().to_string(),
        ],
    );
    let (_, url) = run(
        tmp.path(),
        &[
            "mod",
            "vendor",
            "crd",
            "-f",
            "https://example.com/crds.yaml",
        ],
    );
    std::fs::create_dir(tmp.path().join("cue.mod")).unwrap();
    let (_, missing) = run(tmp.path(), &["mod", "vendor", "crd", "-f", "nope.yaml"]);
    std::fs::write(
        tmp.path().join("bad.yaml"),
        "kind: CustomResourceDefinition\n",
    )
    .unwrap();
    let (_, invalid) = run(tmp.path(), &["mod", "vendor", "crd", "-f", "bad.yaml"]);
    insta::assert_snapshot!(
        "vendor_crd_errors",
        format!("{no_cue_mod}\n{url}\n{missing}\n{invalid}")
    );
}

/// `oneOf` of `required` lists: exactly one branch's fields must be present; a branch whose
/// required field is absent does not count as a match.
#[test]
fn vendored_one_of_accepts_exactly_one_branch() {
    let tmp = tempfile::tempdir().unwrap();
    run(tmp.path(), &["mod", "init", "demo"]);
    let module = tmp.path().join("demo");
    std::fs::copy(widgets_crd(), module.join("widgets.yaml")).unwrap();
    run(&module, &["mod", "vendor", "crd", "-f", "widgets.yaml"]);
    std::fs::create_dir(module.join("check")).unwrap();
    std::fs::write(
        module.join("check/check.cue"),
        r#"package check

import widget "example.dev/widget/v1"

ok: widget.#Widget & {
	metadata: name: "w"
	spec: {colour: "red", replicas: 3, source: oci: "ghcr.io/x"}
}
"#,
    )
    .unwrap();
    let (code, out) = run(&module, &["cue", "export", "-e", "ok", "./check"]);
    assert_eq!(code, 0, "{out}");
}

/// Timoni's own CRD test inputs: the vendored cert-manager schemas accept a Certificate.
#[test]
fn cert_manager_schemas_accept_a_certificate() {
    let Some(src) = common::corpus_path("timoni-crd/source/cert-manager.crds.yaml") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    run(tmp.path(), &["mod", "init", "demo"]);
    let module = tmp.path().join("demo");
    let (code, out) = run(
        &module,
        &["mod", "vendor", "crd", "-f", &src.display().to_string()],
    );
    assert_eq!(code, 0, "{out}");
    std::fs::create_dir(module.join("check")).unwrap();
    std::fs::write(
        module.join("check/check.cue"),
        r#"package check

import cm "cert-manager.io/certificate/v1"

cert: cm.#Certificate & {
	metadata: {name: "web", namespace: "default"}
	spec: {
		secretName: "web-tls"
		dnsNames: ["example.com"]
		issuerRef: {name: "letsencrypt", kind: "ClusterIssuer"}
		privateKey: {algorithm: "ECDSA", size: 256}
	}
}
"#,
    )
    .unwrap();
    let (code, out) = run(&module, &["cue", "export", "-e", "cert", "./check"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("\"secretName\": \"web-tls\""), "{out}");
}
