//! The signing flags of `mod push` and `artifact push` (`--sign cosign --cosign-key`; without a
//! key, keyless with cosign's `--identity-token`, `--fulcio-url`, `--rekor-url` and the token
//! variables cosign reads; `--new-bundle-format`) and the verification flags of `mod pull` and `artifact pull` (`--verify cosign` with `--cosign-key`
//! or the keyless `--certificate-identity[-regexp]` and `--certificate-oidc-issuer[-regexp]`),
//! checked with Timoni's messages and turned into `timoni_core::oci::sign` settings. `--verify`
//! is also accepted by the commands that take `oci://` modules (`build`, `apply`, `bundle
//! build|apply`): each module is verified before it is fetched, so before anything is evaluated.
//! [`sign_pushed`] and [`VerifyFlags::verify_before_pull`] are the steps the push and pull
//! commands of `mod` and `artifact` share.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use timoni_core::oci::sign::{
    FULCIO_URL, KeylessIdentity, KeylessOptions, Matcher, PROVIDER, PublicKey, REKOR_URL,
    SigningKey, TokenSource, TrustedRoot, VerificationPolicy, VerifyingFetcher,
};
use timoni_core::oci::{self, ArtifactUrl, ConnectOptions, Fetcher, ModuleFetch, Registry};

use crate::output;
use crate::settings::env;

/// After a push: signs the pushed `digest` of `url` as resolved from `--sign` before pushing
/// (nothing happens without it) and logs `signed NAME@DIGEST (WHERE)`.
pub fn sign_pushed(
    signer: Option<&PushSigner>,
    url: &ArtifactUrl,
    name: &str,
    digest: &str,
    connect: &ConnectOptions,
) -> Result<()> {
    let Some(signer) = signer else {
        return Ok(());
    };
    let pinned = url.with_digest(digest);
    let signed = if signer.bundle {
        oci::sign::sign_bundle(&pinned, &signer.key, connect)?
    } else {
        oci::sign::sign(&pinned, &signer.key, connect)?
    };
    match signer.key.keyless_identity() {
        Some(identity) => output::info(format!(
            "signed {name}@{digest} keyless as {identity} ({signed})"
        )),
        None => output::info(format!("signed {name}@{digest} ({signed})")),
    }
    Ok(())
}

/// How a push is signed: the key, and whether as a Sigstore bundle (`--new-bundle-format`).
#[derive(Debug)]
pub struct PushSigner {
    pub key: SigningKey,
    pub bundle: bool,
}

/// `--sign` and `--cosign-key` of the push commands, and cosign's keyless signing flags.
#[derive(clap::Args, Debug, Clone)]
pub struct SignFlags {
    /// Signs the module with the specified provider.
    #[arg(long, value_name = "PROVIDER")]
    pub sign: Option<String>,
    /// The Cosign private key for signing the module (its password is read from COSIGN_PASSWORD).
    /// Without it, --sign cosign signs keyless: with an OIDC identity token certified by Fulcio.
    #[arg(long, value_name = "FILE")]
    pub cosign_key: Option<String>,
    /// The OIDC identity token for keyless signing, or a file holding it; defaults to
    /// $SIGSTORE_ID_TOKEN, then GitHub Actions' token (ACTIONS_ID_TOKEN_REQUEST_URL and
    /// ACTIONS_ID_TOKEN_REQUEST_TOKEN), then the file /var/run/sigstore/cosign/oidc-token.
    #[arg(long, value_name = "TOKEN")]
    pub identity_token: Option<String>,
    /// The Fulcio certificate authority of keyless signing.
    #[arg(long, value_name = "URL", default_value = FULCIO_URL)]
    pub fulcio_url: String,
    /// The Rekor transparency log of keyless signing.
    #[arg(long, value_name = "URL", default_value = REKOR_URL)]
    pub rekor_url: String,
    /// Writes a key signature as a Sigstore bundle attached to the artifact as an OCI referrer,
    /// as cosign v3 does by default, instead of a layer of the sha256-<hex>.sig image.
    #[arg(long)]
    pub new_bundle_format: bool,
}

/// Where cosign's filesystem provider reads a mounted OIDC token.
const TOKEN_FILE: &str = "/var/run/sigstore/cosign/oidc-token";

impl SignFlags {
    /// How to sign, or `None` without `--sign`; checked before anything is pushed. Keyless,
    /// this already obtains the token and Fulcio's certificate.
    pub fn resolve(&self) -> Result<Option<PushSigner>> {
        let sign = self.sign.as_deref().filter(|s| !s.is_empty());
        let key = self.cosign_key.as_deref().filter(|k| !k.is_empty());
        let Some(provider) = sign else {
            if key.is_some() {
                bail!("--cosign-key requires --sign");
            }
            if self.new_bundle_format {
                bail!("--new-bundle-format requires --sign");
            }
            return Ok(None);
        };
        if provider != PROVIDER {
            bail!("signer not supported: {provider}");
        }
        let Some(key) = key else {
            if self.new_bundle_format {
                bail!(
                    "--new-bundle-format requires --cosign-key: keyless signatures are written to the sha256-<hex>.sig image"
                );
            }
            let options = KeylessOptions {
                token: self.token_source()?,
                fulcio_url: self.fulcio_url.clone(),
                rekor_url: self.rekor_url.clone(),
            };
            return Ok(Some(PushSigner {
                key: SigningKey::keyless(&options)?,
                bundle: false,
            }));
        };
        let pem = std::fs::read(key).with_context(|| format!("reading the Cosign key {key}"))?;
        let password = env("COSIGN_PASSWORD").unwrap_or_default();
        Ok(Some(PushSigner {
            key: SigningKey::from_encrypted_pem(&pem, password.as_bytes(), key)?,
            bundle: self.new_bundle_format,
        }))
    }

    /// The OIDC token, found where cosign looks for one (its interactive browser flow aside).
    fn token_source(&self) -> Result<TokenSource> {
        let nonempty = |v: Option<String>| v.filter(|s| !s.trim().is_empty());
        if let Some(token) = nonempty(self.identity_token.clone()) {
            // cosign's --identity-token takes the token or a file holding it.
            return Ok(TokenSource::Given(match std::fs::read_to_string(&token) {
                Ok(text) => text,
                Err(_) => token,
            }));
        }
        if let Some(token) = nonempty(env("SIGSTORE_ID_TOKEN")) {
            return Ok(TokenSource::Given(token));
        }
        if let (Some(request_url), Some(request_token)) = (
            nonempty(env("ACTIONS_ID_TOKEN_REQUEST_URL")),
            nonempty(env("ACTIONS_ID_TOKEN_REQUEST_TOKEN")),
        ) {
            return Ok(TokenSource::GithubActions {
                request_url,
                request_token,
            });
        }
        if let Ok(token) = std::fs::read_to_string(TOKEN_FILE) {
            return Ok(TokenSource::Given(token));
        }
        bail!(
            "keyless signing (--sign cosign without --cosign-key) needs an OIDC identity token: give --identity-token, set SIGSTORE_ID_TOKEN, or run in GitHub Actions with the permission id-token: write; or sign with a key (--cosign-key)"
        )
    }
}

/// `--verify` and its companion flags of the pull commands.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct VerifyFlags {
    /// Verifies the signed module with the specified provider.
    #[arg(long, value_name = "PROVIDER")]
    pub verify: Option<String>,
    /// The Cosign public key for verifying the module.
    #[arg(long, value_name = "FILE")]
    pub cosign_key: Option<String>,
    /// The identity expected in a valid Fulcio certificate for verifying the Cosign signature.
    /// Valid values include email address, DNS names, IP addresses, and URIs.
    /// Either --certificate-identity or --certificate-identity-regexp must be set for keyless flows.
    #[arg(long)]
    pub certificate_identity: Option<String>,
    /// A regular expression alternative to --certificate-identity for verifying the Cosign signature.
    /// Either --certificate-identity or --certificate-identity-regexp must be set for keyless flows.
    #[arg(long)]
    pub certificate_identity_regexp: Option<String>,
    /// The OIDC issuer expected in a valid Fulcio certificate for verifying the Cosign signature,
    /// e.g. https://token.actions.githubusercontent.com or https://oauth2.sigstore.dev/auth.
    /// Either --certificate-oidc-issuer or --certificate-oidc-issuer-regexp must be set for keyless flows.
    #[arg(long)]
    pub certificate_oidc_issuer: Option<String>,
    /// A regular expression alternative to --certificate-oidc-issuer for verifying the Cosign signature.
    /// Either --certificate-oidc-issuer or --certificate-oidc-issuer-regexp must be set for keyless flows.
    #[arg(long)]
    pub certificate_oidc_issuer_regexp: Option<String>,
    /// The Sigstore trusted root (trusted_root.json: Fulcio certificates and Rekor keys) for
    /// keyless verification; defaults to $TIMONI_TRUSTED_ROOT.
    #[arg(long, value_name = "FILE")]
    pub trusted_root: Option<PathBuf>,
}

fn given(v: &Option<String>) -> Option<&str> {
    v.as_deref().filter(|s| !s.is_empty())
}

impl VerifyFlags {
    /// The policy to verify with, or `None` without `--verify`; reads the key or trusted root.
    pub fn resolve(&self) -> Result<Option<VerificationPolicy>> {
        let companions = [
            ("cosign-key", &self.cosign_key),
            ("certificate-identity", &self.certificate_identity),
            (
                "certificate-identity-regexp",
                &self.certificate_identity_regexp,
            ),
            ("certificate-oidc-issuer", &self.certificate_oidc_issuer),
            (
                "certificate-oidc-issuer-regexp",
                &self.certificate_oidc_issuer_regexp,
            ),
        ];
        let Some(provider) = given(&self.verify) else {
            if let Some((name, _)) = companions.iter().find(|(_, v)| given(v).is_some()) {
                bail!("--{name} requires --verify");
            }
            return Ok(None);
        };
        for [a, b] in [
            ["certificate-identity", "certificate-identity-regexp"],
            ["certificate-oidc-issuer", "certificate-oidc-issuer-regexp"],
        ] {
            let set = |n: &str| {
                companions
                    .iter()
                    .any(|(c, v)| *c == n && given(v).is_some())
            };
            if set(a) && set(b) {
                bail!("--{a} and --{b} are mutually exclusive");
            }
        }
        if provider != PROVIDER {
            bail!("verifier not supported: {provider}");
        }
        if let Some(key) = given(&self.cosign_key) {
            if companions[1..].iter().any(|(_, v)| given(v).is_some()) {
                bail!("--cosign-key cannot be combined with certificate verification flags");
            }
            let pem =
                std::fs::read(key).with_context(|| format!("reading the Cosign key {key}"))?;
            return Ok(Some(VerificationPolicy::Keys(vec![PublicKey::from_pem(
                &pem, key,
            )?])));
        }
        let identity = match (
            given(&self.certificate_identity),
            given(&self.certificate_identity_regexp),
        ) {
            (Some(i), _) => Matcher::Exact(i.to_string()),
            (None, Some(r)) => Matcher::regex(r, "--certificate-identity-regexp")?,
            (None, None) => bail!(
                "--certificate-identity or --certificate-identity-regexp is required for Cosign verification in keyless mode"
            ),
        };
        let issuer = match (
            given(&self.certificate_oidc_issuer),
            given(&self.certificate_oidc_issuer_regexp),
        ) {
            (Some(i), _) => Matcher::Exact(i.to_string()),
            (None, Some(r)) => Matcher::regex(r, "--certificate-oidc-issuer-regexp")?,
            (None, None) => bail!(
                "--certificate-oidc-issuer or --certificate-oidc-issuer-regexp is required for Cosign verification in keyless mode"
            ),
        };
        let root = self
            .trusted_root
            .clone()
            .or_else(|| env("TIMONI_TRUSTED_ROOT").map(PathBuf::from));
        let Some(root) = root else {
            bail!(
                "keyless verification needs the Sigstore trusted root: give --trusted-root FILE (a trusted_root.json) or set TIMONI_TRUSTED_ROOT"
            );
        };
        Ok(Some(VerificationPolicy::Keyless {
            identities: vec![KeylessIdentity { identity, issuer }],
            root: TrustedRoot::from_file(&root)?,
        }))
    }
}

impl VerifyFlags {
    /// Before a pull, with `--verify`: `url` (at `version`, as `mod pull --version`) resolved
    /// to its digest and that digest verified, logged as `verified URL@DIGEST`; the pull must
    /// fetch the returned pinned URL. `None` without `--verify`.
    pub fn verify_before_pull(
        &self,
        registry: &dyn Registry,
        url: &ArtifactUrl,
        version: Option<&str>,
        connect: &ConnectOptions,
    ) -> Result<Option<ArtifactUrl>> {
        let Some(policy) = self.resolve()? else {
            return Ok(None);
        };
        let (pinned, _) = oci::sign::verify_reference(registry, url, version, &policy, connect)?;
        output::info(format!("verified {pinned}"));
        Ok(Some(pinned))
    }

    /// `fetcher`, verifying every `oci://` module before it is fetched when `--verify` is set.
    pub fn module_fetcher(&self, fetcher: Fetcher) -> Result<Box<dyn ModuleFetch>> {
        Ok(match self.resolve()? {
            Some(policy) => Box::new(VerifyingFetcher {
                fetcher,
                policy: Arc::new(policy),
            }),
            None => Box::new(fetcher),
        })
    }
}
