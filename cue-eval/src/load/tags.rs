//! `@tag` injection (CUE's `cue/load/tags.go`): `-t key=value` sets the fields marked
//! `@tag(key)`, `-t short` sets the field whose `@tag(x, short=a|short)` lists it, and tag
//! variables (`@tag(x, var=moduleVersion)`) fill fields no `-t` set. The field's value `v`
//! becomes `v & <literal>` in the syntax tree.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use super::FileRef;
use super::attr::Attribute;
use super::{LoadError, LoadedFile};
use crate::ast::{self, BasicLit, BinaryOp, Expr, LitKind, Span};

/// A declared tag.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TagDecl {
    pub name: String,
    /// `string` (default), `int`, `number` or `bool`.
    pub kind: String,
    pub short: Vec<String>,
    pub var: Option<String>,
}

impl TagDecl {
    fn from_attr(a: &Attribute) -> Result<TagDecl, String> {
        let name = a
            .positional(0)
            .filter(|n| !n.is_empty())
            .ok_or_else(|| "no tag name in @tag attribute".to_string())?
            .to_string();
        let kind = a.get("type").unwrap_or("string").to_string();
        if !matches!(kind.as_str(), "string" | "int" | "number" | "bool") {
            return Err(format!("invalid type {kind:?} for tag {name:?}"));
        }
        let short = a
            .get("short")
            .map(|s| s.split('|').map(|x| x.trim().to_string()).collect())
            .unwrap_or_default();
        Ok(TagDecl {
            name,
            kind,
            short,
            var: a.get("var").map(str::to_string),
        })
    }
}

/// Calls `f` on every field reachable through struct literals (not lists or comprehensions).
pub(crate) fn walk_fields(
    decls: &mut [ast::Decl],
    f: &mut dyn FnMut(&mut ast::Field) -> Result<(), LoadError>,
) -> Result<(), LoadError> {
    for d in decls {
        match d {
            ast::Decl::Field(field) => {
                f(field)?;
                crate::stack::guard(|| walk_expr(&mut field.value, f))?;
            }
            ast::Decl::Embed(e) => crate::stack::guard(|| walk_expr(e, f))?,
            _ => {}
        }
    }
    Ok(())
}

fn walk_expr(
    e: &mut Expr,
    f: &mut dyn FnMut(&mut ast::Field) -> Result<(), LoadError>,
) -> Result<(), LoadError> {
    match e {
        Expr::Struct(s) => walk_fields(&mut s.decls, f),
        Expr::Paren { expr, .. } => walk_expr(expr, f),
        Expr::Binary { lhs, rhs, .. } => {
            walk_expr(lhs, f)?;
            walk_expr(rhs, f)
        }
        _ => Ok(()),
    }
}

/// The `@tag` attributes of a field.
fn field_tags(field: &ast::Field) -> impl Iterator<Item = &ast::Attribute> {
    field.attrs.iter().filter(|a| a.name() == "tag")
}

/// Whether a file with this text may hold `@tag` attributes: an attribute's name is followed
/// by its `(`, so each is `@tag(` in the text.
pub(super) fn may_hold_tags(text: &str) -> bool {
    text.contains("@tag(")
}

/// Injects the `-t` values (`tags`) and tag variables (`vars`) into the files `module_files`.
pub fn inject(
    files: &mut [LoadedFile],
    module_files: &[usize],
    tags: &[String],
    vars: &BTreeMap<String, String>,
) -> Result<(), LoadError> {
    // Only files with tags are walked (and so copied from the tree they share with the parse
    // cache).
    let tagged: Vec<usize> = module_files
        .iter()
        .copied()
        .filter(|&i| may_hold_tags(&files[i].text))
        .collect();
    // Declared tags.
    let mut decls: Vec<TagDecl> = Vec::new();
    for &i in &tagged {
        let sf = FileRef::new(&files[i].name, &files[i].text);
        let ast = Arc::make_mut(&mut files[i].ast);
        walk_fields(&mut ast.decls, &mut |field| {
            for a in field_tags(field) {
                let parsed =
                    Attribute::parse(a).map_err(|m| LoadError::at(m, &sf, a.span.start))?;
                let d =
                    TagDecl::from_attr(&parsed).map_err(|m| LoadError::at(m, &sf, a.span.start))?;
                if !decls.contains(&d) {
                    decls.push(d);
                }
            }
            Ok(())
        })?;
    }
    // `@if` identifiers, for build tags.
    let mut if_idents: Vec<String> = Vec::new();
    for f in files.iter().filter(|f| f.in_main_module) {
        for d in &f.ast.decls {
            match d {
                ast::Decl::Attribute(a) if a.name() == "if" => {
                    if_idents.extend(super::buildattr::idents(a.body()))
                }
                ast::Decl::Attribute(_) => {}
                _ => break,
            }
        }
    }
    // Values by tag name.
    let mut values: BTreeMap<String, String> = BTreeMap::new();
    for t in tags {
        match t.split_once('=') {
            Some((k, v)) => {
                let k = k.trim();
                if !decls.iter().any(|d| d.name == k) {
                    return Err(LoadError::new(format!("no tag for {k:?}")));
                }
                values.insert(k.to_string(), v.to_string());
            }
            None => {
                let mut used = if_idents.iter().any(|i| i == t);
                for d in decls.iter().filter(|d| d.short.iter().any(|s| s == t)) {
                    used = true;
                    values.insert(d.name.clone(), t.clone());
                }
                if !used {
                    return Err(LoadError::new(format!("tag {t:?} not used in any file")));
                }
            }
        }
    }
    for d in &decls {
        if !values.contains_key(&d.name)
            && let Some(var) = &d.var
            && let Some(v) = vars.get(var)
        {
            values.insert(d.name.clone(), v.clone());
        }
    }
    if values.is_empty() {
        return Ok(());
    }
    for &i in &tagged {
        let sf = FileRef::new(&files[i].name, &files[i].text);
        let ast = Arc::make_mut(&mut files[i].ast);
        walk_fields(&mut ast.decls, &mut |field| {
            let mut lit = None;
            for a in field_tags(field) {
                let parsed =
                    Attribute::parse(a).map_err(|m| LoadError::at(m, &sf, a.span.start))?;
                let d =
                    TagDecl::from_attr(&parsed).map_err(|m| LoadError::at(m, &sf, a.span.start))?;
                if let Some(v) = values.get(&d.name) {
                    let at = Span {
                        file: a.span.file,
                        start: a.span.start,
                        end: a.span.start,
                    };
                    lit =
                        Some(literal(&d, v, at).map_err(|m| LoadError::at(m, &sf, a.span.start))?);
                }
            }
            if let Some(lit) = lit {
                unify_value(field, lit);
            }
            Ok(())
        })?;
    }
    Ok(())
}

/// Replaces a field's value `v` by `v & x`.
pub(crate) fn unify_value(field: &mut ast::Field, x: Expr) {
    let span = field.value.span();
    let old = std::mem::replace(&mut field.value, Expr::Bad(span));
    field.value = Expr::Binary {
        span,
        op: BinaryOp::Unify,
        lhs: Box::new(old),
        rhs: Box::new(x),
    };
}

/// The literal for a tag value of the tag's type.
fn literal(d: &TagDecl, v: &str, span: Span) -> Result<Expr, String> {
    let lit = |kind, raw: String| {
        Ok(Expr::Lit(BasicLit {
            span,
            kind,
            raw: raw.into(),
        }))
    };
    match d.kind.as_str() {
        "string" => {
            let mut raw = String::new();
            crate::decode::write_cue_string(&mut raw, v);
            lit(LitKind::String, raw)
        }
        "bool" => match v {
            "true" => lit(LitKind::True, "true".into()),
            "false" => lit(LitKind::False, "false".into()),
            _ => Err(format!("invalid bool value {v:?} for tag {:?}", d.name)),
        },
        kind => {
            let body = v.trim();
            let (neg, digits) = match body.strip_prefix('-') {
                Some(r) => (true, r),
                None => (false, body),
            };
            match crate::num::Num::parse_literal(digits) {
                Ok((_, k)) if kind == "number" || k == crate::num::NumKind::Int => {
                    let lk = if k == crate::num::NumKind::Int {
                        LitKind::Int
                    } else {
                        LitKind::Float
                    };
                    let l = Expr::Lit(BasicLit {
                        span,
                        kind: lk,
                        raw: digits.into(),
                    });
                    if neg {
                        Ok(Expr::Unary {
                            span,
                            op: ast::UnaryOp::Neg,
                            expr: Box::new(l),
                        })
                    } else {
                        Ok(l)
                    }
                }
                _ => Err(format!("invalid {kind} value {v:?} for tag {:?}", d.name)),
            }
        }
    }
}

/// The tag variables of `cue -T`.
pub fn default_vars(dir: &Path) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    m.insert("now".to_string(), now_rfc3339());
    m.insert("os".to_string(), std::env::consts::OS.to_string());
    let arch = match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        "x86" => "386",
        a => a,
    };
    m.insert("arch".to_string(), arch.to_string());
    m.insert("cwd".to_string(), dir.display().to_string());
    m.insert(
        "username".to_string(),
        std::env::var("USER").unwrap_or_default(),
    );
    let host = std::fs::read_to_string("/etc/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_default();
    m.insert("hostname".to_string(), host);
    m.insert("rand".to_string(), rand_hex());
    m
}

fn rand_hex() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut out = String::from("0x");
    for _ in 0..2 {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0),
        );
        out.push_str(&format!("{:016x}", h.finish()));
    }
    out
}

/// The current time as Go's RFC3339Nano in UTC.
fn now_rfc3339() -> String {
    let d = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let secs = d.as_secs() as i64;
    let days = secs.div_euclid(86400);
    let rem = secs.rem_euclid(86400);
    let (year, month, day) = crate::eval::builtins::civil_from_days(days);
    let mut s = format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    );
    let nanos = d.subsec_nanos();
    if nanos > 0 {
        let frac = format!("{nanos:09}");
        s.push('.');
        s.push_str(frac.trim_end_matches('0'));
    }
    s.push('Z');
    s
}
