//! Workload identity acceptance tests: Projects whose service accounts have no pull secret
//! reconcile private artifacts from registries that only accept a cloud login. Real servers:
//! envtest's kube-apiserver (the TokenRequest API gives the service account tokens), Debian's
//! docker-registry with basic auth for the user and password the cloud login yields,
//! `moto_server` for AWS STS and ECR, and loopback stand-ins of Google STS / IAM Credentials
//! and of Entra ID / the ACR exchange that check the tokens, audiences, subjects and client ids
//! they receive (`support/cloud.rs`). The registries are loopback hosts, mapped to their cloud
//! like a private endpoint would be.

#[path = "../../timoni-core/tests/support/registry.rs"]
mod registry;
#[allow(dead_code)]
mod support;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{Namespace, ServiceAccount};
use k8s_openapi::api::rbac::v1::ClusterRoleBinding;
use kube::Api;
use serde_json::json;
use support::cloud::{self, StandIn, refuse};
use support::cluster::{Cluster, TIMEOUT, wait_for};
use timoni_controller::workload_identity::CloudSettings;
use timoni_core::oci::cloud::Provider;
use timoni_core::oci::{self, ArtifactUrl, ConnectOptions};
use timoni_core::project::api::{Project, ProjectStatus};

impl Cluster {
    /// Namespace `ns` with service account `deployer` (cluster-admin, no pull secret) carrying
    /// `annotations`, and a Project `app` following `url:latest`.
    fn tenant(&self, ns: &str, annotations: serde_json::Value, url: &str) {
        self.apply::<Namespace>(
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}),
        );
        self.apply::<ServiceAccount>(json!({"apiVersion": "v1", "kind": "ServiceAccount",
            "metadata": {"name": "deployer", "namespace": ns, "annotations": annotations}}));
        self.apply::<ClusterRoleBinding>(json!({"apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding", "metadata": {"name": format!("{ns}-deployer")},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
            "subjects": [{"kind": "ServiceAccount", "name": "deployer", "namespace": ns}]}));
        self.apply::<Project>(json!({
            "apiVersion": "projects.timoni.sh/v1alpha1", "kind": "Project",
            "metadata": {"name": "app", "namespace": ns, "annotations": {"runtime.timoni.sh/cluster": "test"}},
            "spec": {"serviceAccountName": "deployer", "source": {"repository": url, "tag": "latest"},
                "interval": "1s", "timeout": "30s", "retry": {"minBackoff": "500ms", "maxBackoff": "2s"}}
        }));
    }

    fn status(&self, ns: &str) -> ProjectStatus {
        let api: Api<Project> = Api::namespaced(self.client.clone(), ns);
        self.rt
            .block_on(api.get_opt("app"))
            .unwrap()
            .and_then(|p| p.status)
            .unwrap_or_default()
    }

    /// Waits for the Project of `ns` to be `Ready=status` with `reason`; returns its message.
    fn wait_ready(&self, ns: &str, status: &str, reason: &str) -> String {
        let mut last = None;
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let st = self.status(ns);
            let ready = st.conditions.iter().find(|c| c.type_ == "Ready").cloned();
            if let Some(r) = ready
                .as_ref()
                .filter(|c| c.status == status && c.reason == reason)
            {
                return r.message.clone();
            }
            last = ready.or(last);
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {ns}/app Ready={status} {reason}; last: {last:?}"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

fn module_dir() -> &'static Path {
    Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/testdata/modules/cm"
    ))
}

/// Pushes a Project of one `cm` instance named `name` (in namespace `name`) to `url:latest`.
fn publish(url: &str, creds: &str, name: &str) {
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("modules/cm");
    std::fs::create_dir_all(m.join("cue.mod")).unwrap();
    for f in ["timoni.cue", "values.cue", "cue.mod/module.cue"] {
        std::fs::copy(module_dir().join(f), m.join(f)).unwrap();
    }
    let files = [
        (
            "project.cue",
            format!(
                "project: {{\n\tapiVersion: \"v1alpha1\"\n\tname: \"{name}\"\n\tcomponents: web: bundle: [\"bundles/web.cue\"]\n}}\n"
            ),
        ),
        (
            "bundles/web.cue",
            format!(
                "bundle: {{\n\tapiVersion: \"v1alpha1\"\n\tname: \"{name}\"\n\tinstances: \"{name}\": {{\n\t\tmodule: url: \"file://../modules/cm\"\n\t\tnamespace: \"{name}\"\n\t\tvalues: version: \"v1\"\n\t\tvalues: cluster: string @timoni(runtime:string:TIMONI_CLUSTER_NAME)\n\t}}\n}}\n"
            ),
        ),
    ];
    for (path, text) in files {
        let p = dir.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    let url = ArtifactUrl::parse(url).unwrap();
    let connect = ConnectOptions {
        creds: Some(creds.into()),
        ..Default::default()
    };
    let registry = oci::connect(&url, &connect).unwrap();
    oci::push_artifact(
        &registry,
        dir.path(),
        &url,
        &["latest".to_string()],
        timoni_core::project::source::CONTENT_TYPE_PROJECT,
        &BTreeMap::new(),
        None,
        false,
    )
    .unwrap();
}

/// moto's ECR password for account 123456789012.
const ECR_PASSWORD: &str = "123456789012-auth-token";

#[test]
fn ecr_through_sts_web_identity_and_a_missing_role_annotation_is_a_clear_failure() {
    let Some(moto) = cloud::moto() else { return };
    let Some(reg) = registry::start(Some(("AWS", ECR_PASSWORD))) else {
        return;
    };
    let mut cloud_settings = CloudSettings::default();
    cloud_settings.registries.insert(reg.host(), Provider::Aws);
    cloud_settings.endpoints.aws_sts = Some(moto.url());
    cloud_settings.endpoints.aws_ecr = Some(moto.url());
    cloud_settings.endpoints.aws_region = Some("us-east-1".into());
    let Some(c) = Cluster::start(|s| s.cloud = cloud_settings) else {
        return;
    };
    let url = reg.url("team/app");
    publish(&url, &format!("AWS:{ECR_PASSWORD}"), "web-aws");

    c.tenant(
        "aws",
        json!({"eks.amazonaws.com/role-arn": "arn:aws:iam::123456789012:role/puller"}),
        &url,
    );
    c.wait_ready("aws", "True", "ReconciliationSucceeded");

    c.tenant("noarn", json!({}), &url);
    let message = c.wait_ready("noarn", "False", "ArtifactFailed");
    assert!(
        message.contains(
            "aws workload identity: sts AssumeRoleWithWebIdentity: service account \
             noarn/deployer has no eks.amazonaws.com/role-arn annotation"
        ),
        "{message}"
    );
}

const GCP_AUDIENCE: &str =
    "//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/envtest/providers/k8s";
const GCP_TOKEN: &str = "ya29.registry-token";
const AZURE_TENANT: &str = "72f988bf-0000-0000-0000-000000000001";
const AZURE_CLIENT: &str = "0b1c2d3e-0000-0000-0000-00000000000c";

/// An ACR refresh token: a JWT (alg none) expiring in 2100.
fn acr_refresh_token() -> String {
    use base64::Engine as _;
    let enc = |s: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(s);
    format!(
        "{}.{}.",
        enc(r#"{"alg":"none"}"#),
        enc(r#"{"exp":4102444800}"#)
    )
}

/// Google STS and IAM Credentials: a federated token for a service account token of
/// `<ns>/deployer` for [`GCP_AUDIENCE`]; impersonation of `<x>@p.iam.gserviceaccount.com`
/// with it, the access token living 3600 s for `long@…` and 2 s for `short@…`.
fn google() -> StandIn {
    StandIn::start(|r| {
        if r.path == "/v1/token" {
            let f = r.form();
            let subject = f.get("subject_token").cloned().unwrap_or_default();
            let ns = cloud::claims(&subject)["sub"]
                .as_str()
                .and_then(|s| s.strip_prefix("system:serviceaccount:"))
                .and_then(|s| s.strip_suffix(":deployer"))
                .unwrap_or_default()
                .to_string();
            if f.get("grant_type").map(String::as_str)
                != Some("urn:ietf:params:oauth:grant-type:token-exchange")
                || f.get("audience").map(String::as_str) != Some(GCP_AUDIENCE)
                || f.get("subject_token_type").map(String::as_str)
                    != Some("urn:ietf:params:oauth:token-type:jwt")
                || !cloud::is_service_account_token(&subject, &ns, "deployer", GCP_AUDIENCE)
            {
                return refuse("bad token exchange");
            }
            return (
                200,
                json!({"access_token": format!("federated-{ns}"), "expires_in": 3600,
                    "token_type": "Bearer", "issued_token_type": "urn:ietf:params:oauth:token-type:access_token"})
                .to_string(),
            );
        }
        let Some(account) = r
            .path
            .strip_prefix("/v1/projects/-/serviceAccounts/")
            .and_then(|p| p.strip_suffix(":generateAccessToken"))
        else {
            return (404, "{}".into());
        };
        let federated = r.headers.get("authorization").cloned().unwrap_or_default();
        if !federated.starts_with("Bearer federated-") || !r.body.contains("cloud-platform") {
            return (
                403,
                json!({"error": {"message": "not federated"}}).to_string(),
            );
        }
        let ttl = if account.starts_with("short@") {
            2
        } else {
            3600
        };
        let expire = jiff::Timestamp::now() + jiff::SignedDuration::from_secs(ttl);
        (
            200,
            json!({"accessToken": GCP_TOKEN, "expireTime": expire.to_string()}).to_string(),
        )
    })
}

/// Entra ID (client assertion of `<ns>/deployer` for api://AzureADTokenExchange, client
/// [`AZURE_CLIENT`], tenant [`AZURE_TENANT`]) and the ACR exchange of `registry`.
fn azure(registry: String) -> StandIn {
    StandIn::start(move |r| {
        if r.path == format!("/{AZURE_TENANT}/oauth2/v2.0/token") {
            let f = r.form();
            let assertion = f.get("client_assertion").cloned().unwrap_or_default();
            if f.get("grant_type").map(String::as_str) != Some("client_credentials")
                || f.get("client_id").map(String::as_str) != Some(AZURE_CLIENT)
                || f.get("client_assertion_type").map(String::as_str)
                    != Some("urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
                || !cloud::is_service_account_token(
                    &assertion,
                    "azure",
                    "deployer",
                    "api://AzureADTokenExchange",
                )
            {
                return refuse("AADSTS700016: bad client assertion");
            }
            return (
                200,
                json!({"access_token": "aad-access", "expires_in": 3600, "token_type": "Bearer"})
                    .to_string(),
            );
        }
        if r.path == "/oauth2/exchange" {
            let f = r.form();
            if f.get("grant_type").map(String::as_str) != Some("access_token")
                || f.get("service") != Some(&registry)
                || f.get("tenant").map(String::as_str) != Some(AZURE_TENANT)
                || f.get("access_token").map(String::as_str) != Some("aad-access")
            {
                return refuse("bad exchange");
            }
            return (
                200,
                json!({"refresh_token": acr_refresh_token()}).to_string(),
            );
        }
        (404, "{}".into())
    })
}

#[test]
fn artifact_registry_and_acr_through_token_exchanges_with_cached_logins() {
    let Some(greg) = registry::start(Some(("oauth2accesstoken", GCP_TOKEN))) else {
        return;
    };
    let refresh = acr_refresh_token();
    let Some(areg) = registry::start(Some(("00000000-0000-0000-0000-000000000000", &refresh)))
    else {
        return;
    };
    let google = google();
    let azure = azure(areg.host());
    let mut s = CloudSettings::default();
    s.registries.insert(greg.host(), Provider::Gcp);
    s.registries.insert(areg.host(), Provider::Azure);
    s.endpoints.gcp_sts = Some(google.url());
    s.endpoints.gcp_iam_credentials = Some(google.url());
    s.endpoints.gcp_audience = Some(GCP_AUDIENCE.into());
    s.endpoints.azure_authority = Some(azure.url());
    s.endpoints.azure_acr_exchange = Some(azure.url());
    s.endpoints.azure_tenant_id = Some(AZURE_TENANT.into());
    let Some(c) = Cluster::start(|settings| settings.cloud = s) else {
        return;
    };
    let gurl = greg.url("team/app");
    publish(&gurl, &format!("oauth2accesstoken:{GCP_TOKEN}"), "web-gcp");
    let aurl = areg.url("team/app");
    publish(
        &aurl,
        &format!("00000000-0000-0000-0000-000000000000:{refresh}"),
        "web-azure",
    );

    // Google: a long-lived login is fetched once and reused by the reconciles that follow
    // (every second, the Project's interval).
    let gsa = |n: &str| json!({"iam.gke.io/gcp-service-account": format!("{n}@p.iam.gserviceaccount.com")});
    c.tenant("glong", gsa("long"), &gurl);
    c.wait_ready("glong", "True", "ReconciliationSucceeded");
    let long = "/v1/projects/-/serviceAccounts/long@";
    assert_eq!(google.count(long), 1);
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(google.count(long), 1, "the cached login is reused");

    // A short-lived one is renewed.
    c.tenant("gshort", gsa("short"), &gurl);
    c.wait_ready("gshort", "True", "ReconciliationSucceeded");
    let short = "/v1/projects/-/serviceAccounts/short@";
    let first = google.count(short);
    assert!(first >= 1);
    wait_for("the expired login to be renewed", || {
        (google.count(short) > first).then_some(())
    });

    // Azure.
    c.tenant(
        "azure",
        json!({"azure.workload.identity/client-id": AZURE_CLIENT}),
        &aurl,
    );
    c.wait_ready("azure", "True", "ReconciliationSucceeded");
    assert_eq!(azure.count("/oauth2/exchange"), 1);

    // Without the client id annotation, the step that failed is named.
    c.tenant("anon", json!({}), &aurl);
    let message = c.wait_ready("anon", "False", "ArtifactFailed");
    assert!(
        message.contains(
            "azure workload identity: entra id token: service account anon/deployer has no \
             azure.workload.identity/client-id annotation"
        ),
        "{message}"
    );
}
