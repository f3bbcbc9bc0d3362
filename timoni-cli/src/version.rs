//! `timoni version`: the API version, the client version and the CUE language version.

use std::process::ExitCode;

use timoni_core::cue_eval::encode::{Data, Field};
use timoni_core::render;

/// The CUE language version this evaluator implements.
const CUE_VERSION: &str = "v0.17.1";

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The output format.
    #[arg(short = 'o', long = "output", value_enum, default_value_t = crate::build::Format::Yaml)]
    output: crate::build::Format,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let info = Data::Struct(vec![
        Field::new("api", Data::string("timoni.sh/v1alpha1")),
        Field::new("client", Data::string(env!("CARGO_PKG_VERSION"))),
        Field::new("cue", Data::string(CUE_VERSION)),
    ]);
    match args.output {
        crate::build::Format::Yaml => print!("{}", render::object_yaml(&info)),
        crate::build::Format::Json => {
            println!(
                "{}",
                timoni_core::cue_eval::encode::to_json_indent(&info, true).trim_end()
            )
        }
    }
    Ok(ExitCode::SUCCESS)
}
