//! `timoni cue vet [-c] [PATH...]`: validate a package. Without `-c`, values that are not
//! concrete are allowed, with a note on stderr; with `-c`, every regular field must be concrete,
//! as `timoni cue export` needs. Data files given beside the schema (`schema.cue data.yaml`) are
//! checked one document at a time: each is unified with the package and validated.

use std::process::ExitCode;

use cue_eval::decode;
use cue_eval::eval::api::Instance;
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
    let mut build = match args.inputs.build()? {
        Ok(b) => b,
        Err(errs) => return Ok(fail(&errs)),
    };
    let data = std::mem::take(&mut build.data);
    if data.is_empty() {
        let inst = match build.into_instance() {
            Ok(i) => i,
            Err(errs) => return Ok(fail(&errs)),
        };
        return Ok(vet(inst, args.concrete, true));
    }
    for file in &data {
        for doc in &file.docs {
            let mut b = build.clone();
            if let Err(e) = b.add_main_source(&file.name, decode::to_cue_source(doc)) {
                return Ok(fail(&[e.to_eval_error()]));
            }
            let inst = match b.into_instance() {
                Ok(i) => i,
                Err(errs) => return Ok(fail(&errs)),
            };
            let code = vet(inst, args.concrete, false);
            if code != ExitCode::SUCCESS {
                return Ok(code);
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Validates one instance; `note` prints the incompleteness note of a package vet.
fn vet(mut inst: Instance, concrete: bool, note: bool) -> ExitCode {
    let errs = eval_errors(
        &mut inst,
        Options {
            hidden: true,
            optional: false,
        },
    );
    if !errs.is_empty() {
        return fail(&errs);
    }
    if let Err(errs) = inst.export() {
        if concrete {
            return fail(&errs);
        }
        if note {
            eprintln!(
                "some instances are incomplete; use the -c flag to show errors or suppress this message"
            );
        }
    }
    ExitCode::SUCCESS
}
