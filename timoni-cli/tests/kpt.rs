//! The kpt recipe of `examples/platform/recipes/kpt/`: a package whose pipeline runs `timoni fn`
//! as an exec function for two Timoni instances. `kpt fn render . --allow-exec -o stdout` runs in
//! the package with the built `timoni` first on `PATH`, inside a new network namespace when
//! `unshare -rn` works, and must print the package's items (kept) and the instances' objects.
//!
//! kpt is not a Debian package; it comes with the Google Cloud CLI (`google-cloud-cli-kpt`). The
//! test skips loudly when `kpt` is missing, unless `TIMONI_REQUIRE_KPT=1` (set by `.ci/run`
//! when kpt is there).

mod common;

use std::path::Path;
use std::process::{Command, Stdio};

fn found(program: &str, args: &[&str]) -> bool {
    Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn the_package_pipeline_runs_timoni_fn() {
    if !found("kpt", &["version"]) {
        common::skip("KPT", "no `kpt` on PATH for the kpt recipe test");
        return;
    }
    let package = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/platform/recipes/kpt");
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_timoni")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let render = ["fn", "render", ".", "--allow-exec", "-o", "stdout"];
    let mut cmd = if found("unshare", &["-rn", "true"]) {
        let mut c = Command::new("unshare");
        c.args(["-rn", "kpt"]).args(render);
        c
    } else {
        eprintln!("note: `unshare -rn` is not available: kpt renders with the network");
        let mut c = Command::new("kpt");
        c.args(render);
        c
    };
    let out = cmd
        .current_dir(&package)
        .env("PATH", &path)
        .stdin(Stdio::null())
        .output()
        .expect("run kpt");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    let list: serde_yaml_ng::Value = serde_yaml_ng::from_str(&stdout).unwrap();
    let mut kinds: Vec<&str> = list["items"]
        .as_sequence()
        .expect("items")
        .iter()
        .filter_map(|i| i["kind"].as_str())
        .collect();
    kinds.sort();
    assert_eq!(
        kinds,
        [
            "Certificate",
            "Deployment",
            "IngressRoute",
            "Instance",
            "Instance",
            "Kptfile",
            "Middleware",
            "Service"
        ],
        "{stdout}"
    );
}
