//! The order in which export writes the fields of a struct: CUE's topological sort of labels
//! (`internal/core/toposort`), so that JSON and YAML keys come out as `cue export` writes them.
//!
//! Each struct literal unified into a node (once, however often it was added; the extra
//! additions count as repeats) says "these labels, in this order". A literal gets a position:
//! where it is written, then, going over the node's arcs in order, the position of the last
//! field declaration of it that gave an arc a conjunct, or of the outermost reference that
//! brought such a conjunct. Such a reference also moves every literal that holds it as an
//! embedding, and every literal it brought before: `{a: 1, b}` stands where `b` is written,
//! together with what `b` brings. The literals are sorted by position (literals with dynamic
//! fields last at a tie) and grouped into batches: literals at one position, or operands of
//! `&`, are unified *explicitly* and each adds its own order; a later literal of the same file
//! unified implicitly only adds the labels it introduces. Edges run from each label to the next
//! of its literal; the graph's strongly connected components are then emitted smallest first
//! (by label: integers, then raw bytes) among those whose predecessors are out. A comprehension
//! body that yields several times is one literal whose dynamic fields take the labels of its
//! yields in turn, so they come out in iteration order.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

use rustc_hash::FxHashMap as HashMap;

use crate::ast::Span;

use super::label::Label;
use super::{CExpr, Runtime, StructId, VId, ir};

/// A position as CUE compares them: by file name, then offset; no position sorts last.
type Pos = Option<(u32, u32)>;

/// A declaration of a literal that can give a label.
#[derive(Clone, Copy)]
enum Decl {
    Field(Label, Span),
    Dynamic(Span),
    /// A pattern constraint: it moves its literal when it applies to an arc.
    Pattern(Span),
}

struct Meta {
    sid: StructId,
    pos: Pos,
    explicit: bool,
    comp_id: u32,
    repeats: u32,
    /// References and embeddings followed before the literal was added: CUE adds a node's
    /// own literals before those it reaches through references (later tasks), and that order
    /// decides between literals at one position.
    hops: u16,
}

impl Runtime {
    /// Appends the arcs of `v` with regular labels to `out`, in the order they were created.
    pub(super) fn regular_arcs_into(&self, v: VId, out: &mut Vec<VId>) {
        out.extend(
            self.v(v)
                .arcs
                .iter()
                .copied()
                .filter(|&a| self.v(a).label.is_regular()),
        );
    }

    /// The regular arcs of `v` in the order export writes them.
    pub(super) fn sorted_arcs(&self, v: VId) -> Vec<VId> {
        let mut out = Vec::new();
        self.sorted_arcs_into(v, &mut out);
        out
    }

    /// [`Self::sorted_arcs`] in `out`, which must be empty.
    pub(super) fn sorted_arcs_into(&self, v: VId, out: &mut Vec<VId>) {
        debug_assert!(out.is_empty());
        let vx = self.v(v);
        self.regular_arcs_into(v, out);
        if out.len() < 2 || vx.structs.is_empty() {
            return;
        }
        if let Some(lit) = self.sole_literal(v) {
            if self.in_literal_order(lit, out) {
                return;
            }
            if let Some(order) = self.single_literal_order(lit, out) {
                *out = order;
                return;
            }
        }
        *out = self.feature_order(v, out);
    }

    /// The order of `regular` when one struct literal `lit`, with plain fields of distinct
    /// labels only, gave the struct every one of its arcs: the graph is then that literal's chain of labels,
    /// so the sort is the literal's order. This is the common case of concrete data (a file of
    /// CRDs or values), where building the graph for every struct cost more than parsing.
    /// `None` when anything else could take part in the order.
    fn single_literal_order(&self, lit: &ir::StructLit, regular: &[VId]) -> Option<Vec<VId>> {
        let mut index: HashMap<Label, usize> = HashMap::default();
        for d in &lit.decls {
            match d {
                ir::Decl::Field { label, .. } => {
                    let next = index.len();
                    if index.insert(*label, next).is_some() {
                        return None;
                    }
                }
                ir::Decl::Let { .. } | ir::Decl::Ellipsis(_) => {}
                ir::Decl::Dynamic { .. }
                | ir::Decl::Pattern { .. }
                | ir::Decl::Embed(..)
                | ir::Decl::Comprehension(_) => return None,
            }
        }
        let mut keyed = Vec::with_capacity(regular.len());
        for &a in regular {
            keyed.push((*index.get(&self.v(a).label)?, a));
        }
        keyed.sort_unstable_by_key(|&(i, _)| i);
        Some(keyed.into_iter().map(|(_, a)| a).collect())
    }

    /// The struct literal that gave `v` all its struct literals (the same one, maybe more than
    /// once), when it embeds nothing.
    fn sole_literal(&self, v: VId) -> Option<&ir::StructLit> {
        let vx = self.v(v);
        let sid = vx.structs.first()?.id;
        if vx.structs.iter().any(|s| s.id != sid) {
            return None;
        }
        let lit = &self.prog.structs[sid as usize];
        (!lit.has_embed).then_some(&**lit)
    }

    /// Whether [`Self::single_literal_order`] would keep `regular` as it is, found without an
    /// index: the arcs of the struct that `lit` alone gave its arcs are in its order (they were
    /// created from it), which one pass in step shows. A literal with a label met twice, or
    /// with definitions, hidden fields or anything but plain fields, is left to that function.
    fn in_literal_order(&self, lit: &ir::StructLit, regular: &[VId]) -> bool {
        let mut arcs = regular.iter();
        for d in &lit.decls {
            match d {
                ir::Decl::Field { label, .. } if label.is_regular() => {
                    if arcs.next().is_none_or(|&a| self.v(a).label != *label) {
                        return false;
                    }
                }
                ir::Decl::Let { .. } | ir::Decl::Ellipsis(_) => {}
                _ => return false,
            }
        }
        arcs.next().is_none()
    }

    /// The conjuncts of `a`, looking through a conjunct that is another vertex's value (a
    /// value copied by a builtin or a comprehension) to the conjuncts of that vertex.
    fn leaf_conjuncts(&self, a: VId) -> smallvec::SmallVec<[&super::Conjunct; 4]> {
        fn collect<'a>(
            rt: &'a Runtime,
            x: VId,
            depth: u8,
            out: &mut smallvec::SmallVec<[&'a super::Conjunct; 4]>,
        ) {
            for c in &rt.v(x).conjuncts {
                match c.x {
                    CExpr::Vertex(w) if depth < 8 => collect(rt, w, depth + 1, out),
                    _ => out.push(c),
                }
            }
        }
        let mut out = smallvec::SmallVec::new();
        collect(self, a, 0, &mut out);
        out
    }

    /// A file's rank among the files by name (CUE compares positions by file name).
    fn file_rank(&self, file: u32) -> u32 {
        match self.file_ranks.get(file as usize) {
            Some(&r) => r,
            None => file,
        }
    }

    fn pos_of(&self, s: Span) -> Pos {
        if s == Span::default() {
            None
        } else {
            Some((self.file_rank(s.file.0), s.start))
        }
    }

    /// CUE's `VertexFeatures`: every label of `v`'s arcs and literals, in export order; of
    /// those, the regular arcs of `v` (`regular`, in arc order) are returned in that order.
    fn feature_order(&self, v: VId, regular: &[VId]) -> Vec<VId> {
        let vx = self.v(v);
        let s = &mut *self.topo.borrow_mut();
        s.clear();

        // 1. One meta per literal, in the order of their first addition.
        // A literal's fields carry its frame; a pattern's conjuncts carry a copy of it naming
        // the label, with the same vertex and parent scope.
        let frame_key = |e: &super::EnvRef| {
            (
                e.vertex,
                e.up.as_ref().map(|u| std::rc::Rc::as_ptr(u) as usize),
            )
        };
        for st in &vx.structs {
            let i = match s.by_sid.entry(st.id) {
                std::collections::hash_map::Entry::Occupied(e) => {
                    let i = *e.get();
                    s.metas[i].repeats += 1;
                    i
                }
                std::collections::hash_map::Entry::Vacant(e) => {
                    let lit = &self.prog.structs[st.id as usize];
                    e.insert(s.metas.len());
                    s.metas.push(Meta {
                        sid: st.id,
                        pos: self.pos_of(lit.span),
                        explicit: false,
                        comp_id: st.comp_id,
                        repeats: 0,
                        hops: st.hops,
                    });
                    s.metas.len() - 1
                }
            };
            let list = s.by_frame.entry(frame_key(&st.frame)).or_default();
            if !list.contains(&i) {
                list.push(i);
            }
        }
        let metas = &mut s.metas;

        // 2. The references that hold literals: at first, the embeddings of each literal.
        for (i, m) in metas.iter().enumerate() {
            for d in &self.prog.structs[m.sid as usize].decls {
                if let ir::Decl::Embed(e, _) = d {
                    s.held.entry(self.prog.span(*e)).or_default().push(i);
                }
            }
        }

        // 3. Positions from the arcs' conjuncts, in arc order; the labels each dynamic field
        //    produced, in arc order too.
        let mut dyn_labels: HashMap<(usize, Span), std::collections::VecDeque<Label>> =
            HashMap::default();
        for &a in &vx.arcs {
            let label = self.v(a).label;
            for c in self.leaf_conjuncts(a) {
                let Some(env) = &c.env else { continue };
                if matches!(c.x, CExpr::Struct(_)) {
                    continue;
                }
                let Some(cands) = s.by_frame.get(&frame_key(env)) else {
                    continue;
                };
                let Some((i, decl)) = cands.iter().find_map(|&i| {
                    let lit = &self.prog.structs[metas[i].sid as usize];
                    decl_for(lit, c.span, label).map(|d| (i, d))
                }) else {
                    continue;
                };
                if let Decl::Dynamic(s) = decl {
                    dyn_labels.entry((i, s)).or_default().push_back(label);
                }
                metas[i].pos = self.pos_of(c.span);
                let r = c.ci.ref_span;
                if r == Span::default() || r == super::CLEARED_REF {
                    continue;
                }
                let list = s.held.entry(r).or_default();
                if !list.contains(&i) {
                    list.push(i);
                }
                let p = self.pos_of(r);
                for &j in list.iter() {
                    metas[j].pos = p;
                }
            }
        }
        // 4. Explicit unification: the literals held by an operand of `&` among the node's
        //    conjuncts and the embeddings of its literals.
        let work = &mut s.work;
        work.extend(vx.conjuncts.iter().filter_map(|c| match c.x {
            CExpr::Expr(e) => Some(e),
            _ => None,
        }));
        for m in metas.iter() {
            for d in &self.prog.structs[m.sid as usize].decls {
                if let ir::Decl::Embed(e, _) = d {
                    work.push(*e);
                }
            }
        }
        while let Some(e) = work.pop() {
            let ir::Expr::Binary(crate::ast::BinaryOp::Unify, x, y) = self.prog.expr(e) else {
                continue;
            };
            for &o in &[*x, *y] {
                match self.prog.expr(o) {
                    ir::Expr::Struct(sid) => {
                        if let Some(&i) = s.by_sid.get(sid) {
                            metas[i].explicit = true;
                        }
                    }
                    _ => {
                        for &i in s.held.get(&self.prog.span(o)).into_iter().flatten() {
                            metas[i].explicit = true;
                        }
                    }
                }
                work.push(o);
            }
        }

        let dynamic = &mut s.dynamic;
        dynamic.extend(metas.iter().enumerate().map(|(i, m)| {
            !dyn_labels.is_empty()
                && self.prog.structs[m.sid as usize].decls.iter().any(|d| {
                    matches!(d, ir::Decl::Dynamic { span, .. } if dyn_labels.contains_key(&(i, *span)))
                })
        }));

        // 5. Roots sorted by position, dynamic ones last at a tie (a stable sort).
        let roots = &mut s.roots;
        roots.extend(0..metas.len());
        roots.sort_by(|&a, &b| {
            cmp_pos(metas[a].pos, metas[b].pos)
                .then(dynamic[a].cmp(&dynamic[b]))
                .then(metas[a].hops.cmp(&metas[b].hops))
        });

        // 6. Batches (ranges of `batched`): equal positions together; a comprehension's
        //    yields round by round.
        let (batched, batches) = (&mut s.batched, &mut s.batches);
        let mut start = 0;
        let mut i = 0;
        while i < roots.len() {
            let mut end = i + 1;
            let cid = metas[roots[i]].comp_id;
            if cid != 0 {
                while end < roots.len() && metas[roots[end]].comp_id == cid {
                    end += 1;
                }
            }
            for _ in 0..=metas[roots[i]].repeats {
                for &r in &roots[i..end] {
                    if start == batched.len()
                        || (metas[batched[start]].pos == metas[r].pos && !dynamic[r])
                    {
                        batched.push(r);
                    } else {
                        append_batch(batches, batched, start, metas);
                        start = batched.len();
                        batched.push(r);
                    }
                }
            }
            i = end;
        }
        append_batch(batches, batched, start, metas);

        // 7. Edges. The arcs are the first nodes, in arc order.
        let g = &mut s.graph;
        for &a in &vx.arcs {
            g.node(self.v(a).label);
        }
        let arcs_are_nodes = g.labels.len() == vx.arcs.len();
        let mut previous: Nodes = Nodes::new();
        let mut prev_file: Option<Option<u32>> = None;
        for &(b0, b1) in batches.iter() {
            let b = &batched[b0..b1];
            let explicit = is_explicit(b, metas);
            let file = metas[b[0]].pos.map(|p| p.0);
            if prev_file.is_some_and(|f| f != file) {
                previous.clear();
            }
            prev_file = Some(file);
            let mut next = Nodes::new();
            for &r in b {
                let m = &metas[r];
                let rfile = m.pos.map(|p| p.0);
                let mut prev = previous.clone();
                let lit = &self.prog.structs[m.sid as usize];
                for d in lit.decls.iter().filter_map(label_decl) {
                    let label = match d {
                        Decl::Field(l, _) => l,
                        Decl::Dynamic(s) => {
                            match dyn_labels.get_mut(&(r, s)).and_then(|q| q.pop_front()) {
                                Some(l) => l,
                                None => continue,
                            }
                        }
                        Decl::Pattern(_) => continue,
                    };
                    // A label with an owner is a node already.
                    let n = g.node(label);
                    match g.owner[n] {
                        // The same field again in the same literal.
                        o if o == r => continue,
                        // The same field again in the same file, unified implicitly.
                        o if o != NO_OWNER
                            && !explicit
                            && m.pos.is_some()
                            && metas[o].pos.map(|p| p.0) == rfile =>
                        {
                            continue;
                        }
                        _ => {}
                    }
                    g.owner[n] = r;
                    for &p in &prev {
                        g.edge_at(p, n);
                    }
                    prev.clear();
                    prev.push(n);
                }
                next.extend(prev);
            }
            previous = next;
        }
        g.sort(|a, b| self.label_cmp(a, b), &mut s.sort);

        let order = &s.sort.out;
        let mut out = Vec::with_capacity(regular.len());
        if arcs_are_nodes {
            out.extend(
                order
                    .iter()
                    .filter(|&&i| i < vx.arcs.len())
                    .map(|&i| vx.arcs[i])
                    .filter(|&a| self.v(a).label.is_regular()),
            );
        } else {
            let at: HashMap<Label, VId> = regular.iter().map(|&a| (self.v(a).label, a)).collect();
            out.extend(order.iter().filter_map(|&i| at.get(&g.labels[i]).copied()));
        }
        if out.len() != regular.len() {
            // Every arc is a node of the graph; this only guards against a label met twice.
            for &a in regular {
                if !out.contains(&a) {
                    out.push(a);
                }
            }
        }
        out
    }
}

/// The declaration of a literal that can give a label, if `d` is one.
fn label_decl(d: &ir::Decl) -> Option<Decl> {
    match d {
        ir::Decl::Field { label, span, .. } => Some(Decl::Field(*label, *span)),
        ir::Decl::Dynamic { span, .. } => Some(Decl::Dynamic(*span)),
        ir::Decl::Pattern { span, .. } => Some(Decl::Pattern(*span)),
        _ => None,
    }
}

/// The first declaration of `lit` that gave `label` the conjunct at `span`.
fn decl_for(lit: &ir::StructLit, span: Span, label: Label) -> Option<Decl> {
    let matches = |d: &Decl| match d {
        Decl::Field(l, s) => *s == span && *l == label,
        Decl::Dynamic(s) | Decl::Pattern(s) => *s == span,
    };
    match &lit.span_index {
        Some(m) => m
            .get(&span)
            .and_then(|&i| label_decl(&lit.decls[i as usize]))
            .filter(|d| matches(d)),
        None => lit.decls.iter().filter_map(label_decl).find(|d| matches(d)),
    }
}

fn cmp_pos(a: Pos, b: Pos) -> Ordering {
    match (a, b) {
        (Some(x), Some(y)) => x.cmp(&y),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => Ordering::Equal,
    }
}

fn is_explicit(b: &[usize], metas: &[Meta]) -> bool {
    b.len() > 1 || (b.len() == 1 && metas[b[0]].explicit)
}

/// Closes the batch `batched[start..]`, merging it into the previous one (which ends at
/// `start`) when both are explicit and in one file.
fn append_batch(
    batches: &mut Vec<(usize, usize)>,
    batched: &[usize],
    start: usize,
    metas: &[Meta],
) {
    let batch = &batched[start..];
    if batch.is_empty() {
        return;
    }
    if let Some(last) = batches.last_mut()
        && is_explicit(batch, metas)
        && is_explicit(&batched[last.0..last.1], metas)
        && metas[batch[0]].pos.map(|p| p.0) == metas[batched[last.0]].pos.map(|p| p.0)
    {
        last.1 = batched.len();
        return;
    }
    batches.push((start, batched.len()));
}

/// The buffers of [`Runtime::feature_order`], kept between calls: export orders the fields of
/// every struct it writes, and a dozen fresh maps and lists for each struct cost more than
/// the sort itself. Nothing is kept from one call to the next but capacity.
#[derive(Default)]
pub(super) struct TopoScratch {
    metas: Vec<Meta>,
    by_sid: HashMap<StructId, usize>,
    by_frame: HashMap<(VId, Option<usize>), Nodes>,
    held: HashMap<Span, Nodes>,
    work: Vec<ir::ExprId>,
    dynamic: Vec<bool>,
    roots: Vec<usize>,
    batched: Vec<usize>,
    batches: Vec<(usize, usize)>,
    graph: Graph,
    sort: SortBufs,
}

impl TopoScratch {
    fn clear(&mut self) {
        // A buffer grown for one huge struct is let go rather than cleared for every later one.
        const KEEP: usize = 4096;
        if self.graph.labels.capacity() > KEEP || self.metas.capacity() > KEEP {
            *self = TopoScratch::default();
            return;
        }
        self.metas.clear();
        self.by_sid.clear();
        self.by_frame.clear();
        self.held.clear();
        self.work.clear();
        self.dynamic.clear();
        self.roots.clear();
        self.batched.clear();
        self.batches.clear();
        self.graph.clear();
    }
}

/// Nodes of the graph (or metas): mostly one or two.
type Nodes = smallvec::SmallVec<[usize; 4]>;

/// The successors of a label in the graph: mostly one or two.
type Succ = smallvec::SmallVec<[usize; 2]>;

/// No literal owns the label yet.
const NO_OWNER: usize = usize::MAX;

/// A graph of labels with edges "comes before"; each label remembers the literal that last
/// ordered it.
#[derive(Default)]
struct Graph {
    labels: Vec<Label>,
    index: HashMap<Label, usize>,
    succ: Vec<Succ>,
    owner: Vec<usize>,
}

/// The buffers of [`Graph::sort`]; `out` holds its result, node indices in order.
#[derive(Default)]
struct SortBufs {
    rank: Vec<usize>,
    rank_of: Vec<usize>,
    indeg: Vec<u32>,
    heap: BinaryHeap<Reverse<usize>>,
    out: Vec<usize>,
    comp: CompBufs,
}

/// The buffers of [`tarjan`] and [`Graph::sort_components`].
#[derive(Default)]
struct CompBufs {
    index: Vec<usize>,
    low: Vec<usize>,
    on_stack: Vec<bool>,
    stack: Vec<usize>,
    work: Vec<(usize, usize)>,
    /// The component of each node.
    comp: Vec<usize>,
    members: Vec<usize>,
    start: Vec<usize>,
    edges: Vec<(usize, usize)>,
    first: Vec<usize>,
    indeg: Vec<usize>,
}

impl Graph {
    fn clear(&mut self) {
        self.labels.clear();
        self.index.clear();
        self.succ.clear();
        self.owner.clear();
    }

    fn node(&mut self, l: Label) -> usize {
        let next = self.labels.len();
        let i = *self.index.entry(l).or_insert(next);
        if i == next {
            self.labels.push(l);
            self.succ.push(Succ::new());
            self.owner.push(NO_OWNER);
        }
        i
    }

    #[cfg(test)]
    fn edge(&mut self, a: Label, b: Label) {
        let (x, y) = (self.node(a), self.node(b));
        self.edge_at(x, y);
    }

    fn edge_at(&mut self, x: usize, y: usize) {
        if !self.succ[x].contains(&y) {
            self.succ[x].push(y);
        }
    }

    /// The nodes (into `bufs.out`), strongly connected components in topological order, the
    /// smallest ready component first; the labels of a component by name.
    fn sort(&self, cmp: impl Fn(Label, Label) -> Ordering, bufs: &mut SortBufs) {
        let n = self.labels.len();
        bufs.rank.clear();
        bufs.rank.extend(0..n);
        // Ties (two labels of one name) keep node order, as a stable sort would.
        bufs.rank
            .sort_unstable_by(|&a, &b| cmp(self.labels[a], self.labels[b]).then(a.cmp(&b)));
        bufs.rank_of.clear();
        bufs.rank_of.resize(n, 0);
        for (r, &i) in bufs.rank.iter().enumerate() {
            bufs.rank_of[i] = r;
        }
        if !self.sort_acyclic(bufs) {
            self.sort_components(bufs);
        }
    }

    /// [`Graph::sort`] through the strongly connected components, into `bufs.out`: the
    /// members of a component in rank order, the ready component with the smallest first rank
    /// first. (Two components share no rank, so their first ranks decide between them as the
    /// whole lists of their ranks would.)
    fn sort_components(&self, bufs: &mut SortBufs) {
        let n = self.labels.len();
        let SortBufs {
            rank,
            rank_of,
            heap,
            out,
            comp: c,
            ..
        } = bufs;
        let ncomp = tarjan(&self.succ, c);
        let comp = &c.comp;
        // The members of each component, together and in rank order: `members[start[k]..
        // start[k + 1]]` for component `k`.
        c.members.clear();
        c.members.extend(0..n);
        c.members.sort_unstable_by_key(|&i| (comp[i], rank_of[i]));
        c.start.clear();
        c.start.resize(ncomp + 1, 0);
        for &i in &c.members {
            c.start[comp[i] + 1] += 1;
        }
        for k in 0..ncomp {
            c.start[k + 1] += c.start[k];
        }
        // The edges between components, once each, by their source: `edges[first[k]..
        // first[k + 1]]` leave component `k`.
        c.edges.clear();
        for (i, ss) in self.succ.iter().enumerate() {
            for &j in ss {
                if comp[i] != comp[j] {
                    c.edges.push((comp[i], comp[j]));
                }
            }
        }
        c.edges.sort_unstable();
        c.edges.dedup();
        c.first.clear();
        c.first.resize(ncomp + 1, 0);
        c.indeg.clear();
        c.indeg.resize(ncomp, 0);
        for &(a, b) in &c.edges {
            c.first[a + 1] += 1;
            c.indeg[b] += 1;
        }
        for k in 0..ncomp {
            c.first[k + 1] += c.first[k];
        }
        // A component waits in the heap under its first rank.
        let first_rank = |k: usize| rank_of[c.members[c.start[k]]];
        heap.clear();
        heap.extend(
            (0..ncomp)
                .filter(|&k| c.indeg[k] == 0)
                .map(|k| Reverse(first_rank(k))),
        );
        out.clear();
        while let Some(Reverse(r)) = heap.pop() {
            let k = comp[rank[r]];
            out.extend_from_slice(&c.members[c.start[k]..c.start[k + 1]]);
            for e in c.first[k]..c.first[k + 1] {
                let d = c.edges[e].1;
                c.indeg[d] -= 1;
                if c.indeg[d] == 0 {
                    heap.push(Reverse(first_rank(d)));
                }
            }
        }
    }
}
impl Graph {
    /// [`Graph::sort`] when every component is a single label (the usual case): the smallest
    /// ready label first, by its rank, into `bufs.out`. False when the labels form a cycle.
    fn sort_acyclic(&self, bufs: &mut SortBufs) -> bool {
        let n = self.labels.len();
        let SortBufs {
            rank,
            rank_of,
            indeg,
            heap,
            out,
            ..
        } = bufs;
        indeg.clear();
        indeg.resize(n, 0);
        for (i, ss) in self.succ.iter().enumerate() {
            for &j in ss {
                if i != j {
                    indeg[j] += 1;
                }
            }
        }
        heap.clear();
        heap.extend(
            rank_of
                .iter()
                .enumerate()
                .filter(|&(i, _)| indeg[i] == 0)
                .map(|(_, &r)| Reverse(r)),
        );
        out.clear();
        while let Some(Reverse(r)) = heap.pop() {
            let i = rank[r];
            out.push(i);
            for &j in &self.succ[i] {
                if j != i {
                    indeg[j] -= 1;
                    if indeg[j] == 0 {
                        heap.push(Reverse(rank_of[j]));
                    }
                }
            }
        }
        out.len() == n
    }
}

/// Tarjan's algorithm without recursion: the component of each node (into `b.comp`); the
/// number of components.
fn tarjan(succ: &[Succ], b: &mut CompBufs) -> usize {
    let n = succ.len();
    const NONE: usize = usize::MAX;
    let CompBufs {
        index,
        low,
        on_stack,
        stack,
        work,
        comp,
        ..
    } = b;
    for v in [&mut *index, &mut *low, &mut *comp] {
        v.clear();
        v.resize(n, NONE);
    }
    on_stack.clear();
    on_stack.resize(n, false);
    stack.clear();
    let mut next_index = 0;
    let mut ncomp = 0;
    for root in 0..n {
        if index[root] != NONE {
            continue;
        }
        // (node, next successor to visit)
        work.clear();
        work.push((root, 0));
        index[root] = next_index;
        low[root] = next_index;
        next_index += 1;
        stack.push(root);
        on_stack[root] = true;
        while let Some(&mut (v, ref mut i)) = work.last_mut() {
            if *i < succ[v].len() {
                let w = succ[v][*i];
                *i += 1;
                if index[w] == NONE {
                    index[w] = next_index;
                    low[w] = next_index;
                    next_index += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    work.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            work.pop();
            if let Some(&(u, _)) = work.last() {
                low[u] = low[u].min(low[v]);
            }
            if low[v] == index[v] {
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    comp[w] = ncomp;
                    if w == v {
                        break;
                    }
                }
                ncomp += 1;
            }
        }
    }
    ncomp
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A repeatable pseudo-random source: `next(m)` is in `0..m`.
    fn xorshift(mut seed: u64) -> impl FnMut(u64) -> usize {
        move |m| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % m) as usize
        }
    }

    /// Export of `src` as JSON, with or without the literals' span indexes.
    fn export_with_index(src: &str, index: bool) -> String {
        let mut inst =
            crate::eval::api::Instance::from_sources(&[("a.cue".into(), src.into())]).unwrap();
        if !index {
            for s in inst.rt.prog.structs.iter_mut() {
                std::rc::Rc::make_mut(s).span_index = None;
            }
        }
        inst.export_json().unwrap_or_else(|e| format!("error: {e}"))
    }

    #[test]
    fn span_indexes_do_not_change_the_field_order() {
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
        let mut indexed = 0;
        for _ in 0..60 {
            // A definition with many fields, some optional, and literals that order a few of
            // them differently, unified explicitly and implicitly.
            let n = 10 + next(30);
            let mut def = String::from("#D: {\n");
            for i in 0..n {
                let opt = if next(3) == 0 { "?" } else { "" };
                def.push_str(&format!("  f{i}{opt}: int | *{i}\n"));
            }
            def.push_str("}\n");
            let mut lit = String::new();
            for _ in 0..1 + next(6) {
                lit.push_str(&format!("f{}: {}, ", next(n as u64), next(100)));
            }
            let src = format!(
                "{def}x: #D & {{{lit}}}\ny: #D\ny: {{{lit}}}\nz: [#D & {{{lit}}}, {{#D, {lit}}}]\n"
            );
            if n >= ir::INDEX_DECLS {
                indexed += 1;
            }
            assert_eq!(
                export_with_index(&src, true),
                export_with_index(&src, false),
                "{src}"
            );
        }
        assert!(indexed > 10);
    }

    /// [`Graph::sort_components`] written plainly: a component's key is the whole list of its
    /// members' ranks, and every list is built anew.
    fn reference_sort(g: &Graph, rank_of: &[usize]) -> Vec<usize> {
        let mut b = CompBufs::default();
        let ncomp = tarjan(&g.succ, &mut b);
        let comp = b.comp;
        let mut members: Vec<Vec<usize>> = vec![Vec::new(); ncomp];
        for (i, &c) in comp.iter().enumerate() {
            members[c].push(i);
        }
        for m in &mut members {
            m.sort_by_key(|&i| rank_of[i]);
        }
        let mut indeg = vec![0usize; ncomp];
        let mut csucc: Vec<Vec<usize>> = vec![Vec::new(); ncomp];
        for (i, ss) in g.succ.iter().enumerate() {
            for &j in ss {
                let (a, b) = (comp[i], comp[j]);
                if a != b && !csucc[a].contains(&b) {
                    csucc[a].push(b);
                    indeg[b] += 1;
                }
            }
        }
        let key = |c: usize| -> Vec<usize> { members[c].iter().map(|&i| rank_of[i]).collect() };
        let mut heap: BinaryHeap<Reverse<(Vec<usize>, usize)>> = BinaryHeap::new();
        for (c, _) in indeg.iter().enumerate().filter(|(_, d)| **d == 0) {
            heap.push(Reverse((key(c), c)));
        }
        let mut out = Vec::new();
        while let Some(Reverse((_, c))) = heap.pop() {
            out.extend(members[c].iter().copied());
            for &d in &csucc[c] {
                indeg[d] -= 1;
                if indeg[d] == 0 {
                    heap.push(Reverse((key(d), d)));
                }
            }
        }
        out
    }

    /// The graph sorts agree: the one for acyclic graphs with the one through components, and
    /// that one with [`reference_sort`], on random graphs with and without cycles and random
    /// ranks, the buffers reused from graph to graph.
    #[test]
    fn graph_sorts_agree() {
        let mut next = xorshift(0x2545_f491_4f6c_dd1d);
        let mut names = crate::eval::label::Interner::default();
        let labels: Vec<Label> = (0..12).map(|i| names.ident(&format!("f{i}"))).collect();
        let (mut acyclic, mut cyclic) = (0, 0);
        let mut g = Graph::default();
        let mut bufs = SortBufs::default();
        for _ in 0..1000 {
            let n = 1 + next(11);
            g.clear();
            for &l in &labels[..n] {
                g.node(l);
            }
            // Mostly forward edges (a DAG); now and then a backward one or a self-loop.
            for _ in 0..next(2 * n as u64 + 1) {
                let (a, b) = (next(n as u64), next(n as u64));
                if a <= b || next(2) == 0 {
                    g.edge(labels[a], labels[b]);
                }
            }
            // Random ranks.
            bufs.rank.clear();
            bufs.rank.extend(0..n);
            for i in (1..n).rev() {
                bufs.rank.swap(i, next(i as u64 + 1));
            }
            bufs.rank_of.clear();
            bufs.rank_of.resize(n, 0);
            for (r, &i) in bufs.rank.iter().enumerate() {
                bufs.rank_of[i] = r;
            }
            let fast = g.sort_acyclic(&mut bufs).then(|| bufs.out.clone());
            g.sort_components(&mut bufs);
            assert_eq!(bufs.out, reference_sort(&g, &bufs.rank_of), "{:?}", g.succ);
            match fast {
                Some(fast) => {
                    acyclic += 1;
                    assert_eq!(fast, bufs.out, "{:?}", g.succ);
                }
                None => cyclic += 1,
            }
        }
        assert!(acyclic > 200 && cyclic > 100, "{acyclic} {cyclic}");
    }

    #[test]
    fn tarjan_finds_cycles() {
        // 0 -> 1 -> 2 -> 1, 3 alone
        let succ: Vec<Succ> = [&[1][..], &[2], &[1], &[]]
            .iter()
            .map(|s| s.iter().copied().collect())
            .collect();
        let mut b = CompBufs::default();
        assert_eq!(tarjan(&succ, &mut b), 3);
        let c = &b.comp;
        assert_eq!(c[1], c[2]);
        assert_ne!(c[0], c[1]);
        assert_ne!(c[3], c[0]);
    }
}
