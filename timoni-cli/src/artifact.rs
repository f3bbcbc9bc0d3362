//! `timoni artifact build|push|pull|tag|list|digest`: clap structs, then one call into
//! `timoni_core::oci`, then rendering through `output.rs` (`-o json|yaml`, an aligned table, or
//! Timoni's log lines). The helpers `mod build|push|list` share live here too.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Result, bail};
use clap::{ArgAction, Subcommand, ValueEnum};
use timoni_core::oci::{self, ArtifactUrl, LayoutFormat};

use crate::flags::Creds;
use crate::output::{self, Format as Output, render, subject};
use crate::settings::Settings;
use crate::sign::{SignFlags, VerifyFlags, sign_pushed};

/// `--format` of `mod build` and `artifact build`.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub(crate) enum LocalFormat {
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
    #[command(flatten)]
    sign: SignFlags,
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
    #[command(flatten)]
    verify: VerifyFlags,
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

pub(crate) fn annotations(pairs: &[String]) -> Result<BTreeMap<String, String>> {
    pairs
        .iter()
        .map(|p| match p.split_once('=') {
            Some((k, v)) if !k.is_empty() => Ok((k.to_string(), v.to_string())),
            _ => bail!("invalid annotation {p:?}: expected key=value"),
        })
        .collect()
}

/// Prints a table of versions or tags; the digest column only if `digest` (`--with-digest`).
pub(crate) fn table(headers: &[&str], digest: bool, rows: impl Iterator<Item = Vec<String>>) {
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
pub(crate) fn log_artifact(url: &str, digest: &str) {
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
            let key = a.sign.resolve()?;
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
            sign_pushed(
                key.as_ref(),
                &url,
                &url.with_tag(&pushed.tag).to_string(),
                &pushed.digest,
                &settings.connect_options(a.creds.get()),
            )?;
        }
        ArtifactCommand::Pull(a) => {
            let url = ArtifactUrl::parse(&a.artifact_url)?;
            let reg = settings.registry(&url, a.creds.get())?;
            let connect = settings.connect_options(a.creds.get());
            let url = a
                .verify
                .verify_before_pull(&reg, &url, None, &connect)?
                .unwrap_or(url);
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
