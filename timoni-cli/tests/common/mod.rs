//! The harness the CLI snapshot tests share: run the real `timoni` binary in a directory, with
//! optional stdin and environment, and render the command, exit code and output as one text;
//! find the shared conformance corpus; and skip a test that lacks a component only while the
//! component's `TIMONI_REQUIRE_*` variable is unset (`.ci/run` sets each one it can satisfy).

#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Runs `timoni ARGS` in `dir` (without the variables in `unset`, with those in `env`) and renders
/// `$ timoni ARGS`, the exit code, stdout and stderr, with `root` in stderr written `[TESTDATA]`
/// and the times of log lines redacted.
pub fn run_timoni(
    dir: &Path,
    args: &[&str],
    stdin: Option<&str>,
    unset: &[&str],
    env: &[(&str, &str)],
    root: Option<&Path>,
) -> String {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_timoni"));
    cmd.args(args)
        .current_dir(dir)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for k in unset {
        cmd.env_remove(k);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("run timoni");
    if let Some(text) = stdin {
        child
            .stdin
            .take()
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
    }
    let out = child.wait_with_output().unwrap();
    let mut stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    if let Some(root) = root {
        stderr = stderr.replace(&root.display().to_string(), "[TESTDATA]");
    }
    let stderr = redact_log_times(&stderr);
    format!(
        "$ timoni {}\nexit: {}\n--- stdout\n{}\n--- stderr\n{}",
        args.join(" "),
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout),
        stderr,
    )
}

/// The stdout of `cmd`, which must succeed (else the test fails with its stderr).
pub fn stdout_of(cmd: &mut Command) -> String {
    let out = cmd.output().expect("run the command");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("stdout is UTF-8")
}

/// Log lines with the clock time of their run (`10:32AM INF ...`) written `[HH:MM] INF ...`, and
/// the time `bundle apply` took (`applied successfully in 3s`) written `[ELAPSED]`.
pub fn redact_log_times(text: &str) -> String {
    let time = regex::Regex::new(r"(?m)^\d{1,2}:\d\d[AP]M ").unwrap();
    let elapsed = regex::Regex::new(r"applied successfully in (\d+[hms])+").unwrap();
    let text = time.replace_all(text, "[HH:MM] ");
    elapsed
        .replace_all(&text, "applied successfully in [ELAPSED]")
        .into_owned()
}

/// Whether `TIMONI_REQUIRE_<component>=1`: a missing component is then a failure, not a skip.
pub fn required(component: &str) -> bool {
    std::env::var(format!("TIMONI_REQUIRE_{component}")).is_ok_and(|v| v == "1")
}

/// Reports that a test cannot run for want of `component` (`CORPUS`, `KPT`, `KUSTOMIZE`, ...):
/// a loud `SKIPPED` line, or a panic when `TIMONI_REQUIRE_<component>=1`.
pub fn skip(component: &str, why: &str) {
    if required(component) {
        panic!("TIMONI_REQUIRE_{component}=1 but {why}");
    }
    eprintln!("\n!!!!!!!! SKIPPED (set TIMONI_REQUIRE_{component}=1 to fail instead): {why}\n");
}

/// The shared conformance corpus: `$CONFORMANCE_DIR`, else `../shared/conformance` beside the
/// repository.
pub fn corpus() -> PathBuf {
    match std::env::var_os("CONFORMANCE_DIR") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/conformance"),
    }
}

/// `corpus()/rel` when it exists; else skips (see [`skip`]) and returns `None`.
pub fn corpus_path(rel: &str) -> Option<PathBuf> {
    let p = corpus().join(rel);
    if p.exists() {
        Some(p)
    } else {
        skip(
            "CORPUS",
            &format!(
                "{} is absent (the shared conformance corpus; set CONFORMANCE_DIR)",
                p.display()
            ),
        );
        None
    }
}

/// The `timoni-controller` binary built beside `timoni` (`cargo test --workspace` builds both;
/// `$TIMONI_CONTROLLER_BIN` overrides it). `None`, after a loud skip (see [`skip`], component
/// `ENVTEST`: the tests that need it are cluster tests), when it is missing. A binary older than
/// the sources it is built from fails the test instead of testing old code.
pub fn controller_binary() -> Option<PathBuf> {
    let bin = match std::env::var_os("TIMONI_CONTROLLER_BIN") {
        Some(b) if !b.is_empty() => PathBuf::from(b),
        _ => Path::new(env!("CARGO_BIN_EXE_timoni")).with_file_name("timoni-controller"),
    };
    let Ok(built) = std::fs::metadata(&bin).and_then(|m| m.modified()) else {
        skip(
            "ENVTEST",
            &format!(
                "{} is missing: build it with `cargo build -p timoni-controller`",
                bin.display()
            ),
        );
        return None;
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    for dir in ["timoni-controller/src", "timoni-core/src", "cue-eval/src"] {
        let newer = walkdir::WalkDir::new(root.join(dir))
            .into_iter()
            .filter_map(Result::ok)
            .find(|e| e.metadata().ok().and_then(|m| m.modified().ok()) > Some(built));
        if let Some(e) = newer {
            panic!(
                "{} is older than {}: rebuild it with `cargo build -p timoni-controller`",
                bin.display(),
                e.path().display()
            );
        }
    }
    Some(bin)
}
