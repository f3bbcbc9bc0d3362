//! `timoni bundle apply|delete|status` across the clusters of a runtime: for each selected
//! cluster in runtime order, the bundle is evaluated with that cluster's runtime values and
//! reached through its kube context ([`Connector`]); instances are applied one after the other in
//! declaration order, and the run stops at the first failure, before the next cluster.

use std::collections::BTreeMap;
use std::time::Duration;

use super::apply::Change;
use super::apply::{
    ApplyError, ApplyReport, ApplyRequest, Event, apply_instance_sharing, read_stored,
};
use super::inventory::ModuleReference;
use super::ops::{DeleteRequest, ObjectStatus, delete_instance, instance_status, list_instances};
use super::{Cluster, ClusterError};
use crate::bundle::{self, BundleRequest, LoadOptions};
use crate::instance::{DEVEL_VERSION, ModuleSource, open_module};
use crate::oci::ModuleFetch;
use crate::runtime;

/// Opens a connection to a runtime cluster (its kube context; empty for the current one).
pub trait Connector {
    fn connect(&self, cluster: &runtime::Cluster) -> Result<Box<dyn Cluster>, ClusterError>;
}

/// How to apply a bundle.
#[derive(Clone, Debug)]
pub struct BundleApplyRequest {
    pub bundle: BundleRequest,
    pub package: String,
    pub dry_run: bool,
    pub diff: bool,
    /// With `dry_run`: apply what drifted, only that (see [`ApplyRequest::correct_drift`]).
    pub correct_drift: bool,
    pub force: bool,
    pub overwrite_ownership: bool,
    pub wait: bool,
    pub timeout: Duration,
    pub poll: Duration,
}

/// Progress of a bundle operation.
#[derive(Debug)]
pub enum BundleEvent<'a> {
    /// Work on a cluster starts (not sent for the implicit cluster).
    Cluster(&'a runtime::Cluster),
    /// The bundle's name and its number of instances, once it is evaluated for a cluster.
    Bundle {
        name: &'a str,
        instances: usize,
    },
    /// Work on an instance starts.
    Instance {
        name: &'a str,
        namespace: &'a str,
    },
    /// An `oci://` module is being pulled (once per URL, version and digest in a run).
    Pulling {
        url: &'a str,
    },
    /// The instance's module is fetched and about to be built: its name (`cue.mod/module.cue`)
    /// and version (`0.0.0-devel` for a local module), which Timoni logs per instance.
    Module {
        name: &'a str,
        version: &'a str,
    },
    Apply(&'a Event),
    Delete(&'a Change),
    /// An instance's apply ended (also after a failure to fetch or build its module): what
    /// `bundle apply` applied, with the module reference recorded and how long it took.
    Applied {
        name: &'a str,
        namespace: &'a str,
        module: &'a ModuleReference,
        result: Result<&'a ApplyReport, &'a ApplyError>,
        elapsed: Duration,
    },
}

/// A bundle that does not load or evaluate is an error of its own CUE (the same files give
/// the same error), unlike a module that cannot be fetched or a runtime value that cannot be
/// read: said with [`crate::Error::Cue`] (the message is unchanged).
fn content_error(e: crate::Error) -> crate::Error {
    match e {
        crate::Error::Bundle(m) => crate::Error::Cue(crate::error::CueError::msg(m)),
        e => e,
    }
}

fn on(cluster: &runtime::Cluster, e: ApplyError) -> ApplyError {
    if cluster.is_default() {
        return e;
    }
    match e {
        ApplyError::Cluster { what, err } => ApplyError::Cluster {
            what: format!("cluster {}: {what}", cluster.name),
            err,
        },
        ApplyError::Build(b) => {
            ApplyError::Build(b.in_context(&format!("cluster {}", cluster.name)))
        }
        ApplyError::Ownership(m) => ApplyError::Ownership(format!("cluster {}: {m}", cluster.name)),
        ApplyError::NotReady(m) => ApplyError::NotReady(format!("cluster {}: {m}", cluster.name)),
        ApplyError::Inventory(m) => ApplyError::Inventory(format!("cluster {}: {m}", cluster.name)),
    }
}

/// The name of the bundle of `req`'s files, evaluated with the first selected cluster's
/// runtime values.
pub fn bundle_name(connector: &dyn Connector, req: &BundleRequest) -> Result<String, ApplyError> {
    let clusters =
        super::runtime_values::runtime_values(connector, req).map_err(ApplyError::Build)?;
    let values = clusters
        .into_iter()
        .next()
        .map(|(_, v)| v)
        .unwrap_or_default();
    let opts = LoadOptions {
        runtime_values: values,
        workdir: req.workdir.clone(),
    };
    let b = bundle::load_bundle(&req.files, &opts).map_err(ApplyError::Build)?;
    Ok(b.name)
}

/// The selected clusters of a request (no runtime values needed).
fn selected(req: &BundleRequest) -> Result<Vec<runtime::Cluster>, ApplyError> {
    let rt = bundle::request_runtime(req).map_err(ApplyError::Build)?;
    let clusters = rt.select(&req.cluster, &req.group);
    if clusters.is_empty() {
        return Err(ApplyError::Build(crate::Error::Bundle(format!(
            "no cluster found (--runtime-cluster={:?} --runtime-group={:?})",
            req.cluster, req.group
        ))));
    }
    Ok(clusters)
}

fn connect(
    connector: &dyn Connector,
    cluster: &runtime::Cluster,
) -> Result<Box<dyn Cluster>, ApplyError> {
    connector
        .connect(cluster)
        .map_err(|err| ApplyError::Cluster {
            what: format!("connecting to cluster {}", cluster.name),
            err,
        })
}

/// Applies the bundle on every selected cluster, in runtime order. Ownership is checked for
/// every instance of a cluster before any is applied. Returns the reports per cluster.
pub fn apply_bundle(
    connector: &dyn Connector,
    fetcher: Option<&dyn ModuleFetch>,
    req: &BundleApplyRequest,
    events: &mut dyn FnMut(BundleEvent),
) -> Result<Vec<(runtime::Cluster, Vec<ApplyReport>)>, ApplyError> {
    let clusters =
        super::runtime_values::runtime_values(connector, &req.bundle).map_err(ApplyError::Build)?;
    let mut out = Vec::new();
    // Every instance parses its module through one cache: a module is parsed once per run.
    let cache = std::sync::Arc::new(cue_eval::ParseCache::new());
    // And an instance of the module applied before starts from its compiled imports.
    let mut share = cue_eval::ImportShare::new();
    // `oci://` modules, fetched once per (URL, version, digest) for all clusters.
    let mut sources: BTreeMap<(String, String, Option<String>), ModuleSource> = BTreeMap::new();
    for (rc, values) in clusters {
        let opts = LoadOptions {
            runtime_values: values,
            workdir: req.bundle.workdir.clone(),
        };
        let b = bundle::load_bundle(&req.bundle.files, &opts)
            .map_err(|e| on(&rc, ApplyError::Build(content_error(e))))?;
        events(BundleEvent::Bundle {
            name: &b.name,
            instances: b.instances.len(),
        });
        if !rc.is_default() {
            events(BundleEvent::Cluster(&rc));
        }
        let cluster = connect(connector, &rc)?;
        if !req.overwrite_ownership {
            for bi in &b.instances {
                if let Some(s) = read_stored(cluster.as_ref(), &bi.name, &bi.namespace)
                    .map_err(|e| on(&rc, e))?
                    && s.instance.bundle() != Some(b.name.as_str())
                {
                    let msg = match s.instance.bundle() {
                        Some(other) => format!(
                            "instance ownership conflict encountered. Conflict: instance {:?} exists and is managed by another bundle {other:?}",
                            bi.name
                        ),
                        None => format!(
                            "instance ownership conflict encountered. Conflict: instance {:?} exists and is managed by no bundle",
                            bi.name
                        ),
                    };
                    return Err(on(&rc, ApplyError::Ownership(msg)));
                }
            }
        }
        let mut reports = Vec::new();
        for bi in &b.instances {
            events(BundleEvent::Instance {
                name: &bi.name,
                namespace: &bi.namespace,
            });
            let started = std::time::Instant::now();
            let mut module = ModuleReference {
                repository: bi.url.clone(),
                version: bi.version.clone(),
                digest: bi.digest.clone().unwrap_or_default(),
                ..Default::default()
            };
            let result = apply_one(
                cluster.as_ref(),
                fetcher,
                req,
                &b.name,
                bi,
                &mut sources,
                &cache,
                &mut share,
                &mut module,
                events,
            )
            .map_err(|e| on(&rc, e));
            events(BundleEvent::Applied {
                name: &bi.name,
                namespace: &bi.namespace,
                module: &module,
                result: result.as_ref(),
                elapsed: started.elapsed(),
            });
            reports.push(result?);
        }
        out.push((rc, reports));
    }
    Ok(out)
}

/// Fetches (once per URL, version and digest, into `sources`), builds and applies one bundle
/// instance; `module` is set to the reference recorded in its inventory.
#[allow(clippy::too_many_arguments)]
fn apply_one(
    cluster: &dyn Cluster,
    fetcher: Option<&dyn ModuleFetch>,
    req: &BundleApplyRequest,
    bundle_name: &str,
    bi: &bundle::BundleInstance,
    sources: &mut BTreeMap<(String, String, Option<String>), ModuleSource>,
    cache: &std::sync::Arc<cue_eval::ParseCache>,
    share: &mut cue_eval::ImportShare,
    module_out: &mut ModuleReference,
    events: &mut dyn FnMut(BundleEvent),
) -> Result<ApplyReport, ApplyError> {
    let (bi, module) = match &bi.module_dir {
        Some(_) => (
            bi.clone(),
            ModuleReference {
                repository: bi.url.clone(),
                version: DEVEL_VERSION.into(),
                ..Default::default()
            },
        ),
        None => {
            let key = (bi.url.clone(), bi.version.clone(), bi.digest.clone());
            if !sources.contains_key(&key) {
                let Some(fetcher) = fetcher else {
                    return Err(ApplyError::Build(crate::Error::Unsupported(format!(
                        "instance {}: {}: OCI modules need a registry client",
                        bi.name, bi.url
                    ))));
                };
                events(BundleEvent::Pulling { url: &bi.url });
                let source = open_module(
                    &bi.url,
                    Some(&bi.version),
                    bi.digest.as_deref(),
                    Some(fetcher),
                )
                .map_err(|e| {
                    ApplyError::Build(e.in_context(&format!("instance {}: {}", bi.name, bi.url)))
                })?;
                sources.insert(key.clone(), source);
            }
            let source = &sources[&key];
            let mut local = bi.clone();
            local.module_dir = Some(source.dir.clone());
            let module = source
                .fetched
                .as_ref()
                .map(ModuleReference::from)
                .unwrap_or_default();
            (local, module)
        }
    };
    *module_out = module.clone();
    if let Some(dir) = &bi.module_dir {
        events(BundleEvent::Module {
            name: &crate::instance::module_name(dir),
            version: &module.version,
        });
    }
    let mut build = bundle::instance_options(&bi, &req.package).map_err(ApplyError::Build)?;
    build.module_version = module.version.clone();
    build.parse_cache = Some(cache.clone());
    let mut ar = ApplyRequest::new(build);
    ar.module = module;
    ar.bundle = Some(bundle_name.to_string());
    ar.dry_run = req.dry_run || req.diff;
    ar.diff = req.diff;
    ar.correct_drift = req.correct_drift && ar.dry_run;
    ar.force = req.force;
    ar.overwrite_ownership = true;
    ar.wait = req.wait;
    ar.timeout = req.timeout;
    ar.poll = req.poll;
    apply_instance_sharing(cluster, &ar, Some(share), &mut |e| {
        events(BundleEvent::Apply(e))
    })
}

/// Deletes the instances of bundle `name` (in every namespace) on every selected cluster, in
/// reverse order of creation.
#[allow(clippy::too_many_arguments)]
pub fn delete_bundle(
    connector: &dyn Connector,
    req: &BundleRequest,
    name: &str,
    dry_run: bool,
    wait: bool,
    timeout: Duration,
    poll: Duration,
    events: &mut dyn FnMut(BundleEvent),
) -> Result<(), ApplyError> {
    for rc in selected(req)? {
        if !rc.is_default() {
            events(BundleEvent::Cluster(&rc));
        }
        let cluster = connect(connector, &rc)?;
        let mut instances =
            list_instances(cluster.as_ref(), "", Some(name)).map_err(|e| on(&rc, e))?;
        instances.reverse();
        for rec in instances {
            events(BundleEvent::Instance {
                name: &rec.metadata.name,
                namespace: &rec.metadata.namespace,
            });
            let dr = DeleteRequest {
                name: rec.metadata.name.clone(),
                namespace: rec.metadata.namespace.clone(),
                dry_run,
                wait,
                timeout,
                poll,
            };
            delete_instance(cluster.as_ref(), &dr, &mut |c| {
                events(BundleEvent::Delete(c))
            })
            .map_err(|e| on(&rc, e))?;
        }
    }
    Ok(())
}

/// The status of every instance of bundle `name` on each selected cluster.
pub type BundleStatus = Vec<(
    runtime::Cluster,
    Vec<(super::inventory::InstanceRecord, Vec<ObjectStatus>)>,
)>;

/// `bundle status`: per selected cluster, each instance of the bundle with its objects' status.
pub fn bundle_status(
    connector: &dyn Connector,
    req: &BundleRequest,
    name: &str,
) -> Result<BundleStatus, ApplyError> {
    let mut out = Vec::new();
    for rc in selected(req)? {
        let cluster = connect(connector, &rc)?;
        let mut per = Vec::new();
        for rec in list_instances(cluster.as_ref(), "", Some(name)).map_err(|e| on(&rc, e))? {
            per.push(
                instance_status(
                    cluster.as_ref(),
                    &rec.metadata.name,
                    &rec.metadata.namespace,
                )
                .map_err(|e| on(&rc, e))?,
            );
        }
        out.push((rc, per));
    }
    Ok(out)
}
