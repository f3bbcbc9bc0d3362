//! The eval/export conformance check: every CUE case of the corpus (`cue/**`, `cue-pkg/**`)
//! through an [`Engine`], compared with the official `cue export --out json`, plus the
//! case's inline `@test` assertions ([`crate::inline`]).
//!
//! Comparison follows the corpus README ("How a runner should compare"):
//!
//! 1. **Verdict**: success (exit 0) against failure. A case whose oracle run timed out would be
//!    left out (the public corpus has none).
//! 2. **Pass**: the verdict matches and, for a successful export, both stdouts parse as JSON
//!    and are equal as values: objects unordered, arrays ordered, numbers as exact decimals
//!    ([`crate::json`]). A failing export passes on its verdict alone.
//! 3. Secondary levels, never failing a case: for successful exports, whether object keys also
//!    come in CUE's order (**key order**); for failing ones with a matching verdict, whether the
//!    set of error paths is the same (**error paths**: the `a.b.c` of each `a.b.c: message`
//!    header line, see [`error_paths`]); and for both, whether stdout (or stderr) is
//!    byte-identical (**exact text**).
//!
//! Each case is flagged from its `expected.json`: `golden_only` (no inline assertions, an old
//! debug-printer golden only), `experiment` (needs `@experiment`s), `harness_selftest`
//! (`cue/inlinetest`) and `inline_test`. The acceptance figures are the pass rate over all
//! cases and over the *core* cases, those neither `golden_only` nor `experiment`.
//!
//! An engine is young code: each case runs on its own thread with a large stack, panics are
//! caught and counted as failures, and a case that runs past the time limit is abandoned (its
//! thread is left behind) and counted as a failure. The time limit applies twice: once to
//! `load` plus `export_json`, then afresh to the inline assertions.

use std::collections::BTreeSet;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::corpus::{Case, CaseKind, Corpus};
use crate::engine::{Engine, SourceFile, path_string};
use crate::inline::{self, Action, Counts, Outcome, Planned};
use crate::json;

/// How to run the check.
#[derive(Debug, Clone)]
pub struct Options {
    /// The longest the export of one case (and then its inline assertions) may take.
    pub timeout: Duration,
    /// Cases run at once; 0 means one per available CPU.
    pub threads: usize,
    /// Only cases whose id contains this text are run.
    pub filter: Option<String>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            timeout: Duration::from_secs(10),
            threads: 0,
            filter: None,
        }
    }
}

/// Stack size of the threads that run the engine.
pub const STACK_SIZE: usize = 256 << 20;

/// The flags of a case, from its `expected.json`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Flags {
    pub golden_only: bool,
    pub experiment: bool,
    pub harness_selftest: bool,
    pub inline_test: bool,
}

impl Flags {
    /// Neither `golden_only` nor `experiment`: the population of the core acceptance figure.
    pub fn core(&self) -> bool {
        !self.golden_only && !self.experiment
    }
}

/// What the engine produced for `cue export`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Produced {
    Stdout(String),
    Stderr(String),
    Panicked(String),
    TimedOut,
}

/// One inline assertion's result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssertionResult {
    /// `file:line:col` of the attribute.
    pub location: String,
    pub path: String,
    pub directive: String,
    pub outcome: Outcome,
    pub invalid: bool,
}

/// One case's result.
#[derive(Debug, Clone)]
pub struct CaseResult {
    pub id: String,
    pub group: String,
    pub flags: Flags,
    /// Whether the official export succeeded.
    pub expected_ok: bool,
    pub produced: Produced,
    pub verdict_match: bool,
    /// Successful exports only: the JSON values are equal.
    pub value_match: bool,
    /// Successful exports only: equal values whose objects list their keys in the same order.
    pub key_order_match: bool,
    /// Stdout (or, for failures, stderr) identical to the oracle's.
    pub exact_text: bool,
    /// Failing exports with a matching verdict only: the same set of error paths.
    pub error_paths_match: bool,
    pub pass: bool,
    /// Why the case fails, or a note on a passing one; empty when there is nothing to say.
    pub reason: String,
    pub assertions: Vec<AssertionResult>,
    /// Why the assertions could not be extracted, when they could not.
    pub assertion_error: Option<String>,
}

impl CaseResult {
    pub fn inline_counts(&self) -> Counts {
        let mut c = Counts::default();
        for a in &self.assertions {
            c.add(&a.outcome, a.invalid);
        }
        c
    }
}

/// All results of a run.
#[derive(Debug, Clone)]
pub struct Report {
    pub engine: String,
    pub cases: Vec<CaseResult>,
    /// Cases left out because the oracle has no verdict for them (a timed-out run).
    pub no_verdict: Vec<String>,
}

/// The figures of a run; the names of [`Figures::named`] are the ratchet's keys.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Figures {
    pub cases: usize,
    pub expected_ok: usize,
    pub expected_fail: usize,
    pub verdict_match: usize,
    pub pass: usize,
    pub value_match: usize,
    pub key_order: usize,
    pub exact_text: usize,
    pub error_paths: usize,
    pub core_cases: usize,
    pub core_pass: usize,
    pub golden_only_cases: usize,
    pub golden_only_pass: usize,
    pub experiment_cases: usize,
    pub experiment_pass: usize,
    pub selftest_cases: usize,
    pub selftest_pass: usize,
    pub panics: usize,
    pub timeouts: usize,
    pub inline: Counts,
}

impl Figures {
    /// The figures as named numbers. `files` is the number of cases, the corpus size the
    /// ratchet's `corpus_files` is compared with.
    pub fn named(&self) -> Vec<(&'static str, usize)> {
        vec![
            ("files", self.cases),
            ("cases", self.cases),
            ("expected_ok", self.expected_ok),
            ("expected_fail", self.expected_fail),
            ("verdict_match", self.verdict_match),
            ("pass", self.pass),
            ("value_match", self.value_match),
            ("key_order", self.key_order),
            ("exact_text", self.exact_text),
            ("error_paths", self.error_paths),
            ("core_cases", self.core_cases),
            ("core_pass", self.core_pass),
            ("golden_only_pass", self.golden_only_pass),
            ("experiment_pass", self.experiment_pass),
            ("selftest_pass", self.selftest_pass),
            ("panics", self.panics),
            ("timeouts", self.timeouts),
            ("assertions", self.inline.total),
            ("assertions_pass", self.inline.pass),
            ("assertions_fail", self.inline.fail),
            ("assertions_skipped", self.inline.skipped),
            ("assertions_invalid", self.inline.invalid),
        ]
    }
}

/// A percentage with one decimal, `-` for an empty population.
pub fn percent(n: usize, of: usize) -> String {
    if of == 0 {
        "-".to_owned()
    } else {
        format!("{:.1}%", 100.0 * n as f64 / of as f64)
    }
}

/// One row of the per-directory table.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GroupRow {
    pub group: String,
    pub cases: usize,
    pub expected_ok: usize,
    pub verdict_match: usize,
    pub pass: usize,
    pub key_order: usize,
    pub exact_text: usize,
    pub error_paths: usize,
    pub inline: Counts,
}

impl Report {
    pub fn figures(&self) -> Figures {
        let mut f = Figures::default();
        for c in &self.cases {
            f.cases += 1;
            if c.expected_ok {
                f.expected_ok += 1;
            } else {
                f.expected_fail += 1;
            }
            f.verdict_match += usize::from(c.verdict_match);
            f.pass += usize::from(c.pass);
            f.value_match += usize::from(c.value_match);
            f.key_order += usize::from(c.key_order_match);
            f.exact_text += usize::from(c.exact_text);
            f.error_paths += usize::from(c.error_paths_match);
            let tally = |cases: &mut usize, pass: &mut usize, on: bool| {
                if on {
                    *cases += 1;
                    *pass += usize::from(c.pass);
                }
            };
            tally(&mut f.core_cases, &mut f.core_pass, c.flags.core());
            tally(
                &mut f.golden_only_cases,
                &mut f.golden_only_pass,
                c.flags.golden_only,
            );
            tally(
                &mut f.experiment_cases,
                &mut f.experiment_pass,
                c.flags.experiment,
            );
            tally(
                &mut f.selftest_cases,
                &mut f.selftest_pass,
                c.flags.harness_selftest,
            );
            match c.produced {
                Produced::Panicked(_) => f.panics += 1,
                Produced::TimedOut => f.timeouts += 1,
                _ => {}
            }
            f.inline.merge(&c.inline_counts());
        }
        f
    }

    /// Counts per table row, in corpus order.
    pub fn groups(&self) -> Vec<GroupRow> {
        let mut rows: Vec<GroupRow> = Vec::new();
        for c in &self.cases {
            let row = match rows.last_mut() {
                Some(row) if row.group == c.group => row,
                _ => {
                    rows.push(GroupRow {
                        group: c.group.clone(),
                        ..GroupRow::default()
                    });
                    rows.last_mut().expect("just pushed")
                }
            };
            row.cases += 1;
            row.expected_ok += usize::from(c.expected_ok);
            row.verdict_match += usize::from(c.verdict_match);
            row.pass += usize::from(c.pass);
            row.key_order += usize::from(c.key_order_match);
            row.exact_text += usize::from(c.exact_text);
            row.error_paths += usize::from(c.error_paths_match);
            row.inline.merge(&c.inline_counts());
        }
        rows
    }

    /// The JSON summary written by `conformance export --json PATH`.
    pub fn to_json(&self) -> Value {
        let f = self.figures();
        let figures: serde_json::Map<String, Value> = f
            .named()
            .into_iter()
            .map(|(k, v)| (k.to_owned(), json!(v)))
            .collect();
        let cases: Vec<Value> = self
            .cases
            .iter()
            .map(|c| {
                let counts = c.inline_counts();
                json!({
                    "id": c.id,
                    "group": c.group,
                    "pass": c.pass,
                    "reason": c.reason,
                    "expected_ok": c.expected_ok,
                    "verdict_match": c.verdict_match,
                    "value_match": c.value_match,
                    "key_order": c.key_order_match,
                    "exact_text": c.exact_text,
                    "error_paths": c.error_paths_match,
                    "flags": {
                        "golden_only": c.flags.golden_only,
                        "experiment": c.flags.experiment,
                        "harness_selftest": c.flags.harness_selftest,
                        "inline_test": c.flags.inline_test,
                    },
                    "inline": {
                        "total": counts.total,
                        "pass": counts.pass,
                        "fail": counts.fail,
                        "skipped": counts.skipped,
                        "error": c.assertion_error,
                    },
                    "assertions": c.assertions.iter().map(|a| json!({
                        "at": a.location,
                        "path": a.path,
                        "directive": a.directive,
                        "outcome": a.outcome.word(),
                        "reason": a.outcome.reason(),
                    })).collect::<Vec<_>>(),
                })
            })
            .collect();
        json!({
            "engine": self.engine,
            "figures": figures,
            "pass_percent": pct_value(f.pass, f.cases),
            "core_pass_percent": pct_value(f.core_pass, f.core_cases),
            "assertion_pass_percent": pct_value(f.inline.pass, f.inline.pass + f.inline.fail),
            "no_verdict": self.no_verdict,
            "cases": cases,
        })
    }
}

fn pct_value(n: usize, of: usize) -> Value {
    if of == 0 {
        Value::Null
    } else {
        json!((1000.0 * n as f64 / of as f64).round() / 10.0)
    }
}

/// The set of error paths of a `cue` error list: for each header line (a line not starting
/// with white space), the `a.b."c d".0` before its first `": "`, or the empty string for a
/// header without a path (`invalid value ...`, `./in.cue:3:5: expected ...`).
pub fn error_paths(stderr: &str) -> BTreeSet<String> {
    stderr
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with(char::is_whitespace))
        .map(|l| header_path(l).unwrap_or("").to_owned())
        .collect()
}

/// The path prefix of an error header, if it has one.
pub fn header_path(line: &str) -> Option<&str> {
    let b = line.as_bytes();
    let mut i = 0;
    loop {
        if b.get(i) == Some(&b'"') {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            if i >= b.len() {
                return None;
            }
            i += 1;
        } else {
            let start = i;
            while i < b.len()
                && (b[i].is_ascii_alphanumeric()
                    || matches!(b[i], b'_' | b'$' | b'#')
                    || b[i] >= 0x80)
            {
                i += 1;
            }
            if i == start {
                return None;
            }
        }
        match b.get(i) {
            Some(b'.') => i += 1,
            Some(b':') if b.get(i + 1) == Some(&b' ') || i + 1 == b.len() => {
                return Some(&line[..i]);
            }
            _ => return None,
        }
    }
}

/// How an engine's export compares with the oracle's.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Comparison {
    pub verdict: bool,
    pub value: bool,
    pub key_order: bool,
    pub exact: bool,
    pub error_paths: bool,
    pub pass: bool,
    /// Why the case fails, or a note on a passing one.
    pub reason: String,
}

/// Compares an engine's export with the oracle's run.
pub fn compare(
    expected_ok: bool,
    expected_stdout: &str,
    expected_stderr: &str,
    produced: &Produced,
) -> Comparison {
    let failed = |reason: String| Comparison {
        reason,
        ..Comparison::default()
    };
    match (expected_ok, produced) {
        (_, Produced::Panicked(m)) => failed(format!("panic: {m}")),
        (_, Produced::TimedOut) => failed("timed out".to_owned()),
        (true, Produced::Stderr(e)) => failed(format!(
            "expected success, got an error: {}",
            e.lines().next().unwrap_or("")
        )),
        (false, Produced::Stdout(_)) => failed("expected an error, got success".to_owned()),
        (true, Produced::Stdout(out)) => {
            let mut c = Comparison {
                verdict: true,
                exact: out == expected_stdout,
                ..Comparison::default()
            };
            match (json::parse(expected_stdout), json::parse(out)) {
                (Err(e), _) => c.reason = format!("the oracle's stdout is not JSON: {e}"),
                (_, Err(e)) => c.reason = format!("output is not JSON: {e}"),
                (Ok(want), Ok(got)) => match json::first_difference(&want, &got) {
                    Some(d) => c.reason = format!("value differs: {d}"),
                    None => {
                        c.value = true;
                        c.pass = true;
                        c.key_order = json::same_key_order(&want, &got);
                        if !c.key_order {
                            c.reason = "key order differs".to_owned();
                        }
                    }
                },
            }
            c
        }
        (false, Produced::Stderr(err)) => {
            let error_paths = error_paths(err) == error_paths(expected_stderr);
            Comparison {
                verdict: true,
                exact: err == expected_stderr,
                error_paths,
                pass: true,
                value: false,
                key_order: false,
                reason: if error_paths {
                    String::new()
                } else {
                    "error paths differ".to_owned()
                },
            }
        }
    }
}

enum Msg {
    Export(Produced),
    Check(usize, Outcome),
    NoInstance(String),
    Done,
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic with a non-string payload".to_owned()
    }
}

/// Runs the check over every CUE case of the corpus.
pub fn run<E: Engine>(corpus: &Corpus, engine: Arc<E>, options: &Options) -> Report {
    let jobs: Vec<&Case> = corpus
        .cases
        .iter()
        .filter(|c| matches!(c.kind, CaseKind::Language | CaseKind::Stdlib))
        .filter(|c| {
            options
                .filter
                .as_ref()
                .is_none_or(|f| c.id.contains(f.as_str()))
        })
        .collect();
    let threads = if options.threads == 0 {
        thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        options.threads
    }
    .min(jobs.len().max(1));
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Result<CaseResult, String>>>> =
        Mutex::new(vec![None; jobs.len()]);
    thread::scope(|scope| {
        for _ in 0..threads {
            let worker = || {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(case) = jobs.get(i) else { break };
                    let r = run_case(case, &engine, options);
                    results.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(r);
                }
            };
            // The worker parses the case's files to find its assertions: give it room.
            let spawned = thread::Builder::new()
                .name("conformance-export".to_owned())
                .stack_size(64 << 20)
                .spawn_scoped(scope, worker);
            if spawned.is_err() {
                break;
            }
        }
    });
    let mut cases = Vec::new();
    let mut no_verdict = Vec::new();
    for r in results
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .flatten()
    {
        match r {
            Ok(c) => cases.push(c),
            Err(id) => no_verdict.push(id),
        }
    }
    Report {
        engine: engine.name().to_owned(),
        cases,
        no_verdict,
    }
}

/// Runs one case; `Err(id)` when the oracle has no verdict for it.
fn run_case<E: Engine>(
    case: &Case,
    engine: &Arc<E>,
    options: &Options,
) -> Result<CaseResult, String> {
    let expected = case.expected.as_ref().ok_or_else(|| case.id.clone())?;
    let oracle = expected.run("export").ok_or_else(|| case.id.clone())?;
    let expected_ok = oracle.ok().ok_or_else(|| case.id.clone())?;
    let flags = Flags {
        golden_only: expected.golden_only,
        experiment: expected.experiment,
        harness_selftest: expected.harness_selftest,
        inline_test: expected.inline_test,
    };

    let (planned, assertion_error) =
        match std::panic::catch_unwind(AssertUnwindSafe(|| inline::plan(case))) {
            Ok(p) => (p, None),
            Err(p) => (
                Vec::new(),
                Some(format!(
                    "extraction panicked: {}",
                    panic_message(p.as_ref())
                )),
            ),
        };
    let files: Vec<SourceFile> = case
        .sources
        .iter()
        .map(|s| SourceFile {
            path: s.path.clone(),
            text: String::from_utf8_lossy(&s.bytes).into_owned(),
        })
        .collect();
    let roots = expected.files.clone();
    let checks: Vec<(usize, Planned)> = planned
        .iter()
        .enumerate()
        .filter(|(_, p)| matches!(p.action, Action::Run(_)))
        .map(|(i, p)| (i, p.clone()))
        .collect();

    let (tx, rx) = mpsc::channel();
    let engine = Arc::clone(engine);
    let spawned = thread::Builder::new()
        .name(format!("engine {}", case.id))
        .stack_size(STACK_SIZE)
        .spawn(move || work(&*engine, &files, &roots, &checks, &tx));

    let mut produced = None;
    let mut outcomes: Vec<Option<Outcome>> = vec![None; planned.len()];
    let mut unfinished = "the engine thread ended without a result".to_owned();
    if let Err(e) = spawned {
        unfinished = format!("could not start a thread: {e}");
    } else {
        let mut deadline = Instant::now() + options.timeout;
        loop {
            match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(Msg::Export(p)) => {
                    produced = Some(p);
                    deadline = Instant::now() + options.timeout;
                }
                Ok(Msg::Check(i, o)) => outcomes[i] = Some(o),
                Ok(Msg::NoInstance(why)) => {
                    unfinished = why;
                    break;
                }
                Ok(Msg::Done) => break,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    unfinished = format!("timed out after {:?}", options.timeout);
                    if produced.is_none() {
                        produced = Some(Produced::TimedOut);
                    }
                    break;
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
        }
    }
    let produced = produced.unwrap_or_else(|| Produced::Panicked(unfinished.clone()));

    let assertions = planned
        .iter()
        .zip(outcomes)
        .map(|(p, o)| AssertionResult {
            location: p.location(),
            path: path_string(&p.record.path),
            directive: p.directive.clone(),
            outcome: inline::static_outcome(p)
                .or(o)
                .unwrap_or_else(|| Outcome::Fail(unfinished.clone())),
            invalid: matches!(p.action, Action::Invalid(_)),
        })
        .collect();

    let c = compare(expected_ok, &oracle.stdout, &oracle.stderr, &produced);
    Ok(CaseResult {
        id: case.id.clone(),
        group: case.group.clone(),
        flags,
        expected_ok,
        produced,
        verdict_match: c.verdict,
        value_match: c.value,
        key_order_match: c.key_order,
        exact_text: c.exact,
        error_paths_match: c.error_paths,
        pass: c.pass,
        reason: c.reason,
        assertions,
        assertion_error,
    })
}

/// The engine side of a case, on its own thread: load, export, then the inline checks.
fn work<E: Engine>(
    engine: &E,
    files: &[SourceFile],
    roots: &[String],
    checks: &[(usize, Planned)],
    tx: &mpsc::Sender<Msg>,
) {
    let send = |m: Msg| {
        let _ = tx.send(m);
    };
    let mut inst = match std::panic::catch_unwind(AssertUnwindSafe(|| engine.load(files, roots))) {
        Ok(Ok(inst)) => inst,
        Ok(Err(e)) => {
            let first = e.lines().next().unwrap_or("").to_owned();
            send(Msg::Export(Produced::Stderr(e)));
            send(Msg::NoInstance(format!("load failed: {first}")));
            return;
        }
        Err(p) => {
            let m = panic_message(p.as_ref());
            send(Msg::Export(Produced::Panicked(format!("load: {m}"))));
            send(Msg::NoInstance(format!("load panicked: {m}")));
            return;
        }
    };
    let out = std::panic::catch_unwind(AssertUnwindSafe(|| engine.export_json(&mut inst)));
    send(Msg::Export(match out {
        Ok(Ok(s)) => Produced::Stdout(s),
        Ok(Err(e)) => Produced::Stderr(e),
        Err(p) => Produced::Panicked(panic_message(p.as_ref())),
    }));
    for (i, p) in checks {
        let Action::Run(check) = &p.action else {
            continue;
        };
        let o = std::panic::catch_unwind(AssertUnwindSafe(|| {
            inline::run_check(engine, &mut inst, p, check)
        }))
        .unwrap_or_else(|p| Outcome::Fail(format!("panic: {}", panic_message(p.as_ref()))));
        send(Msg::Check(*i, o));
    }
    send(Msg::Done);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::{Expected, Run, SourceFile as CorpusFile};
    use crate::engine::{AllowsSelector, EqExpectation, ErrInfo, Kinds, NullEngine, Selector};

    #[test]
    fn header_paths() {
        let stderr = "a.b: conflicting values 2 and 1:\n    ./in.cue:1:4\n\
                      \"x y\".#D.0: incomplete value int\n\
                      invalid value 3 (does not satisfy matchN): 0 matched:\n\
                      ./in.cue:3:5: expected '}'\n\
                      _h.x$y: msg\n\
                      z:\n";
        let paths: Vec<_> = error_paths(stderr).into_iter().collect();
        assert_eq!(paths, ["", "\"x y\".#D.0", "_h.x$y", "a.b", "z"]);
    }

    #[test]
    fn comparisons() {
        let ok = |out: &str| {
            compare(
                true,
                "{\n    \"a\": 1,\n    \"b\": 2\n}\n",
                "",
                &Produced::Stdout(out.to_owned()),
            )
        };
        let r = ok("{\n    \"a\": 1,\n    \"b\": 2\n}\n");
        assert!(r.verdict && r.value && r.key_order && r.exact && r.pass);
        let r = ok("{\"b\": 2.0, \"a\": 1}");
        assert!(r.verdict && r.value && !r.key_order && !r.exact && r.pass);
        let r = ok("{\"b\": 3, \"a\": 1}");
        assert!(!r.pass && r.reason.contains("$.b"), "{}", r.reason);
        let r = ok("{\"b\": 3");
        assert!(r.verdict && !r.pass && r.reason.starts_with("output is not JSON"));
        let r = compare(
            false,
            "",
            "a: x:\n    ./in.cue:1:1\n",
            &Produced::Stderr("a: y\n".into()),
        );
        assert!(r.verdict && !r.exact && r.error_paths && r.pass);
        let r = compare(false, "", "a: x\n", &Produced::Stdout("{}".into()));
        assert!(!r.verdict && !r.pass);
        let r = compare(false, "", "a: x\n", &Produced::Panicked("boom".into()));
        assert!(!r.verdict && !r.pass && r.reason == "panic: boom");
    }

    fn case(id: &str, exit: i64, stdout: &str, src: &str) -> Case {
        Case {
            id: id.to_owned(),
            kind: CaseKind::Language,
            dir: ".".into(),
            group: id.rsplit_once('/').unwrap().0.to_owned(),
            expected: Some(Expected {
                files: vec!["in.cue".to_owned()],
                inline_test: true,
                runs: vec![(
                    "export".to_owned(),
                    Run {
                        exit: Some(exit),
                        stdout: stdout.to_owned(),
                        stderr: if exit == 0 {
                            String::new()
                        } else {
                            "a: err\n".into()
                        },
                        ..Run::default()
                    },
                )],
                ..Expected::default()
            }),
            archive: None,
            sources: vec![CorpusFile {
                path: "in.cue".to_owned(),
                bytes: src.as_bytes().to_vec(),
                is_root: true,
            }],
        }
    }

    fn corpus() -> Corpus {
        Corpus {
            root: ".".into(),
            cases: vec![
                case(
                    "cue/x/ok",
                    0,
                    "{\n    \"a\": 1\n}\n",
                    "a: 1 @test(eq, 1) @test(kind=int)\n",
                ),
                case(
                    "cue/x/bad",
                    1,
                    "",
                    "a: 1 & 2 @test(err, code=eval) @test(permute)\n",
                ),
                case("cue/y/slow", 0, "{}\n", "a: 1\n"),
            ],
        }
    }

    /// An engine that knows only `a: 1`, panics on `cue/x/bad`'s error query and hangs on
    /// `cue/y/slow`.
    struct Toy;

    impl Engine for Toy {
        type Instance = String;
        fn name(&self) -> &str {
            "toy"
        }
        fn load(&self, files: &[SourceFile], _: &[String]) -> Result<String, String> {
            Ok(files[0].text.clone())
        }
        fn export_json(&self, src: &mut String) -> Result<String, String> {
            match src.as_str() {
                s if s.starts_with("a: 1 @") => Ok("{\"a\": 1}".to_owned()),
                s if s.starts_with("a: 1 &") => {
                    Err("a: conflicting values 1 and 2:\n    ./in.cue:1:4\n".into())
                }
                _ => {
                    thread::sleep(Duration::from_secs(5));
                    Ok("{}".into())
                }
            }
        }
        fn check_eq(
            &self,
            _: &mut String,
            path: &[Selector],
            e: &EqExpectation,
        ) -> Result<(), String> {
            if path == [Selector::Field("a".into())] && e.expr == "1" {
                Ok(())
            } else {
                Err("differs".into())
            }
        }
        fn error(&self, _: &mut String, _: &[Selector]) -> Result<Option<ErrInfo>, String> {
            panic!("boom")
        }
        fn descendant_errors(
            &self,
            _: &mut String,
            _: &[Selector],
        ) -> Result<Vec<ErrInfo>, String> {
            Ok(Vec::new())
        }
        fn kind(&self, _: &mut String, _: &[Selector]) -> Result<Kinds, String> {
            Ok(Kinds::FLOAT)
        }
        fn is_closed(&self, _: &mut String, _: &[Selector]) -> Result<bool, String> {
            Ok(false)
        }
        fn allows(
            &self,
            _: &mut String,
            _: &[Selector],
            _: &AllowsSelector,
        ) -> Result<bool, String> {
            Ok(true)
        }
    }

    #[test]
    fn runs_cases_with_panics_and_timeouts() {
        let options = Options {
            timeout: Duration::from_millis(500),
            ..Options::default()
        };
        let report = run(&corpus(), Arc::new(Toy), &options);
        let by_id = |id: &str| report.cases.iter().find(|c| c.id == id).unwrap();
        let ok = by_id("cue/x/ok");
        assert!(ok.pass && ok.value_match && ok.key_order_match && !ok.exact_text);
        let outcomes: Vec<_> = ok.assertions.iter().map(|a| a.outcome.word()).collect();
        assert_eq!(outcomes, ["pass", "fail"]);
        let bad = by_id("cue/x/bad");
        assert!(bad.pass && bad.error_paths_match);
        assert_eq!(
            bad.assertions[0].outcome,
            Outcome::Fail("panic: boom".into())
        );
        assert_eq!(bad.assertions[1].outcome.word(), "skipped");
        let slow = by_id("cue/y/slow");
        assert_eq!(slow.produced, Produced::TimedOut);
        assert!(!slow.pass);

        let f = report.figures();
        assert_eq!((f.cases, f.pass, f.timeouts, f.panics), (3, 2, 1, 0));
        assert_eq!(
            (
                f.inline.total,
                f.inline.pass,
                f.inline.fail,
                f.inline.skipped
            ),
            (4, 1, 2, 1)
        );
        let groups = report.groups();
        assert_eq!(groups.len(), 2);
        assert_eq!(
            (groups[0].group.as_str(), groups[0].cases, groups[0].pass),
            ("cue/x", 2, 2)
        );
        let j = report.to_json();
        assert_eq!(j["figures"]["pass"], 2);
        assert_eq!(j["cases"][0]["assertions"][1]["outcome"], "fail");
    }

    #[test]
    fn null_engine_matches_failing_verdicts_only() {
        let report = run(&corpus(), Arc::new(NullEngine), &Options::default());
        let f = report.figures();
        assert_eq!(
            (f.cases, f.verdict_match, f.pass, f.error_paths),
            (3, 1, 1, 0)
        );
        assert_eq!(f.inline.fail, 3);
        assert!(
            report.cases[0].assertions[0]
                .outcome
                .reason()
                .contains("load failed")
        );
    }
}
