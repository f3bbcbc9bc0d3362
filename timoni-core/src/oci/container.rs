//! Reproducible container images from a root filesystem directory (the controller's image):
//! one gzip layer whose tarball lists the tree in byte order with owner root, the given
//! modification time and the files' own modes (directories, regular files, symlinks), an OCI
//! image config (platform, user, entrypoint, environment, labels, `created`) and an OCI
//! manifest. The same tree and settings give the same bytes, so the same digest.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};

use serde_json::json;

use super::build::sha256;
use super::error::{OciError, Result};
use super::reference::ArtifactUrl;
use super::registry::Registry;

/// OCI image config media type.
pub const IMAGE_CONFIG_MEDIA_TYPE: &str = "application/vnd.oci.image.config.v1+json";
/// OCI gzip layer media type.
pub const IMAGE_LAYER_MEDIA_TYPE: &str = "application/vnd.oci.image.layer.v1.tar+gzip";

/// What goes into the image besides the root filesystem.
#[derive(Clone, Debug)]
pub struct ContainerSpec {
    pub rootfs: PathBuf,
    pub entrypoint: Vec<String>,
    /// `uid:gid` or a name from the image's `/etc/passwd`.
    pub user: String,
    pub env: Vec<String>,
    pub labels: BTreeMap<String, String>,
    /// Seconds since the epoch (`SOURCE_DATE_EPOCH`): the files' times and `created`.
    pub epoch: i64,
    /// `amd64`, `arm64`, … (Go's names).
    pub architecture: String,
}

/// A built image.
#[derive(Clone, Debug)]
pub struct ContainerImage {
    pub layer: Vec<u8>,
    pub layer_digest: String,
    pub config: Vec<u8>,
    pub manifest: Vec<u8>,
    /// The manifest digest: the image's digest.
    pub digest: String,
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> OciError + '_ {
    move |e| OciError::io(path, e)
}

/// Every path under `root`, relative, sorted bytewise, directories before their contents.
fn walk(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    let mut names: Vec<_> = std::fs::read_dir(dir)
        .map_err(io(dir))?
        .map(|e| e.map(|e| e.file_name()))
        .collect::<std::io::Result<_>>()
        .map_err(io(dir))?;
    names.sort();
    for n in names {
        let p = dir.join(&n);
        out.push(p.strip_prefix(root).unwrap_or(&p).to_path_buf());
        let meta = std::fs::symlink_metadata(&p).map_err(io(&p))?;
        if meta.is_dir() {
            walk(root, &p, out)?;
        }
    }
    Ok(())
}

/// The layer's tarball: every entry owned by root, modified at `epoch`.
fn tarball(root: &Path, epoch: i64) -> Result<Vec<u8>> {
    let mut paths = Vec::new();
    walk(root, root, &mut paths)?;
    let mut tar = tar::Builder::new(Vec::new());
    tar.follow_symlinks(false);
    let mtime = u64::try_from(epoch).unwrap_or(0);
    for rel in paths {
        let full = root.join(&rel);
        let meta = std::fs::symlink_metadata(&full).map_err(io(&full))?;
        let mut h = tar::Header::new_gnu();
        h.set_uid(0);
        h.set_gid(0);
        h.set_mtime(mtime);
        h.set_mode(meta.permissions().mode() & 0o7777);
        let add = |tar: &mut tar::Builder<Vec<u8>>, h: &mut tar::Header, data: &[u8]| {
            tar.append_data(h, &rel, data).map_err(io(&full))
        };
        if meta.file_type().is_symlink() {
            let target = std::fs::read_link(&full).map_err(io(&full))?;
            h.set_entry_type(tar::EntryType::Symlink);
            h.set_size(0);
            tar.append_link(&mut h, &rel, &target).map_err(io(&full))?;
        } else if meta.is_dir() {
            h.set_entry_type(tar::EntryType::Directory);
            h.set_size(0);
            add(&mut tar, &mut h, &[])?;
        } else if meta.is_file() {
            let data = std::fs::read(&full).map_err(io(&full))?;
            h.set_entry_type(tar::EntryType::Regular);
            h.set_size(data.len() as u64);
            add(&mut tar, &mut h, &data)?;
        } else {
            return Err(OciError::InvalidInput(format!(
                "{}: only directories, files and symlinks go into an image (mode {:o})",
                full.display(),
                meta.mode()
            )));
        }
    }
    tar.into_inner().map_err(io(root))
}

/// Builds the image of `spec`.
pub fn build_container_image(spec: &ContainerSpec) -> Result<ContainerImage> {
    let tar = tarball(&spec.rootfs, spec.epoch)?;
    let diff_id = sha256(&tar);
    // gzip without a name or time in its header: the same tarball compresses to the same bytes.
    let mut gz = flate2::GzBuilder::new()
        .mtime(0)
        .operating_system(255)
        .write(Vec::new(), flate2::Compression::best());
    gz.write_all(&tar).map_err(io(&spec.rootfs))?;
    let layer = gz.finish().map_err(io(&spec.rootfs))?;
    let layer_digest = sha256(&layer);
    let created = jiff::Timestamp::from_second(spec.epoch)
        .map_err(|e| OciError::InvalidInput(format!("SOURCE_DATE_EPOCH {}: {e}", spec.epoch)))?
        .to_string();
    let config = json!({
        "created": created,
        "architecture": spec.architecture,
        "os": "linux",
        "config": {
            "User": spec.user,
            "Env": spec.env,
            "Entrypoint": spec.entrypoint,
            "WorkingDir": "/",
            "Labels": spec.labels,
        },
        "rootfs": {"type": "layers", "diff_ids": [diff_id]},
        "history": [{"created": created, "created_by": "timoni-rs container image builder"}],
    });
    let config = serde_json::to_vec(&config).expect("JSON values serialize");
    let mut annotations = spec.labels.clone();
    annotations.insert("org.opencontainers.image.created".into(), created);
    let manifest = json!({
        "schemaVersion": 2,
        "mediaType": super::MANIFEST_MEDIA_TYPE,
        "config": {
            "mediaType": IMAGE_CONFIG_MEDIA_TYPE,
            "size": config.len(),
            "digest": sha256(&config),
        },
        "layers": [{
            "mediaType": IMAGE_LAYER_MEDIA_TYPE,
            "size": layer.len(),
            "digest": layer_digest,
        }],
        "annotations": annotations,
    });
    let manifest = serde_json::to_vec(&manifest).expect("JSON values serialize");
    Ok(ContainerImage {
        digest: sha256(&manifest),
        layer,
        layer_digest,
        config,
        manifest,
    })
}

/// Pushes `image` to `url` under `tag`; returns its digest.
pub fn push_container_image(
    registry: &dyn Registry,
    url: &ArtifactUrl,
    tag: &str,
    image: &ContainerImage,
) -> Result<String> {
    registry.push_blob(url, &image.layer_digest, &image.layer)?;
    registry.push_blob(url, &sha256(&image.config), &image.config)?;
    registry.push_manifest(url, tag, &image.manifest, super::MANIFEST_MEDIA_TYPE)?;
    Ok(image.digest.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(dir: &Path) {
        std::fs::create_dir_all(dir.join("usr/bin")).unwrap();
        std::fs::create_dir_all(dir.join("etc")).unwrap();
        std::fs::write(dir.join("usr/bin/app"), b"\x7fELF").unwrap();
        std::fs::set_permissions(
            dir.join("usr/bin/app"),
            std::fs::Permissions::from_mode(0o755),
        )
        .unwrap();
        std::fs::write(dir.join("etc/passwd"), "root:x:0:0::/root:/sbin/nologin\n").unwrap();
        std::os::unix::fs::symlink("usr/bin", dir.join("bin")).unwrap();
    }

    fn spec(root: &Path) -> ContainerSpec {
        ContainerSpec {
            rootfs: root.to_path_buf(),
            entrypoint: vec!["/usr/bin/app".into()],
            user: "65532:65532".into(),
            env: vec!["PATH=/usr/bin".into()],
            labels: BTreeMap::from([("org.opencontainers.image.title".into(), "app".into())]),
            epoch: 1_700_000_000,
            architecture: "amd64".into(),
        }
    }

    #[test]
    fn the_same_tree_gives_the_same_digest_whatever_its_file_times() {
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        tree(a.path());
        std::thread::sleep(std::time::Duration::from_millis(1100));
        tree(b.path());
        let ia = build_container_image(&spec(a.path())).unwrap();
        let ib = build_container_image(&spec(b.path())).unwrap();
        assert_eq!(ia.digest, ib.digest);
        assert_eq!(ia.layer, ib.layer);
        let mut other = spec(b.path());
        other.epoch += 1;
        assert_ne!(build_container_image(&other).unwrap().digest, ia.digest);

        // The layer holds the tree in order, owned by root, the symlink kept.
        let tar = flate2::read::GzDecoder::new(&ia.layer[..]);
        let mut archive = tar::Archive::new(tar);
        let entries: Vec<(String, u32, u64, Option<String>)> = archive
            .entries()
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                let h = e.header();
                (
                    e.path().unwrap().display().to_string(),
                    h.mode().unwrap(),
                    h.uid().unwrap() + h.gid().unwrap(),
                    e.link_name().unwrap().map(|l| l.display().to_string()),
                )
            })
            .collect();
        let names: Vec<&str> = entries.iter().map(|e| e.0.as_str()).collect();
        assert_eq!(
            names,
            ["bin", "etc", "etc/passwd", "usr", "usr/bin", "usr/bin/app"]
        );
        assert_eq!(entries[0].3.as_deref(), Some("usr/bin"));
        assert_eq!(entries[5].1, 0o755);
        assert!(entries.iter().all(|e| e.2 == 0));
        let config: serde_json::Value = serde_json::from_slice(&ia.config).unwrap();
        assert_eq!(config["config"]["User"], "65532:65532");
        assert_eq!(config["created"], "2023-11-14T22:13:20Z");
    }
}
