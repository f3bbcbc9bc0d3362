//! `k8s-schemagen`: writes the Kubernetes API schemas of the starter blueprint (or of any module)
//! as CUE packages under a `cue.mod/gen` directory, with [`timoni_core::vendor::k8s`].
//!
//! The input is a `_definitions.json` of the PyPI package `kubernetes-validate` (JSON Schema of
//! every Kubernetes API definition, one directory per Kubernetes version). Nothing is fetched
//! here. To regenerate the schemas checked in under `timoni-core/blueprints/starter`:
//!
//! ```text
//! pip download --no-deps kubernetes-validate==1.37.0 -d /tmp/kv
//! unzip -o /tmp/kv/kubernetes_validate-1.37.0-py3-none-any.whl -d /tmp/kv \
//!     'kubernetes_validate/kubernetes-json-schema/v1.34.0-local/_definitions.json'
//! cargo run -p timoni-core --bin k8s-schemagen -- \
//!     /tmp/kv/kubernetes_validate/kubernetes-json-schema/v1.34.0-local/_definitions.json \
//!     timoni-core/blueprints/starter/cue.mod/gen \
//!     --source "kubernetes-validate 1.37.0, Kubernetes v1.34.0"
//! ```
//!
//! Options: `--docs` keeps the descriptions as comments (about four times the size);
//! `--package IMPORT_PATH` (repeatable) replaces the default set `k8s.io/api/core/v1`,
//! `k8s.io/api/apps/v1` and `k8s.io/apimachinery/pkg/apis/meta/v1`. Packages they reference are
//! generated too. Each package becomes `<out>/<import path>/types_gen.cue`.

use std::path::PathBuf;
use std::process::ExitCode;

use timoni_core::vendor::k8s;

const DEFAULT_PACKAGES: [&str; 3] = [
    "k8s.io/api/core/v1",
    "k8s.io/api/apps/v1",
    "k8s.io/apimachinery/pkg/apis/meta/v1",
];

const USAGE: &str = "usage: k8s-schemagen DEFINITIONS_JSON OUT_GEN_DIR [--docs] [--source TEXT] [--package IMPORT_PATH]...";

fn main() -> ExitCode {
    match run(std::env::args().skip(1).collect()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("k8s-schemagen: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: Vec<String>) -> Result<(), String> {
    let mut positional = Vec::new();
    let mut opts = k8s::Options::default();
    let mut packages: Vec<String> = Vec::new();
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--docs" => opts.docs = true,
            "--source" => opts.source = it.next().ok_or(USAGE)?,
            "--package" => packages.push(it.next().ok_or(USAGE)?),
            "-h" | "--help" => return Err(USAGE.into()),
            _ if a.starts_with('-') => return Err(format!("unknown flag {a}\n{USAGE}")),
            _ => positional.push(a),
        }
    }
    let [input, out] = positional.as_slice() else {
        return Err(USAGE.into());
    };
    if opts.source.is_empty() {
        opts.source = "Kubernetes API definitions".into();
    }
    let text = std::fs::read_to_string(input).map_err(|e| format!("reading {input}: {e}"))?;
    let wanted: Vec<&str> = if packages.is_empty() {
        DEFAULT_PACKAGES.to_vec()
    } else {
        packages.iter().map(String::as_str).collect()
    };
    let pkgs = k8s::generate(&text, &wanted, &opts).map_err(|e| e.to_string())?;
    for p in pkgs {
        let dir = PathBuf::from(out).join(&p.import_path);
        std::fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
        let path = dir.join("types_gen.cue");
        std::fs::write(&path, &p.content)
            .map_err(|e| format!("writing {}: {e}", path.display()))?;
        eprintln!("wrote {} ({} bytes)", path.display(), p.content.len());
    }
    Ok(())
}
