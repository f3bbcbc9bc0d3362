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
use cue_eval::eval::api::{EvalError, Instance, format_errors};
use cue_eval::load::{self, Build, Config};

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
    /// The loader's configuration: the working directory, with the tags injected.
    fn config(&self) -> anyhow::Result<Config> {
        let cwd = std::env::current_dir().context("working directory")?;
        let mut cfg = Config::new(&cwd);
        cfg.tags = self.tags.clone();
        if self.inject_vars {
            cfg.inject_default_vars();
        }
        Ok(cfg)
    }

    /// Loads the files of the instance (the module, its imports, the data files), with tags
    /// injected.
    fn build(&self) -> anyhow::Result<Result<Build, Vec<EvalError>>> {
        Ok(load::load(&self.config()?, &self.paths).map_err(|e| vec![e.to_eval_error()]))
    }

    /// Loads and compiles the package, with the data files unified into it; `Err` inside is
    /// what `cue` reports for inputs that do not load or parse.
    fn load(&self) -> anyhow::Result<Result<Instance, Vec<EvalError>>> {
        Ok(load::load_instance(&self.config()?, &self.paths))
    }
}

/// Prints errors as `cue` does (positions relative to the working directory) and fails.
fn fail(errs: &[EvalError]) -> ExitCode {
    let cwd = std::env::current_dir().unwrap_or_default();
    eprint!("{}", format_errors(&load::relative_to(errs, &cwd)));
    ExitCode::FAILURE
}

/// Splits `-e` selections (`a.b."c-d"`) into labels.
fn selections(exprs: &[String]) -> Vec<Vec<String>> {
    exprs
        .iter()
        .map(|e| cue_eval::eval::print::split_path(e))
        .collect()
}
