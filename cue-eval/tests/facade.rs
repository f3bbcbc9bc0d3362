//! The embedding API (`Context`, `Loader`, `Value`, `Error`) against the `cue` command's
//! behaviour: export text, error text and order, closedness through `unify`, field order.

use cue_eval::{Context, FieldKind, FieldOptions, Kind, ValidateOptions};

const CONCRETE: ValidateOptions = ValidateOptions {
    concrete: true,
    hidden: false,
    optional: false,
};

/// Errors carry the path, message and positions of each (their text is the evaluator's, see the
/// facade's unit tests).
#[test]
fn errors_carry_path_message_and_positions() {
    let ctx = Context::new();
    let v = ctx.compile_file("x.cue", "a: int\nb: a & \"s\"\n").unwrap();
    let err = v.to_json().unwrap_err();
    let e = &err.errors()[0];
    assert_eq!(e.path(), "b");
    assert_eq!(
        e.message(),
        "conflicting values \"s\" and int (mismatched types string and int)"
    );
    let at: Vec<(usize, usize)> = e
        .positions()
        .iter()
        .map(|p| (p.line(), p.column()))
        .collect();
    assert_eq!(at, [(2, 8), (1, 4)]);
    assert_eq!(e.positions()[1].file(), "x.cue");
    assert_eq!(e.positions()[1].offset(), Some(3));
}

/// A definition looked up and unified with data stays closed, as `cue vet -d` checks it.
#[test]
fn unify_with_a_definition_is_closed() {
    let ctx = Context::new();
    let schema = ctx
        .compile_str("#A: {name: string, port: int | *80}")
        .unwrap();
    let def = schema.lookup("#A").unwrap();
    let ok = def.unify(&ctx.compile_str("name: \"a\"").unwrap()).unwrap();
    assert_eq!(
        ok.to_json().unwrap(),
        "{\n    \"name\": \"a\",\n    \"port\": 80\n}\n"
    );
    let extra = def
        .unify(&ctx.compile_str("name: \"a\", other: 1").unwrap())
        .unwrap();
    let err = extra.validate(ValidateOptions::default()).unwrap_err();
    assert_eq!(err.errors()[0].message(), "field not allowed");
    assert!(err.errors()[0].path().ends_with("other"), "{err}");
}

/// Values of another instance unify as data.
#[test]
fn unify_across_contexts_goes_through_data() {
    let a = Context::new().compile_str("x: int").unwrap();
    let b = Context::new().compile_str("x: 2").unwrap();
    assert_eq!(
        a.unify(&b)
            .unwrap()
            .lookup("x")
            .unwrap()
            .decode::<i32>()
            .unwrap(),
        2
    );
    let open = Context::new().compile_str("x: int").unwrap();
    assert!(
        a.unify(&open).is_err(),
        "a non-concrete value of another instance is refused"
    );
}

#[test]
fn fill_places_values_at_paths() {
    #[derive(serde::Serialize)]
    struct Meta {
        name: &'static str,
        labels: std::collections::BTreeMap<&'static str, &'static str>,
    }
    let ctx = Context::new();
    let v = ctx
        .compile_str("#Meta: {name: string, labels: [string]: string}\nmetadata: #Meta")
        .unwrap();
    let filled = v
        .fill(
            "metadata",
            &Meta {
                name: "web",
                labels: [("app", "web")].into(),
            },
        )
        .unwrap();
    assert_eq!(
        filled.lookup("metadata").unwrap().to_json().unwrap(),
        "{\n    \"name\": \"web\",\n    \"labels\": {\n        \"app\": \"web\"\n    }\n}\n"
    );
    let bad = v.fill("metadata.extra", &1).unwrap();
    assert!(bad.validate(ValidateOptions::default()).is_err());
}

#[test]
fn fields_in_cue_order_with_kinds() {
    let ctx = Context::new();
    let v = ctx
        .compile_str("z: 1\n_h: 2\n#D: 3\na?: 4\nr!: int\nm: 5\n")
        .unwrap();
    let all = FieldOptions {
        optional: true,
        definitions: true,
        hidden: true,
    };
    let got: Vec<(String, FieldKind)> = v
        .fields(all)
        .into_iter()
        .map(|f| (f.label, f.kind))
        .collect();
    let want = [
        ("z", FieldKind::Regular),
        ("a", FieldKind::Optional),
        ("r", FieldKind::Required),
        ("m", FieldKind::Regular),
        ("_h", FieldKind::Hidden),
        ("#D", FieldKind::Definition),
    ];
    let want: Vec<(String, FieldKind)> = want.iter().map(|(l, k)| (l.to_string(), *k)).collect();
    assert_eq!(got, want);
    let regular: Vec<String> = v
        .fields(FieldOptions::default())
        .into_iter()
        .map(|f| f.label)
        .collect();
    assert_eq!(regular, ["z", "m"]);
    let field = &v.fields(FieldOptions::default())[1];
    assert_eq!(field.value.path(), "m");
}

#[test]
fn kinds_defaults_and_concreteness() {
    let ctx = Context::new();
    let v = ctx
        .compile_str("a: *1 | string\nb: >0\nc: {}\nd: [1]\ne: _\nf: 1 & 2")
        .unwrap();
    let at = |p: &str| v.lookup(p).unwrap();
    assert_eq!(at("a").kind().to_string(), "int|string");
    assert!(!at("a").is_concrete());
    assert!(at("a").default().is_concrete());
    assert_eq!(at("a").default().kind(), Kind::INT);
    assert_eq!(at("b").kind(), Kind::NUMBER);
    assert!(!at("b").is_concrete());
    assert!(at("c").is_concrete() && at("d").is_concrete());
    assert_eq!(at("c").kind(), Kind::STRUCT);
    assert_eq!(at("e").kind(), Kind::TOP);
    assert_eq!(at("f").kind(), Kind::BOTTOM);
    assert!(at("b").validate(ValidateOptions::default()).is_ok());
    assert!(at("b").validate(CONCRETE).is_err());
}

#[test]
fn attributes_and_positions_of_looked_up_fields() {
    let ctx = Context::new();
    let v = ctx
        .compile_file(
            "a.cue",
            "s: {\n\tx: int @go(X) @tag(x)\n}\ns: x: 1 @go(Y)\n",
        )
        .unwrap();
    let x = v.lookup("s.x").unwrap();
    let go: Vec<String> = x.attributes("go").into_iter().map(|a| a.text).collect();
    assert_eq!(go, ["@go(X)", "@go(Y)"]);
    assert_eq!(x.attributes("tag").len(), 1);
    let lines: Vec<usize> = x.positions().iter().map(|p| p.line()).collect();
    assert_eq!(lines, [2, 4]);
}

#[test]
fn decode_and_encode_round_trip() {
    #[derive(serde::Serialize, serde::Deserialize, Debug, PartialEq)]
    struct App {
        name: String,
        ratio: f64,
        ports: Vec<u16>,
        tags: Option<Vec<String>>,
    }
    let app = App {
        name: "web".into(),
        ratio: 1.0,
        ports: vec![80, 443],
        tags: None,
    };
    let ctx = Context::new();
    let v = ctx.encode(&app).unwrap();
    assert_eq!(
        v.to_json().unwrap(),
        "{\n    \"name\": \"web\",\n    \"ratio\": 1.0,\n    \"ports\": [\n        80,\n        443\n    ],\n    \"tags\": null\n}\n"
    );
    assert_eq!(v.decode::<App>().unwrap(), app);
    let err = v.lookup("name").unwrap().decode::<u32>().unwrap_err();
    assert!(err.to_string().starts_with("decode: invalid type"), "{err}");
}

#[test]
fn loader_reads_a_module_with_imports_tags_and_overlay() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("cue.mod")).unwrap();
    std::fs::write(
        root.join("cue.mod/module.cue"),
        "module: \"example.com/m\"\nlanguage: version: \"v0.17.1\"\n",
    )
    .unwrap();
    std::fs::create_dir_all(root.join("lib")).unwrap();
    std::fs::write(root.join("lib/lib.cue"), "package lib\n#Port: int & >0\n").unwrap();
    std::fs::write(
        root.join("main.cue"),
        "package main\nimport \"example.com/m/lib\"\nport: lib.#Port & 8080\nenv: string @tag(env)\n",
    )
    .unwrap();
    let ctx = Context::new();
    let v = ctx
        .loader(root)
        .tag("env=prod")
        .overlay(root.join("extra.cue"), "package main\nextra: true\n")
        .load()
        .unwrap();
    assert_eq!(v.lookup("port").unwrap().decode::<u16>().unwrap(), 8080);
    assert_eq!(v.lookup("env").unwrap().decode::<String>().unwrap(), "prod");
    assert!(v.lookup("extra").unwrap().decode::<bool>().unwrap());
    assert_eq!(
        v.lookup("env").unwrap().attributes("tag")[0].positional(0),
        Some("env")
    );

    let err = ctx.loader(root).tag("nope=1").load().unwrap_err();
    assert!(err.to_string().contains("nope"), "{err}");
    let missing = ctx.loader(root.join("absent")).load().unwrap_err();
    assert!(!missing.errors().is_empty());
}

#[test]
fn syntax_errors_name_file_and_position() {
    let err = Context::new()
        .compile_file("bad.cue", "a: {\nb: 1\n")
        .unwrap_err();
    let p = &err.errors()[0].positions()[0];
    assert_eq!((p.file(), p.line()), ("bad.cue", 3));
}

#[cfg(feature = "miette")]
#[test]
fn errors_are_miette_diagnostics() {
    use miette::Diagnostic;
    let v = Context::new()
        .compile_file("m.cue", "a: 1\na: 2\n")
        .unwrap();
    let err = v.validate(ValidateOptions::default()).unwrap_err();
    let related: Vec<&dyn Diagnostic> = err.related().unwrap().collect();
    assert_eq!(related.len(), 1);
    assert!(related[0].source_code().is_some());
    assert_eq!(related[0].labels().unwrap().count(), 2);
}
