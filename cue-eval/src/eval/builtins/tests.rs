//! Evaluation tests of the standard library through the public API.

use crate::eval::api::Instance;

fn export(src: &str) -> String {
    let mut inst = Instance::from_sources(&[("in.cue".to_string(), src.to_string())])
        .unwrap_or_else(|e| panic!("{e:?}"));
    match inst.export_json() {
        Ok(s) => s,
        Err(e) => format!("ERROR: {e}"),
    }
}

#[test]
fn strings_functions() {
    let out = export(
        r#"import "strings"
a: strings.ToUpper("abc")
b: strings.Split("a,b", ",")
c: strings.MinRunes(2) & "ab"
d: strings.Fields(" a  b ")
"#,
    );
    assert_eq!(
        out,
        "{\n    \"a\": \"ABC\",\n    \"b\": [\n        \"a\",\n        \"b\"\n    ],\n    \"c\": \"ab\",\n    \"d\": [\n        \"a\",\n        \"b\"\n    ]\n}\n"
    );
}

#[test]
fn argument_kind_errors_are_not_wrapped() {
    let out = export("import \"list\"\nx: list.Max(\"foo\")\n");
    assert!(
        out.contains("cannot use \"foo\" (type string) as list in argument 1 to list.Max"),
        "{out}"
    );
}

#[test]
fn validator_reasons() {
    let out = export("import \"strings\"\nx: strings.MaxRunes(1) & \"ab\"\n");
    assert!(
        out.contains("invalid value \"ab\" (does not satisfy strings.MaxRunes(1))"),
        "{out}"
    );
    // A plain call of a validator with a reason returns false.
    let out = export("import \"list\"\nx: list.MaxItems([1, 2], 1)\n");
    assert!(out.contains("false"), "{out}");
}

#[test]
fn bounded_work() {
    let out = export("import \"strings\"\nx: strings.Repeat(\"a\", 200000000)\n");
    assert!(out.contains("exceeds limit"), "{out}");
    let out = export("import \"list\"\nx: list.Range(0, 5, 0)\n");
    assert!(out.contains("step must be non zero"), "{out}");
}

/// The CUE v0.17.1 standard-library cases of the shared conformance corpus whose `cue eval -i`
/// text we reproduce byte for byte (read in place; the test is skipped, loudly, without it).
const CORPUS_CASES: &[&str] = &[
    "net/testdata/compareip",
    "net/testdata/gen",
    "net/testdata/incidr",
    "net/testdata/parsecidr",
    "net/testdata/toip4",
    "crypto/ed25519/testdata/gen",
    "encoding/toml/testdata/marshal",
    "text/template/testdata/gen",
];

/// The `-- in.cue --` member of a txtar archive.
fn txtar_member<'a>(archive: &'a str, name: &str) -> Option<&'a str> {
    let head = format!("-- {name} --\n");
    let start = archive.find(&head)? + head.len();
    let rest = &archive[start..];
    let end = rest.find("\n-- ").map_or(rest.len(), |i| i + 1);
    Some(&rest[..end])
}

/// `cue eval -i` of one corpus case: what we print, and what the expected file says.
fn corpus_eval_i(dir: &std::path::Path) -> Option<(String, String)> {
    let archive = std::fs::read_to_string(dir.join("case.txtar")).ok()?;
    let expected: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).ok()?).ok()?;
    let want = expected["eval_i"]["stdout"].as_str()?.to_string();
    let src = txtar_member(&archive, "in.cue")?.to_string();
    let got = match Instance::from_sources(&[("in.cue".to_string(), src)]) {
        Ok(mut inst) => crate::eval::print::eval_text(&mut inst),
        Err(e) => format!("ERROR: {e:?}"),
    };
    Some((got, want))
}

#[test]
fn stdlib_corpus_eval_i() {
    let root = std::env::var("CONFORMANCE_DIR").map_or_else(
        |_| std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/conformance"),
        std::path::PathBuf::from,
    );
    let pkg = root.join("cue-pkg");
    if !pkg.is_dir() {
        eprintln!(
            "SKIPPED stdlib_corpus_eval_i: no conformance corpus at {} (set CONFORMANCE_DIR)",
            pkg.display()
        );
        return;
    }
    let mut failures = Vec::new();
    for case in CORPUS_CASES {
        match corpus_eval_i(&pkg.join(case)) {
            Some((got, want)) if got == want => {}
            Some((got, want)) => failures.push(format!("{case}:\n--- got\n{got}--- want\n{want}")),
            None => failures.push(format!("{case}: unreadable case")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
