//! `timoni apply`, `list`, `status`, `inspect` and `delete` end to end against a real
//! kube-apiserver (envtest; skipped loudly when it is unavailable, see
//! `timoni-core/tests/common/envtest.rs`). Times, the module path and ports are redacted.

mod common;
#[path = "../../timoni-core/tests/common/envtest.rs"]
mod envtest;

use std::path::{Path, PathBuf};

fn module() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../timoni-core/tests/testdata/apply/app")
        .canonicalize()
        .unwrap()
}

fn starter() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../timoni-core/blueprints/starter")
        .canonicalize()
        .unwrap()
}

struct Session {
    kubeconfig: String,
    dir: tempfile::TempDir,
}

impl Session {
    fn run(&self, args: &[&str]) -> String {
        let out = common::run_timoni(
            self.dir.path(),
            args,
            None,
            &["KUBECONFIG"],
            &[
                ("KUBECONFIG", self.kubeconfig.as_str()),
                ("TIMONI_POLL_INTERVAL", "100ms"),
            ],
            None,
        );
        let time = regex::Regex::new(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ").unwrap();
        let out = time.replace_all(&out, "[TIME]").into_owned();
        // Table cells are padded to the widest cell, here a path of the checkout: the padding
        // before each tab is left out so that the snapshot does not depend on where the
        // repository is (the alignment itself is tested in `output.rs`).
        let padding = regex::Regex::new(r" +\t").unwrap();
        let out = padding.replace_all(&out, "\t").into_owned();
        out.replace(&module().display().to_string(), "[MODULE]")
            .replace(&starter().display().to_string(), "[STARTER]")
            .replace(&self.dir.path().display().to_string(), "[TMP]")
    }
}

#[test]
fn apply_list_status_inspect_and_delete() {
    let Some(env) = envtest::Envtest::start() else {
        return;
    };
    let s = Session {
        kubeconfig: env.kubeconfig().display().to_string(),
        dir: tempfile::tempdir().unwrap(),
    };
    std::fs::write(
        s.dir.path().join("v2.cue"),
        "values: {extra: false, data: \"two\", secret: \"changed-pass\"}\n",
    )
    .unwrap();
    let m = module().display().to_string();
    let mut all = String::new();
    for args in [
        vec!["apply", "t", &m, "-n", "cli"],
        vec![
            "apply",
            "t",
            &m,
            "-n",
            "cli",
            "-f",
            "v2.cue",
            "--dry-run",
            "--diff",
        ],
        vec!["list", "-A"],
        vec!["list", "-n", "cli"],
        vec!["status", "t", "-n", "cli"],
        vec!["inspect", "module", "t", "-n", "cli"],
        vec!["inspect", "values", "t", "-n", "cli"],
        vec!["inspect", "resources", "t", "-n", "cli"],
        vec!["apply", "t", &m, "-n", "cli", "-f", "v2.cue"],
        vec!["inspect", "values", "t", "-n", "cli"],
        vec!["list", "-n", "cli", "--kube-as", "nobody"],
        vec!["delete", "t", "-n", "cli"],
        vec!["status", "t", "-n", "cli"],
    ] {
        all.push_str(&s.run(&args));
        all.push('\n');
    }
    insta::assert_snapshot!(all);
}

#[test]
fn the_starter_module_installs_and_waits_until_the_timeout() {
    let Some(env) = envtest::Envtest::start() else {
        return;
    };
    let s = Session {
        kubeconfig: env.kubeconfig().display().to_string(),
        dir: tempfile::tempdir().unwrap(),
    };
    let st = starter().display().to_string();
    let mut all = String::new();
    // No controllers run, so the Deployment never becomes ready: the wait times out.
    for args in [
        vec!["apply", "demo", &st, "-n", "apps", "--timeout", "1s"],
        vec!["status", "demo", "-n", "apps"],
        vec!["apply", "demo", &st, "-n", "apps", "--wait=false"],
        vec!["inspect", "resources", "demo", "-n", "apps"],
        vec!["inspect", "values", "demo", "-n", "apps"],
    ] {
        all.push_str(&s.run(&args));
        all.push('\n');
    }
    insta::assert_snapshot!(all);
}

#[test]
fn bundle_apply_status_and_delete_across_two_clusters() {
    let mut envs = Vec::new();
    for _ in 0..2 {
        match envtest::Envtest::start() {
            Some(e) => envs.push(e),
            None => return,
        }
    }
    let dir = tempfile::tempdir().unwrap();
    // One kubeconfig file per cluster with distinct names (c1, c2), joined by KUBECONFIG.
    let mut paths = Vec::new();
    for (i, e) in envs.iter().enumerate() {
        let text = std::fs::read_to_string(e.kubeconfig()).unwrap();
        let p = dir.path().join(format!("c{}.yaml", i + 1));
        std::fs::write(&p, text.replace("envtest", &format!("c{}", i + 1))).unwrap();
        paths.push(p.display().to_string());
    }
    let m = module().display().to_string();
    std::fs::write(
        dir.path().join("bundle.cue"),
        format!(
            "bundle: {{\n\tapiVersion: \"v1alpha1\"\n\tname: \"apps\"\n\tinstances: {{\n\
             \t\tweb: {{\n\t\t\tmodule: url: \"file://{m}\"\n\t\t\tnamespace: \"web\"\n\
             \t\t\tvalues: {{extra: false, data: string @timoni(runtime:string:TIMONI_CLUSTER_NAME), once: string @timoni(runtime:string:REGION)}}\n\
             \t\t}}\n\t}}\n}}\n"
        ),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("runtime.cue"),
        "runtime: {\n\tapiVersion: \"v1alpha1\"\n\tname: \"fleet\"\n\tclusters: {\n\
         \t\tstaging: {group: \"staging\", kubeContext: \"c1\"}\n\
         \t\tproduction: {group: \"production\", kubeContext: \"c2\"}\n\t}\n\
         \tvalues: [{query: \"k8s:v1:Secret:infra:cluster-info\", for: {REGION: \"obj.data.region\"}},\n\
         \t\t{query: \"k8s:v1:ConfigMap:infra:absent\", optional: true, for: {X: \"obj.data.x\"}}]\n}\n",
    )
    .unwrap();
    // Each cluster holds the Secret the runtime reads its region from.
    for (i, e) in envs.iter().enumerate() {
        use timoni_core::cluster::Cluster;
        let c = timoni_core::cluster::kube::KubeCluster::connect(
            &timoni_core::cluster::kube::KubeOptions {
                kubeconfig: Some(e.kubeconfig()),
                ..Default::default()
            },
        )
        .unwrap();
        let ns = serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "infra"}});
        c.apply(&ns, Default::default()).unwrap();
        let region = ["eu-west", "us-east"][i];
        let secret = serde_json::json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "cluster-info", "namespace": "infra"},
            "data": {"region": base64_of(region)}});
        c.apply(&secret, Default::default()).unwrap();
    }
    let s = Session {
        kubeconfig: paths.join(":"),
        dir,
    };
    let mut all = String::new();
    for args in [
        vec!["runtime", "build", "-f", "runtime.cue"],
        // bundle vet and build read the runtime's queries from the selected clusters.
        vec![
            "bundle",
            "vet",
            "-f",
            "bundle.cue",
            "-r",
            "runtime.cue",
            "--print-value",
        ],
        vec![
            "bundle",
            "build",
            "-f",
            "bundle.cue",
            "-r",
            "runtime.cue",
            "--runtime-cluster",
            "production",
        ],
        vec![
            "bundle",
            "apply",
            "-f",
            "bundle.cue",
            "-r",
            "runtime.cue",
            "--runtime-group",
            "staging",
        ],
        vec![
            "inspect",
            "values",
            "web",
            "-n",
            "web",
            "--kube-context",
            "c1",
        ],
        vec!["list", "-A", "--kube-context", "c1"],
        vec!["list", "-A", "--kube-context", "c2"],
        vec![
            "bundle",
            "apply",
            "-f",
            "bundle.cue",
            "-r",
            "runtime.cue",
            "--dry-run",
        ],
        vec!["bundle", "status", "apps", "-r", "runtime.cue"],
        vec!["bundle", "delete", "-f", "bundle.cue", "-r", "runtime.cue"],
        vec!["list", "-A", "--bundle", "apps"],
    ] {
        all.push_str(&s.run(&args));
        all.push('\n');
    }
    insta::assert_snapshot!(all);
}

/// Standard base64 (the test writes Secret data by hand).
fn base64_of(s: &str) -> String {
    const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let b = s.as_bytes();
    let mut out = String::new();
    for chunk in b.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, &c)| acc | (u32::from(c) << (16 - 8 * i)));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(A[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Runs `timoni ARGS` in `dir` on a pseudo-terminal (util-linux `script`), with escape
/// sequences written visibly (`\e[36m`) and log times redacted.
fn on_terminal(dir: &Path, kubeconfig: &str, args: &[&str]) -> Option<String> {
    if std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_err()
    {
        common::skip("SCRIPT", "util-linux `script` is not installed");
        return None;
    }
    let mut line = vec![env!("CARGO_BIN_EXE_timoni").to_string()];
    line.extend(args.iter().map(|a| a.to_string()));
    let out = std::process::Command::new("script")
        .args(["-qec", &line.join(" "), "/dev/null"])
        .current_dir(dir)
        .env_remove("NO_COLOR")
        .env("TERM", "xterm")
        .env("KUBECONFIG", kubeconfig)
        .env("TIMONI_POLL_INTERVAL", "100ms")
        .output()
        .expect("run script");
    let text = String::from_utf8_lossy(&out.stdout).replace("\r\n", "\n");
    let time = regex::Regex::new(r"\x1b\[90m\d{1,2}:\d\d[AP]M").unwrap();
    let text = time.replace_all(&text, "\x1b[90m[HH:MM]");
    let elapsed = regex::Regex::new(r"in (\x1b\[[0-9;]*m)?(\d+[hms])+").unwrap();
    let text = elapsed.replace_all(&text, "in ${1}[ELAPSED]");
    Some(format!(
        "$ timoni {}\nexit: {}\n--- terminal\n{}",
        args.join(" "),
        out.status.code().unwrap_or(-1),
        text.replace('\x1b', "\\e")
            .replace(&module().display().to_string(), "[MODULE]")
    ))
}

/// `bundle apply` logs what Timoni's `bundle_apply.go` logs for each instance: `applying
/// module NAME version V`, then `installing` or `upgrading`, the changes and the wait; on a dry
/// run each instance ends with `applied successfully (server dry run)`; the bundle with
/// `applied successfully in Ns`. Piped, and on a terminal (colours, no spinner left behind).
#[test]
fn bundle_apply_logs_each_instance_as_timoni() {
    let Some(env) = envtest::Envtest::start() else {
        return;
    };
    let s = Session {
        kubeconfig: env.kubeconfig().display().to_string(),
        dir: tempfile::tempdir().unwrap(),
    };
    let m = module().display().to_string();
    std::fs::write(
        s.dir.path().join("bundle.cue"),
        format!(
            "bundle: {{\n\tapiVersion: \"v1alpha1\"\n\tname: \"apps\"\n\tinstances: {{\n\
             \t\tfront: {{module: url: \"file://{m}\", namespace: \"front\", values: extra: false}}\n\
             \t\tback: {{module: url: \"file://{m}\", namespace: \"back\", values: extra: false}}\n\
             \t}}\n}}\n"
        ),
    )
    .unwrap();
    let mut all = String::new();
    for args in [
        vec!["bundle", "apply", "-f", "bundle.cue", "--dry-run"],
        vec!["bundle", "apply", "-f", "bundle.cue"],
    ] {
        all.push_str(&s.run(&args));
        all.push('\n');
    }
    insta::assert_snapshot!("bundle_apply_piped", all);
    let Some(term) = on_terminal(
        s.dir.path(),
        &s.kubeconfig,
        &["bundle", "apply", "-f", "bundle.cue", "--wait=false"],
    ) else {
        return;
    };
    insta::assert_snapshot!("bundle_apply_on_a_terminal", term);
}
