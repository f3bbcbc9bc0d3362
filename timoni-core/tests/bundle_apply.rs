//! `bundle apply|status|delete` across a runtime of three clusters (three real API servers, see
//! `common/envtest.rs`) in two groups: a group selection touches only its clusters, a failure on
//! the first cluster stops the run before the second, and status and delete cover all three.

#[path = "common/envtest.rs"]
mod envtest;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use timoni_core::bundle::{BundleRequest, SourceFile};
use timoni_core::cluster::apply::{ApplyError, ApplyRequest, apply_instance};
use timoni_core::cluster::bundle::{
    BundleApplyRequest, Connector, apply_bundle, bundle_status, delete_bundle,
};
use timoni_core::cluster::kube::{KubeCluster, KubeOptions};
use timoni_core::cluster::ops::{DeleteRequest, delete_instance, list_instances};
use timoni_core::cluster::status::Status;
use timoni_core::cluster::{Cluster, ClusterError, ObjRef};
use timoni_core::instance::BuildOptions;
use timoni_core::runtime;

fn module() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/testdata/apply/app")
}

/// Maps the kube contexts `c1`..`c3` to the API servers' kubeconfigs.
struct Contexts(BTreeMap<String, PathBuf>);

impl Connector for Contexts {
    fn connect(&self, c: &runtime::Cluster) -> Result<Box<dyn Cluster>, ClusterError> {
        let path = self.0.get(&c.kube_context).expect("known context");
        Ok(Box::new(connect(path)))
    }
}

fn connect(kubeconfig: &Path) -> KubeCluster {
    KubeCluster::connect(&KubeOptions {
        kubeconfig: Some(kubeconfig.to_path_buf()),
        ..Default::default()
    })
    .unwrap()
}

fn instances(c: &dyn Cluster) -> Vec<String> {
    list_instances(c, "", Some("apps"))
        .unwrap()
        .into_iter()
        .map(|r| format!("{}/{}", r.metadata.namespace, r.metadata.name))
        .collect()
}

#[test]
fn bundles_apply_per_runtime_group_stop_at_the_first_failing_cluster_and_delete_everywhere() {
    let mut envs = Vec::new();
    for _ in 0..3 {
        match envtest::Envtest::start() {
            Some(e) => envs.push(e),
            None => return,
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let bundle = dir.path().join("bundle.cue");
    std::fs::write(
        &bundle,
        format!(
            r#"bundle: {{
	apiVersion: "v1alpha1"
	name: "apps"
	instances: {{
		web: {{
			module: url: "file://{m}"
			namespace: "web"
			values: data: string @timoni(runtime:string:TIMONI_CLUSTER_NAME)
		}}
		api: {{
			module: url: "file://{m}"
			namespace: "api"
			values: extra: false
		}}
	}}
}}
"#,
            m = module().display()
        ),
    )
    .unwrap();
    let rt = dir.path().join("runtime.cue");
    std::fs::write(
        &rt,
        r#"runtime: {
	apiVersion: "v1alpha1"
	name: "fleet"
	clusters: {
		"staging-1": {group: "staging", kubeContext: "c1"}
		"staging-2": {group: "staging", kubeContext: "c2"}
		"production": {group: "production", kubeContext: "c3"}
	}
}
"#,
    )
    .unwrap();
    let contexts = Contexts(
        (1..=3)
            .map(|i| (format!("c{i}"), envs[i - 1].kubeconfig()))
            .collect(),
    );
    let clusters: Vec<KubeCluster> = envs.iter().map(|e| connect(&e.kubeconfig())).collect();
    let breq = |group: &str| BundleRequest {
        files: vec![SourceFile::read(&bundle).unwrap()],
        runtime_files: vec![SourceFile::read(&rt).unwrap()],
        env: None,
        cluster: "*".into(),
        group: group.into(),
        workdir: None,
    };
    let areq = |group: &str| BundleApplyRequest {
        bundle: breq(group),
        package: "main".into(),
        dry_run: false,
        diff: false,
        correct_drift: false,
        force: false,
        overwrite_ownership: false,
        wait: true,
        timeout: Duration::from_secs(20),
        poll: Duration::from_millis(50),
    };

    // An instance `api` of another bundle on the first staging cluster: the run fails there and
    // never reaches the second.
    let mut other = ApplyRequest::new(BuildOptions::new(
        "api",
        "api",
        &module().display().to_string(),
    ));
    other.bundle = Some("other".into());
    other.poll = Duration::from_millis(50);
    apply_instance(&clusters[0], &other, &mut |_| {}).unwrap();
    let mut seen = Vec::new();
    let err = apply_bundle(&contexts, None, &areq("staging"), &mut |e| {
        if let timoni_core::cluster::bundle::BundleEvent::Cluster(c) = e {
            seen.push(c.name.clone());
        }
    })
    .unwrap_err();
    assert!(matches!(err, ApplyError::Ownership(_)), "{err:?}");
    assert!(
        err.to_string()
            .contains("cluster staging-1: instance ownership conflict"),
        "{err}"
    );
    assert_eq!(seen, ["staging-1"]);
    assert!(
        instances(&clusters[1]).is_empty(),
        "the second cluster was not touched"
    );
    let del = DeleteRequest {
        name: "api".into(),
        namespace: "api".into(),
        dry_run: false,
        wait: true,
        timeout: Duration::from_secs(20),
        poll: Duration::from_millis(50),
    };
    delete_instance(&clusters[0], &del, &mut |_| {}).unwrap();

    // The staging group: only its two clusters, each with its own runtime values.
    let done = apply_bundle(&contexts, None, &areq("staging"), &mut |_| {}).unwrap();
    let names: Vec<&str> = done.iter().map(|(c, _)| c.name.as_str()).collect();
    assert_eq!(names, ["staging-1", "staging-2"]);
    for (i, c) in clusters.iter().enumerate() {
        let want: Vec<String> = if i < 2 {
            vec!["web/web".into(), "api/api".into()]
        } else {
            vec![]
        };
        let mut got = instances(c);
        got.sort();
        let mut want = want;
        want.sort();
        assert_eq!(got, want, "cluster {i}");
    }
    let cm = ObjRef {
        api_version: "v1".into(),
        kind: "ConfigMap".into(),
        namespace: "web".into(),
        name: "web-main".into(),
    };
    assert_eq!(
        clusters[1].get(&cm).unwrap().unwrap()["data"]["v"],
        "staging-2"
    );

    // A standalone apply of a bundle's instance is refused unless it takes ownership; then the
    // bundle must take it back the same way.
    let mut solo = ApplyRequest::new(BuildOptions::new(
        "web",
        "web",
        &module().display().to_string(),
    ));
    solo.poll = Duration::from_millis(50);
    let err = apply_instance(&clusters[0], &solo, &mut |_| {}).unwrap_err();
    assert_eq!(
        err.to_string(),
        "instance ownership conflict encountered. Conflict: instance \"web\" exists and is managed by another bundle \"apps\""
    );
    solo.overwrite_ownership = true;
    apply_instance(&clusters[0], &solo, &mut |_| {}).unwrap();
    let err = apply_bundle(&contexts, None, &areq("staging"), &mut |_| {}).unwrap_err();
    assert!(
        err.to_string()
            .contains("\"web\" exists and is managed by no bundle"),
        "{err}"
    );
    let mut take = areq("staging");
    take.overwrite_ownership = true;
    apply_bundle(&contexts, None, &take, &mut |_| {}).unwrap();

    // All clusters, then status and delete across the three.
    apply_bundle(&contexts, None, &areq("*"), &mut |_| {}).unwrap();
    assert_eq!(
        clusters[2].get(&cm).unwrap().unwrap()["data"]["v"],
        "production"
    );
    let st = bundle_status(&contexts, &breq("*"), "apps").unwrap();
    assert_eq!(st.len(), 3);
    for (c, per) in &st {
        assert_eq!(per.len(), 2, "{}", c.name);
        for (_, objs) in per {
            assert!(objs.iter().all(|o| o.status == Status::Current), "{objs:?}");
        }
    }
    delete_bundle(
        &contexts,
        &breq("*"),
        "apps",
        false,
        true,
        Duration::from_secs(20),
        Duration::from_millis(50),
        &mut |_| {},
    )
    .unwrap();
    for c in &clusters {
        assert!(instances(c).is_empty());
        assert!(c.get(&cm).unwrap().is_none());
    }
}
