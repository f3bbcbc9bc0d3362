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
    decls: Vec<Decl>,
}

impl Meta {
    /// The first declaration of this literal that gave `label` the conjunct at `span`.
    fn decl_for(&self, lit: &ir::StructLit, span: Span, label: Label) -> Option<Decl> {
        let matches = |d: &Decl| match d {
            Decl::Field(l, s) => *s == span && *l == label,
            Decl::Dynamic(s) | Decl::Pattern(s) => *s == span,
        };
        match &lit.span_index {
            Some(m) => m
                .get(&span)
                .map(|&i| self.decls[i as usize])
                .filter(|d| matches(d)),
            None => self.decls.iter().find(|d| matches(d)).copied(),
        }
    }
}

impl Runtime {
    /// The regular arcs of `v` in the order export writes them.
    pub(super) fn sorted_arcs(&self, v: VId) -> Vec<VId> {
        let vx = self.v(v);
        let regular: Vec<VId> = vx
            .arcs
            .iter()
            .copied()
            .filter(|&a| self.v(a).label.is_regular())
            .collect();
        if regular.len() < 2 || vx.structs.is_empty() {
            return regular;
        }
        if let Some(lit) = self.sole_literal(v) {
            if self.in_literal_order(lit, &regular) {
                return regular;
            }
            if let Some(order) = self.single_literal_order(lit, &regular) {
                return order;
            }
        }
        let labels = self.feature_order(v);
        let at: HashMap<Label, VId> = regular.iter().map(|&a| (self.v(a).label, a)).collect();
        let mut out: Vec<VId> = labels.iter().filter_map(|l| at.get(l).copied()).collect();
        if out.len() != regular.len() {
            // Every arc is a node of the graph; this only guards against a label met twice.
            for a in regular {
                if !out.contains(&a) {
                    out.push(a);
                }
            }
        }
        out
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

    /// CUE's `VertexFeatures`: every label of `v`'s arcs and literals, in export order.
    fn feature_order(&self, v: VId) -> Vec<Label> {
        let vx = self.v(v);

        // 1. One meta per literal, in the order of their first addition.
        let mut metas: Vec<Meta> = Vec::new();
        let mut by_sid: HashMap<StructId, usize> = HashMap::default();
        // A literal's fields carry its frame; a pattern's conjuncts carry a copy of it naming
        // the label, with the same vertex and parent scope.
        let frame_key = |e: &super::EnvRef| {
            (
                e.vertex,
                e.up.as_ref().map(|u| std::rc::Rc::as_ptr(u) as usize),
            )
        };
        let mut by_frame: HashMap<(VId, Option<usize>), Vec<usize>> = HashMap::default();
        for s in &vx.structs {
            let i = match by_sid.get(&s.id) {
                Some(&i) => {
                    metas[i].repeats += 1;
                    i
                }
                None => {
                    let lit = &self.prog.structs[s.id as usize];
                    let decls = lit
                        .decls
                        .iter()
                        .filter_map(|d| match d {
                            ir::Decl::Field { label, span, .. } => Some(Decl::Field(*label, *span)),
                            ir::Decl::Dynamic { span, .. } => Some(Decl::Dynamic(*span)),
                            ir::Decl::Pattern { span, .. } => Some(Decl::Pattern(*span)),
                            _ => None,
                        })
                        .collect();
                    by_sid.insert(s.id, metas.len());
                    metas.push(Meta {
                        sid: s.id,
                        pos: self.pos_of(lit.span),
                        explicit: false,
                        comp_id: s.comp_id,
                        repeats: 0,
                        hops: s.hops,
                        decls,
                    });
                    metas.len() - 1
                }
            };
            let list = by_frame.entry(frame_key(&s.frame)).or_default();
            if !list.contains(&i) {
                list.push(i);
            }
        }

        // 2. The references that hold literals: at first, the embeddings of each literal.
        let mut held: HashMap<Span, Vec<usize>> = HashMap::default();
        for (i, m) in metas.iter().enumerate() {
            for d in &self.prog.structs[m.sid as usize].decls {
                if let ir::Decl::Embed(e, _) = d {
                    held.entry(self.prog.span(*e)).or_default().push(i);
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
                let Some(cands) = by_frame.get(&frame_key(env)) else {
                    continue;
                };
                let Some((i, decl)) = cands.iter().find_map(|&i| {
                    let lit = &self.prog.structs[metas[i].sid as usize];
                    metas[i].decl_for(lit, c.span, label).map(|d| (i, d))
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
                let list = held.entry(r).or_default();
                if !list.contains(&i) {
                    list.push(i);
                }
                let p = self.pos_of(r);
                for &j in held[&r].iter() {
                    metas[j].pos = p;
                }
            }
        }
        // 4. Explicit unification: the literals held by an operand of `&` among the node's
        //    conjuncts and the embeddings of its literals.
        let mut work: Vec<ir::ExprId> = vx
            .conjuncts
            .iter()
            .filter_map(|c| match c.x {
                CExpr::Expr(e) => Some(e),
                _ => None,
            })
            .collect();
        for m in &metas {
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
                        if let Some(&i) = by_sid.get(sid) {
                            metas[i].explicit = true;
                        }
                    }
                    _ => {
                        for &i in held.get(&self.prog.span(o)).into_iter().flatten() {
                            metas[i].explicit = true;
                        }
                    }
                }
                work.push(o);
            }
        }

        let has_dyn = |i: usize, m: &Meta| {
            m.decls
                .iter()
                .any(|d| matches!(d, Decl::Dynamic(s) if dyn_labels.contains_key(&(i, *s))))
        };
        let dynamic: Vec<bool> = metas
            .iter()
            .enumerate()
            .map(|(i, m)| has_dyn(i, m))
            .collect();

        // 5. Roots sorted by position, dynamic ones last at a tie (a stable sort).
        let mut roots: Vec<usize> = (0..metas.len()).collect();
        roots.sort_by(|&a, &b| {
            cmp_pos(metas[a].pos, metas[b].pos)
                .then(dynamic[a].cmp(&dynamic[b]))
                .then(metas[a].hops.cmp(&metas[b].hops))
        });

        // 6. Batches: equal positions together; a comprehension's yields round by round.
        let mut batches: Vec<Vec<usize>> = Vec::new();
        let mut batch: Vec<usize> = Vec::new();
        let add_root = |r: usize, batch: &mut Vec<usize>, batches: &mut Vec<Vec<usize>>| {
            if batch.is_empty() || (metas[batch[0]].pos == metas[r].pos && !dynamic[r]) {
                batch.push(r);
            } else {
                append_batch(batches, std::mem::take(batch), &metas);
                batch.push(r);
            }
        };
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
                    add_root(r, &mut batch, &mut batches);
                }
            }
            i = end;
        }
        append_batch(&mut batches, batch, &metas);

        // 7. Edges.
        let mut g = Graph::with_capacity(vx.arcs.len());
        for &a in &vx.arcs {
            g.node(self.v(a).label);
        }
        let mut owner: HashMap<Label, usize> = HashMap::default();
        let mut previous: Labels = Labels::new();
        let mut prev_file: Option<Option<u32>> = None;
        for b in &batches {
            let explicit = is_explicit(b, &metas);
            let file = metas[b[0]].pos.map(|p| p.0);
            if prev_file.is_some_and(|f| f != file) {
                previous.clear();
            }
            prev_file = Some(file);
            let mut next = Labels::new();
            for &r in b {
                let m = &metas[r];
                let rfile = m.pos.map(|p| p.0);
                let mut prev = previous.clone();
                for d in &m.decls {
                    let label = match *d {
                        Decl::Field(l, _) => l,
                        Decl::Dynamic(s) => {
                            match dyn_labels.get_mut(&(r, s)).and_then(|q| q.pop_front()) {
                                Some(l) => l,
                                None => continue,
                            }
                        }
                        Decl::Pattern(_) => continue,
                    };
                    match owner.get(&label) {
                        // The same field again in the same literal.
                        Some(&o) if o == r => continue,
                        // The same field again in the same file, unified implicitly.
                        Some(&o)
                            if !explicit
                                && m.pos.is_some()
                                && metas[o].pos.map(|p| p.0) == rfile =>
                        {
                            continue;
                        }
                        _ => {}
                    }
                    g.node(label);
                    owner.insert(label, r);
                    for &p in &prev {
                        g.edge(p, label);
                    }
                    prev.clear();
                    prev.push(label);
                }
                next.extend(prev);
            }
            previous = next;
        }
        g.sort(|a, b| self.label_cmp(a, b))
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

/// Adds a batch, merging it into the previous one when both are explicit and in one file.
fn append_batch(batches: &mut Vec<Vec<usize>>, batch: Vec<usize>, metas: &[Meta]) {
    if batch.is_empty() {
        return;
    }
    if let Some(last) = batches.last_mut()
        && is_explicit(&batch, metas)
        && is_explicit(last, metas)
        && metas[batch[0]].pos.map(|p| p.0) == metas[last[0]].pos.map(|p| p.0)
    {
        last.extend(batch);
        return;
    }
    batches.push(batch);
}

/// The labels a literal's next field comes after: mostly one.
type Labels = smallvec::SmallVec<[Label; 4]>;

/// The successors of a label in the graph: mostly one or two.
type Succ = smallvec::SmallVec<[usize; 2]>;

/// A graph of labels with edges "comes before".
#[derive(Default)]
struct Graph {
    labels: Vec<Label>,
    index: HashMap<Label, usize>,
    succ: Vec<Succ>,
}

impl Graph {
    fn with_capacity(n: usize) -> Graph {
        let mut index = HashMap::default();
        index.reserve(n);
        Graph {
            labels: Vec::with_capacity(n),
            index,
            succ: Vec::with_capacity(n),
        }
    }

    fn node(&mut self, l: Label) -> usize {
        if let Some(&i) = self.index.get(&l) {
            return i;
        }
        self.labels.push(l);
        self.succ.push(Succ::new());
        self.index.insert(l, self.labels.len() - 1);
        self.labels.len() - 1
    }

    fn edge(&mut self, a: Label, b: Label) {
        let (x, y) = (self.node(a), self.node(b));
        if !self.succ[x].contains(&y) {
            self.succ[x].push(y);
        }
    }

    /// The labels, strongly connected components in topological order, the smallest ready
    /// component first; the labels of a component by name.
    fn sort(&self, cmp: impl Fn(Label, Label) -> Ordering) -> Vec<Label> {
        let n = self.labels.len();
        let mut rank: Vec<usize> = (0..n).collect();
        rank.sort_by(|&a, &b| cmp(self.labels[a], self.labels[b]));
        let mut rank_of = vec![0; n];
        for (r, &i) in rank.iter().enumerate() {
            rank_of[i] = r;
        }
        match self.sort_acyclic(&rank, &rank_of) {
            Some(out) => out,
            None => self.sort_components(&rank_of),
        }
    }

    /// [`Graph::sort`] through the strongly connected components, each ordered by the ranks
    /// of its labels.
    fn sort_components(&self, rank_of: &[usize]) -> Vec<Label> {
        let n = self.labels.len();
        let comp = tarjan(&self.succ);
        let ncomp = comp.iter().copied().max().map_or(0, |m| m + 1);
        let mut members: Vec<Vec<usize>> = vec![Vec::new(); ncomp];
        for (i, &c) in comp.iter().enumerate() {
            members[c].push(i);
        }
        for m in &mut members {
            m.sort_by_key(|&i| rank_of[i]);
        }
        let mut indeg = vec![0usize; ncomp];
        let mut csucc: Vec<Vec<usize>> = vec![Vec::new(); ncomp];
        for (i, ss) in self.succ.iter().enumerate() {
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
        let mut out = Vec::with_capacity(n);
        while let Some(Reverse((_, c))) = heap.pop() {
            out.extend(members[c].iter().map(|&i| self.labels[i]));
            for &d in &csucc[c] {
                indeg[d] -= 1;
                if indeg[d] == 0 {
                    heap.push(Reverse((key(d), d)));
                }
            }
        }
        out
    }
}
impl Graph {
    /// [`Graph::sort`] when every component is a single label (the usual case): the smallest
    /// ready label first, by its rank. `None` when the labels form a cycle.
    fn sort_acyclic(&self, rank: &[usize], rank_of: &[usize]) -> Option<Vec<Label>> {
        let n = self.labels.len();
        let mut indeg = vec![0u32; n];
        for (i, ss) in self.succ.iter().enumerate() {
            for &j in ss {
                if i != j {
                    indeg[j] += 1;
                }
            }
        }
        let mut heap: BinaryHeap<Reverse<usize>> = rank_of
            .iter()
            .enumerate()
            .filter(|&(i, _)| indeg[i] == 0)
            .map(|(_, &r)| Reverse(r))
            .collect();
        let mut out = Vec::with_capacity(n);
        while let Some(Reverse(r)) = heap.pop() {
            let i = rank[r];
            out.push(self.labels[i]);
            for &j in &self.succ[i] {
                if j != i {
                    indeg[j] -= 1;
                    if indeg[j] == 0 {
                        heap.push(Reverse(rank_of[j]));
                    }
                }
            }
        }
        (out.len() == n).then_some(out)
    }
}

/// Tarjan's algorithm without recursion: the component of each node.
fn tarjan(succ: &[Succ]) -> Vec<usize> {
    let n = succ.len();
    const NONE: usize = usize::MAX;
    let mut index = vec![NONE; n];
    let mut low = vec![0; n];
    let mut on_stack = vec![false; n];
    let mut stack = Vec::new();
    let mut comp = vec![NONE; n];
    let mut next_index = 0;
    let mut ncomp = 0;
    for root in 0..n {
        if index[root] != NONE {
            continue;
        }
        // (node, next successor to visit)
        let mut work: Vec<(usize, usize)> = vec![(root, 0)];
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
    comp
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

    #[test]
    fn acyclic_graphs_sort_as_their_components_do() {
        let mut next = xorshift(0x2545_f491_4f6c_dd1d);
        let mut names = crate::eval::label::Interner::default();
        let labels: Vec<Label> = (0..10).map(|i| names.ident(&format!("f{i}"))).collect();
        let (mut acyclic, mut cyclic) = (0, 0);
        for _ in 0..500 {
            let n = 1 + next(9);
            let mut g = Graph::default();
            for &l in &labels[..n] {
                g.node(l);
            }
            // Mostly forward edges (a DAG); now and then a backward one or a self-loop.
            for _ in 0..next(2 * n as u64 + 1) {
                let (a, b) = (next(n as u64), next(n as u64));
                if a <= b || next(8) == 0 {
                    g.edge(labels[a], labels[b]);
                }
            }
            let rank: Vec<usize> = (0..n).rev().collect();
            let mut rank_of = vec![0; n];
            for (r, &i) in rank.iter().enumerate() {
                rank_of[i] = r;
            }
            match g.sort_acyclic(&rank, &rank_of) {
                Some(fast) => {
                    acyclic += 1;
                    assert_eq!(fast, g.sort_components(&rank_of), "{:?}", g.succ);
                }
                None => cyclic += 1,
            }
        }
        assert!(acyclic > 100 && cyclic > 10, "{acyclic} {cyclic}");
    }

    #[test]
    fn tarjan_finds_cycles() {
        // 0 -> 1 -> 2 -> 1, 3 alone
        let succ: Vec<Succ> = [&[1][..], &[2], &[1], &[]]
            .iter()
            .map(|s| s.iter().copied().collect())
            .collect();
        let c = tarjan(&succ);
        assert_eq!(c[1], c[2]);
        assert_ne!(c[0], c[1]);
        assert_ne!(c[3], c[0]);
    }
}
