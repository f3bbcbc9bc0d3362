//! An envtest API server with the Project CRD and a controller running against it, stopped on
//! drop: the harness of the controller tests that need one controller in-process.

use std::sync::Arc;
use std::time::{Duration, Instant};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Patch, PatchParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Api, Client};
use timoni_controller::{Settings, run};

use super::envtest;

const CRD: &str = include_str!("../../config/crd/projects.timoni.sh.yaml");
/// How long a test waits for a condition.
pub const TIMEOUT: Duration = Duration::from_secs(60);

/// Polls `f` until it gives a value, failing the test after [`TIMEOUT`].
pub fn wait_for<T>(what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + TIMEOUT;
    loop {
        if let Some(t) = f() {
            return t;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// An API server with the CRD and a controller running against it; stopped on drop.
pub struct Cluster {
    pub rt: Arc<tokio::runtime::Runtime>,
    pub client: Client,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<anyhow::Result<()>>>,
    _cache: tempfile::TempDir,
    _env: envtest::Envtest,
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
    /// CRD and runs the controller with a 200 ms poll and whatever `configure` sets.
    pub fn start(configure: impl FnOnce(&mut Settings)) -> Option<Cluster> {
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
        let cache = tempfile::tempdir().unwrap();
        let mut settings = Settings::new(config, cache.path().to_path_buf());
        settings.poll = Duration::from_millis(200);
        configure(&mut settings);
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let task = rt.spawn(run(settings, async move {
            let _ = rx.await;
        }));
        Some(Cluster {
            rt,
            client,
            stop: Some(tx),
            task: Some(task),
            _cache: cache,
            _env: env,
        })
    }

    /// Server-side applies `obj` (a `K`), as field manager `test`.
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
        self.rt
            .block_on(api.patch(&name, &pp, &Patch::Apply(&obj)))
            .unwrap_or_else(|e| panic!("apply {name}: {e}"));
    }
}
