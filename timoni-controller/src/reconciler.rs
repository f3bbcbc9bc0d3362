//! The reconcile of one Project, in the controller-rs shape: [`reconcile`] runs inside
//! `kube::runtime::finalizer` (apply, or uninstall on delete), [`error_policy`] answers failures
//! with the Project's exponential backoff, the status is written with server-side apply on the
//! status subresource (field manager `timoni-controller`) and progress goes out as Events.
//!
//! One apply: read the service account's pull secrets into memory (registries they do not
//! cover are logged in to with the service account's cloud workload identity, see
//! [`crate::workload_identity`]), resolve the watched tag, and let
//! `timoni_core::project::plan::decide` say what to do: nothing (a `Stalled` failure of the same
//! inputs), a drift check (nothing changed: a server-side apply dry run, re-applying or only
//! reporting what drifted), or a run: pull the artifact, load `project.cue`, and run the
//! blocking `timoni_core::project::reconcile::reconcile_project` on the blocking pool,
//! impersonating the Project's service account, its events written to the status, the logs
//! and the Event recorder as they come.

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
    self, API_VERSION, ComponentStatus, DriftMode, InstanceRef, Project, ProjectStatus,
};
use timoni_core::project::definition::load_project;
use timoni_core::project::plan::{self, Decision, Observed};
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
        /// Retrying the same inputs cannot help.
        stalled: bool,
    },
    /// A request of the controller itself (status, finalizer) failed.
    #[error("kubernetes API: {0}")]
    Kube(#[from] kube::Error),
    #[error("{0}")]
    Finalizer(#[source] Box<kube::runtime::finalizer::Error<Error>>),
}

impl Error {
    /// Whether retrying cannot help until the Project or its artifact changes.
    pub fn stalled(&self) -> bool {
        match self {
            Error::Reconcile {
                reason, stalled, ..
            } => *stalled || conditions::is_stalled(reason),
            Error::Finalizer(f) => match f.as_ref() {
                kube::runtime::finalizer::Error::ApplyFailed(e)
                | kube::runtime::finalizer::Error::CleanupFailed(e) => e.stalled(),
                _ => false,
            },
            Error::Kube(_) => false,
        }
    }

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
    .map_err(|e| match e {
        // The apply's or cleanup's own error, without kube's "failed to apply object:" prefix.
        kube::runtime::finalizer::Error::ApplyFailed(e)
        | kube::runtime::finalizer::Error::CleanupFailed(e) => e,
        e => Error::Finalizer(Box::new(e)),
    });
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
    let wait = if error.stalled() {
        max
    } else {
        api::backoff(min, max, failures)
    };
    let error = error.to_string().replace('\n', "; ");
    tracing::warn!(project = %key(&project), %error, failures, ?wait, "reconcile failed");
    Action::requeue(wait)
}

/// The work of one run before its result is written.
struct Run {
    digest: Option<String>,
    components: Option<Vec<ComponentStatus>>,
    /// Reason, message, and whether retrying the same inputs cannot help.
    failure: Option<(&'static str, String, bool)>,
}

impl Run {
    fn failed(reason: &'static str, message: impl Into<String>) -> Run {
        Run {
            digest: None,
            components: None,
            failure: Some((reason, message.into(), false)),
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

/// Whether the instances the status lists are still installed (their inventory Secrets
/// exist); used when drift checks are disabled.
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
        tracing::info!(project = %key(project), "skip: suspended");
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
    let credentials = match pull_secrets::credentials(
        &ctx.client,
        &project.namespace().unwrap_or_default(),
        &project.spec.service_account_name,
    )
    .await
    {
        Ok(c) => c,
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
        registry_credentials: credentials,
        docker_config: None,
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

    let observed = Observed {
        digest: &digest,
        generation,
        requested_at: requested.as_deref(),
        drift: project.spec.drift.unwrap_or_default(),
    };
    let triggers = match plan::decide(&previous, &observed) {
        Decision::Stalled => {
            tracing::info!(project = %key(project), %digest,
                "skip: the last run of this artifact failed in a way retrying cannot fix (Stalled); waiting for a new artifact, spec or reconcile request");
            ctx.failures().remove(&key(project));
            return Ok(Action::requeue(interval));
        }
        Decision::UpToDate(DriftMode::Disabled) => {
            if instances_present(ctx, &previous).await? {
                tracing::info!(project = %key(project), %digest, "skip: up to date");
                ctx.failures().remove(&key(project));
                return Ok(Action::requeue(interval));
            }
            "instances missing".to_string()
        }
        Decision::UpToDate(_) if !instances_present(ctx, &previous).await? => {
            "instances missing".to_string()
        }
        Decision::UpToDate(mode) => {
            let work = Work {
                url,
                digest,
                connect,
                policy,
                timeout,
            };
            return check_drift(project, ctx, &previous, work, mode, interval).await;
        }
        Decision::Apply(t) => t
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", "),
    };
    tracing::info!(project = %key(project), %digest, why = %triggers, "run starts");

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

    let work = Work {
        url,
        digest,
        connect,
        policy,
        timeout,
    };
    let run = run_project(project, ctx, work, status, &previous).await;
    let failed = run.failure.is_some();
    let action = finish(project, ctx, &previous, run, requested).await?;
    Ok(if failed {
        action
    } else {
        Action::requeue(interval)
    })
}

/// What a run pulls and how.
struct Work {
    url: ArtifactUrl,
    digest: String,
    connect: ConnectOptions,
    policy: Option<Arc<VerificationPolicy>>,
    timeout: Duration,
}

/// A pulled and loaded Project, ready to apply.
struct Loaded {
    definition: timoni_core::project::definition::Project,
    /// Holds the artifact's files until the run ends.
    workdir: tempfile::TempDir,
    connector: ConfigConnector,
    fetcher: Fetcher,
    target: Target,
    /// With `spec.verify`: what every module the run pulls must be signed by.
    policy: Option<Arc<VerificationPolicy>>,
}

/// Pulls the artifact at `work.digest` and loads its Project file.
async fn load(project: &Project, ctx: &Context, work: &Work) -> Result<Loaded, Run> {
    let ns = project.namespace().unwrap_or_default();
    let tmp = ctx.cache_dir.join("tmp");
    let workdir = std::fs::create_dir_all(&tmp)
        .and_then(|_| tempfile::Builder::new().prefix("project-").tempdir_in(&tmp))
        .map_err(|e| Run::failed(reason::ARTIFACT_FAILED, format!("{}: {e}", tmp.display())))?;
    let cache = Cache::new(ctx.cache_dir.join("layers"));
    let path = project.spec.path().to_string();
    let dest = workdir.path().join("project");
    let loaded = {
        let (url, digest, connect, cache) = (
            work.url.clone(),
            work.digest.clone(),
            work.connect.clone(),
            cache.clone(),
        );
        let policy = work.policy.clone();
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
    let definition = loaded.map_err(|(r, m)| Run {
        digest: Some(work.digest.clone()),
        ..Run::failed(r, m)
    })?;
    let mut config = ctx.config.clone();
    impersonate_service_account(&mut config, &ns, &project.spec.service_account_name);
    let annotations = project.annotations();
    Ok(Loaded {
        definition,
        workdir,
        connector: ConfigConnector { config },
        fetcher: Fetcher {
            connect: work.connect.clone(),
            cache,
            network: true,
        },
        target: Target {
            cluster_name: annotations.get(api::CLUSTER_ANNOTATION).cloned(),
            cluster_group: annotations.get(api::GROUP_ANNOTATION).cloned(),
        },
        policy: work.policy.clone(),
    })
}

/// Runs `reconcile_project` on the blocking pool, handing its progress to `on_event` as it
/// comes.
async fn reconcile_loaded<F, Fut>(
    loaded: Loaded,
    opts: ReconcileOptions,
    mut on_event: F,
) -> Result<core_reconcile::Outcome, String>
where
    F: FnMut(ProjectEvent) -> Fut,
    Fut: Future<Output = ()>,
{
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<ProjectEvent>();
    let work = blocking(move || {
        let send = move |e: ProjectEvent| {
            let _ = tx.send(e);
        };
        // With spec.verify, every module the Project pulls is verified as its artifact was.
        let verifying = loaded.policy.clone().map(|policy| VerifyingFetcher {
            fetcher: loaded.fetcher.clone(),
            policy,
        });
        let modules: &dyn ModuleFetch = match &verifying {
            Some(v) => v,
            None => &loaded.fetcher,
        };
        let outcome = core_reconcile::reconcile_project(
            &loaded.definition,
            &loaded.target,
            &loaded.connector,
            Some(modules),
            &opts,
            &send,
        );
        drop(loaded.workdir);
        outcome
    });
    let forward = async {
        while let Some(e) = rx.recv().await {
            on_event(e).await;
        }
    };
    let (outcome, ()) = tokio::join!(work, forward);
    outcome
}

fn previous_instances(previous: &ProjectStatus) -> Vec<InstanceRef> {
    previous
        .components
        .iter()
        .flat_map(|c| c.instances.iter().cloned())
        .collect()
}

/// Logs one instance apply at INFO (WARN when it failed), with the project, component and
/// instance as fields.
fn log_instance(project: &str, e: &core_reconcile::InstanceEvent) {
    let instance = format!("{}/{}", e.instance.namespace, e.instance.name);
    let changed = e
        .changes
        .iter()
        .filter(|c| c.action != timoni_core::cluster::apply::Action::Unchanged)
        .count();
    match &e.error {
        None => tracing::info!(
            project,
            component = %e.component,
            instance,
            module = %format!("{}@{}", e.instance.module_url, e.instance.module_version),
            objects = e.changes.len(),
            changed,
            duration_ms = e.duration.as_millis() as u64,
            "apply"
        ),
        Some(error) => tracing::warn!(
            project,
            component = %e.component,
            instance,
            module = %format!("{}@{}", e.instance.module_url, e.instance.module_version),
            duration_ms = e.duration.as_millis() as u64,
            error = %error.replace('\n', "; "),
            "apply failed"
        ),
    }
}

/// Pulls, loads and applies the Project at `work.digest`; `status` (the announced status) is
/// updated and written as each component starts and ends, so that the run can be watched.
async fn run_project(
    project: &Project,
    ctx: &Context,
    work: Work,
    mut status: ProjectStatus,
    previous: &ProjectStatus,
) -> Run {
    let loaded = match load(project, ctx, &work).await {
        Ok(l) => l,
        Err(run) => return run,
    };
    let digest = work.digest.clone();
    // Every component of this artifact starts Pending, keeping what it had applied.
    let pending: Vec<ComponentStatus> = loaded
        .definition
        .components
        .iter()
        .map(|c| {
            let old = previous.components.iter().find(|o| o.name == c.name);
            ComponentStatus {
                name: c.name.clone(),
                phase: phase::PENDING.into(),
                digest: Some(digest.clone()),
                last_applied_time: old.and_then(|o| o.last_applied_time.clone()),
                instances: old.map(|o| o.instances.clone()).unwrap_or_default(),
                ..Default::default()
            }
        })
        .collect();
    status.components = plan::carry_over(&previous.components, pending);
    if let Err(e) = patch_status(ctx, project, &status).await {
        tracing::warn!(project = %key(project), error = %e, "cannot write the run's progress");
    }
    let opts = ReconcileOptions {
        timeout: work.timeout,
        poll: ctx.poll,
        previous: previous_instances(previous),
        dry_run: false,
        correct_drift: false,
    };
    let name = key(project);
    let status = tokio::sync::Mutex::new(status);
    let outcome = reconcile_loaded(loaded, opts, |e| {
        let (name, status, digest) = (&name, &status, &digest);
        async move {
            let mut live = None;
            match &e {
                ProjectEvent::ComponentStarted { component, at } => {
                    tracing::info!(project = %name, component, %digest, "component starts");
                    let mut s = status.lock().await;
                    if let Some(c) = s.components.iter_mut().find(|c| &c.name == component) {
                        c.phase = phase::PROGRESSING.into();
                        c.started_at = Some(at.to_string());
                        // The artifact being applied, while it is.
                        c.digest = Some(digest.clone());
                        c.error = None;
                    }
                    live = Some(s.clone());
                }
                ProjectEvent::ComponentFinished(done) => {
                    let mut s = status.lock().await;
                    if let Some(c) = s.components.iter_mut().find(|c| c.name == done.name) {
                        let kept = c.instances.clone();
                        let applied = c.last_applied_time.clone();
                        *c = ComponentStatus {
                            digest: Some(digest.clone()),
                            last_applied_time: done.last_applied_time.clone().or(applied),
                            ..done.clone()
                        };
                        for i in kept {
                            if !c.instances.iter().any(|j| j.name == i.name && j.namespace == i.namespace) {
                                c.instances.push(i);
                            }
                        }
                    }
                    if done.phase == phase::BLOCKED {
                        tracing::info!(project = %name, component = %done.name, "skip: blocked by a component it needs");
                    }
                    live = Some(s.clone());
                }
                ProjectEvent::Instance(i) => log_instance(name, i),
                ProjectEvent::Pruned { instance, error } => {
                    let instance = format!("{}/{}", instance.namespace, instance.name);
                    match error {
                        None => tracing::info!(project = %name, instance, "prune"),
                        Some(error) => tracing::warn!(project = %name, instance, error = %error.replace('\n', "; "), "prune failed"),
                    }
                }
            }
            if let Some(ev) = events::for_project_event(&e, digest) {
                publish(ctx, project, ev).await;
            }
            if let Some(s) = live
                && let Err(e) = patch_status(ctx, project, &s).await
            {
                tracing::warn!(project = %name, error = %e, "cannot write the run's progress");
            }
        }
    })
    .await;
    match outcome {
        Ok(mut o) => {
            for c in &mut o.components {
                c.digest = Some(digest.clone());
            }
            Run {
                digest: Some(work.digest),
                failure: o.failure.clone().map(|f| (f.reason, f.message, f.stalled)),
                components: Some(o.components),
            }
        }
        Err(e) => Run {
            digest: Some(work.digest),
            ..Run::failed(reason::ARTIFACT_FAILED, e)
        },
    }
}

/// Between artifact changes: dry-runs the applied artifact against the live objects (a
/// server-side apply dry run of every object of every instance). With `DriftMode::Correct`,
/// the objects found drifted (edited or deleted by hand) are applied again, only those, and
/// waited for until ready (health checks included), and a `DriftCorrected` Event lists them;
/// with `Report` only a `DriftDetected` Event. Neither
/// writes the status nor the inventories: the applied artifact and its instances are the same.
async fn check_drift(
    project: &Project,
    ctx: &Context,
    previous: &ProjectStatus,
    work: Work,
    mode: DriftMode,
    interval: Duration,
) -> Result<Action, Error> {
    let name = key(project);
    let requested = project
        .annotations()
        .get(api::REQUESTED_AT_ANNOTATION)
        .cloned();
    let loaded = match load(project, ctx, &work).await {
        Ok(l) => l,
        Err(run) => return finish(project, ctx, previous, run, requested).await,
    };
    let opts = ReconcileOptions {
        timeout: work.timeout,
        poll: ctx.poll,
        previous: Vec::new(),
        dry_run: true,
        correct_drift: mode == DriftMode::Correct,
    };
    let changes = std::sync::Mutex::new(Vec::new());
    let outcome = reconcile_loaded(loaded, opts, |e| {
        if let ProjectEvent::Instance(i) = e {
            changes
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .extend(i.changes);
        }
        async {}
    })
    .await;
    let drifted = plan::drifted(&changes.into_inner().unwrap_or_else(|e| e.into_inner()));
    let failure = match &outcome {
        Ok(o) => o.failure.clone().map(|f| f.message),
        Err(e) => Some(e.clone()),
    };
    ctx.failures().remove(&name);
    if !drifted.is_empty() {
        tracing::info!(project = %name, digest = %work.digest, objects = %drifted.join(", "), ?mode, "drift");
        publish(
            ctx,
            project,
            events::drift(mode == DriftMode::Correct, &drifted, failure.as_deref()),
        )
        .await;
    }
    if let Some(f) = failure {
        // The dry run or a correction failed (cluster unreachable, forbidden): say so; what
        // was corrected before is reported above, the rest is tried again next interval.
        tracing::warn!(project = %name, error = %f.replace('\n', "; "), "drift check failed");
    } else if drifted.is_empty() {
        tracing::info!(project = %name, digest = %work.digest, "skip: up to date, no drift");
    }
    Ok(Action::requeue(interval))
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
            tracing::info!(project = %key(project), %digest, "run succeeded");
            ctx.failures().remove(&key(project));
            Ok(Action::await_change())
        }
        Some((r, message, stalled)) => {
            if let Some(c) = run.components {
                status.components = plan::carry_over(&previous.components, c);
            }
            let message = events::truncate(message, events::MAX_MESSAGE);
            conditions::failed(
                &mut status.conditions,
                r,
                &message,
                *stalled,
                generation,
                &t,
            );
            patch_status(ctx, project, &status).await?;
            publish(ctx, project, events::result(false, r, &message)).await;
            Err(Error::Reconcile {
                reason: r,
                message,
                stalled: *stalled,
            })
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
        tracing::info!(project = %key(project), "skip: deleted with the orphan annotation, instances left in place");
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
        dry_run: false,
        correct_drift: false,
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
            if let ProjectEvent::Pruned { instance, error } = &e {
                let instance = format!("{}/{}", instance.namespace, instance.name);
                match error {
                    None => tracing::info!(project = %key(project), instance, "delete"),
                    Some(error) => {
                        tracing::warn!(project = %key(project), instance, error = %error.replace('\n', "; "), "delete failed")
                    }
                }
            }
            if let Some(ev) = events::for_project_event(&e, "") {
                publish(ctx, project, ev).await;
            }
        }
    };
    let (errors, ()) = tokio::join!(work, forward);
    let errors = errors.map_err(|e| Error::Reconcile {
        reason: "UninstallFailed",
        message: e,
        stalled: false,
    })?;
    if errors.is_empty() {
        Ok(Action::await_change())
    } else {
        Err(Error::Reconcile {
            reason: "UninstallFailed",
            message: errors.join("; "),
            stalled: false,
        })
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
            stalled: false,
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
