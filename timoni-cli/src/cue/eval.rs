//! `timoni cue eval [-i] [-c] [-e EXPR] [PATH...]`: the evaluated package (or the values the
//! `-e` selections name) printed as CUE. Errors fail the command unless `-i` asks to show them
//! in place, as `_|_ // message`.

use std::process::ExitCode;

use cue_eval::{FieldOptions, ValidateOptions};

use super::{Inputs, fail_with};

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    inputs: Inputs,
    /// Print the value at this path (`a.b.c`) instead of the whole package; may be repeated.
    #[arg(short = 'e', long = "expression", value_name = "EXPR")]
    expressions: Vec<String>,
    /// Print errors in place instead of failing.
    #[arg(short = 'i', long = "ignore")]
    ignore: bool,
    /// Require the evaluation to be concrete.
    #[arg(short = 'c', long = "concrete")]
    concrete: bool,
    /// Show hidden fields.
    #[arg(short = 'H', long = "show-hidden")]
    show_hidden: bool,
    /// Show optional fields.
    #[arg(short = 'O', long = "show-optional")]
    show_optional: bool,
    /// Show optional and hidden fields.
    #[arg(short = 'a', long = "all")]
    all: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let root = match args.inputs.loader()?.load_partial() {
        Ok(v) => v,
        Err(e) => return Ok(fail_with(&e)),
    };
    let opts = FieldOptions {
        hidden: args.show_hidden || args.all,
        optional: args.show_optional || args.all,
        definitions: true,
    };
    let selections = match args.expressions.as_slice() {
        [] => vec![String::new()],
        e => e.to_vec(),
    };
    let mut out = String::new();
    for s in &selections {
        let v = match root.lookup(s) {
            Ok(v) => v,
            Err(e) => return Ok(fail_with(&e)),
        };
        if !args.ignore {
            let checks = ValidateOptions {
                concrete: args.concrete,
                hidden: opts.hidden,
                optional: opts.optional,
            };
            if let Err(e) = v.validate(checks) {
                return Ok(fail_with(&e));
            }
        }
        match v.to_cue_text(opts) {
            Ok(text) => out.push_str(&text),
            Err(e) => return Ok(fail_with(&e)),
        }
    }
    print!("{out}");
    Ok(ExitCode::SUCCESS)
}
