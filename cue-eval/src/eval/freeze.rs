//! Frozen field sets. A `for` comprehension that ranges over a struct still being evaluated
//! (its own node, or one in a reference cycle with it) sees the fields the struct has so far; the
//! struct's field set is then frozen, and a field added to it afterwards is an error ("adding
//! field x not allowed as field set was already referenced", CUE's `getArc` after the scheduler
//! broke the deadlock by freezing). Making an existing field more specific stays allowed
//! (`a: {x: int, for k, _ in a {(k): 1}}` is `{x: 1}`). A field the loop body looked into while
//! the source was frozen (`len(v)`) has its field set frozen too.

use std::rc::Rc;

use crate::ast::Span;

use super::ir::{Expr, ExprId};
use super::label::Label;
use super::unify::Resolved;
use super::value::{Bottom, ErrCode};
use super::{EnvRef, Runtime, Status, VId};

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
