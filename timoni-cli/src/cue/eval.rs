//! `timoni cue eval [-i] [-c] [-e EXPR] [PATH...]`: the evaluated package (or the values the
//! `-e` selections name) printed as CUE. Errors fail the command unless `-i` asks to show them
//! in place, as `_|_ // message`.

use std::process::ExitCode;

use cue_eval::eval::print::{Options, eval_errors_at, eval_path_text, export_path};

use super::{Inputs, fail, selections};

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
    let mut inst = match args.inputs.load()? {
        Ok(i) => i,
        Err(errs) => return Ok(fail(&errs)),
    };
    let opts = Options {
        hidden: args.show_hidden || args.all,
        optional: args.show_optional || args.all,
    };
    let paths = match selections(&args.expressions) {
        p if p.is_empty() => vec![Vec::new()],
        p => p,
    };
    let mut out = String::new();
    for path in &paths {
        let path: Vec<&str> = path.iter().map(String::as_str).collect();
        if !args.ignore {
            let errs = eval_errors_at(&mut inst, &path, opts);
            if !errs.is_empty() {
                return Ok(fail(&errs));
            }
            if args.concrete
                && let Err(errs) = export_path(&mut inst, &path)
            {
                return Ok(fail(&errs));
            }
        }
        match eval_path_text(&mut inst, &path, opts) {
            Ok(text) => out.push_str(&text),
            Err(errs) => return Ok(fail(&errs)),
        }
    }
    print!("{out}");
    Ok(ExitCode::SUCCESS)
}
