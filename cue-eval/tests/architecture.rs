//! The crate's boundaries, checked: `cue-eval` depends on no Kubernetes, async-runtime or
//! command-line crate; its published package holds no test corpus; `timoni-core` evaluates
//! only through the facade (`Context`, `Loader`, `Value`, `Error`) and reaches the syntax only
//! through `cue_eval::syntax::Document` (no syntax-tree walking of its own); so do the CLI and
//! the controller. The conformance runners use the facade and `Document` too, and nothing of
//! `cue_eval::testing` (the `testing` feature, for the benchmarks and fuzz targets); no product
//! crate and no conformance runner enables that feature, and no integration test of this crate
//! uses it (tests of internals are unit tests beside the code).
//!
//! The checks read the workspace around the crate and run `cargo`; outside the repository (a
//! packaged crate) they skip with a message.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

fn workspace() -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()?
        .to_path_buf();
    if root.join("timoni-core").is_dir() {
        Some(root)
    } else {
        eprintln!("SKIP: not inside the timoni-rs workspace");
        None
    }
}

fn cargo() -> Command {
    Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
}

/// Every crate `cue-eval` pulls in as a normal (non-dev, non-build) dependency, by name.
fn normal_dependencies(root: &Path) -> BTreeSet<String> {
    let out = cargo()
        .args(["metadata", "--format-version", "1", "--offline", "--locked"])
        .current_dir(root)
        .output()
        .expect("run cargo metadata");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).expect("metadata JSON");
    let names: BTreeMap<&str, &str> = meta["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .map(|p| (p["id"].as_str().unwrap(), p["name"].as_str().unwrap()))
        .collect();
    let nodes: BTreeMap<&str, &serde_json::Value> = meta["resolve"]["nodes"]
        .as_array()
        .expect("resolve")
        .iter()
        .map(|n| (n["id"].as_str().unwrap(), n))
        .collect();
    let start = names
        .iter()
        .find(|(_, n)| **n == "cue-eval")
        .map(|(id, _)| *id)
        .expect("cue-eval in the workspace");
    let mut seen = BTreeSet::new();
    let mut todo = vec![start];
    while let Some(id) = todo.pop() {
        for dep in nodes[id]["deps"].as_array().into_iter().flatten() {
            let normal = dep["dep_kinds"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|k| k["kind"].is_null());
            let pkg = dep["pkg"].as_str().unwrap();
            if normal && seen.insert(pkg) {
                todo.push(pkg);
            }
        }
    }
    seen.into_iter().map(|id| names[id].to_string()).collect()
}

#[test]
fn cue_eval_depends_on_no_kubernetes_async_or_cli_crate() {
    let Some(root) = workspace() else { return };
    let deps = normal_dependencies(&root);
    assert!(
        deps.contains("logos"),
        "the walk found the parser's lexer: {deps:?}"
    );
    let banned: Vec<&String> = deps
        .iter()
        .filter(|d| {
            d.starts_with("kube")
                || d.starts_with("k8s")
                || d.starts_with("tokio")
                || d.starts_with("clap")
                || d.starts_with("oci-")
        })
        .collect();
    assert!(banned.is_empty(), "cue-eval depends on {banned:?}");
}

#[test]
fn the_package_holds_no_test_corpus() {
    let Some(root) = workspace() else { return };
    let out = cargo()
        .args([
            "package",
            "-p",
            "cue-eval",
            "--list",
            "--allow-dirty",
            "--offline",
        ])
        .current_dir(&root)
        .output()
        .expect("run cargo package --list");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let list = String::from_utf8(out.stdout).unwrap();
    assert!(list.lines().any(|l| l == "src/lib.rs"), "{list}");
    let stray: Vec<&str> = list
        .lines()
        .filter(|l| l.starts_with("testdata/") || l.starts_with("tests/") || l.contains("shared/"))
        .collect();
    assert!(stray.is_empty(), "packaged test data: {stray:?}");
}

/// Syntax-tree paths an embedder has no business with; `timoni-core` uses
/// `cue_eval::syntax::Document` instead.
const SYNTAX_INTERNALS: &[&str] = &[
    "cue_eval::ast",
    "cue_eval::syntax::ast",
    "cue_eval::parse(",
    "cue_eval::parse_with",
    "cue_eval::lexer",
    "cue_eval::syntax::lexer",
    "cue_eval::literal",
    "cue_eval::syntax::literal",
    "cue_eval::dump",
    "Expr::",
    "Decl::",
];

/// Evaluator and loader internals: the facade (`Context`, `Loader`, `Value`, `Error`) is the
/// way in.
const EVAL_INTERNALS: &[&str] = &[
    "cue_eval::eval",
    "cue_eval::load",
    "eval::api",
    "eval::print",
    "EvalError",
    "LoadErrorKind",
    "LoadedFile",
    "format_errors",
];

#[test]
fn timoni_core_walks_no_syntax_tree() {
    let Some(root) = workspace() else { return };
    let hits = lines_with(&root.join("timoni-core/src"), SYNTAX_INTERNALS);
    assert!(
        hits.is_empty(),
        "timoni-core reaches into the syntax tree:\n{}",
        hits.join("\n")
    );
}

#[test]
fn timoni_core_evaluates_through_the_facade() {
    let Some(root) = workspace() else { return };
    let hits = lines_with(&root.join("timoni-core/src"), EVAL_INTERNALS);
    assert!(
        hits.is_empty(),
        "timoni-core reaches into the evaluator or the loader:\n{}",
        hits.join("\n")
    );
}

#[test]
fn the_cli_and_the_controller_evaluate_through_the_facade() {
    let Some(root) = workspace() else { return };
    let mut hits = Vec::new();
    for dir in ["timoni-cli/src", "timoni-controller/src"] {
        hits.extend(lines_with(&root.join(dir), EVAL_INTERNALS));
        hits.extend(lines_with(&root.join(dir), SYNTAX_INTERNALS));
    }
    assert!(
        hits.is_empty(),
        "the CLI or the controller reaches into cue-eval's internals:\n{}",
        hits.join("\n")
    );
}

/// The door for the benchmarks and the fuzz targets.
const TESTING: &[&str] = &["cue_eval::testing", "testing::"];

/// The lines of `krate`'s sources under `dirs` that use the testing door, and those of its
/// manifest that enable it.
fn testing_door_uses(root: &Path, krate: &str, dirs: &[&str]) -> Vec<String> {
    let mut hits = Vec::new();
    for dir in dirs {
        hits.extend(lines_with(&root.join(krate).join(dir), TESTING));
    }
    let manifest = std::fs::read_to_string(root.join(krate).join("Cargo.toml")).unwrap();
    for (i, line) in manifest.lines().enumerate() {
        if line.contains("cue-eval") && line.contains("testing") {
            hits.push(format!("{krate}/Cargo.toml:{}: {}", i + 1, line.trim()));
        }
    }
    hits
}

#[test]
fn no_product_crate_uses_the_testing_door() {
    let Some(root) = workspace() else { return };
    let mut hits = Vec::new();
    for krate in ["timoni-core", "timoni-cli", "timoni-controller"] {
        hits.extend(testing_door_uses(&root, krate, &["src"]));
    }
    assert!(
        hits.is_empty(),
        "a product crate reaches cue-eval through its testing door:\n{}",
        hits.join("\n")
    );
}

/// The crate's integration tests use what an embedder uses; tests of internals are unit tests
/// next to the code they test.
#[test]
fn integration_tests_do_not_use_the_testing_door() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let hits: Vec<String> = lines_with(&dir, TESTING)
        .into_iter()
        // This file names the door in its own checks.
        .filter(|l| !l.contains("/architecture.rs:"))
        .collect();
    assert!(
        hits.is_empty(),
        "an integration test of cue-eval uses its testing door:\n{}",
        hits.join("\n")
    );
}

#[test]
fn conformance_uses_only_the_public_api() {
    let Some(root) = workspace() else { return };
    let mut hits = Vec::new();
    for dir in ["conformance/src", "conformance/tests"] {
        hits.extend(lines_with(&root.join(dir), EVAL_INTERNALS));
        hits.extend(
            lines_with(&root.join(dir), SYNTAX_INTERNALS)
                .into_iter()
                .filter(|l| l.contains("cue_eval::")),
        );
    }
    assert!(
        hits.is_empty(),
        "the conformance runners reach into cue-eval's internals:\n{}",
        hits.join("\n")
    );
    // Not even through the door: the runners use the facade and `syntax::Document` alone.
    let door = testing_door_uses(&root, "conformance", &["src", "tests"]);
    assert!(
        door.is_empty(),
        "the conformance runners use cue-eval's testing door:\n{}",
        door.join("\n")
    );
}

/// Every line of the `.rs` files under `dir` that contains one of `needles`, as
/// `path:line: text`.
fn lines_with(dir: &Path, needles: &[&str]) -> Vec<String> {
    let mut hits = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let text = std::fs::read_to_string(&p).unwrap();
                for (i, line) in text.lines().enumerate() {
                    if needles.iter().any(|s| line.contains(s)) {
                        hits.push(format!("{}:{}: {}", p.display(), i + 1, line.trim()));
                    }
                }
            }
        }
    }
    hits
}
