//! Acceptance tests of the controller (issue 8) against real servers: kube-apiservers from the
//! envtest recipe (`timoni-core/tests/common/envtest.rs`) and Debian's docker-registry
//! (`timoni-core/tests/support/registry.rs`), the controller running in-process
//! ([`timoni_controller::run`], `tests/support/cluster.rs`) on a tokio runtime, one per API
//! server. Each test skips with a
//! loud message when a server is unavailable. Projects are pushed as real artifacts; their
//! components use the local module `testdata/modules/cm` (one ConfigMap) shipped inside the
//! artifact, so no module registry is needed.

#[path = "../../timoni-core/tests/support/registry.rs"]
mod registry;
mod support;

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Secret, ServiceAccount};
use k8s_openapi::api::events::v1::Event;
use k8s_openapi::api::rbac::v1::{ClusterRoleBinding, Role, RoleBinding};
use kube::Api;
use kube::api::{DeleteParams, ListParams, Patch, PatchParams};
use serde_json::json;
use support::cluster::{Cluster, wait_for};
use support::envtest;
use support::project::{bundle, bundle_of, module_dir, project_dir, publish, push};
use timoni_core::oci::{self, ArtifactUrl, ConnectOptions};
use timoni_core::project::api::{Project, ProjectStatus};

impl Cluster {
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
    let Some(staging) = Cluster::start(|_| {}) else {
        return;
    };
    let Some(production) = Cluster::start(|_| {}) else {
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
    rt: std::sync::Arc<tokio::runtime::Runtime>,
    port: u16,
    upstream: u16,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl Proxy {
    fn new(rt: &std::sync::Arc<tokio::runtime::Runtime>, upstream: u16) -> Proxy {
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
    let Some(c) = Cluster::start(|_| {}) else {
        return;
    };
    let mut proxy = Proxy::new(&c.rt, reg.port);
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
    let lease = timoni_controller::LeaseSettings {
        name: "timoni-controller".into(),
        namespace: "default".into(),
        identity: "replica-1".into(),
        duration: Duration::from_secs(6),
    };
    let Some(c) = Cluster::start(|s| s.leader_election = Some(lease)) else {
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
    // result Event (not an instance one) carries the reason. It is recorded after the
    // status is written: it is waited for.
    wait_for("the Forbidden result event", || {
        c.events("tenant", "ReconciliationFailed")
            .iter()
            .any(|e| e.note.as_deref().unwrap_or("").starts_with("Forbidden: "))
            .then_some(())
    });

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
    let Some(c) = Cluster::start(|_| {}) else {
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
    assert_eq!(
        note,
        "restored 1 object edited or deleted outside the controller (re-applied, ready):\nConfigMap/web/web-main edited"
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
    assert!(note.ends_with("\nConfigMap/web/web-main deleted"), "{note}");
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
            .ends_with("\nConfigMap/web/web-main edited")
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
    let cache = c.cache_dir().display().to_string();
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
