//! The keyless part of a verification policy: the identity (the certificate's email or URI
//! subject alternative name) and the OIDC issuer (Fulcio's issuer extension) matched exactly
//! or by regular expression, the signature checked with the certificate's key, and the Rekor
//! entry checked to record this very signature and payload.
//!
//! The `sigstore` crate has already checked the certificate chain against the trusted root at
//! the entry's integrated time and the entry's signed timestamp against the Rekor key, and
//! leaves `certificate_signature` empty otherwise; it checks neither the binding of the entry to
//! the signature nor the signature with the certificate's key for `.sig` layers, so this does.

use std::fmt;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use sha2::{Digest, Sha256};
use sigstore::cosign::SignatureLayer;
use sigstore::cosign::bundle_content::BundleContent;
use sigstore::cosign::signature_layers::CertificateSubject;
use sigstore::crypto::Signature;

/// A string expected exactly (`--certificate-identity`) or by regular expression
/// (`--certificate-identity-regexp`).
#[derive(Debug, Clone)]
pub enum Matcher {
    Exact(String),
    Regex(regex::Regex),
}

impl Matcher {
    /// A regular expression matcher; the error names the flag or field it came from.
    pub fn regex(pattern: &str, flag: &str) -> super::Result<Self> {
        regex::Regex::new(pattern)
            .map(Matcher::Regex)
            .map_err(|e| super::OciError::InvalidInput(format!("invalid {flag}: {e}")))
    }

    pub fn matches(&self, s: &str) -> bool {
        match self {
            Matcher::Exact(e) => e == s,
            Matcher::Regex(r) => r.is_match(s),
        }
    }
}

impl fmt::Display for Matcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Matcher::Exact(e) => write!(f, "{e:?}"),
            Matcher::Regex(r) => write!(f, "matching /{}/", r.as_str()),
        }
    }
}

pub(super) fn satisfies(identity: &Matcher, issuer: &Matcher, layer: &SignatureLayer) -> bool {
    let Some(cert) = &layer.certificate_signature else {
        return false;
    };
    let subject = match &cert.subject {
        CertificateSubject::Email(e) => e,
        CertificateSubject::Uri(u) => u,
    };
    if !identity.matches(subject) {
        return false;
    }
    if !cert.issuer.as_deref().is_some_and(|i| issuer.matches(i)) {
        return false;
    }
    let Some(signature) = &layer.signature else {
        return false;
    };
    if cert
        .verification_key
        .verify_signature(
            Signature::Base64Encoded(signature.as_bytes()),
            &layer.raw_data,
        )
        .is_err()
    {
        return false;
    }
    match &layer.bundle {
        Some(BundleContent::RekorBundle(b)) => {
            entry_records(&b.payload.body, signature, &layer.raw_data)
        }
        // The crate verified the bundle's entry against its own signature and content.
        Some(BundleContent::SigstoreBundle(_)) => true,
        None => false,
    }
}

/// Whether a Rekor `hashedrekord` entry body (base64 JSON) records `signature` over `payload`.
fn entry_records(body_b64: &str, signature: &str, payload: &[u8]) -> bool {
    let Ok(body) = STANDARD.decode(body_b64) else {
        return false;
    };
    let Ok(entry) = serde_json::from_slice::<serde_json::Value>(&body) else {
        return false;
    };
    if entry["kind"] != "hashedrekord" {
        return false;
    }
    let spec = &entry["spec"];
    let hash = hex::encode(Sha256::digest(payload));
    spec["data"]["hash"]["algorithm"] == "sha256"
        && spec["data"]["hash"]["value"] == hash.as_str()
        && spec["signature"]["content"] == signature
}
