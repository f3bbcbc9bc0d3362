//! A Project's registry credentials: the `imagePullSecrets` of its service account
//! (`kubernetes.io/dockerconfigjson` Secrets, or legacy `kubernetes.io/dockercfg` ones, in the
//! Project's namespace) read into an in-memory `oci::RegistryCredentials` for one reconcile;
//! nothing is written to disk. When two secrets name the same registry, the first one listed
//! wins, as the kubelet does.

use k8s_openapi::api::core::v1::{Secret, ServiceAccount};
use kube::{Api, Client};
use serde_json::{Map, Value};
use timoni_core::oci::RegistryCredentials;

/// The `auths` of one pull secret, or why it is unusable.
pub fn secret_auths(secret: &Secret) -> Result<Map<String, Value>, String> {
    let name = secret.metadata.name.as_deref().unwrap_or_default();
    let ty = secret.type_.as_deref().unwrap_or_default();
    let (key, nested) = match ty {
        "kubernetes.io/dockerconfigjson" => (".dockerconfigjson", true),
        "kubernetes.io/dockercfg" => (".dockercfg", false),
        _ => {
            return Err(format!(
                "image pull secret {name:?} has type {ty:?}, expected kubernetes.io/dockerconfigjson"
            ));
        }
    };
    let bytes = secret
        .data
        .as_ref()
        .and_then(|d| d.get(key))
        .map(|b| b.0.clone())
        .or_else(|| {
            let s = secret.string_data.as_ref()?.get(key)?;
            Some(s.as_bytes().to_vec())
        })
        .ok_or_else(|| format!("image pull secret {name:?} has no {key} key"))?;
    let v: Value = serde_json::from_slice(&bytes)
        .map_err(|e| format!("image pull secret {name:?}: {key} is not JSON: {e}"))?;
    let auths = if nested {
        v.get("auths").cloned()
    } else {
        Some(v)
    };
    match auths {
        Some(Value::Object(m)) => Ok(m),
        None => Ok(Map::new()),
        Some(_) => Err(format!(
            "image pull secret {name:?}: `auths` is not an object"
        )),
    }
}

/// Reads the pull secrets of service account `namespace/sa` into credentials per registry
/// (empty when the account lists none).
pub async fn credentials(
    client: &Client,
    namespace: &str,
    sa: &str,
) -> Result<RegistryCredentials, String> {
    let accounts: Api<ServiceAccount> = Api::namespaced(client.clone(), namespace);
    let account = accounts
        .get_opt(sa)
        .await
        .map_err(|e| format!("reading service account {namespace}/{sa}: {e}"))?
        .ok_or_else(|| format!("service account {namespace}/{sa} not found"))?;
    let names: Vec<String> = account
        .image_pull_secrets
        .unwrap_or_default()
        .into_iter()
        .map(|r| r.name)
        .filter(|n| !n.is_empty())
        .collect();
    let secrets: Api<Secret> = Api::namespaced(client.clone(), namespace);
    let mut all = Vec::new();
    for name in names {
        let secret = secrets
            .get_opt(&name)
            .await
            .map_err(|e| format!("reading image pull secret {namespace}/{name}: {e}"))?
            .ok_or_else(|| {
                format!("image pull secret {namespace}/{name} of service account {sa} not found")
            })?;
        all.push(secret);
    }
    merge(&all)
}

/// The credentials of `secrets`, the first one naming a registry winning.
pub fn merge(secrets: &[Secret]) -> Result<RegistryCredentials, String> {
    let mut credentials = RegistryCredentials::default();
    for secret in secrets {
        let name = secret.metadata.name.as_deref().unwrap_or_default();
        credentials
            .add_docker_auths(&secret_auths(secret)?)
            .map_err(|e| format!("image pull secret {name:?}: {e}"))?;
    }
    Ok(credentials)
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::ByteString;
    use timoni_core::oci::Credentials;

    fn secret(name: &str, ty: &str, key: &str, json: &str) -> Secret {
        let mut s = Secret::default();
        s.metadata.name = Some(name.into());
        s.type_ = Some(ty.into());
        s.data = Some(
            [(key.to_string(), ByteString(json.as_bytes().to_vec()))]
                .into_iter()
                .collect(),
        );
        s
    }

    #[test]
    fn pull_secrets_merge_in_memory_and_the_first_wins() {
        let a = secret(
            "a",
            "kubernetes.io/dockerconfigjson",
            ".dockerconfigjson",
            r#"{"auths":{"r1":{"username":"u","password":"p"}}}"#,
        );
        let b = secret(
            "b",
            "kubernetes.io/dockercfg",
            ".dockercfg",
            r#"{"r1":{"auth":"b3RoZXI6eA=="},"r2":{"auth":"eDp5"}}"#,
        );
        let merged = merge(&[a, b]).unwrap();
        let basic = |u: &str, p: &str| Credentials::Basic {
            username: u.into(),
            password: p.into(),
        };
        assert_eq!(merged.get("r1"), Some(&basic("u", "p")));
        assert_eq!(merged.get("r2"), Some(&basic("x", "y")));
    }

    #[test]
    fn unusable_pull_secrets_are_clear_errors() {
        let opaque = secret("x", "Opaque", "k", "{}");
        assert!(
            secret_auths(&opaque)
                .unwrap_err()
                .contains("expected kubernetes.io/dockerconfigjson")
        );
        let bad = secret(
            "y",
            "kubernetes.io/dockerconfigjson",
            ".dockerconfigjson",
            "{",
        );
        assert!(secret_auths(&bad).unwrap_err().contains("is not JSON"));
        let missing = secret("z", "kubernetes.io/dockerconfigjson", "other", "{}");
        assert!(
            secret_auths(&missing)
                .unwrap_err()
                .contains("has no .dockerconfigjson")
        );
    }
}
