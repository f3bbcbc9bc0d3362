//! Runtimes and the `@timoni(runtime:<type>:<VAR>)` attribute (Timoni's
//! `internal/engine/runtime_injector.go` and `api/v1alpha1/runtime.go`).
//!
//! Injection is a rewrite of the source before evaluation: a field carrying
//! `@timoni(runtime:string|number|bool:VAR)` gets its value replaced by a literal when `VAR` has
//! a value, and is left alone otherwise (a concrete value then acts as a default, a type stays
//! incomplete). Only attributes named `timoni` whose body has exactly three `:`-separated parts,
//! the first being `runtime`, count. A `number` must be a CUE number literal and a `bool` exactly
//! `true` or `false`; otherwise injection fails without echoing the value.
//!
//! A runtime file (`runtime: {apiVersion, name, clusters?, values?}`) names clusters with a group
//! each; without clusters there is one implicit cluster `_default`. Runtime values read from a
//! cluster (`values` with queries) are read by `crate::cluster::runtime_values`; the offline
//! commands report them as needing a cluster.

use std::collections::BTreeMap;

use cue_eval::encode::Data;
use cue_eval::syntax::{AttrText, Document};

use crate::error::{Error, Result};
use crate::meta::get_str;

/// The name of the implicit cluster of a runtime without clusters.
pub const DEFAULT_CLUSTER: &str = "_default";

/// One cluster of a runtime.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cluster {
    pub name: String,
    pub group: String,
    pub kube_context: String,
}

impl Cluster {
    /// The implicit cluster.
    pub fn default_cluster() -> Cluster {
        Cluster {
            name: DEFAULT_CLUSTER.into(),
            group: DEFAULT_CLUSTER.into(),
            kube_context: String::new(),
        }
    }

    /// Whether this is the implicit cluster.
    pub fn is_default(&self) -> bool {
        self.name == DEFAULT_CLUSTER
    }

    /// The runtime values Timoni sets for a named cluster.
    pub fn values(&self) -> BTreeMap<String, String> {
        let mut m = BTreeMap::new();
        if !self.is_default() {
            m.insert("TIMONI_CLUSTER_NAME".into(), self.name.clone());
            m.insert("TIMONI_CLUSTER_GROUP".into(), self.group.clone());
        }
        m
    }
}

/// A runtime: its name, clusters (in declaration order) and the number of values that need
/// cluster queries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Runtime {
    pub name: String,
    pub clusters: Vec<Cluster>,
    /// The queries of the `values` entries (each one reads an object from a cluster).
    pub queries: Vec<String>,
    /// The `values` entries in full.
    pub values: Vec<RuntimeValue>,
}

/// One `values` entry of a runtime: read the object of `query` and set each variable of `for`
/// to the CUE expression's value (with `obj` bound to the object).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuntimeValue {
    pub query: String,
    /// Variable name and expression, in declaration order.
    pub for_: Vec<(String, String)>,
    /// A missing object is skipped instead of failing.
    pub optional: bool,
}

impl Runtime {
    /// The runtime used without `-r`: one implicit cluster, no queries.
    pub fn implicit() -> Runtime {
        Runtime {
            name: String::new(),
            clusters: vec![Cluster::default_cluster()],
            queries: Vec::new(),
            values: Vec::new(),
        }
    }

    /// The clusters matching `name` and `group` (case-insensitive; `*` or empty matches all),
    /// in runtime order.
    pub fn select(&self, name: &str, group: &str) -> Vec<Cluster> {
        let matches = |want: &str, have: &str| {
            want.is_empty() || want == "*" || want.eq_ignore_ascii_case(have)
        };
        self.clusters
            .iter()
            .filter(|c| matches(name, &c.name) && matches(group, &c.group))
            .cloned()
            .collect()
    }
}

/// Reads a runtime from the `runtime` field of evaluated data (several runtime files are
/// unified before).
pub fn runtime_from_data(d: &Data) -> Result<Runtime> {
    let rt = match crate::meta::get(d, &["runtime"]) {
        Some(rt @ Data::Struct(_)) => rt,
        Some(_) => {
            return Err(Error::Bundle(
                "runtime: must be a struct with apiVersion, name and optional clusters and values"
                    .into(),
            ));
        }
        None => return Err(Error::Bundle("runtime: field not found".into())),
    };
    let name = get_str(rt, &["name"]).unwrap_or_default().to_string();
    let mut clusters = Vec::new();
    if let Some(Data::Struct(cs)) = crate::meta::get(rt, &["clusters"]) {
        for c in cs {
            clusters.push(Cluster {
                name: c.name.clone(),
                group: get_str(&c.value, &["group"])
                    .unwrap_or_default()
                    .to_string(),
                kube_context: get_str(&c.value, &["kubeContext"])
                    .unwrap_or_default()
                    .to_string(),
            });
        }
    }
    if clusters.is_empty() {
        clusters.push(Cluster::default_cluster());
    }
    let mut queries = Vec::new();
    let mut values = Vec::new();
    if let Some(Data::List(vs)) = crate::meta::get(rt, &["values"]) {
        for v in vs {
            let query = get_str(v, &["query"]).unwrap_or_default().to_string();
            let mut for_ = Vec::new();
            if let Some(Data::Struct(fs)) = crate::meta::get(v, &["for"]) {
                for f in fs {
                    if let Data::String(expr) = &f.value {
                        for_.push((f.name.clone(), expr.clone()));
                    }
                }
            }
            let optional = matches!(crate::meta::get(v, &["optional"]), Some(Data::Bool(true)));
            queries.push(query.clone());
            values.push(RuntimeValue {
                query,
                for_,
                optional,
            });
        }
    }
    Ok(Runtime {
        name,
        clusters,
        queries,
        values,
    })
}

/// Evaluates runtime sources (CUE text, already converted from YAML/JSON) as one value.
pub fn load_runtime(sources: &[(String, String)]) -> Result<Runtime> {
    let d = cue_eval::Context::new()
        .compile_files(sources)
        .and_then(|v| v.export())
        .map_err(|e| Error::Bundle(e.to_string()))?;
    runtime_from_data(&d)
}

/// The runtime value types an attribute may name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ValueType<'a> {
    String,
    Number,
    Bool,
    /// Any other type: an error once the variable has a value.
    Unknown(&'a str),
}

/// Rewrites the fields of `src` that carry `@timoni(runtime:…)` attributes whose variable is in
/// `values`. Returns the new source text.
pub fn inject(name: &str, src: &str, values: &BTreeMap<String, String>) -> Result<String> {
    let doc = Document::parse(name, src).map_err(|e| {
        let e = &e.errors()[0];
        match e.positions().first() {
            Some(p) => Error::Bundle(format!(
                "{}:\n    {name}:{}:{}",
                e.message(),
                p.line(),
                p.column()
            )),
            None => Error::Bundle(e.message().to_string()),
        }
    })?;
    let mut edits: Vec<(std::ops::Range<usize>, String)> = Vec::new();
    // Fields come before the fields of their values: a replaced value's own fields are skipped.
    for f in doc.fields() {
        let at = f.value_range();
        if edits
            .iter()
            .any(|(r, _)| r.start <= at.start && at.end <= r.end)
        {
            continue;
        }
        // Only the field's first `@timoni(...)` attribute counts, as in Timoni.
        if let Some(a) = f.attributes().into_iter().find(|a| a.name == "timoni")
            && let Some((ty, var)) = runtime_attr(&a)
            && let Some(value) = values.get(var)
        {
            let text = literal(ty, value, a.text, src, at.start)?;
            edits.push((at, text));
        }
    }
    Ok(doc.replace_values(&edits))
}

/// `(type, VAR)` of a `@timoni(runtime:<type>:<VAR>)` attribute.
fn runtime_attr<'a>(a: &AttrText<'a>) -> Option<(ValueType<'a>, &'a str)> {
    if a.name != "timoni" {
        return None;
    }
    let parts: Vec<&str> = a.body.split(':').collect();
    let [kind, ty, var] = parts.as_slice() else {
        return None;
    };
    if *kind != "runtime" {
        return None;
    }
    let ty = match *ty {
        "string" => ValueType::String,
        "number" => ValueType::Number,
        "bool" => ValueType::Bool,
        other => ValueType::Unknown(other),
    };
    Some((ty, var))
}

/// The CUE literal replacing a field's value.
fn literal(ty: ValueType<'_>, value: &str, attr: &str, src: &str, at: usize) -> Result<String> {
    let fail = |what: &str| {
        Error::Bundle(format!(
            "failed to parse attribute '{attr}': value must be {what}"
        ))
    };
    match ty {
        ValueType::Unknown(other) => Err(Error::Bundle(format!(
            "failed to parse attribute '{attr}', unknown type '{other}' must be string, number or bool"
        ))),
        ValueType::Bool => match value {
            "true" | "false" => Ok(value.to_string()),
            _ => Err(fail("a bool (true or false)")),
        },
        ValueType::Number => {
            if is_number_literal(value) {
                Ok(value.to_string())
            } else {
                Err(fail("a number"))
            }
        }
        ValueType::String if value.contains('\n') && !value.contains('\r') => {
            // A multi-line string, indented one tab deeper than the field's line.
            let line_start = src[..at].rfind('\n').map_or(0, |i| i + 1);
            let indent: String = src[line_start..]
                .chars()
                .take_while(|c| *c == '\t' || *c == ' ')
                .collect();
            let prefix = format!("{indent}\t");
            let mut out = String::from("\"\"\"\n");
            for line in value.split('\n') {
                if !line.is_empty() {
                    // Each line quoted as a one-line string, without its quotes.
                    let mut quoted = String::new();
                    cue_eval::decode::write_cue_string(&mut quoted, line);
                    out.push_str(&prefix);
                    out.push_str(&quoted[1..quoted.len() - 1]);
                }
                out.push('\n');
            }
            out.push_str(&prefix);
            out.push_str("\"\"\"");
            Ok(out)
        }
        ValueType::String => {
            let mut out = String::new();
            cue_eval::decode::write_cue_string(&mut out, value);
            Ok(out)
        }
    }
}

/// Whether `s` is one CUE number literal, optionally signed (`41`, `-4.1e-2`, `0x1f`, `1_000`,
/// `2Mi`).
fn is_number_literal(s: &str) -> bool {
    let body = s.strip_prefix(['-', '+']).unwrap_or(s);
    if body.is_empty() || body.starts_with(['-', '+']) || body.trim() != body {
        return false;
    }
    cue_eval::syntax::is_number_literal(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(kv: &[(&str, &str)]) -> BTreeMap<String, String> {
        kv.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn values_replace_the_field_value_and_missing_ones_leave_it() {
        let src = "bundle: {\n\ta: \"default\" @timoni(runtime:string:A)\n\tb: string @timoni(runtime:string:B)\n\tn: int @timoni(runtime:number:N)\n\tt: bool @timoni(runtime:bool:T)\n\tu?: string @timoni(runtime:string:U)\n}\n";
        let out = inject(
            "b.cue",
            src,
            &vars(&[
                ("A", "x\"y"),
                ("N", "-4.1e-2"),
                ("T", "true"),
                ("U", "user"),
            ]),
        )
        .unwrap();
        insta::assert_snapshot!(out);
    }

    #[test]
    fn multi_line_strings_use_triple_quotes() {
        let out = inject(
            "b.cue",
            "a: {\n\tkey: string @timoni(runtime:string:K)\n}\n",
            &vars(&[("K", "line1\nline2\n")]),
        )
        .unwrap();
        assert_eq!(
            out,
            "a: {\n\tkey: \"\"\"\n\t\tline1\n\t\tline2\n\n\t\t\"\"\" @timoni(runtime:string:K)\n}\n"
        );
        let v = cue_eval::Context::new()
            .compile_file("b.cue", &out)
            .unwrap();
        assert_eq!(
            v.to_json().unwrap(),
            "{\n    \"a\": {\n        \"key\": \"line1\\nline2\\n\"\n    }\n}\n"
        );
    }

    #[test]
    fn multi_line_values_keep_quotes_and_escapes() {
        let src = "a: string @timoni(runtime:string:K)\n";
        let out = inject("b.cue", src, &vars(&[("K", "say \"hi\"\n\tback\\slash")])).unwrap();
        let v = cue_eval::Context::new()
            .compile_file("b.cue", &out)
            .unwrap();
        assert_eq!(
            v.to_json().unwrap(),
            "{\n    \"a\": \"say \\\"hi\\\"\\n\\tback\\\\slash\"\n}\n",
            "{out}"
        );
        // A carriage return keeps the value on one line.
        let out = inject("b.cue", src, &vars(&[("K", "a\r\nb")])).unwrap();
        assert_eq!(out, "a: \"a\\r\\nb\" @timoni(runtime:string:K)\n");
    }

    #[test]
    fn accepted_number_formats() {
        for n in ["41", "-4.1e-2", "0x1f", "1_000", "2Mi", "+3", "0.5"] {
            assert!(is_number_literal(n), "{n}");
        }
        for n in ["", "abc", "1 2", "--1", "1e", "true", "1+1"] {
            assert!(!is_number_literal(n), "{n}");
        }
    }

    #[test]
    fn bad_numbers_and_bools_fail_without_echoing_the_value() {
        let err = inject(
            "b.cue",
            "a: int @timoni(runtime:number:N)\n",
            &vars(&[("N", "s3cr3t")]),
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            err,
            "failed to parse attribute '@timoni(runtime:number:N)': value must be a number"
        );
        let err = inject(
            "b.cue",
            "a: bool @timoni(runtime:bool:B)\n",
            &vars(&[("B", "yes")]),
        )
        .unwrap_err()
        .to_string();
        assert!(!err.contains("yes"), "{err}");
    }

    #[test]
    fn other_attributes_are_ignored() {
        let src = "a: 1 @timoni(runtime:number)\nb: 2 @other(runtime:number:N)\nc: 3 @timoni(update:number:N)\nd: 4 @timoni(other) @timoni(runtime:number:N)\n";
        assert_eq!(inject("b.cue", src, &vars(&[("N", "9")])).unwrap(), src);
    }

    #[test]
    fn unknown_types_fail_only_when_the_variable_is_set() {
        let src = "a: 1 @timoni(runtime:float:N)\n";
        assert_eq!(inject("b.cue", src, &vars(&[])).unwrap(), src);
        assert_eq!(
            inject("b.cue", src, &vars(&[("N", "1")]))
                .unwrap_err()
                .to_string(),
            "failed to parse attribute '@timoni(runtime:float:N)', unknown type 'float' must be string, number or bool"
        );
    }

    #[test]
    fn clusters_select_case_insensitively_in_runtime_order() {
        let rt = load_runtime(&[(
            "r.cue".into(),
            r#"runtime: {
                apiVersion: "v1alpha1"
                name: "fleet"
                clusters: {
                    "staging-1": {group: "staging", kubeContext: "s1"}
                    "prod-eu": {group: "production", kubeContext: "p1"}
                    "prod-us": {group: "production", kubeContext: "p2"}
                }
            }"#
            .into(),
        )])
        .unwrap();
        let names = |cs: Vec<Cluster>| cs.into_iter().map(|c| c.name).collect::<Vec<_>>();
        assert_eq!(names(rt.select("*", "PRODUCTION")), ["prod-eu", "prod-us"]);
        assert_eq!(names(rt.select("Staging-1", "")), ["staging-1"]);
        assert_eq!(names(rt.select("*", "*")).len(), 3);
        assert_eq!(
            rt.select("prod-us", "*")[0].values()["TIMONI_CLUSTER_GROUP"],
            "production"
        );
        assert!(Runtime::implicit().clusters[0].values().is_empty());
    }

    #[test]
    fn a_runtime_must_be_a_struct() {
        let err = load_runtime(&[("r.cue".into(), "runtime: 1".into())]).unwrap_err();
        assert!(
            err.to_string().starts_with("runtime: must be a struct"),
            "{err}"
        );
    }
}
