//! Runners for the shared conformance corpus: the CUE v0.17.1 language and standard-library cases
//! and the Timoni modules, with the outputs of the official tools as the oracle.
//!
//! The corpus is data outside the repository ([`corpus::locate`]). This library reads it
//! ([`txtar`], [`corpus`]), interprets the oracle's outputs ([`oracle`]), runs checks on this
//! project's implementation ([`parse`]) and compares their figures with the committed floors
//! ([`ratchet`]). It returns data only: the `conformance` binary and the integration tests print.
//!
//! The evaluation checks ([`export`], with the inline `@test` assertions of [`inline`]) do not
//! depend on any evaluator: they drive an [`engine::Engine`], chosen by [`engine::selected`].
//!
//! The Timoni module check ([`timoni`]) loads each module with `cue_eval`'s `Loader` and exports it
//! as the oracle did, plain and with Timoni's schema overlay. The wild check ([`wild`]) does the
//! same for real modules by other authors, through the code of `timoni cue export`, and compares
//! exit status, stdout and the first error.
//!
//! The differential check ([`diff`]) needs no corpus: it generates small CUE programs and
//! compares our export of each with an oracle `cue` binary's.

pub mod corpus;
pub mod cue_engine;
pub mod diff;
pub mod engine;
pub mod export;
pub mod inline;
pub mod inline_eq;
pub mod json;
pub mod oracle;
pub mod parse;
pub mod ratchet;
pub mod timoni;
pub mod txtar;
pub mod wild;
