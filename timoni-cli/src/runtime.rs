//! `timoni runtime build`: the runtime values of every selected cluster, `KEY: value` sorted by
//! key; values with queries are read from each cluster through its kube context.

use std::path::PathBuf;
use std::process::ExitCode;

use timoni_core::bundle::BundleRequest;
use timoni_core::cluster::runtime_values::runtime_values;

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand, Debug)]
enum Command {
    /// Print the runtime values of each selected cluster.
    Build(BuildArgs),
}

#[derive(clap::Args, Debug)]
struct BuildArgs {
    /// Runtime files (.cue, .yaml, .yml, .json, or - for stdin), unified; repeatable or
    /// comma-separated.
    #[arg(
        short = 'f',
        long = "file",
        value_name = "FILE",
        required = true,
        value_delimiter = ','
    )]
    files: Vec<String>,
    /// The clusters to select (case-insensitive, '*' for all).
    #[arg(long = "cluster", default_value = "*")]
    cluster: String,
    /// The cluster groups to select (case-insensitive, '*' for all).
    #[arg(long = "cluster-group", default_value = "*")]
    cluster_group: String,
    /// The directory whose cue.mod runtimes import packages from.
    #[arg(long = "workdir")]
    workdir: Option<PathBuf>,
}

pub fn run(args: Args, settings: &crate::settings::Settings) -> anyhow::Result<ExitCode> {
    let Command::Build(args) = args.command;
    let req = BundleRequest {
        runtime_files: settings.source_files(&args.files)?,
        cluster: args.cluster,
        group: args.cluster_group,
        workdir: args.workdir,
        ..BundleRequest::default()
    };
    let connector = settings.connector();
    let clusters = runtime_values(&connector, &req).map_err(|e| {
        anyhow::anyhow!("runtime build failed: {}", crate::relative(&e.to_string()))
    })?;
    for (cluster, values) in clusters {
        if !cluster.is_default() {
            println!("# Cluster: {} (group {})", cluster.name, cluster.group);
        }
        for (k, v) in values {
            println!("{k}: {v}");
        }
    }
    Ok(ExitCode::SUCCESS)
}
