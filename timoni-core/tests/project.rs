//! Project reconciliation against a real API server (see `common/envtest.rs`), as the controller
//! runs it but without the controller: the components of `testdata/project` are applied while
//! impersonating a service account that is admin of its namespace only; a component starts only
//! after the one it needs is Ready (its runtime reads a ConfigMap the other creates), instances
//! that leave the Project are uninstalled, and a bundle aimed at another namespace is forbidden.

#[path = "common/envtest.rs"]
mod envtest;

use std::path::Path;
use std::sync::Mutex;
use std::time::Instant;

use serde_json::json;
use timoni_core::cluster::kube::{
    ConfigConnector, KubeCluster, KubeOptions, impersonate_service_account,
};
use timoni_core::cluster::{ApplyOptions, Cluster, ObjRef};
use timoni_core::project::definition::load_project;
use timoni_core::project::reconcile::{
    Outcome, ProjectEvent, ReconcileOptions, Target, phase, reconcile_project,
};

fn copy_dir(from: &Path, to: &Path) {
    for e in walkdir::WalkDir::new(from) {
        let e = e.unwrap();
        let dest = to.join(e.path().strip_prefix(from).unwrap());
        if e.file_type().is_dir() {
            std::fs::create_dir_all(&dest).unwrap();
        } else {
            std::fs::copy(e.path(), &dest).unwrap();
        }
    }
}

fn config_map(c: &dyn Cluster, ns: &str, name: &str) -> Option<String> {
    c.get(&ObjRef {
        api_version: "v1".into(),
        kind: "ConfigMap".into(),
        namespace: ns.into(),
        name: name.into(),
    })
    .unwrap()
    .map(|o| o["data"]["v"].as_str().unwrap_or_default().to_string())
}

/// Namespace `team`, service account `team/deployer` allowed everything there and nothing else.
fn tenant(admin: &dyn Cluster) {
    let objs = [
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}}),
        json!({"apiVersion": "v1", "kind": "ServiceAccount",
            "metadata": {"name": "deployer", "namespace": "team"}}),
        // Not the `admin` ClusterRole: its rules are aggregated by kube-controller-manager,
        // which envtest does not run.
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
            "metadata": {"name": "deployer", "namespace": "team"},
            "rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}]}),
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
            "metadata": {"name": "deployer-admin", "namespace": "team"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "deployer"},
            "subjects": [{"kind": "ServiceAccount", "name": "deployer", "namespace": "team"}]}),
    ];
    for o in objs {
        admin.apply(&o, ApplyOptions::default()).unwrap();
    }
}

fn run(
    dir: &Path,
    connector: &ConfigConnector,
    previous: Vec<timoni_core::project::api::InstanceRef>,
) -> (Outcome, Vec<(Instant, ProjectEvent)>) {
    let project = load_project(dir, "project.cue").unwrap();
    let events = Mutex::new(Vec::new());
    let target = Target {
        cluster_name: Some("k8s-1".into()),
        cluster_group: Some("staging".into()),
    };
    let opts = ReconcileOptions {
        timeout: std::time::Duration::from_secs(30),
        poll: std::time::Duration::from_millis(200),
        previous,
        dry_run: false,
        correct_drift: false,
    };
    let outcome = reconcile_project(&project, &target, connector, None, &opts, &|e| {
        events.lock().unwrap().push((Instant::now(), e))
    });
    (outcome, events.into_inner().unwrap())
}

#[test]
fn components_follow_needs_as_the_service_account_and_leave_cleanly() {
    let Some(env) = envtest::Envtest::start() else {
        return;
    };
    let admin = KubeCluster::connect(&KubeOptions {
        kubeconfig: Some(env.kubeconfig()),
        ..Default::default()
    })
    .unwrap();
    tenant(&admin);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut config = rt
        .block_on(async {
            let kc = kube::config::Kubeconfig::read_from(env.kubeconfig()).unwrap();
            kube::Config::from_custom_kubeconfig(kc, &Default::default()).await
        })
        .unwrap();
    impersonate_service_account(&mut config, "team", "deployer");
    let connector = ConfigConnector { config };

    let work = tempfile::tempdir().unwrap();
    let dir = work.path();
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/testdata/project"),
        dir,
    );

    // First run: everything applies; app only after infra, whose ConfigMap its runtime reads.
    let (outcome, events) = run(dir, &connector, Vec::new());
    assert_eq!(outcome.failure, None, "{outcome:#?}");
    let phases: Vec<(&str, &str)> = outcome
        .components
        .iter()
        .map(|c| (c.name.as_str(), c.phase.as_str()))
        .collect();
    assert_eq!(
        phases,
        [
            ("app", phase::READY),
            ("infra", phase::READY),
            ("extra", phase::READY)
        ]
    );
    let at = |want: &dyn Fn(&ProjectEvent) -> bool| {
        events
            .iter()
            .find(|(_, e)| want(e))
            .map(|(t, _)| *t)
            .expect("event")
    };
    let infra_done = at(&|e| matches!(e, ProjectEvent::ComponentFinished(s) if s.name == "infra"));
    let app_start = at(
        &|e| matches!(e, ProjectEvent::ComponentStarted { component, .. } if component == "app"),
    );
    let extra_start = at(
        &|e| matches!(e, ProjectEvent::ComponentStarted { component, .. } if component == "extra"),
    );
    assert!(
        app_start >= infra_done,
        "app started before infra was ready"
    );
    assert!(
        extra_start < infra_done,
        "independent components run concurrently"
    );
    // Without a runtime, the Project's annotations are the cluster name and group.
    assert_eq!(
        config_map(&admin, "team", "db").as_deref(),
        Some("k8s-1/staging")
    );
    assert_eq!(
        config_map(&admin, "team", "web").as_deref(),
        Some("k8s-1/staging"),
        "the runtime value read from infra's ConfigMap"
    );
    let instances: Vec<String> = outcome
        .instances()
        .iter()
        .map(|i| format!("{}/{} {}", i.namespace, i.name, i.module_version))
        .collect();
    assert_eq!(
        instances,
        [
            "team/web 0.0.0-devel",
            "team/api 0.0.0-devel",
            "team/db 0.0.0-devel",
            "team/side 0.0.0-devel"
        ]
    );
    let applied: Vec<String> = events
        .iter()
        .filter_map(|(_, e)| match e {
            ProjectEvent::Instance(i) => Some(format!(
                "{} {} {:?} {}",
                i.component,
                i.instance.name,
                i.error,
                i.changes
                    .iter()
                    .map(|c| format!("{} {}", c.object, c.action))
                    .collect::<Vec<_>>()
                    .join(",")
            )),
            _ => None,
        })
        .collect();
    assert!(
        applied.contains(&"infra db None ConfigMap/team/db created".to_string()),
        "{applied:#?}"
    );

    // The `extra` component leaves the Project: its instance is uninstalled, the rest stays.
    let text = std::fs::read_to_string(dir.join("project.cue")).unwrap();
    std::fs::write(
        dir.join("project.cue"),
        text.replace("\t\textra: bundle: [\"./extra/bundle.cue\"]\n", ""),
    )
    .unwrap();
    let (second, events) = run(dir, &connector, outcome.instances());
    assert_eq!(second.failure, None, "{second:#?}");
    assert!(
        events
            .iter()
            .any(|(_, e)| matches!(e, ProjectEvent::Pruned { instance, error: None } if instance.name == "side"))
    );
    assert_eq!(config_map(&admin, "team", "side"), None);
    assert!(config_map(&admin, "team", "db").is_some());

    // A bundle aimed at another namespace is refused by RBAC; nothing is created there, and
    // what needs it is blocked.
    let infra = std::fs::read_to_string(dir.join("infra/bundle.cue")).unwrap();
    std::fs::write(
        dir.join("infra/bundle.cue"),
        infra.replace("namespace: \"team\"", "namespace: \"other\""),
    )
    .unwrap();
    let (third, _) = run(dir, &connector, second.instances());
    let failure = third.failure.expect("forbidden");
    assert_eq!(failure.reason, "Forbidden", "{failure:?}");
    assert!(
        failure
            .message
            .contains("system:serviceaccount:team:deployer"),
        "{failure:?}"
    );
    let app = &third.components[0];
    assert_eq!(app.phase, phase::BLOCKED, "{app:?}");
    let ns = admin
        .get(&ObjRef {
            api_version: "v1".into(),
            kind: "Namespace".into(),
            namespace: String::new(),
            name: "other".into(),
        })
        .unwrap();
    assert!(
        ns.is_none(),
        "nothing may be written outside the tenant namespace"
    );
}
