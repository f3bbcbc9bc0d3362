//! Ordering and inequality bounds (`>=0`, `<10`, `!=""`, `=~"^a"`): a new bound is merged into a
//! node's constraints (of two bounds in the same direction the tighter stays; a `!=x` that
//! another bound already excludes is dropped, as CUE's `SimplifyBounds`), and once all conjuncts
//! are in, a lower and an upper bound that leave no value fail.

use std::rc::Rc;

use crate::ast::UnaryOp;

use super::value::{Bottom, ErrCode, Kind, Value};
use super::*;

impl Runtime {
    /// Adds bound `val` (`op b`, written at `span`) to the constraints of `v`, keeping only the
    /// tighter of two bounds in the same direction and dropping a `!=x` another bound implies.
    pub(super) fn add_bound(&mut self, v: VId, op: UnaryOp, b: &Value, val: Value, span: Span) {
        let dup = self
            .v(v)
            .constraints()
            .iter()
            .any(|x| super::expr::value_eq_shallow(x, &val));
        if dup {
            return;
        }
        // `!=x` next to a bound that `x` does not satisfy says nothing more (CUE's
        // `SimplifyBounds`): `>5 & !=5` is `>5`, `!="b" & =~"c"` is `=~"c"`.
        if op == UnaryOp::Ne && b.is_concrete_scalar() {
            let cons = self.v(v).constraints_copy();
            for c in &cons {
                if let Value::Bound(op2, b2) = c
                    && excludes_ne(*op2)
                    && !self.check_bound(*op2, b2, b).unwrap_or(false)
                {
                    return;
                }
            }
        } else if excludes_ne(op) {
            let mut i = 0;
            while i < self.v(v).constraints().len() {
                let redundant = match &self.v(v).constraints()[i] {
                    Value::Bound(UnaryOp::Ne, x) if x.is_concrete_scalar() => {
                        let x = x.clone();
                        !self.check_bound(op, b, &x).unwrap_or(false)
                    }
                    _ => false,
                };
                if redundant {
                    let vx = self.vm(v);
                    vx.xm().constraints.remove(i);
                    if i < vx.cons_spans().len() {
                        vx.xm().cons_spans.remove(i);
                    }
                } else {
                    i += 1;
                }
            }
        }
        // Two bounds in the same direction: keep the tighter one.
        if let Some(dir) = bound_dir(op) {
            let cons = self.v(v).constraints_copy();
            for (i, c) in cons.iter().enumerate() {
                if let Value::Bound(op2, b2) = c
                    && bound_dir(*op2) == Some(dir)
                    && let Some(ord) = bound_cmp(b, b2)
                {
                    use std::cmp::Ordering::*;
                    let strict = matches!(op, UnaryOp::Lt | UnaryOp::Gt);
                    let new_tighter = match (dir, ord) {
                        (_, Equal) => strict,
                        (true, Less) | (false, Greater) => true,
                        _ => false,
                    };
                    if new_tighter {
                        self.vm(v).xm().constraints[i] = val;
                        self.vm(v).xm().cons_spans[i] = span;
                    }
                    return;
                }
            }
        }
        self.vm(v).xm().constraints.push(val);
        self.vm(v).xm().cons_spans.push(span);
    }

    /// Detects bounds that cannot hold together (`>10 & <5`) and integer ranges that are one
    /// value (`>=1 & <=1 & int` stays as written, as CUE keeps validators).
    pub(super) fn simplify_bounds(&mut self, v: VId) {
        let cons = self.v(v).constraints_copy();
        let spans = self.v(v).cons_spans_copy();
        let mut lo: Option<(UnaryOp, Value, Span)> = None;
        let mut hi: Option<(UnaryOp, Value, Span)> = None;
        for (i, c) in cons.iter().enumerate() {
            if let Value::Bound(op, b) = c
                && matches!(&**b, Value::Num(..) | Value::Str(_) | Value::Bytes(_))
            {
                let sp = spans.get(i).copied().unwrap_or_default();
                match op {
                    UnaryOp::Gt | UnaryOp::Ge => lo = Some((*op, (**b).clone(), sp)),
                    UnaryOp::Lt | UnaryOp::Le => hi = Some((*op, (**b).clone(), sp)),
                    _ => {}
                }
            }
        }
        let Some(((lop, l, ls), (hop, h, hs))) = lo.zip(hi) else {
            return;
        };
        let is_int = self.v(v).kind == Kind::INT;
        let (ord, what) = match (&l, &h) {
            // Integers: `>1 & <2` holds no value either, nor `>=1.1 & <=1.3`.
            (Value::Num(a, _), Value::Num(b, _)) if is_int => {
                use super::builtins::math::{ceil_num, floor_num};
                let one = crate::num::Num::from_i64(1);
                let a2 = if lop == UnaryOp::Gt {
                    floor_num(a).add(&one)
                } else {
                    ceil_num(a)
                };
                let b2 = if hop == UnaryOp::Lt {
                    ceil_num(b).sub(&one)
                } else {
                    floor_num(b)
                };
                let ord = match a2.cmp(&b2) {
                    std::cmp::Ordering::Greater => std::cmp::Ordering::Greater,
                    _ => std::cmp::Ordering::Less,
                };
                (ord, "integer")
            }
            (Value::Num(a, _), Value::Num(b, _)) => (a.cmp(b), "number"),
            (Value::Str(a), Value::Str(b)) => (a.cmp(b), "string"),
            (Value::Bytes(a), Value::Bytes(b)) => (a.cmp(b), "bytes"),
            _ => return,
        };
        let bad = match ord {
            std::cmp::Ordering::Greater => true,
            std::cmp::Ordering::Equal => !(lop == UnaryOp::Ge && hop == UnaryOp::Le),
            std::cmp::Ordering::Less => false,
        };
        if bad {
            let msg = format!(
                "incompatible {what} bounds {} and {}",
                self.value_text(&Value::Bound(hop, Rc::new(h))),
                self.value_text(&Value::Bound(lop, Rc::new(l))),
            );
            let b = Bottom::with_spans(ErrCode::Eval, msg, [hs, ls]);
            self.set_err(v, b);
        }
    }
}

/// The direction of an ordering bound: `Some(true)` for upper bounds (`<`, `<=`), `Some(false)`
/// for lower bounds.
pub(super) fn bound_dir(op: UnaryOp) -> Option<bool> {
    match op {
        UnaryOp::Lt | UnaryOp::Le => Some(true),
        UnaryOp::Gt | UnaryOp::Ge => Some(false),
        _ => None,
    }
}

/// Whether a bound with this operator can make a `!=x` redundant: an order or a pattern.
fn excludes_ne(op: UnaryOp) -> bool {
    matches!(
        op,
        UnaryOp::Lt | UnaryOp::Le | UnaryOp::Gt | UnaryOp::Ge | UnaryOp::Match | UnaryOp::NotMatch
    )
}

fn bound_cmp(a: &Value, b: &Value) -> Option<std::cmp::Ordering> {
    match (a, b) {
        (Value::Num(x, _), Value::Num(y, _)) => Some(x.cmp(y)),
        (Value::Str(x), Value::Str(y)) => Some(x.cmp(y)),
        (Value::Bytes(x), Value::Bytes(y)) => Some(x.cmp(y)),
        _ => None,
    }
}
