//! The `timoni` command line: clap structs, then one call into `timoni-core` per subcommand, then
//! rendering. Errors are rendered with miette and exit non-zero with one clear message.

mod apply;
mod build;
mod bundle;
mod bundle_cluster;
mod cue;
mod delete;
mod fmt;
mod inspect;
mod krm;
mod kube;
mod list;
mod module;
mod oci_cmds;
mod project;
mod runtime;
mod status;
mod vendor;
mod version;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Timoni: a package manager for Kubernetes, powered by CUE.
#[derive(Parser, Debug)]
#[command(name = "timoni", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Install or upgrade a module instance on the cluster.
    #[command(aliases = ["install", "upgrade"])]
    Apply(apply::Args),
    /// Delete a module instance and the objects it applied.
    #[command(alias = "uninstall")]
    Delete(delete::Args),
    /// Show the status of an instance's objects.
    Status(status::Args),
    /// List the instances on the cluster.
    #[command(alias = "ls")]
    List(list::Args),
    /// Inspect what an instance's inventory records.
    Inspect(inspect::Args),
    /// Render an instance's Kubernetes objects to stdout.
    #[command(alias = "template")]
    Build(build::Args),
    /// Build and validate bundles of instances.
    Bundle(bundle::Args),
    /// Show the values of runtimes.
    Runtime(runtime::Args),
    /// Work with modules: vet, show, init, vendor, and push/pull/list in registries.
    Mod(module::Args),
    /// Print the version information.
    Version(version::Args),
    /// Generate a shell completion script.
    Completion {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Format CUE files.
    Fmt(fmt::Args),
    /// Evaluate, export, validate and format CUE, as the `cue` tool does.
    Cue(cue::Args),
    /// Push, pull, tag and list generic Timoni artifacts.
    Artifact(oci_cmds::ArtifactArgs),
    /// Log in to and out of container registries.
    Registry(oci_cmds::RegistryArgs),
    /// Timoni Projects: push them, bootstrap clusters onto them, and inspect or nudge their
    /// reconciliation by the Timoni controller.
    Project(project::Args),
    /// Run as a KRM function (kustomize, kpt): build the Instance or Bundle of the
    /// ResourceList's functionConfig, or vet its items (`fn vet`).
    Fn(krm::Args),
}

/// A message with absolute paths below the working directory written relative to it (`./x`),
/// as `cue` prints positions.
pub(crate) fn relative(msg: &str) -> String {
    match std::env::current_dir() {
        Ok(cwd) => msg.replace(&format!("{}/", cwd.display()), "./"),
        Err(_) => msg.to_string(),
    }
}

// The command line of `timoni cue …` alone. `cue` is the command scripts and editors run over
// and over on small inputs, where building the arguments of every other subcommand (clap builds
// the whole tree to parse one) is a tenth of the run. Same name, attributes, doc comment and
// subcommand as `Cli`, so help, usage and errors read the same.
/// Timoni: a package manager for Kubernetes, powered by CUE.
#[derive(Parser, Debug)]
#[command(name = "timoni", version, about, long_about = None)]
struct CueCli {
    #[command(subcommand)]
    command: CueOnly,
}

/// The `cue` subcommand of [`Command`], alone.
#[derive(Subcommand, Debug)]
enum CueOnly {
    /// Evaluate, export, validate and format CUE, as the `cue` tool does.
    Cue(cue::Args),
}

/// Parses the command line as clap's `Parser::parse` does (exiting with clap's message on an
/// error), without tearing the command tree down afterwards: dropping it costs a third of
/// building it, on every run, for memory the process returns when it exits a moment later.
fn parse_args() -> Cli {
    if std::env::args_os().nth(1).is_some_and(|a| a == "cue") {
        let CueOnly::Cue(args) = parse_with::<CueCli>().command;
        return Cli {
            command: Command::Cue(args),
        };
    }
    parse_with::<Cli>()
}

fn parse_with<P: clap::CommandFactory + clap::FromArgMatches>() -> P {
    let mut cmd = P::command();
    let mut matches = cmd.get_matches_mut();
    let parsed =
        P::from_arg_matches_mut(&mut matches).unwrap_or_else(|e| e.format(&mut cmd).exit());
    std::mem::forget(matches);
    std::mem::forget(cmd);
    parsed
}

fn main() -> ExitCode {
    // Colours only on a terminal, so that piped output and snapshots are plain text.
    let tty = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let _ = miette::set_hook(Box::new(move |_| {
        Box::new(
            miette::MietteHandlerOpts::new()
                .color(tty)
                .unicode(tty)
                .build(),
        )
    }));
    let cli = parse_args();
    let result = match cli.command {
        Command::Apply(args) => apply::run(args),
        Command::Delete(args) => delete::run(args),
        Command::Status(args) => status::run(args),
        Command::List(args) => list::run(args),
        Command::Inspect(args) => inspect::run(args),
        Command::Build(args) => build::run(args),
        Command::Bundle(args) => bundle::run(args),
        Command::Runtime(args) => runtime::run(args),
        Command::Mod(args) => module::run(args),
        Command::Version(args) => version::run(args),
        Command::Completion { shell } => {
            let mut cmd = <Cli as clap::CommandFactory>::command();
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut cmd, "timoni", &mut script);
            // A closed pipe (`| head`) is not an error worth a message.
            let _ = std::io::Write::write_all(&mut std::io::stdout(), &script);
            Ok(ExitCode::SUCCESS)
        }
        Command::Fmt(args) => fmt::run(args),
        Command::Cue(args) => cue::run(args),
        Command::Artifact(args) => oci_cmds::run_artifact(args),
        Command::Registry(args) => oci_cmds::run_registry(args),
        Command::Project(args) => project::run(args),
        Command::Fn(args) => krm::run(args),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("✗ {e:#}");
            ExitCode::FAILURE
        }
    }
}
