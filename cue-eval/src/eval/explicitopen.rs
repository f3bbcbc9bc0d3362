//! The `explicitopen` experiment: the postfix `x...` that lifts the closedness of a value's top
//! level, and the builtins `__closeAll` (close a literal recursively) and `__reclose` (restore
//! the closedness that the `x...` embeddings of a literal lifted: recursive if one of them was a
//! definition, one level if it was a `close()`). Embedding a definition in a file with the
//! experiment gives no evidence to the fields of the enclosing literal (see `add_struct`).

use super::ir::{Builtin, Expr, ExprId};
use super::unify::NodeState;
use super::value::{Bottom, ErrCode};
use super::*;

/// What a group stands for, beyond its flags.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GroupMark {
    /// `x...`: requirements inside it are lifted at the vertex where it was created.
    Open,
    /// `__reclose(lit)`: closes the literal if an `x...` directly in it lifted a requirement.
    Reclose,
    /// A non-definition value embedded in a file without the experiment: what it closes
    /// accepts the fields of the enclosing literal.
    Embed,
    /// An embedded conjunction (`{#A & {b: 1}}`): a definition in it accepts the fields of the
    /// enclosing literal but not those of the conjunction's other operands.
    EmbedAnd,
}

impl Runtime {
    /// Adds `x...`: `x` in a new group whose closed groups do not constrain this vertex.
    pub(super) fn add_open(&mut self, v: VId, st: &mut NodeState, c: Conjunct, x: ExprId) {
        let o = self.new_group(c.ci.group, false, true, false, v);
        self.group_marks.insert(o, GroupMark::Open);
        let mut c2 = c;
        c2.x = CExpr::Expr(x);
        c2.ci.group = o;
        self.add_conjunct(v, st, c2);
    }

    /// Adds `__closeAll(lit)` or `__reclose(lit)`.
    pub(super) fn add_closeall(
        &mut self,
        v: VId,
        st: &mut NodeState,
        c: Conjunct,
        f: ExprId,
        args: &[ExprId],
    ) {
        let (name, enabled, reclose) = match self.prog.expr(f) {
            Expr::Builtin(Builtin::Reclose(e)) => ("__reclose", *e, true),
            Expr::Builtin(Builtin::CloseAll(e)) => ("__closeAll", *e, false),
            _ => return,
        };
        let span = match c.x {
            CExpr::Expr(id) => self.prog.span(id),
            _ => c.span,
        };
        let fail = |msg: String| Bottom::with_span(ErrCode::Eval, msg, span);
        if !enabled {
            let b = fail(format!(
                "error in call to {name}: {name} may only be used when explicitopen is enabled"
            ));
            self.set_err(v, b);
            return;
        }
        if args.len() != 1 {
            let few = if args.is_empty() {
                "not enough"
            } else {
                "too many"
            };
            let b = fail(format!(
                "{few} arguments in call to {name} (have {}, want 1)",
                args.len()
            ));
            self.set_err(v, b);
            return;
        }
        let arg = args[0];
        let literal = match self.prog.expr(arg) {
            Expr::Struct(_) | Expr::List(_) => true,
            Expr::Call(g, a) => {
                reclose
                    && a.len() == 1
                    && matches!(self.prog.expr(*g), Expr::Builtin(Builtin::Close))
            }
            _ => false,
        };
        if !literal {
            let b = fail(format!(
                "error in call to {name}: argument must be a struct or list literal"
            ));
            self.set_err(v, b);
            return;
        }
        let g = if reclose {
            // Recursive only once a lifted definition is found in it.
            let g = self.new_group(c.ci.group, false, false, false, v);
            self.group_marks.insert(g, GroupMark::Reclose);
            g
        } else {
            self.new_group(c.ci.group, true, true, false, v)
        };
        let mut c2 = c;
        c2.x = CExpr::Expr(arg);
        c2.ci.group = g;
        self.add_conjunct(v, st, c2);
    }

    /// Removes from the requirements of `v` those lifted by an `x...` written at `v`; a lift
    /// inside a `__reclose` closes the reclose group instead, which is then required.
    pub(super) fn lift_opened(&mut self, v: VId, reqs: Vec<u32>) -> Vec<u32> {
        if self.group_marks.is_empty() {
            return reqs;
        }
        let mut out: Vec<u32> = Vec::new();
        let mut added: Vec<u32> = Vec::new();
        for r in reqs {
            match self.opened_at(v, r) {
                None => out.push(r),
                Some(None) => {}
                Some(Some(rg)) => {
                    let rec = self.groups[r as usize].recursive;
                    let gr = &mut self.groups[rg as usize];
                    gr.closed = true;
                    gr.recursive |= rec;
                    if !added.contains(&rg) {
                        added.push(rg);
                    }
                }
            }
        }
        for rg in added {
            if !out.contains(&rg) {
                out.push(rg);
            }
        }
        out
    }

    /// Whether requirement `r` lies in a group opened by `x...` at `v`: `None` if not, else the
    /// `__reclose` group just around the opening literal, if any.
    fn opened_at(&self, v: VId, r: u32) -> Option<Option<u32>> {
        let mut g = self.groups[r as usize].parent;
        let mut guard = 0;
        while g != 0 && guard < 10_000 {
            guard += 1;
            if self.group_marks.get(&g) == Some(&GroupMark::Open) {
                if self.groups[g as usize].origin != v {
                    return None;
                }
                // A reclose around the literal that holds the `x...`.
                let mut h = self.groups[g as usize].parent;
                let mut n = 0;
                while h != 0 && n < 4 {
                    n += 1;
                    match self.group_marks.get(&h) {
                        Some(GroupMark::Reclose) => return Some(Some(h)),
                        Some(GroupMark::Open) => break,
                        Some(GroupMark::Embed) | Some(GroupMark::EmbedAnd) | None => {}
                    }
                    if self.groups[h as usize].closed && self.groups[h as usize].recursive {
                        break;
                    }
                    h = self.groups[h as usize].parent;
                }
                return Some(None);
            }
            g = self.groups[g as usize].parent;
        }
        None
    }

    /// Whether a recursive requirement `g` found above an `x...` should not apply below: a
    /// `__reclose` group closes the literal's own fields, not what its embeddings bring.
    pub(super) fn skip_reclose_requirement(&self, g: u32, passed_open: bool) -> bool {
        passed_open && self.group_marks.get(&g) == Some(&GroupMark::Reclose)
    }

    pub(super) fn is_open_mark(&self, g: u32) -> bool {
        self.group_marks.get(&g) == Some(&GroupMark::Open)
    }

    /// The group for the conjuncts of a non-definition reference `c` (when `def_group` is
    /// `None`): a reference that is a whole embedding, without the experiment, gets an
    /// embedding scope of its own.
    pub(super) fn embed_scope(&mut self, v: VId, c: &Conjunct, def_group: Option<u32>) -> u32 {
        let whole = matches!(c.x, CExpr::Expr(id) if self.prog.embed_roots.contains(&id));
        if def_group.is_some() || !c.ci.embedded || !whole {
            return c.ci.group;
        }
        let e = self.new_group(c.ci.group, false, true, false, v);
        self.group_marks.insert(e, GroupMark::Embed);
        e
    }

    /// Puts an embedded conjunction (`{#A & {b: 1}}`) in a group of its own.
    pub(super) fn embed_and_scope(&mut self, v: VId, mut c: Conjunct) -> Conjunct {
        let and = matches!(c.x, CExpr::Expr(id)
            if matches!(self.prog.expr(id), Expr::Binary(crate::ast::BinaryOp::Unify, ..)));
        if c.ci.embedded && and {
            let e = self.new_group(c.ci.group, false, true, false, v);
            self.group_marks.insert(e, GroupMark::EmbedAnd);
            c.ci.group = e;
        }
        c
    }

    /// Whether group `g` holds an embedded conjunction.
    pub(super) fn is_embed_and(&self, g: u32) -> bool {
        !self.group_marks.is_empty() && self.group_marks.get(&g) == Some(&GroupMark::EmbedAnd)
    }

    /// Whether arc `a` is allowed by requirement `r` because `r` lies in an embedding scope
    /// and `a` has a conjunct from the literal around that embedding.
    pub(super) fn allowed_by_embed_scope(&self, a: VId, r: u32) -> bool {
        if self.group_marks.is_empty() {
            return false;
        }
        let mut g = self.groups[r as usize].parent;
        let mut guard = 0;
        while g != 0 && guard < 10_000 {
            guard += 1;
            if self.group_marks.get(&g) == Some(&GroupMark::Embed) {
                let p = self.groups[g as usize].parent;
                if self
                    .v(a)
                    .conjuncts
                    .iter()
                    .any(|c| self.group_within(c.ci.group, p) && !self.group_within(c.ci.group, g))
                {
                    return true;
                }
            }
            g = self.groups[g as usize].parent;
        }
        false
    }

    /// Whether a definition already inserted at `v` under `x...` (its group `first`) must be
    /// inserted again for a later reference outside any `x...`: that one closes `v`.
    pub(super) fn reinsert_opened(&self, v: VId, first: Option<u32>, c: &Conjunct) -> bool {
        let Some(g) = first else {
            return false;
        };
        if self.group_marks.is_empty() || self.opened_at(v, g).is_none() {
            return false;
        }
        let mut h = c.ci.group;
        let mut guard = 0;
        while h != 0 && guard < 10_000 {
            guard += 1;
            if self.is_open_mark(h) {
                return false;
            }
            h = self.groups[h as usize].parent;
        }
        true
    }
}
