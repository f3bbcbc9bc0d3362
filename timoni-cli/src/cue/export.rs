//! `timoni cue export [-e EXPR] [--out json|yaml] [PATH...]`: the package (or the values the
//! `-e` selections name) as concrete data.

use std::io::Write;
use std::process::ExitCode;

use cue_eval::encode::{to_yaml, to_yaml_stream};

use super::{Inputs, fail_with};

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
    let root = match args.inputs.loader()?.load() {
        Ok(v) => v,
        Err(e) => return Ok(fail_with(&e)),
    };
    let selections = match args.expressions.as_slice() {
        [] => vec![String::new()],
        e => e.to_vec(),
    };
    match args.out {
        Format::Json if selections.len() == 1 => {
            // No data tree, and no more than 1 MiB of the text held (`Value::write_json`).
            let v = match root.lookup(&selections[0]) {
                Ok(v) => v,
                Err(e) => return Ok(fail_with(&e)),
            };
            let mut out = std::io::stdout().lock();
            match v.write_json(&mut out) {
                Ok(written) => written?,
                Err(e) => return Ok(fail_with(&e)),
            }
            out.flush()?;
            std::mem::forget(v);
        }
        Format::Json => {
            // Nothing is written unless every selection exports: the texts are kept until then.
            let texts = match each_selection(&root, &selections, cue_eval::Value::to_json) {
                Ok(t) => t,
                Err(e) => return Ok(fail_with(&e)),
            };
            let mut out = std::io::stdout().lock();
            for t in &texts {
                out.write_all(t.as_bytes())?;
            }
            out.flush()?;
            std::mem::forget(texts);
        }
        Format::Yaml => {
            let docs = match each_selection(&root, &selections, cue_eval::Value::export) {
                Ok(d) => d,
                Err(e) => return Ok(fail_with(&e)),
            };
            if docs.len() == 1 {
                print!("{}", to_yaml(&docs[0]));
            } else {
                print!("{}", to_yaml_stream(&docs));
            }
            std::mem::forget(docs);
        }
    }
    // The process ends here: tearing down the evaluator's graph and the exported data would
    // only cost time.
    std::mem::forget(root);
    Ok(ExitCode::SUCCESS)
}

/// `export` of the value at each selection, in order, or the first error.
fn each_selection<T>(
    root: &cue_eval::Value,
    selections: &[String],
    export: impl Fn(&cue_eval::Value) -> cue_eval::Result<T>,
) -> cue_eval::Result<Vec<T>> {
    selections
        .iter()
        .map(|s| root.lookup(s).and_then(|v| export(&v)))
        .collect()
}
