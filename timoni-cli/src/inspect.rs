//! `timoni inspect module|values|resources NAME`: what an instance's inventory records.

use std::process::ExitCode;

use timoni_core::cluster::ops::stored_instance;
use timoni_core::render;

use crate::settings::Settings;

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    what: What,
}

#[derive(clap::Subcommand, Debug)]
enum What {
    /// Print the module reference of an instance as YAML.
    Module(Target),
    /// Print the values of an instance.
    Values(Target),
    /// Print the objects of an instance's inventory.
    Resources(Target),
}

#[derive(clap::Args, Debug)]
struct Target {
    /// The instance name.
    name: String,
}

pub fn run(args: Args, settings: &Settings) -> anyhow::Result<ExitCode> {
    let (what, t) = match &args.what {
        What::Module(t) => ("module", t),
        What::Values(t) => ("values", t),
        What::Resources(t) => ("resources", t),
    };
    let cluster = settings.connect()?;
    let rec = stored_instance(&cluster, &t.name, &settings.namespace)?.instance;
    match what {
        "module" => {
            let mut m = serde_json::json!({
                "name": rec.module.name,
                "repository": rec.module.repository,
                "version": rec.module.version,
                "digest": rec.module.digest,
            });
            if rec.module.digest.is_empty() {
                m.as_object_mut().map(|o| o.remove("digest"));
            }
            let data = timoni_core::cue_eval::decode::json(&m.to_string())
                .map_err(|e| anyhow::anyhow!("{}", e.in_file("module")))?;
            print!("{}", render::object_yaml(&data));
        }
        "values" => println!("values: {}", rec.values),
        _ => {
            let rows: Vec<Vec<String>> = rec
                .inventory
                .refs()
                .into_iter()
                .map(|r| {
                    let ns = if r.namespace.is_empty() {
                        "-".to_string()
                    } else {
                        r.namespace.clone()
                    };
                    vec![
                        format!("{}/{}", r.kind.to_lowercase(), r.name),
                        ns,
                        r.api_version.clone(),
                    ]
                })
                .collect();
            crate::output::print_table(&["name", "namespace", "API version"], &rows);
        }
    }
    Ok(ExitCode::SUCCESS)
}
