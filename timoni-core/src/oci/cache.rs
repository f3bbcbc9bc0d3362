//! The layer cache: `<dir>/<digest-hex>.tgz`, as Timoni names it. A cached layer is read only
//! after it hashes to its digest (a corrupt file is dropped and fetched again), and a new one is
//! written through a temporary file in the same directory and renamed into place.
//!
//! Beyond Timoni, pulled manifests are kept too (`<dir>/manifests/<digest-hex>.json`, verified
//! the same way) with the tag they were pulled by (`<dir>/refs/<host>/<repo>/<tag>` holding the
//! digest), so that [`CacheRegistry`] can serve modules without network access.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::build::sha256;
use super::error::{OciError, Result};
use super::reference::ArtifactUrl;
use super::registry::Registry;

/// Where layers are cached, or nowhere when caching is off.
#[derive(Debug, Clone)]
pub struct Cache {
    dir: Option<PathBuf>,
}

impl Cache {
    /// A cache in `dir`, created on first write.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Cache {
            dir: Some(dir.into()),
        }
    }

    /// No caching: every layer is fetched.
    pub fn disabled() -> Self {
        Cache { dir: None }
    }

    /// The cache Timoni would use: `flag` (`--cache-dir`) if given, else `$TIMONI_CACHE_DIR`, else
    /// `$HOME/.timoni/cache`; disabled when `$TIMONI_CACHING` is `false` or `0`. `env` reads an
    /// environment variable (the CLI passes `std::env::var`).
    pub fn from_settings(flag: Option<&Path>, env: impl Fn(&str) -> Option<String>) -> Self {
        if matches!(env("TIMONI_CACHING").as_deref(), Some("false" | "0")) {
            return Cache::disabled();
        }
        if let Some(dir) = flag {
            return Cache::new(dir);
        }
        if let Some(dir) = env("TIMONI_CACHE_DIR").filter(|d| !d.is_empty()) {
            return Cache::new(dir);
        }
        match env("HOME").filter(|h| !h.is_empty()) {
            Some(home) => Cache::new(Path::new(&home).join(".timoni").join("cache")),
            None => Cache::disabled(),
        }
    }

    /// The cache directory, if caching is on.
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    fn path(&self, digest: &str) -> Option<PathBuf> {
        let hex = digest.strip_prefix("sha256:")?;
        if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        Some(self.dir.as_ref()?.join(format!("{hex}.tgz")))
    }

    /// The cached layer with this digest, if present and intact. A file that does not hash to
    /// its name is removed, so that the caller fetches the layer again.
    pub fn get(&self, digest: &str) -> Option<Vec<u8>> {
        let path = self.path(digest)?;
        let data = std::fs::read(&path).ok()?;
        if sha256(&data) == digest {
            Some(data)
        } else {
            let _ = std::fs::remove_file(&path);
            None
        }
    }

    /// Stores a layer that has already been checked against `digest`.
    pub fn put(&self, digest: &str, data: &[u8]) -> Result<()> {
        match self.path(digest) {
            Some(path) => write_atomic(&path, data),
            None => Ok(()),
        }
    }

    fn manifest_path(&self, digest: &str) -> Option<PathBuf> {
        let file = self.path(digest)?;
        let name = file.file_name()?.to_string_lossy().replace(".tgz", ".json");
        Some(file.parent()?.join("manifests").join(name))
    }

    /// The file recording which digest `url`'s tag named when last pulled. Tags are checked by
    /// the OCI grammar and hosts and repositories by theirs, so no part climbs out of the cache.
    fn ref_path(&self, url: &ArtifactUrl) -> Option<PathBuf> {
        let tag = url.tag.as_deref().unwrap_or("latest");
        let mut p = self.dir.as_ref()?.join("refs").join(&url.registry);
        for part in url.repository.split('/') {
            p.push(part);
        }
        Some(p.join(tag))
    }

    /// Records a manifest pulled for `url` (by digest, or by tag: then the tag is remembered).
    pub fn put_manifest(&self, url: &ArtifactUrl, data: &[u8]) -> Result<()> {
        let digest = sha256(data);
        let Some(path) = self.manifest_path(&digest) else {
            return Ok(());
        };
        write_atomic(&path, data)?;
        if url.digest.is_none()
            && let Some(r) = self.ref_path(url)
        {
            write_atomic(&r, digest.as_bytes())?;
        }
        Ok(())
    }

    /// The cached manifest of `url`: by its digest, else by the digest its tag named when it
    /// was last pulled. Only bytes that hash to that digest are returned.
    pub fn get_manifest(&self, url: &ArtifactUrl) -> Option<Vec<u8>> {
        let digest = match &url.digest {
            Some(d) => d.clone(),
            None => std::fs::read_to_string(self.ref_path(url)?).ok()?,
        };
        let data = std::fs::read(self.manifest_path(digest.trim())?).ok()?;
        (sha256(&data) == digest.trim()).then_some(data)
    }
}

/// Writes `data` to `path` through a temporary file in the same directory.
fn write_atomic(path: &Path, data: &[u8]) -> Result<()> {
    let dir = path.parent().expect("cache files live in the cache dir");
    std::fs::create_dir_all(dir).map_err(|e| OciError::io(dir, e))?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".layer-")
        .tempfile_in(dir)
        .map_err(|e| OciError::io(dir, e))?;
    tmp.write_all(data)
        .and_then(|_| tmp.as_file().sync_all())
        .map_err(|e| OciError::io(tmp.path(), e))?;
    tmp.persist(path).map_err(|e| OciError::io(path, e.error))?;
    Ok(())
}

/// A [`Registry`] that is only the local cache: manifests and layers pulled before, nothing
/// else. What hermetic commands (`timoni fn` without `--allow-network`) fetch modules through.
pub struct CacheRegistry<'a> {
    cache: &'a Cache,
}

impl<'a> CacheRegistry<'a> {
    pub fn new(cache: &'a Cache) -> Self {
        CacheRegistry { cache }
    }

    fn offline(&self, url: &ArtifactUrl) -> OciError {
        OciError::Offline {
            reference: url.to_string(),
            cache: self
                .cache
                .dir()
                .map(|d| d.display().to_string())
                .unwrap_or_else(|| "disabled".into()),
        }
    }
}

impl Registry for CacheRegistry<'_> {
    fn push_blob(&self, repo: &ArtifactUrl, _: &str, _: &[u8]) -> Result<()> {
        Err(self.offline(repo))
    }

    fn push_manifest(&self, repo: &ArtifactUrl, _: &str, _: &[u8], _: &str) -> Result<()> {
        Err(self.offline(repo))
    }

    fn pull_manifest(&self, url: &ArtifactUrl) -> Result<Vec<u8>> {
        self.cache
            .get_manifest(url)
            .ok_or_else(|| self.offline(url))
    }

    fn manifest_digest(&self, url: &ArtifactUrl) -> Result<String> {
        self.pull_manifest(url).map(|m| sha256(&m))
    }

    fn pull_blob(&self, repo: &ArtifactUrl, digest: &str, _: u64, _: u64) -> Result<Vec<u8>> {
        self.cache
            .get(digest)
            .ok_or_else(|| self.offline(&repo.with_digest(digest)))
    }

    fn list_tags(&self, repo: &ArtifactUrl) -> Result<Vec<String>> {
        Err(self.offline(repo))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stores_verifies_and_drops_corrupt_layers() {
        let tmp = tempfile::tempdir().unwrap();
        let cache = Cache::new(tmp.path().join("c"));
        let data = b"layer bytes";
        let digest = sha256(data);
        assert_eq!(cache.get(&digest), None);
        cache.put(&digest, data).unwrap();
        let file = tmp.path().join("c").join(format!("{}.tgz", &digest[7..]));
        assert!(file.is_file());
        assert_eq!(cache.get(&digest).as_deref(), Some(&data[..]));
        std::fs::write(&file, b"tampered").unwrap();
        assert_eq!(cache.get(&digest), None, "a corrupt entry is not used");
        assert!(!file.exists(), "a corrupt entry is removed");
        // Only the final file is left: the temporary one was renamed.
        cache.put(&digest, data).unwrap();
        let names: Vec<_> = std::fs::read_dir(tmp.path().join("c"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1);
    }

    #[test]
    fn settings_follow_timoni_precedence() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                vars.iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        let c = Cache::from_settings(None, env(&[("HOME", "/h")]));
        assert_eq!(c.dir(), Some(Path::new("/h/.timoni/cache")));
        let c = Cache::from_settings(None, env(&[("HOME", "/h"), ("TIMONI_CACHE_DIR", "/c")]));
        assert_eq!(c.dir(), Some(Path::new("/c")));
        let c = Cache::from_settings(Some(Path::new("/f")), env(&[("TIMONI_CACHE_DIR", "/c")]));
        assert_eq!(c.dir(), Some(Path::new("/f")));
        let c = Cache::from_settings(Some(Path::new("/f")), env(&[("TIMONI_CACHING", "false")]));
        assert_eq!(c.dir(), None);
    }
}
