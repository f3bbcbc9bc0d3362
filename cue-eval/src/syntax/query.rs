//! Queries and edits on one parsed CUE file: its field declarations with their labels,
//! attributes and value spans, whether it writes a path, the outline a schema gives a field, and
//! replacing field values in the text.

use std::ops::Range;

use crate::ast::{self, BinaryOp, Decl, Expr, ListElem, UnaryOp};
use crate::facade::{Error, Result};

/// A parsed CUE file.
///
/// ```
/// use cue_eval::syntax::Document;
/// let doc = Document::parse("a.cue", "a: {\n\tb: 1 @x(y)\n}\n").unwrap();
/// let b = &doc.fields()[1];
/// assert_eq!(b.label().as_deref(), Some("b"));
/// assert_eq!(b.attributes()[0].name, "x");
/// assert_eq!(doc.replace_values(&[(b.value_range(), "2".into())]), "a: {\n\tb: 2 @x(y)\n}\n");
/// ```
#[derive(Clone, Debug)]
pub struct Document {
    name: String,
    text: String,
    file: ast::File,
}

/// How a field is marked: `a: v`, `a?: v` or `a!: v`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldConstraint {
    /// `a: v`.
    Regular,
    /// `a?: v`.
    Optional,
    /// `a!: v`.
    Required,
}

/// An attribute as written: `@timoni(runtime:string:X)` has name `timoni`, body
/// `runtime:string:X`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AttrText<'a> {
    /// The name after `@`.
    pub name: &'a str,
    /// What the parentheses hold.
    pub body: &'a str,
    /// The whole attribute, `@` and parentheses included.
    pub text: &'a str,
    /// The byte offset of its `@` in the document's text.
    pub offset: usize,
}

fn attr_text(a: &ast::Attribute) -> AttrText<'_> {
    AttrText {
        name: a.name(),
        body: a.body(),
        text: &a.text,
        offset: a.span.start as usize,
    }
}

/// A struct literal written as a field's value (`a: {...}`, or the `b: 1` of `a: b: 1`).
#[derive(Clone, Debug)]
pub struct StructValue<'a> {
    doc: &'a Document,
    lit: &'a ast::StructLit,
}

/// A declaration of a struct literal that [`StructValue::members`] lists.
#[derive(Clone, Debug)]
pub enum Member<'a> {
    /// A field.
    Field(FieldDecl<'a>),
    /// An attribute declared on its own (`@test(...)` between fields).
    Attribute(AttrText<'a>),
}

impl<'a> StructValue<'a> {
    /// Whether the literal is written with braces (`a: {b: 1}`), not as the shorthand
    /// `a: b: 1`.
    pub fn braces(&self) -> bool {
        self.lit.braces
    }

    /// The byte offset where the literal starts.
    pub fn offset(&self) -> usize {
        self.lit.span.start as usize
    }

    /// Its field declarations and attribute declarations, in source order (embeddings,
    /// comprehensions, lets and `...` are left out).
    pub fn members(&self) -> Vec<Member<'a>> {
        self.lit
            .decls
            .iter()
            .filter_map(|d| match d {
                Decl::Field(f) => Some(Member::Field(FieldDecl {
                    doc: self.doc,
                    field: f,
                })),
                Decl::Attribute(a) => Some(Member::Attribute(attr_text(a))),
                _ => None,
            })
            .collect()
    }
}

/// One field declaration of a [`Document`].
#[derive(Clone, Debug)]
pub struct FieldDecl<'a> {
    doc: &'a Document,
    field: &'a ast::Field,
}

/// What a schema writes for a field, read from the syntax: its constraint without defaults and
/// struct literals (one line), whether it marks a default (`*x | T`), and the fields of its
/// struct literals (those joined with `&` included).
///
/// ```
/// use cue_eval::syntax::Document;
/// let doc = Document::parse("c.cue", "#C: {\n\t// The port.\n\tport?: *80 | int & >0\n}\n").unwrap();
/// let c = &doc.outline("#C")[0];
/// let port = &c.fields[0];
/// assert_eq!((port.label.as_str(), port.docs.as_slice()), ("port", &["// The port.".to_string()][..]));
/// assert_eq!(port.value.constraint.as_deref(), Some("int & >0"));
/// assert!(port.value.has_default);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Outline {
    /// The value's constraint as written, defaults left out (`int & >0`), if it has one.
    pub constraint: Option<String>,
    /// Whether the value has a default (`*v | ...`).
    pub has_default: bool,
    /// The fields of the struct literal, if the value is one.
    pub fields: Vec<OutlineField>,
}

/// A field of an [`Outline`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutlineField {
    /// The label (quoted labels unquoted); fields with computed labels and patterns are left out.
    pub label: String,
    /// Whether the field is regular, optional or required.
    pub constraint: FieldConstraint,
    /// The `//` comment lines right above the field, as written.
    pub docs: Vec<String>,
    /// The outline of the field's value.
    pub value: Outline,
}

impl Document {
    /// Parses a file; the first syntax error is an error (with its position).
    pub fn parse(name: &str, text: &str) -> Result<Document> {
        let (file, errs) = crate::parse(ast::FileId(0), text);
        if let Some(e) = errs.first() {
            let (line, column) = crate::source::line_col(text, e.span.start as usize);
            return Err(Error::at(
                e.message.clone(),
                name,
                line,
                column,
                e.span.start as usize,
            ));
        }
        Ok(Document {
            name: name.to_string(),
            text: text.to_string(),
            file,
        })
    }

    /// Parses a file, keeping what the parser recovered around syntax errors (which are
    /// dropped): for queries that tolerate a broken file.
    pub fn parse_partial(name: &str, text: &str) -> Document {
        let (file, _) = crate::parse(ast::FileId(0), text);
        Document {
            name: name.to_string(),
            text: text.to_string(),
            file,
        }
    }

    /// Parses a file given as bytes, with every syntax error (as `cue` reports them; spans are
    /// byte offsets in [`Document::text`]), keeping what the parser recovered around them.
    /// Invalid UTF-8 is one `illegal UTF-8 encoding` error per run of invalid bytes, each
    /// sequence replaced by U+FFFD in the text.
    ///
    /// ```
    /// use cue_eval::syntax::Document;
    /// let (doc, errs) = Document::parse_bytes("a.cue", b"a: \"x\xffy\"\nb: }\n");
    /// let msgs: Vec<&str> = errs.iter().map(|e| e.message.as_str()).collect();
    /// assert_eq!(msgs[0], "illegal UTF-8 encoding");
    /// assert_eq!(errs.len(), 2);
    /// assert_eq!(doc.text(), "a: \"x\u{fffd}y\"\nb: }\n");
    /// ```
    pub fn parse_bytes(name: &str, bytes: &[u8]) -> (Document, Vec<crate::ParseError>) {
        let (file, errors) = crate::parser::parse_bytes(ast::FileId(0), bytes);
        let doc = Document {
            name: name.to_string(),
            text: String::from_utf8_lossy(bytes).into_owned(),
            file,
        };
        (doc, errors)
    }

    /// The file as `cue fmt` formats it (comments and blank lines kept). Of a file with syntax
    /// errors, the recovered tree is formatted, which may lose text ([`crate::format_source`]
    /// refuses such files).
    ///
    /// ```
    /// use cue_eval::syntax::Document;
    /// let doc = Document::parse("a.cue", "a:   1\nb: {c:2}\n").unwrap();
    /// assert_eq!(doc.format(), "a: 1\nb: {c: 2}\n");
    /// ```
    pub fn format(&self) -> String {
        crate::format::format_file(&self.file, &self.text)
    }

    /// A structural dump of the syntax tree, one node per line, without positions or comments:
    /// two files have the same syntax up to layout exactly when their dumps are equal (literal
    /// spellings that `cue fmt` may change are normalised, as are braces around a struct and
    /// the grouping of imports). The text is meant for comparing and for reading, not parsing;
    /// it may change between releases.
    ///
    /// ```
    /// use cue_eval::syntax::Document;
    /// let a = Document::parse("a.cue", "a: b: 0o755 // c\n").unwrap();
    /// let b = Document::parse("b.cue", "a: {\n\tb: 0755\n}\n").unwrap();
    /// assert_eq!(a.dump(), b.dump());
    /// assert_ne!(a.dump(), Document::parse("c.cue", "a: b: 1\n").unwrap().dump());
    /// ```
    pub fn dump(&self) -> String {
        crate::dump::dump_file(&self.file)
    }

    /// A document of a file a [`crate::load`] build parsed.
    pub(crate) fn from_loaded(f: &crate::load::LoadedFile) -> Document {
        Document {
            name: f.name.clone(),
            text: f.text.to_string(),
            file: (*f.ast).clone(),
        }
    }

    /// The file's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The file's text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The name of the package clause, if any.
    pub fn package_name(&self) -> Option<&str> {
        self.file.package_name()
    }

    /// The attributes declared on their own at the top of the file (`@test(...)`,
    /// `@experiment(...)`), in source order.
    pub fn attributes(&self) -> Vec<AttrText<'_>> {
        self.file
            .decls
            .iter()
            .filter_map(|d| match d {
                Decl::Attribute(a) => Some(attr_text(a)),
                _ => None,
            })
            .collect()
    }

    /// The field declarations at the top of the file, in source order (not those inside
    /// them: see [`FieldDecl::struct_value`], or [`Document::fields`] for all of them).
    pub fn top_fields(&self) -> Vec<FieldDecl<'_>> {
        self.file
            .decls
            .iter()
            .filter_map(|d| match d {
                Decl::Field(f) => Some(FieldDecl {
                    doc: self,
                    field: f,
                }),
                _ => None,
            })
            .collect()
    }

    /// Every field declaration, in source order (a field before the fields of its value):
    /// fields of struct literals, of list elements, of parenthesized and binary expressions
    /// (`a & {...}`, `*{...} | {...}`), of embeddings and of comprehension bodies.
    pub fn fields(&self) -> Vec<FieldDecl<'_>> {
        let mut out = Vec::new();
        self.walk_decls(&self.file.decls, &mut out);
        out
    }

    fn walk_decls<'a>(&'a self, decls: &'a [Decl], out: &mut Vec<FieldDecl<'a>>) {
        for d in decls {
            match d {
                Decl::Field(f) => {
                    out.push(FieldDecl {
                        doc: self,
                        field: f,
                    });
                    self.walk_expr(&f.value, out);
                }
                Decl::Embed(e) => self.walk_expr(e, out),
                Decl::Comprehension(c) => self.walk_decls(&c.body.decls, out),
                _ => {}
            }
        }
    }

    fn walk_expr<'a>(&'a self, e: &'a Expr, out: &mut Vec<FieldDecl<'a>>) {
        match e {
            Expr::Struct(s) => self.walk_decls(&s.decls, out),
            Expr::List(l) => {
                for el in &l.elems {
                    match el {
                        ListElem::Expr(x) => self.walk_expr(x, out),
                        ListElem::Comprehension(c) => self.walk_decls(&c.body.decls, out),
                        _ => {}
                    }
                }
            }
            Expr::Paren { expr, .. } => self.walk_expr(expr, out),
            Expr::Binary { lhs, rhs, .. } => {
                self.walk_expr(lhs, out);
                self.walk_expr(rhs, out);
            }
            _ => {}
        }
    }

    /// Whether the file declares a field at `path` (labels from the top), through nested
    /// struct literals, embeddings, parentheses and binary expressions (not comprehensions).
    ///
    /// ```
    /// let doc = cue_eval::syntax::Document::parse("b.cue", "a: b: {c: 1} & {d: 2}\n").unwrap();
    /// assert!(doc.writes_path(&["a", "b", "d"]));
    /// assert!(!doc.writes_path(&["a", "x"]));
    /// ```
    pub fn writes_path(&self, path: &[&str]) -> bool {
        writes_path(&self.file.decls, path)
    }

    /// The outline of each top-level field labelled `label`, in source order.
    pub fn outline(&self, label: &str) -> Vec<Outline> {
        self.file
            .decls
            .iter()
            .filter_map(|d| match d {
                Decl::Field(f) if label_name(&f.label).as_deref() == Some(label) => {
                    Some(self.outline_of(&f.value))
                }
                _ => None,
            })
            .collect()
    }

    fn outline_of(&self, e: &Expr) -> Outline {
        let mut out = Outline {
            constraint: strip_structs(e)
                .and_then(|e| self.strip_defaults(&e))
                .filter(|t| !t.is_empty()),
            has_default: has_default_marker(e),
            fields: Vec::new(),
        };
        for_each_struct(e, &mut |s| {
            for d in &s.decls {
                let Decl::Field(field) = d else { continue };
                let Some(label) = label_name(&field.label) else {
                    continue;
                };
                out.fields.push(OutlineField {
                    label,
                    constraint: constraint(field.constraint),
                    docs: self.doc_comments(field.span.start as usize),
                    value: self.outline_of(&field.value),
                });
            }
        });
        out
    }

    /// The text with each byte range replaced (ranges must not overlap).
    pub fn replace_values(&self, edits: &[(Range<usize>, String)]) -> String {
        let mut edits: Vec<&(Range<usize>, String)> = edits.iter().collect();
        edits.sort_by_key(|e| std::cmp::Reverse(e.0.start));
        let mut out = self.text.clone();
        for (r, text) in edits {
            out.replace_range(r.clone(), text);
        }
        out
    }

    fn span_text(&self, span: ast::Span) -> &str {
        self.text
            .get(span.start as usize..span.end as usize)
            .unwrap_or_default()
    }

    /// The `//` comment lines directly above byte offset `at` (no blank line between).
    fn doc_comments(&self, at: usize) -> Vec<String> {
        let src = &self.text;
        let mut out = Vec::new();
        let mut pos = src[..at].rfind('\n').map_or(0, |i| i + 1);
        for c in self.file.comments.iter().rev() {
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

    /// `e` as one-line text without its `*default |` alternatives; `None` when nothing is
    /// left.
    fn strip_defaults(&self, e: &Expr) -> Option<String> {
        self.strip_defaults_inner(e).map(|(t, _)| t)
    }

    /// [`Document::strip_defaults`], telling whether the result is still a binary expression
    /// (which a surrounding parenthesis then keeps).
    fn strip_defaults_inner(&self, e: &Expr) -> Option<(String, bool)> {
        match e {
            Expr::Unary {
                op: UnaryOp::Default,
                ..
            } => None,
            Expr::Binary { op, lhs, rhs, .. } if matches!(op, BinaryOp::Disj | BinaryOp::Unify) => {
                let sym = if *op == BinaryOp::Disj { "|" } else { "&" };
                match (
                    self.strip_defaults_inner(lhs),
                    self.strip_defaults_inner(rhs),
                ) {
                    (None, r) => r,
                    (l, None) => l,
                    (Some((l, _)), Some((r, _))) => Some((format!("{l} {sym} {r}"), true)),
                }
            }
            Expr::Paren { expr, .. } => self.strip_defaults_inner(expr).map(|(t, binary)| {
                if binary {
                    (format!("({t})"), false)
                } else {
                    (t, false)
                }
            }),
            Expr::Struct(s) if !s.braces => {
                Some((format!("{{{}}}", one_line(self.span_text(e.span()))), false))
            }
            Expr::Binary { .. } => Some((one_line(self.span_text(e.span())), true)),
            other => Some((one_line(self.span_text(other.span())), false)),
        }
    }
}

impl<'a> FieldDecl<'a> {
    /// The label: an identifier (`a`, `#A`, `_a`) or a quoted label decoded; `None` for
    /// computed labels (`(k)`, `"\(k)"`) and patterns (`[string]`).
    pub fn label(&self) -> Option<String> {
        label_name(&self.field.label)
    }

    /// How the field is marked (`a:`, `a?:`, `a!:`).
    pub fn constraint(&self) -> FieldConstraint {
        constraint(self.field.constraint)
    }

    /// The field's attributes, in order.
    pub fn attributes(&self) -> Vec<AttrText<'a>> {
        self.field.attrs.iter().map(attr_text).collect()
    }

    /// The label as a path selector, as Go's `cue.Selector` of an `ast.Label`: an identifier
    /// is a field, a definition (`#A`) or a hidden field (`_a`, `_#A`); a quoted label is
    /// always a regular field. `None` for computed labels and patterns.
    ///
    /// ```
    /// use cue_eval::{Selector, syntax::Document};
    /// let doc = Document::parse("a.cue", "#A: 1\n\"_b\": 2\n_c: 3\n").unwrap();
    /// let sels: Vec<_> = doc.top_fields().iter().map(|f| f.selector()).collect();
    /// assert_eq!(sels, [
    ///     Some(Selector::Definition("#A".into())),
    ///     Some(Selector::Field("_b".into())),
    ///     Some(Selector::Hidden("_c".into())),
    /// ]);
    /// ```
    pub fn selector(&self) -> Option<crate::Selector> {
        use crate::Selector;
        let name = label_name(&self.field.label)?;
        Some(match &self.field.label {
            ast::Label::Ident(_) if name.starts_with('_') => Selector::Hidden(name),
            ast::Label::Ident(_) if name.starts_with('#') => Selector::Definition(name),
            _ => Selector::Field(name),
        })
    }

    /// The byte offset where the field's label starts (its alias, `X=a:`, if it has one).
    pub fn label_offset(&self) -> usize {
        self.field
            .alias
            .as_ref()
            .map_or(self.field.label.span().start, |a| a.span.start) as usize
    }

    /// The field's value when it is a struct literal.
    pub fn struct_value(&self) -> Option<StructValue<'a>> {
        match &self.field.value {
            Expr::Struct(lit) => Some(StructValue { doc: self.doc, lit }),
            _ => None,
        }
    }

    /// The byte range of the field's value in the text.
    pub fn value_range(&self) -> Range<usize> {
        let s = self.field.value.span();
        s.start as usize..s.end as usize
    }

    /// The field's value as written.
    pub fn value_text(&self) -> &'a str {
        self.doc.span_text(self.field.value.span())
    }

    /// The byte range of the whole declaration.
    pub fn range(&self) -> Range<usize> {
        self.field.span.start as usize..self.field.span.end as usize
    }
}

/// Whether `text` is one CUE number literal (`41`, `4.1e-2`, `0x1f`, `1_000`, `2Mi`), without
/// a sign.
///
/// ```
/// use cue_eval::syntax::is_number_literal;
/// assert!(is_number_literal("0x1f") && is_number_literal("2Mi") && !is_number_literal("1 + 1"));
/// ```
pub fn is_number_literal(text: &str) -> bool {
    let (file, errs) = crate::parse(ast::FileId(0), &format!("x: {text}\n"));
    errs.is_empty()
        && matches!(
            file.decls.as_slice(),
            [Decl::Field(f)] if matches!(&f.value, Expr::Lit(l) if matches!(l.kind, ast::LitKind::Int | ast::LitKind::Float))
        )
}

fn constraint(c: ast::Constraint) -> FieldConstraint {
    match c {
        ast::Constraint::Regular => FieldConstraint::Regular,
        ast::Constraint::Optional => FieldConstraint::Optional,
        ast::Constraint::Required => FieldConstraint::Required,
    }
}

/// A label's name: an identifier, or a string literal decoded.
fn label_name(l: &ast::Label) -> Option<String> {
    match l {
        ast::Label::Ident(i) => Some(i.name.to_string()),
        ast::Label::String(e) => match &**e {
            Expr::Lit(lit) => crate::literal::decode(&lit.raw)
                .ok()
                .and_then(|b| String::from_utf8(b).ok()),
            _ => None,
        },
        _ => None,
    }
}

fn writes_path(decls: &[Decl], path: &[&str]) -> bool {
    let Some((first, rest)) = path.split_first() else {
        return true;
    };
    decls.iter().any(|d| match d {
        Decl::Field(f) if label_name(&f.label).as_deref() == Some(*first) => {
            rest.is_empty() || expr_writes(&f.value, rest)
        }
        Decl::Embed(e) => expr_writes(e, path),
        _ => false,
    })
}

fn expr_writes(e: &Expr, path: &[&str]) -> bool {
    match e {
        Expr::Struct(s) => writes_path(&s.decls, path),
        Expr::Paren { expr, .. } => expr_writes(expr, path),
        Expr::Binary { lhs, rhs, .. } => expr_writes(lhs, path) || expr_writes(rhs, path),
        _ => false,
    }
}

fn for_each_struct(e: &Expr, visit: &mut dyn FnMut(&ast::StructLit)) {
    match e {
        Expr::Struct(s) => visit(s),
        Expr::Paren { expr, .. } => for_each_struct(expr, visit),
        Expr::Binary {
            op: BinaryOp::Unify,
            lhs,
            rhs,
            ..
        } => {
            for_each_struct(lhs, visit);
            for_each_struct(rhs, visit);
        }
        _ => {}
    }
}

/// Whether `e` has a `*` default marker outside struct and list literals.
fn has_default_marker(e: &Expr) -> bool {
    match e {
        Expr::Unary {
            op: UnaryOp::Default,
            ..
        } => true,
        Expr::Binary { lhs, rhs, .. } => has_default_marker(lhs) || has_default_marker(rhs),
        Expr::Paren { expr, .. } => has_default_marker(expr),
        _ => false,
    }
}

/// `e` without its struct literals (pattern-only structs such as `{[string]: string}` kept),
/// as an expression tree; `None` when nothing is left.
fn strip_structs(e: &Expr) -> Option<Expr> {
    match e {
        Expr::Struct(s) => {
            let patterns_only = !s.decls.is_empty()
                && s.decls.iter().all(|d| {
                    matches!(d, Decl::Field(field) if matches!(field.label, ast::Label::Pattern { .. }))
                });
            patterns_only.then(|| e.clone())
        }
        Expr::Binary {
            op: BinaryOp::Unify,
            lhs,
            rhs,
            span,
        } => match (strip_structs(lhs), strip_structs(rhs)) {
            (None, r) => r,
            (l, None) => l,
            (Some(l), Some(r)) => Some(Expr::Binary {
                op: BinaryOp::Unify,
                lhs: Box::new(l),
                rhs: Box::new(r),
                span: *span,
            }),
        },
        Expr::Paren { expr, span } => strip_structs(expr).map(|x| Expr::Paren {
            expr: Box::new(x),
            span: *span,
        }),
        other => Some(other.clone()),
    }
}

/// CUE text on one line: lines joined, struct fields and list elements separated by commas
/// (multi-line strings are kept as they are).
///
/// ```
/// assert_eq!(cue_eval::syntax::one_line("{\n\ta: 1\n\tb: [\n\t\t2\n\t]\n}"), "{ a: 1, b: [ 2 ] }");
/// ```
pub fn one_line(src: &str) -> String {
    if src.contains("\"\"\"") || src.contains("'''") {
        return src.trim().to_string();
    }
    let mut out: Vec<String> = Vec::new();
    for line in src.lines() {
        let line = line.split_whitespace().collect::<Vec<_>>().join(" ");
        if line.is_empty() {
            continue;
        }
        if let Some(prev) = out.last_mut()
            && !prev.ends_with('{')
            && !prev.ends_with('[')
            && !prev.ends_with(',')
            && !line.starts_with('}')
            && !line.starts_with(']')
        {
            prev.push(',');
        }
        out.push(line);
    }
    out.join(" ")
}
