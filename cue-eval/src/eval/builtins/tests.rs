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
