//! Pattern constraints (`[string]: T`, `[=~"^a"]: T`, `...T`): the value of a pattern applies to
//! every regular field whose label the filter accepts, those already there and those added
//! later, with the label bound for references to it (`[Name=_]: {name: Name}`).

use std::rc::Rc;

use crate::ast::UnaryOp;

use super::label::Label;
use super::value::{ErrCode, Value};
use super::*;

impl Runtime {
    pub(super) fn add_pattern(&mut self, v: VId, filter: Value, conj: Conjunct) {
        let arcs = self.v(v).arcs.clone();
        if arcs.iter().any(|&a| self.v(a).label.is_regular())
            && self.invalid_pattern(v, &filter, &conj)
        {
            self.vm(v).xm().patterns.push((filter, conj));
            return;
        }
        for a in arcs {
            let l = self.v(a).label;
            if l.is_regular() && self.label_matches(&filter, l) {
                self.push_pattern_conjunct(a, l, &conj);
            }
        }
        self.vm(v).xm().patterns.push((filter, conj));
    }

    /// Whether pattern `filter` of struct `v` cannot be matched because one of its regular
    /// expressions is invalid; the struct then fails (once a field is matched against it).
    pub(super) fn invalid_pattern(&mut self, v: VId, filter: &Value, conj: &Conjunct) -> bool {
        fn bad_regex(f: &Value) -> Option<String> {
            match f {
                Value::Bottom(b) if b.msg.starts_with("invalid regexp") => Some(b.msg.clone()),
                Value::Bound(UnaryOp::Match | UnaryOp::NotMatch, b) => match &**b {
                    Value::Str(re) => super::builtins::regex(re).err(),
                    _ => None,
                },
                Value::Conj(vs) | Value::Or(vs) => vs.iter().find_map(bad_regex),
                _ => None,
            }
        }
        let Some(msg) = bad_regex(filter) else {
            return false;
        };
        if self.v(v).err.is_none() {
            let span = match conj.x {
                CExpr::Expr(x) => self.prog.span(x),
                _ => conj.span,
            };
            self.err_at(v, ErrCode::Eval, msg, span);
        }
        true
    }

    /// Reduces a pattern filter to a value that can be matched against labels.
    pub(super) fn pattern_filter(&mut self, fv: Value) -> Value {
        match fv {
            Value::Vertex(w) => {
                self.evaluate(w);
                let w = self.deref(w);
                if let Some(d) = self.v(w).disj.clone() {
                    let alts: Vec<Value> = d.alts.iter().map(|&a| self.value_of(a)).collect();
                    return Value::Or(Rc::from(alts));
                }
                self.value_of(w)
            }
            other => other,
        }
    }

    /// Whether a label is accepted by a pattern filter.
    pub fn label_matches(&mut self, filter: &Value, l: Label) -> bool {
        let s: Value = if l.is_int() {
            Value::int(l.index() as i64)
        } else {
            Value::Str(Rc::from(self.prog.labels.name(l)))
        };
        self.value_accepts(filter, &s)
    }

    /// Whether the concrete value `x` satisfies the constraint `c`.
    pub(super) fn value_accepts(&mut self, c: &Value, x: &Value) -> bool {
        match c {
            Value::Top => true,
            Value::Bottom(_) => false,
            Value::Or(alts) => alts.iter().any(|a| self.value_accepts(a, x)),
            Value::Basic(k) => k.intersects(x.kind()),
            Value::Bound(op, b) => self.check_bound(*op, b, x).unwrap_or(false),
            Value::Conj(vs) => vs.iter().all(|v| self.value_accepts(v, x)),
            Value::Validator(call) => {
                let call = call.clone();
                self.run_validator(&call, x).is_ok()
            }
            // A disjunction (`matchN(2 | 3, ...)`) accepts what one of its values accepts.
            Value::Vertex(w) => {
                let w = self.deref(*w);
                match self.v(w).disj.clone() {
                    Some(d) => d.alts.iter().any(|&a| {
                        let av = self.value_of(a);
                        matches!(av, Value::Vertex(_)) || self.value_accepts(&av, x)
                    }),
                    None => true,
                }
            }
            other => super::expr::scalar_eq(other, x),
        }
    }

    pub(super) fn push_pattern_conjunct(&mut self, a: VId, label: Label, conj: &Conjunct) {
        let env = conj.env.as_ref().map(|e| {
            Rc::new(Env {
                up: e.up.clone(),
                vertex: e.vertex,
                dyn_label: Some(label),
                comp_id: e.comp_id,
            })
        });
        self.push_conj(
            a,
            Conjunct {
                env,
                x: conj.x.clone(),
                ci: conj.ci.clone(),
                span: conj.span,
            },
        );
    }
}
