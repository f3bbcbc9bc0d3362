//! Evaluation of one vertex: conjuncts are added one by one to the vertex's state (its kind,
//! scalar, bounds and child arcs), references bring in the conjuncts of their target, then
//! dynamic fields and comprehensions run, disjunctions are expanded, and closedness is checked.
//! This file merges the conjuncts; struct literals, lists, patterns, bounds, comprehensions,
//! cycles, closedness and the final checks have files of their own.

use std::rc::Rc;

use crate::ast::Span;

use super::ir::{self, ArcType, Builtin, Expr, ExprId};
use super::label::Label;
use super::value::{Bottom, ErrCode, Kind, Value, combine};
use super::*;

/// Whether structure sharing is on. Off: the first cut regressed 3 corpus cases (references
/// into a shared vertex must rebind to the sharing one); kept for the next round.
const SHARING: bool = false;

/// Work collected while one vertex is evaluated.
#[derive(Default)]
pub(crate) struct NodeState {
    /// While set, references wait in `later_refs`: CUE adds a node's struct literals at once
    /// and resolves references as later tasks, in the order they were scheduled, also among
    /// the conjuncts a resolved reference brings in. This decides the order of arcs (and so of
    /// iteration) and of the literals that order the fields.
    defer_refs: bool,
    later_refs: Vec<Conjunct>,
    /// Set while `later_refs` is being worked off.
    draining: bool,
    /// Referenced vertices already inserted (a vertex is never inserted twice into one node),
    /// with the group created for a definition's conjuncts.
    seen: smallvec::SmallVec<[(VId, Option<u32>); 2]>,
    /// The groups of the references through which a non-definition vertex was inserted: a
    /// later reference from inside a closed group the earlier ones were not in inserts it
    /// again, so that its fields are evidence for that group too.
    pub(super) seen_groups: smallvec::SmallVec<[(VId, u32); 2]>,
    /// Conjuncts holding disjunctions, expanded last.
    pub(super) disjs: Vec<Conjunct>,
    /// The alternatives a disjunct clone chose, added after the node's other conjuncts, as
    /// CUE applies a disjunct to a node that already has them (so a conflict names the value
    /// of the other conjuncts first).
    pub(super) chosen: Vec<Conjunct>,
    pub(super) comps: std::collections::VecDeque<(EnvRef, Rc<ir::Comprehension>, CloseInfo)>,
    /// Embedded expressions, run once the node's own conjuncts have inserted their fields.
    pub(super) embeds: std::collections::VecDeque<Conjunct>,
    pub(super) dynamic: std::collections::VecDeque<(EnvRef, ir::Decl, CloseInfo)>,
    /// Conjuncts whose value hit a reference cycle, retried once the node has a value.
    pub(super) postponed: Vec<(Conjunct, Rc<Bottom>)>,
    pub(super) retrying: bool,
    /// Structural cycle evidence, as CUE keeps it per node: a conjunct not marked cyclic was
    /// added (`has_non_cyclic`), one of them brought structure or a value (`has_non_cycle`),
    /// a reference reached an ancestor (`ancestor_cycle`) or repeated one already followed
    /// (`any_cycle`).
    pub(super) has_non_cyclic: bool,
    pub(super) has_non_cycle: bool,
    pub(super) ancestor_cycle: bool,
    pub(super) any_cycle: bool,
    /// Cyclic references held back until a non-cyclic conjunct brings structure.
    pub(super) cyclic_refs: Vec<(VId, Conjunct, Span)>,
    /// A struct literal made only of comprehensions was added (`{if c {1}}`): the node is a
    /// struct unless a concrete value (what they yield, or another conjunct) makes it a scalar
    /// or a list, decided once they have run; a scalar type alone gives way.
    pub(super) weak_struct: Option<Span>,
    /// Optional references met before the node's own conjuncts were all added, whose cycle
    /// check depends on whether the node has a non-cyclic conjunct.
    pub(super) optional_refs: Vec<(VId, Conjunct, Span)>,
    /// The node's own conjuncts have all been added.
    pub(super) conjuncts_done: bool,
}

/// What a referenced vertex's conjunct carries over to the node that refers to it (the rest of
/// its close information is the reference's).
struct Carried {
    group: u32,
    optional: bool,
    in_def: bool,
    ref_span: Span,
    hops: u16,
}

/// The result of resolving a reference.
pub(super) enum Resolved {
    Vertex(VId),
    Value(Value),
}

impl Runtime {
    /// Evaluates a vertex: its value and the conjuncts of its children, not the children
    /// themselves.
    pub fn evaluate(&mut self, v: VId) {
        if self.v(v).status != Status::Unprocessed {
            let vx = self.v(v);
            let retry = vx.status == Status::Evaluated
                && vx.cycle_epoch() < self.cycle_epoch
                && vx.arcs.is_empty()
                && !vx.is_disjunct
                && vx.err.as_ref().is_some_and(|e| e.code == ErrCode::Cycle);
            if !retry {
                return;
            }
            self.reset(v);
        }
        if self.depth > MAX_DEPTH || self.aborted.is_some() {
            let b = Bottom::eval("evaluation too deep (nesting or reference chain over the limit)");
            if self.aborted.is_none() {
                self.aborted = Some(b.msg.clone());
            }
            self.vm(v).err = Some(b);
            self.vm(v).status = Status::Evaluated;
            return;
        }
        self.depth += 1;
        let refs = self.cur_refs.take();
        crate::stack::guard(|| self.evaluate_inner(v));
        self.cur_refs = refs;
        self.depth -= 1;
        if self.depth == 0 && !self.cycle_checks.is_empty() {
            self.run_cycle_checks();
        }
    }

    fn evaluate_inner(&mut self, v: VId) {
        if self.lone_scalar(v) {
            return;
        }
        self.vm(v).status = Status::Evaluating;
        let mut st = NodeState {
            defer_refs: true,
            ..NodeState::default()
        };
        // The conjuncts the vertex has now, one at a time (evaluating them only appends to
        // the conjuncts of other vertices, or of this one after those taken here).
        let n = self.v(v).conjuncts.len();
        for i in 0..n {
            let Some(c) = self.v(v).conjuncts.get(i).cloned() else {
                break;
            };
            self.add_conjunct(v, &mut st, c);
        }
        st.defer_refs = false;
        self.drain_later_refs(v, &mut st);
        while !st.chosen.is_empty() {
            for c in std::mem::take(&mut st.chosen) {
                self.add_conjunct(v, &mut st, c);
            }
        }
        st.conjuncts_done = true;
        for (w, c, span) in std::mem::take(&mut st.optional_refs) {
            self.add_ref(v, &mut st, w, &c, span);
        }
        self.in_tasks.push(v);
        self.run_tasks(v, &mut st);
        if !st.postponed.is_empty() {
            self.retry_postponed(v, &mut st);
        }
        self.in_tasks.pop();
        self.run_post_checks(v);
        // On a clone whose disjunctions are not all chosen yet, a value may still come (`"a"`
        // of a later one): the literal is left undecided there, as `cue` leaves it until the
        // last disjunction, and only its kind is marked as not telling anything.
        let undecided = self.v(v).defer_disj().is_some_and(|d| !d.is_empty());
        if undecided && st.weak_struct.is_some() {
            st.weak_struct = None;
            self.weak_kinds.insert(v);
        }
        if let Some(span) = st.weak_struct.take() {
            let vx = self.v(v);
            if vx.scalar.is_none() && !vx.is_list {
                let (kind, clean) = (vx.kind, vx.err.is_none() && vx.constraints().is_empty());
                if kind != Kind::STRUCT {
                    self.weak_kinds.insert(v);
                }
                if !kind.is_empty() && kind.and(Kind::STRUCT).is_empty() && clean {
                    // Only a concrete value makes such a node a scalar: a scalar type gives way
                    // (`{if false {a: 1}} & string` is `{}`, as `cue` v0.17.1 gives it). A bound
                    // or a validator does not: `cue` applies it to `{}`, which fails.
                    let vx = self.vm(v);
                    vx.kind = Kind::STRUCT;
                    vx.val_span = span;
                } else {
                    self.add_kind(v, Kind::STRUCT, span, |_| "struct".into());
                }
            }
        }
        if Self::only_cyclic(&st) {
            // CUE reports a structural cycle without positions, and drops the node's fields.
            let b = Bottom::new(ErrCode::StructuralCycle, "structural cycle");
            self.set_err(v, b);
            self.vm(v).arcs.clear();
        }
        if !st.disjs.is_empty() {
            self.expand_disjunctions(v, st);
        } else {
            self.finish_value(v);
            self.check_closed(v);
        }
        self.vm(v).status = Status::Evaluated;
    }

    /// Evaluates a fresh vertex whose only conjunct is a scalar literal (a leaf of concrete
    /// data) without the general machinery, giving it the value, kind and position the
    /// general path gives it: a literal brings no reference, field, constraint or task, so
    /// nothing else could happen. Returns false, changing nothing, for any other vertex.
    pub(super) fn lone_scalar(&mut self, v: VId) -> bool {
        let vx = self.v(v);
        if vx.conjuncts.len() != 1
            || vx.kind != Kind::TOP
            || vx.scalar.is_some()
            || vx.err.is_some()
            || vx.has_top
            || vx.is_list
            || vx.disj.is_some()
            || vx.forward.is_some()
            || !vx.arcs.is_empty()
            || !vx.constraints().is_empty()
            || !vx.patterns().is_empty()
            || !vx.list_patterns().is_empty()
        {
            return false;
        }
        let CExpr::Expr(id) = vx.conjuncts[0].x else {
            return false;
        };
        let val = match self.prog.expr(id) {
            Expr::Null => Value::Null,
            Expr::Bool(b) => Value::Bool(*b),
            Expr::Num(n, k) => Value::num(n.clone(), *k),
            Expr::Str(s) => Value::Str(s.clone()),
            Expr::Bytes(b) => Value::Bytes(b.clone()),
            _ => return false,
        };
        if self.post_checks.iter().any(|p| p.node == v) {
            return false;
        }
        let span = self.prog.span(id);
        let vx = self.vm(v);
        vx.kind = val.kind();
        vx.scalar = Some(val);
        vx.val_span = span;
        vx.status = Status::Evaluated;
        true
    }

    /// Runs dynamic fields and comprehensions until none is left.
    pub(super) fn run_tasks(&mut self, v: VId, st: &mut NodeState) {
        loop {
            if let Some(c) = st.embeds.pop_front() {
                let c = self.embed_and_scope(v, c);
                self.add_conjunct(v, st, c);
                continue;
            }
            if let Some((env, decl, ci)) = st.dynamic.pop_front() {
                self.add_dynamic(v, st, env, decl, ci);
                continue;
            }
            if let Some((env, comp, ci)) = st.comps.pop_front() {
                self.run_comprehension(v, st, env, comp, ci);
                continue;
            }
            break;
        }
    }

    /// Adds a conjunct to a child. A child that was already evaluated (because an embedded
    /// expression looked at it early) is reset, so that it is evaluated again with everything.
    pub(super) fn push_conj(&mut self, a: VId, c: Conjunct) {
        if self.v(a).status == Status::Evaluated {
            self.reset(a);
        }
        self.vm(a).conjuncts.push(c);
    }

    pub(super) fn reset(&mut self, a: VId) {
        if !self.shares.is_empty() {
            self.shares.remove(&a);
        }
        let vx = self.vm(a);
        vx.status = Status::Unprocessed;
        vx.arcs.clear();
        vx.kind = Kind::TOP;
        vx.scalar = None;
        vx.has_top = false;
        vx.is_list = false;
        vx.err = None;
        vx.disj = None;
        vx.forward = None;
        vx.structs.clear();
        vx.closed_groups.clear();
        if let Some(x) = &mut vx.extra {
            x.constraints.clear();
            x.cons_spans.clear();
            x.arc_map = None;
            x.slots = None;
            x.list_len = None;
            x.list_open = false;
            x.patterns.clear();
            x.list_patterns.clear();
            x.open_groups.clear();
        }
    }

    pub(super) fn set_err(&mut self, v: VId, b: Rc<Bottom>) {
        let vx = self.vm(v);
        vx.err = Some(match vx.err.take() {
            None => b,
            Some(old) => combine(old, b),
        });
    }

    pub(super) fn err_at(&mut self, v: VId, code: ErrCode, msg: String, span: Span) {
        let b = Bottom::with_span(code, msg, span);
        self.set_err(v, b);
    }

    /// A conflict between a new value (at `span`) and what the node has: both positions.
    fn conflict_at(&mut self, v: VId, msg: String, span: Span) {
        let mut spans = Vec::with_capacity(2);
        let old = self.v(v).val_span;
        for sp in [old, span] {
            if sp != Span::default() && !spans.contains(&sp) {
                spans.push(sp);
            }
        }
        let b = Rc::new(Bottom {
            code: ErrCode::Eval,
            msg,
            spans,
            child: false,
            at: None,
            subs: Vec::new(),
        });
        self.set_err(v, b);
    }

    /// Narrows the kind of `v`, remembering where the narrowing value was written.
    fn narrow(&mut self, v: VId, k: Kind, span: Span) {
        let vx = self.vm(v);
        if vx.kind != k {
            vx.kind = k;
            vx.val_span = span;
        }
    }

    /// Returns the arc `label` of `v`, creating it (and applying matching patterns) if needed.
    pub(super) fn get_arc(&mut self, v: VId, label: Label, arc: ArcType) -> VId {
        if let Some(a) = self.arc(v, label) {
            let av = self.vm(a);
            if arc < av.arc_type {
                av.arc_type = arc;
            }
            return a;
        }
        let a = self.new_vertex(Some(v), label, arc);
        self.push_arc(v, a);
        if label.is_regular() {
            let pats = self.v(v).patterns_copy();
            for (filter, conj) in pats {
                if self.invalid_pattern(v, &filter, &conj) {
                    continue;
                }
                if self.label_matches(&filter, label) {
                    self.push_pattern_conjunct(a, label, &conj);
                }
            }
            if label.is_int() {
                let lps = self.v(v).list_patterns_copy();
                for (min, conj) in lps {
                    if label.index() >= min {
                        self.push_conj(a, conj);
                    }
                }
            }
        }
        a
    }

    /// Adds one conjunct to the vertex being evaluated.
    pub(super) fn add_conjunct(&mut self, v: VId, st: &mut NodeState, c: Conjunct) {
        if self.aborted.is_some() {
            return;
        }
        crate::stack::guard(|| self.add_conjunct_inner(v, st, c))
    }

    fn add_conjunct_inner(&mut self, v: VId, st: &mut NodeState, c: Conjunct) {
        if !c.ci.cyclic && !c.ci.maybe_cyclic {
            st.has_non_cyclic = true;
        }
        match &c.x {
            CExpr::Struct(sid) => {
                let sid = *sid;
                self.add_struct(v, st, c.env.clone(), sid, &c.ci, c.span);
            }
            CExpr::Vertex(w) => {
                let w = *w;
                self.add_vertex_value(v, st, w, &c);
            }
            CExpr::Value(val) => {
                let val = val.clone();
                self.add_value(v, st, val, c.span, &c);
            }
            CExpr::Expr(id) => {
                let id = *id;
                let refs = std::mem::replace(&mut self.cur_refs, c.ci.refs.clone());
                self.add_expr_conjunct(v, st, c, id);
                self.cur_refs = refs;
            }
        }
    }

    /// Adds a conjunct holding expression `id`.
    fn add_expr_conjunct(&mut self, v: VId, st: &mut NodeState, c: Conjunct, id: ExprId) {
        let e = self.expr_forced(id);
        let span = self.prog.span(id);
        match &*e {
            Expr::Struct(sid) => {
                self.add_struct(v, st, c.env.clone(), *sid, &c.ci, span);
            }
            Expr::List(l) => {
                self.add_list(v, st, &c, l, span);
            }
            Expr::Binary(crate::ast::BinaryOp::Unify, a, b) => {
                let (a, b) = (*a, *b);
                let mut ca = c.clone();
                ca.x = CExpr::Expr(a);
                ca.span = self.prog.span(a);
                let mut cb = c;
                cb.x = CExpr::Expr(b);
                cb.span = self.prog.span(b);
                self.add_conjunct(v, st, ca);
                self.add_conjunct(v, st, cb);
            }
            Expr::Disj(alts) => {
                if alts.len() == 1 {
                    let mut c2 = c.clone();
                    c2.x = CExpr::Expr(alts[0].0);
                    self.add_conjunct(v, st, c2);
                } else {
                    self.push_disjunction(v, st, c);
                }
            }
            Expr::FieldRef { .. }
            | Expr::LetRef { .. }
            | Expr::ValueRef { .. }
            | Expr::Selector(..)
            | Expr::Index(..)
            | Expr::Import(_)
                if st.defer_refs =>
            {
                st.later_refs.push(c);
            }
            Expr::FieldRef { .. }
            | Expr::LetRef { .. }
            | Expr::ValueRef { .. }
            | Expr::Selector(..)
            | Expr::Index(..)
            | Expr::Import(_) => match self.resolve(c.env.as_ref(), id, v) {
                Ok(Resolved::Vertex(w)) => self.add_ref(v, st, w, &c, span),
                Ok(Resolved::Value(val)) => self.add_value(v, st, val, span, &c),
                // An error without a position of its own is at the reference.
                Err(b) if b.spans.is_empty() && b.code == ErrCode::Incomplete => {
                    let mut bb = (*b).clone();
                    bb.spans.push(span);
                    self.set_err(v, Rc::new(bb));
                }
                Err(b) => self.set_err(v, b),
            },
            Expr::Call(f, args)
                if matches!(self.prog.expr(*f), Expr::Builtin(Builtin::Close))
                    && args.len() == 1 =>
            {
                let g = self.new_group(c.ci.group, true, false, c.ci.embedded, v);
                let mut c2 = c.clone();
                c2.x = CExpr::Expr(args[0]);
                c2.ci.group = g;
                self.add_conjunct(v, st, c2);
            }
            Expr::Open(x) => {
                let x = *x;
                self.add_open(v, st, c, x);
            }
            Expr::Call(f, args)
                if matches!(
                    self.prog.expr(*f),
                    Expr::Builtin(Builtin::Reclose(_) | Builtin::CloseAll(_))
                ) =>
            {
                let (f, args) = (*f, args.clone());
                self.add_closeall(v, st, c, f, &args);
            }
            Expr::Top => {
                self.non_cycle(v, st, &c.ci);
                let vx = self.vm(v);
                vx.has_top = true;
                // Where the value was written while nothing narrows it (`y: _` in
                // `y + 1`).
                if vx.val_span == Span::default() {
                    vx.val_span = span;
                }
            }
            _ => {
                let val = self.eval_value(c.env.as_ref(), id, Some(v));
                self.add_value(v, st, val, span, &c);
            }
        }
    }

    /// Adds the conjuncts of a referenced vertex.
    fn add_ref(&mut self, v: VId, st: &mut NodeState, w: VId, c: &Conjunct, span: Span) {
        // Before the cycle checks and the copies look at the conjuncts of `w`.
        self.force_conjuncts(w);
        if w == v || self.ref_cycle(v, st, w, c, span) {
            return;
        }
        self.add_ref_conjuncts(v, st, w, c, span, true);
    }

    /// Inserts the conjuncts of the referenced vertex `w` (`extend`: recording `w` in the
    /// conjuncts' reference chains).
    pub(super) fn add_ref_conjuncts(
        &mut self,
        v: VId,
        st: &mut NodeState,
        w: VId,
        c: &Conjunct,
        span: Span,
        extend: bool,
    ) {
        if let Some(&(_, first)) = st.seen.iter().find(|(x, _)| *x == w)
            && !self.reinsert_opened(v, first, c)
            && !self.reinsert_for_group(st, w, first, c)
        {
            // The conjuncts are there already; what they allow is allowed by this reference's
            // group too (`out: #P, out: #cfg.p` where `#cfg.p` also holds `#P`).
            if let Some(g) = first
                && c.ci.group != 0
                && !self.group_within(g, c.ci.group)
            {
                self.extra_parents.entry(g).or_default().push(c.ci.group);
                self.groups[g as usize].has_extra = true;
                self.within_memo.get_mut().clear();
                self.within_cache.get_mut().clear();
            }
            return;
        }
        // Structure sharing: a vertex whose only conjunct is a reference to an open,
        // non-definition vertex is that vertex.
        let shareable = st.seen.is_empty()
            && self.v(v).conjuncts.len() == 1
            && self.v(v).arcs.is_empty()
            && !self.v(v).is_disjunct
            && self.v(v).choices().is_none()
            && !self.v(w).anonymous
            && self.v(w).status != Status::Evaluating
            && !self.group_closed(c.ci.group)
            && !self.path_has_def(w)
            && matches!((&self.v(v).conjuncts[0].x, &c.x),
                (CExpr::Expr(a), CExpr::Expr(b)) if a == b);
        if shareable {
            self.shares.insert(v, w);
        }
        // Whether CUE would share `w` here, definitions included: then the fields of `v` are
        // those of `w` as `w`'s own evaluation placed them, and the reference does not move
        // the literals they come from (field order, see `toposort.rs`).
        let cue_shared = st.seen.is_empty()
            && self.v(v).conjuncts.len() == 1
            && self.v(v).arcs.is_empty()
            && !self.v(v).is_disjunct
            && self.v(v).choices().is_none()
            && !self.v(v).label.is_let()
            && !self.inside_inline(w)
            && (!self.group_closed(c.ci.group) || self.path_has_def(w))
            && matches!((&self.v(v).conjuncts[0].x, &c.x),
                (CExpr::Expr(a), CExpr::Expr(b)) if a == b);
        // A finished vertex is shared whatever the sharing switch says: nothing can change it
        // any more, so this node is that vertex (as CUE shares it), also when the reference is
        // the only embedding of the node's only literal (`[for x in xs {x}]`).
        let finished = self.v(w).status == Status::Finalized && !self.inside_inline(w);
        if (SHARING && shareable) || (finished && (shareable || self.only_embeds(v, st, w, c))) {
            self.evaluate(w);
            if matches!(self.v(w).status, Status::Evaluated | Status::Finalized) {
                self.vm(v).forward = Some(w);
                return;
            }
        }
        // The conjuncts of the target: known once its parent has been evaluated.
        if let Some(p) = self.v(w).parent
            && self.v(p).status == Status::Unprocessed
        {
            self.evaluate(p);
        }
        // A reference closes what it brings in when it names a definition (`#A`, `a.#B.c`) or
        // lands on one; reaching a field inside a definition otherwise (a `for` value over
        // `#A`, a `let` bound to `#A`, a field of the definition referred to from inside it)
        // does not.
        let def = self.path_has_def(w)
            && (matches!(c.x, CExpr::Expr(id) if self.names_def(id)) || self.v(w).label.is_def());
        let len = c.ci.refs.as_ref().map_or(0, |r| r.len) + 1;
        if len as usize > MAX_DEPTH / 2 {
            let b = Bottom::with_span(
                ErrCode::StructuralCycle,
                "structural cycle (reference chain too long)",
                span,
            );
            self.set_err(v, b);
            return;
        }
        let refs = if extend {
            Some(Rc::new(RefNode {
                v: w,
                x: match c.x {
                    CExpr::Expr(id) => id,
                    _ => u32::MAX,
                },
                next: c.ci.refs.clone(),
                len,
            }))
        } else {
            c.ci.refs.clone()
        };
        let def_group = if def {
            let cur = &self.groups[c.ci.group as usize];
            if cur.closed && cur.recursive && c.ci.group != 0 && cur.origin == v {
                // A definition referred to by one at the same node: a group of its own (an
                // `...` next to the reference opens the outer one only), embedded as that one.
                let emb = c.ci.embedded || cur.embedded;
                Some(self.new_group(c.ci.group, true, true, emb, v))
            } else {
                Some(self.new_group(c.ci.group, true, true, c.ci.embedded, v))
            }
        } else {
            None
        };
        st.seen.push((w, def_group));
        if def_group.is_none() {
            st.seen_groups.push((w, c.ci.group));
        }
        let ref_span = if c.ci.ref_span != Span::default() {
            c.ci.ref_span
        } else {
            match c.x {
                CExpr::Expr(id) => self.prog.span(id),
                _ => c.span,
            }
        };
        // The conjuncts `w` has now, read one at a time: a vertex's conjuncts are only ever
        // appended to, and copying the list for every reference was a tenth of the allocations.
        let n = self.v(w).conjuncts.len();
        if n == 0 {
            // A vertex without conjuncts (a comprehension binding, a builtin result): use its value.
            let mut c2 = c.clone();
            c2.x = CExpr::Vertex(w);
            self.add_conjunct(v, st, c2);
            return;
        }
        let ref_group = self.embed_scope(v, c, def_group);
        // A value selected out of an inline expression (`(f & {in: #A}).out`) is opened: the
        // definitions that closed it there do not close it here (CUE's `OpenInline`); `close()`
        // still does.
        let inline = def_group.is_none() && self.inside_inline(w);
        let mut inline_group = None;
        let deferring = std::mem::replace(&mut st.defer_refs, true);
        for i in 0..n {
            let Some(wc) = self.v(w).conjuncts.get(i) else {
                break;
            };
            let (env, x, span) = (wc.env.clone(), wc.x.clone(), wc.span);
            let wc = Carried {
                group: wc.ci.group,
                optional: wc.ci.optional,
                in_def: wc.ci.in_def,
                ref_span: wc.ci.ref_span,
                hops: wc.ci.hops,
            };
            // A conjunct that carries no closedness of its own belongs, at its new place, to the
            // group of the reference (so what a definition embeds through it is allowed there).
            let group = match def_group {
                Some(g) => g,
                None if !self.group_closed(wc.group) => ref_group,
                None if inline && !self.closed_by_close(wc.group) => *inline_group
                    .get_or_insert_with(|| {
                        let g = self.new_group(ref_group, true, true, false, v);
                        self.groups[g as usize].inline = true;
                        g
                    }),
                // A value selected out of a definition-typed value (`c.t` with `c: #C`) is closed
                // here only by the definitions it was reached through: the recursive closedness
                // it had at `c` does not come along, as CUE gives the conjuncts of the selected
                // field the reference's close information. A `close()` group is kept.
                None if !self.closed_by_close(wc.group) => ref_group,
                None => wc.group,
            };
            let ci = CloseInfo {
                group,
                embedded: c.ci.embedded,
                optional: c.ci.optional || wc.optional,
                refs: refs.clone(),
                cyclic: c.ci.cyclic,
                maybe_cyclic: c.ci.maybe_cyclic,
                in_def: wc.in_def,
                ref_span: if cue_shared { wc.ref_span } else { ref_span },
                hops: if cue_shared {
                    wc.hops
                } else {
                    c.ci.hops.saturating_add(1)
                },
            };
            self.add_conjunct(v, st, Conjunct { env, x, ci, span });
        }
        st.defer_refs = deferring;
        if !deferring {
            self.drain_later_refs(v, st);
        }
    }

    /// Whether `c`, a reference to `w`, is the only embedding of the only literal of `v` and
    /// nothing else stops `v` from being `w` (see the structure sharing in `add_ref`).
    fn only_embeds(&self, v: VId, st: &NodeState, w: VId, c: &Conjunct) -> bool {
        let vx = self.v(v);
        let CExpr::Expr(e) = c.x else { return false };
        let [first] = vx.conjuncts.as_slice() else {
            return false;
        };
        let CExpr::Struct(sid) = first.x else {
            return false;
        };
        matches!(self.prog.structs[sid as usize].decls.as_slice(), [ir::Decl::Embed(x, _)] if *x == e)
            && st.seen.is_empty()
            && vx.arcs.is_empty()
            && !vx.is_disjunct
            && vx.choices().is_none()
            && !self.v(w).anonymous
            && !self.group_closed(c.ci.group)
            && !self.path_has_def(w)
    }

    /// Resolves the deferred references in the order they were met, and those they bring in
    /// after them, unless an enclosing call is doing so already.
    fn drain_later_refs(&mut self, v: VId, st: &mut NodeState) {
        if st.draining {
            return;
        }
        st.draining = true;
        while !st.later_refs.is_empty() {
            for c in std::mem::take(&mut st.later_refs) {
                self.add_conjunct(v, st, c);
            }
        }
        st.draining = false;
    }

    /// `v` and then its ancestors, innermost first.
    pub(super) fn self_and_ancestors(&self, v: VId) -> impl Iterator<Item = VId> + '_ {
        std::iter::successors(Some(v), |&x| self.v(x).parent)
    }

    pub(super) fn is_ancestor(&self, a: VId, v: VId) -> bool {
        self.self_and_ancestors(v).skip(1).any(|p| p == a)
    }

    /// Narrows the kind of `v` by `k` (a value written `what` at `span`); a kind conflict is
    /// reported and gives `false`.
    /// `what` describes the new value for a conflict message; it is only called on a conflict.
    pub(super) fn add_kind(
        &mut self,
        v: VId,
        k: Kind,
        span: Span,
        what: impl FnOnce(&Runtime) -> String,
    ) -> bool {
        let old = self.v(v).kind;
        let new = old.and(k);
        if new.is_empty() {
            // CUE names the value that set the node's kind first, then the new one; a bound
            // alone is a check applied after the types, so the new value comes first then
            // (`>=1 & string` and `string & >=1` both name string first).
            let (have, by_bound) = self.describe_node(v);
            let what = what(self);
            let msg = if by_bound {
                format!(
                    "conflicting values {what} and {have} (mismatched types {} and {})",
                    k.name(),
                    old.name()
                )
            } else {
                format!(
                    "conflicting values {have} and {what} (mismatched types {} and {})",
                    old.name(),
                    k.name()
                )
            };
            self.conflict_at(v, msg, span);
            false
        } else {
            self.narrow(v, new, span);
            true
        }
    }

    /// A short text for the value a node has so far, for conflict messages: the text of what
    /// set the kind of `v`, and whether that was a bound alone (`>=1`; not
    /// `int32`, whose kind `int` is narrower than its bounds').
    fn describe_node(&self, v: VId) -> (String, bool) {
        let vx = self.v(v);
        if let Some(s) = &vx.scalar {
            return (self.value_text(s), false);
        }
        if vx.kind.contains(Kind::STRUCT) && vx.kind.and(Kind::SCALAR).is_empty() {
            return ("{...}".into(), false);
        }
        if vx.is_list {
            return (self.list_lit_text(vx.list_span()), false);
        }
        // The bound or validator that set the kind (`>=1` in `>=1 & <=5 & string`).
        if vx.val_span != Span::default()
            && let Some(i) = vx.cons_spans().iter().position(|s| *s == vx.val_span)
            && let Some(c) = vx.constraints().get(i)
        {
            match c {
                Value::Bound(..) if c.kind() != vx.kind => {}
                Value::Bound(..) => return (self.value_text(c), true),
                _ => return (self.value_text(c), false),
            }
        }
        (vx.kind.name(), false)
    }

    /// Unifies a value into the vertex state.
    pub(super) fn add_value(
        &mut self,
        v: VId,
        st: &mut NodeState,
        val: Value,
        span: Span,
        c: &Conjunct,
    ) {
        if !matches!(val, Value::Bottom(_) | Value::Or(_) | Value::Vertex(_)) {
            self.non_cycle(v, st, &c.ci);
        }
        match val {
            Value::Top => self.vm(v).has_top = true,
            Value::Bottom(b) if b.code == ErrCode::Cycle => {
                // Retrying with a concrete value, a cycle that is still unresolved (it goes
                // through a node being evaluated further up) resolves to that value.
                if !st.retrying {
                    st.postponed.push((c.clone(), b));
                } else if self.cycle_checks.len() < 10_000 {
                    self.cycle_checks.push((v, c.clone()));
                }
            }
            Value::Bottom(b) => {
                let b = if b.spans.is_empty() && span != Span::default() {
                    let mut bb = (*b).clone();
                    bb.spans.push(span);
                    Rc::new(bb)
                } else {
                    b
                };
                self.set_err(v, b)
            }
            Value::Basic(k) => {
                self.add_kind(v, k, span, |_| k.name());
            }
            Value::Bound(op, ref b) => {
                let k = super::value::bound_kind(op, b);
                if !self.add_kind(v, k, span, |rt| rt.value_text(&val)) {
                    return;
                }
                let b = b.clone();
                self.add_bound(v, op, &b, val, span);
            }
            Value::Validator(ref call) => {
                // A validator of another kind than the node's value conflicts with it, in
                // either order (`{a: 1} & strings.MinRunes(3)` as `strings.MinRunes(3) & {a: 1}`).
                if !self.add_kind(v, call.kind, span, |rt| rt.value_text(&val)) {
                    return;
                }
                self.vm(v).xm().constraints.push(val);
                self.vm(v).xm().cons_spans.push(span);
            }
            Value::Or(_) => {
                let c2 = Conjunct {
                    x: CExpr::Value(val),
                    ..c.clone()
                };
                self.push_disjunction(v, st, c2);
            }
            Value::Conj(vs) => {
                for x in vs.iter() {
                    self.add_value(v, st, x.clone(), span, c);
                }
            }
            Value::Vertex(w) => self.add_vertex_value(v, st, w, c),
            scalar => {
                // With a scalar already there the kind is already narrowed, so `val_span` still
                // points at that scalar for the conflict below.
                if !self.add_kind(v, scalar.kind(), span, |rt| rt.value_text(&scalar)) {
                    return;
                }
                if let Some(old_s) = &self.v(v).scalar {
                    if !super::expr::scalar_eq(old_s, &scalar) {
                        let msg = format!(
                            "conflicting values {} and {}",
                            self.value_text(&scalar),
                            self.value_text(old_s)
                        );
                        self.conflict_at(v, msg, span);
                    }
                    return;
                }
                let vx = self.vm(v);
                vx.scalar = Some(scalar);
                vx.val_span = span;
            }
        }
    }

    /// Unifies the value of an evaluated vertex (a builtin result, an inline expression) into `v`.
    fn add_vertex_value(&mut self, v: VId, st: &mut NodeState, w: VId, c: &Conjunct) {
        if w == v || self.is_ancestor(w, v) {
            return;
        }
        self.evaluate(w);
        if self.v(w).status == Status::Evaluating {
            return;
        }
        let w = self.deref(w);
        if let Some(d) = self.v(w).disj.clone() {
            let mut c2 = c.clone();
            c2.x = CExpr::Value(Value::Vertex(w));
            let _ = d;
            self.push_disjunction(v, st, c2);
            return;
        }
        self.non_cycle(v, st, &c.ci);
        let wx = self.v(w).clone_value_state();
        if let Some(e) = wx.err {
            self.set_err(v, e);
        }
        if wx.has_top {
            self.vm(v).has_top = true;
        }
        // A value passed without a position (a builtin's argument) keeps where it was written.
        let span = match c.span {
            s if s == Span::default() => self.v(w).val_span,
            s => s,
        };
        if wx.kind != Kind::TOP {
            let k = wx.kind;
            if let Some(s) = wx.scalar {
                self.add_value(v, st, s, span, c);
            } else if k.contains(Kind::STRUCT) && !k.intersects(Kind::SCALAR) {
                self.add_kind(v, Kind::STRUCT, span, |_| "{...}".into());
            } else if k.contains(Kind::LIST) && !k.intersects(Kind::SCALAR) {
                let lspan = self.v(w).list_span();
                self.add_kind(v, Kind::LIST, span, |rt| rt.list_lit_text(lspan));
                if self.v(v).list_span() == Span::default() {
                    self.vm(v).xm().list_span = lspan;
                }
            } else {
                self.add_value(v, st, Value::Basic(k), span, c);
            }
        }
        for (i, cv) in wx.constraints.into_iter().enumerate() {
            let sp = match wx.cons_spans.get(i) {
                Some(&s) if s != Span::default() => s,
                _ => span,
            };
            self.add_value(v, st, cv, sp, c);
        }
        if wx.is_list {
            self.vm(v).is_list = true;
            let len = self
                .v(w)
                .arcs
                .iter()
                .filter(|&&a| self.v(a).label.is_int())
                .count() as u32;
            if !wx.list_open {
                self.set_list_len(v, len, span);
            } else if self.v(v).list_len().is_none() {
                self.vm(v).xm().list_open = true;
            }
        }
        let structs = self.v(w).structs.clone();
        self.vm(v).structs.extend(structs);
        let pats = self.v(w).patterns_copy();
        for (f, conj) in pats {
            self.add_pattern(v, f, conj);
        }
        let lps = self.v(w).list_patterns_copy();
        for (min, conj) in lps {
            self.add_list_pattern(v, min, conj);
        }
        let arcs = self.v(w).arcs.clone();
        for a in arcs {
            let (label, at) = (self.v(a).label, self.v(a).arc_type);
            if label.is_let() {
                continue;
            }
            let child = self.get_arc(v, label, at);
            self.push_conj(
                child,
                Conjunct {
                    env: None,
                    x: CExpr::Vertex(a),
                    ci: CloseInfo {
                        group: c.ci.group,
                        ..Default::default()
                    },
                    span: c.span,
                },
            );
        }
    }
}

impl Vertex {
    /// A copy of the vertex's own value: what it holds besides its fields and conjuncts.
    pub(super) fn clone_value_state(&self) -> ValueState {
        ValueState {
            err: self.err.clone(),
            has_top: self.has_top,
            kind: self.kind,
            scalar: self.scalar.clone(),
            constraints: self.constraints_copy(),
            cons_spans: self.cons_spans_copy(),
            is_list: self.is_list,
            list_open: self.list_open(),
        }
    }
}

/// A vertex's own value (see [`Vertex::clone_value_state`]).
pub(super) struct ValueState {
    pub(super) err: Option<Rc<Bottom>>,
    pub(super) has_top: bool,
    pub(super) kind: Kind,
    pub(super) scalar: Option<Value>,
    pub(super) constraints: thin_vec::ThinVec<Value>,
    pub(super) cons_spans: thin_vec::ThinVec<Span>,
    pub(super) is_list: bool,
    pub(super) list_open: bool,
}
