//! `timoni status NAME`: the last apply of an instance (time, module, digest, images) and the
//! kstatus of each object of its inventory, as Timoni's log lines.

use std::process::ExitCode;

use timoni_core::cluster::inventory::InstanceRecord;
use timoni_core::cluster::ops::{ObjectStatus, instance_status};
use timoni_core::cluster::status::Status;

use crate::output;
use crate::settings::Settings;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The instance name.
    name: String,
}

pub fn run(args: Args, settings: &Settings) -> anyhow::Result<ExitCode> {
    let cluster = settings.connect()?;
    let namespace = &settings.namespace;
    let (rec, objects) = instance_status(&cluster, &args.name, namespace)?;
    log_instance(&output::Log::new().instance(&args.name), &rec, &objects);
    Ok(ExitCode::SUCCESS)
}

/// Logs the last apply of an instance and the status of its objects, as Timoni's `status` and
/// `bundle status` do.
pub(crate) fn log_instance(log: &output::Log, rec: &InstanceRecord, objects: &[ObjectStatus]) {
    use output::subject;
    log.info(format!(
        "last applied {}",
        subject(&rec.last_transition_time)
    ));
    log.info(format!(
        "module {}",
        subject(&format!("{}:{}", rec.module.repository, rec.module.version))
    ));
    if !rec.module.digest.is_empty() {
        log.info(format!("digest {}", subject(&rec.module.digest)));
    }
    for image in &rec.images {
        log.info(format!("container image {}", subject(image)));
    }
    for o in objects {
        let object = subject(&o.object.to_string());
        match o.status {
            Status::NotFound => log.error(format!(
                "{object} {}",
                output::error_text(&o.status.to_string())
            )),
            _ => log.info(format!(
                "{object} {} - {}",
                output::status(&o.status.to_string()),
                o.message
            )),
        }
    }
}
