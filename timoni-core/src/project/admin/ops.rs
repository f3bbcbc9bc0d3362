//! Reading and nudging Projects on a cluster: `timoni project list|status|events` read the
//! `Project` objects and the core/v1 Events about them; `reconcile` sets the
//! `reconcile.timoni.sh/requestedAt` annotation (and may wait until the controller reports it
//! handled in `status.lastHandledReconcileAt`); `suspend`/`resume` flip `spec.suspend`; `delete`
//! deletes the Project (optionally marking it orphan first, so that the controller's finalizer
//! leaves its instances in place) and may wait until it is gone.

use std::time::Duration;

use serde_json::{Value, json};

use super::{AdminError, cerr};
use crate::cluster::{Cluster, ObjRef, Object};
use crate::project::api::{API_VERSION, ORPHAN_ANNOTATION, Project, REQUESTED_AT_ANNOTATION};

/// The reference of a Project.
pub fn project_ref(namespace: &str, name: &str) -> ObjRef {
    ObjRef {
        api_version: API_VERSION.into(),
        kind: "Project".into(),
        namespace: namespace.into(),
        name: name.into(),
    }
}

fn not_found(namespace: &str, name: &str) -> AdminError {
    AdminError::NotFound(format!(
        "project {name:?} not found in namespace {namespace:?}"
    ))
}

fn decode(obj: Object) -> Result<Project, AdminError> {
    let r = ObjRef::of(&obj);
    serde_json::from_value(obj)
        .map_err(|e| AdminError::Invalid(format!("{r}: not a valid Project: {e}")))
}

/// The Project `namespace/name`.
pub fn get_project(
    cluster: &dyn Cluster,
    namespace: &str,
    name: &str,
) -> Result<Project, AdminError> {
    let r = project_ref(namespace, name);
    match cluster.get(&r).map_err(cerr(format!("reading {r}")))? {
        Some(o) => decode(o),
        None => Err(not_found(namespace, name)),
    }
}

/// The Projects of a namespace, or of all (`""`), sorted by namespace and name.
pub fn list_projects(cluster: &dyn Cluster, namespace: &str) -> Result<Vec<Project>, AdminError> {
    let items = cluster
        .list(API_VERSION, "Project", namespace, "")
        .map_err(cerr("listing Projects"))?;
    let mut out = items
        .into_iter()
        .map(decode)
        .collect::<Result<Vec<_>, _>>()?;
    out.sort_by(|a, b| {
        (&a.metadata.namespace, &a.metadata.name).cmp(&(&b.metadata.namespace, &b.metadata.name))
    });
    Ok(out)
}

fn patch(
    cluster: &dyn Cluster,
    namespace: &str,
    name: &str,
    p: &Value,
) -> Result<Project, AdminError> {
    let r = project_ref(namespace, name);
    match cluster.merge_patch(&r, p) {
        Ok(o) => decode(o),
        Err(e) if e.is_not_found() => Err(not_found(namespace, name)),
        Err(e) => Err(cerr(format!("patching {r}"))(e)),
    }
}

/// Sets `reconcile.timoni.sh/requestedAt` to `at` (RFC 3339).
pub fn request_reconcile(
    cluster: &dyn Cluster,
    namespace: &str,
    name: &str,
    at: &str,
) -> Result<Project, AdminError> {
    patch(
        cluster,
        namespace,
        name,
        &json!({"metadata": {"annotations": {REQUESTED_AT_ANNOTATION: at}}}),
    )
}

/// Waits until the controller reports the request `at` handled; returns the Project then. The
/// Project is watched ([`Cluster::watch`]; `poll` only serves clusters that cannot watch), and a
/// suspended or deleted Project ends the wait at once.
pub fn wait_reconciled(
    cluster: &dyn Cluster,
    namespace: &str,
    name: &str,
    at: &str,
    timeout: Duration,
    poll: Duration,
) -> Result<Project, AdminError> {
    let mut outcome = None;
    let seen = |obj: Option<&Object>| -> Option<Result<Project, AdminError>> {
        let Some(obj) = obj else {
            return Some(Err(not_found(namespace, name)));
        };
        let p = match decode(obj.clone()) {
            Ok(p) => p,
            Err(e) => return Some(Err(e)),
        };
        let handled = p
            .status
            .as_ref()
            .and_then(|s| s.last_handled_reconcile_at.as_deref());
        if handled == Some(at) {
            return Some(Ok(p));
        }
        // The controller does not reconcile a suspended Project: say so now, not at the timeout.
        if p.spec.suspend {
            return Some(Err(AdminError::Invalid(format!(
                "project {namespace}/{name} is suspended: the controller reconciles it again after `timoni project resume {name} -n {namespace}`"
            ))));
        }
        None
    };
    cluster
        .watch(&project_ref(namespace, name), timeout, poll, &mut |obj| {
            outcome = seen(obj);
            outcome.is_some()
        })
        .map_err(cerr(format!("watching project {namespace}/{name}")))?;
    outcome.unwrap_or_else(|| {
        Err(AdminError::Timeout(format!(
            "timeout waiting for the controller to reconcile project {namespace}/{name} (requested at {at})"
        )))
    })
}

/// Sets `spec.suspend`.
pub fn set_suspend(
    cluster: &dyn Cluster,
    namespace: &str,
    name: &str,
    suspend: bool,
) -> Result<Project, AdminError> {
    patch(
        cluster,
        namespace,
        name,
        &json!({"spec": {"suspend": suspend}}),
    )
}

/// How to delete a Project.
#[derive(Clone, Copy, Debug)]
pub struct DeleteOptions {
    /// Mark it orphan first: the controller leaves its instances in place.
    pub orphan: bool,
    /// Wait until the Project is gone (its finalizer ran).
    pub wait: bool,
    pub timeout: Duration,
    pub poll: Duration,
}

/// Deletes a Project.
pub fn delete_project(
    cluster: &dyn Cluster,
    namespace: &str,
    name: &str,
    opts: DeleteOptions,
) -> Result<(), AdminError> {
    let r = project_ref(namespace, name);
    if opts.orphan {
        patch(
            cluster,
            namespace,
            name,
            &json!({"metadata": {"annotations": {ORPHAN_ANNOTATION: "true"}}}),
        )?;
    }
    if !cluster
        .delete(&r, false)
        .map_err(cerr(format!("deleting {r}")))?
    {
        return Err(not_found(namespace, name));
    }
    if opts.wait {
        crate::cluster::apply::wait_gone(
            cluster,
            std::slice::from_ref(&r),
            opts.timeout,
            opts.poll,
        )
        .map_err(|e| AdminError::Timeout(e.to_string()))?;
    }
    Ok(())
}

/// The `Ready` condition's status (`True`, `False`, `Unknown`) and message; `Unknown` and an
/// empty message when there is none yet. A suspended Project says so.
pub fn ready(p: &Project) -> (String, String) {
    let cond = p
        .status
        .as_ref()
        .and_then(|s| s.conditions.iter().find(|c| c.type_ == "Ready"));
    let (status, mut message) = match cond {
        Some(c) => (c.status.clone(), c.message.clone()),
        None => ("Unknown".to_string(), String::new()),
    };
    if p.spec.suspend {
        message = if message.is_empty() {
            "suspended".into()
        } else {
            format!("suspended: {message}")
        };
    }
    (status, message)
}

/// An Event about a Project.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProjectEvent {
    /// RFC 3339 time it was last seen.
    pub time: String,
    pub type_: String,
    pub reason: String,
    pub message: String,
    pub count: i64,
}

fn event_time(e: &Object) -> String {
    [
        "/lastTimestamp",
        "/eventTime",
        "/firstTimestamp",
        "/metadata/creationTimestamp",
    ]
    .iter()
    .find_map(|p| {
        e.pointer(p)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    })
    .unwrap_or("")
    .to_string()
}

fn sort_key(time: &str) -> (i128, String) {
    let ns = time
        .parse::<jiff::Timestamp>()
        .map_or(i128::MIN, |t| t.as_nanosecond());
    (ns, time.to_string())
}

/// The core/v1 Events of the Project's namespace whose involved object is the Project, oldest
/// first. They outlive the Project (until the API server expires them): a Project that is gone
/// is "not found" only when it left no Events.
pub fn project_events(
    cluster: &dyn Cluster,
    namespace: &str,
    name: &str,
) -> Result<Vec<ProjectEvent>, AdminError> {
    let exists = match get_project(cluster, namespace, name) {
        Ok(_) => true,
        Err(AdminError::NotFound(_)) => false,
        Err(e) => return Err(e),
    };
    let items = cluster
        .list("v1", "Event", namespace, "")
        .map_err(cerr(format!("listing the Events of namespace {namespace}")))?;
    let s = |e: &Object, p: &str| {
        e.pointer(p)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let mut out: Vec<ProjectEvent> = items
        .iter()
        .filter(|e| {
            s(e, "/involvedObject/kind") == "Project"
                && s(e, "/involvedObject/name") == name
                && s(e, "/involvedObject/apiVersion").starts_with("projects.timoni.sh/")
        })
        .map(|e| ProjectEvent {
            time: event_time(e),
            type_: s(e, "/type"),
            reason: s(e, "/reason"),
            message: s(e, "/message"),
            count: e.get("count").and_then(Value::as_i64).unwrap_or(1),
        })
        .collect();
    if out.is_empty() && !exists {
        return Err(not_found(namespace, name));
    }
    out.sort_by_cached_key(|e| sort_key(&e.time));
    Ok(out)
}

/// The time since `since` (RFC 3339) as kubectl prints ages (`45s`, `3m20s`, `5h`, `2d3h`);
/// `<unknown>` when it does not parse.
pub fn age(since: &str, now: jiff::Timestamp) -> String {
    let Ok(t) = since.parse::<jiff::Timestamp>() else {
        return "<unknown>".into();
    };
    let secs = now.as_second() - t.as_second();
    human_duration(secs)
}

/// kubectl's `HumanDuration` of a number of seconds.
pub fn human_duration(secs: i64) -> String {
    if secs < -1 {
        return "<invalid>".into();
    }
    let secs = secs.max(0);
    let (m, h) = (secs / 60, secs / 3600);
    let (d, y) = (h / 24, h / (24 * 365));
    let with = |a: i64, au: &str, b: i64, bu: &str| {
        if b == 0 {
            format!("{a}{au}")
        } else {
            format!("{a}{au}{b}{bu}")
        }
    };
    if secs < 120 {
        format!("{secs}s")
    } else if m < 10 {
        with(m, "m", secs % 60, "s")
    } else if m < 180 {
        format!("{m}m")
    } else if h < 8 {
        with(h, "h", m % 60, "m")
    } else if h < 48 {
        format!("{h}h")
    } else if h < 24 * 8 {
        with(d, "d", h % 24, "h")
    } else if h < 24 * 365 * 2 {
        format!("{d}d")
    } else if h < 24 * 365 * 8 {
        with(y, "y", d % 365, "d")
    } else {
        format!("{y}y")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::project::api::{Condition, ProjectStatus};

    #[test]
    fn ages_read_like_kubectl() {
        let cases = [
            (0, "0s"),
            (59, "59s"),
            (119, "119s"),
            (120, "2m"),
            (200, "3m20s"),
            (600, "10m"),
            (3 * 3600, "3h"),
            (3 * 3600 + 60, "3h1m"),
            (30 * 3600, "30h"),
            (50 * 3600, "2d2h"),
            (10 * 86400, "10d"),
            (3 * 365 * 86400, "3y"),
            (10 * 365 * 86400, "10y"),
            (-5, "<invalid>"),
        ];
        for (secs, want) in cases {
            assert_eq!(human_duration(secs), want, "{secs}");
        }
        let now: jiff::Timestamp = "2024-01-01T00:10:00Z".parse().unwrap();
        assert_eq!(age("2024-01-01T00:00:00Z", now), "10m");
        assert_eq!(age("yesterday", now), "<unknown>");
    }

    #[test]
    fn ready_reads_the_condition_and_suspension() {
        let mut p = Project::new("p", Default::default());
        assert_eq!(ready(&p), ("Unknown".into(), String::new()));
        p.status = Some(ProjectStatus {
            conditions: vec![Condition {
                type_: "Ready".into(),
                status: "False".into(),
                reason: "ComponentFailed".into(),
                message: "app failed".into(),
                ..Default::default()
            }],
            ..Default::default()
        });
        assert_eq!(ready(&p), ("False".into(), "app failed".into()));
        p.spec.suspend = true;
        assert_eq!(ready(&p).1, "suspended: app failed");
    }

    #[test]
    fn events_sort_by_their_last_time() {
        let e = |t: &str| json!({"lastTimestamp": t});
        let mut times =
            ["2024-01-01T00:00:10Z", "2024-01-01T00:00:02Z", "bad"].map(|t| event_time(&e(t)));
        times.sort_by_cached_key(|t| sort_key(t));
        assert_eq!(
            times,
            ["bad", "2024-01-01T00:00:02Z", "2024-01-01T00:00:10Z"]
        );
        let micro = json!({"eventTime": "2024-01-01T00:00:00.123456Z", "metadata": {"creationTimestamp": "x"}});
        assert_eq!(event_time(&micro), "2024-01-01T00:00:00.123456Z");
    }
}
