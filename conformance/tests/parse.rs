//! Integration tests of the parse and format conformance checks against the shared corpus.
//!
//! They run the same check as `conformance parse`, then hold its figures to the floors of
//! `conformance/ratchet.json`. Without the corpus (no `$CONFORMANCE_DIR` and nothing at
//! `../shared/conformance`), every test prints a `SKIPPED:` line and passes, because the corpus
//! is data outside the repository rather than part of the code under test.

use std::collections::BTreeSet;
use std::sync::OnceLock;

use conformance::corpus::{self, CaseKind, Corpus};
use conformance::parse::{self, ParseOutcome, Report};
use conformance::ratchet::{self, Ratchet};

/// The corpus and the report, computed once for all tests of this binary.
fn checked() -> Option<&'static (Corpus, Report)> {
    static CELL: OnceLock<Result<(Corpus, Report), String>> = OnceLock::new();
    let result = CELL.get_or_init(|| {
        let location = corpus::locate()?;
        let corpus = Corpus::load(&location.root).map_err(|e| e.to_string())?;
        let report = parse::run(&corpus, &parse::Options::default());
        Ok((corpus, report))
    });
    match result {
        Ok(pair) => Some(pair),
        Err(reason) => {
            println!("SKIPPED: {reason}");
            eprintln!("SKIPPED: {reason}");
            None
        }
    }
}

#[test]
fn discovery_matches_the_index() {
    let Some((corpus, _)) = checked() else { return };
    let index_path = corpus.root.join("index.json");
    let Ok(text) = std::fs::read_to_string(&index_path) else {
        println!("SKIPPED: no {}", index_path.display());
        return;
    };
    let index: serde_json::Value = serde_json::from_str(&text).expect("index.json is JSON");
    let listed: BTreeSet<&str> = index["cases"]
        .as_array()
        .expect("index.json has cases")
        .iter()
        .filter_map(|c| c["id"].as_str())
        .collect();
    let found: BTreeSet<&str> = corpus
        .cases
        .iter()
        .filter(|c| {
            matches!(
                c.kind,
                CaseKind::Language | CaseKind::Stdlib | CaseKind::TimoniModule
            )
        })
        .map(|c| c.id.as_str())
        .collect();
    assert_eq!(found, listed, "discovered cases differ from index.json");
    for case in &corpus.cases {
        assert!(!case.sources.is_empty(), "{} has no .cue file", case.id);
        if let Some(expected) = &case.expected {
            // Every root file given to cue is one of the case's sources.
            for f in &expected.files {
                assert!(
                    case.sources.iter().any(|s| &s.path == f && s.is_root),
                    "{}: {f} from expected.json is not a root source",
                    case.id
                );
            }
        }
    }
}

#[test]
fn syntax_error_classification_names_real_files() {
    let Some((corpus, report)) = checked() else {
        return;
    };
    let mut listed = 0;
    println!("files the oracle reports as syntax errors:");
    for r in report.syntax_error_files() {
        let e = r.expected_syntax_error.as_ref().expect("filtered on it");
        println!(
            "  {}:{}:{} [{}] {}",
            r.name(),
            e.position.line,
            e.position.column,
            e.run,
            e.message
        );
        listed += 1;
    }
    println!("  ({listed} files)");
    // A syntax error whose position names no source of its case would mean the rule or the
    // discovery is wrong.
    for case in &corpus.cases {
        let Some(expected) = &case.expected else {
            continue;
        };
        for e in conformance::oracle::syntax_errors(expected) {
            assert!(
                case.sources.iter().any(|s| s.path == e.position.file),
                "{}: syntax error in {} which is not a source of the case",
                case.id,
                e.position.file
            );
        }
    }
}

/// The acceptance criterion: every `.cue` file parses with zero errors, except the oracle's
/// syntax errors, which yield at least one. It holds on the public corpus, so any file that
/// misses it, on this corpus or a larger one, fails the test.
#[test]
fn every_file_parses_as_cue_does() {
    let Some((_, report)) = checked() else { return };
    let failures: Vec<String> = report
        .parse_failures()
        .map(|r| {
            let what = match (&r.parse, &r.expected_syntax_error) {
                (ParseOutcome::Errors { first, .. }, _) => {
                    format!("{}:{}: {}", first.line, first.column, first.message)
                }
                (ParseOutcome::Clean, Some(e)) => format!("no error, but cue says {}", e.message),
                (other, _) => format!("{other:?}"),
            };
            format!("  {}: {what}", r.name())
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} files miss the parse acceptance criterion:\n{}",
        failures.len(),
        report.files.len(),
        failures.join("\n")
    );
}

#[test]
fn figures_hold_the_ratchet() {
    let Some((_, report)) = checked() else { return };
    let figures = report.figures();
    let named = figures.named();
    println!("parse/format figures:");
    for (name, value) in &named {
        println!("  {name} = {value}");
    }
    let ratchet = Ratchet::load(&ratchet::default_path()).expect("ratchet.json is valid");
    let outcome = ratchet.check("parse", &named);
    if let Some(reason) = &outcome.skipped {
        println!("SKIPPED: {reason}");
    }
    for hint in &outcome.hints {
        println!("hint: {hint} (in conformance/ratchet.json)");
    }
    assert!(
        outcome.passed(),
        "figures fell below the ratchet:\n  {}",
        outcome.failures.join("\n  ")
    );
}
