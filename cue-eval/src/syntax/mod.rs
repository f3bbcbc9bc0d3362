//! The CUE front end: the lexer ([`lexer`], logos, modal for interpolation), the parser
//! (`grammar.lalrpop` and `parser.rs`, LALRPOP, recovering), the syntax tree ([`ast`]), literal
//! decoding ([`literal`]), quoting as Go and CUE do (`quote`), the `cue fmt` layout ([`format`](mod@format)), the structural tree dump
//! ([`dump`]), source files and positions ([`source`]) and miette diagnostics ([`diagnostic`]).
//!
//! Embedders use [`Document`]: a parsed file to query and edit by field (labels, attributes,
//! values, doc comments, the outline of a schema) without walking the syntax tree, to format,
//! and to compare by its structural dump.

// The syntax tree and its tools are crate-private; the `testing` feature opens them to this
// project's conformance runners, benchmarks and fuzz targets through `crate::testing`.
#[cfg(feature = "testing")]
pub mod ast;
#[cfg(not(feature = "testing"))]
pub(crate) mod ast;
mod attrs;
pub mod diagnostic;
pub(crate) mod dump;
#[cfg(feature = "testing")]
pub mod format;
#[cfg(not(feature = "testing"))]
pub(crate) mod format;
#[cfg(feature = "testing")]
pub mod lexer;
#[cfg(not(feature = "testing"))]
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) mod lexer;
#[cfg(feature = "testing")]
pub mod literal;
#[cfg(not(feature = "testing"))]
pub(crate) mod literal;
#[cfg_attr(not(any(test, feature = "testing")), allow(dead_code))]
pub(crate) mod parser;
mod query;
pub(crate) mod quote;
pub mod source;

/// Label and string quoting as CUE writes them: whether a label needs quotes, and a
/// double-quoted string with Go's escapes.
pub use crate::eval::label::{is_identifier, quote};
pub use attrs::{AttrElement, attribute_elements, unquote};
pub use query::{
    AttrText, Document, FieldConstraint, FieldDecl, Member, Outline, OutlineField, StructValue,
    is_number_literal, one_line,
};
