//! [`KubeCluster`]: the [`Cluster`] trait over the `kube` crate, driven by a private
//! current-thread tokio runtime, and kubeconfig loading like kubectl's: `--kubeconfig`, else the
//! `KUBECONFIG` list (merged, the first file to set a value wins), else `~/.kube/config`;
//! `--kube-context`; the namespace defaults to the context's, else `default`; the other
//! `--kube-*` flags override the selected cluster and user entries before the client is made.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;

use futures::TryStreamExt;
use kube::api::{
    Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PropagationPolicy,
    WatchEvent, WatchParams,
};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::core::{ApiResource, GroupVersionKind};
use kube::discovery::Scope;
use kube::{Client, Config};

use super::{ApplyOptions, Cluster, ClusterError, FIELD_MANAGER, ObjRef, Object, ResourceInfo};

/// The kubectl-style connection flags (`genericclioptions`).
#[derive(Clone, Debug, Default)]
pub struct KubeOptions {
    pub kubeconfig: Option<PathBuf>,
    pub context: Option<String>,
    pub as_user: Option<String>,
    pub as_groups: Vec<String>,
    pub as_uid: Option<String>,
    pub token: Option<String>,
    pub server: Option<String>,
    pub tls_server_name: Option<String>,
    pub client_certificate: Option<String>,
    pub client_key: Option<String>,
    pub certificate_authority: Option<String>,
    pub insecure_skip_tls_verify: bool,
}

/// A connection to one API server.
pub struct KubeCluster {
    client: Client,
    runtime: tokio::runtime::Runtime,
    /// The context's namespace, else `default`.
    default_namespace: String,
    resources: Mutex<HashMap<(String, String), (ApiResource, bool)>>,
}

fn config_err(e: impl std::fmt::Display) -> ClusterError {
    ClusterError::Config(e.to_string())
}

fn kube_err(e: kube::Error) -> ClusterError {
    match e {
        kube::Error::Api(s) => ClusterError::Api {
            code: s.code,
            reason: s.reason.clone(),
            message: s.message.clone(),
        },
        other => {
            // The causes say what went wrong ("Connection refused", a TLS error, ...).
            let mut msg = other.to_string();
            let mut source = std::error::Error::source(&other);
            while let Some(s) = source {
                let text = s.to_string();
                if !msg.contains(&text) {
                    msg.push_str(": ");
                    msg.push_str(&text);
                }
                source = s.source();
            }
            ClusterError::Transport(msg)
        }
    }
}

/// Reads the kubeconfig the options name and applies the override flags to the entries of the
/// selected context. Returns it with the selected context's name.
pub fn load_kubeconfig(opts: &KubeOptions) -> Result<(Kubeconfig, String), ClusterError> {
    let mut kc = match &opts.kubeconfig {
        Some(p) => Kubeconfig::read_from(p).map_err(config_err)?,
        None => match Kubeconfig::from_env().map_err(config_err)? {
            Some(kc) => kc,
            None => Kubeconfig::read().map_err(config_err)?,
        },
    };
    let context = opts
        .context
        .clone()
        .or_else(|| kc.current_context.clone())
        .ok_or_else(|| ClusterError::Config("no current context and no --kube-context".into()))?;
    let ctx = kc
        .contexts
        .iter()
        .find(|c| c.name == context)
        .and_then(|c| c.context.clone())
        .ok_or_else(|| ClusterError::Config(format!("context {context:?} not found")))?;
    if let Some(cluster) = kc
        .clusters
        .iter_mut()
        .find(|c| c.name == ctx.cluster)
        .and_then(|c| c.cluster.as_mut())
    {
        if let Some(s) = &opts.server {
            cluster.server = Some(s.clone());
        }
        if let Some(s) = &opts.tls_server_name {
            cluster.tls_server_name = Some(s.clone());
        }
        if let Some(s) = &opts.certificate_authority {
            cluster.certificate_authority = Some(s.clone());
            cluster.certificate_authority_data = None;
        }
        if opts.insecure_skip_tls_verify {
            cluster.insecure_skip_tls_verify = Some(true);
        }
    }
    let user = ctx.user.clone().unwrap_or_default();
    if let Some(auth) = kc
        .auth_infos
        .iter_mut()
        .find(|a| a.name == user)
        .and_then(|a| a.auth_info.as_mut())
    {
        if let Some(u) = &opts.as_user {
            auth.impersonate = Some(u.clone());
        }
        if !opts.as_groups.is_empty() {
            auth.impersonate_groups = Some(opts.as_groups.clone());
        }
        if let Some(u) = &opts.as_uid {
            auth.impersonate_uid = Some(u.clone());
        }
        if let Some(t) = &opts.token {
            auth.token = Some(t.clone().into());
            auth.token_file = None;
        }
        if let Some(c) = &opts.client_certificate {
            auth.client_certificate = Some(c.clone());
            auth.client_certificate_data = None;
        }
        if let Some(k) = &opts.client_key {
            auth.client_key = Some(k.clone());
            auth.client_key_data = None;
        }
    }
    Ok((kc, context))
}

/// The namespace of the kubeconfig context the options select, if it sets one: the namespace
/// Timoni defaults `-n` to, read without connecting. `None` when there is no kubeconfig, no
/// such context, or the context has no namespace.
pub fn context_namespace(opts: &KubeOptions) -> Option<String> {
    let (kc, context) = load_kubeconfig(opts).ok()?;
    context_namespace_in(&kc, &context)
}

fn context_namespace_in(kc: &Kubeconfig, context: &str) -> Option<String> {
    kc.contexts
        .iter()
        .find(|c| c.name == context)
        .and_then(|c| c.context.as_ref())
        .and_then(|c| c.namespace.clone())
        .filter(|n| !n.is_empty())
}

impl KubeCluster {
    /// Connects (lazily: no request is made yet) with the options' kubeconfig and context.
    pub fn connect(opts: &KubeOptions) -> Result<KubeCluster, ClusterError> {
        let (kc, context) = load_kubeconfig(opts)?;
        let default_namespace =
            context_namespace_in(&kc, &context).unwrap_or_else(|| "default".to_string());
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| ClusterError::Transport(e.to_string()))?;
        let options = KubeConfigOptions {
            context: Some(context),
            ..Default::default()
        };
        let client = runtime.block_on(async {
            let config = Config::from_custom_kubeconfig(kc, &options)
                .await
                .map_err(config_err)?;
            Client::try_from(config).map_err(config_err)
        })?;
        Ok(KubeCluster {
            client,
            runtime,
            default_namespace,
            resources: Mutex::new(HashMap::new()),
        })
    }

    /// Connects (lazily) with a ready client configuration, e.g. the in-cluster one of the
    /// controller, possibly with impersonation ([`impersonate_service_account`]).
    pub fn from_config(config: Config) -> Result<KubeCluster, ClusterError> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| ClusterError::Transport(e.to_string()))?;
        let default_namespace = config.default_namespace.clone();
        // The client's tower stack must be built inside a runtime.
        let client = runtime.block_on(async { Client::try_from(config).map_err(config_err) })?;
        Ok(KubeCluster {
            client,
            runtime,
            default_namespace,
            resources: Mutex::new(HashMap::new()),
        })
    }

    /// The namespace of the kubeconfig context, else `default`.
    pub fn default_namespace(&self) -> &str {
        &self.default_namespace
    }

    fn api_resource(
        &self,
        api_version: &str,
        kind: &str,
    ) -> Result<(ApiResource, bool), ClusterError> {
        let key = (api_version.to_string(), kind.to_string());
        if let Some(hit) = self
            .resources
            .lock()
            .ok()
            .and_then(|m| m.get(&key).cloned())
        {
            return Ok(hit);
        }
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
        let gvk = GroupVersionKind::gvk(group, version, kind);
        let unknown = || ClusterError::UnknownKind {
            api_version: api_version.to_string(),
            kind: kind.to_string(),
        };
        let found = self
            .runtime
            .block_on(kube::discovery::pinned_kind(&self.client, &gvk));
        let (ar, caps) = match found {
            Ok(x) => x,
            Err(kube::Error::Api(s)) if s.code == 404 => return Err(unknown()),
            Err(kube::Error::Discovery(_)) => return Err(unknown()),
            Err(e) => return Err(kube_err(e)),
        };
        let hit = (ar, caps.scope == Scope::Namespaced);
        if let Ok(mut m) = self.resources.lock() {
            m.insert(key, hit.clone());
        }
        Ok(hit)
    }

    fn api(
        &self,
        api_version: &str,
        kind: &str,
        namespace: &str,
    ) -> Result<(Api<DynamicObject>, ApiResource), ClusterError> {
        let (ar, namespaced) = self.api_resource(api_version, kind)?;
        let api = if namespaced && !namespace.is_empty() {
            Api::namespaced_with(self.client.clone(), namespace, &ar)
        } else {
            Api::all_with(self.client.clone(), &ar)
        };
        Ok((api, ar))
    }
}

fn to_object(o: DynamicObject, ar: &ApiResource) -> Result<Object, ClusterError> {
    let mut v = serde_json::to_value(o).map_err(|e| ClusterError::Transport(e.to_string()))?;
    if let Some(m) = v.as_object_mut() {
        m.entry("apiVersion")
            .or_insert_with(|| ar.api_version.clone().into());
        m.entry("kind").or_insert_with(|| ar.kind.clone().into());
    }
    Ok(v)
}

impl Cluster for KubeCluster {
    fn server_version(&self) -> Result<String, ClusterError> {
        let info = self
            .runtime
            .block_on(self.client.apiserver_version())
            .map_err(kube_err)?;
        let v = info.git_version.trim_start_matches('v');
        let core = v.split(['-', '+']).next().unwrap_or(v);
        Ok(core.to_string())
    }

    fn resource(&self, api_version: &str, kind: &str) -> Result<ResourceInfo, ClusterError> {
        let (ar, namespaced) = self.api_resource(api_version, kind)?;
        Ok(ResourceInfo {
            plural: ar.plural,
            namespaced,
        })
    }

    fn apply(&self, obj: &Object, opts: ApplyOptions) -> Result<Object, ClusterError> {
        let r = ObjRef::of(obj);
        let (api, ar) = self.api(&r.api_version, &r.kind, &r.namespace)?;
        let mut pp = PatchParams::apply(FIELD_MANAGER).force();
        pp.dry_run = opts.dry_run;
        let out = self
            .runtime
            .block_on(api.patch(&r.name, &pp, &Patch::Apply(obj)))
            .map_err(kube_err)?;
        to_object(out, &ar)
    }

    fn get(&self, r: &ObjRef) -> Result<Option<Object>, ClusterError> {
        let (api, ar) = self.api(&r.api_version, &r.kind, &r.namespace)?;
        match self
            .runtime
            .block_on(api.get_opt(&r.name))
            .map_err(kube_err)?
        {
            Some(o) => Ok(Some(to_object(o, &ar)?)),
            None => Ok(None),
        }
    }

    fn delete(&self, r: &ObjRef, dry_run: bool) -> Result<bool, ClusterError> {
        let (api, _) = self.api(&r.api_version, &r.kind, &r.namespace)?;
        let dp = DeleteParams {
            dry_run,
            propagation_policy: Some(PropagationPolicy::Background),
            ..Default::default()
        };
        match self.runtime.block_on(api.delete(&r.name, &dp)) {
            Ok(_) => Ok(true),
            Err(kube::Error::Api(s)) if s.code == 404 => Ok(false),
            Err(e) => Err(kube_err(e)),
        }
    }

    fn merge_patch(&self, r: &ObjRef, patch: &Object) -> Result<Object, ClusterError> {
        let (api, ar) = self.api(&r.api_version, &r.kind, &r.namespace)?;
        let pp = PatchParams {
            field_manager: Some(FIELD_MANAGER.into()),
            ..Default::default()
        };
        let out = self
            .runtime
            .block_on(api.patch(&r.name, &pp, &Patch::Merge(patch)))
            .map_err(kube_err)?;
        to_object(out, &ar)
    }

    fn list(
        &self,
        api_version: &str,
        kind: &str,
        namespace: &str,
        selector: &str,
    ) -> Result<Vec<Object>, ClusterError> {
        let (api, ar) = self.api(api_version, kind, namespace)?;
        let lp = ListParams::default().labels(selector);
        let list = self.runtime.block_on(api.list(&lp)).map_err(kube_err)?;
        list.items.into_iter().map(|o| to_object(o, &ar)).collect()
    }

    /// A list of the one object (by name) gives its state and the resource version to watch
    /// from; a watch from there reports each change. A watch the server ends (its own timeout,
    /// or `410 Gone` when the version is too old) starts again with a fresh list.
    fn watch(
        &self,
        r: &ObjRef,
        timeout: std::time::Duration,
        _poll: std::time::Duration,
        done: &mut dyn FnMut(Option<&Object>) -> bool,
    ) -> Result<bool, ClusterError> {
        let (api, ar) = self.api(&r.api_version, &r.kind, &r.namespace)?;
        let by_name = format!("metadata.name={}", r.name);
        let deadline = tokio::time::Instant::now() + timeout;
        self.runtime.block_on(async {
            loop {
                let list = api
                    .list(&ListParams::default().fields(&by_name))
                    .await
                    .map_err(kube_err)?;
                let version = list.metadata.resource_version.unwrap_or_default();
                let current = match list.items.into_iter().next() {
                    Some(o) => Some(to_object(o, &ar)?),
                    None => None,
                };
                if done(current.as_ref()) {
                    return Ok(true);
                }
                let left = deadline.saturating_duration_since(tokio::time::Instant::now());
                if left.is_zero() {
                    return Ok(false);
                }
                // The server ends a watch after at most `timeoutSeconds`; it is asked for the
                // time left, within the API server's usual bound.
                let wp = WatchParams::default()
                    .fields(&by_name)
                    .timeout(left.as_secs().clamp(1, 290) as u32);
                let changes = async {
                    let stream = api.watch(&wp, &version).await.map_err(kube_err)?;
                    futures::pin_mut!(stream);
                    while let Some(event) = stream.try_next().await.map_err(kube_err)? {
                        let state = match event {
                            WatchEvent::Added(o) | WatchEvent::Modified(o) => {
                                Some(to_object(o, &ar)?)
                            }
                            WatchEvent::Deleted(_) => None,
                            WatchEvent::Bookmark(_) => continue,
                            // `410 Gone` and the like: list again.
                            WatchEvent::Error(_) => return Ok(false),
                        };
                        if done(state.as_ref()) {
                            return Ok(true);
                        }
                    }
                    Ok::<bool, ClusterError>(false)
                };
                match tokio::time::timeout_at(deadline, changes).await {
                    Ok(Ok(true)) => return Ok(true),
                    Ok(Ok(false)) => {}
                    Ok(Err(e)) => return Err(e),
                    Err(_) => return Ok(false),
                }
            }
        })
    }
}

/// Connects to each runtime cluster through its kube context (the current context for the
/// implicit cluster or an empty `kubeContext`), with the other flags shared.
pub struct KubeConnector {
    pub base: KubeOptions,
}

impl super::bundle::Connector for KubeConnector {
    fn connect(&self, cluster: &crate::runtime::Cluster) -> Result<Box<dyn Cluster>, ClusterError> {
        let mut opts = self.base.clone();
        if !cluster.kube_context.is_empty() {
            opts.context = Some(cluster.kube_context.clone());
        }
        Ok(Box::new(KubeCluster::connect(&opts)?))
    }
}

/// Makes every request of `config` impersonate the service account `namespace/name`, with the
/// groups the API server gives service accounts, so that RBAC decides as for the account itself.
pub fn impersonate_service_account(config: &mut Config, namespace: &str, name: &str) {
    config.auth_info.impersonate = Some(format!("system:serviceaccount:{namespace}:{name}"));
    config.auth_info.impersonate_groups = Some(vec![
        "system:serviceaccounts".into(),
        format!("system:serviceaccounts:{namespace}"),
        "system:authenticated".into(),
    ]);
}

/// Connects every runtime cluster to the one API server of `config`: how the controller applies
/// a Project's bundles to its own cluster, whatever kube contexts their runtimes name.
#[derive(Clone)]
pub struct ConfigConnector {
    pub config: Config,
}

impl super::bundle::Connector for ConfigConnector {
    fn connect(
        &self,
        _cluster: &crate::runtime::Cluster,
    ) -> Result<Box<dyn Cluster>, ClusterError> {
        Ok(Box::new(KubeCluster::from_config(self.config.clone())?))
    }
}
