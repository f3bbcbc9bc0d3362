//! Cosign-compatible signatures of pushed artifacts, made and checked natively with the
//! `sigstore` crate (no `cosign` binary): [`sign`] adds a simple-signing payload and its
//! signature as a layer of the `sha256-<hex>.sig` image next to the artifact, as `cosign sign
//! --key` does (`image.rs`); [`verify`] reads the signatures cosign stores (that image, and
//! Sigstore bundles attached as OCI referrers, `bundle.rs`) and accepts the artifact only if one of them satisfies a [`VerificationPolicy`]:
//! a public key, or keyless (a Fulcio certificate chaining to a [`TrustedRoot`], with its
//! identity and OIDC issuer matched exactly or by regular expression, and a Rekor entry whose
//! signed timestamp verifies against the same root).
//!
//! Registries are reached with the credentials and transport the other OCI commands use
//! ([`ConnectOptions`]). Key files are cosign's: an `ENCRYPTED SIGSTORE PRIVATE KEY` PEM (scrypt
//! and NaCl secretbox) unlocked with a password, and a PEM public key.

mod bundle;
mod image;
mod keyless;
mod keyless_signing;
mod trust;

use std::path::Path;
use std::sync::Arc;

use sigstore::cosign::payload::simple_signing::{
    CRITICAL_TYPE_NAME, Critical, Identity, Image, SimpleSigning,
};
use sigstore::cosign::verification_constraint::{PublicKeyVerifier, VerificationConstraint};
use sigstore::cosign::{ClientBuilder, CosignCapabilities, SignatureLayer};
use sigstore::crypto::signing_key::SigStoreKeyPair;
use sigstore::crypto::{SigStoreSigner, SigningScheme};
use sigstore::registry::{Auth, ClientConfig, ClientProtocol, OciReference};

use super::auth::Credentials;
use super::error::{OciError, Result};
use super::ops::{FetchedModule, Fetcher, ModuleFetch};
use super::reference::ArtifactUrl;
use super::registry::{ConnectOptions, Registry, connect_credentials, protocol_for};

pub use keyless::Matcher;
pub use keyless_signing::{FULCIO_URL, KeylessOptions, REKOR_URL, TokenSource};
pub use trust::TrustedRoot;

/// The one signing and verification provider (`--sign cosign`, `--verify cosign`).
pub const PROVIDER: &str = "cosign";

/// A cosign key pair in cosign's file formats.
#[derive(Debug, Clone)]
pub struct KeyPairPem {
    /// `cosign.key`: the private key, encrypted with the password.
    pub private_key: String,
    /// `cosign.pub`: the PEM public key.
    pub public_key: String,
}

/// Generates an ECDSA P-256 key pair as `cosign generate-key-pair` does.
pub fn generate_key_pair(password: &[u8]) -> Result<KeyPairPem> {
    let signer = SigningScheme::ECDSA_P256_SHA256_ASN1
        .create_signer()
        .map_err(key_error("cannot generate a key pair"))?;
    let pair = signer
        .to_sigstore_keypair()
        .map_err(key_error("cannot generate a key pair"))?;
    Ok(KeyPairPem {
        private_key: pair
            .private_key_to_encrypted_pem(password)
            .map_err(key_error("cannot encrypt the private key"))?
            .to_string(),
        public_key: pair
            .public_key_to_pem()
            .map_err(key_error("cannot encode the public key"))?,
    })
}

/// A private key ready to sign: decrypted from a cosign key file, or ephemeral and certified
/// by Fulcio for an OIDC identity (keyless).
pub struct SigningKey {
    signer: Signer,
}

enum Signer {
    Key(SigStoreSigner),
    Keyless(Box<keyless_signing::Certified>),
}

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.signer {
            Signer::Key(_) => f.write_str("SigningKey"),
            Signer::Keyless(c) => write!(f, "SigningKey(keyless: {})", c.identity),
        }
    }
}

impl SigningKey {
    /// Decrypts a cosign private key (`ENCRYPTED SIGSTORE PRIVATE KEY`, or an encrypted PKCS#8
    /// key) with its password; `source` names the file in errors.
    pub fn from_encrypted_pem(pem: &[u8], password: &[u8], source: &str) -> Result<Self> {
        let pair = SigStoreKeyPair::from_encrypted_pem(pem, password).map_err(|e| {
            OciError::SigningKey(format!(
                "cannot decrypt the private key {source} (is COSIGN_PASSWORD right?): {e}"
            ))
        })?;
        let schemes = [
            SigningScheme::ECDSA_P256_SHA256_ASN1,
            SigningScheme::ECDSA_P384_SHA384_ASN1,
            SigningScheme::ECDSA_P521_SHA512_ASN1,
            SigningScheme::ED25519,
        ];
        let signer = schemes
            .iter()
            .find_map(|s| pair.to_sigstore_signer(s).ok())
            .ok_or_else(|| {
                OciError::SigningKey(format!(
                    "the private key {source} is of a kind cosign does not sign with here (ECDSA or Ed25519 expected)"
                ))
            })?;
        Ok(SigningKey {
            signer: Signer::Key(signer),
        })
    }

    /// Keyless, as `cosign sign` without `--key`: gets the OIDC identity token, generates an
    /// ephemeral key and has Fulcio certify it for the token's identity. Each signature made
    /// with it is then recorded in Rekor.
    pub fn keyless(options: &KeylessOptions) -> Result<Self> {
        Ok(SigningKey {
            signer: Signer::Keyless(Box::new(keyless_signing::certify(options)?)),
        })
    }

    /// The identity a keyless key was certified for (the token's email or subject).
    pub fn keyless_identity(&self) -> Option<&str> {
        match &self.signer {
            Signer::Key(_) => None,
            Signer::Keyless(c) => Some(&c.identity),
        }
    }
}

/// Signs the artifact `url` (which must name a digest) with `key` and adds the signature to
/// the cosign signature image `<repo>:sha256-<hex>.sig`, one layer per signature as `cosign
/// sign` does: the layers already there (other keys, earlier signatures) are kept. A keyless
/// key records the signature in Rekor first, and the layer carries its certificate, chain and
/// Rekor bundle. Returns that reference.
pub fn sign(url: &ArtifactUrl, key: &SigningKey, options: &ConnectOptions) -> Result<String> {
    let digest = pinned_digest(url)?;
    let simple_signing = SimpleSigning {
        critical: Critical {
            type_name: CRITICAL_TYPE_NAME.to_string(),
            image: Image {
                docker_manifest_digest: digest.to_string(),
            },
            identity: Identity {
                docker_reference: format!("{}/{}", url.registry, url.repository),
            },
        },
        optional: None,
    };
    let payload = serde_json::to_vec(&simple_signing)
        .map_err(|e| OciError::InvalidArtifact(format!("cannot encode the payload: {e}")))?;
    let (signature, annotations) = match &key.signer {
        Signer::Key(signer) => {
            let signature = signer
                .sign(&payload)
                .map_err(|e| sign_error(url, e.to_string()))?;
            let signature =
                base64::Engine::encode(&base64::engine::general_purpose::STANDARD, signature);
            (signature, Vec::new())
        }
        Signer::Keyless(certified) => certified
            .sign(&payload)
            .map_err(|e| sign_error(url, e.to_string()))?,
    };
    let registry = super::registry::connect(url, options)?;
    let tag = signature_tag(digest);
    let mut layers = image::stored_layers(&registry, url, &tag)
        .map_err(|e| sign_error(url, format!("cannot read the signatures under {tag}: {e}")))?;
    layers.push(image::simple_signing_layer(
        &payload,
        &signature,
        &annotations,
    ));
    image::push(&registry, url, &tag, &payload, &layers)
        .map_err(|e| sign_error(url, e.to_string()))?;
    Ok(url.with_tag(&tag).to_string())
}

/// Signs the artifact `url` (which must name a digest) with `key` in the form cosign v3 writes
/// by default (`cosign sign --key --new-bundle-format`): a Sigstore bundle v0.3 with a DSSE
/// envelope of an in-toto statement naming the digest, attached to it as an OCI referrer (and
/// listed under the `sha256-<hex>` referrers tag for registries without the referrers API).
/// Like [`sign`] with a key, nothing is recorded in a transparency log. Keyless bundles (with a
/// Rekor `dsse` entry) are not written. Returns the referrer's reference.
pub fn sign_bundle(
    url: &ArtifactUrl,
    key: &SigningKey,
    options: &ConnectOptions,
) -> Result<String> {
    let digest = pinned_digest(url)?;
    let Signer::Key(signer) = &key.signer else {
        return Err(sign_error(
            url,
            "the Sigstore bundle form is written for key signatures only: sign keyless without --new-bundle-format".into(),
        ));
    };
    let public_key = signer
        .to_sigstore_keypair()
        .and_then(|k| k.public_key_to_der())
        .map_err(|e| sign_error(url, e.to_string()))?;
    let bundle = bundle::key_bundle(
        &format!("{}/{}", url.registry, url.repository),
        digest,
        &public_key,
        |data| {
            signer
                .sign(data)
                .map_err(|e| sign_error(url, e.to_string()))
        },
    )?;
    let registry = super::registry::connect(url, options)?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or_default();
    let created = super::build::rfc3339(now);
    let referrer = bundle::attach(&registry, url, digest, &bundle, &created)
        .map_err(|e| sign_error(url, e.to_string()))?;
    Ok(url.with_digest(&referrer).to_string())
}

/// What signatures must prove about an artifact.
#[derive(Debug)]
pub enum VerificationPolicy {
    /// Signed by one of these public keys (`--cosign-key`, or the keys of a Secret).
    Keys(Vec<PublicKey>),
    /// Signed keylessly by an identity and OIDC issuer one of these pairs matches, with a
    /// certificate that chains to the trusted root.
    Keyless {
        identities: Vec<KeylessIdentity>,
        root: TrustedRoot,
    },
}

/// A signer accepted by a keyless policy.
#[derive(Debug, Clone)]
pub struct KeylessIdentity {
    /// The certificate's identity (its email or URI subject alternative name).
    pub identity: Matcher,
    /// The OIDC issuer recorded by Fulcio.
    pub issuer: Matcher,
}

/// A cosign public key.
pub struct PublicKey {
    name: String,
    verifier: PublicKeyVerifier,
}

impl std::fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PublicKey({})", self.name)
    }
}

impl PublicKey {
    /// Parses a PEM public key; `name` (a file or Secret key) names it in errors.
    pub fn from_pem(pem: &[u8], name: &str) -> Result<Self> {
        let verifier = PublicKeyVerifier::try_from(pem)
            .map_err(|e| OciError::SigningKey(format!("cannot read the public key {name}: {e}")))?;
        Ok(PublicKey {
            name: name.to_string(),
            verifier,
        })
    }

    /// Whether `signature` (base64, as in cosign's signature annotation) signs `payload` with
    /// this key: `cosign verify-blob --key`.
    pub fn verifies(&self, payload: &[u8], signature: &str) -> bool {
        let layer = SignatureLayer {
            simple_signing: SimpleSigning {
                critical: Critical {
                    type_name: CRITICAL_TYPE_NAME.to_string(),
                    image: Image {
                        docker_manifest_digest: String::new(),
                    },
                    identity: Identity {
                        docker_reference: String::new(),
                    },
                },
                optional: None,
            },
            oci_digest: String::new(),
            certificate_signature: None,
            bundle: None,
            signature: Some(signature.to_string()),
            raw_data: payload.to_vec(),
        };
        matches!(self.verifier.verify(&layer), Ok(true))
    }
}

/// An artifact whose signature verified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verified {
    /// The manifest digest the signature covers.
    pub digest: String,
    /// Signatures found for it, and how many satisfied the policy.
    pub found: usize,
    pub matching: usize,
}

/// Checks that the artifact `url` (which must name a digest) carries a signature satisfying
/// `policy`. Fails with [`OciError::Verification`] when it has none, or none that satisfies it.
pub fn verify(
    url: &ArtifactUrl,
    policy: &VerificationPolicy,
    options: &ConnectOptions,
) -> Result<Verified> {
    let digest = pinned_digest(url)?.to_string();
    let (config, auth) = client_settings(url, options)?;
    let mut builder = ClientBuilder::default().with_oci_client_config(config);
    let manual;
    if let VerificationPolicy::Keyless { root, .. } = policy {
        manual = root.manual();
        builder = builder
            .with_trust_repository(&manual)
            .map_err(|e| verify_error(url, format!("unusable trusted root: {e}")))?;
    }
    let mut client = builder
        .build()
        .map_err(|e| verify_error(url, e.to_string()))?;
    let reference =
        OciReference::with_digest(url.registry.clone(), url.repository.clone(), digest.clone());
    let layers = runtime(url)?
        .block_on(client.trusted_signature_layers(&auth, &reference))
        .map_err(|e| verify_error(url, e.to_string()))?;
    // The crate drops layers whose payload names another digest; check again so that a
    // change of that behaviour cannot make a signature of another artifact count.
    let layers: Vec<SignatureLayer> = layers
        .into_iter()
        .filter(|l| l.simple_signing.satisfies_manifest_digest(&digest))
        .collect();
    // Bundles attached as referrers (cosign v2.5+/v3): the key-signed ones are checked here,
    // the keyless ones came with `layers`.
    let registry = super::registry::connect(url, options)?;
    let (bundles, referrers_error) = match bundle::attached(&registry, url, &digest) {
        Ok(b) => (b, None),
        Err(e) => (Vec::new(), Some(e.to_string())),
    };
    let key_bundles: Vec<bundle::KeySignature> = bundles
        .iter()
        .filter_map(|b| bundle::key_signature(b, &digest))
        .collect();
    let found = layers.len() + key_bundles.len();
    if found == 0 {
        let mut reason = no_valid_signature(&registry, url, &digest, bundles.len());
        if let Some(e) = referrers_error {
            reason.push_str(&format!(
                " (the attached Sigstore bundles could not be listed: {e})"
            ));
        }
        return Err(verify_error(url, reason));
    }
    let matching = layers.iter().filter(|l| satisfies(policy, l)).count()
        + key_bundles
            .iter()
            .filter(|b| match policy {
                VerificationPolicy::Keys(keys) => {
                    keys.iter().any(|k| k.verifies(&b.pae, &b.signature))
                }
                VerificationPolicy::Keyless { .. } => false,
            })
            .count();
    if matching == 0 {
        let reason = match policy {
            VerificationPolicy::Keys(keys) => format!(
                "no matching signatures: none of the {found} signature(s) verifies with {}",
                keys.iter()
                    .map(|k| k.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            VerificationPolicy::Keyless { identities, .. } => format!(
                "no matching signatures: none of the {found} signature(s) has a trusted certificate for {}, with a verified transparency log entry",
                identities
                    .iter()
                    .map(|i| format!("identity {} issued by {}", i.identity, i.issuer))
                    .collect::<Vec<_>>()
                    .join(" or ")
            ),
        };
        return Err(verify_error(url, reason));
    }
    Ok(Verified {
        digest,
        found,
        matching,
    })
}

/// Why no signature was usable: none stored, or stored ones that do not hold up (`bundles`
/// Sigstore bundles were attached, none of them a usable signature of this digest).
fn no_valid_signature(
    registry: &dyn Registry,
    url: &ArtifactUrl,
    digest: &str,
    bundles: usize,
) -> String {
    let tag = signature_tag(digest);
    let stored = image::stored_layers(registry, url, &tag)
        .map(|l| l.len())
        .unwrap_or(0);
    let mut invalid = Vec::new();
    if stored > 0 {
        invalid.push(format!("the {stored} signature(s) under {tag}"));
    }
    if bundles > 0 {
        invalid.push(format!("the {bundles} attached Sigstore bundle(s)"));
    }
    if invalid.is_empty() {
        "no signatures found".to_string()
    } else {
        format!(
            "no valid signatures: {} do not sign this digest, or their certificate or transparency log entry does not verify",
            invalid.join(" and ")
        )
    }
}

fn satisfies(policy: &VerificationPolicy, layer: &SignatureLayer) -> bool {
    match policy {
        VerificationPolicy::Keys(keys) => keys
            .iter()
            .any(|k| matches!(k.verifier.verify(layer), Ok(true))),
        VerificationPolicy::Keyless { identities, .. } => identities
            .iter()
            .any(|i| keyless::satisfies(&i.identity, &i.issuer, layer)),
    }
}

/// `sha256-<hex>.sig`, the tag under which cosign stores the signatures of `digest`.
fn signature_tag(digest: &str) -> String {
    format!("{}.sig", digest.replace(':', "-"))
}

fn pinned_digest(url: &ArtifactUrl) -> Result<&str> {
    url.digest.as_deref().ok_or_else(|| OciError::InvalidUrl {
        url: url.to_string(),
        reason: "signing and verification need the artifact's digest (…@sha256:…)".into(),
    })
}

fn client_settings(url: &ArtifactUrl, options: &ConnectOptions) -> Result<(ClientConfig, Auth)> {
    let protocol = match protocol_for(url, options.insecure) {
        oci_client::client::ClientProtocol::Http => ClientProtocol::Http,
        oci_client::client::ClientProtocol::Https => ClientProtocol::Https,
        oci_client::client::ClientProtocol::HttpsExcept(hosts) => {
            ClientProtocol::HttpsExcept(hosts)
        }
    };
    let config = ClientConfig {
        protocol,
        accept_invalid_certificates: options.insecure,
        ..Default::default()
    };
    let auth = match connect_credentials(url, options)? {
        Credentials::Anonymous => Auth::Anonymous,
        Credentials::Basic { username, password } => Auth::Basic(username, password),
        Credentials::Bearer(t) => Auth::Bearer(t),
    };
    Ok((config, auth))
}

fn runtime(url: &ArtifactUrl) -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| OciError::Registry {
            op: "start",
            reference: url.to_string(),
            message: format!("cannot start the async runtime: {e}"),
        })
}

fn key_error(what: &'static str) -> impl Fn(sigstore::errors::SigstoreError) -> OciError {
    move |e| OciError::SigningKey(format!("{what}: {e}"))
}

fn sign_error(url: &ArtifactUrl, reason: String) -> OciError {
    OciError::Signing {
        reference: url.to_string(),
        reason,
    }
}

fn verify_error(url: &ArtifactUrl, reason: String) -> OciError {
    OciError::Verification {
        reference: url.to_string(),
        reason,
    }
}

/// Resolves `url` (at `version` when given, as `mod pull --version` does) to its manifest
/// digest and verifies the signatures of that digest. Returns the URL pinned to the digest, so
/// that what is then pulled is what was verified.
pub fn verify_reference(
    registry: &dyn Registry,
    url: &ArtifactUrl,
    version: Option<&str>,
    policy: &VerificationPolicy,
    options: &ConnectOptions,
) -> Result<(ArtifactUrl, Verified)> {
    let target = match (&url.digest, version) {
        (Some(_), _) => url.clone(),
        (None, Some(v)) => url.with_tag(v),
        (None, None) => url.clone(),
    };
    let digest = match &target.digest {
        Some(d) => d.clone(),
        None => registry.manifest_digest(&target)?,
    };
    let pinned = target.with_digest(&digest);
    let verified = verify(&pinned, policy, options)?;
    Ok((pinned, verified))
}

/// A [`ModuleFetch`] that verifies each module's signature before fetching it, then fetches
/// the verified digest: `--verify` of the commands that accept `oci://` modules, and the
/// modules of a Project with `spec.verify`. Needs network access (the signatures live in the
/// registry).
#[derive(Debug, Clone)]
pub struct VerifyingFetcher {
    pub fetcher: Fetcher,
    pub policy: Arc<VerificationPolicy>,
}

impl ModuleFetch for VerifyingFetcher {
    fn fetch(
        &self,
        url: &ArtifactUrl,
        version: Option<&str>,
        digest: Option<&str>,
        dest: &Path,
    ) -> Result<FetchedModule> {
        let registry = super::registry::connect(url, &self.fetcher.connect)?;
        // The manifest `fetch_module` would pull: by digest, or by tag with a digest to match.
        let (target, required) = super::ops::module_target(url, version, digest);
        let (pinned, verified) = verify_reference(
            &registry,
            &target,
            None,
            &self.policy,
            &self.fetcher.connect,
        )?;
        if let Some(want) = required
            && want != verified.digest
        {
            return Err(OciError::VersionDigestMismatch {
                upstream: verified.digest,
                version: target.reference().to_string(),
                specified: want,
            });
        }
        let mut fetched =
            super::ops::fetch_module(&registry, &pinned, None, None, dest, &self.fetcher.cache)?;
        fetched.repository = format!("oci://{}", url.repo());
        Ok(fetched)
    }
}
