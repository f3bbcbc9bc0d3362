//! Kubernetes Events of a Project: one when a component starts (`ComponentStarted`, with the
//! artifact digest), one per instance apply (`InstanceApplied` /
//! `InstanceFailed`: the module, the duration, the start time, the error and the applied
//! resources as `Kind/namespace/name action`), one per instance uninstalled (`InstanceDeleted`
//! / `InstanceDeleteFailed`) and one per reconcile result (`ReconciliationSucceeded` /
//! `ReconciliationFailed`), and one per drift found between artifact changes (`DriftCorrected`
//! / `DriftDetected`, listing the objects and whether each was edited or deleted). Notes are
//! cut to stay under the API's 1 KiB limit, condition messages under [`MAX_MESSAGE`].

use kube::runtime::events::{Event, EventType};
use timoni_core::project::reconcile::{InstanceEvent, ProjectEvent};

/// The largest note sent (the API server refuses more than 1024 bytes).
pub const MAX_NOTE: usize = 1000;
/// The largest condition message written (and component error), like an Event's note.
pub const MAX_MESSAGE: usize = 1000;

/// `s` cut to at most `max` bytes at a character boundary, marked when cut.
pub fn truncate(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    const MARK: &str = " …(truncated)";
    let mut end = max.saturating_sub(MARK.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}{MARK}", &s[..end])
}

/// The note of an instance event.
pub fn instance_note(e: &InstanceEvent) -> String {
    let i = &e.instance;
    let mut note = format!(
        "component {} instance {}/{} module {}@{} started {} took {:.3}s",
        e.component,
        i.namespace,
        i.name,
        i.module_url,
        i.module_version,
        e.started,
        e.duration.as_secs_f64()
    );
    if let Some(err) = &e.error {
        note.push_str(&format!("\nerror: {err}"));
    }
    for c in &e.changes {
        let o = &c.object;
        let ns = if o.namespace.is_empty() {
            String::new()
        } else {
            format!("{}/", o.namespace)
        };
        note.push_str(&format!("\n{}/{ns}{} {}", o.kind, o.name, c.action));
    }
    truncate(&note, MAX_NOTE)
}

/// The Event for a progress report of the reconcile of artifact `digest`, if it deserves one.
pub fn for_project_event(e: &ProjectEvent, digest: &str) -> Option<Event> {
    let (type_, reason, action, note) = match e {
        ProjectEvent::ComponentStarted { component, at } => (
            EventType::Normal,
            "ComponentStarted",
            "Apply",
            format!("component {component} started {at} revision {digest}"),
        ),
        ProjectEvent::Instance(i) if i.error.is_none() => (
            EventType::Normal,
            "InstanceApplied",
            "Apply",
            instance_note(i),
        ),
        ProjectEvent::Instance(i) => (
            EventType::Warning,
            "InstanceFailed",
            "Apply",
            instance_note(i),
        ),
        ProjectEvent::Pruned { instance, error } => {
            let what = format!(
                "instance {}/{} module {}@{}",
                instance.namespace, instance.name, instance.module_url, instance.module_version
            );
            match error {
                None => (
                    EventType::Normal,
                    "InstanceDeleted",
                    "Delete",
                    format!("{what} uninstalled"),
                ),
                Some(err) => (
                    EventType::Warning,
                    "InstanceDeleteFailed",
                    "Delete",
                    truncate(&format!("{what}: {err}"), MAX_NOTE),
                ),
            }
        }
        _ => return None,
    };
    Some(Event {
        type_,
        reason: reason.into(),
        note: Some(note),
        action: action.into(),
        secondary: None,
    })
}

/// The Event of a drift check that found `objects` (`Kind/namespace/name edited|deleted`)
/// different from what was applied: restored (re-applied and waited for until ready; `failure`
/// when that failed) or only reported.
pub fn drift(corrected: bool, objects: &[String], failure: Option<&str>) -> Event {
    let n = objects.len();
    let them = if n == 1 {
        "1 object".to_string()
    } else {
        format!("{n} objects")
    };
    let (type_, reason, head) = match (corrected, failure) {
        (true, None) => (
            EventType::Normal,
            "DriftCorrected",
            format!(
                "restored {them} edited or deleted outside the controller (re-applied, ready):"
            ),
        ),
        (true, Some(f)) => (
            EventType::Warning,
            "DriftCorrected",
            format!(
                "re-applied {them} edited or deleted outside the controller, then: {}\nre-applied:",
                f.replace('\n', "; ")
            ),
        ),
        (false, _) => (
            EventType::Warning,
            "DriftDetected",
            format!(
                "{them} edited or deleted outside the controller, left as found (spec.drift: Report):"
            ),
        ),
    };
    let note = format!("{head}\n{}", objects.join("\n"));
    Event {
        type_,
        reason: reason.into(),
        note: Some(truncate(&note, MAX_NOTE)),
        action: "DriftCheck".into(),
        secondary: None,
    }
}

/// The Event of a reconcile's result.
pub fn result(ok: bool, reason: &str, message: &str) -> Event {
    let (type_, r) = if ok {
        (EventType::Normal, "ReconciliationSucceeded")
    } else {
        (EventType::Warning, "ReconciliationFailed")
    };
    let note = if ok {
        message.to_string()
    } else {
        format!("{reason}: {message}")
    };
    Event {
        type_,
        reason: r.into(),
        note: Some(truncate(&note, MAX_NOTE)),
        action: "Reconcile".into(),
        secondary: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;
    use timoni_core::cluster::ObjRef;
    use timoni_core::cluster::apply::{Action, Change};
    use timoni_core::project::api::InstanceRef;

    #[test]
    fn drift_events_say_what_was_restored() {
        let objects = [
            "ConfigMap/web/a edited".to_string(),
            "Service/web/b deleted".into(),
        ];
        let e = drift(true, &objects, None);
        assert_eq!(
            (e.type_, e.reason.as_str()),
            (EventType::Normal, "DriftCorrected")
        );
        assert_eq!(
            e.note.unwrap(),
            "restored 2 objects edited or deleted outside the controller (re-applied, ready):\nConfigMap/web/a edited\nService/web/b deleted"
        );
        let e = drift(true, &objects[..1], Some("timeout waiting for: [x]\nmore"));
        assert_eq!(e.type_, EventType::Warning);
        assert_eq!(
            e.note.unwrap(),
            "re-applied 1 object edited or deleted outside the controller, then: timeout waiting for: [x]; more\nre-applied:\nConfigMap/web/a edited"
        );
        let e = drift(false, &objects[..1], None);
        assert_eq!(
            (e.type_, e.reason.as_str()),
            (EventType::Warning, "DriftDetected")
        );
        assert!(
            e.note
                .unwrap()
                .contains("left as found (spec.drift: Report):")
        );
    }

    #[test]
    fn instance_notes_list_changes_and_stay_under_the_limit() {
        let change = |n: usize| Change {
            object: ObjRef {
                api_version: "v1".into(),
                kind: "ConfigMap".into(),
                namespace: "apps".into(),
                name: format!("cm-{n}-é"),
            },
            action: Action::Created,
            diff: None,
        };
        let mut e = InstanceEvent {
            component: "db".into(),
            instance: InstanceRef {
                name: "redis".into(),
                namespace: "apps".into(),
                module_url: "file://m".into(),
                module_version: "0.0.0-devel".into(),
                module_digest: None,
            },
            changes: vec![change(1)],
            started: "2024-01-01T00:00:00Z".parse().unwrap(),
            duration: Duration::from_millis(1500),
            error: None,
        };
        let note = instance_note(&e);
        assert!(note.starts_with("component db instance apps/redis module file://m@0.0.0-devel started 2024-01-01T00:00:00Z took 1.500s"), "{note}");
        assert!(note.ends_with("\nConfigMap/apps/cm-1-é created"), "{note}");
        e.changes = (0..200).map(change).collect();
        e.error = Some("boom".into());
        let note = instance_note(&e);
        assert!(note.len() <= MAX_NOTE, "{}", note.len());
        assert!(note.contains("\nerror: boom") && note.ends_with("(truncated)"));
    }

    #[test]
    fn truncation_respects_char_boundaries() {
        let s = "é".repeat(600);
        let t = truncate(&s, 1000);
        assert!(t.len() <= 1000);
        assert_eq!(truncate("short", 10), "short");
    }
}
