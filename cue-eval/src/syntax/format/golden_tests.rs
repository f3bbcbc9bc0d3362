//! Tests of the formatter against `cue fmt` behaviour: the hand-written golden files under
//! `testdata/format/`, byte identity on the already-formatted Kubernetes schemas of the Timoni
//! conformance modules, and the formatter's laws (idempotency, round trip, no comment lost) on
//! every CUE file of the conformance corpus.
//!
//! The corpus lives outside the repository (`$CONFORMANCE_DIR`, or `../shared/conformance` next
//! to the workspace); the tests that need it print why they are skipped when it is absent.

use std::path::{Path, PathBuf};

use crate::ast::FileId;
use crate::dump::dump_file;
use crate::format::format_file;
use crate::parse;

#[path = "../../../tests/support/corpus.rs"]
mod corpus;

use corpus::{conformance_dir, files_with_suffix};

/// Formats `src`, or `None` if it does not parse.
fn fmt(src: &str) -> Option<String> {
    let (file, errors) = parse(FileId(0), src);
    errors.is_empty().then(|| format_file(&file, src))
}

/// The text of all comments of a source, in order.
fn comment_texts(src: &str) -> Vec<String> {
    let (file, _) = parse(FileId(0), src);
    file.comments
        .iter()
        .map(|c| c.text.trim_end().to_string())
        .collect()
}

/// Checks the formatter's laws on one parseable source; returns a description of the first
/// broken law.
fn check_laws(name: &str, src: &str) -> Result<(), String> {
    let (file, errors) = parse(FileId(0), src);
    if !errors.is_empty() {
        return Ok(());
    }
    let once = format_file(&file, src);
    let (file2, errors2) = parse(FileId(0), &once);
    if !errors2.is_empty() {
        return Err(format!(
            "{name}: formatted output does not parse: {}\n{once}",
            errors2[0]
        ));
    }
    let twice = format_file(&file2, &once);
    if once != twice {
        return Err(format!(
            "{name}: not idempotent\n{}",
            first_diff(&once, &twice)
        ));
    }
    let (before, after) = (
        normalize_dump(&dump_file(&file)),
        normalize_dump(&dump_file(&file2)),
    );
    if before != after {
        return Err(format!(
            "{name}: the tree changed\n{}",
            first_diff(&before, &after)
        ));
    }
    // Comments may move (a comment inside an expression goes to the end of its declaration),
    // but each one is printed exactly once.
    let (mut before, mut after) = (comment_texts(src), comment_texts(&once));
    before.sort();
    after.sort();
    if before != after {
        return Err(format!("{name}: comments lost or duplicated"));
    }
    Ok(())
}

/// Removes from a tree dump the differences `cue fmt` itself introduces: it adds braces to a
/// shorthand field that has attributes or comments (`a: b: 1 @x()` becomes `a: {b: 1 @x()}`),
/// groups an import that has a comment, rewrites raw string labels as plain strings, and drops
/// the type of `..._`.
fn normalize_dump(dump: &str) -> String {
    let lines: Vec<&str> = dump.lines().collect();
    let indent = |l: &str| l.len() - l.trim_start().len();
    let mut out = String::with_capacity(dump.len());
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let prev_is_label = i > 0 && lines[i - 1].trim_start() == "label-string";
        match line.trim_start().strip_prefix("lit ") {
            Some(raw) if prev_is_label => {
                let value =
                    crate::literal::decode(raw).map(|v| String::from_utf8_lossy(&v).into_owned());
                out.push_str(&format!("{}lit {value:?}", &line[..indent(line)]));
            }
            _ => out.push_str(
                &line
                    .replace("struct-shorthand", "struct")
                    .replace("import-group", "import"),
            ),
        }
        out.push('\n');
        if line.trim_start() == "ellipsis"
            && lines
                .get(i + 1)
                .is_some_and(|n| n.trim_start() == "ident _" && indent(n) == indent(line) + 2)
            && lines.get(i + 2).is_none_or(|n| indent(n) <= indent(line))
        {
            i += 1;
        }
        i += 1;
    }
    out
}

/// The first differing line of two texts, with context.
fn first_diff(a: &str, b: &str) -> String {
    let al: Vec<&str> = a.lines().collect();
    let bl: Vec<&str> = b.lines().collect();
    let n = al.len().max(bl.len());
    for i in 0..n {
        if al.get(i) != bl.get(i) {
            let from = i.saturating_sub(3);
            let ctx = |v: &[&str]| {
                v.iter()
                    .skip(from)
                    .take(i - from + 3)
                    .map(|l| format!("  |{l}"))
                    .collect::<Vec<_>>()
                    .join("\n")
            };
            return format!(
                "at line {}:\n-- left\n{}\n-- right\n{}",
                i + 1,
                ctx(&al),
                ctx(&bl)
            );
        }
    }
    String::from("(no line differs; trailing newline?)")
}

/// The `.cue` members of a txtar archive.
fn txtar_cue_members(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut current: Option<(String, String)> = None;
    for line in text.split_inclusive('\n') {
        let t = line.trim_end_matches('\n');
        if let Some(name) = t.strip_prefix("-- ").and_then(|r| r.strip_suffix(" --")) {
            out.extend(current.take());
            current = Some((name.trim().to_string(), String::new()));
        } else if let Some((_, body)) = &mut current {
            body.push_str(line);
        }
    }
    out.extend(current);
    out.retain(|(n, _)| n.ends_with(".cue"));
    out
}

#[test]
fn golden_files() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/format");
    let inputs = files_with_suffix(&dir, ".input.cue");
    assert!(!inputs.is_empty(), "no golden files in {}", dir.display());
    let mut failures = Vec::new();
    for input in &inputs {
        let golden = PathBuf::from(input.to_string_lossy().replace(".input.cue", ".golden.cue"));
        let src = std::fs::read_to_string(input).unwrap();
        let want = std::fs::read_to_string(&golden)
            .unwrap_or_else(|e| panic!("{}: {e}", golden.display()));
        let name = input.file_name().unwrap().to_string_lossy().to_string();
        match fmt(&src) {
            None => failures.push(format!("{name}: does not parse")),
            Some(got) if got != want => failures.push(format!(
                "{name}: differs from golden\n{}",
                first_diff(&got, &want)
            )),
            Some(_) => {}
        }
        // The golden file is itself formatted.
        if let Some(again) = fmt(&want)
            && again != want
        {
            failures.push(format!(
                "{name}: golden file is not a fixed point\n{}",
                first_diff(&again, &want)
            ));
        }
        if let Err(e) = check_laws(&name, &src) {
            failures.push(e);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn generated_kubernetes_schemas_are_byte_identical() {
    let Some(conformance) = conformance_dir() else {
        eprintln!("SKIPPED: the shared conformance corpus is not present (set $CONFORMANCE_DIR)");
        return;
    };
    let root = conformance.join("timoni/minimal/module/cue.mod/gen");
    let files = files_with_suffix(&root, ".cue");
    assert!(!files.is_empty(), "no files under {}", root.display());
    let mut failures = Vec::new();
    for f in &files {
        let src = std::fs::read_to_string(f).unwrap();
        match fmt(&src) {
            None => failures.push(format!("{}: does not parse", f.display())),
            Some(got) if got != src => {
                failures.push(format!("{}\n{}", f.display(), first_diff(&got, &src)))
            }
            Some(_) => {}
        }
    }
    eprintln!(
        "cue.mod/gen: {}/{} byte-identical",
        files.len() - failures.len(),
        files.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn laws_hold_on_timoni_modules() {
    let Some(conformance) = conformance_dir() else {
        eprintln!("SKIPPED: the shared conformance corpus is not present (set $CONFORMANCE_DIR)");
        return;
    };
    let files = files_with_suffix(&conformance.join("timoni"), ".cue");
    let mut failures = Vec::new();
    let (mut identical, mut total, mut gen_identical, mut gen_total) = (0, 0, 0, 0);
    for f in &files {
        let src = std::fs::read_to_string(f).unwrap();
        let name = f.display().to_string();
        if let Some(got) = fmt(&src) {
            let is_gen = name.contains("cue.mod/gen");
            if is_gen {
                gen_total += 1;
                gen_identical += usize::from(got == src);
            } else {
                total += 1;
                identical += usize::from(got == src);
                if got != src {
                    eprintln!("differs from its source: {name}");
                }
            }
        }
        if let Err(e) = check_laws(&name, &src) {
            failures.push(e);
        }
    }
    eprintln!("timoni cue.mod/gen: {gen_identical}/{gen_total} unchanged by formatting");
    eprintln!("timoni other files: {identical}/{total} unchanged by formatting");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn laws_hold_on_txtar_cases() {
    let Some(conformance) = conformance_dir() else {
        eprintln!("SKIPPED: the shared conformance corpus is not present (set $CONFORMANCE_DIR)");
        return;
    };
    let archives = files_with_suffix(&conformance.clone(), "case.txtar");
    let mut failures = Vec::new();
    let mut checked = 0;
    for a in &archives {
        let text = std::fs::read_to_string(a).unwrap();
        for (member, src) in txtar_cue_members(&text) {
            checked += 1;
            let name = format!("{}:{member}", a.display());
            if let Err(e) = check_laws(&name, &src) {
                failures.push(e);
            }
        }
    }
    eprintln!(
        "txtar .cue members checked: {checked}, failures: {}",
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Formatting never panics, even on trees with errors: every txtar member is formatted whole
/// and cut at a few points (which leaves brackets open and tokens broken).
#[test]
fn never_panics_on_broken_input() {
    let Some(conformance) = conformance_dir() else {
        eprintln!("SKIPPED: the shared conformance corpus is not present (set $CONFORMANCE_DIR)");
        return;
    };
    let archives = files_with_suffix(&conformance.join("cue"), "case.txtar");
    for a in &archives {
        let text = std::fs::read_to_string(a).unwrap();
        for (_, src) in txtar_cue_members(&text) {
            for cut in [src.len(), src.len() / 3, src.len() / 2, src.len() * 4 / 5] {
                let mut end = cut.min(src.len());
                while !src.is_char_boundary(end) {
                    end -= 1;
                }
                let part = &src[..end];
                let (file, _) = parse(FileId(0), part);
                let _ = format_file(&file, part);
            }
        }
    }
}

/// Deeply nested input is formatted without overflowing the (small) test thread stack.
#[test]
fn deep_nesting() {
    let depth = 900;
    let src = format!("a: {}1{}\n", "[".repeat(depth), "]".repeat(depth));
    let got = fmt(&src).expect("parses");
    assert_eq!(got, src);
    let src = format!("b: {}x{}\n", "{c: ".repeat(depth), "}".repeat(depth));
    let got = fmt(&src).expect("parses");
    assert_eq!(got, src);
    let chain: Vec<String> = (0..900).map(|i| format!("x{i}")).collect();
    let src = format!("c: {}\n", chain.join(" | "));
    assert_eq!(fmt(&src).expect("parses"), src);
}

/// The laws also hold on perturbed inputs: comments inserted after arbitrary tokens and line
/// breaks or spaces inserted after separators, which puts comments and line breaks in places
/// formatted files never have them (a fixed pseudo-random sequence keeps the test stable).
#[test]
fn laws_hold_on_perturbed_inputs() {
    let Some(conformance) = conformance_dir() else {
        eprintln!("SKIPPED: the shared conformance corpus is not present (set $CONFORMANCE_DIR)");
        return;
    };
    let archives = files_with_suffix(&conformance.clone(), "case.txtar");
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut rnd = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state as usize
    };
    let mut failures = Vec::new();
    let mut checked = 0;
    for a in &archives {
        let text = std::fs::read_to_string(a).unwrap();
        for (member, src) in txtar_cue_members(&text) {
            if fmt(&src).is_none() {
                continue;
            }
            let spots: Vec<usize> = src
                .char_indices()
                .filter(|(_, c)| matches!(c, ' ' | '\n' | ',' | '{' | '[' | '(' | '&' | '|' | ':'))
                .map(|(i, c)| if c == ' ' || c == '\n' { i } else { i + 1 })
                .collect();
            if spots.is_empty() {
                continue;
            }
            for variant in 0..3 {
                let mut s = src.clone();
                let mut at: Vec<usize> = (0..3).map(|_| spots[rnd() % spots.len()]).collect();
                at.sort_unstable();
                at.dedup();
                for &p in at.iter().rev() {
                    let insert = match rnd() % 5 {
                        0 => format!(" // c{p}\n"),
                        1 => format!(" // c{p}\n\n"),
                        2 => "\n".to_string(),
                        3 => "\n\n".to_string(),
                        _ => "  ".to_string(),
                    };
                    s.insert_str(p, &insert);
                }
                checked += 1;
                let name = format!("{}:{member} (variant {variant})", a.display());
                if let Err(e) = check_laws(&name, &s) {
                    failures.push(format!("{e}\n--- input\n{s}"));
                }
            }
        }
    }
    eprintln!(
        "perturbed sources checked: {checked}, failures: {}",
        failures.len()
    );
    failures.truncate(3);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
