//! The wild check: real Timoni modules by other authors (`<corpus>/wild/`), each exported as the
//! official `cue` did in its directory, compared with what `cue` v0.17.1 printed.
//!
//! A case names a module tree, an optional patch and the `cue` arguments
//! (`export -e timoni.apply --out json -t k=v ... ./`). The tree is copied to a scratch
//! directory; a patch appends `language: version: "v0.17.1"` to the copy's
//! `cue.mod/module.cue` (the module is the copy's root, or `path_in_repository` below it when
//! `cue.mod` is there). The export then runs through [`export_json`], the `cue_eval` facade's
//! `Loader` as `timoni cue export` uses it, with the copy as working directory.
//!
//! A case passes when the exit status agrees (zero or not) and, for a zero exit, stdout is byte
//! for byte `cue`'s. For the cases where `cue` fails, the first error is also compared
//! ([`first_error`]): the same CUE path (or, for an error without one, the same line) and the
//! same first position, as our CLI would print it.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use cue_eval::encode::to_json_indent;
use serde_json::{Value, json};

use crate::export::header_path;
use crate::json;

/// The line a patch appends to `cue.mod/module.cue`.
pub const PATCH_LINE: &str = "language: version: \"v0.17.1\"";

/// One case of `cases.json`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Case {
    pub name: String,
    /// `trees/<tree>`, relative to the wild directory.
    pub tree: String,
    pub path_in_repository: String,
    /// Whether the language version line is appended to the module file.
    pub patch: bool,
    /// The `cue` arguments.
    pub args: Vec<String>,
    /// `cue`'s exit status.
    pub exit: i64,
    pub stdout: String,
    /// The first 500 bytes of `cue`'s stderr.
    pub stderr_head: String,
}

/// Reads `<dir>/cases.json`.
pub fn load_cases(dir: &Path) -> Result<Vec<Case>, String> {
    let path = dir.join("cases.json");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let root: Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let cases = root
        .get("cases")
        .and_then(Value::as_array)
        .ok_or_else(|| format!("{}: no \"cases\" list", path.display()))?;
    cases
        .iter()
        .map(|c| {
            let s = |k: &str| c.get(k).and_then(Value::as_str).unwrap_or_default();
            let name = s("name").to_owned();
            let args = c
                .get("args")
                .and_then(Value::as_array)
                .ok_or_else(|| format!("case {name:?}: no args"))?
                .iter()
                .map(|a| a.as_str().unwrap_or_default().to_owned())
                .collect();
            Ok(Case {
                tree: s("tree").to_owned(),
                path_in_repository: s("path_in_repository").to_owned(),
                patch: c.get("patch").is_some_and(|p| !p.is_null()),
                args,
                exit: c
                    .get("exit")
                    .and_then(Value::as_i64)
                    .ok_or_else(|| format!("case {name:?}: no exit status"))?,
                stdout: s("stdout").to_owned(),
                stderr_head: s("stderr_head").to_owned(),
                name,
            })
        })
        .collect()
}

/// The `cue export` arguments split into what the loader needs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Command {
    pub expressions: Vec<String>,
    pub tags: Vec<String>,
    /// Package directories and files.
    pub args: Vec<String>,
}

/// Parses `export -e EXPR --out json -t k=v ... ./`; other commands, flags and formats are
/// refused, since the runner could not reproduce them.
pub fn parse_args(args: &[String]) -> Result<Command, String> {
    let mut out = Command::default();
    let mut words = args.iter().map(String::as_str);
    if words.next() != Some("export") {
        return Err(format!("not an export command: {}", args.join(" ")));
    }
    while let Some(w) = words.next() {
        let mut value = |flag: &str| {
            words
                .next()
                .map(str::to_owned)
                .ok_or_else(|| format!("{flag} needs a value"))
        };
        match w {
            "-e" | "--expression" => out.expressions.push(value(w)?),
            "-t" | "--inject" => out.tags.push(value(w)?),
            "--out" => {
                let format = value(w)?;
                if format != "json" {
                    return Err(format!("--out {format} is not supported"));
                }
            }
            w if w.starts_with('-') => return Err(format!("unsupported flag {w}")),
            w => out.args.push(w.to_owned()),
        }
    }
    Ok(out)
}

/// What the export printed, as `timoni cue export` would.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Run {
    /// Exit 0 with this stdout.
    Ok(String),
    /// Exit 1 with this stderr.
    Failed(String),
    /// The runner could not run the case (copy, patch or arguments).
    Broken(String),
    Panicked,
    TimedOut,
}

/// Exports `cmd` in `dir` exactly as `timoni cue export` does there: stdout on success, the
/// error list with positions relative to `dir` otherwise.
pub fn export(dir: &Path, cmd: &Command) -> Run {
    let loader = cue_eval::Context::new().loader(dir).args(cmd.args.clone());
    let loader = cmd.tags.iter().fold(loader, |l, t| l.tag(t.clone()));
    match export_json(loader, &cmd.expressions) {
        Ok(out) => Run::Ok(out),
        Err(e) => Run::Failed(format!("{}\n", e.relative_to(dir))),
    }
}

/// `cue export --out json [-e EXPR]...` of what `loader` loads, through the facade as
/// `timoni cue export` does: one JSON document per selection (the whole package without one).
pub fn export_json(loader: cue_eval::Loader, expressions: &[String]) -> cue_eval::Result<String> {
    let root = loader.load()?;
    let selections = match expressions {
        [] => vec![String::new()],
        e => e.to_vec(),
    };
    let mut out = String::new();
    for s in &selections {
        out.push_str(&to_json_indent(&root.lookup(s)?.export()?, false));
    }
    Ok(out)
}

/// The first error of an error list, as far as it is compared: the CUE path of its header
/// (`a.b.c` in `a.b.c: conflicting values ...`), or the whole header for an error without a
/// path (`no tag for "mv"`), and its first position (`./values.cue:7:2`), if any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FirstError {
    pub head: String,
    pub position: Option<String>,
}

/// The [`FirstError`] of `stderr`, `None` when it is empty.
pub fn first_error(stderr: &str) -> Option<FirstError> {
    let mut lines = stderr.lines();
    let header = lines.next().filter(|l| !l.is_empty())?;
    let head = header_path(header).unwrap_or(header).to_owned();
    // Position lines are indented; the next header (or the end of stderr_head's 500 bytes)
    // ends the first error.
    let position = lines
        .take_while(|l| l.starts_with(char::is_whitespace))
        .map(str::trim)
        .find(|l| is_position(l))
        .map(str::to_owned);
    Some(FirstError { head, position })
}

/// `file:line:col`.
fn is_position(s: &str) -> bool {
    let mut parts = s.rsplitn(3, ':');
    let col = parts.next().unwrap_or_default();
    let line = parts.next().unwrap_or_default();
    let file = parts.next().unwrap_or_default();
    !file.is_empty()
        && [line, col]
            .iter()
            .all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// One case's result.
#[derive(Debug, Clone)]
pub struct CaseResult {
    pub name: String,
    pub pass: bool,
    /// Whether the exit status agrees (zero or not).
    pub verdict_match: bool,
    /// Why the case fails (empty when it passes).
    pub reason: String,
    /// Whether `cue` failed on it.
    pub cue_failed: bool,
    /// For a case where `cue` fails: whether our first error has its path and position.
    pub error_agree: Option<bool>,
    /// Our first stderr line, when we failed.
    pub our_first_line: Option<String>,
    /// What our export printed.
    pub run: Run,
    pub time: Duration,
}

/// Figures of a run, for the ratchet's `"wild"` section.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Figures {
    pub files: usize,
    pub pass: usize,
    /// Cases whose exit status (zero or not) agrees.
    pub verdict_match: usize,
    /// Cases where `cue` fails.
    pub cue_fail: usize,
    /// Of those, cases where our first error names the same path and position.
    pub error_agree: usize,
}

impl Figures {
    pub fn named(&self) -> Vec<(&'static str, usize)> {
        vec![
            ("files", self.files),
            ("pass", self.pass),
            ("verdict_match", self.verdict_match),
            ("cue_fail", self.cue_fail),
            ("error_agree", self.error_agree),
        ]
    }
}

/// The whole run.
#[derive(Debug, Clone, Default)]
pub struct Report {
    pub cases: Vec<CaseResult>,
}

impl Report {
    pub fn figures(&self) -> Figures {
        let mut f = Figures {
            files: self.cases.len(),
            ..Figures::default()
        };
        for c in &self.cases {
            f.pass += usize::from(c.pass);
            f.verdict_match += usize::from(c.verdict_match);
            f.cue_fail += usize::from(c.cue_failed);
            f.error_agree += usize::from(c.error_agree == Some(true));
        }
        f
    }

    /// The JSON summary written by `conformance wild --json PATH`.
    pub fn to_json(&self) -> Value {
        let figures: serde_json::Map<String, Value> = self
            .figures()
            .named()
            .into_iter()
            .map(|(k, v)| (k.to_owned(), json!(v)))
            .collect();
        let cases: Vec<Value> = self
            .cases
            .iter()
            .map(|c| {
                json!({
                    "id": c.name,
                    "pass": c.pass,
                    "verdict_match": c.verdict_match,
                    "reason": c.reason,
                    "cue_failed": c.cue_failed,
                    "error_agree": c.error_agree,
                    "our_first_line": c.our_first_line,
                    "seconds": (c.time.as_secs_f64() * 1000.0).round() / 1000.0,
                })
            })
            .collect();
        json!({ "figures": figures, "cases": cases })
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
            timeout: Duration::from_secs(120),
            filter: None,
        }
    }
}

/// Runs every case of `<corpus>/wild`, in order, each on its own thread with a time limit.
pub fn run(corpus_root: &Path, options: &Options) -> Result<Report, String> {
    let dir = corpus_root.join("wild");
    let cases = load_cases(&dir)?;
    let mut report = Report::default();
    for case in cases {
        if let Some(f) = &options.filter
            && !case.name.contains(f.as_str())
        {
            continue;
        }
        report.cases.push(check(&dir, &case, options.timeout));
    }
    Ok(report)
}

/// Runs one case and compares.
fn check(wild: &Path, case: &Case, timeout: Duration) -> CaseResult {
    let started = Instant::now();
    let run = run_case(wild, case, timeout);
    let time = started.elapsed();
    let cue_failed = case.exit != 0;
    let (pass, reason) = match (&run, cue_failed) {
        (Run::Ok(out), false) if *out == case.stdout => (true, String::new()),
        (Run::Ok(out), false) => (false, stdout_difference(&case.stdout, out)),
        (Run::Failed(_), true) => (true, String::new()),
        (Run::Ok(_), true) => (false, format!("exit: cue {}, ours 0", case.exit)),
        (Run::Failed(err), false) => (
            false,
            format!("exit: cue 0, ours 1: {}", err.lines().next().unwrap_or("")),
        ),
        (Run::Broken(why), _) => (false, format!("runner: {why}")),
        (Run::Panicked, _) => (false, "panic".to_owned()),
        (Run::TimedOut, _) => (false, format!("timed out after {timeout:?}")),
    };
    let ours = match &run {
        Run::Failed(err) => Some(err.as_str()),
        _ => None,
    };
    let verdict_match = match &run {
        Run::Ok(_) => !cue_failed,
        Run::Failed(_) => cue_failed,
        _ => false,
    };
    let error_agree = cue_failed.then(|| {
        let want = first_error(&case.stderr_head);
        want.is_some() && want == ours.and_then(first_error)
    });
    CaseResult {
        name: case.name.clone(),
        pass,
        verdict_match,
        reason,
        cue_failed,
        error_agree,
        our_first_line: ours.and_then(|e| e.lines().next()).map(str::to_owned),
        run,
        time,
    }
}

/// Copies, patches and exports one case on a thread with a large stack and a time limit.
fn run_case(wild: &Path, case: &Case, timeout: Duration) -> Run {
    let cmd = match parse_args(&case.args) {
        Ok(c) => c,
        Err(e) => return Run::Broken(e),
    };
    let scratch = match tempfile::Builder::new().prefix("wild-").tempdir() {
        Ok(t) => t,
        Err(e) => return Run::Broken(format!("scratch directory: {e}")),
    };
    let copy = scratch.path().join("tree");
    if let Err(e) = copy_tree(&wild.join(&case.tree), &copy) {
        return Run::Broken(format!("copy {}: {e}", case.tree));
    }
    let module = module_dir(&copy, &case.path_in_repository);
    if case.patch
        && let Err(e) = append_line(&module.join("cue.mod/module.cue"), PATCH_LINE)
    {
        return Run::Broken(format!("patch: {e}"));
    }
    let (tx, rx) = mpsc::channel();
    let spawned = std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || {
            let run = std::panic::catch_unwind(|| export(&module, &cmd)).unwrap_or(Run::Panicked);
            let _ = tx.send(run);
        });
    if let Err(e) = spawned {
        return Run::Broken(format!("thread: {e}"));
    }
    // On a time-out the thread is left running and the scratch copy is removed under it;
    // whatever it reports then is not read.
    rx.recv_timeout(timeout).unwrap_or(Run::TimedOut)
}

/// The module directory of a copied tree: `path_in_repository` below it when `cue.mod` is
/// there, else the copy itself (trees are most often the module directory alone).
pub fn module_dir(copy: &Path, path_in_repository: &str) -> PathBuf {
    let below = copy.join(path_in_repository);
    if !matches!(path_in_repository, "" | ".") && below.join("cue.mod").is_dir() {
        below
    } else {
        copy.to_path_buf()
    }
}

/// Appends `line` to a file, on a line of its own.
fn append_line(path: &Path, line: &str) -> std::io::Result<()> {
    let mut text = std::fs::read_to_string(path)?;
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(line);
    text.push('\n');
    std::fs::write(path, text)
}

/// Copies a directory tree (symlinks followed; the data has none).
fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

/// Why a successful export's stdout is not `cue`'s: another value, or the same value with
/// another key order or layout.
fn stdout_difference(want: &str, got: &str) -> String {
    match (json::parse(want), json::parse(got)) {
        (Ok(w), Ok(g)) => match json::first_difference(&w, &g) {
            Some(d) => format!("stdout: value differs: {d}"),
            None if !json::same_key_order(&w, &g) => "stdout: key order differs".to_owned(),
            None => "stdout: same value, other text".to_owned(),
        },
        (Ok(_), Err(e)) => format!("stdout: not JSON: {e}"),
        (Err(_), _) => "stdout differs".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn arguments_parse() {
        let c = parse_args(&words(
            "export -e timoni.apply --out json -t name=test -t namespace=default ./ -t debug",
        ))
        .unwrap();
        assert_eq!(c.expressions, ["timoni.apply"]);
        assert_eq!(c.tags, ["name=test", "namespace=default", "debug"]);
        assert_eq!(c.args, ["./"]);
        assert!(parse_args(&words("eval ./")).is_err());
        assert!(parse_args(&words("export --out yaml ./")).is_err());
        assert!(parse_args(&words("export -e")).is_err());
    }

    #[test]
    fn first_errors() {
        let e = first_error(
            "timoni.instance.config.image: field not allowed:\n    ./debug_values.cue:8:2\nx: y:\n    ./a.cue:1:1\n",
        )
        .unwrap();
        assert_eq!(e.head, "timoni.instance.config.image");
        assert_eq!(e.position.as_deref(), Some("./debug_values.cue:8:2"));
        let e = first_error("no tag for \"mv\"\n").unwrap();
        assert_eq!(e.head, "no tag for \"mv\"");
        assert_eq!(e.position, None);
        // The next error's positions are not the first one's.
        let e = first_error("a: incomplete value\nb: x:\n    ./a.cue:1:1\n").unwrap();
        assert_eq!(e.position, None);
        assert_eq!(first_error(""), None);
    }

    #[test]
    fn module_dirs() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tmp.path().join("deploy/cue.mod")).unwrap();
        assert_eq!(module_dir(tmp.path(), "deploy"), tmp.path().join("deploy"));
        assert_eq!(module_dir(tmp.path(), "timoni"), tmp.path());
        assert_eq!(module_dir(tmp.path(), "."), tmp.path());
    }
}
