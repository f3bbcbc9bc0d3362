//! `timoni project …` end to end: `push` against Debian's docker-registry, and `bootstrap`,
//! `list`, `status`, `events`, `reconcile`, `suspend`, `resume` and `delete` against a real
//! kube-apiserver (envtest). Most tests write the Projects' status (on the `status`
//! subresource) and Events themselves with the admin kubeconfig, to show every shape of it;
//! `the_cli_drives_the_controller_process` runs the `timoni-controller` binary against the API
//! server and the registry and drives it with the CLI alone. Each test skips loudly when its
//! server is unavailable. Times, ages, digests, ports and temporary paths are redacted.

mod common;
#[path = "../../timoni-core/tests/common/envtest.rs"]
mod envtest;
#[path = "../../timoni-core/tests/support/registry.rs"]
mod registry;

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use timoni_core::cluster::kube::{KubeCluster, KubeOptions};
use timoni_core::cluster::{ApplyOptions, Cluster, ObjRef};

fn demo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/testdata/project/demo")
        .canonicalize()
        .unwrap()
}

struct Session {
    kubeconfig: String,
    dir: tempfile::TempDir,
}

impl Session {
    fn new(env: &envtest::Envtest) -> Session {
        Session {
            kubeconfig: env.kubeconfig().display().to_string(),
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn run(&self, args: &[&str]) -> String {
        self.run_with(args, &[])
    }

    /// [`Session::run`] with more variables (set last, so they win).
    fn run_with(&self, args: &[&str], extra: &[(&str, &str)]) -> String {
        let home = self.dir.path().display().to_string();
        let mut env = vec![
            ("KUBECONFIG", self.kubeconfig.as_str()),
            ("HOME", home.as_str()),
            ("TIMONI_POLL_INTERVAL", "100ms"),
            ("SOURCE_DATE_EPOCH", "1700000000"),
        ];
        env.extend_from_slice(extra);
        let out = common::run_timoni(
            self.dir.path(),
            args,
            None,
            &["KUBECONFIG", "DOCKER_CONFIG", "TIMONI_CACHE_DIR"],
            &env,
            None,
        );
        redact(&out)
            .replace(&demo().display().to_string(), "[DEMO]")
            .replace(&self.dir.path().display().to_string(), "[TMP]")
    }

    fn cluster(&self) -> KubeCluster {
        KubeCluster::connect(&KubeOptions {
            kubeconfig: Some(self.kubeconfig.clone().into()),
            ..Default::default()
        })
        .unwrap()
    }

    /// Merge-patches the `status` subresource of a Project (what the controller does).
    fn patch_status(&self, namespace: &str, name: &str, status: Value) {
        let kubeconfig = self.kubeconfig.clone();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let kc = kube::config::Kubeconfig::read_from(&kubeconfig).unwrap();
            let config = kube::Config::from_custom_kubeconfig(kc, &Default::default())
                .await
                .unwrap();
            let client = kube::Client::try_from(config).unwrap();
            let api: kube::Api<timoni_core::project::api::Project> =
                kube::Api::namespaced(client, namespace);
            api.patch_status(
                name,
                &kube::api::PatchParams::default(),
                &kube::api::Patch::Merge(json!({ "status": status })),
            )
            .await
            .unwrap();
        });
    }
}

/// Times, ages, ports and the registry's digests are not stable.
fn redact(s: &str) -> String {
    let time = regex::Regex::new(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z").unwrap();
    let age = regex::Regex::new(r"(?m)\t\d+s *$").unwrap();
    let port = regex::Regex::new(r"127\.0\.0\.1:\d+").unwrap();
    let s = time.replace_all(s, "[TIME]");
    let s = age.replace_all(&s, "\t[AGE]");
    port.replace_all(&s, "127.0.0.1:[PORT]").into_owned()
}

/// A controller image digest given on the command line: installed as is, nothing resolved.
const PINNED: &str = "sha256:4ad3c1f6d2a1c8bb2d3c0e0f1a5e6b7c8d9e0f1a2b3c4d5e6f708192a3b4c5d6";

fn obj(kind: &str, api_version: &str, namespace: &str, name: &str) -> ObjRef {
    ObjRef {
        api_version: api_version.into(),
        kind: kind.into(),
        namespace: namespace.into(),
        name: name.into(),
    }
}

fn get(c: &KubeCluster, r: &ObjRef) -> Value {
    c.get(r)
        .unwrap()
        .unwrap_or_else(|| panic!("{r} should exist"))
}

fn ago(secs: i64) -> String {
    let t = jiff::Timestamp::now() - jiff::SignedDuration::from_secs(secs);
    t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// Records an Event about a Project: `(type, reason, message)`, `secs_ago` seconds ago.
fn event(c: &KubeCluster, ns: &str, project: &str, n: u32, what: [&str; 3], secs_ago: i64) {
    let [type_, reason, msg] = what;
    let at = ago(secs_ago);
    let e = json!({
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"name": format!("{project}.{n}"), "namespace": ns},
        "involvedObject": {
            "apiVersion": "projects.timoni.sh/v1alpha1", "kind": "Project",
            "name": project, "namespace": ns,
        },
        "type": type_, "reason": reason, "message": msg,
        "firstTimestamp": at, "lastTimestamp": at, "count": 1,
        "source": {"component": "timoni-controller"},
    });
    c.apply(&e, ApplyOptions::default()).unwrap();
}

#[test]
fn bootstrap_installs_the_controller_and_subscribes_the_cluster() {
    let Some(env) = envtest::Envtest::start() else {
        return;
    };
    let s = Session::new(&env);
    let d = demo().display().to_string();
    let common = [
        "--repository",
        "oci://127.0.0.1:5000/projects/demo",
        "--tag",
        "staging",
        "-n",
        "apps",
        "--cluster-name",
        "k8s-staging-1",
        "--cluster-group",
        "staging",
        "--service-account",
        "demo-sa",
    ];
    let with = |extra: &[&str]| -> Vec<String> {
        let mut v = vec!["project".to_string(), "bootstrap".into(), d.clone()];
        v.extend(common.iter().map(|x| x.to_string()));
        v.extend(extra.iter().map(|x| x.to_string()));
        v
    };
    let run = |v: Vec<String>| s.run(&v.iter().map(String::as_str).collect::<Vec<_>>());
    let mut all = String::new();
    // No terminal and no --yes: nothing is installed.
    all.push_str(&run(with(&[])));
    let c = s.cluster();
    assert!(
        c.get(&obj("Namespace", "v1", "", "apps"))
            .unwrap()
            .is_none(),
        "a refused bootstrap must not create anything"
    );
    all.push('\n');
    all.push_str(&run(with(&[
        "--yes",
        "--wait=false",
        "--repository-creds",
        "bot:s3cret",
        "--controller-image",
        &format!("127.0.0.1:5000/timoni-controller:v9@{PINNED}"),
        "--interval",
        "2m",
    ])));
    // Installed now: a second run only re-applies the Project's objects.
    all.push('\n');
    all.push_str(&run(with(&[
        "--wait=false",
        "--repository-creds",
        "bot:s3cret",
    ])));
    insta::assert_snapshot!(all);

    let crd = get(
        &c,
        &obj(
            "CustomResourceDefinition",
            "apiextensions.k8s.io/v1",
            "",
            "projects.projects.timoni.sh",
        ),
    );
    assert_eq!(crd["spec"]["group"], "projects.timoni.sh");
    let dep = get(
        &c,
        &obj(
            "Deployment",
            "apps/v1",
            "timoni-system",
            "timoni-controller",
        ),
    );
    let container = &dep["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(
        container["image"],
        format!("127.0.0.1:5000/timoni-controller@{PINNED}"),
        "the Deployment names the image by digest"
    );
    assert_eq!(
        container["args"],
        json!(["--cache-dir=/tmp/cache", "--leader-elect"])
    );
    for (kind, api, ns, name) in [
        ("ServiceAccount", "v1", "timoni-system", "timoni-controller"),
        (
            "ClusterRole",
            "rbac.authorization.k8s.io/v1",
            "",
            "timoni-controller",
        ),
        (
            "ClusterRoleBinding",
            "rbac.authorization.k8s.io/v1",
            "",
            "timoni-controller",
        ),
        ("Namespace", "v1", "", "apps"),
    ] {
        get(&c, &obj(kind, api, ns, name));
    }
    let secret = get(&c, &obj("Secret", "v1", "apps", "demo-registry"));
    assert_eq!(secret["type"], "kubernetes.io/dockerconfigjson");
    let sa = get(&c, &obj("ServiceAccount", "v1", "apps", "demo-sa"));
    assert_eq!(sa["imagePullSecrets"], json!([{"name": "demo-registry"}]));
    let rb = get(
        &c,
        &obj(
            "RoleBinding",
            "rbac.authorization.k8s.io/v1",
            "apps",
            "demo-sa-admin",
        ),
    );
    assert_eq!(rb["roleRef"]["name"], "admin");
    let p = get(
        &c,
        &obj("Project", "projects.timoni.sh/v1alpha1", "apps", "demo"),
    );
    assert_eq!(
        p["metadata"]["annotations"]["runtime.timoni.sh/cluster"],
        "k8s-staging-1"
    );
    assert_eq!(
        p["metadata"]["annotations"]["runtime.timoni.sh/group"],
        "staging"
    );
    assert_eq!(
        p["spec"],
        json!({
            "serviceAccountName": "demo-sa",
            "source": {"repository": "oci://127.0.0.1:5000/projects/demo", "tag": "staging", "path": "project.cue"},
        }),
        "the second bootstrap without --interval drops it (server-side apply owns the field)"
    );
}

#[test]
fn list_status_events_reconcile_suspend_resume_and_delete() {
    let Some(env) = envtest::Envtest::start() else {
        return;
    };
    let s = Session::new(&env);
    let c = s.cluster();
    let d = demo().display().to_string();
    let mut all = String::new();
    // Before the CRD exists.
    all.push_str(&s.run(&["project", "list", "-A"]));
    let boot = s.run(&[
        "project",
        "bootstrap",
        &d,
        "--repository",
        "oci://127.0.0.1:5000/projects/demo",
        "-n",
        "apps",
        // Only the CRD: these commands talk to the API server, no controller answers them.
        "--install-controller=false",
    ]);
    assert!(boot.contains("exit: 0"), "{boot}");
    // A second Project in another namespace, created directly.
    c.apply(
        &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other"}}),
        ApplyOptions::default(),
    )
    .unwrap();
    c.apply(
        &json!({
            "apiVersion": "projects.timoni.sh/v1alpha1", "kind": "Project",
            "metadata": {"name": "infra", "namespace": "other",
                         "finalizers": ["projects.timoni.sh/finalizer"]},
            "spec": {"serviceAccountName": "infra", "source": {"repository": "oci://127.0.0.1:5000/projects/infra"}},
        }),
        ApplyOptions::default(),
    )
    .unwrap();
    s.patch_status(
        "apps",
        "demo",
        json!({
            "observedGeneration": 1,
            "lastAppliedDigest": "sha256:1111111111111111111111111111111111111111111111111111111111111111",
            "lastAttemptedDigest": "sha256:2222222222222222222222222222222222222222222222222222222222222222",
            "conditions": [
                {"type": "Ready", "status": "False", "reason": "ComponentFailed",
                 "message": "component app failed", "lastTransitionTime": "2024-05-01T10:00:00Z"},
                {"type": "Reconciling", "status": "False", "reason": "Done",
                 "message": "reconciled", "lastTransitionTime": "2024-05-01T10:00:00Z"},
            ],
            "components": [
                {"name": "infra", "phase": "Ready", "lastAppliedTime": "2024-05-01T09:59:00Z",
                 "startedAt": "2024-05-01T09:58:00Z",
                 "digest": "sha256:1111111111111111111111111111111111111111111111111111111111111111",
                 "instances": [{"name": "infra", "namespace": "demo",
                                "moduleUrl": "oci://127.0.0.1:5000/modules/infra", "moduleVersion": "1.2.0"}]},
                {"name": "app", "phase": "Failed", "startedAt": "2024-05-01T09:59:10Z",
                 "digest": "sha256:2222222222222222222222222222222222222222222222222222222222222222",
                 "error": "instance demo/app: timeout waiting for Deployment/demo/app"},
            ],
        }),
    );
    s.patch_status(
        "other",
        "infra",
        json!({
            "lastAppliedDigest": "sha256:3333333333333333333333333333333333333333333333333333333333333333",
            "conditions": [{"type": "Ready", "status": "True", "reason": "Succeeded",
                            "message": "applied 1 component(s)", "lastTransitionTime": "2024-05-01T10:00:00Z"}],
        }),
    );
    event(
        &c,
        "apps",
        "demo",
        1,
        [
            "Normal",
            "InstanceApplied",
            "instance demo/infra (1.2.0) applied in 2s\nConfigMap/demo/infra created",
        ],
        7200,
    );
    event(
        &c,
        "apps",
        "demo",
        3,
        ["Warning", "ReconcileFailed", "component app failed"],
        1800,
    );
    event(
        &c,
        "apps",
        "demo",
        2,
        ["Warning", "InstanceFailed", "instance demo/app: timeout"],
        3600,
    );
    event(
        &c,
        "other",
        "demo",
        1,
        ["Normal", "Other", "another namespace's demo"],
        60,
    );
    for args in [
        vec!["project", "list", "-A"],
        vec!["project", "list", "-n", "apps"],
        vec!["project", "ls", "-n", "empty"],
        vec!["project", "status", "demo", "-n", "apps"],
        vec!["project", "status", "infra", "-n", "other"],
        vec!["project", "events", "demo", "-n", "apps"],
        vec!["project", "events", "infra", "-n", "other"],
        vec!["project", "status", "nope", "-n", "apps"],
        vec!["project", "suspend", "demo", "-n", "apps"],
        vec!["project", "list", "-n", "apps"],
        vec![
            "project",
            "reconcile",
            "demo",
            "-n",
            "apps",
            "--wait",
            "--timeout",
            "5m",
        ],
        vec!["project", "resume", "demo", "-n", "apps"],
        vec!["project", "reconcile", "demo", "-n", "apps"],
        vec![
            "project",
            "reconcile",
            "demo",
            "-n",
            "apps",
            "--wait",
            "--timeout",
            "1s",
        ],
        vec!["project", "suspend", "nope", "-n", "apps"],
    ] {
        all.push('\n');
        all.push_str(&s.run(&args));
        if args[1] == "suspend" && args[2] == "demo" {
            let p = get(
                &c,
                &obj("Project", "projects.timoni.sh/v1alpha1", "apps", "demo"),
            );
            assert_eq!(p["spec"]["suspend"], true);
        }
    }
    let p = get(
        &c,
        &obj("Project", "projects.timoni.sh/v1alpha1", "apps", "demo"),
    );
    assert_ne!(p["spec"]["suspend"], true, "resumed");
    let requested = p["metadata"]["annotations"]["reconcile.timoni.sh/requestedAt"]
        .as_str()
        .expect("reconcile sets the annotation");
    let at: jiff::Timestamp = requested.parse().expect("RFC 3339");
    let since = jiff::Timestamp::now().duration_since(at).as_secs();
    assert!(since.abs() < 120, "{requested}");

    // The finalizer of `infra` holds its deletion, as the controller's would while it uninstalls.
    let infra = obj("Project", "projects.timoni.sh/v1alpha1", "other", "infra");
    for args in [
        vec!["project", "delete", "infra", "-n", "other", "--orphan"],
        vec![
            "project",
            "delete",
            "infra",
            "-n",
            "other",
            "--wait",
            "--timeout",
            "1s",
        ],
    ] {
        all.push('\n');
        all.push_str(&s.run(&args));
    }
    let p = get(&c, &infra);
    assert_eq!(
        p["metadata"]["annotations"]["projects.timoni.sh/orphan"],
        "true"
    );
    assert!(p["metadata"]["deletionTimestamp"].is_string(), "{p}");
    c.merge_patch(&infra, &json!({"metadata": {"finalizers": null}}))
        .unwrap();
    for args in [
        vec!["project", "delete", "demo", "-n", "apps", "--wait"],
        vec!["project", "delete", "demo", "-n", "apps"],
        vec!["project", "list", "-A"],
    ] {
        all.push('\n');
        all.push_str(&s.run(&args));
    }
    insta::assert_snapshot!(all);
}

#[test]
fn push_checks_the_project_and_pushes_its_directory() {
    let Some(reg) = registry::start(None) else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        let out = common::run_timoni(
            home.path(),
            args,
            None,
            &["DOCKER_CONFIG", "TIMONI_CACHE_DIR"],
            &[
                ("HOME", home.path().to_str().unwrap()),
                ("SOURCE_DATE_EPOCH", "1700000000"),
            ],
            None,
        );
        // The manifest records the git commit of the checkout (`org.opencontainers.image.revision`)
        // and the remote, so digests change with every commit.
        let digest = regex::Regex::new("sha256:[0-9a-f]{64}").unwrap();
        let out = redact(&out).replace(&demo().display().to_string(), "[DEMO]");
        digest.replace_all(&out, "sha256:[DIGEST]").into_owned()
    };
    let d = demo().display().to_string();
    let url = reg.url("projects/demo");
    let mut all = String::new();
    for args in [
        vec![
            "project",
            "push",
            &d,
            "--repository",
            &url,
            "--tag",
            "v1",
            "--tag",
            "staging",
            "-a",
            "org.opencontainers.image.revision=abc",
        ],
        vec![
            "project",
            "push",
            &d,
            "--repository",
            &url,
            "--tag",
            "v1",
            "-o",
            "json",
        ],
        vec![
            "project",
            "push",
            &d,
            "--repository",
            &url,
            "--tag",
            "v1",
            "--file",
            "infra.cue",
        ],
        vec![
            "project",
            "push",
            &d,
            "--repository",
            &url,
            "--tag",
            "v1",
            "--file",
            "missing.cue",
        ],
        vec![
            "project",
            "push",
            &d,
            "--repository",
            "https://example/x",
            "--tag",
            "v1",
        ],
        vec!["artifact", "list", &url],
    ] {
        all.push_str(&run(&args));
        all.push('\n');
    }
    insta::assert_snapshot!(all);

    // What was pushed is the directory minus timoni.ignore's patterns, under a project layer.
    let out = home.path().join("pulled");
    let pulled = run(&[
        "artifact",
        "pull",
        &format!("{url}:staging"),
        "-o",
        out.to_str().unwrap(),
        "--content-type",
        "project",
    ]);
    assert!(pulled.contains("exit: 0"), "{pulled}");
    let mut files: Vec<String> = walk(&out);
    files.sort();
    assert_eq!(
        files,
        [
            "app/bundle.cue",
            "infra.cue",
            "project.cue",
            "timoni.ignore"
        ]
    );
    for f in &files {
        assert_eq!(
            std::fs::read(out.join(f)).unwrap(),
            std::fs::read(demo().join(f)).unwrap(),
            "{f}"
        );
    }
}

fn walk(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p.strip_prefix(dir).unwrap().to_string_lossy().into_owned());
            }
        }
    }
    out
}

#[test]
fn bootstrap_pushes_the_artifact_with_the_repository_creds() {
    let Some(reg) = registry::start(Some(("bot", "s3cret"))) else {
        return;
    };
    let Some(env) = envtest::Envtest::start() else {
        return;
    };
    let s = Session::new(&env);
    let d = demo().display().to_string();
    let url = reg.url("projects/demo");
    let bootstrap = |extra: &[&str]| {
        let mut args = vec![
            "project",
            "bootstrap",
            &d,
            "--repository",
            &url,
            "--repository-creds",
            "bot:s3cret",
            "--tag",
            "production",
            "--push-artifact",
            "true",
            "-n",
            "prod",
            "--yes",
            "--wait=false",
        ];
        args.extend(extra);
        s.run(&args)
    };
    // A controller image named by a tag its registry does not resolve (here without the
    // credentials it wants) is refused before anything is pushed or installed.
    let image = format!("{}/timoni/controller:v1", reg.host());
    let refused = bootstrap(&["--controller-image", &image]);
    assert!(refused.contains("exit: 1"), "{refused}");
    assert!(
        refused.contains(
            "cannot resolve the controller image 127.0.0.1:[PORT]/timoni/controller:v1 to a digest: "
        ) && refused.contains(
            "give it by digest with --controller-image 127.0.0.1:[PORT]/timoni/controller@sha256:<digest>"
        ),
        "{refused}"
    );
    let c = s.cluster();
    assert!(
        c.get(&obj("Namespace", "v1", "", "prod"))
            .unwrap()
            .is_none(),
        "nothing is applied after a refusal"
    );
    let listed = s.run(&["artifact", "list", &url, "--creds", "bot:s3cret"]);
    assert!(
        !listed.contains("production"),
        "nothing is pushed: {listed}"
    );

    // The controller runs elsewhere: only the CRD is installed, with the Project's objects.
    let out = bootstrap(&["--install-controller=false"]);
    assert!(out.contains("exit: 0"), "{out}");
    assert!(
        out.contains("CustomResourceDefinition/projects.projects.timoni.sh established"),
        "{out}"
    );
    assert!(
        c.get(&obj(
            "Deployment",
            "apps/v1",
            "timoni-system",
            "timoni-controller"
        ))
        .unwrap()
        .is_none(),
        "the controller is not installed: {out}"
    );
    assert!(
        out.contains(
            "pushed project demo to oci://127.0.0.1:[PORT]/projects/demo:production@sha256:"
        ),
        "{out}"
    );
    // The tag is there, for whoever holds the credentials.
    let listed = s.run(&["artifact", "list", &url, "--creds", "bot:s3cret"]);
    assert!(listed.contains("\nproduction\tsha256:"), "{listed}");
    let denied = s.run(&["artifact", "list", &url]);
    assert!(denied.contains("exit: 1"), "{denied}");
    // The pull Secret holds the same credentials for the registry's host.
    let secret = get(&c, &obj("Secret", "v1", "prod", "demo-registry"));
    let config = secret["data"][".dockerconfigjson"].as_str().unwrap();
    let config =
        base64::Engine::decode(&base64::engine::general_purpose::STANDARD, config).unwrap();
    let config: Value = serde_json::from_slice(&config).unwrap();
    assert_eq!(config["auths"][reg.host()]["username"], "bot");
    assert_eq!(config["auths"][reg.host()]["password"], "s3cret");
}

/// Runs `timoni ARGS` on a pseudo-terminal (util-linux `script`) with `input` typed in; returns
/// the exit code and what the terminal showed, without colours. `None` (after a loud message)
/// without `script`.
fn on_terminal(s: &Session, args: &[&str], input: &str) -> Option<(i32, String)> {
    use std::io::Write;
    use std::process::{Command, Stdio};
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("SKIPPED: `script` (util-linux) is missing: the prompt test needs a terminal");
        return None;
    }
    let quoted: Vec<String> = std::iter::once(env!("CARGO_BIN_EXE_timoni"))
        .chain(args.iter().copied())
        .map(|a| format!("'{}'", a.replace('\'', r"'\''")))
        .collect();
    let mut child = Command::new("script")
        .args(["-qec", &quoted.join(" "), "/dev/null"])
        .env("KUBECONFIG", &s.kubeconfig)
        .env("HOME", s.dir.path())
        .env("TIMONI_POLL_INTERVAL", "100ms")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).replace('\r', "");
    // The log lines are coloured on a terminal; the assertions read their text.
    let colours = regex::Regex::new("\x1b\\[[0-9;]*m").unwrap();
    let text = colours.replace_all(&text, "").into_owned();
    Some((out.status.code().unwrap_or(-1), text))
}

#[test]
fn bootstrap_asks_before_installing_the_controller() {
    let Some(env) = envtest::Envtest::start() else {
        return;
    };
    let s = Session::new(&env);
    let d = demo().display().to_string();
    let image = format!("127.0.0.1:5000/timoni-controller@{PINNED}");
    let args = [
        "project",
        "bootstrap",
        &d,
        "--repository",
        "oci://127.0.0.1:5000/projects/demo",
        "-n",
        "apps",
        "--wait=false",
        "--controller-image",
        &image,
    ];
    let Some((code, shown)) = on_terminal(&s, &args, "n\n") else {
        return;
    };
    assert_eq!(code, 1, "{shown}");
    assert!(
        shown.contains("install the Timoni controller in timoni-system? [y/N]"),
        "{shown}"
    );
    assert!(
        shown.contains("aborted: the Timoni controller is needed"),
        "{shown}"
    );
    let c = s.cluster();
    assert!(
        c.get(&obj("Namespace", "v1", "", "timoni-system"))
            .unwrap()
            .is_none()
    );

    let (code, shown) = on_terminal(&s, &args, "y\n").unwrap();
    assert_eq!(code, 0, "{shown}");
    assert!(
        shown.contains("Deployment/timoni-system/timoni-controller created"),
        "{shown}"
    );
    get(
        &c,
        &obj("Project", "projects.timoni.sh/v1alpha1", "apps", "demo"),
    );
}

/// A `timoni-controller` process against the test's API server (JSON logs in a file, shown
/// when the test fails); killed on drop.
struct Controller {
    child: std::process::Child,
    log: PathBuf,
}

impl Controller {
    fn start(bin: &Path, kubeconfig: &str, dir: &Path) -> Controller {
        let log = dir.join("controller.log");
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = std::process::Command::new(bin)
            .args(["--kubeconfig", kubeconfig])
            .args(["--metrics-addr", &format!("127.0.0.1:{port}")])
            .arg("--cache-dir")
            .arg(dir.join("controller-cache"))
            .env("RUST_LOG", "info,kube=warn")
            .stdout(std::process::Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .expect("the timoni-controller binary starts");
        Controller { child, log }
    }
}

impl Drop for Controller {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if std::thread::panicking() {
            let logs = std::fs::read_to_string(&self.log).unwrap_or_default();
            eprintln!("--- controller logs\n{logs}");
        }
    }
}

/// A Project `live` of one component `web`: the controller tests' `cm` module (one ConfigMap)
/// as instance `team/web`, with `version`.
fn live_project(dir: &Path, version: &str) {
    let module = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../timoni-controller/tests/testdata/modules/cm");
    std::fs::create_dir_all(dir.join("modules/cm/cue.mod")).unwrap();
    std::fs::create_dir_all(dir.join("bundles")).unwrap();
    for f in ["timoni.cue", "values.cue", "cue.mod/module.cue"] {
        std::fs::copy(module.join(f), dir.join("modules/cm").join(f)).unwrap();
    }
    std::fs::write(
        dir.join("project.cue"),
        "project: {\n\tapiVersion: \"v1alpha1\"\n\tname: \"live\"\n\tcomponents: web: bundle: [\"bundles/web.cue\"]\n}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("bundles/web.cue"),
        format!(
            "bundle: {{\n\tapiVersion: \"v1alpha1\"\n\tname: \"web\"\n\tinstances: web: {{\n\t\tmodule: url: \"file://../modules/cm\"\n\t\tnamespace: \"team\"\n\t\tvalues: version: \"{version}\"\n\t}}\n}}\n"
        ),
    )
    .unwrap();
}

#[test]
fn the_cli_drives_the_controller_process() {
    let Some(bin) = common::controller_binary() else {
        return;
    };
    let Some(reg) = registry::start(None) else {
        return;
    };
    let Some(env) = envtest::Envtest::start() else {
        return;
    };
    let s = Session::new(&env);
    let c = s.cluster();
    let project = s.dir.path().join("live");
    live_project(&project, "v1");
    let dir = project.display().to_string();
    let repo = reg.url("team/live");
    let digest = regex::Regex::new(r"sha256:[0-9a-f]{64}").unwrap();
    // Table cells are padded to the widest cell, here times with a varying number of digits.
    let padding = regex::Regex::new(r" +\t| +\n").unwrap();
    let run = |args: &[&str]| {
        // `reconcile --wait` watches the Project: with an hour between polls it still returns
        // as soon as the controller has handled the request (a poll would hit the timeout).
        let slow_polls: &[(&str, &str)] = match args.get(1) {
            Some(&"reconcile") => &[("TIMONI_POLL_INTERVAL", "1h")],
            _ => &[],
        };
        let out = s.run_with(args, slow_polls);
        let out = digest.replace_all(&out, "[DIGEST]");
        padding
            .replace_all(&out, |c: &regex::Captures| {
                c[0].trim_start_matches(' ').to_string()
            })
            .into_owned()
    };
    let mut all = String::new();
    let boot = run(&[
        "project",
        "bootstrap",
        &dir,
        "--repository",
        &repo,
        "--push-artifact",
        "-n",
        "team",
        "--interval",
        "1h",
        // envtest runs no controller-manager, so the aggregated `admin` ClusterRole is empty.
        "--service-account-role",
        "cluster-admin",
        // The controller runs as a process below, not as a Deployment.
        "--install-controller=false",
    ]);
    assert!(boot.contains("exit: 0"), "{boot}");

    // The controller process (as the bootstrapped Deployment would run it) takes the Project
    // from there; the CLI only talks to the API server.
    let _controller = Controller::start(&bin, &s.kubeconfig, s.dir.path());
    let cm = obj("ConfigMap", "v1", "team", "web-main");
    for args in [
        vec![
            "project",
            "reconcile",
            "live",
            "-n",
            "team",
            "--wait",
            "--timeout",
            "2m",
        ],
        vec!["project", "status", "live", "-n", "team"],
    ] {
        all.push_str(&run(&args));
        all.push('\n');
    }
    assert_eq!(get(&c, &cm)["data"]["version"], "v1");
    let p = get(
        &c,
        &obj("Project", "projects.timoni.sh/v1alpha1", "team", "live"),
    );
    let web = &p["status"]["components"][0];
    let v1 = p["status"]["lastAppliedDigest"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(web["digest"], v1.as_str(), "{p}");
    assert!(web["startedAt"].is_string(), "{p}");
    let status = s.run(&["project", "status", "live", "-n", "team"]);
    let status = padding.replace_all(&status, |c: &regex::Captures| {
        c[0].trim_start_matches(' ').to_string()
    });
    let row = format!("\nweb\tReady\t[TIME]\t{v1}\tteam/web ");
    assert!(status.contains(&row), "{row:?} not in {status}");

    // Suspended, a new artifact is not applied, and waiting for a reconcile says why.
    live_project(&project, "v2");
    all.push_str(&run(&["project", "suspend", "live", "-n", "team"]));
    all.push('\n');
    let pushed = run(&[
        "project",
        "push",
        &dir,
        "--repository",
        &repo,
        "--tag",
        "latest",
    ]);
    assert!(pushed.contains("exit: 0"), "{pushed}");
    for args in [
        vec![
            "project",
            "reconcile",
            "live",
            "-n",
            "team",
            "--wait",
            "--timeout",
            "3s",
        ],
        vec!["project", "resume", "live", "-n", "team"],
        vec![
            "project",
            "reconcile",
            "live",
            "-n",
            "team",
            "--wait",
            "--timeout",
            "2m",
        ],
    ] {
        if args[1] == "resume" {
            assert_eq!(
                get(&c, &cm)["data"]["version"],
                "v1",
                "applied while suspended"
            );
        }
        all.push_str(&run(&args));
        all.push('\n');
    }
    assert_eq!(get(&c, &cm)["data"]["version"], "v2");

    // Deleting waits until the controller has uninstalled the instance and let the Project go;
    // its Events stay readable.
    all.push_str(&run(&[
        "project",
        "delete",
        "live",
        "-n",
        "team",
        "--wait",
        "--timeout",
        "2m",
    ]));
    assert!(c.get(&cm).unwrap().is_none(), "the instance is uninstalled");
    let events = s.run(&["project", "events", "live", "-n", "team"]);
    for reason in [
        "ComponentStarted",
        "InstanceApplied",
        "ReconciliationSucceeded",
        "InstanceDeleted",
    ] {
        assert!(events.contains(reason), "no {reason} in {events}");
    }
    insta::assert_snapshot!(all);
}
