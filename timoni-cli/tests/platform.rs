//! End-to-end tests of the platform module set in `examples/platform/` (workload, networking,
//! pubsub, pgbouncer): the real binary builds each module with its main value combinations from
//! `testdata/platform/*.yaml` (insta snapshots of the YAML), vets each module, shows that bad
//! values are one clear error, checks that the vendored CRD schemas are exactly what
//! `timoni mod vendor crd` makes of `examples/platform/crds/`, and runs the generate command of
//! the Argo CD plugin recipe on its bundle (again without network, in a new network namespace,
//! where `unshare -rn` works, for the same bytes).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

/// `examples/platform/`.
fn platform() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/platform")
}

/// The values files of the build tests.
fn values(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/testdata/platform")
        .join(name)
        .display()
        .to_string()
}

/// Runs `timoni ARGS` in `examples/platform/<dir>` (without TIMONI_KUBE_VERSION, so the default
/// Kubernetes version is used) and renders the command, exit code and output. The values-file
/// argument is written relative to the test directory so snapshots do not hold absolute paths.
fn run_in(dir: &str, args: &[&str]) -> String {
    let testdata = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/testdata/platform");
    let out = common::run_timoni(
        &platform().join(dir),
        args,
        None,
        &["TIMONI_KUBE_VERSION"],
        &[],
        Some(&platform()),
    );
    out.replace(&testdata.display().to_string(), "[VALUES]")
}

/// `timoni build NAME . -n NAMESPACE -f testdata/platform/VALUES` in the module `module`.
fn build(module: &str, name: &str, namespace: &str, values_file: &str) -> String {
    let file = values(values_file);
    let out = run_in(module, &["build", name, ".", "-n", namespace, "-f", &file]);
    assert!(out.contains("\nexit: 0\n"), "{out}");
    out
}

#[test]
fn workload_as_a_deployment_with_monitoring_and_references() {
    insta::assert_snapshot!(build(
        "workload",
        "foobar-api",
        "foobar",
        "workload-deployment.yaml"
    ));
}

#[test]
fn workload_as_a_canary_rollout_scaled_by_keda() {
    insta::assert_snapshot!(build(
        "workload",
        "foobar-api",
        "foobar",
        "workload-rollout-autoscaling.yaml"
    ));
}

#[test]
fn workload_grpc_deployment_scaled_on_cpu() {
    insta::assert_snapshot!(build(
        "workload",
        "foobar-grpc",
        "foobar",
        "workload-grpc-autoscaling.yaml"
    ));
}

#[test]
fn workload_defaults() {
    insta::assert_snapshot!(run_in("workload", &["build", "app", ".", "-n", "default"]));
}

#[test]
fn networking_routes_with_vpn_and_tls() {
    insta::assert_snapshot!(build(
        "networking",
        "test",
        "foobar",
        "networking-routes.yaml"
    ));
}

#[test]
fn networking_grpc_route() {
    insta::assert_snapshot!(build(
        "networking",
        "foobar-grpc",
        "foobar",
        "networking-grpc.yaml"
    ));
}

#[test]
fn pubsub_topics_and_subscriptions_with_a_prefix() {
    insta::assert_snapshot!(build(
        "pubsub",
        "foobar-pubsub",
        "foobar",
        "pubsub-seed.yaml"
    ));
}

#[test]
fn pubsub_default_delivery_without_prefix() {
    insta::assert_snapshot!(build("pubsub", "shop-pubsub", "shop", "pubsub-topics.yaml"));
}

#[test]
fn pgbouncer_with_its_pool_config() {
    insta::assert_snapshot!(build(
        "pgbouncer",
        "tokko-api-pgbouncer",
        "foobar",
        "pgbouncer-seed.yaml"
    ));
}

#[test]
fn pgbouncer_session_mode_on_another_port() {
    insta::assert_snapshot!(build(
        "pgbouncer",
        "reports-pgbouncer",
        "reports",
        "pgbouncer-session.yaml"
    ));
}

#[test]
fn every_module_vets() {
    let mut all = String::new();
    for module in ["workload", "networking", "pubsub", "pgbouncer"] {
        let out = run_in(module, &["mod", "vet", "."]);
        assert!(out.contains("\nexit: 0\n"), "{out}");
        all.push_str(&out);
        all.push('\n');
    }
    insta::assert_snapshot!(all);
}

#[test]
fn bad_values_are_one_clear_error() {
    let mut all = String::new();
    for (module, file) in [
        ("workload", "bad-workload.yaml"),
        ("networking", "bad-networking.yaml"),
        ("pubsub", "bad-pubsub.yaml"),
        ("pgbouncer", "bad-pgbouncer.yaml"),
    ] {
        let out = run_in(module, &["build", "bad", ".", "-f", &values(file)]);
        assert!(out.contains("\nexit: 1\n"), "{out}");
        all.push_str(&out);
        all.push('\n');
    }
    insta::assert_snapshot!(all);
}

/// Every `cue.mod/gen/<group>/...` of a module that is not Kubernetes' own must be exactly what
/// `timoni mod vendor crd -f crds/<file>` writes, so the CRDs in `crds/` are the schemas' source.
#[test]
fn vendored_crd_schemas_come_from_the_crds_directory() {
    let crds = platform().join("crds");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&crds)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    assert!(!files.is_empty());
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir(tmp.path().join("cue.mod")).unwrap();
    for file in &files {
        let out = Command::new(env!("CARGO_BIN_EXE_timoni"))
            .args(["mod", "vendor", "crd", "-f"])
            .arg(file)
            .arg(tmp.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
    }
    let fresh = tmp.path().join("cue.mod/gen");
    for module in ["workload", "networking", "pubsub", "pgbouncer"] {
        let gen_dir = platform().join(module).join("cue.mod/gen");
        let mut seen = 0;
        for entry in walk(&gen_dir) {
            let rel = entry.strip_prefix(&gen_dir).unwrap();
            if rel.starts_with("k8s.io") {
                continue;
            }
            seen += 1;
            let want = std::fs::read_to_string(fresh.join(rel))
                .unwrap_or_else(|e| panic!("{module}: {} is not generated: {e}", rel.display()));
            let have = std::fs::read_to_string(&entry).unwrap();
            // The header names the CRD file as it was given on the command line.
            let strip = |s: &str| s.lines().skip(3).collect::<Vec<_>>().join("\n");
            assert_eq!(
                strip(&have),
                strip(&want),
                "{module}: {} differs from `timoni mod vendor crd`; regenerate it",
                rel.display()
            );
        }
        if module != "pgbouncer" {
            assert!(seen > 0, "{module} vendors no CRD schema");
        }
    }
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out.sort();
    out
}

/// The Argo CD recipe: the plugin's generate command, read from `plugin.yaml`, is run as it is
/// in the bundle's directory (as Argo CD's cmp-server does), and prints every instance.
#[test]
fn argocd_plugin_generate_command_renders_the_bundle() {
    let recipe = platform().join("recipes/argocd");
    let plugin: serde_yaml_ng::Value =
        serde_yaml_ng::from_str(&std::fs::read_to_string(recipe.join("plugin.yaml")).unwrap())
            .unwrap();
    assert_eq!(plugin["kind"].as_str(), Some("ConfigManagementPlugin"));
    let command: Vec<&str> = plugin["spec"]["generate"]["command"]
        .as_sequence()
        .expect("spec.generate.command is a list")
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(command, ["timoni", "bundle", "build", "-f", "bundle.cue"]);
    assert_eq!(
        plugin["spec"]["discover"]["fileName"].as_str(),
        Some("bundle.cue")
    );
    let out = common::run_timoni(
        &recipe.join("foobar"),
        &command[1..],
        None,
        &["TIMONI_KUBE_VERSION"],
        &[],
        Some(&platform()),
    );
    assert!(out.contains("\nexit: 0\n"), "{out}");
    insta::assert_snapshot!(out);

    // Hermetic and deterministic: without any network (a new, empty network namespace), the
    // same command prints the same bytes.
    let plain = Command::new(env!("CARGO_BIN_EXE_timoni"))
        .args(&command[1..])
        .current_dir(recipe.join("foobar"))
        .output()
        .unwrap();
    let offline = Command::new("unshare")
        .arg("-rn")
        .arg(env!("CARGO_BIN_EXE_timoni"))
        .args(&command[1..])
        .current_dir(recipe.join("foobar"))
        .output();
    match offline {
        Ok(o) if o.status.success() => assert_eq!(
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&plain.stdout)
        ),
        Ok(o) if String::from_utf8_lossy(&o.stderr).starts_with("unshare:") => eprintln!(
            "note: `unshare -rn` cannot make a network namespace here ({}): the offline run is \
             skipped",
            String::from_utf8_lossy(&o.stderr).trim()
        ),
        Ok(o) => panic!(
            "the generate command failed without network: {}",
            String::from_utf8_lossy(&o.stderr)
        ),
        Err(e) => eprintln!("note: no `unshare` ({e}): the offline run is skipped"),
    }
}
