//! Struct literals: adding one to a vertex opens a group for closedness, inserts its fields as
//! child arcs with their conjuncts (not yet evaluated), registers its patterns, `...`, lets,
//! dynamic fields and comprehensions, and queues its embeddings to run after its fields.

use std::rc::Rc;

use crate::ast::Span;

use super::ir::{self, ArcType, StructId};
use super::label::Label;
use super::unify::NodeState;
use super::value::{Kind, Value};
use super::*;

impl Runtime {
    pub(super) fn add_struct(
        &mut self,
        v: VId,
        st: &mut NodeState,
        env: Option<EnvRef>,
        sid: StructId,
        ci: &CloseInfo,
        span: Span,
    ) {
        let lit = self.prog.structs[sid as usize].clone();
        if !lit.has_embed || lit.has_regular {
            // A literal that only embeds (`{y}`) is what it embeds: no structure of its own.
            self.non_cycle(v, st, ci);
        }
        let group = self.new_group(ci.group, false, true, false, v);
        if ci.embedded {
            // An embedded literal (`W: {{#T}, b: 1}`): see `embedding_literal`.
            self.groups[group as usize].embedded = true;
        }
        self.register_requirements(v, group);
        // The comprehension firing whose body this literal is part of, if any.
        let comp_id = std::iter::successors(env.as_ref(), |e| e.up.as_ref())
            .map(|e| e.comp_id)
            .find(|&c| c != 0)
            .unwrap_or(0);
        let frame = Rc::new(Env {
            up: env,
            vertex: v,
            dyn_label: None,
            comp_id: 0,
        });
        push_tight(
            &mut self.vm(v).structs,
            StructInfo {
                id: sid,
                pos: if ci.ref_span != Span::default() && ci.ref_span != CLEARED_REF {
                    ci.ref_span
                } else {
                    lit.span
                },
                hops: ci.hops,
                frame: frame.clone(),
                comp_id,
            },
        );
        let _ = span;
        if lit.only_comprehensions() {
            // Comprehensions embed what they yield: `{if c {1}}` is 1.
            st.weak_struct.get_or_insert(span);
        } else if !lit.has_embed || lit.has_member {
            self.add_kind(v, Kind::STRUCT, span, |_| "struct".into());
        }
        let child_ci = CloseInfo {
            group,
            embedded: false,
            optional: ci.optional,
            refs: ci.refs.clone(),
            cyclic: ci.cyclic,
            maybe_cyclic: ci.maybe_cyclic,
            in_def: ci.in_def,
            ref_span: ci.ref_span,
            hops: 0,
        };
        if self.v(v).arcs.is_empty() {
            // The usual case of a fresh vertex: one allocation for the arcs of all its fields.
            let fields = lit
                .decls
                .iter()
                .filter(|d| matches!(d, ir::Decl::Field { .. }))
                .count();
            self.vm(v).arcs.reserve(fields);
        }
        if lit.has_lazy && !self.lazy_roots.contains(&v) {
            self.lazy_roots.push(v);
        }
        // Fields first, embeddings after: an embedding may refer to any field of the literal.
        let mut embeds = Vec::new();
        for d in &lit.decls {
            match d {
                ir::Decl::Embed(e, span) => embeds.push((*e, *span)),
                ir::Decl::Field {
                    label,
                    arc,
                    value,
                    span: fspan,
                    ..
                } => {
                    self.check_frozen(v, *label, span);
                    let a = self.get_arc(v, *label, *arc);
                    let mut cci = child_ci.clone();
                    if *arc != ArcType::Member {
                        cci.optional = true;
                    }
                    if label.is_def() {
                        cci.in_def = true;
                    }
                    self.push_conj(
                        a,
                        Conjunct {
                            env: Some(frame.clone()),
                            x: CExpr::Expr(*value),
                            ci: cci,
                            span: *fspan,
                        },
                    );
                }
                ir::Decl::Dynamic { .. } => {
                    st.dynamic
                        .push_back((frame.clone(), d.clone(), child_ci.clone()));
                }
                ir::Decl::Pattern {
                    filter,
                    value,
                    span,
                } => {
                    let fv = self.eval_value(Some(&frame), *filter, Some(v));
                    let fv = self.pattern_filter(fv);
                    let mut cci = child_ci.clone();
                    cci.optional = true;
                    let conj = Conjunct {
                        env: Some(frame.clone()),
                        x: CExpr::Expr(*value),
                        ci: cci,
                        span: *span,
                    };
                    self.add_pattern(v, fv, conj);
                }
                ir::Decl::Let { label, value } => {
                    let a = self.get_arc(v, *label, ArcType::Member);
                    let first = self.v(a).conjuncts.iter().find_map(|c| match c.x {
                        CExpr::Expr(x) if x == *value => Some(c.env.as_ref().map(|e| e.up.clone())),
                        _ => None,
                    });
                    let sp_ = self.prog.span(*value);
                    let conj = Conjunct {
                        env: Some(frame.clone()),
                        x: CExpr::Expr(*value),
                        ci: child_ci.clone(),
                        span: sp_,
                    };
                    match first {
                        None => self.push_conj(a, conj),
                        // The same literal again in the same surroundings: the same let.
                        Some(up)
                            if same_env(
                                up.as_ref().and_then(|u| u.as_ref()),
                                frame.up.as_ref(),
                            ) => {}
                        // The same literal in other surroundings (another iteration of a
                        // `for`): the let may refer to them, so it gets a vertex of its own.
                        Some(_) => self.split_let(v, *label, frame.up.clone(), conj),
                    }
                }
                ir::Decl::Ellipsis(ty) => {
                    self.vm(v).xm().open_groups.push(group);
                    if let Some(t) = ty {
                        let mut cci = child_ci.clone();
                        cci.optional = true;
                        let conj = Conjunct {
                            env: Some(frame.clone()),
                            x: CExpr::Expr(*t),
                            ci: cci,
                            span: self.prog.span(*t),
                        };
                        self.add_pattern(v, Value::Top, conj);
                    }
                }
                ir::Decl::Comprehension(comp) => {
                    self.reserve_yielded(v, comp.body, 0);
                    let mut eci = child_ci.clone();
                    eci.embedded = true;
                    st.comps.push_back((frame.clone(), comp.clone(), eci));
                }
            }
        }
        for (e, span) in embeds {
            let mut eci = child_ci.clone();
            // With `explicitopen`, an embedded definition stays closed.
            eci.embedded = !lit.explicit_open;
            // An embedding belongs to the literal: for field order it stands where the
            // literal does.
            eci.ref_span = ci.ref_span;
            eci.hops = ci.hops.saturating_add(1);
            st.embeds.push_back(Conjunct {
                env: Some(frame.clone()),
                x: CExpr::Expr(e),
                ci: eci,
                span,
            });
        }
    }

    /// The let `label` of struct vertex `v` for a literal added in surroundings `up` that differ
    /// from those of its first addition: a vertex of its own, found again by [`Self::let_vertex`].
    fn split_let(&mut self, v: VId, label: Label, up: Option<EnvRef>, conj: Conjunct) {
        let known = self.split_lets.get(&(v, label)).and_then(|l| {
            l.iter()
                .find(|(u, _)| same_env(u.as_ref(), up.as_ref()))
                .map(|&(_, a)| a)
        });
        if known.is_some() {
            return;
        }
        let a = self.new_vertex(Some(v), label, ArcType::Member);
        self.push_conj(a, conj);
        self.split_lets.entry((v, label)).or_default().push((up, a));
    }

    /// The vertex of let `label` of struct vertex `frame.vertex` as seen from `frame`: the one
    /// made for its surroundings by [`Self::split_let`], or the let arc.
    pub(super) fn let_vertex(&self, frame: &Env, label: Label) -> Option<VId> {
        if let Some(l) = self.split_lets.get(&(frame.vertex, label))
            && let Some(&(_, a)) = l
                .iter()
                .find(|(u, _)| same_env(u.as_ref(), frame.up.as_ref()))
        {
            return Some(a);
        }
        self.arc(frame.vertex, label)
    }
}

/// Whether two scope chains see the same vertices (the same frame, or a copy of it made for a
/// pattern constraint's label).
fn same_env(a: Option<&EnvRef>, b: Option<&EnvRef>) -> bool {
    let (mut a, mut b) = (a, b);
    loop {
        match (a, b) {
            (None, None) => return true,
            (Some(x), Some(y)) => {
                if Rc::ptr_eq(x, y) {
                    return true;
                }
                if x.vertex != y.vertex || x.dyn_label != y.dyn_label {
                    return false;
                }
                a = x.up.as_ref();
                b = y.up.as_ref();
            }
            _ => return false,
        }
    }
}

impl Runtime {
    /// Reserves places among `v`'s arcs for the fields a comprehension's body declares, as CUE
    /// creates them when it schedules the comprehension: fields of the body, of struct literals
    /// it embeds and of the bodies of comprehensions nested in it.
    pub(super) fn reserve_yielded(&mut self, v: VId, body: StructId, depth: u32) {
        if depth > 16 {
            return;
        }
        let lit = self.prog.structs[body as usize].clone();
        for d in &lit.decls {
            match d {
                ir::Decl::Field { label, value, .. } => {
                    self.reserve_arc(v, *label);
                    // CUE also reaches into a field that exists already and has not been
                    // evaluated: `if c {objects: x: 1}` places `x` among `objects`' arcs.
                    // A field only reserved so far gets those places when it is created.
                    if let ir::Expr::Struct(sid) = self.prog.expr(*value) {
                        let sid = *sid;
                        match self.arc(v, *label) {
                            Some(a) if self.v(a).status == Status::Unprocessed => {
                                self.reserve_yielded(a, sid, depth + 1);
                            }
                            Some(_) => {}
                            None => {
                                if let Some(s) =
                                    self.vm(v).extra.as_mut().and_then(|x| x.slots.as_mut())
                                {
                                    s.nested.push((*label, sid, depth + 1));
                                }
                            }
                        }
                    }
                }
                ir::Decl::Embed(e, _) => {
                    if let ir::Expr::Struct(sid) = self.prog.expr(*e) {
                        let sid = *sid;
                        self.reserve_yielded(v, sid, depth + 1);
                    }
                }
                ir::Decl::Comprehension(c) => self.reserve_yielded(v, c.body, depth + 1),
                _ => {}
            }
        }
    }
}
