//! The loader's view of the file system: the disk (symlinks followed) with an in-memory
//! overlay of files that replace or add to it, by absolute path. Loads that share a run's
//! [`super::ParseCache`] also share what they read from the disk ([`DiskMemo`]).

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use super::{LoadError, ParseCache};

/// What a file or directory was when a run first looked (symlinks followed).
#[derive(Clone, Copy)]
struct Stat {
    is_dir: bool,
    is_file: bool,
    len: u64,
}

/// A directory's entries (name, whether it is a file), or why it could not be listed. A
/// directory that does not exist has no entries.
type Listing = Result<Arc<[(String, bool)]>, String>;

/// A file's content: its text when it is UTF-8 (shared, not copied, by every load that reads
/// it: the loader's file table and the evaluator's messages hold the same `Arc`), its bytes
/// otherwise.
#[derive(Clone)]
pub(super) enum Content {
    Text(Arc<String>),
    Bytes(Arc<[u8]>),
}

impl Content {
    fn of(bytes: Vec<u8>) -> Content {
        match String::from_utf8(bytes) {
            Ok(t) => Content::Text(Arc::new(t)),
            Err(e) => Content::Bytes(e.into_bytes().into()),
        }
    }

    fn bytes(&self) -> &[u8] {
        match self {
            Content::Text(t) => t.as_bytes(),
            Content::Bytes(b) => b,
        }
    }
}

/// The disk as a run first saw it: the metadata, directory listings and file contents that
/// its loads asked for, each read from the disk once and then answered from here. The loads of
/// a bundle's instances read the same module and vendored packages, over a hundred files and
/// directories each; with the memo, every further instance makes none of those system calls
/// and copies no text from the kernel. A run therefore sees each path as it was first read,
/// as if the modules were copied once at its start. A file that could not be read is asked
/// of the disk again (the error ends that load anyway); a missing path, or a directory that
/// could not be listed, is remembered as such.
#[derive(Default)]
pub(crate) struct DiskMemo {
    stats: Mutex<HashMap<PathBuf, Option<Stat>>>,
    listings: Mutex<HashMap<PathBuf, Listing>>,
    files: Mutex<HashMap<PathBuf, Content>>,
    /// How many files were read from the disk.
    reads: AtomicUsize,
}

impl DiskMemo {
    pub(crate) fn reads(&self) -> usize {
        self.reads.load(Ordering::Relaxed)
    }

    fn stat(&self, p: &Path) -> Option<Stat> {
        let Ok(s) = remembered(&self.stats, p, || Ok::<_, Infallible>(stat(p)));
        s
    }

    fn list(&self, dir: &Path) -> Listing {
        let Ok(l) = remembered(&self.listings, dir, || {
            Ok::<_, Infallible>(list(dir).map(Arc::from))
        });
        l
    }

    fn read(&self, p: &Path) -> std::io::Result<Content> {
        remembered(&self.files, p, || {
            let read = Content::of(std::fs::read(p)?);
            self.reads.fetch_add(1, Ordering::Relaxed);
            Ok(read)
        })
    }
}

/// The answer `map` holds for `p`, or the one `ask` gives, kept unless it failed. Another
/// thread may have asked meanwhile: every load gets the first answer kept, so that all of them
/// share one text.
fn remembered<V: Clone, E>(
    map: &Mutex<HashMap<PathBuf, V>>,
    p: &Path,
    ask: impl FnOnce() -> Result<V, E>,
) -> Result<V, E> {
    if let Some(v) = map.lock().unwrap().get(p) {
        return Ok(v.clone());
    }
    let v = ask()?;
    Ok(map
        .lock()
        .unwrap()
        .entry(p.to_path_buf())
        .or_insert(v)
        .clone())
}

fn stat(p: &Path) -> Option<Stat> {
    std::fs::metadata(p).ok().map(|m| Stat {
        is_dir: m.is_dir(),
        is_file: m.is_file(),
        len: m.len(),
    })
}

/// The disk's entries of `dir`, sorted by name. The kind comes from the directory listing
/// itself; only symlinks (and entries of unknown kind) cost a `stat`.
fn list(dir: &Path) -> Result<Vec<(String, bool)>, String> {
    let mut out: Vec<(String, bool)> = Vec::new();
    let err = |e: std::io::Error| format!("{}: {e}", dir.display());
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
                out.push((name, is_file));
            }
        }
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
            ) => {}
        Err(e) => return Err(err(e)),
    }
    out.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}

pub(super) struct Fs {
    overlay: BTreeMap<PathBuf, String>,
    /// The directories above the overlay's files (each one's parents up to the root).
    overlay_dirs: HashSet<OsString>,
    /// The run's cache, whose [`DiskMemo`] answers for the disk.
    run: Option<Arc<ParseCache>>,
}

impl Fs {
    /// The disk with `overlay`, whose paths are absolute and cleaned (no `.`, `..`, `//` or
    /// trailing `/`), as the loader's own paths are; read through `run`'s memo when given.
    pub(super) fn new(overlay: BTreeMap<PathBuf, String>, run: Option<Arc<ParseCache>>) -> Fs {
        let overlay_dirs = overlay
            .keys()
            .flat_map(|k| k.ancestors().skip(1))
            .map(|d| d.as_os_str().to_owned())
            .collect();
        Fs {
            overlay,
            overlay_dirs,
            run,
        }
    }

    fn disk_stat(&self, p: &Path) -> Option<Stat> {
        match &self.run {
            Some(run) => run.disk().stat(p),
            None => stat(p),
        }
    }

    /// The overlay's files, by absolute path.
    pub(super) fn overlay(&self) -> &BTreeMap<PathBuf, String> {
        &self.overlay
    }

    /// Whether an overlay file is below `p` (so `p` is a directory of the overlay).
    fn overlay_has_dir(&self, p: &Path) -> bool {
        !self.overlay_dirs.is_empty() && self.overlay_dirs.contains(p.as_os_str())
    }

    pub(super) fn exists(&self, p: &Path) -> bool {
        self.overlay.contains_key(p) || self.overlay_has_dir(p) || self.disk_stat(p).is_some()
    }

    pub(super) fn is_dir(&self, p: &Path) -> bool {
        !self.overlay.contains_key(p)
            && (self.overlay_has_dir(p) || self.disk_stat(p).is_some_and(|s| s.is_dir))
    }

    pub(super) fn is_file(&self, p: &Path) -> bool {
        self.overlay.contains_key(p) || self.disk_stat(p).is_some_and(|s| s.is_file)
    }

    /// The size of a file in bytes, when it can be known without reading it.
    pub(super) fn size(&self, p: &Path) -> Option<u64> {
        match self.overlay.get(p) {
            Some(t) => Some(t.len() as u64),
            None => self.disk_stat(p).map(|s| s.len),
        }
    }

    pub(super) fn read_bytes(&self, p: &Path) -> Result<Vec<u8>, LoadError> {
        if let Some(t) = self.overlay.get(p) {
            return Ok(t.as_bytes().to_vec());
        }
        self.disk_read(p).map(|c| c.bytes().to_vec())
    }

    /// A file's content, shared with the run's other loads when read through its memo.
    pub(super) fn read_content(&self, p: &Path) -> Result<Content, LoadError> {
        if let Some(t) = self.overlay.get(p) {
            return Ok(Content::Text(Arc::new(t.clone())));
        }
        self.disk_read(p)
    }

    /// A file's content on the disk, through the run's memo when there is one.
    fn disk_read(&self, p: &Path) -> Result<Content, LoadError> {
        let read = match &self.run {
            Some(run) => run.disk().read(p),
            None => std::fs::read(p).map(Content::of),
        };
        read.map_err(|e| LoadError::new(format!("{}: {e}", p.display())))
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
    /// not exist has no entries on disk.
    pub(super) fn list(&self, dir: &Path) -> Result<Vec<(String, bool)>, LoadError> {
        let disk = match &self.run {
            Some(run) => run.disk().list(dir).map(|l| l.to_vec()),
            None => list(dir),
        };
        let mut out = disk.map_err(LoadError::new)?;
        let mut added = false;
        for k in self.overlay.keys() {
            if k.parent() == Some(dir)
                && let Some(name) = k.file_name()
            {
                let name = name.to_string_lossy().into_owned();
                match out.binary_search_by(|e| e.0.cmp(&name)) {
                    Ok(i) => out[i].1 = true,
                    Err(_) => {
                        out.push((name, true));
                        added = true;
                    }
                }
            }
        }
        if added {
            out.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use crate::load::{Config, ParseCache, load, test_module, write_file as write};

    fn export(dir: &std::path::Path, cache: Option<&Arc<ParseCache>>) -> String {
        let mut cfg = Config::new(dir);
        cfg.parse_cache = cache.cloned();
        let build = load(&cfg, &[".".to_string()]).unwrap();
        format!("{:?}", build.into_instance().unwrap().export().unwrap())
    }

    #[test]
    fn loads_of_one_run_read_each_file_once_and_see_it_as_first_read() {
        let d = test_module(&[
            (
                "cue.mod/pkg/v.io/lib/lib.cue",
                "package lib\n#A: {a: int | *1}\n",
            ),
            (
                "main.cue",
                "package main\nimport \"v.io/lib\"\nout: lib.#A\n",
            ),
        ]);
        let dir = d.path();
        let run = Arc::new(ParseCache::new());
        let first = export(dir, Some(&run));
        let read = run.files_read();
        // The module file, the main file and the vendored one.
        assert_eq!(read, 3);
        assert_eq!(export(dir, Some(&run)), first);
        assert_eq!(
            run.files_read(),
            read,
            "a second load of the run reads nothing"
        );

        // A file changed during the run, and one added, are not seen by the run's loads; a
        // load outside the run sees both.
        write(
            dir,
            "main.cue",
            "package main\nimport \"v.io/lib\"\nout: lib.#A & {a: 2}\n",
        );
        write(dir, "more.cue", "package main\nextra: 1\n");
        assert_eq!(export(dir, Some(&run)), first);
        let alone = export(dir, None);
        assert_ne!(alone, first);
        assert!(alone.contains("extra"), "{alone}");
        assert_eq!(export(dir, Some(&Arc::new(ParseCache::new()))), alone);
    }
}
