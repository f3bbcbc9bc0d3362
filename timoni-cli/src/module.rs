//! `timoni mod …`: the module command group. This file holds `mod vet` and `mod show
//! config|readme`; `mod init` and `mod vendor` live in `vendor.rs`, the registry commands
//! (`build`, `push`, `pull`, `list`) in `module_oci.rs`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use timoni_core::config_doc;
use timoni_core::instance::{self, BuildOptions};
use timoni_core::meta::get_str;

use crate::output;
use crate::settings::Settings;

/// `timoni mod …`.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand, Debug)]
enum Command {
    /// Validate a local module by building it.
    #[command(alias = "lint")]
    Vet(VetArgs),
    /// Show information about a module.
    Show(ShowArgs),
    #[command(flatten)]
    Local(crate::vendor::Command),
    #[command(flatten)]
    Oci(crate::module_oci::ModCommand),
}

pub fn run(args: Args, settings: &Settings) -> anyhow::Result<ExitCode> {
    match args.command {
        Command::Vet(a) => vet(a, settings),
        Command::Show(a) => show(a, settings),
        Command::Local(c) => crate::vendor::run_command(c, settings),
        Command::Oci(c) => crate::module_oci::run_mod_command(c, settings),
    }
}

#[derive(clap::Args, Debug)]
pub struct VetArgs {
    /// The module directory.
    #[arg(default_value = ".")]
    path: String,
    /// The instance name used for the build.
    #[arg(long = "name", default_value = "default")]
    name: String,
    /// The CUE package of the instance.
    #[arg(short = 'p', long = "package", default_value = "main")]
    package: String,
    /// Build with the debug tag (use debug_values.cue).
    #[arg(long)]
    debug: bool,
    /// Values files (.cue, .yaml, .yml, .json, or - for stdin), merged in order; repeatable or
    /// comma-separated.
    #[arg(
        short = 'f',
        long = "values",
        value_name = "FILE",
        value_delimiter = ','
    )]
    values: Vec<String>,
}

#[derive(clap::Args, Debug)]
pub struct ShowArgs {
    #[command(subcommand)]
    command: ShowCommand,
}

#[derive(clap::Subcommand, Debug)]
enum ShowCommand {
    /// Print the module's #Config schema, or write it as a table to a README.
    Config(ShowConfigArgs),
    /// Print the README.md of a module (a local directory or an OCI artifact).
    Readme(ShowReadmeArgs),
}

#[derive(clap::Args, Debug)]
struct ShowReadmeArgs {
    /// The module: a directory, a file:// URL or an oci://<host>/<repo>[:tag|@digest] URL.
    #[arg(default_value = ".")]
    path: String,
    /// The module version (OCI modules only).
    #[arg(short = 'v', long = "version", default_value = "latest")]
    version: String,
    #[command(flatten)]
    creds: crate::flags::Creds,
}

#[derive(clap::Args, Debug)]
struct ShowConfigArgs {
    /// The module: a directory, a file:// URL or an oci://<host>/<repo>[:tag|@digest] URL.
    #[arg(default_value = ".")]
    path: String,
    /// The module version (OCI modules only).
    #[arg(short = 'v', long = "version", default_value = "latest")]
    version: String,
    /// The module digest (OCI modules only).
    #[arg(short = 'd', long = "digest")]
    digest: Option<String>,
    #[command(flatten)]
    creds: crate::flags::Creds,
    /// Write the configuration table under the "Configuration" section of this Markdown file.
    #[arg(short = 'o', long = "output", value_name = "FILE.md")]
    output: Option<PathBuf>,
    /// The CUE package of the instance.
    #[arg(short = 'p', long = "package", default_value = "main")]
    package: String,
}

/// `timoni mod vet`: builds the module and reports its objects and images on stderr.
fn vet(args: VetArgs, settings: &Settings) -> anyhow::Result<ExitCode> {
    let mut opts = BuildOptions::new(&args.name, &settings.namespace, &args.path);
    opts.package = args.package;
    // Timoni vets with the debug values when the module has them, else with the defaults.
    let has_debug = Path::new(&args.path).join("debug_values.cue").is_file();
    opts.debug = args.debug && has_debug;
    opts.values = settings.values_sources(&args.values)?;
    output::info(match (args.debug, has_debug) {
        (true, true) => "vetting with debug values",
        (true, false) => "vetting with default values (debug values not found)",
        _ => "vetting with default values",
    });
    let built = instance::build(&opts).map_err(|e| {
        let msg = crate::positions::in_user_files(&e, &opts.module, &opts.package, &opts.values);
        anyhow::anyhow!("build failed: {}", crate::relative(&msg))
    })?;
    if built.each_object().next().is_none() {
        anyhow::bail!("build failed, no objects to apply");
    }
    for o in built.each_object() {
        let kind = get_str(o, &["kind"]).unwrap_or_default();
        let name = get_str(o, &["metadata", "name"]).unwrap_or_default();
        let object = match get_str(o, &["metadata", "namespace"]) {
            Some(ns) if !ns.is_empty() => format!("{kind}/{ns}/{name}"),
            _ => format!("{kind}/{name}"),
        };
        output::info(format!(
            "{} {}",
            output::subject(&object),
            output::note("valid resource")
        ));
    }
    for image in &built.images {
        let verdict = if image.contains("@sha") {
            output::note("valid image")
        } else {
            output::caution("valid image (digest missing)")
        };
        output::info(format!("{} {verdict}", output::subject(image)));
    }
    output::info(format!(
        "{} {}",
        output::subject(&built.module_name),
        output::note("valid module")
    ));
    Ok(ExitCode::SUCCESS)
}

/// `timoni mod show readme`: the module's README.md on stdout, as Timoni prints it.
fn show_readme(args: ShowReadmeArgs, settings: &Settings) -> anyhow::Result<ExitCode> {
    let fetcher = settings.fetcher(args.creds.get(), true);
    let spin = args
        .path
        .starts_with("oci://")
        .then(|| output::spinner(format!("pulling {}", args.path)));
    let source = instance::open_module(&args.path, Some(&args.version), None, Some(&fetcher))
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    drop(spin);
    let readme = source.dir.join("README.md");
    let text = std::fs::read(&readme)
        .map_err(|e| anyhow::anyhow!("reading README.md from module {} failed: {e}", args.path))?;
    output::print_stdout(&String::from_utf8_lossy(&text));
    Ok(ExitCode::SUCCESS)
}

/// `timoni mod show …`.
fn show(args: ShowArgs, settings: &Settings) -> anyhow::Result<ExitCode> {
    let args = match args.command {
        ShowCommand::Config(a) => a,
        ShowCommand::Readme(a) => return show_readme(a, settings),
    };
    if args.output.is_some() && args.path.starts_with("oci://") {
        anyhow::bail!(
            "--output is not supported for OCI modules, the README is published with the artifact"
        );
    }
    let fetcher = settings.fetcher(args.creds.get(), true);
    let source = instance::open_module(
        &args.path,
        Some(&args.version),
        args.digest.as_deref(),
        Some(&fetcher),
    )
    .map_err(|e| anyhow::anyhow!("{e}"))?;
    let doc = config_doc::config_doc(&source.dir, &args.package)
        .map_err(|e| anyhow::anyhow!("{}", crate::relative(&e.to_string())))?;
    match &args.output {
        None => print!("{}", doc.cue),
        Some(path) => {
            let old = std::fs::read_to_string(path).unwrap_or_default();
            let new = config_doc::update_readme(&old, &doc.rows);
            std::fs::write(path, new).with_context(|| format!("writing {}", path.display()))?;
            output::info(format!(
                "{} updated",
                output::subject(&path.display().to_string())
            ));
        }
    }
    Ok(ExitCode::SUCCESS)
}
