//! The kustomize recipe of `examples/platform/recipes/kustomize/`: a base whose generators run
//! `timoni fn` as an exec KRM function, and `staging`/`production` overlays. Each overlay is
//! rendered with `kustomize build --enable-alpha-plugins --enable-exec` (or a `kubectl kustomize`
//! that has `--enable-exec`) with the built `timoni` first on `PATH`, inside a new network
//! namespace when `unshare -rn` works (so no socket can reach out), and snapshotted.
//!
//! The test skips loudly when no such kustomize is installed (Debian 12 has no `kustomize`
//! package, and `kubectl kustomize` up to 1.33 has no `--enable-exec`), or when the built binary
//! has no `fn` subcommand yet.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The kustomize command (program and leading arguments) that runs exec KRM functions.
fn kustomize() -> Option<Vec<String>> {
    let candidates: [&[&str]; 2] = [&["kustomize", "build"], &["kubectl", "kustomize"]];
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

/// Whether the built binary has the `fn` subcommand.
fn has_fn() -> bool {
    Command::new(env!("CARGO_BIN_EXE_timoni"))
        .args(["fn", "--help"])
        .stdin(Stdio::null())
        .output()
        .is_ok_and(|o| o.status.success())
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
        eprintln!(
            "SKIPPED kustomize recipe test: no `kustomize` with `build --enable-exec` and no \
             `kubectl kustomize --enable-exec` on PATH (Debian 12 has no kustomize package; \
             kubectl's embedded kustomize has no --enable-exec)"
        );
        return;
    };
    if !has_fn() {
        eprintln!(
            "SKIPPED kustomize recipe test: the built timoni has no `fn` subcommand yet \
             (`timoni fn --help` failed)"
        );
        return;
    }
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_timoni")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let unshare = can_unshare();
    if !unshare {
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
