//! `timoni-controller`: the Kubernetes controller that reconciles Timoni `Project` resources
//! (seed 000). [`run`] is the whole controller — the kube-rs `Controller` over Projects, the
//! metrics and probe server, and the optional Lease-based leader election — usable in-process
//! by tests and by the `timoni-controller` binary alike. The per-Project work is in
//! [`reconciler`]; the Timoni semantics are `timoni_core::project`'s.

pub mod conditions;
pub mod crd;
pub mod events;
pub mod metrics;
pub mod pull_secrets;
pub mod reconciler;
pub mod verification;
pub mod workload_identity;

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use futures::StreamExt;
use kube::runtime::reflector;
use kube::runtime::utils::{PredicateConfig, WatchStreamExt};
use kube::runtime::{Controller, watcher};
use kube::{Api, Client, Resource};
use timoni_core::project::api::Project;

use crate::metrics::Metrics;
use crate::reconciler::{Context, error_policy, reconcile};

/// The Lease of leader election.
#[derive(Clone, Debug)]
pub struct LeaseSettings {
    pub name: String,
    pub namespace: String,
    /// This replica's identity (the pod name in a cluster).
    pub identity: String,
    /// How long a lease stays valid without renewal.
    pub duration: Duration,
}

/// How to run the controller.
#[derive(Clone)]
pub struct Settings {
    /// The API server and credentials (in-cluster or from a kubeconfig).
    pub config: kube::Config,
    /// Layer cache and temporary artifact directories.
    pub cache_dir: PathBuf,
    /// Where `/metrics`, `/healthz` and `/readyz` are served; `None`: not served.
    pub metrics_addr: Option<SocketAddr>,
    /// Lease-based leader election; `None`: this replica always leads.
    pub leader_election: Option<LeaseSettings>,
    /// How often the readiness of applied objects is polled.
    pub poll: Duration,
    /// Plain HTTP to every registry (loopback registries always use it).
    pub registry_insecure: bool,
    /// Registry logins through cloud workload identity when a service account has no pull
    /// secret for a registry.
    pub cloud: workload_identity::CloudSettings,
    /// Called with the bound metrics address once the server listens (tests bind port 0).
    pub on_metrics_bound: Option<Arc<dyn Fn(SocketAddr) + Send + Sync>>,
}

impl Settings {
    pub fn new(config: kube::Config, cache_dir: PathBuf) -> Settings {
        Settings {
            config,
            cache_dir,
            metrics_addr: None,
            leader_election: None,
            poll: Duration::from_secs(2),
            registry_insecure: false,
            cloud: Default::default(),
            on_metrics_bound: None,
        }
    }
}

/// What triggers a reconcile: a change of the spec (generation), of the annotations
/// (`reconcile.timoni.sh/requestedAt`, cluster name and group, orphan), of the finalizers, or a
/// deletion. Status writes, the controller's own, do not.
fn trigger(p: &Project) -> Option<u64> {
    let m = &p.meta();
    let mut h = DefaultHasher::new();
    m.generation.hash(&mut h);
    m.annotations.hash(&mut h);
    m.finalizers.hash(&mut h);
    m.deletion_timestamp.is_some().hash(&mut h);
    Some(h.finish())
}

/// Runs the controller until `shutdown` completes (or, with leader election, leadership is
/// lost, which is an error).
pub async fn run(
    settings: Settings,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let client = Client::try_from(settings.config.clone()).context("kubernetes client")?;
    let metrics = Arc::new(Metrics::default());
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    tokio::spawn(async move {
        shutdown.await;
        let _ = stop_tx.send(true);
    });
    let stopped = |mut rx: tokio::sync::watch::Receiver<bool>| async move {
        let _ = rx.wait_for(|s| *s).await;
    };

    let server = match settings.metrics_addr {
        Some(addr) => {
            let (bound, server) = metrics::serve(addr, metrics.clone(), stopped(stop_rx.clone()))
                .await
                .with_context(|| format!("listening on {addr}"))?;
            tracing::info!(%bound, "serving /metrics, /healthz and /readyz");
            if let Some(f) = &settings.on_metrics_bound {
                f(bound);
            }
            Some(tokio::spawn(server))
        }
        None => None,
    };

    // Leadership: wait for it (or shutdown), and stop when it is lost.
    let mut leader = None;
    if let Some(lease) = &settings.leader_election {
        let manager = kube_lease_manager::LeaseManagerBuilder::new(client.clone(), &lease.name)
            .with_namespace(&lease.namespace)
            .with_identity(&lease.identity)
            .with_duration(lease.duration.as_secs().max(2))
            .with_grace((lease.duration.as_secs() / 3).max(1))
            .build()
            .await
            .context("leader election")?;
        let (mut rx, task) = manager.watch().await;
        tracing::info!(lease = %lease.name, "waiting for leadership");
        let won = tokio::select! {
            r = rx.wait_for(|l| *l) => { r.context("leader election stopped")?; true }
            () = stopped(stop_rx.clone()) => false,
        };
        if !won {
            drop(rx);
            let _ = task.await;
            if let Some(s) = server {
                let _ = s.await;
            }
            return Ok(());
        }
        tracing::info!(lease = %lease.name, "leading");
        leader = Some((rx, task));
    }

    let ctx = Arc::new(
        Context::new(
            client.clone(),
            settings.config.clone(),
            settings.cache_dir.clone(),
            metrics.clone(),
            settings.poll,
            settings.registry_insecure,
            settings
                .leader_election
                .as_ref()
                .map(|l| l.identity.clone()),
        )
        .with_cloud(settings.cloud.clone()),
    );
    let projects: Api<Project> = Api::all(client);
    let (reader, writer) = reflector::store();
    let stream = watcher(projects, watcher::Config::default().any_semantic())
        .default_backoff()
        .reflect(writer)
        .applied_objects()
        .predicate_filter(trigger, PredicateConfig::default());

    let lost = {
        let rx = leader.as_ref().map(|(rx, _)| rx.clone());
        async move {
            match rx {
                Some(mut rx) => {
                    let _ = rx.wait_for(|l| !*l).await;
                }
                None => futures::future::pending::<()>().await,
            }
        }
    };
    let (lost_tx, mut lost_rx) = tokio::sync::watch::channel(false);
    let stop = {
        let stop = stopped(stop_rx.clone());
        async move {
            tokio::select! {
                () = stop => {}
                () = lost => { let _ = lost_tx.send(true); }
            }
        }
    };
    metrics.set_ready(true);
    Controller::for_stream(stream, reader)
        .graceful_shutdown_on(stop)
        .run(reconcile, error_policy, ctx)
        .for_each(|r| async move {
            match r {
                Ok((o, _)) => tracing::debug!(project = %o, "reconciled"),
                Err(e) => tracing::debug!(error = %e, "reconcile"),
            }
        })
        .await;
    metrics.set_ready(false);
    let lost = *lost_rx.borrow_and_update();
    if let Some((rx, task)) = leader {
        drop(rx);
        let _ = task.await;
    }
    if let Some(s) = server {
        s.abort();
    }
    if lost {
        anyhow::bail!("lost the leader election lease; stopping");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use timoni_core::project::api::{ProjectSpec, ProjectStatus};

    #[test]
    fn status_writes_do_not_trigger_but_annotations_spec_and_deletion_do() {
        let mut p = Project::new("p", ProjectSpec::default());
        p.metadata.generation = Some(1);
        let base = trigger(&p);
        p.status = Some(ProjectStatus {
            last_applied_digest: Some("sha256:x".into()),
            ..Default::default()
        });
        p.metadata.resource_version = Some("42".into());
        assert_eq!(
            trigger(&p),
            base,
            "a status write must not trigger a reconcile"
        );
        let mut annotated = p.clone();
        annotated.metadata.annotations = Some(
            [(
                timoni_core::project::api::REQUESTED_AT_ANNOTATION.to_string(),
                "now".to_string(),
            )]
            .into(),
        );
        assert_ne!(trigger(&annotated), base);
        let mut spec = p.clone();
        spec.metadata.generation = Some(2);
        assert_ne!(trigger(&spec), base);
        let mut deleted = p.clone();
        deleted.metadata.deletion_timestamp = Some(
            k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(jiff::Timestamp::now()),
        );
        assert_ne!(trigger(&deleted), base);
    }
}
