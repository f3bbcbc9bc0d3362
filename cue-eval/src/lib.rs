//! `cue-eval`: a pure-Rust implementation of the CUE configuration language (v0.17.1).
//!
//! This crate knows nothing of Timoni, Kubernetes, async runtimes or command lines.
//!
//! # Embedding
//!
//! A [`Context`] compiles CUE text and Rust values; a [`Loader`] (from [`Context::loader`])
//! loads a package from disk as `cue export` does, with its module, imports, `-t` tags, `@if`
//! flags and an overlay of files held in memory. Both give a [`Value`], evaluated on demand:
//!
//! * look into it: [`Value::lookup`] (`a.b."x-y".0`), [`Value::fields`] in CUE's order,
//!   [`Value::kind`], [`Value::default`], [`Value::is_concrete`], [`Value::attributes`],
//!   [`Value::positions`];
//! * combine it: [`Value::unify`] (`a & b`, closedness of definitions kept) and [`Value::fill`]
//!   (a Rust value placed at a path);
//! * check it: [`Value::validate`] (permanent errors, and concreteness on request, as
//!   `cue vet [-c]`); ask what Go's `cue.Value` answers: [`Value::err`] (with each error's
//!   [`ErrorCode`]), [`Value::incomplete_kind`], [`Value::is_closed`], [`Value::allows`],
//!   [`Value::equals`], with [`Selector`] paths ([`Value::lookup_selectors`]), and the parts
//!   Go's `Expr` gives: [`Value::disjuncts`], [`Value::constraints`]; compile an expression
//!   beside it to compare with ([`Value::compile_expr`]);
//! * convert it: [`Value::decode`] into any `serde` type, [`Context::encode`] from one,
//!   [`Value::to_json`] and [`Value::to_yaml`] write exactly what `cue export` writes.
//!
//! Every failure is an [`Error`]: a list of errors, each with its CUE path, message and
//! positions, printed as `cue` prints them (and a `miette::Diagnostic` with the `miette`
//! feature).
//!
//! ```
//! use cue_eval::{Context, ValidateOptions};
//!
//! #[derive(serde::Deserialize)]
//! struct Service { name: String, port: u16 }
//!
//! let ctx = Context::new();
//! let schema = ctx.compile_str(r#"
//! #Service: {
//!     name: =~"^[a-z]+$"
//!     port: int & >0 & <65536 | *8080
//! }
//! "#)?;
//! let svc = schema.lookup("#Service")?.unify(&ctx.compile_data("svc.yaml", "name: web\n")?)?;
//! svc.validate(ValidateOptions { concrete: true, ..Default::default() })?;
//! let s: Service = svc.decode()?;
//! assert_eq!((s.name.as_str(), s.port), ("web", 8080));
//!
//! let bad = schema.lookup("#Service")?.unify(&ctx.compile_data("svc.yaml", "name: Web\nx: 1\n")?)?;
//! let err = bad.validate(ValidateOptions::default()).unwrap_err();
//! assert_eq!(err.errors().len(), 2);
//! # Ok::<(), cue_eval::Error>(())
//! ```
//!
//! [`syntax::Document`] queries and edits one file by field (labels, attributes, values, the
//! outline a schema writes) without walking the syntax tree; it also formats the file and dumps
//! its structure for comparisons; [`syntax::attribute_elements`] and [`syntax::unquote`] read
//! attribute bodies and string literals as CUE does. `examples/validate_yaml.rs` and
//! `examples/decode_package.rs` are two complete programs; `docs/embedding.md` describes the
//! design.
//!
//! # Public surface
//!
//! Besides the facade, the crate offers what a formatter or an editor needs of the syntax
//! ([`format_source`], [`ParseError`], [`source::SourceFile`], [`diagnostic::Diagnostic`]) and
//! the JSON and YAML codecs ([`encode`], [`decode`]). The front end (lexer, parser, syntax tree,
//! formatter, dump), the evaluator and the package loader are private to the crate; the
//! `testing` cargo feature opens a part of them to this project's benchmarks and fuzz targets
//! as `cue_eval::testing`, which semantic versioning does not cover (the conformance runners use
//! the public surface alone; the crate's own tests of internals are unit tests).

// The module docs of the internals point at the private items that implement what they describe.
#![allow(rustdoc::private_intra_doc_links)]
// Every public item is documented; the `testing` door opens internals that are not part of the
// public surface and are not held to it.
#![cfg_attr(not(feature = "testing"), warn(missing_docs))]

// Some items of the evaluator, the loader and the syntax tools are used only by the crate's unit
// tests, so a library build would call them dead; the test build (`cargo clippy --all-targets`)
// still reports dead code there.
pub mod decode;
pub mod encode;
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) mod eval;
mod facade;
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) mod load;
pub(crate) mod num;
pub(crate) mod stack;
pub mod syntax;
#[cfg(feature = "testing")]
pub mod testing;

use syntax::parser;
pub(crate) use syntax::{ast, dump, format, lexer, literal};
pub use syntax::{diagnostic, source};

pub use facade::{
    Context, Disjunct, DocumentLoads, Error, ErrorCode, ErrorItem, ErrorKind, Field, FieldKind,
    FieldOptions, ImportShare, Kind, Loader, ParseCache, Position, Presence, Result, Selector,
    ValidateOptions, Value,
};
pub use load::{AttrArg, Attribute};
pub use parser::ParseError;
pub(crate) use parser::{parse, parse_ranges, parse_with};

/// Frees the memory this thread keeps for its next evaluation (the vertex chunks of graphs that
/// went away, at most 1.7 MB). A thread that evaluated once and now leaves the work to others
/// calls it, so that what it kept can go back to the system.
pub fn release_thread_memory() {
    eval::release_spare_chunks();
}

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
