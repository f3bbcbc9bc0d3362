//! Two `timoni-controller` processes (the built binary, as a Deployment runs it) against one
//! envtest API server with leader election: only the Lease holder reconciles, and killing it
//! hands over to the other within the lease duration, which then applies the next artifact;
//! then the operations of `timoni project reconcile --wait`, `suspend`, `resume` and
//! `delete --wait` (`timoni_core::project::admin::ops`) against that process.
//! Skips loudly without envtest or docker-registry (see `timoni-core/tests/common/envtest.rs`).

#[path = "../../timoni-core/tests/support/registry.rs"]
mod registry;
mod support;

use std::io::Read;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, ServiceAccount};
use k8s_openapi::api::rbac::v1::ClusterRoleBinding;
use kube::Api;
use serde_json::json;
use support::cluster::{ApiServer, wait_within as wait_for};
use support::project::publish;
use timoni_core::cluster::kube::{KubeCluster, KubeOptions};
use timoni_core::project::admin::ops;
use timoni_core::project::api::Project;

const LEASE: Duration = Duration::from_secs(4);

/// A controller process; killed on drop. Its stderr (JSON logs) goes to a file.
struct Replica {
    child: Child,
    log: std::path::PathBuf,
}

impl Replica {
    fn start(kubeconfig: &Path, dir: &Path, name: &str) -> Replica {
        let log = dir.join(format!("{name}.log"));
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new(env!("CARGO_BIN_EXE_timoni-controller"))
            .arg("--kubeconfig")
            .arg(kubeconfig)
            .args(["--leader-elect", "--leader-elect-namespace", "default"])
            .args(["--leader-elect-lease-duration", "4s"])
            .args(["--metrics-addr", &format!("127.0.0.1:{port}")])
            .arg("--cache-dir")
            .arg(dir.join(name))
            .env("POD_NAME", name)
            .env("RUST_LOG", "info,kube=warn")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .expect("the timoni-controller binary starts");
        Replica { child, log }
    }

    fn logs(&self) -> Vec<serde_json::Value> {
        let mut text = String::new();
        std::fs::File::open(&self.log)
            .unwrap()
            .read_to_string(&mut text)
            .unwrap();
        text.lines()
            .map(|l| {
                serde_json::from_str(l).unwrap_or_else(|e| panic!("not a JSON log line ({e}): {l}"))
            })
            .collect()
    }

    fn runs(&self) -> usize {
        self.logs()
            .iter()
            .filter(|l| l["message"] == "run starts")
            .count()
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Pushes the Project `solo` (one instance `web/web` of the `cm` module with `version`) to
/// `url:latest`; returns the digest.
fn push(url: &str, version: &str) -> String {
    let bundle = format!(
        "bundle: {{\n\tapiVersion: \"v1alpha1\"\n\tname: \"web\"\n\tinstances: web: {{\n\t\tmodule: url: \"file://../modules/cm\"\n\t\tnamespace: \"web\"\n\t\tvalues: version: \"{version}\"\n\t}}\n}}\n"
    );
    let project = "project: {\n\tapiVersion: \"v1alpha1\"\n\tname: \"solo\"\n\tcomponents: web: bundle: [\"bundles/web.cue\"]\n}\n";
    publish(
        &[("project.cue", project.into()), ("bundles/web.cue", bundle)],
        url,
    )
}

#[test]
fn only_the_leader_reconciles_and_killing_it_hands_over() {
    let Some(reg) = registry::start(None) else {
        return;
    };
    let Some(server) = ApiServer::start() else {
        return;
    };
    let (rt, client, env) = (&server.rt, server.client.clone(), &server.env);
    for n in ["team", "web"] {
        server.apply::<Namespace>(
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n}}),
        );
    }
    server.apply::<ServiceAccount>(json!({"apiVersion": "v1", "kind": "ServiceAccount",
        "metadata": {"name": "deployer", "namespace": "team"}}));
    server.apply::<ClusterRoleBinding>(json!({"apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding", "metadata": {"name": "team-deployer"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
        "subjects": [{"kind": "ServiceAccount", "name": "deployer", "namespace": "team"}]}));

    let url = reg.url("team/solo");
    let v1 = push(&url, "v1");
    let dir = tempfile::tempdir().unwrap();
    let mut a = Some(Replica::start(&env.kubeconfig(), dir.path(), "replica-a"));
    let b = Replica::start(&env.kubeconfig(), dir.path(), "replica-b");
    let projects: Api<Project> = Api::namespaced(client.clone(), "team");
    server.apply::<Project>(
        json!({"apiVersion": "projects.timoni.sh/v1alpha1", "kind": "Project",
        "metadata": {"name": "solo", "namespace": "team"},
        "spec": {"serviceAccountName": "deployer", "source": {"repository": url},
            "interval": "1s", "timeout": "30s"}}),
    );
    let applied = |digest: &str| {
        let p = rt.block_on(projects.get("solo")).ok()?;
        (p.status?.last_applied_digest.as_deref() == Some(digest)).then_some(())
    };
    wait_for("v1 applied", Duration::from_secs(60), || applied(&v1));

    let leases: Api<Lease> = Api::namespaced(client.clone(), "default");
    let holder = || {
        rt.block_on(leases.get_opt("timoni-controller"))
            .unwrap()
            .and_then(|l| l.spec?.holder_identity)
    };
    let first = holder().expect("a leader holds the Lease");
    let (leader, follower) = if first == "replica-a" {
        (a.take().unwrap(), b)
    } else {
        (b, a.take().unwrap())
    };
    assert_eq!(leader.runs(), 1, "the leader ran once");
    assert_eq!(follower.runs(), 0, "the follower did not reconcile");
    assert!(
        follower
            .logs()
            .iter()
            .any(|l| l["message"] == "waiting for leadership"),
        "{:?}",
        follower.logs()
    );

    // The leader dies: the follower takes the Lease within its duration and applies v2.
    let killed = Instant::now();
    drop(leader);
    let v2 = push(&url, "v2");
    let second = wait_for("the follower to lead", LEASE * 4, || {
        holder().filter(|h| *h != first)
    });
    assert!(
        killed.elapsed() < LEASE * 3,
        "took over after {:?}",
        killed.elapsed()
    );
    assert_ne!(second, first);
    wait_for(
        "v2 applied by the new leader",
        Duration::from_secs(60),
        || applied(&v2),
    );
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "web");
    let data = rt
        .block_on(cms.get("web-main"))
        .unwrap()
        .data
        .unwrap_or_default();
    assert_eq!(data["version"], "v2");
    assert!(follower.runs() >= 1, "the new leader ran");

    // What `timoni project reconcile --wait`, `suspend`, `resume` and `delete --wait` do,
    // against this controller process.
    let cluster = KubeCluster::connect(&KubeOptions {
        kubeconfig: Some(env.kubeconfig()),
        ..Default::default()
    })
    .unwrap();
    let poll = Duration::from_millis(200);
    let at = jiff::Timestamp::now().to_string();
    ops::request_reconcile(&cluster, "team", "solo", &at).unwrap();
    let p =
        ops::wait_reconciled(&cluster, "team", "solo", &at, Duration::from_secs(60), poll).unwrap();
    assert_eq!(ops::ready(&p).0, "True");
    ops::set_suspend(&cluster, "team", "solo", true).unwrap();
    wait_for("Suspended", Duration::from_secs(30), || {
        let p = ops::get_project(&cluster, "team", "solo").ok()?;
        p.status?
            .conditions
            .iter()
            .any(|c| c.type_ == "Reconciling" && c.reason == "Suspended")
            .then_some(())
    });
    let v3 = push(&url, "v3");
    let at = jiff::Timestamp::now().to_string();
    ops::request_reconcile(&cluster, "team", "solo", &at).unwrap();
    let err = ops::wait_reconciled(&cluster, "team", "solo", &at, Duration::from_secs(5), poll)
        .unwrap_err();
    assert!(err.to_string().contains("is suspended"), "{err}");
    ops::set_suspend(&cluster, "team", "solo", false).unwrap();
    let p =
        ops::wait_reconciled(&cluster, "team", "solo", &at, Duration::from_secs(60), poll).unwrap();
    assert_eq!(
        p.status.and_then(|s| s.last_applied_digest).as_deref(),
        Some(v3.as_str())
    );
    let opts = ops::DeleteOptions {
        orphan: false,
        wait: true,
        timeout: Duration::from_secs(60),
        poll,
    };
    ops::delete_project(&cluster, "team", "solo", opts).unwrap();
    assert!(ops::get_project(&cluster, "team", "solo").is_err());
    // `timoni project events` still shows what happened.
    let events = ops::project_events(&cluster, "team", "solo").unwrap();
    let reasons: Vec<&str> = events.iter().map(|e| e.reason.as_str()).collect();
    for r in ["ComponentStarted", "InstanceApplied", "InstanceDeleted"] {
        assert!(reasons.contains(&r), "no {r} in {reasons:?}");
    }
    assert!(ops::project_events(&cluster, "team", "never-was").is_err());
    assert!(
        rt.block_on(cms.get_opt("web-main")).unwrap().is_none(),
        "delete --wait returned before the instance was uninstalled"
    );
}
