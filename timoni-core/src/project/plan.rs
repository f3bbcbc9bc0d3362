//! The decisions of a Project run that need no cluster: whether anything changed since the last
//! run (the artifact digest, the spec's generation, a reconcile request) and so whether to apply,
//! to wait (a deterministic failure of the same inputs: `Stalled`) or only to check drift
//! ([`decide`]); which instances a failed run keeps listed ([`carry_over`]) and which a successful
//! run uninstalls ([`stale`]); and which objects a drift check found changed ([`drifted`]).

use super::api::{ComponentStatus, DriftMode, InstanceRef, ProjectStatus};
use super::reconcile::phase;
use crate::cluster::apply::{Action, Change};

/// Why a run applies the Project.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Trigger {
    /// Nothing was applied yet.
    FirstRun,
    /// The watched tag now points at another digest.
    Digest { from: String, to: String },
    /// The spec changed (`metadata.generation`).
    Generation { from: Option<i64>, to: Option<i64> },
    /// `reconcile.timoni.sh/requestedAt` has a new value.
    Requested(String),
    /// The last run of these same inputs failed and may succeed when retried.
    Retry,
}

impl std::fmt::Display for Trigger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Trigger::FirstRun => f.write_str("first run"),
            Trigger::Digest { from, to } => write!(f, "artifact {from} -> {to}"),
            Trigger::Generation { from, to } => write!(
                f,
                "spec generation {} -> {}",
                from.unwrap_or_default(),
                to.unwrap_or_default()
            ),
            Trigger::Requested(at) => write!(f, "reconcile requested at {at}"),
            Trigger::Retry => f.write_str("retry"),
        }
    }
}

/// What one reconcile does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Pull the artifact and apply the components.
    Apply(Vec<Trigger>),
    /// The last run of these same inputs failed in a way retrying cannot fix: nothing is done
    /// until the digest, the spec or a reconcile request changes.
    Stalled,
    /// Everything was applied; check the live objects against it (`DriftMode`).
    UpToDate(DriftMode),
}

/// What a reconcile observed before deciding.
#[derive(Clone, Copy, Debug)]
pub struct Observed<'a> {
    /// The digest the watched tag resolves to.
    pub digest: &'a str,
    /// `metadata.generation`.
    pub generation: Option<i64>,
    /// `reconcile.timoni.sh/requestedAt`.
    pub requested_at: Option<&'a str>,
    /// `spec.drift`.
    pub drift: DriftMode,
}

fn condition_true(status: &ProjectStatus, type_: &str) -> bool {
    status
        .conditions
        .iter()
        .any(|c| c.type_ == type_ && c.status == "True")
}

/// Decides a reconcile from the last status and what was observed now.
pub fn decide(status: &ProjectStatus, now: &Observed) -> Decision {
    let mut triggers = Vec::new();
    match status.last_applied_digest.as_deref() {
        None => triggers.push(Trigger::FirstRun),
        Some(d) if d != now.digest => triggers.push(Trigger::Digest {
            from: d.to_string(),
            to: now.digest.to_string(),
        }),
        Some(_) => {}
    }
    if status.observed_generation != now.generation {
        triggers.push(Trigger::Generation {
            from: status.observed_generation,
            to: now.generation,
        });
    }
    if let Some(at) = now.requested_at
        && status.last_handled_reconcile_at.as_deref() != Some(at)
    {
        triggers.push(Trigger::Requested(at.to_string()));
    }
    let same_inputs = status.last_attempted_digest.as_deref() == Some(now.digest)
        && status.observed_generation == now.generation
        && status.last_handled_reconcile_at.as_deref() == now.requested_at;
    if same_inputs && condition_true(status, "Stalled") {
        return Decision::Stalled;
    }
    if triggers.is_empty() {
        if condition_true(status, "Ready") {
            return Decision::UpToDate(now.drift);
        }
        triggers.push(Trigger::Retry);
    }
    Decision::Apply(triggers)
}

/// After a failed run, the instances applied before that this run did not apply again stay in
/// the status, so that a later successful run prunes them and a delete uninstalls them; a
/// component keeps the time of its last successful apply.
pub fn carry_over(
    previous: &[ComponentStatus],
    mut now: Vec<ComponentStatus>,
) -> Vec<ComponentStatus> {
    let listed = |all: &[ComponentStatus], i: &InstanceRef| {
        all.iter().any(|c| c.instances.iter().any(|j| same(i, j)))
    };
    let mut gone = Vec::new();
    for old in previous {
        if let Some(c) = now.iter_mut().find(|c| c.name == old.name)
            && c.last_applied_time.is_none()
        {
            c.last_applied_time = old.last_applied_time.clone();
        }
        let kept: Vec<InstanceRef> = old
            .instances
            .iter()
            .filter(|i| !listed(&now, i))
            .cloned()
            .collect();
        if kept.is_empty() {
            continue;
        }
        match now.iter_mut().find(|c| c.name == old.name) {
            Some(c) => c.instances.extend(kept),
            None => gone.push(ComponentStatus {
                name: old.name.clone(),
                phase: phase::PENDING.into(),
                error: Some(
                    "no longer in the project: its instances are uninstalled after a successful run"
                        .into(),
                ),
                instances: kept,
                last_applied_time: old.last_applied_time.clone(),
                ..Default::default()
            }),
        }
    }
    now.extend(gone);
    now
}

fn same(a: &InstanceRef, b: &InstanceRef) -> bool {
    a.name == b.name && a.namespace == b.namespace
}

/// The instances of the previous run that the current one no longer has, to uninstall after a
/// fully successful run.
pub fn stale(previous: &[InstanceRef], current: &[InstanceRef]) -> Vec<InstanceRef> {
    previous
        .iter()
        .filter(|p| !current.iter().any(|c| same(c, p)))
        .cloned()
        .collect()
}

/// The objects a drift check found different from what was applied, and what happened to
/// them: those it had to create were deleted by hand, those the server-side apply changed were
/// edited; as `Kind/namespace/name deleted|edited`.
pub fn drifted(changes: &[Change]) -> Vec<String> {
    changes
        .iter()
        .filter_map(|c| match c.action {
            Action::Created => Some(format!("{} deleted", c.object)),
            Action::Configured => Some(format!("{} edited", c.object)),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::ObjRef;
    use crate::project::api::Condition;

    fn status(digest: &str, generation: i64, ready: bool, stalled: bool) -> ProjectStatus {
        let cond = |t: &str, s: bool| Condition {
            type_: t.into(),
            status: if s { "True" } else { "False" }.into(),
            ..Default::default()
        };
        ProjectStatus {
            observed_generation: Some(generation),
            conditions: vec![cond("Ready", ready), cond("Stalled", stalled)],
            last_applied_digest: ready.then(|| digest.to_string()),
            last_attempted_digest: Some(digest.into()),
            ..Default::default()
        }
    }

    fn observed(
        digest: &'static str,
        generation: i64,
        requested_at: Option<&'static str>,
    ) -> Observed<'static> {
        Observed {
            digest,
            generation: Some(generation),
            requested_at,
            drift: DriftMode::Correct,
        }
    }

    #[test]
    fn nothing_changed_means_a_drift_check_only() {
        let s = status("sha256:a", 1, true, false);
        assert_eq!(
            decide(&s, &observed("sha256:a", 1, None)),
            Decision::UpToDate(DriftMode::Correct)
        );
        let report = Observed {
            drift: DriftMode::Report,
            ..observed("sha256:a", 1, None)
        };
        assert_eq!(decide(&s, &report), Decision::UpToDate(DriftMode::Report));
    }

    #[test]
    fn a_new_digest_generation_or_request_applies_and_says_why() {
        let s = status("sha256:a", 1, true, false);
        assert_eq!(
            decide(&s, &observed("sha256:b", 2, Some("t1"))),
            Decision::Apply(vec![
                Trigger::Digest {
                    from: "sha256:a".into(),
                    to: "sha256:b".into()
                },
                Trigger::Generation {
                    from: Some(1),
                    to: Some(2)
                },
                Trigger::Requested("t1".into()),
            ])
        );
        assert_eq!(
            decide(&ProjectStatus::default(), &observed("sha256:a", 1, None)),
            Decision::Apply(vec![
                Trigger::FirstRun,
                Trigger::Generation {
                    from: None,
                    to: Some(1)
                }
            ])
        );
    }

    #[test]
    fn a_deterministic_failure_of_the_same_inputs_waits_for_a_change() {
        let s = status("sha256:a", 1, false, true);
        assert_eq!(
            decide(&s, &observed("sha256:a", 1, None)),
            Decision::Stalled
        );
        // A new digest, a spec change or a request tries again.
        assert!(matches!(
            decide(&s, &observed("sha256:b", 1, None)),
            Decision::Apply(_)
        ));
        assert!(matches!(
            decide(&s, &observed("sha256:a", 2, None)),
            Decision::Apply(_)
        ));
        assert!(matches!(
            decide(&s, &observed("sha256:a", 1, Some("now"))),
            Decision::Apply(_)
        ));
        // A failure that is not stalled is retried.
        let failed = ProjectStatus {
            last_applied_digest: Some("sha256:a".into()),
            ..status("sha256:a", 1, false, false)
        };
        assert_eq!(
            decide(&failed, &observed("sha256:a", 1, None)),
            Decision::Apply(vec![Trigger::Retry])
        );
    }

    fn inst(n: &str) -> InstanceRef {
        InstanceRef {
            name: n.into(),
            namespace: "ns".into(),
            ..Default::default()
        }
    }

    fn comp(name: &str, instances: &[&str], applied: Option<&str>) -> ComponentStatus {
        ComponentStatus {
            name: name.into(),
            phase: phase::READY.into(),
            instances: instances.iter().map(|i| inst(i)).collect(),
            last_applied_time: applied.map(str::to_string),
            ..Default::default()
        }
    }

    #[test]
    fn failed_runs_keep_instances_and_the_last_successful_apply_time() {
        let previous = [
            comp("a", &["a1", "a2"], Some("t1")),
            comp("old", &["o1"], Some("t0")),
        ];
        let mut failed = comp("a", &["a1"], None);
        failed.phase = phase::FAILED.into();
        let now = vec![failed, comp("b", &[], None)];
        let merged = carry_over(&previous, now);
        let names: Vec<(&str, Vec<&str>, Option<&str>)> = merged
            .iter()
            .map(|c| {
                (
                    c.name.as_str(),
                    c.instances.iter().map(|i| i.name.as_str()).collect(),
                    c.last_applied_time.as_deref(),
                )
            })
            .collect();
        assert_eq!(
            names,
            [
                ("a", vec!["a1", "a2"], Some("t1")),
                ("b", vec![], None),
                ("old", vec!["o1"], Some("t0")),
            ]
        );
        assert_eq!(merged[2].phase, phase::PENDING);
    }

    #[test]
    fn instances_no_longer_applied_are_stale() {
        let previous = [inst("a"), inst("b"), inst("c")];
        let current = [inst("b")];
        let names: Vec<String> = stale(&previous, &current)
            .into_iter()
            .map(|i| i.name)
            .collect();
        assert_eq!(names, ["a", "c"]);
    }

    #[test]
    fn drift_is_what_was_edited_or_deleted() {
        let obj = |kind: &str, name: &str| ObjRef {
            api_version: "v1".into(),
            kind: kind.into(),
            namespace: "ns".into(),
            name: name.into(),
        };
        let change = |o, action| Change {
            object: o,
            action,
            diff: None,
        };
        let changes = [
            change(obj("ConfigMap", "same"), Action::Unchanged),
            change(obj("ConfigMap", "edited"), Action::Configured),
            change(obj("Service", "deleted"), Action::Created),
        ];
        assert_eq!(
            drifted(&changes),
            ["ConfigMap/ns/edited edited", "Service/ns/deleted deleted"]
        );
    }
}
