//! The apply engine of `timoni apply` (Timoni's `internal/reconciler` and
//! `internal/runtime/resources.go`), over the [`Cluster`] trait:
//!
//! 1. Build the instance with the server's `kubeVersion`, label every object with the owner
//!    labels, strip the namespace of cluster-scoped kinds, and compute the new inventory.
//! 2. Read the stored inventory and check bundle ownership. Stale objects are the old inventory
//!    and any pending revision, minus the new inventory.
//! 3. `dry_run`: a server dry run per object, reported (with diffs on request) and nothing more;
//!    with `correct_drift`, the objects the dry run would create or change are applied, in the
//!    same order, and waited for (drift correction between two applies of the same build).
//! 4. Install: the intended inventory is saved before anything else is touched; upgrade: a
//!    changed inventory is saved as `pending` (with the entries of an earlier pending revision,
//!    so that nothing an interrupted run applied is forgotten).
//! 5. Each apply set, in order: CRDs, Namespaces and cluster RBAC first (waited for), then Roles,
//!    then the rest, each stage in the ssa kind order; `one-off` objects only when absent;
//!    `force` (flag or annotation) recreates objects whose immutable fields changed; then the
//!    readiness wait.
//! 6. Prune stale objects (never `prune: disabled` ones, never objects with other owner labels),
//!    then store the final inventory and clear `pending`.
//!
//! Every step is idempotent, so a run interrupted between any two API calls converges when it
//! is run again.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use cue_eval::encode::Data;
use serde_json::{Value, json};

use super::health::HealthChecks;
use super::inventory::{self, Entry, InstanceRecord, ModuleReference, Stored};
use super::status::{self, Status};
use super::{ApplyOptions, Cluster, ClusterError, ObjRef, Object, ResourceInfo, annotation, label};
use crate::instance::{self, BuildOptions, BuiltInstance};
use crate::render;

pub const LABEL_OWNER_NAME: &str = "instance.timoni.sh/name";
pub const LABEL_OWNER_NAMESPACE: &str = "instance.timoni.sh/namespace";
pub const ANNOTATION_FORCE: &str = "action.timoni.sh/force";
pub const ANNOTATION_ONE_OFF: &str = "action.timoni.sh/one-off";
pub const ANNOTATION_PRUNE: &str = "action.timoni.sh/prune";
pub const ANNOTATION_WAIT: &str = "action.timoni.sh/wait";
/// Annotations of kubectl and Helm that Timoni removes when it takes an object over.
pub const FOREIGN_ANNOTATIONS: &[&str] = &[
    "kubectl.kubernetes.io/last-applied-configuration",
    "meta.helm.sh/release-name",
    "meta.helm.sh/release-namespace",
];

/// What to apply and how.
#[derive(Clone, Debug)]
pub struct ApplyRequest {
    /// The instance build (name, namespace, local module dir, values, package). Its
    /// `kube_version` is replaced by the server's.
    pub build: BuildOptions,
    /// The module reference recorded in the inventory (repository, version, digest); for local
    /// modules the repository is the module path and the version `0.0.0-devel`.
    pub module: ModuleReference,
    /// The owning bundle, for `bundle apply`.
    pub bundle: Option<String>,
    pub dry_run: bool,
    /// With `dry_run`: compute diffs (Secret data masked).
    pub diff: bool,
    /// With `dry_run`: apply the objects the dry run would create or change (drift correction:
    /// objects deleted or edited by hand since the last apply), and only those, then (with
    /// `wait`) wait for those to be ready as an apply does. The inventory is neither read for
    /// pruning nor written.
    pub correct_drift: bool,
    pub force: bool,
    pub overwrite_ownership: bool,
    pub wait: bool,
    pub timeout: Duration,
    /// The readiness poll interval (Timoni: 5s).
    pub poll: Duration,
}

impl ApplyRequest {
    /// A request with Timoni's defaults: wait, a 5 minute timeout, a 5 second poll.
    pub fn new(build: BuildOptions) -> ApplyRequest {
        ApplyRequest {
            module: ModuleReference {
                repository: build.module.clone(),
                version: build.module_version.clone(),
                ..Default::default()
            },
            build,
            bundle: None,
            dry_run: false,
            diff: false,
            correct_drift: false,
            force: false,
            overwrite_ownership: false,
            wait: true,
            timeout: Duration::from_secs(300),
            poll: Duration::from_secs(5),
        }
    }
}

/// What happened to one object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    Created,
    Configured,
    Unchanged,
    Deleted,
    /// Left alone: `one-off` and present, `prune: disabled`, or owned by someone else.
    Skipped,
}

impl std::fmt::Display for Action {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Action::Created => "created",
            Action::Configured => "configured",
            Action::Unchanged => "unchanged",
            Action::Deleted => "deleted",
            Action::Skipped => "skipped",
        })
    }
}

/// One object's change, with the diff of a `--diff` dry run.
#[derive(Clone, Debug, PartialEq)]
pub struct Change {
    pub object: ObjRef,
    pub action: Action,
    pub diff: Option<String>,
}

/// Progress of an apply, for a frontend to show as it happens.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// The apply starts: whether it installs (no stored inventory) and the server version.
    Start { install: bool, kube_version: String },
    /// A change of an object.
    Change(Change),
    /// Waiting for this many objects of an apply set to become ready.
    Waiting { set: String, count: usize },
    /// After a readiness poll: the objects still pending, with their status.
    Progress { set: String, pending: Vec<String> },
    /// The objects of the set are ready.
    Ready { set: String },
    /// The instance's namespace did not exist and was created (would be, on a dry run).
    NamespaceCreated { namespace: String },
}

/// The outcome of an apply.
#[derive(Clone, Debug, PartialEq)]
pub struct ApplyReport {
    pub install: bool,
    pub kube_version: String,
    pub changes: Vec<Change>,
}

/// An error of the cluster operations.
#[derive(Debug, Clone, PartialEq)]
pub enum ApplyError {
    /// The module could not be built.
    Build(crate::Error),
    /// A cluster call failed; `what` says which.
    Cluster { what: String, err: ClusterError },
    /// The instance belongs to another bundle (or to none).
    Ownership(String),
    /// Objects did not become ready (or failed).
    NotReady(String),
    /// The stored inventory is unreadable, or absent where one is needed.
    Inventory(String),
}

impl std::fmt::Display for ApplyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ApplyError::Build(e) => write!(f, "{e}"),
            ApplyError::Cluster { what, err } => write!(f, "{what}: {err}"),
            ApplyError::Ownership(m) | ApplyError::NotReady(m) | ApplyError::Inventory(m) => {
                f.write_str(m)
            }
        }
    }
}

impl std::error::Error for ApplyError {}

pub(crate) fn cerr(what: impl Into<String>) -> impl FnOnce(ClusterError) -> ApplyError {
    let what = what.into();
    move |err| ApplyError::Cluster { what, err }
}

/// The inventory Secret's reference.
pub fn secret_ref(name: &str, namespace: &str) -> ObjRef {
    ObjRef {
        api_version: "v1".into(),
        kind: "Secret".into(),
        namespace: namespace.into(),
        name: inventory::secret_name(name),
    }
}

/// The stored inventory of an instance, if any.
pub fn read_stored(
    cluster: &dyn Cluster,
    name: &str,
    namespace: &str,
) -> Result<Option<Stored>, ApplyError> {
    let r = secret_ref(name, namespace);
    match cluster.get(&r).map_err(cerr(format!("reading {r}")))? {
        Some(s) => inventory::parse_secret(&s)
            .map(Some)
            .map_err(ApplyError::Inventory),
        None => Ok(None),
    }
}

fn write_inventory(
    cluster: &dyn Cluster,
    record: &InstanceRecord,
    pending: Option<&InstanceRecord>,
    deleting: Option<&str>,
) -> Result<(), ApplyError> {
    let secret = inventory::secret(record, pending, deleting);
    let what = format!("storing the inventory of {}", record.metadata.name);
    match cluster.apply(&secret, ApplyOptions::default()) {
        Ok(_) => Ok(()),
        // An inventory of an older Timoni has type `Opaque`; the type is immutable, so the
        // Secret is recreated.
        Err(e) if e.is_immutable() => {
            let r = ObjRef::of(&secret);
            cluster.delete(&r, false).map_err(cerr(what.clone()))?;
            cluster
                .apply(&secret, ApplyOptions::default())
                .map_err(cerr(what))?;
            Ok(())
        }
        Err(e) => Err(cerr(what)(e)),
    }
}

fn namespace_ref(namespace: &str) -> ObjRef {
    ObjRef {
        api_version: "v1".into(),
        kind: "Namespace".into(),
        namespace: String::new(),
        name: namespace.into(),
    }
}

fn namespace_exists(cluster: &dyn Cluster, namespace: &str) -> Result<bool, ApplyError> {
    let r = namespace_ref(namespace);
    Ok(cluster
        .get(&r)
        .map_err(cerr(format!("reading {r}")))?
        .is_some())
}

/// Creates the namespace with `app.kubernetes.io/created-by: timoni` when it is missing;
/// returns whether it did.
fn ensure_namespace(cluster: &dyn Cluster, namespace: &str) -> Result<bool, ApplyError> {
    if namespace_exists(cluster, namespace)? {
        return Ok(false);
    }
    let r = namespace_ref(namespace);
    let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {
        "name": namespace, "labels": {inventory::LABEL_CREATED_BY: "timoni"}}});
    cluster
        .apply(&ns, ApplyOptions::default())
        .map_err(cerr(format!("creating {r}")))?;
    Ok(true)
}

/// An object of the module, ready to apply.
struct Prepared {
    object: Object,
    r: ObjRef,
}

fn data_to_json(d: &Data) -> Object {
    serde_json::from_str(&cue_eval::encode::to_json_compact(d)).unwrap_or(Value::Null)
}

/// Discovery for an object, falling back to a CRD of the module for kinds the server does not
/// know yet.
fn resolve(cluster: &dyn Cluster, r: &ObjRef, all: &[Object]) -> Result<ResourceInfo, ApplyError> {
    match cluster.resource(&r.api_version, &r.kind) {
        Ok(info) => Ok(info),
        Err(err @ ClusterError::UnknownKind { .. }) => {
            let crd = all.iter().find(|o| {
                o.get("kind").and_then(Value::as_str) == Some("CustomResourceDefinition")
                    && o.pointer("/spec/group").and_then(Value::as_str) == Some(r.group())
                    && o.pointer("/spec/names/kind").and_then(Value::as_str) == Some(&r.kind)
            });
            match crd {
                Some(c) => Ok(ResourceInfo {
                    plural: c
                        .pointer("/spec/names/plural")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                    namespaced: c.pointer("/spec/scope").and_then(Value::as_str)
                        == Some("Namespaced"),
                }),
                None => Err(ApplyError::Cluster {
                    what: format!("resolving {r}"),
                    err,
                }),
            }
        }
        Err(err) => Err(ApplyError::Cluster {
            what: format!("resolving {r}"),
            err,
        }),
    }
}

/// Labels the objects of every apply set and sets or strips their namespaces.
fn prepare(
    cluster: &dyn Cluster,
    built: &BuiltInstance,
) -> Result<Vec<(String, Vec<Prepared>)>, ApplyError> {
    let all: Vec<Object> = built.objects().iter().map(data_to_json).collect();
    let mut sets = Vec::new();
    for set in &built.apply_sets {
        let mut out = Vec::new();
        for d in &set.objects {
            let mut obj = data_to_json(d);
            let r0 = ObjRef::of(&obj);
            let info = resolve(cluster, &r0, &all)?;
            let meta = obj
                .as_object_mut()
                .and_then(|o| o.get_mut("metadata"))
                .and_then(Value::as_object_mut)
                .ok_or_else(|| {
                    ApplyError::Build(crate::Error::Objects(vec![format!("{r0}: no metadata")]))
                })?;
            if info.namespaced {
                if meta
                    .get("namespace")
                    .and_then(Value::as_str)
                    .is_none_or(str::is_empty)
                {
                    meta.insert("namespace".into(), built.namespace.clone().into());
                }
            } else {
                meta.remove("namespace");
            }
            let labels = meta
                .entry("labels")
                .or_insert_with(|| json!({}))
                .as_object_mut();
            if let Some(labels) = labels {
                labels.insert(LABEL_OWNER_NAME.into(), built.name.clone().into());
                labels.insert(LABEL_OWNER_NAMESPACE.into(), built.namespace.clone().into());
            }
            let r = ObjRef::of(&obj);
            out.push(Prepared { object: obj, r });
        }
        sets.push((set.name.clone(), out));
    }
    Ok(sets)
}

/// Compares two references in the ssa order (kind rank, group, kind, namespace, name).
pub fn ssa_cmp(a: &ObjRef, b: &ObjRef) -> std::cmp::Ordering {
    render::kind_rank(&a.kind)
        .cmp(&render::kind_rank(&b.kind))
        .then_with(|| a.group().cmp(b.group()))
        .then_with(|| a.kind.cmp(&b.kind))
        .then_with(|| a.namespace.cmp(&b.namespace))
        .then_with(|| a.name.cmp(&b.name))
}

/// Inventory entries of references, sorted in the ssa order and deduplicated.
pub fn entries_of<'a>(refs: impl IntoIterator<Item = &'a ObjRef>) -> Vec<Entry> {
    let mut refs: Vec<&ObjRef> = refs.into_iter().collect();
    refs.sort_by(|a, b| ssa_cmp(a, b));
    refs.dedup();
    refs.into_iter().map(Entry::of).collect()
}

fn is_enabled(obj: &Object, key: &str) -> bool {
    annotation(obj, key) == Some("enabled")
}

/// Whether a live object carries this instance's owner labels.
pub fn owned_by(obj: &Object, name: &str, namespace: &str) -> bool {
    label(obj, LABEL_OWNER_NAME) == Some(name)
        && label(obj, LABEL_OWNER_NAMESPACE) == Some(namespace)
}

/// The object without the fields the server changes on every write, for comparisons and diffs.
fn comparable(obj: &Object) -> Object {
    let mut o = obj.clone();
    if let Some(m) = o.get_mut("metadata").and_then(Value::as_object_mut) {
        for k in [
            "managedFields",
            "resourceVersion",
            "generation",
            "creationTimestamp",
            "uid",
            "selfLink",
        ] {
            m.remove(k);
        }
    }
    o
}

fn yaml_of(obj: &Object) -> String {
    match cue_eval::decode::json(&obj.to_string()) {
        Ok(d) => render::object_yaml(&d),
        Err(_) => String::new(),
    }
}

/// Masks the Secret values of both sides of a diff as Timoni does: a changed value becomes
/// `*** (before)` and `*** (after)`, an unchanged one `***`; a non-map `data` is `***` whole.
fn mask_pair(mut before: Option<&mut Object>, after: &mut Object) {
    if !(after["apiVersion"] == "v1" && after["kind"] == "Secret") {
        return;
    }
    for key in ["data", "stringData"] {
        let old = before
            .as_deref()
            .and_then(|b| b.get(key))
            .cloned()
            .unwrap_or(Value::Null);
        let new = after.get(key).cloned().unwrap_or(Value::Null);
        if let Some(b) = before.as_deref_mut() {
            mask_side(b, key, &new, "before");
        }
        mask_side(after, key, &old, "after");
    }
    for o in [before, Some(after)].into_iter().flatten() {
        if let Some(a) =
            o.pointer_mut("/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration")
        {
            *a = "***".into();
        }
    }
}

fn mask_side(obj: &mut Object, key: &str, theirs: &Value, tag: &str) {
    match obj.get_mut(key) {
        Some(Value::Object(map)) => {
            for (k, v) in map.iter_mut() {
                let changed = theirs.get(k) != Some(&*v);
                *v = if changed {
                    format!("*** ({tag})").into()
                } else {
                    "***".into()
                };
            }
        }
        Some(v) if !v.is_null() => *v = "***".into(),
        _ => {}
    }
}

/// A unified diff of two versions of an object, Secret data masked.
pub fn diff(before: Option<&Object>, after: &Object) -> String {
    let mut b0 = before.map(comparable);
    let mut a0 = comparable(after);
    mask_pair(b0.as_mut(), &mut a0);
    let a = b0.as_ref().map(yaml_of).unwrap_or_default();
    let b = yaml_of(&a0);
    let r = ObjRef::of(after);
    similar::TextDiff::from_lines(&a, &b)
        .unified_diff()
        .context_radius(3)
        .header(&format!("{r} (live)"), &format!("{r} (merged)"))
        .to_string()
}

/// The stage of a kind within an apply set: cluster definitions, then Roles, then the rest.
fn stage(kind: &str) -> u8 {
    match kind {
        "CustomResourceDefinition" | "Namespace" | "ClusterRole" | "ClusterRoleBinding" => 0,
        "Role" | "RoleBinding" => 1,
        _ => 2,
    }
}

fn apply_one(
    cluster: &dyn Cluster,
    p: &Prepared,
    force: bool,
    timeout: Duration,
    poll: Duration,
) -> Result<Change, ApplyError> {
    let r = &p.r;
    let live = cluster.get(r).map_err(cerr(format!("reading {r}")))?;
    if live.is_some() && is_enabled(&p.object, ANNOTATION_ONE_OFF) {
        return Ok(Change {
            object: r.clone(),
            action: Action::Skipped,
            diff: None,
        });
    }
    // A kind of a CRD applied just before may take a moment to be served.
    let start = Instant::now();
    let mut result = cluster.apply(&p.object, ApplyOptions::default());
    while matches!(result, Err(ClusterError::UnknownKind { .. })) && start.elapsed() < timeout {
        std::thread::sleep(poll);
        result = cluster.apply(&p.object, ApplyOptions::default());
    }
    let out = match result {
        Ok(out) => out,
        Err(e) if e.is_immutable() && (force || is_enabled(&p.object, ANNOTATION_FORCE)) => {
            cluster
                .delete(r, false)
                .map_err(cerr(format!("deleting {r} to recreate it")))?;
            wait_gone(cluster, std::slice::from_ref(r), timeout, poll)?;
            cluster
                .apply(&p.object, ApplyOptions::default())
                .map_err(cerr(format!("applying {r}")))?;
            return Ok(Change {
                object: r.clone(),
                action: Action::Created,
                diff: None,
            });
        }
        Err(e) => return Err(cerr(format!("applying {r}"))(e)),
    };
    // Takeover from kubectl and Helm: the forced apply moved their conflicting fields to
    // `timoni`; their bookkeeping annotations go too.
    let foreign: serde_json::Map<String, Value> = FOREIGN_ANNOTATIONS
        .iter()
        .filter(|a| annotation(&out, a).is_some())
        .map(|a| (a.to_string(), Value::Null))
        .collect();
    let out = if foreign.is_empty() {
        out
    } else {
        let patch = json!({"metadata": {"annotations": foreign}});
        cluster
            .merge_patch(r, &patch)
            .map_err(cerr(format!("taking over {r}")))?
    };
    let rv = |o: &Object| o.pointer("/metadata/resourceVersion").cloned();
    let action = match &live {
        None => Action::Created,
        Some(l) if rv(l) == rv(&out) => Action::Unchanged,
        Some(_) => Action::Configured,
    };
    Ok(Change {
        object: r.clone(),
        action,
        diff: None,
    })
}

/// Waits until none of the objects exists any more.
pub fn wait_gone(
    cluster: &dyn Cluster,
    refs: &[ObjRef],
    timeout: Duration,
    poll: Duration,
) -> Result<(), ApplyError> {
    let start = Instant::now();
    loop {
        let mut left = Vec::new();
        for r in refs {
            if cluster
                .get(r)
                .map_err(cerr(format!("reading {r}")))?
                .is_some()
            {
                left.push(r.to_string());
            }
        }
        if left.is_empty() {
            return Ok(());
        }
        if start.elapsed() >= timeout {
            return Err(ApplyError::NotReady(format!(
                "timeout waiting for termination of: {}",
                left.join(", ")
            )));
        }
        std::thread::sleep(poll);
    }
}

/// Waits until every object is Current; fails fast on Failed. Objects covered by the module's
/// health checks are judged by them. `progress` gets what is still pending after each poll.
pub fn wait_ready(
    cluster: &dyn Cluster,
    refs: &[ObjRef],
    health: Option<&HealthChecks>,
    timeout: Duration,
    poll: Duration,
    progress: &mut dyn FnMut(&[String]),
) -> Result<(), ApplyError> {
    let start = Instant::now();
    loop {
        let mut pending = Vec::new();
        for r in refs {
            let live = cluster.get(r).map_err(cerr(format!("reading {r}")))?;
            let (st, msg) = match &live {
                Some(o) => health
                    .and_then(|h| h.evaluate(o))
                    .unwrap_or_else(|| status::compute(o)),
                None => (Status::NotFound, "Resource not found".to_string()),
            };
            match st {
                Status::Current => {}
                Status::Failed => {
                    return Err(ApplyError::NotReady(format!("{r} status: Failed: {msg}")));
                }
                _ => pending.push(format!("{r} status: {st}: {msg}")),
            }
        }
        if pending.is_empty() {
            return Ok(());
        }
        progress(&pending);
        if start.elapsed() >= timeout {
            return Err(ApplyError::NotReady(format!(
                "timeout waiting for: [{}]",
                pending.join(", ")
            )));
        }
        std::thread::sleep(poll);
    }
}

/// Applies a module instance; see the module documentation for the steps.
pub fn apply_instance(
    cluster: &dyn Cluster,
    req: &ApplyRequest,
    events: &mut dyn FnMut(&Event),
) -> Result<ApplyReport, ApplyError> {
    apply_instance_sharing(cluster, req, None, events)
}

/// [`apply_instance`], building the instance from the compiled imports in `share` when the
/// module applied before left the same ones there (see [`instance::build_sharing`]).
pub fn apply_instance_sharing(
    cluster: &dyn Cluster,
    req: &ApplyRequest,
    share: Option<&mut cue_eval::ImportShare>,
    events: &mut dyn FnMut(&Event),
) -> Result<ApplyReport, ApplyError> {
    let kube_version = cluster
        .server_version()
        .map_err(cerr("reading the server version"))?;
    let mut opts = req.build.clone();
    opts.kube_version = kube_version.clone();
    opts.module_version = req.module.version.clone();
    let built = instance::build_sharing(&opts, share).map_err(ApplyError::Build)?;
    let sets = prepare(cluster, &built)?;
    let name = built.name.as_str();
    let namespace = built.namespace.as_str();

    let stored = read_stored(cluster, name, namespace)?;
    if let Some(s) = &stored {
        let owner = s.instance.bundle();
        if owner != req.bundle.as_deref() && !req.overwrite_ownership {
            let msg = match (owner, req.bundle.as_deref()) {
                (Some(b), _) => format!(
                    "instance ownership conflict encountered. Conflict: instance {name:?} exists and is managed by another bundle {b:?}"
                ),
                (None, _) => format!(
                    "instance ownership conflict encountered. Conflict: instance {name:?} exists and is not managed by any bundle"
                ),
            };
            return Err(ApplyError::Ownership(msg));
        }
    }
    events(&Event::Start {
        install: stored.is_none(),
        kube_version: kube_version.clone(),
    });

    let new_refs: Vec<ObjRef> = sets
        .iter()
        .flat_map(|(_, objs)| objs.iter().map(|p| p.r.clone()))
        .collect();
    let new_entries = entries_of(&new_refs);
    let new_set: BTreeSet<&ObjRef> = new_refs.iter().collect();
    let mut old_refs: Vec<ObjRef> = Vec::new();
    if let Some(s) = &stored {
        old_refs.extend(s.instance.inventory.refs());
        if let Some(p) = &s.pending {
            old_refs.extend(p.inventory.refs());
        }
    }
    let mut stale: Vec<ObjRef> = old_refs
        .iter()
        .filter(|r| !new_set.contains(r))
        .cloned()
        .collect();
    stale.sort_by(ssa_cmp);
    stale.dedup();
    stale.reverse();

    let mut record = InstanceRecord::new(name, namespace, req.bundle.as_deref());
    record.module = req.module.clone();
    record.module.name = built.module_name.clone();
    record.values = crate::values::stored_text("values.cue", &built.values_source);
    record.last_transition_time = inventory::now_rfc3339();
    record.inventory.entries = new_entries.clone();
    record.images = built.images.clone();

    let mut changes = Vec::new();

    if req.dry_run {
        if !namespace_exists(cluster, namespace)? {
            events(&Event::NamespaceCreated {
                namespace: namespace.to_string(),
            });
        }
        // Corrections are waited for as an apply waits for its objects, health checks
        // included; the rest of the instance was not touched.
        let health = if req.correct_drift && req.wait {
            let h = HealthChecks::load(&opts).map_err(ApplyError::Build)?;
            (!h.checks.is_empty()).then_some(h)
        } else {
            None
        };
        for (set_name, objs) in &sets {
            let mut objs: Vec<&Prepared> = objs.iter().collect();
            objs.sort_by(|a, b| {
                stage(&a.r.kind)
                    .cmp(&stage(&b.r.kind))
                    .then_with(|| ssa_cmp(&a.r, &b.r))
            });
            let mut corrected = Vec::new();
            for p in objs {
                let r = &p.r;
                let live = cluster.get(r).map_err(cerr(format!("reading {r}")))?;
                if live.is_some() && is_enabled(&p.object, ANNOTATION_ONE_OFF) {
                    emit(
                        events,
                        &mut changes,
                        Change {
                            object: r.clone(),
                            action: Action::Skipped,
                            diff: None,
                        },
                    );
                    continue;
                }
                let out = match cluster.apply(&p.object, ApplyOptions { dry_run: true }) {
                    Ok(out) => out,
                    // The namespace does not exist yet (a first install): the server cannot
                    // dry-run the object, which would be created as it is.
                    Err(e) if e.is_not_found() && live.is_none() => p.object.clone(),
                    Err(e) => return Err(cerr(format!("dry-run applying {r}"))(e)),
                };
                let action = match &live {
                    None => Action::Created,
                    Some(l) if comparable(l) == comparable(&out) => Action::Unchanged,
                    Some(_) => Action::Configured,
                };
                if req.correct_drift && matches!(action, Action::Created | Action::Configured) {
                    let c = apply_one(cluster, p, req.force, req.timeout, req.poll)?;
                    emit(events, &mut changes, c);
                    if annotation(&p.object, ANNOTATION_WAIT) != Some("disabled") {
                        corrected.push(r.clone());
                    }
                    continue;
                }
                let d =
                    (req.diff && action != Action::Unchanged).then(|| diff(live.as_ref(), &out));
                emit(
                    events,
                    &mut changes,
                    Change {
                        object: r.clone(),
                        action,
                        diff: d,
                    },
                );
            }
            if req.wait && !corrected.is_empty() {
                events(&Event::Waiting {
                    set: set_name.clone(),
                    count: corrected.len(),
                });
                let mut progress = |pending: &[String]| {
                    events(&Event::Progress {
                        set: set_name.clone(),
                        pending: pending.to_vec(),
                    })
                };
                wait_ready(
                    cluster,
                    &corrected,
                    health.as_ref(),
                    req.timeout,
                    req.poll,
                    &mut progress,
                )?;
                events(&Event::Ready {
                    set: set_name.clone(),
                });
            }
        }
        for r in &stale {
            if let Some(live) = cluster.get(r).map_err(cerr(format!("reading {r}")))?
                && prunable(&live, name, namespace)
            {
                emit(
                    events,
                    &mut changes,
                    Change {
                        object: r.clone(),
                        action: Action::Deleted,
                        diff: None,
                    },
                );
            }
        }
        return Ok(ApplyReport {
            install: stored.is_none(),
            kube_version,
            changes,
        });
    }

    let health = if req.wait {
        let h = HealthChecks::load(&opts).map_err(ApplyError::Build)?;
        (!h.checks.is_empty()).then_some(h)
    } else {
        None
    };
    if ensure_namespace(cluster, namespace)? {
        events(&Event::NamespaceCreated {
            namespace: namespace.to_string(),
        });
    }
    match &stored {
        None => write_inventory(cluster, &record, None, None)?,
        Some(s) => {
            let pending_entries: Vec<Entry> = s
                .pending
                .as_ref()
                .map(|p| p.inventory.entries.clone())
                .unwrap_or_default();
            if s.instance.inventory.entries != new_entries || !pending_entries.is_empty() {
                let mut pending = record.clone();
                let mut refs = new_refs.clone();
                refs.extend(pending_entries.iter().filter_map(Entry::obj_ref));
                pending.inventory.entries = entries_of(&refs);
                write_inventory(cluster, &s.instance, Some(&pending), None)?;
            }
        }
    }

    let mut not_ready = None;
    for (set_name, objs) in &sets {
        let mut objs: Vec<&Prepared> = objs.iter().collect();
        objs.sort_by(|a, b| ssa_cmp(&a.r, &b.r));
        for st in 0..3u8 {
            let stage_objs: Vec<&&Prepared> =
                objs.iter().filter(|p| stage(&p.r.kind) == st).collect();
            for p in &stage_objs {
                let c = apply_one(cluster, p, req.force, req.timeout, req.poll)?;
                emit(events, &mut changes, c);
            }
            if st == 0 && !stage_objs.is_empty() {
                let refs: Vec<ObjRef> = stage_objs.iter().map(|p| p.r.clone()).collect();
                wait_ready(cluster, &refs, None, req.timeout, req.poll, &mut |_| {})?;
            }
        }
        if req.wait && not_ready.is_none() {
            let refs: Vec<ObjRef> = objs
                .iter()
                .filter(|p| annotation(&p.object, ANNOTATION_WAIT) != Some("disabled"))
                .map(|p| p.r.clone())
                .collect();
            events(&Event::Waiting {
                set: set_name.clone(),
                count: refs.len(),
            });
            let mut progress = |pending: &[String]| {
                events(&Event::Progress {
                    set: set_name.clone(),
                    pending: pending.to_vec(),
                })
            };
            let waited = wait_ready(
                cluster,
                &refs,
                health.as_ref(),
                req.timeout,
                req.poll,
                &mut progress,
            );
            match waited {
                Ok(()) => events(&Event::Ready {
                    set: set_name.clone(),
                }),
                Err(e) => not_ready = Some(e),
            }
        }
        if not_ready.is_some() {
            break;
        }
    }

    let mut deleted = Vec::new();
    for r in &stale {
        let Some(live) = cluster.get(r).map_err(cerr(format!("reading {r}")))? else {
            continue;
        };
        if !prunable(&live, name, namespace) {
            emit(
                events,
                &mut changes,
                Change {
                    object: r.clone(),
                    action: Action::Skipped,
                    diff: None,
                },
            );
            continue;
        }
        if cluster
            .delete(r, false)
            .map_err(cerr(format!("deleting {r}")))?
        {
            deleted.push(r.clone());
            emit(
                events,
                &mut changes,
                Change {
                    object: r.clone(),
                    action: Action::Deleted,
                    diff: None,
                },
            );
        }
    }
    if req.wait && !deleted.is_empty() {
        wait_gone(cluster, &deleted, req.timeout, req.poll)?;
    }
    write_inventory(cluster, &record, None, None)?;
    if let Some(e) = not_ready {
        return Err(e);
    }
    Ok(ApplyReport {
        install: stored.is_none(),
        kube_version,
        changes,
    })
}

fn emit(events: &mut dyn FnMut(&Event), changes: &mut Vec<Change>, c: Change) {
    events(&Event::Change(c.clone()));
    changes.push(c);
}

/// Whether a stale or deleted object may go: owned by this instance and not `prune: disabled`.
pub fn prunable(live: &Object, name: &str, namespace: &str) -> bool {
    owned_by(live, name, namespace) && annotation(live, ANNOTATION_PRUNE) != Some("disabled")
}
