//! The apply engine, prune, delete, list and status against a real kube-apiserver (envtest, see
//! `common/envtest.rs`): install writes the exact inventory Secret, upgrades prune what they
//! drop but never `prune: disabled` or foreign objects, dry runs persist nothing and mask
//! Secrets, delete removes what it created and nothing else, and a run failed at any API call
//! converges when run again.

#[path = "common/envtest.rs"]
mod envtest;

use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::time::Duration;

use base64::Engine;
use serde_json::{Value, json};
use timoni_core::cluster::apply::{Action, ApplyRequest, apply_instance};
use timoni_core::cluster::kube::{KubeCluster, KubeOptions};
use timoni_core::cluster::ops::{DeleteRequest, delete_instance, instance_status, list_instances};
use timoni_core::cluster::status::Status;
use timoni_core::cluster::{ApplyOptions, Cluster, ClusterError, ObjRef, Object, ResourceInfo};
use timoni_core::instance::BuildOptions;
use timoni_core::values::ValuesSource;

fn module() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/testdata/apply/app")
}

fn connect(env: &envtest::Envtest) -> KubeCluster {
    KubeCluster::connect(&KubeOptions {
        kubeconfig: Some(env.kubeconfig()),
        ..Default::default()
    })
    .expect("connect")
}

/// A request for instance `t` of the test module with these values (CUE text).
fn request(ns: &str, values: &str, dir: &Path) -> ApplyRequest {
    let mut b = BuildOptions::new("t", ns, &module().display().to_string());
    let file = dir.join(format!("values-{}.cue", values.len()));
    std::fs::write(&file, format!("values: {{{values}}}\n")).unwrap();
    b.values = vec![ValuesSource::File(file)];
    let mut r = ApplyRequest::new(b);
    r.timeout = Duration::from_secs(20);
    r.poll = Duration::from_millis(50);
    r
}

fn obj(api: &str, kind: &str, ns: &str, name: &str) -> ObjRef {
    ObjRef {
        api_version: api.into(),
        kind: kind.into(),
        namespace: ns.into(),
        name: name.into(),
    }
}

fn cm(ns: &str, name: &str) -> ObjRef {
    obj("v1", "ConfigMap", ns, name)
}

fn apply(c: &dyn Cluster, r: &ApplyRequest) -> Vec<(String, Action)> {
    let report = apply_instance(c, r, &mut |_| {}).expect("apply");
    report
        .changes
        .into_iter()
        .map(|c| (c.object.to_string(), c.action))
        .collect()
}

fn secret_json(c: &dyn Cluster, ns: &str) -> Object {
    c.get(&obj("v1", "Secret", ns, "timoni.t"))
        .unwrap()
        .expect("inventory secret")
}

fn decode(s: &Object, key: &str) -> String {
    let b = s["data"][key].as_str().unwrap();
    String::from_utf8(base64::engine::general_purpose::STANDARD.decode(b).unwrap()).unwrap()
}

#[test]
fn install_upgrade_prune_dry_run_and_delete() {
    let Some(env) = envtest::Envtest::start() else {
        return;
    };
    let c = connect(&env);
    let tmp = tempfile::tempdir().unwrap();
    let ns = "lifecycle";

    // Install: everything is created, with the owner labels.
    let changes = apply(&c, &request(ns, "", tmp.path()));
    assert_eq!(changes.len(), 8, "{changes:?}");
    assert!(
        changes.iter().all(|(_, a)| *a == Action::Created),
        "{changes:?}"
    );
    assert_eq!(
        changes[0].0, "ClusterRole/lifecycle-t-reader",
        "ssa order puts cluster RBAC first"
    );
    let main = c.get(&cm(ns, "t-main")).unwrap().unwrap();
    assert_eq!(main["metadata"]["labels"]["instance.timoni.sh/name"], "t");
    assert_eq!(
        main["metadata"]["labels"]["instance.timoni.sh/namespace"],
        ns
    );
    let role = c
        .get(&obj(
            "rbac.authorization.k8s.io/v1",
            "ClusterRole",
            "",
            "lifecycle-t-reader",
        ))
        .unwrap()
        .unwrap();
    assert_eq!(role["metadata"]["labels"]["instance.timoni.sh/name"], "t");
    let nsobj = c.get(&obj("v1", "Namespace", "", ns)).unwrap().unwrap();
    assert_eq!(
        nsobj["metadata"]["labels"]["app.kubernetes.io/created-by"],
        "timoni"
    );

    // The inventory Secret, exactly.
    let s = secret_json(&c, ns);
    assert_eq!(s["type"], "timoni.sh/instance");
    assert_eq!(
        s["metadata"]["labels"],
        json!({"app.kubernetes.io/component": "instance", "app.kubernetes.io/created-by": "timoni",
               "app.kubernetes.io/name": "t"})
    );
    let keys: Vec<&String> = s["data"].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["instance"]);
    let raw = decode(&s, "instance");
    assert!(
        raw.starts_with(
            r#"{"kind":"Instance","apiVersion":"timoni.sh/v1alpha1","metadata":{"name":"t","namespace":"lifecycle","creationTimestamp":null},"module":{"name":"timoni.sh/testapp","repository":""#
        ),
        "{raw}"
    );
    let rec: Value = serde_json::from_str(&raw).unwrap();
    let ids: Vec<&str> = rec["inventory"]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [
            "lifecycle_t__ServiceAccount",
            "_lifecycle-t-reader_rbac.authorization.k8s.io_ClusterRole",
            "lifecycle_t-extra__ConfigMap",
            "lifecycle_t-kept__ConfigMap",
            "lifecycle_t-main__ConfigMap",
            "lifecycle_t-once__ConfigMap",
            "lifecycle_t-creds__Secret",
            "lifecycle_t-imm__Secret",
        ]
    );
    assert_eq!(rec["inventory"]["entries"][1]["v"], "v1");
    assert_eq!(rec["module"]["version"], "0.0.0-devel");
    assert!(
        rec["values"]
            .as_str()
            .unwrap()
            .starts_with("{\n\tdata:   \"one\"\n"),
        "{rec}"
    );
    assert!(rec["lastTransitionTime"].as_str().unwrap().ends_with('Z'));

    // A second run changes nothing; the one-off object is skipped.
    let again = apply(&c, &request(ns, "", tmp.path()));
    for (o, a) in &again {
        let want = if o.ends_with("t-once") {
            Action::Skipped
        } else {
            Action::Unchanged
        };
        assert_eq!(*a, want, "{o}");
    }

    // Dry run with diff: nothing persisted, Secret data masked.
    let before_rv = secret_json(&c, ns)["metadata"]["resourceVersion"].clone();
    let mut dry = request(
        ns,
        r#"data: "two", secret: "changed-pass", extra: false"#,
        tmp.path(),
    );
    dry.dry_run = true;
    dry.diff = true;
    let report = apply_instance(&c, &dry, &mut |_| {}).unwrap();
    let find = |n: &str| {
        report
            .changes
            .iter()
            .find(|c| c.object.to_string() == n)
            .unwrap()
    };
    assert_eq!(
        find("ConfigMap/lifecycle/t-main").action,
        Action::Configured
    );
    assert_eq!(find("ConfigMap/lifecycle/t-extra").action, Action::Deleted);
    let creds = find("Secret/lifecycle/t-creds");
    assert_eq!(creds.action, Action::Configured);
    let d = creds.diff.as_deref().unwrap();
    assert!(d.contains("***"), "{d}");
    assert!(
        !d.contains("changed-pass") && !d.contains("Y2hhbmdlZC1wYXNz"),
        "{d}"
    );
    assert!(
        find("ConfigMap/lifecycle/t-main")
            .diff
            .as_deref()
            .unwrap()
            .contains("+  v: two")
    );
    assert_eq!(
        c.get(&cm(ns, "t-main")).unwrap().unwrap()["data"]["v"],
        "one"
    );
    assert!(c.get(&cm(ns, "t-extra")).unwrap().is_some());
    assert_eq!(
        secret_json(&c, ns)["metadata"]["resourceVersion"],
        before_rv
    );

    // Upgrade dropping `extra` and `kept`: extra is pruned, kept (prune: disabled) survives;
    // the one-off object keeps its first data; the immutable Secret is recreated (force).
    let up = apply(
        &c,
        &request(ns, r#"extra: false, once: "second", imm: "b""#, tmp.path()),
    );
    assert!(
        up.contains(&("ConfigMap/lifecycle/t-extra".into(), Action::Deleted)),
        "{up:?}"
    );
    assert!(
        up.contains(&("ConfigMap/lifecycle/t-kept".into(), Action::Skipped)),
        "{up:?}"
    );
    assert!(
        up.contains(&("Secret/lifecycle/t-imm".into(), Action::Created)),
        "{up:?}"
    );
    assert!(c.get(&cm(ns, "t-extra")).unwrap().is_none());
    assert!(c.get(&cm(ns, "t-kept")).unwrap().is_some());
    assert_eq!(
        c.get(&cm(ns, "t-once")).unwrap().unwrap()["data"]["v"],
        "first"
    );
    let imm = c.get(&obj("v1", "Secret", ns, "t-imm")).unwrap().unwrap();
    assert_eq!(imm["data"]["v"], "Yg==");
    let s = secret_json(&c, ns);
    assert!(s["data"].get("pending").is_none(), "pending cleared: {s}");
    let rec: Value = serde_json::from_str(&decode(&s, "instance")).unwrap();
    assert_eq!(rec["inventory"]["entries"].as_array().unwrap().len(), 6);

    // A foreign object with the name of a stale one survives the prune.
    apply(&c, &request(ns, "", tmp.path()));
    assert!(c.delete(&cm(ns, "t-extra"), false).unwrap());
    let foreign = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "t-extra", "namespace": ns}, "data": {"owner": "someone else"}});
    c.apply(&foreign, ApplyOptions::default()).unwrap();
    let up = apply(&c, &request(ns, "extra: false", tmp.path()));
    assert!(
        up.contains(&("ConfigMap/lifecycle/t-extra".into(), Action::Skipped)),
        "{up:?}"
    );
    assert_eq!(
        c.get(&cm(ns, "t-extra")).unwrap().unwrap()["data"]["owner"],
        "someone else"
    );

    // An inventory of type Opaque (older Timoni versions) is recreated with the new type.
    let sref = obj("v1", "Secret", ns, "timoni.t");
    let mut old = secret_json(&c, ns);
    c.delete(&sref, false).unwrap();
    old["type"] = json!("Opaque");
    for k in [
        "resourceVersion",
        "uid",
        "creationTimestamp",
        "managedFields",
    ] {
        old["metadata"].as_object_mut().unwrap().remove(k);
    }
    c.apply(&old, ApplyOptions::default()).unwrap();
    apply(&c, &request(ns, "extra: false", tmp.path()));
    assert_eq!(secret_json(&c, ns)["type"], "timoni.sh/instance");

    // Takeover: a ConfigMap made by kubectl (its own field manager and annotation) becomes
    // timoni's, without kubectl's annotation.
    kubectl_apply(&env.kubeconfig(), ns, "t-main");
    let before = c.get(&cm(ns, "t-main")).unwrap().unwrap();
    assert!(
        before["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"]
            .is_string()
    );
    assert_eq!(before["data"]["v"], "from kubectl");
    apply(&c, &request(ns, "extra: false", tmp.path()));
    let after = c.get(&cm(ns, "t-main")).unwrap().unwrap();
    assert_eq!(after["data"]["v"], "one");
    assert!(
        after["metadata"]["annotations"]
            .get("kubectl.kubernetes.io/last-applied-configuration")
            .is_none(),
        "{after}"
    );

    // list and status.
    let list = list_instances(&c, "", None).unwrap();
    assert_eq!(list.len(), 1);
    assert_eq!(list[0].metadata.name, "t");
    let (_, objs) = instance_status(&c, "t", ns).unwrap();
    assert!(objs.iter().all(|o| o.status == Status::Current), "{objs:?}");

    // Delete: what it created goes, the rest stays.
    let bystander = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "bystander", "namespace": ns}});
    c.apply(&bystander, ApplyOptions::default()).unwrap();
    let del = DeleteRequest {
        name: "t".into(),
        namespace: ns.into(),
        dry_run: true,
        wait: true,
        timeout: Duration::from_secs(20),
        poll: Duration::from_millis(50),
    };
    let planned = delete_instance(&c, &del, &mut |_| {}).unwrap();
    assert!(planned.iter().any(|c| c.action == Action::Deleted));
    assert!(
        c.get(&cm(ns, "t-main")).unwrap().is_some(),
        "dry run deletes nothing"
    );
    let done = delete_instance(
        &c,
        &DeleteRequest {
            dry_run: false,
            ..del
        },
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(
        done.first().map(|c| c.object.kind.as_str()),
        Some("Secret"),
        "reverse order"
    );
    for gone in [
        cm(ns, "t-main"),
        cm(ns, "t-once"),
        obj("v1", "Secret", ns, "timoni.t"),
        obj("v1", "ServiceAccount", ns, "t"),
        obj(
            "rbac.authorization.k8s.io/v1",
            "ClusterRole",
            "",
            "lifecycle-t-reader",
        ),
    ] {
        assert!(c.get(&gone).unwrap().is_none(), "{gone} should be gone");
    }
    for kept in [
        cm(ns, "t-kept"),
        cm(ns, "t-extra"),
        cm(ns, "bystander"),
        obj("v1", "Namespace", "", ns),
    ] {
        assert!(c.get(&kept).unwrap().is_some(), "{kept} should survive");
    }
}

/// A cluster whose `fail_at`-th call (1-based) fails, as if the process died there.
struct Faulty<'a> {
    inner: &'a dyn Cluster,
    fail_at: usize,
    calls: Cell<usize>,
}

impl Faulty<'_> {
    fn tick(&self) -> Result<(), ClusterError> {
        let n = self.calls.get() + 1;
        self.calls.set(n);
        if n == self.fail_at {
            Err(ClusterError::Transport(format!(
                "injected fault at call {n}"
            )))
        } else {
            Ok(())
        }
    }
}

impl Cluster for Faulty<'_> {
    fn server_version(&self) -> Result<String, ClusterError> {
        self.tick()?;
        self.inner.server_version()
    }
    fn resource(&self, a: &str, k: &str) -> Result<ResourceInfo, ClusterError> {
        self.tick()?;
        self.inner.resource(a, k)
    }
    fn apply(&self, o: &Object, opts: ApplyOptions) -> Result<Object, ClusterError> {
        self.tick()?;
        self.inner.apply(o, opts)
    }
    fn get(&self, r: &ObjRef) -> Result<Option<Object>, ClusterError> {
        self.tick()?;
        self.inner.get(r)
    }
    fn delete(&self, r: &ObjRef, d: bool) -> Result<bool, ClusterError> {
        self.tick()?;
        self.inner.delete(r, d)
    }
    fn merge_patch(&self, r: &ObjRef, p: &Object) -> Result<Object, ClusterError> {
        self.tick()?;
        self.inner.merge_patch(r, p)
    }
    fn list(&self, a: &str, k: &str, n: &str, s: &str) -> Result<Vec<Object>, ClusterError> {
        self.tick()?;
        self.inner.list(a, k, n, s)
    }
}

/// What the instance left in a namespace: every labelled object with its data, the ClusterRole,
/// and the inventory ids (namespace names replaced by `NS`).
fn state(c: &dyn Cluster, ns: &str) -> Vec<String> {
    let mut out = Vec::new();
    for kind in ["ConfigMap", "Secret", "ServiceAccount"] {
        for o in c.list("v1", kind, ns, "app.kubernetes.io/name=t").unwrap() {
            if o["metadata"]["name"] == "timoni.t" {
                continue;
            }
            out.push(format!(
                "{kind}/{} owner={} data={}",
                o["metadata"]["name"].as_str().unwrap(),
                o["metadata"]["labels"]["instance.timoni.sh/name"],
                o["data"]
            ));
        }
    }
    let role = obj(
        "rbac.authorization.k8s.io/v1",
        "ClusterRole",
        "",
        &format!("{ns}-t-reader"),
    );
    out.push(format!("role exists={}", c.get(&role).unwrap().is_some()));
    if let Some(s) = c.get(&obj("v1", "Secret", ns, "timoni.t")).unwrap() {
        out.push(format!("pending={}", s["data"].get("pending").is_some()));
        let rec: Value = serde_json::from_str(&decode(&s, "instance")).unwrap();
        for e in rec["inventory"]["entries"].as_array().unwrap() {
            out.push(e["id"].as_str().unwrap().to_string());
        }
    }
    let mut out: Vec<String> = out.into_iter().map(|l| l.replace(ns, "NS")).collect();
    out.sort();
    out
}

/// Runs `steps` (value sets) in `ns`, the last one with a fault at call `fail_at`, then re-runs
/// the last one without faults. Returns whether the fault fired.
fn run_with_fault(c: &dyn Cluster, ns: &str, steps: &[&str], fail_at: usize, tmp: &Path) -> bool {
    let (last, first) = steps.split_last().unwrap();
    for s in first {
        apply_instance(c, &request(ns, s, tmp), &mut |_| {}).expect("setup apply");
    }
    let faulty = Faulty {
        inner: c,
        fail_at,
        calls: Cell::new(0),
    };
    let fired = apply_instance(&faulty, &request(ns, last, tmp), &mut |_| {}).is_err();
    apply_instance(c, &request(ns, last, tmp), &mut |_| {}).expect("re-run converges");
    fired
}

#[test]
fn a_run_failing_at_any_call_converges_when_run_again() {
    let Some(env) = envtest::Envtest::start() else {
        return;
    };
    let c = connect(&env);
    let tmp = tempfile::tempdir().unwrap();
    // Install, and an upgrade that drops two objects and changes data.
    let scenarios: [&[&str]; 2] = [&[""], &["", r#"extra: false, data: "two", imm: "b""#]];
    for (si, steps) in scenarios.iter().enumerate() {
        let reference = format!("ref{si}");
        run_with_fault(&c, &reference, steps, usize::MAX, tmp.path());
        let want = state(&c, &reference);
        let mut n = 1;
        loop {
            let ns = format!("f{si}-{n}");
            let fired = run_with_fault(&c, &ns, steps, n, tmp.path());
            assert_eq!(state(&c, &ns), want, "scenario {si}, fault at call {n}");
            if !fired {
                break;
            }
            n += 1;
        }
        assert!(
            n > 20,
            "the fault should have been injected at many calls, got {n}"
        );
        eprintln!(
            "scenario {si}: converged after a fault at each of {} calls",
            n - 1
        );
    }

    // Delete: a fault at any call, then a second delete, leaves only what delete must keep.
    let mut n = 1;
    loop {
        let ns = format!("d-{n}");
        apply_instance(&c, &request(&ns, "", tmp.path()), &mut |_| {}).expect("install");
        let del = DeleteRequest {
            name: "t".into(),
            namespace: ns.clone(),
            dry_run: false,
            wait: true,
            timeout: Duration::from_secs(20),
            poll: Duration::from_millis(50),
        };
        let faulty = Faulty {
            inner: &c,
            fail_at: n,
            calls: Cell::new(0),
        };
        let fired = delete_instance(&faulty, &del, &mut |_| {}).is_err();
        if fired {
            delete_instance(&c, &del, &mut |_| {}).expect("second delete");
        }
        assert_eq!(
            state(&c, &ns),
            [
                r#"ConfigMap/t-kept owner="t" data={"v":"kept"}"#.to_string(),
                "role exists=false".to_string()
            ],
            "delete with a fault at call {n}"
        );
        if !fired {
            break;
        }
        n += 1;
    }
    assert!(n > 10, "faults injected at only {n} calls of delete");
    eprintln!("delete: converged after a fault at each of {} calls", n - 1);
}

/// Marks a Deployment ready through its status subresource, as its controller would.
fn make_deployment_ready(kubeconfig: &Path, ns: &str, name: &str) {
    use k8s_openapi::api::apps::v1::Deployment;
    use kube::api::{Api, Patch, PatchParams};
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let kc = kube::config::Kubeconfig::read_from(kubeconfig).unwrap();
        let cfg = kube::Config::from_custom_kubeconfig(kc, &Default::default())
            .await
            .unwrap();
        let client = kube::Client::try_from(cfg).unwrap();
        let api: Api<Deployment> = Api::namespaced(client, ns);
        let status = json!({"status": {"observedGeneration": 1, "replicas": 1,
            "updatedReplicas": 1, "readyReplicas": 1, "availableReplicas": 1,
            "conditions": [{"type": "Available", "status": "True"}]}});
        api.patch_status(name, &PatchParams::default(), &Patch::Merge(&status))
            .await
            .unwrap();
    });
}

#[test]
fn the_starter_module_installs_and_waits_for_its_deployment() {
    let Some(env) = envtest::Envtest::start() else {
        return;
    };
    let c = connect(&env);
    let starter = Path::new(env!("CARGO_MANIFEST_DIR")).join("blueprints/starter");
    let mut req = ApplyRequest::new(BuildOptions::new(
        "demo",
        "apps",
        &starter.display().to_string(),
    ));
    req.timeout = Duration::from_secs(30);
    req.poll = Duration::from_millis(100);
    let kubeconfig = env.kubeconfig();
    // The readiness wait ends only once the status says the Deployment is available.
    let patcher = std::thread::spawn(move || {
        let c2 = KubeCluster::connect(&KubeOptions {
            kubeconfig: Some(kubeconfig.clone()),
            ..Default::default()
        })
        .unwrap();
        let d = obj("apps/v1", "Deployment", "apps", "demo");
        while c2.get(&d).unwrap().is_none() {
            std::thread::sleep(Duration::from_millis(100));
        }
        std::thread::sleep(Duration::from_millis(500));
        make_deployment_ready(&kubeconfig, "apps", "demo");
    });
    let mut waited = false;
    let report = apply_instance(&c, &req, &mut |e| {
        if matches!(e, timoni_core::cluster::apply::Event::Ready { .. }) {
            waited = true;
        }
    })
    .expect("apply of the starter");
    patcher.join().unwrap();
    assert!(waited);
    assert_eq!(report.kube_version, "1.20.2");
    let got: Vec<String> = report
        .changes
        .iter()
        .map(|c| format!("{} {}", c.object, c.action))
        .collect();
    assert_eq!(
        got,
        [
            "ServiceAccount/apps/demo created",
            "Service/apps/demo created",
            "Deployment/apps/demo created"
        ]
    );
    for r in [
        obj("v1", "ServiceAccount", "apps", "demo"),
        obj("v1", "Service", "apps", "demo"),
        obj("apps/v1", "Deployment", "apps", "demo"),
    ] {
        let o = c.get(&r).unwrap().unwrap();
        assert_eq!(
            o["metadata"]["labels"]["instance.timoni.sh/name"], "demo",
            "{r}"
        );
        assert_eq!(
            o["metadata"]["labels"]["instance.timoni.sh/namespace"], "apps",
            "{r}"
        );
    }
    let (_, st) = instance_status(&c, "demo", "apps").unwrap();
    assert!(st.iter().all(|o| o.status == Status::Current), "{st:?}");
    let rec: Value = serde_json::from_str(&decode(
        &secret_json_named(&c, "apps", "timoni.demo"),
        "instance",
    ))
    .unwrap();
    assert_eq!(
        rec["images"],
        json!(["docker.io/nginxinc/nginx-unprivileged:1-alpine"])
    );
    assert_eq!(rec["module"]["name"], "timoni.sh/blueprint");
}

fn secret_json_named(c: &dyn Cluster, ns: &str, name: &str) -> Object {
    c.get(&obj("v1", "Secret", ns, name)).unwrap().unwrap()
}

/// Sets `status.phase` of the Widget `name` in `ns` through the status subresource. A 404 (the
/// object not there yet, or its kind's status subresource not served yet, on an API server
/// that shares two cores with the other cluster tests) is retried for up to 30 seconds.
fn set_widget_phase(kubeconfig: &Path, ns: &str, name: &str, phase: &str) {
    use kube::api::{Api, ApiResource, DynamicObject, Patch, PatchParams};
    use kube::core::GroupVersionKind;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let kc = kube::config::Kubeconfig::read_from(kubeconfig).unwrap();
        let cfg = kube::Config::from_custom_kubeconfig(kc, &Default::default())
            .await
            .unwrap();
        let client = kube::Client::try_from(cfg).unwrap();
        let ar = ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk("example.com", "v1", "Widget"),
            "widgets",
        );
        let api: Api<DynamicObject> = Api::namespaced_with(client, ns, &ar);
        let status = json!({"status": {"phase": phase}});
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        loop {
            match api
                .patch_status(name, &PatchParams::default(), &Patch::Merge(&status))
                .await
            {
                Ok(_) => break,
                Err(kube::Error::Api(e))
                    if e.code == 404 && std::time::Instant::now() < deadline =>
                {
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
                Err(e) => panic!("setting the phase of Widget {ns}/{name}: {e}"),
            }
        }
    });
}

#[test]
fn custom_health_checks_of_the_module_decide_readiness() {
    let Some(env) = envtest::Envtest::start() else {
        return;
    };
    let c = connect(&env);
    let module = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/testdata/apply/widget");
    let req = |ns: &str| {
        let mut r = ApplyRequest::new(BuildOptions::new("w", ns, &module.display().to_string()));
        r.timeout = Duration::from_secs(30);
        r.poll = Duration::from_millis(100);
        r
    };
    for (ns, phase) in [("ready", "Ready"), ("broken", "Broken")] {
        let kubeconfig = env.kubeconfig();
        let ns2 = ns.to_string();
        let patcher = std::thread::spawn(move || {
            let c2 = KubeCluster::connect(&KubeOptions {
                kubeconfig: Some(kubeconfig.clone()),
                ..Default::default()
            })
            .unwrap();
            let w = obj("example.com/v1", "Widget", &ns2, "w");
            let deadline = std::time::Instant::now() + Duration::from_secs(30);
            while !matches!(c2.get(&w), Ok(Some(_))) && std::time::Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(100));
            }
            std::thread::sleep(Duration::from_millis(300));
            set_widget_phase(&kubeconfig, &ns2, "w", phase);
        });
        let result = apply_instance(&c, &req(ns), &mut |_| {});
        patcher.join().unwrap();
        match phase {
            "Ready" => {
                let report = result.expect("ready once the health check says current");
                let got: Vec<String> = report
                    .changes
                    .iter()
                    .map(|c| format!("{} {}", c.object, c.action))
                    .collect();
                let crd_action = if got[0].ends_with("created") {
                    "created"
                } else {
                    "unchanged"
                };
                assert_eq!(
                    got,
                    [
                        format!("CustomResourceDefinition/widgets.example.com {crd_action}"),
                        "Widget/ready/w created".to_string()
                    ]
                );
            }
            _ => {
                let err = result.unwrap_err().to_string();
                assert!(err.contains("Widget/broken/w status: Failed"), "{err}");
            }
        }
    }
}

/// Applies `data.v` of a ConfigMap as `kubectl apply` would: its own field manager and the
/// last-applied annotation.
fn kubectl_apply(kubeconfig: &Path, ns: &str, name: &str) {
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::{Api, Patch, PatchParams};
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let kc = kube::config::Kubeconfig::read_from(kubeconfig).unwrap();
        let cfg = kube::Config::from_custom_kubeconfig(kc, &Default::default())
            .await
            .unwrap();
        let client = kube::Client::try_from(cfg).unwrap();
        let api: Api<ConfigMap> = Api::namespaced(client, ns);
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "annotations": {
                "kubectl.kubernetes.io/last-applied-configuration": "{}"}},
            "data": {"v": "from kubectl"}});
        api.patch(
            name,
            &PatchParams::apply("kubectl").force(),
            &Patch::Apply(&cm),
        )
        .await
        .unwrap();
    });
}

#[test]
fn delete_keeps_the_inventory_when_the_wait_times_out() {
    let Some(env) = envtest::Envtest::start() else {
        return;
    };
    let c = connect(&env);
    let tmp = tempfile::tempdir().unwrap();
    let ns = "hold";
    apply(&c, &request(ns, "", tmp.path()));
    // A finalizer nobody removes keeps the ConfigMap terminating.
    let held = cm(ns, "t-main");
    c.merge_patch(
        &held,
        &json!({"metadata": {"finalizers": ["example.com/hold"]}}),
    )
    .unwrap();
    let del = DeleteRequest {
        name: "t".into(),
        namespace: ns.into(),
        dry_run: false,
        wait: true,
        timeout: Duration::from_secs(1),
        poll: Duration::from_millis(100),
    };
    let err = delete_instance(&c, &del, &mut |_| {})
        .unwrap_err()
        .to_string();
    assert!(err.contains("ConfigMap/hold/t-main"), "{err}");
    let s = secret_json(&c, ns);
    assert!(
        s["metadata"]["annotations"]["status.timoni.sh/deleting"].is_string(),
        "the inventory is kept and marked: {s}"
    );
    c.merge_patch(&held, &json!({"metadata": {"finalizers": null}}))
        .unwrap();
    delete_instance(&c, &del, &mut |_| {}).unwrap();
    assert!(
        c.get(&obj("v1", "Secret", ns, "timoni.t"))
            .unwrap()
            .is_none()
    );
    assert!(c.get(&held).unwrap().is_none());
}

/// Drift correction re-applies what was edited or deleted since the apply, and only that, and
/// waits for those: the other objects are reported unchanged, a present one-off object is left
/// alone, and the inventory Secret is not written.
#[test]
fn correct_drift_applies_only_what_drifted() {
    let Some(env) = envtest::Envtest::start() else {
        return;
    };
    let c = connect(&env);
    let tmp = tempfile::tempdir().unwrap();
    let ns = "drift";
    let req = request(ns, "", tmp.path());
    apply(&c, &req);
    let inventory = secret_json(&c, ns)["metadata"]["resourceVersion"].clone();
    c.merge_patch(&cm(ns, "t-main"), &json!({"data": {"v": "edited"}}))
        .unwrap();
    c.merge_patch(&cm(ns, "t-once"), &json!({"data": {"v": "edited"}}))
        .unwrap();
    assert!(c.delete(&cm(ns, "t-extra"), false).unwrap());

    let mut fix = req.clone();
    fix.dry_run = true;
    fix.correct_drift = true;
    // Only the re-applied objects are waited for, as an apply waits for its objects.
    let mut waited = 0;
    let mut ready = 0;
    let report = apply_instance(&c, &fix, &mut |e| match e {
        timoni_core::cluster::apply::Event::Waiting { count, .. } => waited += count,
        timoni_core::cluster::apply::Event::Ready { .. } => ready += 1,
        _ => {}
    })
    .expect("drift correction");
    assert_eq!(waited, 2, "the created and the configured object");
    assert!(ready >= 1);
    let changes: Vec<(String, Action)> = report
        .changes
        .into_iter()
        .map(|c| (c.object.to_string(), c.action))
        .collect();
    let drifted: Vec<&(String, Action)> = changes
        .iter()
        .filter(|(_, a)| *a != Action::Unchanged)
        .collect();
    assert_eq!(
        drifted,
        [
            &("ConfigMap/drift/t-extra".to_string(), Action::Created),
            &("ConfigMap/drift/t-main".to_string(), Action::Configured),
            &("ConfigMap/drift/t-once".to_string(), Action::Skipped),
        ],
        "{changes:?}"
    );
    assert_eq!(changes.len(), 8, "{changes:?}");
    assert_eq!(
        c.get(&cm(ns, "t-main")).unwrap().unwrap()["data"]["v"],
        "one"
    );
    assert!(c.get(&cm(ns, "t-extra")).unwrap().is_some());
    assert_eq!(
        c.get(&cm(ns, "t-once")).unwrap().unwrap()["data"]["v"],
        "edited",
        "one-off objects are applied only when absent"
    );
    assert_eq!(
        secret_json(&c, ns)["metadata"]["resourceVersion"],
        inventory,
        "the inventory was written"
    );

    // A second pass finds nothing left to correct.
    let again = apply(&c, &fix);
    assert!(
        again
            .iter()
            .all(|(_, a)| matches!(a, Action::Unchanged | Action::Skipped)),
        "{again:?}"
    );
}
