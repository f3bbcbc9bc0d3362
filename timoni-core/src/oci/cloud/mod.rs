//! Registry credentials from cloud workload identity: a short-lived login for AWS ECR, Google
//! Artifact Registry / GCR and Azure ACR, obtained with the identity of a Kubernetes service
//! account (or, in the CLI, the ambient identity of the machine) instead of a stored secret.
//!
//! [`WorkloadIdentity`] is what [`super::ConnectOptions`] carries: which registries belong to
//! which cloud ([`Provider`]), the cloud endpoints ([`Endpoints`], overridable for sovereign
//! clouds and tests), the identity ([`Identity`]: the service account's annotations and a
//! [`ServiceAccountTokens`] source of its projected tokens) and a [`TokenCache`] that keeps each
//! login until shortly before it expires. The service account tokens come through the small
//! [`ServiceAccountTokens`] trait (the controller implements it with the TokenRequest API); the
//! cloud token endpoints are plain HTTPS calls (`reqwest`), see `aws`, `gcp` and `azure`.
//! Every failure names the provider and the step that failed.

mod aws;
mod azure;
mod gcp;
mod http;
mod sigv4;

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use super::auth::Credentials;
use super::error::{OciError, Result};

/// The annotation naming the IAM role of a service account (EKS IRSA).
pub const AWS_ROLE_ARN_ANNOTATION: &str = "eks.amazonaws.com/role-arn";
/// The annotation naming the Google service account a Kubernetes one impersonates.
pub const GCP_SERVICE_ACCOUNT_ANNOTATION: &str = "iam.gke.io/gcp-service-account";
/// The annotation naming the Entra ID application (client) of a service account.
pub const AZURE_CLIENT_ID_ANNOTATION: &str = "azure.workload.identity/client-id";
/// The annotation naming the Entra ID tenant of a service account.
pub const AZURE_TENANT_ID_ANNOTATION: &str = "azure.workload.identity/tenant-id";

/// The audience of the service account token exchanged with AWS STS.
pub const AWS_AUDIENCE: &str = "sts.amazonaws.com";
/// The audience of the service account token sent to the EKS Pod Identity agent.
pub const AWS_POD_IDENTITY_AUDIENCE: &str = "pods.eks.amazonaws.com";
/// The audience of the service account token exchanged with Entra ID.
pub const AZURE_AUDIENCE: &str = "api://AzureADTokenExchange";

/// A cloud whose registries accept workload identity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Provider {
    Aws,
    Gcp,
    Azure,
}

impl Provider {
    /// `aws`, `gcp` or `azure`.
    pub fn parse(s: &str) -> Result<Provider> {
        match s {
            "aws" => Ok(Provider::Aws),
            "gcp" => Ok(Provider::Gcp),
            "azure" => Ok(Provider::Azure),
            _ => Err(OciError::InvalidInput(format!(
                "unknown registry provider {s:?}: expected aws, gcp or azure"
            ))),
        }
    }

    /// The name used in flags and messages.
    pub fn name(self) -> &'static str {
        match self {
            Provider::Aws => "aws",
            Provider::Gcp => "gcp",
            Provider::Azure => "azure",
        }
    }

    /// The cloud a registry host belongs to, from its name: `*.dkr.ecr.*.amazonaws.com[.cn]`,
    /// `*-docker.pkg.dev` and `[*.]gcr.io`, `*.azurecr.io|cn|us`.
    pub fn for_registry(host: &str) -> Option<Provider> {
        let host = host.split(':').next().unwrap_or(host).to_ascii_lowercase();
        if aws::region_of(&host).is_some() {
            return Some(Provider::Aws);
        }
        if host.ends_with("-docker.pkg.dev") || host == "gcr.io" || host.ends_with(".gcr.io") {
            return Some(Provider::Gcp);
        }
        if [".azurecr.io", ".azurecr.cn", ".azurecr.us"]
            .iter()
            .any(|s| host.ends_with(s))
        {
            return Some(Provider::Azure);
        }
        None
    }
}

impl std::fmt::Display for Provider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The cloud endpoints; each `None` is the public cloud's default.
#[derive(Debug, Clone, Default)]
pub struct Endpoints {
    /// AWS STS (default `https://sts.<region>.amazonaws.com`).
    pub aws_sts: Option<String>,
    /// AWS ECR API (default `https://api.ecr.<region>.amazonaws.com`).
    pub aws_ecr: Option<String>,
    /// The AWS region when the registry host names none (default `us-east-1`).
    pub aws_region: Option<String>,
    /// The EKS Pod Identity agent (`http://169.254.170.23/v1/credentials`); unset: EKS Pod
    /// Identity is not used.
    pub aws_pod_identity: Option<String>,
    /// The GKE metadata server (default `http://metadata.google.internal`).
    pub gcp_metadata: Option<String>,
    /// Google STS (default `https://sts.googleapis.com`).
    pub gcp_sts: Option<String>,
    /// Google IAM Credentials (default `https://iamcredentials.googleapis.com`).
    pub gcp_iam_credentials: Option<String>,
    /// The workload identity federation audience (the pool provider, e.g.
    /// `//iam.googleapis.com/projects/N/locations/global/workloadIdentityPools/P/providers/X`);
    /// unset: the metadata server is asked instead.
    pub gcp_audience: Option<String>,
    /// The audience of the service account token sent to Google STS (default: `gcp_audience`).
    pub gcp_token_audience: Option<String>,
    /// The Entra ID authority (default `https://login.microsoftonline.com`).
    pub azure_authority: Option<String>,
    /// The tenant when the service account names none.
    pub azure_tenant_id: Option<String>,
    /// The scope of the Entra ID token (default `https://management.azure.com/.default`).
    pub azure_scope: Option<String>,
    /// Where the ACR refresh-token exchange is (default `https://<registry>`).
    pub azure_acr_exchange: Option<String>,
}

/// Tokens of a Kubernetes service account for an audience (the TokenRequest API), or of the
/// machine's projected token files in the CLI.
pub trait ServiceAccountTokens: Send + Sync {
    /// A token for `audience`.
    fn token(&self, audience: &str) -> std::result::Result<String, String>;
}

/// Static AWS keys (the CLI's `AWS_ACCESS_KEY_ID`, …).
#[derive(Clone, PartialEq, Eq)]
pub struct AwsKeys {
    pub access_key_id: String,
    pub secret_access_key: String,
    pub session_token: Option<String>,
}

/// Whose identity is used: a service account's annotations and tokens.
#[derive(Clone, Default)]
pub struct Identity {
    /// `namespace/name` of the service account (or `ambient`): in messages and cache keys.
    pub name: String,
    /// `eks.amazonaws.com/role-arn`.
    pub aws_role_arn: Option<String>,
    /// Static keys (CLI only).
    pub aws_keys: Option<AwsKeys>,
    /// `iam.gke.io/gcp-service-account`.
    pub gcp_service_account: Option<String>,
    /// `azure.workload.identity/client-id`.
    pub azure_client_id: Option<String>,
    /// `azure.workload.identity/tenant-id`.
    pub azure_tenant_id: Option<String>,
    /// Where the service account's tokens come from.
    pub tokens: Option<Arc<dyn ServiceAccountTokens>>,
}

impl Identity {
    /// The identity of service account `namespace/name` with these annotations.
    pub fn service_account(
        namespace: &str,
        name: &str,
        annotations: &BTreeMap<String, String>,
        tokens: Arc<dyn ServiceAccountTokens>,
    ) -> Identity {
        let get = |k: &str| annotations.get(k).filter(|v| !v.is_empty()).cloned();
        Identity {
            name: format!("{namespace}/{name}"),
            aws_role_arn: get(AWS_ROLE_ARN_ANNOTATION),
            aws_keys: None,
            gcp_service_account: get(GCP_SERVICE_ACCOUNT_ANNOTATION),
            azure_client_id: get(AZURE_CLIENT_ID_ANNOTATION),
            azure_tenant_id: get(AZURE_TENANT_ID_ANNOTATION),
            tokens: Some(tokens),
        }
    }

    /// The ambient identity of a CI machine or pod, from the variables the cloud SDKs read:
    /// `AWS_ROLE_ARN` + `AWS_WEB_IDENTITY_TOKEN_FILE` or `AWS_ACCESS_KEY_ID` +
    /// `AWS_SECRET_ACCESS_KEY` [+ `AWS_SESSION_TOKEN`]; `AZURE_CLIENT_ID`, `AZURE_TENANT_ID` +
    /// `AZURE_FEDERATED_TOKEN_FILE`; Google uses the metadata server.
    pub fn ambient(env: impl Fn(&str) -> Option<String>) -> Identity {
        let env = |k: &str| env(k).filter(|v| !v.is_empty());
        let aws_keys = match (env("AWS_ACCESS_KEY_ID"), env("AWS_SECRET_ACCESS_KEY")) {
            (Some(access_key_id), Some(secret_access_key)) => Some(AwsKeys {
                access_key_id,
                secret_access_key,
                session_token: env("AWS_SESSION_TOKEN"),
            }),
            _ => None,
        };
        let files = TokenFiles {
            aws: env("AWS_WEB_IDENTITY_TOKEN_FILE"),
            azure: env("AZURE_FEDERATED_TOKEN_FILE"),
        };
        Identity {
            name: "ambient".into(),
            aws_role_arn: env("AWS_ROLE_ARN"),
            aws_keys,
            gcp_service_account: None,
            azure_client_id: env("AZURE_CLIENT_ID"),
            azure_tenant_id: env("AZURE_TENANT_ID"),
            tokens: Some(Arc::new(files)),
        }
    }

    fn token(&self, provider: Provider, audience: &str) -> Result<String> {
        let tokens = self.tokens.as_ref().ok_or_else(|| {
            fail(
                provider,
                "service account token",
                format!("no token source for {}", self.name),
            )
        })?;
        tokens.token(audience).map_err(|e| {
            fail(
                provider,
                "service account token",
                format!("{} for audience {audience}: {e}", self.name),
            )
        })
    }
}

/// The projected token files of the ambient identity.
struct TokenFiles {
    aws: Option<String>,
    azure: Option<String>,
}

impl ServiceAccountTokens for TokenFiles {
    fn token(&self, audience: &str) -> std::result::Result<String, String> {
        let (file, var) = match audience {
            AWS_AUDIENCE => (&self.aws, "AWS_WEB_IDENTITY_TOKEN_FILE"),
            AZURE_AUDIENCE => (&self.azure, "AZURE_FEDERATED_TOKEN_FILE"),
            _ => return Err(format!("no token file for audience {audience}")),
        };
        let file = file.as_ref().ok_or_else(|| format!("{var} is not set"))?;
        std::fs::read_to_string(file)
            .map(|t| t.trim().to_string())
            .map_err(|e| format!("{file}: {e}"))
    }
}

/// The error of one step of a provider's login.
pub(crate) fn fail(provider: Provider, step: &str, message: impl std::fmt::Display) -> OciError {
    OciError::Credentials(format!("{provider} workload identity: {step}: {message}"))
}

/// A registry login and when it expires.
#[derive(Clone)]
pub(crate) struct Login {
    pub credentials: Credentials,
    pub expires: SystemTime,
}

#[derive(Clone)]
struct Entry {
    login: Login,
    renew_at: SystemTime,
}

/// Logins kept until shortly before they expire: five minutes, or half their lifetime when
/// that is shorter. Cloning shares the cache.
#[derive(Clone, Default)]
pub struct TokenCache {
    entries: Arc<Mutex<HashMap<String, Entry>>>,
    fetches: Arc<std::sync::atomic::AtomicU64>,
}

impl TokenCache {
    /// How many logins were fetched from a cloud (not served from the cache).
    pub fn fetches(&self) -> u64 {
        self.fetches.load(std::sync::atomic::Ordering::Relaxed)
    }

    fn get(&self, key: &str) -> Option<Credentials> {
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        match entries.get(key) {
            Some(e) if SystemTime::now() < e.renew_at => Some(e.login.credentials.clone()),
            Some(_) => {
                entries.remove(key);
                None
            }
            None => None,
        }
    }

    fn put(&self, key: String, login: Login) {
        self.fetches
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let now = SystemTime::now();
        let lifetime = login.expires.duration_since(now).unwrap_or_default();
        let margin = (lifetime / 2).min(Duration::from_secs(300));
        let renew_at = now + (lifetime - margin);
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        entries.insert(key, Entry { login, renew_at });
    }
}

/// Registry logins through cloud workload identity, for [`super::ConnectOptions`].
#[derive(Clone, Default)]
pub struct WorkloadIdentity {
    /// Use this provider for every registry (`--provider`), before the docker config.
    pub provider: Option<Provider>,
    /// Registry hosts (`host[:port]`) that belong to a cloud without its usual name (private
    /// endpoints, tests).
    pub registries: BTreeMap<String, Provider>,
    pub endpoints: Endpoints,
    pub identity: Identity,
    pub cache: TokenCache,
}

impl std::fmt::Debug for WorkloadIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkloadIdentity")
            .field("provider", &self.provider)
            .field("registries", &self.registries)
            .field("endpoints", &self.endpoints)
            .field("identity", &self.identity.name)
            .finish()
    }
}

impl WorkloadIdentity {
    /// The provider for `registry`: the forced one, else the configured hosts, else its name.
    pub fn provider_for(&self, registry: &str) -> Option<Provider> {
        self.provider
            .or_else(|| self.registries.get(registry).copied())
            .or_else(|| Provider::for_registry(registry))
    }

    /// A login for `registry`, from the cache or the cloud; `None` when the registry belongs to
    /// no cloud.
    pub fn credentials(&self, registry: &str) -> Result<Option<Credentials>> {
        let Some(provider) = self.provider_for(registry) else {
            return Ok(None);
        };
        let key = format!("{provider}\n{}\n{registry}", self.identity.name);
        if let Some(c) = self.cache.get(&key) {
            return Ok(Some(c));
        }
        let http = http::Http::new(provider)?;
        let login = match provider {
            Provider::Aws => aws::login(&http, &self.endpoints, &self.identity, registry)?,
            Provider::Gcp => gcp::login(&http, &self.endpoints, &self.identity)?,
            Provider::Azure => azure::login(&http, &self.endpoints, &self.identity, registry)?,
        };
        let credentials = login.credentials.clone();
        self.cache.put(key, login);
        Ok(Some(credentials))
    }
}

/// The `exp` claim of a JWT, without checking its signature (the issuer checks it).
pub(crate) fn jwt_expiry(token: &str) -> Option<SystemTime> {
    use base64::Engine as _;
    let payload = token.split('.').nth(1)?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload.trim_end_matches('='))
        .ok()?;
    let claims: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    let exp = claims.get("exp")?.as_u64()?;
    Some(SystemTime::UNIX_EPOCH + Duration::from_secs(exp))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_hosts_name_their_cloud() {
        let cases = [
            (
                "123456789012.dkr.ecr.eu-west-1.amazonaws.com",
                Some(Provider::Aws),
            ),
            (
                "123456789012.dkr.ecr.cn-north-1.amazonaws.com.cn",
                Some(Provider::Aws),
            ),
            ("europe-west1-docker.pkg.dev", Some(Provider::Gcp)),
            ("gcr.io", Some(Provider::Gcp)),
            ("eu.gcr.io", Some(Provider::Gcp)),
            ("team.azurecr.io", Some(Provider::Azure)),
            ("team.azurecr.us:443", Some(Provider::Azure)),
            ("ghcr.io", None),
            ("127.0.0.1:5000", None),
            ("amazonaws.com", None),
        ];
        for (host, want) in cases {
            assert_eq!(Provider::for_registry(host), want, "{host}");
        }
        assert!(Provider::parse("ibm").is_err());
    }

    #[test]
    fn logins_are_kept_until_shortly_before_they_expire() {
        let cache = TokenCache::default();
        let login = |secs: u64| Login {
            credentials: Credentials::Bearer(format!("t{secs}")),
            expires: SystemTime::now() + Duration::from_secs(secs),
        };
        cache.put("long".into(), login(3600));
        assert_eq!(cache.get("long"), Some(Credentials::Bearer("t3600".into())));
        // Half of its lifetime is left for the renewal of a short login.
        cache.put("short".into(), login(0));
        assert_eq!(cache.get("short"), None);
        assert_eq!(cache.fetches(), 2);
    }

    #[test]
    fn jwt_expiry_reads_the_exp_claim() {
        use base64::Engine as _;
        let enc = |s: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(s);
        let token = format!("{}.{}.sig", enc("{}"), enc(r#"{"exp":1700000000}"#));
        assert_eq!(
            jwt_expiry(&token),
            Some(SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000))
        );
        assert_eq!(jwt_expiry("opaque"), None);
    }
}
