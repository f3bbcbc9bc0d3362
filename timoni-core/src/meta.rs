//! Object metadata checks done at build time, as the Kubernetes API server would do them:
//! `apiVersion`, `kind` and `metadata.name` present; the name a DNS-1123 subdomain (a path
//! segment for RBAC roles and bindings); the namespace a DNS-1123 label; label keys qualified
//! names and label values at most 63 characters of the allowed alphabet; annotation keys
//! qualified names and all annotations together at most 256 KiB. Messages are Timoni's: the
//! field (`metadata.labels["k"] key`), then the API server's rule, shortened to `must match
//! regex '…'` when the rule is a pattern.

use cue_eval::encode::Data;

const DNS1123_LABEL_MAX: usize = 63;
const DNS1123_SUBDOMAIN_MAX: usize = 253;
const ANNOTATIONS_MAX: usize = 256 * 1024;

/// Checks one object, returning every problem found (empty when valid).
pub fn validate(obj: &Data) -> Vec<String> {
    let api_version = get_str(obj, &["apiVersion"]).unwrap_or("");
    let kind = get_str(obj, &["kind"]).unwrap_or("");
    let name = get_str(obj, &["metadata", "name"]).unwrap_or("");
    let missing: Vec<&str> = [
        ("apiVersion", api_version),
        ("kind", kind),
        ("metadata.name", name),
    ]
    .into_iter()
    .filter(|(_, v)| v.is_empty())
    .map(|(f, _)| f)
    .collect();
    if !missing.is_empty() {
        return vec![format!("missing required field(s) {}", missing.join(", "))];
    }
    let mut errs = Vec::new();
    let rbac = matches!(
        kind,
        "Role" | "ClusterRole" | "RoleBinding" | "ClusterRoleBinding"
    ) && api_version.split_once('/').map(|(g, _)| g)
        == Some("rbac.authorization.k8s.io");
    let problems = if rbac {
        path_segment_name(name)
    } else {
        dns1123_subdomain(name)
    };
    for p in problems {
        errs.push(format!("metadata.name {name:?} {p}"));
    }
    if let Some(ns) = get_str(obj, &["metadata", "namespace"])
        && !ns.is_empty()
    {
        for p in dns1123_label(ns) {
            errs.push(format!("metadata.namespace {ns:?} {p}"));
        }
    }
    if let Some(Data::Struct(labels)) = get(obj, &["metadata", "labels"]) {
        let mut labels: Vec<_> = labels.iter().collect();
        labels.sort_by(|a, b| a.name.cmp(&b.name));
        for f in labels {
            let Data::String(v) = &f.value else {
                errs.push(format!("metadata.labels[{:?}] must be a string", f.name));
                continue;
            };
            for p in qualified_name(&f.name) {
                errs.push(format!("metadata.labels[{:?}] key {p}", f.name));
            }
            for p in label_value(v) {
                errs.push(format!("metadata.labels[{:?}] value {p}", f.name));
            }
        }
    }
    if let Some(Data::Struct(annotations)) = get(obj, &["metadata", "annotations"]) {
        let mut annotations: Vec<_> = annotations.iter().collect();
        annotations.sort_by(|a, b| a.name.cmp(&b.name));
        let mut total = 0;
        for f in annotations {
            let Data::String(v) = &f.value else {
                errs.push(format!(
                    "metadata.annotations[{:?}] must be a string",
                    f.name
                ));
                continue;
            };
            for p in qualified_name(&f.name.to_lowercase()) {
                errs.push(format!("metadata.annotations[{:?}] key {p}", f.name));
            }
            total += f.name.len() + v.len();
        }
        if total > ANNOTATIONS_MAX {
            errs.push(format!(
                "metadata.annotations total size must be at most {ANNOTATIONS_MAX} bytes"
            ));
        }
    }
    errs
}

/// The value at a path of field names.
pub fn get<'a>(d: &'a Data, path: &[&str]) -> Option<&'a Data> {
    let mut cur = d;
    for p in path {
        let Data::Struct(fields) = cur else {
            return None;
        };
        cur = &fields.iter().find(|f| f.name == *p)?.value;
    }
    Some(cur)
}

/// The string at a path of field names.
pub fn get_str<'a>(d: &'a Data, path: &[&str]) -> Option<&'a str> {
    match get(d, path)? {
        Data::String(s) => Some(s),
        _ => None,
    }
}

fn is_lower_alnum(c: u8) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit()
}

fn is_dns1123_label(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && is_lower_alnum(b[0])
        && is_lower_alnum(b[b.len() - 1])
        && b.iter().all(|&c| is_lower_alnum(c) || c == b'-')
}

fn dns1123_label(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    if s.len() > DNS1123_LABEL_MAX {
        out.push(format!(
            "must be no more than {DNS1123_LABEL_MAX} characters"
        ));
    }
    if !is_dns1123_label(s) {
        out.push(format!("must match regex '{DNS1123_LABEL_RE}'"));
    }
    out
}

fn dns1123_subdomain(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    if s.len() > DNS1123_SUBDOMAIN_MAX {
        out.push(format!(
            "must be no more than {DNS1123_SUBDOMAIN_MAX} characters"
        ));
    }
    if !s.split('.').all(is_dns1123_label) {
        out.push(format!("must match regex '{DNS1123_SUBDOMAIN_RE}'"));
    }
    out
}

fn path_segment_name(s: &str) -> Vec<String> {
    if s == "." || s == ".." {
        return vec![format!("may not be '{s}'")];
    }
    let mut out = Vec::new();
    for bad in ["/", "%"] {
        if s.contains(bad) {
            out.push(format!("may not contain '{bad}'"));
        }
    }
    out
}

fn is_qualified_part(s: &str) -> bool {
    let b = s.as_bytes();
    let alnum = |c: u8| c.is_ascii_alphanumeric();
    !b.is_empty()
        && alnum(b[0])
        && alnum(b[b.len() - 1])
        && b.iter()
            .all(|&c| alnum(c) || matches!(c, b'-' | b'_' | b'.'))
}

const QUALIFIED_RE: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const LABEL_VALUE_RE: &str = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
const DNS1123_LABEL_RE: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const DNS1123_SUBDOMAIN_RE: &str =
    "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";

fn qualified_name(s: &str) -> Vec<String> {
    let parts: Vec<&str> = s.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                return vec!["prefix part must be non-empty".into()];
            }
            // Timoni shortens messages carrying a regex to "must match regex '…'".
            let mut out: Vec<String> = dns1123_subdomain(prefix)
                .into_iter()
                .map(|m| {
                    if m.starts_with("must match") {
                        m
                    } else {
                        format!("prefix part {m}")
                    }
                })
                .collect();
            out.extend(qualified_name(name));
            return out;
        }
        _ => {
            return vec![format!("must match regex '{QUALIFIED_RE}'")];
        }
    };
    let mut out = Vec::new();
    if name.is_empty() {
        out.push("name part must be non-empty".into());
        return out;
    }
    if name.len() > DNS1123_LABEL_MAX {
        out.push(format!(
            "name part must be no more than {DNS1123_LABEL_MAX} characters"
        ));
    }
    if !is_qualified_part(name) {
        out.push(format!("must match regex '{QUALIFIED_RE}'"));
    }
    out
}

fn label_value(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    if s.len() > DNS1123_LABEL_MAX {
        out.push(format!(
            "must be no more than {DNS1123_LABEL_MAX} characters"
        ));
    }
    if !s.is_empty() && !is_qualified_part(s) {
        out.push(format!("must match regex '{LABEL_VALUE_RE}'"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use cue_eval::encode::Field;

    fn obj(api: &str, kind: &str, name: &str, labels: &[(&str, &str)]) -> Data {
        let labels = labels
            .iter()
            .map(|(k, v)| Field::new(*k, Data::string(*v)))
            .collect();
        Data::Struct(vec![
            Field::new("apiVersion", Data::string(api)),
            Field::new("kind", Data::string(kind)),
            Field::new(
                "metadata",
                Data::Struct(vec![
                    Field::new("name", Data::string(name)),
                    Field::new("namespace", Data::string("default")),
                    Field::new("labels", Data::Struct(labels)),
                ]),
            ),
        ])
    }

    #[test]
    fn valid_objects_pass() {
        let o = obj(
            "v1",
            "ConfigMap",
            "web.example-1",
            &[("app.kubernetes.io/name", "web")],
        );
        assert_eq!(validate(&o), Vec::<String>::new());
    }

    #[test]
    fn names_must_be_dns_subdomains_except_for_rbac() {
        assert_eq!(
            validate(&obj("v1", "ConfigMap", "Test_App", &[])),
            [
                r#"metadata.name "Test_App" must match regex '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'"#
            ]
        );
        let rbac = "rbac.authorization.k8s.io/v1";
        assert!(validate(&obj(rbac, "ClusterRole", "system:web", &[])).is_empty());
        assert_eq!(
            validate(&obj(rbac, "Role", "a/b", &[])),
            [r#"metadata.name "a/b" may not contain '/'"#]
        );
        // A Role of another API group is not an RBAC role.
        assert_eq!(validate(&obj("x.io/v1", "Role", "a:b", &[])).len(), 1);
    }

    #[test]
    fn labels_are_checked_in_key_order_and_errors_aggregate() {
        let long = "x".repeat(64);
        let errs = validate(&obj(
            "v1",
            "ConfigMap",
            "ok",
            &[("k", &long), ("bad key!", "v")],
        ));
        assert_eq!(
            errs,
            [
                r#"metadata.labels["bad key!"] key must match regex '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'"#,
                r#"metadata.labels["k"] value must be no more than 63 characters"#,
            ]
        );
    }

    #[test]
    fn missing_fields_are_one_error() {
        assert_eq!(
            validate(&obj("", "ConfigMap", "", &[])),
            ["missing required field(s) apiVersion, metadata.name"]
        );
    }

    #[test]
    fn annotations_are_capped_at_256_kib() {
        let mut o = obj("v1", "ConfigMap", "ok", &[]);
        if let Data::Struct(f) = &mut o
            && let Data::Struct(m) = &mut f[2].value
        {
            m.push(Field::new(
                "annotations",
                Data::Struct(vec![Field::new(
                    "a",
                    Data::string("x".repeat(ANNOTATIONS_MAX)),
                )]),
            ));
        }
        assert_eq!(
            validate(&o),
            ["metadata.annotations total size must be at most 262144 bytes"]
        );
    }
}
