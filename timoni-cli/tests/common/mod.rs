//! The harness the CLI snapshot tests share: run the real `timoni` binary in a directory, with
//! optional stdin and environment, and render the command, exit code and output as one text.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

/// Runs `timoni ARGS` in `dir` (without the variables in `unset`, with those in `env`) and renders
/// `$ timoni ARGS`, the exit code, stdout and stderr, with `root` in stderr written `[TESTDATA]`.
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
    format!(
        "$ timoni {}\nexit: {}\n--- stdout\n{}\n--- stderr\n{}",
        args.join(" "),
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout),
        stderr,
    )
}
