//! Cycles. A reference to a vertex still being evaluated is a reference cycle: the conjuncts that
//! met one are retried once their node has a concrete value from another conjunct (the cycle
//! resolves), and those a cycle made us skip are checked against the value their node settled on.
//! A structural cycle (a value that contains itself) is found as CUE finds it: each conjunct
//! carries the chain of references it has followed; a reference already in the chain, or to an
//! ancestor, marks the conjunct cyclic, and a node is a structural cycle when its conjuncts give
//! no evidence that it is finite.

use std::rc::Rc;

use crate::ast::Span;

use super::ir::{self, ArcType};
use super::unify::NodeState;
use super::value::{Bottom, ErrCode};
use super::*;

impl Runtime {
    /// Checks the conjuncts that a cycle made us skip against the value their node settled on
    /// (`b: a + 110, b: 200` with `a: b - 100` must still fail).
    pub(super) fn run_cycle_checks(&mut self) {
        let checks = std::mem::take(&mut self.cycle_checks);
        self.depth += 1;
        for (v, c) in checks {
            let Some(have) = self.v(v).scalar.clone() else {
                continue;
            };
            if self.v(v).err.is_some() {
                continue;
            }
            let parent = self.v(v).parent;
            let a = self.anon_vertex(vec![c], parent);
            self.evaluate(a);
            let Some(got) = self.v(a).scalar.clone() else {
                continue;
            };
            if self.v(a).err.is_some() || super::expr::scalar_eq(&got, &have) {
                continue;
            }
            let msg = format!(
                "conflicting values {} and {}",
                self.value_text(&got),
                self.value_text(&have)
            );
            let mut spans: Vec<Span> = Vec::new();
            for c in &self.v(v).conjuncts {
                let sp = match c.x {
                    CExpr::Expr(e) => self.prog.span(e),
                    _ => c.span,
                };
                if sp != Span::default() && !spans.contains(&sp) {
                    spans.push(sp);
                }
            }
            self.set_err(
                v,
                Rc::new(Bottom {
                    code: ErrCode::Eval,
                    msg,
                    spans,
                    child: false,
                    at: None,
                    subs: Vec::new(),
                }),
            );
        }
        self.depth -= 1;
        self.cycle_checks.clear();
    }

    /// Retries the conjuncts that met a reference cycle: with a concrete value found meanwhile,
    /// a reference back to this node now gives that value (the cycle resolves); without one,
    /// the cycle error stands.
    pub(super) fn retry_postponed(&mut self, v: VId, st: &mut NodeState) {
        let postponed = std::mem::take(&mut st.postponed);
        // A value chosen by a disjunction does not resolve a cycle (`a1: *0 | 1, a1: a3 - a2`).
        let has_value =
            self.v(v).scalar.is_some() && self.v(v).err.is_none() && !self.v(v).is_disjunct;
        if !has_value {
            for (_, b) in postponed {
                self.set_err(v, b);
            }
            if self
                .v(v)
                .err
                .as_ref()
                .is_some_and(|e| e.code == ErrCode::Cycle)
            {
                let e = self.cycle_epoch;
                self.vm(v).xm().cycle_epoch = e;
            }
            return;
        }
        self.cycle_epoch += 1;
        st.retrying = true;
        for (c, _) in postponed {
            self.add_conjunct(v, st, c);
        }
        self.run_tasks(v, st);
        st.retrying = false;
    }

    /// Marks that a conjunct which is not cyclic brought structure or a value to `v`: the
    /// cyclic references held back may now go on.
    pub(super) fn non_cycle(&mut self, v: VId, st: &mut NodeState, ci: &CloseInfo) {
        if ci.cyclic || st.has_non_cycle {
            return;
        }
        st.has_non_cycle = true;
        for (w, c, span) in std::mem::take(&mut st.cyclic_refs) {
            self.add_ref_conjuncts(v, st, w, &c, span, false);
        }
    }

    /// Whether the conjuncts of `v` give no evidence that it is finite: a structural cycle.
    pub(super) fn only_cyclic(st: &NodeState) -> bool {
        (st.ancestor_cycle && !st.has_non_cycle) || (st.any_cycle && !st.has_non_cyclic)
    }

    /// Whether `a` encloses `v` for cycle detection: an ancestor, or the vertex whose
    /// disjunction an ancestor is an alternative of (CUE counts a node under evaluation as an
    /// ancestor, so `c: 1 | {d: c}` is `1`: the second disjunct is a structural cycle).
    fn is_enclosing(&self, a: VId, v: VId) -> bool {
        self.self_and_ancestors(v)
            .skip(1)
            .any(|p| p == a || self.v(p).clone_of() == Some(a))
    }

    /// Whether `v` is an inline vertex (`(t & {a: 1})`) or a disjunct of one.
    fn is_inline(&self, v: VId) -> bool {
        let vx = self.v(v);
        vx.anonymous || vx.clone_of().is_some_and(|o| self.v(o).anonymous)
    }

    /// Whether `w` is not final yet and holds a disjunction: an inline vertex that reaches it
    /// again feeds that disjunction with itself.
    fn self_feeding(&self, w: VId) -> bool {
        let wx = self.v(w);
        self.v(self.deref(w)).status != Status::Finalized
            && wx.conjuncts.iter().any(|c| {
                matches!(c.x, CExpr::Expr(id)
                    if matches!(self.prog.expr(id), ir::Expr::Disj(alts) if alts.len() > 1))
            })
    }

    /// Handles a reference at `v` to `w` that is or may be a cycle: a reference to an ancestor,
    /// one repeated in the conjunct's chain, or an optional one whose check waits for the node's
    /// other conjuncts. Returns whether it did; otherwise the conjuncts of `w` are inserted as
    /// usual.
    pub(super) fn ref_cycle(
        &mut self,
        v: VId,
        st: &mut NodeState,
        w: VId,
        c: &Conjunct,
        span: Span,
    ) -> bool {
        let ancestor = self.is_enclosing(w, v);
        if !ancestor
            && !st.conjuncts_done
            && !st.has_non_cyclic
            && (c.ci.maybe_cyclic || (c.ci.optional && !c.ci.cyclic && c.ci.has_ref(w)))
        {
            // Whether this optional conjunct may go on depends on the node's other conjuncts:
            // CUE resolves references after the node's struct literals, so it waits for them.
            st.optional_refs.push((w, c.clone(), span));
            return true;
        }
        if !ancestor && c.ci.maybe_cyclic && st.has_non_cyclic {
            // As CUE does: an optional conjunct on its extra round is not checked while the
            // node has other non-cyclic conjuncts.
            self.add_ref_conjuncts(v, st, w, c, span, false);
            return true;
        }
        if !ancestor
            && c.ci.optional
            && !c.ci.maybe_cyclic
            && !c.ci.cyclic
            && st.has_non_cyclic
            && c.ci.has_ref(w)
        {
            // An optional conjunct meeting a repeated reference while the node has non-cyclic
            // conjuncts goes one more round with a fresh chain (CUE's `MaybeCyclic`): a pattern
            // applied to a cyclic value is expanded one level deeper.
            let mut c2 = c.clone();
            c2.ci.maybe_cyclic = true;
            c2.ci.refs = None;
            c2.ci.ref_span = super::CLEARED_REF;
            self.add_ref_conjuncts(v, st, w, &c2, span, false);
            return true;
        }
        if !ancestor && st.has_non_cyclic && self.is_inline(v) && c.ci.has_ref(w) {
            // An inline vertex (`(t & {in: x}).out` inside `t`) reaching a vertex again: through
            // another reference it is the same body instantiated elsewhere, not a cycle; through
            // the same reference it may go one more round, as CUE only marks the conjunct
            // cyclic then, and the next repeat is a structural cycle (below). A source has
            // finitely many references, so a recursion that does not end repeats one. A
            // disjunction not yet final is reached again through whatever reference (each of
            // its disjuncts may hold its own): the skip would let every disjunct expand the
            // whole disjunction again.
            let x = match c.x {
                CExpr::Expr(id) => id,
                _ => u32::MAX,
            };
            let all = c.ci.count_ref(w, None);
            let repeats = if self.self_feeding(w) {
                all
            } else {
                c.ci.count_ref(w, Some(x))
            };
            // Whatever the references, a vertex reached four times is a cycle: several
            // references that each may repeat would otherwise multiply the rounds.
            if repeats < 2 && all < 4 {
                return false;
            }
        }
        if ancestor || c.ci.has_ref(w) {
            if !ancestor
                && c.ci.optional
                && !self.v(v).is_disjunct
                && self.v(v).arc_type != ArcType::Optional
            {
                // A repeated reference through an optional field or pattern: it stops here.
                // An optional field itself is marked cyclic instead, as CUE does (`tail?: _|_`
                // in eval), and so is a reference to an ancestor (CUE's `markCyclic`): a
                // pattern that reaches its own struct again fails once the fields run out.
                return true;
            }
            // As CUE does: the conjunct is marked cyclic. It goes on while other conjuncts of
            // the node bring structure (an ancestor) or are not cyclic themselves (a repeated
            // reference), so the error lands where the structure really repeats; otherwise it
            // waits, and the node is a structural cycle if nothing else comes.
            if self.v(v).anonymous {
                // An inline struct (`{a}.b`) is not rooted: it gets no second round. CUE
                // reports an inline unification (`(f & {n: 1}).out`) at the reference that
                // closes the cycle, an embedding in an inline literal without a position.
                let sp = if c.ci.embedded { Span::default() } else { span };
                let b = Bottom::with_spans(ErrCode::StructuralCycle, "structural cycle", [sp]);
                self.set_err(v, b);
                return true;
            }
            st.any_cycle = true;
            st.ancestor_cycle |= ancestor;
            let mut c2 = c.clone();
            c2.ci.cyclic = true;
            let wait = if ancestor {
                !st.has_non_cycle
            } else {
                !st.has_non_cyclic && !st.has_non_cycle
            };
            if wait {
                st.cyclic_refs.push((w, c2, span));
            } else {
                self.add_ref_conjuncts(v, st, w, &c2, span, false);
            }
            return true;
        }
        false
    }
}
