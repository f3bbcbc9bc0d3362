//! Acceptance tests of the controller (issue 8) against real servers: kube-apiservers from the
//! envtest recipe (`timoni-core/tests/common/envtest.rs`) and Debian's docker-registry
//! (`timoni-core/tests/support/registry.rs`), the controller running in-process
//! ([`timoni_controller::run`]) on a tokio runtime, one per API server. Each test skips with a
//! loud message when a server is unavailable. Projects are pushed as real artifacts; their
//! components use the local module `testdata/modules/cm` (one ConfigMap) shipped inside the
//! artifact, so no module registry is needed.

#[path = "../../timoni-core/tests/common/envtest.rs"]
mod envtest;
#[path = "../../timoni-core/tests/support/registry.rs"]
mod registry;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Secret, ServiceAccount};
use k8s_openapi::api::events::v1::Event;
use k8s_openapi::api::rbac::v1::{ClusterRoleBinding, Role, RoleBinding};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Api, Client};
use serde_json::json;
use timoni_controller::{Settings, run};
use timoni_core::oci::{self, ArtifactUrl, ConnectOptions};
use timoni_core::project::api::{Project, ProjectStatus};

const CRD: &str = include_str!("../config/crd/projects.timoni.sh.yaml");
const TIMEOUT: Duration = Duration::from_secs(60);

fn module_dir() -> &'static Path {
    Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/testdata/modules/cm"
    ))
}

/// Polls `f` every 200 ms until it returns `Some`, failing with `what` after [`TIMEOUT`].
fn wait_for<T>(what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + TIMEOUT;
    loop {
        if let Some(t) = f() {
            return t;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// One API server with the CRD installed and a controller running against it.
struct Cluster {
    rt: Arc<tokio::runtime::Runtime>,
    client: Client,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<anyhow::Result<()>>>,
    metrics: Arc<Mutex<Option<std::net::SocketAddr>>>,
    _cache: tempfile::TempDir,
    env: envtest::Envtest,
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

fn runtime() -> Arc<tokio::runtime::Runtime> {
    Arc::new(
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap(),
    )
}

impl Cluster {
    fn start(rt: &Arc<tokio::runtime::Runtime>) -> Option<Cluster> {
        Cluster::start_with(rt, None)
    }

    /// Like [`Cluster::start`], the controller electing itself leader with this Lease.
    fn start_with(
        rt: &Arc<tokio::runtime::Runtime>,
        lease: Option<timoni_controller::LeaseSettings>,
    ) -> Option<Cluster> {
        // The controller's logs, shown for failed tests.
        let _ = tracing_subscriber::fmt()
            .with_env_filter("info,kube=warn")
            .with_test_writer()
            .try_init();
        let env = envtest::Envtest::start()?;
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
        // The checked-in CRD must be accepted by the (1.20) API server.
        let crd: CustomResourceDefinition = serde_yaml_ng::from_str(CRD).unwrap();
        let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
        rt.block_on(crds.create(&PostParams::default(), &crd))
            .expect("the API server accepts the checked-in CRD");
        wait_for("the CRD to be established", || {
            let c = rt.block_on(crds.get("projects.projects.timoni.sh")).ok()?;
            let established = c
                .status?
                .conditions?
                .iter()
                .any(|c| c.type_ == "Established" && c.status == "True");
            established.then_some(())
        });
        let cache = tempfile::tempdir().unwrap();
        let mut settings = Settings::new(config, cache.path().to_path_buf());
        settings.poll = Duration::from_millis(200);
        settings.leader_election = lease;
        settings.metrics_addr = Some("127.0.0.1:0".parse().unwrap());
        let metrics = Arc::new(Mutex::new(None));
        let m = metrics.clone();
        settings.on_metrics_bound = Some(Arc::new(move |a| *m.lock().unwrap() = Some(a)));
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let task = rt.spawn(run(settings, async move {
            let _ = rx.await;
        }));
        Some(Cluster {
            rt: rt.clone(),
            client,
            stop: Some(tx),
            task: Some(task),
            metrics,
            _cache: cache,
            env,
        })
    }

    fn block<F: Future>(&self, f: F) -> F::Output {
        self.rt.block_on(f)
    }

    /// Server-side applies `obj`, namespaced when it names a namespace.
    fn apply<K>(&self, obj: serde_json::Value)
    where
        K: kube::Resource<DynamicType = ()>
            + Clone
            + serde::de::DeserializeOwned
            + serde::Serialize
            + std::fmt::Debug,
    {
        let name = obj["metadata"]["name"].as_str().unwrap().to_string();
        let ar = kube::api::ApiResource::erase::<K>(&());
        let api: Api<kube::api::DynamicObject> = match obj["metadata"]["namespace"].as_str() {
            Some(ns) => Api::namespaced_with(self.client.clone(), ns, &ar),
            None => Api::all_with(self.client.clone(), &ar),
        };
        let pp = PatchParams::apply("projects-test").force();
        self.block(api.patch(&name, &pp, &Patch::Apply(&obj)))
            .unwrap_or_else(|e| panic!("apply {name}: {e}"));
    }

    /// A namespace with a service account bound to `cluster-admin`, with `pull_secret` (a
    /// dockerconfigjson) as its image pull secret when given.
    fn tenant(&self, ns: &str, sa: &str, admin: bool, pull_secret: Option<serde_json::Value>) {
        self.apply::<Namespace>(
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}),
        );
        let mut account = json!({"apiVersion": "v1", "kind": "ServiceAccount",
            "metadata": {"name": sa, "namespace": ns}});
        if let Some(config) = pull_secret {
            self.apply::<Secret>(json!({"apiVersion": "v1", "kind": "Secret",
                "metadata": {"name": "registry-creds", "namespace": ns},
                "type": "kubernetes.io/dockerconfigjson",
                "stringData": {".dockerconfigjson": config.to_string()}}));
            account["imagePullSecrets"] = json!([{"name": "registry-creds"}]);
        }
        self.apply::<ServiceAccount>(account);
        if admin {
            self.apply::<ClusterRoleBinding>(json!({"apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRoleBinding", "metadata": {"name": format!("{ns}-{sa}")},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
                "subjects": [{"kind": "ServiceAccount", "name": sa, "namespace": ns}]}));
        }
    }

    fn create_project(
        &self,
        ns: &str,
        name: &str,
        url: &str,
        tag: &str,
        annotations: serde_json::Value,
    ) {
        self.apply::<Project>(json!({
            "apiVersion": "projects.timoni.sh/v1alpha1", "kind": "Project",
            "metadata": {"name": name, "namespace": ns, "annotations": annotations},
            "spec": {"serviceAccountName": "deployer", "source": {"repository": url, "tag": tag},
                "interval": "1s", "timeout": "30s", "retry": {"minBackoff": "500ms", "maxBackoff": "2s"}}
        }));
    }

    fn project(&self, ns: &str, name: &str) -> Option<Project> {
        let api: Api<Project> = Api::namespaced(self.client.clone(), ns);
        self.block(api.get_opt(name)).unwrap()
    }

    fn status(&self, ns: &str, name: &str) -> ProjectStatus {
        self.project(ns, name)
            .and_then(|p| p.status)
            .unwrap_or_default()
    }

    /// Waits until the Project's `Ready` condition has `status` and `reason`; returns the status.
    fn wait_ready(&self, ns: &str, name: &str, status: &str, reason: &str) -> ProjectStatus {
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

    fn config_map(&self, ns: &str, name: &str) -> Option<BTreeMap<String, String>> {
        let api: Api<ConfigMap> = Api::namespaced(self.client.clone(), ns);
        self.block(api.get_opt(name))
            .unwrap()
            .map(|c| c.data.unwrap_or_default())
    }

    fn events(&self, ns: &str, reason: &str) -> Vec<Event> {
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

    fn annotate(&self, ns: &str, name: &str, key: &str, value: &str) {
        let api: Api<Project> = Api::namespaced(self.client.clone(), ns);
        let patch = json!({"metadata": {"annotations": {key: value}}});
        self.block(api.patch(name, &PatchParams::default(), &Patch::Merge(&patch)))
            .unwrap();
    }

    fn delete_project(&self, ns: &str, name: &str) {
        let api: Api<Project> = Api::namespaced(self.client.clone(), ns);
        self.block(api.delete(name, &DeleteParams::default()))
            .unwrap();
        wait_for("the Project to be gone", || {
            self.project(ns, name).is_none().then_some(())
        });
    }

    /// The response (status line, headers, body) of `GET path` on the metrics server.
    fn http_get(&self, path: &str) -> String {
        use std::io::{Read, Write};
        let addr = wait_for("the metrics server", || *self.metrics.lock().unwrap());
        let mut s = std::net::TcpStream::connect(addr).unwrap();
        write!(s, "GET {path} HTTP/1.0\r\nHost: x\r\n\r\n").unwrap();
        let mut text = String::new();
        s.read_to_string(&mut text).unwrap();
        text
    }

    /// `timoni_controller_reconciles_total` from `/metrics`.
    fn reconciles(&self) -> u64 {
        let text = self.http_get("/metrics");
        text.lines()
            .find_map(|l| l.strip_prefix("timoni_controller_reconciles_total "))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or_else(|| panic!("no reconcile counter in:\n{text}"))
    }
}

/// A Project directory: the `cm` module and `files` (path, text).
fn project_dir(files: &[(&str, String)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("modules/cm");
    std::fs::create_dir_all(m.join("cue.mod")).unwrap();
    for f in ["timoni.cue", "values.cue", "cue.mod/module.cue"] {
        std::fs::copy(module_dir().join(f), m.join(f)).unwrap();
    }
    for (path, text) in files {
        let p = dir.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    dir
}

/// Writes `files` as a Project directory and pushes it as `url:latest`; returns the digest.
fn publish(files: &[(&str, String)], url: &str) -> String {
    let dir = project_dir(files);
    push(dir.path(), url, &["latest"], None)
}

/// A bundle of one `cm` instance `name` in `namespace` with `version`, and the cluster name
/// from the Project's annotation.
fn bundle(name: &str, namespace: &str, version: &str) -> String {
    bundle_of(name, namespace, version, r#"url: "file://../modules/cm""#)
}

/// Like [`bundle`], with `module` as the body of the instance's `module` field.
fn bundle_of(name: &str, namespace: &str, version: &str, module: &str) -> String {
    format!(
        r#"bundle: {{
	apiVersion: "v1alpha1"
	name: "{name}"
	instances: "{name}": {{
		module: {{{module}}}
		namespace: "{namespace}"
		values: version: "{version}"
		values: cluster: string @timoni(runtime:string:TIMONI_CLUSTER_NAME)
	}}
}}
"#
    )
}

/// Pushes `dir` to `url` under `tags` without checking it (so that broken Projects can be
/// published too); returns the digest.
fn push(dir: &Path, url: &str, tags: &[&str], creds: Option<&str>) -> String {
    let url = ArtifactUrl::parse(url).unwrap();
    let connect = ConnectOptions {
        creds: creds.map(str::to_string),
        ..Default::default()
    };
    let registry = oci::connect(&url, &connect).unwrap();
    let tags: Vec<String> = tags.iter().map(|t| t.to_string()).collect();
    oci::push_artifact(
        &registry,
        dir,
        &url,
        &tags,
        timoni_core::project::source::CONTENT_TYPE_PROJECT,
        &BTreeMap::new(),
        None,
        false,
    )
    .unwrap()
    .digest
}

/// `(component, start, end)` of each `InstanceApplied` Event, from its note.
fn applied_times(events: &[Event]) -> Vec<(String, f64, f64)> {
    events
        .iter()
        .filter_map(|e| {
            let note = e.note.as_deref()?;
            let first = note.lines().next()?;
            let words: Vec<&str> = first.split(' ').collect();
            let component = words.get(1)?.to_string();
            let at = words.iter().position(|w| *w == "started")?;
            let start: jiff::Timestamp = words.get(at + 1)?.parse().ok()?;
            let took: f64 = words.get(at + 3)?.trim_end_matches('s').parse().ok()?;
            let start = start.as_millisecond() as f64 / 1000.0;
            Some((component, start, start + took))
        })
        .collect()
}

#[test]
fn staging_and_production_follow_their_tags_in_needs_order_without_idle_writes() {
    let Some(reg) = registry::start(Some(("ci", "s3cret"))) else {
        return;
    };
    let rt = runtime();
    let Some(staging) = Cluster::start(&rt) else {
        return;
    };
    let Some(production) = Cluster::start(&rt) else {
        return;
    };
    let url = reg.url("fleet/project");
    let creds = "ci:s3cret";
    let docker_config = json!({"auths": {reg.host(): {"username": "ci", "password": "s3cret"}}});

    // The cache component's module comes from the registry, with the same pull secret.
    let module_url = reg.url("modules/cm");
    let registry = oci::connect(
        &ArtifactUrl::parse(&module_url).unwrap(),
        &ConnectOptions {
            creds: Some(creds.into()),
            ..Default::default()
        },
    )
    .unwrap();
    oci::push_module(
        &registry,
        module_dir(),
        &ArtifactUrl::parse(&module_url).unwrap(),
        "0.1.0",
        false,
        &BTreeMap::new(),
        None,
        false,
    )
    .unwrap();
    let cache_module = format!(r#"url: "{module_url}", version: "0.1.0""#);
    let files = |v: &str| {
        vec![
            (
                "project.cue",
                r#"project: {
	apiVersion: "v1alpha1"
	name: "fleet"
	components: {
		db: bundle: ["bundles/db.cue"]
		cache: bundle: ["bundles/cache.cue"]
		app: {bundle: ["bundles/app.cue"], needs: ["db", "cache"]}
	}
}
"#
                .to_string(),
            ),
            ("bundles/db.cue", bundle("db", "data", v)),
            (
                "bundles/cache.cue",
                bundle_of("cache", "data", v, &cache_module),
            ),
            ("bundles/app.cue", bundle("app", "apps", v)),
        ]
    };
    let v1_dir = project_dir(&files("v1"));
    let v1 = push(v1_dir.path(), &url, &["preview", "production"], Some(creds));

    for (c, name, tag) in [
        (&staging, "staging", "preview"),
        (&production, "production", "production"),
    ] {
        c.tenant("fleet", "deployer", true, Some(docker_config.clone()));
        c.create_project(
            "fleet",
            "fleet",
            &url,
            tag,
            json!({"runtime.timoni.sh/cluster": name}),
        );
    }
    for (c, name) in [(&staging, "staging"), (&production, "production")] {
        let st = c.wait_ready("fleet", "fleet", "True", "ReconciliationSucceeded");
        assert_eq!(st.last_applied_digest.as_deref(), Some(v1.as_str()));
        let data = c.config_map("apps", "app-main").expect("app installed");
        assert_eq!(
            (data["version"].as_str(), data["cluster"].as_str()),
            ("v1", name)
        );
        let phases: Vec<(&str, &str)> = st
            .components
            .iter()
            .map(|c| (c.name.as_str(), c.phase.as_str()))
            .collect();
        assert_eq!(
            phases,
            [("db", "Ready"), ("cache", "Ready"), ("app", "Ready")]
        );
        let cache = &st.components[1].instances[0];
        assert_eq!(
            (cache.module_url.as_str(), cache.module_version.as_str()),
            (module_url.as_str(), "0.1.0")
        );
        assert_eq!(c.config_map("data", "cache-main").unwrap()["version"], "v1");
    }

    // `needs`: app started after db and cache ended; db and cache overlapped.
    let times = applied_times(&staging.events("fleet", "InstanceApplied"));
    let get = |n: &str| {
        times
            .iter()
            .find(|t| t.0 == n)
            .cloned()
            .unwrap_or_else(|| panic!("no event for {n}: {times:?}"))
    };
    let (db, cache, app) = (get("db"), get("cache"), get("app"));
    assert!(
        app.1 >= db.2 && app.1 >= cache.2,
        "app applied before its needs: {times:?}"
    );
    assert!(
        db.1 < cache.2 && cache.1 < db.2,
        "db and cache did not run concurrently: {times:?}"
    );
    assert_eq!(staging.events("fleet", "ReconciliationSucceeded").len(), 1);

    // Idle: reconciles go on (interval 1s) without any write.
    let before = staging
        .project("fleet", "fleet")
        .unwrap()
        .metadata
        .resource_version;
    let count = staging.reconciles();
    wait_for("two more reconciles", || {
        (staging.reconciles() >= count + 2).then_some(())
    });
    let after = staging
        .project("fleet", "fleet")
        .unwrap()
        .metadata
        .resource_version;
    assert_eq!(before, after, "an idle reconcile wrote the Project");
    assert_eq!(staging.events("fleet", "ReconciliationSucceeded").len(), 1);

    // requestedAt forces a run and is recorded.
    staging.annotate("fleet", "fleet", "reconcile.timoni.sh/requestedAt", "now-1");
    wait_for("requestedAt to be handled", || {
        (staging
            .status("fleet", "fleet")
            .last_handled_reconcile_at
            .as_deref()
            == Some("now-1"))
        .then_some(())
    });
    wait_for("a second success event", || {
        (staging.events("fleet", "ReconciliationSucceeded").len() == 2).then_some(())
    });

    // A new version tagged `preview` reaches staging only.
    let v2_dir = project_dir(&files("v2"));
    let v2 = push(v2_dir.path(), &url, &["preview"], Some(creds));
    wait_for("staging to apply v2", || {
        (staging
            .status("fleet", "fleet")
            .last_applied_digest
            .as_deref()
            == Some(v2.as_str()))
        .then_some(())
    });
    assert_eq!(
        staging.config_map("apps", "app-main").unwrap()["version"],
        "v2"
    );
    let count = production.reconciles();
    wait_for("production to check its tag again", || {
        (production.reconciles() >= count + 2).then_some(())
    });
    assert_eq!(
        production
            .status("fleet", "fleet")
            .last_applied_digest
            .as_deref(),
        Some(v1.as_str())
    );
    assert_eq!(
        production.config_map("apps", "app-main").unwrap()["version"],
        "v1"
    );

    // Tagging that digest `production` promotes it.
    let registry = oci::connect(
        &ArtifactUrl::parse(&url).unwrap(),
        &ConnectOptions {
            creds: Some(creds.into()),
            ..Default::default()
        },
    )
    .unwrap();
    let tagged = oci::tag_artifact(
        &registry,
        &ArtifactUrl::parse(&url).unwrap().with_digest(&v2),
        &["production".to_string()],
    )
    .unwrap();
    assert_eq!(tagged, v2);
    wait_for("production to apply v2", || {
        (production
            .status("fleet", "fleet")
            .last_applied_digest
            .as_deref()
            == Some(v2.as_str()))
        .then_some(())
    });
    assert_eq!(
        production.config_map("apps", "app-main").unwrap()["version"],
        "v2"
    );
    assert_eq!(
        production.config_map("data", "db-main").unwrap()["cluster"],
        "production"
    );
}

/// A TCP proxy in front of the registry that can be stopped ("registry down") and started
/// again on the same port.
struct Proxy {
    rt: Arc<tokio::runtime::Runtime>,
    port: u16,
    upstream: u16,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl Proxy {
    fn new(rt: &Arc<tokio::runtime::Runtime>, upstream: u16) -> Proxy {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut p = Proxy {
            rt: rt.clone(),
            port,
            upstream,
            task: None,
        };
        p.up();
        p
    }

    fn up(&mut self) {
        let (port, upstream) = (self.port, self.upstream);
        let listener = self
            .rt
            .block_on(tokio::net::TcpListener::bind(("127.0.0.1", port)))
            .unwrap();
        self.task = Some(self.rt.spawn(async move {
            let mut conns = tokio::task::JoinSet::new();
            while let Ok((mut inbound, _)) = listener.accept().await {
                conns.spawn(async move {
                    if let Ok(mut out) =
                        tokio::net::TcpStream::connect(("127.0.0.1", upstream)).await
                    {
                        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut out).await;
                    }
                });
            }
        }));
    }

    fn down(&mut self) {
        if let Some(t) = self.task.take() {
            t.abort();
            let _ = self.rt.block_on(t);
        }
    }
}

const PROJECT_ONE: &str = r#"project: {
	apiVersion: "v1alpha1"
	name: "solo"
	components: web: bundle: ["bundles/web.cue"]
}
"#;

#[test]
fn failures_end_ready_false_with_their_reason_and_recover_then_delete_uninstalls() {
    let Some(reg) = registry::start(None) else {
        return;
    };
    let rt = runtime();
    let Some(c) = Cluster::start(&rt) else {
        return;
    };
    let mut proxy = Proxy::new(&rt, reg.port);
    let push_url = reg.url("team/solo");
    let url = format!("oci://127.0.0.1:{}/team/solo", proxy.port);
    let web = ("bundles/web.cue", bundle("web", "web", "v1"));

    // Malformed project.cue.
    publish(
        &[
            ("project.cue", "project: {\n\tname: \n".into()),
            web.clone(),
        ],
        &push_url,
    );
    c.tenant("team", "deployer", true, None);
    c.create_project(
        "team",
        "solo",
        &url,
        "latest",
        json!({"runtime.timoni.sh/cluster": "test"}),
    );
    let st = c.wait_ready("team", "solo", "False", "ValidationFailed");
    let stalled = st.conditions.iter().find(|c| c.type_ == "Stalled").unwrap();
    assert_eq!(stalled.status, "True");
    assert!(st.last_applied_digest.is_none());

    // A missing file.
    let missing = PROJECT_ONE.replace("web.cue", "nowhere.cue");
    let d = publish(&[("project.cue", missing), web.clone()], &push_url);
    let ready = wait_for("the missing file to be reported", || {
        let st = c.status("team", "solo");
        let ready = st.conditions.iter().find(|c| c.type_ == "Ready")?.clone();
        (st.last_attempted_digest.as_deref() == Some(d.as_str())
            && ready.message.contains("nowhere.cue"))
        .then_some(ready)
    });
    assert_eq!(ready.reason, "ValidationFailed", "{ready:?}");
    assert!(
        ready.message.starts_with("invalid project project.cue"),
        "{}",
        ready.message
    );

    // A cycle in needs.
    let cycle = r#"project: {
	apiVersion: "v1alpha1"
	name: "solo"
	components: {
		web: {bundle: ["bundles/web.cue"], needs: ["api"]}
		api: {bundle: ["bundles/web.cue"], needs: ["web"]}
	}
}
"#;
    let d = publish(&[("project.cue", cycle.into()), web.clone()], &push_url);
    let ready = wait_for("the cycle to be reported", || {
        let st = c.status("team", "solo");
        let ready = st.conditions.iter().find(|c| c.type_ == "Ready")?.clone();
        (st.last_attempted_digest.as_deref() == Some(d.as_str()) && ready.message.contains("cycle"))
            .then_some(ready)
    });
    assert_eq!(ready.reason, "ValidationFailed", "{ready:?}");
    assert!(
        ready.message.starts_with("invalid project project.cue"),
        "{}",
        ready.message
    );
    assert!(c.config_map("web", "web-main").is_none());

    // Fixed: recovery.
    let good = publish(
        &[("project.cue", PROJECT_ONE.into()), web.clone()],
        &push_url,
    );
    let st = c.wait_ready("team", "solo", "True", "ReconciliationSucceeded");
    assert_eq!(st.last_applied_digest.as_deref(), Some(good.as_str()));
    assert!(
        st.conditions
            .iter()
            .all(|c| c.type_ == "Ready" || c.status == "False")
    );
    assert_eq!(c.config_map("web", "web-main").unwrap()["version"], "v1");
    assert!(!c.events("team", "ReconciliationFailed").is_empty());

    // Registry down, then up again.
    proxy.down();
    let st = c.wait_ready("team", "solo", "False", "ArtifactFailed");
    assert_eq!(
        st.last_applied_digest.as_deref(),
        Some(good.as_str()),
        "the last good digest stays"
    );
    proxy.up();
    c.wait_ready("team", "solo", "True", "ReconciliationSucceeded");

    // Instances gone (their inventory Secret deleted) are installed again at the next check.
    let secrets: Api<Secret> = Api::namespaced(c.client.clone(), "web");
    c.block(secrets.delete("timoni.web", &DeleteParams::default()))
        .unwrap();
    wait_for("the instance to be installed again", || {
        c.block(secrets.get_opt("timoni.web")).unwrap().map(|_| ())
    });
    assert!(
        c.http_get("/metrics")
            .contains("timoni_controller_reconcile_errors_total{reason=\"ValidationFailed\"}"),
        "errors by reason are counted"
    );

    // Suspended: a new version is not applied until resumed.
    let api: Api<Project> = Api::namespaced(c.client.clone(), "team");
    let suspend = |on: bool| {
        let patch = json!({"spec": {"suspend": on}});
        c.block(api.patch("solo", &PatchParams::default(), &Patch::Merge(&patch)))
            .unwrap();
    };
    suspend(true);
    wait_for("Reconciling=False Suspended", || {
        let st = c.status("team", "solo");
        st.conditions
            .iter()
            .any(|c| c.type_ == "Reconciling" && c.status == "False" && c.reason == "Suspended")
            .then_some(())
    });
    let v2 = publish(
        &[
            ("project.cue", PROJECT_ONE.into()),
            ("bundles/web.cue", bundle("web", "web", "v2")),
        ],
        &push_url,
    );
    std::thread::sleep(Duration::from_secs(3)); // three intervals
    assert_eq!(c.config_map("web", "web-main").unwrap()["version"], "v1");
    assert_eq!(
        c.status("team", "solo").last_applied_digest.as_deref(),
        Some(good.as_str())
    );
    suspend(false);
    wait_for("v2 after resume", || {
        (c.status("team", "solo").last_applied_digest.as_deref() == Some(v2.as_str())).then_some(())
    });
    assert_eq!(c.config_map("web", "web-main").unwrap()["version"], "v2");

    // The API server restarted (same state, same port): the controller carries on.
    let ports = || std::fs::read_to_string(c.env.dir().join("ports")).unwrap_or_default();
    let before = ports();
    let envtest = |cmd: &str| {
        let out = std::process::Command::new("bash")
            .arg(envtest::script())
            .arg(cmd)
            .arg(c.env.dir())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "envtest.sh {cmd}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    envtest("stop");
    std::thread::sleep(Duration::from_secs(2));
    envtest("start");
    if ports() != before {
        eprintln!(
            "\n!!!!!!!! SKIPPED the end of this test: the restarted API server got other ports\n"
        );
        return;
    }
    let v3 = publish(
        &[
            ("project.cue", PROJECT_ONE.into()),
            ("bundles/web.cue", bundle("web", "web", "v3")),
        ],
        &push_url,
    );
    wait_for("v3 after the API server restart", || {
        (c.status("team", "solo").last_applied_digest.as_deref() == Some(v3.as_str())).then_some(())
    });
    assert_eq!(c.config_map("web", "web-main").unwrap()["version"], "v3");

    // Delete uninstalls.
    c.delete_project("team", "solo");
    assert!(
        c.config_map("web", "web-main").is_none(),
        "delete left the instance's objects"
    );
    assert!(c.block(secrets.get_opt("timoni.web")).unwrap().is_none());
}

#[test]
fn a_service_account_cannot_escape_its_namespace_and_orphaned_projects_leave_their_instances() {
    let Some(reg) = registry::start(None) else {
        return;
    };
    let rt = runtime();
    let lease = timoni_controller::LeaseSettings {
        name: "timoni-controller".into(),
        namespace: "default".into(),
        identity: "replica-1".into(),
        duration: Duration::from_secs(6),
    };
    let Some(c) = Cluster::start_with(&rt, Some(lease)) else {
        return;
    };
    assert!(
        c.http_get("/healthz")
            .lines()
            .next()
            .unwrap_or("")
            .contains(" 200 ")
    );

    // A tenant whose account may only write in its own namespace.
    c.tenant("tenant", "deployer", false, None);
    c.apply::<Namespace>(
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "victim"}}),
    );
    c.apply::<Role>(
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
        "metadata": {"name": "deployer", "namespace": "tenant"},
        "rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}]}),
    );
    c.apply::<RoleBinding>(
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
        "metadata": {"name": "deployer", "namespace": "tenant"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "deployer"},
        "subjects": [{"kind": "ServiceAccount", "name": "deployer", "namespace": "tenant"}]}),
    );
    let escape = PROJECT_ONE.replace("solo", "escape");
    let url = reg.url("tenant/escape");
    publish(
        &[
            ("project.cue", escape),
            ("bundles/web.cue", bundle("web", "victim", "v1")),
        ],
        &url,
    );
    c.create_project(
        "tenant",
        "escape",
        &url,
        "latest",
        json!({"runtime.timoni.sh/cluster": "test"}),
    );
    let st = c.wait_ready("tenant", "escape", "False", "Forbidden");
    let ready = st.conditions.iter().find(|c| c.type_ == "Ready").unwrap();
    assert!(ready.message.contains("forbidden"), "{}", ready.message);
    assert_eq!(st.components[0].phase, "Failed");
    let cms: Api<ConfigMap> = Api::namespaced(c.client.clone(), "victim");
    let secrets: Api<Secret> = Api::namespaced(c.client.clone(), "victim");
    let names = |l: Vec<String>| {
        l.into_iter()
            .filter(|n| n != "kube-root-ca.crt")
            .collect::<Vec<_>>()
    };
    let list = c.block(cms.list(&ListParams::default())).unwrap();
    assert_eq!(
        names(
            list.items
                .into_iter()
                .filter_map(|o| o.metadata.name)
                .collect()
        ),
        Vec::<String>::new()
    );
    let list = c.block(secrets.list(&ListParams::default())).unwrap();
    assert!(list.items.iter().all(|s| {
        !s.metadata
            .name
            .as_deref()
            .unwrap_or("")
            .starts_with("timoni.")
    }));
    // The ownership check of the bundle fails before any instance apply starts, so the
    // result Event (not an instance one) carries the reason.
    let failed = c.events("tenant", "ReconciliationFailed");
    assert!(
        failed
            .iter()
            .any(|e| e.note.as_deref().unwrap_or("").starts_with("Forbidden: ")),
        "{failed:?}"
    );

    // This replica leads (it reconciled), holds the Lease and is ready.
    let leases: Api<k8s_openapi::api::coordination::v1::Lease> =
        Api::namespaced(c.client.clone(), "default");
    let lease = c.block(leases.get("timoni-controller")).unwrap();
    assert_eq!(
        lease.spec.and_then(|s| s.holder_identity).as_deref(),
        Some("replica-1")
    );
    assert!(
        c.http_get("/readyz")
            .lines()
            .next()
            .unwrap_or("")
            .contains(" 200 ")
    );

    // Orphan: deleting the Project leaves what it installed.
    c.tenant("keep", "deployer", true, None);
    let keep = PROJECT_ONE.replace("solo", "keep");
    let url = reg.url("keep/keep");
    publish(
        &[
            ("project.cue", keep),
            ("bundles/web.cue", bundle("kept", "kept", "v1")),
        ],
        &url,
    );
    c.create_project(
        "keep",
        "keep",
        &url,
        "latest",
        json!({"projects.timoni.sh/orphan": "true", "runtime.timoni.sh/cluster": "test"}),
    );
    c.wait_ready("keep", "keep", "True", "ReconciliationSucceeded");
    c.delete_project("keep", "keep");
    assert_eq!(c.config_map("kept", "kept-main").unwrap()["version"], "v1");
}

#[test]
fn runs_can_be_watched_drift_is_corrected_or_reported_and_build_errors_stall() {
    let Some(reg) = registry::start(None) else {
        return;
    };
    let rt = runtime();
    let Some(c) = Cluster::start(&rt) else {
        return;
    };
    let url = reg.url("team/solo");
    let good = publish(
        &[
            ("project.cue", PROJECT_ONE.into()),
            ("bundles/web.cue", bundle("web", "web", "v1")),
        ],
        &url,
    );
    c.tenant("team", "deployer", true, None);
    c.create_project(
        "team",
        "solo",
        &url,
        "latest",
        json!({"runtime.timoni.sh/cluster": "test"}),
    );
    let st = c.wait_ready("team", "solo", "True", "ReconciliationSucceeded");

    // Each component says when it started and which artifact it applied; an Event said so.
    let web = &st.components[0];
    assert_eq!(web.phase, "Ready");
    assert_eq!(web.digest.as_deref(), Some(good.as_str()));
    let started: jiff::Timestamp = web.started_at.as_deref().unwrap().parse().unwrap();
    let applied: jiff::Timestamp = web.last_applied_time.as_deref().unwrap().parse().unwrap();
    assert!(started <= applied, "{started} > {applied}");
    let starts = c.events("team", "ComponentStarted");
    assert_eq!(starts.len(), 1, "{starts:?}");
    let note = starts[0].note.clone().unwrap_or_default();
    assert!(
        note.starts_with("component web started ") && note.ends_with(&format!("revision {good}")),
        "{note}"
    );
    let ready_since = |st: &ProjectStatus| {
        st.conditions
            .iter()
            .find(|c| c.type_ == "Ready")
            .map(|c| c.last_transition_time.clone())
    };
    let since = ready_since(&st);

    // Edited by hand: re-applied within an interval, reported as DriftCorrected. Only that
    // object is applied: no run (no component start, no instance apply, no status write) and
    // the instance's inventory is not written again.
    let cms: Api<ConfigMap> = Api::namespaced(c.client.clone(), "web");
    let secrets: Api<Secret> = Api::namespaced(c.client.clone(), "web");
    let inventory_version = || {
        c.block(secrets.get("timoni.web"))
            .unwrap()
            .metadata
            .resource_version
    };
    let inventory = inventory_version();
    let applied_events = c.events("team", "InstanceApplied").len();
    let tamper = json!({"data": {"version": "tampered"}});
    c.block(cms.patch("web-main", &PatchParams::default(), &Patch::Merge(&tamper)))
        .unwrap();
    wait_for("the edited ConfigMap to be restored", || {
        (c.config_map("web", "web-main")?["version"] == "v1").then_some(())
    });
    let corrected = wait_for("a DriftCorrected event", || {
        let e = c.events("team", "DriftCorrected");
        (!e.is_empty()).then_some(e)
    });
    let note = corrected[0].note.clone().unwrap_or_default();
    assert!(
        note.ends_with("\nConfigMap/web/web-main configured"),
        "{note}"
    );

    // Deleted by hand: recreated.
    c.block(cms.delete("web-main", &DeleteParams::default()))
        .unwrap();
    wait_for("the deleted ConfigMap to be recreated", || {
        c.config_map("web", "web-main").map(|_| ())
    });
    let corrected = wait_for("a second DriftCorrected event", || {
        let e = c.events("team", "DriftCorrected");
        (e.len() >= 2).then_some(e)
    });
    let note = corrected.last().unwrap().note.clone().unwrap_or_default();
    assert!(note.ends_with("\nConfigMap/web/web-main created"), "{note}");
    let st = c.status("team", "solo");
    assert_eq!(ready_since(&st), since, "Ready did not transition");
    assert_eq!(
        st.components[0].started_at, web.started_at,
        "a drift correction is not a run"
    );
    assert_eq!(c.events("team", "ComponentStarted").len(), 1);
    assert_eq!(c.events("team", "InstanceApplied").len(), applied_events);
    assert_eq!(inventory_version(), inventory, "the inventory was written");

    // Report only: the drift is recorded and left in place.
    let api: Api<Project> = Api::namespaced(c.client.clone(), "team");
    let patch = json!({"spec": {"drift": "Report"}});
    c.block(api.patch("solo", &PatchParams::default(), &Patch::Merge(&patch)))
        .unwrap();
    wait_for("the spec change to be observed", || {
        let p = c.project("team", "solo")?;
        (p.status?.observed_generation == p.metadata.generation).then_some(())
    });
    c.block(cms.patch("web-main", &PatchParams::default(), &Patch::Merge(&tamper)))
        .unwrap();
    let detected = wait_for("a DriftDetected event", || {
        let e = c.events("team", "DriftDetected");
        (!e.is_empty()).then_some(e)
    });
    assert!(
        detected[0]
            .note
            .as_deref()
            .unwrap_or("")
            .ends_with("\nConfigMap/web/web-main configured")
    );
    std::thread::sleep(Duration::from_secs(2)); // two intervals
    assert_eq!(
        c.config_map("web", "web-main").unwrap()["version"],
        "tampered"
    );

    // A build error of an artifact is Stalled, not retried: no write until something changes;
    // the message names the artifact's files, never the controller's directories.
    let broken = publish(
        &[
            ("project.cue", PROJECT_ONE.into()),
            (
                "bundles/web.cue",
                bundle("web", "web", "v2").replace(r#"version: "v2""#, r#"version: "v2" & 2"#),
            ),
        ],
        &url,
    );
    let st = wait_for("the build error", || {
        let st = c.status("team", "solo");
        (st.last_attempted_digest.as_deref() == Some(broken.as_str())
            && st
                .conditions
                .iter()
                .any(|c| c.type_ == "Stalled" && c.status == "True"))
        .then_some(st)
    });
    let ready = st.conditions.iter().find(|c| c.type_ == "Ready").unwrap();
    assert_eq!(
        (ready.status.as_str(), ready.reason.as_str()),
        ("False", "BuildFailed")
    );
    assert!(ready.message.len() <= 1000);
    let cache = c._cache.path().display().to_string();
    for text in [&ready.message, st.components[0].error.as_ref().unwrap()] {
        assert!(!text.contains(&cache) && !text.contains("/tmp/"), "{text}");
        assert!(
            text.contains("conflicting values \"v2\" and 2")
                && text.contains("\n    bundles/web.cue:7:20\n")
                && text.ends_with("\n    bundles/web.cue:7:27")
                && text.matches("conflicting values").count() == 1,
            "{text}"
        );
    }
    let kept: jiff::Timestamp = st.components[0]
        .last_applied_time
        .as_deref()
        .expect("the last successful apply is kept across the failed run")
        .parse()
        .unwrap();
    assert!(kept >= applied);
    assert_eq!(st.last_applied_digest.as_deref(), Some(good.as_str()));
    let version = c.project("team", "solo").unwrap().metadata.resource_version;
    let count = c.reconciles();
    wait_for("two more reconciles", || {
        (c.reconciles() >= count + 2).then_some(())
    });
    assert_eq!(
        c.project("team", "solo").unwrap().metadata.resource_version,
        version,
        "a stalled Project was written again"
    );
    assert_eq!(
        c.config_map("web", "web-main").unwrap()["version"],
        "tampered"
    );
}
