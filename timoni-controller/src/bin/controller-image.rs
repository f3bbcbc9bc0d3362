//! `controller-image`: builds the controller's container image without Docker and pushes it
//! with the project's OCI code. The root filesystem is Debian's C runtime (`libc6`,
//! `libgcc-s1`), `ca-certificates` and `tzdata`, extracted from their `.deb`s with
//! `dpkg-deb -x` (no maintainer scripts; the CA bundle those would generate is concatenated
//! here), plus the stripped controller binary, a non-root user (65532) and `/tmp`. The image is
//! reproducible: the same `.deb`s, binary and `SOURCE_DATE_EPOCH` give the same digest.
//!
//! ```text
//! cargo build --profile image -p timoni-controller --bin timoni-controller
//! cargo run -p timoni-controller --bin controller-image -- \
//!     --binary target/image/timoni-controller --push oci://ghcr.io/me/timoni-controller --tag v0.1.0
//! ```
//!
//! With `--values-file`, the pushed image (by digest) becomes the controller module's default.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{Context as _, bail};
use clap::Parser;
use timoni_core::oci::{self, ArtifactUrl, ConnectOptions, ContainerSpec};
use timoni_core::project::admin::bootstrap;

/// The Debian packages of the root filesystem.
const PACKAGES: &[&str] = &["libc6", "libgcc-s1", "ca-certificates", "tzdata"];
const UID: u32 = 65532;

/// Builds (and pushes) the timoni-controller container image.
#[derive(Parser, Debug)]
#[command(name = "controller-image")]
struct Args {
    /// The controller binary (a release build); it is stripped into the image.
    #[arg(long)]
    binary: PathBuf,
    /// A directory holding the `.deb`s of the packages; without it they are fetched with
    /// `apt-get download` (the machine's Debian release and mirrors).
    #[arg(long)]
    debs: Option<PathBuf>,
    /// Where the root filesystem is assembled (emptied first); default: a temporary directory.
    #[arg(long)]
    work_dir: Option<PathBuf>,
    /// `oci://registry/repository` to push to.
    #[arg(long)]
    push: Option<String>,
    #[arg(long, default_value = "latest")]
    tag: String,
    /// `user:password` for the registry.
    #[arg(long)]
    creds: Option<String>,
    #[arg(long)]
    registry_insecure: bool,
    /// With --push: write the controller module's `values.cue` naming the pushed image by the
    /// digest the registry answered (`timoni-core/blueprints/controller/values.cue` for a
    /// release), so that `timoni project bootstrap` installs it by digest.
    #[arg(long, requires = "push")]
    values_file: Option<PathBuf>,
}

fn run(cmd: &mut Command) -> anyhow::Result<()> {
    let status = cmd.status().with_context(|| format!("running {cmd:?}"))?;
    if !status.success() {
        bail!("{cmd:?} failed: {status}");
    }
    Ok(())
}

/// The `.deb` of each package in `dir`, in package order.
fn debs_in(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "deb"))
        .collect();
    files.sort();
    PACKAGES
        .iter()
        .map(|p| {
            files
                .iter()
                .find(|f| {
                    f.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.starts_with(&format!("{p}_")))
                })
                .cloned()
                .with_context(|| format!("no {p}_*.deb in {}", dir.display()))
        })
        .collect()
}

fn write(path: &Path, text: &str, mode: u32) -> anyhow::Result<()> {
    if let Some(d) = path.parent() {
        std::fs::create_dir_all(d)?;
    }
    std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))?;
    Ok(())
}

/// Assembles the root filesystem in `root`.
fn rootfs(root: &Path, debs: &[PathBuf], binary: &Path) -> anyhow::Result<()> {
    for deb in debs {
        run(Command::new("dpkg-deb").arg("-x").arg(deb).arg(root))?;
    }
    // Documentation and manuals are not needed at run time.
    for d in [
        "usr/share/doc",
        "usr/share/man",
        "usr/share/lintian",
        "usr/share/locale",
    ] {
        let _ = std::fs::remove_dir_all(root.join(d));
    }
    // What `update-ca-certificates` would write: every certificate, in name order.
    let certs = root.join("usr/share/ca-certificates");
    let mut pems = Vec::new();
    for dir in std::fs::read_dir(&certs).with_context(|| format!("{}", certs.display()))? {
        let dir = dir?.path();
        if dir.is_dir() {
            for f in std::fs::read_dir(&dir)? {
                let f = f?.path();
                if f.extension().is_some_and(|e| e == "crt") {
                    pems.push(f);
                }
            }
        }
    }
    pems.sort();
    let mut bundle = String::new();
    for p in &pems {
        bundle.push_str(&std::fs::read_to_string(p)?);
        if !bundle.ends_with('\n') {
            bundle.push('\n');
        }
    }
    write(
        &root.join("etc/ssl/certs/ca-certificates.crt"),
        &bundle,
        0o644,
    )?;
    write(
        &root.join("etc/passwd"),
        &format!(
            "root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:{UID}:{UID}:nonroot:/home/nonroot:/sbin/nologin\n"
        ),
        0o644,
    )?;
    write(
        &root.join("etc/group"),
        &format!("root:x:0:\nnonroot:x:{UID}:\n"),
        0o644,
    )?;
    for (d, mode) in [("tmp", 0o1777), ("home/nonroot", 0o755), ("root", 0o700)] {
        std::fs::create_dir_all(root.join(d))?;
        std::fs::set_permissions(root.join(d), std::fs::Permissions::from_mode(mode))?;
    }
    let bin = root.join("usr/local/bin/timoni-controller");
    std::fs::create_dir_all(bin.parent().unwrap_or(root))?;
    run(Command::new("strip")
        .arg("--strip-all")
        .arg("-o")
        .arg(&bin)
        .arg(binary))?;
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755))?;
    // The home directory belongs to the user (the only file not owned by root is none: the
    // layer records root for every entry, so the controller writes only under /tmp).
    Ok(())
}

fn main() -> ExitCode {
    let args = Args::parse();
    match build(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("controller-image: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn build(args: &Args) -> anyhow::Result<()> {
    let epoch: i64 = match std::env::var("SOURCE_DATE_EPOCH") {
        Ok(v) => v.parse().context("SOURCE_DATE_EPOCH is not a number")?,
        Err(_) => 0,
    };
    let tmp = tempfile::tempdir()?;
    let debs_dir = match &args.debs {
        Some(d) => d.clone(),
        None => {
            let d = tmp.path().join("debs");
            std::fs::create_dir_all(&d)?;
            run(Command::new("apt-get")
                .arg("download")
                .args(PACKAGES)
                .current_dir(&d))?;
            d
        }
    };
    let debs = debs_in(&debs_dir)?;
    let root = match &args.work_dir {
        Some(d) => {
            let _ = std::fs::remove_dir_all(d);
            d.clone()
        }
        None => tmp.path().join("rootfs"),
    };
    std::fs::create_dir_all(&root)?;
    rootfs(&root, &debs, &args.binary)?;

    let version = env!("CARGO_PKG_VERSION");
    let labels = BTreeMap::from([
        (
            "org.opencontainers.image.title".to_string(),
            "timoni-controller".to_string(),
        ),
        (
            "org.opencontainers.image.description".to_string(),
            "The controller of Timoni Projects".to_string(),
        ),
        (
            "org.opencontainers.image.version".to_string(),
            version.to_string(),
        ),
        (
            "org.opencontainers.image.licenses".to_string(),
            "Apache-2.0".to_string(),
        ),
        (
            "org.opencontainers.image.base.name".to_string(),
            format!(
                "debian:{}",
                debs.iter()
                    .filter_map(|d| d.file_name()?.to_str().map(str::to_string))
                    .collect::<Vec<_>>()
                    .join(",")
            ),
        ),
    ]);
    let spec = ContainerSpec {
        rootfs: root.clone(),
        entrypoint: vec!["/usr/local/bin/timoni-controller".into()],
        user: format!("{UID}:{UID}"),
        env: vec![
            "PATH=/usr/local/bin:/usr/bin:/bin".into(),
            "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt".into(),
            "HOME=/home/nonroot".into(),
        ],
        labels,
        epoch,
        architecture: match std::env::consts::ARCH {
            "x86_64" => "amd64".into(),
            "aarch64" => "arm64".into(),
            a => a.into(),
        },
    };
    let image = oci::build_container_image(&spec)?;
    if let Some(url) = &args.push {
        let url = ArtifactUrl::parse(url)?;
        let connect = ConnectOptions {
            creds: args.creds.clone(),
            insecure: args.registry_insecure,
            ..Default::default()
        };
        let registry = oci::connect(&url, &connect)?;
        oci::push_container_image(&registry, &url, &args.tag, &image)?;
        eprintln!("pushed {url}:{} @ {}", args.tag, image.digest);
        if let Some(path) = &args.values_file {
            let pushed = bootstrap::ImageRef {
                repository: url.repo(),
                tag: args.tag.clone(),
                digest: image.digest.clone(),
            };
            std::fs::write(path, bootstrap::image_values_file(&pushed))
                .with_context(|| format!("writing {}", path.display()))?;
            eprintln!("wrote {}", path.display());
        }
    }
    println!("{}", image.digest);
    Ok(())
}
