//! `cue-eval`: a pure-Rust implementation of the CUE configuration language (v0.17.1).
//!
//! This crate knows nothing of Timoni, Kubernetes, async runtimes or command lines. It holds the
//! front end ([`lexer`], [`parse`], [`format`], [`diagnostic`]), the evaluator and export
//! ([`eval`]), the package loader with overlays, tags and attributes ([`load`]), and the JSON and
//! YAML codecs ([`decode`], [`encode`]).

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

pub use parser::{ParseError, check_parser, parse, parse_bytes, parse_ranges, parse_with};

/// The CUE language version this crate implements, as a module declares it
/// (`language: version: "v0.17.1"` in `cue.mod/module.cue`).
pub const LANGUAGE_VERSION: &str = "v0.17.1";

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
