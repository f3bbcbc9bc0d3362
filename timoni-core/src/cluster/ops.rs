//! The inventory-driven operations besides apply: `timoni delete` (reverse apply order, the
//! inventory kept until everything is gone), `timoni status` (kstatus of every inventory object),
//! `timoni list` (inventory Secrets by label) and what `timoni inspect` reads.

use std::time::Duration;

use super::apply::{
    Action, ApplyError, Change, cerr, prunable, read_stored, secret_ref, ssa_cmp, wait_gone,
};
use super::inventory::{self, InstanceRecord, Stored};
use super::status::{self, Status};
use super::{Cluster, ObjRef};

/// What to delete and how.
#[derive(Clone, Debug)]
pub struct DeleteRequest {
    pub name: String,
    pub namespace: String,
    pub dry_run: bool,
    pub wait: bool,
    pub timeout: Duration,
    pub poll: Duration,
}

/// The stored inventory of an instance, or an error saying it is not there.
pub fn stored_instance(
    cluster: &dyn Cluster,
    name: &str,
    namespace: &str,
) -> Result<Stored, ApplyError> {
    read_stored(cluster, name, namespace)?.ok_or_else(|| {
        ApplyError::Inventory(format!(
            "instance {name:?} not found in namespace {namespace:?}"
        ))
    })
}

/// Every object of the stored and pending inventories, in reverse apply order.
fn delete_order(stored: &Stored) -> Vec<ObjRef> {
    let mut refs = stored.instance.inventory.refs();
    if let Some(p) = &stored.pending {
        refs.extend(p.inventory.refs());
    }
    refs.sort_by(ssa_cmp);
    refs.dedup();
    refs.reverse();
    refs
}

/// Deletes an instance: its objects in reverse apply order (never `prune: disabled` ones or
/// objects with other owner labels, never Namespaces), then, once they are gone, its inventory.
/// With `wait` the inventory is marked `deleting` first and kept when the wait times out.
pub fn delete_instance(
    cluster: &dyn Cluster,
    req: &DeleteRequest,
    events: &mut dyn FnMut(&Change),
) -> Result<Vec<Change>, ApplyError> {
    let stored = stored_instance(cluster, &req.name, &req.namespace)?;
    let refs = delete_order(&stored);
    let mut changes = Vec::new();
    if req.wait && !req.dry_run {
        let secret = inventory::secret(
            &stored.instance,
            stored.pending.as_ref(),
            Some(&inventory::now_rfc3339()),
        );
        cluster
            .apply(&secret, Default::default())
            .map_err(cerr("marking the inventory as deleting"))?;
    }
    let mut deleted = Vec::new();
    let mut failures = Vec::new();
    for r in refs {
        if r.kind == "Namespace" {
            continue;
        }
        let live = match cluster.get(&r) {
            Ok(l) => l,
            Err(e) => {
                failures.push(format!("{r}: {e}"));
                continue;
            }
        };
        let Some(live) = live else { continue };
        let action = if !prunable(&live, &req.name, &req.namespace) {
            Action::Skipped
        } else if req.dry_run {
            Action::Deleted
        } else {
            match cluster.delete(&r, false) {
                Ok(true) => {
                    deleted.push(r.clone());
                    Action::Deleted
                }
                Ok(false) => continue,
                Err(e) => {
                    failures.push(format!("{r}: {e}"));
                    continue;
                }
            }
        };
        let c = Change {
            object: r,
            action,
            diff: None,
        };
        events(&c);
        changes.push(c);
    }
    if !failures.is_empty() {
        return Err(ApplyError::Inventory(format!(
            "deletion failed: {}",
            failures.join("; ")
        )));
    }
    if req.dry_run {
        return Ok(changes);
    }
    if req.wait {
        wait_gone(cluster, &deleted, req.timeout, req.poll)?;
    }
    let s = secret_ref(&req.name, &req.namespace);
    cluster
        .delete(&s, false)
        .map_err(cerr(format!("deleting {s}")))?;
    Ok(changes)
}

/// One inventory object's status.
#[derive(Clone, Debug, PartialEq)]
pub struct ObjectStatus {
    pub object: ObjRef,
    pub status: Status,
    pub message: String,
}

/// The record of an instance and the status of each of its objects, in apply order.
pub fn instance_status(
    cluster: &dyn Cluster,
    name: &str,
    namespace: &str,
) -> Result<(InstanceRecord, Vec<ObjectStatus>), ApplyError> {
    let stored = stored_instance(cluster, name, namespace)?;
    let mut out = Vec::new();
    for r in stored.instance.inventory.refs() {
        let (status, message) = match cluster.get(&r).map_err(cerr(format!("reading {r}")))? {
            Some(o) => status::compute(&o),
            None => (Status::NotFound, "Resource not found".into()),
        };
        out.push(ObjectStatus {
            object: r,
            status,
            message,
        });
    }
    Ok((stored.instance, out))
}

/// The instances in a namespace (empty: all), optionally of one bundle, oldest first.
pub fn list_instances(
    cluster: &dyn Cluster,
    namespace: &str,
    bundle: Option<&str>,
) -> Result<Vec<InstanceRecord>, ApplyError> {
    let mut selector = inventory::SELECTOR.to_string();
    if let Some(b) = bundle {
        selector.push_str(&format!(",{}={b}", inventory::LABEL_BUNDLE));
    }
    let secrets = cluster
        .list("v1", "Secret", namespace, &selector)
        .map_err(cerr("listing instances"))?;
    let mut stored = Vec::new();
    for s in &secrets {
        // An unreadable inventory is skipped, as Timoni skips what it cannot decode.
        if let Ok(st) = inventory::parse_secret(s) {
            stored.push(st);
        }
    }
    stored.sort_by(|a, b| {
        a.creation_timestamp
            .cmp(&b.creation_timestamp)
            .then_with(|| {
                a.instance
                    .metadata
                    .namespace
                    .cmp(&b.instance.metadata.namespace)
            })
            .then_with(|| a.instance.metadata.name.cmp(&b.instance.metadata.name))
    });
    Ok(stored.into_iter().map(|s| s.instance).collect())
}
