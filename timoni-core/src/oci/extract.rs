//! Safe extraction of a layer tarball into a directory. Entries with absolute paths or `..`,
//! symlinks and hard links that leave the target, device files and fifos are refused, writes
//! never go through a symlink, and the compressed and uncompressed sizes are bounded. Callers
//! extract into a fresh staging directory and move it into place only on success, so a refused
//! layer leaves nothing half-written where the user looks.

use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};

use flate2::read::GzDecoder;

use super::error::{OciError, Result};

/// Size bounds for one layer.
#[derive(Debug, Clone, Copy)]
pub struct ExtractLimits {
    /// Largest compressed layer accepted.
    pub max_compressed: u64,
    /// Largest total of uncompressed tar bytes accepted.
    pub max_uncompressed: u64,
}

impl Default for ExtractLimits {
    fn default() -> Self {
        // Modules are kilobytes; vendored Kubernetes schemas are a few megabytes.
        ExtractLimits {
            max_compressed: 256 << 20,
            max_uncompressed: 1 << 30,
        }
    }
}

/// Extracts the gzip-compressed tarball `blob` into the existing directory `target`.
pub fn extract_layer(blob: &[u8], target: &Path, limits: ExtractLimits) -> Result<()> {
    if blob.len() as u64 > limits.max_compressed {
        return Err(OciError::TooLarge {
            what: format!("a layer of {} bytes", blob.len()),
            limit: limits.max_compressed,
        });
    }
    let root = target.canonicalize().map_err(|e| OciError::io(target, e))?;
    let reader = LimitedReader {
        inner: GzDecoder::new(blob),
        left: limits.max_uncompressed,
        limit: limits.max_uncompressed,
    };
    let mut archive = tar::Archive::new(reader);
    let mut dir_modes: Vec<(PathBuf, u32)> = Vec::new();
    let entries = archive
        .entries()
        .map_err(|e| bad_tar(target, limits.max_uncompressed, e))?;
    for entry in entries {
        let mut entry = entry.map_err(|e| bad_tar(target, limits.max_uncompressed, e))?;
        let raw = entry.path_bytes().into_owned();
        let name = String::from_utf8_lossy(&raw).into_owned();
        let refuse = |reason: &str| OciError::UnsafeEntry {
            entry: name.clone(),
            reason: reason.to_string(),
        };
        let rel = safe_relative(&name).map_err(|r| refuse(&r))?;
        let kind = entry.header().entry_type();
        let mode = entry.header().mode().unwrap_or(0o644) & 0o777;
        if kind.is_pax_global_extensions() {
            continue;
        }
        let dest = root.join(&rel);
        if rel.as_os_str().is_empty() {
            if kind.is_dir() {
                dir_modes.push((root.clone(), mode));
                continue;
            }
            return Err(refuse("the root entry is not a directory"));
        }
        let parent = dest.parent().unwrap_or(&root).to_path_buf();
        std::fs::create_dir_all(&parent).map_err(|e| OciError::io(&parent, e))?;
        // The parent must resolve inside the root: no earlier symlink may redirect this write.
        let real_parent = parent
            .canonicalize()
            .map_err(|e| OciError::io(&parent, e))?;
        if !real_parent.starts_with(&root) {
            return Err(refuse("its parent directory resolves outside the target"));
        }
        if let Ok(m) = std::fs::symlink_metadata(&dest)
            && (m.file_type().is_symlink() || (m.is_dir() != kind.is_dir()))
        {
            return Err(refuse("it would replace an existing entry of another kind"));
        }
        if kind.is_dir() {
            std::fs::create_dir_all(&dest).map_err(|e| OciError::io(&dest, e))?;
            dir_modes.push((dest, mode));
        } else if kind.is_file() || kind == tar::EntryType::Continuous {
            let mut file = std::fs::File::create(&dest).map_err(|e| OciError::io(&dest, e))?;
            std::io::copy(&mut entry, &mut file).map_err(|e| match e.kind() {
                std::io::ErrorKind::FileTooLarge => OciError::TooLarge {
                    what: "the uncompressed layer".to_string(),
                    limit: limits.max_uncompressed,
                },
                _ => OciError::io(&dest, e),
            })?;
            file.set_permissions(std::fs::Permissions::from_mode(mode))
                .map_err(|e| OciError::io(&dest, e))?;
        } else if kind.is_symlink() {
            let target_link = entry
                .link_name()
                .map_err(|e| bad_tar(target, limits.max_uncompressed, e))?
                .ok_or_else(|| refuse("symlink without a target"))?;
            if target_link.is_absolute() {
                return Err(refuse("symlink to an absolute path"));
            }
            let resolved = normalize(&real_parent.join(&target_link));
            if !resolved.is_some_and(|p| p.starts_with(&root)) {
                return Err(refuse("symlink pointing outside the target"));
            }
            std::os::unix::fs::symlink(&target_link, &dest).map_err(|e| OciError::io(&dest, e))?;
        } else if kind.is_hard_link() {
            let link = entry
                .link_name()
                .map_err(|e| bad_tar(target, limits.max_uncompressed, e))?
                .ok_or_else(|| refuse("hard link without a target"))?;
            let link = safe_relative(&link.to_string_lossy())
                .map_err(|r| refuse(&format!("hard link target: {r}")))?;
            let source = root.join(link);
            let real = source
                .canonicalize()
                .map_err(|_| refuse("hard link to a missing entry"))?;
            if !real.starts_with(&root) || !real.is_file() {
                return Err(refuse("hard link pointing outside the target"));
            }
            std::fs::copy(&real, &dest).map_err(|e| OciError::io(&dest, e))?;
        } else {
            return Err(refuse(&format!(
                "entries of type {:?} (devices, fifos, …) are not allowed",
                kind
            )));
        }
    }
    // Directory modes last, deepest first, so that read-only directories can be filled.
    dir_modes.sort_by(|a, b| b.0.cmp(&a.0));
    for (dir, mode) in dir_modes {
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(mode | 0o700))
            .map_err(|e| OciError::io(&dir, e))?;
    }
    Ok(())
}

fn bad_tar(target: &Path, limit: u64, e: std::io::Error) -> OciError {
    if e.kind() == std::io::ErrorKind::FileTooLarge {
        return OciError::TooLarge {
            what: "the uncompressed layer".to_string(),
            limit,
        };
    }
    OciError::InvalidArtifact(format!(
        "corrupt layer while extracting into {}: {e}",
        target.display()
    ))
}

/// The relative path an entry name stands for: `./a/b`, `a/b/` and `a//b` are fine; absolute
/// paths, Windows prefixes and `..` anywhere are refused.
fn safe_relative(name: &str) -> std::result::Result<PathBuf, String> {
    if name.contains('\0') {
        return Err("NUL in the name".to_string());
    }
    let mut out = PathBuf::new();
    for c in Path::new(name).components() {
        match c {
            Component::Normal(p) => out.push(p),
            Component::CurDir => {}
            Component::ParentDir => return Err("path contains '..'".to_string()),
            Component::RootDir | Component::Prefix(_) => {
                return Err("absolute path".to_string());
            }
        }
    }
    Ok(out)
}

/// Lexically resolves `.` and `..`; `None` if it climbs above `/`.
fn normalize(p: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    Some(out)
}

/// Fails reads with `FileTooLarge` once more than `limit` bytes have been read.
struct LimitedReader<R> {
    inner: R,
    left: u64,
    limit: u64,
}

impl<R: Read> Read for LimitedReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if n as u64 > self.left {
            return Err(std::io::Error::new(
                std::io::ErrorKind::FileTooLarge,
                format!("uncompressed layer exceeds {} bytes", self.limit),
            ));
        }
        self.left -= n as u64;
        Ok(n)
    }
}

#[cfg(test)]
mod tests;
