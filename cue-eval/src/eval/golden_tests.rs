//! Golden tests of the evaluator: every `testdata/eval/NAME.cue` is exported as JSON and
//! compared with `NAME.out` (the JSON, or the error text when the export fails). The inputs
//! are small programs written for this repository, one behaviour each; the shared conformance
//! corpus is measured separately by the `conformance` crate.
//!
//! A file whose comment lines name selections (`// -e apply`) is exported at each of them
//! instead, as `cue export -e apply` does, each result after a `== -e apply` line.
//!
//! `UPDATE_GOLDEN=1 cargo test -p cue-eval --lib eval::golden_tests` rewrites the `.out` files.

use std::path::Path;

use super::api::{Instance, format_errors};
use super::print;
use crate::encode::{Data, to_json_indent};

/// The `cue eval` text of `sources` compiled as one package, or the errors as `cue` prints them.
fn eval_text(sources: &[(String, String)]) -> Result<String, String> {
    let mut inst = Instance::from_sources(sources).map_err(|e| format_errors(&e))?;
    Ok(print::eval_text(&mut inst))
}

/// The value at the `cue export -e` expression `path` of `sources` compiled as one package, or
/// the errors as `cue` prints them.
fn export_path(sources: &[(String, String)], path: &str) -> Result<Data, String> {
    let mut inst = Instance::from_sources(sources).map_err(|e| format_errors(&e))?;
    let labels = print::split_path(path);
    let labels: Vec<&str> = labels.iter().map(String::as_str).collect();
    print::export_path(&mut inst, &labels).map_err(|e| format_errors(&e))
}

fn export(name: &str, src: &str) -> String {
    let selections: Vec<&str> = src
        .lines()
        .filter_map(|l| l.strip_prefix("// -e "))
        .map(str::trim)
        .collect();
    if !selections.is_empty() {
        return selections
            .iter()
            .map(|e| format!("== -e {e}\n{}", export_at(name, src, e)))
            .collect();
    }
    match Instance::from_sources(&[(name.to_string(), src.to_string())]) {
        Ok(mut inst) => match inst.export_json() {
            Ok(json) => json,
            Err(e) => e,
        },
        Err(errs) => format_errors(&errs),
    }
}

/// `cue export -e expr` of a fresh instance of the file.
fn export_at(name: &str, src: &str, expr: &str) -> String {
    match export_path(&[(name.to_string(), src.to_string())], expr) {
        Ok(d) => to_json_indent(&d, false),
        Err(errs) => errs,
    }
}

#[test]
fn golden_exports() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/eval");
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .expect("testdata/eval exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "cue"))
        .collect();
    names.sort();
    assert!(!names.is_empty(), "no .cue files in {}", dir.display());
    let mut failures = Vec::new();
    for path in names {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let src = std::fs::read_to_string(&path).unwrap();
        let got = export(&name, &src);
        let out = path.with_extension("out");
        if update {
            std::fs::write(&out, &got).unwrap();
            continue;
        }
        let want = std::fs::read_to_string(&out)
            .unwrap_or_else(|_| panic!("missing {}; run with UPDATE_GOLDEN=1", out.display()));
        if got != want {
            failures.push(format!("{name}:\n--- want\n{want}\n--- got\n{got}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A definition that embeds a plain struct and is unified with that same struct again keeps the
/// embedded fields allowed in the definition itself (`cue eval` shows no error there).
#[test]
fn definition_embedding_a_struct_it_is_unified_with() {
    let src = "Base: name: string\n#Full: #Wrap & Base\n#Wrap: {\n\tBase\n\tsize?: int\n}\n";
    let text = eval_text(&[("in.cue".into(), src.into())]).unwrap();
    assert!(!text.contains("_|_"), "{text}");
    assert!(text.contains("#Full: {\n    name: string"), "{text}");
}

/// A `!=x` next to a bound that `x` does not satisfy says nothing more and is dropped, in
/// either order (CUE's `SimplifyBounds`); one that `x` satisfies stays.
#[test]
fn redundant_not_equal_bounds_are_dropped() {
    let src = "s1: !=\"b\" & =~\"c\"\ns2: >5 & !=5\ns3: !=11 & >=0 & <=10\ns4: >=2 & !=2\n";
    let text = eval_text(&[("in.cue".into(), src.into())]).unwrap();
    assert!(text.contains("s1: =~\"c\"\n"), "{text}");
    assert!(text.contains("s2: >5\n"), "{text}");
    assert!(text.contains("s3: >=0 & <=10\n"), "{text}");
    assert!(text.contains("s4: >=2 & !=2\n"), "{text}");
}
