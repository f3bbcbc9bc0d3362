//! Expressions in value position: references, selectors and indices, operators with CUE's
//! numeric and string semantics, interpolation, and the `x == _|_` existence test.

use std::cmp::Ordering;
use std::rc::Rc;

use crate::ast::{BinaryOp, Span, UnaryOp};
use crate::num::NumKind;

use super::ir::{ArcType, Builtin, Expr, ExprId};
use super::label::Label;
use super::unify::Resolved;
use super::value::{Bottom, ErrCode, Kind, Value};
use super::*;

pub(super) fn env_up(env: Option<&EnvRef>, up: u32) -> Option<&EnvRef> {
    let mut e = env?;
    for _ in 0..up {
        e = e.up.as_ref()?;
    }
    Some(e)
}

/// The frame `up` scopes out, or the error of a reference that leaves every scope.
fn frame_up(env: Option<&EnvRef>, up: u32, span: Span) -> Result<&EnvRef, Rc<Bottom>> {
    env_up(env, up).ok_or_else(|| Bottom::with_span(ErrCode::Eval, "reference out of scope", span))
}

/// The count of a string or bytes repetition (`"ab" * 3`): a non-negative int.
fn repeat_count(n: &crate::num::Num) -> Option<usize> {
    n.to_i64().and_then(|k| usize::try_from(k).ok())
}

/// What `T` admits in [`Runtime::choice_meets_none`]: a scalar type, or some concrete scalars.
enum Side {
    Kind(Kind),
    Scalars(Vec<Value>),
}

/// Whether two concrete scalars unify: the same kind (`1 & 1.0` conflicts) and equal.
pub(super) fn same_scalar(a: &Value, b: &Value) -> bool {
    a.kind() == b.kind() && scalar_eq(a, b)
}

/// Equality of two concrete scalars (numbers by value).
pub fn scalar_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Num(x, _), Value::Num(y, _)) => x.cmp(y) == Ordering::Equal,
        (Value::Str(x), Value::Str(y)) => x == y,
        (Value::Bytes(x), Value::Bytes(y)) => x == y,
        _ => false,
    }
}

/// Text from bytes the way Go's `strings.ToValidUTF8(s, "\uFFFD")` makes it (as CUE does for
/// bytes interpolated into a string): each run of invalid bytes becomes one U+FFFD.
pub fn to_valid_utf8(b: &[u8]) -> std::borrow::Cow<'_, str> {
    if let Ok(s) = std::str::from_utf8(b) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(b.len() + 2);
    let mut rest = b;
    let mut in_bad_run = false;
    while !rest.is_empty() {
        match std::str::from_utf8(rest) {
            Ok(s) => {
                out.push_str(s);
                break;
            }
            Err(e) => {
                let (good, after) = rest.split_at(e.valid_up_to());
                if !good.is_empty() {
                    in_bad_run = false;
                }
                out.push_str(std::str::from_utf8(good).unwrap_or_default());
                if !in_bad_run {
                    out.push('\u{FFFD}');
                    in_bad_run = true;
                }
                let skip = e.error_len().unwrap_or(after.len()).max(1);
                rest = &after[skip..];
            }
        }
    }
    out.into()
}

/// The error a selection from a vertex with error `e` gives: a child error (recorded for a
/// field below) becomes the selection's own, still naming that field.
fn own_error(e: &Rc<Bottom>) -> Rc<Bottom> {
    if e.child {
        Rc::new(Bottom {
            child: false,
            ..(**e).clone()
        })
    } else {
        e.clone()
    }
}

/// Equality of constraint values, for removing duplicate bounds.
pub fn value_eq_shallow(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Bound(o1, x), Value::Bound(o2, y)) => o1 == o2 && same_scalar(x, y),
        (Value::Basic(x), Value::Basic(y)) => x == y,
        (Value::Top, Value::Top) => true,
        _ => a.is_concrete_scalar() && b.is_concrete_scalar() && scalar_eq(a, b),
    }
}

impl Runtime {
    /// Compiles expression `id` in place if it is the value of a deferred field
    /// (`compile::compile_lazy`).
    pub(super) fn force(&mut self, id: ExprId) {
        let Some((file, start, end)) = compile::lazy_range(&self.prog, id) else {
            return;
        };
        let text = self
            .sources
            .get(file.0 as usize)
            .cloned()
            .unwrap_or_default();
        let parse = || compile::parse_lazy(file, &text, start, end);
        let parsed = match &self.parse_cache {
            Some(cache) => cache.deferred_field(file, start, end, &text, parse),
            None => std::sync::Arc::new(parse()),
        };
        compile::compile_lazy(&mut self.prog, id, &parsed);
        if let Some(log) = &self.prog.forced {
            log.borrow_mut().push((id, parsed));
        }
    }

    /// Compiles the deferred values among the conjuncts of `a` if it is an arc of an imported
    /// package, before a reference inspects or copies them (its own evaluation compiles them
    /// as it adds them).
    pub(super) fn force_conjuncts(&mut self, a: VId) {
        if self.lazy_roots.is_empty()
            || !self
                .v(a)
                .parent
                .is_some_and(|p| self.lazy_roots.contains(&p))
        {
            return;
        }
        for i in 0..self.v(a).conjuncts.len() {
            if let CExpr::Expr(id) = self.v(a).conjuncts[i].x
                && matches!(self.prog.expr(id), Expr::Lazy(_))
            {
                self.force(id);
            }
        }
    }

    /// Expression `id`, compiled first if it is the value of a deferred field. Inlined into
    /// the evaluator's hot paths; compiling is the cold one.
    #[inline(always)]
    pub(super) fn expr_forced(&mut self, id: ExprId) -> Rc<Expr> {
        let e = self.prog.expr_rc(id);
        if matches!(*e, Expr::Lazy(_)) {
            return self.forced_expr(id);
        }
        e
    }

    #[cold]
    #[inline(never)]
    fn forced_expr(&mut self, id: ExprId) -> Rc<Expr> {
        self.force(id);
        self.prog.expr_rc(id)
    }

    /// Resolves a reference-like expression to the vertex it names.
    pub(super) fn resolve(
        &mut self,
        env: Option<&EnvRef>,
        id: ExprId,
        cur: VId,
    ) -> Result<Resolved, Rc<Bottom>> {
        let e = self.expr_forced(id);
        let span = self.prog.span(id);
        match &*e {
            Expr::FieldRef { up, label } => {
                let scope = frame_up(env, *up, span)?.vertex;
                self.lookup_field(scope, *label, span, true)
            }
            Expr::LetRef { up, label, name } => {
                let frame = frame_up(env, *up, span)?;
                match self.let_vertex(frame, *label) {
                    Some(a) => {
                        let ax = self.v(a);
                        if ax.anonymous
                            && let Some(f) = ax.forward
                            && ax.conjuncts.is_empty()
                        {
                            return Ok(Resolved::Vertex(f));
                        }
                        Ok(Resolved::Vertex(a))
                    }
                    None => Err(Bottom::with_span(
                        ErrCode::Incomplete,
                        format!("reference {name:?} not yet available"),
                        span,
                    )),
                }
            }
            Expr::ValueRef { up, lists } => {
                let mut w = if *up == 0 {
                    cur
                } else {
                    frame_up(env, up - 1, span)?.vertex
                };
                for _ in 0..*lists {
                    match self.v(w).parent {
                        Some(p) => w = p,
                        None => break,
                    }
                }
                Ok(Resolved::Vertex(w))
            }
            Expr::LabelRef { up } => {
                let l = env_up(env, *up).and_then(|f| f.dyn_label);
                match l {
                    Some(l) if l.is_int() => Ok(Resolved::Value(Value::int(l.index() as i64))),
                    Some(l) => Ok(Resolved::Value(Value::Str(Rc::from(
                        self.prog.labels.name(l),
                    )))),
                    None => Ok(Resolved::Value(Value::Basic(Kind::STRING))),
                }
            }
            Expr::Import(pkg) => match self.packages.get(*pkg as usize).copied().flatten() {
                Some(root) => Ok(Resolved::Vertex(root)),
                None => Err(Bottom::with_span(
                    ErrCode::Eval,
                    format!(
                        "package {:?} not found",
                        self.prog
                            .imports
                            .get(*pkg as usize)
                            .cloned()
                            .unwrap_or_default()
                    ),
                    span,
                )),
            },
            Expr::Selector(x, label) => {
                let base = self.resolve_base(env, *x, cur)?;
                let base = match base {
                    Resolved::Vertex(w) => w,
                    Resolved::Value(v) => {
                        return Err(self.select_error(&v, *label, span));
                    }
                };
                self.evaluate(base);
                let w = self.default_of(base);
                self.evaluate(w);
                if let Some(b) = self.undefined_in_top(w, id, *x) {
                    return Err(b);
                }
                self.lookup_field(w, *label, self.prog.sel_span(id), false)
            }
            Expr::Index(x, i) => {
                let base = self.resolve_base(env, *x, cur)?;
                let idx = self.eval_value(env, *i, Some(cur));
                if matches!(idx, Value::Top) {
                    // `_` can never be an index (CUE: "invalid type _").
                    return Err(Bottom::with_spans(
                        ErrCode::Eval,
                        format!("invalid index {} (invalid type _)", self.expr_text(*i)),
                        vec![span, self.prog.span(*i)],
                    ));
                }
                let idx = self.concrete(idx)?;
                // CUE puts index errors at the index (`[3]`), or at both the expression and the
                // index when the index itself is invalid.
                let ispan = self.prog.span(*i);
                let both = |code, msg: String| {
                    Rc::new(Bottom {
                        code,
                        msg,
                        spans: vec![span, ispan],
                        child: false,
                        at: None,
                        subs: Vec::new(),
                    })
                };
                let w = match base {
                    Resolved::Vertex(w) => w,
                    Resolved::Value(v) => {
                        return Err(Bottom::with_span(
                            ErrCode::Eval,
                            format!(
                                "invalid operand {} (found {}, want list or struct)",
                                self.value_text(&v),
                                v.kind().name()
                            ),
                            span,
                        ));
                    }
                };
                self.evaluate(w);
                let w = self.default_of(w);
                self.evaluate(w);
                if let Some(e) = &self.v(w).err {
                    return Err(own_error(e));
                }
                match idx {
                    Value::Num(n, NumKind::Int) => {
                        let is_list = self.v(w).is_list;
                        if let Some(b) = self.undefined_in_top(w, id, *x) {
                            return Err(b);
                        }
                        if !is_list {
                            return Err(Bottom::with_span(
                                ErrCode::Eval,
                                format!(
                                    "invalid operand {} (found {}, want list or struct)",
                                    self.expr_text(*x),
                                    self.v(w).kind.name()
                                ),
                                span,
                            ));
                        }
                        let len = self
                            .v(w)
                            .arcs
                            .iter()
                            .filter(|&&a| self.v(a).label.is_int())
                            .count();
                        let i = n.to_i64().unwrap_or(-1);
                        if i < 0 {
                            return Err(both(
                                ErrCode::Eval,
                                format!("invalid index {i} (index must be non-negative)"),
                            ));
                        }
                        if i as usize >= len {
                            let open = self.v(w).list_open();
                            return Err(Bottom::with_span(
                                if open {
                                    ErrCode::Incomplete
                                } else {
                                    ErrCode::Eval
                                },
                                format!("index out of range [{}] with length {}", i, len),
                                ispan,
                            ));
                        }
                        match self.arc(w, Label::int(i as u32)) {
                            Some(a) => Ok(Resolved::Vertex(a)),
                            None => Err(Bottom::with_span(
                                ErrCode::Eval,
                                format!("index out of range [{}] with length {}", i, len),
                                ispan,
                            )),
                        }
                    }
                    Value::Str(s) => {
                        let l = self.prog.labels.string(&s);
                        self.lookup_field(w, l, ispan, false)
                    }
                    Value::Bottom(b) => Err(b),
                    // Not concrete yet: at where the index's value was written.
                    other if !other.is_concrete_scalar() && !matches!(other, Value::Vertex(_)) => {
                        let at = self.operand_span(env, *i, Some(cur));
                        Err(Bottom::with_span(
                            ErrCode::Incomplete,
                            format!(
                                "invalid non-ground value {} (must be concrete {})",
                                self.value_text(&other),
                                other.kind().name()
                            ),
                            at,
                        ))
                    }
                    other => Err(both(
                        if other.is_concrete_scalar() {
                            ErrCode::Eval
                        } else {
                            ErrCode::Incomplete
                        },
                        format!(
                            "invalid index {} (invalid type {})",
                            self.value_text(&other),
                            other.kind().name()
                        ),
                    )),
                }
            }
            Expr::TryRef(x) => self.resolve_try(env, *x, cur),
            _ => match self.eval_value(env, id, Some(cur)) {
                Value::Vertex(w) => Ok(Resolved::Vertex(w)),
                Value::Bottom(b) => Err(b),
                v => Ok(Resolved::Value(v)),
            },
        }
    }

    /// `x?`: resolves `x`, turning "this field or element is not there (yet)" into an
    /// `ErrCode::Undefined` error. A field a closed struct can never have, an index beyond a
    /// closed list, a required field not filled in and any other error stay what they are.
    fn resolve_try(
        &mut self,
        env: Option<&EnvRef>,
        x: ExprId,
        cur: VId,
    ) -> Result<Resolved, Rc<Bottom>> {
        let undefined = |b: &Bottom| {
            Rc::new(Bottom {
                code: ErrCode::Undefined,
                ..b.clone()
            })
        };
        let inner = self.prog.expr_rc(x);
        let r = self.resolve(env, x, cur);
        match r {
            Ok(Resolved::Vertex(a)) if self.v(a).arc_type == ArcType::Optional => {
                let label = self.v(a).label;
                Err(Rc::new(Bottom {
                    code: ErrCode::Undefined,
                    msg: format!("undefined field: {}", self.prog.labels.text(label)),
                    spans: vec![self.prog.span(x)],
                    child: false,
                    at: None,
                    subs: Vec::new(),
                }))
            }
            Ok(Resolved::Vertex(a)) if self.v(a).arc_type == ArcType::Required => {
                let label = self.v(a).label;
                Err(Bottom::with_span(
                    ErrCode::Incomplete,
                    format!("required field missing: {}", self.prog.labels.text(label)),
                    self.prog.span(x),
                ))
            }
            Err(b) if b.code == ErrCode::Incomplete => {
                if b.msg.starts_with("index out of range") {
                    return Err(undefined(&b));
                }
                if b.msg.starts_with("cannot reference optional field") {
                    return Err(undefined(&Bottom {
                        msg: b.msg.replacen(
                            "cannot reference optional field",
                            "undefined field",
                            1,
                        ),
                        ..(*b).clone()
                    }));
                }
                if !b.msg.starts_with("undefined field") {
                    return Err(b);
                }
                // Can the field still appear? Not in a closed struct that has no pattern for it.
                if let Expr::Selector(base, label) = &*inner
                    && let Ok(Resolved::Vertex(w)) = self.resolve(env, *base, cur)
                {
                    let w = self.default_of(w);
                    if !self.may_have_field(w, *label) {
                        return Err(Rc::new(Bottom {
                            code: ErrCode::Eval,
                            ..(*b).clone()
                        }));
                    }
                }
                Err(undefined(&b))
            }
            r => r,
        }
    }

    /// Whether a field `label` may still be added to struct `w`: it is open, or a pattern of it
    /// (or `...`) admits the label.
    fn may_have_field(&mut self, w: VId, label: Label) -> bool {
        let vx = self.v(w);
        // `...` opens the struct, whatever closes it.
        let closed =
            vx.open_groups().is_empty() && (self.path_has_def(w) || !vx.closed_groups.is_empty());
        if !closed {
            return true;
        }
        let pats: Vec<Value> = self
            .v(w)
            .patterns()
            .iter()
            .map(|(f, _)| f.clone())
            .collect();
        pats.iter().any(|f| self.label_matches(f, label))
    }

    fn resolve_base(
        &mut self,
        env: Option<&EnvRef>,
        x: ExprId,
        cur: VId,
    ) -> Result<Resolved, Rc<Bottom>> {
        self.resolve(env, x, cur)
    }

    fn select_error(&self, v: &Value, label: Label, span: Span) -> Rc<Bottom> {
        if let Value::Bottom(b) = v {
            return b.clone();
        }
        let code = if v.is_concrete_scalar() {
            ErrCode::Eval
        } else {
            ErrCode::Incomplete
        };
        Bottom::with_span(
            code,
            format!(
                "invalid selector {}: cannot use {} (type {}) as struct",
                self.prog.labels.text(label),
                self.value_text(v),
                v.kind().name()
            ),
            span,
        )
    }

    fn lookup_field(
        &mut self,
        scope: VId,
        label: Label,
        span: Span,
        static_ref: bool,
    ) -> Result<Resolved, Rc<Bottom>> {
        if self.v(scope).status == Status::Unprocessed {
            self.evaluate(scope);
        }
        let mut found = self.arc(scope, label);
        if found.is_none() {
            let d = self.default_of(scope);
            if d != scope {
                self.evaluate(d);
                found = self.arc(d, label);
            }
        }
        match found {
            Some(a) => {
                // A selection from a struct that is itself an error is that error.
                // So is one from a finished struct with a permanent error in a field (CUE's
                // child error): it names the field where the error arose.
                // Not inside an inline expression's value, which CUE never finishes.
                if !static_ref {
                    let sd = self.deref(scope);
                    let sx = self.v(sd);
                    if let Some(e) = &sx.err
                        && (!e.child
                            || sx.status == Status::Finalized
                                && !e.is_incomplete()
                                && !self.inside_inline(sd))
                        && matches!(sx.status, Status::Evaluated | Status::Finalized)
                        && !sx.is_disjunct
                        && sx.disj.is_none()
                    {
                        let e = own_error(e);
                        return Err(self.error_of_field(e, scope));
                    }
                }
                let at = self.v(a).arc_type;
                // A field reference waits until its struct has all its conjuncts: another may
                // still make the field regular.
                let settled = || {
                    matches!(
                        self.v(scope).status,
                        Status::Evaluated | Status::Finalizing | Status::Finalized
                    )
                };
                if at == ArcType::Optional && (!static_ref || settled()) {
                    return Err(Bottom::with_span(
                        ErrCode::Incomplete,
                        format!(
                            "cannot reference optional field: {}",
                            self.prog.labels.text(label)
                        ),
                        span,
                    ));
                }
                if at == ArcType::Required {
                    return Err(Bottom::with_span(
                        ErrCode::Incomplete,
                        format!("required field missing: {}", self.prog.labels.text(label)),
                        span,
                    ));
                }
                Ok(Resolved::Vertex(a))
            }
            None => {
                let sx = self.v(self.deref(scope));
                if let Some(e) = &sx.err
                    && !static_ref
                {
                    return Err(e.clone());
                }
                let is_struct = sx.kind.contains(Kind::STRUCT) || sx.arcs.iter().any(|_| true);
                if !is_struct && sx.scalar.is_some() {
                    let s = sx.scalar.clone().unwrap();
                    return Err(self.select_error(&s, label, span));
                }
                // A field a finished list or closed struct can never have is an error for good.
                let sd = self.deref(scope);
                let done = matches!(self.v(sd).status, Status::Evaluated | Status::Finalized);
                let never = done
                    && !static_ref
                    && !label.is_int()
                    && (self.v(sd).is_list || !self.may_have_field(sd, label));
                Err(Bottom::with_span(
                    if never {
                        ErrCode::Eval
                    } else {
                        ErrCode::Incomplete
                    },
                    format!("undefined field: {}", self.prog.labels.path_text(label)),
                    span,
                ))
            }
        }
    }

    /// The value of a vertex in value position: its default, scalar, or the vertex itself for
    /// structs and lists.
    pub(super) fn value_of(&mut self, w: VId) -> Value {
        self.evaluate(w);
        if self.v(w).status == Status::Evaluating {
            // A node in progress that already has its concrete value resolves the cycle.
            let wx = self.v(w);
            if let Some(s) = &wx.scalar
                && wx.err.is_none()
                && !wx.is_disjunct
            {
                return s.clone();
            }
            return Value::Bottom(Bottom::new(ErrCode::Cycle, "cyclic reference"));
        }
        let w = self.deref(w);
        self.evaluate(w);
        if self.v(w).status == Status::Evaluating {
            return Value::Bottom(Bottom::new(ErrCode::Cycle, "cyclic reference"));
        }
        let vx = self.v(w);
        if let Some(d) = &vx.disj {
            if d.num_defaults == 1 {
                let a = d.alts[0];
                return self.value_of(a);
            }
            return Value::Vertex(w);
        }
        if let Some(e) = &vx.err {
            return Value::Bottom(e.clone());
        }
        if let Some(s) = &vx.scalar {
            return s.clone();
        }
        if vx.is_list || vx.kind == Kind::STRUCT || vx.kind == Kind::LIST {
            return Value::Vertex(w);
        }
        // Optional fields do not make a value with a kind of its own a struct
        // (`{string, bar?: int}` is a string).
        let kinded = vx.kind != Kind::TOP && !vx.kind.contains(Kind::STRUCT);
        if vx.arcs.iter().any(|&a| {
            let ax = self.v(a);
            ax.label.is_regular() && !(kinded && ax.arc_type == ArcType::Optional)
        }) {
            return Value::Vertex(w);
        }
        let mut parts = Vec::new();
        if vx.kind != Kind::TOP {
            let implied = vx
                .constraints()
                .iter()
                .fold(Kind::TOP, |k, c| k.and(c.kind()));
            if vx.kind != implied || vx.constraints().is_empty() {
                parts.push(Value::Basic(vx.kind));
            }
        }
        parts.extend(vx.constraints().iter().cloned());
        match parts.len() {
            0 => {
                if vx.kind.contains(Kind::STRUCT) && !vx.kind.intersects(Kind::SCALAR) {
                    Value::Vertex(w)
                } else {
                    Value::Top
                }
            }
            1 => parts.pop().unwrap(),
            _ => Value::Conj(Rc::from(parts)),
        }
    }

    /// Resolves a value to a concrete one where possible (taking defaults of disjunctions).
    pub(super) fn concrete(&mut self, v: Value) -> Result<Value, Rc<Bottom>> {
        match v {
            Value::Bottom(b) => Err(b),
            Value::Vertex(w) => {
                self.evaluate(w);
                let d = self.deref(w);
                if let Some(dj) = self.v(d).disj.clone() {
                    if dj.num_defaults == 1 {
                        return self.concrete(Value::Vertex(dj.alts[0]));
                    }
                    return Err(Bottom::incomplete(format!(
                        "unresolved disjunction {} (type {})",
                        self.vertex_text(d),
                        self.vertex_kind(d).name()
                    )));
                }
                let val = self.value_of(d);
                match val {
                    Value::Vertex(x) => Ok(Value::Vertex(x)),
                    other => self.concrete(other),
                }
            }
            other => Ok(other),
        }
    }

    pub(super) fn vertex_kind(&self, v: VId) -> Kind {
        let vx = self.v(self.deref(v));
        if let Some(d) = &vx.disj {
            return d
                .alts
                .iter()
                .fold(Kind::BOTTOM, |k, &a| k.or(self.vertex_kind(a)));
        }
        if let Some(s) = &vx.scalar {
            return s.kind();
        }
        vx.kind
    }

    /// Evaluates an expression in value position.
    pub(super) fn eval_value(
        &mut self,
        env: Option<&EnvRef>,
        id: ExprId,
        cur: Option<VId>,
    ) -> Value {
        crate::stack::guard(|| self.eval_value_inner(env, id, cur))
    }

    /// A vertex for an inline expression. Its parent is the node that uses it, so that cycles
    /// through it are found as if it were a field there; it is not an arc of that node.
    /// An anonymous vertex whose one conjunct is expression `id`.
    fn anon_expr(&mut self, env: Option<&EnvRef>, id: ExprId, span: Span, cur: Option<VId>) -> VId {
        let ci = CloseInfo {
            refs: self.cur_refs.clone(),
            ..CloseInfo::default()
        };
        self.anon_vertex(
            vec![Conjunct {
                env: env.cloned(),
                x: CExpr::Expr(id),
                ci,
                span,
            }],
            cur,
        )
    }

    pub(super) fn anon_vertex(&mut self, conjs: Vec<Conjunct>, cur: Option<VId>) -> VId {
        let l = self.prog.labels.string("");
        let origin = conjs.first().and_then(|c| match c.x {
            CExpr::Expr(e) => Some(e),
            _ => None,
        });
        // The same inline expression again inside itself (or inside a disjunct of itself): an
        // inline structural cycle. Inline vertices nested beyond a limit end with an error.
        let mut p = cur;
        let mut hits = 0;
        let mut nested = 0;
        while let Some(x) = p {
            let vx = self.v(x);
            let inline = if vx.anonymous {
                Some(x)
            } else {
                vx.clone_of().filter(|&o| self.v(o).anonymous)
            };
            if let Some(o) = inline {
                nested += 1;
                if origin.is_some() && self.v(o).origin() == origin {
                    hits += 1;
                }
            }
            p = vx.parent;
        }
        let a = self.new_vertex(cur, l, ArcType::Member);
        if origin.is_some() {
            self.vm(a).xm().origin = origin;
        }
        if hits >= 2 || nested > MAX_INLINE_NESTING {
            let b = if hits >= 2 {
                Bottom::new(ErrCode::StructuralCycle, "structural cycle")
            } else {
                Bottom::new(
                    ErrCode::StructuralCycle,
                    "structural cycle (inline expressions nested too deep)",
                )
            };
            let vx = self.vm(a);
            vx.anonymous = true;
            vx.err = Some(b);
            vx.status = Status::Evaluated;
            return a;
        }
        let ax = self.vm(a);
        ax.anonymous = true;
        ax.conjuncts = conjs.into();
        a
    }

    fn eval_value_inner(&mut self, env: Option<&EnvRef>, id: ExprId, cur: Option<VId>) -> Value {
        let e = self.prog.expr_rc(id);
        let span = self.prog.span(id);
        match &*e {
            Expr::Lazy(_) => {
                self.force(id);
                self.eval_value_inner(env, id, cur)
            }
            Expr::Top => Value::Top,
            Expr::Bottom => Value::Bottom(Bottom::with_span(
                ErrCode::User,
                "explicit error (_|_ literal) in source",
                span,
            )),
            Expr::Null => Value::Null,
            Expr::Bool(b) => Value::Bool(*b),
            Expr::Num(n, k) => Value::num(n.clone(), *k),
            Expr::Str(s) => Value::Str(s.clone()),
            Expr::Bytes(b) => Value::Bytes(b.clone()),
            Expr::Basic(k) => Value::Basic(*k),
            Expr::Range(k, range) => {
                let (lo, hi) = &**range;
                let mut parts = vec![Value::Basic(*k)];
                if let Some(l) = lo {
                    parts.push(Value::Bound(
                        UnaryOp::Ge,
                        Rc::new(Value::num(l.clone(), NumKind::Int)),
                    ));
                }
                if let Some(h) = hi {
                    parts.push(Value::Bound(
                        UnaryOp::Le,
                        Rc::new(Value::num(h.clone(), NumKind::Int)),
                    ));
                }
                Value::Conj(Rc::from(parts))
            }
            Expr::Bound(op, x) => {
                let v = self.eval_value(env, *x, cur);
                match self.concrete(v) {
                    Ok(Value::Null) if super::bounds::bound_dir(*op).is_some() => {
                        Value::Bottom(Bottom::with_span(
                            ErrCode::Eval,
                            format!("cannot use null for bound {}", op.as_str()),
                            self.prog.span(*x),
                        ))
                    }
                    Ok(v) if v.is_concrete_scalar() => {
                        if matches!(op, UnaryOp::Match | UnaryOp::NotMatch)
                            && let Value::Str(s) = &v
                            && let Err(e) = super::builtins::regex(s)
                        {
                            return Value::Bottom(Bottom::with_span(ErrCode::Eval, e, span));
                        }
                        Value::Bound(*op, Rc::new(v))
                    }
                    // `==[1, 2]`, `!={a: 1}` (structcmp): a struct or list that is concrete
                    // throughout, compared as data once the constrained value is final.
                    Ok(Value::Vertex(w))
                        if matches!(op, UnaryOp::Eq | UnaryOp::Ne)
                            && self.first_non_concrete(w).is_none() =>
                    {
                        Value::Bound(*op, Rc::new(Value::Vertex(self.deref(w))))
                    }
                    Ok(_) => Value::Bottom(Bottom::with_span(
                        ErrCode::Incomplete,
                        format!(
                            "non-concrete value {} for bound {}",
                            self.expr_text(*x),
                            op.as_str()
                        ),
                        self.prog.span(*x),
                    )),
                    Err(b) => Value::Bottom(b),
                }
            }
            Expr::Call(f, _)
                if matches!(
                    self.prog.expr(*f),
                    Expr::Builtin(Builtin::Reclose(_) | Builtin::CloseAll(_))
                ) =>
            {
                // Evaluated as a conjunct of an anonymous vertex (see `closedness::add_closeall`).
                Value::Vertex(self.anon_expr(env, id, span, cur))
            }
            Expr::Struct(_) | Expr::List(_) | Expr::Open(_) => {
                Value::Vertex(self.anon_expr(env, id, span, cur))
            }
            Expr::FieldRef { .. }
            | Expr::LetRef { .. }
            | Expr::ValueRef { .. }
            | Expr::LabelRef { .. }
            | Expr::Import(_)
            | Expr::Selector(..)
            | Expr::Index(..)
            | Expr::TryRef(..) => {
                let cur_v = cur.unwrap_or(0);
                match self.resolve(env, id, cur_v) {
                    Ok(Resolved::Vertex(w)) => {
                        if (Some(w) == cur || cur.is_some_and(|c| self.is_ancestor(w, c)))
                            && self.v(w).status == Status::Evaluating
                        {
                            return Value::Bottom(Bottom::with_span(
                                ErrCode::Cycle,
                                "cyclic reference",
                                span,
                            ));
                        }
                        match self.value_of(w) {
                            Value::Bottom(b) if b.spans.is_empty() => {
                                let mut bb = (*b).clone();
                                bb.spans.push(span);
                                Value::Bottom(Rc::new(bb))
                            }
                            Value::Bottom(b) => Value::Bottom(self.error_of_field(b, w)),
                            v => v,
                        }
                    }
                    Ok(Resolved::Value(v)) => v,
                    Err(b) => Value::Bottom(b),
                }
            }
            Expr::Builtin(super::ir::Builtin::Pkg(i)) => self.std_member_value(*i, span),
            Expr::Builtin(b) => Value::Bottom(Bottom::with_span(
                ErrCode::Eval,
                format!("builtin {:?} used as a value", b),
                span,
            )),
            Expr::Slice(x, lo, hi) => self.eval_slice(env, *x, *lo, *hi, cur, span),
            Expr::Call(f, args) => self.eval_call(env, *f, args, cur, span),
            Expr::Unary(op, x) => {
                let v = self.eval_value(env, *x, cur);
                self.unary(*op, v, span, Some(*x))
            }
            Expr::Binary(op, a, b) => self.binary(env, *op, *a, *b, cur, span),
            Expr::Disj(_) => {
                let a = self.anon_expr(env, id, span, cur);
                self.value_of(a)
            }
            Expr::Interp(interp) => {
                let (frags, exprs, bytes) = &**interp;
                self.interpolate(env, frags, exprs, *bytes, cur, span)
            }
            Expr::Error(msg) => {
                Value::Bottom(Bottom::with_span(ErrCode::Eval, msg.to_string(), span))
            }
        }
    }

    fn eval_slice(
        &mut self,
        env: Option<&EnvRef>,
        x: ExprId,
        lo: Option<ExprId>,
        hi: Option<ExprId>,
        cur: Option<VId>,
        span: Span,
    ) -> Value {
        let base = self.eval_value(env, x, cur);
        let base = match self.concrete(base) {
            Ok(Value::Vertex(w)) => w,
            Ok(other) => {
                return Value::Bottom(Bottom::with_span(
                    ErrCode::Eval,
                    format!(
                        "cannot slice {} (type {})",
                        self.value_text(&other),
                        other.kind().name()
                    ),
                    span,
                ));
            }
            Err(b) => return Value::Bottom(b),
        };
        let elems: Vec<VId> = self
            .v(base)
            .arcs
            .iter()
            .copied()
            .filter(|&a| self.v(a).label.is_int())
            .collect();
        let bound =
            |this: &mut Runtime, e: Option<ExprId>, dflt: usize| -> Result<usize, Rc<Bottom>> {
                match e {
                    None => Ok(dflt),
                    Some(e) => {
                        let v = this.eval_value(env, e, cur);
                        match this.concrete(v)? {
                            Value::Num(n, NumKind::Int) => n
                                .to_i64()
                                .filter(|&i| i >= 0)
                                .map(|i| i as usize)
                                .ok_or_else(|| {
                                    Bottom::with_span(ErrCode::Eval, "negative slice index", span)
                                }),
                            other => Err(Bottom::with_span(
                                ErrCode::Eval,
                                format!("invalid slice index {}", this.value_text(&other)),
                                span,
                            )),
                        }
                    }
                }
            };
        let l = match bound(self, lo, 0) {
            Ok(v) => v,
            Err(b) => return Value::Bottom(b),
        };
        let h = match bound(self, hi, elems.len()) {
            Ok(v) => v,
            Err(b) => return Value::Bottom(b),
        };
        if l > h || h > elems.len() {
            return Value::Bottom(Bottom::with_span(
                ErrCode::Eval,
                format!(
                    "invalid slice index: {} > {}",
                    l.max(h),
                    if l > h { h } else { elems.len() }
                ),
                span,
            ));
        }
        self.make_list(elems[l..h].to_vec())
    }

    /// A new list vertex whose elements are the values of the given vertices.
    pub(super) fn make_list(&mut self, elems: Vec<VId>) -> Value {
        self.list_of(elems.into_iter().map(CExpr::Vertex).collect())
    }

    /// A new list vertex holding the given values.
    pub(super) fn make_list_values(&mut self, vals: Vec<Value>) -> Value {
        self.list_of(vals.into_iter().map(CExpr::Value).collect())
    }

    /// A new, already evaluated list vertex with one element per conjunct.
    fn list_of(&mut self, elems: Vec<CExpr>) -> Value {
        let l = self.prog.labels.string("");
        let a = self.new_vertex(None, l, ArcType::Member);
        let ax = self.vm(a);
        ax.anonymous = true;
        ax.is_list = true;
        ax.kind = Kind::LIST;
        ax.xm().list_len = Some(elems.len() as u32);
        for (i, x) in elems.into_iter().enumerate() {
            let c = self.new_vertex(Some(a), Label::int(i as u32), ArcType::Member);
            self.vm(c).conjuncts.push(Conjunct {
                env: None,
                x,
                ci: CloseInfo::default(),
                span: Span::default(),
            });
            self.push_arc(a, c);
        }
        self.vm(a).status = Status::Evaluated;
        Value::Vertex(a)
    }

    fn unary(&mut self, op: UnaryOp, v: Value, span: Span, operand: Option<ExprId>) -> Value {
        let v = match self.concrete(v) {
            Ok(v) => v,
            Err(b) => return Value::Bottom(b),
        };
        match (op, &v) {
            (UnaryOp::Neg, Value::Num(n, k)) => Value::num(n.neg(), *k),
            (UnaryOp::Pos, Value::Num(..)) => v,
            (UnaryOp::Not, Value::Bool(b)) => Value::Bool(!b),
            _ if !v.is_concrete_scalar() && !matches!(v, Value::Vertex(_)) => {
                // A type written right there can never become concrete; a reference may.
                if let Some(x) = operand
                    && self.is_type_literal(x)
                {
                    return Value::Bottom(Bottom::with_span(
                        ErrCode::Eval,
                        format!(
                            "invalid operand {} ('{}' requires concrete value)",
                            self.value_text(&v),
                            op.as_str()
                        ),
                        self.prog.span(x),
                    ));
                }
                // CUE reports it at the operand.
                let (text, at) = match operand {
                    Some(x) => (self.expr_text(x), self.prog.span(x)),
                    None => (self.value_text(&v), span),
                };
                Value::Bottom(Bottom::with_span(
                    ErrCode::Incomplete,
                    format!(
                        "operand {} of '{}' not concrete (was {})",
                        text,
                        op.as_str(),
                        v.kind().name()
                    ),
                    at,
                ))
            }
            _ => Value::Bottom(Bottom::with_span(
                ErrCode::Eval,
                format!(
                    "invalid operation {}{} (mismatched type {})",
                    op.as_str(),
                    self.value_text(&v),
                    v.kind().name()
                ),
                span,
            )),
        }
    }

    /// `x == _|_`: whether x fails to evaluate to a (non-failing) value.
    pub(super) fn is_bottom_test(
        &mut self,
        env: Option<&EnvRef>,
        x: ExprId,
        cur: Option<VId>,
    ) -> Result<bool, Rc<Bottom>> {
        // A plain reference to an optional or required field that is not (yet) a regular one is
        // not defined: `a?: 1, if a == _|_ {…}` fires.
        if matches!(self.prog.expr(x), Expr::FieldRef { .. })
            && let Ok(Resolved::Vertex(w)) = self.resolve(env, x, cur.unwrap_or(0))
            && self.v(w).arc_type != ArcType::Member
        {
            self.note_post_check(env, x, cur, true);
            return Ok(true);
        }
        if let Some(t) = self.choice_meets_none(env, x, cur) {
            return Ok(t);
        }
        let v = self.eval_value(env, x, cur);
        match v {
            Value::Bottom(b) => {
                if b.code == ErrCode::Cycle {
                    return Err(b);
                }
                if b.code == ErrCode::Incomplete {
                    self.note_post_check(env, x, cur, true);
                }
                Ok(true)
            }
            Value::Vertex(w) => {
                let d = self.deref(w);
                if self.v(d).disj.is_some() {
                    return Ok(false);
                }
                Ok(self.finalize(w, false).is_some())
            }
            v if v.is_concrete_scalar() => Ok(false),
            _ => Ok(true),
        }
    }

    /// `(p & T) == _|_`, where `p` names an evaluated disjunction and `T` is a scalar type or
    /// concrete scalars (`string`, `"a" | "b"`): whether no alternative of `p` meets `T`,
    /// read off the alternatives `p` already has. Unifying the conjuncts of `p` with `T` again
    /// expands the disjunctions of `p` anew (their product, definitions and all) only to learn
    /// whether one alternative survives; a struct or list alternative never meets a scalar,
    /// and a concrete scalar meets `T` when `T` admits its kind or holds an equal scalar of
    /// its kind. `None`, and the test is left to the general path, for any other shape: an
    /// alternative or a `T` that is not concrete, a bound, a struct, an error.
    fn choice_meets_none(
        &mut self,
        env: Option<&EnvRef>,
        x: ExprId,
        cur: Option<VId>,
    ) -> Option<bool> {
        #[cfg(test)]
        if super::disjunct::general_law::GENERAL.get() {
            return None;
        }
        let Expr::Binary(BinaryOp::Unify, a, b) = *self.prog.expr(x) else {
            return None;
        };
        for (r, o) in [(a, b), (b, a)] {
            if !matches!(
                self.prog.expr(r),
                Expr::FieldRef { .. } | Expr::Selector(..) | Expr::LetRef { .. }
            ) {
                continue;
            }
            let Ok(Resolved::Vertex(w)) = self.resolve(env, r, cur.unwrap_or(0)) else {
                continue;
            };
            self.evaluate(w);
            let w = self.deref(w);
            let wx = self.v(w);
            if !matches!(wx.status, Status::Evaluated | Status::Finalized) || wx.err.is_some() {
                continue;
            }
            let Some(dj) = wx.disj.clone() else {
                continue;
            };
            // Each alternative: `Some` concrete scalar, or `None` for a struct or list.
            let mut alts: smallvec::SmallVec<[Option<Value>; 8]> = smallvec::SmallVec::new();
            for &alt in &dj.alts {
                alts.push(match self.settled_scalar(alt) {
                    Some(Some(s)) => Some(s),
                    Some(None) => {
                        let ax = self.v(self.deref(alt));
                        if ax.kind == Kind::TOP || ax.kind.intersects(Kind::SCALAR) {
                            return None;
                        }
                        None
                    }
                    None => return None,
                });
            }
            let side = match self.eval_value(env, o, cur) {
                Value::Basic(k) if Kind::SCALAR.contains(k) => Side::Kind(k),
                s if s.is_concrete_scalar() => Side::Scalars(vec![s]),
                Value::Vertex(y) => {
                    let y = self.deref(y);
                    match self.v(y).disj.clone() {
                        Some(d) => {
                            let mut ys = Vec::with_capacity(d.alts.len());
                            for &alt in &d.alts {
                                ys.push(self.settled_scalar(alt)??);
                            }
                            Side::Scalars(ys)
                        }
                        None => Side::Scalars(vec![self.settled_scalar(y)??]),
                    }
                }
                _ => return None,
            };
            let meets = |s: &Value| match &side {
                Side::Kind(k) => k.contains(s.kind()),
                Side::Scalars(ys) => ys.iter().any(|y| same_scalar(s, y)),
            };
            return Some(!alts.iter().flatten().any(meets));
        }
        None
    }

    /// The value of an evaluated vertex that is a concrete scalar and nothing else: `Some(Some)`;
    /// `Some(None)` for one without a scalar value (a struct or list, or not concrete); `None`
    /// for one not settled (not evaluated, an error, a disjunction, constraints or fields
    /// beside a scalar, a struct made by comprehensions that yielded nothing).
    fn settled_scalar(&self, v: VId) -> Option<Option<Value>> {
        let d = self.deref(v);
        let vx = self.v(d);
        if !matches!(vx.status, Status::Evaluated | Status::Finalized)
            || vx.err.is_some()
            // A struct only because its comprehensions yielded nothing: with a scalar it is
            // that scalar.
            || self.weak_kinds.contains(&d)
            || vx.disj.is_some()
            || !vx.constraints().is_empty()
        {
            return None;
        }
        match &vx.scalar {
            Some(s) if s.is_concrete_scalar() && vx.arcs.is_empty() => Some(Some(s.clone())),
            Some(_) => None,
            None => Some(None),
        }
    }

    fn binary(
        &mut self,
        env: Option<&EnvRef>,
        op: BinaryOp,
        a: ExprId,
        b: ExprId,
        cur: Option<VId>,
        span: Span,
    ) -> Value {
        if matches!(op, BinaryOp::Eq | BinaryOp::Ne) {
            let lb = matches!(self.prog.expr(a), Expr::Bottom);
            let rb = matches!(self.prog.expr(b), Expr::Bottom);
            if lb || rb {
                let x = if rb { a } else { b };
                return match self.is_bottom_test(env, x, cur) {
                    Ok(t) => Value::Bool(if op == BinaryOp::Eq { t } else { !t }),
                    Err(e) => Value::Bottom(e),
                };
            }
        }
        if op == BinaryOp::Unify {
            // The operands carry on the reference chain of the conjunct being evaluated, as
            // CUE's anonymous conjuncts do.
            let c = |x: ExprId, this: &Runtime| Conjunct {
                env: env.cloned(),
                x: CExpr::Expr(x),
                ci: CloseInfo {
                    refs: this.cur_refs.clone(),
                    ..CloseInfo::default()
                },
                span: this.prog.span(x),
            };
            let conjs = vec![c(a, self), c(b, self)];
            let v = self.anon_vertex(conjs, cur);
            return self.value_of(v);
        }
        let lv = self.eval_value(env, a, cur);
        let rv = self.eval_value(env, b, cur);
        let l = match self.concrete(lv) {
            Ok(v) => v,
            Err(e) => return Value::Bottom(e),
        };
        let r = match self.concrete(rv) {
            Ok(v) => v,
            Err(e) => return Value::Bottom(e),
        };
        // An operand that evaluates to a non-concrete value (not one written as a type or bound
        // right there, which `binary_values` reports): incomplete, at the operation and at where
        // that value was written.
        // Both operands non-concrete: one error each, as a list (CUE's `s + s` reports two).
        let concrete = |v: &Value| v.is_concrete_scalar() || matches!(v, Value::Vertex(_));
        let mut operand_errs: Vec<Rc<Bottom>> = Vec::new();
        for (x, v) in [(a, &l), (b, &r)] {
            if !concrete(v) && !self.is_type_literal(x) {
                let mut spans = vec![span];
                let sp = self.operand_span(env, x, cur);
                if sp != Span::default() && sp.start != span.start {
                    spans.push(sp);
                }
                operand_errs.push(Rc::new(Bottom {
                    code: ErrCode::Incomplete,
                    msg: format!(
                        "non-concrete value {} in operand to {}",
                        self.value_text(v),
                        op.as_str()
                    ),
                    spans,
                    child: false,
                    at: None,
                    subs: Vec::new(),
                }));
            }
        }
        if let Some(first) = operand_errs.first() {
            let rest = operand_errs[1..].to_vec();
            return Value::Bottom(Rc::new(Bottom {
                subs: rest,
                ..(**first).clone()
            }));
        }
        // Lists and structs compare only when concrete throughout.
        if matches!(op, BinaryOp::Eq | BinaryOp::Ne) {
            for (side, v) in [("left", &l), ("right", &r)] {
                if let Value::Vertex(w) = v
                    && let Some((path, text)) = self.first_non_concrete(*w)
                {
                    let kind = if self.v(self.deref(*w)).is_list {
                        "list"
                    } else {
                        "struct"
                    };
                    return Value::Bottom(Bottom::with_span(
                        ErrCode::Incomplete,
                        format!(
                            "invalid {side}-hand value to '{}' (type {kind}): {path}: incomplete value {text}",
                            op.as_str()
                        ),
                        span,
                    ));
                }
            }
        }
        // A pattern must be a string or bytes (CUE's `regexp` of the right operand).
        if matches!(op, BinaryOp::Match | BinaryOp::NotMatch)
            && r.is_concrete_scalar()
            && !matches!(r, Value::Str(_) | Value::Bytes(_))
        {
            let at = self.operand_span(env, b, cur);
            return Value::Bottom(Bottom::with_spans(
                ErrCode::Eval,
                format!(
                    "cannot use {} (type {}) as type (string|bytes)",
                    self.value_text(&r),
                    r.kind().name()
                ),
                [span, at],
            ));
        }
        match self.binary_values(op, l, r, span) {
            // CUE points at the operation and at where each operand's value was written.
            Value::Bottom(e)
                if e.code == ErrCode::Eval && e.msg.starts_with("invalid operands") =>
            {
                let mut spans = vec![span];
                for x in [a, b] {
                    let sp = self.operand_span(env, x, cur);
                    if sp != Span::default()
                        && !spans
                            .iter()
                            .any(|o| o.file == sp.file && o.start == sp.start)
                    {
                        spans.push(sp);
                    }
                }
                let mut e2 = (*e).clone();
                e2.spans = spans;
                Value::Bottom(Rc::new(e2))
            }
            v => v,
        }
    }

    /// Whether an operand is written as a type or bound (`int`, `>10`), possibly in
    /// parentheses or as part of another such operation.
    fn is_type_literal(&self, x: ExprId) -> bool {
        match self.prog.expr(x) {
            Expr::Basic(_) | Expr::Bound(..) | Expr::Range(..) => true,
            Expr::Binary(op, a, b) if *op != BinaryOp::Unify && *op != BinaryOp::Disj => {
                self.is_type_literal(*a) || self.is_type_literal(*b)
            }
            Expr::Unary(_, a) => self.is_type_literal(*a),
            _ => false,
        }
    }

    /// The error `b` of field `w` as seen through a reference: a permanent error keeps the path
    /// of the field it belongs to, as CUE reports it.
    fn error_of_field(&self, b: Rc<Bottom>, w: VId) -> Rc<Bottom> {
        if b.at.is_some() || b.child || !matches!(b.code, ErrCode::Eval | ErrCode::User) {
            return b;
        }
        let w = self.deref(w);
        if self.v(w).anonymous {
            return b;
        }
        Rc::new(Bottom {
            at: Some(w),
            ..(*b).clone()
        })
    }

    /// Whether `x` refers to a field or let (directly, by selection, index or optional reference).
    pub(super) fn is_reference(&self, x: ExprId) -> bool {
        matches!(
            self.prog.expr(x),
            Expr::FieldRef { .. }
                | Expr::Selector(..)
                | Expr::LetRef { .. }
                | Expr::Index(..)
                | Expr::TryRef(..)
        )
    }

    /// Where the value of an operand was written: the value a reference leads to, else the
    /// operand itself.
    pub(super) fn operand_span(
        &mut self,
        env: Option<&EnvRef>,
        x: ExprId,
        cur: Option<VId>,
    ) -> Span {
        if self.is_reference(x)
            && let Some(cur) = cur
            && let Ok(Resolved::Vertex(w)) = self.resolve(env, x, cur)
        {
            let sp = self.v(self.deref(w)).val_span;
            if sp != Span::default() {
                return sp;
            }
        }
        self.prog.span(x)
    }

    /// Applies a binary operator to two values (defaults already taken).
    pub(super) fn binary_values(&mut self, op: BinaryOp, l: Value, r: Value, span: Span) -> Value {
        let concrete = |v: &Value| v.is_concrete_scalar() || matches!(v, Value::Vertex(_));
        if !concrete(&l) || !concrete(&r) {
            let bad = if !concrete(&l) { &l } else { &r };
            return Value::Bottom(Bottom::with_span(
                ErrCode::Incomplete,
                format!(
                    "invalid operand {} ('{}' requires concrete value)",
                    self.value_text(bad),
                    op.as_str()
                ),
                span,
            ));
        }
        let err = |this: &Runtime, l: &Value, r: &Value| {
            Value::Bottom(Bottom::with_span(
                ErrCode::Eval,
                format!(
                    "invalid operands {} and {} to '{}' (type {} and {})",
                    this.value_text(l),
                    this.value_text(r),
                    op.as_str(),
                    this.value_kind_name(l),
                    this.value_kind_name(r)
                ),
                span,
            ))
        };
        match op {
            BinaryOp::Eq | BinaryOp::Ne => {
                let eq = self.values_equal(&l, &r);
                Value::Bool(if op == BinaryOp::Eq { eq } else { !eq })
            }
            BinaryOp::And | BinaryOp::Or => match (&l, &r) {
                (Value::Bool(x), Value::Bool(y)) => Value::Bool(if op == BinaryOp::And {
                    *x && *y
                } else {
                    *x || *y
                }),
                _ => err(self, &l, &r),
            },
            BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge => {
                let ord = match (&l, &r) {
                    (Value::Num(x, _), Value::Num(y, _)) => x.cmp(y),
                    (Value::Str(x), Value::Str(y)) => x.cmp(y),
                    (Value::Bytes(x), Value::Bytes(y)) => x.cmp(y),
                    _ => return err(self, &l, &r),
                };
                Value::Bool(match op {
                    BinaryOp::Lt => ord == Ordering::Less,
                    BinaryOp::Le => ord != Ordering::Greater,
                    BinaryOp::Gt => ord == Ordering::Greater,
                    _ => ord != Ordering::Less,
                })
            }
            BinaryOp::Match | BinaryOp::NotMatch => match (&l, &r) {
                (Value::Str(x), Value::Str(re)) => match super::builtins::regex(re) {
                    Ok(re) => {
                        let m = re.is_match(x);
                        Value::Bool(if op == BinaryOp::Match { m } else { !m })
                    }
                    Err(e) => Value::Bottom(Bottom::with_span(ErrCode::Eval, e, span)),
                },
                _ => err(self, &l, &r),
            },
            BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div => match (&l, &r) {
                (Value::Num(x, kx), Value::Num(y, ky)) => {
                    let kind = if *kx == NumKind::Int && *ky == NumKind::Int {
                        NumKind::Int
                    } else {
                        NumKind::Float
                    };
                    match op {
                        BinaryOp::Add => Value::num(x.add(y), kind),
                        BinaryOp::Sub => Value::num(x.sub(y), kind),
                        BinaryOp::Mul => Value::num(x.mul(y), kind),
                        _ => match x.quo(y) {
                            Ok(q) => Value::num(q, NumKind::Float),
                            Err(e) => Value::Bottom(Bottom::with_span(
                                ErrCode::Eval,
                                match e {
                                    crate::num::NumError::DivisionByZero => {
                                        "failed arithmetic: division by zero".to_string()
                                    }
                                    crate::num::NumError::DivisionUndefined => {
                                        "failed arithmetic: division undefined".to_string()
                                    }
                                    other => format!("failed arithmetic: {other:?}"),
                                },
                                span,
                            )),
                        },
                    }
                }
                (Value::Str(x), Value::Str(y)) if op == BinaryOp::Add => {
                    let mut s = String::with_capacity(x.len() + y.len());
                    s.push_str(x);
                    s.push_str(y);
                    Value::Str(Rc::from(s))
                }
                (Value::Bytes(x), Value::Bytes(y)) if op == BinaryOp::Add => {
                    let mut s = x.to_vec();
                    s.extend_from_slice(y);
                    Value::Bytes(Rc::from(s))
                }
                (Value::Str(s), Value::Num(n, NumKind::Int))
                | (Value::Num(n, NumKind::Int), Value::Str(s))
                    if op == BinaryOp::Mul =>
                {
                    match repeat_count(n) {
                        Some(k) => Value::Str(Rc::from(s.repeat(k))),
                        None => err(self, &l, &r),
                    }
                }
                (Value::Bytes(s), Value::Num(n, NumKind::Int))
                | (Value::Num(n, NumKind::Int), Value::Bytes(s))
                    if op == BinaryOp::Mul =>
                {
                    match repeat_count(n) {
                        Some(k) => Value::Bytes(Rc::from(s.repeat(k))),
                        None => err(self, &l, &r),
                    }
                }
                (Value::Vertex(x), _) | (_, Value::Vertex(x))
                    if self.v(self.deref(*x)).is_list
                        && matches!(op, BinaryOp::Add | BinaryOp::Mul) =>
                {
                    Value::Bottom(Bottom::with_span(
                        ErrCode::Eval,
                        if op == BinaryOp::Add {
                            "Addition of lists is superseded by list.Concat; see https://cuelang.org/e/v0.11-list-arithmetic"
                        } else {
                            "Multiplication of lists is superseded by list.Repeat; see https://cuelang.org/e/v0.11-list-arithmetic"
                        },
                        span,
                    ))
                }
                _ => err(self, &l, &r),
            },
            BinaryOp::Disj | BinaryOp::Unify => err(self, &l, &r),
        }
    }

    fn value_kind_name(&self, v: &Value) -> String {
        match v {
            Value::Vertex(w) => self.vertex_kind(*w).name(),
            v => v.kind().name(),
        }
    }

    /// The first regular field or element below `w` (its path relative to `w`, and its value's
    /// text) that is not concrete.
    pub(super) fn first_non_concrete(&mut self, w: VId) -> Option<(String, String)> {
        self.finalize(w, false);
        let w = self.default_of(w);
        let arcs = self.v(w).arcs.clone();
        for a in arcs {
            let ax = self.v(a);
            if !ax.label.is_regular() || ax.arc_type != ArcType::Member {
                continue;
            }
            let label = self.prog.labels.text(ax.label);
            let v = self.value_of(a);
            match v {
                Value::Vertex(x) => {
                    if let Some((p, t)) = self.first_non_concrete(x) {
                        return Some((format!("{label}.{p}"), t));
                    }
                }
                Value::Bottom(_) => {}
                v if v.is_concrete_scalar() => {}
                v => return Some((label, self.value_text(&v))),
            }
        }
        None
    }

    /// Equality of two concrete values as `==` tests it: numbers by value (`1 == 1.0`), lists and
    /// structs by [`Self::values_equal_structural`].
    pub(super) fn values_equal(&mut self, a: &Value, b: &Value) -> bool {
        self.equal_values(a, b, false)
    }

    /// Equality of two concrete values as CUE's `Equal` tests the elements of lists and
    /// structs, and `list.Contains` and `list.UniqueItems` their items: a number equals a number
    /// of its own kind only (`[1] == [1.0]` is false).
    pub(super) fn values_equal_structural(&mut self, a: &Value, b: &Value) -> bool {
        self.equal_values(a, b, true)
    }

    fn equal_values(&mut self, a: &Value, b: &Value, structural: bool) -> bool {
        match (a, b) {
            (Value::Vertex(x), Value::Vertex(y)) => {
                let (x, y) = (*x, *y);
                self.finalize(x, false);
                self.finalize(y, false);
                let x = self.default_of(x);
                let y = self.default_of(y);
                let (xl, yl) = (self.v(x).is_list, self.v(y).is_list);
                if xl != yl {
                    return false;
                }
                let fields = |this: &Runtime, v: VId| -> Vec<(Label, VId)> {
                    this.v(v)
                        .arcs
                        .iter()
                        .filter(|&&a| {
                            let ax = this.v(a);
                            ax.label.is_regular() && ax.arc_type == ArcType::Member
                        })
                        .map(|&a| (this.v(a).label, a))
                        .collect()
                };
                let fx = fields(self, x);
                let fy = fields(self, y);
                if fx.len() != fy.len() {
                    return false;
                }
                for (l, ax) in fx {
                    let Some(&(_, ay)) = fy.iter().find(|(m, _)| *m == l) else {
                        return false;
                    };
                    let va = self.value_of(ax);
                    let vb = self.value_of(ay);
                    let va = self.concrete(va);
                    let vb = self.concrete(vb);
                    match (va, vb) {
                        (Ok(va), Ok(vb)) => {
                            if !self.equal_values(&va, &vb, true) {
                                return false;
                            }
                        }
                        _ => return false,
                    }
                }
                true
            }
            (Value::Vertex(_), _) | (_, Value::Vertex(_)) => false,
            _ if structural => same_scalar(a, b),
            _ => scalar_eq(a, b),
        }
    }

    fn interpolate(
        &mut self,
        env: Option<&EnvRef>,
        frags: &[Rc<str>],
        exprs: &[ExprId],
        bytes: bool,
        cur: Option<VId>,
        span: Span,
    ) -> Value {
        let mut out: Vec<u8> = Vec::new();
        for (i, f) in frags.iter().enumerate() {
            out.extend_from_slice(f.as_bytes());
            if let Some(&e) = exprs.get(i) {
                let v = self.eval_value(env, e, cur);
                let v = match self.concrete(v) {
                    Ok(v) => v,
                    Err(b) => {
                        return Value::Bottom(b);
                    }
                };
                match &v {
                    Value::Str(s) => out.extend_from_slice(s.as_bytes()),
                    Value::Bytes(b) => out.extend_from_slice(b),
                    Value::Num(n, _) => out.extend_from_slice(n.to_g_string().as_bytes()),
                    Value::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
                    Value::Null | Value::Vertex(_) => {
                        let at = self.operand_span(env, e, cur);
                        return Value::Bottom(Bottom::with_spans(
                            ErrCode::Eval,
                            format!(
                                "invalid interpolation: cannot use {} (type {}) as type string",
                                self.value_text(&v),
                                self.value_kind_name(&v)
                            ),
                            [span, at],
                        ));
                    }
                    other => {
                        // At the interpolation and where the value was written; a field whose
                        // value is `_` has no position of its own in CUE (a literal `_` does).
                        let at = if matches!(other, Value::Top) && self.is_reference(e) {
                            Span::default()
                        } else {
                            self.operand_span(env, e, cur)
                        };
                        return Value::Bottom(Bottom::with_spans(
                            ErrCode::Incomplete,
                            format!(
                                "invalid interpolation: non-concrete value {} (type {})",
                                self.value_text(other),
                                other.kind().name()
                            ),
                            [span, at],
                        ));
                    }
                }
            }
        }
        if bytes {
            Value::Bytes(Rc::from(out))
        } else {
            Value::Str(Rc::from(to_valid_utf8(&out).as_ref()))
        }
    }

    /// Checks a bound against a concrete value.
    pub(super) fn check_bound(
        &mut self,
        op: UnaryOp,
        b: &Value,
        x: &Value,
    ) -> Result<bool, Rc<Bottom>> {
        let ord = |x: &Value, b: &Value| -> Option<Ordering> {
            match (x, b) {
                (Value::Num(a, _), Value::Num(c, _)) => Some(a.cmp(c)),
                (Value::Str(a), Value::Str(c)) => Some(a.cmp(c)),
                (Value::Bytes(a), Value::Bytes(c)) => Some(a.cmp(c)),
                _ => None,
            }
        };
        Ok(match op {
            UnaryOp::Ne => !scalar_eq(x, b),
            UnaryOp::Eq => scalar_eq(x, b),
            UnaryOp::Lt => ord(x, b) == Some(Ordering::Less),
            UnaryOp::Le => matches!(ord(x, b), Some(Ordering::Less | Ordering::Equal)),
            UnaryOp::Gt => ord(x, b) == Some(Ordering::Greater),
            UnaryOp::Ge => matches!(ord(x, b), Some(Ordering::Greater | Ordering::Equal)),
            UnaryOp::Match | UnaryOp::NotMatch => {
                let (Value::Str(s), Value::Str(re)) = (x, b) else {
                    return Ok(false);
                };
                let re = super::builtins::regex(re).map_err(Bottom::eval)?;
                re.is_match(s) == (op == UnaryOp::Match)
            }
            _ => true,
        })
    }

    /// Checks a constraint (bound or validator) against a concrete scalar.
    pub(super) fn check_constraint(&mut self, c: &Value, x: &Value) -> Result<(), Rc<Bottom>> {
        match c {
            Value::Bound(op, b) => {
                if self.check_bound(*op, b, x)? {
                    Ok(())
                } else if *op == UnaryOp::Ne && matches!(**b, Value::Null) {
                    // `!=null` is a type constraint to CUE: every kind but null.
                    Err(Bottom::eval(
                        "conflicting values null and !=null (mismatched types null and \
                         (bool|string|bytes|func|list|struct|number))",
                    ))
                } else {
                    Err(Bottom::eval(format!(
                        "invalid value {} (out of bound {})",
                        self.value_text(x),
                        self.value_text(c)
                    )))
                }
            }
            Value::Validator(call) => {
                let call = call.clone();
                self.run_validator(&call, x)
            }
            _ => Ok(()),
        }
    }

    /// A compact text of a value for messages, like CUE's debug printer.
    pub fn value_text(&self, v: &Value) -> String {
        match v {
            Value::Top => "_".into(),
            Value::Bottom(_) => "_|_".into(),
            Value::Null => "null".into(),
            Value::Bool(b) => b.to_string(),
            Value::Num(n, k) => n.to_cue_string(*k),
            Value::Str(s) => super::label::quote(s),
            Value::Bytes(b) => format!("'{}'", String::from_utf8_lossy(b)),
            Value::Basic(k) => k.name(),
            Value::Bound(op, x) => format!("{}{}", op.as_str(), self.value_text(x)),
            Value::Validator(c) => c.text(self),
            Value::Conj(vs) => vs
                .iter()
                .map(|v| self.value_text(v))
                .collect::<Vec<_>>()
                .join(" & "),
            Value::Or(vs) => vs
                .iter()
                .map(|v| self.value_text(v))
                .collect::<Vec<_>>()
                .join(" | "),
            Value::Vertex(w) => self.vertex_text(*w),
        }
    }

    /// A compact text of a vertex: `{a:1,b:2}`, `[1,2]`, `1 | 2`.
    pub fn vertex_text(&self, w: VId) -> String {
        self.vertex_text_depth(w, 0)
    }

    fn vertex_text_depth(&self, w: VId, depth: usize) -> String {
        let w = self.deref(w);
        let vx = self.v(w);
        if depth > 8 {
            return "...".into();
        }
        if let Some(d) = &vx.disj {
            return d
                .alts
                .iter()
                .enumerate()
                .map(|(i, &a)| {
                    let t = self.vertex_text_depth(a, depth + 1);
                    if i < d.num_defaults {
                        format!("*{t}")
                    } else {
                        t
                    }
                })
                .collect::<Vec<_>>()
                .join(" | ");
        }
        if vx.err.as_ref().is_some_and(|e| !e.child) {
            return "_|_".into();
        }
        if let Some(s) = &vx.scalar {
            return self.value_text(s);
        }
        if vx.is_list {
            let items: Vec<String> = vx
                .arcs
                .iter()
                .filter(|&&a| self.v(a).label.is_int())
                .map(|&a| self.vertex_text_depth(a, depth + 1))
                .collect();
            let mut s = format!("[{}", items.join(","));
            if vx.list_open() {
                if !items.is_empty() {
                    s.push(',');
                }
                s.push_str("...");
            }
            s.push(']');
            return s;
        }
        let fields: Vec<String> = vx
            .arcs
            .iter()
            .filter(|&&a| !self.v(a).label.is_let())
            .map(|&a| {
                let ax = self.v(a);
                let mark = match ax.arc_type {
                    ArcType::Member => "",
                    ArcType::Optional => "?",
                    ArcType::Required => "!",
                };
                format!(
                    "{}{}:{}",
                    self.prog.labels.path_text(ax.label),
                    mark,
                    if ax.status == Status::Unprocessed {
                        "_".into()
                    } else {
                        self.vertex_text_depth(a, depth + 1)
                    }
                )
            })
            .collect();
        if vx.kind.contains(Kind::STRUCT) || !fields.is_empty() {
            return format!("{{{}}}", fields.join(","));
        }
        let mut parts = Vec::new();
        if vx.kind != Kind::TOP {
            parts.push(vx.kind.name());
        }
        for c in vx.constraints() {
            parts.push(self.value_text(c));
        }
        if parts.is_empty() {
            "_".into()
        } else {
            parts.join(" & ")
        }
    }

    /// A selection or index `id` into `w`, the value of `base`, that is only `_` so far: an
    /// incomplete error, as in CUE (`top.foo undefined as top is incomplete (type _)`).
    fn undefined_in_top(&self, w: VId, id: ExprId, base: ExprId) -> Option<Rc<Bottom>> {
        let wx = self.v(w);
        let top = wx.kind == Kind::TOP
            && wx.scalar.is_none()
            && wx.arcs.is_empty()
            && wx.err.is_none()
            && wx.disj.is_none()
            && wx.constraints().is_empty()
            && !wx.is_list;
        top.then(|| {
            Bottom::with_span(
                ErrCode::Incomplete,
                format!(
                    "{} undefined as {} is incomplete (type _)",
                    self.expr_text(id),
                    self.expr_text(base)
                ),
                self.prog.span(id),
            )
        })
    }

    /// The source text of an expression, for messages.
    pub fn expr_text(&self, id: ExprId) -> String {
        let span = self.prog.span(id);
        match self.sources.get(span.file.0 as usize) {
            Some(src) if (span.end as usize) <= src.len() => src[span.range()].to_string(),
            _ => "expression".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::to_valid_utf8;

    #[test]
    fn invalid_utf8_runs_become_one_replacement_character() {
        assert_eq!(to_valid_utf8(b"a\x80\x95a"), "a\u{FFFD}a");
        assert_eq!(to_valid_utf8(b"\xffa\xff"), "\u{FFFD}a\u{FFFD}");
        assert_eq!(to_valid_utf8("héllo".as_bytes()), "héllo");
        assert_eq!(to_valid_utf8(b"a\xe2\x82"), "a\u{FFFD}");
    }
}
