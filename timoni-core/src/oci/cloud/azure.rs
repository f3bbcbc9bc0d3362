//! Azure ACR login: the service account token for `api://AzureADTokenExchange` is the client
//! assertion of an Entra ID client-credentials request for the application of the service
//! account's `azure.workload.identity/client-id` annotation; the Entra access token is then
//! exchanged at the registry's `/oauth2/exchange` for an ACR refresh token, the password of
//! the user `00000000-0000-0000-0000-000000000000`.

use std::time::{Duration, SystemTime};

use super::http::{Http, form};
use super::{
    AZURE_AUDIENCE, AZURE_CLIENT_ID_ANNOTATION, AZURE_TENANT_ID_ANNOTATION, Endpoints, Identity,
    Login, Provider, fail, jwt_expiry,
};
use crate::oci::auth::Credentials;
use crate::oci::error::Result;

const P: Provider = Provider::Azure;
/// The registry user name of an ACR refresh token.
pub const USERNAME: &str = "00000000-0000-0000-0000-000000000000";

/// An ACR login for `registry`.
pub(crate) fn login(
    http: &Http,
    endpoints: &Endpoints,
    identity: &Identity,
    registry: &str,
) -> Result<Login> {
    let step = "entra id token";
    let client_id = identity.azure_client_id.as_deref().ok_or_else(|| {
        fail(
            P,
            step,
            format!(
                "service account {} has no {AZURE_CLIENT_ID_ANNOTATION} annotation naming the \
                 application to sign in as",
                identity.name
            ),
        )
    })?;
    let tenant = identity
        .azure_tenant_id
        .as_deref()
        .or(endpoints.azure_tenant_id.as_deref())
        .ok_or_else(|| {
            fail(
                P,
                step,
                format!(
                    "no tenant: service account {} has no {AZURE_TENANT_ID_ANNOTATION} \
                     annotation and no default tenant is configured",
                    identity.name
                ),
            )
        })?;
    let assertion = identity.token(P, AZURE_AUDIENCE)?;
    let authority = endpoints
        .azure_authority
        .as_deref()
        .unwrap_or("https://login.microsoftonline.com");
    let url = format!(
        "{}/{tenant}/oauth2/v2.0/token",
        authority.trim_end_matches('/')
    );
    let scope = endpoints
        .azure_scope
        .as_deref()
        .unwrap_or("https://management.azure.com/.default");
    let body = form(&[
        ("grant_type", "client_credentials"),
        ("client_id", client_id),
        ("scope", scope),
        (
            "client_assertion_type",
            "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
        ),
        ("client_assertion", &assertion),
    ]);
    let request = http
        .request(reqwest::Method::POST, &url)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body);
    let v = http.send(step, request)?.json(P, step)?;
    let access = v["access_token"]
        .as_str()
        .filter(|t| !t.is_empty())
        .ok_or_else(|| fail(P, step, "the answer has no access_token"))?;
    let access_expires =
        SystemTime::now() + Duration::from_secs(v["expires_in"].as_u64().unwrap_or(3600));

    let step = "acr token exchange";
    let host = registry;
    let base = endpoints
        .azure_acr_exchange
        .clone()
        .unwrap_or_else(|| format!("https://{host}"));
    let url = format!("{}/oauth2/exchange", base.trim_end_matches('/'));
    let body = form(&[
        ("grant_type", "access_token"),
        ("service", host),
        ("tenant", tenant),
        ("access_token", access),
    ]);
    let request = http
        .request(reqwest::Method::POST, &url)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body);
    let v = http.send(step, request)?.json(P, step)?;
    let refresh = v["refresh_token"]
        .as_str()
        .filter(|t| !t.is_empty())
        .ok_or_else(|| fail(P, step, "the answer has no refresh_token"))?;
    let expires = jwt_expiry(refresh).unwrap_or(access_expires);
    Ok(Login {
        credentials: Credentials::Basic {
            username: USERNAME.to_string(),
            password: refresh.to_string(),
        },
        expires,
    })
}
