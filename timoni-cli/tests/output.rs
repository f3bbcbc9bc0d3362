//! What `timoni` writes for a person, as Timoni writes it: log lines with the time and level
//! columns (`--log-pretty`) or without them, colour only on a terminal or with `--log-color`,
//! never with `--log-color=false`, and errors as `ERR` lines. The terminal runs go through
//! util-linux's `script`, which gives the command a pseudo-terminal.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

fn module() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/testdata/timoni/module")
}

fn timoni(args: &[&str]) -> String {
    common::run_timoni(&module(), args, None, &["NO_COLOR"], &[], None)
}

/// Escape sequences written visibly, so that a snapshot shows where each colour starts; the
/// clock time of log lines written `[HH:MM]`.
fn visible(s: &str) -> String {
    let time = regex::Regex::new(r"\\e\[90m\d{1,2}:\d\d[AP]M").unwrap();
    let s = s.replace('\x1b', "\\e");
    time.replace_all(&s, "\\e[90m[HH:MM]").into_owned()
}

#[test]
fn logs_have_time_and_level_columns_without_colour_when_piped() {
    insta::assert_snapshot!(timoni(&["mod", "vet", ".", "--debug"]));
}

#[test]
fn log_pretty_false_leaves_out_the_time_and_level() {
    insta::assert_snapshot!(timoni(&["mod", "vet", ".", "--log-pretty=false"]));
}

#[test]
fn log_color_colours_the_columns_subjects_and_notes_as_timoni() {
    insta::assert_snapshot!(visible(&timoni(&["mod", "vet", ".", "--log-color"])));
}

#[test]
fn errors_are_err_lines() {
    insta::assert_snapshot!(timoni(&["build", "demo", "./nope"]));
}

/// Runs `timoni ARGS` on a pseudo-terminal (stdout and stderr are the terminal, merged).
fn on_terminal(args: &[&str]) -> Option<String> {
    let script = Command::new("script").arg("--version").output();
    if script.is_err() {
        common::skip("SCRIPT", "util-linux `script` is not installed");
        return None;
    }
    let mut line = vec![env!("CARGO_BIN_EXE_timoni").to_string()];
    line.extend(args.iter().map(|a| a.to_string()));
    let out = Command::new("script")
        .args(["-qec", &line.join(" "), "/dev/null"])
        .current_dir(module())
        .env_remove("NO_COLOR")
        .env("TERM", "xterm")
        .output()
        .expect("run script");
    let text = String::from_utf8_lossy(&out.stdout).replace("\r\n", "\n");
    Some(format!(
        "$ timoni {}\nexit: {}\n--- terminal\n{}",
        args.join(" "),
        out.status.code().unwrap_or(-1),
        visible(&common::redact_log_times(&text))
    ))
}

#[test]
fn on_a_terminal_logs_are_coloured() {
    let Some(out) = on_terminal(&["mod", "vet", "."]) else {
        return;
    };
    insta::assert_snapshot!(out);
}

#[test]
fn on_a_terminal_log_color_false_turns_colours_off() {
    let Some(out) = on_terminal(&["mod", "vet", ".", "--log-color=false"]) else {
        return;
    };
    insta::assert_snapshot!(out);
}

/// A relative project directory appears once in the positions of an error (it was joined twice:
/// `./a/b/a/b/project.cue`).
#[test]
fn errors_name_a_relative_project_file_once() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("a/b");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("project.cue"), "project: {\n\tname: 1\n}\n").unwrap();
    let args = [
        "project",
        "push",
        "./a/b",
        "--repository",
        "oci://127.0.0.1:1/p",
        "-t",
        "v1",
    ];
    insta::assert_snapshot!(common::run_timoni(tmp.path(), &args, None, &[], &[], None));
}

/// A registry that cannot be reached: the error keeps its root cause.
#[test]
fn registry_errors_keep_their_root_cause() {
    let out = timoni(&["mod", "list", "oci://127.0.0.1:1/m"]);
    assert!(out.contains("Connection refused"), "{out}");
}

/// A bad value from `-f` values files is reported at its position in the last file that set it,
/// not in the module's `values.cue` (which the merged values replace during the build).
#[test]
fn errors_point_at_the_users_values_file() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("a.cue"),
        "values: client: enabled: \"no\"\n",
    )
    .unwrap();
    std::fs::write(
        tmp.path().join("my-values.cue"),
        "values: {\n\tclient: {\n\t\tenabled: \"yes\"\n\t}\n}\n",
    )
    .unwrap();
    let m = module().display().to_string();
    let args = ["build", "x", &m, "-f", "a.cue", "-f", "my-values.cue"];
    let out = common::run_timoni(tmp.path(), &args, None, &[], &[], Some(&module()));
    insta::assert_snapshot!(out.replace(&m, "[TESTDATA]"));
}

/// A reader that stops reading (`timoni build | head`) ends `timoni` as it ends Timoni, a Go
/// program: by `SIGPIPE`, with nothing on stderr (no panic, no `ERR` line). The pipe's reading
/// end is closed before the command starts, so that its first write finds it closed.
#[test]
fn a_closed_stdout_ends_the_process_by_sigpipe_and_quietly() {
    use std::os::unix::process::ExitStatusExt;
    let bundles = module().parent().unwrap().join("bundles");
    let cases: [(&[&str], PathBuf); 3] = [
        // `println!`
        (&["version"], module()),
        // the streamed build
        (&["build", "test", ".", "-n", "default"], module()),
        // a bundle's build, written at the end
        (&["bundle", "build", "-f", "demo.cue"], bundles),
    ];
    for (args, dir) in cases {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = Command::new(env!("CARGO_BIN_EXE_timoni"))
            .args(args)
            .current_dir(&dir)
            .env_remove("NO_COLOR")
            .stdin(std::process::Stdio::null())
            .stdout(writer)
            .output()
            .unwrap();
        assert_eq!(
            out.status.signal(),
            Some(13),
            "timoni {args:?}: {:?}, stderr: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            out.stderr.is_empty(),
            "timoni {args:?} wrote to stderr: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
