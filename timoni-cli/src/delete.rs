//! `timoni delete NAME` (alias `uninstall`): deletes the objects of an instance's inventory in
//! reverse apply order, then its inventory.

use std::process::ExitCode;

use timoni_core::cluster::apply::Action;
use timoni_core::cluster::ops::{DeleteRequest, delete_instance, stored_instance};

use crate::output;
use crate::settings::Settings;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The instance name.
    name: String,
    /// Report what would be deleted, delete nothing.
    #[arg(long = "dry-run")]
    dry_run: bool,
    /// Wait for the objects to be finalized.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, num_args = 0..=1,
          default_missing_value = "true")]
    wait: bool,
}

pub fn run(args: Args, settings: &Settings) -> anyhow::Result<ExitCode> {
    let cluster = settings.connect()?;
    let namespace = settings.namespace.clone();
    let req = DeleteRequest {
        name: args.name,
        namespace,
        dry_run: args.dry_run,
        wait: args.wait,
        timeout: settings.timeout,
        poll: settings.poll,
    };
    let log = output::Log::new().instance(&req.name);
    let mut count = 0;
    let suffix = if args.dry_run {
        format!(" {}", output::dry_run("(dry run)"))
    } else {
        let stored = stored_instance(&cluster, &req.name, &req.namespace)?;
        count = stored.instance.inventory.refs().len();
        log.info(format!("deleting {count} resource(s)..."));
        String::new()
    };
    // Once every object is reported, the deletion waits for the deleted ones to be finalized:
    // a spinner says so on a terminal, as Timoni's does.
    let (mut seen, mut deleted, mut spinner) = (0, 0, None);
    delete_instance(&cluster, &req, &mut |c| {
        let change = output::change(&c.object.to_string(), &c.action.to_string());
        log.info(format!("{change}{suffix}"));
        seen += 1;
        if c.action == Action::Deleted {
            deleted += 1;
        }
        if req.wait && seen == count && deleted > 0 {
            spinner = Some(output::spinner(format!(
                "waiting for {deleted} resource(s) to be finalized..."
            )));
        }
    })?;
    drop(spinner);
    if !args.dry_run {
        log.info("all resources have been deleted");
    }
    Ok(ExitCode::SUCCESS)
}
