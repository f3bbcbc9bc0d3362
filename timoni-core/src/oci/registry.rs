//! The registry seam: a small blocking [`Registry`] trait with the five requests Timoni needs,
//! and [`OciClientRegistry`], its implementation over the async `oci-client` crate driven by a
//! private current-thread tokio runtime. Plain HTTP is used with `--registry-insecure` and, as
//! go-containerregistry does, for loopback hosts (`localhost`, `127.0.0.0/8`, `[::1]`).

use oci_client::client::{ClientConfig, ClientProtocol};
use oci_client::manifest::OciDescriptor;
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, Reference, RegistryOperation};

use std::path::PathBuf;

use super::auth::{Credentials, RegistryCredentials, resolve_credentials};
use super::build::sha256;
use super::error::{OciError, Result};
use super::reference::ArtifactUrl;

/// The registry requests behind every OCI command. Implementations check nothing about Timoni
/// formats; the caller verifies digests and media types.
pub trait Registry {
    /// Uploads a blob unless the registry already has it.
    fn push_blob(&self, repo: &ArtifactUrl, digest: &str, data: &[u8]) -> Result<()>;
    /// Uploads a manifest under `tag` (or a digest).
    fn push_manifest(
        &self,
        repo: &ArtifactUrl,
        tag: &str,
        manifest: &[u8],
        media_type: &str,
    ) -> Result<()>;
    /// Fetches the manifest named by `url` (its digest, else its tag, else `latest`), returning
    /// its bytes; the caller hashes them for the digest.
    fn pull_manifest(&self, url: &ArtifactUrl) -> Result<Vec<u8>>;
    /// Resolves `url` to its manifest digest without fetching the manifest (a HEAD request).
    fn manifest_digest(&self, url: &ArtifactUrl) -> Result<String>;
    /// Fetches a blob, refusing more than `max` bytes.
    fn pull_blob(&self, repo: &ArtifactUrl, digest: &str, size: u64, max: u64) -> Result<Vec<u8>>;
    /// Every tag of the repository, in registry order.
    fn list_tags(&self, repo: &ArtifactUrl) -> Result<Vec<String>>;
}

/// How to reach a registry.
#[derive(Debug, Clone)]
pub struct RegistryOptions {
    /// Plain HTTP for every host (`--registry-insecure`).
    pub insecure: bool,
    pub credentials: Credentials,
}

/// What a command knows about reaching registries before it knows the host: the `--creds`
/// value, the docker config file and `--registry-insecure`. [`connect`] turns it into a client
/// for one URL, resolving the credentials for that URL's host.
#[derive(Debug, Clone, Default)]
pub struct ConnectOptions {
    /// `--creds user:password` or `--creds token`.
    pub creds: Option<String>,
    /// Credentials per registry held in memory (a controller's pull secrets), used when `creds`
    /// is unset, before the docker config.
    pub registry_credentials: RegistryCredentials,
    /// The docker config (`~/.docker/config.json`) for credentials when neither `creds` nor
    /// `registry_credentials` covers the registry.
    pub docker_config: Option<PathBuf>,
    /// `--registry-insecure`.
    pub insecure: bool,
    /// Cloud logins for registries the credentials above do not cover (or for every registry
    /// when it forces a provider, as `--provider` does).
    pub workload_identity: Option<std::sync::Arc<super::cloud::WorkloadIdentity>>,
}

/// A client for the registry of `url`, with the credentials [`ConnectOptions`] give for its host.
pub fn connect(url: &ArtifactUrl, options: &ConnectOptions) -> Result<OciClientRegistry> {
    let credentials = connect_credentials(url, options)?;
    OciClientRegistry::new(
        url,
        &RegistryOptions {
            insecure: options.insecure,
            credentials,
        },
    )
}

/// `--creds`, else a forced provider, else the in-memory credentials, else the docker config,
/// else the cloud of the host.
pub(crate) fn connect_credentials(
    url: &ArtifactUrl,
    options: &ConnectOptions,
) -> Result<Credentials> {
    let creds = options.creds.as_deref().filter(|c| !c.is_empty());
    let wi = options.workload_identity.as_deref();
    if creds.is_none()
        && let Some(wi) = wi.filter(|w| w.provider.is_some())
        && let Some(c) = wi.credentials(&url.registry)?
    {
        return Ok(c);
    }
    if creds.is_none()
        && let Some(c) = options.registry_credentials.get(&url.registry)
    {
        return Ok(c.clone());
    }
    let credentials = resolve_credentials(creds, &url.registry, options.docker_config.as_deref())?;
    if credentials == Credentials::Anonymous
        && let Some(wi) = wi
        && let Some(c) = wi.credentials(&url.registry)?
    {
        return Ok(c);
    }
    Ok(credentials)
}

/// Plain HTTP with `--registry-insecure` and for loopback hosts, HTTPS otherwise.
pub(crate) fn protocol_for(url: &ArtifactUrl, insecure: bool) -> ClientProtocol {
    if insecure {
        ClientProtocol::Http
    } else if is_loopback(&url.registry) {
        ClientProtocol::HttpsExcept(vec![url.registry.clone()])
    } else {
        ClientProtocol::Https
    }
}

/// [`Registry`] over `oci-client`.
pub struct OciClientRegistry {
    client: Client,
    auth: RegistryAuth,
    runtime: tokio::runtime::Runtime,
}

impl OciClientRegistry {
    /// A client for the registry of `url` with these options.
    pub fn new(url: &ArtifactUrl, options: &RegistryOptions) -> Result<Self> {
        let protocol = protocol_for(url, options.insecure);
        let client = Client::new(ClientConfig {
            protocol,
            accept_invalid_certificates: options.insecure,
            ..Default::default()
        });
        let auth = match &options.credentials {
            Credentials::Anonymous => RegistryAuth::Anonymous,
            Credentials::Basic { username, password } => {
                RegistryAuth::Basic(username.clone(), password.clone())
            }
            Credentials::Bearer(t) => RegistryAuth::Bearer(t.clone()),
        };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| OciError::Registry {
                op: "start",
                reference: url.to_string(),
                message: format!("cannot start the async runtime: {e}"),
            })?;
        Ok(OciClientRegistry {
            client,
            auth,
            runtime,
        })
    }

    /// The digests of the manifests that name `url` (pinned to a digest) as their subject:
    /// the OCI referrers API, or the `sha256-<hex>` referrers tag on a registry without it.
    pub fn referrers(&self, url: &ArtifactUrl) -> Result<Vec<String>> {
        let r = Self::reference(url);
        let index = self.run(
            "list referrers of",
            url,
            &r,
            RegistryOperation::Pull,
            async { self.client.pull_referrers(&r, None).await },
        )?;
        Ok(index.manifests.into_iter().map(|m| m.digest).collect())
    }

    fn reference(url: &ArtifactUrl) -> Reference {
        match &url.digest {
            Some(d) => {
                Reference::with_digest(url.registry.clone(), url.repository.clone(), d.clone())
            }
            None => Reference::with_tag(
                url.registry.clone(),
                url.repository.clone(),
                url.tag.clone().unwrap_or_else(|| "latest".to_string()),
            ),
        }
    }

    fn run<T>(
        &self,
        op: &'static str,
        url: &ArtifactUrl,
        reference: &Reference,
        operation: RegistryOperation,
        fut: impl std::future::Future<
            Output = std::result::Result<T, oci_client::errors::OciDistributionError>,
        >,
    ) -> Result<T> {
        self.runtime.block_on(async {
            self.client
                .store_auth_if_needed(reference.resolve_registry(), &self.auth)
                .await;
            if operation == RegistryOperation::Push {
                self.client
                    .auth(reference, &self.auth, operation)
                    .await
                    .map_err(|e| registry_error(op, url, e))?;
            }
            fut.await.map_err(|e| registry_error(op, url, e))
        })
    }
}

fn registry_error(
    op: &'static str,
    url: &ArtifactUrl,
    e: oci_client::errors::OciDistributionError,
) -> OciError {
    OciError::Registry {
        op,
        reference: url.to_string(),
        message: with_causes(&e),
    }
}

/// An error's text followed by those of its causes that it does not already include, so that
/// the root cause (`Connection refused`) survives a wrapper such as `error sending request`.
fn with_causes(e: &dyn std::error::Error) -> String {
    let mut msg = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let text = c.to_string();
        if !msg.contains(&text) {
            msg.push_str(": ");
            msg.push_str(&text);
        }
        cause = c.source();
    }
    msg
}

/// Hosts go-containerregistry reaches over plain HTTP without being told.
fn is_loopback(registry: &str) -> bool {
    let host = match registry.rsplit_once(':') {
        Some((h, port)) if port.bytes().all(|b| b.is_ascii_digit()) && !h.ends_with(':') => h,
        _ => registry,
    };
    host == "localhost" || host.starts_with("127.") || host == "[::1]" || host == "::1"
}

impl Registry for OciClientRegistry {
    fn push_blob(&self, repo: &ArtifactUrl, digest: &str, data: &[u8]) -> Result<()> {
        let r = Self::reference(repo);
        let exists = self.run("check blob in", repo, &r, RegistryOperation::Push, async {
            self.client.blob_exists(&r, digest).await
        })?;
        if exists {
            return Ok(());
        }
        let data = data.to_vec();
        self.run("push blob to", repo, &r, RegistryOperation::Push, async {
            self.client.push_blob(&r, data, digest).await
        })?;
        Ok(())
    }

    fn push_manifest(
        &self,
        repo: &ArtifactUrl,
        tag: &str,
        manifest: &[u8],
        media_type: &str,
    ) -> Result<()> {
        let target = repo.with_tag(tag);
        let r = Self::reference(&target);
        let ct = media_type.parse().map_err(|_| {
            OciError::InvalidInput(format!("{media_type:?} is not a valid media type"))
        })?;
        let body = manifest.to_vec();
        self.run(
            "push manifest to",
            &target,
            &r,
            RegistryOperation::Push,
            async { self.client.push_manifest_raw(&r, body, ct).await },
        )?;
        Ok(())
    }

    fn pull_manifest(&self, url: &ArtifactUrl) -> Result<Vec<u8>> {
        let r = Self::reference(url);
        let (bytes, _) = self.run("pull manifest", url, &r, RegistryOperation::Pull, async {
            self.client
                .pull_manifest_raw(&r, &self.auth, &[super::MANIFEST_MEDIA_TYPE])
                .await
        })?;
        Ok(bytes.to_vec())
    }

    fn manifest_digest(&self, url: &ArtifactUrl) -> Result<String> {
        let r = Self::reference(url);
        self.run("resolve", url, &r, RegistryOperation::Pull, async {
            self.client.fetch_manifest_digest(&r, &self.auth).await
        })
    }

    fn pull_blob(&self, repo: &ArtifactUrl, digest: &str, size: u64, max: u64) -> Result<Vec<u8>> {
        if size > max {
            return Err(OciError::TooLarge {
                what: format!("blob {digest} ({size} bytes)"),
                limit: max,
            });
        }
        let r = Self::reference(repo);
        let desc = OciDescriptor {
            digest: digest.to_string(),
            size: size as i64,
            ..Default::default()
        };
        let mut out: Vec<u8> = Vec::with_capacity(size as usize);
        self.run("pull blob from", repo, &r, RegistryOperation::Pull, async {
            self.client.pull_blob(&r, &desc, &mut out).await
        })?;
        if out.len() as u64 > max {
            return Err(OciError::TooLarge {
                what: format!("blob {digest}"),
                limit: max,
            });
        }
        let actual = sha256(&out);
        if actual != digest {
            return Err(OciError::DigestMismatch {
                what: format!("blob of {repo}"),
                expected: digest.to_string(),
                actual,
            });
        }
        Ok(out)
    }

    fn list_tags(&self, repo: &ArtifactUrl) -> Result<Vec<String>> {
        let r = Self::reference(repo);
        let mut tags: Vec<String> = Vec::new();
        // Page through the list: registries may cap a response.
        loop {
            let last = tags.last().cloned();
            let page = self.run("list tags of", repo, &r, RegistryOperation::Pull, async {
                self.client
                    .list_tags(&r, &self.auth, Some(1000), last.as_deref())
                    .await
            })?;
            let n = page.tags.len();
            tags.extend(page.tags);
            if n < 1000 {
                return Ok(tags);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_hosts_use_plain_http() {
        for h in [
            "localhost:5000",
            "127.0.0.1:5000",
            "127.1.2.3",
            "[::1]:5000",
            "localhost",
        ] {
            assert!(is_loopback(h), "{h}");
        }
        for h in ["ghcr.io", "10.0.0.1:5000", "localhost.example.com"] {
            assert!(!is_loopback(h), "{h}");
        }
    }
}
