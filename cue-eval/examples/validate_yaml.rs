//! Validates a YAML file against a CUE schema, as `cue vet -c schema.cue data.yaml -d '#Schema'`
//! does: the document is unified with the definition and must be concrete and free of errors.
//!
//!     cargo run -p cue-eval --example validate_yaml -- SCHEMA.cue '#Schema' DATA.yaml
//!
//! Without arguments it checks a built-in schema against a built-in document with two mistakes
//! and prints the errors as `cue` prints them.

use std::process::ExitCode;

const SCHEMA: &str = r#"
#Service: {
	name!:    string & =~"^[a-z][a-z0-9-]*$"
	port:     int & >0 & <65536 | *8080
	replicas: int & >=1
}
"#;

const DATA: &str = "name: Web\nport: 70000\nreplicas: 2\n";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (schema_name, schema, def, data_name, data) = match args.as_slice() {
        [s, def, d] => match (std::fs::read_to_string(s), std::fs::read_to_string(d)) {
            (Ok(st), Ok(dt)) => (s.clone(), st, def.clone(), d.clone(), dt),
            (Err(e), _) | (_, Err(e)) => {
                eprintln!("{e}");
                return ExitCode::FAILURE;
            }
        },
        _ => (
            "schema.cue".into(),
            SCHEMA.into(),
            "#Service".into(),
            "data.yaml".into(),
            DATA.into(),
        ),
    };
    let ctx = cue_eval::Context::new();
    let checked = ctx
        .compile_file(&schema_name, &schema)
        .and_then(|s| s.lookup(&def))
        .and_then(|schema| {
            let doc = ctx.compile_data(&data_name, &data)?;
            schema.unify(&doc)
        })
        .and_then(|v| {
            v.validate(cue_eval::ValidateOptions {
                concrete: true,
                ..Default::default()
            })
        });
    match checked {
        Ok(()) => {
            println!("{data_name}: valid");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}
