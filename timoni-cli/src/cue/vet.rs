//! `timoni cue vet [-c] [PATH...]`: validate a package. Without `-c`, values that are not
//! concrete are allowed, with a note on stderr; with `-c`, every regular field must be concrete,
//! as `timoni cue export` needs.

use std::process::ExitCode;

use cue_eval::eval::print::{Options, eval_errors};

use super::{Inputs, fail};

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    inputs: Inputs,
    /// Require the evaluation to be concrete.
    #[arg(short = 'c', long = "concrete")]
    concrete: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut inst = match args.inputs.load()? {
        Ok(i) => i,
        Err(errs) => return Ok(fail(&errs)),
    };
    let errs = eval_errors(
        &mut inst,
        Options {
            hidden: true,
            optional: false,
        },
    );
    if !errs.is_empty() {
        return Ok(fail(&errs));
    }
    if let Err(errs) = inst.export() {
        if args.concrete {
            return Ok(fail(&errs));
        }
        eprintln!(
            "some instances are incomplete; use the -c flag to show errors or suppress this message"
        );
    }
    Ok(ExitCode::SUCCESS)
}
