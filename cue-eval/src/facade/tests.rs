//! The facade against the evaluator's own entry points: what `Value` exports is what the
//! instance behind it exports, whole and at a selection.

use crate::Context;
use crate::encode::to_json_indent;
use crate::eval::api::{Instance, format_errors};
use crate::eval::print;

/// Export through the facade is the text `cue export` prints (the evaluator's own entry point).
#[test]
fn export_matches_the_instance_export() {
    let src = "a: *1 | int\nb: {y: 2, x: [1, 2.0, \"s\"]}\nc: 'bytes'\n";
    let mut inst = Instance::from_sources(&[("source.cue".into(), src.into())]).unwrap();
    let v = Context::new().compile_str(src).unwrap();
    assert_eq!(v.to_json().unwrap(), inst.export_json().unwrap());
    assert_eq!(v.to_yaml().unwrap(), inst.export_yaml().unwrap());
}

/// Errors print as the evaluator prints them for `cue export`.
#[test]
fn errors_print_as_the_instance_prints_them() {
    let src = "a: int\nb: a & \"s\"\n";
    let err = Context::new()
        .compile_file("x.cue", src)
        .unwrap()
        .to_json()
        .unwrap_err();
    let mut inst = Instance::from_sources(&[("x.cue".into(), src.into())]).unwrap();
    assert_eq!(err.to_string(), inst.export_json().unwrap_err().trim_end());
}

/// A looked-up value exports as `cue export -e path` does (the package finished first).
#[test]
fn lookup_then_export_is_export_with_a_selection() {
    let src = "a: {b: 1, c: int}\nd: a.b + 1\ne: [1, {f: \"x\"}]\ng: h: 1 & 2\n";
    let ctx = Context::new();
    let v = ctx.compile_file("s.cue", src).unwrap();
    for path in ["a", "a.b", "d", "e.1", "g", "g.h"] {
        let mut inst = Instance::from_sources(&[("s.cue".into(), src.into())]).unwrap();
        let labels = print::split_path(path);
        let labels: Vec<&str> = labels.iter().map(String::as_str).collect();
        let want = print::export_path(&mut inst, &labels)
            .map(|d| to_json_indent(&d, false))
            .map_err(|e| format_errors(&e).trim_end().to_string());
        let got = v
            .lookup(path)
            .and_then(|x| x.to_json())
            .map_err(|e| e.to_string());
        assert_eq!(got, want, "{path}");
    }
}

/// JSON written as the value is exported is the text of the exported data, and a value that
/// does not export writes nothing and fails with the errors of [`crate::Value::export`].
#[test]
fn streamed_json_is_the_text_of_the_data() {
    let ok = [
        "a: *1 | int\nb: {y: 2, x: [1, 2.0, \"s<&>\\u2028\"]}\nc: 'bytes'\n",
        "a: []\nb: {}\nc: [[], [{}], {x: null, y: true}]\nd: 1e100\n#D: {e: 1}\n_h: 2\n",
        "\"x\"",
        "[1, [2, [3]]]",
        "a: b: c: d: e: {f: \"deep\"}\nz: {o?: 1, p: 2}\n",
    ];
    let bad = [
        "a: int\nb: [1, string, {c!: int}]\n",
        "a: 1 & 2\nb: {c: int, d: 3}\n",
        "#D: {a: int}\nx: #D & {b: 1}\ny: [1, 2]\n",
        "a: {b: int | string}\nc: 1\n",
    ];
    // Over the text kept in memory (1 MiB): written by a second export.
    let long: String = (0..12_000)
        .map(|i| format!("f{i}: {{n: {i}, s: \"{}\"}}\n", "x".repeat(80)))
        .collect();
    let long_bad = format!("{long}z: int\n");
    let ok = ok.iter().copied().chain([long.as_str()]);
    let bad = bad.iter().copied().chain([long_bad.as_str()]);
    for src in ok {
        let v = Context::new().compile_str(src).unwrap();
        let want = to_json_indent(&v.export().unwrap(), false);
        let mut out = Vec::new();
        v.write_json(&mut out).unwrap().unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), want, "{src}");
        assert_eq!(v.to_json().unwrap(), want, "{src}");
    }
    for src in bad {
        let v = Context::new().compile_str(src).unwrap();
        let want = v.export().unwrap_err().to_string();
        let mut out = Vec::new();
        let err = v.write_json(&mut out).unwrap_err();
        assert_eq!(err.to_string(), want, "{src}");
        assert!(out.is_empty(), "{src}");
        assert_eq!(v.to_json().unwrap_err().to_string(), want, "{src}");
    }
}
