//! Comparisons with `_|_` in comprehension conditions that rested on an incomplete value (a field
//! not there yet, an optional field): CUE notes them as post-checks and evaluates them again once
//! the node is done. If the answer changed (the comprehension itself, or a later one, added the
//! field), the node fails with "circular dependency in evaluation of conditionals: %v changed after
//! evaluation" (`unify.go` completeAllArcs).

use std::rc::Rc;

use super::ir::ExprId;
use super::value::{Bottom, ErrCode};
use super::{EnvRef, Runtime, VId};

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
