//! `timoni status NAME`: the last apply of an instance (time, module, digest, images) and the
//! kstatus of each object of its inventory.

use std::process::ExitCode;

use timoni_core::cluster::ops::instance_status;

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
    println!("last applied {}", rec.last_transition_time);
    println!("module {}:{}", rec.module.repository, rec.module.version);
    if !rec.module.digest.is_empty() {
        println!("digest {}", rec.module.digest);
    }
    for image in &rec.images {
        println!("container image {image}");
    }
    for o in objects {
        println!("{} {} {}", o.object, o.status, o.message);
    }
    Ok(ExitCode::SUCCESS)
}
