//! The `timoni` command line: clap structs, then one call into `timoni-core` per subcommand, then
//! rendering. Errors are rendered with miette and exit non-zero with one clear message.

mod cue;
mod fmt;
mod oci_cmds;
mod vendor;

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
    /// Format CUE files.
    Fmt(fmt::Args),
    /// Evaluate, export, validate and format CUE, as the `cue` tool does.
    Cue(cue::Args),
    /// Create, vendor into, push, pull and list modules.
    Mod(ModArgs),
    /// Push, pull, tag and list generic Timoni artifacts.
    Artifact(oci_cmds::ArtifactArgs),
    /// Log in to and out of container registries.
    Registry(oci_cmds::RegistryArgs),
}

/// `timoni mod …`.
#[derive(clap::Args, Debug)]
struct ModArgs {
    #[command(subcommand)]
    command: ModCommand,
    #[command(flatten)]
    oci: oci_cmds::OciFlags,
}

#[derive(Subcommand, Debug)]
enum ModCommand {
    #[command(flatten)]
    Local(vendor::Command),
    #[command(flatten)]
    Oci(oci_cmds::ModCommand),
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
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Fmt(args) => fmt::run(args),
        Command::Cue(args) => cue::run(args),
        Command::Mod(args) => match args.command {
            ModCommand::Oci(c) => oci_cmds::run_mod_command(c, &args.oci),
            ModCommand::Local(c) => vendor::run_command(c),
        },
        Command::Artifact(args) => oci_cmds::run_artifact(args),
        Command::Registry(args) => oci_cmds::run_registry(args),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("✗ {e:#}");
            ExitCode::FAILURE
        }
    }
}
