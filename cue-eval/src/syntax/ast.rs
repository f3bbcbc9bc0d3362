//! The CUE syntax tree produced by [`crate::parse`].
//!
//! The tree is close to the source: literals keep their raw text (quotes, escapes, `#` padding and
//! number spelling) so that the formatter can reproduce them and the evaluator can decode them
//! once. Every node carries a [`Span`] (file id + byte range). Comments are not attached to nodes;
//! they are kept in source order in [`File::comments`], and the formatter interleaves them by
//! position, which keeps the tree small and the parser simple.
//!
//! Shorthand fields `a: b: c: 1` are represented as nested fields whose values are brace-less
//! struct literals ([`StructLit::braces`] is `false`), as in the official Go implementation.

use std::fmt;

/// Identifies a source file in a [`crate::source::SourceMap`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FileId(pub u32);

/// A byte range in one source file.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Span {
    pub file: FileId,
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn new(file: FileId, start: usize, end: usize) -> Span {
        Span {
            file,
            start: start as u32,
            end: end as u32,
        }
    }

    /// The smallest span covering both `self` and `other` (which must be in the same file).
    pub fn to(self, other: Span) -> Span {
        Span {
            file: self.file,
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }

    pub fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }

    pub fn len(self) -> usize {
        (self.end - self.start) as usize
    }

    pub fn is_empty(self) -> bool {
        self.start == self.end
    }
}

impl fmt::Debug for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}..{}", self.start, self.end)
    }
}

/// A parsed source file: its declarations in order, including the package clause, imports and
/// file-level attributes, which the grammar only accepts in their proper place.
#[derive(Clone, Debug, PartialEq)]
pub struct File {
    pub span: Span,
    pub decls: Vec<Decl>,
    /// Every `//` comment of the file, in source order.
    pub comments: Vec<Comment>,
}

impl File {
    /// The name of the package clause, if any.
    pub fn package_name(&self) -> Option<&str> {
        self.decls.iter().find_map(|d| match d {
            Decl::Package(p) => Some(&*p.name.name),
            _ => None,
        })
    }

    /// All import specifications of the file, in order.
    pub fn imports(&self) -> impl Iterator<Item = &ImportSpec> {
        self.decls.iter().flat_map(|d| match d {
            Decl::Import(i) => i.specs.as_slice(),
            _ => &[],
        })
    }
}

/// A `// ...` comment. `text` includes the leading `//`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Comment {
    pub span: Span,
    pub text: Box<str>,
}

/// A declaration inside a struct (or at file level).
///
/// A field is held in place: most declarations are fields (files of concrete data hold one per
/// value), and a struct's list holds them without an allocation each. The other variants'
/// payloads are boxed, so that they take no more room than a field.
#[derive(Clone, Debug, PartialEq)]
pub enum Decl {
    Package(Box<Package>),
    Import(Box<ImportDecl>),
    Field(Field),
    /// An embedded expression (`#Def`, `{...}`, `X=expr`, ...).
    Embed(Box<Expr>),
    Comprehension(Box<Comprehension>),
    Let(Box<LetClause>),
    Ellipsis(Box<Ellipsis>),
    Attribute(Box<Attribute>),
    /// A declaration that failed to parse; its error is in the error list.
    Bad(Span),
}

impl Decl {
    pub fn span(&self) -> Span {
        match self {
            Decl::Package(p) => p.span,
            Decl::Import(i) => i.span,
            Decl::Field(f) => f.span,
            Decl::Embed(e) => e.span(),
            Decl::Comprehension(c) => c.span,
            Decl::Let(l) => l.span,
            Decl::Ellipsis(e) => e.span,
            Decl::Attribute(a) => a.span,
            Decl::Bad(s) => *s,
        }
    }
}

/// `package name`.
#[derive(Clone, Debug, PartialEq)]
pub struct Package {
    pub span: Span,
    pub name: Ident,
}

/// `import "path"` or `import ( ... )`.
#[derive(Clone, Debug, PartialEq)]
pub struct ImportDecl {
    pub span: Span,
    /// Whether the specs were written in a parenthesised group.
    pub grouped: bool,
    pub specs: Vec<ImportSpec>,
}

/// One import: an optional local name and the quoted path (raw text, with quotes).
#[derive(Clone, Debug, PartialEq)]
pub struct ImportSpec {
    pub span: Span,
    pub name: Option<Ident>,
    pub path: BasicLit,
}

/// A field `label: value`, with its optional alias, constraint marker and attributes.
#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    pub span: Span,
    /// `X=` before the label (boxed, as the postfix alias: few fields have one).
    pub alias: Option<Box<Ident>>,
    pub label: Label,
    pub constraint: Constraint,
    /// A postfix alias `~X` or `~(K,V)` after the label (the `aliasv2` experiment).
    pub postfix_alias: Option<Box<PostfixAlias>>,
    pub value: Expr,
    pub attrs: thin_vec::ThinVec<Attribute>,
}

/// `~X` (binds the field) or `~(K,V)` (binds the label and the value) after a label.
#[derive(Clone, Debug, PartialEq)]
pub struct PostfixAlias {
    pub span: Span,
    /// `X` in `~X`, `K` in `~(K,V)`.
    pub first: Ident,
    /// `V` in `~(K,V)`; `None` for `~X`.
    pub second: Option<Ident>,
}

/// The marker after a label.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Constraint {
    /// `a: v`
    Regular,
    /// `a?: v`
    Optional,
    /// `a!: v`
    Required,
}

/// What stands left of the colon of a field.
#[derive(Clone, Debug, PartialEq)]
pub enum Label {
    /// `name`, `#Def`, `_hidden`, and keywords used as names.
    Ident(Ident),
    /// `"quoted"` or `#"raw"#` (a [`Expr::Lit`] with [`LitKind::String`]) or an interpolation.
    String(Box<Expr>),
    /// `(expr)`: a dynamic field.
    Paren { span: Span, expr: Box<Expr> },
    /// `[expr]`: a pattern constraint; `expr` may be an [`Expr::Alias`] (`[X=string]`).
    Pattern { span: Span, expr: Box<Expr> },
    /// A bracketed label that is not one expression, such as `[for x in y {x}]`. It parses, as
    /// in CUE, and is rejected when compiling. `list` is always an [`Expr::List`].
    List { span: Span, list: Box<Expr> },
}

impl Label {
    pub fn span(&self) -> Span {
        match self {
            Label::Ident(i) => i.span,
            Label::String(e) => e.span(),
            Label::Paren { span, .. } | Label::Pattern { span, .. } | Label::List { span, .. } => {
                *span
            }
        }
    }
}

/// An identifier; `name` is exactly as written (`#Def`, `_x`, `for`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ident {
    pub span: Span,
    /// Held in place up to 24 bytes, as nearly every name is: a parse allocates nothing for
    /// it, and dropping the tree frees nothing.
    pub name: compact_str::CompactString,
}

/// `@name(body)`. `text` is the whole attribute as written, including `@` and the parentheses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attribute {
    pub span: Span,
    pub text: Box<str>,
}

impl Attribute {
    /// The attribute's name, `tag` in `@tag(x)`.
    pub fn name(&self) -> &str {
        let s = &self.text[1..];
        s.split('(').next().unwrap_or(s)
    }

    /// The text between the outer parentheses, `x` in `@tag(x)`.
    pub fn body(&self) -> &str {
        let s = &self.text[..];
        match (s.find('('), s.rfind(')')) {
            (Some(a), Some(b)) if a < b => &s[a + 1..b],
            (Some(a), _) => &s[a + 1..],
            _ => "",
        }
    }
}

/// `...` or `...T`.
#[derive(Clone, Debug, PartialEq)]
pub struct Ellipsis {
    pub span: Span,
    pub ty: Option<Box<Expr>>,
}

/// `let x = expr`.
#[derive(Clone, Debug, PartialEq)]
pub struct LetClause {
    pub span: Span,
    pub ident: Ident,
    pub expr: Box<Expr>,
}

/// `for ... if ... let ... { body }`, optionally followed by `else {...}` or `fallback {...}`
/// (the `try` experiment of v0.17).
#[derive(Clone, Debug, PartialEq)]
pub struct Comprehension {
    pub span: Span,
    pub clauses: Vec<Clause>,
    pub body: StructLit,
    pub fallback: Option<Box<Fallback>>,
}

/// The `else { ... }` / `fallback { ... }` part of a comprehension.
#[derive(Clone, Debug, PartialEq)]
pub struct Fallback {
    pub span: Span,
    pub keyword: FallbackKeyword,
    pub body: StructLit,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FallbackKeyword {
    Else,
    Fallback,
}

/// One clause of a comprehension.
#[derive(Clone, Debug, PartialEq)]
pub enum Clause {
    /// `for key, value in source` (`key` is absent in `for value in source`; boxed, so that
    /// a clause stays small).
    For {
        span: Span,
        key: Option<Box<Ident>>,
        value: Ident,
        source: Box<Expr>,
    },
    /// `if condition`.
    If { span: Span, cond: Expr },
    /// `let name = expr`.
    Let(LetClause),
    /// `try` (bare) or `try name = expr`.
    Try {
        span: Span,
        binding: Option<(Ident, Box<Expr>)>,
    },
}

impl Clause {
    pub fn span(&self) -> Span {
        match self {
            Clause::For { span, .. } | Clause::If { span, .. } | Clause::Try { span, .. } => *span,
            Clause::Let(l) => l.span,
        }
    }
}

/// `{ decls }`, or the brace-less struct of a shorthand field `a: b: 1`.
#[derive(Clone, Debug, PartialEq)]
pub struct StructLit {
    pub span: Span,
    /// False for the implicit struct of a shorthand field.
    pub braces: bool,
    pub decls: Vec<Decl>,
}

/// An element of a list literal.
#[derive(Clone, Debug, PartialEq)]
pub enum ListElem {
    Expr(Expr),
    Ellipsis(Ellipsis),
    Comprehension(Comprehension),
    /// An element that failed to parse; its error is in the error list.
    Bad(Span),
}

impl ListElem {
    pub fn span(&self) -> Span {
        match self {
            ListElem::Expr(e) => e.span(),
            ListElem::Ellipsis(e) => e.span,
            ListElem::Comprehension(c) => c.span,
            ListElem::Bad(s) => *s,
        }
    }
}

/// `[elems]`.
#[derive(Clone, Debug, PartialEq)]
pub struct ListLit {
    pub span: Span,
    pub elems: Vec<ListElem>,
}

/// The kind of a [`BasicLit`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LitKind {
    Null,
    True,
    False,
    /// Any integer spelling: decimal, `0x`, `0o`, `0b`, legacy octal `0755`, and SI `1.5Ki`.
    Int,
    Float,
    /// A double-quoted string literal (single or multi-line, possibly `#`-padded).
    String,
    /// A single-quoted bytes literal.
    Bytes,
}

/// A literal with its raw source text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BasicLit {
    pub span: Span,
    pub kind: LitKind,
    /// Held in place up to 24 bytes (numbers, keywords, short strings and quoted labels), on
    /// the heap beyond.
    pub raw: compact_str::CompactString,
}

/// A string with `\(expr)` interpolations. `fragments` are the raw text pieces around the
/// expressions: the first starts with the opening quote and ends with `\(`, the middle ones
/// start with `)` and end with `\(`, the last starts with `)` and ends with the closing quote.
/// Always `fragments.len() == exprs.len() + 1`.
#[derive(Clone, Debug, PartialEq)]
pub struct Interpolation {
    pub span: Span,
    pub fragments: Vec<BasicLit>,
    pub exprs: Vec<Expr>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnaryOp {
    /// `+`
    Pos,
    /// `-`
    Neg,
    /// `!`
    Not,
    /// `*`: a default marker.
    Default,
    /// `==` as a bound.
    Eq,
    /// `!=` as a bound.
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `=~`
    Match,
    /// `!~`
    NotMatch,
}

impl UnaryOp {
    pub fn as_str(self) -> &'static str {
        match self {
            UnaryOp::Pos => "+",
            UnaryOp::Neg => "-",
            UnaryOp::Not => "!",
            UnaryOp::Default => "*",
            UnaryOp::Eq => "==",
            UnaryOp::Ne => "!=",
            UnaryOp::Lt => "<",
            UnaryOp::Le => "<=",
            UnaryOp::Gt => ">",
            UnaryOp::Ge => ">=",
            UnaryOp::Match => "=~",
            UnaryOp::NotMatch => "!~",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinaryOp {
    /// `|`
    Disj,
    /// `&`
    Unify,
    /// `||`
    Or,
    /// `&&`
    And,
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `=~`
    Match,
    /// `!~`
    NotMatch,
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
}

impl BinaryOp {
    pub fn as_str(self) -> &'static str {
        match self {
            BinaryOp::Disj => "|",
            BinaryOp::Unify => "&",
            BinaryOp::Or => "||",
            BinaryOp::And => "&&",
            BinaryOp::Eq => "==",
            BinaryOp::Ne => "!=",
            BinaryOp::Lt => "<",
            BinaryOp::Le => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::Ge => ">=",
            BinaryOp::Match => "=~",
            BinaryOp::NotMatch => "!~",
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
        }
    }

    /// Binding strength, 1 (`|`) to 7 (`*` `/`), as in the spec's precedence table.
    pub fn precedence(self) -> u8 {
        match self {
            BinaryOp::Disj => 1,
            BinaryOp::Unify => 2,
            BinaryOp::Or => 3,
            BinaryOp::And => 4,
            BinaryOp::Eq
            | BinaryOp::Ne
            | BinaryOp::Lt
            | BinaryOp::Le
            | BinaryOp::Gt
            | BinaryOp::Ge
            | BinaryOp::Match
            | BinaryOp::NotMatch => 5,
            BinaryOp::Add | BinaryOp::Sub => 6,
            BinaryOp::Mul | BinaryOp::Div => 7,
        }
    }
}

/// An expression.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    Ident(Ident),
    Lit(BasicLit),
    Interpolation(Interpolation),
    /// `_|_`
    Bottom(Span),
    Struct(StructLit),
    List(ListLit),
    /// `(expr)`
    Paren {
        span: Span,
        expr: Box<Expr>,
    },
    /// `expr.sel`; `sel` is an [`Label::Ident`] or a [`Label::String`].
    Selector {
        span: Span,
        expr: Box<Expr>,
        sel: Box<Label>,
    },
    /// `expr[index]`
    Index {
        span: Span,
        expr: Box<Expr>,
        index: Box<Expr>,
    },
    /// `expr[lo:hi]`
    Slice {
        span: Span,
        expr: Box<Expr>,
        lo: Option<Box<Expr>>,
        hi: Option<Box<Expr>>,
    },
    /// `func(args)`
    Call {
        span: Span,
        func: Box<Expr>,
        args: Vec<Expr>,
    },
    Unary {
        span: Span,
        op: UnaryOp,
        expr: Box<Expr>,
    },
    Binary {
        span: Span,
        op: BinaryOp,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    /// `expr?`: an optional reference (the `try` experiment).
    Optional {
        span: Span,
        expr: Box<Expr>,
    },
    /// `expr...`: opens a closed value (the `explicitopen` experiment).
    Open {
        span: Span,
        expr: Box<Expr>,
    },
    /// `X=expr` (the name boxed: aliases are rare, and the other variants are smaller).
    Alias {
        span: Span,
        ident: Box<Ident>,
        expr: Box<Expr>,
    },
    /// An expression that failed to parse; its error is in the error list.
    Bad(Span),
}

impl Expr {
    pub fn span(&self) -> Span {
        match self {
            Expr::Ident(i) => i.span,
            Expr::Lit(l) => l.span,
            Expr::Interpolation(i) => i.span,
            Expr::Struct(s) => s.span,
            Expr::List(l) => l.span,
            Expr::Bottom(span)
            | Expr::Bad(span)
            | Expr::Paren { span, .. }
            | Expr::Selector { span, .. }
            | Expr::Index { span, .. }
            | Expr::Slice { span, .. }
            | Expr::Call { span, .. }
            | Expr::Unary { span, .. }
            | Expr::Binary { span, .. }
            | Expr::Optional { span, .. }
            | Expr::Open { span, .. }
            | Expr::Alias { span, .. } => *span,
        }
    }
}
#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::size_of;

    /// The parser moves these by value on every reduction: large variants are boxed so that a
    /// parser symbol stays small (the starter module's schemas parse ~20% faster).
    #[test]
    fn nodes_stay_small() {
        assert!(
            size_of::<Expr>() <= 64,
            "Expr is {} bytes",
            size_of::<Expr>()
        );
        // Every field of every parsed file is a `Field`, the vendored schemas' among them, and
        // every declaration is as large: its rare parts (aliases) are boxed.
        assert!(
            size_of::<Field>() <= 160,
            "Field is {} bytes",
            size_of::<Field>()
        );
        // A struct's list holds its fields in place; every other payload is boxed, so that a
        // declaration takes no more room than a field.
        assert_eq!(size_of::<Decl>(), size_of::<Field>(), "Decl");
        for (name, size) in [
            ("Clause", size_of::<Clause>()),
            ("ListElem", size_of::<ListElem>()),
            ("Comprehension", size_of::<Comprehension>()),
        ] {
            assert!(size <= 88, "{name} is {size} bytes");
        }
    }
}
