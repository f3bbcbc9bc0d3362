//! A span-free, comment-free structural dump of a syntax tree, one node per line.
//!
//! Two trees are the same modulo layout exactly when their dumps are equal; the formatter's round
//! trip law (`parse(format(ast)) == ast`) and the parser's snapshot tests are stated with it.
//! Literals are dumped in a normal form that ignores spellings the formatter may change
//! (`0755` and `0o755`, `.5` and `0.5`, the indentation of multi-line strings), and the tree
//! changes that `cue fmt` itself makes: directly nested parentheses collapse (as in gofmt), a
//! shorthand field may gain braces (`a: b: 1 @x()` becomes `a: {b: 1 @x()}`), `..._` becomes
//! `...`, an import gains parentheses, and a string label may be re-quoted. Structs are therefore
//! dumped alike with or without braces, imports alike grouped or not, and string labels by value.

use std::fmt::Write;

use crate::ast::*;

/// Dumps a whole file.
pub fn dump_file(file: &File) -> String {
    let mut d = Dumper {
        out: String::new(),
        depth: 0,
    };
    d.line("file");
    d.nested(|d| {
        for decl in &file.decls {
            d.decl(decl);
        }
    });
    d.out
}

struct Dumper {
    out: String,
    depth: usize,
}

impl Dumper {
    fn line(&mut self, s: &str) {
        for _ in 0..self.depth {
            self.out.push_str("  ");
        }
        self.out.push_str(s);
        self.out.push('\n');
    }

    fn nested(&mut self, f: impl FnOnce(&mut Self)) {
        self.depth += 1;
        f(self);
        self.depth -= 1;
    }

    fn decl(&mut self, decl: &Decl) {
        crate::stack::guard(|| self.decl_inner(decl));
    }

    fn decl_inner(&mut self, decl: &Decl) {
        match decl {
            Decl::Package(p) => self.line(&format!("package {}", p.name.name)),
            Decl::Import(i) => {
                self.line("import");
                self.nested(|d| {
                    for s in &i.specs {
                        let name = s.name.as_ref().map_or("", |n| &n.name);
                        d.line(&format!("spec {name} {}", s.path.raw));
                    }
                });
            }
            Decl::Field(f) => self.field(f),
            Decl::Embed(e) => {
                self.line("embed");
                self.nested(|d| d.expr(e));
            }
            Decl::Comprehension(c) => self.comprehension(c),
            Decl::Let(l) => self.let_clause(l),
            Decl::Ellipsis(e) => self.ellipsis(e),
            Decl::Attribute(a) => self.line(&format!("attr {}", a.text)),
            Decl::Bad(_) => self.line("bad"),
        }
    }

    fn field(&mut self, f: &Field) {
        let mut s = String::from("field");
        if let Some(a) = &f.alias {
            let _ = write!(s, " alias={}", a.name);
        }
        match f.constraint {
            Constraint::Regular => {}
            Constraint::Optional => s.push_str(" optional"),
            Constraint::Required => s.push_str(" required"),
        }
        if let Some(p) = &f.postfix_alias {
            let _ = write!(s, " ~{}", p.first.name);
            if let Some(v) = &p.second {
                let _ = write!(s, ",{}", v.name);
            }
        }
        for a in &f.attrs {
            let _ = write!(s, " {}", a.text);
        }
        self.line(&s);
        self.nested(|d| {
            d.label(&f.label);
            d.expr(&f.value);
        });
    }

    fn label(&mut self, l: &Label) {
        match l {
            Label::Ident(i) => self.line(&format!("label {}", i.name)),
            Label::String(e) => match &**e {
                Expr::Lit(l) => match crate::literal::decode(&l.raw) {
                    Ok(v) => self.line(&format!("label-string {:?}", String::from_utf8_lossy(&v))),
                    Err(_) => self.line(&format!("label-string {}", normal_literal(l))),
                },
                e => {
                    self.line("label-string");
                    self.nested(|d| d.expr(e));
                }
            },
            Label::Paren { expr, .. } => {
                self.line("label-paren");
                self.nested(|d| d.expr(expr));
            }
            Label::Pattern { expr, .. } => {
                self.line("label-pattern");
                self.nested(|d| d.expr(expr));
            }
            Label::List { list, .. } => {
                self.line("label-list");
                self.nested(|d| d.expr(list));
            }
        }
    }

    fn let_clause(&mut self, l: &LetClause) {
        self.line(&format!("let {}", l.ident.name));
        self.nested(|d| d.expr(&l.expr));
    }

    fn ellipsis(&mut self, e: &Ellipsis) {
        self.line("ellipsis");
        match e.ty.as_deref() {
            None => {}
            Some(Expr::Ident(i)) if &*i.name == "_" => {}
            Some(t) => self.nested(|d| d.expr(t)),
        }
    }

    fn comprehension(&mut self, c: &Comprehension) {
        self.line("comprehension");
        self.nested(|d| {
            for cl in &c.clauses {
                match cl {
                    Clause::For {
                        key, value, source, ..
                    } => {
                        let key = key.as_ref().map_or("", |k| &k.name);
                        d.line(&format!("for {key} {}", value.name));
                        d.nested(|d| d.expr(source));
                    }
                    Clause::If { cond, .. } => {
                        d.line("if");
                        d.nested(|d| d.expr(cond));
                    }
                    Clause::Let(l) => d.let_clause(l),
                    Clause::Try { binding, .. } => match binding {
                        None => d.line("try"),
                        Some((i, e)) => {
                            d.line(&format!("try {}", i.name));
                            d.nested(|d| d.expr(e));
                        }
                    },
                }
            }
            d.struct_lit(&c.body);
            if let Some(f) = &c.fallback {
                d.line(match f.keyword {
                    FallbackKeyword::Else => "else",
                    FallbackKeyword::Fallback => "fallback",
                });
                d.nested(|d| d.struct_lit(&f.body));
            }
        });
    }

    fn struct_lit(&mut self, s: &StructLit) {
        self.line("struct");
        self.nested(|d| {
            for decl in &s.decls {
                d.decl(decl);
            }
        });
    }

    fn expr(&mut self, e: &Expr) {
        crate::stack::guard(|| self.expr_inner(e));
    }

    fn expr_inner(&mut self, e: &Expr) {
        match e {
            Expr::Ident(i) => self.line(&format!("ident {}", i.name)),
            Expr::Lit(l) => self.line(&format!("lit {}", normal_literal(l))),
            Expr::Interpolation(i) => {
                self.line("interpolation");
                self.nested(|d| {
                    for (n, f) in i.fragments.iter().enumerate() {
                        d.line(&format!("fragment {:?}", f.raw.replace('\r', "")));
                        if let Some(e) = i.exprs.get(n) {
                            d.expr(e);
                        }
                    }
                });
            }
            Expr::Bottom(_) => self.line("bottom"),
            Expr::Struct(s) => self.struct_lit(s),
            Expr::List(l) => {
                self.line("list");
                self.nested(|d| {
                    for el in &l.elems {
                        match el {
                            ListElem::Expr(e) => d.expr(e),
                            ListElem::Ellipsis(e) => d.ellipsis(e),
                            ListElem::Comprehension(c) => d.comprehension(c),
                            ListElem::Bad(_) => d.line("bad"),
                        }
                    }
                });
            }
            Expr::Paren { expr, .. } => {
                // `cue fmt` prints `((x))` as `(x)`, so directly nested parentheses are one.
                let mut inner = &**expr;
                while let Expr::Paren { expr, .. } = inner {
                    inner = expr;
                }
                self.line("paren");
                self.nested(|d| d.expr(inner));
            }
            Expr::Selector { expr, sel, .. } => {
                self.line("selector");
                self.nested(|d| {
                    d.expr(expr);
                    d.label(sel);
                });
            }
            Expr::Index { expr, index, .. } => {
                self.line("index");
                self.nested(|d| {
                    d.expr(expr);
                    d.expr(index);
                });
            }
            Expr::Slice { expr, lo, hi, .. } => {
                self.line("slice");
                self.nested(|d| {
                    d.expr(expr);
                    match lo {
                        Some(lo) => d.expr(lo),
                        None => d.line("none"),
                    }
                    match hi {
                        Some(hi) => d.expr(hi),
                        None => d.line("none"),
                    }
                });
            }
            Expr::Call { func, args, .. } => {
                self.line("call");
                self.nested(|d| {
                    d.expr(func);
                    for a in args {
                        d.expr(a);
                    }
                });
            }
            Expr::Unary { op, expr, .. } => {
                self.line(&format!("unary {}", op.as_str()));
                self.nested(|d| d.expr(expr));
            }
            Expr::Binary { op, lhs, rhs, .. } => {
                self.line(&format!("binary {}", op.as_str()));
                self.nested(|d| {
                    d.expr(lhs);
                    d.expr(rhs);
                });
            }
            Expr::Optional { expr, .. } => {
                self.line("optional");
                self.nested(|d| d.expr(expr));
            }
            Expr::Open { expr, .. } => {
                self.line("open");
                self.nested(|d| d.expr(expr));
            }
            Expr::Alias { ident, expr, .. } => {
                self.line(&format!("alias {}", ident.name));
                self.nested(|d| d.expr(expr));
            }
            Expr::Bad(_) => self.line("bad"),
        }
    }
}

/// A literal's text in a normal form: number spellings that the formatter rewrites are made
/// canonical, and multi-line strings lose the indentation that the formatter may change.
fn normal_literal(l: &BasicLit) -> String {
    match l.kind {
        // The formatter writes `0755` as `0o755` and `1.K` as `1.0K`, and lowers a literal with
        // an `E` before its end (`0xFF5E10`); none of this changes the value.
        LitKind::Int => {
            let raw = match l.raw.find('E') {
                Some(p) if p + 1 < l.raw.len() => l.raw.as_str().to_ascii_lowercase(),
                _ => l.raw.to_string(),
            };
            let b = raw.as_bytes();
            let mut s = if b.len() > 1
                && b[0] == b'0'
                && b[1].is_ascii_digit()
                && b.iter().all(|c| c.is_ascii_digit() || *c == b'_')
            {
                format!("0o{}", &raw[1..])
            } else {
                raw.clone()
            };
            if let Some(p) = s.find('.')
                && !s[p + 1..].starts_with(|c: char| c.is_ascii_digit())
            {
                s.insert(p + 1, '0');
            }
            s
        }
        LitKind::Float => {
            let mut s = l.raw.replace('E', "e");
            if s.starts_with('.') {
                s.insert(0, '0');
            }
            if let Some(i) = s.find('.') {
                let after = s[i + 1..].chars().next();
                if !after.is_some_and(|c| c.is_ascii_digit()) {
                    s.insert(i + 1, '0');
                }
            }
            s
        }
        // Carriage returns are not part of a string's value (spec), and the formatter drops them.
        LitKind::String | LitKind::Bytes if l.raw.contains('\n') => {
            let raw = l.raw.replace('\r', "");
            let lines: Vec<&str> = raw.lines().map(str::trim_start).collect();
            format!("{:?}", lines.join("\n"))
        }
        LitKind::String | LitKind::Bytes => l.raw.replace('\r', ""),
        _ => l.raw.to_string(),
    }
}
