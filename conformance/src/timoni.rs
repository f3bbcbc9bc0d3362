//! The Timoni module check: every `timoni/<name>/module/` of the corpus loaded with the package
//! loader (`cue_eval::Loader`) and exported as the oracle's command says
//! (`cue export -e timoni.apply --out json -t ... ./`, run inside `module/`), compared with
//! `expected.json` (plain) and `expected-build.json` (with Timoni's `timoni.schema.cue` injected
//! as an in-memory overlay at the module root, and the build tags).
//!
//! A result is an exact text match (which implies key order), a value match (same JSON, other
//! key order), a wrong value, or an error; each module runs on its own thread with a time limit.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

/// How one export compared with the oracle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Byte for byte the oracle's stdout.
    Exact,
    /// The same JSON value with another key order.
    ValueOnly,
    /// Valid output with another value.
    Wrong,
    /// The export failed (loader or evaluator error, or a panic).
    Error(String),
    TimedOut,
    /// No expectation file.
    Missing,
}

impl Outcome {
    pub fn value_match(&self) -> bool {
        matches!(self, Outcome::Exact | Outcome::ValueOnly)
    }
}

/// One module's results.
#[derive(Debug, Clone)]
pub struct ModuleResult {
    pub name: String,
    pub plain: Outcome,
    pub build: Outcome,
    pub plain_time: Duration,
    pub build_time: Duration,
}

/// Figures of a run, for the ratchet's `"timoni"` section.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Figures {
    pub files: usize,
    pub plain_value: usize,
    pub plain_exact: usize,
    pub build_value: usize,
    pub build_exact: usize,
}

impl Figures {
    pub fn named(&self) -> Vec<(&'static str, usize)> {
        vec![
            ("files", self.files),
            ("plain_value", self.plain_value),
            ("plain_exact", self.plain_exact),
            ("build_value", self.build_value),
            ("build_exact", self.build_exact),
        ]
    }
}

/// The whole run.
#[derive(Debug, Clone, Default)]
pub struct Report {
    pub modules: Vec<ModuleResult>,
}

impl Report {
    pub fn figures(&self) -> Figures {
        let mut f = Figures {
            files: self.modules.len(),
            ..Figures::default()
        };
        for m in &self.modules {
            f.plain_value += usize::from(m.plain.value_match());
            f.plain_exact += usize::from(m.plain == Outcome::Exact);
            f.build_value += usize::from(m.build.value_match());
            f.build_exact += usize::from(m.build == Outcome::Exact);
        }
        f
    }
}

/// What to run.
#[derive(Debug, Clone)]
pub struct Options {
    pub timeout: Duration,
    pub filter: Option<String>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            timeout: Duration::from_secs(60),
            filter: None,
        }
    }
}

/// The oracle's command split into what the loader needs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Command {
    pub expression: Vec<String>,
    pub tags: Vec<String>,
    pub args: Vec<String>,
}

/// Parses `cue export -e X --out json -t a=b ./`.
pub fn parse_command(cmd: &str) -> Command {
    let mut out = Command::default();
    let words: Vec<&str> = cmd.split_whitespace().collect();
    let mut i = 0;
    while i < words.len() {
        match words[i] {
            "cue" | "export" => {}
            "-e" | "--expression" => {
                i += 1;
                out.expression.extend(words.get(i).map(|s| s.to_string()));
            }
            "-t" | "--inject" => {
                i += 1;
                out.tags.extend(words.get(i).map(|s| s.to_string()));
            }
            "--out" => i += 1,
            w => out.args.push(w.to_string()),
        }
        i += 1;
    }
    out
}

/// Runs the check over `<corpus>/timoni`.
pub fn run(corpus_root: &Path, options: &Options) -> Result<Report, String> {
    let dir = corpus_root.join("timoni");
    let schema = std::fs::read_to_string(dir.join("timoni.schema.cue"))
        .map_err(|e| format!("{}: {e}", dir.join("timoni.schema.cue").display()))?;
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(Result::ok)
        .filter(|e| e.path().join("module").is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut report = Report::default();
    for name in names {
        if let Some(f) = &options.filter
            && !name.contains(f.as_str())
        {
            continue;
        }
        let case = dir.join(&name);
        let module = case.join("module");
        let (plain, plain_time) =
            check(&module, &case.join("expected.json"), None, options.timeout);
        let overlay = Some(schema.clone());
        let (build, build_time) = check(
            &module,
            &case.join("expected-build.json"),
            overlay,
            options.timeout,
        );
        report.modules.push(ModuleResult {
            name,
            plain,
            build,
            plain_time,
            build_time,
        });
    }
    Ok(report)
}

/// Exports one module as an expectation file's command says and compares.
fn check(
    module: &Path,
    expected: &Path,
    schema_overlay: Option<String>,
    timeout: Duration,
) -> (Outcome, Duration) {
    let Ok(text) = std::fs::read_to_string(expected) else {
        return (Outcome::Missing, Duration::ZERO);
    };
    let Ok(v) = serde_json::from_str::<Value>(&text) else {
        return (
            Outcome::Error(format!("{}: invalid JSON", expected.display())),
            Duration::ZERO,
        );
    };
    // expected.json nests the run under "export"; expected-build.json is the run itself.
    let run = v.get("export").unwrap_or(&v);
    let command = v
        .get("command")
        .or_else(|| run.get("command"))
        .and_then(Value::as_str)
        .unwrap_or_default();
    let want = run
        .get("stdout")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let cmd = parse_command(command);
    let module = module.to_path_buf();
    let (tx, rx) = mpsc::channel();
    let started = Instant::now();
    let spawned = std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || {
            let got = std::panic::catch_unwind(|| export(&module, &cmd, schema_overlay))
                .unwrap_or_else(|_| Err("panic".to_string()));
            let _ = tx.send(got);
        });
    if let Err(e) = spawned {
        return (Outcome::Error(format!("thread: {e}")), Duration::ZERO);
    }
    let got = match rx.recv_timeout(timeout) {
        Ok(g) => g,
        Err(_) => return (Outcome::TimedOut, started.elapsed()),
    };
    let elapsed = started.elapsed();
    let outcome = match got {
        Err(e) => Outcome::Error(e),
        Ok(text) if text == want => Outcome::Exact,
        Ok(text) => {
            let a = serde_json::from_str::<Value>(&text);
            let b = serde_json::from_str::<Value>(&want);
            match (a, b) {
                (Ok(a), Ok(b)) if a == b => Outcome::ValueOnly,
                _ => Outcome::Wrong,
            }
        }
    };
    (outcome, elapsed)
}

/// `cue export -e EXPR --out json -t ... ./` inside `module`.
pub fn export(
    module: &Path,
    cmd: &Command,
    schema_overlay: Option<String>,
) -> Result<String, String> {
    let mut loader = cue_eval::Context::new()
        .loader(module)
        .args(cmd.args.clone());
    for t in &cmd.tags {
        loader = loader.tag(t.clone());
    }
    if let Some(s) = schema_overlay {
        loader = loader.overlay(PathBuf::from("timoni.schema.cue"), s);
    }
    crate::wild::export_json(loader, &cmd.expression).map_err(|e| format!("{e}\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_parse() {
        let c = parse_command(
            "cue export -e timoni.apply --out json -t name=test -t namespace=default ./",
        );
        assert_eq!(c.expression, vec!["timoni.apply"]);
        assert_eq!(c.tags, vec!["name=test", "namespace=default"]);
        assert_eq!(c.args, vec!["./"]);
    }

    /// The figures hold the `"timoni"` section of the ratchet (skipped without the corpus).
    #[test]
    fn figures_hold_the_ratchet() {
        let root = match crate::corpus::locate() {
            Ok(l) => l.root,
            Err(e) => {
                println!("SKIPPED: {e}");
                return;
            }
        };
        let report = run(&root, &Options::default()).expect("timoni corpus readable");
        for m in &report.modules {
            println!(
                "{}: plain {:?}, build {:?}",
                m.name,
                short(&m.plain),
                short(&m.build)
            );
        }
        let figures = report.figures().named();
        let ratchet = crate::ratchet::Ratchet::load(&crate::ratchet::default_path())
            .expect("ratchet.json is valid");
        let outcome = ratchet.check("timoni", &figures);
        for h in &outcome.hints {
            println!("hint: {h} (in conformance/ratchet.json)");
        }
        assert!(
            outcome.passed(),
            "figures fell below the ratchet:\n  {}",
            outcome.failures.join("\n  ")
        );
    }

    fn short(o: &Outcome) -> String {
        match o {
            Outcome::Error(e) => format!("error: {}", e.lines().next().unwrap_or("")),
            o => format!("{o:?}"),
        }
    }
}
