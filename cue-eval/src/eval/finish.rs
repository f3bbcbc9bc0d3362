//! Finishing a vertex once all its conjuncts are in: its scalar is checked against its bounds
//! and validators, a scalar with regular fields fails, and so does a list longer than its fixed
//! length; [`Runtime::finalize`] evaluates a vertex and everything below it, running the
//! validators of structs and lists once their fields are final.

use std::rc::Rc;

use crate::ast::Span;

use super::ir::ArcType;
use super::value::{Bottom, ErrCode, Value};
use super::*;

impl Runtime {
    /// Checks the scalar against bounds and validators once all conjuncts are in.
    pub(super) fn finish_value(&mut self, v: VId) {
        if self.v(v).err.as_ref().is_some_and(|e| !e.is_incomplete()) {
            return;
        }
        let scalar = self.v(v).scalar.clone();
        let cons = self.v(v).constraints_copy();
        if let Some(s) = scalar {
            for (i, c) in cons.iter().enumerate() {
                if let Err(mut b) = self.check_constraint(c, &s) {
                    // A bound's conflict is placed at the bound and at the value, as CUE does.
                    // A validator's: at the call, its scalar arguments and the value.
                    if let Value::Validator(call) = c
                        && b.spans.is_empty()
                    {
                        let mut spans: Vec<Span> =
                            self.v(v).cons_spans().get(i).copied().into_iter().collect();
                        spans.extend(call.arg_spans.iter().copied());
                        spans.push(self.v(v).val_span);
                        spans.retain(|sp| *sp != Span::default());
                        Rc::make_mut(&mut b).spans = spans;
                    }
                    if matches!(c, Value::Bound(..)) && b.spans.is_empty() {
                        let spans: Vec<Span> = [
                            self.v(v).cons_spans().get(i).copied(),
                            Some(self.v(v).val_span),
                        ]
                        .into_iter()
                        .flatten()
                        .filter(|sp| *sp != Span::default())
                        .collect();
                        Rc::make_mut(&mut b).spans = spans;
                    }
                    self.set_err(v, b);
                    return;
                }
            }
            let has_fields =
                self.v(v).arcs.iter().any(|&a| {
                    self.v(a).label.is_regular() && self.v(a).arc_type == ArcType::Member
                });
            if has_fields {
                let a = self
                    .v(v)
                    .arcs
                    .iter()
                    .copied()
                    .find(|&a| self.v(a).label.is_regular())
                    .unwrap();
                let msg = format!(
                    "cannot combine regular field {:?} with {}",
                    self.prog.labels.text(self.v(a).label),
                    self.value_text(&s)
                );
                self.err_at(v, ErrCode::Eval, msg, Span::default());
            }
        } else if !cons.is_empty() {
            self.simplify_bounds(v);
        }
        // List lengths.
        let vx = self.v(v);
        if vx.is_list {
            let n = vx
                .arcs
                .iter()
                .filter(|&&a| self.v(a).label.is_int())
                .count() as u32;
            if let Some(len) = vx.list_len()
                && n > len
            {
                let msg = format!("incompatible list lengths ({} and {})", len, n);
                self.err_at(v, ErrCode::Eval, msg, Span::default());
            }
        }
    }

    /// Evaluates `v` and all its descendants but optional fields (and, with `all`, those too).
    /// Returns the first permanent error found below.
    pub fn finalize(&mut self, v: VId, all: bool) -> Option<Rc<Bottom>> {
        self.evaluate(v);
        let d = self.deref(v);
        if d != v {
            self.evaluate(d);
        }
        let vx = self.v(d);
        if let Some(e) = &vx.err
            && !e.is_incomplete()
        {
            return Some(e.clone());
        }
        if vx.status == Status::Finalizing || vx.status == Status::Finalized {
            return None;
        }
        self.vm(d).status = Status::Finalizing;
        // A vertex CUE would share with the one it refers to is finished with it, and that
        // vertex's permanent error is its own, at the path where it arose.
        // Not for a vertex inside an inline expression: its closedness errors are not the
        // sharer's (CUE's `OpenInline`).
        if let Some(&w) = self.shares.get(&d)
            && w != d
            && self.v(d).conjuncts.len() == 1
            && !self.inside_inline(w)
        {
            crate::stack::guard(|| self.finalize(w, all));
            let wd = self.deref(w);
            if let Some(e) = self.v(wd).err.clone()
                && !e.is_incomplete()
                && self
                    .v(d)
                    .err
                    .as_ref()
                    .is_none_or(|x| x.child || x.is_incomplete())
            {
                let at = e.at.or(Some(wd)).filter(|&a| !self.v(a).anonymous);
                self.vm(d).err = Some(Rc::new(Bottom {
                    child: false,
                    at,
                    ..(*e).clone()
                }));
                self.vm(d).status = Status::Finalized;
                return self.v(d).err.clone();
            }
        }
        let mut first = None;
        if let Some(dj) = self.v(d).disj.clone() {
            for &alt in &dj.alts {
                self.finalize(alt, all);
            }
        }
        let arcs = self.arcs_snapshot(d);
        for a in arcs {
            let ax = self.v(a);
            let l = ax.label;
            if l.is_let() {
                continue;
            }
            // As CUE's `completeAllArcs`: every field but optional ones (hidden fields and
            // definitions too) is finished, and its permanent error is the struct's.
            let counts = ax.arc_type != ArcType::Optional;
            if !counts && !all {
                continue;
            }
            // A leaf of concrete data is finished as soon as it has its literal's value:
            // what `finalize` would do for it, without the round trip.
            if ax.status == Status::Unprocessed
                && self.aborted.is_none()
                && self.cycle_checks.is_empty()
                && self.lone_scalar(a)
            {
                self.vm(a).status = Status::Finalized;
                continue;
            }
            let e = crate::stack::guard(|| self.finalize(a, all));
            if counts && first.is_none() {
                first = e.map(|e| (a, e));
            }
        }
        if let Some(e) = self.check_composite_validators(d) {
            self.vm(d).status = Status::Finalized;
            return Some(e);
        }
        let first = first.map(|(a, e)| {
            // As CUE's `AddChildError`: a permanent error of a field makes the struct an error
            // too (`child`), which `Value.Err`, `@test(err)` and a later selection from the
            // struct see; export and printing look through it to the fields' own errors.
            if self.v(d).err.is_none() {
                // The path is the erroneous field's, however deep.
                let below = self.v(self.deref(a)).err.as_ref().filter(|x| x.child);
                let at = below.and_then(|x| x.at).or(e.at).or(Some(a));
                self.vm(d).err = Some(Rc::new(Bottom {
                    child: true,
                    at,
                    ..(*e).clone()
                }));
            }
            e
        });
        self.vm(d).status = Status::Finalized;
        first
    }
}
