//! The instance inventory: the `timoni.<instance>` Secret of type `timoni.sh/instance` that
//! records what an instance applied (Timoni's `internal/runtime/storage.go` and
//! `api/v1alpha1/instance.go`). Its `instance` key holds the JSON of [`InstanceRecord`] with the
//! Go struct's field order; `pending` holds the in-flight revision of an upgrade.

use std::collections::BTreeMap;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::{ObjRef, Object};

pub const SECRET_TYPE: &str = "timoni.sh/instance";
pub const LABEL_NAME: &str = "app.kubernetes.io/name";
pub const LABEL_COMPONENT: &str = "app.kubernetes.io/component";
pub const LABEL_CREATED_BY: &str = "app.kubernetes.io/created-by";
pub const LABEL_BUNDLE: &str = "bundle.timoni.sh/name";
pub const ANNOTATION_DELETING: &str = "status.timoni.sh/deleting";
/// The selector of every inventory Secret.
pub const SELECTOR: &str =
    "app.kubernetes.io/component=instance,app.kubernetes.io/created-by=timoni";

/// The name of an instance's inventory Secret.
pub fn secret_name(instance: &str) -> String {
    format!("timoni.{instance}")
}

/// `apiv1.Instance`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InstanceRecord {
    pub kind: String,
    #[serde(rename = "apiVersion")]
    pub api_version: String,
    pub metadata: RecordMeta,
    pub module: ModuleReference,
    /// The merged values as CUE source.
    #[serde(default)]
    pub values: String,
    #[serde(rename = "lastTransitionTime", default)]
    pub last_transition_time: String,
    #[serde(default)]
    pub inventory: Inventory,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<String>,
}

/// The part of `metav1.ObjectMeta` an instance record fills.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RecordMeta {
    pub name: String,
    pub namespace: String,
    /// Always `null`, as Go's zero `metav1.Time` marshals.
    #[serde(rename = "creationTimestamp", default)]
    pub creation_timestamp: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
}

/// `apiv1.ModuleReference`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ModuleReference {
    pub name: String,
    pub repository: String,
    pub version: String,
    #[serde(default)]
    pub digest: String,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

impl From<&crate::oci::FetchedModule> for ModuleReference {
    /// The reference recorded for a module pulled from a registry.
    fn from(f: &crate::oci::FetchedModule) -> ModuleReference {
        ModuleReference {
            name: String::new(),
            repository: f.repository.clone(),
            version: f.version.clone(),
            digest: f.digest.clone(),
            annotations: f.annotations.clone(),
        }
    }
}

/// `apiv1.ResourceInventory`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Inventory {
    #[serde(default)]
    pub entries: Vec<Entry>,
}

/// One inventory entry: the cli-utils object id and the version.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    pub id: String,
    pub v: String,
}

impl Entry {
    /// The entry of an object: `<namespace>_<name>_<group>_<kind>`, `:` in names as `__`.
    pub fn of(r: &ObjRef) -> Entry {
        Entry {
            id: format!(
                "{}_{}_{}_{}",
                r.namespace,
                r.name.replace(':', "__"),
                r.group(),
                r.kind
            ),
            v: r.version().to_string(),
        }
    }

    /// The object an entry names, if the id is well formed. Namespaces and groups hold no
    /// `_`, so the name is what lies between the first and the second-to-last `_`.
    pub fn obj_ref(&self) -> Option<ObjRef> {
        let (namespace, rest) = self.id.split_once('_')?;
        let (rest, kind) = rest.rsplit_once('_')?;
        let (name, group) = rest.rsplit_once('_')?;
        if name.is_empty() || kind.is_empty() {
            return None;
        }
        let api_version = if group.is_empty() {
            self.v.clone()
        } else {
            format!("{group}/{}", self.v)
        };
        Some(ObjRef {
            api_version,
            kind: kind.to_string(),
            namespace: namespace.to_string(),
            name: name.replace("__", ":"),
        })
    }
}

impl Inventory {
    /// The objects of the inventory (malformed ids are skipped).
    pub fn refs(&self) -> Vec<ObjRef> {
        self.entries.iter().filter_map(Entry::obj_ref).collect()
    }
}

impl InstanceRecord {
    /// A record for an instance with empty module, values and inventory.
    pub fn new(name: &str, namespace: &str, bundle: Option<&str>) -> InstanceRecord {
        let mut labels = BTreeMap::new();
        if let Some(b) = bundle {
            labels.insert(LABEL_BUNDLE.to_string(), b.to_string());
        }
        InstanceRecord {
            kind: "Instance".into(),
            api_version: "timoni.sh/v1alpha1".into(),
            metadata: RecordMeta {
                name: name.into(),
                namespace: namespace.into(),
                creation_timestamp: None,
                labels,
            },
            module: ModuleReference::default(),
            values: String::new(),
            last_transition_time: String::new(),
            inventory: Inventory::default(),
            images: Vec::new(),
        }
    }

    /// The bundle owning the instance, if any.
    pub fn bundle(&self) -> Option<&str> {
        self.metadata.labels.get(LABEL_BUNDLE).map(String::as_str)
    }

    /// Compact JSON, as Go's `json.Marshal` writes it (`<`, `>` and `&` escaped too).
    pub fn to_json(&self) -> String {
        let s = serde_json::to_string(self).unwrap_or_default();
        s.replace('<', "\\u003c")
            .replace('>', "\\u003e")
            .replace('&', "\\u0026")
    }
}

/// What an inventory Secret holds.
#[derive(Clone, Debug, PartialEq)]
pub struct Stored {
    pub instance: InstanceRecord,
    pub pending: Option<InstanceRecord>,
    /// The `status.timoni.sh/deleting` annotation, if set.
    pub deleting: Option<String>,
    pub creation_timestamp: String,
}

/// The inventory Secret for a record (and a pending revision).
pub fn secret(
    record: &InstanceRecord,
    pending: Option<&InstanceRecord>,
    deleting: Option<&str>,
) -> Object {
    let mut labels = serde_json::Map::new();
    labels.insert(LABEL_NAME.into(), record.metadata.name.clone().into());
    labels.insert(LABEL_COMPONENT.into(), "instance".into());
    labels.insert(LABEL_CREATED_BY.into(), "timoni".into());
    if let Some(b) = record.bundle() {
        labels.insert(LABEL_BUNDLE.into(), b.into());
    }
    let mut data = serde_json::Map::new();
    data.insert("instance".into(), STANDARD.encode(record.to_json()).into());
    if let Some(p) = pending {
        data.insert("pending".into(), STANDARD.encode(p.to_json()).into());
    }
    let mut metadata = json!({
        "name": secret_name(&record.metadata.name),
        "namespace": record.metadata.namespace,
        "labels": labels,
    });
    if let Some(d) = deleting {
        metadata["annotations"] = json!({ ANNOTATION_DELETING: d });
    }
    json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": metadata,
        "type": SECRET_TYPE,
        "data": data,
    })
}

/// Reads an inventory Secret; `Err` names what is wrong with it.
pub fn parse_secret(obj: &Object) -> Result<Stored, String> {
    let name = obj
        .pointer("/metadata/name")
        .and_then(|v| v.as_str())
        .unwrap_or("?");
    let key = |k: &str| -> Result<Option<InstanceRecord>, String> {
        let Some(b64) = obj.pointer(&format!("/data/{k}")).and_then(|v| v.as_str()) else {
            return Ok(None);
        };
        let bytes = STANDARD
            .decode(b64)
            .map_err(|e| format!("secret {name}: data.{k}: {e}"))?;
        serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| format!("secret {name}: data.{k}: invalid instance JSON: {e}"))
    };
    let mut instance =
        key("instance")?.ok_or_else(|| format!("secret {name}: no data.instance"))?;
    // Labels of the Secret are copied back, as Timoni does on read.
    if let Some(b) = super::label(obj, LABEL_BUNDLE) {
        instance
            .metadata
            .labels
            .insert(LABEL_BUNDLE.into(), b.to_string());
    }
    Ok(Stored {
        instance,
        pending: key("pending")?,
        deleting: super::annotation(obj, ANNOTATION_DELETING).map(str::to_string),
        creation_timestamp: obj
            .pointer("/metadata/creationTimestamp")
            .and_then(|v| v.as_str())
            .unwrap_or("")
            .to_string(),
    })
}

/// The values as CUE source, as Timoni stores them (`fmt.Sprintf("%v", values)`): structs one
/// field per line with tabs, identifier labels unquoted; other values as `cue-eval` writes them.
pub fn cue_values(d: &cue_eval::encode::Data) -> String {
    let mut out = String::new();
    write_cue(&mut out, d, 0);
    out
}

fn write_cue(out: &mut String, d: &cue_eval::encode::Data, depth: usize) {
    match d {
        cue_eval::encode::Data::Struct(fields) if !fields.is_empty() => {
            out.push_str("{\n");
            for f in fields {
                out.push_str(&"\t".repeat(depth + 1));
                if cue_eval::syntax::is_identifier(&f.name) {
                    out.push_str(&f.name);
                } else {
                    out.push_str(&cue_eval::decode::to_cue_expr(
                        &cue_eval::encode::Data::string(f.name.clone()),
                    ));
                }
                out.push_str(": ");
                write_cue(out, &f.value, depth + 1);
                out.push('\n');
            }
            out.push_str(&"\t".repeat(depth));
            out.push('}');
        }
        other => out.push_str(&cue_eval::decode::to_cue_expr(other)),
    }
}

/// The current time in RFC 3339 at second precision (UTC).
pub fn now_rfc3339() -> String {
    jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(api: &str, kind: &str, ns: &str, name: &str) -> ObjRef {
        ObjRef {
            api_version: api.into(),
            kind: kind.into(),
            namespace: ns.into(),
            name: name.into(),
        }
    }

    #[test]
    fn entry_ids_round_trip_including_colons_and_cluster_scope() {
        for o in [
            r("v1", "ServiceAccount", "apps", "podinfo"),
            r("apps/v1", "Deployment", "apps", "podinfo"),
            r(
                "rbac.authorization.k8s.io/v1",
                "ClusterRole",
                "",
                "system:podinfo",
            ),
        ] {
            let e = Entry::of(&o);
            assert_eq!(e.obj_ref().as_ref(), Some(&o), "{e:?}");
        }
        assert_eq!(
            Entry::of(&r("apps/v1", "Deployment", "apps", "podinfo")).id,
            "apps_podinfo_apps_Deployment"
        );
        assert_eq!(
            Entry::of(&r("v1", "ServiceAccount", "apps", "podinfo")).id,
            "apps_podinfo__ServiceAccount"
        );
        assert_eq!(
            Entry {
                id: "junk".into(),
                v: "v1".into()
            }
            .obj_ref(),
            None
        );
    }

    #[test]
    fn record_json_follows_the_go_field_order() {
        let mut rec = InstanceRecord::new("podinfo", "apps", Some("apps"));
        rec.module.name = "timoni.sh/podinfo".into();
        rec.values = "{\n\ta: \"<b>\"\n}".into();
        rec.inventory
            .entries
            .push(Entry::of(&r("v1", "ServiceAccount", "apps", "podinfo")));
        assert_eq!(
            rec.to_json(),
            r#"{"kind":"Instance","apiVersion":"timoni.sh/v1alpha1","metadata":{"name":"podinfo","namespace":"apps","creationTimestamp":null,"labels":{"bundle.timoni.sh/name":"apps"}},"module":{"name":"timoni.sh/podinfo","repository":"","version":"","digest":""},"values":"{\n\ta: \"\u003cb\u003e\"\n}","lastTransitionTime":"","inventory":{"entries":[{"id":"apps_podinfo__ServiceAccount","v":"v1"}]}}"#
        );
        let secret = secret(&rec, None, None);
        let back = parse_secret(&secret).unwrap();
        assert_eq!(back.instance, rec);
        assert_eq!(back.pending, None);
    }
}
