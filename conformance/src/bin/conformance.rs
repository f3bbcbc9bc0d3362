//! `conformance`: runs a conformance check over the shared corpus and prints its report.
//!
//! `cargo run -p conformance --release -- parse [--verbose]` parses every CUE file of the corpus,
//! checks the formatter on the ones that parse, and prints a per-directory table, the totals, the
//! files the oracle says are syntax errors, the format figures and the ratchet's verdict. Each
//! check is a subcommand, so `eval` and `export` can be added beside `parse`.
//!
//! `cargo run -p conformance --release -- export [--json PATH] [--verbose]` runs every CUE case
//! through the selected engine (`conformance::engine::selected`, the one line to change when an
//! evaluator is wired in) and prints the export verdicts and the inline `@test` assertion
//! figures per directory, the acceptance percentages and the ratchet's verdict.
//!
//! `cargo run -p conformance --release -- timoni [--verbose]` loads every Timoni module of the
//! corpus with `cue_eval::Loader`, exports `timoni.apply` as `expected.json` and
//! `expected-build.json` say (the latter with the `timoni.schema.cue` overlay), and prints a row
//! per module, the figures and the ratchet's verdict.
//!
//! `cargo run -p conformance --release -- wild [--json PATH] [--verbose]` runs every case of the
//! wild modules (`<corpus>/wild/cases.json`) through the code of `timoni cue export` in a patched
//! copy of its tree, and prints PASS or FAIL per case with the reason, whether our first error
//! agrees with `cue`'s where `cue` fails, the figures and the ratchet's verdict.
//!
//! `cargo run -p conformance --release -- diff --oracle PATH [--seed N] [--count N] [--out DIR]`
//! generates small CUE programs ([`conformance::diff`]), exports each with our evaluator and with
//! the `cue` binary at PATH, and prints the programs, agreements and findings per family and the
//! distinct findings; `--out` writes one program per distinct finding. Without an oracle it
//! prints a SKIP line and succeeds.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::{Args, Parser, Subcommand};
use conformance::corpus::{self, Corpus};
use conformance::parse::{self, FormatOutcome, LineDiff, ParseOutcome, Population};
use conformance::ratchet::{self, Ratchet};
use conformance::{diff, engine, export, timoni, wild};

#[derive(Parser)]
#[command(about = "Conformance runners over the shared CUE/Timoni corpus")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Parse every .cue file and check the formatter on those that parse.
    Parse(ParseArgs),
    /// Export every CUE case with the selected engine and check its inline @test assertions.
    Export(ExportArgs),
    /// Load and export every Timoni module (plain and with the schema overlay) and compare.
    Timoni(TimoniArgs),
    /// Export every wild module case as `timoni cue export` does and compare with `cue`.
    Wild(WildArgs),
    /// Generate CUE programs and compare our export with an oracle `cue` binary's.
    Diff(DiffArgs),
    /// Export `in.cue` of a directory with our evaluator (the `diff` check runs each program
    /// in a child process, so a hang is killed).
    #[command(hide = true)]
    DiffOurs { dir: PathBuf },
}

/// Options every check shares.
#[derive(Args)]
struct Common {
    /// The corpus directory (default: $CONFORMANCE_DIR, else ../shared/conformance beside the
    /// workspace).
    #[arg(long)]
    corpus: Option<PathBuf>,
    /// Only check files whose `case/path` name contains this text.
    #[arg(long)]
    filter: Option<String>,
    /// List failing files with their first error.
    #[arg(long, short)]
    verbose: bool,
    /// Worker threads (0: one per CPU).
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// Seconds after which one file's parse or format is abandoned.
    #[arg(long, default_value_t = 30)]
    timeout: u64,
    /// Exit with failure when a figure falls below its ratchet floor.
    #[arg(long)]
    ratchet: bool,
}

#[derive(Args)]
struct ParseArgs {
    #[command(flatten)]
    common: Common,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // Panics of the parser or formatter are caught and reported per file; the default hook would
    // also print each one with a backtrace hint in the middle of the report.
    std::panic::set_hook(Box::new(|_| {}));
    match cli.command {
        Command::Parse(args) => run_parse(&args),
        Command::Export(args) => run_export(&args),
        Command::Timoni(args) => run_timoni(&args),
        Command::Wild(args) => run_wild(&args),
        Command::Diff(args) => run_diff(&args),
        Command::DiffOurs { dir } => run_diff_ours(&dir),
    }
}

/// The corpus directory: `--corpus`, else the one found beside the workspace.
fn corpus_root(common: &Common) -> Result<PathBuf, String> {
    match &common.corpus {
        Some(dir) if corpus::looks_like_corpus(dir) => Ok(dir.clone()),
        Some(dir) => Err(format!("{} is not a conformance corpus", dir.display())),
        None => Ok(corpus::locate()?.root),
    }
}

fn load_corpus(common: &Common) -> Result<Corpus, String> {
    Corpus::load(&corpus_root(common)?).map_err(|e| e.to_string())
}

/// Prints the ratchet's verdict on the figures of `section`, and says whether every floor
/// holds. A filtered run is not checked (and so does not hold).
fn report_ratchet(section: &str, named: &[(&str, usize)], filtered: bool) -> bool {
    if filtered {
        println!("ratchet: not checked (--filter is set)");
        return false;
    }
    match Ratchet::load(&ratchet::default_path()).map(|r| r.check(section, named)) {
        Err(e) => {
            println!("ratchet: cannot read: {e}");
            false
        }
        Ok(outcome) => {
            if let Some(reason) = &outcome.skipped {
                println!("ratchet: not checked: {reason}");
            }
            for f in &outcome.failures {
                println!("ratchet FAIL: {f}");
            }
            for h in &outcome.hints {
                println!("ratchet hint: {h}");
            }
            if outcome.passed() && outcome.skipped.is_none() {
                println!("ratchet: all floors hold");
            }
            outcome.passed()
        }
    }
}

fn run_parse(args: &ParseArgs) -> ExitCode {
    let common = &args.common;
    let corpus = match load_corpus(common) {
        Ok(c) => c,
        // A corpus that is simply not there (CI without shared/) is a skip, as in the tests; a
        // corpus named with --corpus that cannot be read is a usage error.
        Err(e) if common.corpus.is_none() => {
            println!("SKIPPED: {e}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let options = parse::Options {
        timeout: Duration::from_secs(common.timeout),
        threads: common.threads,
        filter: common.filter.clone(),
    };
    let started = Instant::now();
    let report = parse::run(&corpus, &options);
    let elapsed = started.elapsed();
    let figures = report.figures();

    println!(
        "corpus: {} ({} cases, {} .cue files; {} checked in {:.1?})",
        corpus.root.display(),
        corpus.cases.len(),
        corpus.source_count(),
        figures.files,
        elapsed
    );
    println!();
    print_table(&report);

    println!();
    println!(
        "syntax-error files (oracle rule, see conformance::oracle): {}",
        figures.syntax_error_files
    );
    for r in report.syntax_error_files() {
        let e = r.expected_syntax_error.as_ref().expect("filtered on it");
        let got = match &r.parse {
            ParseOutcome::Errors { count, .. } => format!("ours: {count} error(s)"),
            other => format!("ours: {}", outcome_word(other)),
        };
        println!(
            "  {}:{}:{}  [{}] {}  ({got})",
            r.name(),
            e.position.line,
            e.position.column,
            e.run,
            e.message
        );
    }

    println!();
    println!(
        "format (on the {} files that parse cleanly):",
        figures.format_checked
    );
    println!(
        "  formatted text parses:   {:>5} / {}",
        figures.format_reparsed, figures.format_checked
    );
    println!(
        "  idempotent:              {:>5} / {}",
        figures.format_idempotent, figures.format_checked
    );
    println!(
        "  round trip (dump equal): {:>5} / {}",
        figures.format_roundtrip, figures.format_checked
    );
    println!("  identical to source:");
    println!(
        "    timoni cue.mod/gen:    {:>5} / {}",
        figures.gen_identical, figures.gen_files
    );
    println!(
        "    timoni-crd goldens:    {:>5} / {}",
        figures.crd_identical, figures.crd_files
    );
    println!(
        "    all other files:       {:>5} / {}",
        figures.other_identical, figures.other_files
    );
    if figures.panics + figures.timeouts > 0 {
        println!(
            "  panics: {}, timeouts: {}",
            figures.panics, figures.timeouts
        );
    }

    let patterns = parse::failure_patterns(&report);
    if !patterns.is_empty() {
        println!();
        println!("parse failures by first error:");
        for (pattern, files) in &patterns {
            println!("  {:>4}  {pattern}", files.len());
        }
    }

    if common.verbose {
        print_verbose(&report);
    }

    println!();
    let held = report_ratchet("parse", &figures.named(), common.filter.is_some());
    if common.ratchet && !held {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

fn print_table(report: &parse::Report) {
    let rows = report.groups();
    let width = rows
        .iter()
        .map(|r| r.group.len())
        .max()
        .unwrap_or(0)
        .max("directory".len())
        .max("total".len());
    println!(
        "{:<width$}  {:>5}  {:>5}  {:>5}",
        "directory", "files", "pass", "fail"
    );
    println!("{}", "-".repeat(width + 21));
    for r in &rows {
        println!(
            "{:<width$}  {:>5}  {:>5}  {:>5}",
            r.group, r.files, r.pass, r.fail
        );
    }
    println!("{}", "-".repeat(width + 21));
    let f = report.figures();
    println!(
        "{:<width$}  {:>5}  {:>5}  {:>5}",
        "total", f.files, f.parse_pass, f.parse_fail
    );
}

fn outcome_word(outcome: &ParseOutcome) -> String {
    match outcome {
        ParseOutcome::Clean => "no error".to_owned(),
        ParseOutcome::Errors { count, .. } => format!("{count} error(s)"),
        ParseOutcome::Panicked(m) => format!("panic: {m}"),
        ParseOutcome::TimedOut => "timed out".to_owned(),
    }
}

fn print_verbose(report: &parse::Report) {
    println!();
    println!("parse failures:");
    for r in report.parse_failures() {
        match (&r.parse, &r.expected_syntax_error) {
            (ParseOutcome::Errors { count, first }, _) => println!(
                "  {}:{}:{}: {} ({count} error(s))",
                r.name(),
                first.line,
                first.column,
                first.message
            ),
            (ParseOutcome::Clean, Some(e)) => println!(
                "  {}: parsed cleanly, but cue reports {}:{}: {}",
                r.name(),
                e.position.line,
                e.position.column,
                e.message
            ),
            (other, _) => println!("  {}: {}", r.name(), outcome_word(other)),
        }
    }

    println!();
    println!("format failures:");
    for r in &report.files {
        match &r.format {
            Some(FormatOutcome::Panicked(m)) => println!("  {}: format panic: {m}", r.name()),
            Some(FormatOutcome::TimedOut) => println!("  {}: format timed out", r.name()),
            Some(FormatOutcome::Checked(c)) => {
                if let Some(e) = &c.first_reparse_error {
                    println!(
                        "  {}: formatted text does not parse: {}:{}: {} ({} error(s))",
                        r.name(),
                        e.line,
                        e.column,
                        e.message,
                        c.reparse_errors
                    );
                    continue;
                }
                if let Some(d) = &c.first_instability {
                    println!("  {}: not idempotent, {}", r.name(), describe(d));
                }
                if let Some(d) = &c.first_tree_change {
                    println!(
                        "  {}: round trip changes the tree, dump {}",
                        r.name(),
                        describe(d)
                    );
                }
            }
            None => {}
        }
    }

    println!();
    println!("generated files not reproduced byte for byte:");
    for r in &report.files {
        if r.population == Population::Other {
            continue;
        }
        if let Some(c) = r.format_check()
            && let Some(d) = &c.first_change
        {
            println!("  {}: {}", r.name(), describe(d));
        }
    }
}

fn describe(d: &LineDiff) -> String {
    fn show(s: &Option<String>) -> String {
        match s {
            Some(s) => format!("{:?}", s.trim_end_matches('\n')),
            None => "end of text".to_owned(),
        }
    }
    format!(
        "line {}: expected {}, got {}",
        d.line,
        show(&d.expected),
        show(&d.actual)
    )
}

#[derive(Args)]
struct ExportArgs {
    #[command(flatten)]
    common: Common,
    /// Write a JSON summary (figures, and per case: id, pass, reason, assertions) to this file.
    #[arg(long)]
    json: Option<PathBuf>,
}

fn run_export(args: &ExportArgs) -> ExitCode {
    let common = &args.common;
    let corpus = match load_corpus(common) {
        Ok(c) => c,
        Err(e) if common.corpus.is_none() => {
            println!("SKIPPED: {e}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let options = export::Options {
        timeout: Duration::from_secs(common.timeout),
        threads: common.threads,
        filter: common.filter.clone(),
    };
    let started = Instant::now();
    let report = export::run(&corpus, std::sync::Arc::new(engine::selected()), &options);
    let elapsed = started.elapsed();
    let f = report.figures();

    println!(
        "engine: {}; corpus: {} ({} CUE cases checked in {:.1?})",
        report.engine,
        corpus.root.display(),
        f.cases,
        elapsed
    );
    println!();
    print_export_table(&report);

    println!();
    println!(
        "acceptance: pass {}/{} = {} of all cases; {}/{} = {} of core cases (not golden_only/experiment)",
        f.pass,
        f.cases,
        export::percent(f.pass, f.cases),
        f.core_pass,
        f.core_cases,
        export::percent(f.core_pass, f.core_cases)
    );
    println!(
        "by flag: golden_only {}/{}, experiment {}/{}, harness_selftest {}/{}",
        f.golden_only_pass,
        f.golden_only_cases,
        f.experiment_pass,
        f.experiment_cases,
        f.selftest_pass,
        f.selftest_cases
    );
    println!(
        "export: verdict {}/{}; successful exports: value {}/{}, key order {}/{}; failing exports: error paths {}/{}; exact text {}/{}",
        f.verdict_match,
        f.cases,
        f.value_match,
        f.expected_ok,
        f.key_order,
        f.expected_ok,
        f.error_paths,
        f.expected_fail,
        f.exact_text,
        f.cases
    );
    if f.panics + f.timeouts > 0 || !report.no_verdict.is_empty() {
        println!(
            "panics: {}, timeouts: {}, cases without an oracle verdict: {}",
            f.panics,
            f.timeouts,
            report.no_verdict.len()
        );
    }
    let i = &f.inline;
    println!(
        "inline assertions: {} total, {} pass, {} fail, {} skipped ({} invalid); pass {} of checked, {} of all",
        i.total,
        i.pass,
        i.fail,
        i.skipped,
        i.invalid,
        export::percent(i.pass, i.pass + i.fail),
        export::percent(i.pass, i.total)
    );

    print_reason_counts(
        "skipped assertions by reason:",
        report
            .cases
            .iter()
            .flat_map(|c| &c.assertions)
            .filter(|a| matches!(a.outcome, conformance::inline::Outcome::Skipped(_)))
            .map(|a| a.outcome.reason()),
    );
    print_reason_counts(
        "failing cases by reason:",
        report
            .cases
            .iter()
            .filter(|c| !c.pass)
            .map(|c| c.reason.as_str()),
    );

    if common.verbose {
        println!();
        println!("failing cases:");
        for c in report.cases.iter().filter(|c| !c.pass) {
            println!("  {}: {}", c.id, c.reason);
        }
        println!();
        println!("failing assertions:");
        for c in &report.cases {
            for a in &c.assertions {
                if let conformance::inline::Outcome::Fail(why) = &a.outcome {
                    println!(
                        "  {}/{} {} @test({}): {}",
                        c.id, a.location, a.path, a.directive, why
                    );
                }
            }
        }
    }

    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&report.to_json()).unwrap_or_default();
        if let Err(e) = std::fs::write(path, text + "\n") {
            eprintln!("error: cannot write {}: {e}", path.display());
            return ExitCode::from(2);
        }
        println!();
        println!("JSON summary written to {}", path.display());
    }

    println!();
    let held = report_ratchet("export", &f.named(), common.filter.is_some());
    if common.ratchet && !held {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

fn print_export_table(report: &export::Report) {
    let rows = report.groups();
    let width = rows
        .iter()
        .map(|r| r.group.len())
        .max()
        .unwrap_or(0)
        .max("directory".len());
    let header = format!(
        "{:<width$}  {:>5} {:>4} {:>7} {:>5} {:>5} {:>5} {:>7} | {:>7} {:>5} {:>5} {:>5} {:>6}",
        "directory",
        "cases",
        "ok",
        "verdict",
        "pass",
        "order",
        "exact",
        "errpath",
        "asserts",
        "pass",
        "fail",
        "skip",
        "pass%"
    );
    println!("{header}");
    println!("{}", "-".repeat(header.len()));
    let line = |name: &str, r: &export::GroupRow| {
        println!(
            "{:<width$}  {:>5} {:>4} {:>7} {:>5} {:>5} {:>5} {:>7} | {:>7} {:>5} {:>5} {:>5} {:>6}",
            name,
            r.cases,
            r.expected_ok,
            r.verdict_match,
            r.pass,
            r.key_order,
            r.exact_text,
            r.error_paths,
            r.inline.total,
            r.inline.pass,
            r.inline.fail,
            r.inline.skipped,
            export::percent(r.inline.pass, r.inline.pass + r.inline.fail)
        );
    };
    for r in &rows {
        line(&r.group, r);
    }
    println!("{}", "-".repeat(header.len()));
    let f = report.figures();
    line(
        "total",
        &export::GroupRow {
            group: "total".to_owned(),
            cases: f.cases,
            expected_ok: f.expected_ok,
            verdict_match: f.verdict_match,
            pass: f.pass,
            key_order: f.key_order,
            exact_text: f.exact_text,
            error_paths: f.error_paths,
            inline: f.inline,
        },
    );
    println!(
        "(ok: the oracle's export succeeds; order: values equal with the same key order; \
         errpath: failing exports with the same error paths; pass%: of checked assertions)"
    );
}

/// Prints how many times each reason occurs, grouped by the text before its first `:`.
fn print_reason_counts<'a>(title: &str, reasons: impl Iterator<Item = &'a str>) {
    let mut counts: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    for r in reasons {
        let key = r.split(':').next().unwrap_or(r);
        *counts.entry(key).or_default() += 1;
    }
    if counts.is_empty() {
        return;
    }
    let mut sorted: Vec<_> = counts.into_iter().collect();
    sorted.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    println!();
    println!("{title}");
    for (reason, n) in sorted {
        println!(
            "  {n:>5}  {}",
            if reason.is_empty() { "(none)" } else { reason }
        );
    }
}

#[derive(Args)]
struct TimoniArgs {
    #[command(flatten)]
    common: Common,
}

fn run_timoni(args: &TimoniArgs) -> ExitCode {
    let common = &args.common;
    let root = match corpus_root(common) {
        Ok(r) => r,
        Err(e) if common.corpus.is_none() => {
            println!("SKIPPED: {e}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let options = timoni::Options {
        timeout: Duration::from_secs(common.timeout),
        filter: common.filter.clone(),
    };
    let report = match timoni::run(&root, &options) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let word = |o: &timoni::Outcome| match o {
        timoni::Outcome::Exact => "exact".to_owned(),
        timoni::Outcome::ValueOnly => "value (key order differs)".to_owned(),
        timoni::Outcome::Wrong => "wrong value".to_owned(),
        timoni::Outcome::Error(e) => format!("error: {}", e.lines().next().unwrap_or("")),
        timoni::Outcome::TimedOut => "timed out".to_owned(),
        timoni::Outcome::Missing => "no expectation".to_owned(),
    };
    println!("timoni modules: {}", root.join("timoni").display());
    for m in &report.modules {
        println!(
            "  {:<24} plain: {} ({:.1?}); build: {} ({:.1?})",
            m.name,
            word(&m.plain),
            m.plain_time,
            word(&m.build),
            m.build_time
        );
        if common.verbose {
            for o in [&m.plain, &m.build] {
                if let timoni::Outcome::Error(e) = o {
                    for line in e.lines().skip(1).take(20) {
                        println!("      {line}");
                    }
                }
            }
        }
    }
    let f = report.figures();
    println!(
        "plain: {}/{} exact, {}/{} value; build: {}/{} exact, {}/{} value",
        f.plain_exact,
        f.files,
        f.plain_value,
        f.files,
        f.build_exact,
        f.files,
        f.build_value,
        f.files
    );
    if common.filter.is_some() {
        println!("ratchet: not checked (--filter is set)");
        return ExitCode::SUCCESS;
    }
    let held = report_ratchet("timoni", &f.named(), false);
    if common.ratchet && !held {
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}

#[derive(Args)]
struct WildArgs {
    #[command(flatten)]
    common: Common,
    /// Write a JSON summary (figures, and per case: id, pass, reason, error agreement) to this
    /// file.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Write each case's output to this directory, to compare with `cue`'s or the CLI's:
    /// `<case>.stdout` and `<case>.stderr` (ours), `<case>.cue.stdout`, `<case>.cue.stderr`
    /// (its first 500 bytes).
    #[arg(long)]
    dump: Option<PathBuf>,
}

fn run_wild(args: &WildArgs) -> ExitCode {
    let common = &args.common;
    let root = match corpus_root(common) {
        Ok(r) if r.join("wild").is_dir() => r,
        Ok(r) if common.corpus.is_none() => {
            println!("SKIPPED: no wild modules at {}", r.join("wild").display());
            return ExitCode::SUCCESS;
        }
        Ok(r) => {
            eprintln!("error: no wild modules at {}", r.join("wild").display());
            return ExitCode::from(2);
        }
        Err(e) if common.corpus.is_none() => {
            println!("SKIPPED: {e}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let options = wild::Options {
        timeout: Duration::from_secs(common.timeout),
        filter: common.filter.clone(),
    };
    let report = match wild::run(&root, &options) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    println!("wild modules: {}", root.join("wild").display());
    if let Some(dir) = &args.dump
        && let Err(e) = dump_wild(&root, &report, dir)
    {
        eprintln!("error: cannot write {}: {e}", dir.display());
        return ExitCode::from(2);
    }
    let width = report.cases.iter().map(|c| c.name.len()).max().unwrap_or(0);
    for c in &report.cases {
        let verdict = if c.pass { "PASS" } else { "FAIL" };
        let mut line = format!("  {verdict} {:<width$} {:>6.1?}", c.name, c.time);
        if !c.pass {
            line.push_str(&format!("  {}", c.reason));
        }
        match c.error_agree {
            Some(true) => line.push_str("  [first error agrees]"),
            Some(false) => line.push_str(&format!(
                "  [first error differs: ours {:?}]",
                c.our_first_line.as_deref().unwrap_or("(none)")
            )),
            None => {}
        }
        println!("{line}");
    }
    let f = report.figures();
    println!(
        "pass {}/{}; exit status agrees {}/{}; first error agrees {}/{} (of the cases where cue fails)",
        f.pass, f.files, f.verdict_match, f.files, f.error_agree, f.cue_fail
    );
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&report.to_json()).unwrap_or_default();
        if let Err(e) = std::fs::write(path, text + "\n") {
            eprintln!("error: cannot write {}: {e}", path.display());
            return ExitCode::from(2);
        }
        println!("JSON summary written to {}", path.display());
    }
    let held = report_ratchet("wild", &f.named(), common.filter.is_some());
    if common.ratchet && !held {
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}

/// Writes ours and `cue`'s output of every case of `report` to `dir`.
fn dump_wild(
    root: &std::path::Path,
    report: &wild::Report,
    dir: &std::path::Path,
) -> Result<(), String> {
    let cases = wild::load_cases(&root.join("wild"))?;
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    let write =
        |name: String, text: &str| std::fs::write(dir.join(name), text).map_err(|e| e.to_string());
    for c in &report.cases {
        let (stdout, stderr) = match &c.run {
            wild::Run::Ok(out) => (out.as_str(), ""),
            wild::Run::Failed(err) => ("", err.as_str()),
            _ => ("", c.reason.as_str()),
        };
        write(format!("{}.stdout", c.name), stdout)?;
        write(format!("{}.stderr", c.name), stderr)?;
        if let Some(case) = cases.iter().find(|k| k.name == c.name) {
            write(format!("{}.cue.stdout", c.name), &case.stdout)?;
            write(format!("{}.cue.stderr", c.name), &case.stderr_head)?;
        }
    }
    Ok(())
}

#[derive(Args)]
struct DiffArgs {
    /// The oracle: the path of a `cue` v0.17.1 binary. Without it (or when it does not exist)
    /// the check is skipped.
    #[arg(long)]
    oracle: Option<PathBuf>,
    /// The first program's seed; program i of each family has seed N + i.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Programs per family.
    #[arg(long, default_value_t = 100)]
    count: u64,
    /// Only these families (closed, defaults, order, errors); all by default.
    #[arg(long)]
    family: Vec<String>,
    /// Write each distinct finding here: NAME.cue, NAME.expected (the oracle's stdout, or
    /// `error: <its first stderr line>`), NAME.ours, and an index, findings.txt.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Seconds each side may take on one program.
    #[arg(long, default_value_t = 10)]
    timeout: u64,
    /// Worker threads (0: one per CPU).
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// Print every finding, not one per shape.
    #[arg(long, short)]
    verbose: bool,
}

fn run_diff_ours(dir: &std::path::Path) -> ExitCode {
    let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    match std::panic::catch_unwind(|| diff::export_ours(&dir)) {
        Ok(diff::Outcome::Ok(out)) => {
            print!("{out}");
            ExitCode::SUCCESS
        }
        Ok(diff::Outcome::Failed(err)) => {
            eprint!("{err}");
            ExitCode::FAILURE
        }
        Ok(other) => {
            eprint!("{}", other.recorded());
            ExitCode::FAILURE
        }
        Err(p) => {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_default();
            eprintln!("panic: {msg}");
            ExitCode::from(101)
        }
    }
}

fn run_diff(args: &DiffArgs) -> ExitCode {
    let oracle = match &args.oracle {
        Some(p) if p.is_file() => p.clone(),
        Some(p) => {
            println!(
                "SKIP: diff: no oracle binary at {} (pass the path of a cue v0.17.1 binary)",
                p.display()
            );
            return ExitCode::SUCCESS;
        }
        None => {
            println!("SKIP: diff: no --oracle given (pass the path of a cue v0.17.1 binary)");
            return ExitCode::SUCCESS;
        }
    };
    let mut families = Vec::new();
    for f in diff::Family::ALL {
        if args.family.is_empty() || args.family.iter().any(|n| n == f.name()) {
            families.push(f);
        }
    }
    if families.is_empty() {
        eprintln!("error: no such family: {}", args.family.join(", "));
        return ExitCode::from(2);
    }
    let me = match std::env::current_exe() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: own executable: {e}");
            return ExitCode::from(2);
        }
    };
    let timeout = Duration::from_secs(args.timeout);
    let jobs: Vec<(diff::Family, u64)> = families
        .iter()
        .flat_map(|&f| (0..args.count).map(move |i| (f, args.seed.wrapping_add(i))))
        .collect();
    let threads = if args.threads == 0 {
        std::thread::available_parallelism().map_or(1, usize::from)
    } else {
        args.threads
    };
    let started = Instant::now();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results = std::sync::Mutex::new(Vec::new());
    let ours = |dir: &std::path::Path, timeout: Duration| {
        let mut cmd = std::process::Command::new(&me);
        cmd.arg("diff-ours").arg(dir);
        diff::run_with_timeout(cmd, timeout, "panic: ")
    };
    std::thread::scope(|s| {
        for _ in 0..threads.max(1) {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(&(family, seed)) = jobs.get(i) else {
                        break;
                    };
                    let program = diff::generate(family, seed);
                    let checked = diff::check(program, seed, &oracle, timeout, &ours);
                    results.lock().expect("no worker panics").push((i, checked));
                }
            });
        }
    });
    let mut results = results.into_inner().expect("no worker panics");
    results.sort_by_key(|(i, _)| *i);
    let results: Vec<diff::Checked> = results.into_iter().map(|(_, c)| c).collect();

    // Distinct findings: per shape, the count and the shortest program.
    let mut shapes: std::collections::BTreeMap<String, (usize, &diff::Checked)> =
        std::collections::BTreeMap::new();
    let mut oracle_trouble = 0;
    for c in &results {
        if matches!(
            c.oracle,
            diff::Outcome::TimedOut | diff::Outcome::Broken(_) | diff::Outcome::Panicked(_)
        ) {
            oracle_trouble += 1;
        }
        let Some(kind) = &c.finding else { continue };
        let key = diff::shape(&c.program, &c.oracle, kind);
        let entry = shapes.entry(key).or_insert((0, c));
        entry.0 += 1;
        if c.program.text.len() < entry.1.program.text.len() {
            entry.1 = c;
        }
    }

    println!(
        "diff: oracle {}; {} programs (seeds {}..{} per family) in {:.1?}",
        oracle.display(),
        results.len(),
        args.seed,
        args.seed.wrapping_add(args.count),
        started.elapsed()
    );
    println!();
    println!(
        "{:<10} {:>8} {:>6} {:>8} {:>8}  (oracle fails)",
        "family", "programs", "agree", "findings", "distinct"
    );
    let (mut all, mut agree, mut found) = (0, 0, 0);
    for &f in &families {
        let of: Vec<&diff::Checked> = results.iter().filter(|c| c.program.family == f).collect();
        let n_found = of.iter().filter(|c| c.finding.is_some()).count();
        let distinct = shapes
            .keys()
            .filter(|k| k.starts_with(&format!("{}/", f.name())))
            .count();
        let cue_fails = of
            .iter()
            .filter(|c| matches!(c.oracle, diff::Outcome::Failed(_)))
            .count();
        println!(
            "{:<10} {:>8} {:>6} {:>8} {:>8}  ({cue_fails})",
            f.name(),
            of.len(),
            of.len() - n_found,
            n_found,
            distinct
        );
        all += of.len();
        agree += of.len() - n_found;
        found += n_found;
    }
    println!(
        "{:<10} {:>8} {:>6} {:>8} {:>8}",
        "total",
        all,
        agree,
        found,
        shapes.len()
    );
    if oracle_trouble > 0 {
        println!("(the oracle timed out or could not run on {oracle_trouble} programs)");
    }

    if !shapes.is_empty() {
        println!();
        println!("distinct findings (count, name, shape):");
    }
    let mut index = String::new();
    let mut numbered: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    for (key, (count, c)) in &shapes {
        let n = numbered.entry(c.program.family.name()).or_default();
        *n += 1;
        let name = format!("{}-{:03}", c.program.family.name(), n);
        println!("  {count:>4}  {name}  {key}");
        index.push_str(&format!("{name}\tseed {}\t{count}\t{key}\n", c.seed));
        if let Some(dir) = &args.out {
            let written = std::fs::create_dir_all(dir)
                .and_then(|()| std::fs::write(dir.join(format!("{name}.cue")), &c.program.text))
                .and_then(|()| {
                    std::fs::write(dir.join(format!("{name}.expected")), c.oracle.recorded())
                })
                .and_then(|()| std::fs::write(dir.join(format!("{name}.ours")), c.ours.recorded()));
            if let Err(e) = written {
                eprintln!("error: cannot write {}: {e}", dir.display());
                return ExitCode::from(2);
            }
        }
    }
    if args.verbose {
        println!();
        println!("every finding:");
        for c in results.iter().filter(|c| c.finding.is_some()) {
            println!(
                "  {} seed {}: {}",
                c.program.family.name(),
                c.seed,
                c.finding.as_deref().unwrap_or_default()
            );
        }
    }
    if let Some(dir) = &args.out {
        if let Err(e) = std::fs::create_dir_all(dir)
            .and_then(|()| std::fs::write(dir.join("findings.txt"), &index))
        {
            eprintln!("error: cannot write {}: {e}", dir.display());
            return ExitCode::from(2);
        }
        println!();
        println!("findings written to {}", dir.display());
    }
    ExitCode::SUCCESS
}
