//! A Project's registry credentials: the `imagePullSecrets` of its service account
//! (`kubernetes.io/dockerconfigjson` Secrets, or legacy `kubernetes.io/dockercfg` ones, in the
//! Project's namespace) merged into one docker `config.json` in a private temporary directory,
//! which the OCI layer reads like `~/.docker/config.json` (`oci::ConnectOptions::docker_config`).
//! When two secrets name the same registry, the first one listed wins, as the kubelet does.

use std::collections::BTreeMap;
use std::path::PathBuf;

use base64::Engine as _;
use k8s_openapi::api::core::v1::{Secret, ServiceAccount};
use kube::{Api, Client};
use serde_json::{Map, Value};

/// A docker config written for one reconcile; removed on drop.
pub struct DockerConfig {
    dir: tempfile::TempDir,
}

impl DockerConfig {
    /// The `config.json` path.
    pub fn path(&self) -> PathBuf {
        self.dir.path().join("config.json")
    }
}

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

/// Merges `auths` maps, the first one naming a registry winning.
pub fn merge(all: impl IntoIterator<Item = Map<String, Value>>) -> Value {
    let mut merged: BTreeMap<String, Value> = BTreeMap::new();
    for auths in all {
        for (registry, entry) in auths {
            let entry = normalize(entry);
            merged.entry(registry).or_insert(entry);
        }
    }
    serde_json::json!({ "auths": merged })
}

/// `username`/`password` entries without `auth` get one (the docker CLI reads `auth`).
fn normalize(mut entry: Value) -> Value {
    if let Value::Object(m) = &mut entry
        && !m.contains_key("auth")
        && let (Some(Value::String(u)), Some(Value::String(p))) =
            (m.get("username"), m.get("password"))
    {
        let auth = base64::engine::general_purpose::STANDARD.encode(format!("{u}:{p}"));
        m.insert("auth".into(), Value::String(auth));
    }
    entry
}

/// Reads the pull secrets of service account `namespace/sa` and writes them as a docker config
/// under `tmp`. `Ok(None)` when the account lists none.
pub async fn docker_config(
    client: &Client,
    namespace: &str,
    sa: &str,
    tmp: &std::path::Path,
) -> Result<Option<DockerConfig>, String> {
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
    if names.is_empty() {
        return Ok(None);
    }
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
        all.push(secret_auths(&secret)?);
    }
    std::fs::create_dir_all(tmp).map_err(|e| format!("{}: {e}", tmp.display()))?;
    let dir = tempfile::Builder::new()
        .prefix("auth-")
        .tempdir_in(tmp)
        .map_err(|e| format!("{}: {e}", tmp.display()))?;
    let config = DockerConfig { dir };
    let text = serde_json::to_vec(&merge(all)).map_err(|e| e.to_string())?;
    std::fs::write(config.path(), text).map_err(|e| format!("{}: {e}", config.path().display()))?;
    Ok(Some(config))
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::ByteString;

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
    fn pull_secrets_merge_first_wins_and_get_an_auth_field() {
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
            r#"{"r1":{"auth":"other"},"r2":{"auth":"eDp5"}}"#,
        );
        let merged = merge([secret_auths(&a).unwrap(), secret_auths(&b).unwrap()]);
        assert_eq!(merged["auths"]["r1"]["auth"], "dTpw");
        assert_eq!(merged["auths"]["r2"]["auth"], "eDp5");
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
