//! The `timoni` command line: clap structs, then one call into `timoni-core` per subcommand, then
//! rendering. Errors are rendered with miette and exit non-zero with one clear message.

mod cue;
mod fmt;
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
    /// Create modules and vendor schemas into them.
    Mod(vendor::Args),
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
        Command::Mod(args) => vendor::run(args),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("✗ {e:#}");
            ExitCode::FAILURE
        }
    }
}
