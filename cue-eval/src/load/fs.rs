//! The loader's view of the file system: the disk (symlinks followed) with an in-memory
//! overlay of files that replace or add to it, by absolute path.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use rustc_hash::FxHashSet as HashSet;

use super::LoadError;

pub(super) struct Fs {
    overlay: BTreeMap<PathBuf, String>,
    /// The directories above the overlay's files (each one's parents up to the root).
    overlay_dirs: HashSet<OsString>,
}

impl Fs {
    /// The disk with `overlay`, whose paths are absolute and cleaned (no `.`, `..`, `//` or
    /// trailing `/`), as the loader's own paths are.
    pub(super) fn new(overlay: BTreeMap<PathBuf, String>) -> Fs {
        let overlay_dirs = overlay
            .keys()
            .flat_map(|k| k.ancestors().skip(1))
            .map(|d| d.as_os_str().to_owned())
            .collect();
        Fs {
            overlay,
            overlay_dirs,
        }
    }

    /// Whether an overlay file is below `p` (so `p` is a directory of the overlay).
    fn overlay_has_dir(&self, p: &Path) -> bool {
        !self.overlay_dirs.is_empty() && self.overlay_dirs.contains(p.as_os_str())
    }

    pub(super) fn exists(&self, p: &Path) -> bool {
        self.overlay.contains_key(p) || self.overlay_has_dir(p) || p.exists()
    }

    pub(super) fn is_dir(&self, p: &Path) -> bool {
        !self.overlay.contains_key(p) && (self.overlay_has_dir(p) || p.is_dir())
    }

    pub(super) fn is_file(&self, p: &Path) -> bool {
        self.overlay.contains_key(p) || p.is_file()
    }

    /// The size of a file in bytes, when it can be known without reading it.
    pub(super) fn size(&self, p: &Path) -> Option<u64> {
        match self.overlay.get(p) {
            Some(t) => Some(t.len() as u64),
            None => std::fs::metadata(p).ok().map(|m| m.len()),
        }
    }

    pub(super) fn read_bytes(&self, p: &Path) -> Result<Vec<u8>, LoadError> {
        if let Some(t) = self.overlay.get(p) {
            return Ok(t.as_bytes().to_vec());
        }
        std::fs::read(p).map_err(|e| LoadError::new(format!("{}: {e}", p.display())))
    }

    pub(super) fn read(&self, p: &Path) -> Result<String, LoadError> {
        let bytes = self.read_bytes(p)?;
        match String::from_utf8(bytes) {
            Ok(s) => Ok(s),
            Err(e) => {
                let bytes = e.into_bytes();
                Err(LoadError::new(
                    crate::decode::utf8(&bytes)
                        .err()
                        .map(|e| e.in_file(&p.display().to_string()))
                        .unwrap_or_default(),
                ))
            }
        }
    }

    /// The entries of a directory (name, whether it is a file, symlinks followed), sorted by
    /// name, overlay files included; an entry's path is `dir.join(name)`. A directory that does
    /// not exist has no entries on disk. The kind comes from the directory listing itself; only
    /// symlinks (and entries of unknown kind) cost a `stat`.
    pub(super) fn list(&self, dir: &Path) -> Result<Vec<(String, bool)>, LoadError> {
        let mut out: BTreeMap<String, bool> = BTreeMap::new();
        let err = |e: std::io::Error| LoadError::new(format!("{}: {e}", dir.display()));
        match std::fs::read_dir(dir) {
            Ok(rd) => {
                for entry in rd {
                    let entry = entry.map_err(err)?;
                    let name = entry.file_name().to_string_lossy().into_owned();
                    let is_file = match entry.file_type() {
                        Ok(t) if t.is_file() => true,
                        Ok(t) if t.is_dir() => false,
                        _ => entry.path().is_file(),
                    };
                    out.insert(name, is_file);
                }
            }
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
                ) => {}
            Err(e) => return Err(err(e)),
        }
        for k in self.overlay.keys() {
            if k.parent() == Some(dir)
                && let Some(name) = k.file_name()
            {
                out.insert(name.to_string_lossy().into_owned(), true);
            }
        }
        Ok(out.into_iter().collect())
    }
}
