//! `timoni bundle apply|delete|status`: bundles on the clusters of a runtime, one kube context
//! per runtime cluster, in runtime order; log lines carry Timoni's callers
//! (`b:<bundle> > c:<cluster> > i:<instance>`).

use std::process::ExitCode;

use timoni_core::cluster::apply::{Action, ApplyError};
use timoni_core::cluster::bundle::{
    BundleApplyRequest, BundleEvent, apply_bundle, bundle_status, delete_bundle,
};
use timoni_core::cluster::kube::KubeConnector;

use crate::bundle::request;
use crate::flags::RuntimeFlags;
use crate::output;
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
    /// The bundle name: Timoni's deprecated spelling of the argument, hidden from the help as
    /// cobra hides deprecated flags.
    #[arg(long = "name", value_name = "NAME", hide = true)]
    deprecated_name: Option<String>,
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

/// Logs bundle events with Timoni's callers (`b:bundle > c:cluster > i:instance >`).
struct Logger {
    bundle: String,
    cluster: String,
    group: String,
    instances: usize,
    dry: bool,
    /// The apply log of the current instance.
    apply: Option<crate::apply::Log>,
    /// The first instance of the current cluster is still to come.
    first: bool,
    /// `applying` or `deleting`.
    verb: &'static str,
    /// A cluster's instances were applied and its `applied successfully` line is still due.
    summary_due: bool,
    /// When the command started: Timoni's `applied successfully in` counts from there.
    started: std::time::Instant,
    /// Timoni's `pulling URL` spinner while a module is pulled (on a terminal).
    pulling: Option<output::Spinner>,
    /// `bundle delete --wait`: the objects of the current instance deleted so far, and the
    /// spinner saying they are being finalized (the deletion waits for them after the last).
    finalizing: (usize, Option<output::Spinner>),
    wait: bool,
}

impl Logger {
    fn new(bundle: &str, dry: bool, verb: &'static str) -> Logger {
        Logger {
            bundle: bundle.to_string(),
            cluster: String::new(),
            group: String::new(),
            instances: 0,
            dry,
            apply: None,
            first: true,
            verb,
            summary_due: false,
            started: std::time::Instant::now(),
            pulling: None,
            finalizing: (0, None),
            wait: false,
        }
    }

    /// Timoni's line after the instances of a cluster: `b:bundle > c:cluster > applied
    /// successfully in 3s`, or `applied successfully (server dry run)`.
    fn summary(&mut self) {
        if !std::mem::take(&mut self.summary_due) {
            return;
        }
        if self.dry {
            self.caller()
                .info(format!("applied successfully{}", self.dry_suffix()));
        } else {
            let secs = self.started.elapsed().as_secs_f64().round() as u64;
            self.caller().info(format!(
                "applied successfully in {}",
                output::go_seconds(secs)
            ));
        }
    }

    /// The caller of lines about the bundle on the current cluster.
    fn caller(&self) -> output::Log {
        output::Log::new()
            .bundle(&self.bundle)
            .cluster(&self.cluster)
    }

    fn dry_suffix(&self) -> String {
        if self.dry {
            format!(" {}", output::dry_run("(server dry run)"))
        } else {
            String::new()
        }
    }

    /// `bundle delete --wait`: the previous instance's deleted objects are finalized (the
    /// deletion went on), which Timoni's says per instance.
    fn finalized(&mut self) {
        let (count, spinner) = std::mem::take(&mut self.finalizing);
        drop(spinner);
        if count > 0
            && let Some(log) = &self.apply
        {
            log.caller().info("all resources have been deleted");
        }
    }

    fn log(&mut self, e: BundleEvent) {
        match e {
            BundleEvent::Cluster(c) => {
                self.finalized();
                self.cluster = c.name.clone();
                self.group = c.group.clone();
                self.first = true;
            }
            BundleEvent::Bundle { name, instances } => {
                self.finalized();
                self.summary();
                self.bundle = name.to_string();
                self.instances = instances;
                self.cluster.clear();
                self.first = true;
            }
            BundleEvent::Instance { name, namespace } => {
                self.finalized();
                if self.first && self.verb == "applying" {
                    let on = if self.cluster.is_empty() {
                        String::new()
                    } else {
                        format!(" on {}", output::subject(&self.group))
                    };
                    let msg = format!("applying {} instance(s){on}", self.instances);
                    self.caller().info(format!("{msg}{}", self.dry_suffix()));
                }
                self.first = false;
                self.summary_due = self.verb == "applying";
                let caller = self.caller().instance(name);
                if self.verb == "deleting" {
                    caller.info(format!(
                        "deleting instance {} in namespace {}",
                        output::subject(name),
                        output::subject(namespace)
                    ));
                }
                self.apply = Some(crate::apply::Log::with_caller(
                    self.dry, name, namespace, caller,
                ));
            }
            BundleEvent::Pulling { url } => {
                self.pulling = Some(output::spinner(format!("pulling {url}")));
            }
            BundleEvent::Module { name, version } => {
                self.pulling = None;
                if let Some(log) = &self.apply {
                    log.caller().info(format!(
                        "applying module {} version {}",
                        output::subject(name),
                        output::subject(version)
                    ));
                }
            }
            BundleEvent::Apply(e) => {
                if let Some(log) = &mut self.apply {
                    log.event(e);
                }
            }
            BundleEvent::Delete(c) => {
                if let Some(log) = &self.apply {
                    let dry = if self.dry {
                        format!(" {}", output::dry_run("(dry run)"))
                    } else {
                        String::new()
                    };
                    let change = output::change(&c.object.to_string(), &c.action.to_string());
                    log.caller().info(format!("{change}{dry}"));
                }
                if self.wait && !self.dry && c.action == Action::Deleted {
                    let (count, spinner) = &mut self.finalizing;
                    *count += 1;
                    let msg = format!("waiting for {count} resource(s) to be finalized...");
                    match spinner {
                        Some(s) => s.set_message(msg),
                        None => *spinner = Some(output::spinner(msg)),
                    }
                }
            }
            BundleEvent::Applied { result, .. } => {
                self.pulling = None;
                if let Some(mut log) = self.apply.take() {
                    log.finish();
                    // Timoni ends each instance of a dry run with this line.
                    if self.dry && result.is_ok() {
                        log.caller()
                            .info(format!("applied successfully{}", self.dry_suffix()));
                    }
                }
            }
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
    // As Timoni: the files' `bundle.name` wins over the argument.
    if files.is_empty() {
        return name.ok_or_else(|| anyhow::anyhow!("bundle name is required"));
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
        correct_drift: false,
        force: args.apply.force,
        overwrite_ownership: args.apply.overwrite_ownership,
        wait: args.apply.wait,
        timeout: settings.timeout,
        poll: settings.poll,
    };
    let connector = settings.connector();
    let mut logger = Logger::new("", req.dry_run, "applying");
    let fetcher = args
        .verify
        .module_fetcher(settings.fetcher(args.creds.get(), true))?;
    match apply_bundle(&connector, Some(fetcher.as_ref()), &req, &mut |e| {
        logger.log(e)
    }) {
        Ok(_) => {
            logger.summary();
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
    if args.deprecated_name.is_some() {
        // cobra's notice for a deprecated flag, on stderr.
        eprintln!("Flag --name has been deprecated, use 'timoni bundle delete <name>'");
    }
    let connector = settings.connector();
    let name = bundle_name(
        args.name.or(args.deprecated_name),
        &args.files,
        rt,
        settings,
        &connector,
    )?;
    let req = request(rt, settings, Vec::new())?;
    let mut logger = Logger::new(&name, args.dry_run, "deleting");
    logger.wait = args.wait;
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
    logger.finalized();
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
        let log = output::Log::new().bundle(&name).cluster(cluster);
        if per.is_empty() {
            log.error("no instances found in bundle");
        }
        for (rec, objects) in per {
            crate::status::log_instance(&log.clone().instance(&rec.metadata.name), &rec, &objects);
        }
    }
    Ok(ExitCode::SUCCESS)
}
