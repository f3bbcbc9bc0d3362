//! Workload identity for a Project's registries: the identity of its service account (the
//! cloud annotations it carries) and its tokens, requested with the TokenRequest API for each
//! audience a cloud asks for, so that every tenant logs in to registries as itself. The cloud
//! exchanges are `timoni_core::oci::cloud`'s; this is the Kubernetes side of its
//! [`ServiceAccountTokens`] seam.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
use k8s_openapi::api::core::v1::ServiceAccount;
use kube::api::PostParams;
use kube::{Api, Client};
use timoni_core::oci::cloud::{
    Endpoints, Identity, Provider, ServiceAccountTokens, TokenCache, WorkloadIdentity,
};

/// How long the requested service account tokens live (the API's minimum): they are exchanged
/// at once.
const TOKEN_SECONDS: i64 = 600;

/// The controller-wide workload identity settings.
#[derive(Clone, Debug, Default)]
pub struct CloudSettings {
    /// The cloud endpoints (defaults: the public clouds).
    pub endpoints: Endpoints,
    /// Registry hosts that belong to a cloud without its usual name.
    pub registries: BTreeMap<String, Provider>,
}

/// Tokens of one service account through the TokenRequest API, requested with the
/// controller's own client. Called from blocking code on the controller's runtime.
struct TokenRequests {
    api: Api<ServiceAccount>,
    name: String,
    runtime: tokio::runtime::Handle,
}

impl ServiceAccountTokens for TokenRequests {
    fn token(&self, audience: &str) -> Result<String, String> {
        let request = TokenRequest {
            spec: Some(TokenRequestSpec {
                audiences: Some(vec![audience.to_string()]),
                expiration_seconds: Some(TOKEN_SECONDS),
                ..Default::default()
            }),
            ..Default::default()
        };
        let answer = self
            .runtime
            .block_on(
                self.api
                    .create_token_request(&self.name, &PostParams::default(), &request),
            )
            .map_err(|e| format!("TokenRequest: {e}"))?;
        answer
            .status
            .and_then(|s| s.token)
            .filter(|t| !t.is_empty())
            .ok_or_else(|| "TokenRequest: the answer has no token".to_string())
    }
}

/// The workload identity of service account `namespace/name` (from its annotations), sharing
/// `cache`. Must be called on the controller's runtime.
pub async fn for_service_account(
    client: &Client,
    namespace: &str,
    name: &str,
    settings: &CloudSettings,
    cache: &TokenCache,
) -> Result<WorkloadIdentity, String> {
    let api: Api<ServiceAccount> = Api::namespaced(client.clone(), namespace);
    let account = api
        .get_opt(name)
        .await
        .map_err(|e| format!("reading service account {namespace}/{name}: {e}"))?
        .ok_or_else(|| format!("service account {namespace}/{name} not found"))?;
    let annotations = account.metadata.annotations.unwrap_or_default();
    let tokens = TokenRequests {
        api,
        name: name.to_string(),
        runtime: tokio::runtime::Handle::current(),
    };
    Ok(WorkloadIdentity {
        provider: None,
        registries: settings.registries.clone(),
        endpoints: settings.endpoints.clone(),
        identity: Identity::service_account(namespace, name, &annotations, Arc::new(tokens)),
        cache: cache.clone(),
    })
}

/// The flags of the workload identity settings (flattened into the binary's).
#[derive(clap::Args, Debug, Clone, Default)]
pub struct CloudArgs {
    /// A registry host that belongs to a cloud although its name does not say so, as
    /// `HOST[:PORT]=aws|gcp|azure` (repeatable).
    #[arg(long = "registry-provider", value_name = "HOST=PROVIDER", value_parser = parse_registry)]
    pub registry_provider: Vec<(String, Provider)>,
    /// AWS STS endpoint [default: https://sts.<region>.amazonaws.com].
    #[arg(long)]
    pub aws_sts_endpoint: Option<String>,
    /// AWS ECR API endpoint [default: https://api.ecr.<region>.amazonaws.com].
    #[arg(long)]
    pub aws_ecr_endpoint: Option<String>,
    /// AWS region for registries whose host names none [default: $AWS_REGION, else us-east-1].
    #[arg(long)]
    pub aws_region: Option<String>,
    /// EKS Pod Identity agent, used for service accounts without a role annotation [default:
    /// $AWS_CONTAINER_CREDENTIALS_FULL_URI].
    #[arg(long)]
    pub aws_pod_identity_endpoint: Option<String>,
    /// GKE metadata server [default: http://metadata.google.internal].
    #[arg(long)]
    pub gcp_metadata_endpoint: Option<String>,
    /// Google STS [default: https://sts.googleapis.com].
    #[arg(long)]
    pub gcp_sts_endpoint: Option<String>,
    /// Google IAM Credentials [default: https://iamcredentials.googleapis.com].
    #[arg(long)]
    pub gcp_iam_credentials_endpoint: Option<String>,
    /// Workload identity federation audience; without it, the metadata server is used.
    #[arg(long)]
    pub gcp_workload_identity_audience: Option<String>,
    /// Audience of the service account token sent to Google STS [default: the federation
    /// audience].
    #[arg(long)]
    pub gcp_token_audience: Option<String>,
    /// Entra ID authority [default: $AZURE_AUTHORITY_HOST, else
    /// https://login.microsoftonline.com].
    #[arg(long)]
    pub azure_authority: Option<String>,
    /// Entra ID tenant for service accounts without a tenant annotation [default:
    /// $AZURE_TENANT_ID].
    #[arg(long)]
    pub azure_tenant_id: Option<String>,
    /// Scope of the Entra ID token [default: https://management.azure.com/.default].
    #[arg(long)]
    pub azure_scope: Option<String>,
    /// ACR token exchange base URL [default: https://<registry>].
    #[arg(long)]
    pub azure_acr_exchange_endpoint: Option<String>,
}

fn parse_registry(s: &str) -> Result<(String, Provider), String> {
    let (host, provider) = s
        .split_once('=')
        .ok_or_else(|| format!("{s:?} is not HOST=PROVIDER"))?;
    let provider = Provider::parse(provider).map_err(|e| e.to_string())?;
    Ok((host.to_string(), provider))
}

impl CloudArgs {
    /// The settings these flags give, `env` filling the defaults the cloud SDKs read from
    /// the environment.
    pub fn settings(&self, env: impl Fn(&str) -> Option<String>) -> CloudSettings {
        let or_env =
            |v: &Option<String>, k: &str| v.clone().or_else(|| env(k).filter(|v| !v.is_empty()));
        CloudSettings {
            endpoints: Endpoints {
                aws_sts: self.aws_sts_endpoint.clone(),
                aws_ecr: self.aws_ecr_endpoint.clone(),
                aws_region: or_env(&self.aws_region, "AWS_REGION"),
                aws_pod_identity: or_env(
                    &self.aws_pod_identity_endpoint,
                    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
                ),
                gcp_metadata: self.gcp_metadata_endpoint.clone(),
                gcp_sts: self.gcp_sts_endpoint.clone(),
                gcp_iam_credentials: self.gcp_iam_credentials_endpoint.clone(),
                gcp_audience: self.gcp_workload_identity_audience.clone(),
                gcp_token_audience: self.gcp_token_audience.clone(),
                azure_authority: or_env(&self.azure_authority, "AZURE_AUTHORITY_HOST"),
                azure_tenant_id: or_env(&self.azure_tenant_id, "AZURE_TENANT_ID"),
                azure_scope: self.azure_scope.clone(),
                azure_acr_exchange: self.azure_acr_exchange_endpoint.clone(),
            },
            registries: self.registry_provider.iter().cloned().collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(clap::Parser)]
    struct Cmd {
        #[command(flatten)]
        cloud: CloudArgs,
    }

    #[test]
    fn registry_provider_flags_map_hosts_to_clouds() {
        let cmd = Cmd::try_parse_from([
            "x",
            "--registry-provider",
            "registry.internal:5000=aws",
            "--azure-tenant-id",
            "t",
        ])
        .unwrap();
        let s = cmd
            .cloud
            .settings(|k| (k == "AWS_REGION").then(|| "eu-west-1".to_string()));
        assert_eq!(s.registries["registry.internal:5000"], Provider::Aws);
        assert_eq!(s.endpoints.azure_tenant_id.as_deref(), Some("t"));
        assert_eq!(s.endpoints.aws_region.as_deref(), Some("eu-west-1"));
        assert!(Cmd::try_parse_from(["x", "--registry-provider", "h=ibm"]).is_err());
    }
}
