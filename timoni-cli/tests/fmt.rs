//! End-to-end tests of `timoni fmt`: the real binary on files in a temporary directory, with its
//! stdout, stderr and exit code as insta snapshots (the temporary path is redacted to `[TMP]`, the time of log lines to `[HH:MM]`).

mod common;

use std::path::Path;
use std::process::{Command, Stdio};

fn run(dir: &Path, args: &[&str], stdin: Option<&str>) -> String {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_timoni"));
    cmd.args(args)
        .current_dir(dir)
        .env_remove("NO_COLOR")
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("run timoni");
    if let Some(input) = stdin {
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
    }
    let out = child.wait_with_output().unwrap();
    let tmp = dir.display().to_string();
    format!(
        "exit: {}\n--- stdout\n{}--- stderr\n{}",
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).replace(&tmp, "[TMP]"),
        common::redact_log_times(&String::from_utf8_lossy(&out.stderr)).replace(&tmp, "[TMP]"),
    )
}

#[test]
fn stdin_is_formatted_to_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(
        dir.path(),
        &["fmt", "-"],
        Some("package p\na: 1\nbcd: {x: 1, y: \"two\"}\n"),
    );
    insta::assert_snapshot!(out);
}

#[test]
fn diff_reports_unformatted_files_and_fails() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.cue"), "a: 1\nbcd:    2\n").unwrap();
    std::fs::write(dir.path().join("ok.cue"), "a: 1\n").unwrap();
    let out = run(dir.path(), &["fmt", "--diff", "."], None);
    insta::assert_snapshot!(out);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.cue")).unwrap(),
        "a: 1\nbcd:    2\n",
        "--diff must not write"
    );
}

#[test]
fn files_are_rewritten_in_place() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.cue"), "a: 1\nbcd:    2\n").unwrap();
    let out = run(dir.path(), &["fmt"], None);
    assert!(out.starts_with("exit: 0"), "{out}");
    insta::assert_snapshot!(std::fs::read_to_string(dir.path().join("a.cue")).unwrap());
}

#[test]
fn parse_errors_are_diagnostics_with_a_position() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bad.cue"), "a: {\n\tb: [1, 2}\n}\nc: \"x\n").unwrap();
    let out = run(dir.path(), &["fmt", "bad.cue"], None);
    insta::assert_snapshot!(out);
}

#[test]
fn a_missing_path_is_one_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(dir.path(), &["fmt", "nope.cue"], None);
    insta::assert_snapshot!(out);
}

#[test]
fn trailing_ellipsis_names_the_directory_and_other_files_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    std::fs::write(dir.path().join("sub/a.cue"), "a: 1\nbcd:    2\n").unwrap();
    std::fs::write(dir.path().join("notes.txt"), "x").unwrap();
    let mut all = String::new();
    for args in [
        &["fmt", "--diff", "./..."][..],
        &["fmt", "--diff", "sub/..."],
        &["fmt", "--diff", "sub..."],
        &["fmt", "notes.txt"],
    ] {
        all.push_str(&format!("$ timoni {}\n", args.join(" ")));
        all.push_str(&run(dir.path(), args, None));
        all.push('\n');
    }
    insta::assert_snapshot!(all);
}

#[test]
fn files_that_do_not_parse_are_counted_and_the_others_formatted() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.cue"), "a: 1\nbcd:    2\n").unwrap();
    std::fs::write(dir.path().join("bad.cue"), "a: {\n").unwrap();
    let out = run(dir.path(), &["fmt"], None);
    assert!(out.contains("formatting failed for 1 file(s)"), "{out}");
    assert!(out.starts_with("exit: 1"), "{out}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.cue")).unwrap(),
        "a:   1\nbcd: 2\n"
    );
}
