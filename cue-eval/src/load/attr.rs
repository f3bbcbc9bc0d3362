//! Attributes (`@name(args)`): parsing their bodies as CUE does (`internal/attrs.go`), and
//! reading the attributes of a field by path, for the loader (`@tag`, `@if`, `@embed`) and for
//! higher layers (`@timoni(...)`, `@go(...)`).

use crate::ast;

/// One parsed attribute: `@tag(mv, var=moduleVersion)` is `tag` with the args `mv` and
/// `var=moduleVersion`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attribute {
    /// The name after `@`.
    pub name: String,
    /// The arguments in order.
    pub args: Vec<AttrArg>,
    /// The attribute as written.
    pub text: String,
    /// Where the attribute is written.
    pub span: ast::Span,
}

/// One comma-separated argument: `key=value`, or a bare `value` (`key` is `None`). Quoted
/// values are unquoted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttrArg {
    /// The key of `key=value`.
    pub key: Option<String>,
    /// The value, unquoted.
    pub value: String,
}

impl Attribute {
    /// Parses a syntax-tree attribute.
    pub fn parse(a: &ast::Attribute) -> Result<Attribute, String> {
        Ok(Attribute {
            name: a.name().to_string(),
            args: parse_args(a.body())?,
            text: a.text.to_string(),
            span: a.span,
        })
    }

    /// The value of the `i`-th argument when it has no key.
    pub fn positional(&self, i: usize) -> Option<&str> {
        match self.args.get(i) {
            Some(AttrArg { key: None, value }) => Some(value),
            _ => None,
        }
    }

    /// The value of the argument `key=value`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.args
            .iter()
            .find(|a| a.key.as_deref() == Some(key))
            .map(|a| a.value.as_str())
    }

    /// Whether a bare flag argument (`allowEmptyGlob`) is present.
    pub fn has_flag(&self, flag: &str) -> bool {
        self.args
            .iter()
            .any(|a| a.key.is_none() && a.value == flag || a.key.as_deref() == Some(flag))
    }
}

/// Splits an attribute body on top-level commas (outside quotes and brackets) into arguments.
pub fn parse_args(body: &str) -> Result<Vec<AttrArg>, String> {
    let mut out = Vec::new();
    if body.trim().is_empty() {
        return Ok(out);
    }
    let mut parts = Vec::new();
    let mut depth: Vec<char> = Vec::new();
    let mut start = 0;
    let mut chars = body.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' | '\'' | '`' => {
                let q = c;
                loop {
                    match chars.next() {
                        None => return Err(format!("unterminated quote in attribute: {body}")),
                        Some((_, '\\')) if q != '`' => {
                            chars.next();
                        }
                        Some((_, x)) if x == q => break,
                        Some(_) => {}
                    }
                }
            }
            '(' => depth.push(')'),
            '[' => depth.push(']'),
            '{' => depth.push('}'),
            ')' | ']' | '}' if depth.pop() != Some(c) => {
                return Err(format!("unbalanced {c:?} in attribute: {body}"));
            }
            ',' if depth.is_empty() => {
                parts.push(&body[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if !depth.is_empty() {
        return Err(format!("unbalanced brackets in attribute: {body}"));
    }
    parts.push(&body[start..]);
    for p in parts {
        let p = p.trim();
        let (key, value) = match p.find('=') {
            Some(eq) if is_key(p[..eq].trim()) => {
                (Some(p[..eq].trim().to_string()), p[eq + 1..].trim())
            }
            _ => (None, p),
        };
        out.push(AttrArg {
            key,
            value: unquote(value)?,
        });
    }
    Ok(out)
}

fn is_key(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '-' || c == '$')
}

fn unquote(v: &str) -> Result<String, String> {
    if v.len() >= 2 && (v.starts_with('"') || v.starts_with('#')) {
        let bytes =
            crate::literal::decode(v).map_err(|e| format!("invalid quoted value {v}: {e:?}"))?;
        return String::from_utf8(bytes).map_err(|_| format!("invalid UTF-8 in {v}"));
    }
    Ok(v.to_string())
}

/// The attributes of the fields at `path` (labels as written, `#Def` for definitions) across
/// `files`, in file order. Only fields written at that path are seen: shorthand `a: b: c: 1`
/// and nested struct literals are followed, references and embeddings are not.
pub fn field_attributes(files: &[&ast::File], path: &[&str]) -> Vec<Attribute> {
    let mut out = Vec::new();
    for f in files {
        collect(&f.decls, path, &mut out);
    }
    out
}

fn label_name(l: &ast::Label) -> Option<String> {
    match l {
        ast::Label::Ident(i) => Some(i.name.to_string()),
        ast::Label::String(e) => match &**e {
            ast::Expr::Lit(lit) => crate::literal::decode(&lit.raw)
                .ok()
                .and_then(|b| String::from_utf8(b).ok()),
            _ => None,
        },
        _ => None,
    }
}

fn collect(decls: &[ast::Decl], path: &[&str], out: &mut Vec<Attribute>) {
    let Some((first, rest)) = path.split_first() else {
        return;
    };
    for d in decls {
        match d {
            ast::Decl::Field(f) if label_name(&f.label).as_deref() == Some(*first) => {
                if rest.is_empty() {
                    out.extend(f.attrs.iter().filter_map(|a| Attribute::parse(a).ok()));
                } else {
                    crate::stack::guard(|| collect_expr(&f.value, rest, out));
                }
            }
            ast::Decl::Embed(e) => crate::stack::guard(|| collect_expr(e, path, out)),
            _ => {}
        }
    }
}

fn collect_expr(e: &ast::Expr, path: &[&str], out: &mut Vec<Attribute>) {
    match e {
        ast::Expr::Struct(s) => collect(&s.decls, path, out),
        ast::Expr::Paren { expr, .. } => collect_expr(expr, path, out),
        ast::Expr::Binary {
            op: ast::BinaryOp::Unify,
            lhs,
            rhs,
            ..
        } => {
            collect_expr(lhs, path, out);
            collect_expr(rhs, path, out);
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(body: &str) -> Vec<(Option<String>, String)> {
        parse_args(body)
            .unwrap()
            .into_iter()
            .map(|a| (a.key, a.value))
            .collect()
    }

    #[test]
    fn bodies() {
        assert_eq!(
            args("mv, var=moduleVersion"),
            vec![
                (None, "mv".to_string()),
                (Some("var".to_string()), "moduleVersion".to_string())
            ]
        );
        assert_eq!(
            args(r#"file="a,b.txt", type=text"#),
            vec![
                (Some("file".to_string()), "a,b.txt".to_string()),
                (Some("type".to_string()), "text".to_string())
            ]
        );
        assert_eq!(
            args("!(a && b) || c"),
            vec![(None, "!(a && b) || c".to_string())]
        );
        assert_eq!(args(""), vec![]);
        assert!(parse_args("(a").is_err());
    }

    #[test]
    fn field_attributes_by_path() {
        let src = "a: b: 1 @go(B) @timoni(x=1)\na: {b: int @json(\"b\")}\n#D: c: string @tag(c)\n";
        let (f, errs) = crate::parse(ast::FileId(0), src);
        assert!(errs.is_empty());
        let got: Vec<String> = field_attributes(&[&f], &["a", "b"])
            .into_iter()
            .map(|a| {
                format!(
                    "{}:{:?}",
                    a.name,
                    a.args.iter().map(|x| &x.value).collect::<Vec<_>>()
                )
            })
            .collect();
        assert_eq!(got, vec!["go:[\"B\"]", "timoni:[\"1\"]", "json:[\"b\"]"]);
        assert_eq!(
            field_attributes(&[&f], &["#D", "c"])[0].positional(0),
            Some("c")
        );
    }
}
