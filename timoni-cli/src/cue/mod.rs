//! `timoni cue …`: the everyday commands of the `cue` tool (`export`, `eval`, `vet`, `fmt`) on
//! our own evaluator, with `cue`'s output, error text and exit codes (0 ok, 1 error).
//!
//! Every command takes CUE files, evaluated as one package in the order given, or a directory,
//! whose `.cue` files are taken in name order; the default is the current directory.

mod eval;
mod export;
mod vet;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use cue_eval::eval::api::{EvalError, Instance, format_errors};

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand, Debug)]
enum Command {
    /// Output data in a standard format (JSON or YAML).
    Export(export::Args),
    /// Evaluate and print a configuration as CUE.
    Eval(eval::Args),
    /// Validate a configuration.
    Vet(vet::Args),
    /// Format CUE files (same as `timoni fmt`).
    Fmt(crate::fmt::Args),
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.command {
        Command::Export(a) => export::run(a),
        Command::Eval(a) => eval::run(a),
        Command::Vet(a) => vet::run(a),
        Command::Fmt(a) => crate::fmt::run(a),
    }
}

/// The inputs every command takes.
#[derive(clap::Args, Debug)]
struct Inputs {
    /// CUE files, evaluated as one package in this order, or a directory (its `.cue` files in
    /// name order). Defaults to the current directory.
    paths: Vec<PathBuf>,
    /// Set the value of a `@tag(key)` attribute.
    #[arg(short = 't', long = "inject", value_name = "KEY=VALUE")]
    tags: Vec<String>,
}

impl Inputs {
    /// Reads and compiles the package; `Err` inside is what `cue` reports for sources that do not
    /// parse.
    fn load(&self) -> anyhow::Result<Result<Instance, Vec<EvalError>>> {
        if !self.tags.is_empty() {
            bail!("tags are not supported yet");
        }
        let paths = if self.paths.is_empty() {
            vec![PathBuf::from(".")]
        } else {
            self.paths.clone()
        };
        let mut sources = Vec::new();
        for p in &paths {
            for file in cue_files(p)? {
                let text =
                    std::fs::read_to_string(&file).with_context(|| file.display().to_string())?;
                sources.push((file.display().to_string(), text));
            }
        }
        if sources.is_empty() {
            bail!("no CUE files in {}", paths[0].display());
        }
        Ok(Instance::from_sources(&sources))
    }
}

/// A file as given, or the `.cue` files of a directory in name order (not recursive; names that
/// start with `.` or `_` are skipped, as `cue` does).
fn cue_files(p: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let meta = std::fs::metadata(p).with_context(|| p.display().to_string())?;
    if !meta.is_dir() {
        return Ok(vec![p.to_path_buf()]);
    }
    let mut files = Vec::new();
    for entry in std::fs::read_dir(p).with_context(|| p.display().to_string())? {
        let path = entry?.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if path.extension().is_some_and(|e| e == "cue")
            && !name.starts_with(['.', '_'])
            && path.is_file()
        {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

/// Prints errors as `cue` does and fails.
fn fail(errs: &[EvalError]) -> ExitCode {
    eprint!("{}", format_errors(errs));
    ExitCode::FAILURE
}

/// Splits `-e` selections (`a.b."c-d"`) into labels.
fn selections(exprs: &[String]) -> Vec<Vec<String>> {
    exprs
        .iter()
        .map(|e| cue_eval::eval::print::split_path(e))
        .collect()
}
