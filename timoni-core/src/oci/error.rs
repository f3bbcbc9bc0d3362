//! The one error type of OCI operations: every variant names what failed (a path, a reference,
//! a digest) so that the CLI can print one clear line.

use std::path::PathBuf;

/// Result of OCI operations.
pub type Result<T, E = OciError> = std::result::Result<T, E>;

/// What went wrong while building, pushing, pulling or extracting an artifact.
#[derive(Debug, thiserror::Error)]
pub enum OciError {
    /// The `oci://` URL, tag or digest does not parse.
    #[error("invalid artifact URL {url:?}: {reason}")]
    InvalidUrl { url: String, reason: String },
    /// A local file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The registry refused or failed a request.
    #[error("{op} {reference}: {message}")]
    Registry {
        op: &'static str,
        reference: String,
        message: String,
    },
    /// Content does not hash to the digest that names it.
    #[error("digest mismatch for {what}: expected {expected}, got {actual}")]
    DigestMismatch {
        what: String,
        expected: String,
        actual: String,
    },
    /// The manifest pulled for a version is not the one pinned with a digest (Timoni's wording).
    #[error(
        "the upstream digest {upstream} of version {version} doesn't match the specified digest {specified}"
    )]
    VersionDigestMismatch {
        upstream: String,
        version: String,
        specified: String,
    },
    /// A layer entry would write outside the target or is of a forbidden kind.
    #[error("refusing layer entry {entry:?}: {reason}")]
    UnsafeEntry { entry: String, reason: String },
    /// A layer is larger than the configured limit.
    #[error("{what} exceeds the size limit of {limit} bytes")]
    TooLarge { what: String, limit: u64 },
    /// The manifest or config is not a Timoni artifact, or the module layout is wrong.
    #[error("{0}")]
    InvalidArtifact(String),
    /// A version, tag, annotation or filter given by the user is malformed.
    #[error("{0}")]
    InvalidInput(String),
    /// Network access is off and the local cache does not hold what is needed.
    #[error(
        "{reference} is not available offline (not in the local OCI cache {cache}); network access is disabled: allow it with --allow-network, or pull the module once with network access"
    )]
    Offline { reference: String, cache: String },
    /// A signing key, public key or trusted root could not be read or used.
    #[error("{0}")]
    SigningKey(String),
    /// Signing an artifact failed.
    #[error("signing {reference} failed: {reason}")]
    Signing { reference: String, reason: String },
    /// No signature of the artifact satisfies the verification policy.
    #[error("verifying {reference} failed: {reason}")]
    Verification { reference: String, reason: String },
    /// Credentials could not be read, parsed or stored.
    #[error("credentials: {0}")]
    Credentials(String),
}

impl OciError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        OciError::Io {
            path: path.into(),
            source,
        }
    }
}

/// An error with its causes, `: `-joined (reqwest keeps the useful part in the sources).
pub(crate) fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        s.push_str(": ");
        s.push_str(&cause.to_string());
        source = cause.source();
    }
    s
}
