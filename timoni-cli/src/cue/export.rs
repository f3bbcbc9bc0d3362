//! `timoni cue export [-e EXPR] [--out json|yaml] [PATH...]`: the package (or the values the
//! `-e` selections name) as concrete data.

use std::process::ExitCode;

use cue_eval::encode::{to_json_indent, to_yaml, to_yaml_stream};
use cue_eval::load;

use super::{Inputs, fail};

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    inputs: Inputs,
    /// Export the value at this path (`a.b.c`) instead of the whole package; may be repeated.
    #[arg(short = 'e', long = "expression", value_name = "EXPR")]
    expressions: Vec<String>,
    /// The output format.
    #[arg(long = "out", value_enum, default_value_t = Format::Json)]
    out: Format,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug)]
enum Format {
    Json,
    Yaml,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let export = match load::export(
        &args.inputs.config()?,
        &args.inputs.paths,
        &args.expressions,
    ) {
        Ok(e) => e,
        Err(errs) => return Ok(fail(&errs)),
    };
    let docs = &export.docs;
    let text = match args.out {
        Format::Json => docs.iter().map(|d| to_json_indent(d, false)).collect(),
        Format::Yaml if docs.len() == 1 => to_yaml(&docs[0]),
        Format::Yaml => to_yaml_stream(docs),
    };
    print!("{text}");
    // The process ends here: tearing down the evaluator's graph would only cost time.
    std::mem::forget(export);
    Ok(ExitCode::SUCCESS)
}
