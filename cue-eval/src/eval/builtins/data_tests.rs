//! Data-driven standard-library tests: every `testdata/stdlib/<name>.cue` is exported as JSON
//! and compared, as a JSON value, with `testdata/stdlib/<name>.json`.

use std::path::Path;

use crate::eval::api::{Instance, format_errors};

/// A minimal JSON normaliser: removes insignificant whitespace outside strings, so that the
/// expected files can be written on one line.
fn compact(s: &str) -> String {
    let mut out = String::new();
    let mut in_str = false;
    let mut esc = false;
    for c in s.chars() {
        if in_str {
            out.push(c);
            if esc {
                esc = false;
            } else if c == '\\' {
                esc = true;
            } else if c == '"' {
                in_str = false;
            }
        } else if c == '"' {
            in_str = true;
            out.push(c);
        } else if !c.is_whitespace() {
            out.push(c);
        }
    }
    out
}

#[test]
fn stdlib_cases() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/stdlib");
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "cue"))
        .collect();
    names.sort();
    assert!(!names.is_empty());
    let mut failures = Vec::new();
    for p in names {
        let src = std::fs::read_to_string(&p).unwrap();
        let want = std::fs::read_to_string(p.with_extension("json")).unwrap();
        let mut inst = Instance::from_sources(&[("in.cue".to_string(), src)])
            .unwrap_or_else(|e| panic!("{}: {}", p.display(), format_errors(&e)));
        let got = match inst.export_json() {
            Ok(s) => s,
            Err(e) => format!("ERROR: {e}"),
        };
        if compact(&got) != compact(&want) {
            failures.push(format!(
                "{}:\n got: {}\nwant: {}",
                p.display(),
                compact(&got),
                compact(&want)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
