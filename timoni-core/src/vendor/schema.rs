//! OpenAPI v3 / JSON-Schema nodes (as decoded [`Data`]) to CUE expression text, in the shape
//! Timoni's `mod vendor crd` writes (CUE's OpenAPI decoder followed by an evaluation and an
//! export): sorted properties, `name!:` for required and `name?:` for optional fields,
//! `matchN(1, [...])` for `oneOf`, `matchN(>=1, [...])` for `anyOf`, `matchN(0, [...])` for `not`,
//! `strings.MaxRunes`/`MinRunes` and `=~` for string bounds and patterns, `list.MaxItems` for
//! array bounds, enum disjunctions, and `...` only where `x-kubernetes-preserve-unknown-fields`
//! asks for it. Defaults are dropped, as Timoni's export drops them.
//!
//! The text is not indented; callers run it through [`cue_eval::format_source`], which indents
//! and aligns it as `cue fmt` does.

use std::collections::BTreeSet;

use cue_eval::decode::{Data, write_cue_string};

/// The constraint an untyped schema with object keywords puts on non-objects: none.
const ANY_NON_OBJECT: &str = "null | bool | number | string | [...] | ";

/// Resolves a `$ref` to a CUE expression (for example `metav1.#ObjectMeta`), registering
/// whatever import it needs. `None` means the reference cannot be resolved.
pub type RefResolver<'a> = dyn FnMut(&str) -> Option<String> + 'a;

/// A converter: the imports the produced expressions need, and the `$ref` resolver.
pub struct Converter<'a> {
    /// Standard-library packages used so far (`strings`, `list`).
    pub std_imports: BTreeSet<&'static str>,
    refs: Option<Box<RefResolver<'a>>>,
    /// Unresolvable references met so far, reported by the caller.
    pub unresolved: Vec<String>,
}

impl Default for Converter<'_> {
    fn default() -> Self {
        Converter::new()
    }
}

impl<'a> Converter<'a> {
    pub fn new() -> Self {
        Converter {
            std_imports: BTreeSet::new(),
            refs: None,
            unresolved: Vec::new(),
        }
    }

    /// A converter that resolves `$ref`s with `resolve`.
    pub fn with_refs(resolve: Box<RefResolver<'a>>) -> Self {
        Converter {
            refs: Some(resolve),
            ..Converter::new()
        }
    }

    /// The CUE expression for schema `s`. `known_object` says the value is already known to be
    /// an object (a branch of a logical keyword under `type: object`).
    pub fn expr(&mut self, s: &Data, known_object: bool) -> String {
        let Data::Struct(_) = s else {
            return "_".to_string();
        };
        if let Some(Data::String(r)) = get(s, "$ref") {
            let resolved = match self.refs.as_mut() {
                Some(resolve) => resolve(r),
                None => None,
            };
            return match resolved {
                Some(e) => e,
                None => {
                    self.unresolved.push(r.clone());
                    "_".to_string()
                }
            };
        }
        let ty = match get(s, "type") {
            Some(Data::String(t)) => Some(t.as_str()),
            _ => None,
        };
        let is_object_type = ty == Some("object");
        let mut logical = self.logical(s, known_object || is_object_type);
        let object_keywords = ["properties", "required", "additionalProperties"]
            .iter()
            .any(|k| get(s, k).is_some())
            || preserves_unknown(s) && is_object_type;

        let type_list: Option<Vec<&str>> = match get(s, "type") {
            Some(Data::List(ts)) => ts
                .iter()
                .map(|t| match t {
                    Data::String(t) => Some(t.as_str()),
                    _ => None,
                })
                .collect(),
            _ => None,
        };
        let base: Option<String> = if let Some(values) = enum_values(s) {
            Some(values)
        } else if let Some(types) = type_list {
            // `type: [A, B]`: a disjunction of the types, each with its own keywords.
            let parts: Vec<String> = types.iter().filter_map(|t| self.typed(t, s)).collect();
            (!parts.is_empty()).then(|| parts.join(" | "))
        } else {
            match ty {
                Some(
                    t @ ("string" | "integer" | "number" | "boolean" | "array" | "object" | "null"),
                ) => self.typed(t, s),
                _ if object_keywords => {
                    let st = self.object(s);
                    if known_object {
                        Some(st)
                    } else if logical.is_empty() {
                        Some(format!("{ANY_NON_OBJECT}{st}"))
                    } else {
                        Some(format!("({ANY_NON_OBJECT}{st})"))
                    }
                }
                _ if known_object && !logical.is_empty() => Some("{}".to_string()),
                _ => None,
            }
        };
        let mut e = match base {
            Some(b) => {
                logical.push(b);
                logical.join(" & ")
            }
            None if logical.is_empty() => "_".to_string(),
            None => logical.join(" & "),
        };
        if matches!(get(s, "nullable"), Some(Data::Bool(true))) && e != "_" {
            e = format!("null | {e}");
        }
        e
    }

    /// The expression of one JSON-Schema type with the keywords of `s` that apply to it.
    fn typed(&mut self, t: &str, s: &Data) -> Option<String> {
        Some(match t {
            "string" => self.string(s),
            "integer" => integer(s),
            "number" => number(s),
            "boolean" => "bool".to_string(),
            "array" => self.array(s),
            "object" => self.object(s),
            "null" => "null".to_string(),
            _ => return None,
        })
    }

    /// `allOf`, `oneOf`, `anyOf` and `not`, as `matchN` calls.
    fn logical(&mut self, s: &Data, known_object: bool) -> Vec<String> {
        let mut out = Vec::new();
        for (key, count) in [
            ("allOf", None),
            ("oneOf", Some("1")),
            ("anyOf", Some(">=1")),
        ] {
            if let Some(Data::List(items)) = get(s, key) {
                let branches: Vec<String> =
                    items.iter().map(|b| self.expr(b, known_object)).collect();
                let n = count.map_or_else(|| branches.len().to_string(), str::to_string);
                out.push(format!("matchN({n}, [{}])", branches.join(", ")));
            }
        }
        if let Some(not) = get(s, "not") {
            out.push(format!("matchN(0, [{}])", self.expr(not, false)));
        }
        out
    }

    fn string(&mut self, s: &Data) -> String {
        let mut runes = Vec::new();
        if let Some(n) = uint_of(get(s, "maxLength")) {
            runes.push(format!("strings.MaxRunes({n})"));
        }
        if let Some(n) = uint_of(get(s, "minLength")) {
            runes.push(format!("strings.MinRunes({n})"));
        }
        if !runes.is_empty() {
            self.std_imports.insert("strings");
        }
        let pattern = match get(s, "pattern") {
            Some(Data::String(p)) => {
                let mut q = String::from("=~");
                write_cue_string(&mut q, p);
                Some(q)
            }
            _ => None,
        };
        match (runes.is_empty(), pattern) {
            (true, None) => "string".to_string(),
            (true, Some(p)) => p,
            (false, None) => runes.join(" & "),
            (false, Some(p)) => format!("{} & {{\n{p}\n}}", runes.join(" & ")),
        }
    }

    fn array(&mut self, s: &Data) -> String {
        let mut parts = Vec::new();
        if let Some(n) = uint_of(get(s, "maxItems")) {
            parts.push(format!("list.MaxItems({n})"));
        }
        if let Some(n) = uint_of(get(s, "minItems")) {
            parts.push(format!("list.MinItems({n})"));
        }
        if !parts.is_empty() {
            self.std_imports.insert("list");
        }
        let elem = match get(s, "items") {
            Some(items @ Data::Struct(_)) => {
                let e = self.expr(items, false);
                if e == "_" { String::new() } else { e }
            }
            _ => String::new(),
        };
        parts.push(format!("[...{elem}]"));
        parts.join(" & ")
    }

    /// A struct literal: properties (sorted), required names without a property, then the
    /// pattern constraint of `additionalProperties` and `...` when unknown fields are kept.
    fn object(&mut self, s: &Data) -> String {
        let required: Vec<&str> = match get(s, "required") {
            Some(Data::List(xs)) => xs
                .iter()
                .filter_map(|x| match x {
                    Data::String(n) => Some(n.as_str()),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        };
        let mut decls: Vec<(String, Option<String>)> = Vec::new();
        let mut seen = BTreeSet::new();
        if let Some(Data::Struct(props)) = get(s, "properties") {
            let mut props: Vec<_> = props.iter().collect();
            props.sort_by(|a, b| a.name.cmp(&b.name));
            for p in props {
                if !seen.insert(p.name.as_str()) {
                    continue;
                }
                let marker = if required.contains(&p.name.as_str()) {
                    "!"
                } else {
                    "?"
                };
                let value = self.expr(&p.value, false);
                decls.push((
                    format!("{}{marker}: {value}", label(&p.name)),
                    description(&p.value),
                ));
            }
        }
        for r in &required {
            if seen.insert(r) {
                decls.push((format!("{}!: _", label(r)), None));
            }
        }
        match get(s, "additionalProperties") {
            Some(ap @ Data::Struct(_)) => {
                let value = self.expr(ap, false);
                decls.push((format!("[string]: {value}"), None));
            }
            Some(Data::Bool(true)) => decls.push(("...".to_string(), None)),
            _ => {}
        }
        if preserves_unknown(s) && !decls.iter().any(|(d, _)| d == "...") {
            decls.push(("...".to_string(), None));
        }
        struct_lit(&decls)
    }
}

/// A struct literal from declarations with their doc comments: a blank line before every
/// documented declaration but the first, as CUE's printer separates documented fields.
pub fn struct_lit(decls: &[(String, Option<String>)]) -> String {
    if decls.is_empty() {
        return "{}".to_string();
    }
    let mut out = String::from("{\n");
    for (i, (decl, doc)) in decls.iter().enumerate() {
        if let Some(doc) = doc {
            if i > 0 {
                out.push('\n');
            }
            out.push_str(&comment(doc));
        }
        out.push_str(decl);
        out.push('\n');
    }
    out.push('}');
    out
}

/// `//` comment lines for a description, one per line of text.
pub fn comment(doc: &str) -> String {
    let mut out = String::new();
    for line in doc.lines() {
        let line = line.trim_end();
        if line.is_empty() {
            out.push_str("//\n");
        } else {
            out.push_str("// ");
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// The trimmed `description` of a schema, if it has a non-empty one.
pub fn description(s: &Data) -> Option<String> {
    match get(s, "description") {
        Some(Data::String(d)) if !d.trim().is_empty() => Some(d.trim().to_string()),
        _ => None,
    }
}

/// A field label: an identifier when CUE allows one, a quoted string otherwise.
pub fn label(name: &str) -> String {
    let mut chars = name.chars();
    let ident = matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '$')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
        && !matches!(
            name,
            "if" | "for" | "in" | "let" | "import" | "package" | "func" | "null" | "true" | "false"
        );
    if ident {
        name.to_string()
    } else {
        let mut q = String::new();
        write_cue_string(&mut q, name);
        q
    }
}

/// The member `key` of a struct.
pub fn get<'d>(s: &'d Data, key: &str) -> Option<&'d Data> {
    match s {
        Data::Struct(fields) => fields.iter().find(|f| f.name == key).map(|f| &f.value),
        _ => None,
    }
}

fn preserves_unknown(s: &Data) -> bool {
    matches!(
        get(s, "x-kubernetes-preserve-unknown-fields"),
        Some(Data::Bool(true))
    )
}

fn uint_of(d: Option<&Data>) -> Option<u64> {
    match d {
        Some(Data::Number { text, .. }) => text.parse().ok(),
        _ => None,
    }
}

fn num_of(d: Option<&Data>) -> Option<String> {
    match d {
        Some(Data::Number { text, .. }) => Some(text.clone()),
        _ => None,
    }
}

fn enum_values(s: &Data) -> Option<String> {
    let Some(Data::List(values)) = get(s, "enum") else {
        return None;
    };
    if values.is_empty() {
        return None;
    }
    let parts: Vec<String> = values
        .iter()
        .map(|v| match v {
            Data::String(x) => {
                let mut q = String::new();
                write_cue_string(&mut q, x);
                q
            }
            other => cue_eval::decode::to_cue_expr(other),
        })
        .collect();
    Some(parts.join(" | "))
}

/// Bounds (`minimum`, `maximum` and their exclusive forms) as CUE bound expressions.
fn bounds(s: &Data) -> (Option<String>, Option<String>) {
    let excl = |k: &str| matches!(get(s, k), Some(Data::Bool(true)));
    let lo = num_of(get(s, "minimum")).map(|n| {
        if excl("exclusiveMinimum") {
            format!(">{n}")
        } else {
            format!(">={n}")
        }
    });
    let hi = num_of(get(s, "maximum")).map(|n| {
        if excl("exclusiveMaximum") {
            format!("<{n}")
        } else {
            format!("<={n}")
        }
    });
    (lo, hi)
}

/// `int`, `int32`, `int64`, or a bounded `int`/`uint` (a non-negative lower bound exports as
/// `uint`, as CUE's exporter writes `int & >=0`).
fn integer(s: &Data) -> String {
    let format = match get(s, "format") {
        Some(Data::String(f)) if f == "int32" || f == "int64" => Some(f.as_str()),
        _ => None,
    };
    let (lo, hi) = bounds(s);
    if lo.is_none() && hi.is_none() {
        return format.unwrap_or("int").to_string();
    }
    let min: Option<f64> = num_of(get(s, "minimum")).and_then(|n| n.parse().ok());
    let mut parts = Vec::new();
    match min {
        Some(m) if m >= 0.0 => {
            parts.push("uint".to_string());
            if m > 0.0
                || lo
                    .as_deref()
                    .is_some_and(|l| l.starts_with(">") && !l.starts_with(">="))
            {
                parts.extend(lo);
            }
        }
        _ => {
            parts.push(format.unwrap_or("int").to_string());
            parts.extend(lo);
        }
    }
    parts.extend(hi);
    parts.join(" & ")
}

fn number(s: &Data) -> String {
    let (lo, hi) = bounds(s);
    if lo.is_none() && hi.is_none() {
        return "number".to_string();
    }
    let mut parts = vec!["number".to_string()];
    parts.extend(lo);
    parts.extend(hi);
    parts.join(" & ")
}
