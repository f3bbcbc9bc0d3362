//! `timoni mod show config`: a module's configuration schema as CUE (`#Config: {...}` with doc
//! comments, defaults and `?`/`!` markers) and as a Markdown table (Key, Type, Default,
//! Description) placed in a README's "Configuration" section.
//!
//! As Timoni does, the fields are those of the module's `values` (its `#Config` unified with
//! `values.cue`, `images.cue` and the other values files), each described by what the module's
//! own files (outside `cue.mod`) write for it: the type is the written constraint without its
//! default and struct literals, the default comes from the evaluated value when the module
//! marks one (`*x | T`), a field that evaluates to a concrete scalar without a default is a
//! constant (`team: "test"`), and the docs are the module's comments. The fields Timoni
//! injects (`moduleVersion`, `kubeVersion`, `clusterVersion`, `metadata.name`,
//! `metadata.namespace`) are left out; `// +nodoc` fields stay in the CUE and leave the table.
//!
//! The field declarations are read from the syntax of the module's files (the `#Config`
//! definition and the `values:` fields of the instance package), not from the evaluator's
//! conjuncts, so constraints reached only through references into other local definitions are
//! not seen.

use std::path::Path;

use cue_eval::encode::Data;
use cue_eval::syntax::{FieldConstraint, Outline, one_line};

use crate::error::Result;
use crate::instance::{self, BuildOptions};

/// Fields Timoni fills in itself, never documented.
const INJECTED: &[&str] = &[
    "kubeVersion",
    "clusterVersion",
    "moduleVersion",
    "metadata.name",
    "metadata.namespace",
];

/// One documented field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    /// The field path with its marker (`image: tag:`, `podAnnotations?:`).
    pub key: String,
    pub ty: String,
    pub default: String,
    pub description: String,
    /// Marked `// +nodoc`: shown in the CUE, not in the table.
    pub no_doc: bool,
}

/// The documented configuration of a module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigDoc {
    /// `#Config: {...}` as formatted CUE.
    pub cue: String,
    pub rows: Vec<Row>,
}

/// A field of the configuration tree as the module's files write it.
#[derive(Debug, Default)]
struct Node {
    label: String,
    regular: bool,
    required: bool,
    optional: bool,
    /// The written constraints, defaults and struct literals removed (one line each).
    types: Vec<String>,
    has_default: bool,
    docs: Vec<String>,
    no_doc: bool,
    children: Vec<Node>,
}

impl Node {
    fn child(&mut self, label: &str) -> &mut Node {
        if let Some(i) = self.children.iter().position(|c| c.label == label) {
            return &mut self.children[i];
        }
        self.children.push(Node {
            label: label.to_string(),
            ..Node::default()
        });
        self.children.last_mut().expect("just pushed")
    }

    fn marker(&self) -> &'static str {
        if self.regular {
            ""
        } else if self.required {
            "!"
        } else if self.optional {
            "?"
        } else {
            ""
        }
    }

    fn is_optional(&self) -> bool {
        !self.regular && !self.required && self.optional
    }
}

/// Reads the configuration of the module at `dir`.
pub fn config_doc(dir: &Path, package: &str) -> Result<ConfigDoc> {
    let mut opts = BuildOptions::new("module-name", "default", &dir.display().to_string());
    opts.package = package.to_string();
    let loaded = instance::load_module(&opts, true)?;
    let cue_mod = loaded.root.join("cue.mod");
    let mut root = Node::default();
    // The schema's fields first, then what the values files add, as the evaluated order has
    // them.
    for pass in ["#Config", "values"] {
        for f in &loaded.files {
            if Path::new(f.name()).starts_with(&cue_mod) || !f.name().ends_with(".cue") {
                continue;
            }
            let doc = f;
            if pass == "values" && doc.package_name() != Some(package) {
                continue;
            }
            for outline in doc.outline(pass) {
                add_outline(&mut root, &outline);
            }
        }
    }
    let mut rows = Vec::new();
    let mut cue = String::from("#Config: {\n");
    for c in &root.children {
        write_node(c, &[], &loaded.value, &mut cue, &mut rows);
    }
    cue.push_str("}\n");
    let cue = cue_eval::format_source(&cue).unwrap_or(cue);
    Ok(ConfigDoc { cue, rows })
}

/// Records what an outline says about `node`: its constraint, its default marker, and its
/// fields.
fn add_outline(node: &mut Node, o: &Outline) {
    if o.has_default {
        node.has_default = true;
    }
    if let Some(t) = &o.constraint
        && !node.types.contains(t)
    {
        node.types.push(t.clone());
    }
    for field in &o.fields {
        if field.label.starts_with('_') || field.label.starts_with('#') {
            continue;
        }
        let child = node.child(&field.label);
        match field.constraint {
            FieldConstraint::Regular => child.regular = true,
            FieldConstraint::Required => child.required = true,
            FieldConstraint::Optional => child.optional = true,
        }
        if field.docs.iter().any(|c| c.trim() == "// +nodoc") {
            child.no_doc = true;
        }
        for c in &field.docs {
            let t = c.trim_start_matches('/').trim();
            let t = t.trim_end_matches("+nodoc").trim().to_string();
            if !t.is_empty() && !child.docs.contains(&t) {
                child.docs.push(t);
            }
        }
        add_outline(child, &field.value);
    }
}

fn is_literal(s: &str) -> bool {
    matches!(s, "true" | "false" | "null")
        || (s.starts_with('"') && s.ends_with('"'))
        || s.parse::<f64>().is_ok()
}

/// The CUE kind of concrete data, as CUE names it.
fn kind_name(d: Option<&Data>) -> &'static str {
    match d {
        Some(Data::Struct(_)) => "struct",
        Some(Data::List(_)) => "list",
        Some(Data::String(_)) => "string",
        Some(Data::Bool(_)) => "bool",
        Some(Data::Number { float: true, .. }) => "float",
        Some(Data::Number { .. }) => "int",
        Some(Data::Bytes(_)) => "bytes",
        Some(Data::Null) => "null",
        None => "_",
    }
}

/// A concrete value as one line of CUE.
fn cue_value(d: &Data) -> String {
    one_line(&cue_eval::decode::to_cue_expr(d))
}

fn write_node(
    n: &Node,
    parent: &[&str],
    inst: &cue_eval::Value,
    out: &mut String,
    rows: &mut Vec<Row>,
) {
    let mut path: Vec<&str> = parent.to_vec();
    path.push(&n.label);
    if INJECTED.contains(&path.join(".").as_str()) {
        return;
    }
    // The field's evaluated value when it is concrete (defaults taken).
    let mut full = vec!["values"];
    full.extend(path.iter().copied());
    let value = crate::instance::export_at(inst, &full).ok();
    let value = value.as_ref();
    let mut types = n.types.clone();
    if types.len() > 1 {
        types.retain(|t| !is_literal(t));
    }
    let mut ty = if !types.is_empty() {
        types.join(" & ")
    } else if !n.children.is_empty() {
        "struct".to_string()
    } else {
        kind_name(value).to_string()
    };
    let is_struct = matches!(value, Some(Data::Struct(_))) || !n.children.is_empty();
    let mut default = String::new();
    if n.has_default {
        if let Some(v) = value {
            default = cue_value(v);
        }
    } else if !n.is_optional()
        && let Some(v) = value
        && !matches!(v, Data::Struct(_) | Data::List(_))
    {
        ty = cue_value(v);
        default = ty.clone();
    }
    for d in &n.docs {
        out.push_str("// ");
        out.push_str(d);
        out.push('\n');
    }
    let key = format!("{}{}", quote_label(&n.label), n.marker());
    let typ = if !default.is_empty() && default != ty {
        format!("*{default} | {ty}")
    } else {
        ty.clone()
    };
    let walk = !n.has_default && is_struct && !n.children.is_empty();
    let shown: Vec<&Node> = n
        .children
        .iter()
        .filter(|c| {
            let mut p = path.clone();
            p.push(&c.label);
            !INJECTED.contains(&p.join(".").as_str())
        })
        .collect();
    // A struct with one undocumented field prints in the short form `a: b: T`.
    let short = walk && ty == "struct" && shown.len() == 1 && shown[0].docs.is_empty();
    if !walk {
        out.push_str(&format!("{key}: {typ}\n"));
    } else if short {
        out.push_str(&format!("{key}: "));
    } else if ty == "struct" {
        out.push_str(&format!("{key}: {{\n"));
    } else {
        out.push_str(&format!("{key}: {typ} & {{\n"));
    }
    if !walk || ty != "struct" {
        let key_path: Vec<String> = path
            .iter()
            .enumerate()
            .map(|(i, l)| {
                if i + 1 == path.len() {
                    format!("{}{}", quote_label(l), n.marker())
                } else {
                    quote_label(l)
                }
            })
            .collect();
        rows.push(Row {
            key: format!("{}:", key_path.join(": ")),
            ty: ty.clone(),
            default: default.clone(),
            description: n.docs.join(" "),
            no_doc: n.no_doc,
        });
    }
    if walk {
        for c in &n.children {
            write_node(c, &path, inst, out, rows);
        }
        if !short {
            out.push_str("}\n");
        }
    }
}

fn quote_label(l: &str) -> String {
    if cue_eval::syntax::is_identifier(l) {
        l.to_string()
    } else {
        cue_eval::syntax::quote(l)
    }
}

/// The Markdown table of the documented rows (`+nodoc` rows left out).
pub fn markdown_table(rows: &[Row]) -> String {
    let mut out = String::from(
        "| Key | Type | Default | Description |\n|-----|------|---------|-------------|\n",
    );
    let cell = |s: &str| {
        if s.is_empty() {
            String::new()
        } else {
            format!("`{}`", s.replace('|', "\\|"))
        }
    };
    for r in rows.iter().filter(|r| !r.no_doc) {
        out.push_str(&format!(
            "| {} | {} | {} | {} |\n",
            cell(&r.key),
            cell(&r.ty),
            cell(&r.default),
            r.description.replace('|', "\\|")
        ));
    }
    out
}

/// `readme` with the table in place of the first table of its `## Configuration` section (the
/// rest of the file kept as is), or, without such a table, with the table appended after a
/// blank line, as Timoni updates README files.
pub fn update_readme(readme: &str, rows: &[Row]) -> String {
    let table = markdown_table(rows);
    let is_row = |l: &str| l.len() >= 2 && l.starts_with('|') && l.ends_with('|');
    let mut out = String::new();
    let mut in_section = false;
    let mut replaced = false;
    let mut in_table = false;
    for line in readme.lines() {
        if !in_section && !replaced && line == "## Configuration" {
            in_section = true;
        }
        if in_section && !replaced && is_row(line) {
            out.push_str(&table);
            replaced = true;
            in_table = true;
            continue;
        }
        if in_table && is_row(line) {
            continue;
        }
        in_table = false;
        out.push_str(line);
        out.push('\n');
    }
    if !replaced {
        out.push('\n');
        out.push_str(&table);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(key: &str) -> Row {
        Row {
            key: key.into(),
            ty: "string".into(),
            default: String::new(),
            description: "The team.".into(),
            no_doc: false,
        }
    }

    #[test]
    fn one_line_text_separates_fields_with_commas() {
        assert_eq!(one_line("{\n\ta: 1\n\tb: 2\n}"), "{ a: 1, b: 2 }");
        assert_eq!(one_line("[\n\t1,\n\t2,\n]"), "[ 1, 2, ]");
    }

    #[test]
    fn the_readme_table_is_replaced_or_appended() {
        let rows = vec![row("team:")];
        let r = update_readme(
            "# M\n\n| a | b |\n\n## Configuration\n\nText.\n\n| old | row |\n|---|---|\n\n## License\n",
            &rows,
        );
        assert_eq!(
            r,
            format!(
                "# M\n\n| a | b |\n\n## Configuration\n\nText.\n\n{}\n## License\n",
                markdown_table(&rows)
            )
        );
        assert_eq!(
            update_readme("# M\n", &rows),
            format!("# M\n\n{}", markdown_table(&rows))
        );
    }

    #[test]
    fn nodoc_rows_stay_out_of_the_table() {
        let mut hidden = row("secret:");
        hidden.no_doc = true;
        let t = markdown_table(&[row("team:"), hidden]);
        assert!(t.contains("`team:`") && !t.contains("secret"), "{t}");
    }
}
