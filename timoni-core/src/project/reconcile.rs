//! Applying a Project's components to one cluster (seed 000, "Project reconciliation"): every
//! component runs on its own thread as soon as all the components it `needs` are Ready, so
//! independent components run concurrently; a component whose need failed is `Blocked`. A
//! component is its bundle applied with [`crate::cluster::bundle::apply_bundle`], instance after
//! instance, each waited for until healthy, with its runtime's values read from this cluster and
//! the Project's cluster name and group as `TIMONI_CLUSTER_NAME` / `TIMONI_CLUSTER_GROUP`.
//! After a fully successful run, instances a previous run applied and this one no longer has are
//! uninstalled. Nothing here knows about tokio or the controller; progress goes to a callback.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Condvar, Mutex};
use std::time::Duration;

use crate::bundle::{self, BundleRequest, SourceFile};
use crate::cluster::ClusterError;
use crate::cluster::apply::{ApplyError, Change};
use crate::cluster::bundle::{BundleApplyRequest, BundleEvent, Connector, apply_bundle};
use crate::cluster::ops::{DeleteRequest, delete_instance, stored_instance};
use crate::oci::ModuleFetch;
use crate::runtime;

use super::api::{ComponentStatus, InstanceRef};
use super::definition::{Component, Project};

/// The cluster a Project is reconciled on, as its resource describes it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Target {
    /// `runtime.timoni.sh/cluster`.
    pub cluster_name: Option<String>,
    /// `runtime.timoni.sh/group`.
    pub cluster_group: Option<String>,
}

/// How to reconcile.
#[derive(Clone, Debug)]
pub struct ReconcileOptions {
    /// How long one instance may take to apply and become healthy.
    pub timeout: Duration,
    /// The readiness poll interval.
    pub poll: Duration,
    /// The instances the previous run applied (from the status), to uninstall those gone.
    pub previous: Vec<InstanceRef>,
    /// Server-side apply dry runs only (a drift check): nothing is changed, waited for or
    /// pruned; the instance events report what an apply would create or configure.
    pub dry_run: bool,
    /// With `dry_run`: apply the objects the dry run finds drifted (deleted or edited since the
    /// last apply), only those, and wait for them to be ready; the instance events report them
    /// created or configured.
    pub correct_drift: bool,
}

impl Default for ReconcileOptions {
    fn default() -> Self {
        ReconcileOptions {
            timeout: Duration::from_secs(300),
            poll: Duration::from_secs(2),
            previous: Vec::new(),
            dry_run: false,
            correct_drift: false,
        }
    }
}

/// The end of one instance's apply.
#[derive(Clone, Debug, PartialEq)]
pub struct InstanceEvent {
    pub component: String,
    pub instance: InstanceRef,
    /// The objects created, configured, unchanged or pruned.
    pub changes: Vec<Change>,
    pub started: jiff::Timestamp,
    pub duration: Duration,
    pub error: Option<String>,
}

/// Progress of a reconcile. Sent from the components' threads.
#[derive(Clone, Debug, PartialEq)]
pub enum ProjectEvent {
    ComponentStarted {
        component: String,
        at: jiff::Timestamp,
    },
    Instance(InstanceEvent),
    ComponentFinished(ComponentStatus),
    /// An instance of a previous run that is no longer in the Project was uninstalled.
    Pruned {
        instance: InstanceRef,
        error: Option<String>,
    },
}

/// Why a reconcile failed: a machine reason for conditions and a message for people.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// `Forbidden`, `ClusterUnreachable`, `BuildFailed`, `HealthCheckFailed`, `ApplyFailed`,
    /// `DependencyNotReady`, `PruneFailed`.
    pub reason: &'static str,
    pub message: String,
    /// Retrying the same artifact cannot help (its CUE does not evaluate, its values or objects
    /// are invalid): the run is `Stalled` until the artifact, the spec or a request changes.
    pub stalled: bool,
}

/// The result of a reconcile.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    /// In the Project file's order.
    pub components: Vec<ComponentStatus>,
    /// The first failure, in the file's order; `None` when every component is Ready.
    pub failure: Option<Failure>,
}

impl Outcome {
    /// Every instance applied, in component order.
    pub fn instances(&self) -> Vec<InstanceRef> {
        self.components
            .iter()
            .flat_map(|c| c.instances.iter().cloned())
            .collect()
    }
}

/// The phases of a component.
pub mod phase {
    pub const PENDING: &str = "Pending";
    pub const PROGRESSING: &str = "Progressing";
    pub const READY: &str = "Ready";
    pub const FAILED: &str = "Failed";
    pub const BLOCKED: &str = "Blocked";
}

/// The reason of an apply error.
pub fn failure_reason(e: &ApplyError) -> &'static str {
    match e {
        ApplyError::Cluster {
            err: ClusterError::Api { code: 403, .. },
            ..
        } => "Forbidden",
        ApplyError::Cluster {
            err: ClusterError::Transport(_),
            ..
        } => "ClusterUnreachable",
        ApplyError::Build(crate::Error::Fetch(_)) => "ArtifactFailed",
        ApplyError::Build(crate::Error::Verification(_)) => "VerificationFailed",
        ApplyError::Build(_) => "BuildFailed",
        ApplyError::NotReady(_) => "HealthCheckFailed",
        _ => "ApplyFailed",
    }
}

/// Whether an apply error comes from the artifact's content alone (CUE evaluation, values,
/// the module's layout, invalid objects), so that applying the same artifact again fails the
/// same way. Fetch, runtime value and cluster errors may pass.
pub fn is_deterministic(e: &ApplyError) -> bool {
    matches!(
        e,
        ApplyError::Build(
            crate::Error::Cue(_)
                | crate::Error::Objects(_)
                | crate::Error::Values { .. }
                | crate::Error::Module(_)
        )
    )
}

/// `message` with the Project's directory (a controller's temporary directory) removed and the
/// bundle loader's file names (`0.bundle.cue`, the files' order and base names) replaced by
/// the component's bundle files, so that files are named as in the artifact
/// (`my-app/bundle.cue:12:5`).
fn relative(dir: &Path, bundle: &[std::path::PathBuf], message: &str) -> String {
    let prefix = format!("{}/", dir.display());
    let mut message = message.replace(&prefix, "");
    for (i, path) in bundle.iter().enumerate() {
        let base = path
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default();
        let base = base.strip_suffix(".cue").unwrap_or(&base);
        let loaded = format!("{i}.{base}.cue:");
        let rel = path.strip_prefix(dir).unwrap_or(path).display().to_string();
        message = message
            .split_inclusive('\n')
            .map(|line| {
                let body = line.trim_start();
                match body.strip_prefix(&loaded) {
                    Some(rest) => format!("{}{rel}:{rest}", &line[..line.len() - body.len()]),
                    None => line.to_string(),
                }
            })
            .collect();
    }
    message
}

type ComponentResult = (ComponentStatus, Option<Failure>);

enum State {
    Waiting,
    Done(bool),
}

/// Reconciles every component of `project` on the cluster `connector` reaches (every runtime
/// cluster maps to it). Modules are fetched through `fetcher`.
pub fn reconcile_project(
    project: &Project,
    target: &Target,
    connector: &(dyn Connector + Sync),
    fetcher: Option<&dyn ModuleFetch>,
    opts: &ReconcileOptions,
    events: &(dyn Fn(ProjectEvent) + Sync),
) -> Outcome {
    let n = project.components.len();
    let index: BTreeMap<&str, usize> = project
        .components
        .iter()
        .enumerate()
        .map(|(i, c)| (c.name.as_str(), i))
        .collect();
    let states = Mutex::new((0..n).map(|_| State::Waiting).collect::<Vec<_>>());
    let changed = Condvar::new();
    let results: Mutex<Vec<Option<ComponentResult>>> = Mutex::new(vec![None; n]);
    std::thread::scope(|s| {
        for (i, component) in project.components.iter().enumerate() {
            let needs: Vec<usize> = component
                .needs
                .iter()
                .filter_map(|d| index.get(d.as_str()).copied())
                .collect();
            let (states, changed, results) = (&states, &changed, &results);
            s.spawn(move || {
                // Wait for every need to finish; run only if all are Ready.
                let ready = {
                    let mut st = states.lock().unwrap_or_else(|e| e.into_inner());
                    loop {
                        let done: Vec<Option<bool>> = needs
                            .iter()
                            .map(|&d| match st[d] {
                                State::Done(ok) => Some(ok),
                                State::Waiting => None,
                            })
                            .collect();
                        if done.contains(&Some(false)) {
                            break false;
                        }
                        if done.iter().all(|d| d.is_some()) {
                            break true;
                        }
                        st = changed.wait(st).unwrap_or_else(|e| e.into_inner());
                    }
                };
                let (status, failure) = if ready {
                    run_component(project, component, target, connector, fetcher, opts, events)
                } else {
                    let failed: Vec<&str> = component.needs.iter().map(String::as_str).collect();
                    (
                        ComponentStatus {
                            name: component.name.clone(),
                            phase: phase::BLOCKED.into(),
                            error: Some(format!(
                                "not applied: a component it needs ({}) is not ready",
                                failed.join(", ")
                            )),
                            ..Default::default()
                        },
                        None,
                    )
                };
                events(ProjectEvent::ComponentFinished(status.clone()));
                let ok = status.phase == phase::READY;
                results.lock().unwrap_or_else(|e| e.into_inner())[i] = Some((status, failure));
                let mut st = states.lock().unwrap_or_else(|e| e.into_inner());
                st[i] = State::Done(ok);
                changed.notify_all();
            });
        }
    });
    let mut components = Vec::new();
    let mut failure = None;
    for r in results.into_inner().unwrap_or_else(|e| e.into_inner()) {
        let Some((status, f)) = r else { continue };
        if failure.is_none() {
            failure = f;
        }
        components.push(status);
    }
    if failure.is_none()
        && let Some(b) = components.iter().find(|c| c.phase != phase::READY)
    {
        failure = Some(Failure {
            stalled: false,
            reason: "DependencyNotReady",
            message: format!(
                "component {}: {}",
                b.name,
                b.error.clone().unwrap_or_default()
            ),
        });
    }
    let mut outcome = Outcome {
        components,
        failure,
    };
    if outcome.failure.is_none() && !opts.dry_run {
        let errors = prune(&outcome, connector, opts, events);
        if !errors.is_empty() {
            outcome.failure = Some(Failure {
                stalled: false,
                reason: "PruneFailed",
                message: format!(
                    "uninstalling instances no longer in the project: {}",
                    errors.join("; ")
                ),
            });
        }
    }
    outcome
}

/// Uninstalls the instances of the previous run that this run did not apply; returns the
/// errors. (A caller keeps the previous instances in its records when this fails, so that the
/// next run tries again.)
fn prune(
    outcome: &Outcome,
    connector: &(dyn Connector + Sync),
    opts: &ReconcileOptions,
    events: &(dyn Fn(ProjectEvent) + Sync),
) -> Vec<String> {
    let stale = super::plan::stale(&opts.previous, &outcome.instances());
    if stale.is_empty() {
        return Vec::new();
    }
    uninstall(connector, &stale, opts, events)
}

/// Uninstalls `instances` in reverse order (what the finalizer does); instances already gone
/// are skipped. Returns the errors, one per instance that could not be deleted.
pub fn uninstall(
    connector: &(dyn Connector + Sync),
    instances: &[InstanceRef],
    opts: &ReconcileOptions,
    events: &(dyn Fn(ProjectEvent) + Sync),
) -> Vec<String> {
    let mut errors = Vec::new();
    let cluster = match connector.connect(&runtime::Cluster::default_cluster()) {
        Ok(c) => c,
        Err(e) => return vec![e.to_string()],
    };
    for inst in instances.iter().rev() {
        let present = match stored_instance(cluster.as_ref(), &inst.name, &inst.namespace) {
            Ok(_) => true,
            Err(ApplyError::Inventory(_)) => false,
            Err(e) => {
                errors.push(format!("instance {}/{}: {e}", inst.namespace, inst.name));
                continue;
            }
        };
        if !present {
            continue;
        }
        let req = DeleteRequest {
            name: inst.name.clone(),
            namespace: inst.namespace.clone(),
            dry_run: false,
            wait: true,
            timeout: opts.timeout,
            poll: opts.poll,
        };
        let err = delete_instance(cluster.as_ref(), &req, &mut |_| {})
            .err()
            .map(|e| format!("instance {}/{}: {e}", inst.namespace, inst.name));
        if let Some(e) = &err {
            errors.push(e.clone());
        }
        events(ProjectEvent::Pruned {
            instance: inst.clone(),
            error: err,
        });
    }
    errors
}

/// The runtime cluster a component uses on the Project's cluster: with explicit clusters, the
/// one named like the Project's cluster, else the first of its group.
fn pick_cluster(rt: &runtime::Runtime, target: &Target) -> Result<runtime::Cluster, String> {
    if rt.clusters.iter().all(|c| c.is_default()) {
        return Ok(runtime::Cluster::default_cluster());
    }
    let eq = |a: &Option<String>, b: &str| a.as_deref().is_some_and(|a| a.eq_ignore_ascii_case(b));
    rt.clusters
        .iter()
        .find(|c| eq(&target.cluster_name, &c.name))
        .or_else(|| rt.clusters.iter().find(|c| eq(&target.cluster_group, &c.group)))
        .cloned()
        .ok_or_else(|| {
            format!(
                "runtime {:?} has no cluster named {:?} nor in group {:?} (set the Project's {} and {} annotations)",
                rt.name,
                target.cluster_name.as_deref().unwrap_or(""),
                target.cluster_group.as_deref().unwrap_or(""),
                super::api::CLUSTER_ANNOTATION,
                super::api::GROUP_ANNOTATION,
            )
        })
}

fn read_files(paths: &[std::path::PathBuf]) -> crate::Result<Vec<SourceFile>> {
    paths.iter().map(|p| SourceFile::read(p)).collect()
}

/// The bundle request of a component: its files, its runtime cluster, the Project's cluster name
/// and group as values, and the Project's directory for `cue.mod` imports.
fn component_request(
    dir: &Path,
    component: &Component,
    target: &Target,
) -> crate::Result<BundleRequest> {
    let mut env = BTreeMap::new();
    if let Some(n) = &target.cluster_name {
        env.insert("TIMONI_CLUSTER_NAME".to_string(), n.clone());
    }
    if let Some(g) = &target.cluster_group {
        env.insert("TIMONI_CLUSTER_GROUP".to_string(), g.clone());
    }
    let mut req = BundleRequest {
        files: read_files(&component.bundle)?,
        runtime_files: read_files(&component.runtime)?,
        env: Some(env),
        cluster: "*".into(),
        group: "*".into(),
        workdir: Some(dir.to_path_buf()),
    };
    let rt = bundle::request_runtime(&req)?;
    let c = pick_cluster(&rt, target).map_err(crate::Error::Bundle)?;
    req.cluster = c.name;
    Ok(req)
}

#[allow(clippy::too_many_arguments)]
fn run_component(
    project: &Project,
    component: &Component,
    target: &Target,
    connector: &(dyn Connector + Sync),
    fetcher: Option<&dyn ModuleFetch>,
    opts: &ReconcileOptions,
    events: &(dyn Fn(ProjectEvent) + Sync),
) -> (ComponentStatus, Option<Failure>) {
    let started_at = jiff::Timestamp::now();
    events(ProjectEvent::ComponentStarted {
        component: component.name.clone(),
        at: started_at,
    });
    let mut status = ComponentStatus {
        name: component.name.clone(),
        phase: phase::PROGRESSING.into(),
        started_at: Some(started_at.to_string()),
        ..Default::default()
    };
    let dir = project.dir.as_path();
    let fail = |mut status: ComponentStatus, reason: &'static str, stalled: bool, msg: String| {
        let msg = relative(dir, &component.bundle, &msg);
        status.phase = phase::FAILED.into();
        status.error = Some(msg.clone());
        let failure = Failure {
            reason,
            message: format!("component {}: {msg}", status.name),
            stalled,
        };
        (status, Some(failure))
    };
    let req = match component_request(&project.dir, component, target) {
        Ok(r) => r,
        Err(e) => {
            let e = ApplyError::Build(e);
            return fail(status, "BuildFailed", is_deterministic(&e), e.to_string());
        }
    };
    let breq = BundleApplyRequest {
        bundle: req,
        package: "main".into(),
        dry_run: opts.dry_run,
        diff: false,
        correct_drift: opts.dry_run && opts.correct_drift,
        force: false,
        overwrite_ownership: false,
        // A drift check waits only for what it corrected.
        wait: !opts.dry_run || opts.correct_drift,
        timeout: opts.timeout,
        poll: opts.poll,
    };
    let mut instances = Vec::new();
    let mut started = jiff::Timestamp::now();
    let mut changes: Vec<Change> = Vec::new();
    let result = apply_bundle(connector, fetcher, &breq, &mut |e| match e {
        BundleEvent::Instance { .. } => {
            started = jiff::Timestamp::now();
            changes.clear();
        }
        BundleEvent::Apply(crate::cluster::apply::Event::Change(c)) => changes.push(c.clone()),
        BundleEvent::Applied {
            name,
            namespace,
            module,
            result,
            elapsed,
        } => {
            let instance = InstanceRef {
                name: name.to_string(),
                namespace: namespace.to_string(),
                module_url: module.repository.clone(),
                module_version: module.version.clone(),
                module_digest: Some(module.digest.clone()).filter(|d| !d.is_empty()),
            };
            if result.is_ok() {
                instances.push(instance.clone());
            }
            events(ProjectEvent::Instance(InstanceEvent {
                component: component.name.clone(),
                instance,
                changes: std::mem::take(&mut changes),
                started,
                duration: elapsed,
                error: result
                    .err()
                    .map(|e| relative(dir, &component.bundle, &e.to_string())),
            }));
        }
        _ => {}
    });
    status.instances = instances;
    match result {
        Ok(_) => {
            status.phase = phase::READY.into();
            if !opts.dry_run {
                status.last_applied_time = Some(jiff::Timestamp::now().to_string());
            }
            (status, None)
        }
        Err(e) => {
            let reason = failure_reason(&e);
            fail(status, reason, is_deterministic(&e), e.to_string())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_the_files_of_the_artifact() {
        let dir = Path::new("/cache/tmp/project-x/project");
        let bundle = [dir.join("my-app/bundle.cue"), dir.join("my-app/extra.cue")];
        let msg = "failed to build bundle: a: conflicting values 1 and 2:\n    1.extra.cue:3:4\n    0.bundle.cue:12:5\n    /cache/tmp/project-x/project/modules/x/values.cue:1:2";
        assert_eq!(
            relative(dir, &bundle, msg),
            "failed to build bundle: a: conflicting values 1 and 2:\n    my-app/extra.cue:3:4\n    my-app/bundle.cue:12:5\n    modules/x/values.cue:1:2"
        );
    }
}
