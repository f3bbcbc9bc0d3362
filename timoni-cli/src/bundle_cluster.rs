//! `timoni bundle apply|delete|status`: bundles on the clusters of a runtime, one kube context
//! per runtime cluster, in runtime order; log lines carry Timoni's callers
//! (`b:<bundle> > c:<cluster> > i:<instance>`).

use std::process::ExitCode;

use timoni_core::cluster::apply::{ApplyError, Event};
use timoni_core::cluster::bundle::{
    BundleApplyRequest, BundleEvent, apply_bundle, bundle_status, delete_bundle,
};
use timoni_core::cluster::kube::KubeConnector;

use crate::bundle::request;
use crate::flags::RuntimeFlags;
use crate::settings::Settings;

#[derive(clap::Args, Debug)]
pub struct ApplyArgs {
    /// Bundle files (.cue, .yaml, .yml, .json, or - for stdin), unified; repeatable or
    /// comma-separated.
    #[arg(
        short = 'f',
        long = "file",
        value_name = "FILE",
        required = true,
        value_delimiter = ','
    )]
    files: Vec<String>,
    /// The CUE package of the modules.
    #[arg(short = 'p', long = "package", default_value = "main")]
    package: String,
    #[command(flatten)]
    apply: crate::apply::ApplyFlags,
    #[command(flatten)]
    creds: crate::flags::Creds,
    #[command(flatten)]
    verify: crate::sign::VerifyFlags,
}

#[derive(clap::Args, Debug)]
pub struct DeleteArgs {
    /// The bundle name (default: `bundle.name` of the -f files).
    name: Option<String>,
    /// Bundle files to read the name from.
    #[arg(short = 'f', long = "file", value_name = "FILE")]
    files: Vec<String>,
    /// Report what would be deleted, delete nothing.
    #[arg(long = "dry-run")]
    dry_run: bool,
    /// Wait for the objects to be finalized.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, num_args = 0..=1,
          default_missing_value = "true")]
    wait: bool,
}

#[derive(clap::Args, Debug)]
pub struct StatusArgs {
    /// The bundle name (default: `bundle.name` of the -f files).
    name: Option<String>,
    /// Bundle files to read the name from.
    #[arg(short = 'f', long = "file", value_name = "FILE")]
    files: Vec<String>,
}

fn caller(bundle: &str, cluster: &str, instance: &str) -> String {
    let mut s = format!("b:{bundle}");
    if !cluster.is_empty() {
        s.push_str(&format!(" > c:{cluster}"));
    }
    if !instance.is_empty() {
        s.push_str(&format!(" > i:{instance}"));
    }
    s
}

/// Logs bundle events with their callers.
struct Logger {
    bundle: String,
    cluster: String,
    instance: String,
    dry: bool,
    /// `applying` or `deleting`.
    verb: &'static str,
}

impl Logger {
    fn log(&mut self, e: BundleEvent) {
        match e {
            BundleEvent::Cluster(c) => self.cluster = c.name.clone(),
            BundleEvent::Bundle(b) => self.bundle = b.to_string(),
            BundleEvent::Instance { name, namespace } => {
                self.instance = name.to_string();
                eprintln!(
                    "{} {} instance in namespace {namespace}",
                    caller(&self.bundle, &self.cluster, name),
                    self.verb
                );
            }
            BundleEvent::Apply(Event::Change(c)) | BundleEvent::Delete(c) => {
                let suffix = if self.dry { " (server dry run)" } else { "" };
                eprintln!(
                    "{} {} {}{suffix}",
                    caller(&self.bundle, &self.cluster, &self.instance),
                    c.object,
                    c.action
                );
                if let Some(d) = &c.diff {
                    print!("{d}");
                }
            }
            BundleEvent::Apply(Event::Ready { .. }) => eprintln!(
                "{} resources are ready",
                caller(&self.bundle, &self.cluster, &self.instance)
            ),
            BundleEvent::Apply(_) | BundleEvent::Applied { .. } => {}
        }
    }
}

fn bundle_name(
    name: Option<String>,
    files: &[String],
    runtime: &RuntimeFlags,
    settings: &Settings,
    connector: &KubeConnector,
) -> anyhow::Result<String> {
    if let Some(n) = name {
        return Ok(n);
    }
    if files.is_empty() {
        anyhow::bail!("a bundle name or -f/--file is required");
    }
    let req = request(runtime, settings, settings.source_files(files)?)?;
    Ok(timoni_core::cluster::bundle::bundle_name(connector, &req)?)
}

pub fn apply(args: ApplyArgs, rt: &RuntimeFlags, settings: &Settings) -> anyhow::Result<ExitCode> {
    let req = BundleApplyRequest {
        bundle: request(rt, settings, settings.source_files(&args.files)?)?,
        package: args.package,
        dry_run: args.apply.dry_run || args.apply.diff,
        diff: args.apply.diff,
        force: args.apply.force,
        overwrite_ownership: args.apply.overwrite_ownership,
        wait: args.apply.wait,
        timeout: settings.timeout,
        poll: settings.poll,
    };
    let connector = settings.connector();
    let mut logger = Logger {
        bundle: String::new(),
        cluster: String::new(),
        instance: String::new(),
        dry: req.dry_run,
        verb: "applying",
    };
    let fetcher = args
        .verify
        .module_fetcher(settings.fetcher(args.creds.get(), true))?;
    match apply_bundle(&connector, Some(fetcher.as_ref()), &req, &mut |e| {
        logger.log(e)
    }) {
        Ok(_) => {
            eprintln!("{} applied successfully", caller(&logger.bundle, "", ""));
            Ok(ExitCode::SUCCESS)
        }
        Err(ApplyError::Ownership(m)) => Err(anyhow::anyhow!(
            "{m}. Apply with \"--overwrite-ownership\" to gain instance ownership."
        )),
        Err(e) => Err(anyhow::anyhow!("{}", crate::relative(&e.to_string()))),
    }
}

pub fn delete(
    args: DeleteArgs,
    rt: &RuntimeFlags,
    settings: &Settings,
) -> anyhow::Result<ExitCode> {
    let connector = settings.connector();
    let name = bundle_name(args.name, &args.files, rt, settings, &connector)?;
    let req = request(rt, settings, Vec::new())?;
    let mut logger = Logger {
        bundle: name.clone(),
        cluster: String::new(),
        instance: String::new(),
        dry: args.dry_run,
        verb: "deleting",
    };
    delete_bundle(
        &connector,
        &req,
        &name,
        args.dry_run,
        args.wait,
        settings.timeout,
        settings.poll,
        &mut |e| logger.log(e),
    )?;
    Ok(ExitCode::SUCCESS)
}

pub fn status(
    args: StatusArgs,
    rt: &RuntimeFlags,
    settings: &Settings,
) -> anyhow::Result<ExitCode> {
    let connector = settings.connector();
    let name = bundle_name(args.name, &args.files, rt, settings, &connector)?;
    let req = request(rt, settings, Vec::new())?;
    for (c, per) in bundle_status(&connector, &req, &name)? {
        let cluster = if c.is_default() { "" } else { c.name.as_str() };
        if per.is_empty() {
            eprintln!("{} no instances found", caller(&name, cluster, ""));
        }
        for (rec, objects) in per {
            let who = caller(&name, cluster, &rec.metadata.name);
            println!("{who} last applied {}", rec.last_transition_time);
            println!(
                "{who} module {}:{}",
                rec.module.repository, rec.module.version
            );
            for o in objects {
                println!("{who} {} {} {}", o.object, o.status, o.message);
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
