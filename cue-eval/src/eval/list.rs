//! List literals: elements become arcs labelled by index (list comprehensions yield one element
//! per iteration), `...T` a pattern for the indices from the literal's length on, and a list
//! without `...` fixes the length, which conflicts with another fixed length.

use crate::ast::Span;

use super::ir::{self, ArcType};
use super::label::Label;
use super::unify::NodeState;
use super::value::ErrCode;
use super::*;

impl Runtime {
    pub(super) fn add_list(
        &mut self,
        v: VId,
        st: &mut NodeState,
        c: &Conjunct,
        l: &ir::ListLit,
        lit: Span,
    ) {
        self.non_cycle(v, st, &c.ci);
        let span = c.span;
        self.add_kind(v, Kind::LIST, span, |rt| rt.list_lit_text(lit));
        self.vm(v).is_list = true;
        if self.v(v).list_span() == Span::default() {
            self.vm(v).xm().list_span = lit;
        }
        let group = self.new_group(c.ci.group, false, true, false, v);
        let ci = CloseInfo {
            group,
            embedded: false,
            optional: c.ci.optional,
            refs: c.ci.refs.clone(),
            cyclic: c.ci.cyclic,
            maybe_cyclic: c.ci.maybe_cyclic,
            in_def: c.ci.in_def,
            ref_span: c.ci.ref_span,
            hops: 0,
        };
        let mut idx = 0u32;
        for el in &l.elems {
            match el {
                ir::ListElem::Expr(e) => {
                    let a = self.get_arc(v, Label::int(idx), ArcType::Member);
                    let sp_ = self.prog.span(*e);
                    self.push_conj(
                        a,
                        Conjunct {
                            env: c.env.clone(),
                            x: CExpr::Expr(*e),
                            ci: ci.clone(),
                            span: sp_,
                        },
                    );
                    idx += 1;
                }
                ir::ListElem::Comprehension(comp) => {
                    let envs = match c.env.clone() {
                        Some(env) => self.comprehension_envs(v, env.clone(), comp).map(|envs| {
                            match comp.fallback {
                                Some(fb) if envs.is_empty() => vec![(env, fb)],
                                _ => envs.into_iter().map(|e| (e, comp.body)).collect(),
                            }
                        }),
                        None => Ok(Vec::new()),
                    };
                    match envs {
                        Ok(envs) => {
                            for (env, body) in envs {
                                let a = self.get_arc(v, Label::int(idx), ArcType::Member);
                                self.push_conj(
                                    a,
                                    Conjunct {
                                        env: Some(env),
                                        x: CExpr::Struct(body),
                                        ci: ci.clone(),
                                        span: comp.span,
                                    },
                                );
                                idx += 1;
                            }
                        }
                        Err(b) => self.set_err(v, b),
                    }
                }
            }
        }
        match l.ellipsis {
            None => self.set_list_len(v, idx, span),
            Some(t) => {
                if self.v(v).list_len().is_none() {
                    self.vm(v).xm().list_open = true;
                }
                let max = self
                    .v(v)
                    .arcs
                    .iter()
                    .filter(|&&a| self.v(a).label.is_int())
                    .count() as u32;
                let _ = max;
                if let Some(t) = t {
                    let mut cci = ci.clone();
                    cci.optional = true;
                    let conj = Conjunct {
                        env: c.env.clone(),
                        x: CExpr::Expr(t),
                        ci: cci,
                        span: self.prog.span(t),
                    };
                    self.add_list_pattern(v, idx, conj);
                }
            }
        }
        let _ = st;
    }

    pub(super) fn add_list_pattern(&mut self, v: VId, min: u32, conj: Conjunct) {
        let arcs = self.v(v).arcs.clone();
        for a in arcs {
            let l = self.v(a).label;
            if l.is_int() && l.index() >= min {
                self.push_conj(a, conj.clone());
            }
        }
        self.vm(v).xm().list_patterns.push((min, conj));
    }

    pub(super) fn set_list_len(&mut self, v: VId, len: u32, span: Span) {
        match self.v(v).list_len() {
            Some(old) if old != len => {
                // CUE names the shorter length first, whichever came first.
                let msg = format!(
                    "incompatible list lengths ({} and {})",
                    len.min(old),
                    len.max(old)
                );
                self.err_at(v, ErrCode::Eval, msg, span);
            }
            _ => {
                // A list of fixed length is closed, whatever open lists it was unified with.
                let x = self.vm(v).xm();
                x.list_len = Some(len);
                x.list_open = false;
            }
        }
    }

    /// How a list literal reads in a conflict message: its compact source text when it is a
    /// short one-line literal (as CUE prints the expression), otherwise `[...]`.
    pub(super) fn list_lit_text(&self, span: Span) -> String {
        let Some(src) = self.sources.get(span.file.0 as usize) else {
            return "[...]".into();
        };
        let Some(text) = src.get(span.range()) else {
            return "[...]".into();
        };
        if !text.starts_with('[')
            || !text.ends_with(']')
            || text.len() > 40
            || text.contains(['\n', '"', '\'', '`', '/'])
        {
            return "[...]".into();
        }
        text.replace(": ", ":").replace(", ", ",")
    }
}
