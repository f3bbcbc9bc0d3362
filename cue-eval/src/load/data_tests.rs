//! Data-driven tests of the package loader ([`super::load`]): every directory of
//! `testdata/load/` is a case with a `cmd` (tags and arguments) and a `want` (the JSON export or
//! the error), see `testdata/load/README.md`. Plus the overlay, symlinks and the attribute API.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::{Build as LoadBuild, Config, load};
use crate::encode::to_json_indent;
use crate::eval::api::format_errors;

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/load")
}

/// Loads and exports with `cfg`, returning the JSON text or `error: ...`.
fn run(cfg: &Config, args: &[String]) -> String {
    let build = match load(cfg, args) {
        Ok(b) => b,
        Err(e) => return format!("error: {e}\n"),
    };
    let mut build = build;
    if let Err(e) = build.merge_data_files() {
        return format!("error: {e}\n");
    }
    let mut inst = match build.into_instance() {
        Ok(i) => i,
        Err(e) => return format!("error: {}", format_errors(&e)),
    };
    match inst.export() {
        Ok(d) => to_json_indent(&d, false),
        Err(e) => format!("error: {}", format_errors(&e)),
    }
}

fn run_case(dir: &Path, eager: bool) -> (String, String) {
    let cmd = std::fs::read_to_string(dir.join("cmd")).expect("cmd");
    let want = std::fs::read_to_string(dir.join("want")).expect("want");
    let mut cfg = Config::new(dir);
    cfg.eager_imports = eager;
    let mut args = Vec::new();
    let mut words = cmd.split_whitespace();
    while let Some(w) = words.next() {
        if w == "-t" {
            cfg.tags.push(words.next().unwrap_or_default().to_string());
        } else {
            args.push(w.to_string());
        }
    }
    cfg.tag_vars
        .insert("moduleVersion".to_string(), "0.0.0-devel".to_string());
    let got = run(&cfg, &args);
    let base = dir.display().to_string();
    let mut got = got.replace(&base, "$DIR");
    // Cases that name a sibling directory print it through `..`.
    if let Some(parent) = dir.parent() {
        got = got.replace(&parent.display().to_string(), "$DIR/..");
    }
    (got, want)
}

#[test]
fn testdata_cases() {
    let mut failures = Vec::new();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(testdata())
        .expect("testdata/load")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.join("cmd").is_file())
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 10, "testdata/load has {} cases", dirs.len());
    for d in &dirs {
        // Lazy imports (the default) and eager ones must give the same result.
        for eager in [false, true] {
            let (got, want) = run_case(d, eager);
            if got != want {
                failures.push(format!(
                    "{} (eager imports: {eager}):\n--- want\n{want}--- got\n{got}",
                    d.file_name().unwrap_or_default().to_string_lossy()
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn overlay_replaces_and_adds_files() {
    let dir = testdata().join("basic");
    let mut cfg = Config::new(&dir);
    cfg.tags = vec!["name=web".into(), "mv=1".into()];
    let mut overlay = BTreeMap::new();
    // Replace a file (its @if is gone with it) and add one, without touching the disk.
    overlay.insert(
        PathBuf::from("quiet.cue"),
        "package main\n\nreplaced: true\n".to_string(),
    );
    overlay.insert(
        dir.join("added.cue"),
        "package main\n\nadded: config.name\n".to_string(),
    );
    cfg.overlay = overlay;
    let out = run(&cfg, &["./".to_string()]);
    assert!(out.contains("\"replaced\": true"), "{out}");
    assert!(out.contains("\"added\": \"web\""), "{out}");
    assert!(!out.contains("\"verbose\""), "{out}");
    assert!(!dir.join("added.cue").exists());
}

#[test]
fn symlinked_packages_are_followed() {
    let tmp = std::env::temp_dir().join(format!("cue-load-symlink-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(tmp.join("cue.mod/pkg")).unwrap();
    std::fs::create_dir_all(tmp.join("shared/acme.io/lib")).unwrap();
    std::fs::write(
        tmp.join("cue.mod/module.cue"),
        "module: \"x.io/m\"\nlanguage: version: \"v0.17.1\"\n",
    )
    .unwrap();
    std::fs::write(
        tmp.join("shared/acme.io/lib/lib.cue"),
        "package lib\n\nv: 42\n",
    )
    .unwrap();
    std::os::unix::fs::symlink(tmp.join("shared/acme.io"), tmp.join("cue.mod/pkg/acme.io"))
        .unwrap();
    std::fs::write(
        tmp.join("main.cue"),
        "package main\n\nimport \"acme.io/lib\"\n\nv: lib.v\n",
    )
    .unwrap();
    let out = run(&Config::new(&tmp), &[]);
    let _ = std::fs::remove_dir_all(&tmp);
    assert_eq!(out, "{\n    \"v\": 42\n}\n");
}

#[test]
fn attributes_of_a_field() {
    let dir = testdata().join("basic");
    let mut cfg = Config::new(&dir);
    cfg.tags = vec!["name=web".into(), "mv=1".into()];
    let build = load(&cfg, &[]).unwrap();
    let attrs = build.attributes(&["config", "replicas"]);
    assert_eq!(attrs.len(), 1);
    assert_eq!(attrs[0].name, "tag");
    assert_eq!(attrs[0].positional(0), Some("replicas"));
    assert_eq!(attrs[0].get("type"), Some("int"));
    assert_eq!(build.package.as_deref(), Some("main"));
    assert_eq!(build.module_path.as_deref(), Some("example.com/basic"));
}

#[test]
fn tag_variables_fill_unset_tags() {
    let dir = testdata().join("basic");
    let mut cfg = Config::new(&dir);
    cfg.tags = vec!["name=web".into()];
    cfg.tag_vars
        .insert("moduleVersion".to_string(), "9.9.9".to_string());
    let out = run(&cfg, &[]);
    assert!(out.contains("\"version\": \"9.9.9\""), "{out}");
    assert!(out.contains("\"verbose\": false"), "{out}");
}

#[test]
fn non_utf8_sources_are_a_clear_error() {
    let tmp = std::env::temp_dir().join(format!("cue-load-utf8-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).unwrap();
    std::fs::write(tmp.join("a.cue"), b"package a\n\nx: \"\xff\"\n").unwrap();
    let out = run(&Config::new(&tmp), &[]);
    let _ = std::fs::remove_dir_all(&tmp);
    assert!(out.contains("a.cue:3:5: invalid UTF-8"), "{out}");
}

/// The file of `build` whose path ends in `tail`.
fn loaded<'b>(build: &'b LoadBuild, tail: &str) -> &'b crate::load::LoadedFile {
    build
        .files
        .iter()
        .find(|f| f.name.ends_with(tail))
        .unwrap_or_else(|| panic!("{tail} is loaded"))
}

/// The labels of the top-level fields kept for the file of `build` whose path ends in `tail`:
/// those parsed and those deferred, in source order.
fn parsed_labels(build: &LoadBuild, tail: &str) -> Vec<String> {
    let f = loaded(build, tail);
    let mut labels: Vec<(usize, String)> = f
        .ast
        .decls
        .iter()
        .filter_map(|d| match d {
            crate::ast::Decl::Field(f) => Some(f.label.span()),
            _ => None,
        })
        .map(|s| (s.start as usize, f.text[s.range()].to_string()))
        .collect();
    labels.extend(
        f.deferred
            .iter()
            .map(|d| (d.start as usize, d.name.to_string())),
    );
    labels.sort();
    labels.into_iter().map(|(_, l)| l).collect()
}

/// The labels of the fields of that file left for the evaluator to parse when used.
fn deferred_labels(build: &LoadBuild, tail: &str) -> Vec<String> {
    let f = loaded(build, tail);
    f.deferred.iter().map(|d| d.name.to_string()).collect()
}

#[test]
fn lazy_imports_parse_only_what_is_reached() {
    let dir = testdata().join("lazy-imports");
    let build = load(&Config::new(&dir), &["./".to_string()]).expect("loads");
    assert_eq!(
        parsed_labels(&build, "lib/a.cue"),
        ["#Service", "#Name", "#Label", "#Multi", "#Raw"]
    );
    assert_eq!(
        parsed_labels(&build, "lib/b.cue"),
        [
            "#Suffix",
            "[=~\"^reg\"]",
            "region",
            "\"quoted-field\"",
            "_hidden",
            "#Sum"
        ]
    );
    // `#Contact` is reached through `#Owner`; `#Stray` is not.
    assert_eq!(
        parsed_labels(&build, "other/other.cue"),
        ["#Owner", "#Contact"]
    );
    // A package used as a value is kept whole.
    assert_eq!(parsed_labels(&build, "whole/whole.cue"), ["a", "b", "#C"]);
    // Of the kept fields, those with an identifier as their label are parsed when used.
    assert_eq!(
        deferred_labels(&build, "lib/a.cue"),
        ["#Service", "#Name", "#Label", "#Multi", "#Raw"]
    );
    assert_eq!(
        deferred_labels(&build, "lib/b.cue"),
        ["#Suffix", "region", "_hidden", "#Sum"]
    );

    let mut cfg = Config::new(&dir);
    cfg.eager_imports = true;
    let build = load(&cfg, &["./".to_string()]).expect("loads");
    assert!(parsed_labels(&build, "lib/a.cue").contains(&"#Unused".to_string()));
}

#[test]
fn data_files_over_the_size_limit_are_refused_unread() {
    let dir = tempfile_dir("size-limit");
    let big = format!("[{}0]", "0, ".repeat(100));
    std::fs::write(dir.join("big.json"), &big).expect("write big.json");
    std::fs::write(dir.join("small.json"), "[1, 2]").expect("write small.json");
    let mut cfg = Config::new(&dir);
    cfg.limits = Some(crate::decode::Limits {
        max_bytes: 100,
        ..Default::default()
    });
    let out = run(&cfg, &["big.json".to_string()]);
    assert_eq!(
        out,
        format!(
            "error: big.json: data file of {} bytes exceeds the limit of 100 bytes\n",
            big.len()
        )
    );
    assert_eq!(
        run(&cfg, &["small.json".to_string()]),
        "[\n    1,\n    2\n]\n"
    );
    // The value count is bounded too: a small file of many values is refused as well.
    cfg.limits = Some(crate::decode::Limits {
        max_nodes: 50,
        ..Default::default()
    });
    let out = run(&cfg, &["big.json".to_string()]);
    assert!(out.starts_with("error: big.json:"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A fresh directory under the system's temporary directory.
fn tempfile_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cue-eval-load-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temporary directory");
    dir
}

/// A module that imports `v.io/lib` (with `lib`'s text) and exports `main`.
fn deferred_case(name: &str, lib: &str, main: &str) -> PathBuf {
    let dir = tempfile_dir(name);
    let write = |path: &str, text: &str| {
        let p = dir.join(path);
        std::fs::create_dir_all(p.parent().expect("a parent")).expect("a directory");
        std::fs::write(p, text).expect("write");
    };
    write(
        "cue.mod/module.cue",
        "module: \"example.com/m\"\nlanguage: version: \"v0.9.0\"\n",
    );
    write("cue.mod/pkg/v.io/lib/lib.cue", lib);
    write(
        "main.cue",
        &format!("package main\n\nimport \"v.io/lib\"\n\n{main}\n"),
    );
    dir
}

const DEFERRED_LIB: &str = "package lib

#A: {a: int | *1}
#B: {b: #A, c?: #C, d?: #Bad, e?: #Undefined}
#C: {c: string}
#Bad: {x: 1 + }
#Undefined: {y: nowhere}
";

#[test]
fn deferred_fields_are_compiled_when_used() {
    let dir = deferred_case("deferred-used", DEFERRED_LIB, "out: lib.#B");
    let build = load(&Config::new(&dir), &[]).expect("loads");
    assert_eq!(
        deferred_labels(&build, "lib/lib.cue"),
        ["#A", "#B", "#C", "#Bad", "#Undefined"]
    );
    let mut inst = build.into_instance().expect("compiles");
    assert_eq!(inst.rt.prog.lazy_left(), 5);
    let out = inst.export().map(|d| to_json_indent(&d, false));
    assert_eq!(
        out.ok().as_deref(),
        Some("{\n    \"out\": {\n        \"b\": {\n            \"a\": 1\n        }\n    }\n}\n")
    );
    // Only `#B` and `#A` were needed: the syntax error in `#Bad` and the unknown reference
    // in `#Undefined` are never compiled.
    assert_eq!(inst.rt.prog.lazy_left(), 3);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn errors_in_deferred_fields_are_reported_where_they_are_when_used() {
    let dir = deferred_case("deferred-syntax", DEFERRED_LIB, "out: lib.#B & {d: {}}");
    let out = run(&Config::new(&dir), &[]);
    assert!(out.starts_with("error: "), "{out}");
    assert!(out.contains("lib.cue:6:"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);

    let dir = deferred_case("deferred-undefined", DEFERRED_LIB, "out: lib.#B & {e: {}}");
    let out = run(&Config::new(&dir), &[]);
    assert!(out.contains("reference \"nowhere\" not found"), "{out}");
    assert!(out.contains("lib.cue:7:17"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}
