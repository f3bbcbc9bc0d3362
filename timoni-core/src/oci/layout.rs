//! Artifacts on local disk, as `timoni mod build` and `timoni artifact build` write them and
//! `timoni mod push ARCHIVE` reads them: an OCI image layout (`oci-layout`, `index.json` with one
//! `org.opencontainers.image.ref.name` descriptor per tag, `blobs/sha256/<hex>`), or the same
//! layout as one deterministic tar file (an "OCI archive"). The output is written in a temporary
//! sibling and renamed into place, so it is complete or absent.

use std::collections::BTreeMap;
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::build::{Descriptor, Image, Manifest, TarEntry, sha256, tar_of};
use super::error::{OciError, Result};
use super::reference::validate_tag;
use super::{CONFIG_MEDIA_TYPE, CONTENT_MEDIA_TYPE, MANIFEST_MEDIA_TYPE};

/// Media type of the layout's `index.json`.
pub const INDEX_MEDIA_TYPE: &str = "application/vnd.oci.image.index.v1+json";
/// The annotation naming a manifest in a layout's index.
pub const REF_NAME_ANNOTATION: &str = "org.opencontainers.image.ref.name";
const LAYOUT_FILE: &str = "{\"imageLayoutVersion\":\"1.0.0\"}";
/// The largest archive `mod push` reads.
const MAX_ARCHIVE: u64 = 1 << 30;

/// How to write an artifact to disk (`--format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LayoutFormat {
    /// One tar file holding the layout (Timoni's default).
    Archive,
    /// A directory.
    Layout,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Index {
    schema_version: u32,
    media_type: String,
    manifests: Vec<Descriptor>,
}

/// The files of the layout of `image` with `tags` as ref names: relative path and bytes, sorted.
fn layout_files(image: &Image, tags: &[String]) -> Result<BTreeMap<String, Vec<u8>>> {
    for t in tags {
        validate_tag(t).map_err(OciError::InvalidInput)?;
    }
    let mut files = BTreeMap::new();
    let mut blob = |data: &[u8]| {
        let d = sha256(data);
        files.insert(format!("blobs/sha256/{}", &d[7..]), data.to_vec());
    };
    blob(&image.config);
    for l in &image.layers {
        blob(&l.blob);
    }
    blob(&image.manifest);
    let manifests = tags
        .iter()
        .map(|t| Descriptor {
            media_type: MANIFEST_MEDIA_TYPE.to_string(),
            size: image.manifest.len() as u64,
            digest: image.digest.clone(),
            annotations: BTreeMap::from([(REF_NAME_ANNOTATION.to_string(), t.clone())]),
        })
        .collect();
    let index = Index {
        schema_version: 2,
        media_type: INDEX_MEDIA_TYPE.to_string(),
        manifests,
    };
    let index = serde_json::to_vec(&index).expect("index serialization cannot fail");
    files.insert("index.json".to_string(), index);
    files.insert("oci-layout".to_string(), LAYOUT_FILE.as_bytes().to_vec());
    Ok(files)
}

/// Writes `image` to `output` (which must not exist) as an archive or a layout directory, with
/// each tag as a ref name.
pub fn write_image(
    image: &Image,
    tags: &[String],
    output: &Path,
    format: LayoutFormat,
) -> Result<()> {
    if std::fs::symlink_metadata(output).is_ok() {
        return Err(OciError::InvalidInput(format!(
            "{} already exists: give a new path to --output",
            output.display()
        )));
    }
    let files = layout_files(image, tags)?;
    let parent = match output.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => Path::new(".").to_path_buf(),
    };
    match format {
        LayoutFormat::Archive => {
            let mut entries = vec![
                TarEntry {
                    name: "blobs",
                    mode: 0o755,
                    data: None,
                },
                TarEntry {
                    name: "blobs/sha256",
                    mode: 0o755,
                    data: None,
                },
            ];
            entries.extend(files.iter().map(|(name, data)| TarEntry {
                name,
                mode: 0o644,
                data: Some(data),
            }));
            // `blobs/…` sorts before `index.json` and `oci-layout`: a walk order.
            let tar = tar_of(&entries)?;
            let mut tmp = tempfile::Builder::new()
                .prefix(".timoni-build-")
                .tempfile_in(&parent)
                .map_err(|e| OciError::io(&parent, e))?;
            std::io::Write::write_all(&mut tmp, &tar).map_err(|e| OciError::io(output, e))?;
            // A temporary file is private (0600); the archive is an ordinary file.
            tmp.as_file()
                .set_permissions(std::fs::Permissions::from_mode(0o644))
                .map_err(|e| OciError::io(output, e))?;
            tmp.persist_noclobber(output)
                .map_err(|e| OciError::io(output, e.error))?;
        }
        LayoutFormat::Layout => {
            let tmp = tempfile::Builder::new()
                .prefix(".timoni-build-")
                .tempdir_in(&parent)
                .map_err(|e| OciError::io(&parent, e))?;
            for (name, data) in &files {
                let path = tmp.path().join(name);
                if let Some(dir) = path.parent() {
                    std::fs::create_dir_all(dir).map_err(|e| OciError::io(dir, e))?;
                }
                std::fs::write(&path, data).map_err(|e| OciError::io(&path, e))?;
            }
            std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755))
                .map_err(|e| OciError::io(tmp.path(), e))?;
            let kept = tmp.keep();
            std::fs::rename(&kept, output).map_err(|e| {
                let _ = std::fs::remove_dir_all(&kept);
                OciError::io(output, e)
            })?;
        }
    }
    Ok(())
}

/// An artifact read back from an archive or a layout: the manifest of its first ref and the
/// blobs it names, each checked against its digest.
#[derive(Debug, Clone)]
pub struct LocalImage {
    pub manifest: Vec<u8>,
    pub digest: String,
    /// The ref name of the manifest in the index, if any.
    pub ref_name: Option<String>,
    /// Config and layer blobs by digest.
    pub blobs: BTreeMap<String, Vec<u8>>,
    pub annotations: BTreeMap<String, String>,
    /// The layers' `sh.timoni.content.type`, in order.
    pub content_types: Vec<String>,
}

/// Reads an archive file or a layout directory written by [`write_image`] (or by Timoni).
pub fn read_image(path: &Path) -> Result<LocalImage> {
    let files = if path.is_dir() {
        read_layout_dir(path)?
    } else {
        read_archive(path)?
    };
    let bad = |m: String| OciError::InvalidArtifact(format!("{}: {m}", path.display()));
    let index = files
        .get("index.json")
        .ok_or_else(|| bad("no index.json: not an OCI layout or archive".into()))?;
    let index: Index =
        serde_json::from_slice(index).map_err(|e| bad(format!("index.json: {e}")))?;
    let desc = index
        .manifests
        .first()
        .ok_or_else(|| bad("index.json lists no manifest".into()))?;
    let blob = |digest: &str| -> Result<Vec<u8>> {
        let hex = digest.strip_prefix("sha256:").unwrap_or("");
        let data = files
            .get(&format!("blobs/sha256/{hex}"))
            .ok_or_else(|| bad(format!("blob {digest} is missing")))?;
        let actual = sha256(data);
        if actual != digest {
            return Err(OciError::DigestMismatch {
                what: format!("blob in {}", path.display()),
                expected: digest.to_string(),
                actual,
            });
        }
        Ok(data.clone())
    };
    let manifest = blob(&desc.digest)?;
    let m: Manifest =
        serde_json::from_slice(&manifest).map_err(|e| bad(format!("manifest: {e}")))?;
    if m.config.media_type != CONFIG_MEDIA_TYPE {
        return Err(bad(format!(
            "not a Timoni artifact: config media type {:?}",
            m.config.media_type
        )));
    }
    let mut blobs = BTreeMap::new();
    blobs.insert(m.config.digest.clone(), blob(&m.config.digest)?);
    let mut content_types = Vec::new();
    for l in &m.layers {
        if l.media_type != CONTENT_MEDIA_TYPE {
            return Err(bad(format!(
                "layer {} has media type {:?}",
                l.digest, l.media_type
            )));
        }
        blobs.insert(l.digest.clone(), blob(&l.digest)?);
        content_types.push(
            l.annotations
                .get(super::CONTENT_TYPE_ANNOTATION)
                .cloned()
                .unwrap_or_default(),
        );
    }
    Ok(LocalImage {
        digest: desc.digest.clone(),
        manifest,
        ref_name: desc.annotations.get(REF_NAME_ANNOTATION).cloned(),
        blobs,
        annotations: m.annotations,
        content_types,
    })
}

fn read_archive(path: &Path) -> Result<BTreeMap<String, Vec<u8>>> {
    let file = std::fs::File::open(path).map_err(|e| OciError::io(path, e))?;
    let mut archive = tar::Archive::new(file.take(MAX_ARCHIVE));
    let mut files = BTreeMap::new();
    let entries = archive.entries().map_err(|e| OciError::io(path, e))?;
    for e in entries {
        let mut e = e.map_err(|e| OciError::io(path, e))?;
        if !e.header().entry_type().is_file() {
            continue;
        }
        let name = e.path().map_err(|e| OciError::io(path, e))?;
        let name = name.to_string_lossy().trim_start_matches("./").to_string();
        let mut data = Vec::new();
        e.read_to_end(&mut data)
            .map_err(|e| OciError::io(path, e))?;
        files.insert(name, data);
    }
    Ok(files)
}

fn read_layout_dir(dir: &Path) -> Result<BTreeMap<String, Vec<u8>>> {
    let mut files = BTreeMap::new();
    for name in ["index.json", "oci-layout"] {
        if let Ok(d) = std::fs::read(dir.join(name)) {
            files.insert(name.to_string(), d);
        }
    }
    let blobs = dir.join("blobs/sha256");
    if let Ok(rd) = std::fs::read_dir(&blobs) {
        for e in rd {
            let e = e.map_err(|e| OciError::io(&blobs, e))?;
            if e.file_type().is_ok_and(|t| t.is_file()) {
                let data = std::fs::read(e.path()).map_err(|err| OciError::io(e.path(), err))?;
                files.insert(
                    format!("blobs/sha256/{}", e.file_name().to_string_lossy()),
                    data,
                );
            }
        }
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oci::{artifact_layer, assemble_image};

    fn image(dir: &Path) -> Image {
        std::fs::write(dir.join("a.txt"), "hello").unwrap();
        let layer = artifact_layer(&dir.join("a.txt"), "generic", false).unwrap();
        assemble_image(vec![layer], BTreeMap::new())
    }

    #[test]
    fn archives_and_layouts_round_trip_and_are_deterministic() {
        let tmp = tempfile::tempdir().unwrap();
        let img = image(tmp.path());
        let tags = vec!["1.0.0".to_string()];
        let a = tmp.path().join("a.tar");
        let b = tmp.path().join("b.tar");
        write_image(&img, &tags, &a, LayoutFormat::Archive).unwrap();
        write_image(&img, &tags, &b, LayoutFormat::Archive).unwrap();
        let mode = std::fs::metadata(&a).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o644, "an ordinary file, not a private temporary one");
        assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
        let dir = tmp.path().join("layout");
        write_image(&img, &tags, &dir, LayoutFormat::Layout).unwrap();
        for p in [&a, &dir] {
            let got = read_image(p).unwrap();
            assert_eq!(got.digest, img.digest);
            assert_eq!(got.ref_name.as_deref(), Some("1.0.0"));
            assert_eq!(got.content_types, ["generic"]);
            assert_eq!(got.blobs.len(), 2);
        }
        let index = std::fs::read_to_string(dir.join("index.json")).unwrap();
        assert!(
            index.contains(r#""org.opencontainers.image.ref.name":"1.0.0""#),
            "{index}"
        );
        assert_eq!(
            std::fs::read_to_string(dir.join("oci-layout")).unwrap(),
            LAYOUT_FILE
        );
    }

    #[test]
    fn an_existing_output_is_refused_and_kept() {
        let tmp = tempfile::tempdir().unwrap();
        let img = image(tmp.path());
        let out = tmp.path().join("a.txt");
        let err = write_image(&img, &["1".into()], &out, LayoutFormat::Archive).unwrap_err();
        assert!(err.to_string().contains("already exists"), "{err}");
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "hello");
    }

    #[test]
    fn a_tampered_blob_is_a_digest_error() {
        let tmp = tempfile::tempdir().unwrap();
        let img = image(tmp.path());
        let dir = tmp.path().join("layout");
        write_image(&img, &["1".into()], &dir, LayoutFormat::Layout).unwrap();
        let layer = &img.layers[0].digest[7..];
        std::fs::write(dir.join("blobs/sha256").join(layer), b"x").unwrap();
        let err = read_image(&dir).unwrap_err();
        assert!(matches!(err, OciError::DigestMismatch { .. }), "{err}");
    }
}
