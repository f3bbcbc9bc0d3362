//! The `projects.timoni.sh/v1alpha1` `Project` custom resource, as the Project specification
//! (seed 000) defines it, plus what operators expect of a GitOps resource: an interval, a
//! timeout, suspension, retry bounds, and a status with conditions, the applied artifact digest
//! and per-component results. The CRD is generated from these types (`crdgen`) and checked in.
//!
//! Durations are strings in Go's `time.ParseDuration` spelling (`30s`, `5m`, `1h30m`), as in
//! Flux and Timoni; [`parse_duration`] reads them.

use std::time::Duration;

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The API group.
pub const GROUP: &str = "projects.timoni.sh";
/// The API version.
pub const VERSION: &str = "v1alpha1";
/// `apiVersion` of a Project.
pub const API_VERSION: &str = "projects.timoni.sh/v1alpha1";
/// The finalizer that uninstalls a Project's instances before it goes.
pub const FINALIZER: &str = "projects.timoni.sh/finalizer";
/// The cluster name injected as `TIMONI_CLUSTER_NAME` into components without a runtime.
pub const CLUSTER_ANNOTATION: &str = "runtime.timoni.sh/cluster";
/// The cluster group injected as `TIMONI_CLUSTER_GROUP` into components without a runtime.
pub const GROUP_ANNOTATION: &str = "runtime.timoni.sh/group";
/// Any change of its value triggers a reconcile (`timoni project reconcile` sets it to now).
pub const REQUESTED_AT_ANNOTATION: &str = "reconcile.timoni.sh/requestedAt";
/// `"true"`: deleting the Project leaves what it installed in place.
pub const ORPHAN_ANNOTATION: &str = "projects.timoni.sh/orphan";
/// The label that marks the instances (inventory Secrets) a Project installed:
/// `<namespace>.<name>` of the Project.
pub const PROJECT_LABEL: &str = "projects.timoni.sh/project";

/// The default `spec.interval`.
pub const DEFAULT_INTERVAL: &str = "10m";
/// The default `spec.timeout`.
pub const DEFAULT_TIMEOUT: &str = "5m";
/// The default `spec.retry.minBackoff`.
pub const DEFAULT_MIN_BACKOFF: &str = "5s";
/// The default `spec.retry.maxBackoff`.
pub const DEFAULT_MAX_BACKOFF: &str = "5m";

/// A Timoni Project deployed to this cluster from an OCI artifact.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "projects.timoni.sh",
    version = "v1alpha1",
    kind = "Project",
    namespaced,
    status = "ProjectStatus",
    shortname = "proj",
    printcolumn = r#"{"name":"Ready","type":"string","jsonPath":".status.conditions[?(@.type==\"Ready\")].status"}"#,
    printcolumn = r#"{"name":"Status","type":"string","jsonPath":".status.conditions[?(@.type==\"Ready\")].message","priority":1}"#,
    printcolumn = r#"{"name":"Digest","type":"string","jsonPath":".status.lastAppliedDigest"}"#,
    printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct ProjectSpec {
    /// The service account whose image pull secrets authenticate to the registries and which
    /// the controller impersonates for every cluster operation of this Project.
    pub service_account_name: String,
    /// Where the Project's artifact comes from.
    pub source: ProjectSource,
    /// How often the artifact is checked and the instances' health verified (default `10m`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<String>,
    /// How long one instance may take to apply and become healthy (default `5m`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<String>,
    /// When true, the controller does not reconcile the Project.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub suspend: bool,
    /// The exponential backoff between failed reconciles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry: Option<RetrySpec>,
    /// What to do every interval when the artifact did not change and live objects differ
    /// from what was applied: `Correct` (default) re-applies them, `Report` only records a
    /// `DriftDetected` Event, `Disabled` checks nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "drift_schema")]
    pub drift: Option<DriftMode>,
    /// When set, the signatures of the artifact and of the modules it pulls are verified
    /// before they are used; a failure leaves everything applied as it was (`Ready=False`,
    /// reason `VerificationFailed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<VerifySpec>,
}

/// `spec.drift` as a plain string enum: the `null` member schemars adds for an optional enum
/// is refused by API servers.
fn drift_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"type": "string", "enum": ["Correct", "Report", "Disabled"]})
}

/// `spec.drift`.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub enum DriftMode {
    #[default]
    Correct,
    Report,
    Disabled,
}

/// Signature verification of a Project's artifact, as Flux's `OCIRepository.spec.verify`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VerifySpec {
    /// The verification provider: `cosign`.
    pub provider: String,
    /// A Secret in the Project's namespace. With public keys (its `*.pub` entries), a signature
    /// by any of them is accepted. For keyless verification it holds the Sigstore trust root
    /// in its `trusted_root.json` entry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<SecretRef>,
    /// Keyless verification: a signature is accepted when its Fulcio certificate's OIDC
    /// issuer and subject match one of these pairs of regular expressions.
    #[serde(
        default,
        rename = "matchOIDCIdentity",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub match_oidc_identity: Vec<OidcIdentityMatch>,
}

/// A Secret of the Project's namespace.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct SecretRef {
    pub name: String,
}

/// An OIDC identity accepted for keyless signatures: regular expressions for the issuer and
/// the subject (the certificate's identity).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct OidcIdentityMatch {
    pub issuer: String,
    pub subject: String,
}

/// The OCI artifact of a Project.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProjectSource {
    /// `oci://registry/repository`.
    pub repository: String,
    /// The tag watched (default `latest`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
    /// The Project file inside the artifact (default `project.cue`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

/// Retry bounds: the first retry waits `minBackoff`, each next one twice as long, up to
/// `maxBackoff`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RetrySpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_backoff: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_backoff: Option<String>,
}

/// What the controller observed and did.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProjectStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// `Ready`, `Reconciling` and `Stalled`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// The artifact digest last applied successfully.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_applied_digest: Option<String>,
    /// The artifact digest of the last attempt, successful or not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_attempted_digest: Option<String>,
    /// The value of `reconcile.timoni.sh/requestedAt` last handled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_handled_reconcile_at: Option<String>,
    /// One entry per component of the Project, in the Project file's order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub components: Vec<ComponentStatus>,
}

/// A condition, as in `metav1.Condition`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    #[serde(rename = "type")]
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    pub status: String,
    /// RFC 3339.
    pub last_transition_time: String,
    pub reason: String,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}

/// The result of one component.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ComponentStatus {
    pub name: String,
    /// `Pending`, `Progressing`, `Ready`, `Failed` or `Blocked` (a component it needs failed).
    pub phase: String,
    /// RFC 3339 time the current (or last) apply of the component started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    /// The Project artifact digest the current (or last) apply comes from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// RFC 3339 time of the last successful apply (kept across failed runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_applied_time: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub instances: Vec<InstanceRef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// An instance a component applied.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InstanceRef {
    pub name: String,
    pub namespace: String,
    /// `oci://...` or a local path.
    pub module_url: String,
    pub module_version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub module_digest: Option<String>,
}

impl ProjectSpec {
    /// The tag watched.
    pub fn tag(&self) -> &str {
        self.source
            .tag
            .as_deref()
            .filter(|t| !t.is_empty())
            .unwrap_or("latest")
    }

    /// The Project file inside the artifact.
    pub fn path(&self) -> &str {
        self.source
            .path
            .as_deref()
            .filter(|t| !t.is_empty())
            .unwrap_or("project.cue")
    }

    /// `spec.interval`, checked.
    pub fn interval(&self) -> Result<Duration, String> {
        parse_duration(self.interval.as_deref().unwrap_or(DEFAULT_INTERVAL))
    }

    /// `spec.timeout`, checked.
    pub fn timeout(&self) -> Result<Duration, String> {
        parse_duration(self.timeout.as_deref().unwrap_or(DEFAULT_TIMEOUT))
    }

    /// `(minBackoff, maxBackoff)`, checked.
    pub fn backoff(&self) -> Result<(Duration, Duration), String> {
        let r = self.retry.clone().unwrap_or_default();
        let min = parse_duration(r.min_backoff.as_deref().unwrap_or(DEFAULT_MIN_BACKOFF))?;
        let max = parse_duration(r.max_backoff.as_deref().unwrap_or(DEFAULT_MAX_BACKOFF))?;
        Ok((min, max.max(min)))
    }
}

/// The wait before retry number `failures` (1 for the first): `min * 2^(failures-1)`, at most
/// `max`.
pub fn backoff(min: Duration, max: Duration, failures: u32) -> Duration {
    let factor = 1u32
        .checked_shl(failures.saturating_sub(1))
        .unwrap_or(u32::MAX);
    min.checked_mul(factor).unwrap_or(max).min(max)
}

/// Parses a Go duration: a sequence of decimal numbers with units `ns`, `us`, `µs`, `ms`, `s`,
/// `m`, `h` (`1h30m`, `1.5s`, `300ms`). Negative durations are refused.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let err = || format!("invalid duration {s:?}: expected e.g. 30s, 5m or 1h30m");
    if s == "0" {
        return Ok(Duration::ZERO);
    }
    let mut rest = s;
    let mut total = 0f64;
    if rest.is_empty() {
        return Err(err());
    }
    while !rest.is_empty() {
        let n = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(err)?;
        if n == 0 {
            return Err(err());
        }
        let value: f64 = rest[..n].parse().map_err(|_| err())?;
        rest = &rest[n..];
        let u = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let unit = match &rest[..u] {
            "ns" => 1e-9,
            "us" | "µs" => 1e-6,
            "ms" => 1e-3,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            _ => return Err(err()),
        };
        rest = &rest[u..];
        total += value * unit;
    }
    Duration::try_from_secs_f64(total).map_err(|_| err())
}

/// The label value that marks what a Project installed (see [`PROJECT_LABEL`]).
pub fn project_label_value(namespace: &str, name: &str) -> String {
    format!("{namespace}.{name}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::{CustomResourceExt, Resource};

    #[test]
    fn durations_parse_like_go() {
        assert_eq!(parse_duration("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("1h30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("300ms"), Ok(Duration::from_millis(300)));
        assert_eq!(parse_duration("0"), Ok(Duration::ZERO));
        for bad in ["", "5", "m", "5x", "-5s", "5s3"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn backoff_doubles_up_to_the_bound() {
        let (min, max) = (Duration::from_secs(5), Duration::from_secs(60));
        let waits: Vec<u64> = (1..=6).map(|n| backoff(min, max, n).as_secs()).collect();
        assert_eq!(waits, [5, 10, 20, 40, 60, 60]);
        assert_eq!(backoff(min, max, 200), max);
    }

    #[test]
    fn the_seed_example_deserializes() {
        let p: Project = serde_yaml_ng::from_str(
            r#"
apiVersion: projects.timoni.sh/v1alpha1
kind: Project
metadata:
  name: my-project
  namespace: my-project-ns
  annotations:
    runtime.timoni.sh/cluster: "k8s-prod-1"
    runtime.timoni.sh/group: "production"
spec:
  serviceAccountName: "my-project-sa"
  source:
    repository: "oci://my-registry/my-project"
    tag: "production"
    path: "project.cue"
"#,
        )
        .unwrap();
        assert_eq!(p.spec.service_account_name, "my-project-sa");
        assert_eq!(p.spec.tag(), "production");
        assert_eq!(p.spec.interval(), Ok(Duration::from_secs(600)));
        assert_eq!(Project::api_version(&()), API_VERSION);
        let crd = Project::crd();
        assert_eq!(
            crd.metadata.name.as_deref(),
            Some("projects.projects.timoni.sh")
        );
    }
}
