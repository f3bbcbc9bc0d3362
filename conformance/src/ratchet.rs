//! The ratchet: committed floors under the conformance figures, so that progress is never lost.
//!
//! `conformance/ratchet.json` holds one object per check (`"parse"` today; `"eval"` and
//! `"export"` later), each mapping a figure name to a number. A plain name is a *floor*: the
//! figure must not fall below it. A name ending in `_max` is a *ceiling* on the figure without the
//! suffix (`"parse_failures_max": 0` says no file may fail). Keys starting with `_` are comments.
//! When a figure moves past its bound in the good direction, the check passes and reports a hint
//! to tighten the bound, so each improvement can be locked in by the commit that makes it.
//!
//! The bounds are measured on one corpus, the public one. The reserved key `corpus_files` records
//! how many files it has; on a corpus of another size (the full corpus with its held-out cases,
//! say) the bounds mean nothing, so the check is skipped with a reason rather than failed.
//! Losing files from the public corpus is caught elsewhere, by comparing discovery with its
//! `index.json`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

/// The committed ratchet file of this crate.
pub fn default_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("ratchet.json")
}

/// The bounds of every check, by check then figure name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ratchet {
    pub sections: BTreeMap<String, BTreeMap<String, u64>>,
}

impl Ratchet {
    pub fn load(path: &Path) -> Result<Ratchet, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        Ratchet::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    pub fn parse(text: &str) -> Result<Ratchet, String> {
        let root: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
        let obj = root
            .as_object()
            .ok_or("the ratchet must be a JSON object")?;
        let mut sections = BTreeMap::new();
        for (name, section) in obj {
            if name.starts_with('_') {
                continue;
            }
            let section = section
                .as_object()
                .ok_or_else(|| format!("section {name:?} must be an object"))?;
            let mut bounds = BTreeMap::new();
            for (key, value) in section {
                if key.starts_with('_') {
                    continue;
                }
                let n = value
                    .as_u64()
                    .ok_or_else(|| format!("{name}.{key} must be a non-negative integer"))?;
                bounds.insert(key.clone(), n);
            }
            sections.insert(name.clone(), bounds);
        }
        Ok(Ratchet { sections })
    }

    /// Checks `figures` against the bounds of `section`. A missing section is an error, since a
    /// runner with no bounds would guard nothing.
    pub fn check(&self, section: &str, figures: &[(&str, usize)]) -> Outcome {
        let mut out = Outcome::default();
        let Some(bounds) = self.sections.get(section) else {
            out.failures
                .push(format!("the ratchet has no {section:?} section"));
            return out;
        };
        if let Some(&expected) = bounds.get(CORPUS_FILES) {
            let actual = figures.iter().find(|(n, _)| *n == "files").map(|f| f.1);
            if actual != Some(expected as usize) {
                out.skipped = Some(format!(
                    "the {section} ratchet was measured on a corpus of {expected} files, this one has {}",
                    actual.map_or("an unknown number of".to_owned(), |n| n.to_string())
                ));
                return out;
            }
        }
        for (key, &bound) in bounds {
            if key == CORPUS_FILES {
                continue;
            }
            let (figure, ceiling) = match key.strip_suffix("_max") {
                Some(f) => (f, true),
                None => (key.as_str(), false),
            };
            let Some(&(_, actual)) = figures.iter().find(|(n, _)| *n == figure) else {
                out.failures.push(format!(
                    "{section}.{key}: no figure named {figure:?} (known: {})",
                    figures
                        .iter()
                        .map(|(n, _)| *n)
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
                continue;
            };
            let actual = actual as u64;
            match (ceiling, actual.cmp(&bound)) {
                (false, std::cmp::Ordering::Less) => out.failures.push(format!(
                    "{section}.{key}: {actual} is below the floor {bound}"
                )),
                (true, std::cmp::Ordering::Greater) => out.failures.push(format!(
                    "{section}.{key}: {figure} = {actual} is above the ceiling {bound}"
                )),
                (false, std::cmp::Ordering::Greater) => out.hints.push(format!(
                    "{section}.{key}: {actual} is above the floor {bound}; raise it to {actual}"
                )),
                (true, std::cmp::Ordering::Less) => out.hints.push(format!(
                    "{section}.{key}: {figure} = {actual} is below the ceiling {bound}; lower it to {actual}"
                )),
                (_, std::cmp::Ordering::Equal) => {}
            }
        }
        out
    }
}

/// The reserved key naming the size of the corpus the bounds were measured on.
pub const CORPUS_FILES: &str = "corpus_files";

/// The result of a ratchet check: failures break the build, hints ask to tighten a bound.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Outcome {
    pub failures: Vec<String>,
    pub hints: Vec<String>,
    /// Why the bounds were not applied, when they were not.
    pub skipped: Option<String>,
}

impl Outcome {
    pub fn passed(&self) -> bool {
        self.failures.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = r#"{
        "_doc": "comment",
        "parse": {"_note": "x", "parse_pass": 10, "parse_failures_max": 5},
        "eval": {}
    }"#;

    #[test]
    fn parses_sections() {
        let r = Ratchet::parse(TEXT).unwrap();
        assert_eq!(r.sections.len(), 2);
        assert_eq!(r.sections["parse"]["parse_pass"], 10);
        assert_eq!(r.sections["parse"]["parse_failures_max"], 5);
        assert!(Ratchet::parse(r#"{"parse": {"a": -1}}"#).is_err());
        assert!(Ratchet::parse("[]").is_err());
    }

    #[test]
    fn floors_and_ceilings() {
        let r = Ratchet::parse(TEXT).unwrap();
        let ok = r.check("parse", &[("parse_pass", 10), ("parse_failures", 5)]);
        assert!(ok.passed() && ok.hints.is_empty(), "{ok:?}");

        let better = r.check("parse", &[("parse_pass", 12), ("parse_failures", 3)]);
        assert!(better.passed());
        assert_eq!(better.hints.len(), 2);

        let worse = r.check("parse", &[("parse_pass", 9), ("parse_failures", 6)]);
        assert_eq!(worse.failures.len(), 2);
    }

    #[test]
    fn unknown_names_and_sections_fail() {
        let r = Ratchet::parse(TEXT).unwrap();
        assert!(!r.check("parse", &[("parse_pass", 10)]).passed());
        assert!(!r.check("export", &[]).passed());
        assert!(r.check("eval", &[]).passed());
    }

    #[test]
    fn other_corpora_skip_the_bounds() {
        let r = Ratchet::parse(r#"{"parse": {"corpus_files": 3, "parse_pass": 3}}"#).unwrap();
        let same = r.check("parse", &[("files", 3), ("parse_pass", 2)]);
        assert!(!same.passed() && same.skipped.is_none());
        let other = r.check("parse", &[("files", 5), ("parse_pass", 2)]);
        assert!(other.passed());
        assert!(other.skipped.unwrap().contains("3 files"));
    }

    #[test]
    fn committed_ratchet_is_valid() {
        let r = Ratchet::load(&default_path()).unwrap();
        assert!(r.sections.contains_key("parse"));
    }
}
