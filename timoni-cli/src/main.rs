//! The `timoni` command line in three steps: clap structs (`flags.rs` holds the shared groups),
//! then the resolved settings (`settings.rs`), then one call into `timoni-core` per subcommand
//! and its rendering. Every error, usage errors included, exits with code 1 and one clear
//! message, as Timoni does.

mod apply;
mod artifact;
mod build;
mod bundle;
mod bundle_cluster;
mod cue;
mod delete;
mod flags;
mod fmt;
mod inspect;
mod krm;
mod list;
mod module;
mod module_oci;
mod output;
mod positions;
mod project;
mod registry;
mod registry_provider;
mod runtime;
mod settings;
mod sign;
mod status;
mod vendor;
mod version;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Timoni: a package manager for Kubernetes, powered by CUE.
#[derive(Parser, Debug)]
#[command(name = "timoni", about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    #[command(flatten)]
    global: flags::GlobalFlags,
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
    Artifact(artifact::ArtifactArgs),
    /// Log in to and out of container registries.
    Registry(registry::RegistryArgs),
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
#[command(name = "timoni", about, long_about = None)]
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

/// What the command line asks for: `timoni cue …`, parsed alone, or any other command with the
/// global flags.
enum Parsed {
    Cue(cue::Args),
    Full(Box<Cli>),
}

/// Parses the command line as clap's `Parser::parse` does, exiting with clap's message on an
/// error (code 1, as cobra's usage errors; 0 for `--help`, `--version` and a command group
/// given without its subcommand, whose help goes to stdout), without tearing the
/// command tree down afterwards: dropping it costs a third of building it, on every run, for
/// memory the process returns when it exits a moment later.
fn parse_args() -> Parsed {
    if std::env::args_os().nth(1).is_some_and(|a| a == "cue") {
        let CueOnly::Cue(args) = parse_with::<CueCli>().command;
        return Parsed::Cue(args);
    }
    Parsed::Full(Box::new(parse_with::<Cli>()))
}

/// The command tree of `P` with the rules of `flags.rs` applied and Timoni's root `-v/--version`
/// (printing `timoni version X`).
fn command<P: clap::CommandFactory>() -> clap::Command {
    let cmd = P::command()
        .version(concat!("version ", env!("CARGO_PKG_VERSION")))
        .disable_version_flag(true)
        .arg(
            clap::Arg::new("print-version")
                .short('v')
                .long("version")
                .action(clap::ArgAction::Version)
                .help("Print the version")
                .help_heading(None::<&str>),
        );
    flags::go_bools(cmd)
}

fn parse_with<P: clap::CommandFactory + clap::FromArgMatches>() -> P {
    let mut cmd = command::<P>();
    let parsed = cmd
        .try_get_matches_from_mut(std::env::args_os())
        .and_then(|mut m| {
            let p = P::from_arg_matches_mut(&mut m);
            std::mem::forget(m);
            p
        });
    match parsed {
        Ok(p) => {
            // Dropped rather than kept to the exit: the whole tree of `timoni` is about 0.7 MB
            // of heap, which the build would otherwise add to its peak.
            drop(cmd);
            p
        }
        Err(e) => {
            let e = e.format(&mut cmd);
            // A command group without its subcommand prints its help, as cobra does.
            if e.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                let text = e.render().to_string();
                let _ = std::io::Write::write_all(&mut std::io::stdout(), text.as_bytes());
                std::process::exit(0)
            }
            let _ = e.print();
            std::process::exit(if e.use_stderr() { 1 } else { 0 })
        }
    }
}

fn main() -> ExitCode {
    let cli = match parse_args() {
        Parsed::Cue(args) => {
            // Colours only on a terminal, so that piped output and snapshots are plain text; and
            // plain message lines, as the `cue` tool prints them.
            output::init(output::color_default(), false);
            set_miette_hook(output::colored());
            return finish(cue::run(args));
        }
        Parsed::Full(cli) => cli,
    };
    let settings = settings::Settings::resolve(&cli.global);
    output::init(settings.log_color, settings.log_pretty);
    set_miette_hook(output::colored());
    let s = &settings;
    let result = match cli.command {
        Command::Apply(args) => apply::run(args, s),
        Command::Delete(args) => delete::run(args, s),
        Command::Status(args) => status::run(args, s),
        Command::List(args) => list::run(args, s),
        Command::Inspect(args) => inspect::run(args, s),
        Command::Build(args) => build::run(args, s),
        Command::Bundle(args) => bundle::run(args, s),
        Command::Runtime(args) => runtime::run(args, s),
        Command::Mod(args) => module::run(args, s),
        Command::Version(args) => version::run(args),
        Command::Completion { shell } => {
            let mut cmd = command::<Cli>();
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut cmd, "timoni", &mut script);
            // A closed pipe (`| head`) is not an error worth a message.
            let _ = std::io::Write::write_all(&mut std::io::stdout(), &script);
            Ok(ExitCode::SUCCESS)
        }
        Command::Fmt(args) => fmt::run(args),
        Command::Cue(args) => cue::run(args),
        Command::Artifact(args) => artifact::run_artifact(args, s),
        Command::Registry(args) => registry::run_registry(args, s),
        Command::Project(args) => project::run(args, s),
        Command::Fn(args) => krm::run(args, s),
    };
    finish(result)
}

/// Renders diagnostics with colours and Unicode only when `color` (`--log-color`, else whether
/// stderr is a terminal).
fn set_miette_hook(color: bool) {
    let _ = miette::set_hook(Box::new(move |_| {
        Box::new(
            miette::MietteHandlerOpts::new()
                .color(color)
                .unicode(color)
                .build(),
        )
    }));
}

/// The exit code of a command's result, printing its error.
fn finish(result: anyhow::Result<ExitCode>) -> ExitCode {
    match result {
        Ok(code) => code,
        Err(e) => {
            output::error(format!("{e:#}"));
            ExitCode::FAILURE
        }
    }
}
