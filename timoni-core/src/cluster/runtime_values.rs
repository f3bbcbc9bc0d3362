//! Runtime values read from a cluster (Timoni's `internal/runtime/reader.go`): each `values`
//! entry of a runtime names an object with a query `k8s:<apiVersion>:<kind>[:<namespace>]:<name>`
//! and sets variables from CUE expressions evaluated as `obj: <object>` / `out: <expr>`.
//! Strings are used raw, other scalars as CUE prints them; a struct or list is an error. Every
//! value read from a `v1/Secret` is base64-decoded when it decodes cleanly.

use std::collections::BTreeMap;

use base64::Engine;
use cue_eval::encode::Data;

use super::bundle::Connector;
use super::{Cluster, ObjRef};
use crate::bundle::{self, BundleRequest};
use crate::error::{Error, Result};
use crate::runtime::{self, RuntimeValue};

/// The object a query names. Fewer than four parts is an error; from six parts on, Timoni
/// takes `parts[3]` as the name (kept).
pub fn parse_query(query: &str) -> Result<ObjRef> {
    let parts: Vec<&str> = query.split(':').collect();
    if parts[0] != "k8s" || parts.len() < 4 {
        return Err(Error::Bundle(format!(
            "invalid runtime query {query:?}: expected k8s:<apiVersion>:<kind>[:<namespace>]:<name>"
        )));
    }
    let (namespace, name) = match parts.len() {
        4 => ("", parts[3]),
        5 => (parts[3], parts[4]),
        _ => ("", parts[3]),
    };
    Ok(ObjRef {
        api_version: parts[1].into(),
        kind: parts[2].into(),
        namespace: namespace.into(),
        name: name.into(),
    })
}

/// Evaluates one `for` expression against an object.
pub fn eval_expr(obj: &serde_json::Value, expr: &str) -> Result<String> {
    let src = format!("obj: {obj}\nout: {expr}\n");
    let fail = |msg: String| Error::Bundle(format!("runtime value {expr:?}: {msg}"));
    let out = cue_eval::Context::new()
        .compile_file("runtime-query.cue", &src)
        .and_then(|v| v.lookup("out"))
        .and_then(|out| out.export())
        .map_err(|e| fail(e.to_string()))?;
    let text = match out {
        Data::String(s) => s,
        Data::Number { text, .. } => text,
        Data::Bool(b) => b.to_string(),
        Data::Null => "null".into(),
        Data::Bytes(b) => String::from_utf8_lossy(&b).into_owned(),
        Data::List(_) | Data::Struct(_) => {
            return Err(fail("the value must be a string, number or bool".into()));
        }
    };
    let is_secret = obj["apiVersion"] == "v1" && obj["kind"] == "Secret";
    if is_secret
        && let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(&text)
        && let Ok(decoded) = String::from_utf8(bytes)
    {
        return Ok(decoded);
    }
    Ok(text)
}

/// Reads every value of a runtime from one cluster.
pub fn read_values(
    cluster: &dyn Cluster,
    values: &[RuntimeValue],
) -> Result<BTreeMap<String, String>> {
    let mut out = BTreeMap::new();
    for v in values {
        let r = parse_query(&v.query)?;
        let obj = cluster
            .get(&r)
            .map_err(|e| Error::Bundle(format!("runtime query {:?}: {e}", v.query)))?;
        let Some(obj) = obj else {
            if v.optional {
                continue;
            }
            return Err(Error::Bundle(format!(
                "runtime query {:?}: {r} not found",
                v.query
            )));
        };
        for (var, expr) in &v.for_ {
            out.insert(var.clone(), eval_expr(&obj, expr)?);
        }
    }
    Ok(out)
}

/// [`bundle::runtime_values_with`] reading queries through `connector`, one connection per
/// cluster and only when the runtime has queries.
pub fn runtime_values(
    connector: &dyn Connector,
    req: &BundleRequest,
) -> Result<Vec<(runtime::Cluster, BTreeMap<String, String>)>> {
    bundle::runtime_values_with(req, &mut |rt, c| {
        let cluster = connector
            .connect(c)
            .map_err(|e| Error::Bundle(format!("connecting to cluster {}: {e}", c.name)))?;
        read_values(cluster.as_ref(), &rt.values)
            .map_err(|e| Error::Bundle(format!("cluster {}: {e}", c.name)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn queries_name_namespaced_and_cluster_scoped_objects() {
        let r = parse_query("k8s:v1:Secret:infra:redis").unwrap();
        assert_eq!((r.namespace.as_str(), r.name.as_str()), ("infra", "redis"));
        let r = parse_query("k8s:cert-manager.io/v1:ClusterIssuer:le").unwrap();
        assert_eq!((r.namespace.as_str(), r.name.as_str()), ("", "le"));
        assert_eq!(parse_query("k8s:v1:a:b:c:d").unwrap().name, "b");
        assert!(parse_query("k8s:v1:Secret").is_err());
        assert!(parse_query("http:v1:Secret:x").is_err());
    }

    #[test]
    fn expressions_read_the_object_and_secrets_are_decoded() {
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "data": {"region": "eu-1", "ca.crt": "PEM", "n": "3"},
            "status": {"conditions": [{"type": "Ready", "status": "True"}], "replicas": 2}});
        assert_eq!(eval_expr(&cm, "obj.data.region").unwrap(), "eu-1");
        assert_eq!(eval_expr(&cm, "obj.data.\"ca.crt\"").unwrap(), "PEM");
        assert_eq!(eval_expr(&cm, "obj.status.replicas").unwrap(), "2");
        assert_eq!(
            eval_expr(
                &cm,
                r#"[for c in obj.status.conditions if c.type == "Ready" {c.status}][0]"#
            )
            .unwrap(),
            "True"
        );
        assert!(eval_expr(&cm, "obj.data").is_err());
        assert!(eval_expr(&cm, "obj.nope").is_err());
        let s = json!({"apiVersion": "v1", "kind": "Secret", "data": {"password": "czNjcjN0"}});
        assert_eq!(eval_expr(&s, "obj.data.password").unwrap(), "s3cr3t");
    }
}
