//! Integration tests of the eval/export conformance check against the shared corpus.
//!
//! They run the same check as `conformance export`, with the engine of
//! `conformance::engine::selected()`, then hold its figures to the floors of the `"export"`
//! section of `conformance/ratchet.json`. Without the corpus (no `$CONFORMANCE_DIR` and nothing
//! at `../shared/conformance`), every test prints a `SKIPPED:` line and passes, because the
//! corpus is data outside the repository rather than part of the code under test.

use std::collections::BTreeSet;
use std::sync::{Arc, OnceLock};

use conformance::corpus::{self, CaseKind, Corpus};
use conformance::engine;
use conformance::export::{self, Report};
use conformance::inline;
use conformance::ratchet::{self, Ratchet};

/// The corpus and the report, computed once for all tests of this binary.
fn checked() -> Option<&'static (Corpus, Report)> {
    static CELL: OnceLock<Result<(Corpus, Report), String>> = OnceLock::new();
    let result = CELL.get_or_init(|| {
        let location = corpus::locate()?;
        let corpus = Corpus::load(&location.root).map_err(|e| e.to_string())?;
        let report = export::run(
            &corpus,
            Arc::new(engine::selected()),
            // The time limit is a safety net, not a figure: debug builds on a loaded CI
            // machine are many times slower than the release runner.
            &export::Options {
                timeout: std::time::Duration::from_secs(120),
                ..export::Options::default()
            },
        );
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
fn every_cue_case_is_checked() {
    let Some((corpus, report)) = checked() else {
        return;
    };
    let want: BTreeSet<&str> = corpus
        .cases
        .iter()
        .filter(|c| matches!(c.kind, CaseKind::Language | CaseKind::Stdlib))
        .map(|c| c.id.as_str())
        .collect();
    let got: BTreeSet<&str> = report
        .cases
        .iter()
        .map(|c| c.id.as_str())
        .chain(report.no_verdict.iter().map(String::as_str))
        .collect();
    assert_eq!(got, want);
    // The oracle ran every public case to completion.
    assert!(report.no_verdict.is_empty(), "{:?}", report.no_verdict);
}

/// Every `@test` attribute the runner finds is one it understands; an invalid one would be a
/// runner bug (upstream's harness accepts them all), silently turning assertions into skips.
#[test]
fn every_test_attribute_parses() {
    let Some((_, report)) = checked() else { return };
    let invalid: Vec<String> = report
        .cases
        .iter()
        .flat_map(|c| {
            c.assertions
                .iter()
                .filter(|a| a.invalid)
                .map(move |a| format!("  {}/{}: {}", c.id, a.location, a.outcome.reason()))
        })
        .collect();
    assert!(
        invalid.is_empty(),
        "{} invalid @test attributes:\n{}",
        invalid.len(),
        invalid.join("\n")
    );
    for c in &report.cases {
        assert!(
            c.assertion_error.is_none(),
            "{}: {:?}",
            c.id,
            c.assertion_error
        );
    }
}

/// The `inline_test` flag of `expected.json` says an archive has `@test` attributes; the cases
/// that have them in their root files must yield assertions, and golden-only cases none.
#[test]
fn assertions_follow_the_inline_flag() {
    let Some((corpus, report)) = checked() else {
        return;
    };
    for case in &corpus.cases {
        let Some(expected) = &case.expected else {
            continue;
        };
        if !matches!(case.kind, CaseKind::Language | CaseKind::Stdlib) {
            continue;
        }
        let records = inline::extract(case);
        if expected.golden_only {
            assert!(
                records.is_empty(),
                "{}: golden-only case with @test",
                case.id
            );
        }
        if !expected.inline_test {
            assert!(records.is_empty(), "{}: @test without inline_test", case.id);
        }
    }
    let f = report.figures();
    assert!(f.inline.total > 0, "no inline assertion found at all");
}

#[test]
fn figures_hold_the_ratchet() {
    let Some((_, report)) = checked() else { return };
    let figures = report.figures();
    let named = figures.named();
    println!("export figures (engine {}):", report.engine);
    for (name, value) in &named {
        println!("  {name} = {value}");
    }
    println!(
        "  pass: {} of all cases, {} of core cases; assertions: {} of checked",
        export::percent(figures.pass, figures.cases),
        export::percent(figures.core_pass, figures.core_cases),
        export::percent(
            figures.inline.pass,
            figures.inline.pass + figures.inline.fail
        )
    );
    let ratchet = Ratchet::load(&ratchet::default_path()).expect("ratchet.json is valid");
    let outcome = ratchet.check("export", &named);
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
