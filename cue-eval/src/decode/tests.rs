//! Unit tests of the JSON and YAML decoders: values, key order, yaml.v3 scalar rules, limits
//! (alias expansion, size) and the errors for bad input.

use super::*;

fn j(text: &str) -> String {
    match json(text) {
        Ok(d) => crate::encode::to_json_compact(&d),
        Err(e) => format!("error: {e}"),
    }
}

fn y(text: &str) -> String {
    match yaml(text) {
        Ok(docs) => docs
            .iter()
            .map(crate::encode::to_json_compact)
            .collect::<Vec<_>>()
            .join(" | "),
        Err(e) => format!("error: {e}"),
    }
}

#[test]
fn json_values_keep_order_and_spelling() {
    assert_eq!(
        j(r#" {"b": 1.50, "a": [1e2, -0, true, null, "x\u00e9\/"]} "#),
        r#"{"b":1.50,"a":[1E+2,0,true,null,"xé/"]}"#
    );
    assert_eq!(j(r#""\ud83d\ude00""#), "\"😀\"");
    assert_eq!(j(r#"{"a":1,"a":1}"#), r#"{"a":1}"#);
}

#[test]
fn json_errors_have_positions() {
    assert_eq!(
        j("{\n  \"a\": tru\n}"),
        "error: 2:8: invalid literal, expected true"
    );
    assert_eq!(
        j("[1,]"),
        "error: 1:4: invalid character ']' looking for beginning of value"
    );
    assert_eq!(
        j("{} x"),
        "error: 1:4: invalid character 'x' after top-level value"
    );
    // cue export of v0.17.1: `x.a: conflicting values 2 and 1` (duplicate keys unify).
    assert_eq!(
        j(r#"{"a":1,"a":2}"#),
        "error: 1:8: conflicting values 2 and 1"
    );
    assert_eq!(
        j(r#"{"a":[1],"a":[1,2]}"#),
        "error: 1:10: incompatible list lengths (1 and 2)"
    );
    assert_eq!(
        j(r#"{"a":null,"a":1}"#),
        "error: 1:11: conflicting values null and 1 (mismatched types null and int)"
    );
    // cue export of v0.17.1: `invalid string: unmatched surrogate pair`.
    assert_eq!(
        j(r#""\ud800""#),
        "error: 1:1: invalid string: unmatched surrogate pair"
    );
    assert_eq!(
        j(r#""\ud800\u0041""#),
        "error: 1:1: invalid string: unmatched surrogate pair"
    );
    assert!(json_valid(r#""\udfff""#).is_ok());
    assert!(j("\"abc").contains("unterminated string"));
    assert!(j("01").contains("after top-level value"));
}

#[test]
fn json_limits() {
    let deep = "[".repeat(5000) + &"]".repeat(5000);
    assert!(j(&deep).contains("nesting exceeds 1000 levels"));
    let small = Limits {
        max_bytes: 10,
        ..Limits::default()
    };
    assert!(
        json_with_limits("[1,2,3,4,5,6]", &small)
            .unwrap_err()
            .msg
            .contains("exceeds the limit of 10 bytes")
    );
    let few = Limits {
        max_nodes: 3,
        ..Limits::default()
    };
    assert!(json_with_limits("[1,2,3,4]", &few).is_err());
}

#[test]
fn yaml_scalars_resolve_as_yaml_v3() {
    assert_eq!(
        y(
            "a: yes\nb: no\nc: 0x1F\nd: 0o17\ne: 017\nf: 1_000\ng: 1.5\nh: 1e3\ni: ~\nj: True\nk: '1'\nl: 2001-12-14\nm: .5\nn: -12\no: +7\np: on\n"
        ),
        r#"{"a":"yes","b":"no","c":31,"d":15,"e":15,"f":1000,"g":1.5,"h":1E+3,"i":null,"j":true,"k":"1","l":"2001-12-14","m":0.5,"n":-12,"o":7,"p":"on"}"#
    );
    assert_eq!(y("!!str 12"), r#""12""#);
    assert_eq!(y("a: |\n  x\n  y\n"), r#"{"a":"x\ny\n"}"#);
    assert_eq!(y("1: a\n"), r#"{"1":"a"}"#);
}

#[test]
fn yaml_streams_anchors_merges() {
    assert_eq!(y("a: 1\n---\n- 2\n---\n"), r#"{"a":1} | [2] | null"#);
    assert_eq!(y(""), "");
    assert_eq!(
        y("base: &b {x: 1, y: 2}\nd:\n  <<: *b\n  y: 3\n  z: 4\n"),
        r#"{"base":{"x":1,"y":2},"d":{"x":1,"y":3,"z":4}}"#
    );
    assert_eq!(y("a: &x [1]\nb: *x\n"), r#"{"a":[1],"b":[1]}"#);
}

#[test]
fn yaml_errors() {
    // cue export of v0.17.1: `x.a: conflicting values 2 and 1` (repeated keys unify).
    assert_eq!(y("a: 1\na: 2\n"), "error: 2:1: conflicting values 2 and 1");
    assert_eq!(y("a: 1\na: 1\n"), r#"{"a":1}"#);
    assert!(y("a: [1\n").starts_with("error: "));
    // The errors below are those of `cue export` of v0.17.1 (yaml.Unmarshal), which
    // prefixes the line as `:1: `.
    assert_eq!(
        y("a: .inf\n"),
        "error: parse error: illegal number start \"+Inf\""
    );
    assert_eq!(
        y("a: !!float 1\n"),
        "error: parse error: illegal number start \"number & 1\""
    );
    assert_eq!(
        y("a: 18446744073709551616\n"),
        "error: parse error: illegal number start \"number & 18446744073709551616\""
    );
    // `cue` names the line only; the column here is the tagged scalar's.
    assert_eq!(
        y("a: !custom x\n"),
        "error: 1:12: cannot unmarshal tag \"!custom\""
    );
    assert_eq!(
        y("a: !!merge x\n"),
        "error: 1:12: cannot unmarshal tag \"!!merge\""
    );
    assert_eq!(
        y("a: -017\n"),
        "error: 1:4: cannot decode \"-017\" as !!int: illegal integer number \"-017\""
    );
    assert_eq!(
        y("a: 1__0\n"),
        "error: 1:4: cannot decode \"1__0\" as !!int: illegal '_' in number"
    );
    assert_eq!(
        y("a: !!int 1.5\n"),
        "error: 1:10: cannot decode \"1.5\" as !!int: not a literal number"
    );
    assert_eq!(y("-0: x\n"), "error: 1:1: invalid label -0");
    assert_eq!(y("? [1]\n: x\n"), "error: 1:3: invalid map key: !!seq");
    assert_eq!(
        y("%YAML 1.2\n---\na: 1\n"),
        "error: found incompatible YAML document"
    );
}

#[test]
fn yaml_billion_laughs_is_bounded() {
    let mut doc = String::from(
        "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
    );
    let names = ["a", "b", "c", "d", "e", "f", "g", "h", "i"];
    for w in names.windows(2) {
        let refs = vec![format!("*{}", w[0]); 9].join(",");
        doc.push_str(&format!("{}: &{} [{}]\n", w[1], w[1], refs));
    }
    let e = yaml(&doc).unwrap_err();
    assert!(e.msg.contains("excessive aliasing"), "{e}");
}

#[test]
fn utf8_errors_have_positions() {
    let e = utf8(b"a: 1\nb: \xff\n").unwrap_err();
    assert_eq!(e.to_string(), "2:4: invalid UTF-8 (byte 0xff at offset 8)");
}

#[test]
fn data_to_cue_source_round_trips() {
    let d = json(r#"{"a": [1, 2.0, "x\"\\(y)"], "b": {}, "c": null}"#).unwrap();
    let src = to_cue_source(&d);
    let mut inst = crate::eval::api::Instance::from_sources(&[("d.cue".to_string(), src)]).unwrap();
    assert_eq!(
        inst.export().map(|d| crate::encode::to_json_compact(&d)),
        Ok(r#"{"a":[1,2.0,"x\"\\(y)"],"b":{},"c":null}"#.to_string())
    );
}

#[test]
fn yaml_quoted_scalars_continued_at_their_key_indentation() {
    // controller-gen writes CRD descriptions this way; Go's yaml.v3 accepts it.
    let text = "a:\n  b:\n    description: 'first line\n    second ''line''\n\n    third'\n    c: \"x\n    y \\\" z\"\n    d: 1\n";
    assert_eq!(
        y(text),
        r#"{"a":{"b":{"description":"first line second 'line'\nthird","c":"x y \" z","d":1}}}"#
    );
    // A quoted scalar that is never closed is still an error.
    assert!(y("a: 'x\nb: 1\n").starts_with("error"));
}
