//! A stand-in for Sigstore in signature tests: a throwaway CA in Fulcio's place (leaf
//! certificates with the email or URI identity and Fulcio's OIDC issuer extension), a P-256 key
//! in Rekor's place (`hashedrekord` entries with a signed entry timestamp), the
//! `trusted_root.json` of both, and the cosign signature image that keyless `cosign sign`
//! would push. Included by path by the timoni-core and timoni-cli tests; depends on rcgen,
//! sigstore, serde_json, base64, sha2, hex, jiff and timoni-core.

#![allow(dead_code)]

use std::collections::BTreeMap;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use sha2::{Digest, Sha256};
use sigstore::crypto::signing_key::SigStoreKeyPair;
use sigstore::crypto::{SigStoreSigner, SigningScheme};
use timoni_core::oci::sign::TrustedRoot;
use timoni_core::oci::{ArtifactUrl, OciClientRegistry, Registry};

/// Media type of cosign's simple-signing layers.
pub const SIMPLE_SIGNING: &str = "application/vnd.dev.cosign.simplesigning.v1+json";

/// Pushes a cosign signature image for `digest`: one simple-signing layer with `annotations`.
pub fn push_signature_image(
    reg: &OciClientRegistry,
    url: &ArtifactUrl,
    digest: &str,
    payload: &[u8],
    annotations: &BTreeMap<String, String>,
) {
    let sha = |b: &[u8]| format!("sha256:{}", hex::encode(Sha256::digest(b)));
    let config = br#"{"architecture":"","config":{},"created":"0001-01-01T00:00:00Z","history":[{"created":"0001-01-01T00:00:00Z"}],"os":"","rootfs":{"type":"layers","diff_ids":[]}}"#;
    reg.push_blob(url, &sha(config), config).unwrap();
    reg.push_blob(url, &sha(payload), payload).unwrap();
    let manifest = serde_json::json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {
            "mediaType": "application/vnd.oci.image.config.v1+json",
            "size": config.len(),
            "digest": sha(config),
        },
        "layers": [{
            "mediaType": SIMPLE_SIGNING,
            "size": payload.len(),
            "digest": sha(payload),
            "annotations": annotations,
        }],
    });
    reg.push_manifest(
        url,
        &format!("{}.sig", digest.replace(':', "-")),
        &serde_json::to_vec(&manifest).unwrap(),
        "application/vnd.oci.image.manifest.v1+json",
    )
    .unwrap();
}

pub fn simple_signing_payload(url: &ArtifactUrl, digest: &str) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({
        "critical": {
            "identity": {"docker-reference": format!("{}/{}", url.registry, url.repository)},
            "image": {"docker-manifest-digest": digest},
            "type": "cosign container image signature",
        },
        "optional": null,
    }))
    .unwrap()
}

/// A throwaway Sigstore: a CA standing in for Fulcio and a P-256 key standing in for Rekor.
pub struct FakeSigstore {
    ca: rcgen::CertifiedIssuer<'static, rcgen::KeyPair>,
    rekor: SigStoreSigner,
    rekor_der: Vec<u8>,
}

impl FakeSigstore {
    pub fn new() -> Self {
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        params.key_usages = vec![
            rcgen::KeyUsagePurpose::KeyCertSign,
            rcgen::KeyUsagePurpose::CrlSign,
        ];
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "fake fulcio");
        let ca = rcgen::CertifiedIssuer::self_signed(params, rcgen::KeyPair::generate().unwrap())
            .unwrap();
        let rekor = SigningScheme::ECDSA_P256_SHA256_ASN1
            .create_signer()
            .unwrap();
        let rekor_der = rekor
            .to_sigstore_keypair()
            .unwrap()
            .public_key_to_der()
            .unwrap();
        FakeSigstore {
            ca,
            rekor,
            rekor_der,
        }
    }

    pub fn root(&self) -> TrustedRoot {
        TrustedRoot::new(vec![self.ca.der().to_vec()], vec![self.rekor_der.clone()])
    }

    /// The `trusted_root.json` of this instance, in Sigstore's format.
    pub fn root_json(&self) -> String {
        serde_json::json!({
            "mediaType": "application/vnd.dev.sigstore.trustedroot+json;version=0.1",
            "tlogs": [{
                "baseUrl": "https://rekor.invalid",
                "hashAlgorithm": "SHA2_256",
                "publicKey": {
                    "rawBytes": STANDARD.encode(&self.rekor_der),
                    "keyDetails": "PKIX_ECDSA_P256_SHA_256",
                    "validFor": {"start": "2020-01-01T00:00:00Z"},
                },
                "logId": {"keyId": STANDARD.encode(Sha256::digest(&self.rekor_der))},
            }],
            "certificateAuthorities": [{
                "subject": {"organization": "test", "commonName": "fake fulcio"},
                "uri": "https://fulcio.invalid",
                "certChain": {"certificates": [{"rawBytes": STANDARD.encode(self.ca.der())}]},
                "validFor": {"start": "2020-01-01T00:00:00Z"},
            }],
            "ctlogs": [],
            "timestampAuthorities": [],
        })
        .to_string()
    }

    /// A leaf certificate for `identity` (an email or a URI) from `issuer`, with Fulcio's
    /// extensions, and the signer of its key.
    fn leaf(&self, identity: &str, issuer: &str) -> (rcgen::Certificate, SigStoreSigner) {
        let leaf_key = rcgen::KeyPair::generate().unwrap();
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        let san = rcgen::string::Ia5String::try_from(identity).unwrap();
        params.subject_alt_names = vec![if identity.contains("://") {
            rcgen::SanType::URI(san)
        } else {
            rcgen::SanType::Rfc822Name(san)
        }];
        params.key_usages = vec![rcgen::KeyUsagePurpose::DigitalSignature];
        params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::CodeSigning];
        params.custom_extensions = vec![rcgen::CustomExtension::from_oid_content(
            &[1, 3, 6, 1, 4, 1, 57264, 1, 1],
            issuer.as_bytes().to_vec(),
        )];
        let leaf = params.signed_by(&leaf_key, &self.ca).unwrap();
        let signer = SigStoreKeyPair::from_pem(leaf_key.serialize_pem().as_bytes())
            .unwrap()
            .to_sigstore_signer(&SigningScheme::ECDSA_P256_SHA256_ASN1)
            .unwrap();
        (leaf, signer)
    }

    /// Signs `payload` keylessly as `identity` (an email or a URI) from `issuer`: a leaf
    /// certificate with Fulcio's extensions, its signature, and a Rekor bundle recording both.
    pub fn sign(&self, payload: &[u8], identity: &str, issuer: &str) -> BTreeMap<String, String> {
        let (leaf, signer) = self.leaf(identity, issuer);
        let signature = STANDARD.encode(signer.sign(payload).unwrap());
        let body = serde_json::json!({
            "apiVersion": "0.0.1",
            "kind": "hashedrekord",
            "spec": {
                "data": {"hash": {"algorithm": "sha256", "value": hex::encode(Sha256::digest(payload))}},
                "signature": {
                    "content": signature,
                    "publicKey": {"content": STANDARD.encode(leaf.pem())},
                },
            },
        });
        // Canonical JSON (RFC 8785) of the payload: keys sorted, no spaces.
        let entry = serde_json::json!({
            "body": STANDARD.encode(body.to_string()),
            "integratedTime": jiff::Timestamp::now().as_second(),
            "logID": hex::encode(Sha256::digest(&self.rekor_der)),
            "logIndex": 7,
        });
        let set = STANDARD.encode(self.rekor.sign(entry.to_string().as_bytes()).unwrap());
        let bundle = serde_json::json!({"SignedEntryTimestamp": set, "Payload": entry});
        BTreeMap::from([
            ("dev.cosignproject.cosign/signature".to_string(), signature),
            ("dev.sigstore.cosign/certificate".to_string(), leaf.pem()),
            ("dev.sigstore.cosign/chain".to_string(), self.ca.pem()),
            ("dev.sigstore.cosign/bundle".to_string(), bundle.to_string()),
        ])
    }
}

impl FakeSigstore {
    /// Signs the image `digest` keylessly as `identity` from `issuer` in the bundle form of
    /// cosign v2.5+/v3: a Sigstore bundle v0.3 with a DSSE envelope of an in-toto statement
    /// (predicate `https://sigstore.dev/cosign/sign/v1`), the leaf certificate, and a Rekor
    /// `dsse` entry with its signed entry timestamp and an inclusion proof in a one-entry log
    /// whose checkpoint this Rekor signs.
    pub fn bundle(&self, digest: &str, identity: &str, issuer: &str) -> Vec<u8> {
        let (leaf, signer) = self.leaf(identity, issuer);
        let payload_type = "application/vnd.in-toto+json";
        let payload = serde_json::to_vec(&serde_json::json!({
            "_type": "https://in-toto.io/Statement/v1",
            "subject": [{"name": "", "digest": {"sha256": digest.trim_start_matches("sha256:")}}],
            "predicateType": "https://sigstore.dev/cosign/sign/v1",
            "predicate": {},
        }))
        .unwrap();
        let mut pae = format!(
            "DSSEv1 {} {payload_type} {} ",
            payload_type.len(),
            payload.len()
        )
        .into_bytes();
        pae.extend_from_slice(&payload);
        let sig = STANDARD.encode(signer.sign(&pae).unwrap());
        // The envelope as the protobuf JSON encoding writes it (what Rekor hashes).
        let envelope = serde_json::json!({
            "payload": STANDARD.encode(&payload),
            "payloadType": payload_type,
            "signatures": [{"sig": sig}],
        });
        let body = serde_json::to_vec(&serde_json::json!({
            "apiVersion": "0.0.1",
            "kind": "dsse",
            "spec": {
                "envelopeHash": {"algorithm": "sha256", "value": hex::encode(Sha256::digest(envelope.to_string()))},
                "payloadHash": {"algorithm": "sha256", "value": hex::encode(Sha256::digest(&payload))},
                "signatures": [{"signature": sig, "verifier": STANDARD.encode(leaf.pem())}],
            },
        }))
        .unwrap();
        let key_id = Sha256::digest(&self.rekor_der);
        let integrated_time = jiff::Timestamp::now().as_second();
        // Canonical JSON (RFC 8785) of the signed entry timestamp's payload.
        let set = serde_json::json!({
            "body": STANDARD.encode(&body),
            "integratedTime": integrated_time,
            "logID": hex::encode(key_id),
            "logIndex": 0,
        });
        let set = STANDARD.encode(self.rekor.sign(set.to_string().as_bytes()).unwrap());
        // A log of one entry: the root is the leaf hash, and the proof has no hashes.
        let mut leaf_input = vec![0u8];
        leaf_input.extend_from_slice(&body);
        let root = STANDARD.encode(Sha256::digest(&leaf_input));
        let note = format!("rekor.invalid\n1\n{root}\n");
        let note_sig = self.rekor.sign(note.as_bytes()).unwrap();
        let checkpoint = format!(
            "{note}\n\u{2014} rekor.invalid {}\n",
            STANDARD.encode([&key_id[..4], &note_sig[..]].concat())
        );
        serde_json::to_vec(&serde_json::json!({
            "mediaType": BUNDLE_V03,
            "verificationMaterial": {
                "certificate": {"rawBytes": STANDARD.encode(leaf.der())},
                "tlogEntries": [{
                    "logIndex": "0",
                    "logId": {"keyId": STANDARD.encode(key_id)},
                    "kindVersion": {"kind": "dsse", "version": "0.0.1"},
                    "integratedTime": integrated_time.to_string(),
                    "inclusionPromise": {"signedEntryTimestamp": set},
                    "inclusionProof": {
                        "logIndex": "0",
                        "rootHash": root,
                        "treeSize": "1",
                        "hashes": [],
                        "checkpoint": {"envelope": checkpoint},
                    },
                    "canonicalizedBody": STANDARD.encode(&body),
                }],
            },
            "dsseEnvelope": envelope,
        }))
        .unwrap()
    }
}

/// Media type of a Sigstore bundle v0.3, as cosign v2.5+/v3 attaches it.
pub const BUNDLE_V03: &str = "application/vnd.dev.sigstore.bundle.v0.3+json";

/// Attaches Sigstore bundles to `digest` (an OCI image manifest of `subject_size` bytes) as
/// cosign v3 does on a registry without the OCI referrers API: each bundle is the one layer
/// of a manifest with `artifactType` and `subject` (pushed by digest), and the referrers
/// index listing those manifests is stored under the `sha256-<hex>` tag (the OCI
/// distribution specification's referrers tag schema).
pub fn attach_bundles(
    reg: &OciClientRegistry,
    url: &ArtifactUrl,
    digest: &str,
    subject_size: usize,
    bundles: &[Vec<u8>],
) {
    let sha = |b: &[u8]| format!("sha256:{}", hex::encode(Sha256::digest(b)));
    let empty = b"{}";
    reg.push_blob(url, &sha(empty), empty).unwrap();
    let mut entries = Vec::new();
    for bundle in bundles {
        reg.push_blob(url, &sha(bundle), bundle).unwrap();
        let annotations = serde_json::json!({
            "dev.sigstore.bundle.content": "dsse-envelope",
            "dev.sigstore.bundle.predicateType": "https://sigstore.dev/cosign/sign/v1",
            "org.opencontainers.image.created": "2026-01-01T00:00:00Z",
        });
        let manifest = serde_json::to_vec(&serde_json::json!({
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "artifactType": BUNDLE_V03,
            "config": {
                "mediaType": "application/vnd.oci.empty.v1+json",
                "size": empty.len(),
                "digest": sha(empty),
            },
            "layers": [{"mediaType": BUNDLE_V03, "size": bundle.len(), "digest": sha(bundle)}],
            "subject": {
                "mediaType": "application/vnd.oci.image.manifest.v1+json",
                "size": subject_size,
                "digest": digest,
            },
            "annotations": annotations,
        }))
        .unwrap();
        // A manifest "tag" that is a digest is a push by digest.
        reg.push_manifest(
            url,
            &sha(&manifest),
            &manifest,
            "application/vnd.oci.image.manifest.v1+json",
        )
        .unwrap();
        entries.push(serde_json::json!({
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "size": manifest.len(),
            "digest": sha(&manifest),
            "artifactType": BUNDLE_V03,
            "annotations": annotations,
        }));
    }
    let index = serde_json::to_vec(&serde_json::json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.index.v1+json",
        "manifests": entries,
    }))
    .unwrap();
    reg.push_manifest(
        url,
        &digest.replace(':', "-"),
        &index,
        "application/vnd.oci.image.index.v1+json",
    )
    .unwrap();
}
