//! Signatures in the form cosign v2.5+ and v3 write with the new bundle format: a Sigstore
//! bundle (v0.3) holding a DSSE envelope of an in-toto statement whose subject is the artifact's
//! digest and whose predicate type is `https://sigstore.dev/cosign/sign/v1`, stored as the one
//! layer of a manifest that names the artifact as its `subject`, and found through the OCI
//! referrers API (or the `sha256-<hex>` referrers tag of registries without it).
//!
//! This module reads those bundles and checks the ones signed with a key (`cosign sign --key`,
//! verification material `publicKey`); the `sigstore` crate checks the keyless ones (a Fulcio
//! certificate and a Rekor entry) with the rest of the keyless policy. Like the `.sig` form, a
//! key-signed bundle is accepted without its transparency log entry, as `cosign verify --key
//! --insecure-ignore-tlog` does. It also writes key-signed bundles and attaches them as cosign
//! v3 does ([`key_bundle`], [`attach`]): the referrer manifest pushed by digest, and listed in
//! the referrers tag for registries without the referrers API.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde::Deserialize;

use serde_json::{Value, json};

use super::super::build::sha256;
use super::super::error::{OciError, Result};
use super::super::reference::ArtifactUrl;
use super::super::registry::{OciClientRegistry, Registry};

/// The prefix of every Sigstore bundle media type (`application/vnd.dev.sigstore.bundle.v0.3+json`
/// and the older `…bundle+json;version=0.x`).
const BUNDLE_MEDIA_TYPE: &str = "application/vnd.dev.sigstore.bundle";
const IN_TOTO_PAYLOAD: &str = "application/vnd.in-toto+json";
const IN_TOTO_STATEMENT: &str = "https://in-toto.io/Statement/v1";
/// The predicate of a statement that signs an image (and not some other attestation about it).
const COSIGN_SIGN_PREDICATE: &str = "https://sigstore.dev/cosign/sign/v1";
/// The largest bundle read; real ones are a few kilobytes.
const MAX_BUNDLE: u64 = 1 << 20;
/// The media type (and artifact type) of the bundles cosign v3 writes.
const BUNDLE_V03: &str = "application/vnd.dev.sigstore.bundle.v0.3+json";
const OCI_MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";
const OCI_INDEX: &str = "application/vnd.oci.image.index.v1+json";
const OCI_EMPTY: &str = "application/vnd.oci.empty.v1+json";

/// A Sigstore bundle v0.3 signing `digest` of `repository` with a key, as `cosign sign --key
/// --new-bundle-format --tlog-upload=false` writes it: the in-toto statement with predicate
/// `https://sigstore.dev/cosign/sign/v1` in a DSSE envelope, `sign` signing its
/// pre-authentication encoding, and the key named by a hint (the base64 SHA-256 of its DER).
pub(super) fn key_bundle(
    repository: &str,
    digest: &str,
    public_key_der: &[u8],
    sign: impl FnOnce(&[u8]) -> Result<Vec<u8>>,
) -> Result<Vec<u8>> {
    use sha2::{Digest, Sha256};
    let hex = digest
        .strip_prefix("sha256:")
        .ok_or_else(|| OciError::InvalidInput(format!("{digest} is not a sha256 digest")))?;
    let statement = serde_json::to_vec(&json!({
        "_type": IN_TOTO_STATEMENT,
        "subject": [{"name": repository, "digest": {"sha256": hex}}],
        "predicateType": COSIGN_SIGN_PREDICATE,
        "predicate": {},
    }))
    .expect("a JSON value encodes");
    let signature = sign(&pae(IN_TOTO_PAYLOAD, &statement))?;
    let bundle = json!({
        "mediaType": BUNDLE_V03,
        "verificationMaterial": {
            "publicKey": {"hint": STANDARD.encode(Sha256::digest(public_key_der))},
        },
        "dsseEnvelope": {
            "payload": STANDARD.encode(&statement),
            "payloadType": IN_TOTO_PAYLOAD,
            "signatures": [{"sig": STANDARD.encode(signature)}],
        },
    });
    Ok(serde_json::to_vec(&bundle).expect("a JSON value encodes"))
}

/// Attaches `bundle` to `digest` as cosign v3 does: a manifest of artifact type
/// `…bundle.v0.3+json` whose one layer is the bundle and whose `subject` is the artifact,
/// pushed by digest; and, for registries without the referrers API, an entry for it in the
/// image index under the referrers tag `sha256-<hex>` (the entries already there are kept).
/// `created` is the manifest's `org.opencontainers.image.created`. Returns the referrer's
/// digest.
pub(super) fn attach(
    registry: &OciClientRegistry,
    url: &ArtifactUrl,
    digest: &str,
    bundle: &[u8],
    created: &str,
) -> Result<String> {
    let subject = registry.pull_manifest(&url.with_digest(digest))?;
    let subject_type = serde_json::from_slice::<Value>(&subject)
        .ok()
        .and_then(|m| m["mediaType"].as_str().map(str::to_string))
        .unwrap_or_else(|| OCI_MANIFEST.to_string());
    let empty = b"{}";
    registry.push_blob(url, &sha256(empty), empty)?;
    registry.push_blob(url, &sha256(bundle), bundle)?;
    let annotations = json!({
        "dev.sigstore.bundle.content": "dsse-envelope",
        "dev.sigstore.bundle.predicateType": COSIGN_SIGN_PREDICATE,
        "org.opencontainers.image.created": created,
    });
    let manifest = serde_json::to_vec(&json!({
        "schemaVersion": 2,
        "mediaType": OCI_MANIFEST,
        "artifactType": BUNDLE_V03,
        "config": {"mediaType": OCI_EMPTY, "size": empty.len(), "digest": sha256(empty)},
        "layers": [{"mediaType": BUNDLE_V03, "size": bundle.len(), "digest": sha256(bundle)}],
        "subject": {"mediaType": subject_type, "size": subject.len(), "digest": digest},
        "annotations": annotations,
    }))
    .expect("a JSON value encodes");
    let referrer = sha256(&manifest);
    // A manifest pushed under a digest is pushed by digest.
    registry.push_manifest(url, &referrer, &manifest, OCI_MANIFEST)?;

    // The referrers already listed (the index cannot be pulled as a manifest here), each
    // described from its own manifest, then the new one.
    let mut entries = Vec::new();
    for known in registry.referrers(&url.with_digest(digest))? {
        if known == referrer {
            continue;
        }
        let m = registry.pull_manifest(&url.with_digest(&known))?;
        let parsed: Value = serde_json::from_slice(&m).unwrap_or_default();
        let mut entry = json!({
            "mediaType": parsed["mediaType"].as_str().unwrap_or(OCI_MANIFEST),
            "size": m.len(),
            "digest": known,
        });
        for field in ["artifactType", "annotations"] {
            if !parsed[field].is_null() {
                entry[field] = parsed[field].clone();
            }
        }
        entries.push(entry);
    }
    entries.push(json!({
        "mediaType": OCI_MANIFEST,
        "size": manifest.len(),
        "digest": referrer,
        "artifactType": BUNDLE_V03,
        "annotations": annotations,
    }));
    let index = serde_json::to_vec(&json!({
        "schemaVersion": 2,
        "mediaType": OCI_INDEX,
        "manifests": entries,
    }))
    .expect("a JSON value encodes");
    registry.push_manifest(url, &digest.replace(':', "-"), &index, OCI_INDEX)?;
    Ok(referrer)
}

/// The Sigstore bundles attached to `digest` in the repository of `url`: the bundle layers of
/// every referrer whose subject is that digest.
pub(super) fn attached(
    registry: &OciClientRegistry,
    url: &ArtifactUrl,
    digest: &str,
) -> Result<Vec<Vec<u8>>> {
    let mut bundles = Vec::new();
    for referrer in registry.referrers(&url.with_digest(digest))? {
        let manifest = registry.pull_manifest(&url.with_digest(&referrer))?;
        let Ok(manifest) = serde_json::from_slice::<Manifest>(&manifest) else {
            continue;
        };
        if manifest.subject.as_ref().map(|s| s.digest.as_str()) != Some(digest) {
            continue;
        }
        for layer in manifest.layers {
            if layer.media_type.starts_with(BUNDLE_MEDIA_TYPE) {
                bundles.push(registry.pull_blob(url, &layer.digest, layer.size, MAX_BUNDLE)?);
            }
        }
    }
    Ok(bundles)
}

/// A key-signed bundle's DSSE signature and what it signs.
pub(super) struct KeySignature {
    /// The DSSE pre-authentication encoding of the envelope's payload: the signed bytes.
    pub pae: Vec<u8>,
    /// The signature, base64.
    pub signature: String,
}

/// The DSSE signature of `bundle` when it is a key-signed cosign signature of `digest`; `None`
/// for a keyless bundle, an attestation of another predicate, or a statement about another
/// artifact.
pub(super) fn key_signature(bundle: &[u8], digest: &str) -> Option<KeySignature> {
    let bundle: Bundle = serde_json::from_slice(bundle).ok()?;
    bundle.verification_material.public_key.as_ref()?;
    let envelope = bundle.dsse_envelope?;
    if envelope.payload_type != IN_TOTO_PAYLOAD {
        return None;
    }
    let [signature] = envelope.signatures.as_slice() else {
        return None;
    };
    let payload = STANDARD.decode(&envelope.payload).ok()?;
    let statement: Statement = serde_json::from_slice(&payload).ok()?;
    let hex = digest.strip_prefix("sha256:")?;
    let names_digest = statement
        .subject
        .iter()
        .any(|s| s.digest.sha256.as_deref() == Some(hex));
    if statement.kind != IN_TOTO_STATEMENT
        || statement.predicate_type != COSIGN_SIGN_PREDICATE
        || !names_digest
    {
        return None;
    }
    Some(KeySignature {
        pae: pae(&envelope.payload_type, &payload),
        signature: signature.sig.clone(),
    })
}

/// DSSE's pre-authentication encoding: `DSSEv1 <len> <type> <len> <body>`.
fn pae(payload_type: &str, payload: &[u8]) -> Vec<u8> {
    let mut out = format!(
        "DSSEv1 {} {payload_type} {} ",
        payload_type.len(),
        payload.len()
    )
    .into_bytes();
    out.extend_from_slice(payload);
    out
}

#[derive(Deserialize)]
struct Manifest {
    subject: Option<Descriptor>,
    #[serde(default)]
    layers: Vec<Descriptor>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Descriptor {
    #[serde(default)]
    media_type: String,
    digest: String,
    #[serde(default)]
    size: u64,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Bundle {
    verification_material: VerificationMaterial,
    dsse_envelope: Option<Envelope>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct VerificationMaterial {
    public_key: Option<serde_json::Value>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Envelope {
    payload: String,
    payload_type: String,
    signatures: Vec<EnvelopeSignature>,
}

#[derive(Deserialize)]
struct EnvelopeSignature {
    sig: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Statement {
    #[serde(rename = "_type")]
    kind: String,
    predicate_type: String,
    subject: Vec<Subject>,
}

#[derive(Deserialize)]
struct Subject {
    digest: SubjectDigest,
}

#[derive(Deserialize)]
struct SubjectDigest {
    sha256: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The encoding from the DSSE specification's test vector.
    #[test]
    fn pae_matches_the_dsse_specification() {
        assert_eq!(
            pae("http://example.com/HelloWorld", b"hello world"),
            b"DSSEv1 29 http://example.com/HelloWorld 11 hello world"
        );
    }
}
