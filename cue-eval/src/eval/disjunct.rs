//! Disjunctions: the cross product of a vertex's disjunctions, one clone of the vertex per
//! combination, elimination of the clones that fail, deduplication, and CUE's default rules
//! (modes "maybe" < "is" < "not" combined by maximum, with the "dropped default" rule), worked
//! out one disjunction after the other as CUE's `crossProduct` does: the results of a
//! disjunction nested in a chosen alternative join the combinations of the round that chose
//! it, with their own modes.

use std::rc::Rc;

use super::ir::{Expr, ExprId};
use super::unify::NodeState;
use super::value::{Bottom, ErrCode, Value};
use super::*;

pub(super) const MAYBE: u8 = 0;
const IS: u8 = 1;
const NOT: u8 = 2;

struct Disjunction {
    /// Each alternative and its default mode.
    alts: Vec<(Conjunct, u8)>,
}

/// How a combination of a round was made: which combination of the round before it
/// extends, with which alternative's mode, and, when the chosen alternative held a disjunction
/// of its own, the mode that nested disjunction gave it.
#[derive(Clone, Copy)]
struct Source {
    parent: usize,
    alt_mode: u8,
    nested: Nested,
}

#[derive(Clone, Copy)]
enum Nested {
    /// No nested disjunction.
    None,
    /// A nested disjunction left this one result, with this mode.
    Single(u8),
    /// One of the results of a nested disjunction, with its mode and its alternative's.
    Multi(u8, u8),
}

/// A combination of a round, and every way it was made (equal ones are kept once).
struct Entry {
    /// The alternative chosen for each disjunction by key, nested ones included, beyond those
    /// the expanded vertex inherited.
    choices: smallvec::SmallVec<[(u64, usize); 4]>,
    vertex: VId,
    /// Its default mode (CUE's `defaultMode`).
    mode: u8,
    /// The mode of the alternative that made it last (CUE's `origDefaultMode`).
    orig: u8,
    sources: smallvec::SmallVec<[Source; 1]>,
}

/// Gives the combinations of one round their default modes, from the modes of the round
/// before (`prev`), as CUE's `crossProduct` does with the combinations that are `alive` (all
/// when `None`); returns each one's mode and its last alternative's.
fn one_round_modes(
    round: &mut [Entry],
    alive: Option<&[bool]>,
    prev: &[(u8, u8)],
) -> Vec<(u8, u8)> {
    let on = |i: usize| alive.is_none_or(|a| a[i]);
    let sources = || {
        round
            .iter()
            .enumerate()
            .filter(|(i, _)| on(*i))
            .flat_map(|(_, e)| e.sources.iter())
    };
    let left_drops = !sources().any(|s| {
        let (m, o) = prev[s.parent];
        m == IS || o == IS
    });
    let right_drops = !sources().any(|s| s.alt_mode == IS);
    let mut decided = false;
    for (i, e) in round.iter_mut().enumerate() {
        let alive = on(i);
        let mut first = true;
        for s in &e.sources {
            let p_mode = prev[s.parent].0;
            let (mode, orig) = match s.nested {
                Nested::None => (
                    combine2(p_mode, s.alt_mode, left_drops, right_drops),
                    s.alt_mode,
                ),
                Nested::Single(x) => (combine2(x, s.alt_mode, left_drops, right_drops), s.alt_mode),
                Nested::Multi(x, xo) => {
                    let m = combine2(p_mode, s.alt_mode.max(x), left_drops, false);
                    decided |= alive && m != MAYBE;
                    (m, xo)
                }
            };
            if first {
                (e.mode, e.orig) = (mode, orig);
                first = false;
            } else if mode == IS {
                e.mode = IS;
            }
        }
    }
    if decided {
        for e in round.iter_mut() {
            if e.mode == MAYBE {
                e.mode = NOT;
            }
        }
    }
    round.iter().map(|e| (e.mode, e.orig)).collect()
}

/// The default modes of every round's combinations, from the first round on, as CUE's
/// `crossProduct` gives them, except that a combination no later round extends counts as
/// eliminated in its own round already: CUE eliminates such a combination early where it
/// breaks closedness, which this evaluator checks only once all choices are made.
fn round_modes(rounds: &mut [Vec<Entry>], start: (u8, u8)) {
    // Which combinations of each round some final one extends.
    let mut alive: Vec<Vec<bool>> = rounds.iter().map(|r| vec![false; r.len()]).collect();
    if let Some(l) = alive.last_mut() {
        l.fill(true);
    }
    for i in (1..rounds.len()).rev() {
        let (before, after) = alive.split_at_mut(i);
        for (e, &on) in rounds[i].iter().zip(after[0].iter()) {
            if on {
                for s in &e.sources {
                    before[i - 1][s.parent] = true;
                }
            }
        }
    }
    let mut prev: Vec<(u8, u8)> = vec![start];
    for (round, alive) in rounds.iter_mut().zip(alive.iter()) {
        prev = one_round_modes(round, Some(alive), &prev);
    }
}

/// The default mode of an alternative: undecided in a disjunction without marks, else
/// whether it is marked.
fn mark_mode(has_defaults: bool, marked: bool) -> u8 {
    match (has_defaults, marked) {
        (false, _) => MAYBE,
        (true, true) => IS,
        (true, false) => NOT,
    }
}

/// CUE's `combineDefault2`: the modes of two sides met, a side whose defaults were all
/// eliminated counting as undecided.
fn combine2(a: u8, b: u8, drops_a: bool, drops_b: bool) -> u8 {
    let a = if drops_a { MAYBE } else { a };
    let b = if drops_b { MAYBE } else { b };
    a.max(b)
}

/// How deep [`Runtime::kind_bound`] follows references and alternatives.
const MAX_KIND_DEPTH: u8 = 8;

/// Limits the cross product so that a pathological input ends with an error.
const MAX_CANDIDATES: usize = 20_000;

impl Runtime {
    fn disjunction_of(&mut self, c: &Conjunct) -> Disjunction {
        let n = match &c.x {
            CExpr::Expr(id) => match self.prog.expr(*id) {
                Expr::Disj(alts) => alts.len(),
                _ => 1,
            },
            CExpr::Value(Value::Vertex(w)) => self
                .v(self.deref(*w))
                .disj
                .as_ref()
                .map_or(1, |d| d.alts.len()),
            CExpr::Value(Value::Or(vs)) => vs.len(),
            _ => 1,
        };
        let mut alts = Vec::with_capacity(n);
        while let Some(alt) = self.alternative(c, alts.len()) {
            alts.push(alt);
        }
        Disjunction { alts }
    }

    /// Alternative `j` of disjunction conjunct `c` as a conjunct of its own, and its default
    /// mode; a conjunct that is no disjunction is its own only alternative.
    fn alternative(&mut self, c: &Conjunct, j: usize) -> Option<(Conjunct, u8)> {
        let ci = CloseInfo {
            optional: true,
            ..c.ci.clone()
        };
        match &c.x {
            CExpr::Expr(id) => {
                if let Expr::Disj(alts) = self.prog.expr(*id) {
                    let marks = alts.iter().any(|a| a.1);
                    let &(e, d) = alts.get(j)?;
                    let conj = Conjunct {
                        env: c.env.clone(),
                        x: CExpr::Expr(e),
                        ci,
                        span: self.prog.span(e),
                    };
                    return Some((conj, mark_mode(marks, d)));
                }
            }
            CExpr::Value(Value::Vertex(w)) => {
                let w = self.deref(*w);
                if let Some(d) = &self.v(w).disj {
                    let &a = d.alts.get(j)?;
                    let marks = d.has_defaults();
                    let conj = Conjunct {
                        env: None,
                        x: CExpr::Vertex(a),
                        ci,
                        span: c.span,
                    };
                    return Some((conj, mark_mode(marks, j < d.num_defaults)));
                }
            }
            CExpr::Value(Value::Or(vs)) => {
                let conj = Conjunct {
                    env: None,
                    x: CExpr::Value(vs.get(j)?.clone()),
                    ci,
                    span: c.span,
                };
                return Some((conj, MAYBE));
            }
            _ => {}
        }
        (j == 0).then(|| (c.clone(), MAYBE))
    }

    /// The identity of a disjunction conjunct, stable across clones of one vertex.
    /// A disjunction computed afresh on each evaluation (the result of `or(list)`, a builtin
    /// call) is known by where it was written, so that a clone re-evaluating it finds its choice.
    pub(super) fn disj_key(&self, c: &Conjunct) -> u64 {
        let by_span = |s: Span| {
            (4u64 << 40)
                ^ ((s.file.0 as u64) << 48)
                ^ ((s.start as u64) << 20)
                ^ (s.end as u64 & 0xf_ffff)
        };
        match &c.x {
            CExpr::Expr(id) => *id as u64,
            CExpr::Value(Value::Vertex(w)) if c.span != Span::default() && self.v(*w).anonymous => {
                by_span(c.span)
            }
            CExpr::Value(Value::Or(_)) if c.span != Span::default() => by_span(c.span),
            CExpr::Value(Value::Vertex(w)) => (1u64 << 40) | *w as u64,
            CExpr::Value(Value::Or(vs)) => {
                (2u64 << 40) | (Rc::as_ptr(vs) as *const () as usize as u64 & 0xff_ffff_ffff)
            }
            CExpr::Vertex(w) => (3u64 << 40) | *w as u64,
            _ => u64::MAX,
        }
    }

    /// Records a disjunction met while evaluating `v`, or applies the choice a clone made.
    pub(super) fn push_disjunction(&mut self, v: VId, st: &mut NodeState, c: Conjunct) {
        let key = self.disj_key(&c);
        if let Some(ch) = self.v(v).choices().cloned()
            && let Some(&(_, j)) = ch.iter().find(|(k, _)| *k == key)
        {
            if let Some((alt, _)) = self.alternative(&c, j) {
                if self.group_closed(alt.ci.group)
                    && let Some(m) = self.vm(v).clone.as_mut()
                {
                    m.closed_choice = true;
                }
                if st.conjuncts_done {
                    self.add_conjunct(v, st, alt);
                } else {
                    st.chosen.push(alt);
                }
            }
            return;
        }
        if let Some(d) = self.v(v).defer_disj()
            && d.contains(&key)
        {
            return;
        }
        st.disjs.push(c);
    }

    /// A clone of `v` for a combination of `choices`, whose mode and last alternative's mode
    /// are `mode` and `orig`; `v`'s own choices and deferred disjunctions carry over.
    fn clone_for(
        &mut self,
        v: VId,
        choices: impl Iterator<Item = (u64, usize)>,
        defer: Option<Rc<Vec<u64>>>,
        (mode, orig): (u8, u8),
    ) -> VId {
        let (parent, label, at, conjs) = {
            let vx = self.v(v);
            (vx.parent, vx.label, vx.arc_type, vx.conjuncts.clone())
        };
        let inherited = self.v(v).choices().cloned();
        let defer = match (self.v(v).defer_disj(), defer) {
            (Some(outer), Some(inner)) => {
                Some(Rc::new(outer.iter().chain(inner.iter()).copied().collect()))
            }
            (Some(outer), None) => Some(outer.clone()),
            (None, inner) => inner,
        };
        let of = self.v(v).clone_of().unwrap_or(v);
        let c = self.new_vertex(parent, label, at);
        let cx = self.vm(c);
        cx.is_disjunct = true;
        cx.conjuncts = conjs;
        let mut all = inherited.map(|r| (*r).clone()).unwrap_or_default();
        all.extend(choices);
        cx.clone = Some(Box::new(CloneMarks {
            clone_of: of,
            choices: Rc::new(all),
            defer_disj: defer,
            mode,
            orig,
            single: None,
            closed_choice: false,
        }));
        c
    }

    /// Whether a vertex failed (permanently) after evaluation.
    fn failed(&mut self, c: VId, finalize: bool) -> Option<Rc<Bottom>> {
        self.evaluate(c);
        let d = self.deref(c);
        if let Some(e) = &self.v(d).err
            && !e.is_incomplete()
        {
            return Some(e.clone());
        }
        if finalize {
            if let Some(e) = self.finalize(c, false) {
                return Some(e);
            }
            return self.incomplete_disjunct(c);
        }
        None
    }

    /// As CUE's `getErrorAll` on a finalized disjunct: an incomplete error of the disjunct
    /// itself or of one of its regular fields eliminates it too (`*a.x | 1` is `1` when `a`
    /// has no `x`; `*{v: m.b} | 3` is `3`). Cycle errors are left alone: they may still resolve.
    fn incomplete_disjunct(&mut self, c: VId) -> Option<Rc<Bottom>> {
        let d = self.deref(c);
        let own = |e: &Option<Rc<Bottom>>| {
            e.as_ref()
                .filter(|e| matches!(e.code, ErrCode::Incomplete | ErrCode::Undefined))
                // An operation on non-concrete operands stays a pending expression in CUE,
                // not an error recorded on the disjunct (`(int + 1) | (int + 1)`).
                .filter(|e| !e.msg.starts_with("invalid operand "))
                .cloned()
        };
        if let Some(e) = own(&self.v(d).err) {
            return Some(e);
        }
        if self.v(d).disj.is_some() {
            return None;
        }
        let arcs = self.v(d).arcs.clone();
        for a in arcs {
            let ax = self.v(a);
            if ax.arc_type == ArcType::Optional {
                break;
            }
            if ax.label.is_let() || !ax.label.is_regular() {
                continue;
            }
            let ad = self.deref(a);
            if let Some(e) = own(&self.v(ad).err) {
                return Some(e);
            }
            if let Some(e) = self.pending_validator_error(ad) {
                return Some(e);
            }
        }
        None
    }

    pub(super) fn expand_disjunctions(&mut self, v: VId, st: NodeState) {
        let keys: Vec<u64> = st.disjs.iter().map(|c| self.disj_key(c)).collect();
        let disjs: Vec<Disjunction> = st.disjs.iter().map(|c| self.disjunction_of(c)).collect();
        let leaf = disjs.len() == 1 && self.plain_leaf(v, &st);
        #[cfg(test)]
        let prune = !general_law::GENERAL.get() && !general_law::EVERY_COMBINATION.get();
        #[cfg(not(test))]
        let prune = true;
        let (mut cands, mut errors, pruned) = self.combinations(v, &keys, &disjs, leaf, prune);
        if cands.is_empty() && pruned {
            // Every combination fails: the error names each one's failure, so those left out
            // for their kinds are tried as well.
            (cands, errors, _) = self.combinations(v, &keys, &disjs, leaf, false);
        }
        if cands.is_empty() {
            let err = disjunction_error(errors);
            self.vm(v).err = Some(err);
            return;
        }
        self.choose_defaults(v, cands);
    }

    /// The combinations of one alternative of each of `disjs` that do not fail, in order, and
    /// the errors of those that do. With `prune`, an alternative that has no kind in common
    /// with the combination so far (a struct and a string: `"soft" & {...}`) is left out
    /// without a clone, as it would fail; the last value says whether any was.
    ///
    /// Each round meets the combinations so far with one disjunction, and gives each result
    /// its default mode as CUE's `crossProduct` does. A clone whose chosen alternative holds a
    /// disjunction of its own expands it at once; its results join the round in its place,
    /// each with the choice that made it, so that later rounds build on them.
    fn combinations(
        &mut self,
        v: VId,
        keys: &[u64],
        disjs: &[Disjunction],
        leaf: bool,
        prune: bool,
    ) -> (Vec<Entry>, Vec<Rc<Bottom>>, bool) {
        let start = self
            .v(v)
            .clone
            .as_ref()
            .map_or((MAYBE, MAYBE), |m| (m.mode, m.orig));
        let inherited = self.v(v).choices().map_or(0, |c| c.len());
        // The rounds so far; the one before the first is `v` itself.
        let mut rounds: Vec<Vec<Entry>> = Vec::with_capacity(disjs.len());
        let mut modes = vec![start];
        let mut errors: Vec<Rc<Bottom>> = Vec::new();
        let mut pruned = false;
        let n = disjs.len();
        // One scratch node state for the clones `choose_on_leaf` evaluates: plain values
        // leave nothing in it that another clone could see (no cycle, no task).
        let mut scratch = leaf.then(NodeState::default);
        for (i, d) in disjs.iter().enumerate() {
            let last = i + 1 == n;
            // The disjunctions an intermediate clone leaves for later: the same for all of them.
            let defer = (!last).then(|| Rc::new(keys[i + 1..].to_vec()));
            let alt_kinds: Vec<Option<Kind>> = if prune {
                d.alts
                    .iter()
                    .map(|(c, _)| self.conjunct_kind(c, 0))
                    .collect()
            } else {
                Vec::new()
            };
            let mut next: Vec<Entry> = Vec::new();
            let before = rounds.last().map_or(1, Vec::len);
            for p in 0..before {
                let (vertex, choices_so_far) = match rounds.last() {
                    Some(r) => (r[p].vertex, r[p].choices.clone()),
                    None => (v, Default::default()),
                };
                // The kinds the combination so far can take: `v`'s own conjuncts, or the
                // settled clone of an earlier round.
                let have = if !prune {
                    None
                } else if vertex == v {
                    let vx = self.v(v);
                    (vx.err.is_none() && !self.weak_kinds.contains(&v)).then_some(vx.kind)
                } else {
                    self.kind_bound(vertex, 0)
                };
                for (j, (alt, m)) in d.alts.iter().enumerate() {
                    if next.len() >= MAX_CANDIDATES {
                        self.aborted = Some("disjunction too large".into());
                        break;
                    }
                    if let (Some(have), Some(Some(k))) = (have, alt_kinds.get(j))
                        && !have.intersects(*k)
                    {
                        pruned = true;
                        continue;
                    }
                    let mut choices = choices_so_far.clone();
                    choices.push((keys[i], j));
                    let c =
                        self.clone_for(v, choices.iter().copied(), defer.clone(), (modes[p].0, *m));
                    if let Some(st) = scratch.as_mut() {
                        self.choose_on_leaf(c, v, alt, st);
                    }
                    if let Some(e) = self.failed(c, last) {
                        errors.push(e);
                        continue;
                    }
                    self.add_made(&mut next, c, choices, (p, *m), inherited, last);
                }
            }
            let empty = next.is_empty();
            // The modes the next round's clones start from, with what survived so far; with
            // more than one round, the final ones are worked out once all are made.
            modes = one_round_modes(&mut next, None, &modes);
            rounds.push(next);
            if empty {
                return (Vec::new(), errors, pruned);
            }
        }
        if rounds.len() > 1 {
            round_modes(&mut rounds, start);
        }
        (rounds.pop().unwrap_or_default(), errors, pruned)
    }

    /// Adds the results of clone `c`, made for `choices` from combination `parent` of the
    /// round before with an alternative of mode `alt_mode`: the clone, or the results of a
    /// disjunction nested in its alternative, each with the choice that made it when it is a
    /// clone of this one.
    fn add_made(
        &mut self,
        next: &mut Vec<Entry>,
        c: VId,
        choices: smallvec::SmallVec<[(u64, usize); 4]>,
        (parent, alt_mode): (usize, u8),
        inherited: usize,
        last: bool,
    ) {
        let dc = self.deref(c);
        let Some(inner) = self.v(dc).disj.clone() else {
            let nested = match self.v(c).clone.as_ref().and_then(|x| x.single) {
                Some(m) => Nested::Single(m),
                None => Nested::None,
            };
            let source = Source {
                parent,
                alt_mode,
                nested,
            };
            self.append_entry(next, c, choices, source, last);
            return;
        };
        for (k, &a) in inner.alts.iter().enumerate() {
            let (x_mode, x_orig) = inner.modes.get(k).copied().unwrap_or((MAYBE, MAYBE));
            let own = self
                .v(a)
                .choices()
                .filter(|ch| ch.len() >= inherited + choices.len())
                .filter(|ch| ch[inherited..inherited + choices.len()] == choices[..])
                .map(|ch| ch[inherited..].iter().copied().collect());
            let source = Source {
                parent,
                alt_mode,
                nested: Nested::Multi(x_mode, x_orig),
            };
            let choices = own.unwrap_or_else(|| choices.clone());
            self.append_entry(next, a, choices, source, last);
        }
    }

    /// Adds combination `c` of a round, made as `source` says, unless it equals one there:
    /// that one then stays, made both ways (CUE's `appendDisjunct`). Before the `last` round,
    /// a combination whose kind a literal of comprehensions set (see `Runtime::weak_kinds`)
    /// is kept apart: its kind hides what it was, so an equal one may still end otherwise
    /// (`int` and `_` with `{if false {a: 1}}` are both `{}` until `"a"` comes).
    ///
    /// A closed struct and an open one are told apart only when both extend the same
    /// combination of the round before: `cue` v0.17.1 keeps `{a: 1} | #S` and
    /// `{a: 1} & (_ | #S)` as two, but compares results of different combinations as
    /// unfinished nodes (`equalPartialNode`), without their closedness, so
    /// `(#S | {a: 1}) & ({a: 1} | null)` is `{a: 1}`.
    fn append_entry(
        &mut self,
        next: &mut Vec<Entry>,
        c: VId,
        choices: smallvec::SmallVec<[(u64, usize); 4]>,
        source: Source,
        last: bool,
    ) {
        let weak =
            |rt: &Self, x: VId| rt.weak_kinds.contains(&x) || rt.weak_kinds.contains(&rt.deref(x));
        let apart = !last && weak(self, c);
        for o in next.iter_mut() {
            if apart || !last && weak(self, o.vertex) {
                continue;
            }
            let closedness = o.sources[0].parent == source.parent;
            if self.equal_as(o.vertex, c, 0, closedness) {
                o.sources.push(source);
                return;
            }
        }
        next.push(Entry {
            choices,
            vertex: c,
            mode: MAYBE,
            orig: MAYBE,
            sources: smallvec::smallvec![source],
        });
    }

    /// A bound on the kinds vertex `w` can take, or `None` when none is known: those of its
    /// value once it is settled (its alternatives' for a disjunction), and before it is
    /// evaluated, those all its conjuncts allow so far. Conjuncts only narrow kinds, so later
    /// ones keep the bound; nothing is evaluated to find it.
    fn kind_bound(&self, w: VId, depth: u8) -> Option<Kind> {
        let w = self.deref(w);
        let wx = self.v(w);
        if depth > MAX_KIND_DEPTH || wx.err.is_some() || self.weak_kinds.contains(&w) {
            return None;
        }
        match wx.status {
            // Its value's kinds, when each alternative's bound is known too.
            Status::Evaluated | Status::Finalized => wx
                .disj
                .as_ref()
                .is_none_or(|d| {
                    d.alts
                        .iter()
                        .all(|&a| self.kind_bound(a, depth + 1).is_some())
                })
                .then(|| self.vertex_kind(w)),
            Status::Unprocessed if !wx.conjuncts.is_empty() => {
                let mut k = Kind::TOP;
                for c in &wx.conjuncts {
                    if let Some(ck) = self.conjunct_kind(c, depth + 1) {
                        k = k.and(ck);
                    }
                }
                Some(k)
            }
            _ => None,
        }
    }

    /// The kinds conjunct `c` can take, read without evaluating anything (see
    /// [`Self::kind_bound`]); `None` when not known.
    fn conjunct_kind(&self, c: &Conjunct, depth: u8) -> Option<Kind> {
        match &c.x {
            CExpr::Expr(id) => self.expr_kind(c.env.as_ref(), *id, depth),
            CExpr::Vertex(w) => self.kind_bound(*w, depth),
            _ => None,
        }
    }

    /// The kinds expression `id` can take: a literal's, a type's, a struct literal's that
    /// embeds nothing, those of the field a reference names (`#A`, `pkg.#B`, `a.b`), the
    /// union of a disjunction's and the meet of a conjunction's.
    fn expr_kind(&self, env: Option<&EnvRef>, id: ExprId, depth: u8) -> Option<Kind> {
        if depth > MAX_KIND_DEPTH {
            return None;
        }
        match self.prog.expr(id) {
            Expr::Null => Some(Kind::NULL),
            Expr::Bool(_) => Some(Kind::BOOL),
            Expr::Num(_, crate::num::NumKind::Int) => Some(Kind::INT),
            Expr::Num(_, crate::num::NumKind::Float) => Some(Kind::FLOAT),
            Expr::Str(_) => Some(Kind::STRING),
            Expr::Bytes(_) => Some(Kind::BYTES),
            Expr::Basic(k) | Expr::Range(k, _) => Some(*k),
            Expr::Struct(sid) => {
                // A literal made only of comprehensions is a struct only when nothing
                // concrete makes the node something else (see `NodeState::weak_struct`).
                let lit = &self.prog.structs[*sid as usize];
                (!lit.has_embed && !lit.only_comprehensions()).then_some(Kind::STRUCT)
            }
            Expr::List(_) => Some(Kind::LIST),
            Expr::Disj(alts) => alts.iter().try_fold(Kind::BOTTOM, |k, &(a, _)| {
                Some(k.or(self.expr_kind(env, a, depth + 1)?))
            }),
            Expr::Binary(crate::ast::BinaryOp::Unify, a, b) => {
                match (
                    self.expr_kind(env, *a, depth + 1),
                    self.expr_kind(env, *b, depth + 1),
                ) {
                    (Some(x), Some(y)) => Some(x.and(y)),
                    (x, y) => x.or(y),
                }
            }
            Expr::FieldRef { up, label } => {
                self.kind_bound(self.field_named(env, *up, *label)?, depth + 1)
            }
            Expr::Selector(x, label) => {
                let base = match self.prog.expr(*x) {
                    Expr::Import(pkg) => self.packages.get(*pkg as usize).copied().flatten()?,
                    Expr::FieldRef { up, label } => self.field_named(env, *up, *label)?,
                    _ => return None,
                };
                let base = self.deref(base);
                if self.v(base).disj.is_some() {
                    return None;
                }
                self.kind_bound(self.arc(base, *label)?, depth + 1)
            }
            _ => None,
        }
    }

    /// The field a reference `up` scopes out names, as it is now (nothing is evaluated).
    fn field_named(&self, env: Option<&EnvRef>, up: u32, label: Label) -> Option<VId> {
        self.arc(super::expr::env_up(env, up)?.vertex, label)
    }

    /// The surviving combinations as `v`'s value: the one left, or a disjunction of them with
    /// CUE's default modes.
    fn choose_defaults(&mut self, v: VId, cands: Vec<Entry>) {
        if let [one] = &cands[..] {
            let target = self.deref(one.vertex);
            let mode = one.mode;
            let vx = self.vm(v);
            vx.forward = Some(target);
            if let Some(m) = vx.clone.as_mut() {
                m.single = Some(mode);
            }
            return;
        }
        let mut alts = Vec::with_capacity(cands.len());
        let mut modes = Vec::with_capacity(cands.len());
        for c in cands.iter().filter(|c| c.mode == IS) {
            alts.push(self.deref(c.vertex));
            modes.push((c.mode, c.orig));
        }
        let num_defaults = alts.len();
        for c in cands.iter().filter(|c| c.mode != IS) {
            alts.push(self.deref(c.vertex));
            modes.push((c.mode, c.orig));
        }
        self.vm(v).disj = Some(Rc::new(DisjVal {
            alts,
            num_defaults,
            modes,
        }));
    }

    /// Whether `v`, whose only disjunction is about to be expanded, is a plain leaf: its other
    /// conjuncts gave it at most a kind, a scalar and bounds (no field, list, struct literal,
    /// error, or cycle still pending). A clone of such a vertex for an alternative that is a
    /// plain value is `v`'s value with that alternative added (see [`Runtime::choose_on_leaf`]).
    fn plain_leaf(&self, v: VId, st: &NodeState) -> bool {
        #[cfg(test)]
        if general_law::GENERAL.get() {
            return false;
        }
        let vx = self.v(v);
        let extra_plain = vx.extra.as_ref().is_none_or(|x| {
            x.list_len.is_none()
                && !x.list_open
                && x.patterns.is_empty()
                && x.list_patterns.is_empty()
                && x.open_groups.is_empty()
                && x.arc_map.is_none()
                && x.slots.is_none()
        });
        extra_plain
            && vx.arcs.is_empty()
            && vx.structs.is_empty()
            && vx.closed_groups.is_empty()
            && !vx.is_list
            && vx.err.is_none()
            && vx.disj.is_none()
            && vx.forward.is_none()
            && (vx.kind == value::Kind::TOP
                || !vx.kind.intersects(value::Kind::STRUCT)
                    && !vx.kind.intersects(value::Kind::LIST))
            && st.postponed.is_empty()
            && st.cyclic_refs.is_empty()
            && st.optional_refs.is_empty()
            && st.weak_struct.is_none()
            && !st.ancestor_cycle
            && !st.any_cycle
            && self.cycle_checks.is_empty()
            && self.aborted.is_none()
    }

    /// Gathers into `out` the plain values alternative `alt` is made of (literals, kinds,
    /// ranges and bounds of literals, joined by `&`), each with its position, in the order the
    /// general path adds them; false for an alternative of any other shape.
    fn plain_values(
        &self,
        alt: &Conjunct,
        out: &mut smallvec::SmallVec<[(ExprId, Span); 4]>,
    ) -> bool {
        let CExpr::Expr(id) = alt.x else { return false };
        let mut work: smallvec::SmallVec<[ExprId; 4]> = smallvec::smallvec![id];
        while let Some(e) = work.pop() {
            match self.prog.expr(e) {
                Expr::Binary(crate::ast::BinaryOp::Unify, a, b) => {
                    // `a` is added before `b`, as `add_expr_conjunct` splits them.
                    work.push(*b);
                    work.push(*a);
                }
                Expr::Null
                | Expr::Bool(_)
                | Expr::Num(..)
                | Expr::Str(_)
                | Expr::Bytes(_)
                | Expr::Basic(_)
                | Expr::Range(..) => out.push((e, self.prog.span(e))),
                Expr::Bound(_, x)
                    if matches!(
                        self.prog.expr(*x),
                        Expr::Null | Expr::Bool(_) | Expr::Num(..) | Expr::Str(_) | Expr::Bytes(_)
                    ) =>
                {
                    out.push((e, self.prog.span(e)))
                }
                _ => return false,
            }
        }
        true
    }

    /// Evaluates clone `c` of the plain leaf `v` (see [`Runtime::plain_leaf`]) for alternative
    /// `alt` when that is made of plain values: `v`'s value, then the alternative's values,
    /// as the general path adds them (the node's other conjuncts first, the chosen
    /// alternative after them), without adding `v`'s conjuncts to the clone again. Leaves `c`
    /// to the general path otherwise.
    fn choose_on_leaf(&mut self, c: VId, v: VId, alt: &Conjunct, st: &mut NodeState) {
        let mut values = smallvec::SmallVec::new();
        if !self.plain_values(alt, &mut values) {
            return;
        }
        let vs = self.v(v).clone_value_state();
        let val_span = self.v(v).val_span;
        let cx = self.vm(c);
        cx.kind = vs.kind;
        cx.scalar = vs.scalar;
        cx.has_top = vs.has_top;
        cx.val_span = val_span;
        cx.status = Status::Evaluating;
        if !vs.constraints.is_empty() {
            let x = cx.xm();
            x.constraints = vs.constraints;
            x.cons_spans = vs.cons_spans;
        }
        st.conjuncts_done = true;
        for (e, span) in values {
            let val = self.eval_value(alt.env.as_ref(), e, Some(c));
            let lc = Conjunct {
                x: CExpr::Expr(e),
                span,
                ..alt.clone()
            };
            self.add_value(c, st, val, span, &lc);
        }
        self.finish_value(c);
        self.check_closed(c);
        self.vm(c).status = Status::Evaluated;
    }

    /// Structural equality of two evaluated vertices, non-concrete values included.
    pub fn vertices_equal(&mut self, a: VId, b: VId, depth: usize) -> bool {
        self.equal_as(a, b, depth, false)
    }

    /// [`Self::vertices_equal`], where with `closedness` a closed struct (by a definition or
    /// `close`, whatever `...` it has) never equals an open one, at any depth: the test by which
    /// CUE keeps one of two equal results of a disjunction (`Equal` with `CheckStructural`), so
    /// that `{a: 1} | #S` with `#S: {a: 1}` stays a disjunction of two.
    fn equal_as(&mut self, a: VId, b: VId, depth: usize, closedness: bool) -> bool {
        if depth > 64 {
            return false;
        }
        self.finalize(a, true);
        self.finalize(b, true);
        let a = self.deref(a);
        let b = self.deref(b);
        if a == b {
            return true;
        }
        let (ax, bx) = (self.v(a), self.v(b));
        // A struct that is an error because of a field's error compares field by field.
        let own = |e: &Option<Rc<Bottom>>| e.as_ref().filter(|e| !e.child).is_some();
        match (own(&ax.err), own(&bx.err)) {
            (true, true) => return true,
            (true, false) | (false, true) => return false,
            _ => {}
        }
        match (&ax.disj, &bx.disj) {
            (None, None) => {}
            (Some(x), Some(y)) => {
                if x.alts.len() != y.alts.len() || x.num_defaults != y.num_defaults {
                    return false;
                }
                let (xa, ya) = (x.alts.clone(), y.alts.clone());
                let nd = x.num_defaults;
                return xa.iter().enumerate().all(|(i, &p)| {
                    ya.iter().enumerate().any(|(j, &q)| {
                        (i < nd) == (j < nd) && self.equal_as(p, q, depth + 1, closedness)
                    })
                });
            }
            _ => return false,
        }
        if ax.is_list != bx.is_list {
            return false;
        }
        match (&ax.scalar, &bx.scalar) {
            (Some(x), Some(y)) => {
                if !expr::same_scalar(x, y) {
                    return false;
                }
            }
            (None, None) => {
                let structish = |k: value::Kind| {
                    k.contains(value::Kind::STRUCT) && !k.intersects(value::Kind::SCALAR)
                };
                let same_kind = ax.kind == bx.kind || (structish(ax.kind) && structish(bx.kind));
                if !same_kind {
                    return false;
                }
                if ax.constraints().len() != bx.constraints().len()
                    || !ax
                        .constraints()
                        .iter()
                        .all(|c| bx.constraints().iter().any(|d| self.constraint_eq(c, d)))
                {
                    return false;
                }
            }
            _ => return false,
        }
        if ax.is_list && ax.list_open() != bx.list_open() {
            return false;
        }
        let is_struct = |x: &Vertex| !x.is_list && x.scalar.is_none() && x.kind == Kind::STRUCT;
        if closedness && is_struct(ax) && self.closed_struct(a) != self.closed_struct(b) {
            return false;
        }
        self.arcs_equal(a, b, depth, closedness)
    }

    /// Whether struct `v` is closed: it lies in a definition, closed groups require evidence
    /// for its fields, a conjunct of its own was written in a definition, or an alternative it
    /// took came from one (CUE's `IsClosedStruct`, which does not look at `...`).
    fn closed_struct(&self, v: VId) -> bool {
        let vx = self.v(v);
        !vx.closed_groups.is_empty()
            || vx.conjuncts.iter().any(|c| c.ci.in_def)
            || vx.clone.as_ref().is_some_and(|m| m.closed_choice)
            || self.path_has_def(v)
    }

    /// Field-by-field equality of two structs (let fields aside).
    fn arcs_equal(&mut self, a: VId, b: VId, depth: usize, closedness: bool) -> bool {
        let fa: Vec<VId> = self
            .v(a)
            .arcs
            .iter()
            .copied()
            .filter(|&x| !self.v(x).label.is_let())
            .collect();
        let fb: Vec<VId> = self
            .v(b)
            .arcs
            .iter()
            .copied()
            .filter(|&x| !self.v(x).label.is_let())
            .collect();
        if fa.len() != fb.len() {
            return false;
        }
        for x in fa {
            let l = self.v(x).label;
            let Some(y) = fb.iter().copied().find(|&y| self.v(y).label == l) else {
                return false;
            };
            if self.v(x).arc_type != self.v(y).arc_type
                || !self.equal_as(x, y, depth + 1, closedness)
            {
                return false;
            }
        }
        true
    }

    fn constraint_eq(&self, a: &Value, b: &Value) -> bool {
        match (a, b) {
            (Value::Validator(x), Value::Validator(y)) => x.text(self) == y.text(self),
            // `=={a: 1}`: bounds by a struct or list compare by their text.
            (Value::Bound(o1, x), Value::Bound(o2, y))
                if matches!(**x, Value::Vertex(_)) && matches!(**y, Value::Vertex(_)) =>
            {
                o1 == o2 && self.value_text(x) == self.value_text(y)
            }
            _ => expr::value_eq_shallow(a, b),
        }
    }
}

/// The error of a disjunction whose every alternative failed.
fn disjunction_error(errors: Vec<Rc<Bottom>>) -> Rc<Bottom> {
    if let Some(u) = errors.iter().find(|e| e.code == ErrCode::User) {
        return u.clone();
    }
    let errors = flatten_errors(errors);
    match errors.len() {
        0 => Bottom::eval("empty disjunction"),
        1 => errors[0].clone(),
        n => {
            let code = errors.iter().map(|e| e.code).min().unwrap_or(ErrCode::Eval);
            let mut spans = Vec::new();
            for e in &errors {
                spans.extend(e.spans.iter().copied());
            }
            let msg = format!(
                "{} errors in empty disjunction:{}",
                n,
                errors
                    .iter()
                    .take(4)
                    .map(|e| format!("\n{}", e.msg))
                    .collect::<String>()
            );
            Rc::new(Bottom {
                code,
                msg,
                spans,
                child: false,
                at: None,
                subs: errors,
            })
        }
    }
}

/// The errors of failed disjuncts as one list, as CUE's `errors.Append` then `Sanitize` make
/// it: a disjunct's own list (a nested empty disjunction) is spliced in after its header, and
/// an error equal to one already listed (message and positions) is dropped.
fn flatten_errors(errors: Vec<Rc<Bottom>>) -> Vec<Rc<Bottom>> {
    let mut flat: Vec<Rc<Bottom>> = Vec::new();
    let mut push = |e: Rc<Bottom>| {
        let dup = flat.iter().any(|f| f.msg == e.msg && f.spans == e.spans);
        if !dup {
            flat.push(e);
        }
    };
    for e in errors {
        if e.subs.is_empty() {
            push(e);
        } else {
            let subs = e.subs.clone();
            push(Rc::new(Bottom {
                subs: Vec::new(),
                ..(*e).clone()
            }));
            for s in subs {
                push(s);
            }
        }
    }
    flat
}

/// Disjunctions at leaves, and bottom tests of disjunctions, in many shapes: the shortcuts
/// (`choose_on_leaf`, and `choice_meets_none` in `expr.rs`) must give what the general path
/// gives, values, `cue eval` text and errors alike; and the cross product of two disjunctions
/// gives the same with the combinations left out for their kinds as with every one tried.
#[cfg(test)]
pub(super) mod general_law {
    use std::cell::Cell;

    use proptest::prelude::*;

    use super::super::api::{Instance, format_errors};
    use super::super::print;

    thread_local! {
        /// Takes the general path for every disjunction and bottom test.
        pub(in crate::eval) static GENERAL: Cell<bool> = const { Cell::new(false) };
        /// Tries every combination of a cross product, none left out for its kinds.
        pub(in crate::eval) static EVERY_COMBINATION: Cell<bool> = const { Cell::new(false) };
    }

    /// Alternatives: plain values, and shapes the shortcuts leave to the general path.
    const ALTS: &[&str] = &[
        "\"a\"",
        "\"b\"",
        "1",
        "1.0",
        "2",
        "true",
        "null",
        "'a'",
        "int",
        "string",
        "bool",
        "number",
        ">0",
        "<=10",
        "int & >0",
        "uint8",
        "=~\"^a\"",
        "{a: 1}",
        "[1]",
        "#D",
        "_",
        "{if false {a: 1}}",
    ];

    /// Other conjuncts of the same field.
    const OTHERS: &[&str] = &[
        "\"a\"", "2", ">1", "int", "string", "null", "y", "#D", "{a: 1}", "1.0", "_|_",
    ];

    /// Alternatives of a field with two disjunctions: those of one, and definitions declared
    /// after the field, so not evaluated yet when it is.
    const PRODUCT_ALTS: &[&str] = &[
        "\"a\"",
        "\"b\"",
        "1",
        "1.0",
        "true",
        "null",
        "int",
        "string",
        "{a: 1}",
        "[1]",
        "#D",
        "_",
        "#L",
        "#S",
        "#L | {b: 2}",
        "{if false {a: 1}}",
        "({if false {a: 1}} & null)",
    ];

    /// Other conjuncts of a field with two disjunctions: those of one, and a literal made of
    /// a comprehension that yields nothing, a struct only when nothing else gives a kind.
    const PRODUCT_OTHERS: &[&str] = &[
        "\"a\"",
        "2",
        "int",
        "string",
        "null",
        "y",
        "#D",
        "{a: 1}",
        "_|_",
        "{if false {a: 1}}",
        "{if true {a: 1}}",
    ];

    /// The other side of a bottom test.
    const TESTS: &[&str] = &[
        "string",
        "int",
        "(\"a\" | \"b\")",
        "1",
        "bool",
        "null",
        ">0",
        "{a: 1}",
        "(1 | 2.0)",
        "number",
        "x",
    ];

    fn program() -> impl Strategy<Value = String> {
        (
            prop::collection::vec((prop::sample::select(ALTS), any::<bool>()), 2..4),
            prop::collection::vec(prop::sample::select(OTHERS), 0..3),
            prop::collection::vec(prop::sample::select(TESTS), 0..3),
            any::<bool>(),
        )
            .prop_map(|(alts, others, tests, via_def)| {
                program_of(&alts, &others, &tests, via_def, &[])
            })
    }

    /// [`program`] with a second disjunction of the same field: a cross product of the two.
    fn product() -> impl Strategy<Value = String> {
        (
            prop::collection::vec((prop::sample::select(PRODUCT_ALTS), any::<bool>()), 2..4),
            prop::collection::vec(prop::sample::select(PRODUCT_OTHERS), 0..2),
            prop::collection::vec(prop::sample::select(TESTS), 0..2),
            any::<bool>(),
            prop::collection::vec((prop::sample::select(PRODUCT_ALTS), any::<bool>()), 2..4),
        )
            .prop_map(|(alts, others, tests, via_def, second)| {
                program_of(&alts, &others, &tests, via_def, &second)
            })
    }

    fn program_of(
        alts: &[(&str, bool)],
        others: &[&str],
        tests: &[&str],
        via_def: bool,
        second: &[(&str, bool)],
    ) -> String {
        let written = |alts: &[(&str, bool)]| -> Vec<String> {
            alts.iter()
                .map(|(a, d)| if *d { format!("*{a}") } else { a.to_string() })
                .collect()
        };
        let disj = written(alts);
        let mut p = String::from("#D: *\"a\" | \"c\"\ny: \"a\"\n");
        if via_def {
            p += &format!("#X: {}\nx: #X\n", disj.join(" | "));
        } else {
            p += &format!("x: {}\n", disj.join(" | "));
        }
        for o in others {
            p += &format!("x: {o}\n");
        }
        if !second.is_empty() {
            p += &format!("x: {}\n", written(second).join(" | "));
        }
        for (i, t) in tests.iter().enumerate() {
            p += &format!("t{i}: (x & {t}) == _|_\n");
            p += &format!("u{i}: ({t} & x) != _|_\n");
        }
        if !second.is_empty() {
            p += "#L: *\"a\" | \"b\" | null\n#S: {a: int} & {a: 1}\n";
        }
        p
    }

    /// The JSON export of `src` or its errors, and its `cue eval` text.
    fn outputs(src: &str) -> Outputs {
        match Instance::from_sources(&[("t.cue".to_string(), src.to_string())]) {
            Ok(mut inst) => {
                let json = inst.export_json().unwrap_or_else(|e| e);
                let mut inst = Instance::from_sources(&[("t.cue".to_string(), src.to_string())])
                    .expect("compiled once already");
                (json, print::eval_text(&mut inst))
            }
            Err(e) => (format_errors(&e), String::new()),
        }
    }

    type Outputs = (String, String);

    /// The outputs of `src` with the test switch `switch` on, then off.
    fn on_and_off(
        switch: &'static std::thread::LocalKey<Cell<bool>>,
        src: &str,
    ) -> (Outputs, Outputs) {
        switch.set(true);
        let on = outputs(src);
        switch.set(false);
        (on, outputs(src))
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

        #[test]
        fn shortcuts_give_what_the_general_path_gives(src in program()) {
            let (general, short) = on_and_off(&GENERAL, &src);
            prop_assert_eq!(general, short, "{}", src);
        }

        #[test]
        fn combinations_left_out_for_their_kinds_change_nothing(src in product()) {
            let (every, pruned) = on_and_off(&EVERY_COMBINATION, &src);
            prop_assert_eq!(every, pruned, "{}", src);
        }
    }
}
