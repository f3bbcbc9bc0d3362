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
    /// CUE loading or evaluation failed; the text is what `cue` prints (paths and positions).
    Cue(String),
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
            Error::Cue(_) => Error::Cue(message),
            _ => Error::Bundle(message),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io { path, msg } => write!(f, "{path}: {msg}"),
            Error::Module(m)
            | Error::Cue(m)
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
