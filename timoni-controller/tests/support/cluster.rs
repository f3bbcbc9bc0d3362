//! An envtest API server with the Project CRD installed ([`ApiServer`]), and the controller
//! running in-process against one ([`Cluster`], which dereferences to its server), each
//! stopped on drop; with the reads and writes the controller tests share (apply an object, a
//! Project's status, wait for its `Ready` condition, ConfigMaps, Events).

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::api::events::v1::Event;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{ListParams, Patch, PatchParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Api, Client};
use timoni_controller::{Settings, run};
use timoni_core::project::api::{Project, ProjectStatus};

use super::envtest;

const CRD: &str = include_str!("../../config/crd/projects.timoni.sh.yaml");
/// How long a test waits for a condition.
pub const TIMEOUT: Duration = Duration::from_secs(60);

/// Polls `f` every 200 ms until it gives a value, failing the test after [`TIMEOUT`].
pub fn wait_for<T>(what: &str, f: impl FnMut() -> Option<T>) -> T {
    wait_within(what, TIMEOUT, f)
}

/// Like [`wait_for`], failing after `timeout`.
pub fn wait_within<T>(what: &str, timeout: Duration, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(t) = f() {
            return t;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// An API server with the checked-in CRD established, and a client of it on a runtime of its
/// own. No controller: [`Cluster`] adds one in-process; the replica tests start processes.
pub struct ApiServer {
    pub rt: Arc<tokio::runtime::Runtime>,
    pub client: Client,
    pub config: kube::Config,
    pub env: envtest::Envtest,
}

impl ApiServer {
    /// Starts the API server (`None` when envtest is not available) and installs the CRD,
    /// which the (1.20) API server must accept.
    pub fn start() -> Option<ApiServer> {
        let env = envtest::Envtest::start()?;
        let rt = Arc::new(
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .unwrap(),
        );
        let kubeconfig = Kubeconfig::read_from(env.kubeconfig()).unwrap();
        let config = rt
            .block_on(kube::Config::from_custom_kubeconfig(
                kubeconfig,
                &KubeConfigOptions::default(),
            ))
            .unwrap();
        let client = rt
            .block_on(async { Client::try_from(config.clone()) })
            .unwrap();
        let crd: CustomResourceDefinition = serde_yaml_ng::from_str(CRD).unwrap();
        let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
        rt.block_on(crds.create(&PostParams::default(), &crd))
            .expect("the API server accepts the checked-in CRD");
        wait_for("the CRD to be established", || {
            let c = rt.block_on(crds.get("projects.projects.timoni.sh")).ok()?;
            c.status?
                .conditions?
                .iter()
                .any(|c| c.type_ == "Established" && c.status == "True")
                .then_some(())
        });
        Some(ApiServer {
            rt,
            client,
            config,
            env,
        })
    }

    pub fn block<F: Future>(&self, f: F) -> F::Output {
        self.rt.block_on(f)
    }

    /// Server-side applies `obj` (a `K`), as field manager `test`, namespaced when it names a
    /// namespace.
    pub fn apply<K>(&self, obj: serde_json::Value)
    where
        K: kube::Resource<DynamicType = ()>,
    {
        let name = obj["metadata"]["name"].as_str().unwrap().to_string();
        let ar = kube::api::ApiResource::erase::<K>(&());
        let api: Api<kube::api::DynamicObject> = match obj["metadata"]["namespace"].as_str() {
            Some(ns) => Api::namespaced_with(self.client.clone(), ns, &ar),
            None => Api::all_with(self.client.clone(), &ar),
        };
        let pp = PatchParams::apply("test").force();
        self.block(api.patch(&name, &pp, &Patch::Apply(&obj)))
            .unwrap_or_else(|e| panic!("apply {name}: {e}"));
    }

    pub fn project(&self, ns: &str, name: &str) -> Option<Project> {
        let api: Api<Project> = Api::namespaced(self.client.clone(), ns);
        self.block(api.get_opt(name)).unwrap()
    }

    pub fn status(&self, ns: &str, name: &str) -> ProjectStatus {
        self.project(ns, name)
            .and_then(|p| p.status)
            .unwrap_or_default()
    }

    /// Waits until the Project's `Ready` condition has `status` and `reason`; returns the status.
    pub fn wait_ready(&self, ns: &str, name: &str, status: &str, reason: &str) -> ProjectStatus {
        let mut last = None;
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let st = self.status(ns, name);
            let ready = st.conditions.iter().find(|c| c.type_ == "Ready").cloned();
            if ready
                .as_ref()
                .is_some_and(|c| c.status == status && c.reason == reason)
            {
                return st;
            }
            last = ready.or(last);
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {ns}/{name} Ready={status} {reason}; last: {last:?}"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// The data of a ConfigMap, `None` when it does not exist.
    pub fn config_map(&self, ns: &str, name: &str) -> Option<BTreeMap<String, String>> {
        let api: Api<ConfigMap> = Api::namespaced(self.client.clone(), ns);
        self.block(api.get_opt(name))
            .unwrap()
            .map(|c| c.data.unwrap_or_default())
    }

    /// The Events of `ns` with `reason`, oldest first.
    pub fn events(&self, ns: &str, reason: &str) -> Vec<Event> {
        let api: Api<Event> = Api::namespaced(self.client.clone(), ns);
        let mut list: Vec<Event> = self
            .block(api.list(&ListParams::default()))
            .unwrap()
            .items
            .into_iter()
            .filter(|e| e.reason.as_deref() == Some(reason))
            .collect();
        list.sort_by_key(|e| e.event_time.as_ref().map(|t| t.0));
        list
    }
}

/// An API server with the CRD and a controller running in-process against it (its metrics
/// server on a free loopback port); stopped on drop.
pub struct Cluster {
    server: ApiServer,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<anyhow::Result<()>>>,
    metrics: Arc<Mutex<Option<SocketAddr>>>,
    cache: tempfile::TempDir,
}

impl std::ops::Deref for Cluster {
    type Target = ApiServer;

    fn deref(&self) -> &ApiServer {
        &self.server
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.task.take() {
            let _ = self
                .rt
                .block_on(async { tokio::time::timeout(Duration::from_secs(10), t).await });
        }
    }
}

impl Cluster {
    /// Starts the API server (`None` when envtest is not available), installs the checked-in
    /// CRD and runs the controller with a 200 ms poll and whatever `configure` sets. The
    /// controller's logs go to the test's output (shown when it fails).
    pub fn start(configure: impl FnOnce(&mut Settings)) -> Option<Cluster> {
        let _ = tracing_subscriber::fmt()
            .with_env_filter("info,kube=warn")
            .with_test_writer()
            .try_init();
        let server = ApiServer::start()?;
        let cache = tempfile::tempdir().unwrap();
        let mut settings = Settings::new(server.config.clone(), cache.path().to_path_buf());
        settings.poll = Duration::from_millis(200);
        settings.metrics_addr = Some("127.0.0.1:0".parse().unwrap());
        let metrics = Arc::new(Mutex::new(None));
        let m = metrics.clone();
        settings.on_metrics_bound = Some(Arc::new(move |a| *m.lock().unwrap() = Some(a)));
        configure(&mut settings);
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let task = server.rt.spawn(run(settings, async move {
            let _ = rx.await;
        }));
        Some(Cluster {
            server,
            stop: Some(tx),
            task: Some(task),
            metrics,
            cache,
        })
    }

    /// The controller's layer cache (`--cache-dir`).
    pub fn cache_dir(&self) -> &std::path::Path {
        self.cache.path()
    }

    /// The response (status line, headers, body) of `GET path` on the metrics server.
    pub fn http_get(&self, path: &str) -> String {
        use std::io::{Read, Write};
        let addr = wait_for("the metrics server", || *self.metrics.lock().unwrap());
        let mut s = std::net::TcpStream::connect(addr).unwrap();
        write!(s, "GET {path} HTTP/1.0\r\nHost: x\r\n\r\n").unwrap();
        let mut text = String::new();
        s.read_to_string(&mut text).unwrap();
        text
    }

    /// `timoni_controller_reconciles_total` from `/metrics`.
    pub fn reconciles(&self) -> u64 {
        let text = self.http_get("/metrics");
        text.lines()
            .find_map(|l| l.strip_prefix("timoni_controller_reconciles_total "))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or_else(|| panic!("no reconcile counter in:\n{text}"))
    }
}
