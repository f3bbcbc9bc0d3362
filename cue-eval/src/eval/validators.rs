//! Validators of structs and lists (`matchN(1, [#A]) & {a: 1}`, `struct.MinFields(2)`, `==` and
//! `!=` with a struct or list), which can only run once the value's fields are final, as CUE runs
//! them after the fields; scalars are checked when their value arrives.

use std::rc::Rc;

use crate::ast::{Span, UnaryOp};

use super::value::{Bottom, ErrCode, Kind, Value};
use super::*;

impl Runtime {
    /// Runs the validators of a struct or list (`matchN(1, [#A]) & {a: 1}`) once its fields are
    /// final; scalars were checked when their value arrived. An incomplete result leaves the
    /// validator in place, as CUE does.
    pub(super) fn check_composite_validators(&mut self, d: VId) -> Option<Rc<Bottom>> {
        let vx = self.v(d);
        if vx.scalar.is_some()
            || vx.err.is_some()
            || vx.disj.is_some()
            || vx.kind.is_empty()
            || !Kind::STRUCT.or(Kind::LIST).contains(vx.kind)
        {
            return None;
        }
        let cons = vx.constraints_copy();
        let spans = vx.cons_spans_copy();
        let mut passed = Vec::new();
        for (i, c) in cons.iter().enumerate() {
            if let Value::Bound(op @ (UnaryOp::Eq | UnaryOp::Ne), b) = c
                && let Value::Vertex(w) = **b
            {
                match self.check_composite_bound(d, *op, w, c, spans.get(i).copied()) {
                    Ok(true) => passed.push(i),
                    Ok(false) => {}
                    Err(b) => return Some(b),
                }
                continue;
            }
            let Value::Validator(call) = c else { continue };
            let sp = spans.get(i).copied().unwrap_or_default();
            if self.validating.contains(&sp) || self.validating.len() > 64 {
                continue;
            }
            self.validating.push(sp);
            let r = self.run_validator(call, &Value::Vertex(d));
            self.validating.pop();
            let b = match r {
                Ok(()) => {
                    passed.push(i);
                    continue;
                }
                Err(b) => b,
            };
            // An incomplete `matchN` (schemas lacking only required fields) marks the value
            // incomplete, keeping its fields and the validator, as CUE does.
            let keep = b.is_incomplete();
            if keep && (b.subs.is_empty() || self.v(d).err.is_some()) {
                continue;
            }
            let call_at = spans.get(i).copied().filter(|sp| *sp != Span::default());
            let mut bb = (*b).clone();
            if bb.spans.is_empty() {
                // At the call, its scalar arguments and where the struct or list was written.
                bb.spans.extend(call_at);
                bb.spans.extend(call.arg_spans.iter().copied());
                bb.spans.extend(self.written_at(d));
                bb.spans.retain(|sp| *sp != Span::default());
            } else if let Some(sp) = call_at
                && !bb.spans.contains(&sp)
            {
                bb.spans.push(sp);
            }
            for sub in &mut bb.subs {
                if let Some(sp) = call_at
                    && !sub.spans.contains(&sp)
                {
                    Rc::make_mut(sub).spans.insert(0, sp);
                }
            }
            let b = Rc::new(bb);
            self.vm(d).err = Some(b.clone());
            if !keep {
                return Some(b);
            }
        }
        // A satisfied validator has done its work: the value is the struct or list alone.
        for &i in passed.iter().rev() {
            let vx = self.vm(d);
            vx.xm().constraints.remove(i);
            if i < vx.cons_spans().len() {
                vx.xm().cons_spans.remove(i);
            }
        }
        None
    }

    /// The incomplete result of a struct or list validator still pending on the finalized `d`
    /// (`{c: 1} & struct.MinFields(2)`): CUE records it as the value's incomplete error.
    pub(super) fn pending_validator_error(&mut self, d: VId) -> Option<Rc<Bottom>> {
        let vx = self.v(d);
        if vx.scalar.is_some() || vx.err.is_some() || vx.disj.is_some() {
            return None;
        }
        let cons = vx.constraints_copy();
        for c in &cons {
            let Value::Validator(call) = c else { continue };
            if self.validating.len() > 64 {
                return None;
            }
            self.validating.push(Span::default());
            let r = self.run_validator(call, &Value::Vertex(d));
            self.validating.pop();
            if let Err(b) = r
                && b.is_incomplete()
            {
                return Some(b);
            }
        }
        None
    }

    /// Checks `==x` / `!=x` with a struct or list `x` against the final struct or list `d`
    /// (structcmp): `Ok(false)` while `d` is not concrete throughout (the bound stays).
    fn check_composite_bound(
        &mut self,
        d: VId,
        op: UnaryOp,
        w: VId,
        c: &Value,
        at: Option<Span>,
    ) -> Result<bool, Rc<Bottom>> {
        if self.first_non_concrete(d).is_some() {
            return Ok(false);
        }
        let eq = self.values_equal(&Value::Vertex(d), &Value::Vertex(w));
        if eq == (op == UnaryOp::Eq) {
            return Ok(true);
        }
        let msg = format!(
            "invalid value {} (out of bound {})",
            self.vertex_text(d),
            self.value_text(c)
        );
        let val_at = self.written_at(d);
        let b = Bottom::with_spans(ErrCode::Eval, msg, at.into_iter().chain(val_at));
        self.vm(d).err = Some(b.clone());
        Err(b)
    }
}
