//! The CUE front end: the lexer ([`lexer`], logos, modal for interpolation), the parser
//! (`grammar.lalrpop` and `parser.rs`, LALRPOP, recovering), the syntax tree ([`ast`]), literal
//! decoding ([`literal`]), the `cue fmt` layout ([`format`](mod@format)), the tree dump of the parser tests
//! ([`dump`]), source files and positions ([`source`]) and miette diagnostics ([`diagnostic`]).
//!
//! Embedders use [`Document`]: a parsed file to query and edit by field (labels, attributes,
//! values, doc comments, the outline of a schema) without walking the syntax tree.

pub mod ast;
pub mod diagnostic;
pub mod dump;
pub mod format;
pub mod lexer;
pub mod literal;
pub(crate) mod parser;
mod query;
pub mod source;

/// Label and string quoting as CUE writes them: whether a label needs quotes, and a
/// double-quoted string with Go's escapes.
pub use crate::eval::label::{is_identifier, quote};
pub use query::{
    AttrText, Document, FieldConstraint, FieldDecl, Outline, OutlineField, is_number_literal,
    one_line,
};
