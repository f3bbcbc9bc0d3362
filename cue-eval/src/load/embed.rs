//! `@embed` (CUE's `cue/interpreter/embed`): in a file with the file attribute
//! `@extern(embed)`, a field `f: v @embed(file="x.json")` becomes `f: v & <content of x.json>`,
//! and `@embed(glob="dir/*.yaml")` a struct from each matching path (with `/`) to its content.
//! `type=text|binary|json|yaml` picks the decoder (by default from the extension). Files must be
//! in or below the CUE file's directory.

use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use super::FileRef;
use super::attr::Attribute;
use super::fs::Fs;
use super::tags::{unify_value, walk_fields};
use super::{LoadError, LoadedFile};
use crate::ast::{self, BasicLit, Expr, LitKind, Span};
use crate::decode::{self, Data, Limits};

/// Whether a file has the `@extern(embed)` file attribute.
fn has_extern_embed(f: &ast::File) -> bool {
    f.decls.iter().any(|d| match d {
        ast::Decl::Attribute(a) => a.name() == "extern" && a.body().trim() == "embed",
        _ => false,
    })
}

/// Replaces the `@embed` fields of `file` with their content.
pub(super) fn apply(file: &mut LoadedFile, fs: &mut Fs, limits: &Limits) -> Result<(), LoadError> {
    if file.excluded || !has_extern_embed(&file.ast) {
        return Ok(());
    }
    let dir = Path::new(&file.name)
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let sf = FileRef::new(&file.name, &file.text);
    walk_fields(&mut Arc::make_mut(&mut file.ast).decls, &mut |field| {
        let Some(a) = field.attrs.iter().find(|a| a.name() == "embed").cloned() else {
            return Ok(());
        };
        let err = |m: String| LoadError::at(m, &sf, a.span.start);
        let parsed = Attribute::parse(&a).map_err(err)?;
        let span = Span {
            file: a.span.file,
            start: a.span.start,
            end: a.span.start,
        };
        let data = embed_value(&parsed, &dir, fs, limits).map_err(err)?;
        unify_value(field, data_expr(&data, span));
        Ok(())
    })
}

fn embed_value(a: &Attribute, dir: &Path, fs: &Fs, limits: &Limits) -> Result<Data, String> {
    let typ = a.get("type");
    match (a.get("file"), a.get("glob")) {
        (Some(f), None) => {
            let p = checked_path(dir, f)?;
            decode_file(&p, f, typ, fs, limits)
        }
        (None, Some(g)) => {
            if g.contains("**") {
                return Err(format!("@embed: glob {g:?}: ** is not supported"));
            }
            checked_path(dir, g)?;
            let pattern = dir.join(g);
            let paths = glob::glob_with(
                &pattern.to_string_lossy(),
                glob::MatchOptions {
                    case_sensitive: true,
                    require_literal_separator: true,
                    require_literal_leading_dot: true,
                },
            )
            .map_err(|e| format!("@embed: invalid glob {g:?}: {e}"))?;
            let mut found: Vec<PathBuf> = paths
                .filter_map(Result::ok)
                .filter(|p| p.is_file())
                .collect();
            found.sort();
            if found.is_empty() && !a.has_flag("allowEmptyGlob") {
                return Err(format!("@embed: no matches for glob pattern {g:?}"));
            }
            let mut fields = Vec::new();
            for p in found {
                let rel = p
                    .strip_prefix(dir)
                    .unwrap_or(&p)
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect::<Vec<_>>()
                    .join("/");
                let v = decode_file(&p, &rel, typ, fs, limits)?;
                fields.push(decode::Field::new(rel, v));
            }
            Ok(Data::Struct(fields))
        }
        (Some(_), Some(_)) => Err("@embed: file and glob are mutually exclusive".to_string()),
        (None, None) => Err("@embed: missing file or glob argument".to_string()),
    }
}

/// `dir/rel`, refusing absolute paths and `..`.
fn checked_path(dir: &Path, rel: &str) -> Result<PathBuf, String> {
    let p = Path::new(rel);
    if p.is_absolute()
        || p.components()
            .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
    {
        return Err(format!(
            "@embed: path {rel:?} must be relative and inside the directory of the CUE file"
        ));
    }
    Ok(dir.join(p))
}

fn decode_file(
    p: &Path,
    rel: &str,
    typ: Option<&str>,
    fs: &Fs,
    limits: &Limits,
) -> Result<Data, String> {
    let ext = p
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    let typ = match typ {
        Some(t) => t.to_string(),
        None => match ext.as_str() {
            "json" => "json".to_string(),
            "yaml" | "yml" => "yaml".to_string(),
            "txt" => "text".to_string(),
            "cue" => return Err(format!("@embed: cannot embed CUE file {rel:?}")),
            _ => {
                return Err(format!(
                    "@embed: cannot tell the type of {rel:?} from its extension; add type=text|binary|json|yaml"
                ));
            }
        },
    };
    let bytes = fs.read_bytes(p).map_err(|e| format!("@embed: {}", e.msg))?;
    if bytes.len() > limits.max_bytes {
        return Err(format!(
            "@embed: {rel:?} is larger than {} bytes",
            limits.max_bytes
        ));
    }
    if typ == "binary" {
        return Ok(Data::Bytes(bytes));
    }
    let text = decode::utf8(&bytes).map_err(|e| format!("@embed: {}", e.in_file(rel)))?;
    match typ.as_str() {
        "text" => Ok(Data::String(text.to_string())),
        "json" => decode::json_with_limits(text, limits)
            .map_err(|e| format!("@embed: {}", e.in_file(rel))),
        "yaml" => {
            let mut docs = decode::yaml_with_limits(text, limits)
                .map_err(|e| format!("@embed: {}", e.in_file(rel)))?;
            match docs.len() {
                0 => Ok(Data::Null),
                1 => Ok(docs.remove(0)),
                n => Err(format!(
                    "@embed: {rel:?} holds {n} YAML documents; expected one"
                )),
            }
        }
        t => Err(format!("@embed: unsupported type {t:?}")),
    }
}

/// A syntax tree for concrete data; every node gets `span`.
pub fn data_expr(d: &Data, span: Span) -> Expr {
    let lit = |kind, raw: String| {
        Expr::Lit(BasicLit {
            span,
            kind,
            raw: raw.into(),
        })
    };
    crate::stack::guard(|| match d {
        Data::Null => lit(LitKind::Null, "null".into()),
        Data::Bool(true) => lit(LitKind::True, "true".into()),
        Data::Bool(false) => lit(LitKind::False, "false".into()),
        Data::Number { text, float } => {
            let (neg, body) = match text.strip_prefix('-') {
                Some(b) => (true, b),
                None => (false, text.as_str()),
            };
            let mut raw = body.to_string();
            if *float && !raw.contains(['.', 'E', 'e']) {
                raw.push('.');
            }
            let l = lit(if *float { LitKind::Float } else { LitKind::Int }, raw);
            if neg {
                Expr::Unary {
                    span,
                    op: ast::UnaryOp::Neg,
                    expr: Box::new(l),
                }
            } else {
                l
            }
        }
        Data::String(s) => {
            let mut raw = String::new();
            decode::write_cue_string(&mut raw, s);
            lit(LitKind::String, raw)
        }
        Data::Bytes(_) => {
            let src = decode::to_cue_expr(d);
            lit(LitKind::Bytes, src)
        }
        Data::List(items) => Expr::List(ast::ListLit {
            span,
            elems: items
                .iter()
                .map(|i| ast::ListElem::Expr(data_expr(i, span)))
                .collect(),
        }),
        Data::Struct(fields) => Expr::Struct(ast::StructLit {
            span,
            braces: true,
            decls: fields
                .iter()
                .map(|f| {
                    let mut raw = String::new();
                    decode::write_cue_string(&mut raw, &f.name);
                    ast::Decl::Field(ast::Field {
                        span,
                        alias: None,
                        label: ast::Label::String(Box::new(lit(LitKind::String, raw))),
                        constraint: ast::Constraint::Regular,
                        postfix_alias: None,
                        value: data_expr(&f.value, span),
                        attrs: thin_vec::ThinVec::new(),
                    })
                })
                .collect(),
        }),
    })
}
