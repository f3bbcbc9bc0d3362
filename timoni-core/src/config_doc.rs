//! `timoni mod show config`: a module's `#Config` schema as CUE, with its doc comments,
//! defaults and `?`/`!` markers, leaving out fields marked `// +nodoc` and the fields Timoni
//! injects (`moduleVersion`, `kubeVersion`); and the same as a Markdown table (Key, Type,
//! Default, Description) placed under the "Configuration" section of a README.
//!
//! The schema is read from the source as written (the `#Config` definition of the module's
//! packages), not from the evaluated value, so constraints and defaults print as the author
//! wrote them.

use std::path::Path;

use cue_eval::ast::{self, Constraint, Decl, Expr};
use cue_eval::load::{self, Config};

use crate::error::{Error, Result};
use crate::instance::check_module;

/// Fields Timoni fills in itself, never documented.
const INJECTED: &[&str] = &["moduleVersion", "kubeVersion"];

/// One row of the Markdown table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    /// The field path with its marker (`image: tag:`, `podAnnotations?:`).
    pub key: String,
    pub ty: String,
    pub default: String,
    pub description: String,
}

/// The documented configuration of a module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigDoc {
    /// `#Config: {...}` as formatted CUE.
    pub cue: String,
    pub rows: Vec<Row>,
}

/// Reads the `#Config` definition of the module at `dir`.
pub fn config_doc(dir: &Path) -> Result<ConfigDoc> {
    let root = check_module(dir)?;
    let mut cfg = Config::new(&root);
    cfg.tags = vec!["name=default".into(), "namespace=default".into()];
    let build = load::load(&cfg, &[".".to_string()]).map_err(|e| Error::Cue(e.to_string()))?;
    for f in &build.files {
        if !f.in_main_module || f.excluded {
            continue;
        }
        for d in &f.ast.decls {
            if let Decl::Field(field) = d
                && label(&field.label).as_deref() == Some("#Config")
                && let Expr::Struct(s) = &field.value
            {
                let mut cue = String::from("#Config: {\n");
                let mut rows = Vec::new();
                write_decls(
                    &f.text,
                    &f.ast.comments,
                    &s.decls,
                    "",
                    &mut cue,
                    &mut rows,
                    true,
                );
                cue.push_str("}\n");
                let cue = cue_eval::format_source(&cue).unwrap_or(cue);
                return Ok(ConfigDoc { cue, rows });
            }
        }
    }
    Err(Error::Module(format!(
        "{}: no #Config definition found in the module",
        dir.display()
    )))
}

fn label(l: &ast::Label) -> Option<String> {
    match l {
        ast::Label::Ident(i) => Some(i.name.to_string()),
        ast::Label::String(e) => match &**e {
            Expr::Lit(lit) => cue_eval::literal::decode(&lit.raw)
                .ok()
                .and_then(|b| String::from_utf8(b).ok()),
            _ => None,
        },
        _ => None,
    }
}

/// The `//` comment lines directly above byte offset `at` (no blank line between).
fn doc_comments(src: &str, comments: &[ast::Comment], at: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut pos = src[..at].rfind('\n').map_or(0, |i| i + 1);
    for c in comments.iter().rev() {
        let end = c.span.end as usize;
        if end > pos {
            continue;
        }
        let between = &src[end..pos];
        if between.trim().is_empty() && between.matches('\n').count() <= 1 {
            out.push(c.text.to_string());
            pos = src[..c.span.start as usize]
                .rfind('\n')
                .map_or(0, |i| i + 1);
        } else {
            break;
        }
    }
    out.reverse();
    out
}

fn write_decls(
    src: &str,
    comments: &[ast::Comment],
    decls: &[Decl],
    prefix: &str,
    out: &mut String,
    rows: &mut Vec<Row>,
    top: bool,
) {
    for d in decls {
        let span = d.span();
        let docs = doc_comments(src, comments, span.start as usize);
        if docs.iter().any(|c| c.contains("+nodoc")) {
            continue;
        }
        if let Decl::Field(f) = d
            && let Some(name) = label(&f.label)
        {
            if top && INJECTED.contains(&name.as_str()) {
                continue;
            }
            if name.starts_with('_') || name.starts_with('#') {
                continue;
            }
            let marker = match f.constraint {
                Constraint::Optional => "?",
                Constraint::Required => "!",
                Constraint::Regular => "",
            };
            let key = format!("{prefix}{name}{marker}:");
            match &f.value {
                Expr::Struct(s)
                    if s.decls
                        .iter()
                        .any(|d| matches!(d, Decl::Field(f) if label(&f.label).is_some())) =>
                {
                    write_decls(
                        src,
                        comments,
                        &s.decls,
                        &format!("{key} "),
                        &mut String::new(),
                        rows,
                        false,
                    );
                }
                value => {
                    let text = &src[value.span().start as usize..value.span().end as usize];
                    let (ty, default) = split_default(text);
                    rows.push(Row {
                        key: key.clone(),
                        ty,
                        default,
                        description: docs
                            .iter()
                            .map(|c| c.trim_start_matches('/').trim())
                            .collect::<Vec<_>>()
                            .join(" "),
                    });
                }
            }
        }
        for c in &docs {
            out.push_str(c);
            out.push('\n');
        }
        out.push_str(&src[span.start as usize..span.end as usize]);
        out.push('\n');
    }
}

/// `*true | bool` → (`bool`, `true`).
fn split_default(text: &str) -> (String, String) {
    let text = text.split(" @").next().unwrap_or(text).trim();
    let parts: Vec<&str> = text.split(" | ").collect();
    if parts.len() > 1
        && let Some(i) = parts.iter().position(|p| p.starts_with('*'))
    {
        let default = parts[i].trim_start_matches('*').to_string();
        let rest: Vec<&str> = parts
            .iter()
            .enumerate()
            .filter(|(j, _)| *j != i)
            .map(|(_, p)| *p)
            .collect();
        return (rest.join(" | "), default);
    }
    (text.to_string(), String::new())
}

/// The Markdown table of `rows`.
pub fn markdown_table(rows: &[Row]) -> String {
    let mut out = String::from(
        "| Key | Type | Default | Description |\n|-----|------|---------|-------------|\n",
    );
    for r in rows {
        let cell = |s: &str| {
            if s.is_empty() {
                String::new()
            } else {
                format!("`{}`", s.replace('|', "\\|"))
            }
        };
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

    #[test]
    fn defaults_split_from_types() {
        assert_eq!(
            split_default("*true | bool"),
            ("bool".into(), "true".into())
        );
        assert_eq!(
            split_default("string | *\"x\""),
            ("string".into(), "\"x\"".into())
        );
        assert_eq!(
            split_default("int & >0"),
            ("int & >0".into(), String::new())
        );
    }

    #[test]
    fn the_readme_section_is_replaced_or_added() {
        let rows = vec![Row {
            key: "team:".into(),
            ty: "string".into(),
            default: String::new(),
            description: "The team.".into(),
        }];
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
}
