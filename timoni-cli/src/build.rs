//! `timoni build NAME MODULE` (alias `template`): renders the objects of every apply set of an
//! instance of a local or `oci://` module to stdout, as YAML documents each followed by `---`,
//! or as a JSON `List`.

use std::io::Write;
use std::process::ExitCode;

use timoni_core::instance::{self, BuildOptions};
use timoni_core::render;

use crate::positions;
use crate::settings::Settings;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The instance name.
    name: String,
    /// The module: a local directory, a file:// URL or an oci://<host>/<repo>[:tag|@digest] URL.
    module: String,
    /// The module version (OCI modules only; ignored for local modules).
    #[arg(short = 'v', long = "version", default_value = "latest")]
    version: String,
    /// The module digest (OCI modules only; ignored for local modules).
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
    /// The output format.
    #[arg(short = 'o', long = "output", value_enum, default_value_t = Format::Yaml)]
    output: Format,
    /// Replace the data of Secrets with '***'.
    #[arg(long = "mask-secrets")]
    mask_secrets: bool,
    /// Build with the debug tag (use debug_values.cue).
    #[arg(long)]
    debug: bool,
    #[command(flatten)]
    creds: crate::flags::Creds,
    #[command(flatten)]
    verify: crate::sign::VerifyFlags,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Yaml,
    Json,
}

pub fn run(args: Args, settings: &Settings) -> anyhow::Result<ExitCode> {
    let mut opts = BuildOptions::new(&args.name, &settings.namespace, &args.module);
    opts.package = args.package;
    opts.values = settings.values_sources(&args.values)?;
    opts.debug = args.debug;
    opts.version = Some(args.version);
    opts.digest = args.digest;
    opts.leave_graph_to_exit = true;
    let fetcher = args
        .verify
        .module_fetcher(settings.fetcher(args.creds.get(), true))?;
    let built = instance::build_with(&opts, Some(fetcher.as_ref())).map_err(|e| {
        let msg = positions::in_user_files(&e, &opts.module, &opts.package, &opts.values);
        anyhow::anyhow!("build failed: {}", crate::relative(&msg))
    })?;
    let mut objects = built.into_objects();
    if args.mask_secrets {
        objects = objects.iter().map(render::mask_secret).collect();
    }
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    match args.output {
        Format::Yaml => render::write_objects_yaml(&mut out, &objects)?,
        Format::Json => render::write_objects_json(&mut out, &mut objects)?,
    }
    out.flush()?;
    // The process ends here: freeing the objects would only cost time.
    std::mem::forget(objects);
    Ok(ExitCode::SUCCESS)
}
