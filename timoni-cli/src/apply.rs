//! `timoni apply NAME MODULE` (aliases `install`, `upgrade`): builds the instance with the
//! cluster's Kubernetes version and applies it (see `timoni_core::cluster::apply`), logging each
//! change on stderr as Timoni does (`Kind/namespace/name created`).

use std::process::ExitCode;

use timoni_core::cluster::apply::{ApplyError, ApplyRequest, Event, apply_instance};
use timoni_core::cluster::inventory::ModuleReference;
use timoni_core::instance::{self, BuildOptions, open_module};

use crate::output;
use crate::settings::Settings;

/// The flags `apply` and `bundle apply` share.
#[derive(clap::Args, Debug)]
pub struct ApplyFlags {
    /// Recreate objects whose immutable fields changed.
    #[arg(long)]
    pub force: bool,
    /// Take over instances owned by another bundle (for `bundle apply`, also by none).
    #[arg(long = "overwrite-ownership")]
    pub overwrite_ownership: bool,
    /// Server-side dry run: report the changes, persist nothing.
    #[arg(long = "dry-run")]
    pub dry_run: bool,
    /// With --dry-run: print the diff of each change (Secret data masked).
    #[arg(long)]
    pub diff: bool,
    /// Wait for the applied objects to become ready (`--wait=false` not to).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, num_args = 0..=1,
          default_missing_value = "true")]
    pub wait: bool,
}

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The instance name.
    name: String,
    /// The module: a local directory, a file:// URL or an oci:// URL.
    module: String,
    /// The module version (OCI modules only).
    #[arg(short = 'v', long = "version", default_value = "latest")]
    version: String,
    /// The module digest (OCI modules only).
    #[arg(short = 'd', long = "digest")]
    digest: Option<String>,
    /// The CUE package of the instance.
    #[arg(short = 'p', long = "package", default_value = "main")]
    package: String,
    /// Values files (.cue, .yaml, .yml, .json, or - for stdin), merged in order; repeatable or
    /// comma-separated.
    #[arg(
        short = 'f',
        long = "values",
        value_name = "FILE",
        value_delimiter = ','
    )]
    values: Vec<String>,
    #[command(flatten)]
    apply: ApplyFlags,
    #[command(flatten)]
    creds: crate::flags::Creds,
    #[command(flatten)]
    verify: crate::sign::VerifyFlags,
}

pub fn run(args: Args, settings: &Settings) -> anyhow::Result<ExitCode> {
    let log = output::Log::new().instance(&args.name);
    if args.module.starts_with("oci://") {
        let at = match &args.digest {
            Some(d) if args.version == "latest" => format!("@{d}"),
            _ => format!(":{}", args.version),
        };
        log.info(format!("pulling {}{at}", args.module));
    } else {
        log.info(format!("building {}", args.module));
    }
    // An `oci://` module is pulled (`-v`, `-d`, the layer cache) into a temporary directory that
    // lives as long as `source`; a local one is recorded as written.
    let source = if args.module.starts_with("oci://") {
        let fetcher = args
            .verify
            .module_fetcher(settings.fetcher(args.creds.get(), true))?;
        Some(open_module(
            &args.module,
            Some(&args.version),
            args.digest.as_deref(),
            Some(fetcher.as_ref()),
        )?)
    } else {
        None
    };
    let cluster = settings.connect()?;
    let namespace = settings.namespace.clone();
    let module_dir = source
        .as_ref()
        .map_or(args.module.clone(), |s| s.dir.display().to_string());
    let mut build = BuildOptions::new(&args.name, &namespace, &module_dir);
    build.package = args.package.clone();
    build.values = settings.values_sources(&args.values)?;
    let mut req = ApplyRequest::new(build);
    if let Some(f) = source.as_ref().and_then(|s| s.fetched.as_ref()) {
        req.module = ModuleReference::from(f);
    }
    // A module that cannot be read is reported by the build, as Timoni's build reports it.
    let name = instance::module_dir(&module_dir)
        .ok()
        .map(|root| instance::module_name(&root))
        .filter(|n| !n.is_empty());
    if let Some(name) = name {
        log.info(format!(
            "using module {name} version {}",
            req.module.version
        ));
    }
    req.dry_run = args.apply.dry_run || args.apply.diff;
    req.diff = args.apply.diff;
    req.force = args.apply.force;
    req.overwrite_ownership = args.apply.overwrite_ownership;
    req.wait = args.apply.wait;
    req.timeout = settings.timeout;
    req.poll = settings.poll;
    let mut log = Log::new(req.dry_run, &args.name, &namespace);
    let result = apply_instance(&cluster, &req, &mut |e| log.event(e));
    log.finish();
    match result {
        Ok(_) => {
            if req.dry_run {
                log.caller().info(format!(
                    "applied successfully {}",
                    output::dry_run("(server dry run)")
                ));
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(ApplyError::Ownership(m)) => Err(anyhow::anyhow!(
            "{m}. Apply with \"--overwrite-ownership\" to gain instance ownership."
        )),
        Err(ApplyError::Build(e)) => {
            let b = &req.build;
            let msg = crate::positions::in_user_files(&e, &b.module, &b.package, &b.values);
            Err(anyhow::anyhow!("build failed: {}", crate::relative(&msg)))
        }
        Err(e) => Err(e.into()),
    }
}

/// Renders apply events as Timoni's log lines (`i:name > Kind/ns/name created`); while waiting,
/// a spinner shows what is pending on a terminal.
pub(crate) struct Log {
    dry: bool,
    name: String,
    namespace: String,
    log: output::Log,
    spinner: Option<output::Spinner>,
}

impl Log {
    /// A log of the apply of instance `name` in `namespace`.
    pub(crate) fn new(dry: bool, name: &str, namespace: &str) -> Log {
        Log::with_caller(dry, name, namespace, output::Log::new().instance(name))
    }

    /// A log of the apply of instance `name` with the caller chain `log` (bundles).
    pub(crate) fn with_caller(dry: bool, name: &str, namespace: &str, log: output::Log) -> Log {
        Log {
            dry,
            name: name.to_string(),
            namespace: namespace.to_string(),
            log,
            spinner: None,
        }
    }

    /// The caller chain of the lines.
    pub(crate) fn caller(&self) -> &output::Log {
        &self.log
    }

    pub(crate) fn finish(&mut self) {
        self.spinner = None;
    }

    /// Logs `msg`, marked `(server dry run)` on a dry run.
    fn dry(&self, msg: String) {
        if self.dry {
            self.log
                .info(format!("{msg} {}", output::dry_run("(server dry run)")));
        } else {
            self.log.info(msg);
        }
    }

    pub(crate) fn event(&mut self, e: &Event) {
        match e {
            Event::Start { install, .. } if !self.dry => {
                let verb = if *install { "installing" } else { "upgrading" };
                self.log.info(format!(
                    "{verb} {} in namespace {}",
                    output::subject(&self.name),
                    output::subject(&self.namespace)
                ));
            }
            Event::Start { .. } => {}
            Event::Change(c) => {
                self.dry(output::change(&c.object.to_string(), &c.action.to_string()));
                if let Some(d) = &c.diff {
                    output::print_stdout(d);
                }
            }
            Event::Waiting { count, .. } => {
                let msg = format!("waiting for {count} resource(s) to become ready...");
                self.log.info(&msg);
                self.spinner = Some(output::spinner(msg));
            }
            Event::Progress { pending, .. } => {
                if let Some(s) = &self.spinner {
                    s.set_message(pending.join(", "));
                }
            }
            Event::Ready { .. } => {
                self.finish();
                self.log.info("resources are ready");
            }
            Event::NamespaceCreated { namespace } => {
                self.dry(output::change(&format!("Namespace/{namespace}"), "created"));
            }
        }
    }
}
