//! The recorded findings of the differential check (`conformance diff`): small CUE programs on
//! which our export once disagreed with `cue` v0.17.1, each kept in `conformance/testdata/diff`
//! as `NAME.cue` with `NAME.expected` (what `cue export --out json` printed, or `error: <its first
//! stderr line>` when it failed).
//!
//! Every case is exported with our evaluator as `timoni cue export --out json` does. A case
//! agrees when stdout is the expected text byte for byte, or, for an expected error, when ours
//! fails too. The cases not fixed yet are listed in `KNOWN_FAILING` (one name a line): every
//! other case must agree, and a listed case that agrees now is reported so it can be taken off
//! the list (a ratchet).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use conformance::diff::{self, RECORDED_HEADER};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/diff")
}

/// The case names: `NAME` of every `NAME.cue`.
fn cases() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir())
        .expect("conformance/testdata/diff exists")
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            name.strip_suffix(".cue").map(str::to_owned)
        })
        .collect();
    names.sort();
    names
}

fn known_failing() -> BTreeSet<String> {
    std::fs::read_to_string(dir().join("KNOWN_FAILING"))
        .expect("KNOWN_FAILING exists")
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_owned)
        .collect()
}

/// Ours on one case, in a scratch directory as the differential check runs it.
fn run(name: &str) -> Result<(), String> {
    let text =
        std::fs::read_to_string(dir().join(format!("{name}.cue"))).map_err(|e| e.to_string())?;
    let expected = std::fs::read_to_string(dir().join(format!("{name}.expected")))
        .map_err(|e| e.to_string())?;
    let scratch = tempfile::tempdir().map_err(|e| e.to_string())?;
    std::fs::write(scratch.path().join(diff::FILE), text).map_err(|e| e.to_string())?;
    // A generous limit: debug builds on a loaded machine are slow; a hang is a failure.
    let ours = diff::export_ours_in_thread(scratch.path(), Duration::from_secs(120));
    diff::agrees_with_recorded(&expected, &ours)
}

#[test]
fn cases_are_well_formed() {
    let names = cases();
    assert!(!names.is_empty(), "no cases in {}", dir().display());
    for name in &names {
        let text = std::fs::read_to_string(dir().join(format!("{name}.cue"))).unwrap();
        assert_eq!(
            text.lines().next(),
            Some(RECORDED_HEADER),
            "{name}.cue must open with the recording comment"
        );
        assert!(
            dir().join(format!("{name}.expected")).is_file(),
            "{name}.expected is missing"
        );
    }
    let names: BTreeSet<String> = names.into_iter().collect();
    for listed in known_failing() {
        assert!(
            names.contains(&listed),
            "KNOWN_FAILING names {listed}, which has no .cue file"
        );
    }
}

#[test]
fn recorded_findings_hold_the_ratchet() {
    let known = known_failing();
    let mut regressions = Vec::new();
    let mut fixed = Vec::new();
    for name in cases() {
        let result = run(&name);
        match (&result, known.contains(&name)) {
            (Ok(()), true) => fixed.push(name.clone()),
            (Err(why), false) => regressions.push(format!("  {name}: {why}")),
            _ => {}
        }
        let verdict = match &result {
            Ok(()) => "agree".to_owned(),
            Err(why) => format!("differ: {why}"),
        };
        println!("{name}: {verdict}");
    }
    for name in &fixed {
        println!("{name} agrees now: remove from KNOWN_FAILING");
        eprintln!("{name} agrees now: remove from KNOWN_FAILING");
    }
    assert!(
        regressions.is_empty(),
        "cases not in KNOWN_FAILING disagree with cue:\n{}",
        regressions.join("\n")
    );
}
