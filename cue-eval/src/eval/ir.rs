//! The compiled form of CUE source that the evaluator runs: expressions with every identifier
//! bound to its declaration (a De Bruijn-like "up count" of struct scopes), labels interned,
//! literals decoded once. Expressions live in one arena and are referred to by [`ExprId`].

use std::rc::Rc;

use crate::ast::{BinaryOp, Span, UnaryOp};
use crate::num::{Num, NumKind};

use super::label::Label;
use super::value::Kind;

pub type ExprId = u32;
pub type StructId = u32;

/// How a field takes part in its struct.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ArcType {
    Member = 0,
    Required = 1,
    Optional = 2,
}

/// A predeclared function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Builtin {
    Len,
    Close,
    And,
    Or,
    Div,
    Mod,
    Quo,
    Rem,
    MatchN,
    MatchIf,
    Error,
    /// `__reclose(x)` (the `explicitopen` experiment; `false`: used in a file without it).
    Reclose(bool),
    /// `__closeAll(x)` (the `explicitopen` experiment; `false`: used in a file without it).
    CloseAll(bool),
    /// A function of a standard-library package, by qualified name (`strings.ToUpper`).
    Pkg(u32),
}

#[derive(Clone, Debug)]
pub enum Expr {
    Top,
    /// `_|_` written in the source.
    Bottom,
    Null,
    Bool(bool),
    Num(Num, NumKind),
    Str(Rc<str>),
    Bytes(Rc<[u8]>),
    /// `int`, `string`, … (and `number`, `bytes`, `bool`, `null` is a literal).
    Basic(Kind),
    /// A unary bound or validator: `>=x`, `!=x`, `=~x`.
    Bound(UnaryOp, ExprId),
    /// `uint8` and friends: a kind plus a range (boxed, as are the other large and rare
    /// payloads, so that an expression takes 32 bytes).
    Range(Kind, Box<(Option<Num>, Option<Num>)>),
    Struct(StructId),
    List(Box<ListLit>),
    /// A reference to a field of the scope `up` struct levels out.
    FieldRef {
        up: u32,
        label: Label,
    },
    /// `X` in `[X=pattern]: v`: the label the constraint is applied to.
    LabelRef {
        up: u32,
    },
    /// `X` in `a: X=v`: the vertex of the field itself (0 = the node the expression is part of).
    /// `lists`: list literals between the reference and the alias (or the innermost frame it
    /// passes): the element's list is `lists` parents up (`X=[1, X[0]]`, `[1, self[0]]`).
    ValueRef {
        up: u32,
        lists: u32,
    },
    /// A `let` or comprehension binding in scope `up` levels out.
    LetRef {
        up: u32,
        label: Label,
        name: Rc<str>,
    },
    /// A package import.
    Import(u32),
    Builtin(Builtin),
    Selector(ExprId, Label),
    Index(ExprId, ExprId),
    /// `x?`, `a.b?`, `l[i]?` (the `try` experiment): a reference whose target may be undefined;
    /// an undefined target is an `ErrCode::Undefined` error that makes the enclosing `try` yield
    /// nothing.
    TryRef(ExprId),
    /// `x...` (the `explicitopen` experiment): `x` with the closedness of its top level lifted.
    Open(ExprId),
    Slice(ExprId, Option<ExprId>, Option<ExprId>),
    Call(ExprId, Vec<ExprId>),
    Unary(UnaryOp, ExprId),
    Binary(BinaryOp, ExprId, ExprId),
    /// A disjunction, flattened: `(alternative, is_default)`.
    Disj(Vec<(ExprId, bool)>),
    /// An interpolation: its literal fragments, the expressions between them, and whether it
    /// makes bytes.
    Interp(Box<(Vec<Rc<str>>, Vec<ExprId>, bool)>),
    /// An error found at compile time (unresolved reference, bad literal).
    Error(Rc<str>),
    /// The value of a deferred top-level field of an imported file, not compiled yet: the
    /// evaluator compiles it in place (`compile::compile_lazy`) before it reads it.
    Lazy(u32),
}

#[derive(Clone, Debug)]
pub struct ListLit {
    pub elems: Vec<ListElem>,
    /// `...T` (with `None` for `...`).
    pub ellipsis: Option<Option<ExprId>>,
}

#[derive(Clone, Debug)]
pub enum ListElem {
    Expr(ExprId),
    Comprehension(Rc<Comprehension>),
}

#[derive(Clone, Debug)]
pub struct StructLit {
    pub span: Span,
    pub decls: Vec<Decl>,
    /// True if some declaration is an embedding (comprehensions are not counted).
    pub has_embed: bool,
    /// True if it declares regular (non-definition, non-hidden) fields.
    pub has_regular: bool,
    /// True if it declares a regular field that is neither optional nor required, statically or
    /// dynamically: only such a field makes the literal a struct when it also embeds a value
    /// (`{string, #foo: "bar", bar?: int, [string]: int}` is a string).
    pub has_member: bool,
    /// The literal is in a file with the `explicitopen` experiment: embedding a definition
    /// does not open it.
    pub explicit_open: bool,
    /// The literal is a file with deferred fields (values that are `Expr::Lazy`).
    pub has_lazy: bool,
    /// For a literal with many declarations: the index in `decls` of the field, dynamic field
    /// or pattern at each span, so that export's field order finds the declaration that gave
    /// a conjunct without searching; `None` for a small literal or when two declarations share
    /// a span.
    pub span_index: Option<rustc_hash::FxHashMap<Span, u32>>,
}

/// Literals with at least this many declarations get a [`StructLit::span_index`].
pub const INDEX_DECLS: usize = 16;

impl StructLit {
    /// Whether the literal is made only of comprehensions (no member field, no embedding):
    /// it makes a node a struct only when no concrete value makes it a scalar or a list.
    pub fn only_comprehensions(&self) -> bool {
        !self.has_member
            && !self.has_embed
            && self
                .decls
                .iter()
                .any(|d| matches!(d, Decl::Comprehension(_)))
    }

    /// The span of a declaration that can give a label (a field, dynamic field or pattern).
    pub fn label_decl_span(d: &Decl) -> Option<Span> {
        match d {
            Decl::Field { span, .. } | Decl::Dynamic { span, .. } | Decl::Pattern { span, .. } => {
                Some(*span)
            }
            _ => None,
        }
    }

    /// The index described at [`StructLit::span_index`].
    pub fn index_spans(decls: &[Decl]) -> Option<rustc_hash::FxHashMap<Span, u32>> {
        if decls.len() < INDEX_DECLS {
            return None;
        }
        let mut m = rustc_hash::FxHashMap::default();
        for (i, d) in decls.iter().enumerate() {
            let Some(s) = Self::label_decl_span(d) else {
                continue;
            };
            if m.insert(s, i as u32).is_some() {
                return None;
            }
        }
        Some(m)
    }
}

#[derive(Clone, Debug)]
pub enum Decl {
    Field {
        label: Label,
        arc: ArcType,
        value: ExprId,
        span: Span,
    },
    /// `(expr): v` and `"\(x)": v`.
    Dynamic {
        key: ExprId,
        arc: ArcType,
        value: ExprId,
        span: Span,
    },
    /// `[filter]: v`.
    Pattern {
        filter: ExprId,
        value: ExprId,
        span: Span,
    },
    Embed(ExprId, Span),
    Let {
        label: Label,
        value: ExprId,
    },
    Ellipsis(Option<ExprId>),
    Comprehension(Rc<Comprehension>),
}

#[derive(Clone, Debug)]
pub struct Comprehension {
    pub clauses: Vec<Clause>,
    /// The body: a struct literal evaluated in the scope of all clauses.
    pub body: StructId,
    /// The `else { ... }` / `fallback { ... }` body (the `try` experiment), yielded once, in the
    /// scope of the comprehension, when the clauses yield nothing.
    pub fallback: Option<StructId>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum Clause {
    /// Binds key and value in a new scope.
    For {
        key: Option<Label>,
        value: Label,
        source: ExprId,
    },
    /// The condition and where the clause starts (`if` keyword).
    If(ExprId, Span),
    /// Binds a name in a new scope.
    Let { label: Label, value: ExprId },
    /// `try` (the `try` experiment): the comprehension yields only if a trial evaluation of the
    /// bound value (`try x = expr`, bound like `let`) or, for a bare `try`, of the body finds no
    /// optional reference `x?` to an undefined field.
    Try { binding: Option<(Label, ExprId)> },
}
