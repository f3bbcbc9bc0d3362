//! Comprehensions and dynamic fields, run once a node's own conjuncts have inserted their
//! fields. The clauses of a comprehension (`for`, `if`, `let`, `try`) yield one scope per
//! iteration, and the body is added to the node in each, as CUE embeds what a comprehension
//! yields; a dynamic field (`(k): v`) gets its label once `k` is concrete. A `for` over a struct
//! that is still being evaluated freezes that struct's field set, and a condition that compared a
//! value with `_|_` while the value was incomplete is checked again once the node is done.

use std::rc::Rc;

use crate::ast::Span;

use super::ir::{self, ArcType, Expr, ExprId};
use super::label::Label;
use super::unify::{NodeState, Resolved};
use super::value::{Bottom, ErrCode, Kind, Value};
use super::*;

impl Runtime {
    pub(super) fn add_dynamic(
        &mut self,
        v: VId,
        st: &mut NodeState,
        env: EnvRef,
        d: ir::Decl,
        ci: CloseInfo,
    ) {
        let _ = st;
        let ir::Decl::Dynamic {
            key,
            arc,
            value,
            span,
        } = d
        else {
            return;
        };
        let k = self.eval_value(Some(&env), key, Some(v));
        let k = self.concrete(k);
        let label = match k {
            Ok(Value::Str(s)) => self.prog.labels.string(&s),
            Ok(Value::Bottom(b)) | Err(b) => {
                self.set_err(v, b);
                return;
            }
            // A key that is not concrete yet may still become a string.
            Ok(other) if !other.is_concrete_scalar() && !matches!(other, Value::Vertex(_)) => {
                let msg = format!(
                    "key value of dynamic field must be concrete, found {}",
                    self.value_text(&other)
                );
                self.err_at(v, ErrCode::Incomplete, msg, self.prog.span(key));
                return;
            }
            Ok(other) => {
                let msg = format!("invalid label type {}", other.kind().name());
                self.err_at(v, ErrCode::Eval, msg, span);
                return;
            }
        };
        self.check_frozen(v, label, self.prog.span(value));
        let a = self.get_arc(v, label, arc);
        let mut cci = ci;
        if arc != ArcType::Member {
            cci.optional = true;
        }
        self.push_conj(
            a,
            Conjunct {
                env: Some(env),
                x: CExpr::Expr(value),
                ci: cci,
                span,
            },
        );
    }

    pub(super) fn run_comprehension(
        &mut self,
        v: VId,
        st: &mut NodeState,
        env: EnvRef,
        comp: Rc<ir::Comprehension>,
        ci: CloseInfo,
    ) {
        match self.comprehension_envs(v, env.clone(), &comp) {
            Ok(envs) => {
                if envs.is_empty()
                    && let Some(fb) = comp.fallback
                {
                    let span = self.prog.struct_span(fb);
                    self.add_conjunct(
                        v,
                        st,
                        Conjunct {
                            env: Some(env),
                            x: CExpr::Struct(fb),
                            ci: ci.clone(),
                            span,
                        },
                    );
                }
                for e in envs {
                    self.add_conjunct(
                        v,
                        st,
                        Conjunct {
                            env: Some(e),
                            x: CExpr::Struct(comp.body),
                            ci: ci.clone(),
                            span: comp.span,
                        },
                    );
                }
            }
            Err(b) => self.set_err(v, b),
        }
    }

    /// Runs the clauses of a comprehension, returning the environment of every yield.
    pub(super) fn comprehension_envs(
        &mut self,
        v: VId,
        env: EnvRef,
        comp: &ir::Comprehension,
    ) -> Result<Vec<EnvRef>, Rc<Bottom>> {
        let mut out = Vec::new();
        self.comp_ids += 1;
        let saved = std::mem::replace(&mut self.cur_comp, self.comp_ids);
        let r = self.clauses(v, env, &comp.clauses, comp.body, &mut out);
        self.cur_comp = saved;
        r?;
        Ok(out)
    }

    /// A scope binding `label` to `value` (a `let` clause or `try x = value`).
    fn let_env(&mut self, env: EnvRef, label: Label, value: ExprId) -> EnvRef {
        let f = self.new_vertex(None, label, ArcType::Member);
        self.vm(f).anonymous = true;
        self.vm(f).status = Status::Evaluated;
        let a = self.new_vertex(Some(f), label, ArcType::Member);
        self.vm(a).anonymous = true;
        let sp_ = self.prog.span(value);
        self.push_conj(
            a,
            Conjunct {
                env: Some(env.clone()),
                x: CExpr::Expr(value),
                ci: CloseInfo::default(),
                span: sp_,
            },
        );
        self.push_arc(f, a);
        Rc::new(Env {
            up: Some(env),
            vertex: f,
            dyn_label: None,
            comp_id: self.cur_comp,
        })
    }

    /// A trial evaluation of `x` in `env` for a `try` clause: whether an optional reference in it
    /// found its target undefined.
    fn try_fails(&mut self, env: EnvRef, x: CExpr, span: Span) -> bool {
        let t = self.new_vertex(None, Label::int(0), ArcType::Member);
        self.vm(t).anonymous = true;
        self.push_conj(
            t,
            Conjunct {
                env: Some(env),
                x,
                ci: CloseInfo::default(),
                span,
            },
        );
        self.finalize(t, false);
        self.has_undefined(t)
    }

    /// Whether `v` or a regular field below it is an `ErrCode::Undefined` error.
    fn has_undefined(&self, v: VId) -> bool {
        let mut stack = vec![v];
        let mut seen = 0usize;
        while let Some(x) = stack.pop() {
            seen += 1;
            if seen > 1_000_000 {
                return false;
            }
            let vx = self.v(x);
            if vx
                .err
                .as_ref()
                .is_some_and(|e| e.code == ErrCode::Undefined)
            {
                return true;
            }
            stack.extend(vx.arcs.iter().copied().filter(|&a| {
                let ax = self.v(a);
                ax.label.is_regular() && ax.arc_type != ArcType::Optional
            }));
        }
        false
    }

    fn clauses(
        &mut self,
        v: VId,
        env: EnvRef,
        clauses: &[ir::Clause],
        body: ir::StructId,
        out: &mut Vec<EnvRef>,
    ) -> Result<(), Rc<Bottom>> {
        let Some((first, rest)) = clauses.split_first() else {
            out.push(env);
            return Ok(());
        };
        match first {
            ir::Clause::If(cond, clause_span) => {
                let outer = self.cond_node.replace(v);
                let c = self.eval_value(Some(&env), *cond, Some(v));
                self.cond_node = outer;
                match self.concrete(c)? {
                    Value::Bool(true) => self.clauses(v, env, rest, body, out),
                    Value::Bool(false) => Ok(()),
                    Value::Bottom(b) => Err(b),
                    // A condition that may still become a boolean (`a: bool`, `if a`) is
                    // incomplete, reported where that value was written (CUE's `typeError`).
                    other
                        if !other.is_concrete_scalar()
                            && !matches!(other, Value::Vertex(_))
                            && other.kind().intersects(Kind::BOOL) =>
                    {
                        // The value `_` of a field has no position in CUE.
                        let sp = if matches!(other, Value::Top) && self.is_reference(*cond) {
                            Span::default()
                        } else {
                            self.operand_span(Some(&env), *cond, Some(v))
                        };
                        Err(Bottom::with_span(
                            ErrCode::Incomplete,
                            format!("incomplete bool: {}", self.value_text(&other)),
                            sp,
                        ))
                    }
                    // At the clause and where the value was written.
                    other => Err(Bottom::with_spans(
                        ErrCode::Eval,
                        format!(
                            "cannot use {} (type {}) as type bool",
                            self.value_text(&other),
                            other.kind().name()
                        ),
                        [*clause_span, self.operand_span(Some(&env), *cond, Some(v))],
                    )),
                }
            }
            ir::Clause::Try { binding: None } => {
                let mut yields = Vec::new();
                self.clauses(v, env, rest, body, &mut yields)?;
                let span = self.prog.struct_span(body);
                for e in yields {
                    if !self.try_fails(e.clone(), CExpr::Struct(body), span) {
                        out.push(e);
                    }
                }
                Ok(())
            }
            ir::Clause::Try {
                binding: Some((label, value)),
            } => {
                let sp_ = self.prog.span(*value);
                if self.try_fails(env.clone(), CExpr::Expr(*value), sp_) {
                    return Ok(());
                }
                let e = self.let_env(env, *label, *value);
                self.clauses(v, e, rest, body, out)
            }
            ir::Clause::Let { label, value } => {
                let e = self.let_env(env, *label, *value);
                self.clauses(v, e, rest, body, out)
            }
            ir::Clause::For { key, value, source } => {
                let src = self.eval_value(Some(&env), *source, Some(v));
                let mut frozen_src = None;
                let src = match src {
                    Value::Vertex(w) => w,
                    Value::Bottom(b) if b.code == ErrCode::Cycle => {
                        match self.evaluating_source(&env, *source, v) {
                            Some(w) => {
                                frozen_src = Some(w);
                                w
                            }
                            None => return Err(b),
                        }
                    }
                    Value::Bottom(b) => return Err(b),
                    other => {
                        let span = self.prog.span(*source);
                        if !other.is_concrete_scalar() {
                            return Err(Bottom::with_span(
                                ErrCode::Incomplete,
                                format!(
                                    "cannot range over {} (incomplete type {})",
                                    self.expr_text(*source),
                                    other.kind().name()
                                ),
                                span,
                            ));
                        }
                        return Err(Bottom::with_span(
                            ErrCode::Eval,
                            format!(
                                "cannot range over {} (found {}, want list or struct)",
                                self.expr_text(*source),
                                other.kind().name()
                            ),
                            span,
                        ));
                    }
                };
                self.evaluate(src);
                let src = self.default_of(src);
                self.evaluate(src);
                if let Some(e) = self.v(src).err.clone() {
                    return Err(e);
                }
                let vx = self.v(src);
                if vx.scalar.is_some() || (!vx.kind.intersects(Kind::STRUCT) && !vx.is_list) {
                    let span = self.prog.span(*source);
                    return Err(Bottom::with_span(
                        ErrCode::Eval,
                        format!(
                            "cannot range over {} (found {}, want list or struct)",
                            self.expr_text(*source),
                            self.v(src).kind.name()
                        ),
                        span,
                    ));
                }
                if frozen_src.is_some() {
                    self.freeze_fields(src);
                }
                let arcs = self.v(src).arcs.clone();
                for a in arcs {
                    let (l, at) = (self.v(a).label, self.v(a).arc_type);
                    if !l.is_regular() || at == ArcType::Optional {
                        continue;
                    }
                    if at == ArcType::Required {
                        return Err(Bottom::incomplete(format!(
                            "missing required field in for comprehension: {}",
                            self.prog.labels.text(l)
                        )));
                    }
                    let f = self.new_vertex(None, *value, ArcType::Member);
                    self.vm(f).anonymous = true;
                    self.vm(f).status = Status::Evaluated;
                    if let Some(k) = key {
                        let kv = self.new_vertex(Some(f), *k, ArcType::Member);
                        let kval = if l.is_int() {
                            Value::int(l.index() as i64)
                        } else {
                            Value::Str(Rc::from(self.prog.labels.name(l)))
                        };
                        let vxk = self.vm(kv);
                        vxk.anonymous = true;
                        vxk.kind = kval.kind();
                        vxk.scalar = Some(kval);
                        vxk.status = Status::Evaluated;
                        self.push_arc(f, kv);
                    }
                    let vv = self.new_vertex(Some(f), *value, ArcType::Member);
                    let vvx = self.vm(vv);
                    vvx.anonymous = true;
                    vvx.forward = Some(a);
                    vvx.status = Status::Evaluated;
                    self.push_arc(f, vv);
                    let e = Rc::new(Env {
                        up: Some(env.clone()),
                        vertex: f,
                        dyn_label: None,
                        comp_id: self.cur_comp,
                    });
                    self.clauses(v, e, rest, body, out)?;
                    if frozen_src.is_some() && self.v(a).status != Status::Unprocessed {
                        // The loop looked into this field of a frozen source.
                        self.freeze_fields(a);
                    }
                }
                Ok(())
            }
        }
    }
}

// Frozen field sets. A `for` comprehension that ranges over a struct still being evaluated
// (its own node, or one in a reference cycle with it) sees the fields the struct has so far; the
// struct's field set is then frozen, and a field added to it afterwards is an error ("adding
// field x not allowed as field set was already referenced", CUE's `getArc` after the scheduler
// broke the deadlock by freezing). Making an existing field more specific stays allowed
// (`a: {x: int, for k, _ in a {(k): 1}}` is `{x: 1}`). A field the loop body looked into while
// the source was frozen (`len(v)`) has its field set frozen too.

const FROZEN: &str = "not allowed as field set was already referenced";

impl Runtime {
    /// The vertex a `for` source refers to when that vertex is being evaluated (ranging over it
    /// is a cycle that CUE resolves by freezing its field set) and has all its own conjuncts.
    pub(super) fn evaluating_source(
        &mut self,
        env: &EnvRef,
        source: ExprId,
        v: VId,
    ) -> Option<VId> {
        let is_ref = matches!(
            self.prog.expr(source),
            Expr::FieldRef { .. } | Expr::LetRef { .. } | Expr::Selector(..) | Expr::Index(..)
        );
        if !is_ref {
            return None;
        }
        match self.resolve(Some(env), source, v) {
            // Only once the struct's own fields are in: before that, CUE would wait for them.
            Ok(Resolved::Vertex(w))
                if self.v(w).status == Status::Evaluating
                    && !self.v(w).is_list
                    && self.in_tasks.contains(&w) =>
            {
                Some(w)
            }
            _ => None,
        }
    }

    /// Freezes the field set of `w` as it is now (a later freeze keeps the first set).
    pub(super) fn freeze_fields(&mut self, w: VId) {
        if self.frozen.contains_key(&w) {
            return;
        }
        let labels: Vec<Label> = self
            .v(w)
            .arcs
            .iter()
            .map(|&a| self.v(a).label)
            .filter(|l| l.is_regular())
            .collect();
        self.frozen.insert(w, labels);
    }

    /// Records the error of adding field `label` (declared at `span`) to `v` when `v`'s field set
    /// is frozen and does not have it.
    pub(super) fn check_frozen(&mut self, v: VId, label: Label, span: Span) {
        let Some(labels) = self.frozen.get(&v) else {
            return;
        };
        if !label.is_regular() || labels.contains(&label) || self.arc(v, label).is_some() {
            return;
        }
        let msg = format!("adding field {} {FROZEN}", self.prog.labels.text(label));
        let b = Bottom::with_span(ErrCode::Eval, msg, span);
        // Each field added is reported (`a: {for k, v in b {(k+"q"): v}}` may add several).
        match self.v(v).err.clone() {
            Some(old) if old.code == ErrCode::Eval && old.msg.ends_with(FROZEN) => {
                let mut all = (*old).clone();
                all.subs.push(b);
                self.vm(v).err = Some(Rc::new(all));
            }
            _ => self.set_err(v, b),
        }
    }
}

// Comparisons with `_|_` in comprehension conditions that rested on an incomplete value (a field
// not there yet, an optional field): CUE notes them as post-checks and evaluates them again once
// the node is done. If the answer changed (the comprehension itself, or a later one, added the
// field), the node fails with "circular dependency in evaluation of conditionals: %v changed after
// evaluation" (`unify.go` completeAllArcs).

/// A `x == _|_` test to check again: the node whose comprehension asked, the operand and its
/// frame, and the answer given.
pub struct PostCheck {
    pub node: VId,
    pub env: Option<EnvRef>,
    pub x: ExprId,
    pub answer: bool,
}

impl Runtime {
    /// Notes that `x == _|_` (asked by a condition of node `cur`) was answered on an incomplete
    /// value.
    pub(super) fn note_post_check(
        &mut self,
        env: Option<&EnvRef>,
        x: ExprId,
        cur: Option<VId>,
        answer: bool,
    ) {
        if let Some(node) = cur
            && self.cond_node == Some(node)
        {
            self.post_checks.push(PostCheck {
                node,
                env: env.cloned(),
                x,
                answer,
            });
        }
    }

    /// Evaluates again the tests noted for `v` and fails `v` for each one whose answer changed.
    pub(super) fn run_post_checks(&mut self, v: VId) {
        if !self.post_checks.iter().any(|p| p.node == v) {
            return;
        }
        let (mine, rest): (Vec<PostCheck>, Vec<PostCheck>) = std::mem::take(&mut self.post_checks)
            .into_iter()
            .partition(|p| p.node == v);
        self.post_checks = rest;
        for p in mine {
            let now = self.is_bottom_test(p.env.as_ref(), p.x, Some(v));
            if matches!(now, Ok(a) if a == p.answer) {
                continue;
            }
            let msg = format!(
                "circular dependency in evaluation of conditionals: {} changed after evaluation",
                self.expr_text(p.x)
            );
            let b: Rc<Bottom> = Bottom::with_span(ErrCode::Cycle, msg, self.prog.span(p.x));
            self.set_err(v, b);
        }
    }
}
