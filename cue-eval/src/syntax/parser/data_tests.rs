//! Parser tests as data: every `testdata/parser/ok/*.cue` must parse without errors and every
//! `testdata/parser/err/*.cue` with at least one; the structural dump and the errors (with
//! `line:col`) of each are insta snapshots. Malformed-input tests below guard the limits: bad
//! input gives errors, never a panic or a stack overflow. Files under `testdata/fuzz-failures/`
//! are crashers found by fuzzing, replayed here through the fuzz targets' own check.

use std::path::{Path, PathBuf};

use super::{check_parser, parse, parse_bytes};
use crate::ast::FileId;
use crate::source::SourceFile;

fn files(dir: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata")
        .join(dir);
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file() && !p.ends_with(".gitkeep"))
        .collect();
    v.sort();
    v
}

/// The dump of the tree followed by each error as `line:col: message`.
fn check(src: &str) -> (String, usize) {
    let (file, errors) = parse(FileId(0), src);
    let sf = SourceFile::new("x.cue", src);
    let mut out = crate::dump::dump_file(&file);
    for e in &errors {
        let (l, c) = sf.line_col(e.span.start as usize);
        out.push_str(&format!("error {l}:{c}: {}\n", e.message));
    }
    (out, errors.len())
}

#[test]
fn valid_files_parse_without_errors() {
    for path in files("parser/ok") {
        let src = std::fs::read_to_string(&path).unwrap();
        let (out, n) = check(&src);
        assert_eq!(n, 0, "{}:\n{out}", path.display());
        let name = format!("ok__{}", path.file_stem().unwrap().to_str().unwrap());
        insta::assert_snapshot!(name, out);
    }
}

#[test]
fn invalid_files_report_errors_and_keep_the_rest() {
    for path in files("parser/err") {
        let src = std::fs::read_to_string(&path).unwrap();
        let (out, n) = check(&src);
        assert!(n > 0, "{} parsed without errors", path.display());
        let name = format!("err__{}", path.file_stem().unwrap().to_str().unwrap());
        insta::assert_snapshot!(name, out);
    }
}

/// One typo gives one diagnostic, and the declarations after it are still in the tree.
#[test]
fn one_typo_one_error() {
    let (file, errors) = parse(FileId(0), "a: 1\nb: 2 3\nc: 3\n");
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(file.decls.len(), 3);
}

#[test]
fn fuzz_failures_do_not_regress() {
    for path in files("fuzz-failures") {
        let bytes = std::fs::read(&path).unwrap();
        if let Ok(s) = std::str::from_utf8(&bytes) {
            check_parser(s);
        }
        let _ = parse_bytes(FileId(0), &bytes);
    }
}

/// 10,000 nested brackets of each kind: an error about nesting, not a stack overflow. Runs on
/// the default 2 MiB test thread stack on purpose.
#[test]
fn deep_nesting_is_an_error() {
    for (open, close) in [("[", "]"), ("{", "}"), ("(", ")"), ("{a: ", "}")] {
        let src = format!(
            "x: {}1{}\ny: 2\n",
            open.repeat(10_000),
            close.repeat(10_000)
        );
        let (file, errors) = parse(FileId(0), &src);
        assert!(
            errors
                .iter()
                .any(|e| e.message.contains("nesting too deep")),
            "{open}: {errors:?}"
        );
        assert_eq!(file.decls.len(), 2);
        let _ = crate::format::format_file(&file, &src);
    }
    let src = format!("x: {}\n", "\"\\(".repeat(5_000));
    let (_, errors) = parse(FileId(0), &src);
    assert!(!errors.is_empty());
}

/// Long chains of operators, selectors and shorthand labels are cut with an error.
#[test]
fn long_chains_are_an_error() {
    for src in [
        format!("x: 1{}\ny: 2\n", " + 1".repeat(20_000)),
        format!("x: a{}\ny: 2\n", ".b".repeat(20_000)),
        format!("x: {}1\ny: 2\n", "-".repeat(20_000)),
        format!("{}: 1\ny: 2\n", "a: ".repeat(20_000)),
    ] {
        let (file, errors) = parse(FileId(0), &src);
        assert!(
            errors.iter().any(|e| e.message.contains("too long")),
            "{errors:?}"
        );
        let last = file.decls.last().map(crate::ast::Decl::span);
        assert!(
            last.is_some_and(|s| &src[s.range()] == "y: 2"),
            "{:?} {errors:?}",
            file.decls.len()
        );
        let _ = crate::dump::dump_file(&file);
    }
}

#[test]
fn invalid_utf8_is_reported() {
    let (file, errors) = parse_bytes(FileId(0), b"a: \"x\xff\xfey\"\nb: 1\n");
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].message, "illegal UTF-8 encoding");
    assert_eq!(file.decls.len(), 2);
}

#[test]
fn unterminated_literals() {
    for src in [
        "a: \"abc",
        "a: '''\nabc",
        "a: \"\"\"\nabc\n",
        "a: #\"abc\"",
        "a: \"\\(b",
    ] {
        let (_, errors) = parse(FileId(0), src);
        assert!(!errors.is_empty(), "{src:?}");
    }
}

/// A 50 MB file parses, and an error at its very end is located on the right line.
#[test]
fn fifty_megabytes() {
    let value = "x".repeat(1000);
    let mut src = String::with_capacity(51 << 20);
    let mut n = 0;
    while src.len() < 50 << 20 {
        src.push_str(&format!(
            "f{n}: \"{value}\"\ng{n}: {{a: 1, b: [1, 2, 3]}}\n"
        ));
        n += 1;
    }
    src.push_str("bad: }\n");
    let (file, errors) = parse(FileId(0), &src);
    assert_eq!(file.decls.len(), 2 * n + 1);
    assert_eq!(errors.len(), 1, "{errors:?}");
    let sf = SourceFile::new("big.cue", src.as_str());
    let (line, _) = sf.line_col(errors[0].span.start as usize);
    assert_eq!(line, 2 * n + 1);
}
