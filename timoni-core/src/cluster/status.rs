//! Readiness of live objects, after kstatus (`sigs.k8s.io/cli-utils/pkg/kstatus`): each object
//! is Current, InProgress, Failed, Terminating or NotFound, with a short message. Workloads are
//! read from their status fields, Jobs as Timoni's custom reader does (Complete and suspended are
//! Current, Failed is Failed), CRDs must be Established, and anything else is judged by its
//! `Ready`/`Stalled` conditions and `observedGeneration`.

use std::fmt;

use serde_json::Value;

use super::Object;

/// The kstatus of an object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Current,
    InProgress,
    Failed,
    Terminating,
    NotFound,
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Status::Current => "Current",
            Status::InProgress => "InProgress",
            Status::Failed => "Failed",
            Status::Terminating => "Terminating",
            Status::NotFound => "NotFound",
        })
    }
}

fn int(v: &Value, p: &str) -> Option<i64> {
    v.pointer(p).and_then(Value::as_i64)
}

fn string<'a>(v: &'a Value, p: &str) -> Option<&'a str> {
    v.pointer(p).and_then(Value::as_str)
}

/// The status of the condition `ty`, if present.
fn condition<'a>(obj: &'a Object, ty: &str) -> Option<(&'a str, &'a str)> {
    obj.pointer("/status/conditions")?
        .as_array()?
        .iter()
        .find(|c| c.get("type").and_then(Value::as_str) == Some(ty))
        .map(|c| {
            (
                c.get("status").and_then(Value::as_str).unwrap_or(""),
                c.get("message").and_then(Value::as_str).unwrap_or(""),
            )
        })
}

/// The kstatus of a live object and a message saying why.
pub fn compute(obj: &Object) -> (Status, String) {
    if obj
        .pointer("/metadata/deletionTimestamp")
        .is_some_and(|v| !v.is_null())
    {
        return (
            Status::Terminating,
            "Resource scheduled for deletion".into(),
        );
    }
    let kind = string(obj, "/kind").unwrap_or("");
    let generation = int(obj, "/metadata/generation");
    let observed = int(obj, "/status/observedGeneration");
    if let (Some(g), Some(o)) = (generation, observed)
        && o < g
    {
        return (
            Status::InProgress,
            format!("{kind} generation is {g}, but latest observed generation is {o}"),
        );
    }
    match kind {
        "Deployment" => deployment(obj),
        "StatefulSet" => statefulset(obj),
        "DaemonSet" => daemonset(obj),
        "Job" => job(obj),
        "PersistentVolumeClaim" => match string(obj, "/status/phase") {
            Some("Bound") => (Status::Current, "PVC is Bound".into()),
            p => (
                Status::InProgress,
                format!("PVC is not Bound. phase: {}", p.unwrap_or("")),
            ),
        },
        "Service" => {
            if string(obj, "/spec/type") == Some("LoadBalancer")
                && obj
                    .pointer("/status/loadBalancer/ingress")
                    .and_then(Value::as_array)
                    .is_none_or(Vec::is_empty)
            {
                (Status::InProgress, "Pending LoadBalancer ingress".into())
            } else {
                (Status::Current, "Service is ready".into())
            }
        }
        "CustomResourceDefinition" => match condition(obj, "Established") {
            Some(("True", _)) => (Status::Current, "CRD is established".into()),
            _ => (Status::InProgress, "CRD is not established".into()),
        },
        "Pod" => match string(obj, "/status/phase") {
            Some("Succeeded") => (Status::Current, "Pod has completed successfully".into()),
            Some("Failed") => (Status::Failed, "Pod has failed".into()),
            _ => match condition(obj, "Ready") {
                Some(("True", _)) => (Status::Current, "Pod is Ready".into()),
                _ => (Status::InProgress, "Pod is not Ready".into()),
            },
        },
        _ => generic(obj),
    }
}

fn generic(obj: &Object) -> (Status, String) {
    if let Some(("True", m)) = condition(obj, "Stalled") {
        return (Status::Failed, m.to_string());
    }
    match condition(obj, "Ready") {
        Some(("False", m)) => (Status::InProgress, m.to_string()),
        Some(("True", m)) => (Status::Current, m.to_string()),
        Some((_, m)) => (Status::InProgress, m.to_string()),
        None => (Status::Current, "Resource is current".into()),
    }
}

fn deployment(obj: &Object) -> (Status, String) {
    let spec = int(obj, "/spec/replicas").unwrap_or(1);
    let updated = int(obj, "/status/updatedReplicas").unwrap_or(0);
    let ready = int(obj, "/status/readyReplicas").unwrap_or(0);
    let available = int(obj, "/status/availableReplicas").unwrap_or(0);
    let total = int(obj, "/status/replicas").unwrap_or(0);
    if let Some(("False", _)) = condition(obj, "Progressing") {
        return (Status::Failed, "Progress deadline exceeded".into());
    }
    if updated < spec {
        return (Status::InProgress, format!("Updated: {updated}/{spec}"));
    }
    if total > updated {
        return (
            Status::InProgress,
            format!("Pending termination: {}", total - updated),
        );
    }
    if available < updated || ready < spec {
        return (Status::InProgress, format!("Available: {available}/{spec}"));
    }
    (
        Status::Current,
        format!("Deployment is available. Replicas: {total}"),
    )
}

fn statefulset(obj: &Object) -> (Status, String) {
    let spec = int(obj, "/spec/replicas").unwrap_or(1);
    let ready = int(obj, "/status/readyReplicas").unwrap_or(0);
    let current = int(obj, "/status/currentReplicas").unwrap_or(0);
    if ready < spec {
        return (Status::InProgress, format!("Ready: {ready}/{spec}"));
    }
    let rev = string(obj, "/status/updateRevision");
    if rev.is_some() && rev != string(obj, "/status/currentRevision") {
        return (
            Status::InProgress,
            "Waiting for the rollout to finish".into(),
        );
    }
    if current < spec {
        return (Status::InProgress, format!("Current: {current}/{spec}"));
    }
    (
        Status::Current,
        format!("All replicas scheduled as expected. Replicas: {spec}"),
    )
}

fn daemonset(obj: &Object) -> (Status, String) {
    let desired = int(obj, "/status/desiredNumberScheduled");
    let Some(desired) = desired else {
        return (
            Status::InProgress,
            "Missing .status.desiredNumberScheduled".into(),
        );
    };
    let updated = int(obj, "/status/updatedNumberScheduled").unwrap_or(0);
    let available = int(obj, "/status/numberAvailable").unwrap_or(0);
    let ready = int(obj, "/status/numberReady").unwrap_or(0);
    if updated < desired || available < desired || ready < desired {
        return (
            Status::InProgress,
            format!("Available: {available}/{desired}"),
        );
    }
    (
        Status::Current,
        format!("All replicas scheduled as expected. Replicas: {desired}"),
    )
}

fn job(obj: &Object) -> (Status, String) {
    if let Some(("True", _)) = condition(obj, "Complete") {
        return (Status::Current, "Job Completed".into());
    }
    if let Some(("True", m)) = condition(obj, "Failed") {
        return (Status::Failed, format!("Job Failed: {m}"));
    }
    if obj.pointer("/spec/suspend").and_then(Value::as_bool) == Some(true) {
        return (Status::Current, "Job is suspended".into());
    }
    (Status::InProgress, "Job in progress".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn workloads_follow_their_status_fields() {
        let mut d = json!({"kind": "Deployment", "metadata": {"generation": 2},
            "spec": {"replicas": 2}, "status": {"observedGeneration": 1}});
        assert_eq!(compute(&d).0, Status::InProgress);
        d["status"] = json!({"observedGeneration": 2, "replicas": 2, "updatedReplicas": 2,
            "readyReplicas": 2, "availableReplicas": 2});
        assert_eq!(compute(&d).0, Status::Current);
        let j = json!({"kind": "Job", "status": {"conditions": [{"type": "Failed", "status": "True"}]}});
        assert_eq!(compute(&j).0, Status::Failed);
        let crd = json!({"kind": "CustomResourceDefinition", "status": {"conditions": [
            {"type": "Established", "status": "True"}]}});
        assert_eq!(compute(&crd).0, Status::Current);
        assert_eq!(compute(&json!({"kind": "ConfigMap"})).0, Status::Current);
        let gone = json!({"kind": "ConfigMap", "metadata": {"deletionTimestamp": "x"}});
        assert_eq!(compute(&gone).0, Status::Terminating);
        let pvc = json!({"kind": "PersistentVolumeClaim", "status": {"phase": "Pending"}});
        assert_eq!(compute(&pvc).0, Status::InProgress);
    }
}
