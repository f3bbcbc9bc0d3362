//! `--provider aws|gcp|azure|generic`: registry logins with the ambient cloud identity of the
//! machine (as Flux's CLI has), through `timoni_core::oci::cloud`. `generic` (the default)
//! keeps to `--creds` and the docker config, whose credential helpers (`credHelpers`,
//! `credsStore`) the `docker_credential` crate runs.

use std::sync::Arc;

use timoni_core::oci::cloud::{Endpoints, Identity, Provider, WorkloadIdentity};

/// The endpoint overrides the CLI reads from the environment (`TIMONI_AWS_STS_ENDPOINT`, …),
/// for sovereign clouds and tests.
fn endpoints(env: impl Fn(&str) -> Option<String>) -> Endpoints {
    let env = |k: &str| env(k).filter(|v| !v.is_empty());
    Endpoints {
        aws_sts: env("TIMONI_AWS_STS_ENDPOINT"),
        aws_ecr: env("TIMONI_AWS_ECR_ENDPOINT"),
        aws_region: env("AWS_REGION").or_else(|| env("AWS_DEFAULT_REGION")),
        aws_pod_identity: env("AWS_CONTAINER_CREDENTIALS_FULL_URI"),
        gcp_metadata: env("GCE_METADATA_HOST").map(|h| format!("http://{h}")),
        azure_authority: env("AZURE_AUTHORITY_HOST"),
        azure_acr_exchange: env("TIMONI_AZURE_ACR_EXCHANGE_ENDPOINT"),
        ..Endpoints::default()
    }
}

/// The workload identity of `--provider` (none for `generic`; clap admits only the four
/// names).
pub fn workload_identity(
    provider: &str,
    env: impl Fn(&str) -> Option<String> + Copy,
) -> Option<Arc<WorkloadIdentity>> {
    let provider = Provider::parse(provider).ok()?;
    Some(Arc::new(WorkloadIdentity {
        provider: Some(provider),
        endpoints: endpoints(env),
        identity: Identity::ambient(env),
        ..WorkloadIdentity::default()
    }))
}
