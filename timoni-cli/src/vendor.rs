//! The local module subcommands of `timoni mod`: `mod init NAME [PATH]`, `mod vendor k8s [PATH]`
//! and `mod vendor crd [-f FILE] [PATH]`.
//!
//! * `mod init` writes the starter blueprint embedded in the binary to `PATH/NAME` (no network),
//!   or with `-b oci://...` a blueprint module pulled from a registry.
//! * `mod vendor k8s -v 1.xx` pulls the Kubernetes schema artifact of that minor version into
//!   `PATH/cue.mod/gen` as Timoni does, from `--repository`, `TIMONI_K8S_SCHEMA_REPOSITORY` or
//!   Timoni's `oci://ghcr.io/stefanprodan/timoni/kubernetes-schema`. Without `-v` it copies the
//!   schemas embedded in the binary (core/v1, apps/v1, meta/v1 of one version; no network).
//! * `mod vendor crd` converts the CRDs of a local YAML file into
//!   `PATH/cue.mod/gen/<group>/<kind>/<version>/types_gen.cue`. Reading the CRDs from a URL, as
//!   Timoni can, is not supported: there is no network access here.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use timoni_core::blueprint;
use timoni_core::oci::{self, ArtifactUrl};
use timoni_core::vendor::{crd, k8s_artifact};

use crate::output;
use crate::settings::Settings;

/// The local subcommands of `timoni mod`: `init` and `vendor`.
#[derive(clap::Subcommand, Debug)]
pub enum Command {
    /// Create a module from the starter blueprint embedded in the binary.
    Init(InitArgs),
    /// Vendor CUE schemas into a module's cue.mod/gen.
    Vendor(VendorArgs),
}

#[derive(clap::Args, Debug)]
pub struct InitArgs {
    /// The module name; the module is written to PATH/NAME.
    name: String,
    /// The directory that gets the module directory.
    #[arg(default_value = ".")]
    path: PathBuf,
    /// Pull the blueprint from this registry artifact (`oci://host/repo[:tag]`) instead of
    /// writing the starter embedded in the binary.
    #[arg(short = 'b', long = "blueprint", value_name = "URL")]
    blueprint: Option<String>,
}

#[derive(clap::Args, Debug)]
pub struct VendorArgs {
    #[command(subcommand)]
    command: VendorCommand,
}

#[derive(clap::Subcommand, Debug)]
enum VendorCommand {
    /// Vendor CUE schemas generated from Kubernetes CRDs.
    #[command(alias = "crds")]
    Crd(CrdArgs),
    /// Vendor Kubernetes API CUE schemas: pulled from a registry with -v, else the ones
    /// embedded in the binary.
    K8s(K8sArgs),
}

#[derive(clap::Args, Debug)]
struct K8sArgs {
    /// The module directory (it must have a cue.mod directory).
    #[arg(default_value = ".")]
    path: PathBuf,
    /// The Kubernetes minor version e.g. 1.28 (or `latest`), pulled from the registry; without
    /// it, the schemas embedded in the binary (core/v1, apps/v1, meta/v1) are written.
    #[arg(short, long)]
    version: Option<String>,
    /// The repository of the schema artifacts (tagged v1.xx); default:
    /// $TIMONI_K8S_SCHEMA_REPOSITORY, else Timoni's.
    #[arg(long, value_name = "URL")]
    repository: Option<String>,
}

#[derive(clap::Args, Debug)]
struct CrdArgs {
    /// The module directory (it must have a cue.mod directory).
    #[arg(default_value = ".")]
    path: PathBuf,
    /// The path to a YAML file with Kubernetes CRDs (other documents are skipped).
    #[arg(short, long)]
    file: Option<String>,
}

/// Runs `timoni mod init` or `timoni mod vendor ...`.
pub fn run_command(command: Command, settings: &Settings) -> anyhow::Result<ExitCode> {
    match command {
        Command::Init(a) => init(a, settings),
        Command::Vendor(VendorArgs {
            command: VendorCommand::Crd(a),
        }) => vendor_crd(a),
        Command::Vendor(VendorArgs {
            command: VendorCommand::K8s(a),
        }) => vendor_k8s(a, settings),
    }
}

fn vendor_k8s(args: K8sArgs, settings: &Settings) -> anyhow::Result<ExitCode> {
    // Printed as Timoni prints it: `cue.mod/gen/k8s.io/api`, not `./cue.mod/...`.
    let dir = args.path.join("cue.mod/gen/k8s.io/api");
    let dir = dir.strip_prefix(".").unwrap_or(&dir).display().to_string();
    let Some(version) = &args.version else {
        let files = blueprint::vendor_k8s(&args.path)?;
        output::info(format!(
            "schemas vendored: {} ({} files, Kubernetes {}, embedded)",
            output::subject(&dir),
            files.len(),
            blueprint::K8S_SCHEMA_VERSION
        ));
        return Ok(ExitCode::SUCCESS);
    };
    let repository = args
        .repository
        .as_deref()
        .or(settings.k8s_schema_repository.as_deref())
        .unwrap_or(k8s_artifact::SCHEMA_REPOSITORY);
    let url = k8s_artifact::schema_url(repository, version)?;
    let reg = settings.registry(&url, None)?;
    let spin = output::spinner(format!("importing schemas from {url}"));
    k8s_artifact::pull(&reg, &url, &args.path, &settings.cache())?;
    drop(spin);
    output::info(format!("schemas vendored: {}", output::subject(&dir)));
    Ok(ExitCode::SUCCESS)
}

fn init(args: InitArgs, settings: &Settings) -> anyhow::Result<ExitCode> {
    let (dir, _) = match &args.blueprint {
        None => blueprint::init(&args.name, &args.path)?,
        Some(url) => {
            let url = ArtifactUrl::parse(url)?;
            let reg = settings.registry(&url, None)?;
            let tmp = tempfile::tempdir().context("creating a temporary directory")?;
            let spin = output::spinner(format!("pulling template from {url}"));
            oci::pull_artifact(&reg, &url, None, tmp.path(), &settings.cache())?;
            drop(spin);
            let files = blueprint::read_tree(tmp.path())?;
            blueprint::init_from(&args.name, &args.path, &files)?
        }
    };
    output::info(format!("module initialized at {}", dir.display()));
    Ok(ExitCode::SUCCESS)
}

fn vendor_crd(args: CrdArgs) -> anyhow::Result<ExitCode> {
    let Some(file) = args.file else {
        bail!("no CRD file given: pass one with -f/--file");
    };
    if file.starts_with("https://") || file.starts_with("http://") {
        bail!(
            "reading CRDs from a URL is not supported (no network access): download {file} and pass its path"
        );
    }
    if !args.path.join("cue.mod").is_dir() {
        bail!(
            "cue.mod not found in the module path {}",
            args.path.display()
        );
    }
    if !Path::new(&file).exists() {
        bail!("path not found: {file}");
    }
    let text = std::fs::read_to_string(&file).with_context(|| format!("reading {file}"))?;
    let files = crd::generate(&text, &file).with_context(|| file.clone())?;
    if files.is_empty() {
        bail!("{file} has no CustomResourceDefinition");
    }
    crd::write(&args.path, &files)?;
    for f in &files {
        output::info(format!("schemas vendored: {}", output::subject(&f.key)));
    }
    Ok(ExitCode::SUCCESS)
}
