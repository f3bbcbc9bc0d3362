//! The trust material of keyless verification, read from a Sigstore `trusted_root.json` (the
//! file `cosign verify --trusted-root` takes and the Sigstore TUF repository distributes), so
//! that verification works offline and in air-gapped clusters: the Fulcio certificate chains
//! and the Rekor public keys.

use std::collections::BTreeMap;
use std::path::Path;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde::Deserialize;
use sha2::{Digest, Sha256};
use sigstore::trust::ManualTrustRoot;

use super::{OciError, Result};

/// Fulcio certificates (DER) and Rekor keys (DER SubjectPublicKeyInfo, by log ID).
#[derive(Debug, Clone, Default)]
pub struct TrustedRoot {
    fulcio_certs: Vec<Vec<u8>>,
    rekor_keys: BTreeMap<String, Vec<u8>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RootFile {
    #[serde(default)]
    tlogs: Vec<Tlog>,
    #[serde(default)]
    certificate_authorities: Vec<Authority>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Tlog {
    public_key: RawBytes,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Authority {
    cert_chain: Chain,
}

#[derive(Deserialize)]
struct Chain {
    certificates: Vec<RawBytes>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawBytes {
    raw_bytes: String,
}

impl TrustedRoot {
    /// Trust in these Fulcio certificates and Rekor public keys (DER).
    pub fn new(fulcio_certs: Vec<Vec<u8>>, rekor_keys: Vec<Vec<u8>>) -> Self {
        TrustedRoot {
            fulcio_certs,
            rekor_keys: rekor_keys
                .into_iter()
                .map(|k| (hex::encode(Sha256::digest(&k)), k))
                .collect(),
        }
    }

    /// Reads a `trusted_root.json`.
    pub fn from_file(path: &Path) -> Result<Self> {
        let data = std::fs::read(path).map_err(|e| OciError::io(path, e))?;
        Self::from_json(&data).map_err(|e| match e {
            OciError::SigningKey(m) => OciError::SigningKey(format!("{}: {m}", path.display())),
            e => e,
        })
    }

    /// Parses a `trusted_root.json` document.
    pub fn from_json(data: &[u8]) -> Result<Self> {
        let file: RootFile = serde_json::from_slice(data)
            .map_err(|e| OciError::SigningKey(format!("invalid trusted root: {e}")))?;
        let decode = |b: &RawBytes| {
            STANDARD
                .decode(&b.raw_bytes)
                .map_err(|e| OciError::SigningKey(format!("invalid trusted root: {e}")))
        };
        let fulcio_certs = file
            .certificate_authorities
            .iter()
            .flat_map(|a| &a.cert_chain.certificates)
            .map(decode)
            .collect::<Result<Vec<_>>>()?;
        let rekor_keys = file
            .tlogs
            .iter()
            .map(|t| decode(&t.public_key))
            .collect::<Result<Vec<_>>>()?;
        if fulcio_certs.is_empty() || rekor_keys.is_empty() {
            return Err(OciError::SigningKey(
                "invalid trusted root: keyless verification needs at least one certificate authority and one transparency log".into(),
            ));
        }
        Ok(Self::new(fulcio_certs, rekor_keys))
    }

    pub(super) fn manual(&self) -> ManualTrustRoot<'static> {
        ManualTrustRoot {
            fulcio_certs: self.fulcio_certs.iter().map(|c| c.clone().into()).collect(),
            rekor_keys: self.rekor_keys.clone(),
            ctfe_keys: BTreeMap::new(),
        }
    }
}
