//! The cluster side of Timoni: the small blocking [`Cluster`] trait through which everything
//! reaches a Kubernetes API server, its implementation over `kube` ([`kube::KubeCluster`]), the
//! inventory Secret ([`inventory`]), readiness ([`status`], and the module's CUE checks in
//! [`health`]), and the operations built on them: [`apply`] (`timoni apply`), [`ops`]
//! (`delete`, `status`, `list`, `inspect`), [`bundle`] (bundles across the clusters of a
//! runtime) and [`runtime_values`] (runtime values read from clusters).
//!
//! Objects travel as JSON values. The trait is deliberately small (seven calls) so that tests can
//! wrap it, e.g. to fail the Nth call and check that a re-run converges.

pub mod apply;
pub mod bundle;
pub mod health;
pub mod inventory;
pub mod kube;
pub mod ops;
pub mod runtime_values;
pub mod status;

use std::fmt;

pub use serde_json::Value as Object;

/// The field manager of every server-side apply.
pub const FIELD_MANAGER: &str = "timoni";

/// Where an object lives: enough to get or delete it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObjRef {
    pub api_version: String,
    pub kind: String,
    /// Empty for cluster-scoped objects.
    pub namespace: String,
    pub name: String,
}

impl ObjRef {
    /// The reference of an object (missing fields are empty).
    pub fn of(obj: &Object) -> ObjRef {
        let s = |p: &str| {
            obj.pointer(p)
                .and_then(|v| v.as_str())
                .unwrap_or("")
                .to_string()
        };
        ObjRef {
            api_version: s("/apiVersion"),
            kind: s("/kind"),
            namespace: s("/metadata/namespace"),
            name: s("/metadata/name"),
        }
    }

    /// The API group (`apps` of `apps/v1`, empty for the core group).
    pub fn group(&self) -> &str {
        self.api_version.split_once('/').map_or("", |(g, _)| g)
    }

    /// The version without the group.
    pub fn version(&self) -> &str {
        self.api_version
            .split_once('/')
            .map_or(self.api_version.as_str(), |(_, v)| v)
    }
}

impl fmt::Display for ObjRef {
    /// `Kind/namespace/name`, or `Kind/name` for cluster-scoped objects, as Timoni logs them.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.namespace.is_empty() {
            write!(f, "{}/{}", self.kind, self.name)
        } else {
            write!(f, "{}/{}/{}", self.kind, self.namespace, self.name)
        }
    }
}

/// What discovery says about a kind.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourceInfo {
    pub plural: String,
    pub namespaced: bool,
}

/// Server-side apply options.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ApplyOptions {
    /// A server dry run: nothing is persisted.
    pub dry_run: bool,
}

/// An error of a cluster call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ClusterError {
    /// The kubeconfig could not be read or used.
    Config(String),
    /// The API server answered with an error status.
    Api {
        code: u16,
        reason: String,
        message: String,
    },
    /// The kind is not served by the API server.
    UnknownKind { api_version: String, kind: String },
    /// The API server could not be reached, or the answer could not be read.
    Transport(String),
}

impl ClusterError {
    /// Whether the server refused a change of an immutable field (what `--force` recreates).
    pub fn is_immutable(&self) -> bool {
        matches!(self, ClusterError::Api { code: 422, message, .. }
            if message.contains("immutable") || message.contains("Forbidden: updates to"))
    }

    /// Whether the object was not found.
    pub fn is_not_found(&self) -> bool {
        matches!(self, ClusterError::Api { code: 404, .. })
    }
}

impl fmt::Display for ClusterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClusterError::Config(m) => write!(f, "kubeconfig: {m}"),
            ClusterError::Api { message, .. } => f.write_str(message),
            ClusterError::UnknownKind { api_version, kind } => {
                write!(f, "no matches for kind {kind:?} in version {api_version:?}")
            }
            ClusterError::Transport(m) => write!(f, "cannot reach the cluster: {m}"),
        }
    }
}

impl std::error::Error for ClusterError {}

/// The requests Timoni makes to an API server. Implementations do no Timoni logic.
pub trait Cluster {
    /// The server's Kubernetes version, e.g. `1.20.2`.
    fn server_version(&self) -> Result<String, ClusterError>;
    /// Discovery for a kind.
    fn resource(&self, api_version: &str, kind: &str) -> Result<ResourceInfo, ClusterError>;
    /// Server-side apply with field manager `timoni` and forced ownership; returns the object
    /// as the server stored it (or would, in a dry run).
    fn apply(&self, obj: &Object, opts: ApplyOptions) -> Result<Object, ClusterError>;
    /// The live object, if any.
    fn get(&self, r: &ObjRef) -> Result<Option<Object>, ClusterError>;
    /// Deletes an object with background propagation; `Ok(false)` when it did not exist.
    fn delete(&self, r: &ObjRef, dry_run: bool) -> Result<bool, ClusterError>;
    /// A JSON merge patch (RFC 7386) of an object, e.g. to drop annotations of other tools.
    fn merge_patch(&self, r: &ObjRef, patch: &Object) -> Result<Object, ClusterError>;
    /// The objects of a kind matching a label selector, in one namespace or (empty) all.
    fn list(
        &self,
        api_version: &str,
        kind: &str,
        namespace: &str,
        selector: &str,
    ) -> Result<Vec<Object>, ClusterError>;
    /// Follows one object until `done` accepts a state of it (its current state first, then
    /// each change; `None` when it does not exist or was deleted), or until `timeout`. Returns
    /// whether `done` accepted one. The API server's watch does this without polling; this
    /// default reads the object every `poll`, for implementations without one.
    fn watch(
        &self,
        r: &ObjRef,
        timeout: std::time::Duration,
        poll: std::time::Duration,
        done: &mut dyn FnMut(Option<&Object>) -> bool,
    ) -> Result<bool, ClusterError> {
        let deadline = std::time::Instant::now() + timeout;
        loop {
            if done(self.get(r)?.as_ref()) {
                return Ok(true);
            }
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                return Ok(false);
            }
            std::thread::sleep(poll.min(left));
        }
    }
}

impl<C: Cluster + ?Sized> Cluster for &C {
    fn server_version(&self) -> Result<String, ClusterError> {
        (**self).server_version()
    }
    fn resource(&self, api_version: &str, kind: &str) -> Result<ResourceInfo, ClusterError> {
        (**self).resource(api_version, kind)
    }
    fn apply(&self, obj: &Object, opts: ApplyOptions) -> Result<Object, ClusterError> {
        (**self).apply(obj, opts)
    }
    fn get(&self, r: &ObjRef) -> Result<Option<Object>, ClusterError> {
        (**self).get(r)
    }
    fn delete(&self, r: &ObjRef, dry_run: bool) -> Result<bool, ClusterError> {
        (**self).delete(r, dry_run)
    }
    fn merge_patch(&self, r: &ObjRef, patch: &Object) -> Result<Object, ClusterError> {
        (**self).merge_patch(r, patch)
    }
    fn list(
        &self,
        api_version: &str,
        kind: &str,
        namespace: &str,
        selector: &str,
    ) -> Result<Vec<Object>, ClusterError> {
        (**self).list(api_version, kind, namespace, selector)
    }
    fn watch(
        &self,
        r: &ObjRef,
        timeout: std::time::Duration,
        poll: std::time::Duration,
        done: &mut dyn FnMut(Option<&Object>) -> bool,
    ) -> Result<bool, ClusterError> {
        (**self).watch(r, timeout, poll, done)
    }
}

/// A label of an object, if set.
pub fn label<'a>(obj: &'a Object, key: &str) -> Option<&'a str> {
    obj.get("metadata")?.get("labels")?.get(key)?.as_str()
}

/// An annotation of an object, if set.
pub fn annotation<'a>(obj: &'a Object, key: &str) -> Option<&'a str> {
    obj.get("metadata")?.get("annotations")?.get(key)?.as_str()
}
