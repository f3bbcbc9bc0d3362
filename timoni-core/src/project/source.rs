//! A Project's OCI artifact: `timoni project push` packs the Project's directory (minus its
//! `timoni.ignore` patterns) into a one-layer Timoni artifact with content type `project`, after
//! checking the Project file; the controller resolves the watched tag to a digest and pulls that
//! digest, its layers through the layer cache, into a fresh directory (extraction is staged and
//! refuses unsafe paths, see [`crate::oci::extract_layer`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::oci::{self, ArtifactReference, ArtifactUrl, Cache, Registry};

use super::definition::{Project, load_project};

/// The content type of a Project artifact's layer.
pub const CONTENT_TYPE_PROJECT: &str = "project";

fn fetch_err(e: oci::OciError) -> Error {
    Error::Fetch(e.to_string())
}

/// Checks the Project file `project_file` of `dir`, then pushes `dir` to `url` (a repository,
/// without tag) under every tag.
#[allow(clippy::too_many_arguments)]
pub fn push_project(
    registry: &dyn Registry,
    dir: &Path,
    project_file: &str,
    url: &ArtifactUrl,
    tags: &[String],
    annotations: &BTreeMap<String, String>,
    source_date_epoch: Option<&str>,
) -> Result<(Project, ArtifactReference)> {
    let project = load_project(dir, project_file)?;
    let pushed = oci::push_artifact(
        registry,
        dir,
        url,
        tags,
        CONTENT_TYPE_PROJECT,
        annotations,
        source_date_epoch,
        false,
    )
    .map_err(fetch_err)?;
    Ok((project, pushed))
}

/// The digest `repository:tag` points at now.
pub fn resolve_tag(registry: &dyn Registry, repository: &ArtifactUrl, tag: &str) -> Result<String> {
    oci::artifact_digest(registry, &repository.with_tag(tag))
        .map(|r| r.digest)
        .map_err(fetch_err)
}

/// A Project artifact pulled into a directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FetchedProject {
    pub dir: PathBuf,
    pub digest: String,
}

/// Pulls the Project artifact `repository@digest` into `dest`, layers through `cache`.
pub fn fetch_project(
    registry: &dyn Registry,
    repository: &ArtifactUrl,
    digest: &str,
    dest: &Path,
    cache: &Cache,
) -> Result<FetchedProject> {
    let url = repository.with_digest(digest);
    let pulled = oci::pull_artifact(registry, &url, Some(CONTENT_TYPE_PROJECT), dest, cache)
        .map_err(fetch_err)?;
    if pulled.layers == 0 {
        return Err(Error::Fetch(format!(
            "{url}: no layer with content type {CONTENT_TYPE_PROJECT:?}: not a Timoni project artifact"
        )));
    }
    Ok(FetchedProject {
        dir: dest.to_path_buf(),
        digest: pulled.digest,
    })
}
