//! Closedness, following CUE v0.17's evidence model. Every struct literal and every reference to
//! a definition opens a group in a tree of groups; a closed group (recursive for a definition, one
//! level for `close()`) applies at the vertices its literals reach, and every regular field there
//! needs evidence from it: a conjunct that comes from inside the group. Embeddings, `...` and the
//! `explicitopen` experiment decide which groups count. The file also holds the check that
//! `cue eval` and `cue export` make of the definitions and hidden fields reachable from the root.

use std::rc::Rc;

use crate::ast::Span;

use super::export::ExportError;
use super::ir::{ArcType, Builtin, Expr, ExprId};
use super::print::{Options, collect_errors};
use super::unify::NodeState;
use super::value::{Bottom, ErrCode};
use super::*;

/// A few closedness groups: the requirements of one node, rarely more than four.
type Groups = smallvec::SmallVec<[u32; 4]>;

impl Runtime {
    /// Checks closedness: every regular arc of `v` needs evidence from each closed group that
    /// applies here.
    pub(super) fn check_closed(&mut self, v: VId) {
        if self.v(v).closed_groups.is_empty() {
            return;
        }
        // A definition embedded at the top level of a file does not close the package root,
        // except for the other operands of an embedded conjunction (`_h & #schema`).
        let root = self.v(v).parent.is_none() && !self.v(v).anonymous;
        let mut reqs: Groups = self.v(v).closed_groups.iter().copied().collect();
        if root {
            reqs.retain(|r| {
                let rg = &self.groups[*r as usize];
                rg.embedded && self.is_embed_and(rg.parent)
            });
            if reqs.is_empty() {
                return;
            }
        }
        let opens = self.v(v).open_groups_copy();
        // Requirements lifted by a `...` in a literal inside them.
        let reqs: Groups = reqs
            .into_iter()
            .filter(|&r| !self.groups[r as usize].inline)
            .filter(|&r| !opens.iter().any(|&o| self.group_within(o, r)))
            .filter(|&r| !self.embedded_in_open_literal(r, &opens))
            .collect();
        let reqs = self.lift_opened(v, reqs);
        if reqs.is_empty() {
            return;
        }
        // The arcs `v` has now, read in place (checking one adds no arc to `v`).
        let n = self.v(v).arcs.len();
        for i in 0..n {
            let Some(&a) = self.v(v).arcs.get(i) else {
                break;
            };
            let l = self.v(a).label;
            if !l.is_regular() {
                continue;
            }
            let ok = reqs.iter().all(|&r| self.arc_allowed(a, r, &opens));
            if !ok {
                // A field that is a structural cycle is reported as one (CUE finds the cycle
                // while evaluating the field, before the closedness check).
                self.evaluate(a);
                if self
                    .v(a)
                    .err
                    .as_ref()
                    .is_some_and(|e| e.code == ErrCode::StructuralCycle)
                {
                    continue;
                }
                self.reset(a);
                let spans = self.not_allowed_spans(a);
                let b = Rc::new(Bottom {
                    code: ErrCode::Eval,
                    msg: "field not allowed".into(),
                    spans,
                    child: false,
                    at: Some(a),
                    subs: Vec::new(),
                });
                let ax = self.vm(a);
                ax.err = Some(b);
                ax.status = Status::Finalized;
            }
        }
    }

    /// The positions of a "field not allowed" error: those of every conjunct of the rejected
    /// arc (its own fields and the pattern constraints of other structs that did admit it).
    fn not_allowed_spans(&self, a: VId) -> Vec<Span> {
        let mut spans: Vec<Span> = Vec::new();
        for c in &self.v(a).conjuncts {
            if c.span != Span::default() && !spans.contains(&c.span) {
                spans.push(c.span);
            }
        }
        // As CUE prints an error's input positions: by file name, then offset.
        spans.sort_by_key(|s| (self.file_ranks.get(s.file.0 as usize).copied(), s.start));
        spans
    }

    /// Whether requirement `r` is a definition embedded in a literal that is open at this node
    /// (`{#meta, ...}`): the `...` opens what the literal embeds too.
    fn embedded_in_open_literal(&self, r: u32, opens: &[u32]) -> bool {
        let rg = &self.groups[r as usize];
        if !rg.embedded || rg.parent == 0 || self.is_embed_and(rg.parent) {
            return false;
        }
        // The literal that embeds `r` or one it is embedded in on the way to the embedding
        // literal (`x: {A}` with `A: {#B, ...}`); for a definition that came with an embedded
        // non-definition value, the literal around that embedding (`{x, ...}` with
        // `x: #B & {}`).
        let mut p = self.embedding_literal(rg.parent);
        if self.is_embed_mark(p) {
            p = self.embedding_literal(self.groups[p as usize].parent);
        }
        let mut g = rg.parent;
        let mut guard = 0;
        while g != 0 && guard < 10_000 {
            guard += 1;
            if opens.contains(&g) {
                return true;
            }
            if g == p {
                break;
            }
            g = self.groups[g as usize].parent;
        }
        false
    }

    /// The literal whose fields count as evidence for a definition embedded in literal group
    /// `p`: when that literal is itself an open embedded literal (`W: {{#T}, b: 1}`), the
    /// literal it is embedded in, and so on up.
    fn embedding_literal(&self, mut p: u32) -> u32 {
        let mut guard = 0;
        while p != 0 && guard < 10_000 {
            guard += 1;
            let g = &self.groups[p as usize];
            if !g.embedded || g.closed || self.group_marks.contains_key(&p) {
                break;
            }
            p = g.parent;
        }
        p
    }

    /// The literal around the embedding at group `p`, through a chain of embedded definitions
    /// (and embedded conjunctions): the outermost literal whose fields are evidence.
    fn outer_embedding_literal(&self, mut p: u32) -> u32 {
        let mut guard = 0;
        loop {
            guard += 1;
            p = self.embedding_literal(p);
            let pg = &self.groups[p as usize];
            let through =
                (pg.closed && pg.recursive && pg.embedded && !self.group_marks.contains_key(&p))
                    || self.is_embed_and(p);
            if p != 0 && guard < 10_000 && through {
                p = pg.parent;
                continue;
            }
            break p;
        }
    }

    fn arc_allowed(&self, a: VId, r: u32, opens: &[u32]) -> bool {
        // The embedded definition `r` lies in (`out: {#A, a: b: 1}` with `#A: a?: #B`: `#B` is
        // reached through the embedding), if any: fields from outside it but inside the
        // enclosing literal are evidence. The enclosing literal is the outermost one of the
        // chain of embeddings: a definition embedded in a definition that is itself embedded
        // (`#S: {#B, k: 2}` with `#B: {#A, m: 1}`) accepts the fields of `#S`'s literal.
        let e = self.embedded_def_around(r);
        let (relax, mark) = if let Some(e) = e {
            let rg = &self.groups[e as usize];
            let mut p = rg.parent;
            // Through the groups of definitions referred to at the same node (`#A: #B`).
            while p != 0 && {
                let pg = &self.groups[p as usize];
                pg.closed && pg.recursive && pg.embedded && pg.origin == rg.origin
            } {
                p = self.groups[p as usize].parent;
            }
            // A definition that is a conjunct of an embedded non-definition value (`{x}` with
            // `x: #A & {b: 1}`) has that embedding as its scope: the fields that came with it
            // are not evidence. One embedded in a literal of that value (`x: {#A, b: 1}`) has
            // its own.
            if self.is_embed_mark(p) {
                (Some(p), Some(p))
            } else {
                let lit = self.embedding_literal(p);
                if self.is_embed_and(lit) {
                    (Some(lit), None)
                } else {
                    (Some(self.outer_embedding_literal(lit)), None)
                }
            }
        } else {
            (None, None)
        };
        // A definition in an embedded conjunction (`{#A & {b: 1}}`) accepts the fields of the
        // literal around the embedding, not those of the conjunction's other operands.
        let scope = mark.or(relax.filter(|&p| self.is_embed_and(p)));
        let relax = match scope {
            // At the package root, every file's fields are the enclosing literal's.
            Some(p) if self.is_package_root(self.groups[p as usize].origin) => Some(0),
            Some(p) => Some(self.groups[p as usize].parent),
            None => relax,
        };
        // A `...` in the enclosing literal opens it: any field from outside the embedding is
        // evidence (`{#A & {}, ...} & {s: 1}`).
        let relax = relax.map(|p| if p != 0 && opens.contains(&p) { 0 } else { p });
        self.v(a).conjuncts.iter().any(|c| {
            self.group_within(c.ci.group, r)
                || relax.is_some_and(|p| {
                    (p == 0 || self.group_within(c.ci.group, p))
                        && !scope.is_some_and(|e| self.group_within(c.ci.group, e))
                        && !e.is_some_and(|e| e != r && self.group_within(c.ci.group, e))
                })
        }) || self.allowed_by_embed_scope(a, r)
    }

    /// `r` if it is an embedded group, else the nearest embedded definition group around it.
    fn embedded_def_around(&self, r: u32) -> Option<u32> {
        let rg = &self.groups[r as usize];
        if rg.embedded {
            return Some(r);
        }
        let mut g = rg.parent;
        let mut guard = 0;
        while g != 0 && guard < 10_000 {
            guard += 1;
            let gr = &self.groups[g as usize];
            if gr.embedded && gr.closed && gr.recursive {
                return Some(g);
            }
            g = gr.parent;
        }
        None
    }

    /// Whether `v` is the root of the package (not an anonymous vertex).
    fn is_package_root(&self, v: VId) -> bool {
        self.v(v).parent.is_none() && !self.v(v).anonymous
    }

    /// Whether `g` or a group it lies in is closed.
    pub(super) fn group_closed(&self, mut g: u32) -> bool {
        let mut guard = 0;
        while g != 0 && guard < 10_000 {
            guard += 1;
            if self.groups[g as usize].closed {
                return true;
            }
            g = self.groups[g as usize].parent;
        }
        false
    }

    /// Whether group `g` is `r` or lies inside it.
    pub(super) fn group_within(&self, g: u32, r: u32) -> bool {
        if g == r {
            return true;
        }
        if !self.open_marks && self.groups[r as usize].closed {
            // No group was closed after its creation: a closed `r` on the chain of parents is
            // one of its closed groups (a parent is older than its children, so its number is
            // smaller). Not finding it there, `r` may still be reached through extra parents.
            let mut x = self.groups[g as usize].closed_up;
            while x > r {
                x = self.closed_above(x);
            }
            if x == r {
                return true;
            }
            if self.extra_parents.is_empty() {
                return false;
            }
        }
        if let Some(known) = self.within_cache.borrow().get(g, r) {
            return known;
        }
        let found = self.group_within_uncached(g, r);
        self.within_cache.borrow_mut().put(g, r, found);
        found
    }

    fn group_within_uncached(&self, g: u32, r: u32) -> bool {
        // The chain of parents first, noting whether a group on it has other parents: without
        // one, the chain is all there is to search.
        let mut x = g;
        let mut guard = 0;
        let mut extra = false;
        loop {
            if x == r {
                return true;
            }
            if x == 0 || guard > 10_000 {
                break;
            }
            guard += 1;
            let gr = &self.groups[x as usize];
            extra |= gr.has_extra;
            x = gr.parent;
        }
        if !extra {
            return false;
        }
        if let Some(&known) = self.within_memo.borrow().get(&(g, r)) {
            return known;
        }
        let found = self.group_within_dag(g, r);
        self.within_memo.borrow_mut().insert((g, r), found);
        found
    }

    /// [`Self::group_within`] through the extra parents too.
    fn group_within_dag(&self, g: u32, r: u32) -> bool {
        // Groups with extra parents form a small DAG: search it, each group once.
        let mut stack: smallvec::SmallVec<[u32; 16]> = smallvec::smallvec![g];
        let mut seen: smallvec::SmallVec<[u32; 32]> = smallvec::SmallVec::new();
        while let Some(mut g) = stack.pop() {
            let mut guard = 0;
            loop {
                if g == r {
                    return true;
                }
                if g == 0 || guard > 10_000 || seen.contains(&g) {
                    break;
                }
                seen.push(g);
                guard += 1;
                if let Some(more) = self.extra_parents.get(&g) {
                    stack.extend(more.iter().copied());
                }
                g = self.groups[g as usize].parent;
            }
            if seen.len() > 100_000 {
                return false;
            }
        }
        false
    }

    /// Records the closed groups a struct literal of `group` makes active at `v`.
    pub(super) fn register_requirements(&mut self, v: VId, group: u32) {
        if self.group_marks.is_empty() && !self.groups[group as usize].closed_chain {
            return;
        }
        // Without an `x...` no group is marked open and none is closed after its creation, so
        // only the closed groups of the chain can count, and `closed_up` leads from one to the
        // next; no requirement is skipped for a reclose either.
        let short = !self.open_marks;
        let mut g = if short {
            self.groups[group as usize].closed_up
        } else {
            group
        };
        let mut guard = 0;
        let mut passed_open = false;
        while g != 0 && guard < 10_000 {
            guard += 1;
            passed_open |= !short && self.is_open_mark(g);
            let gr = &self.groups[g as usize];
            if gr.closed
                && (gr.recursive || gr.origin == v)
                && !self.skip_reclose_requirement(g, passed_open)
            {
                let vx = self.vertices.get_mut(v);
                if !vx.closed_groups.contains(&g) {
                    push_tight(&mut vx.closed_groups, g);
                }
            }
            g = if short {
                self.closed_above(g)
            } else {
                gr.parent
            };
        }
    }

    /// The nearest group above `g` (`g` left out) that was closed when it was created, or 0.
    fn closed_above(&self, g: u32) -> u32 {
        self.groups[self.groups[g as usize].parent as usize].closed_up
    }

    /// Whether a non-definition vertex `w` already inserted at this node must be inserted again
    /// for reference `c`: `c` lies in a closed group that none of the earlier references to
    /// `w` lay in (`#Y: #Z & X` with `#Z: {X}`: the `X` embedded in `#Z` is evidence for `#Z`).
    pub(super) fn reinsert_for_group(
        &self,
        st: &NodeState,
        w: VId,
        first: Option<u32>,
        c: &Conjunct,
    ) -> bool {
        if first.is_some() || c.ci.group == 0 || !self.group_closed(c.ci.group) {
            return false;
        }
        !st.seen_groups
            .iter()
            .any(|&(x, g)| x == w && self.group_within(g, c.ci.group))
    }

    /// Whether the path of `v` goes through a definition. An inline value (`{x: 1}.x`) is
    /// not reached through the path of the node that uses it: the search stops there.
    pub(super) fn path_has_def(&self, v: VId) -> bool {
        self.self_and_ancestors(v)
            .find(|&x| self.v(x).label.is_def() || self.v(x).anonymous)
            .is_some_and(|x| self.v(x).label.is_def())
    }

    /// Whether `w` lies inside a vertex evaluated for an inline expression.
    pub(super) fn inside_inline(&self, w: VId) -> bool {
        self.self_and_ancestors(w).any(|x| self.v(x).anonymous)
    }

    /// Whether group `g` or one it lies in is a `close()` (a closed group that is not
    /// recursive).
    pub(super) fn closed_by_close(&self, mut g: u32) -> bool {
        let mut guard = 0;
        while g != 0 && guard < 10_000 {
            guard += 1;
            let gr = &self.groups[g as usize];
            if gr.closed && !gr.recursive {
                return true;
            }
            g = gr.parent;
        }
        false
    }

    /// Whether reference expression `x` names a definition (`#A`, `a.#B.c`, `#L[0]`).
    pub(super) fn names_def(&self, x: ExprId) -> bool {
        match self.prog.expr(x) {
            Expr::FieldRef { label, .. } => label.is_def(),
            Expr::Selector(x, l) => l.is_def() || self.names_def(*x),
            Expr::Index(x, _) => self.names_def(*x),
            _ => false,
        }
    }

    /// The permanent errors inside the definitions and hidden fields reachable from `root`
    /// through regular fields, which fail `cue export` too (optional fields left out).
    pub(super) fn errors_in_definitions(&mut self, root: VId) -> Vec<ExportError> {
        let mut errs = Vec::new();
        if !self.prog.labels.has_hidden_or_def() {
            // Concrete data: no definition or hidden field anywhere to search.
            return errs;
        }
        let mut stack = vec![(root, 0usize)];
        while let Some((v, depth)) = stack.pop() {
            if depth > MAX_DEPTH {
                continue;
            }
            let d = self.deref(v);
            // The arcs as they are before any definition below is finalized: regular fields
            // to search next, definitions and hidden fields to collect errors from now.
            let mut defs: smallvec::SmallVec<[VId; 4]> = smallvec::SmallVec::new();
            for &a in &self.v(d).arcs {
                let ax = self.v(a);
                if ax.label.is_let() || ax.arc_type == ArcType::Optional {
                    continue;
                }
                if ax.label.is_regular() {
                    // A finished leaf holds nothing to search, and nothing changes it now.
                    let leaf = ax.status == Status::Finalized
                        && ax.arcs.is_empty()
                        && ax.forward.is_none();
                    if !leaf {
                        stack.push((a, depth + 1));
                    }
                } else {
                    defs.push(a);
                }
            }
            for a in defs {
                self.finalize(a, true);
                let mut found = Vec::new();
                let opts = Options {
                    hidden: true,
                    optional: false,
                };
                collect_errors(self, a, opts, &mut found, depth + 1);
                errs.extend(found);
            }
        }
        errs
    }
}

// The `explicitopen` experiment: the postfix `x...` that lifts the closedness of a value's top
// level, and the builtins `__closeAll` (close a literal recursively) and `__reclose` (restore
// the closedness that the `x...` embeddings of a literal lifted: recursive if one of them was a
// definition, one level if it was a `close()`). Embedding a definition in a file with the
// experiment gives no evidence to the fields of the enclosing literal (see `add_struct`).

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
        self.open_marks = true;
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
    pub(super) fn lift_opened(&mut self, v: VId, reqs: Groups) -> Groups {
        if self.group_marks.is_empty() {
            return reqs;
        }
        let mut out = Groups::new();
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

    /// Whether group `g` is the embedding scope of a non-definition value.
    fn is_embed_mark(&self, g: u32) -> bool {
        !self.group_marks.is_empty() && self.group_marks.get(&g) == Some(&GroupMark::Embed)
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Whether a group lies within a closed group, found through the closed groups of its
        /// chain, is what walking every parent finds, and so is every other answer.
        #[test]
        fn a_group_lies_within_another_as_the_walk_over_its_parents_says(
            shape in proptest::collection::vec((0usize..64, any::<bool>()), 1..40),
        ) {
            let mut rt = Runtime::new();
            for (i, &(p, closed)) in shape.iter().enumerate() {
                // The parent is a group made before (the root is group 0).
                let parent = (p % (i + 1)) as u32;
                rt.new_group(parent, closed, true, false, 0);
            }
            let n = rt.groups.len() as u32;
            for g in 0..n {
                for r in 0..n {
                    let mut x = g;
                    let walk = loop {
                        if x == r {
                            break true;
                        }
                        if x == 0 {
                            break false;
                        }
                        x = rt.groups[x as usize].parent;
                    };
                    prop_assert_eq!(rt.group_within(g, r), walk, "group {} within {}", g, r);
                }
            }
        }
    }
}
