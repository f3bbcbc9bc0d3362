//! `cue-eval`: a pure-Rust implementation of the CUE configuration language (v0.17.1).
//!
//! This crate knows nothing of Timoni, Kubernetes, async runtimes or command lines. Today it holds
//! the front end: [`lexer`] (tokens, automatic commas, interpolation), [`parse`] (a syntax tree
//! that is always produced, with every error collected), [`format`] (the canonical `cue fmt`
//! layout) and [`diagnostic`] (miette reports with file, line and column).

pub mod ast;
pub mod decode;
pub mod diagnostic;
pub mod dump;
pub mod encode;
pub mod eval;
pub mod format;
pub mod lexer;
pub mod literal;
pub mod load;
pub mod num;
mod parser;
pub mod source;
pub mod stack;

pub use parser::{ParseError, check_parser, parse, parse_bytes};

/// Parses `src` and formats it as `cue fmt` would. Returns the errors instead when the source does
/// not parse, since formatting a broken tree would lose text.
pub fn format_source(src: &str) -> Result<String, Vec<ParseError>> {
    let (file, errors) = parse(ast::FileId(0), src);
    if errors.is_empty() {
        Ok(format::format_file(&file, src))
    } else {
        Err(errors)
    }
}
