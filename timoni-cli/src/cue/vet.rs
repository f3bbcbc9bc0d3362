//! `timoni cue vet [-c] [PATH...]`: validate a package. Without `-c`, values that are not
//! concrete are allowed, with a note on stderr; with `-c`, every regular field must be concrete,
//! as `timoni cue export` needs. Data files given beside the schema (`schema.cue data.yaml`) are
//! checked one document at a time: each is unified with the package and validated.

use std::process::ExitCode;

use cue_eval::{ValidateOptions, Value};

use super::{Inputs, fail_with};

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    inputs: Inputs,
    /// Require the evaluation to be concrete.
    #[arg(short = 'c', long = "concrete")]
    concrete: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let loads = match args.inputs.loader()?.load_partial_per_document() {
        Ok(l) => l,
        Err(e) => return Ok(fail_with(&e)),
    };
    let note = !loads.per_document();
    for load in loads {
        let code = match load {
            Ok(v) => vet(&v, args.concrete, note),
            Err(e) => fail_with(&e),
        };
        if code != ExitCode::SUCCESS {
            return Ok(code);
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn vet(v: &Value, concrete: bool, note: bool) -> ExitCode {
    let checks = ValidateOptions {
        hidden: true,
        ..Default::default()
    };
    if let Err(e) = v.validate(checks) {
        return fail_with(&e);
    }
    if let Err(e) = v.export() {
        if concrete {
            return fail_with(&e);
        }
        if note {
            eprintln!(
                "some instances are incomplete; use the -c flag to show errors or suppress this message"
            );
        }
    }
    ExitCode::SUCCESS
}
