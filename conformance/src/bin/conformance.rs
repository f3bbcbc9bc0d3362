//! `conformance`: runs a conformance check over the shared corpus and prints its report.
//!
//! `cargo run -p conformance --release -- parse [--verbose]` parses every CUE file of the corpus,
//! checks the formatter on the ones that parse, and prints a per-directory table, the totals, the
//! files the oracle says are syntax errors, the format figures and the ratchet's verdict. Each
//! check is a subcommand, so `eval` and `export` can be added beside `parse`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::{Args, Parser, Subcommand};
use conformance::corpus::{self, Corpus};
use conformance::parse::{self, FormatOutcome, LineDiff, ParseOutcome, Population};
use conformance::ratchet::{self, Ratchet};

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
    }
}

fn load_corpus(common: &Common) -> Result<Corpus, String> {
    let root = match &common.corpus {
        Some(dir) if corpus::looks_like_corpus(dir) => dir.clone(),
        Some(dir) => return Err(format!("{} is not a conformance corpus", dir.display())),
        None => corpus::locate()?.root,
    };
    Corpus::load(&root).map_err(|e| e.to_string())
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

    let named = figures.named();
    let verdict = if common.filter.is_some() {
        None
    } else {
        Some(Ratchet::load(&ratchet::default_path()).map(|r| r.check("parse", &named)))
    };
    println!();
    match &verdict {
        None => println!("ratchet: not checked (--filter is set)"),
        Some(Err(e)) => println!("ratchet: cannot read: {e}"),
        Some(Ok(outcome)) => {
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
        }
    }
    let ratchet_failed = !matches!(&verdict, Some(Ok(o)) if o.passed());
    if common.ratchet && ratchet_failed {
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
