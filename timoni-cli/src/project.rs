//! `timoni project push|bootstrap|reconcile|suspend|resume|delete|list|status|events`: Timoni
//! Projects (seed 000). Each command parses its flags, calls `timoni_core::project` (the
//! artifact in `source`, the cluster side in `admin`), and prints: tables on stdout,
//! progress on stderr.

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::{ArgAction, Subcommand};
use timoni_core::oci::ArtifactUrl;
use timoni_core::project::admin::bootstrap::{
    self, BootstrapSpec, CONTROLLER_NAME, CONTROLLER_NAMESPACE,
};
use timoni_core::project::admin::ops::{self, DeleteOptions};
use timoni_core::project::admin::sequence::{
    self, BootstrapOptions, BootstrapUi, Consent, Progress, PushProject,
};
use timoni_core::project::api::Project;
use timoni_core::project::source::push_project;

use crate::artifact::annotations;
use crate::flags::Creds;
use crate::output::{self, Format as Output, render};
use crate::settings::Settings;

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Check a Project and push its directory to a container registry.
    Push(Push),
    /// Subscribe the cluster to a Project, installing the Timoni controller if needed.
    Bootstrap(Box<Bootstrap>),
    /// Ask the controller to reconcile a Project now.
    Reconcile(Reconcile),
    /// Stop the reconciliation of a Project.
    Suspend(Named),
    /// Resume the reconciliation of a Project.
    Resume(Named),
    /// Delete a Project (the controller uninstalls its instances unless --orphan).
    Delete(Delete),
    /// List the Projects and their last reconcile status.
    #[command(visible_alias = "ls")]
    List(List),
    /// Print a Project's conditions and the status of each component (phase, start time, the
    /// artifact digest being applied, instances, last successful apply, error).
    Status(Named),
    /// Print the events of a Project, oldest first.
    Events(Named),
}

#[derive(clap::Args, Debug)]
struct Push {
    /// The Project directory.
    dir: PathBuf,
    /// The repository, `oci://<host>/<repo>`.
    #[arg(long)]
    repository: String,
    /// Tag (repeatable, at least one).
    #[arg(short, long = "tag", required = true)]
    tags: Vec<String>,
    /// The Project file, relative to the directory.
    #[arg(short, long, default_value = "project.cue")]
    file: String,
    /// Manifest annotation `key=value` (repeatable).
    #[arg(short, long = "annotation", value_name = "KEY=VALUE")]
    annotations: Vec<String>,
    /// Print `{url, repository, tag, digest}`.
    #[arg(short, long, value_enum)]
    output: Option<Output>,
    #[command(flatten)]
    creds: Creds,
}

#[derive(clap::Args, Debug)]
struct Bootstrap {
    /// The Project file, or its directory (then `project.cue` in it).
    project: PathBuf,
    /// The Project's repository, `oci://<host>/<repo>`.
    #[arg(long)]
    repository: String,
    /// Credentials of the repository's registry, `user:password`: used to push and stored in
    /// the Project's image pull Secret.
    #[arg(long, value_name = "USER:PASSWORD")]
    repository_creds: Option<String>,
    /// The tag the cluster follows.
    #[arg(long, default_value = "latest")]
    tag: String,
    /// Push the Project to the repository under the tag first.
    #[arg(long, default_value_t = false, action = ArgAction::Set, num_args = 0..=1,
          default_missing_value = "true")]
    push_artifact: bool,
    /// The cluster name injected as TIMONI_CLUSTER_NAME (annotation runtime.timoni.sh/cluster).
    #[arg(long)]
    cluster_name: Option<String>,
    /// The cluster group injected as TIMONI_CLUSTER_GROUP (annotation runtime.timoni.sh/group).
    #[arg(long)]
    cluster_group: Option<String>,
    /// The service account the controller impersonates (default: the Project name).
    #[arg(long)]
    service_account: Option<String>,
    /// The ClusterRole bound to the service account in the Project's namespace.
    #[arg(long, default_value = "admin")]
    service_account_role: String,
    /// The controller image, `repository[:tag][@digest]`, installed by digest (a tag is
    /// resolved through its registry) [default: the image recorded in the controller module
    /// by the release that pushed it].
    #[arg(long, value_name = "IMAGE")]
    controller_image: Option<String>,
    /// Install the controller when the cluster lacks it; with false, only the Project CRD is
    /// installed (the controller runs elsewhere).
    #[arg(long, default_value_t = true, action = ArgAction::Set, num_args = 0..=1,
          default_missing_value = "true")]
    install_controller: bool,
    /// Install the controller without asking.
    #[arg(short, long)]
    yes: bool,
    /// Wait for the controller's Deployment to become ready.
    #[arg(long, default_value_t = true, action = ArgAction::Set, num_args = 0..=1,
          default_missing_value = "true")]
    wait: bool,
    /// How often the controller checks the tag (spec.interval).
    #[arg(long)]
    interval: Option<String>,
}

#[derive(clap::Args, Debug)]
struct Named {
    /// The Project name.
    name: String,
}

#[derive(clap::Args, Debug)]
struct Reconcile {
    /// The Project name.
    name: String,
    /// Wait until the controller has handled the request (up to --timeout).
    #[arg(long)]
    wait: bool,
}

#[derive(clap::Args, Debug)]
struct Delete {
    /// The Project name.
    name: String,
    /// Leave the Project's instances installed.
    #[arg(long)]
    orphan: bool,
    /// Wait until the Project is gone, its instances uninstalled (up to --timeout).
    #[arg(long)]
    wait: bool,
}

#[derive(clap::Args, Debug)]
struct List {
    /// List the Projects of every namespace.
    #[arg(short = 'A', long = "all-namespaces")]
    all_namespaces: bool,
}

pub fn run(args: Args, s: &Settings) -> Result<ExitCode> {
    match args.command {
        Command::Push(a) => push(a, s),
        Command::Bootstrap(a) => run_bootstrap(*a, s),
        Command::Reconcile(a) => reconcile(a, s),
        Command::Suspend(a) => suspend(a, true, s),
        Command::Resume(a) => suspend(a, false, s),
        Command::Delete(a) => delete(a, s),
        Command::List(a) => list(a, s),
        Command::Status(a) => status(a, s),
        Command::Events(a) => events(a, s),
    }
}

fn push(a: Push, settings: &Settings) -> Result<ExitCode> {
    let url = ArtifactUrl::parse(&a.repository)?;
    let reg = settings.registry(&url, a.creds.get())?;
    let sde = &settings.source_date_epoch;
    let (project, pushed) = push_project(
        &reg,
        &a.dir,
        &a.file,
        &url,
        &a.tags,
        &annotations(&a.annotations)?,
        sde.as_deref(),
    )
    .map_err(|e| anyhow::anyhow!(crate::relative(&e.to_string())))?;
    match a.output {
        Some(o) => {
            let mut v = serde_json::to_value(&pushed)?;
            if let Some(m) = v.as_object_mut() {
                m.insert("url".into(), url.with_tag(&pushed.tag).to_string().into());
            }
            render(&v, o)?;
        }
        None => output::info(format!(
            "pushed project {} to {}@{}",
            project.name,
            url.with_tag(&pushed.tag),
            pushed.digest
        )),
    }
    Ok(ExitCode::SUCCESS)
}

/// The directory and file of `bootstrap`'s argument.
fn project_file(p: &Path) -> Result<(PathBuf, String)> {
    if p.is_dir() {
        return Ok((p.to_path_buf(), "project.cue".into()));
    }
    let name = p
        .file_name()
        .and_then(|n| n.to_str())
        .with_context(|| format!("{}: not a Project file or directory", p.display()))?;
    let dir = p
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    Ok((dir.to_path_buf(), name.to_string()))
}

/// Asks on stderr whether to install the controller and renders the bootstrap's progress.
struct BootstrapTerminal {
    project: String,
    controller_log: Option<crate::apply::Log>,
}

impl BootstrapUi for BootstrapTerminal {
    fn confirm_install(&mut self) -> Consent {
        if !std::io::stdin().is_terminal() {
            return Consent::Unavailable;
        }
        eprint!("install the Timoni controller in {CONTROLLER_NAMESPACE}? [y/N] ");
        let _ = std::io::stderr().flush();
        let mut answer = String::new();
        if std::io::stdin().lock().read_line(&mut answer).is_err() {
            return Consent::Unavailable;
        }
        match answer.trim().to_ascii_lowercase().as_str() {
            "y" | "yes" => Consent::Given,
            _ => Consent::Refused,
        }
    }

    fn progress(&mut self, p: Progress<'_>) {
        match p {
            Progress::Pushed { url, pushed } => output::info(format!(
                "pushed project {} to {}@{}",
                self.project,
                url.with_tag(&pushed.tag),
                pushed.digest
            )),
            Progress::CrdEstablished => output::info(format!(
                "CustomResourceDefinition/{} established",
                bootstrap::CRD_NAME
            )),
            Progress::Controller(e) => self
                .controller_log
                .get_or_insert_with(|| {
                    crate::apply::Log::new(false, CONTROLLER_NAME, CONTROLLER_NAMESPACE)
                })
                .event(e),
            Progress::Applied(r) => {
                // The controller's apply has ended: its spinner goes.
                self.controller_log = None;
                output::info(format!("{r} applied"))
            }
        }
    }
}

fn run_bootstrap(a: Bootstrap, settings: &Settings) -> Result<ExitCode> {
    let (dir, file) = project_file(&a.project)?;
    let definition = timoni_core::project::definition::load_project(&dir, &file)
        .map_err(|e| anyhow::anyhow!(crate::relative(&e.to_string())))?;
    let cluster = settings.connect()?;
    let namespace = settings.namespace.clone();
    let spec = BootstrapSpec {
        project: definition.name.clone(),
        namespace: namespace.clone(),
        service_account: a.service_account.unwrap_or_else(|| definition.name.clone()),
        role: a.service_account_role,
        repository: a.repository,
        tag: a.tag,
        path: file,
        cluster_name: a.cluster_name.unwrap_or_default(),
        cluster_group: a.cluster_group.unwrap_or_default(),
        interval: a.interval,
        creds: a.repository_creds,
    };
    let opts = BootstrapOptions {
        spec,
        push: a.push_artifact.then(|| PushProject {
            dir,
            source_date_epoch: settings.source_date_epoch.clone(),
        }),
        install_controller: a.install_controller,
        yes: a.yes,
        controller_image: a.controller_image,
        version: env!("CARGO_PKG_VERSION").to_string(),
        wait: a.wait,
        timeout: settings.timeout,
        poll: settings.poll,
        connect: settings.connect_options(None),
    };
    let mut ui = BootstrapTerminal {
        project: definition.name.clone(),
        controller_log: None,
    };
    sequence::bootstrap(&cluster, &opts, &mut ui)
        .map_err(|e| anyhow::anyhow!(crate::relative(&e.to_string())))?;
    output::info(format!(
        "project {} bootstrapped in namespace {namespace}",
        definition.name
    ));
    Ok(ExitCode::SUCCESS)
}

fn reconcile(a: Reconcile, settings: &Settings) -> Result<ExitCode> {
    let cluster = settings.connect()?;
    let ns = settings.namespace.clone();
    let at = jiff::Timestamp::now().to_string();
    ops::request_reconcile(&cluster, &ns, &a.name, &at)?;
    output::info(format!(
        "requested the reconciliation of project {ns}/{}",
        a.name
    ));
    if a.wait {
        let poll = settings.poll;
        let spin = output::spinner(format!(
            "waiting for project {ns}/{} to be reconciled",
            a.name
        ));
        let p = ops::wait_reconciled(&cluster, &ns, &a.name, &at, settings.timeout, poll)?;
        drop(spin);
        let (ready, message) = ops::ready(&p);
        if ready != "True" {
            bail!("project {ns}/{} is not ready: {message}", a.name);
        }
        output::info(format!("project {ns}/{} reconciled: {message}", a.name));
    }
    Ok(ExitCode::SUCCESS)
}

fn suspend(a: Named, suspend: bool, settings: &Settings) -> Result<ExitCode> {
    let cluster = settings.connect()?;
    let ns = settings.namespace.clone();
    ops::set_suspend(&cluster, &ns, &a.name, suspend)?;
    let verb = if suspend { "suspended" } else { "resumed" };
    output::info(format!("{verb} project {ns}/{}", a.name));
    Ok(ExitCode::SUCCESS)
}

fn delete(a: Delete, settings: &Settings) -> Result<ExitCode> {
    let cluster = settings.connect()?;
    let ns = settings.namespace.clone();
    let opts = DeleteOptions {
        orphan: a.orphan,
        wait: a.wait,
        timeout: settings.timeout,
        poll: settings.poll,
    };
    let spin = a
        .wait
        .then(|| output::spinner(format!("deleting project {ns}/{}", a.name)));
    ops::delete_project(&cluster, &ns, &a.name, opts)?;
    drop(spin);
    let how = if a.wait {
        "deleted"
    } else {
        "deletion requested for"
    };
    output::info(format!("{how} project {ns}/{}", a.name));
    Ok(ExitCode::SUCCESS)
}

fn list(a: List, settings: &Settings) -> Result<ExitCode> {
    let cluster = settings.connect()?;
    let ns = settings.namespace.clone();
    let scope = if a.all_namespaces { "" } else { ns.as_str() };
    let projects = ops::list_projects(&cluster, scope)?;
    if projects.is_empty() {
        if a.all_namespaces {
            output::info("No Projects found.");
        } else {
            output::info(format!("No Projects found in namespace {ns}."));
        }
        return Ok(ExitCode::SUCCESS);
    }
    let now = jiff::Timestamp::now();
    let mut headers = vec![];
    if a.all_namespaces {
        headers.push("NAMESPACE");
    }
    headers.extend(["name", "ready", "status", "digest", "age"]);
    let mut rows = Vec::new();
    for p in &projects {
        let (ready, message) = ops::ready(p);
        let mut row = vec![];
        if a.all_namespaces {
            row.push(p.metadata.namespace.clone().unwrap_or_default());
        }
        row.extend([
            p.metadata.name.clone().unwrap_or_default(),
            ready,
            or_dash(message),
            or_dash(
                p.status
                    .as_ref()
                    .and_then(|s| s.last_applied_digest.clone())
                    .unwrap_or_default(),
            ),
            created_age(p, now),
        ]);
        rows.push(row);
    }
    output::print_table(&headers, &rows);
    Ok(ExitCode::SUCCESS)
}

fn or_dash(s: String) -> String {
    if s.is_empty() { "-".into() } else { s }
}

fn created_age(p: &Project, now: jiff::Timestamp) -> String {
    p.metadata
        .creation_timestamp
        .as_ref()
        .map_or("-".into(), |t| ops::age(&t.0.to_string(), now))
}

fn status(a: Named, settings: &Settings) -> Result<ExitCode> {
    let cluster = settings.connect()?;
    let ns = settings.namespace.clone();
    let p = ops::get_project(&cluster, &ns, &a.name)?;
    let st = p.status.clone().unwrap_or_default();
    let source = &p.spec.source;
    println!("project {ns}/{}", a.name);
    println!(
        "source {}:{} ({})",
        source.repository,
        p.spec.tag(),
        p.spec.path()
    );
    println!("suspended {}", p.spec.suspend);
    println!(
        "last applied digest {}",
        or_dash(st.last_applied_digest.clone().unwrap_or_default())
    );
    println!(
        "last attempted digest {}",
        or_dash(st.last_attempted_digest.clone().unwrap_or_default())
    );
    println!();
    let rows: Vec<Vec<String>> = st
        .conditions
        .iter()
        .map(|c| {
            vec![
                c.type_.clone(),
                c.status.clone(),
                or_dash(c.reason.clone()),
                or_dash(one_line(&c.message)),
                c.last_transition_time.to_string(),
            ]
        })
        .collect();
    output::print_table(
        &[
            "condition",
            "status",
            "reason",
            "message",
            "last transition",
        ],
        &rows,
    );
    println!();
    let mut rows = Vec::new();
    for c in &st.components {
        let instances: Vec<String> = c
            .instances
            .iter()
            .map(|i| {
                format!(
                    "{}/{} ({}:{})",
                    i.namespace, i.name, i.module_url, i.module_version
                )
            })
            .collect();
        rows.push(vec![
            c.name.clone(),
            c.phase.to_string(),
            or_dash(c.started_at.clone().unwrap_or_default()),
            or_dash(c.digest.clone().unwrap_or_default()),
            or_dash(instances.join(", ")),
            or_dash(c.last_applied_time.clone().unwrap_or_default()),
            or_dash(one_line(c.error.as_deref().unwrap_or_default())),
        ]);
    }
    output::print_table(
        &[
            "component",
            "phase",
            "started",
            "digest",
            "instances",
            "last applied",
            "error",
        ],
        &rows,
    );
    Ok(ExitCode::SUCCESS)
}

fn events(a: Named, settings: &Settings) -> Result<ExitCode> {
    let cluster = settings.connect()?;
    let ns = settings.namespace.clone();
    let events = ops::project_events(&cluster, &ns, &a.name)?;
    if events.is_empty() {
        output::info(format!("No events found for project {ns}/{}.", a.name));
        return Ok(ExitCode::SUCCESS);
    }
    let now = jiff::Timestamp::now();
    let mut rows = Vec::new();
    for e in &events {
        let mut seen = ops::age(&e.time, now);
        if e.count > 1 {
            seen.push_str(&format!(" (x{})", e.count));
        }
        rows.push(vec![
            seen,
            e.type_.clone(),
            e.reason.clone(),
            one_line(&e.message),
        ]);
    }
    output::print_table(&["last seen", "type", "reason", "message"], &rows);
    Ok(ExitCode::SUCCESS)
}

/// A message that may span lines (the applied objects of an instance, an evaluation error with
/// its positions) on the one row of a table: its lines joined with `; `.
fn one_line(message: &str) -> String {
    message
        .trim_end()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::one_line;

    #[test]
    fn multi_line_messages_stay_on_their_row() {
        assert_eq!(
            one_line(
                "build failed: x: conflicting values 1 and 2:\n    ./a.cue:1:4\n    ./b.cue:2:4\n"
            ),
            "build failed: x: conflicting values 1 and 2:; ./a.cue:1:4; ./b.cue:2:4"
        );
        assert_eq!(
            one_line("applied 2 objects\n\nConfigMap/a\n"),
            "applied 2 objects; ConfigMap/a"
        );
        assert_eq!(one_line(""), "");
    }
}
