//! Keyless signing as `cosign sign` without `--key` does it: an OIDC identity token (given, or
//! GitHub Actions' ambient token requested for the audience `sigstore`), an ephemeral ECDSA
//! P-256 key certified by Fulcio for the token's identity (`POST /api/v2/signingCert`, the
//! proof of possession being the signed email or subject claim), and each signature recorded in
//! Rekor as a `hashedrekord` entry (`POST /api/v1/log/entries`). The signature layer then
//! carries what cosign stores next to the signature: the leaf certificate, the rest of the
//! chain, and the Rekor bundle (the entry with its signed entry timestamp).
//!
//! Written on `reqwest` rather than the `sigstore` crate's signing context: that context signs
//! blobs into Sigstore bundles (not cosign's `.sig` layers), insists on a CT log key to check
//! the certificate's SCT before signing, and would pull in an OpenID Connect client for its
//! browser flow, which a CI signer never uses.

use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use sigstore::crypto::{SigStoreSigner, SigningScheme};

use super::super::error::{OciError, Result};

/// The public-good Fulcio, cosign's default `--fulcio-url`.
pub const FULCIO_URL: &str = "https://fulcio.sigstore.dev";
/// The public-good Rekor, cosign's default `--rekor-url`.
pub const REKOR_URL: &str = "https://rekor.sigstore.dev";
/// The audience cosign asks OIDC providers for.
const AUDIENCE: &str = "sigstore";

/// Where the OIDC identity token comes from.
#[derive(Clone)]
pub enum TokenSource {
    /// A token given as is (`SIGSTORE_ID_TOKEN`, cosign's `--identity-token`).
    Given(String),
    /// GitHub Actions' ambient token: `ACTIONS_ID_TOKEN_REQUEST_URL`, called with
    /// `ACTIONS_ID_TOKEN_REQUEST_TOKEN` as bearer.
    GithubActions {
        request_url: String,
        request_token: String,
    },
}

impl std::fmt::Debug for TokenSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TokenSource::Given(_) => f.write_str("Given(..)"),
            TokenSource::GithubActions { request_url, .. } => {
                write!(f, "GithubActions({request_url})")
            }
        }
    }
}

/// Where keyless signing gets its identity and which services certify and record it.
#[derive(Debug, Clone)]
pub struct KeylessOptions {
    pub token: TokenSource,
    /// Fulcio's base URL ([`FULCIO_URL`] by default).
    pub fulcio_url: String,
    /// Rekor's base URL ([`REKOR_URL`] by default).
    pub rekor_url: String,
}

/// An ephemeral key certified by Fulcio, and where its signatures are recorded.
pub(super) struct Certified {
    pub signer: SigStoreSigner,
    /// The leaf certificate, PEM.
    pub certificate: String,
    /// The rest of the chain Fulcio returned (intermediates and root), PEM.
    pub chain: String,
    /// The identity the token names (its email, else its subject).
    pub identity: String,
    rekor_url: String,
    http: Http,
}

/// Gets the token, an ephemeral key and Fulcio's certificate for it.
pub(super) fn certify(options: &KeylessOptions) -> Result<Certified> {
    let http = Http::new()?;
    let token = match &options.token {
        TokenSource::Given(t) => t.trim().to_string(),
        TokenSource::GithubActions {
            request_url,
            request_token,
        } => github_actions_token(&http, request_url, request_token)?,
    };
    let identity = token_identity(&token)?;
    let signer = SigningScheme::ECDSA_P256_SHA256_ASN1
        .create_signer()
        .map_err(|e| fail(format!("cannot generate the ephemeral key: {e}")))?;
    let public_key = signer
        .to_sigstore_keypair()
        .and_then(|k| k.public_key_to_pem())
        .map_err(|e| fail(format!("cannot encode the ephemeral key: {e}")))?;
    let proof = signer
        .sign(identity.as_bytes())
        .map_err(|e| fail(format!("cannot sign the proof of possession: {e}")))?;
    let request = json!({
        "credentials": {"oidcIdentityToken": token},
        "publicKeyRequest": {
            "publicKey": {"algorithm": "ECDSA", "content": public_key},
            "proofOfPossession": STANDARD.encode(proof),
        },
    });
    let url = endpoint(&options.fulcio_url, "api/v2/signingCert");
    let answer = http.post_json(&url, &request, "requesting a certificate from Fulcio")?;
    let certificates = [
        "signedCertificateEmbeddedSct",
        "signedCertificateDetachedSct",
    ]
    .iter()
    .find_map(|k| answer[k]["chain"]["certificates"].as_array())
    .and_then(|c| {
        c.iter()
            .map(|p| p.as_str().map(str::to_string))
            .collect::<Option<Vec<_>>>()
    })
    .filter(|c| !c.is_empty())
    .ok_or_else(|| fail(format!("Fulcio at {url} answered no certificate chain")))?;
    Ok(Certified {
        signer,
        certificate: pem_line_end(&certificates[0]),
        chain: certificates[1..].iter().map(|c| pem_line_end(c)).collect(),
        identity,
        rekor_url: options.rekor_url.clone(),
        http,
    })
}

impl Certified {
    /// Signs `payload`, records the signature in Rekor and returns the base64 signature with
    /// the annotations cosign stores beside it.
    pub fn sign(&self, payload: &[u8]) -> Result<(String, Vec<(&'static str, String)>)> {
        let signature = self
            .signer
            .sign(payload)
            .map_err(|e| fail(format!("cannot sign: {e}")))?;
        let signature = STANDARD.encode(signature);
        let entry = json!({
            "apiVersion": "0.0.1",
            "kind": "hashedrekord",
            "spec": {
                "data": {"hash": {"algorithm": "sha256", "value": hex::encode(Sha256::digest(payload))}},
                "signature": {
                    "content": signature,
                    "publicKey": {"content": STANDARD.encode(&self.certificate)},
                },
            },
        });
        let url = endpoint(&self.rekor_url, "api/v1/log/entries");
        let answer = self
            .http
            .post_json(&url, &entry, "recording the signature in Rekor")?;
        let bundle = answer
            .as_object()
            .and_then(|entries| entries.values().next())
            .and_then(rekor_bundle)
            .ok_or_else(|| {
                fail(format!(
                    "Rekor at {url} answered no log entry with a signed entry timestamp"
                ))
            })?;
        Ok((
            signature,
            vec![
                ("dev.sigstore.cosign/certificate", self.certificate.clone()),
                ("dev.sigstore.cosign/chain", self.chain.clone()),
                ("dev.sigstore.cosign/bundle", bundle),
            ],
        ))
    }
}

/// Cosign's bundle annotation of a Rekor log entry, in cosign's field order.
fn rekor_bundle(entry: &Value) -> Option<String> {
    let set = entry["verification"]["signedEntryTimestamp"].as_str()?;
    let bundle = json!({
        "SignedEntryTimestamp": set,
        "Payload": {
            "body": entry["body"].as_str()?,
            "integratedTime": entry["integratedTime"].as_i64()?,
            "logIndex": entry["logIndex"].as_i64()?,
            "logID": entry["logID"].as_str()?,
        },
    });
    Some(bundle.to_string())
}

/// GitHub Actions' token for the audience `sigstore`.
fn github_actions_token(http: &Http, request_url: &str, request_token: &str) -> Result<String> {
    let separator = if request_url.contains('?') { '&' } else { '?' };
    let url = format!("{request_url}{separator}audience={AUDIENCE}");
    let answer = http.get_json(
        &url,
        request_token,
        "requesting the GitHub Actions OIDC token",
    )?;
    answer["value"]
        .as_str()
        .filter(|t| !t.is_empty())
        .map(str::to_string)
        .ok_or_else(|| fail("the GitHub Actions token request answered no token".into()))
}

/// The identity Fulcio certifies and signs the proof against: the token's `email` claim, else
/// its `sub`. The token is only decoded here; Fulcio verifies it.
fn token_identity(token: &str) -> Result<String> {
    let claims = token
        .split('.')
        .nth(1)
        .and_then(|c| URL_SAFE_NO_PAD.decode(c.trim_end_matches('=')).ok())
        .and_then(|c| serde_json::from_slice::<Value>(&c).ok())
        .ok_or_else(|| fail("the OIDC identity token is not a JWT".into()))?;
    ["email", "sub"]
        .iter()
        .find_map(|k| claims[k].as_str().filter(|s| !s.is_empty()))
        .map(str::to_string)
        .ok_or_else(|| fail("the OIDC identity token has neither an email nor a subject".into()))
}

/// A PEM certificate with 64-character lines (RFC 7468's strict form, which Fulcio writes and
/// the verifiers' parsers expect; some Fulcio-compatible CAs put the base64 on one line) and a
/// final newline.
fn pem_line_end(pem: &str) -> String {
    let lines: Vec<&str> = pem
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let (Some(first), Some(last)) = (lines.first(), lines.last()) else {
        return String::new();
    };
    if lines.len() < 2 || !first.starts_with("-----BEGIN ") || !last.starts_with("-----END ") {
        return format!("{}\n", pem.trim_end());
    }
    let body: String = lines[1..lines.len() - 1].concat();
    let mut out = format!("{first}\n");
    for chunk in body.as_bytes().chunks(64) {
        out.push_str(std::str::from_utf8(chunk).expect("base64 is ASCII"));
        out.push('\n');
    }
    out.push_str(last);
    out.push('\n');
    out
}

fn endpoint(base: &str, path: &str) -> String {
    format!("{}/{path}", base.trim_end_matches('/'))
}

fn fail(message: String) -> OciError {
    OciError::SigningKey(format!("keyless signing: {message}"))
}

/// A blocking JSON client over `reqwest` and a private current-thread runtime.
struct Http {
    client: reqwest::Client,
    runtime: tokio::runtime::Runtime,
}

impl Http {
    fn new() -> Result<Http> {
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(60))
            .build()
            .map_err(|e| fail(format!("cannot start the HTTP client: {e}")))?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| fail(format!("cannot start the async runtime: {e}")))?;
        Ok(Http { client, runtime })
    }

    fn post_json(&self, url: &str, body: &Value, step: &str) -> Result<Value> {
        let request = self
            .client
            .post(url)
            .header("accept", "application/json")
            .json(body);
        self.send(url, request, step)
    }

    fn get_json(&self, url: &str, bearer: &str, step: &str) -> Result<Value> {
        let request = self
            .client
            .get(url)
            .header("accept", "application/json")
            .header("authorization", format!("bearer {bearer}"));
        self.send(url, request, step)
    }

    fn send(&self, url: &str, request: reqwest::RequestBuilder, step: &str) -> Result<Value> {
        let endpoint = url.split('?').next().unwrap_or(url);
        self.runtime.block_on(async {
            let response = request.send().await.map_err(|e| {
                fail(format!(
                    "{step} ({endpoint}): {}",
                    crate::oci::error::error_chain(&e)
                ))
            })?;
            let status = response.status();
            let text = response.text().await.map_err(|e| {
                fail(format!(
                    "{step} ({endpoint}): {}",
                    crate::oci::error::error_chain(&e)
                ))
            })?;
            if !status.is_success() {
                let text = text.trim();
                let text: String = text.chars().take(300).collect();
                return Err(fail(format!("{step} ({endpoint}): HTTP {status}: {text}")));
            }
            serde_json::from_str(&text)
                .map_err(|e| fail(format!("{step} ({endpoint}): the answer is not JSON: {e}")))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jwt(claims: Value) -> String {
        let part = |v: Value| URL_SAFE_NO_PAD.encode(v.to_string());
        format!("{}.{}.", part(json!({"alg": "none"})), part(claims))
    }

    /// Fulcio checks the proof of possession against the email of email tokens and the
    /// subject of the others (workload tokens such as GitHub Actions').
    #[test]
    fn the_identity_is_the_email_else_the_subject() {
        let both = jwt(json!({"sub": "1234", "email": "dev@example.com"}));
        assert_eq!(token_identity(&both).unwrap(), "dev@example.com");
        let workflow = jwt(json!({"sub": "repo:org/repo:ref:refs/heads/main"}));
        assert_eq!(
            token_identity(&workflow).unwrap(),
            "repo:org/repo:ref:refs/heads/main"
        );
        assert!(token_identity("not a token").is_err());
    }

    #[test]
    fn certificates_are_stored_with_64_character_lines() {
        let body = "A".repeat(100);
        let one_line = format!("-----BEGIN CERTIFICATE-----\n{body}\n-----END CERTIFICATE-----");
        assert_eq!(
            pem_line_end(&one_line),
            format!(
                "-----BEGIN CERTIFICATE-----\n{}\n{}\n-----END CERTIFICATE-----\n",
                &body[..64],
                &body[64..]
            )
        );
        assert_eq!(
            pem_line_end(&pem_line_end(&one_line)),
            pem_line_end(&one_line)
        );
    }
}
