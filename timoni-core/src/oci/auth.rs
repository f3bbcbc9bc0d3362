//! Registry credentials: `--creds user:pass` (basic auth) or `--creds token` (bearer), else the
//! docker config (`$DOCKER_CONFIG/config.json` or `~/.docker/config.json`, its `auths` entries
//! and credential helpers, read by the `docker_credential` crate), else anonymous. Also
//! `registry login|logout`, which add or remove an `auths` entry in that file.

use std::path::{Path, PathBuf};

use base64::Engine as _;
use docker_credential::{CredentialRetrievalError, DockerCredential};

use super::error::{OciError, Result};

/// How to authenticate to a registry.
#[derive(Clone, PartialEq, Eq)]
pub enum Credentials {
    Anonymous,
    Basic { username: String, password: String },
    Bearer(String),
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print secrets, even in debug output.
        match self {
            Credentials::Anonymous => f.write_str("Anonymous"),
            Credentials::Basic { username, .. } => write!(f, "Basic({username}:***)"),
            Credentials::Bearer(_) => f.write_str("Bearer(***)"),
        }
    }
}

/// Credentials per registry host, held in memory: what a controller reads from Kubernetes pull
/// Secrets, so that no `config.json` is ever written to disk. The first entry given for a host
/// wins (as the kubelet merges a service account's pull secrets).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RegistryCredentials {
    by_host: std::collections::BTreeMap<String, Credentials>,
}

impl RegistryCredentials {
    /// Adds `credentials` for `registry` (a host, `host:port`, or a docker config key such as
    /// `https://index.docker.io/v1/`) unless that host already has some.
    pub fn insert(&mut self, registry: &str, credentials: Credentials) {
        self.by_host
            .entry(registry_host(registry))
            .or_insert(credentials);
    }

    /// The credentials of `registry`, if any.
    pub fn get(&self, registry: &str) -> Option<&Credentials> {
        self.by_host.get(&registry_host(registry))
    }

    pub fn is_empty(&self) -> bool {
        self.by_host.is_empty()
    }

    /// Adds the entries of a docker config `auths` object (`auth` = base64 of `user:password`,
    /// or `username` and `password`, or `identitytoken` / `registrytoken`); entries without any
    /// of these are ignored, as docker does.
    pub fn add_docker_auths(
        &mut self,
        auths: &serde_json::Map<String, serde_json::Value>,
    ) -> Result<()> {
        for (registry, entry) in auths {
            let field = |k: &str| {
                entry
                    .get(k)
                    .and_then(|v| v.as_str())
                    .filter(|v| !v.is_empty())
            };
            let credentials = if let Some(auth) = field("auth") {
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(auth.trim())
                    .map_err(|e| {
                        OciError::Credentials(format!("{registry}: `auth` is not base64: {e}"))
                    })?;
                let text = String::from_utf8(bytes).map_err(|_| {
                    OciError::Credentials(format!("{registry}: `auth` is not UTF-8"))
                })?;
                let Some((username, password)) = text.split_once(':') else {
                    return Err(OciError::Credentials(format!(
                        "{registry}: `auth` is not base64 of user:password"
                    )));
                };
                Credentials::Basic {
                    username: username.to_string(),
                    password: password.to_string(),
                }
            } else if let (Some(username), Some(password)) = (field("username"), field("password"))
            {
                Credentials::Basic {
                    username: username.to_string(),
                    password: password.to_string(),
                }
            } else if let Some(token) = field("identitytoken").or_else(|| field("registrytoken")) {
                Credentials::Bearer(token.to_string())
            } else {
                continue;
            };
            self.insert(registry, credentials);
        }
        Ok(())
    }
}

/// The host (and port) of a registry as docker config keys name it: no scheme, no path, and
/// Docker Hub's several names as one.
fn registry_host(registry: &str) -> String {
    let r = registry.trim();
    let r = r
        .strip_prefix("https://")
        .or_else(|| r.strip_prefix("http://"))
        .unwrap_or(r);
    let host = r.split('/').next().unwrap_or(r).to_ascii_lowercase();
    match host.as_str() {
        "index.docker.io" | "registry-1.docker.io" | "docker.io" => "docker.io".to_string(),
        _ => host,
    }
}

/// The docker config file: `$DOCKER_CONFIG/config.json`, else `$HOME/.docker/config.json`.
pub fn docker_config_path(env: impl Fn(&str) -> Option<String>) -> Option<PathBuf> {
    if let Some(d) = env("DOCKER_CONFIG").filter(|d| !d.is_empty()) {
        return Some(Path::new(&d).join("config.json"));
    }
    env("HOME")
        .filter(|h| !h.is_empty())
        .map(|h| Path::new(&h).join(".docker").join("config.json"))
}

/// Credentials for `registry`: the `--creds` value if given, else the docker config, else none.
pub fn resolve_credentials(
    creds: Option<&str>,
    registry: &str,
    docker_config: Option<&Path>,
) -> Result<Credentials> {
    if let Some(c) = creds.filter(|c| !c.is_empty()) {
        return Ok(match c.split_once(':') {
            Some((u, p)) => Credentials::Basic {
                username: u.to_string(),
                password: p.to_string(),
            },
            None => Credentials::Bearer(c.to_string()),
        });
    }
    let Some(path) = docker_config else {
        return Ok(Credentials::Anonymous);
    };
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Credentials::Anonymous),
        Err(e) => return Err(OciError::io(path, e)),
    };
    match docker_credential::get_credential_from_reader(file, registry) {
        Ok(DockerCredential::UsernamePassword(username, password)) => {
            Ok(Credentials::Basic { username, password })
        }
        Ok(DockerCredential::IdentityToken(t)) => Ok(Credentials::Bearer(t)),
        Err(
            CredentialRetrievalError::NoCredentialConfigured
            | CredentialRetrievalError::ConfigNotFound,
        ) => Ok(Credentials::Anonymous),
        Err(e) => Err(OciError::Credentials(format!(
            "{} for {registry}: {e}",
            path.display()
        ))),
    }
}

fn read_config(path: &Path) -> Result<serde_json::Map<String, serde_json::Value>> {
    match std::fs::read_to_string(path) {
        Ok(text) => match serde_json::from_str::<serde_json::Value>(&text) {
            Ok(serde_json::Value::Object(m)) => Ok(m),
            Ok(_) => Err(OciError::Credentials(format!(
                "{} is not a JSON object",
                path.display()
            ))),
            Err(e) => Err(OciError::Credentials(format!("{}: {e}", path.display()))),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(serde_json::Map::new()),
        Err(e) => Err(OciError::io(path, e)),
    }
}

fn write_config(path: &Path, config: &serde_json::Map<String, serde_json::Value>) -> Result<()> {
    use std::io::Write;
    use std::os::unix::fs::PermissionsExt;
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| OciError::io(dir, e))?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(|e| OciError::io(dir, e))?;
    let text = serde_json::to_string_pretty(config).expect("JSON values serialize");
    tmp.write_all(text.as_bytes())
        .and_then(|_| tmp.write_all(b"\n"))
        .and_then(|_| {
            tmp.as_file()
                .set_permissions(std::fs::Permissions::from_mode(0o600))
        })
        .map_err(|e| OciError::io(path, e))?;
    tmp.persist(path).map_err(|e| OciError::io(path, e.error))?;
    Ok(())
}

/// Stores basic-auth credentials for `registry` in the docker config at `path`, keeping every
/// other key of the file.
pub fn login(path: &Path, registry: &str, username: &str, password: &str) -> Result<()> {
    if registry.is_empty() || username.is_empty() {
        return Err(OciError::InvalidInput(
            "registry login needs a registry and a username".to_string(),
        ));
    }
    let mut config = read_config(path)?;
    let auths = config
        .entry("auths")
        .or_insert_with(|| serde_json::Value::Object(Default::default()));
    let Some(auths) = auths.as_object_mut() else {
        return Err(OciError::Credentials(format!(
            "{}: \"auths\" is not an object",
            path.display()
        )));
    };
    let token = base64::engine::general_purpose::STANDARD.encode(format!("{username}:{password}"));
    auths.insert(registry.to_string(), serde_json::json!({ "auth": token }));
    write_config(path, &config)
}

/// Removes the credentials of `registry` from the docker config at `path`. Returns whether an
/// entry was removed.
pub fn logout(path: &Path, registry: &str) -> Result<bool> {
    let mut config = read_config(path)?;
    let removed = config
        .get_mut("auths")
        .and_then(|a| a.as_object_mut())
        .and_then(|a| a.remove(registry))
        .is_some();
    if removed {
        write_config(path, &config)?;
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_memory_credentials_read_docker_auths_first_one_wins() {
        let auths = serde_json::json!({
            "https://index.docker.io/v1/": {"auth": "dTpw"},
            "127.0.0.1:5000": {"username": "ci", "password": "s3cret"},
            "ghcr.io": {"identitytoken": "tok"},
            "empty.example": {},
        });
        let mut c = RegistryCredentials::default();
        c.add_docker_auths(auths.as_object().unwrap()).unwrap();
        let other = serde_json::json!({"127.0.0.1:5000": {"auth": "eDp5"}});
        c.add_docker_auths(other.as_object().unwrap()).unwrap();
        let basic = |u: &str, p: &str| Credentials::Basic {
            username: u.into(),
            password: p.into(),
        };
        assert_eq!(c.get("docker.io"), Some(&basic("u", "p")));
        assert_eq!(c.get("127.0.0.1:5000"), Some(&basic("ci", "s3cret")));
        assert_eq!(c.get("ghcr.io"), Some(&Credentials::Bearer("tok".into())));
        assert_eq!(c.get("empty.example"), None);
        let bad = serde_json::json!({"r": {"auth": "%%%"}});
        let err = c.add_docker_auths(bad.as_object().unwrap()).unwrap_err();
        assert!(err.to_string().contains("r: `auth` is not base64"), "{err}");
    }

    #[test]
    fn creds_flag_is_basic_with_a_colon_else_bearer() {
        assert_eq!(
            resolve_credentials(Some("u:p:q"), "r", None).unwrap(),
            Credentials::Basic {
                username: "u".into(),
                password: "p:q".into()
            }
        );
        assert_eq!(
            resolve_credentials(Some("tok"), "r", None).unwrap(),
            Credentials::Bearer("tok".into())
        );
        assert_eq!(
            resolve_credentials(None, "r", None).unwrap(),
            Credentials::Anonymous
        );
    }

    #[test]
    fn login_then_resolve_then_logout_keeps_other_keys() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("docker/config.json");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(
            &path,
            r#"{"HttpHeaders":{"X":"y"},"auths":{"other":{"auth":"eDp5"}}}"#,
        )
        .unwrap();
        login(&path, "127.0.0.1:5000", "alice", "s3cret").unwrap();
        let creds = resolve_credentials(None, "127.0.0.1:5000", Some(&path)).unwrap();
        assert_eq!(
            creds,
            Credentials::Basic {
                username: "alice".into(),
                password: "s3cret".into()
            }
        );
        assert!(format!("{creds:?}").contains("***"));
        assert!(logout(&path, "127.0.0.1:5000").unwrap());
        assert!(!logout(&path, "127.0.0.1:5000").unwrap());
        let left: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(left["auths"]["other"]["auth"], "eDp5");
        assert_eq!(
            resolve_credentials(None, "127.0.0.1:5000", Some(&path)).unwrap(),
            Credentials::Anonymous
        );
    }
}
