//! A door into the crate for its own benchmarks and fuzz targets, behind the `testing` cargo
//! feature and **not covered by semantic versioning**.
//!
//! Embedders use the facade ([`crate::Context`], [`crate::Value`], [`crate::Error`],
//! [`crate::syntax::Document`]), and so do the crate's integration tests and the conformance
//! runners, which check this implementation against CUE's own test corpus (the inline
//! `@test(eq, ...)` comparison included); its tests of internals are unit tests beside the
//! code. What is here only makes sense for measuring and fuzzing the implementation:
//!
//! * the syntax tree and its tools ([`ast`], [`lexer`], [`literal`], [`parse`],
//!   [`format`](mod@format), [`check_parser`], [`check_lexer`]), which the fuzz targets and
//!   benchmarks drive;
//! * the evaluator's and the loader's own entry points ([`Instance`], [`export_at`], [`load`],
//!   [`LoadConfig`], [`Limits`]), for the benchmarks, which time them without the facade.
//!
//! Any of it may change in any release.

use crate::encode::Data;

pub use crate::decode::Limits;
pub use crate::eval::api::Instance;
pub use crate::lexer::check_lexer;
pub use crate::load::{Config as LoadConfig, load};
pub use crate::parser::{check_parser, parse};
pub use crate::syntax::{ast, format, lexer, literal};

/// The value at `path` (labels, as [`Instance::lookup`] takes them) of `inst`, as `cue export -e`
/// exports it, or the errors as `cue` prints them.
pub fn export_at(inst: &mut Instance, path: &[&str]) -> Result<Data, String> {
    crate::eval::print::export_path(inst, path).map_err(|e| crate::eval::api::format_errors(&e))
}
