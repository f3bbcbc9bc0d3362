//! The reconcile of one Project, in the controller-rs shape: [`reconcile`] runs inside
//! `kube::runtime::finalizer` (apply, or uninstall on delete), [`error_policy`] answers failures
//! with the Project's exponential backoff, the status is written with server-side apply on the
//! status subresource (field manager `timoni-controller`) and progress goes out as Events.
//!
//! One apply: read the service account's pull secrets (registries they do not cover are logged
//! in to with the service account's cloud workload identity, see [`crate::workload_identity`]),
//! resolve the watched tag, and stop there
//! (no write at all) when that digest is already applied, nothing was asked and the instances
//! are still there; else pull the artifact, load `project.cue`, and run the blocking
//! `timoni_core::project::reconcile::reconcile_project` on the blocking pool, impersonating the
//! Project's service account, its events forwarded to the Event recorder as they come.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Secret;
use kube::api::{Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::runtime::events::{Recorder, Reporter};
use kube::runtime::finalizer::{Event as Finalizer, finalizer};
use kube::{Api, Client, Resource, ResourceExt};
use serde_json::json;
use timoni_core::cluster::inventory;
use timoni_core::cluster::kube::{ConfigConnector, impersonate_service_account};
use timoni_core::oci::cloud::TokenCache;
use timoni_core::oci::sign::{VerificationPolicy, VerifyingFetcher};
use timoni_core::oci::{self, ArtifactUrl, Cache, ConnectOptions, Fetcher, ModuleFetch};
use timoni_core::project::api::{
    self, API_VERSION, ComponentStatus, InstanceRef, Project, ProjectStatus,
};
use timoni_core::project::definition::load_project;
use timoni_core::project::reconcile::{
    self as core_reconcile, ProjectEvent, ReconcileOptions, Target, phase,
};
use timoni_core::project::source::{fetch_project, resolve_tag};

use crate::conditions::{self, reason};
use crate::metrics::Metrics;
use crate::workload_identity::{self, CloudSettings};
use crate::{events, pull_secrets, verification};

/// The field manager of the status and the reporting controller of Events.
pub const FIELD_MANAGER: &str = "timoni-controller";

/// What every reconcile shares.
pub struct Context {
    pub client: Client,
    /// The controller's own client configuration; impersonation is added per Project.
    pub config: kube::Config,
    pub cache_dir: PathBuf,
    /// Who publishes Events.
    pub reporter: Reporter,
    pub metrics: Arc<Metrics>,
    /// The readiness poll interval of applies.
    pub poll: Duration,
    /// Plain HTTP to every registry (loopback registries always use it).
    pub registry_insecure: bool,
    /// Workload identity settings for registries without pull secrets.
    pub cloud: CloudSettings,
    /// Cloud registry logins, shared by every reconcile.
    pub tokens: TokenCache,
    /// Consecutive failures per `namespace/name`, for the backoff.
    failures: Mutex<HashMap<String, u32>>,
}

impl Context {
    pub fn new(
        client: Client,
        config: kube::Config,
        cache_dir: PathBuf,
        metrics: Arc<Metrics>,
        poll: Duration,
        registry_insecure: bool,
        instance: Option<String>,
    ) -> Context {
        let reporter = Reporter {
            controller: FIELD_MANAGER.into(),
            instance,
        };
        Context {
            reporter,
            client,
            config,
            cache_dir,
            metrics,
            poll,
            registry_insecure,
            cloud: CloudSettings::default(),
            tokens: TokenCache::default(),
            failures: Mutex::new(HashMap::new()),
        }
    }

    /// With these workload identity settings.
    pub fn with_cloud(mut self, cloud: CloudSettings) -> Context {
        self.cloud = cloud;
        self
    }

    fn failures(&self) -> std::sync::MutexGuard<'_, HashMap<String, u32>> {
        self.failures.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Why a reconcile failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A failure recorded in the status (`Ready=False` with this reason).
    #[error("{reason}: {message}")]
    Reconcile {
        reason: &'static str,
        message: String,
    },
    /// A request of the controller itself (status, finalizer) failed.
    #[error("kubernetes API: {0}")]
    Kube(#[from] kube::Error),
    #[error("{0}")]
    Finalizer(#[source] Box<kube::runtime::finalizer::Error<Error>>),
}

impl Error {
    /// The reason for metrics and the backoff.
    pub fn reason(&self) -> &str {
        match self {
            Error::Reconcile { reason, .. } => reason,
            Error::Kube(_) => reason::KUBE_ERROR,
            Error::Finalizer(f) => match f.as_ref() {
                kube::runtime::finalizer::Error::ApplyFailed(e)
                | kube::runtime::finalizer::Error::CleanupFailed(e) => e.reason(),
                _ => reason::KUBE_ERROR,
            },
        }
    }
}

fn key(p: &Project) -> String {
    format!("{}/{}", p.namespace().unwrap_or_default(), p.name_any())
}

/// The controller's reconcile function.
pub async fn reconcile(project: Arc<Project>, ctx: Arc<Context>) -> Result<Action, Error> {
    let started = Instant::now();
    let ns = project.namespace().unwrap_or_default();
    let api: Api<Project> = Api::namespaced(ctx.client.clone(), &ns);
    let result = finalizer(&api, api::FINALIZER, project, |event| async {
        match event {
            Finalizer::Apply(p) => apply(&p, &ctx).await,
            Finalizer::Cleanup(p) => cleanup(&p, &ctx).await,
        }
    })
    .await
    .map_err(|e| Error::Finalizer(Box::new(e)));
    ctx.metrics
        .observe(started.elapsed(), result.as_ref().err().map(|e| e.reason()));
    result
}

/// The controller's error policy: the Project's exponential backoff over its consecutive
/// failures, or the maximum backoff when the failure is one retrying cannot fix.
pub fn error_policy(project: Arc<Project>, error: &Error, ctx: Arc<Context>) -> Action {
    let failures = {
        let mut f = ctx.failures();
        let n = f.entry(key(&project)).or_insert(0);
        *n = n.saturating_add(1);
        *n
    };
    let (min, max) = project
        .spec
        .backoff()
        .unwrap_or((Duration::from_secs(5), Duration::from_secs(300)));
    let wait = if conditions::is_stalled(error.reason()) {
        max
    } else {
        api::backoff(min, max, failures)
    };
    tracing::warn!(project = %key(&project), %error, failures, ?wait, "reconcile failed");
    Action::requeue(wait)
}

/// The work of one run before its result is written.
struct Run {
    digest: Option<String>,
    components: Option<Vec<ComponentStatus>>,
    failure: Option<(&'static str, String)>,
}

impl Run {
    fn failed(reason: &'static str, message: impl Into<String>) -> Run {
        Run {
            digest: None,
            components: None,
            failure: Some((reason, message.into())),
        }
    }
}

async fn patch_status(
    ctx: &Context,
    project: &Project,
    status: &ProjectStatus,
) -> Result<(), kube::Error> {
    let api: Api<Project> =
        Api::namespaced(ctx.client.clone(), &project.namespace().unwrap_or_default());
    let patch = json!({"apiVersion": API_VERSION, "kind": "Project", "status": status});
    let pp = PatchParams::apply(FIELD_MANAGER).force();
    api.patch_status(&project.name_any(), &pp, &Patch::Apply(&patch))
        .await?;
    Ok(())
}

/// Publishes `ev` about `project`. A fresh [`Recorder`] each time: a recorder folds the Events
/// with the same reason and object into one series keeping the first note, which would show
/// the first instance's resources for every instance and a stale note on the next run; each
/// apply deserves its own Event.
async fn publish(ctx: &Context, project: &Project, ev: kube::runtime::events::Event) {
    let reference = project.object_ref(&());
    let recorder = Recorder::new(ctx.client.clone(), ctx.reporter.clone());
    if let Err(e) = recorder.publish(&ev, &reference).await {
        tracing::warn!(project = %key(project), error = %e, "cannot publish an event");
    }
}

fn now() -> String {
    jiff::Timestamp::now().to_string()
}

/// Runs blocking work on the blocking pool, turning a panic into an error.
async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Result<T, String> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| format!("internal error: {e}"))
}

/// Whether the instances the status lists are still installed. "Healthy" is taken to mean
/// that their inventory Secrets exist: the readiness of their objects was checked when they
/// were applied, and the next change of the artifact, the spec or the requestedAt annotation
/// applies (and checks) them again.
async fn instances_present(ctx: &Context, status: &ProjectStatus) -> Result<bool, kube::Error> {
    for c in &status.components {
        for i in &c.instances {
            let secrets: Api<Secret> = Api::namespaced(ctx.client.clone(), &i.namespace);
            if secrets
                .get_metadata_opt(&inventory::secret_name(&i.name))
                .await?
                .is_none()
            {
                return Ok(false);
            }
        }
    }
    Ok(true)
}

async fn apply(project: &Project, ctx: &Context) -> Result<Action, Error> {
    let generation = project.metadata.generation;
    let previous = project.status.clone().unwrap_or_default();
    if project.spec.suspend {
        let mut status = previous.clone();
        conditions::suspended(&mut status.conditions, generation, &now());
        if status != previous {
            patch_status(ctx, project, &status).await?;
        }
        ctx.failures().remove(&key(project));
        return Ok(Action::await_change());
    }
    let requested = project
        .annotations()
        .get(api::REQUESTED_AT_ANNOTATION)
        .cloned();
    let spec_checks = (
        project.spec.interval(),
        project.spec.timeout(),
        project.spec.backoff(),
        ArtifactUrl::parse(&project.spec.source.repository),
    );
    let (interval, timeout, url) = match spec_checks {
        (Ok(i), Ok(t), Ok(_), Ok(u)) => (i, t, u),
        (i, t, b, u) => {
            let msg = [i.err(), t.err(), b.err(), u.err().map(|e| e.to_string())]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join("; ");
            let run = Run::failed(reason::VALIDATION_FAILED, format!("invalid spec: {msg}"));
            return finish(project, ctx, &previous, run, requested).await;
        }
    };
    let tmp = ctx.cache_dir.join("tmp");
    let docker = match pull_secrets::docker_config(
        &ctx.client,
        &project.namespace().unwrap_or_default(),
        &project.spec.service_account_name,
        &tmp,
    )
    .await
    {
        Ok(d) => d,
        Err(e) => {
            let run = Run::failed(reason::PULL_SECRETS_FAILED, e);
            return finish(project, ctx, &previous, run, requested).await;
        }
    };
    let identity = match workload_identity::for_service_account(
        &ctx.client,
        &project.namespace().unwrap_or_default(),
        &project.spec.service_account_name,
        &ctx.cloud,
        &ctx.tokens,
    )
    .await
    {
        Ok(i) => i,
        Err(e) => {
            let run = Run::failed(reason::PULL_SECRETS_FAILED, e);
            return finish(project, ctx, &previous, run, requested).await;
        }
    };
    let connect = ConnectOptions {
        creds: None,
        docker_config: docker.as_ref().map(|d| d.path()),
        insecure: ctx.registry_insecure,
        workload_identity: Some(Arc::new(identity)),
    };

    let policy = match &project.spec.verify {
        None => None,
        Some(v) => {
            let ns = project.namespace().unwrap_or_default();
            match verification::policy(&ctx.client, &ns, v).await {
                Ok(p) => Some(Arc::new(p)),
                Err(e) => {
                    let run = Run::failed(reason::VERIFICATION_FAILED, e);
                    return finish(project, ctx, &previous, run, requested).await;
                }
            }
        }
    };

    // Resolve the tag.
    let tag = project.spec.tag().to_string();
    let resolved = {
        let (url, connect) = (url.clone(), connect.clone());
        blocking(move || {
            let registry = oci::connect(&url, &connect).map_err(|e| e.to_string())?;
            resolve_tag(&registry, &url, &tag).map_err(|e| e.to_string())
        })
        .await
        .and_then(|r| r)
    };
    let digest = match resolved {
        Ok(d) => d,
        Err(e) => {
            let run = Run::failed(reason::ARTIFACT_FAILED, e);
            return finish(project, ctx, &previous, run, requested).await;
        }
    };

    // Nothing changed: no write at all.
    if previous.last_applied_digest.as_deref() == Some(digest.as_str())
        && previous.observed_generation == generation
        && previous.last_handled_reconcile_at == requested
        && conditions::is_true(&previous.conditions, conditions::READY)
        && instances_present(ctx, &previous).await?
    {
        ctx.failures().remove(&key(project));
        return Ok(Action::requeue(interval));
    }

    // Announce the run.
    let mut status = previous.clone();
    status.last_attempted_digest = Some(digest.clone());
    conditions::progressing(
        &mut status.conditions,
        &format!("reconciling revision {digest}"),
        generation,
        &now(),
    );
    if status != previous {
        patch_status(ctx, project, &status).await?;
    }

    let run = run_project(
        project, ctx, url, digest, connect, policy, timeout, &previous,
    )
    .await;
    drop(docker);
    let failed = run.failure.is_some();
    let action = finish(project, ctx, &previous, run, requested).await?;
    Ok(if failed {
        action
    } else {
        Action::requeue(interval)
    })
}

/// Pulls, loads and applies the Project at `digest`.
#[allow(clippy::too_many_arguments)]
async fn run_project(
    project: &Project,
    ctx: &Context,
    url: ArtifactUrl,
    digest: String,
    connect: ConnectOptions,
    policy: Option<Arc<VerificationPolicy>>,
    timeout: Duration,
    previous: &ProjectStatus,
) -> Run {
    let ns = project.namespace().unwrap_or_default();
    let tmp = ctx.cache_dir.join("tmp");
    let workdir = match std::fs::create_dir_all(&tmp)
        .and_then(|_| tempfile::Builder::new().prefix("project-").tempdir_in(&tmp))
    {
        Ok(d) => d,
        Err(e) => return Run::failed(reason::ARTIFACT_FAILED, format!("{}: {e}", tmp.display())),
    };
    let cache = Cache::new(ctx.cache_dir.join("layers"));
    let path = project.spec.path().to_string();
    let dest = workdir.path().join("project");
    let loaded = {
        let (url, digest, connect, cache) = (url, digest.clone(), connect.clone(), cache.clone());
        let policy = policy.clone();
        blocking(move || {
            if let Some(policy) = &policy {
                oci::sign::verify(&url.with_digest(&digest), policy, &connect)
                    .map_err(|e| (reason::VERIFICATION_FAILED, e.to_string()))?;
            }
            let registry = oci::connect(&url, &connect)
                .map_err(|e| (reason::ARTIFACT_FAILED, e.to_string()))?;
            fetch_project(&registry, &url, &digest, &dest, &cache)
                .map_err(|e| (reason::ARTIFACT_FAILED, e.to_string()))?;
            // Messages name files relative to the artifact, not the temporary directory.
            let prefix = format!("{}/", dest.display());
            load_project(&dest, &path).map_err(|e| {
                (
                    reason::VALIDATION_FAILED,
                    e.to_string().replace(&prefix, ""),
                )
            })
        })
        .await
        .map_err(|e| (reason::ARTIFACT_FAILED, e))
        .and_then(|r| r)
    };
    let definition = match loaded {
        Ok(p) => p,
        Err((r, m)) => {
            return Run {
                digest: Some(digest),
                ..Run::failed(r, m)
            };
        }
    };

    let mut config = ctx.config.clone();
    impersonate_service_account(&mut config, &ns, &project.spec.service_account_name);
    let connector = ConfigConnector { config };
    let fetcher = Fetcher {
        connect,
        cache,
        network: true,
    };
    let annotations = project.annotations();
    let target = Target {
        cluster_name: annotations.get(api::CLUSTER_ANNOTATION).cloned(),
        cluster_group: annotations.get(api::GROUP_ANNOTATION).cloned(),
    };
    let opts = ReconcileOptions {
        timeout,
        poll: ctx.poll,
        previous: previous
            .components
            .iter()
            .flat_map(|c| c.instances.iter().cloned())
            .collect(),
    };
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<ProjectEvent>();
    let work = blocking(move || {
        let send = move |e: ProjectEvent| {
            let _ = tx.send(e);
        };
        // With spec.verify, every module the Project pulls is verified as its artifact was.
        let verifying = policy.map(|policy| VerifyingFetcher {
            fetcher: fetcher.clone(),
            policy,
        });
        let modules: &dyn ModuleFetch = match &verifying {
            Some(v) => v,
            None => &fetcher,
        };
        let outcome = core_reconcile::reconcile_project(
            &definition,
            &target,
            &connector,
            Some(modules),
            &opts,
            &send,
        );
        drop(workdir);
        outcome
    });
    let forward = async {
        while let Some(e) = rx.recv().await {
            if let Some(ev) = events::for_project_event(&e) {
                publish(ctx, project, ev).await;
            }
        }
    };
    let (outcome, ()) = tokio::join!(work, forward);
    match outcome {
        Ok(o) => Run {
            digest: Some(digest),
            failure: o.failure.clone().map(|f| (f.reason, f.message)),
            components: Some(o.components),
        },
        Err(e) => Run {
            digest: Some(digest),
            ..Run::failed(reason::ARTIFACT_FAILED, e)
        },
    }
}

/// After a failure, the instances applied before that this run did not apply again stay in
/// the status, so that a later successful run prunes them and a delete uninstalls them.
fn carry_over(previous: &[ComponentStatus], mut now: Vec<ComponentStatus>) -> Vec<ComponentStatus> {
    let same = |a: &InstanceRef, b: &InstanceRef| a.name == b.name && a.namespace == b.namespace;
    let listed = |all: &[ComponentStatus], i: &InstanceRef| {
        all.iter().any(|c| c.instances.iter().any(|j| same(i, j)))
    };
    let mut gone = Vec::new();
    for old in previous {
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
                ..Default::default()
            }),
        }
    }
    now.extend(gone);
    now
}

/// Writes the result of a run (status and Event) and turns a failure into an error for
/// [`error_policy`].
async fn finish(
    project: &Project,
    ctx: &Context,
    previous: &ProjectStatus,
    run: Run,
    requested: Option<String>,
) -> Result<Action, Error> {
    let generation = project.metadata.generation;
    let t = now();
    let mut status = previous.clone();
    status.observed_generation = generation;
    status.last_handled_reconcile_at = requested;
    if let Some(d) = &run.digest {
        status.last_attempted_digest = Some(d.clone());
    }
    match &run.failure {
        None => {
            let digest = run.digest.clone().unwrap_or_default();
            let msg = format!("applied revision {digest}");
            status.last_applied_digest = run.digest.clone();
            status.components = run.components.unwrap_or_default();
            conditions::succeeded(&mut status.conditions, &msg, generation, &t);
            patch_status(ctx, project, &status).await?;
            publish(ctx, project, events::result(true, "", &msg)).await;
            ctx.failures().remove(&key(project));
            Ok(Action::await_change())
        }
        Some((r, message)) => {
            if let Some(c) = run.components {
                status.components = carry_over(&previous.components, c);
            }
            let message = events::truncate(message, 4000);
            conditions::failed(&mut status.conditions, r, &message, generation, &t);
            patch_status(ctx, project, &status).await?;
            publish(ctx, project, events::result(false, r, &message)).await;
            Err(Error::Reconcile { reason: r, message })
        }
    }
}

/// On delete: uninstalls the instances the status lists, impersonating the service account,
/// unless the Project carries `projects.timoni.sh/orphan: "true"`.
async fn cleanup(project: &Project, ctx: &Context) -> Result<Action, Error> {
    ctx.failures().remove(&key(project));
    if project
        .annotations()
        .get(api::ORPHAN_ANNOTATION)
        .is_some_and(|v| v == "true")
    {
        return Ok(Action::await_change());
    }
    let instances: Vec<InstanceRef> = project
        .status
        .iter()
        .flat_map(|s| s.components.iter())
        .flat_map(|c| c.instances.iter().cloned())
        .collect();
    if instances.is_empty() {
        return Ok(Action::await_change());
    }
    let mut config = ctx.config.clone();
    impersonate_service_account(
        &mut config,
        &project.namespace().unwrap_or_default(),
        &project.spec.service_account_name,
    );
    let opts = ReconcileOptions {
        timeout: project.spec.timeout().unwrap_or(Duration::from_secs(300)),
        poll: ctx.poll,
        previous: Vec::new(),
    };
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<ProjectEvent>();
    let work = blocking(move || {
        let connector = ConfigConnector { config };
        let send = move |e: ProjectEvent| {
            let _ = tx.send(e);
        };
        core_reconcile::uninstall(&connector, &instances, &opts, &send)
    });
    let forward = async {
        while let Some(e) = rx.recv().await {
            if let Some(ev) = events::for_project_event(&e) {
                publish(ctx, project, ev).await;
            }
        }
    };
    let (errors, ()) = tokio::join!(work, forward);
    let errors = errors.map_err(|e| Error::Reconcile {
        reason: "UninstallFailed",
        message: e,
    })?;
    if errors.is_empty() {
        Ok(Action::await_change())
    } else {
        Err(Error::Reconcile {
            reason: "UninstallFailed",
            message: errors.join("; "),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inst(n: &str) -> InstanceRef {
        InstanceRef {
            name: n.into(),
            namespace: "ns".into(),
            ..Default::default()
        }
    }

    fn comp(name: &str, instances: &[&str]) -> ComponentStatus {
        ComponentStatus {
            name: name.into(),
            phase: phase::READY.into(),
            instances: instances.iter().map(|i| inst(i)).collect(),
            ..Default::default()
        }
    }

    #[test]
    fn failed_runs_keep_the_instances_they_did_not_apply_again() {
        let previous = [comp("a", &["a1", "a2"]), comp("old", &["o1"])];
        let now = vec![comp("a", &["a1"]), comp("b", &[])];
        let merged = carry_over(&previous, now);
        let names: Vec<(String, Vec<String>)> = merged
            .iter()
            .map(|c| {
                (
                    c.name.clone(),
                    c.instances.iter().map(|i| i.name.clone()).collect(),
                )
            })
            .collect();
        assert_eq!(
            names,
            [
                ("a".to_string(), vec!["a1".to_string(), "a2".to_string()]),
                ("b".to_string(), vec![]),
                ("old".to_string(), vec!["o1".to_string()]),
            ]
        );
        assert_eq!(merged[2].phase, phase::PENDING);
    }
}

#[cfg(test)]
mod policy_tests {
    use super::*;
    use timoni_core::project::api::{ProjectSpec, RetrySpec};

    #[tokio::test]
    async fn retries_back_off_exponentially_per_project_and_stalled_ones_wait_the_most() {
        let config = kube::Config::new("http://127.0.0.1:1".parse().unwrap());
        let client = Client::try_from(config.clone()).unwrap();
        let dir = std::env::temp_dir();
        let ctx = Arc::new(Context::new(
            client,
            config,
            dir,
            Arc::new(Metrics::default()),
            Duration::from_secs(1),
            false,
            None,
        ));
        let spec = ProjectSpec {
            retry: Some(RetrySpec {
                min_backoff: Some("1s".into()),
                max_backoff: Some("5s".into()),
            }),
            ..Default::default()
        };
        let mut p = Project::new("p", spec);
        p.metadata.namespace = Some("ns".into());
        let p = Arc::new(p);
        let err = |reason| Error::Reconcile {
            reason,
            message: String::new(),
        };
        let waits: Vec<Action> = (0..4)
            .map(|_| error_policy(p.clone(), &err("Forbidden"), ctx.clone()))
            .collect();
        let expected: Vec<Action> = [1, 2, 4, 5]
            .into_iter()
            .map(|s| Action::requeue(Duration::from_secs(s)))
            .collect();
        assert_eq!(waits, expected);
        assert_eq!(
            error_policy(p.clone(), &err(reason::VALIDATION_FAILED), ctx.clone()),
            Action::requeue(Duration::from_secs(5))
        );
        // A success forgets the failures.
        ctx.failures().remove(&key(&p));
        assert_eq!(
            error_policy(p, &err("Forbidden"), ctx),
            Action::requeue(Duration::from_secs(1))
        );
    }
}
