//! What the `timoni project` commands do on a cluster, apart from the CLI's argument parsing and
//! printing: [`bootstrap`] builds the objects that subscribe a cluster to a Project and installs
//! the controller (its CRD and the embedded `timoni-controller` module), and [`ops`] reads and
//! nudges Projects (list, status, events, reconcile requests, suspend/resume, delete);
//! [`sequence`] runs `timoni project bootstrap` from start to end.
//!
//! Everything reaches the API server through the blocking [`crate::cluster::Cluster`] trait.

pub mod bootstrap;
pub mod ops;
pub mod sequence;

use std::fmt;

use crate::cluster::ClusterError;
use crate::cluster::apply::ApplyError;

/// Why a Project administration step failed.
#[derive(Debug)]
pub enum AdminError {
    /// A cluster call failed; `what` says which.
    Cluster { what: String, err: ClusterError },
    /// The Project (or another object) does not exist.
    NotFound(String),
    /// A flag or value is invalid.
    Invalid(String),
    /// A wait ran out of time.
    Timeout(String),
    /// Applying the controller module failed.
    Apply(ApplyError),
    /// Writing the embedded module failed.
    Io(String),
    /// A registry request failed (pushing the Project, resolving the controller image).
    Registry(String),
}

impl fmt::Display for AdminError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AdminError::Cluster { what, err } => write!(f, "{what}: {err}"),
            AdminError::NotFound(m)
            | AdminError::Invalid(m)
            | AdminError::Timeout(m)
            | AdminError::Io(m)
            | AdminError::Registry(m) => f.write_str(m),
            AdminError::Apply(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for AdminError {}

pub(crate) fn cerr(what: impl Into<String>) -> impl FnOnce(ClusterError) -> AdminError {
    let what = what.into();
    move |err| {
        match err {
        ClusterError::UnknownKind { ref kind, .. } if kind == "Project" => AdminError::NotFound(
            "the Project CRD (projects.timoni.sh) is not installed on this cluster: run `timoni project bootstrap` first"
                .into(),
        ),
        err => AdminError::Cluster { what, err },
    }
    }
}
