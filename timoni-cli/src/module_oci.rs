//! `timoni mod build|push|pull|list`, the registry subcommands of `timoni mod`: clap structs,
//! then one call into `timoni_core::oci`, then rendering through `output.rs`.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::{ArgAction, Subcommand};
use timoni_core::oci::{self, ArtifactUrl};

use crate::artifact::{LocalFormat, annotations, log_artifact, table};
use crate::flags::Creds;
use crate::output::{self, Format as Output, render, subject};
use crate::settings::Settings;
use crate::sign::{SignFlags, VerifyFlags, sign_pushed};

/// The registry subcommands of `timoni mod`.
#[derive(Subcommand, Debug)]
pub enum ModCommand {
    /// Build a module's OCI image into a local archive or layout, without pushing.
    Build(ModBuild),
    /// Push a module (a directory, or an archive from `mod build`) to a container registry.
    Push(ModPush),
    /// Pull a module version from a container registry.
    Pull(ModPull),
    /// List the versions of a module.
    #[command(visible_alias = "ls")]
    List(ModList),
}

#[derive(clap::Args, Debug)]
pub struct ModBuild {
    /// The module directory.
    module_dir: PathBuf,
    /// The module version (strict semver; the local ref name).
    #[arg(short, long)]
    version: String,
    /// The archive file or layout directory to write (must not exist).
    #[arg(short, long, value_name = "PATH")]
    output: PathBuf,
    #[arg(long, value_enum, default_value = "oci-archive")]
    format: LocalFormat,
    /// Manifest annotation `key=value` (repeatable).
    #[arg(short, long = "annotation", value_name = "KEY=VALUE")]
    annotations: Vec<String>,
    /// Store the files symlinks point to instead of skipping them.
    #[arg(long)]
    resolve_symlinks: bool,
}

#[derive(clap::Args, Debug)]
pub struct ModPush {
    /// The module directory, or an archive or layout written by `mod build`.
    module_dir: PathBuf,
    /// The repository, `oci://<host>/<repo>`.
    module_url: String,
    /// The module version (strict semver, used as the tag; read from the manifest of archives).
    #[arg(short, long)]
    version: Option<String>,
    /// Also tag the version as `latest`.
    #[arg(long, default_value_t = true, action = ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    latest: bool,
    /// Manifest annotation `key=value` (repeatable).
    #[arg(short, long = "annotation", value_name = "KEY=VALUE")]
    annotations: Vec<String>,
    /// Print `{url, repository, version, digest}`.
    #[arg(short, long, value_enum)]
    output: Option<Output>,
    /// Store the files symlinks point to instead of skipping them.
    #[arg(long)]
    resolve_symlinks: bool,
    #[command(flatten)]
    creds: Creds,
    #[command(flatten)]
    sign: SignFlags,
}

#[derive(clap::Args, Debug)]
pub struct ModPull {
    /// The module, `oci://<host>/<repo>[:tag|@digest]`.
    module_url: String,
    /// The version to pull.
    #[arg(short, long, default_value = "latest")]
    version: String,
    /// Directory to extract the module into.
    #[arg(short, long, value_name = "DIR")]
    output: PathBuf,
    #[command(flatten)]
    creds: Creds,
    #[command(flatten)]
    verify: VerifyFlags,
}

#[derive(clap::Args, Debug)]
pub struct ModList {
    /// The repository, `oci://<host>/<repo>`.
    module_url: String,
    /// Resolve the digest of every version.
    #[arg(long, default_value_t = true, action = ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    with_digest: bool,
    /// At most this many versions (0 = all).
    #[arg(long, default_value_t = 100)]
    limit: usize,
    #[arg(short, long, value_enum)]
    output: Option<Output>,
    #[command(flatten)]
    creds: Creds,
}

/// Runs one registry subcommand of `timoni mod` (`build`, `push`, `pull`, `list`).
pub fn run_mod_command(command: ModCommand, settings: &Settings) -> Result<ExitCode> {
    match command {
        ModCommand::Build(a) => {
            let sde = &settings.source_date_epoch;
            let image = oci::build_module_image(
                &a.module_dir,
                &a.version,
                &annotations(&a.annotations)?,
                sde.as_deref(),
                a.resolve_symlinks,
            )?;
            oci::write_image(&image, &[a.version], &a.output, a.format.into())?;
            log_artifact(&a.output.display().to_string(), &image.digest);
        }
        ModCommand::Push(a) => {
            let url = ArtifactUrl::parse(&a.module_url)?;
            let key = a.sign.resolve()?;
            let opts = oci::ModulePushOptions {
                version: a.version.clone(),
                latest: a.latest,
                annotations: annotations(&a.annotations)?,
                source_date_epoch: settings.source_date_epoch.clone(),
                resolve_symlinks: a.resolve_symlinks,
            };
            let reg = settings.registry(&url, a.creds.get())?;
            let spin = output::spinner("pushing module");
            let pushed = oci::push_module_path(&reg, &a.module_dir, &url, &opts)?;
            drop(spin);
            match a.output {
                Some(o) => render(&pushed, o)?,
                None => log_artifact(&pushed.url, &pushed.digest),
            }
            sign_pushed(
                key.as_ref(),
                &url,
                &pushed.url,
                &pushed.digest,
                &settings.connect_options(a.creds.get()),
            )?;
        }
        ModCommand::Pull(a) => {
            let url = ArtifactUrl::parse(&a.module_url)?;
            let reg = settings.registry(&url, a.creds.get())?;
            let version =
                (url.tag.is_none() || a.version != "latest").then_some(a.version.as_str());
            let spin = output::spinner(format!(
                "pulling {}",
                url.with_tag(version.unwrap_or(url.reference()))
            ));
            let connect = settings.connect_options(a.creds.get());
            match a.verify.verify_before_pull(&reg, &url, version, &connect)? {
                Some(pinned) => {
                    oci::pull_module(&reg, &pinned, None, &a.output, &settings.cache())?
                }
                None => oci::pull_module(&reg, &url, version, &a.output, &settings.cache())?,
            };
            drop(spin);
            output::info(format!(
                "extracted: {}",
                subject(&a.output.display().to_string())
            ));
        }
        ModCommand::List(a) => {
            let url = ArtifactUrl::parse(&a.module_url)?;
            let reg = settings.registry(&url, a.creds.get())?;
            let spin = output::spinner("fetching versions");
            let list = oci::list_module_versions(&reg, &url, a.with_digest, a.limit)?;
            drop(spin);
            match a.output {
                Some(o) => render(&list, o)?,
                None => {
                    let rows = list
                        .iter()
                        .map(|m| vec![m.version.clone(), m.digest.clone()]);
                    table(&["version", "digest"], a.with_digest, rows);
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
