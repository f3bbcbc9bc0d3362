//! `timoni runtime build`: the values the runtime's queries read from every selected cluster
//! (through its kube context), logged as Timoni logs them: `r:runtime > c:cluster > KEY: value`
//! sorted by key, or `no values defined`.

use std::path::PathBuf;
use std::process::ExitCode;

use timoni_core::bundle::{self, BundleRequest};
use timoni_core::cluster::runtime_values::runtime_values;

use crate::output;

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
    let runtime = bundle::request_runtime(&req).map_err(|e| {
        anyhow::anyhow!("runtime build failed: {}", crate::relative(&e.to_string()))
    })?;
    for (cluster, mut values) in clusters {
        // Timoni lists what the queries read; the cluster's name and group are not among them.
        for (k, _) in cluster.values() {
            values.remove(&k);
        }
        let name = if cluster.is_default() {
            ""
        } else {
            &cluster.name
        };
        let log = output::Log::new().runtime(&runtime.name).cluster(name);
        for (k, v) in &values {
            log.info(format!("{}: {v}", output::subject(k)));
        }
        if values.is_empty() {
            log.info("no values defined");
        }
    }
    Ok(ExitCode::SUCCESS)
}
