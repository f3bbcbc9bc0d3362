//! Integration tests of the wild check: real Timoni modules by other authors exported through
//! the code of `timoni cue export`, compared with `cue` v0.17.1.
//!
//! They run the same check as `conformance wild`, then hold its figures to the floors of the
//! `"wild"` section of `conformance/ratchet.json`. Without the corpus (no `$CONFORMANCE_DIR` and
//! nothing at `../shared/conformance`), or without its `wild/` part, every test prints a
//! `SKIPPED:` line and passes, because the corpus is data outside the repository rather than
//! part of the code under test.

use std::sync::OnceLock;

use conformance::corpus;
use conformance::ratchet::{self, Ratchet};
use conformance::wild::{self, Report};

/// The report, computed once for all tests of this binary.
fn checked() -> Option<&'static Report> {
    static CELL: OnceLock<Result<Report, String>> = OnceLock::new();
    let result = CELL.get_or_init(|| {
        let location = corpus::locate()?;
        let dir = location.root.join("wild");
        if !dir.join("cases.json").is_file() {
            return Err(format!("no wild modules at {}", dir.display()));
        }
        // The time limit is a safety net, not a figure: debug builds on a loaded CI machine are
        // many times slower than the release runner.
        wild::run(
            &location.root,
            &wild::Options {
                timeout: std::time::Duration::from_secs(600),
                ..wild::Options::default()
            },
        )
    });
    match result {
        Ok(report) => Some(report),
        Err(reason) => {
            println!("SKIPPED: {reason}");
            eprintln!("SKIPPED: {reason}");
            None
        }
    }
}

/// Every case ran: the runner could copy, patch and parse the arguments of each.
#[test]
fn every_case_runs() {
    let Some(report) = checked() else { return };
    let broken: Vec<String> = report
        .cases
        .iter()
        .filter(|c| c.reason.starts_with("runner:"))
        .map(|c| format!("  {}: {}", c.name, c.reason))
        .collect();
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}

#[test]
fn figures_hold_the_ratchet() {
    let Some(report) = checked() else { return };
    for c in &report.cases {
        let verdict = if c.pass { "PASS" } else { "FAIL" };
        println!("{verdict} {} {}", c.name, c.reason);
    }
    let named = report.figures().named();
    println!("wild figures:");
    for (name, value) in &named {
        println!("  {name} = {value}");
    }
    let ratchet = Ratchet::load(&ratchet::default_path()).expect("ratchet.json is valid");
    let outcome = ratchet.check("wild", &named);
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
