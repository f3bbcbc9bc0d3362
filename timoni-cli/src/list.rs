//! `timoni list` (alias `ls`): a table of the instances of a namespace, or of all namespaces
//! with `-A`, optionally of one bundle.

use std::process::ExitCode;

use timoni_core::cluster::ops::list_instances;

use crate::settings::Settings;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// List the instances of every namespace.
    #[arg(short = 'A', long = "all-namespaces")]
    all_namespaces: bool,
    /// Only the instances of this bundle.
    #[arg(long)]
    bundle: Option<String>,
}

pub fn run(args: Args, settings: &Settings) -> anyhow::Result<ExitCode> {
    let cluster = settings.connect()?;
    let namespace = &settings.namespace;
    let ns = if args.all_namespaces {
        ""
    } else {
        namespace.as_str()
    };
    let records = list_instances(&cluster, ns, args.bundle.as_deref())?;
    let mut rows = vec![];
    for r in &records {
        let mut row = vec![r.metadata.name.clone()];
        if args.all_namespaces {
            row.push(r.metadata.namespace.clone());
        }
        row.extend([
            r.module.repository.clone(),
            r.module.version.clone(),
            r.last_transition_time.clone(),
            r.bundle().unwrap_or("-").to_string(),
        ]);
        rows.push(row);
    }
    let mut headers = vec!["name"];
    if args.all_namespaces {
        headers.push("namespace");
    }
    headers.extend(["module", "version", "last applied", "bundle"]);
    crate::output::print_table(&headers, &rows);
    Ok(ExitCode::SUCCESS)
}
