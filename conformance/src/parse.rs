//! The parse and format conformance checks over every CUE source file of the corpus.
//!
//! **Parse.** Each `.cue` file is parsed with [`Document::parse_bytes`] (which reports invalid
//! UTF-8 as CUE's scanner does). A file passes when it yields no
//! error, except the files that the official `cue` rejected with a syntax error (see
//! [`crate::oracle`] for the rule that finds them), which pass only when they yield at least one
//! error.
//!
//! **Format.** Each file that parses cleanly is formatted with
//! [`Document::format`], and the result is parsed and formatted again. The
//! formatter is *idempotent* on the file when the second formatting reproduces the first, and it
//! *round-trips* when the span-free structural dumps ([`Document::dump`]) of
//! the two trees are equal, i.e. formatting changed no
//! meaning. A formatted text that fails to parse counts against both. Whether the formatted text
//! is byte-identical to the source is reported too: the `cue.mod/gen` files of the Timoni modules
//! and the `timoni mod vendor crd` goldens were written by CUE's own formatter, so they must be
//! reproduced exactly, while test inputs are often deliberately laid out by hand.
//!
//! The parser and formatter are young, so every call runs on its own thread with a large stack,
//! a panic is caught and reported as a failure of that file, and a call that does not return
//! within the timeout is abandoned and reported likewise; one bad file never stops the run.

use std::collections::BTreeMap;
use std::panic::AssertUnwindSafe;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use cue_eval::syntax::Document;

use crate::corpus::{Case, CaseKind, Corpus, SourceFile};
use crate::oracle;

/// How to run the checks.
#[derive(Debug, Clone)]
pub struct Options {
    /// The longest a single parse or format pipeline may take before it is abandoned.
    pub timeout: Duration,
    /// Worker threads; 0 means one per available CPU.
    pub threads: usize,
    /// Only files whose `case id/path` contains this text are checked.
    pub filter: Option<String>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            timeout: Duration::from_secs(30),
            threads: 0,
            filter: None,
        }
    }
}

/// A place in a source file, 1-based, with columns counted in bytes as CUE does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorSite {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

/// What parsing one file gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParseOutcome {
    Clean,
    Errors { count: usize, first: ErrorSite },
    Panicked(String),
    TimedOut,
}

/// The first line at which two texts differ.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineDiff {
    pub line: usize,
    pub expected: Option<String>,
    pub actual: Option<String>,
}

/// What the format checks gave on one cleanly parsed file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormatCheck {
    /// `format(x) == x`.
    pub identical: bool,
    /// Where `format(x)` first departs from `x`, when it does.
    pub first_change: Option<LineDiff>,
    /// Errors parsing `format(x)`: their number and the first one.
    pub reparse_errors: usize,
    pub first_reparse_error: Option<ErrorSite>,
    /// `format(parse(format(x))) == format(x)`.
    pub idempotent: bool,
    /// Where the second formatting first departs from the first, when it does.
    pub first_instability: Option<LineDiff>,
    /// `dump(parse(x)) == dump(parse(format(x)))`.
    pub roundtrip: bool,
    /// Where the dump of the reparsed tree first departs from the original's, when it does.
    pub first_tree_change: Option<LineDiff>,
}

/// What the format stage gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FormatOutcome {
    Checked(FormatCheck),
    Panicked(String),
    TimedOut,
}

impl FormatOutcome {
    fn check(&self) -> Option<&FormatCheck> {
        match self {
            FormatOutcome::Checked(c) => Some(c),
            _ => None,
        }
    }
}

/// Which population a file belongs to for the identity figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Population {
    /// `cue.mod/gen` files of the Timoni modules.
    TimoniGen,
    /// The `timoni mod vendor crd` goldens.
    CrdGolden,
    /// Everything else: test inputs, hand-written module files, `cue.mod/pkg`.
    Other,
}

/// The checks' results for one file.
#[derive(Debug, Clone)]
pub struct FileReport {
    pub case_id: String,
    pub group: String,
    pub kind: CaseKind,
    pub path: String,
    pub population: Population,
    /// The oracle's syntax error in this file, when there is one: the rule says the file must
    /// fail to parse.
    pub expected_syntax_error: Option<oracle::SyntaxError>,
    pub parse: ParseOutcome,
    /// `None` when the file did not parse cleanly.
    pub format: Option<FormatOutcome>,
}

impl FileReport {
    pub fn parse_passed(&self) -> bool {
        matches!(
            (&self.expected_syntax_error, &self.parse),
            (None, ParseOutcome::Clean) | (Some(_), ParseOutcome::Errors { .. })
        )
    }

    /// `case id/path`, the name used in listings.
    pub fn name(&self) -> String {
        format!("{}/{}", self.case_id, self.path)
    }

    pub fn format_check(&self) -> Option<&FormatCheck> {
        self.format.as_ref().and_then(FormatOutcome::check)
    }
}

/// One row of the per-directory table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupRow {
    pub group: String,
    pub files: usize,
    pub pass: usize,
    pub fail: usize,
}

/// The figures the ratchet holds, and a few more for the report.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Figures {
    pub files: usize,
    pub parse_pass: usize,
    pub parse_fail: usize,
    /// Files the oracle says are syntax errors, and how many of them yielded an error.
    pub syntax_error_files: usize,
    pub syntax_error_detected: usize,
    pub panics: usize,
    pub timeouts: usize,
    /// Files that parsed cleanly, so went through the format checks.
    pub format_checked: usize,
    pub format_reparsed: usize,
    pub format_idempotent: usize,
    pub format_roundtrip: usize,
    pub gen_files: usize,
    pub gen_identical: usize,
    pub crd_files: usize,
    pub crd_identical: usize,
    pub other_files: usize,
    pub other_identical: usize,
}

impl Figures {
    /// The figures as named numbers, in a fixed order; the names are the ratchet's keys.
    pub fn named(&self) -> Vec<(&'static str, usize)> {
        vec![
            ("files", self.files),
            ("parse_pass", self.parse_pass),
            ("parse_failures", self.parse_fail),
            ("syntax_error_files", self.syntax_error_files),
            ("syntax_error_detected", self.syntax_error_detected),
            ("panics", self.panics),
            ("timeouts", self.timeouts),
            ("format_checked", self.format_checked),
            ("format_reparsed", self.format_reparsed),
            ("format_idempotent", self.format_idempotent),
            ("format_roundtrip", self.format_roundtrip),
            ("gen_files", self.gen_files),
            ("gen_identical", self.gen_identical),
            ("crd_files", self.crd_files),
            ("crd_identical", self.crd_identical),
            ("other_files", self.other_files),
            ("other_identical", self.other_identical),
        ]
    }
}

/// All results of a run.
#[derive(Debug, Clone)]
pub struct Report {
    pub files: Vec<FileReport>,
}

impl Report {
    pub fn figures(&self) -> Figures {
        let mut f = Figures::default();
        for r in &self.files {
            f.files += 1;
            if r.parse_passed() {
                f.parse_pass += 1;
            } else {
                f.parse_fail += 1;
            }
            if r.expected_syntax_error.is_some() {
                f.syntax_error_files += 1;
                if matches!(r.parse, ParseOutcome::Errors { .. }) {
                    f.syntax_error_detected += 1;
                }
            }
            match (&r.parse, &r.format) {
                (ParseOutcome::Panicked(_), _) | (_, Some(FormatOutcome::Panicked(_))) => {
                    f.panics += 1
                }
                (ParseOutcome::TimedOut, _) | (_, Some(FormatOutcome::TimedOut)) => f.timeouts += 1,
                _ => {}
            }
            let (total, identical) = match r.population {
                Population::TimoniGen => (&mut f.gen_files, &mut f.gen_identical),
                Population::CrdGolden => (&mut f.crd_files, &mut f.crd_identical),
                Population::Other => (&mut f.other_files, &mut f.other_identical),
            };
            *total += 1;
            if r.format.is_some() {
                f.format_checked += 1;
            }
            if let Some(c) = r.format_check() {
                if c.identical {
                    *identical += 1;
                }
                if c.reparse_errors == 0 {
                    f.format_reparsed += 1;
                }
                if c.idempotent {
                    f.format_idempotent += 1;
                }
                if c.roundtrip {
                    f.format_roundtrip += 1;
                }
            }
        }
        f
    }

    /// Pass and fail counts per table row, in corpus order.
    pub fn groups(&self) -> Vec<GroupRow> {
        let mut rows: Vec<GroupRow> = Vec::new();
        for r in &self.files {
            let row = match rows.last_mut() {
                Some(row) if row.group == r.group => row,
                _ => {
                    rows.push(GroupRow {
                        group: r.group.clone(),
                        files: 0,
                        pass: 0,
                        fail: 0,
                    });
                    rows.last_mut().expect("just pushed")
                }
            };
            row.files += 1;
            if r.parse_passed() {
                row.pass += 1;
            } else {
                row.fail += 1;
            }
        }
        rows
    }

    /// The files the oracle classifies as syntax errors.
    pub fn syntax_error_files(&self) -> impl Iterator<Item = &FileReport> {
        self.files
            .iter()
            .filter(|r| r.expected_syntax_error.is_some())
    }

    pub fn parse_failures(&self) -> impl Iterator<Item = &FileReport> {
        self.files.iter().filter(|r| !r.parse_passed())
    }
}

/// Runs the parse and format checks over the corpus.
pub fn run(corpus: &Corpus, options: &Options) -> Report {
    struct Job<'a> {
        case: &'a Case,
        source: &'a SourceFile,
        syntax_errors: &'a [oracle::SyntaxError],
    }
    let case_errors: Vec<Vec<oracle::SyntaxError>> = corpus
        .cases
        .iter()
        .map(|c| {
            c.expected
                .as_ref()
                .map(oracle::syntax_errors)
                .unwrap_or_default()
        })
        .collect();
    let mut jobs = Vec::new();
    for (case, errors) in corpus.cases.iter().zip(&case_errors) {
        for source in &case.sources {
            let name = format!("{}/{}", case.id, source.path);
            if options.filter.as_ref().is_some_and(|f| !name.contains(f)) {
                continue;
            }
            jobs.push(Job {
                case,
                source,
                syntax_errors: errors,
            });
        }
    }

    let threads = if options.threads == 0 {
        thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        options.threads
    }
    .min(jobs.len().max(1));
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<FileReport>>> = Mutex::new(vec![None; jobs.len()]);
    thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(job) = jobs.get(i) else { break };
                    let report = check_file(job.case, job.source, job.syntax_errors, options);
                    results.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(report);
                }
            });
        }
    });
    let files = results
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .flatten()
        .collect();
    Report { files }
}

fn population(case: &Case, source: &SourceFile) -> Population {
    match case.kind {
        CaseKind::CrdGolden => Population::CrdGolden,
        CaseKind::TimoniModule if source.is_gen() => Population::TimoniGen,
        _ => Population::Other,
    }
}

fn check_file(
    case: &Case,
    source: &SourceFile,
    syntax_errors: &[oracle::SyntaxError],
    options: &Options,
) -> FileReport {
    let expected_syntax_error = syntax_errors
        .iter()
        .find(|e| e.position.file == source.path)
        .cloned();
    let mut report = FileReport {
        case_id: case.id.clone(),
        group: case.group.clone(),
        kind: case.kind,
        path: source.path.clone(),
        population: population(case, source),
        expected_syntax_error,
        parse: ParseOutcome::Clean,
        format: None,
    };
    // Invalid UTF-8 goes through `parse_bytes`, which reports it as CUE's scanner does; spans
    // then refer to the text with U+FFFD replacements.
    let bytes = source.bytes.clone();
    let parsed = guarded(options.timeout, move || {
        let (doc, errors) = Document::parse_bytes("", &bytes);
        let first = errors
            .first()
            .map(|e| site(doc.text(), e.span.start as usize, &e.message));
        (doc, errors.len(), first)
    });
    let doc = match parsed {
        Guarded::Done((doc, 0, _)) => doc,
        Guarded::Done((_, count, first)) => {
            report.parse = ParseOutcome::Errors {
                count,
                first: first.expect("a first error when there are errors"),
            };
            return report;
        }
        Guarded::Panicked(msg) => {
            report.parse = ParseOutcome::Panicked(msg);
            return report;
        }
        Guarded::TimedOut => {
            report.parse = ParseOutcome::TimedOut;
            return report;
        }
    };
    report.format = Some(match guarded(options.timeout, move || format_check(&doc)) {
        Guarded::Done(check) => FormatOutcome::Checked(check),
        Guarded::Panicked(msg) => FormatOutcome::Panicked(msg),
        Guarded::TimedOut => FormatOutcome::TimedOut,
    });
    report
}

/// The format checks on one cleanly parsed file.
fn format_check(doc: &Document) -> FormatCheck {
    let src = doc.text();
    let formatted = doc.format();
    let identical = formatted == src;
    let first_change = (!identical).then(|| first_line_diff(src, &formatted));
    let (doc2, errors) = Document::parse_bytes("", formatted.as_bytes());
    if !errors.is_empty() {
        return FormatCheck {
            identical,
            first_change,
            reparse_errors: errors.len(),
            first_reparse_error: Some(site(
                &formatted,
                errors[0].span.start as usize,
                &errors[0].message,
            )),
            idempotent: false,
            first_instability: None,
            roundtrip: false,
            first_tree_change: None,
        };
    }
    let formatted2 = doc2.format();
    let idempotent = formatted2 == formatted;
    let (dump1, dump2) = (doc.dump(), doc2.dump());
    let roundtrip = dump1 == dump2;
    FormatCheck {
        identical,
        first_change,
        reparse_errors: 0,
        first_reparse_error: None,
        idempotent,
        first_instability: (!idempotent).then(|| first_line_diff(&formatted, &formatted2)),
        roundtrip,
        first_tree_change: (!roundtrip).then(|| first_line_diff(&dump1, &dump2)),
    }
}

/// The line and column of a byte offset, with the message.
pub fn site(src: &str, offset: usize, message: &str) -> ErrorSite {
    let offset = offset.min(src.len());
    let before = &src.as_bytes()[..offset];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let line_start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    ErrorSite {
        line,
        column: offset - line_start + 1,
        message: message.to_owned(),
    }
}

/// The first line at which `actual` departs from `expected`.
pub fn first_line_diff(expected: &str, actual: &str) -> LineDiff {
    let mut e = expected.split_inclusive('\n');
    let mut a = actual.split_inclusive('\n');
    let mut line = 1;
    loop {
        match (e.next(), a.next()) {
            (Some(x), Some(y)) if x == y => line += 1,
            (x, y) => {
                return LineDiff {
                    line,
                    expected: x.map(str::to_owned),
                    actual: y.map(str::to_owned),
                };
            }
        }
    }
}

/// The result of a guarded call.
enum Guarded<T> {
    Done(T),
    Panicked(String),
    TimedOut,
}

/// Stack size of the threads that run the parser and formatter: deep nesting in a test input
/// must not overflow the stack, which would abort the whole run rather than fail one file.
const STACK_SIZE: usize = 64 << 20;

/// Runs `f` on its own thread, catching a panic and giving up after `timeout`. A thread that
/// times out is left to finish (or spin) on its own; the process exits without waiting for it.
fn guarded<T: Send + 'static>(
    timeout: Duration,
    f: impl FnOnce() -> T + Send + 'static,
) -> Guarded<T> {
    let (tx, rx) = mpsc::channel();
    let spawned = thread::Builder::new()
        .name("conformance-check".to_owned())
        .stack_size(STACK_SIZE)
        .spawn(move || {
            let _ = tx.send(std::panic::catch_unwind(AssertUnwindSafe(f)));
        });
    if let Err(e) = spawned {
        return Guarded::Panicked(format!("could not start a thread: {e}"));
    }
    match rx.recv_timeout(timeout) {
        Ok(Ok(value)) => Guarded::Done(value),
        Ok(Err(payload)) => Guarded::Panicked(panic_message(payload.as_ref())),
        Err(mpsc::RecvTimeoutError::Timeout) => Guarded::TimedOut,
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            Guarded::Panicked("the thread ended without a result".to_owned())
        }
    }
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

/// Groups failing files by the start of their first error message with the quoted parts and
/// numbers removed, so that similar failures fall together. Returns (pattern, files) pairs,
/// largest first.
pub fn failure_patterns(report: &Report) -> Vec<(String, Vec<&FileReport>)> {
    let mut map: BTreeMap<String, Vec<&FileReport>> = BTreeMap::new();
    for r in report.parse_failures() {
        let key = match (&r.parse, &r.expected_syntax_error) {
            (ParseOutcome::Clean, Some(_)) => "accepted a file that cue rejects".to_owned(),
            (ParseOutcome::Errors { first, .. }, _) => normalise_message(&first.message),
            (ParseOutcome::Panicked(m), _) => format!("panic: {}", normalise_message(m)),
            (ParseOutcome::TimedOut, _) => "timed out".to_owned(),
            (ParseOutcome::Clean, None) => unreachable!("a clean parse passes"),
        };
        map.entry(key).or_default().push(r);
    }
    let mut out: Vec<_> = map.into_iter().collect();
    out.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then_with(|| a.0.cmp(&b.0)));
    out
}

/// Replaces quoted text and numbers in a message by placeholders.
fn normalise_message(message: &str) -> String {
    let mut out = String::new();
    let mut chars = message.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' | '"' | '`' => {
                out.push(c);
                out.push('…');
                for d in chars.by_ref() {
                    if d == c {
                        break;
                    }
                }
                out.push(c);
            }
            '0'..='9' => {
                out.push('N');
                while chars.peek().is_some_and(|d| d.is_ascii_digit()) {
                    chars.next();
                }
            }
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::{Expected, Run};

    fn source(path: &str, text: &str) -> SourceFile {
        SourceFile {
            path: path.to_owned(),
            bytes: text.as_bytes().to_vec(),
            is_root: !path.contains('/'),
        }
    }

    /// A one-case corpus whose oracle reports a syntax error in `bad.cue` only.
    fn corpus(sources: Vec<SourceFile>) -> Corpus {
        let stderr = "expected '}', found 'EOF':\n    ./bad.cue:2:1\n";
        let run = Run {
            exit: Some(1),
            stderr: stderr.to_owned(),
            ..Run::default()
        };
        Corpus {
            root: ".".into(),
            cases: vec![Case {
                id: "cue/x/y".to_owned(),
                kind: CaseKind::Language,
                dir: ".".into(),
                group: "cue/x".to_owned(),
                expected: Some(Expected {
                    runs: vec![("eval".to_owned(), run)],
                    ..Expected::default()
                }),
                archive: None,
                sources,
            }],
        }
    }

    #[test]
    fn syntax_error_files_must_fail_and_others_must_parse() {
        let c = corpus(vec![
            source("bad.cue", "a: {\n"),
            source("good.cue", "b: 1\n"),
            source("sub/broken.cue", "c: [\n"),
        ]);
        let report = run(&c, &Options::default());
        let passed: Vec<_> = report
            .files
            .iter()
            .map(|r| (r.path.as_str(), r.parse_passed()))
            .collect();
        assert_eq!(
            passed,
            [
                ("bad.cue", true),
                ("good.cue", true),
                ("sub/broken.cue", false)
            ]
        );
        let f = report.figures();
        assert_eq!((f.files, f.parse_pass, f.parse_fail), (3, 2, 1));
        assert_eq!((f.syntax_error_files, f.syntax_error_detected), (1, 1));
        // Only the clean file goes through the format checks.
        assert_eq!(f.format_checked, 1);
        assert_eq!(report.groups()[0].files, 3);
        assert_eq!(failure_patterns(&report).len(), 1);
    }

    #[test]
    fn accepting_a_syntax_error_fails() {
        let c = corpus(vec![source("bad.cue", "a: 1\n")]);
        let report = run(&c, &Options::default());
        assert!(!report.files[0].parse_passed());
        assert_eq!(
            failure_patterns(&report)[0].0,
            "accepted a file that cue rejects"
        );
    }

    #[test]
    fn filters_select_files() {
        let c = corpus(vec![
            source("bad.cue", "a: {\n"),
            source("good.cue", "b: 1\n"),
        ]);
        let options = Options {
            filter: Some("good".to_owned()),
            ..Options::default()
        };
        let report = run(&c, &options);
        assert_eq!(report.files.len(), 1);
        assert_eq!(report.files[0].path, "good.cue");
    }

    #[test]
    fn sites_are_one_based() {
        let src = "a: 1\nbc: 2\n";
        assert_eq!(site(src, 0, "m").line, 1);
        assert_eq!(site(src, 0, "m").column, 1);
        let s = site(src, 7, "m");
        assert_eq!((s.line, s.column), (2, 3));
        let s = site(src, 100, "m");
        assert_eq!((s.line, s.column), (3, 1));
    }

    #[test]
    fn line_diffs() {
        let d = first_line_diff("a\nb\nc\n", "a\nx\nc\n");
        assert_eq!(d.line, 2);
        assert_eq!(d.expected.as_deref(), Some("b\n"));
        assert_eq!(d.actual.as_deref(), Some("x\n"));
        let d = first_line_diff("a\n", "a\nb\n");
        assert_eq!(
            (d.line, d.expected, d.actual.as_deref()),
            (2, None, Some("b\n"))
        );
        // A missing final newline is a difference on the last line.
        assert_eq!(first_line_diff("a\n", "a").line, 1);
    }

    #[test]
    fn normalised_messages() {
        assert_eq!(
            normalise_message("expected ')', found 'IDENT' x at 12"),
            "expected '…', found '…' x at N"
        );
    }

    #[test]
    fn guarded_calls() {
        assert!(matches!(
            guarded(Duration::from_secs(5), || 1 + 1),
            Guarded::Done(2)
        ));
        match guarded(Duration::from_secs(5), || -> u8 { panic!("boom {}", 1) }) {
            Guarded::Panicked(m) => assert_eq!(m, "boom 1"),
            _ => panic!("expected a caught panic"),
        }
        assert!(matches!(
            guarded(Duration::from_millis(10), || thread::sleep(
                Duration::from_secs(2)
            )),
            Guarded::TimedOut
        ));
    }
}
