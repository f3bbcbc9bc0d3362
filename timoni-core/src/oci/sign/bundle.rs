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
//! --insecure-ignore-tlog` does.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde::Deserialize;

use super::super::error::Result;
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
