//! `timoni fmt [PATH...] [-d/--diff]`: formats CUE files as `cue fmt` does. `-` reads stdin and
//! writes the formatted text to stdout. With `--diff`, prints unified diffs and fails with
//! `formatting differences found` if any file is not formatted, which makes it a CI check.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use timoni_core::fmt::{FileReport, Mode, Outcome, format_paths, format_text};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Files or directories to format; `-` for stdin. Defaults to the current directory.
    paths: Vec<PathBuf>,
    /// Print the differences instead of rewriting files, and fail if there are any.
    #[arg(short, long)]
    diff: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if args.paths.iter().any(|p| p.as_os_str() == "-") {
        return stdin();
    }
    let paths = if args.paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        args.paths
    };
    let mode = if args.diff { Mode::Diff } else { Mode::Write };
    let reports = format_paths(&paths, mode)?;
    render(&reports)
}

fn stdin() -> anyhow::Result<ExitCode> {
    let text = crate::settings::read_stdin().context("reading stdin")?;
    match format_text("-", &text) {
        Ok(out) => {
            std::io::stdout().write_all(out.as_bytes())?;
            Ok(ExitCode::SUCCESS)
        }
        Err((file, errors)) => {
            report_parse_errors(&file, &errors);
            Ok(ExitCode::FAILURE)
        }
    }
}

/// Prints each diff (followed by an empty line, as Timoni) and each file's parse errors; then
/// fails as Timoni does: with the count of files that do not parse, else, with `--diff`, because
/// some file is not formatted.
fn render(reports: &[FileReport]) -> anyhow::Result<ExitCode> {
    let mut invalid = 0;
    let mut differs = false;
    for r in reports {
        match &r.outcome {
            Outcome::Unchanged | Outcome::Formatted => {}
            Outcome::Differs(diff) => {
                differs = true;
                println!("{diff}");
            }
            Outcome::Invalid(file, errors) => {
                invalid += 1;
                report_parse_errors(file, errors);
            }
        }
    }
    if invalid > 0 {
        anyhow::bail!("formatting failed for {invalid} file(s)");
    }
    if differs {
        anyhow::bail!("formatting differences found");
    }
    Ok(ExitCode::SUCCESS)
}

fn report_parse_errors(file: &cue_eval::source::SourceFile, errors: &[cue_eval::ParseError]) {
    for e in errors {
        let d = cue_eval::diagnostic::Diagnostic::from_parse_error(file, e);
        eprintln!("{:?}", miette::Report::new(d));
    }
}
