//! End-to-end tests of the command line's shape, as insta snapshots: Timoni's global flags
//! before and after the subcommand, the namespace taken from the kubeconfig context, values and
//! bundle files as comma-separated lists, Go booleans that never take the next argument, the
//! bundle's runtime flags on `bundle` itself, exit codes of usage errors, and `-v/--version`.

mod common;

use std::path::{Path, PathBuf};

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/testdata/timoni")
}

/// A kubeconfig whose current context `dev` sets the namespace `dev-ns`, a context `bare` that
/// sets none, and a server nothing listens on.
const KUBECONFIG: &str = "apiVersion: v1
kind: Config
current-context: dev
contexts:
- name: dev
  context: {cluster: c, user: u, namespace: dev-ns}
- name: bare
  context: {cluster: c, user: u}
clusters:
- name: c
  cluster: {server: 'https://127.0.0.1:1'}
users:
- name: u
  user: {token: t}
";

/// A home directory without a kubeconfig, holding `kubeconfig.yaml` for the tests that pass it.
struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    fn new() -> Home {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("kubeconfig.yaml"), KUBECONFIG).unwrap();
        Home { dir }
    }

    fn kubeconfig(&self) -> String {
        self.dir
            .path()
            .join("kubeconfig.yaml")
            .display()
            .to_string()
    }

    /// Runs `timoni ARGS` in `dir` with this home, no `KUBECONFIG` unless in `env`; the
    /// variables of `env` are shown before the command.
    fn run(&self, dir: &Path, args: &[&str], env: &[(&str, &str)]) -> String {
        let home = self.dir.path().display().to_string();
        let mut all = vec![("HOME", home.as_str()), ("TIMONI_CACHING", "false")];
        all.extend_from_slice(env);
        let shown: String = env.iter().map(|(k, v)| format!("{k}={v} ")).collect();
        common::run_timoni(
            dir,
            args,
            None,
            &["KUBECONFIG", "TIMONI_KUBE_VERSION", "DOCKER_CONFIG"],
            &all,
            None,
        )
        .replacen("$ timoni", &format!("$ {shown}timoni"), 1)
        .replace(&self.kubeconfig(), "[KUBECONFIG]")
        .replace(&home, "[HOME]")
    }
}

/// The command, exit code, stderr and the `namespace` lines of stdout: what the namespace
/// tests look at in a build's objects.
fn namespaces(run: String) -> String {
    run.lines()
        .filter(|l| {
            l.starts_with("$ ")
                || l.starts_with("exit:")
                || l.starts_with("--- ")
                || l.contains("namespace")
                || l.starts_with('✗')
                || l.starts_with("error")
                || l.contains("valid")
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

#[test]
fn global_flags_are_accepted_before_and_after_the_subcommand() {
    let home = Home::new();
    let module = testdata().join("module");
    let runs: Vec<String> = [
        &["-n", "test", "build", "demo", "."][..],
        &["build", "demo", ".", "-n", "test", "--timeout", "1m"],
        &[
            "--kube-context",
            "none",
            "--timeout=30s",
            "--registry-insecure",
            "--log-pretty=false",
            "--log-color=false",
            "build",
            "demo",
            ".",
            "--namespace=test",
        ],
        &[
            "mod",
            "vet",
            ".",
            "--timeout",
            "1m",
            "--kube-context",
            "x",
            "-n",
            "test",
        ],
        &["--cache-dir", "/nonexistent", "mod", "vet", "-n", "test"],
    ]
    .iter()
    .map(|args| namespaces(home.run(&module, args, &[])))
    .collect();
    insta::assert_snapshot!(runs.join("\n"));
}

#[test]
fn artifact_and_runtime_commands_accept_the_global_flags() {
    let home = Home::new();
    let out = home.dir.path().join("artifact.tar");
    let out = out.to_str().unwrap();
    let module = testdata().join("module");
    let runs = [
        home.run(
            &module,
            &[
                "artifact",
                "build",
                "-f",
                "values.cue",
                "-o",
                out,
                "--timeout",
                "1m",
                "--kube-context",
                "x",
                "-n",
                "y",
            ],
            &[("SOURCE_DATE_EPOCH", "0")],
        ),
        home.run(
            &testdata().join("bundles"),
            &[
                "runtime",
                "build",
                "-f",
                "runtime.cue",
                "--cluster",
                "staging",
                "-n",
                "x",
                "--timeout",
                "1s",
            ],
            &[],
        ),
    ];
    insta::assert_snapshot!(
        runs.join("\n")
            .lines()
            .map(|l| match l.find("sha256:") {
                Some(i) => format!("{}sha256:[DIGEST]", &l[..i]),
                None => l.to_string(),
            })
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn the_namespace_defaults_to_the_kubeconfig_context() {
    let home = Home::new();
    let kc = home.kubeconfig();
    let module = testdata().join("module");
    let runs = [
        // The current context's namespace, found through $KUBECONFIG or --kubeconfig.
        home.run(&module, &["build", "demo", "."], &[("KUBECONFIG", &kc)]),
        home.run(&module, &["build", "demo", ".", "--kubeconfig", &kc], &[]),
        home.run(&module, &["mod", "vet", "--kubeconfig", &kc], &[]),
        // A context without a namespace, and no kubeconfig at all: `default`.
        home.run(
            &module,
            &[
                "build",
                "demo",
                ".",
                "--kubeconfig",
                &kc,
                "--kube-context",
                "bare",
            ],
            &[],
        ),
        home.run(&module, &["build", "demo", "."], &[]),
        // -n wins over the context.
        home.run(
            &module,
            &["build", "demo", ".", "-n", "explicit"],
            &[("KUBECONFIG", &kc)],
        ),
    ];
    insta::assert_snapshot!(runs.map(namespaces).join("\n"));
}

#[test]
fn values_and_bundle_files_take_comma_separated_lists() {
    let home = Home::new();
    let module = testdata().join("module");
    let bundles = testdata().join("bundles");
    let comma = home.run(
        &module,
        &[
            "build",
            "demo",
            ".",
            "-f",
            "../values/external.cue,../values/external.yaml",
            "--values=../values/external.json",
        ],
        &[],
    );
    let repeated = home.run(
        &module,
        &[
            "build",
            "demo",
            ".",
            "-f",
            "../values/external.cue",
            "-f",
            "../values/external.yaml",
            "--values=../values/external.json",
        ],
        &[],
    );
    let strip = |s: &str| s.lines().skip(1).collect::<Vec<_>>().join("\n");
    assert_eq!(strip(&comma), strip(&repeated), "{comma}");
    let runs = [
        namespaces(home.run(
            &module,
            &[
                "mod",
                "vet",
                "-f",
                "../values/external.cue,../values/client-only.cue",
            ],
            &[],
        )),
        home.run(
            &bundles,
            &[
                "bundle",
                "vet",
                "-f",
                "demo.cue,override.yaml",
                "-r",
                "runtime.cue",
            ],
            &[],
        ),
        home.run(
            &bundles,
            &["bundle", "vet", "-f", "demo.cue,missing.cue"],
            &[],
        ),
    ];
    insta::assert_snapshot!(comma + "\n" + &runs.join("\n"));
}

#[test]
fn runtime_flags_are_accepted_on_bundle_itself() {
    let home = Home::new();
    let bundles = testdata().join("bundles");
    let runs = [
        home.run(
            &bundles,
            &[
                "bundle",
                "-r",
                "runtime.cue",
                "--runtime-cluster",
                "prod-eu",
                "--workdir",
                ".",
                "vet",
                "-f",
                "demo.cue",
            ],
            &[],
        ),
        home.run(
            &bundles,
            &[
                "bundle",
                "--runtime-group=staging",
                "vet",
                "-f",
                "demo.cue",
                "--runtime",
                "runtime.cue",
            ],
            &[],
        ),
    ];
    insta::assert_snapshot!(runs.join("\n"));
}

#[test]
fn boolean_flags_never_take_the_next_argument() {
    let home = Home::new();
    let kc = home.kubeconfig();
    let module = testdata().join("module");
    let env = [("KUBECONFIG", kc.as_str())];
    let runs = [
        // The name after --wait is the instance's: the run gets as far as the (absent) server.
        home.run(&module, &["delete", "--wait", "x"], &env),
        home.run(&module, &["delete", "--wait=false", "--dry-run", "x"], &env),
        // A separate value is an argument, here one too many.
        home.run(&module, &["delete", "--wait", "false", "x"], &env),
        home.run(&module, &["delete", "--wait=maybe", "x"], &env),
        // Flags declared as plain booleans take `=false` too.
        namespaces(home.run(
            &module,
            &["build", "--mask-secrets=false", "demo", "."],
            &env,
        )),
        home.run(
            &module,
            &["artifact", "list", "--with-digest", "oci://127.0.0.1:1/x"],
            &env,
        ),
    ];
    insta::assert_snapshot!(runs.join("\n"));
}

/// Timoni's deprecated `bundle delete --name` is accepted, hidden from the help, with cobra's
/// notice; the run gets as far as the (absent) server.
#[test]
fn deprecated_bundle_delete_name_is_accepted_with_a_notice() {
    let home = Home::new();
    let kc = home.kubeconfig();
    let env = [("KUBECONFIG", kc.as_str())];
    let run = home.run(
        &testdata(),
        &["bundle", "delete", "--name", "apps", "--wait=false"],
        &env,
    );
    let help = home.run(&testdata(), &["bundle", "delete", "--help"], &[]);
    assert!(!help.contains("--name <NAME>"), "{help}");
    insta::assert_snapshot!(run);
}

/// `bundle status` and `bundle delete` need a name, from the argument or `-f`: Timoni's error.
#[test]
fn bundle_commands_without_a_name_fail_as_timonis() {
    let home = Home::new();
    let run = home.run(&testdata(), &["bundle", "status"], &[]);
    insta::assert_snapshot!(run, @r"
    $ timoni bundle status
    exit: 1
    --- stdout

    --- stderr
    [HH:MM] ERR bundle name is required
    ");
}

#[test]
fn usage_errors_exit_1_and_the_root_prints_its_version() {
    let home = Home::new();
    let module = testdata().join("module");
    let runs = [
        home.run(&module, &["build"], &[]),
        home.run(&module, &["--no-such-flag", "version"], &[]),
        home.run(&module, &["-v"], &[]),
        home.run(&module, &["--version"], &[]),
    ];
    insta::assert_snapshot!(
        runs.join("\n")
            .replace(env!("CARGO_PKG_VERSION"), "[VERSION]")
    );
}

/// `timoni mod` without its subcommand prints the group's help on stdout and succeeds, as cobra
/// does; the global flags are listed under their own heading.
#[test]
fn a_group_without_its_subcommand_prints_its_help() {
    let home = Home::new();
    let out = home.run(&testdata(), &["mod"], &[]);
    assert!(
        out.starts_with("$ timoni mod\nexit: 0\n--- stdout\nWork with modules"),
        "{out}"
    );
    assert!(
        out.contains("Usage: timoni mod [OPTIONS] <COMMAND>"),
        "{out}"
    );
    assert!(out.contains("Global Flags:\n  -n, --namespace"), "{out}");
    assert!(out.ends_with("--- stderr\n"), "{out}");
}
