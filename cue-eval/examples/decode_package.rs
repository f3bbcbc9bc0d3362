//! Loads a CUE package from a directory with `-t` tags, as `cue export -t env=prod` does, and
//! decodes one of its fields into a Rust struct with serde.
//!
//!     cargo run -p cue-eval --example decode_package -- [DIR] [TAG...]
//!
//! Without a directory it writes a small package into a temporary directory first.

use std::collections::BTreeMap;

#[derive(serde::Deserialize)]
struct Deployment {
    image: String,
    replicas: u32,
    environment: BTreeMap<String, String>,
}

const PACKAGE: &str = r#"package app

env: *"dev" | "prod" @tag(env)

deployment: {
	image:    "nginx:1.27"
	replicas: [if env == "prod" {3}, 1][0]
	environment: LOG_LEVEL: [if env == "prod" {"warn"}, "debug"][0]
}
"#;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (dir, tags): (std::path::PathBuf, Vec<String>) = match args.next() {
        Some(d) => (d.into(), args.collect()),
        None => {
            let d = std::env::temp_dir().join(format!("cue-eval-example-{}", std::process::id()));
            std::fs::create_dir_all(&d)?;
            std::fs::write(d.join("app.cue"), PACKAGE)?;
            (d, vec!["env=prod".to_string()])
        }
    };
    let ctx = cue_eval::Context::new();
    let mut loader = ctx.loader(&dir);
    for t in tags {
        loader = loader.tag(t);
    }
    let root = loader.load()?;
    let d: Deployment = root.lookup("deployment")?.decode()?;
    println!("image {} with {} replicas", d.image, d.replicas);
    for (k, v) in &d.environment {
        println!("  {k}={v}");
    }
    Ok(())
}
