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

use std::path::Path;
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
    /// Loads the files of the instance (the module, its imports, the data files), with tags
    /// injected.
    fn build(&self) -> anyhow::Result<Result<Build, Vec<EvalError>>> {
        let cwd = std::env::current_dir().context("working directory")?;
        let mut cfg = Config::new(&cwd);
        cfg.tags = self.tags.clone();
        if self.inject_vars {
            cfg.inject_default_vars();
        }
        Ok(load::load(&cfg, &self.paths).map_err(|e| vec![e.to_eval_error()]))
    }

    /// Loads and compiles the package, with the data files unified into it; `Err` inside is
    /// what `cue` reports for inputs that do not load or parse.
    fn load(&self) -> anyhow::Result<Result<Instance, Vec<EvalError>>> {
        let mut build = match self.build()? {
            Ok(b) => b,
            Err(e) => return Ok(Err(e)),
        };
        if let Err(e) = build.merge_data_files() {
            return Ok(Err(vec![e.to_eval_error()]));
        }
        Ok(build.into_instance())
    }
}

/// Prints errors as `cue` does (positions relative to the working directory) and fails.
fn fail(errs: &[EvalError]) -> ExitCode {
    eprint!("{}", format_errors(&relative_positions(errs)));
    ExitCode::FAILURE
}

/// Positions in files below the working directory as `./rel/path`, as `cue` prints them.
fn relative_positions(errs: &[EvalError]) -> Vec<EvalError> {
    let cwd = std::env::current_dir().unwrap_or_default();
    let prefix = format!("{}/", cwd.display());
    errs.iter()
        .map(|e| {
            let mut e = e.clone();
            for (f, _, _) in &mut e.positions {
                if let Ok(rel) = Path::new(f.as_str()).strip_prefix(&cwd) {
                    *f = format!("./{}", rel.display());
                }
            }
            e.msg = e.msg.replace(&prefix, "./");
            e
        })
        .collect()
}

/// Splits `-e` selections (`a.b."c-d"`) into labels.
fn selections(exprs: &[String]) -> Vec<Vec<String>> {
    exprs
        .iter()
        .map(|e| cue_eval::eval::print::split_path(e))
        .collect()
}
