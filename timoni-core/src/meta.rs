//! Object metadata checks done at build time, as the Kubernetes API server would do them:
//! `apiVersion`, `kind` and `metadata.name` present; the name a DNS-1123 subdomain (a path
//! segment for RBAC roles and bindings); the namespace a DNS-1123 label; label keys qualified
//! names and label values at most 63 characters of the allowed alphabet; annotation keys
//! qualified names and all annotations together at most 256 KiB. Messages follow the API
//! server's wording, prefixed by the field path.

use cue_eval::encode::Data;

const DNS1123_LABEL_MAX: usize = 63;
const DNS1123_SUBDOMAIN_MAX: usize = 253;
const ANNOTATIONS_MAX: usize = 256 * 1024;

/// Checks one object, returning every problem found (empty when valid).
pub fn validate(obj: &Data) -> Vec<String> {
    let mut errs = Vec::new();
    let api_version = get_str(obj, &["apiVersion"]);
    let kind = get_str(obj, &["kind"]);
    if api_version.is_none_or(str::is_empty) {
        errs.push("apiVersion: Required value: apiVersion must be set".to_string());
    }
    if kind.is_none_or(str::is_empty) {
        errs.push("kind: Required value: kind must be set".to_string());
    }
    match get_str(obj, &["metadata", "name"]) {
        None | Some("") => errs.push("metadata.name: Required value: name is required".into()),
        Some(name) => {
            let rbac = matches!(
                kind,
                Some("Role" | "ClusterRole" | "RoleBinding" | "ClusterRoleBinding")
            );
            let problems = if rbac {
                path_segment_name(name)
            } else {
                dns1123_subdomain(name)
            };
            for p in problems {
                errs.push(format!("metadata.name: Invalid value: {name:?}: {p}"));
            }
        }
    }
    if let Some(ns) = get_str(obj, &["metadata", "namespace"]) {
        for p in dns1123_label(ns) {
            errs.push(format!("metadata.namespace: Invalid value: {ns:?}: {p}"));
        }
    }
    if let Some(Data::Struct(labels)) = get(obj, &["metadata", "labels"]) {
        for f in labels {
            for p in qualified_name(&f.name) {
                errs.push(format!("metadata.labels: Invalid value: {:?}: {p}", f.name));
            }
            match &f.value {
                Data::String(v) => {
                    for p in label_value(v) {
                        errs.push(format!("metadata.labels: Invalid value: {v:?}: {p}"));
                    }
                }
                _ => errs.push(format!(
                    "metadata.labels.{}: Invalid value: label values must be strings",
                    f.name
                )),
            }
        }
    }
    if let Some(Data::Struct(annotations)) = get(obj, &["metadata", "annotations"]) {
        let mut total = 0;
        for f in annotations {
            for p in qualified_name(&f.name.to_lowercase()) {
                errs.push(format!(
                    "metadata.annotations: Invalid value: {:?}: {p}",
                    f.name
                ));
            }
            total += f.name.len();
            match &f.value {
                Data::String(v) => total += v.len(),
                _ => errs.push(format!(
                    "metadata.annotations.{}: Invalid value: annotation values must be strings",
                    f.name
                )),
            }
        }
        if total > ANNOTATIONS_MAX {
            errs.push(format!(
                "metadata.annotations: Too long: may not be more than {ANNOTATIONS_MAX} bytes"
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
        out.push("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')".into());
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
        out.push("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')".into());
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

const QUALIFIED_MSG: &str = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

fn qualified_name(s: &str) -> Vec<String> {
    let parts: Vec<&str> = s.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                return vec!["prefix part must be non-empty".into()];
            }
            let mut out: Vec<String> = dns1123_subdomain(prefix)
                .into_iter()
                .map(|m| format!("prefix part {m}"))
                .collect();
            out.extend(qualified_name(name));
            return out;
        }
        _ => {
            return vec!["a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')".into()];
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
        out.push(QUALIFIED_MSG.into());
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
        out.push("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')".into());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use cue_eval::encode::Field;

    fn obj(kind: &str, name: &str, labels: &[(&str, &str)]) -> Data {
        let labels = labels
            .iter()
            .map(|(k, v)| Field::new(*k, Data::string(*v)))
            .collect();
        Data::Struct(vec![
            Field::new("apiVersion", Data::string("v1")),
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
            "ConfigMap",
            "web.example-1",
            &[("app.kubernetes.io/name", "web")],
        );
        assert_eq!(validate(&o), Vec::<String>::new());
    }

    #[test]
    fn names_must_be_dns_subdomains_except_for_rbac() {
        assert_eq!(validate(&obj("ConfigMap", "Web", &[])).len(), 1);
        assert!(validate(&obj("ClusterRole", "system:web", &[])).is_empty());
        assert_eq!(
            validate(&obj("Role", "a/b", &[])),
            vec![r#"metadata.name: Invalid value: "a/b": may not contain '/'"#]
        );
    }

    #[test]
    fn labels_are_checked_and_errors_aggregate() {
        let long = "x".repeat(64);
        let errs = validate(&obj("ConfigMap", "ok", &[("bad key!", "v"), ("k", &long)]));
        assert_eq!(errs.len(), 2, "{errs:?}");
        assert!(errs[1].contains("must be no more than 63 characters"));
    }

    #[test]
    fn missing_fields_are_required() {
        let errs = validate(&Data::Struct(vec![]));
        assert_eq!(errs.len(), 3, "{errs:?}");
    }

    #[test]
    fn annotations_are_capped_at_256_kib() {
        let mut o = obj("ConfigMap", "ok", &[]);
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
        assert!(validate(&o)[0].contains("Too long"));
    }
}
