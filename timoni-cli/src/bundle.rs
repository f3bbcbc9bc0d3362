//! `timoni bundle build|vet`: bundles of module instances (`file://` or `oci://`), with runtime
//! values from the environment, the runtime files and the objects their queries read from each
//! selected cluster (`--runtime-cluster`, `--runtime-group`).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use timoni_core::bundle::{self, BundleRequest, SourceFile};
use timoni_core::cluster::runtime_values::runtime_values;
use timoni_core::render;

use crate::flags::RuntimeFlags;
use crate::settings::Settings;
use crate::spool::{self, Kept, Spool};

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
    #[command(flatten)]
    runtime: RuntimeFlags,
}

#[derive(clap::Subcommand, Debug)]
enum Command {
    /// Build the instances of a bundle and print their objects.
    #[command(alias = "template")]
    Build(BuildArgs),
    /// Validate a bundle and list its instances.
    #[command(alias = "lint")]
    Vet(VetArgs),
    /// Apply the instances of a bundle on the runtime's clusters.
    Apply(crate::bundle_cluster::ApplyArgs),
    /// Delete the instances of a bundle from the runtime's clusters.
    #[command(aliases = ["rm", "uninstall"])]
    Delete(crate::bundle_cluster::DeleteArgs),
    /// Show the status of a bundle's instances on the runtime's clusters.
    Status(crate::bundle_cluster::StatusArgs),
}

#[derive(clap::Args, Debug)]
struct BuildArgs {
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
    /// Write one YAML file per object under DIR/<instance>/ instead of printing.
    #[arg(long = "output-dir", value_name = "DIR")]
    output_dir: Option<PathBuf>,
    /// How many instances to build at once (default: the CPUs, at most 8).
    #[arg(long = "concurrency")]
    concurrency: Option<usize>,
    /// Replace the data of Secrets with '***' (not with --output-dir).
    #[arg(long = "mask-secrets")]
    mask_secrets: bool,
    #[command(flatten)]
    creds: crate::flags::Creds,
    #[command(flatten)]
    verify: crate::sign::VerifyFlags,
}

#[derive(clap::Args, Debug)]
struct VetArgs {
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
    /// Print the evaluated bundle as CUE.
    #[arg(long = "print-value")]
    print_value: bool,
}

pub fn run(args: Args, settings: &Settings) -> anyhow::Result<ExitCode> {
    let rt = &args.runtime;
    match args.command {
        Command::Build(a) => build(a, rt, settings),
        Command::Vet(a) => vet(a, rt, settings),
        Command::Apply(a) => crate::bundle_cluster::apply(a, rt, settings),
        Command::Delete(a) => crate::bundle_cluster::delete(a, rt, settings),
        Command::Status(a) => crate::bundle_cluster::status(a, rt, settings),
    }
}

/// The core request for bundle files `files` with the runtime flags.
pub fn request(
    runtime: &RuntimeFlags,
    settings: &Settings,
    files: Vec<SourceFile>,
) -> anyhow::Result<BundleRequest> {
    let runtime_files = runtime
        .runtime
        .iter()
        .map(|p| SourceFile::read(p).map_err(|e| anyhow::anyhow!("{e}")))
        .collect::<anyhow::Result<_>>()?;
    Ok(BundleRequest {
        files,
        runtime_files,
        env: runtime.runtime_from_env.then(|| settings.env_vars()),
        cluster: runtime.runtime_cluster.clone(),
        group: runtime.runtime_group.clone(),
        workdir: runtime.workdir.clone(),
    })
}

fn fail(e: timoni_core::Error) -> anyhow::Error {
    anyhow::anyhow!("{}", crate::relative(&e.to_string()))
}

fn build(args: BuildArgs, rt: &RuntimeFlags, settings: &Settings) -> anyhow::Result<ExitCode> {
    let req = request(rt, settings, settings.source_files(&args.files)?)?;
    let concurrency = args.concurrency.unwrap_or_else(bundle::default_concurrency);
    let fetcher = args
        .verify
        .module_fetcher(settings.fetcher(args.creds.get(), true))?;
    let clusters = runtime_values(&settings.connector(), &req).map_err(fail)?;
    // Each instance is written out (with `--output-dir`) or rendered on the thread that built
    // it, and only what is reported is kept until every instance is built, as in Timoni: the
    // files of the instances built before a failing one are left, and nothing is printed.
    let (output_dir, mask_secrets) = (args.output_dir.as_deref(), args.mask_secrets);
    let spool = Spool::new(spool::IN_MEMORY);
    let (_cluster, _bundle, outputs) = bundle::build_bundle_each(
        &req,
        clusters,
        &args.package,
        concurrency,
        Some(fetcher.as_ref()),
        &|inst| match output_dir {
            Some(dir) => write_instance_files(inst, dir).map(Output::Written),
            None => instance_section(inst, mask_secrets).map(|s| Output::Section(spool.keep(s))),
        },
    )
    .map_err(fail)?;
    let outputs = outputs.into_iter().collect::<anyhow::Result<Vec<_>>>()?;
    // Each instance's section: `---`, `# Instance: NAME`, `---`, then its objects between
    // `---` lines; an empty line between sections.
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for (i, output) in outputs.iter().enumerate() {
        match output {
            Output::Written(message) => crate::output::info(message),
            Output::Section(section) => {
                if i > 0 {
                    out.write_all(b"\n")?;
                }
                spool.write_to(section, &mut out)?;
            }
        }
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// What `bundle build` keeps of an instance until every instance is built.
enum Output {
    /// The report of its files written with `--output-dir`.
    Written(String),
    /// Its section of the output.
    Section(Kept),
}

/// Writes an instance's objects with `--output-dir`, one file per object in a directory named
/// after the instance, and returns the line that reports them.
fn write_instance_files(
    inst: timoni_core::instance::BuiltInstance,
    dir: &std::path::Path,
) -> anyhow::Result<String> {
    let sub = dir.join(&inst.name);
    let mut objects = inst.into_objects();
    render::sort_for_apply(&mut objects);
    let with_ns = render::spans_namespaces(&objects);
    std::fs::create_dir_all(&sub).with_context(|| format!("creating {}", sub.display()))?;
    for o in &objects {
        let path = sub.join(render::resource_file_name(o, with_ns));
        std::fs::write(&path, render::object_yaml(o))
            .with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(format!(
        "exported {} resources to {}",
        objects.len(),
        sub.display()
    ))
}

/// An instance's section of `bundle build`'s output, without the empty line between sections.
fn instance_section(
    inst: timoni_core::instance::BuiltInstance,
    mask_secrets: bool,
) -> anyhow::Result<Vec<u8>> {
    let mut text = format!("---\n# Instance: {}\n---\n", inst.name).into_bytes();
    let mut objects = inst.into_objects();
    render::sort_for_apply(&mut objects);
    if mask_secrets {
        objects = objects.iter().map(render::mask_secret).collect();
    }
    render::write_objects_yaml_between(&mut text, &objects)?;
    Ok(text)
}

fn vet(args: VetArgs, rt: &RuntimeFlags, settings: &Settings) -> anyhow::Result<ExitCode> {
    let _ = &args.package;
    let req = request(rt, settings, settings.source_files(&args.files)?)?;
    let clusters = runtime_values(&settings.connector(), &req).map_err(fail)?;
    let results = bundle::vet_bundle_for(&req, clusters).map_err(fail)?;
    for (cluster, b) in &results {
        if args.print_value {
            let text = if cluster.is_default() {
                format!("bundle: {}\n", b.cue)
            } else {
                format!("{:?}: bundle: {}\n", cluster.name, b.cue)
            };
            let text = timoni_core::cue_eval::format_source(&text).unwrap_or(text);
            print!("{text}");
            continue;
        }
        // Timoni's log callers: `b:<bundle>`, `c:<cluster>` for named clusters, `i:<instance>`.
        let cluster = if cluster.is_default() {
            ""
        } else {
            &cluster.name
        };
        let log = crate::output::Log::new().bundle(&b.name).cluster(cluster);
        for i in &b.instances {
            log.clone().instance(&i.name).info("instance is valid");
        }
        log.info("bundle is valid");
    }
    Ok(ExitCode::SUCCESS)
}
