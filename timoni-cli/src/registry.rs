//! `timoni registry login|logout`: the credentials of the docker config that every registry
//! command reads.

use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::Subcommand;
use timoni_core::oci;

use crate::output::{self, subject};
use crate::settings::Settings;

/// `timoni registry …`.
#[derive(clap::Args, Debug)]
pub struct RegistryArgs {
    #[command(subcommand)]
    command: RegistryCommand,
}

#[derive(Subcommand, Debug)]
enum RegistryCommand {
    /// Store registry credentials in the docker config.
    Login {
        registry: String,
        #[arg(short, long)]
        username: String,
        #[arg(short, long, conflicts_with = "password_stdin")]
        password: Option<String>,
        /// Read the password from stdin.
        #[arg(long)]
        password_stdin: bool,
    },
    /// Remove registry credentials from the docker config.
    Logout { registry: String },
}

/// Runs `timoni registry login|logout`.
pub fn run_registry(args: RegistryArgs, settings: &Settings) -> Result<ExitCode> {
    let path = settings
        .docker_config
        .clone()
        .context("neither $DOCKER_CONFIG nor $HOME is set: no docker config to write")?;
    match args.command {
        RegistryCommand::Login {
            registry,
            username,
            password,
            password_stdin,
        } => {
            let password = match (password, password_stdin) {
                (Some(p), false) => p,
                (None, true) => settings
                    .stdin("the password")?
                    .trim_end_matches(['\r', '\n'])
                    .to_string(),
                _ => bail!("registry login needs --password or --password-stdin"),
            };
            oci::login(&path, &registry, &username, &password)?;
            output::info(format!(
                "logged in to {} ({})",
                subject(&registry),
                path.display()
            ));
        }
        RegistryCommand::Logout { registry } => {
            if oci::logout(&path, &registry)? {
                output::info(format!("logged out of {}", subject(&registry)));
            } else {
                output::info(format!("not logged in to {}", subject(&registry)));
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
