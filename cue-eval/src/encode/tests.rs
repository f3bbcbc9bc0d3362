//! Unit tests for the encoders. Expected texts come from the CUE v0.17.1 conformance corpus,
//! the examples of the encoder guide, CUE's own `internal/encoding/yaml` tests, and the rules of
//! the `yaml.v3` emitter they are built on.

use super::*;

fn s(x: &str) -> Data {
    Data::String(x.to_owned())
}

fn int(x: &str) -> Data {
    Data::int(x)
}

fn float(x: &str) -> Data {
    Data::float(x)
}

fn obj(fields: &[(&str, Data)]) -> Data {
    Data::Struct(
        fields
            .iter()
            .map(|(k, v)| Field::new(*k, v.clone()))
            .collect(),
    )
}

fn list(items: &[Data]) -> Data {
    Data::List(items.to_vec())
}

/// The YAML for `{k: value}`.
fn yaml_value(value: Data) -> String {
    to_yaml(&obj(&[("k", value)]))
}

/// The YAML for a string value of field `k`.
fn yv(value: &str) -> String {
    yaml_value(s(value))
}

/// The YAML for `{key: 1}`.
fn yk(key: &str) -> String {
    to_yaml(&obj(&[(key, int("1"))]))
}

// ---------------------------------------------------------------------------------------------
// base64

#[test]
fn base64_matches_std_encoding() {
    let enc = |b: &[u8]| {
        let mut out = String::new();
        push_base64(&mut out, b);
        out
    };
    assert_eq!(enc(b""), "");
    assert_eq!(enc(b"f"), "Zg==");
    assert_eq!(enc(b"fo"), "Zm8=");
    assert_eq!(enc(b"foo"), "Zm9v");
    assert_eq!(enc(b"foob"), "Zm9vYg==");
    assert_eq!(enc(b"hello\nworld"), "aGVsbG8Kd29ybGQ=");
    assert_eq!(enc(&[0xff, 0xfe, 0xfd]), "//79");
    assert_eq!(enc(&[0x80]), "gA==");
}

// ---------------------------------------------------------------------------------------------
// JSON: cue export --out json

#[test]
fn json_indent_nested() {
    let d = obj(&[
        (
            "simplified",
            obj(&[("x", obj(&[("d", s(".*"))])), ("out", s("d: .*\n"))]),
        ),
        ("original", obj(&[("rule", obj(&[])), ("out", s("{}\n"))])),
    ]);
    let want = r#"{
    "simplified": {
        "x": {
            "d": ".*"
        },
        "out": "d: .*\n"
    },
    "original": {
        "rule": {},
        "out": "{}\n"
    }
}
"#;
    assert_eq!(to_json_indent(&d, false), want);
}

#[test]
fn json_indent_lists_and_scalars() {
    let d = obj(&[
        (
            "ports",
            list(&[obj(&[("name", s("http")), ("port", int("80"))])]),
        ),
        ("empty", list(&[])),
        (
            "nums",
            list(&[int("1"), float("2.5"), float("1E+10"), int("-3")]),
        ),
        (
            "flags",
            list(&[Data::Bool(true), Data::Bool(false), Data::Null]),
        ),
        ("nested", list(&[list(&[]), list(&[int("1")])])),
    ]);
    let want = r#"{
    "ports": [
        {
            "name": "http",
            "port": 80
        }
    ],
    "empty": [],
    "nums": [
        1,
        2.5,
        1E+10,
        -3
    ],
    "flags": [
        true,
        false,
        null
    ],
    "nested": [
        [],
        [
            1
        ]
    ]
}
"#;
    assert_eq!(to_json_indent(&d, false), want);
}

#[test]
fn json_indent_top_level_values() {
    assert_eq!(to_json_indent(&s("hello"), false), "\"hello\"\n");
    assert_eq!(to_json_indent(&int("100"), false), "100\n");
    assert_eq!(to_json_indent(&float("5.0"), false), "5.0\n");
    assert_eq!(to_json_indent(&Data::Null, false), "null\n");
    assert_eq!(to_json_indent(&obj(&[]), false), "{}\n");
    assert_eq!(to_json_indent(&list(&[]), false), "[]\n");
    // cue/export/002: the bytes 'hello\nworld'.
    assert_eq!(
        to_json_indent(&Data::Bytes(b"hello\nworld".to_vec()), false),
        "\"aGVsbG8Kd29ybGQ=\"\n"
    );
}

#[test]
fn json_string_escapes() {
    // The timoni ConfigMap text: tabs, newlines and quotes get short escapes.
    let text = "server {\n\tlisten       8080;\n\treturn 200 \"OK\";\n}\n";
    assert_eq!(
        to_json_compact(&s(text)),
        r#""server {\n\tlisten       8080;\n\treturn 200 \"OK\";\n}\n""#
    );
    assert_eq!(to_json_compact(&s("a\\b")), r#""a\\b""#);
    assert_eq!(to_json_compact(&s("\u{8}\u{c}\r")), r#""\b\f\r""#);
    assert_eq!(
        to_json_compact(&s("\u{0}\u{1}\u{1f}")),
        r#""\u0000\u0001\u001f""#
    );
    assert_eq!(to_json_compact(&s("\u{b}\u{1b}")), r#""\u000b\u001b""#);
    // DEL and C1 controls are copied, as are non-ASCII characters and emoji.
    assert_eq!(
        to_json_compact(&s("\u{7f}\u{85}é日😀")),
        "\"\u{7f}\u{85}é日😀\""
    );
    assert_eq!(
        to_json_compact(&s("a\u{2028}b\u{2029}c")),
        r#""a\u2028b\u2029c""#
    );
}

#[test]
fn json_html_escaping() {
    let d = obj(&[("a<b>", s("\\ \" & < >"))]);
    assert_eq!(
        to_json_indent(&d, false),
        "{\n    \"a<b>\": \"\\\\ \\\" & < >\"\n}\n"
    );
    assert_eq!(
        to_json_indent(&d, true),
        "{\n    \"a\\u003cb\\u003e\": \"\\\\ \\\" \\u0026 \\u003c \\u003e\"\n}\n"
    );
}

#[test]
fn json_compact_marshal() {
    // The guide's example: json.Marshal({b: 1, a: "<&>", n: 10/4, e: 1e10}).
    let d = obj(&[
        ("b", int("1")),
        ("a", s("<&>")),
        ("n", float("2.5")),
        ("e", float("1E+10")),
    ]);
    assert_eq!(
        to_json_compact(&d),
        r#"{"b":1,"a":"<&>","n":2.5,"e":1E+10}"#
    );
    // cue-pkg encoding/json marshal.t2.
    assert_eq!(
        to_json_compact(&obj(&[("a", s("\\ \" & < >"))])),
        r#"{"a":"\\ \" & < >"}"#
    );
    assert_eq!(
        to_json_compact(&obj(&[
            ("l", list(&[int("1"), list(&[]), obj(&[])])),
            ("b", Data::Bytes(b"hi".to_vec()))
        ])),
        r#"{"l":[1,[],{}],"b":"aGk="}"#
    );
    assert_eq!(to_json_compact(&list(&[])), "[]");
    assert_eq!(to_json_compact(&s("x")), r#""x""#);
}

#[test]
fn json_marshal_stream() {
    // cue-pkg encoding/json marshalStream t1 and t3.
    let docs = [obj(&[("a", int("1"))]), obj(&[("b", int("2"))])];
    assert_eq!(to_json_stream_compact(&docs), "{\"a\":1}\n{\"b\":2}\n");
    let docs = [obj(&[("a", s("\\ \" & < >"))]), obj(&[("b", s(""))])];
    assert_eq!(
        to_json_stream_compact(&docs),
        "{\"a\":\"\\\\ \\\" & < >\"}\n{\"b\":\"\"}\n"
    );
    assert_eq!(to_json_stream_compact(&[]), "");
}

// ---------------------------------------------------------------------------------------------
// YAML: structure

#[test]
fn yaml_structure_from_cue_encode_test() {
    // CUE's internal/encoding/yaml TestEncodeFile "foo".
    let d = obj(&[
        (
            "seq",
            list(&[
                int("1"),
                int("2"),
                int("3"),
                obj(&[("a", int("1")), ("b", int("2"))]),
            ]),
        ),
        ("a", obj(&[("b", obj(&[("c", int("3"))]))])),
        (
            "b",
            obj(&[("x", int("0")), ("y", int("1")), ("z", int("2"))]),
        ),
    ]);
    let want = "seq:
  - 1
  - 2
  - 3
  - a: 1
    b: 2
a:
  b:
    c: 3
b:
  x: 0
  \"y\": 1
  z: 2
";
    assert_eq!(to_yaml(&d), want);
}

#[test]
fn yaml_prometheus_example() {
    // CUE's TestEncodeFile "prometheus", with the one-line list in block style as
    // `cue export` writes it (the exported syntax has no positions).
    let d = obj(&[
        (
            "receivers",
            list(&[obj(&[
                ("name", s("pager")),
                (
                    "slack_configs",
                    list(&[obj(&[
                        (
                            "text",
                            s("{{ range .Alerts }}{{ .Annotations.description }}\n{{ end }}"),
                        ),
                        ("channel", s("#cloudmon")),
                        ("send_resolved", Data::Bool(true)),
                    ])]),
                ),
            ])]),
        ),
        (
            "route",
            obj(&[
                ("receiver", s("pager")),
                ("group_by", list(&[s("alertname"), s("cluster")])),
            ]),
        ),
    ]);
    let want = "receivers:
  - name: pager
    slack_configs:
      - text: |-
          {{ range .Alerts }}{{ .Annotations.description }}
          {{ end }}
        channel: '#cloudmon'
        send_resolved: true
route:
  receiver: pager
  group_by:
    - alertname
    - cluster
";
    assert_eq!(to_yaml(&d), want);
}

#[test]
fn yaml_nested_collections() {
    assert_eq!(
        to_yaml(&list(&[list(&[int("1"), int("2")]), int("3")])),
        "- - 1\n  - 2\n- 3\n"
    );
    assert_eq!(to_yaml(&list(&[list(&[list(&[int("1")])])])), "- - - 1\n");
    assert_eq!(
        to_yaml(&list(&[obj(&[
            ("a", list(&[int("1")])),
            ("b", obj(&[("c", int("2"))]))
        ])])),
        "- a:\n    - 1\n  b:\n    c: 2\n"
    );
    assert_eq!(
        to_yaml(&obj(&[(
            "l",
            list(&[list(&[obj(&[("x", int("1")), ("y", int("2"))])])])
        )])),
        "l:\n  - - x: 1\n      \"y\": 2\n"
    );
    assert_eq!(
        to_yaml(&obj(&[
            ("e", obj(&[])),
            ("l", list(&[])),
            ("x", list(&[obj(&[]), list(&[])]))
        ])),
        "e: {}\nl: []\nx:\n  - {}\n  - []\n"
    );
}

#[test]
fn yaml_top_level_values() {
    // cue/export/issue2119, cue/builtins/export, cue/cycle/builtins.
    assert_eq!(to_yaml(&obj(&[("d", s(".*"))])), "d: .*\n");
    assert_eq!(to_yaml(&obj(&[])), "{}\n");
    assert_eq!(to_yaml(&list(&[])), "[]\n");
    assert_eq!(to_yaml(&list(&[s("derivedStatic")])), "- derivedStatic\n");
    assert_eq!(to_yaml(&list(&[s("x")])), "- x\n");
    assert_eq!(to_yaml(&s("hello")), "hello\n");
    assert_eq!(to_yaml(&s("yes")), "\"yes\"\n");
    assert_eq!(to_yaml(&s("")), "\"\"\n");
    assert_eq!(to_yaml(&int("1")), "1\n");
    assert_eq!(to_yaml(&Data::Null), "null\n");
    assert_eq!(to_yaml(&Data::Bool(false)), "false\n");
    assert_eq!(to_yaml(&s("a\nb")), "|-\n  a\n  b\n");
    assert_eq!(to_yaml(&s("a\n")), "|\n  a\n");
    assert_eq!(
        to_yaml(&Data::Bytes(b"hello".to_vec())),
        "!!binary aGVsbG8=\n"
    );
}

#[test]
fn yaml_eval_corpus_values() {
    // cue/eval/let keepDescending.t2 and cue/eval/v0.7 issue3925.
    assert_eq!(
        to_yaml(&obj(&[("X", obj(&[("Y", s(""))]))])),
        "X:\n  \"Y\": \"\"\n"
    );
    assert_eq!(to_yaml(&obj(&[("c", s("str"))])), "c: str\n");
    assert_eq!(
        to_yaml(&obj(&[("one", s("one value"))])),
        "one: one value\n"
    );
    // cue-pkg encoding/yaml t8: the default of `int | *2`.
    assert_eq!(to_yaml(&obj(&[("b", int("2"))])), "b: 2\n");
}

#[test]
fn yaml_marshal_stream() {
    // cue-pkg encoding/yaml t7 and t9.
    let docs = [obj(&[("a", int("1"))]), obj(&[("b", int("2"))])];
    assert_eq!(to_yaml_stream(&docs), "a: 1\n---\nb: 2\n");
    assert_eq!(to_yaml_stream(&[]), "");
    assert_eq!(to_yaml_stream(&[s("x")]), "x\n");
    assert_eq!(
        to_yaml_stream(&[s("a\n\n"), int("1")]),
        "|+\n  a\n\n---\n1\n"
    );
}

// ---------------------------------------------------------------------------------------------
// YAML: numbers, bools, null, bytes

#[test]
fn yaml_numbers() {
    assert_eq!(yaml_value(int("100")), "k: 100\n");
    assert_eq!(yaml_value(int("-5")), "k: -5\n");
    assert_eq!(
        yaml_value(int("1000000000000000000000")),
        "k: 1000000000000000000000\n"
    );
    assert_eq!(yaml_value(float("1.0")), "k: 1.0\n");
    assert_eq!(yaml_value(float("1E+2")), "k: 1E+2\n");
    assert_eq!(yaml_value(float("5.0")), "k: 5.0\n");
    assert_eq!(yaml_value(float("1E-7")), "k: 1E-7\n");
    assert_eq!(yaml_value(float("0.000001")), "k: 0.000001\n");
    // A float spelled without `.` or exponent gets CUE export's trailing `.`.
    assert_eq!(yaml_value(float("5")), "k: 5.\n");
    assert_eq!(yaml_value(float("-5")), "k: -5.\n");
    // JSON keeps the text as is.
    assert_eq!(to_json_compact(&float("5")), "5");
}

#[test]
fn yaml_scalars() {
    assert_eq!(yaml_value(Data::Null), "k: null\n");
    assert_eq!(yaml_value(Data::Bool(true)), "k: true\n");
    assert_eq!(yaml_value(Data::Bool(false)), "k: false\n");
}

#[test]
fn yaml_bytes() {
    // CUE's TestEncodeFile oneLineFields: dat: '\x80'.
    assert_eq!(yaml_value(Data::Bytes(vec![0x80])), "k: !!binary gA==\n");
    assert_eq!(
        yaml_value(Data::Bytes(b"hello".to_vec())),
        "k: !!binary aGVsbG8=\n"
    );
    assert_eq!(yaml_value(Data::Bytes(Vec::new())), "k: !!binary\n");
    assert_eq!(
        to_yaml(&list(&[Data::Bytes(b"ab".to_vec())])),
        "- !!binary YWI=\n"
    );
    // The literal style `SetString` gives raw text with a newline sticks to the base64.
    assert_eq!(
        yaml_value(Data::Bytes(b"hello\nworld".to_vec())),
        "k: !!binary |-\n  aGVsbG8Kd29ybGQ=\n"
    );
    // So does the one yaml.v3 gives invalid UTF-8 whose base64 reaches 70 characters.
    let long = vec![0xffu8; 52];
    let mut b64 = String::new();
    push_base64(&mut b64, &long);
    assert_eq!(
        yaml_value(Data::Bytes(long)),
        format!("k: !!binary |-\n  {b64}\n")
    );
    let short = vec![0xffu8; 51];
    let mut b64 = String::new();
    push_base64(&mut b64, &short);
    assert_eq!(
        yaml_value(Data::Bytes(short)),
        format!("k: !!binary {b64}\n")
    );
}

// ---------------------------------------------------------------------------------------------
// YAML: string values, rule by rule

#[test]
fn yaml_guide_examples() {
    assert_eq!(yv("#cloudmon"), "k: '#cloudmon'\n");
    assert_eq!(yv("123"), "k: \"123\"\n");
    assert_eq!(yv("1.5"), "k: \"1.5\"\n");
    assert_eq!(yv(""), "k: \"\"\n");
    assert_eq!(yv("2001-12-14"), "k: \"2001-12-14\"\n");
    assert_eq!(yv("on"), "k: \"on\"\n");
    assert_eq!(yv("a: b"), "k: 'a: b'\n");
    assert_eq!(yv(" x"), "k: ' x'\n");
    assert_eq!(yv("it's"), "k: it's\n");
}

#[test]
fn yaml_legacy_words_are_double_quoted() {
    for w in [
        "y", "Y", "yes", "Yes", "YES", "n", "N", "t", "T", "f", "F", "no", "No", "NO", "true",
        "True", "TRUE", "false", "False", "FALSE", "on", "On", "ON", "off", "Off", "OFF", ".Nan",
    ] {
        assert_eq!(yv(w), format!("k: \"{w}\"\n"), "{w}");
    }
    // Other spellings are plain.
    for w in [
        "oN", "yES", "nO", "tRUE", "y1", "nan", "inf", "NaN", "Null1", "none",
    ] {
        assert_eq!(yv(w), format!("k: {w}\n"), "{w}");
    }
}

#[test]
fn yaml_dates_times_and_base60_are_double_quoted() {
    for w in [
        "2001-12-14",
        "2001-12-14t21:59:43.10-05:00",
        "2001-12-14T21:59:43Z",
        "2001-12-14 21:59:43.10",
        "12:30",
        "1:20:30.5",
        "190:20:30",
        "1-2",
        "+1-2",
        "1 - 2",
        "1\t:2",
        "12t34",
        "1T2z",
        "1:2Z",
        "0x1F",
        "0xdeadBEEF",
        "0x123456789abcdef0123",
    ] {
        let got = yv(w);
        let escaped = w.replace('\t', "\\t");
        assert_eq!(got, format!("k: \"{escaped}\"\n"), "{w:?}");
    }
    // Not matched by CUE's pattern: single runs, leading or trailing separators, letters.
    assert_eq!(yv("-12"), "k: \"-12\"\n"); // an int for yaml.v3
    assert_eq!(yv("12-"), "k: 12-\n");
    assert_eq!(yv("t12"), "k: t12\n");
    assert_eq!(yv("12t"), "k: 12t\n");
    assert_eq!(yv("1t2t3"), "k: 1t2t3\n");
    assert_eq!(yv("1-2zz"), "k: 1-2zz\n");
    assert_eq!(yv("0x"), "k: 0x\n");
    assert_eq!(yv("0xg1"), "k: 0xg1\n");
    assert_eq!(yv("v1.2.3"), "k: v1.2.3\n");
    assert_eq!(yv("1.2.3"), "k: 1.2.3\n");
    assert_eq!(yv("10.0.0.1"), "k: 10.0.0.1\n");
}

#[test]
fn yaml_values_that_resolve_to_other_types_are_double_quoted() {
    for w in [
        "~",
        "null",
        "Null",
        "NULL",
        "true",
        ".inf",
        ".Inf",
        ".INF",
        "+.inf",
        "-.Inf",
        ".nan",
        ".NaN",
        ".NAN",
        "0",
        "-0",
        "+0",
        "123",
        "-123",
        "+123",
        "1_000",
        "0777",
        "0o17",
        "0O17",
        "0b101",
        "0B11",
        "-0b101",
        "0x_1F",
        "0XFF",
        "-0x10",
        "+0x10",
        "1.5",
        "1.",
        ".5",
        "-.5",
        "+1.5e3",
        "1e5",
        "1E-7",
        "08",
        "09.5",
        ".5e1",
        ".5_0",
        "9223372036854775807",
        "-9223372036854775808",
        "18446744073709551615",
        "99999999999999999999",
        "0b-101",
        "0o-7",
        "2001-1-2",
        "2024-02-29 10:20:30,5",
    ] {
        assert_eq!(yv(w), format!("k: \"{w}\"\n"), "{w:?}");
    }
}

#[test]
fn yaml_values_that_stay_strings_are_plain() {
    for w in [
        "<<",
        "1e",
        "1e+",
        "e5",
        "0b2",
        "0o8",
        "0b",
        "0o",
        "+",
        ".",
        "..",
        "._5",
        ".e5",
        "1__000e400",
        "1e400",
        "1.5.6",
        "12ab",
        "0x1p-2",
        "Infinity",
        "NaN",
        "+inf",
        "1_a",
        "hello world",
        "a#b",
        "a:b",
        "http://x/y",
        "x,y",
        "x[y]",
        "?x",
        "-x",
        "x-",
        "--x",
        "é",
        "日本",
    ] {
        assert_eq!(yv(w), format!("k: {w}\n"), "{w:?}");
    }
    // A float literal too big for float64 is a string for yaml.v3.
    let big = format!("1{}.5", "0".repeat(400));
    assert_eq!(yv(&big), format!("k: {big}\n"));
}

#[test]
fn yaml_plain_not_allowed_gives_single_quotes() {
    for w in [
        "#a", ",a", "[a", "]a", "{a", "}a", "&a", "*a", "!a", "|a", ">a", "'a", "\"a", "%a", "@a",
        "`a", "?", "? a", ":", ": a", "-", "- a", "a: b", "a:", "a #b", "---a", "...", "...a",
        " a", "a ", " ", "  ",
    ] {
        let quoted = w.replace('\'', "''");
        assert_eq!(yv(w), format!("k: '{quoted}'\n"), "{w:?}");
    }
    // `---` itself matches CUE's date pattern first.
    assert_eq!(yv("---"), "k: \"---\"\n");
    // Indicators that are harmless in block context stay plain.
    for w in [
        "a,b", "a[b]", "a{b}", "a?b", "a:b", "a#b", "-a", "?a", ":a", "a-", "a!", "a'b",
    ] {
        assert_eq!(yv(w), format!("k: {w}\n"), "{w:?}");
    }
}

#[test]
fn yaml_tabs_and_controls_give_double_quotes() {
    assert_eq!(yv("a\tb"), "k: \"a\\tb\"\n");
    assert_eq!(yv("\tx"), "k: \"\\tx\"\n");
    assert_eq!(yv("a\rb"), "k: \"a\\rb\"\n");
    assert_eq!(
        yv("\u{0}\u{7}\u{8}\u{b}\u{c}\u{1b}"),
        "k: \"\\0\\a\\b\\v\\f\\e\"\n"
    );
    assert_eq!(yv("a\u{1}b\u{7f}"), "k: \"a\\x01b\\x7F\"\n");
    assert_eq!(yv("a\u{85}b"), "k: \"a\\Nb\"\n");
    assert_eq!(yv("\u{9f}"), "k: \"\\x9F\"\n");
    assert_eq!(yv("a\u{feff}"), "k: \"a\\uFEFF\"\n");
    assert_eq!(yv("\u{fffe}"), "k: \"\\uFFFE\"\n");
    // Characters outside the basic multilingual plane are not printable for yaml.v3.
    assert_eq!(yv("hi 😀"), "k: \"hi \\U0001F600\"\n");
    // `"` and `\` are escaped inside double quotes, other printables are not.
    assert_eq!(yv("a\t\"b\"\\é\u{a0}"), "k: \"a\\t\\\"b\\\"\\\\é\u{a0}\"\n");
    // A text that starts with a BOM has every character escaped (yaml.v3's is_bom).
    assert_eq!(yv("\u{feff}ab é"), "k: \"\\uFEFF\\x61\\x62\\x20\\xE9\"\n");
    // A double-quoted scalar whose text CUE quotes keeps its characters.
    assert_eq!(yv("yes"), "k: \"yes\"\n");
}

#[test]
fn yaml_non_ascii_printables_are_plain() {
    assert_eq!(yv("héllo wörld"), "k: héllo wörld\n");
    assert_eq!(yv("日本語"), "k: 日本語\n");
    assert_eq!(yv("a\u{a0}b"), "k: a\u{a0}b\n");
    assert_eq!(yv("#日本"), "k: '#日本'\n");
}

#[test]
fn yaml_literal_blocks() {
    assert_eq!(yv("a\nb"), "k: |-\n  a\n  b\n");
    assert_eq!(yv("a\nb\n"), "k: |\n  a\n  b\n");
    assert_eq!(yv("a\nb\n\n"), "k: |+\n  a\n  b\n\n");
    assert_eq!(yv("a\n\n\nb"), "k: |-\n  a\n\n\n  b\n");
    assert_eq!(yv("\n"), "k: |2+\n\n");
    assert_eq!(yv("\n\n"), "k: |2+\n\n\n");
    assert_eq!(yv("\na"), "k: |2-\n\n  a\n");
    assert_eq!(yv(" a\nb"), "k: |2-\n   a\n  b\n");
    assert_eq!(
        yv("  indented\n    more\n"),
        "k: |2\n    indented\n      more\n"
    );
    // Tabs, quotes, `#`, leading indicators and legacy words do not matter in a block.
    assert_eq!(
        yv("\tx\n# y: 'z'\nyes"),
        "k: |-\n  \tx\n  # y: 'z'\n  yes\n"
    );
    assert_eq!(yv("a\r\nb"), "k: \"a\\r\\nb\"\n");
    // The next key follows on its own line after every chomping.
    let d = obj(&[
        ("a", s("x\n")),
        ("b", s("y\n\n")),
        ("c", s("z\nw")),
        ("d", int("1")),
    ]);
    assert_eq!(
        to_yaml(&d),
        "a: |\n  x\nb: |+\n  y\n\nc: |-\n  z\n  w\nd: 1\n"
    );
    // Nested indentation.
    let d = obj(&[
        ("m", obj(&[("t", s("l1\nl2"))])),
        ("l", list(&[s("a\nb"), s("c\n")])),
    ]);
    assert_eq!(
        to_yaml(&d),
        "m:\n  \"t\": |-\n    l1\n    l2\nl:\n  - |-\n    a\n    b\n  - |\n    c\n"
    );
    assert_eq!(
        to_yaml(&list(&[obj(&[("tx", s("x\ny"))])])),
        "- tx: |-\n    x\n    y\n"
    );
}

#[test]
fn yaml_literal_impossible_gives_double_quotes() {
    // A space before a line break.
    assert_eq!(yv("a \nb"), "k: \"a \\nb\"\n");
    // A space as the very last character.
    assert_eq!(yv("a\nb "), "k: \"a\\nb \"\n");
    // A non-printable character.
    assert_eq!(yv("a\nb\u{1}"), "k: \"a\\nb\\x01\"\n");
    assert_eq!(yv("a\n😀"), "k: \"a\\n\\U0001F600\"\n");
    // But a space after a line break is fine.
    assert_eq!(yv("a\n b"), "k: |-\n  a\n   b\n");
}

#[test]
fn yaml_other_line_breaks() {
    // LS and PS are printable line breaks: without LF, plain is impossible, single quotes are
    // fine, and the break is copied with the next line indented.
    assert_eq!(yv("a\u{2028}b"), "k: 'a\u{2028}  b'\n");
    // In a literal block they are copied as they are too.
    assert_eq!(yv("a\u{2029}b\nc"), "k: |-\n  a\u{2029}  b\n  c\n");
    // As keys they are multi-line, so not simple.
    assert_eq!(yk("a\u{2028}b"), "? 'a\u{2028}  b'\n: 1\n");
}

// ---------------------------------------------------------------------------------------------
// YAML: keys

#[test]
fn yaml_keys() {
    assert_eq!(yk("y"), "\"y\": 1\n");
    assert_eq!(yk("no"), "\"no\": 1\n");
    assert_eq!(yk("123"), "\"123\": 1\n");
    assert_eq!(yk("#a"), "'#a': 1\n");
    assert_eq!(yk(""), "\"\": 1\n");
    assert_eq!(yk("null"), "\"null\": 1\n");
    assert_eq!(yk("2001-12-14"), "\"2001-12-14\": 1\n");
    assert_eq!(yk("a b"), "a b: 1\n");
    assert_eq!(yk("a: b"), "'a: b': 1\n");
    assert_eq!(yk("a\tb"), "\"a\\tb\": 1\n");
    assert_eq!(yk("it's"), "it's: 1\n");
    assert_eq!(yk("'q'"), "'''q''': 1\n");
    assert_eq!(yk("app.kubernetes.io/name"), "app.kubernetes.io/name: 1\n");
    assert_eq!(yk("<<"), "<<: 1\n");
    assert_eq!(yk("é"), "é: 1\n");
}

#[test]
fn yaml_multiline_key_is_complex() {
    // CUE's TestEncodeFile "quoting": "k\nl": 3.
    assert_eq!(
        to_yaml(&obj(&[("k\nl", int("3"))])),
        "? |-\n  k\n  l\n: 3\n"
    );
    assert_eq!(
        to_yaml(&obj(&[
            ("k\n", obj(&[("a", int("1")), ("b", int("2"))])),
            ("z", int("0"))
        ])),
        "? |\n  k\n: a: 1\n  b: 2\nz: 0\n"
    );
    assert_eq!(
        to_yaml(&obj(&[("k\nl", list(&[int("1"), int("2")]))])),
        "? |-\n  k\n  l\n: - 1\n  - 2\n"
    );
    // A literal block is impossible: double quotes after `?`.
    assert_eq!(to_yaml(&obj(&[("k \nl", int("3"))])), "? \"k \\nl\"\n: 3\n");
    // Nested in a mapping.
    assert_eq!(
        to_yaml(&obj(&[("m", obj(&[("a\nb", s("v"))]))])),
        "m:\n  ? |-\n    a\n    b\n  : v\n"
    );
}

#[test]
fn yaml_long_key_is_complex() {
    let k128 = "k".repeat(128);
    assert_eq!(yk(&k128), format!("{k128}: 1\n"));
    let k129 = "k".repeat(129);
    assert_eq!(yk(&k129), format!("? {k129}\n: 1\n"));
    // The limit counts bytes.
    let wide = "é".repeat(65);
    assert_eq!(yk(&wide), format!("? {wide}\n: 1\n"));
    let q = format!("#{}", "k".repeat(128));
    assert_eq!(yk(&q), format!("? '{q}'\n: 1\n"));
    assert_eq!(
        to_yaml(&obj(&[(k129.as_str(), obj(&[("a", int("1"))]))])),
        format!("? {k129}\n: a: 1\n")
    );
}

// ---------------------------------------------------------------------------------------------
// YAML: @yaml(,tag=...)

#[test]
fn yaml_tags_from_cue_encode_test() {
    // yaml_tag_scalar.
    let d = Data::Struct(vec![
        Field::tagged("key", s("value"), "!Custom"),
        Field::tagged("env", s("VAR_NAME"), "!Env"),
    ]);
    assert_eq!(to_yaml(&d), "key: !Custom value\nenv: !Env VAR_NAME\n");
    // yaml_tag_mapping.
    let d = Data::Struct(vec![Field::tagged(
        "config",
        obj(&[("key", s("value")), ("count", int("42"))]),
        "!Map",
    )]);
    assert_eq!(to_yaml(&d), "config: !Map\n  key: value\n  count: 42\n");
    // yaml_tag_mixed.
    let d = Data::Struct(vec![
        Field::new("plain", s("no-tag")),
        Field::tagged("tagged", s("has-tag"), "!Custom"),
        Field::new(
            "nested",
            Data::Struct(vec![Field::tagged("field", s("value"), "!Nested")]),
        ),
    ]);
    assert_eq!(
        to_yaml(&d),
        "plain: no-tag\ntagged: !Custom has-tag\nnested:\n  field: !Nested value\n"
    );
    // yaml_tag_verbatim and yaml_tag_url.
    let d = Data::Struct(vec![Field::tagged(
        "custom",
        s("value"),
        "!<tag:example.com,2000:app/foo>",
    )]);
    assert_eq!(
        to_yaml(&d),
        "custom: !%3Ctag:example.com,2000:app/foo%3E value\n"
    );
    let d = Data::Struct(vec![Field::tagged(
        "item",
        s("value"),
        "!<https://example.com/schema/v1>",
    )]);
    assert_eq!(
        to_yaml(&d),
        "item: !%3Chttps://example.com/schema/v1%3E value\n"
    );
}

#[test]
fn yaml_tags_on_other_values() {
    let tagged = |v: Data, t: &str| to_yaml(&Data::Struct(vec![Field::tagged("k", v, t)]));
    // A tagged sequence in block style, and tagged empty collections.
    assert_eq!(
        tagged(list(&[int("1"), int("2"), int("3")]), "!Seq"),
        "k: !Seq\n  - 1\n  - 2\n  - 3\n"
    );
    assert_eq!(tagged(list(&[]), "!Seq"), "k: !Seq []\n");
    assert_eq!(tagged(obj(&[]), "!Map"), "k: !Map {}\n");
    // Tags on numbers, bools and null.
    assert_eq!(tagged(int("1"), "!Ref"), "k: !Ref 1\n");
    assert_eq!(tagged(Data::Bool(true), "!B"), "k: !B true\n");
    assert_eq!(tagged(Data::Null, "!N"), "k: !N null\n");
    // The string keeps CUE's styles; a custom tag does not force quotes on its own.
    assert_eq!(tagged(s("yes"), "!T"), "k: !T \"yes\"\n");
    assert_eq!(tagged(s("123"), "!T"), "k: !T 123\n");
    assert_eq!(tagged(s("#x"), "!T"), "k: !T '#x'\n");
    assert_eq!(tagged(s("a\nb"), "!T"), "k: !T |-\n  a\n  b\n");
    assert_eq!(tagged(s(""), "!T"), "k: !T\n");
    // Standard tags that plain resolution implies are dropped, and !!str forces quotes.
    assert_eq!(tagged(int("1"), "!!int"), "k: 1\n");
    assert_eq!(tagged(s("abc"), "!!str"), "k: abc\n");
    assert_eq!(tagged(int("1"), "!!str"), "k: \"1\"\n");
    assert_eq!(tagged(obj(&[("a", int("1"))]), "!!map"), "k:\n  a: 1\n");
    assert_eq!(tagged(list(&[int("1")]), "!!seq"), "k:\n  - 1\n");
    assert_eq!(tagged(s("abc"), "!!foo"), "k: !!foo abc\n");
    assert_eq!(tagged(s("abc"), "tag:yaml.org,2002:foo"), "k: !!foo abc\n");
    assert_eq!(tagged(s("abc"), "foo"), "k: !<foo> abc\n");
    assert_eq!(tagged(s("abc"), "!a!b é"), "k: !a%21b%20%C3%A9 abc\n");
    assert_eq!(tagged(s("abc"), ""), "k: abc\n");
    assert_eq!(tagged(s("123"), ""), "k: \"123\"\n");
    assert_eq!(
        tagged(Data::Bytes(b"hi".to_vec()), ""),
        "k: !!binary aGk=\n"
    );
    // Bytes with a tag of their own.
    assert_eq!(tagged(Data::Bytes(b"hi".to_vec()), "!B"), "k: !B aGk=\n");
    // Tagged mapping inside a sequence.
    let d = list(&[Data::Struct(vec![Field::tagged(
        "m",
        obj(&[("a", int("1"))]),
        "!M",
    )])]);
    assert_eq!(to_yaml(&d), "- m: !M\n    a: 1\n");
}

// ---------------------------------------------------------------------------------------------
// Internal rules

#[test]
fn resolve_rules() {
    use super::yaml::resolve as r;
    assert_eq!(r(""), "!!null");
    assert_eq!(r("~"), "!!null");
    assert_eq!(r("yes"), "!!str");
    assert_eq!(r("True"), "!!bool");
    assert_eq!(r("<<"), "!!str");
    assert_eq!(r(".inf"), "!!float");
    assert_eq!(r("-.INF"), "!!float");
    assert_eq!(r(".Nan"), "!!str");
    assert_eq!(r("0777"), "!!int");
    assert_eq!(r("0o777"), "!!int");
    assert_eq!(r("0b1_0"), "!!int");
    assert_eq!(r("-0b10"), "!!int");
    assert_eq!(r("-9223372036854775809"), "!!float");
    assert_eq!(r("18446744073709551616"), "!!float");
    assert_eq!(r("0x10000000000000000"), "!!str");
    assert_eq!(r("1e400"), "!!str");
    assert_eq!(r("1e-400"), "!!float");
    assert_eq!(r("2001-12-14"), "!!timestamp");
    assert_eq!(r("2001-12-14T21:59:43.10-05:00"), "!!timestamp");
    assert_eq!(r("2001-12-14t21:59:43Z"), "!!timestamp");
    assert_eq!(r("2001-12-14 21:59:43.10"), "!!timestamp");
    assert_eq!(r("2001-12-14   1:2:3"), "!!timestamp");
    assert_eq!(r("2000-02-29"), "!!timestamp");
    assert_eq!(r("1900-02-29"), "!!str");
    assert_eq!(r("2001-12-14T21:59:43+25:00"), "!!str");
    assert_eq!(r("2001-12-14T21:59:43z"), "!!str");
    assert_eq!(r("2001-12-14 21:59:43Z"), "!!str");
    assert_eq!(r("2001-12-14T21:59"), "!!str");
    assert_eq!(r("2001-012-14"), "!!str");
    // Out-of-range dates are strings for yaml.v3 (CUE's own pattern still quotes them).
    assert_eq!(r("2001-13-01"), "!!str");
    assert_eq!(r("2001-02-30"), "!!str");
    assert_eq!(r("2001-1-2 24:00:00"), "!!str");
    assert_eq!(yv("2001-13-01"), "k: \"2001-13-01\"\n");
    assert_eq!(r("-1_"), "!!int");
}

/// The style `yaml_string_style` reports is the one `to_yaml` writes the string in (read off
/// the first byte of the document), for strings made of the characters that decide styles.
#[test]
fn string_style_is_the_style_to_yaml_writes() {
    use super::{ScalarStyle, yaml_string_style};
    let parts = [
        "a",
        " ",
        "-",
        ":",
        "#",
        "'",
        "\"",
        "\n",
        "\t",
        "yes",
        "1",
        "0x1f",
        ".5",
        "~",
        "@",
        "|",
        "é",
        "null",
        "2024-01-01",
        "{",
        "[",
        "!",
        "&",
        "*",
        "?",
        ",",
        "%",
        "\\",
    ];
    let mut seed = 11u64;
    let mut next = |n: u64| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) % n
    };
    let mut cases: Vec<String> = parts.iter().map(|p| p.to_string()).collect();
    cases.push(String::new());
    for _ in 0..4000 {
        let n = 1 + next(5);
        cases.push(
            (0..n)
                .map(|_| parts[next(parts.len() as u64) as usize])
                .collect(),
        );
    }
    for c in cases {
        let text = to_yaml(&Data::String(c.clone()));
        let written = match text.as_bytes().first() {
            Some(b'"') => ScalarStyle::DoubleQuoted,
            Some(b'\'') => ScalarStyle::SingleQuoted,
            Some(b'|' | b'>') => ScalarStyle::Literal,
            _ => ScalarStyle::Plain,
        };
        assert_eq!(yaml_string_style(&c), written, "{c:?} is written {text:?}");
    }
}
