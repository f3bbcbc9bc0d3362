//! `timoni version`: the API version, the client version and the CUE language version, as the
//! map Timoni prints (keys sorted; YAML, or JSON indented by two spaces).

use std::process::ExitCode;

use timoni_core::cue_eval::encode::{Data, Field};
use timoni_core::render;

/// The CUE language version this evaluator implements, as Timoni prints it (without the `v`).
const CUE_VERSION: &str = "0.17.1";

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The output format.
    #[arg(short = 'o', long = "output", value_enum, default_value_t = crate::build::Format::Yaml)]
    output: crate::build::Format,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let fields = [
        ("api", "timoni.sh/v1alpha1"),
        ("client", env!("CARGO_PKG_VERSION")),
        ("cue", CUE_VERSION),
    ];
    match args.output {
        crate::build::Format::Yaml => {
            let info = Data::Struct(
                fields
                    .iter()
                    .map(|(k, v)| Field::new(*k, Data::string(*v)))
                    .collect(),
            );
            print!("{}", render::object_yaml(&info));
        }
        crate::build::Format::Json => {
            let info: serde_json::Map<String, serde_json::Value> = fields
                .iter()
                .map(|(k, v)| (k.to_string(), (*v).into()))
                .collect();
            println!("{}", serde_json::to_string_pretty(&info)?);
        }
    }
    Ok(ExitCode::SUCCESS)
}
