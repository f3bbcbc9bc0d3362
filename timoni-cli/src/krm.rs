//! `timoni fn` and `timoni fn vet`: Timoni as a KRM function (kustomize/kpt exec functions). Reads
//! a `ResourceList` on stdin, calls `timoni_core::krm::run` or `vet`, and writes the
//! `ResourceList` back on stdout with the results; error results are also printed on stderr and
//! make the exit code non-zero. Hermetic by default: `oci://` modules come from the local OCI
//! cache unless `--allow-network` is given.

use std::process::ExitCode;

use timoni_core::krm::{self, FnOptions, FnOutput, Severity};

/// `timoni fn`.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    command: Option<Command>,
    /// Allow registry access to fetch oci:// modules missing from the local cache.
    #[arg(long, global = true)]
    allow_network: bool,
    #[command(flatten)]
    creds: crate::flags::Creds,
}

#[derive(clap::Subcommand, Debug)]
enum Command {
    /// Validate every item of the ResourceList against CUE schemas (the functionConfig
    /// module's cue.mod/gen, else the Kubernetes schemas shipped in timoni).
    Vet,
}

pub fn run(args: Args, settings: &crate::settings::Settings) -> anyhow::Result<ExitCode> {
    let text = settings.stdin("the ResourceList")?;
    let fetcher = settings.fetcher(args.creds.get(), args.allow_network);
    let opts = FnOptions {
        fetcher: &fetcher,
        base_dir: std::env::current_dir()?,
    };
    let (config, output) = match krm::parse_resource_list(&text) {
        Err(msg) => (None, krm::input_error(msg)),
        Ok(list) => {
            let out = match args.command {
                None => krm::run(&list, &opts),
                Some(Command::Vet) => krm::vet(&list, &opts),
            };
            (list.function_config, out)
        }
    };
    print!("{}", krm::render_resource_list(config.as_ref(), &output));
    Ok(report(&output))
}

/// Prints the error and warning results on stderr; the exit code says whether one is an error.
fn report(output: &FnOutput) -> ExitCode {
    for r in &output.results {
        let mark = match r.severity {
            Severity::Error => "✗",
            Severity::Warning => "!",
            Severity::Info => continue,
        };
        let what = r
            .resource_ref
            .as_ref()
            .map(|rr| format!("{}/{}: ", rr.kind, rr.name))
            .unwrap_or_default();
        let field = r
            .field
            .as_ref()
            .map(|f| format!(" (field {f})"))
            .unwrap_or_default();
        eprintln!("{mark} {what}{}{field}", r.message);
    }
    if output.failed() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
