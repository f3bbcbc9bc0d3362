//! `k8s-schemagen`: the Kubernetes API schemas as CUE packages, written as
//! `OUT_DIR/<import path>/types_go_gen.cue` (`OUT_DIR/k8s.io/api/apps/v1/types_go_gen.cue`, ...), with
//! [`timoni_core::vendor::k8s`]. Two uses:
//!
//! * the schemas checked in under `timoni-core/blueprints/starter/cue.mod/gen` (core/v1, apps/v1,
//!   meta/v1, the default set);
//! * with `--all`, the directory of a Kubernetes schema artifact as Timoni publishes them (every
//!   GA API group, the CRD API and meta/v1), for a team that mirrors them: pushed with
//!   `timoni artifact push oci://REPO -f OUT_DIR -t v1.xx --content-type cue.mod/gen`, it is what
//!   `timoni mod vendor k8s -v 1.xx` pulls.
//!
//! The input is the JSON Schema of every Kubernetes API definition from the PyPI package
//! `kubernetes-validate` (Kubernetes 1.25 to 1.37): either one `_definitions.json`, or the
//! package's `kubernetes-json-schema` directory with `--kubernetes-version 1.xx`. Nothing is
//! fetched here:
//!
//! ```text
//! pip install kubernetes-validate==1.37.0
//! SCHEMAS=$(python3 -c 'import kubernetes_validate, os; print(os.path.dirname(kubernetes_validate.__file__))')/kubernetes-json-schema
//! k8s-schemagen "$SCHEMAS" out/v1.30 --kubernetes-version 1.30 --all
//! ```

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::Parser;
use timoni_core::vendor::k8s;

const DEFAULT_PACKAGES: [&str; 3] = [
    "k8s.io/api/core/v1",
    "k8s.io/api/apps/v1",
    "k8s.io/apimachinery/pkg/apis/meta/v1",
];

/// Generate CUE packages of the Kubernetes API from kubernetes-validate's JSON schemas.
#[derive(Parser, Debug)]
#[command(name = "k8s-schemagen", version)]
struct Args {
    /// A `_definitions.json`, or kubernetes-validate's `kubernetes-json-schema` directory (with
    /// --kubernetes-version).
    input: PathBuf,
    /// The directory that gets one `<import path>/types_go_gen.cue` per package.
    out_dir: PathBuf,
    /// The Kubernetes minor version to read from a `kubernetes-json-schema` directory (`1.30`).
    #[arg(long, value_name = "1.xx")]
    kubernetes_version: Option<String>,
    /// Every GA API group version, the CRD API and meta/v1, as Timoni's schema artifacts hold.
    #[arg(long, conflicts_with = "package")]
    all: bool,
    /// An import path to generate (repeatable); default: core/v1, apps/v1 and meta/v1.
    #[arg(long, value_name = "IMPORT_PATH")]
    package: Vec<String>,
    /// Keep the API descriptions as comments (about four times the size).
    #[arg(long)]
    docs: bool,
    /// The source named in each file's header.
    #[arg(long, value_name = "TEXT")]
    source: Option<String>,
}

fn main() -> ExitCode {
    match run(Args::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("k8s-schemagen: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: Args) -> anyhow::Result<()> {
    let (input, source) = definitions_file(&args.input, args.kubernetes_version.as_deref())?;
    let text =
        std::fs::read_to_string(&input).with_context(|| format!("reading {}", input.display()))?;
    let opts = k8s::Options {
        docs: args.docs,
        source: args.source.unwrap_or(source),
    };
    let wanted: Vec<String> = if args.all {
        k8s::ga_packages(&text)?
    } else if args.package.is_empty() {
        DEFAULT_PACKAGES.iter().map(|p| p.to_string()).collect()
    } else {
        args.package
    };
    let wanted: Vec<&str> = wanted.iter().map(String::as_str).collect();
    let pkgs = k8s::generate(&text, &wanted, &opts)?;
    for p in &pkgs {
        let dir = args.out_dir.join(&p.import_path);
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let path = dir.join("types_go_gen.cue");
        std::fs::write(&path, &p.content).with_context(|| format!("writing {}", path.display()))?;
    }
    eprintln!(
        "wrote {} packages to {}",
        pkgs.len(),
        args.out_dir.display()
    );
    Ok(())
}

/// The definitions file to read and the source named in the headers: `input` itself, or
/// `input/v1.xx.0-local/_definitions.json` of a `kubernetes-json-schema` directory.
fn definitions_file(input: &Path, version: Option<&str>) -> anyhow::Result<(PathBuf, String)> {
    if !input.is_dir() {
        if version.is_some() {
            bail!(
                "--kubernetes-version reads a kubernetes-json-schema directory; {} is a file",
                input.display()
            );
        }
        return Ok((input.to_path_buf(), "Kubernetes API definitions".into()));
    }
    let Some(version) = version else {
        bail!(
            "{} is a directory: pass the Kubernetes version with --kubernetes-version",
            input.display()
        );
    };
    let minor = version.trim_start_matches('v');
    let file = input
        .join(format!("v{minor}.0-local"))
        .join("_definitions.json");
    if !file.is_file() {
        let mut have: Vec<String> = std::fs::read_dir(input)
            .map(|rd| {
                rd.filter_map(|e| {
                    let name = e.ok()?.file_name().into_string().ok()?;
                    let v = name.strip_prefix('v')?.strip_suffix(".0-local")?;
                    Some(v.to_string())
                })
                .collect()
            })
            .unwrap_or_default();
        have.sort_by_key(|v| {
            v.split('.')
                .map(|n| n.parse::<u32>().unwrap_or(0))
                .collect::<Vec<_>>()
        });
        bail!(
            "{} has no schemas of Kubernetes {minor} (it has: {})",
            input.display(),
            have.join(", ")
        );
    }
    Ok((file, format!("kubernetes-validate, Kubernetes v{minor}.0")))
}
