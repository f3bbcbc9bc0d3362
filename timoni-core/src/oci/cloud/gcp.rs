//! Google Artifact Registry / GCR login: an OAuth2 access token, used as the password of user
//! `oauth2accesstoken`. With a workload identity federation audience configured, the service
//! account token is exchanged with Google STS (RFC 8693 token exchange) and, when the service
//! account names a Google service account (`iam.gke.io/gcp-service-account`), that account is
//! impersonated with IAM Credentials `generateAccessToken`; without one, the GKE metadata
//! server gives the token of the workload it runs as.

use std::time::{Duration, SystemTime};

use super::http::{Http, form};
use super::{Endpoints, Identity, Login, Provider, fail};
use crate::oci::auth::Credentials;
use crate::oci::error::Result;

const P: Provider = Provider::Gcp;
const SCOPE: &str = "https://www.googleapis.com/auth/cloud-platform";
/// The registry user name of an access token.
pub const USERNAME: &str = "oauth2accesstoken";

fn token_of(v: &serde_json::Value, step: &str) -> Result<(String, SystemTime)> {
    let token = v["access_token"]
        .as_str()
        .filter(|t| !t.is_empty())
        .ok_or_else(|| fail(P, step, "the answer has no access_token"))?;
    let secs = v["expires_in"].as_u64().unwrap_or(3600);
    Ok((
        token.to_string(),
        SystemTime::now() + Duration::from_secs(secs),
    ))
}

fn metadata(http: &Http, endpoints: &Endpoints) -> Result<(String, SystemTime)> {
    let step = "metadata server token";
    let base = endpoints
        .gcp_metadata
        .as_deref()
        .unwrap_or("http://metadata.google.internal");
    let url = format!(
        "{}/computeMetadata/v1/instance/service-accounts/default/token",
        base.trim_end_matches('/')
    );
    let request = http
        .request(reqwest::Method::GET, &url)
        .header("metadata-flavor", "Google");
    let v = http.send(step, request)?.json(P, step)?;
    token_of(&v, step)
}

fn federation(
    http: &Http,
    endpoints: &Endpoints,
    identity: &Identity,
    audience: &str,
) -> Result<(String, SystemTime)> {
    let step = "sts token exchange";
    let token_audience = endpoints.gcp_token_audience.as_deref().unwrap_or(audience);
    let subject = identity.token(P, token_audience)?;
    let base = endpoints
        .gcp_sts
        .as_deref()
        .unwrap_or("https://sts.googleapis.com");
    let url = format!("{}/v1/token", base.trim_end_matches('/'));
    let body = form(&[
        (
            "grant_type",
            "urn:ietf:params:oauth:grant-type:token-exchange",
        ),
        ("audience", audience),
        ("scope", SCOPE),
        (
            "requested_token_type",
            "urn:ietf:params:oauth:token-type:access_token",
        ),
        ("subject_token", &subject),
        ("subject_token_type", "urn:ietf:params:oauth:token-type:jwt"),
    ]);
    let request = http
        .request(reqwest::Method::POST, &url)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body);
    let v = http.send(step, request)?.json(P, step)?;
    let federated = token_of(&v, step)?;
    let Some(account) = &identity.gcp_service_account else {
        return Ok(federated);
    };
    let step = "iam generateAccessToken";
    let base = endpoints
        .gcp_iam_credentials
        .as_deref()
        .unwrap_or("https://iamcredentials.googleapis.com");
    let url = format!(
        "{}/v1/projects/-/serviceAccounts/{account}:generateAccessToken",
        base.trim_end_matches('/')
    );
    let request = http
        .request(reqwest::Method::POST, &url)
        .bearer_auth(&federated.0)
        .json(&serde_json::json!({ "scope": [SCOPE] }));
    let answer = http.send(step, request)?;
    if !(200..300).contains(&answer.status) {
        return Err(fail(
            P,
            step,
            format!(
                "impersonating {account}: HTTP {}: {}",
                answer.status,
                super::http::snippet(&answer.body)
            ),
        ));
    }
    let v = answer.json(P, step)?;
    let token = v["accessToken"]
        .as_str()
        .filter(|t| !t.is_empty())
        .ok_or_else(|| fail(P, step, "the answer has no accessToken"))?;
    let expires = v["expireTime"]
        .as_str()
        .and_then(|t| t.parse::<jiff::Timestamp>().ok())
        .map(|t| SystemTime::UNIX_EPOCH + Duration::from_secs(t.as_second().max(0) as u64))
        .unwrap_or(federated.1);
    Ok((token.to_string(), expires))
}

/// An Artifact Registry / GCR login.
pub(crate) fn login(http: &Http, endpoints: &Endpoints, identity: &Identity) -> Result<Login> {
    let (token, expires) = match &endpoints.gcp_audience {
        Some(audience) => federation(http, endpoints, identity, audience)?,
        None => metadata(http, endpoints)?,
    };
    Ok(Login {
        credentials: Credentials::Basic {
            username: USERNAME.to_string(),
            password: token,
        },
        expires,
    })
}
