//! What the `cue` command does around the loader, in one place for every front end that must
//! print what `cue` prints: `timoni cue export/eval` and the conformance runners.
//!
//! * [`load_instance`]: load the package the arguments name, unify the data files given with
//!   it, compile (`cue export ARGS`, `cue eval ARGS`).
//! * [`export`]: then the concrete data of the whole package or of each `-e` selection.
//! * [`relative_to`]: error positions below the working directory as `./rel/path`, as `cue`
//!   prints them.

use std::path::Path;

use super::{Config, load};
use crate::decode::Data;
use crate::eval::api::{EvalError, Instance};
use crate::eval::print::{export_path, split_path};

/// Loads and compiles the instance `args` name (a package directory or CUE files, plus data
/// files unified into it); the errors are those `cue` reports for inputs that do not load,
/// parse or compile.
pub fn load_instance(cfg: &Config, args: &[String]) -> Result<Instance, Vec<EvalError>> {
    let mut build = load(cfg, args).map_err(|e| vec![e.to_eval_error()])?;
    build
        .merge_data_files()
        .map_err(|e| vec![e.to_eval_error()])?;
    build.into_instance()
}

/// An export: one document per selection, and the instance they came from (a caller that is
/// about to exit may leak it rather than pay for tearing the graph down).
pub struct Export {
    pub docs: Vec<Data>,
    pub instance: Instance,
}

/// `cue export [-e EXPR]... ARGS`: the whole package, or the value at each selection
/// (`a.b."c-d"`), as concrete data; the first failing selection's errors otherwise.
pub fn export(
    cfg: &Config,
    args: &[String],
    expressions: &[String],
) -> Result<Export, Vec<EvalError>> {
    let mut instance = load_instance(cfg, args)?;
    let paths: Vec<Vec<String>> = if expressions.is_empty() {
        vec![Vec::new()]
    } else {
        expressions.iter().map(|e| split_path(e)).collect()
    };
    let mut docs = Vec::with_capacity(paths.len());
    for path in &paths {
        let path: Vec<&str> = path.iter().map(String::as_str).collect();
        docs.push(export_path(&mut instance, &path)?);
    }
    Ok(Export { docs, instance })
}

/// The errors with positions in files below `dir` written `./rel/path`, in the messages too,
/// as `cue` prints them relative to its working directory.
pub fn relative_to(errs: &[EvalError], dir: &Path) -> Vec<EvalError> {
    let prefix = format!("{}/", dir.display());
    errs.iter()
        .map(|e| {
            let mut e = e.clone();
            for (f, _, _) in &mut e.positions {
                if let Ok(rel) = Path::new(f.as_str()).strip_prefix(dir) {
                    *f = format!("./{}", rel.display());
                }
            }
            e.msg = e.msg.replace(&prefix, "./");
            e
        })
        .collect()
}
