//! Kubernetes API schemas to CUE packages shaped like Timoni's vendored ones
//! (`cue.mod/gen/k8s.io/api/<group>/<version>`, `k8s.io/apimachinery/pkg/...`): one package per
//! Go package of the API, definitions named after the Go types (`#Deployment`, `#ObjectMeta`),
//! references across packages through the aliases Timoni's modules use (`corev1`, `appsv1`,
//! `metav1`, `resource`, `intstr`, `runtime`).
//!
//! The input is a JSON Schema document with every definition under `$defs` (or
//! `definitions`), keyed by the OpenAPI name `io.k8s.api.apps.v1.Deployment`, such as the
//! `_definitions.json` files of the PyPI package `kubernetes-validate`. Its `["T", "null"]`
//! types lose their `null` (Kubernetes omits unset fields rather than nulling them),
//! `IntOrString` and `Quantity` become `int | string` and `number | string`, objects without
//! properties stay open, and kinds get concrete `apiVersion` and `kind`.
//!
//! Only the packages asked for and the packages they reference are generated.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use cue_eval::decode::{self, Data, Field};

use super::schema::{Converter, comment, description, get};

/// One generated package.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Package {
    /// The import path, e.g. `k8s.io/api/core/v1`; also the directory under `cue.mod/gen`.
    pub import_path: String,
    /// The package name, the last element of the import path.
    pub name: String,
    /// The formatted CUE source of `types_go_gen.cue`.
    pub content: String,
}

/// Why generation failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum K8sError {
    /// The document is not JSON or has no definitions.
    Input(String),
    /// A requested package has no definition.
    UnknownPackage(String),
    /// The generated text did not parse back (a bug of the generator).
    Generated(String),
}

impl fmt::Display for K8sError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            K8sError::Input(m) => write!(f, "reading the definitions: {m}"),
            K8sError::UnknownPackage(p) => write!(f, "no definition belongs to package {p}"),
            K8sError::Generated(m) => write!(f, "generated CUE does not parse: {m}"),
        }
    }
}

impl std::error::Error for K8sError {}

/// Options of [`generate`].
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Keep the descriptions as doc comments (several times the size).
    pub docs: bool,
    /// Written in each file's header, e.g. `kubernetes-validate 1.37.0, Kubernetes 1.34.0`.
    pub source: String,
}

/// The import path and definition name of an OpenAPI definition key:
/// `io.k8s.api.apps.v1.Deployment` is `("k8s.io/api/apps/v1", "Deployment")`.
pub fn split_key(key: &str) -> Option<(String, String)> {
    let rest = key.strip_prefix("io.k8s.")?;
    let (pkg, name) = rest.rsplit_once('.')?;
    Some((
        format!("k8s.io/{}", pkg.replace('.', "/")),
        name.to_string(),
    ))
}

/// The alias an import path gets: `corev1`, `appsv1`, `metav1`, or the last element.
pub fn alias(import_path: &str) -> String {
    let parts: Vec<&str> = import_path.split('/').collect();
    match parts.as_slice() {
        ["k8s.io", "api", group, version] => {
            let g: String = group.split('.').next().unwrap_or(group).to_string();
            format!("{g}{version}")
        }
        [.., "meta", version] => format!("meta{version}"),
        [.., last] => (*last).to_string(),
        [] => String::new(),
    }
}

/// The packages Timoni's schema artifacts hold for a Kubernetes version: every GA API group
/// version (`k8s.io/api/<group>/v<N>`), the CustomResourceDefinition API
/// (`k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1`) and `meta/v1`, sorted. Given to
/// [`generate`], the alpha and beta packages they reference come along.
pub fn ga_packages(definitions_json: &str) -> Result<Vec<String>, K8sError> {
    let doc = decode::json(definitions_json).map_err(|e| K8sError::Input(e.to_string()))?;
    let defs = match get(&doc, "$defs").or_else(|| get(&doc, "definitions")) {
        Some(Data::Struct(fields)) => fields,
        _ => return Err(K8sError::Input("no $defs or definitions object".into())),
    };
    let ga_version = |v: &str| {
        v.strip_prefix('v')
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    };
    let mut out = BTreeSet::new();
    for f in defs {
        let Some((ip, _)) = split_key(&f.name) else {
            continue;
        };
        let parts: Vec<&str> = ip.split('/').collect();
        let keep = match parts.as_slice() {
            ["k8s.io", "api", _, version] => ga_version(version),
            _ => {
                ip == "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
                    || ip == "k8s.io/apimachinery/pkg/apis/meta/v1"
            }
        };
        if keep {
            out.insert(ip);
        }
    }
    Ok(out.into_iter().collect())
}

/// Generates `packages` (import paths) and every package they reference, sorted by import path.
pub fn generate(
    definitions_json: &str,
    packages: &[&str],
    opts: &Options,
) -> Result<Vec<Package>, K8sError> {
    let doc = decode::json(definitions_json).map_err(|e| K8sError::Input(e.to_string()))?;
    let defs = match get(&doc, "$defs").or_else(|| get(&doc, "definitions")) {
        Some(Data::Struct(fields)) => fields,
        _ => return Err(K8sError::Input("no $defs or definitions object".into())),
    };
    let by_key: BTreeMap<&str, &Data> = defs.iter().map(|f| (f.name.as_str(), &f.value)).collect();

    // The definitions of the wanted packages, then everything they reference.
    let mut wanted: BTreeSet<String> = BTreeSet::new();
    for p in packages {
        let before = wanted.len();
        for key in by_key.keys() {
            if split_key(key).is_some_and(|(ip, _)| ip == *p) {
                wanted.insert((*key).to_string());
            }
        }
        if wanted.len() == before {
            return Err(K8sError::UnknownPackage((*p).to_string()));
        }
    }
    let mut queue: Vec<String> = wanted.iter().cloned().collect();
    while let Some(key) = queue.pop() {
        if let Some(d) = by_key.get(key.as_str()) {
            let mut refs = Vec::new();
            collect_refs(d, &mut refs);
            for r in refs {
                if by_key.contains_key(r.as_str()) && wanted.insert(r.clone()) {
                    queue.push(r);
                }
            }
        }
    }
    let mut by_package: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    for key in &wanted {
        if let Some((ip, name)) = split_key(key) {
            by_package.entry(ip).or_default().push((name, key.clone()));
        }
    }

    let mut out = Vec::new();
    for (ip, mut members) in by_package {
        members.sort();
        out.push(package(&ip, &members, &by_key, opts)?);
    }
    Ok(out)
}

fn package(
    import_path: &str,
    members: &[(String, String)],
    by_key: &BTreeMap<&str, &Data>,
    opts: &Options,
) -> Result<Package, K8sError> {
    let name = import_path
        .rsplit('/')
        .next()
        .unwrap_or(import_path)
        .to_string();
    let imports = std::cell::RefCell::new(BTreeSet::<String>::new());
    let here = import_path.to_string();
    let mut body = String::new();
    {
        let mut conv = Converter::with_refs(Box::new(|r: &str| {
            let key = r.rsplit('/').next()?;
            let (ip, def) = split_key(key)?;
            if ip == here {
                Some(format!("#{def}"))
            } else {
                let a = alias(&ip);
                imports.borrow_mut().insert(ip);
                Some(format!("{a}.#{def}"))
            }
        }));
        for (def, key) in members {
            let schema = normalize(by_key[key.as_str()], opts.docs);
            let expr = definition(&mut conv, &schema);
            body.push('\n');
            if let Some(doc) = description(&schema) {
                body.push_str(&comment(&doc));
            }
            body.push_str(&format!("#{def}: {expr}\n"));
        }
        for std in &conv.std_imports {
            imports.borrow_mut().insert((*std).to_string());
        }
        if !conv.unresolved.is_empty() {
            return Err(K8sError::Input(format!(
                "{import_path}: unresolvable references {:?}",
                conv.unresolved
            )));
        }
    }
    let mut text = format!(
        "// Code generated by timoni's k8s-schemagen from {}. DO NOT EDIT.\n\npackage {name}\n",
        opts.source
    );
    let imports = imports.into_inner();
    if !imports.is_empty() {
        text.push_str("\nimport (\n");
        for ip in &imports {
            if ip.contains('/') {
                text.push_str(&format!("{} \"{ip}\"\n", alias(ip)));
            } else {
                text.push_str(&format!("\"{ip}\"\n"));
            }
        }
        text.push_str(")\n");
    }
    text.push_str(&body);
    let content = cue_eval::format_source(&text)
        .map_err(|errs| K8sError::Generated(format!("{import_path}: {:?}", errs.first())))?;
    Ok(Package {
        import_path: import_path.to_string(),
        name,
        content,
    })
}

/// A definition: kinds (with `x-kubernetes-group-version-kind`) get concrete `apiVersion` and
/// `kind` fields in front of their other fields.
fn definition(conv: &mut Converter<'_>, schema: &Data) -> String {
    let gvk = match get(schema, "x-kubernetes-group-version-kind") {
        Some(Data::List(xs)) if xs.len() == 1 => Some(&xs[0]),
        _ => None,
    };
    let expr = conv.expr(schema, false);
    let Some(gvk) = gvk else { return expr };
    let s = |k| match get(gvk, k) {
        Some(Data::String(v)) => v.clone(),
        _ => String::new(),
    };
    let (group, version, kind) = (s("group"), s("version"), s("kind"));
    let api_version = if group.is_empty() {
        version
    } else {
        format!("{group}/{version}")
    };
    let mut q = String::new();
    decode::write_cue_string(&mut q, &api_version);
    let mut k = String::new();
    decode::write_cue_string(&mut k, &kind);
    // The struct's `apiVersion?:` and `kind?:` lines become concrete regular fields.
    expr.lines()
        .map(|l| {
            if l.starts_with("apiVersion?:") {
                format!("apiVersion: {q}")
            } else if l.starts_with("kind?:") {
                format!("kind: {k}")
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn collect_refs(d: &Data, out: &mut Vec<String>) {
    match d {
        Data::Struct(fields) => {
            for f in fields {
                if f.name == "$ref" {
                    if let Data::String(r) = &f.value
                        && let Some(key) = r.rsplit('/').next()
                    {
                        out.push(key.to_string());
                    }
                } else {
                    collect_refs(&f.value, out);
                }
            }
        }
        Data::List(xs) => xs.iter().for_each(|x| collect_refs(x, out)),
        _ => {}
    }
}

/// The schema as the converter should see it: nullable types lose `null`, a `oneOf` of bare
/// types becomes a type list (`int | string`), property-less objects keep unknown fields, and
/// descriptions go unless `docs`.
fn normalize(d: &Data, docs: bool) -> Data {
    let Data::Struct(fields) = d else {
        return d.clone();
    };
    let mut out: Vec<Field> = Vec::with_capacity(fields.len());
    for f in fields {
        let value = match f.name.as_str() {
            "description" if !docs => continue,
            // Enum values and examples are data, not schemas.
            "enum" | "default" | "example" | "x-kubernetes-group-version-kind" => f.value.clone(),
            "type" => match &f.value {
                Data::List(types) => {
                    let kept: Vec<Data> = types
                        .iter()
                        .filter(|t| !matches!(t, Data::String(s) if s == "null"))
                        .cloned()
                        .collect();
                    if kept.len() == 1 {
                        kept[0].clone()
                    } else {
                        Data::List(kept)
                    }
                }
                other => other.clone(),
            },
            "properties" => match &f.value {
                Data::Struct(props) => Data::Struct(
                    props
                        .iter()
                        .map(|p| Field {
                            name: p.name.clone(),
                            value: normalize(&p.value, docs),
                            yaml_tag: None,
                        })
                        .collect(),
                ),
                other => other.clone(),
            },
            _ => normalize_any(&f.value, docs),
        };
        out.push(Field {
            name: f.name.clone(),
            value,
            yaml_tag: None,
        });
    }
    let mut s = Data::Struct(out);
    // `oneOf: [{type: A}, {type: B}]` → `type: [A, B]`.
    if let Some(Data::List(branches)) = get(&s, "oneOf") {
        let types: Option<Vec<Data>> = branches
            .iter()
            .map(|b| match b {
                Data::Struct(bf) if bf.len() == 1 && bf[0].name == "type" => {
                    Some(bf[0].value.clone())
                }
                _ => None,
            })
            .collect();
        if let (Some(types), Data::Struct(fs)) = (types, &mut s) {
            fs.retain(|f| f.name != "oneOf");
            fs.push(Field {
                name: "type".into(),
                value: Data::List(types),
                yaml_tag: None,
            });
        }
    }
    let is_object = matches!(get(&s, "type"), Some(Data::String(t)) if t == "object");
    if is_object
        && get(&s, "properties").is_none()
        && get(&s, "additionalProperties").is_none()
        && let Data::Struct(fs) = &mut s
    {
        fs.push(Field {
            name: "x-kubernetes-preserve-unknown-fields".into(),
            value: Data::Bool(true),
            yaml_tag: None,
        });
    }
    s
}

fn normalize_any(d: &Data, docs: bool) -> Data {
    match d {
        Data::Struct(_) => normalize(d, docs),
        Data::List(xs) => Data::List(xs.iter().map(|x| normalize_any(x, docs)).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_aliases() {
        assert_eq!(
            split_key("io.k8s.api.apps.v1.Deployment"),
            Some(("k8s.io/api/apps/v1".into(), "Deployment".into()))
        );
        assert_eq!(alias("k8s.io/api/core/v1"), "corev1");
        assert_eq!(alias("k8s.io/api/networking.k8s.io/v1"), "networkingv1");
        assert_eq!(alias("k8s.io/apimachinery/pkg/apis/meta/v1"), "metav1");
        assert_eq!(alias("k8s.io/apimachinery/pkg/util/intstr"), "intstr");
        assert_eq!(split_key("com.example.Foo"), None);
    }

    const DEFS: &str = r##"{"$defs": {
      "io.k8s.api.apps.v1.Thing": {
        "description": "A thing.",
        "type": ["object", "null"],
        "required": ["spec"],
        "properties": {
          "apiVersion": {"type": ["string", "null"], "enum": ["apps/v1"]},
          "kind": {"type": ["string", "null"], "enum": ["Thing"]},
          "metadata": {"$ref": "#/$defs/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"},
          "spec": {"type": ["object", "null"], "properties": {
            "port": {"$ref": "#/$defs/io.k8s.apimachinery.pkg.util.intstr.IntOrString"},
            "raw": {"type": ["object", "null"]},
            "tags": {"type": ["array", "null"], "items": {"type": ["string", "null"]}}
          }}
        },
        "x-kubernetes-group-version-kind": [{"group": "apps", "kind": "Thing", "version": "v1"}]
      },
      "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta": {
        "type": ["object", "null"],
        "properties": {"name": {"type": ["string", "null"]}}
      },
      "io.k8s.apimachinery.pkg.util.intstr.IntOrString": {
        "oneOf": [{"type": ["string", "null"]}, {"type": ["integer", "null"]}]
      },
      "io.k8s.api.batch.v1.Unrelated": {"type": "object"}
    }}"##;

    #[test]
    fn ga_packages_are_the_stable_api_groups_and_meta() {
        let defs = r#"{"definitions": {
          "io.k8s.api.batch.v1.Job": {},
          "io.k8s.api.batch.v1beta1.CronJob": {},
          "io.k8s.api.resource.v1alpha3.DeviceClass": {},
          "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta": {},
          "io.k8s.apimachinery.pkg.util.intstr.IntOrString": {},
          "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition": {},
          "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIService": {}
        }}"#;
        assert_eq!(
            ga_packages(defs).unwrap(),
            [
                "k8s.io/api/batch/v1",
                "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1",
                "k8s.io/apimachinery/pkg/apis/meta/v1",
            ]
        );
    }

    #[test]
    fn generates_the_closure_of_the_wanted_packages() {
        let opts = Options {
            docs: true,
            source: "a test".into(),
        };
        let pkgs = generate(DEFS, &["k8s.io/api/apps/v1"], &opts).unwrap();
        let paths: Vec<&str> = pkgs.iter().map(|p| p.import_path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "k8s.io/api/apps/v1",
                "k8s.io/apimachinery/pkg/apis/meta/v1",
                "k8s.io/apimachinery/pkg/util/intstr"
            ]
        );
        assert_eq!(
            pkgs[0].content,
            "// Code generated by timoni's k8s-schemagen from a test. DO NOT EDIT.

package v1

import (
\tmetav1 \"k8s.io/apimachinery/pkg/apis/meta/v1\"
\tintstr \"k8s.io/apimachinery/pkg/util/intstr\"
)

// A thing.
#Thing: {
\tapiVersion: \"apps/v1\"
\tkind:       \"Thing\"
\tmetadata?:  metav1.#ObjectMeta
\tspec!: {
\t\tport?: intstr.#IntOrString
\t\traw?: {
\t\t\t...
\t\t}
\t\ttags?: [...string]
\t}
}
"
        );
        assert!(
            pkgs[2].content.contains("#IntOrString: string | int\n"),
            "{}",
            pkgs[2].content
        );
        assert!(matches!(
            generate(DEFS, &["k8s.io/api/nope/v1"], &opts),
            Err(K8sError::UnknownPackage(_))
        ));
    }
}
