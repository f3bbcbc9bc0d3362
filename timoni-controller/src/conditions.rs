//! The `Ready`, `Reconciling` and `Stalled` conditions of a Project's status, kstatus style:
//! pure functions from the outcome of a reconcile to the conditions, keeping each condition's
//! `lastTransitionTime` while its status does not change.

use timoni_core::project::api::Condition;

pub const READY: &str = "Ready";
pub const RECONCILING: &str = "Reconciling";
pub const STALLED: &str = "Stalled";

/// The reasons the controller itself gives (the reconcile's own come from
/// `timoni_core::project::reconcile::Failure::reason`).
pub mod reason {
    pub const SUCCEEDED: &str = "ReconciliationSucceeded";
    pub const PROGRESSING: &str = "Progressing";
    pub const RETRYING: &str = "ProgressingWithRetry";
    pub const SUSPENDED: &str = "Suspended";
    /// The spec or the Project file is invalid: retrying cannot fix it (Stalled).
    pub const VALIDATION_FAILED: &str = "ValidationFailed";
    /// The artifact could not be resolved or pulled (registry down, unknown tag, bad creds).
    pub const ARTIFACT_FAILED: &str = "ArtifactFailed";
    /// The service account or its image pull secrets could not be read.
    pub const PULL_SECRETS_FAILED: &str = "PullSecretsFailed";
    /// `spec.verify` is set and the artifact's signature does not satisfy it, or the policy
    /// (provider, Secret, trust root) is unusable: nothing is pulled or applied.
    pub const VERIFICATION_FAILED: &str = "VerificationFailed";
    /// A Kubernetes API request of the controller itself failed.
    pub const KUBE_ERROR: &str = "KubernetesError";
}

/// Whether retrying a failure with this reason cannot help until the Project or its artifact
/// changes. Such failures are still retried, at the maximum backoff.
pub fn is_stalled(reason: &str) -> bool {
    reason == reason::VALIDATION_FAILED
}

/// Sets condition `type_`, keeping its `lastTransitionTime` when its status is unchanged.
pub fn set(
    conditions: &mut Vec<Condition>,
    type_: &str,
    status: bool,
    reason: &str,
    message: &str,
    generation: Option<i64>,
    now: &str,
) {
    let status = if status { "True" } else { "False" };
    let c = Condition {
        type_: type_.to_string(),
        status: status.to_string(),
        last_transition_time: now.to_string(),
        reason: reason.to_string(),
        message: message.to_string(),
        observed_generation: generation,
    };
    match conditions.iter_mut().find(|c| c.type_ == type_) {
        Some(old) => {
            let time = if old.status == c.status {
                old.last_transition_time.clone()
            } else {
                c.last_transition_time.clone()
            };
            *old = Condition {
                last_transition_time: time,
                ..c
            };
        }
        None => conditions.push(c),
    }
}

/// Whether condition `type_` is `True`.
pub fn is_true(conditions: &[Condition], type_: &str) -> bool {
    conditions
        .iter()
        .any(|c| c.type_ == type_ && c.status == "True")
}

/// A run has started: `Reconciling=True`; `Ready` keeps its state until the run ends.
pub fn progressing(conditions: &mut Vec<Condition>, message: &str, gen_: Option<i64>, now: &str) {
    set(
        conditions,
        RECONCILING,
        true,
        reason::PROGRESSING,
        message,
        gen_,
        now,
    );
}

/// A successful run.
pub fn succeeded(conditions: &mut Vec<Condition>, message: &str, gen_: Option<i64>, now: &str) {
    set(
        conditions,
        READY,
        true,
        reason::SUCCEEDED,
        message,
        gen_,
        now,
    );
    set(
        conditions,
        RECONCILING,
        false,
        reason::SUCCEEDED,
        message,
        gen_,
        now,
    );
    set(
        conditions,
        STALLED,
        false,
        reason::SUCCEEDED,
        message,
        gen_,
        now,
    );
}

/// A failed run: `Ready=False` with the reason; `Stalled=True` when retrying cannot help
/// (`stalled`, or a reason that always stalls), else `Reconciling=True` (a retry is scheduled).
pub fn failed(
    conditions: &mut Vec<Condition>,
    why: &str,
    message: &str,
    stalled: bool,
    gen_: Option<i64>,
    now: &str,
) {
    set(conditions, READY, false, why, message, gen_, now);
    if stalled || is_stalled(why) {
        set(conditions, RECONCILING, false, why, message, gen_, now);
        set(conditions, STALLED, true, why, message, gen_, now);
    } else {
        set(
            conditions,
            RECONCILING,
            true,
            reason::RETRYING,
            message,
            gen_,
            now,
        );
        set(conditions, STALLED, false, why, message, gen_, now);
    }
}

/// Suspended: `Reconciling=False` with reason `Suspended`; `Ready` unchanged.
pub fn suspended(conditions: &mut Vec<Condition>, gen_: Option<i64>, now: &str) {
    let msg = "reconciliation is suspended (spec.suspend is true)";
    set(
        conditions,
        RECONCILING,
        false,
        reason::SUSPENDED,
        msg,
        gen_,
        now,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get<'a>(c: &'a [Condition], t: &str) -> &'a Condition {
        c.iter().find(|c| c.type_ == t).unwrap()
    }

    #[test]
    fn transition_time_moves_only_when_the_status_changes() {
        let mut c = Vec::new();
        succeeded(&mut c, "applied a", Some(1), "t1");
        succeeded(&mut c, "applied b", Some(2), "t2");
        assert_eq!(get(&c, READY).last_transition_time, "t1");
        assert_eq!(get(&c, READY).message, "applied b");
        assert_eq!(get(&c, READY).observed_generation, Some(2));
        failed(&mut c, "Forbidden", "no", false, Some(2), "t3");
        let ready = get(&c, READY);
        assert_eq!(
            (ready.status.as_str(), ready.reason.as_str()),
            ("False", "Forbidden")
        );
        assert_eq!(ready.last_transition_time, "t3");
        assert_eq!(get(&c, RECONCILING).status, "True");
        assert_eq!(get(&c, STALLED).status, "False");
        assert_eq!(get(&c, STALLED).last_transition_time, "t1");
    }

    #[test]
    fn validation_failures_stall_and_suspend_keeps_ready() {
        let mut c = Vec::new();
        succeeded(&mut c, "ok", None, "t1");
        failed(
            &mut c,
            reason::VALIDATION_FAILED,
            "bad cue",
            false,
            None,
            "t2",
        );
        assert!(is_true(&c, STALLED));
        assert!(!is_true(&c, RECONCILING));
        let stalled_at = get(&c, STALLED).last_transition_time.clone();
        failed(
            &mut c,
            "BuildFailed",
            "bundle.cue:1:2: bad",
            true,
            None,
            "t2b",
        );
        assert!(is_true(&c, STALLED));
        assert_eq!(get(&c, STALLED).last_transition_time, stalled_at);
        assert_eq!(get(&c, READY).reason, "BuildFailed");
        failed(
            &mut c,
            reason::VALIDATION_FAILED,
            "bad cue",
            false,
            None,
            "t2c",
        );
        suspended(&mut c, None, "t3");
        assert_eq!(get(&c, RECONCILING).reason, reason::SUSPENDED);
        assert_eq!(get(&c, READY).reason, reason::VALIDATION_FAILED);
        assert_eq!(c.len(), 3);
    }
}
