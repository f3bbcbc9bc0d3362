//! Kubernetes schema artifacts as Timoni publishes them (`timoni mod vendor k8s -v 1.xx`): an
//! artifact whose one layer, of content type `cue.mod/gen`, holds the `k8s.io/...` CUE packages
//! of one Kubernetes minor version, tagged `v1.xx` (and `latest`) in a repository, by default
//! Timoni's `oci://ghcr.io/stefanprodan/timoni/kubernetes-schema`. [`pull`] extracts it into a
//! module's `cue.mod/gen`; `k8s-schemagen` builds the directory such an artifact is pushed from.

use std::path::Path;

use crate::oci::{self, ArtifactUrl, Cache, OciError, PulledImage, Registry};

/// The repository Timoni pulls Kubernetes schemas from.
pub const SCHEMA_REPOSITORY: &str = "oci://ghcr.io/stefanprodan/timoni/kubernetes-schema";

/// The artifact of `version` in `repository`: `latest`, or the minor version tagged with a
/// leading `v` (`1.30` and `v1.30` are both `:v1.30`), as Timoni tags them.
pub fn schema_url(repository: &str, version: &str) -> oci::Result<ArtifactUrl> {
    let repo = ArtifactUrl::parse(repository)?;
    if repo.tag.is_some() || repo.digest.is_some() {
        return Err(OciError::InvalidUrl {
            url: repository.to_string(),
            reason: "give the repository without a tag or digest; the tag comes from -v".into(),
        });
    }
    let tag = if version == "latest" || version.starts_with('v') {
        version.to_string()
    } else {
        format!("v{version}")
    };
    ArtifactUrl::parse(&format!("{repo}:{tag}"))
}

/// Pulls the `cue.mod/gen` layer of `url` into `module_root/cue.mod/gen`, replacing the
/// top-level directories it holds (`k8s.io`) and leaving others (vendored CRDs) alone.
pub fn pull(
    registry: &dyn Registry,
    url: &ArtifactUrl,
    module_root: &Path,
    cache: &Cache,
) -> oci::Result<PulledImage> {
    let cue_mod = module_root.join("cue.mod");
    if !cue_mod.is_dir() {
        return Err(OciError::InvalidInput(format!(
            "cue.mod not found in the module path {}",
            module_root.display()
        )));
    }
    oci::pull_artifact(
        registry,
        url,
        Some(oci::CONTENT_TYPE_CUE_MOD_GEN),
        &cue_mod.join("gen"),
        cache,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_become_timoni_tags() {
        let url = |v| schema_url("oci://example.com/k8s", v).unwrap().to_string();
        assert_eq!(url("1.30"), "oci://example.com/k8s:v1.30");
        assert_eq!(url("v1.30"), "oci://example.com/k8s:v1.30");
        assert_eq!(url("latest"), "oci://example.com/k8s:latest");
        assert!(schema_url("oci://example.com/k8s:v1", "1.30").is_err());
        assert!(schema_url("oci://example.com/k8s", "1.30 x").is_err());
    }
}
