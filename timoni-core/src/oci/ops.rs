//! The operations behind the OCI commands: push, pull, list, tag and resolve modules and
//! generic artifacts, and [`fetch_module`] for commands that accept an `oci://` module. Every
//! function takes a [`Registry`], so tests can use a real server or a scripted one.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::build::{
    Image, Manifest, artifact_layer, assemble_image, default_annotations, module_layers, sha256,
};
use super::cache::Cache;
use super::error::{OciError, Result};
use super::extract::{ExtractLimits, extract_layer};
use super::reference::{ArtifactUrl, validate_tag};
use super::registry::Registry;
use super::{
    CONFIG_MEDIA_TYPE, CONTENT_MEDIA_TYPE, CONTENT_TYPE_ANNOTATION, MANIFEST_MEDIA_TYPE,
    annotations,
};

/// What `mod push -o json|yaml` prints.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ModulePush {
    pub url: String,
    pub repository: String,
    pub version: String,
    pub digest: String,
}

/// One module version, as `mod list -o` prints it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ModuleReference {
    pub name: String,
    pub repository: String,
    pub version: String,
    pub digest: String,
}

/// One artifact tag, as `artifact list|digest|push -o` print it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ArtifactReference {
    pub repository: String,
    pub tag: String,
    pub digest: String,
}

/// What a pull extracted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PulledImage {
    /// `sha256:` of the manifest bytes fetched.
    pub digest: String,
    /// The manifest annotations.
    pub annotations: BTreeMap<String, String>,
    /// The number of layers extracted.
    pub layers: usize,
}

/// A module fetched from a registry into a local directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchedModule {
    /// The directory holding the extracted module.
    pub dir: PathBuf,
    /// `oci://host/repo`.
    pub repository: String,
    /// From `org.opencontainers.image.version`, else `…revision` (Timoni v0.13 artifacts).
    pub version: String,
    /// `sha256:` of the manifest bytes fetched.
    pub digest: String,
    pub annotations: BTreeMap<String, String>,
}

/// Checks a module version: strict semver, no `v` prefix, no build metadata.
pub fn validate_version(version: &str) -> Result<semver::Version> {
    let v = semver::Version::parse(version).map_err(|e| {
        OciError::InvalidInput(format!("version {version:?} is not strict semver: {e}"))
    })?;
    if !v.build.is_empty() {
        return Err(OciError::InvalidInput(format!(
            "version {version:?} must not carry build metadata (+…): it is used as the tag"
        )));
    }
    Ok(v)
}

/// The module image of `dir`: its two layers and the manifest annotations Timoni derives (the
/// version, `created` from `source_date_epoch` or git, git source and revision, `sh.timoni.images`),
/// with `user_annotations` winning over derived ones. What `mod push` pushes and `mod build` writes.
pub fn build_module_image(
    dir: &Path,
    version: &str,
    user_annotations: &BTreeMap<String, String>,
    source_date_epoch: Option<&str>,
    resolve_symlinks: bool,
) -> Result<Image> {
    validate_version(version)?;
    let layers = module_layers(dir, resolve_symlinks)?;
    let mut annotations =
        default_annotations(dir, Some(version), source_date_epoch, user_annotations)?;
    // User annotations win over derived ones, as in Timoni.
    if let Some(images) = super::images::images_annotation(dir)? {
        annotations
            .entry(annotations::IMAGES.to_string())
            .or_insert(images);
    }
    Ok(assemble_image(layers.to_vec(), annotations))
}

/// The one-layer artifact of a directory (minus its `timoni.ignore` patterns) or of one file.
/// What `artifact push` pushes and `artifact build` writes.
pub fn build_artifact_image(
    path: &Path,
    content_type: &str,
    user_annotations: &BTreeMap<String, String>,
    source_date_epoch: Option<&str>,
    resolve_symlinks: bool,
) -> Result<Image> {
    let layer = artifact_layer(path, content_type, resolve_symlinks)?;
    let dir = if path.is_dir() {
        path
    } else {
        path.parent().unwrap_or(Path::new("."))
    };
    let annotations = default_annotations(dir, None, source_date_epoch, user_annotations)?;
    Ok(assemble_image(vec![layer], annotations))
}

fn validate_tags(tags: &[String]) -> Result<()> {
    if tags.is_empty() {
        return Err(OciError::InvalidInput(
            "at least one --tag is required".into(),
        ));
    }
    for t in tags {
        validate_tag(t).map_err(OciError::InvalidInput)?;
    }
    Ok(())
}

/// What `mod push` sends for a path: a module directory built into an image on the way, or an
/// image `mod build` wrote (an OCI archive file, or an OCI layout directory) pushed as it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModulePushSource {
    /// A module directory, with the version to tag it with.
    Directory { version: String },
    /// An archive or layout, with the version given to check against the one it records.
    Archive { version: Option<String> },
}

/// What `mod push` was asked to do besides the path and URL.
#[derive(Debug, Clone, Default)]
pub struct ModulePushOptions {
    /// `--version`, if given: required for a directory, read from the manifest of an archive.
    pub version: Option<String>,
    /// `--latest`: also tag the version as `latest`.
    pub latest: bool,
    /// `--annotation` pairs (only when building a directory).
    pub annotations: BTreeMap<String, String>,
    /// `SOURCE_DATE_EPOCH`, for the created annotation of a directory's image.
    pub source_date_epoch: Option<String>,
    /// `--resolve-symlinks` (only when building a directory).
    pub resolve_symlinks: bool,
}

/// Decides what `mod push` sends for `path`, as Timoni does: a regular file is a pre-built
/// archive, a directory is a module to build and needs a strict semver `--version`; and, ours
/// too, a directory holding an OCI layout (`index.json`, no `cue.mod`) is a pre-built image.
/// Building options given with a pre-built image are refused with Timoni's messages.
pub fn module_push_source(path: &Path, opts: &ModulePushOptions) -> Result<ModulePushSource> {
    let meta = std::fs::metadata(path).map_err(|_| {
        OciError::InvalidInput(format!("module not found at path {}", path.display()))
    })?;
    let version = opts.version.clone().filter(|v| !v.is_empty());
    let layout =
        meta.is_dir() && !path.join("cue.mod").is_dir() && path.join("index.json").is_file();
    if !meta.is_dir() || layout {
        if opts.resolve_symlinks {
            return Err(OciError::InvalidInput(
                "--resolve-symlinks is not supported when pushing a pre-built archive".into(),
            ));
        }
        if !opts.annotations.is_empty() {
            return Err(OciError::InvalidInput(
                "--annotation is not supported when pushing a pre-built archive".into(),
            ));
        }
        return Ok(ModulePushSource::Archive { version });
    }
    let Some(version) = version else {
        return Err(OciError::InvalidInput(
            "--version is required to push a module directory".into(),
        ));
    };
    validate_version(&version)?;
    Ok(ModulePushSource::Directory { version })
}

/// `mod push`: pushes the module at `path` (see [`module_push_source`] for what is sent) as
/// `url:version`, and as `latest` too when asked.
pub fn push_module_path(
    registry: &dyn Registry,
    path: &Path,
    url: &ArtifactUrl,
    opts: &ModulePushOptions,
) -> Result<ModulePush> {
    match module_push_source(path, opts)? {
        ModulePushSource::Archive { version } => {
            push_module_archive(registry, path, url, version.as_deref(), opts.latest)
        }
        ModulePushSource::Directory { version } => push_module(
            registry,
            path,
            url,
            &version,
            opts.latest,
            &opts.annotations,
            opts.source_date_epoch.as_deref(),
            opts.resolve_symlinks,
        ),
    }
}

/// Builds the module image of `dir` and pushes it as `url:version`, and as `latest` too when
/// `latest` is set.
#[allow(clippy::too_many_arguments)]
pub fn push_module(
    registry: &dyn Registry,
    dir: &Path,
    url: &ArtifactUrl,
    version: &str,
    latest: bool,
    user_annotations: &BTreeMap<String, String>,
    source_date_epoch: Option<&str>,
    resolve_symlinks: bool,
) -> Result<ModulePush> {
    validate_version(version)?;
    no_tag_or_digest(url)?;
    let image = build_module_image(
        dir,
        version,
        user_annotations,
        source_date_epoch,
        resolve_symlinks,
    )?;
    let mut tags = vec![version.to_string()];
    if latest {
        tags.push("latest".to_string());
    }
    push_image(registry, url, &image, &tags)?;
    Ok(ModulePush {
        url: url.with_tag(version).to_string(),
        repository: repository_of(url),
        version: version.to_string(),
        digest: image.digest,
    })
}

/// `timoni mod push ARCHIVE`: pushes a module image written by `mod build` (an archive or a
/// layout). It must have exactly two Timoni layers, `module/vendor` then `module`. The version
/// is `version` if given, else the manifest's `org.opencontainers.image.version`; a given
/// version must equal the manifest's, since the manifest (and its digest) cannot change.
pub fn push_module_archive(
    registry: &dyn Registry,
    archive: &Path,
    url: &ArtifactUrl,
    version: Option<&str>,
    latest: bool,
) -> Result<ModulePush> {
    no_tag_or_digest(url)?;
    let image = super::layout::read_image(archive)?;
    if image.content_types != [super::CONTENT_TYPE_VENDOR, super::CONTENT_TYPE_MODULE] {
        return Err(OciError::InvalidArtifact(format!(
            "{}: a module image has exactly two layers, module/vendor then module; this one has {:?}",
            archive.display(),
            image.content_types
        )));
    }
    let recorded = image.annotations.get(annotations::VERSION).cloned();
    let version = match (version.filter(|v| !v.is_empty()), recorded) {
        (Some(v), Some(r)) if v != r => {
            return Err(OciError::InvalidInput(format!(
                "--version {v} differs from the version {r} the archive was built with"
            )));
        }
        (Some(v), _) => v.to_string(),
        (None, Some(r)) => r,
        (None, None) => {
            return Err(OciError::InvalidInput(format!(
                "{}: the manifest has no {} annotation; give --version",
                archive.display(),
                annotations::VERSION
            )));
        }
    };
    validate_version(&version)?;
    for (digest, blob) in &image.blobs {
        registry.push_blob(url, digest, blob)?;
    }
    let mut tags = vec![version.clone()];
    if latest {
        tags.push("latest".to_string());
    }
    for t in &tags {
        registry.push_manifest(url, t, &image.manifest, MANIFEST_MEDIA_TYPE)?;
    }
    Ok(ModulePush {
        url: url.with_tag(&version).to_string(),
        repository: repository_of(url),
        version,
        digest: image.digest,
    })
}

/// Packs a directory or one file into a one-layer artifact and pushes it under every tag.
#[allow(clippy::too_many_arguments)]
pub fn push_artifact(
    registry: &dyn Registry,
    path: &Path,
    url: &ArtifactUrl,
    tags: &[String],
    content_type: &str,
    user_annotations: &BTreeMap<String, String>,
    source_date_epoch: Option<&str>,
    resolve_symlinks: bool,
) -> Result<ArtifactReference> {
    no_tag_or_digest(url)?;
    validate_tags(tags)?;
    let image = build_artifact_image(
        path,
        content_type,
        user_annotations,
        source_date_epoch,
        resolve_symlinks,
    )?;
    push_image(registry, url, &image, tags)?;
    Ok(ArtifactReference {
        repository: repository_of(url),
        tag: tags[0].clone(),
        digest: image.digest,
    })
}

fn no_tag_or_digest(url: &ArtifactUrl) -> Result<()> {
    if url.tag.is_some() || url.digest.is_some() {
        return Err(OciError::InvalidUrl {
            url: url.to_string(),
            reason: "give the repository without a tag or digest; tags come from the flags".into(),
        });
    }
    Ok(())
}

fn push_image(
    registry: &dyn Registry,
    url: &ArtifactUrl,
    image: &Image,
    tags: &[String],
) -> Result<()> {
    registry.push_blob(url, &sha256(&image.config), &image.config)?;
    for l in &image.layers {
        registry.push_blob(url, &l.digest, &l.blob)?;
    }
    for t in tags {
        registry.push_manifest(url, t, &image.manifest, MANIFEST_MEDIA_TYPE)?;
    }
    Ok(())
}

/// The manifest bytes of `url` and their digest, which must equal the URL's digest if it has one.
fn pull_pinned_manifest(registry: &dyn Registry, url: &ArtifactUrl) -> Result<(Vec<u8>, String)> {
    let bytes = registry.pull_manifest(url)?;
    let digest = sha256(&bytes);
    if let Some(pinned) = &url.digest
        && pinned != &digest
    {
        return Err(OciError::DigestMismatch {
            what: format!("the manifest of {url}"),
            expected: pinned.clone(),
            actual: digest,
        });
    }
    Ok((bytes, digest))
}

/// Fetches and checks the manifest named by `url`: an OCI image manifest whose config has the
/// Timoni media type. Returns it with the digest of the bytes fetched, and records it in the
/// cache (so that [`super::CacheRegistry`] can serve it later).
fn fetch_manifest(
    registry: &dyn Registry,
    url: &ArtifactUrl,
    cache: &Cache,
) -> Result<(Manifest, String)> {
    let (bytes, digest) = pull_pinned_manifest(registry, url)?;
    let manifest: Manifest = serde_json::from_slice(&bytes).map_err(|e| {
        OciError::InvalidArtifact(format!("{url}: the manifest is not valid OCI JSON: {e}"))
    })?;
    if manifest.config.media_type != CONFIG_MEDIA_TYPE {
        return Err(OciError::InvalidArtifact(format!(
            "{url} is not a Timoni artifact: config media type {:?}, expected {CONFIG_MEDIA_TYPE}",
            manifest.config.media_type
        )));
    }
    cache.put_manifest(url, &bytes)?;
    Ok((manifest, digest))
}

/// Downloads (or reads from the cache) the Timoni layers of `manifest` whose content type
/// passes `keep`, and extracts them all into `dest` through a staging directory.
fn pull_layers(
    registry: &dyn Registry,
    url: &ArtifactUrl,
    manifest: &Manifest,
    cache: &Cache,
    dest: &Path,
    keep: impl Fn(&str) -> bool,
) -> Result<usize> {
    let limits = ExtractLimits::default();
    let mut blobs = Vec::new();
    for l in &manifest.layers {
        let ct = l
            .annotations
            .get(CONTENT_TYPE_ANNOTATION)
            .map(String::as_str)
            .unwrap_or("");
        if l.media_type != CONTENT_MEDIA_TYPE || !keep(ct) {
            continue;
        }
        let blob = match cache.get(&l.digest) {
            Some(b) => b,
            None => {
                let b = registry.pull_blob(url, &l.digest, l.size, limits.max_compressed)?;
                cache.put(&l.digest, &b)?;
                b
            }
        };
        blobs.push(blob);
    }
    if blobs.is_empty() {
        return Err(OciError::InvalidArtifact(format!(
            "{url} has no layer to extract"
        )));
    }
    let parent = match dest.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&parent).map_err(|e| OciError::io(&parent, e))?;
    let staging = tempfile::Builder::new()
        .prefix(".timoni-pull-")
        .tempdir_in(&parent)
        .map_err(|e| OciError::io(&parent, e))?;
    for b in &blobs {
        extract_layer(b, staging.path(), limits)?;
    }
    install(staging, dest)?;
    Ok(blobs.len())
}

/// Moves a fully extracted staging directory to `dest`, or its entries into `dest` if it exists.
fn install(staging: tempfile::TempDir, dest: &Path) -> Result<()> {
    if !dest.exists() {
        let path = staging.keep();
        return std::fs::rename(&path, dest).map_err(|e| OciError::io(dest, e));
    }
    let entries = std::fs::read_dir(staging.path()).map_err(|e| OciError::io(staging.path(), e))?;
    for e in entries {
        let e = e.map_err(|e| OciError::io(staging.path(), e))?;
        let target = dest.join(e.file_name());
        if let Ok(m) = std::fs::symlink_metadata(&target) {
            let r = if m.is_dir() {
                std::fs::remove_dir_all(&target)
            } else {
                std::fs::remove_file(&target)
            };
            r.map_err(|err| OciError::io(&target, err))?;
        }
        std::fs::rename(e.path(), &target).map_err(|err| OciError::io(&target, err))?;
    }
    Ok(())
}

fn module_version(annotations: &BTreeMap<String, String>) -> String {
    annotations
        .get(annotations::VERSION)
        .or_else(|| annotations.get(annotations::REVISION))
        .cloned()
        .unwrap_or_default()
}

/// Resolves a module URL plus `-v/--version` and `-d/--digest` to the reference to pull, as
/// Timoni does: a digest in the URL wins; a digest with version `latest` (or none) pulls by
/// digest; a digest with another version pulls the version and then requires that digest.
pub(crate) fn module_target(
    url: &ArtifactUrl,
    version: Option<&str>,
    digest: Option<&str>,
) -> (ArtifactUrl, Option<String>) {
    if url.digest.is_some() {
        return (url.clone(), None);
    }
    // `latest` is every command's default version: a tag written in the URL wins over it.
    let is_default = |v: &str| v.is_empty() || url.tag.is_some() && v == "latest";
    let version = version.filter(|v| !is_default(v));
    match (version, digest.filter(|d| !d.is_empty())) {
        (None | Some("latest"), Some(d)) if url.tag.is_none() || version.is_some() => {
            (url.with_digest(d), None)
        }
        (Some(v), d) => (url.with_tag(v), d.map(str::to_string)),
        (None, d) => (url.clone(), d.map(str::to_string)),
    }
}

/// Fetches a module into `dest`: the entry point for `timoni build`, `mod show` and `apply`
/// with an `oci://` module. `version` defaults to the URL's tag, else `latest`. When both a
/// version and a `digest` are given, the pulled manifest must have that digest. Layers come from
/// and go to `cache`; the extraction is staged, so `dest` is complete or untouched.
pub fn fetch_module(
    registry: &dyn Registry,
    url: &ArtifactUrl,
    version: Option<&str>,
    digest: Option<&str>,
    dest: &Path,
    cache: &Cache,
) -> Result<FetchedModule> {
    if let Some(d) = digest.filter(|d| !d.is_empty()) {
        super::reference::validate_digest(d).map_err(OciError::InvalidInput)?;
    }
    let (target, required) = module_target(url, version, digest);
    let (manifest, got) = fetch_manifest(registry, &target, cache)?;
    if let Some(want) = required
        && want != got
    {
        return Err(OciError::VersionDigestMismatch {
            upstream: got,
            version: target.reference().to_string(),
            specified: want,
        });
    }
    pull_layers(registry, &target, &manifest, cache, dest, |_| true)?;
    Ok(FetchedModule {
        dir: dest.to_path_buf(),
        repository: repository_of(url),
        version: module_version(&manifest.annotations),
        digest: got,
        annotations: manifest.annotations,
    })
}

/// Fetches `oci://` modules for commands that accept them (`build`, `bundle build`, `mod show`,
/// `fn`). A seam so that core callers need no registry client of their own.
pub trait ModuleFetch: Sync {
    /// Like [`fetch_module`], with the registry and cache this fetcher stands for.
    fn fetch(
        &self,
        url: &ArtifactUrl,
        version: Option<&str>,
        digest: Option<&str>,
        dest: &Path,
    ) -> Result<FetchedModule>;
}

/// The usual [`ModuleFetch`]: the registry of each URL (with [`super::ConnectOptions`]) through
/// the layer cache, or, with `network` off, the local cache alone ([`super::CacheRegistry`]).
#[derive(Debug, Clone)]
pub struct Fetcher {
    pub connect: super::ConnectOptions,
    pub cache: Cache,
    /// Whether registries may be contacted; without, only cached modules are found.
    pub network: bool,
}

impl ModuleFetch for Fetcher {
    fn fetch(
        &self,
        url: &ArtifactUrl,
        version: Option<&str>,
        digest: Option<&str>,
        dest: &Path,
    ) -> Result<FetchedModule> {
        if self.network {
            let registry = super::connect(url, &self.connect)?;
            fetch_module(&registry, url, version, digest, dest, &self.cache)
        } else {
            let registry = super::CacheRegistry::new(&self.cache);
            fetch_module(&registry, url, version, digest, dest, &self.cache)
        }
    }
}

/// `timoni mod pull`: every Timoni layer of `url` at `version` (default `latest`) into `dest`.
pub fn pull_module(
    registry: &dyn Registry,
    url: &ArtifactUrl,
    version: Option<&str>,
    dest: &Path,
    cache: &Cache,
) -> Result<PulledImage> {
    let m = fetch_module(registry, url, version, None, dest, cache)?;
    Ok(PulledImage {
        digest: m.digest,
        layers: 2,
        annotations: m.annotations,
    })
}

/// `timoni artifact pull`: the layers of `url` (default tag `latest`) whose content type equals
/// `content_type` (all Timoni layers when `None`) into `dest`.
pub fn pull_artifact(
    registry: &dyn Registry,
    url: &ArtifactUrl,
    content_type: Option<&str>,
    dest: &Path,
    cache: &Cache,
) -> Result<PulledImage> {
    let (manifest, digest) = fetch_manifest(registry, url, cache)?;
    let layers = pull_layers(registry, url, &manifest, cache, dest, |ct| {
        content_type.is_none_or(|want| want == ct)
    })?;
    Ok(PulledImage {
        digest,
        annotations: manifest.annotations,
        layers,
    })
}

/// `timoni artifact tag`: pushes the manifest of `url` again under each tag. Returns its digest.
pub fn tag_artifact(registry: &dyn Registry, url: &ArtifactUrl, tags: &[String]) -> Result<String> {
    validate_tags(tags)?;
    let (bytes, digest) = pull_pinned_manifest(registry, url)?;
    let media_type = serde_json::from_slice::<serde_json::Value>(&bytes)
        .ok()
        .and_then(|v| v.get("mediaType")?.as_str().map(str::to_string))
        .unwrap_or_else(|| MANIFEST_MEDIA_TYPE.to_string());
    for t in tags {
        registry.push_manifest(url, t, &bytes, &media_type)?;
    }
    Ok(digest)
}

/// `timoni artifact digest`: the manifest digest of `url` (default tag `latest`).
pub fn artifact_digest(registry: &dyn Registry, url: &ArtifactUrl) -> Result<ArtifactReference> {
    let digest = match &url.digest {
        Some(d) => d.clone(),
        None => registry.manifest_digest(url)?,
    };
    Ok(ArtifactReference {
        repository: repository_of(url),
        tag: url.tag.clone().unwrap_or_else(|| "latest".to_string()),
        digest,
    })
}

fn repository_of(url: &ArtifactUrl) -> String {
    format!("oci://{}", url.repo())
}

/// `timoni mod list`: the strict-semver tags, newest first, then `latest` if present; at most
/// `limit` entries (0 = all), with their digests when `with_digest`.
pub fn list_module_versions(
    registry: &dyn Registry,
    url: &ArtifactUrl,
    with_digest: bool,
    limit: usize,
) -> Result<Vec<ModuleReference>> {
    let tags = registry.list_tags(url)?;
    let mut versions: Vec<(semver::Version, String)> = tags
        .iter()
        .filter_map(|t| validate_version(t).ok().map(|v| (v, t.clone())))
        .collect();
    versions.sort_by(|a, b| b.0.cmp(&a.0));
    let mut names: Vec<String> = versions.into_iter().map(|(_, t)| t).collect();
    if tags.iter().any(|t| t == "latest") {
        names.push("latest".to_string());
    }
    if limit > 0 {
        names.truncate(limit);
    }
    let name = url.repository.rsplit('/').next().unwrap_or("").to_string();
    names
        .into_iter()
        .map(|v| {
            let digest = if with_digest {
                registry.manifest_digest(&url.with_tag(&v))?
            } else {
                String::new()
            };
            Ok(ModuleReference {
                name: name.clone(),
                repository: repository_of(url),
                version: v,
                digest,
            })
        })
        .collect()
}

/// `timoni artifact list`: the tags in descending lexical order, filtered by a regular
/// expression and/or a semver range (tags that are not semver never match a range), at most
/// `limit` (0 = all), with digests when `with_digest`.
pub fn list_artifact_tags(
    registry: &dyn Registry,
    url: &ArtifactUrl,
    with_digest: bool,
    limit: usize,
    filter_regex: Option<&str>,
    filter_semver: Option<&str>,
) -> Result<Vec<ArtifactReference>> {
    let re = filter_regex
        .map(regex::Regex::new)
        .transpose()
        .map_err(|e| OciError::InvalidInput(format!("--filter-regex: {e}")))?;
    let req = filter_semver
        .map(semver::VersionReq::parse)
        .transpose()
        .map_err(|e| OciError::InvalidInput(format!("--filter-semver: {e}")))?;
    let mut tags: Vec<String> = registry
        .list_tags(url)?
        .into_iter()
        .filter(|t| re.as_ref().is_none_or(|re| re.is_match(t)))
        .filter(|t| {
            req.as_ref().is_none_or(|req| {
                semver::Version::parse(t.strip_prefix('v').unwrap_or(t))
                    .is_ok_and(|v| req.matches(&v))
            })
        })
        .collect();
    tags.sort_by(|a, b| b.cmp(a));
    if limit > 0 {
        tags.truncate(limit);
    }
    tags.into_iter()
        .map(|t| {
            let digest = if with_digest {
                registry.manifest_digest(&url.with_tag(&t))?
            } else {
                String::new()
            };
            Ok(ArtifactReference {
                repository: repository_of(url),
                tag: t,
                digest,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_target_follows_timoni_version_and_digest_rules() {
        let d = format!("sha256:{}", "b".repeat(64));
        let u = ArtifactUrl::parse("oci://r/m").unwrap();
        let (t, req) = module_target(&u, None, None);
        assert_eq!((t.reference(), req), ("latest", None));
        let (t, req) = module_target(&u, Some("latest"), Some(&d));
        assert_eq!((t.reference(), req), (d.as_str(), None));
        let (t, req) = module_target(&u, Some("1.0.0"), Some(&d));
        assert_eq!((t.reference(), req), ("1.0.0", Some(d.clone())));
        let tagged = ArtifactUrl::parse("oci://r/m:2.0.0").unwrap();
        let (t, req) = module_target(&tagged, None, None);
        assert_eq!((t.reference(), req), ("2.0.0", None));
        // The default version does not override the URL's tag; an explicit one does.
        let (t, req) = module_target(&tagged, Some("latest"), Some(&d));
        assert_eq!((t.reference(), req), ("2.0.0", Some(d.clone())));
        let (t, _) = module_target(&tagged, Some("3.0.0"), None);
        assert_eq!(t.reference(), "3.0.0");
    }

    #[test]
    fn mod_push_builds_directories_and_sends_archives_as_they_are() {
        let tmp = tempfile::tempdir().unwrap();
        let module = tmp.path().join("module");
        std::fs::create_dir_all(module.join("cue.mod")).unwrap();
        let archive = tmp.path().join("module.tar");
        std::fs::write(&archive, b"").unwrap();
        let layout = tmp.path().join("layout");
        std::fs::create_dir_all(&layout).unwrap();
        std::fs::write(layout.join("index.json"), b"{}").unwrap();
        let with = |version: Option<&str>| ModulePushOptions {
            version: version.map(str::to_string),
            ..Default::default()
        };
        let err = |path: &Path, opts: &ModulePushOptions| {
            module_push_source(path, opts).unwrap_err().to_string()
        };

        assert_eq!(
            module_push_source(&module, &with(Some("1.0.0"))).unwrap(),
            ModulePushSource::Directory {
                version: "1.0.0".into()
            }
        );
        assert!(err(&module, &with(None)).contains("--version is required"));
        assert!(err(&module, &with(Some("v1.0"))).contains("not strict semver"));

        for image in [&archive, &layout] {
            assert_eq!(
                module_push_source(image, &with(None)).unwrap(),
                ModulePushSource::Archive { version: None }
            );
            assert_eq!(
                module_push_source(image, &with(Some("2.0.0"))).unwrap(),
                ModulePushSource::Archive {
                    version: Some("2.0.0".into())
                }
            );
            let symlinks = ModulePushOptions {
                resolve_symlinks: true,
                ..with(None)
            };
            assert_eq!(
                err(image, &symlinks),
                "--resolve-symlinks is not supported when pushing a pre-built archive"
            );
            let mut annotated = with(None);
            annotated.annotations.insert("a".into(), "b".into());
            assert_eq!(
                err(image, &annotated),
                "--annotation is not supported when pushing a pre-built archive"
            );
        }

        let missing = tmp.path().join("nope");
        assert_eq!(
            err(&missing, &with(Some("1.0.0"))),
            format!("module not found at path {}", missing.display())
        );
    }

    #[test]
    fn versions_must_be_strict_semver_without_build() {
        assert!(validate_version("1.0.0").is_ok());
        assert!(validate_version("1.0.0-rc.1").is_ok());
        for bad in ["v1.0.0", "1.0", "1.0.0+b1", "latest"] {
            assert!(validate_version(bad).is_err(), "{bad}");
        }
    }
}
