//! The resolved settings of one run: the global flags and the environment turned into one value
//! that the commands read, so that each variable (`KUBECONFIG` and the kubeconfig itself,
//! `DOCKER_CONFIG`, `SOURCE_DATE_EPOCH`, `TIMONI_CACHE_DIR`, `TIMONI_POLL_INTERVAL`,
//! `TIMONI_K8S_SCHEMA_REPOSITORY`) is looked up in one place, and stdin is read at most once, here.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

use anyhow::{Context, Result};
use timoni_core::bundle::SourceFile;
use timoni_core::cluster::kube::{self, KubeCluster, KubeConnector, KubeOptions};
use timoni_core::oci::{
    self, ArtifactUrl, Cache, ConnectOptions, Fetcher, OciClientRegistry, docker_config_path,
};
use timoni_core::values::ValuesSource;

use crate::flags::GlobalFlags;

/// Everything a command needs besides its own arguments.
#[derive(Debug)]
pub struct Settings {
    /// `-n`, else the namespace of the kubeconfig context, else `default` (the same for
    /// `build` as for `apply`).
    pub namespace: String,
    /// `--timeout`.
    pub timeout: Duration,
    /// The kubeconfig and `--kube-*` flags.
    pub kube: KubeOptions,
    /// `--registry-insecure`.
    pub registry_insecure: bool,
    /// `--provider`: cloud registry logins with the machine's identity.
    pub workload_identity: Option<std::sync::Arc<timoni_core::oci::cloud::WorkloadIdentity>>,
    /// The OCI layer cache (`--cache-dir`, `TIMONI_CACHING`, `TIMONI_CACHE_DIR`, `$HOME`).
    cache_dir: Option<PathBuf>,
    /// The docker config holding registry credentials (`DOCKER_CONFIG`, `$HOME`).
    pub docker_config: Option<PathBuf>,
    /// `SOURCE_DATE_EPOCH`: the `created` time of the artifacts we build.
    pub source_date_epoch: Option<String>,
    /// How often readiness and deletion are polled: Timoni's 5s, or `TIMONI_POLL_INTERVAL`.
    pub poll: Duration,
    /// `TIMONI_K8S_SCHEMA_REPOSITORY`: where `mod vendor k8s -v` pulls Kubernetes schemas from
    /// when its `--repository` flag is not given (a mirror of Timoni's repository).
    pub k8s_schema_repository: Option<String>,
    /// `--log-pretty`: the time and level columns of the log lines.
    pub log_pretty: bool,
    /// `--log-color`, else whether stderr is a terminal (and `NO_COLOR` unset).
    pub log_color: bool,
    stdin: OnceLock<Result<String, String>>,
}

/// A variable of the process environment, if set.
pub fn env(key: &str) -> Option<String> {
    std::env::var(key).ok()
}

/// Reads stdin to its end: the one place that does, for the commands that run without
/// [`Settings`] (`fmt -` under `timoni cue fmt`) and for [`Settings::stdin`].
pub fn read_stdin() -> std::io::Result<String> {
    let mut text = String::new();
    std::io::stdin().read_to_string(&mut text)?;
    Ok(text)
}

impl Settings {
    /// Resolves the global flags against the environment and the kubeconfig.
    pub fn resolve(flags: &GlobalFlags) -> Settings {
        let k = &flags.kube;
        let kube = KubeOptions {
            kubeconfig: k.kubeconfig.as_ref().map(Into::into),
            context: k.kube_context.clone(),
            as_user: k.kube_as.clone(),
            as_groups: k.kube_as_group.clone(),
            as_uid: k.kube_as_uid.clone(),
            token: k.kube_token.clone(),
            server: k.kube_server.clone(),
            tls_server_name: k.kube_tls_server_name.clone(),
            client_certificate: k.kube_client_certificate.clone(),
            client_key: k.kube_client_key.clone(),
            certificate_authority: k.kube_certificate_authority.clone(),
            insecure_skip_tls_verify: k.kube_insecure_skip_tls_verify,
        };
        let namespace = k
            .namespace
            .clone()
            .filter(|n| !n.is_empty())
            .or_else(|| kube::context_namespace(&kube))
            .unwrap_or_else(|| "default".to_string());
        Settings {
            namespace,
            timeout: flags.timeout,
            kube,
            registry_insecure: flags.registry_insecure,
            workload_identity: crate::registry_provider::workload_identity(&flags.provider, env),
            cache_dir: flags.cache_dir.clone(),
            docker_config: docker_config_path(env),
            source_date_epoch: env("SOURCE_DATE_EPOCH"),
            poll: env("TIMONI_POLL_INTERVAL")
                .and_then(|v| crate::flags::parse_duration(&v).ok())
                .unwrap_or(Duration::from_secs(5)),
            k8s_schema_repository: env("TIMONI_K8S_SCHEMA_REPOSITORY").filter(|r| !r.is_empty()),
            log_pretty: flags.log_pretty,
            log_color: flags.log_color.unwrap_or_else(crate::output::color_default),
            stdin: OnceLock::new(),
        }
    }

    /// Connects to the cluster of the kubeconfig context (lazily: no request is made yet).
    pub fn connect(&self) -> Result<KubeCluster> {
        KubeCluster::connect(&self.kube).context("connecting to the cluster")
    }

    /// A connector for the clusters of a runtime (one kube context each).
    pub fn connector(&self) -> KubeConnector {
        KubeConnector {
            base: self.kube.clone(),
        }
    }

    /// How to reach registries with `--creds`.
    pub fn connect_options(&self, creds: Option<&str>) -> ConnectOptions {
        ConnectOptions {
            creds: creds.map(str::to_string),
            docker_config: self.docker_config.clone(),
            registry_credentials: Default::default(),
            insecure: self.registry_insecure,
            workload_identity: self.workload_identity.clone(),
        }
    }

    /// The OCI layer cache.
    pub fn cache(&self) -> Cache {
        Cache::from_settings(self.cache_dir.as_deref(), env)
    }

    /// A module fetcher for `oci://` modules (`network: false` keeps to the cache).
    pub fn fetcher(&self, creds: Option<&str>, network: bool) -> Fetcher {
        Fetcher {
            connect: self.connect_options(creds),
            cache: self.cache(),
            network,
        }
    }

    /// A client for the registry of `url`.
    pub fn registry(&self, url: &ArtifactUrl, creds: Option<&str>) -> Result<OciClientRegistry> {
        Ok(oci::connect(url, &self.connect_options(creds))?)
    }

    /// The text of stdin, read on the first call; `what` names the input in the error.
    pub fn stdin(&self, what: &str) -> Result<String> {
        self.stdin
            .get_or_init(|| read_stdin().map_err(|e| e.to_string()))
            .clone()
            .map_err(|e| anyhow::anyhow!("reading {what} from stdin: {e}"))
    }

    /// Values sources for `-f/--values` arguments; `-` is stdin.
    pub fn values_sources(&self, files: &[String]) -> Result<Vec<ValuesSource>> {
        files
            .iter()
            .map(|f| {
                Ok(if f == "-" {
                    ValuesSource::Stdin(self.stdin("values")?)
                } else {
                    ValuesSource::File(f.into())
                })
            })
            .collect()
    }

    /// Bundle and runtime files for `-f/--file` arguments; `-` is stdin.
    pub fn source_files(&self, files: &[String]) -> Result<Vec<SourceFile>> {
        files
            .iter()
            .map(|f| {
                if f == "-" {
                    Ok(SourceFile {
                        path: "-".into(),
                        text: self.stdin("the bundle")?,
                    })
                } else {
                    SourceFile::read(f.as_ref()).map_err(|e| anyhow::anyhow!("{e}"))
                }
            })
            .collect()
    }

    /// The whole environment, for `--runtime-from-env`.
    pub fn env_vars(&self) -> BTreeMap<String, String> {
        std::env::vars().collect()
    }
}
