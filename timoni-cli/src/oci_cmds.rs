//! `timoni mod build|push|pull|list`, `timoni artifact build|push|pull|tag|list|digest` and
//! `timoni registry login|logout`: clap structs, then one call into `timoni_core::oci`, then
//! rendering through `output.rs` (`-o json|yaml`, an aligned table, or Timoni's log lines).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::{ArgAction, Subcommand, ValueEnum};
use timoni_core::oci::{self, ArtifactUrl, LayoutFormat};

use crate::flags::Creds;
use crate::output::{self, Format as Output, render, subject};
use crate::settings::Settings;

/// `--format` of `mod build` and `artifact build`.
#[derive(Clone, Copy, Debug, ValueEnum)]
enum LocalFormat {
    OciArchive,
    OciLayout,
}

impl From<LocalFormat> for LayoutFormat {
    fn from(f: LocalFormat) -> Self {
        match f {
            LocalFormat::OciArchive => LayoutFormat::Archive,
            LocalFormat::OciLayout => LayoutFormat::Layout,
        }
    }
}

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

/// `timoni artifact …`.
#[derive(clap::Args, Debug)]
pub struct ArtifactArgs {
    #[command(subcommand)]
    command: ArtifactCommand,
}

#[derive(Subcommand, Debug)]
enum ArtifactCommand {
    /// Push a directory or a file as a Timoni artifact.
    Push(ArtifactPush),
    /// Pull an artifact and extract its layers.
    Pull(ArtifactPull),
    /// Add tags to an artifact.
    Tag(ArtifactTag),
    /// List the tags of an artifact repository.
    #[command(visible_alias = "ls")]
    List(ArtifactList),
    /// Print the digest of an artifact tag.
    Digest(ArtifactDigest),
    /// Build an artifact into a local archive or layout, without pushing.
    Build(ArtifactBuild),
}

#[derive(clap::Args, Debug)]
struct ArtifactBuild {
    /// Directory or file to pack.
    #[arg(short = 'f', long, default_value = ".")]
    filepath: PathBuf,
    /// The archive file or layout directory to write (must not exist).
    #[arg(short, long, value_name = "PATH")]
    output: PathBuf,
    #[arg(long, value_enum, default_value = "oci-archive")]
    format: LocalFormat,
    /// Local ref name (repeatable; default `latest`).
    #[arg(short, long = "tag")]
    tags: Vec<String>,
    /// Manifest annotation `key=value` (repeatable).
    #[arg(short, long = "annotation", value_name = "KEY=VALUE")]
    annotations: Vec<String>,
    /// The `sh.timoni.content.type` of the layer.
    #[arg(long, default_value = oci::CONTENT_TYPE_GENERIC)]
    content_type: String,
    /// Store the files symlinks point to instead of skipping them.
    #[arg(long)]
    resolve_symlinks: bool,
}

#[derive(clap::Args, Debug)]
struct ArtifactPush {
    /// The repository, `oci://<host>/<repo>`.
    artifact_url: String,
    /// Directory or file to pack.
    #[arg(short = 'f', long, default_value = ".")]
    filepath: PathBuf,
    /// Tag (repeatable, at least one).
    #[arg(short, long = "tag", required = true)]
    tags: Vec<String>,
    /// Manifest annotation `key=value` (repeatable).
    #[arg(short, long = "annotation", value_name = "KEY=VALUE")]
    annotations: Vec<String>,
    /// The `sh.timoni.content.type` of the layer.
    #[arg(long, default_value = oci::CONTENT_TYPE_GENERIC)]
    content_type: String,
    #[arg(short, long, value_enum)]
    output: Option<Output>,
    /// Store the files symlinks point to instead of skipping them.
    #[arg(long)]
    resolve_symlinks: bool,
    #[command(flatten)]
    creds: Creds,
}

#[derive(clap::Args, Debug)]
struct ArtifactPull {
    /// The artifact, `oci://<host>/<repo>[:tag|@digest]`.
    artifact_url: String,
    /// Directory to extract into.
    #[arg(short, long, default_value = ".")]
    output: PathBuf,
    /// Only the layers with this content type.
    #[arg(long)]
    content_type: Option<String>,
    #[command(flatten)]
    creds: Creds,
}

#[derive(clap::Args, Debug)]
struct ArtifactTag {
    /// The artifact, `oci://<host>/<repo>[:tag|@digest]`.
    artifact_url: String,
    /// Tag to add (repeatable).
    #[arg(short, long = "tag", required = true)]
    tags: Vec<String>,
    #[command(flatten)]
    creds: Creds,
}

#[derive(clap::Args, Debug)]
struct ArtifactList {
    /// The repository, `oci://<host>/<repo>`.
    artifact_url: String,
    /// Resolve the digest of every tag.
    #[arg(long, default_value_t = true, action = ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    with_digest: bool,
    /// At most this many tags (0 = all).
    #[arg(long, default_value_t = 100)]
    limit: usize,
    /// Only tags matching this regular expression.
    #[arg(long)]
    filter_regex: Option<String>,
    /// Only tags in this semver range.
    #[arg(long)]
    filter_semver: Option<String>,
    #[arg(short, long, value_enum)]
    output: Option<Output>,
    #[command(flatten)]
    creds: Creds,
}

#[derive(clap::Args, Debug)]
struct ArtifactDigest {
    /// The artifact, `oci://<host>/<repo>[:tag]` (default tag `latest`).
    artifact_url: String,
    #[arg(short, long, value_enum)]
    output: Option<Output>,
    #[command(flatten)]
    creds: Creds,
}

/// `timoni registry …`.
#[derive(clap::Args, Debug)]
pub struct RegistryArgs {
    #[command(subcommand)]
    command: RegistryCommand,
}

#[derive(Subcommand, Debug)]
enum RegistryCommand {
    /// Store registry credentials in the docker config.
    Login {
        registry: String,
        #[arg(short, long)]
        username: String,
        #[arg(short, long, conflicts_with = "password_stdin")]
        password: Option<String>,
        /// Read the password from stdin.
        #[arg(long)]
        password_stdin: bool,
    },
    /// Remove registry credentials from the docker config.
    Logout { registry: String },
}

pub(crate) fn annotations(pairs: &[String]) -> Result<BTreeMap<String, String>> {
    pairs
        .iter()
        .map(|p| match p.split_once('=') {
            Some((k, v)) if !k.is_empty() => Ok((k.to_string(), v.to_string())),
            _ => bail!("invalid annotation {p:?}: expected key=value"),
        })
        .collect()
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
            let is_module_dir = a.module_dir.join("cue.mod").is_dir();
            let reg = settings.registry(&url, a.creds.get())?;
            let spin = output::spinner("pushing module");
            let pushed = if a.module_dir.is_file()
                || !is_module_dir && a.module_dir.join("index.json").is_file()
            {
                if !a.annotations.is_empty() || a.resolve_symlinks {
                    bail!(
                        "--annotation and --resolve-symlinks apply when building: give them to mod build"
                    );
                }
                oci::push_module_archive(&reg, &a.module_dir, &url, a.version.as_deref(), a.latest)?
            } else {
                let Some(version) = &a.version else {
                    bail!("--version is required to push a module directory");
                };
                let sde = &settings.source_date_epoch;
                oci::push_module(
                    &reg,
                    &a.module_dir,
                    &url,
                    version,
                    a.latest,
                    &annotations(&a.annotations)?,
                    sde.as_deref(),
                    a.resolve_symlinks,
                )?
            };
            drop(spin);
            match a.output {
                Some(o) => render(&pushed, o)?,
                None => log_artifact(&pushed.url, &pushed.digest),
            }
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
            oci::pull_module(&reg, &url, version, &a.output, &settings.cache())?;
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

/// Prints a table of versions or tags; the digest column only if `digest` (`--with-digest`).
fn table(headers: &[&str], digest: bool, rows: impl Iterator<Item = Vec<String>>) {
    let keep = if digest { headers.len() } else { 1 };
    let rows: Vec<Vec<String>> = rows
        .map(|mut r| {
            r.truncate(keep);
            r
        })
        .collect();
    output::print_table(&headers[..keep], &rows);
}

/// Timoni's two lines after building or pushing an artifact.
fn log_artifact(url: &str, digest: &str) {
    output::info(format!("artifact: {}", subject(url)));
    output::info(format!("digest: {}", subject(digest)));
}

/// Runs `timoni artifact push|pull|tag|list|digest|build`.
pub fn run_artifact(args: ArtifactArgs, settings: &Settings) -> Result<ExitCode> {
    match args.command {
        ArtifactCommand::Build(a) => {
            let tags = if a.tags.is_empty() {
                vec!["latest".to_string()]
            } else {
                a.tags
            };
            let sde = &settings.source_date_epoch;
            let image = oci::build_artifact_image(
                &a.filepath,
                &a.content_type,
                &annotations(&a.annotations)?,
                sde.as_deref(),
                a.resolve_symlinks,
            )?;
            oci::write_image(&image, &tags, &a.output, a.format.into())?;
            log_artifact(&a.output.display().to_string(), &image.digest);
        }
        ArtifactCommand::Push(a) => {
            let url = ArtifactUrl::parse(&a.artifact_url)?;
            let reg = settings.registry(&url, a.creds.get())?;
            let sde = &settings.source_date_epoch;
            let spin = output::spinner("pushing artifact");
            let pushed = oci::push_artifact(
                &reg,
                &a.filepath,
                &url,
                &a.tags,
                &a.content_type,
                &annotations(&a.annotations)?,
                sde.as_deref(),
                a.resolve_symlinks,
            )?;
            drop(spin);
            match a.output {
                Some(o) => {
                    let mut v = serde_json::to_value(&pushed)?;
                    v.as_object_mut()
                        .expect("a struct")
                        .insert("url".into(), url.with_tag(&pushed.tag).to_string().into());
                    render(&v, o)?
                }
                None => log_artifact(&url.with_tag(&pushed.tag).to_string(), &pushed.digest),
            }
        }
        ArtifactCommand::Pull(a) => {
            let url = ArtifactUrl::parse(&a.artifact_url)?;
            let reg = settings.registry(&url, a.creds.get())?;
            let spin = output::spinner("pulling artifact");
            oci::pull_artifact(
                &reg,
                &url,
                a.content_type.as_deref(),
                &a.output,
                &settings.cache(),
            )?;
            drop(spin);
            output::info(format!(
                "extracted: {}",
                subject(&a.output.display().to_string())
            ));
        }
        ArtifactCommand::Tag(a) => {
            let url = ArtifactUrl::parse(&a.artifact_url)?;
            let reg = settings.registry(&url, a.creds.get())?;
            let spin = output::spinner("tagging artifact");
            oci::tag_artifact(&reg, &url, &a.tags)?;
            drop(spin);
            for t in &a.tags {
                output::info(format!("tagged: {}", subject(&url.with_tag(t).to_string())));
            }
        }
        ArtifactCommand::List(a) => {
            let url = ArtifactUrl::parse(&a.artifact_url)?;
            let reg = settings.registry(&url, a.creds.get())?;
            let spin = output::spinner("fetching tags");
            let list = oci::list_artifact_tags(
                &reg,
                &url,
                a.with_digest,
                a.limit,
                a.filter_regex.as_deref(),
                a.filter_semver.as_deref(),
            )?;
            drop(spin);
            match a.output {
                Some(o) => render(&list, o)?,
                None => {
                    let rows = list.iter().map(|t| vec![t.tag.clone(), t.digest.clone()]);
                    table(&["tag", "digest"], a.with_digest, rows);
                }
            }
        }
        ArtifactCommand::Digest(a) => {
            let url = ArtifactUrl::parse(&a.artifact_url)?;
            let reg = settings.registry(&url, a.creds.get())?;
            let spin = output::spinner("resolving digest");
            let r = oci::artifact_digest(&reg, &url)?;
            drop(spin);
            match a.output {
                Some(o) => render(&r, o)?,
                None => log_artifact(&url.to_string(), &r.digest),
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Runs `timoni registry login|logout`.
pub fn run_registry(args: RegistryArgs, settings: &Settings) -> Result<ExitCode> {
    let path = settings
        .docker_config
        .clone()
        .context("neither $DOCKER_CONFIG nor $HOME is set: no docker config to write")?;
    match args.command {
        RegistryCommand::Login {
            registry,
            username,
            password,
            password_stdin,
        } => {
            let password = match (password, password_stdin) {
                (Some(p), false) => p,
                (None, true) => settings
                    .stdin("the password")?
                    .trim_end_matches(['\r', '\n'])
                    .to_string(),
                _ => bail!("registry login needs --password or --password-stdin"),
            };
            oci::login(&path, &registry, &username, &password)?;
            output::info(format!(
                "logged in to {} ({})",
                subject(&registry),
                path.display()
            ));
        }
        RegistryCommand::Logout { registry } => {
            if oci::logout(&path, &registry)? {
                output::info(format!("logged out of {}", subject(&registry)));
            } else {
                output::info(format!("not logged in to {}", subject(&registry)));
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
