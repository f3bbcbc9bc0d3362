//! A door into the crate for its own conformance runners, benchmarks and fuzz targets, behind
//! the `testing` cargo feature and **not covered by semantic versioning**.
//!
//! Embedders use the facade ([`crate::Context`], [`crate::Value`], [`crate::Error`],
//! [`crate::syntax::Document`]), and so do the crate's integration tests; its tests of internals
//! are unit tests beside the code. What is here only makes sense for checking this
//! implementation against CUE's own test corpus and for measuring it:
//!
//! * the syntax tree and its tools ([`ast`], [`lexer`], [`literal`], [`parse`],
//!   [`format`](mod@format), [`check_parser`], [`check_lexer`]), which the fuzz targets and
//!   benchmarks drive;
//! * [`inline_equal`], the comparison of CUE's inline `@test(eq, ...)` assertions, which is
//!   upstream's test harness's rather than `cue.Value.Equals`;
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

/// Whether `value` equals the CUE expression `expr` evaluated on its own in the value's
/// instance, as upstream's inline test harness compares them (`@test(eq, expr)`): a struct
/// whose own error is only incomplete compares by its fields, an open list by its elements,
/// and a hidden field `_x` of package `package` may be written `_x$package` in `expr`. The
/// error says what each side is when they differ.
///
/// This is not `cue.Value.Equals` ([`crate::Value::equals`]): it is the harness's notion,
/// which answers CUE's own test corpus and nothing an embedder asks.
pub fn inline_equal(value: &crate::Value, expr: &str, package: Option<&str>) -> Result<(), String> {
    let mut sh = value.sh.borrow_mut();
    let inst = &mut sh.inst;
    inst.rt.finalize(value.v, true);
    let e = inst.eval_expr_text(expr)?;
    if inst.rt.vertices_equal_inline_in(value.v, e, package) {
        Ok(())
    } else {
        Err(format!(
            "got {}, want {}",
            inst.rt.vertex_text(value.v),
            inst.rt.vertex_text(e)
        ))
    }
}

/// The value at `path` (labels, as [`Instance::lookup`] takes them) of `inst`, as `cue export -e`
/// exports it, or the errors as `cue` prints them.
pub fn export_at(inst: &mut Instance, path: &[&str]) -> Result<Data, String> {
    crate::eval::print::export_path(inst, path).map_err(|e| crate::eval::api::format_errors(&e))
}
