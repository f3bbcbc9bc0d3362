//! `timoni cue …`: the everyday commands of the `cue` tool (`export`, `eval`, `vet`, `fmt`) on
//! our own evaluator, with `cue`'s output, error text and exit codes (0 ok, 1 error).
//!
//! Every command takes a package directory (`./`, `./dir:pkg`; the default is the current
//! directory) loaded as `cue` loads it (module root, imports from the module and `cue.mod`,
//! `@if`, `@tag` with `-t`, `@embed`), or CUE files evaluated as one package in the order given,
//! plus data files (`.json`, `.yaml`): `export` and `eval` unify them with the package, `vet`
//! checks each document against it.

mod eval;
mod export;
mod vet;

use std::process::ExitCode;

use anyhow::Context;
use cue_eval::Loader;

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
    /// A package directory (`./`, `./dir`, `./dir:pkg`; the default is the current directory),
    /// or CUE files evaluated as one package in this order, plus data files (`.json`, `.yaml`,
    /// `.yml`).
    paths: Vec<String>,
    /// Set the value of a `@tag(key)` attribute (`key=value`), or a shorthand or `@if` tag.
    #[arg(short = 't', long = "inject", value_name = "KEY=VALUE")]
    tags: Vec<String>,
    /// Inject the tag variables (`@tag(x, var=now|os|arch|cwd|username|hostname|rand)`).
    #[arg(short = 'T', long = "inject-vars")]
    inject_vars: bool,
}

impl Inputs {
    /// The loader of the inputs, in the working directory.
    fn loader(&self) -> anyhow::Result<Loader> {
        let cwd = std::env::current_dir().context("working directory")?;
        let mut loader = cue_eval::Context::new().loader(&cwd);
        for t in &self.tags {
            loader = loader.tag(t.clone());
        }
        if self.inject_vars {
            loader = loader.inject_vars();
        }
        Ok(loader.args(self.paths.clone()))
    }
}

/// Prints the error as `cue` does, positions relative to the working directory.
fn fail_with(e: &cue_eval::Error) -> ExitCode {
    let cwd = std::env::current_dir().unwrap_or_default();
    eprintln!("{}", e.relative_to(&cwd));
    ExitCode::FAILURE
}
