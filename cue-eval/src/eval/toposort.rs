//! The order in which export writes the fields of a struct: CUE's topological sort of labels
//! (`internal/core/toposort`), so that JSON and YAML keys come out as `cue export` writes them.
//!
//! Every struct literal unified into a node says "these labels, in this order". The literals
//! are sorted by position (a literal brought by a reference, itself or as part of an enclosing
//! struct, stands where the outermost reference is written); at equal positions, literals with
//! dynamic fields go last, and the others keep the order in which CUE adds them to the node (its
//! own literals before those reached through references, which CUE resolves as later tasks).
//! They are then grouped into batches: literals at one position, or operands of
//! `&`, are unified *explicitly* and each adds its own order; a later literal of the same file
//! unified implicitly only adds the labels it introduces. Edges run from each label to the next
//! of its literal; the graph's strongly connected components are then emitted smallest first
//! (by label: integers, then raw bytes) among those whose predecessors are out.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

use rustc_hash::FxHashMap as HashMap;

use crate::ast::Span;

use super::StructInfo;
use super::label::Label;

struct Lit {
    id: u32,
    pos: Option<(u32, u32)>,
    explicit: bool,
    dynamic: bool,
    hops: u16,
    labels: Vec<Label>,
}

struct Batch {
    lits: Vec<usize>,
    explicit: bool,
    file: Option<u32>,
}

fn pos_of(s: Span) -> Option<(u32, u32)> {
    if s.start == 0 && s.end == 0 {
        None
    } else {
        Some((s.file.0, s.start))
    }
}

/// The order of `labels` (indices into it) given the struct literals of their node.
pub(super) fn order(
    structs: &[StructInfo],
    labels: &[Label],
    cmp: impl Fn(Label, Label) -> Ordering,
) -> Vec<usize> {
    let n = labels.len();
    let node: HashMap<Label, usize> = labels.iter().enumerate().map(|(i, &l)| (l, i)).collect();

    // 1. Literals, sorted by position; invalid positions last, dynamic ones last at a tie.
    let mut lits: Vec<Lit> = structs
        .iter()
        .map(|s| Lit {
            id: s.id,
            pos: pos_of(s.pos),
            explicit: s.explicit,
            dynamic: s.has_dynamic,
            hops: s.hops,
            labels: s.labels.iter().flatten().copied().collect(),
        })
        .collect();
    lits.sort_by(|a, b| match (a.pos, b.pos) {
        (Some(x), Some(y)) => x
            .cmp(&y)
            .then(a.dynamic.cmp(&b.dynamic))
            .then(a.hops.cmp(&b.hops)),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => a.dynamic.cmp(&b.dynamic).then(a.hops.cmp(&b.hops)),
    });

    // 2. Batches.
    let mut batches: Vec<Batch> = Vec::new();
    for (i, l) in lits.iter().enumerate() {
        if let Some(b) = batches.last_mut()
            && !l.dynamic
            && l.pos.is_some()
            && lits[b.lits[0]].pos == l.pos
        {
            b.lits.push(i);
            continue;
        }
        batches.push(Batch {
            lits: vec![i],
            explicit: false,
            file: l.pos.map(|p| p.0),
        });
    }
    for b in &mut batches {
        b.explicit = b.lits.len() > 1 || lits[b.lits[0]].explicit;
    }
    let mut merged: Vec<Batch> = Vec::new();
    for b in batches {
        if let Some(last) = merged.last_mut()
            && last.explicit
            && b.explicit
            && last.file == b.file
        {
            last.lits.extend(b.lits);
            continue;
        }
        merged.push(b);
    }

    // 3. Edges.
    let mut succ: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut previous: Vec<usize> = Vec::new();
    let mut prev_file: Option<Option<u32>> = None;
    // Per label: the literals (index, file) that introduced it.
    let mut seen: HashMap<Label, Vec<(u32, Option<u32>)>> = HashMap::default();
    for b in &merged {
        if prev_file.is_some_and(|f| f != b.file) {
            previous.clear();
        }
        prev_file = Some(b.file);
        let start = previous.clone();
        let mut next: Vec<usize> = Vec::new();
        for &li in &b.lits {
            let lit = &lits[li];
            let file = lit.pos.map(|p| p.0);
            let mut prev = start.clone();
            let mut here: Vec<Label> = Vec::new();
            for &l in &lit.labels {
                if here.contains(&l) {
                    continue;
                }
                here.push(l);
                let others = seen.entry(l).or_default();
                // The same literal met again (through another reference) is not "another".
                let skip = !b.explicit && others.iter().any(|&(o, f)| o != lit.id && f == file);
                others.push((lit.id, file));
                if skip {
                    continue;
                }
                let Some(&x) = node.get(&l) else {
                    continue;
                };
                for &p in &prev {
                    if p != x && !succ[p].contains(&x) {
                        succ[p].push(x);
                    }
                }
                prev = vec![x];
            }
            for p in prev {
                if !next.contains(&p) {
                    next.push(p);
                }
            }
        }
        previous = next;
    }

    // 4. Strongly connected components, emitted smallest ready first.
    let mut rank: Vec<usize> = (0..n).collect();
    rank.sort_by(|&a, &b| cmp(labels[a], labels[b]));
    let mut rank_of = vec![0; n];
    for (r, &i) in rank.iter().enumerate() {
        rank_of[i] = r;
    }
    let comp = tarjan(&succ);
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
    for (i, ss) in succ.iter().enumerate() {
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

/// Tarjan's algorithm without recursion: the component of each node.
fn tarjan(succ: &[Vec<usize>]) -> Vec<usize> {
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

    #[test]
    fn tarjan_finds_cycles() {
        // 0 -> 1 -> 2 -> 1, 3 alone
        let succ = vec![vec![1], vec![2], vec![1], vec![]];
        let c = tarjan(&succ);
        assert_eq!(c[1], c[2]);
        assert_ne!(c[0], c[1]);
        assert_ne!(c[3], c[0]);
    }
}
