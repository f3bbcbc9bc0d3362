//! The cosign signature image (`<repo>:sha256-<hex>.sig`) as `cosign sign` writes it: an OCI
//! image manifest with one `simplesigning` layer per signature, each carrying its signature
//! (and, when keyless, its certificate and Rekor bundle) as annotations, and an image config
//! listing the layers as its `diff_ids`. Signing appends a layer to what is stored; the layers
//! already there are kept byte for byte, annotations included.

use serde_json::{Value, json};

use super::super::build::sha256;
use super::super::error::{OciError, Result};
use super::super::reference::ArtifactUrl;
use super::super::registry::Registry;

/// Media type of a simple-signing payload layer.
pub(super) const SIMPLE_SIGNING: &str = "application/vnd.dev.cosign.simplesigning.v1+json";
/// The annotation holding a layer's base64 signature.
pub(super) const SIGNATURE_ANNOTATION: &str = "dev.cosignproject.cosign/signature";
const MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";
const CONFIG: &str = "application/vnd.oci.image.config.v1+json";

/// The layer descriptors of the signature image under `tag`, or none when the tag does not
/// exist yet.
pub(super) fn stored_layers(
    registry: &dyn Registry,
    url: &ArtifactUrl,
    tag: &str,
) -> Result<Vec<Value>> {
    if !registry.list_tags(url)?.iter().any(|t| t == tag) {
        return Ok(Vec::new());
    }
    let manifest: Value = serde_json::from_slice(&registry.pull_manifest(&url.with_tag(tag))?)
        .map_err(|e| OciError::InvalidArtifact(format!("{tag} is not a manifest: {e}")))?;
    match manifest["layers"].as_array() {
        Some(layers) => Ok(layers.clone()),
        None => Err(OciError::InvalidArtifact(format!(
            "{tag} is not a cosign signature image (it has no layers)"
        ))),
    }
}

/// The descriptor of a signature of `payload`, with the annotations that go with it (a keyless
/// signature's certificate, chain and Rekor bundle).
pub(super) fn simple_signing_layer(
    payload: &[u8],
    signature: &str,
    annotations: &[(&str, String)],
) -> Value {
    let mut all = serde_json::Map::new();
    all.insert(SIGNATURE_ANNOTATION.into(), signature.into());
    for (k, v) in annotations {
        all.insert((*k).into(), v.as_str().into());
    }
    json!({
        "mediaType": SIMPLE_SIGNING,
        "size": payload.len(),
        "digest": sha256(payload),
        "annotations": all,
    })
}

/// Pushes `payload` (the blob of the last layer; the others are already stored) and the
/// signature image made of `layers` under `tag`. A layer identical to an earlier one (the
/// same payload, signature and annotations) is stored once.
pub(super) fn push(
    registry: &dyn Registry,
    url: &ArtifactUrl,
    tag: &str,
    payload: &[u8],
    layers: &[Value],
) -> Result<()> {
    let mut unique: Vec<&Value> = Vec::with_capacity(layers.len());
    for layer in layers {
        if !unique.contains(&layer) {
            unique.push(layer);
        }
    }
    let diff_ids: Vec<&Value> = unique.iter().map(|l| &l["digest"]).collect();
    let history: Vec<Value> = unique
        .iter()
        .map(|_| json!({"created": "0001-01-01T00:00:00Z"}))
        .collect();
    let config = serde_json::to_vec(&json!({
        "architecture": "",
        "created": "0001-01-01T00:00:00Z",
        "history": history,
        "os": "",
        "rootfs": {"type": "layers", "diff_ids": diff_ids},
        "config": {},
    }))
    .expect("a JSON value encodes");
    let manifest = serde_json::to_vec(&json!({
        "schemaVersion": 2,
        "mediaType": MANIFEST,
        "config": {"mediaType": CONFIG, "size": config.len(), "digest": sha256(&config)},
        "layers": unique,
    }))
    .expect("a JSON value encodes");
    registry.push_blob(url, &sha256(payload), payload)?;
    registry.push_blob(url, &sha256(&config), &config)?;
    registry.push_manifest(url, tag, &manifest, MANIFEST)
}
