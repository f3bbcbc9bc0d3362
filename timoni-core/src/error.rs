//! The errors of building instances and bundles. Each variant renders as one clear message that
//! names the file, position or CUE path concerned; the CLI prints it as is.

use std::fmt;
use std::path::Path;

/// An error of the offline workflow (module loading, values, evaluation, bundles, runtimes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// A file could not be read.
    Io { path: String, msg: String },
    /// The module directory does not hold what a Timoni module needs.
    Module(String),
    /// A values file could not be read, parsed or merged.
    Values { file: String, msg: String },
    /// CUE loading or evaluation failed: each error with its CUE path, message and positions
    /// (printed as `cue` prints them).
    Cue(CueError),
    /// The built objects are not valid Kubernetes objects (aggregated, with CUE paths).
    Objects(Vec<String>),
    /// A bundle or runtime file is invalid.
    Bundle(String),
    /// An `oci://` module could not be fetched (registry, cache, digest or offline errors).
    Fetch(String),
    /// An `oci://` module's signature does not satisfy the verification policy.
    Verification(String),
    /// A feature this build does not offer yet.
    Unsupported(String),
}

/// CUE errors and what was being done when they happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CueError {
    /// What was being done, outermost first (`build failed for app`); printed before the
    /// errors, each followed by `: `.
    pub context: Vec<String>,
    /// The errors, with their CUE paths, messages and positions.
    pub error: cue_eval::Error,
}

impl CueError {
    /// The errors without context.
    pub fn new(error: cue_eval::Error) -> CueError {
        CueError {
            context: Vec::new(),
            error,
        }
    }

    /// One error that is a message alone (no CUE path or position).
    pub fn msg(message: impl Into<String>) -> CueError {
        CueError::new(cue_eval::Error::msg(message))
    }

    /// One error about the value at a CUE path.
    pub fn at_path(path: &str, message: impl Into<String>) -> CueError {
        CueError::new(cue_eval::Error::at_path(path, message))
    }

    /// The error with `context` before the existing one.
    pub fn in_context(mut self, context: impl Into<String>) -> CueError {
        self.context.insert(0, context.into());
        self
    }
}

impl From<cue_eval::Error> for Error {
    fn from(e: cue_eval::Error) -> Error {
        Error::Cue(CueError::new(e))
    }
}

impl fmt::Display for CueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for c in &self.context {
            write!(f, "{c}: ")?;
        }
        write!(f, "{}", self.error)
    }
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub(crate) fn io(path: &Path, e: std::io::Error) -> Error {
        Error::Io {
            path: path.display().to_string(),
            msg: e.to_string(),
        }
    }
}

impl Error {
    /// The error prefixed with `context` (`context: error`), as a bundle error, except that a
    /// verification failure stays one (the controller reports it with its own reason).
    pub(crate) fn in_context(self, context: &str) -> Error {
        let message = format!("{context}: {self}");
        match self {
            Error::Verification(_) => Error::Verification(message),
            Error::Fetch(_) => Error::Fetch(message),
            Error::Cue(e) => Error::Cue(e.in_context(context)),
            _ => Error::Bundle(message),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io { path, msg } => write!(f, "{path}: {msg}"),
            Error::Cue(e) => write!(f, "{e}"),
            Error::Module(m)
            | Error::Bundle(m)
            | Error::Fetch(m)
            | Error::Verification(m)
            | Error::Unsupported(m) => f.write_str(m.trim_end()),
            Error::Values { msg, .. } => f.write_str(msg.trim_end()),
            Error::Objects(errs) => f.write_str(&errs.join("\n")),
        }
    }
}

impl std::error::Error for Error {}
