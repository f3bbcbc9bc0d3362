//! The CUE evaluator: a graph of vertices (one per field) in an arena, each computed by unifying
//! its conjuncts.
//!
//! Evaluation is demand-driven. [`Runtime::evaluate`] processes one vertex: it inserts the fields
//! of its struct literals as child arcs (with their conjuncts, not yet evaluated), resolves
//! references by adding the conjuncts of the referenced vertex (so that references inside them
//! rebind to the new place, as CUE requires), merges scalars, kinds and bounds, runs
//! comprehensions, then expands disjunctions by evaluating one clone of the vertex per disjunct.
//! [`Runtime::finalize`] does the same recursively for the regular fields below a vertex.
//!
//! Design notes (see `docs/evaluator.md` for more):
//! - labels are interned ([`label`]); vertices live in an arena of fixed-size chunks ([`arena`])
//!   and are referred to by `u32`;
//! - closedness follows CUE v0.17's "evidence" model with a tree of groups: every struct literal
//!   and every reference to a definition opens a group, and a field is allowed by a closed group
//!   when one of its conjuncts comes from inside that group ([`Runtime::check_closed`]);
//! - structural cycles are found with the chain of references each conjunct has followed.

pub mod api;
mod arena;
pub(crate) use arena::release_spare_chunks;
mod bounds;
pub(crate) mod builtins;
mod closedness;
pub(crate) mod compile;
mod comprehension;
mod cycle;
mod disjunct;
pub(crate) mod export;
mod expr;
mod finish;
#[cfg(test)]
mod golden_tests;
pub(crate) mod ir;
pub mod label;
#[cfg(test)]
mod lattice_tests;
mod list;
mod pattern;
pub mod print;
mod structlit;
mod toposort;
mod unify;
mod validators;
pub mod value;

use std::rc::Rc;

use thin_vec::ThinVec;

use crate::ast::Span;
use ir::{ArcType, ExprId, StructId};
use label::Label;
use value::{Bottom, Kind, Value};

pub use compile::Program;

/// Pushes `x` onto a vertex's list, giving an empty list room for exactly one: most vertices
/// get one conjunct (one struct literal, one closed group) and never a second, and `ThinVec`
/// would reserve four (for a conjunct, 240 bytes that concrete data never uses). Later
/// pushes grow by doubling as usual.
pub(crate) fn push_tight<T>(list: &mut ThinVec<T>, x: T) {
    match list.capacity() {
        0 => list.reserve_exact(1),
        1 => list.reserve_exact(3),
        _ => {}
    }
    list.push(x);
}

/// A vertex id.
pub type VId = u32;

/// A scope frame at run time: the vertex whose fields are in scope, and the frame around it.
#[derive(Debug)]
pub struct Env {
    pub up: Option<EnvRef>,
    pub vertex: VId,
    /// The label a pattern constraint is being applied to (`X` in `[X=string]: v`).
    pub dyn_label: Option<Label>,
    /// The comprehension firing that made this scope (a `for` or `let` clause), or 0: the
    /// literals a firing yields are ordered round by round (see `toposort`).
    pub comp_id: u32,
}
pub type EnvRef = Rc<Env>;

/// The vertices of one let field split by surrounding frame (see `Runtime::split_lets`).
pub type SplitLets = Vec<(Option<EnvRef>, VId)>;

/// The chain of vertices a conjunct reached through references, to find structural cycles.
#[derive(Debug)]
pub struct RefNode {
    pub v: VId,
    /// The reference expression that reached `v` (`u32::MAX`: none).
    pub x: ExprId,
    pub next: Option<Rc<RefNode>>,
    /// The length of the chain up to here.
    pub len: u32,
}

/// Where a conjunct comes from, for closedness and cycle detection.
#[derive(Clone, Debug, Default)]
pub struct CloseInfo {
    /// The innermost closedness group (0: none).
    pub group: u32,
    /// Set on the expression of an embedding until it enters a struct literal.
    pub embedded: bool,
    /// Set below optional fields, pattern constraints and disjunctions: a cycle there eliminates
    /// the value instead of failing it.
    pub optional: bool,
    pub refs: Option<Rc<RefNode>>,
    /// The conjunct, or one it came from, followed a reference that closed a structural cycle
    /// (CUE's `IsCyclic`): it counts as no evidence that its node is finite.
    pub cyclic: bool,
    /// An optional conjunct (below an optional field, pattern or disjunction) that already met
    /// one repeated reference (CUE's `MaybeCyclic`): its chain was cleared so that it may go one
    /// more round; it no longer counts as a non-cyclic conjunct of its node.
    pub maybe_cyclic: bool,
    /// The conjunct is within a definition (required fields are not enforced there).
    pub in_def: bool,
    /// Where the outermost reference that brought this conjunct was written (for the field
    /// order of export: a referenced struct literal stands where it is used).
    /// [`CLEARED_REF`] once the chain of references was cleared for another round.
    pub ref_span: Span,
    /// How many references and embeddings were followed since the conjunct's field was
    /// declared: CUE adds a node's struct literals before those it reaches through references
    /// (which it resolves as later tasks), and field order breaks ties by that order.
    pub hops: u16,
}

/// The [`CloseInfo::ref_span`] of a conjunct whose chain of references was cleared (CUE's
/// `MaybeCyclic` round): it no longer stands where a reference was written, and references it
/// meets later do not count either.
pub const CLEARED_REF: Span = Span {
    file: crate::ast::FileId(u32::MAX),
    start: 0,
    end: 0,
};

impl CloseInfo {
    /// The last references followed, latest first. Only a window of the chain is searched, so
    /// that long reference chains stay linear; the chain's length limit catches longer cycles.
    fn recent_refs(&self) -> impl Iterator<Item = &RefNode> {
        const WINDOW: usize = 64;
        std::iter::successors(self.refs.as_deref(), |r| r.next.as_deref()).take(WINDOW)
    }

    /// Whether `v` is among the last references followed.
    pub(super) fn has_ref(&self, v: VId) -> bool {
        self.recent_refs().any(|r| r.v == v)
    }

    /// How often `v` was reached (through reference expression `x`, if given) among the last
    /// references followed.
    pub(super) fn count_ref(&self, v: VId, x: Option<ExprId>) -> usize {
        self.recent_refs()
            .filter(|r| r.v == v && x.is_none_or(|x| r.x == x))
            .count()
    }
}

/// What a conjunct holds.
#[derive(Clone, Debug)]
pub enum CExpr {
    Expr(ExprId),
    /// A struct literal (file bodies and comprehension bodies).
    Struct(StructId),
    /// The value of another, already evaluated vertex (results of builtins, comprehension values).
    Vertex(VId),
    Value(Value),
}

#[derive(Clone, Debug)]
pub struct Conjunct {
    pub env: Option<EnvRef>,
    pub x: CExpr,
    pub ci: CloseInfo,
    pub span: Span,
}

/// A vertex's conjuncts. Most vertices have exactly one (every field of concrete data), so the
/// first is held in the vertex itself: on a file of concrete data, a list on the heap for each
/// vertex was a quarter of the allocations and a fifth of the peak heap.
pub type Conjuncts = smallvec::SmallVec<[Conjunct; 1]>;

/// A closedness group: a struct literal, a reference to a definition, or a `close()` call.
#[derive(Clone, Debug)]
pub struct Group {
    pub parent: u32,
    pub closed: bool,
    /// Applies to descendants too (definitions); `close()` applies to one level.
    pub recursive: bool,
    /// The group came from an embedding: fields of the enclosing literal count as evidence.
    pub embedded: bool,
    /// The vertex where a non-recursive group was created.
    pub origin: VId,
    /// The closedness of definitions carried out of an inline expression (`(f & x).out`):
    /// the value counts as closed, but no field is rejected for it (CUE's `OpenInline`).
    pub inline: bool,
    /// The group or one on its chain of parents was closed when it was created. Only
    /// `x...` and `__reclose` (which leave marks in `Runtime::group_marks`) close a group
    /// later, so without marks a group whose chain is open requires nothing.
    pub closed_chain: bool,
    /// The group has parents besides `parent` (in `Runtime::extra_parents`).
    pub has_extra: bool,
    /// The nearest group on the chain from this one (itself included) up to the root that
    /// was closed when it was created, or 0. Until an `x...` marks a group open
    /// (`Runtime::open_marks`) no group is closed later, so the chain's closed groups are
    /// found by following these.
    pub closed_up: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Unprocessed,
    Evaluating,
    Evaluated,
    Finalizing,
    Finalized,
}

/// The result of a disjunction: the surviving alternatives, defaults first.
#[derive(Clone, Debug)]
pub struct DisjVal {
    pub alts: Vec<VId>,
    pub num_defaults: usize,
    /// Each alternative's default mode and the mode of the alternative of the innermost
    /// disjunction that made it (CUE's `defaultMode` and `origDefaultMode`), read where the
    /// disjunction was nested in an alternative of another one.
    pub modes: Vec<(u8, u8)>,
}

impl DisjVal {
    /// Whether any alternative is marked, as a default or as not one (CUE's `HasDefaults`):
    /// the alternatives after the defaults are then not defaults where this disjunction is
    /// met again, rather than undecided.
    pub fn has_defaults(&self) -> bool {
        self.modes.iter().any(|&(m, _)| m != disjunct::MAYBE)
    }
}

/// A struct literal that was unified into a vertex, for field ordering.
#[derive(Clone, Debug)]
pub struct StructInfo {
    pub id: StructId,
    /// Where the literal stands for messages: the outermost reference that brought it, or the
    /// literal itself.
    pub pos: Span,
    /// [`CloseInfo::hops`] of the conjunct that added the literal.
    pub hops: u16,
    /// The literal's environment frame: the conjuncts of its fields carry it.
    pub frame: EnvRef,
    /// The comprehension firing whose body produced the literal (0 for none): the yields of
    /// one firing are ordered round by round.
    pub comp_id: u32,
}

#[derive(Clone, Debug)]
pub struct Vertex {
    pub parent: Option<VId>,
    pub label: Label,
    pub arc_type: ArcType,
    pub conjuncts: Conjuncts,
    pub status: Status,
    pub arcs: ThinVec<VId>,
    pub kind: Kind,
    pub scalar: Option<Value>,
    /// Where the value that last narrowed `kind` or set `scalar` was written (the other side of
    /// a conflict).
    pub val_span: Span,
    pub has_top: bool,
    pub is_list: bool,
    pub err: Option<Rc<Bottom>>,
    pub disj: Option<Rc<DisjVal>>,
    pub forward: Option<VId>,
    pub structs: ThinVec<StructInfo>,
    /// Closed groups that require evidence here.
    pub closed_groups: ThinVec<u32>,
    /// Set on a clone made for one disjunct.
    pub is_disjunct: bool,
    /// On a disjunct clone: what it is an alternative of and which alternatives it took.
    pub clone: Option<Box<CloneMarks>>,
    /// A vertex evaluated for an inline expression; it has no path.
    pub anonymous: bool,
    /// The fields most vertices never use, allocated when one of them is first written (see
    /// [`Vertex::xm`]); reading them through the accessors gives their defaults without it.
    pub extra: Option<Box<VertexExtra>>,
}

/// The rarely used part of a [`Vertex`]: bounds and validators, list state, patterns, the mark
/// of inline vertices, and the arc index. Kept apart so that the vertex arena stays small.
#[derive(Clone, Debug, Default)]
pub struct VertexExtra {
    /// Bounds and validators.
    pub constraints: ThinVec<Value>,
    /// Where each of `constraints` came from (same indices), for error positions.
    pub cons_spans: ThinVec<Span>,
    /// Where the list literal that made this vertex a list was written, for conflict messages.
    pub list_span: Span,
    pub list_len: Option<u32>,
    pub list_open: bool,
    pub patterns: ThinVec<(Value, Conjunct)>,
    pub list_patterns: ThinVec<(u32, Conjunct)>,
    /// Groups opened by `...` here.
    pub open_groups: ThinVec<u32>,
    /// The [`Runtime::cycle_epoch`] at which this vertex ended with a cycle error; a later
    /// epoch (some vertex of the cycle got its value meanwhile) evaluates it again.
    pub cycle_epoch: u32,
    /// For an inline vertex: the expression it evaluates (to find inline cycles).
    pub origin: Option<ExprId>,
    /// An index of `arcs` by label, kept once a vertex has many arcs.
    pub arc_map: Option<Box<rustc_hash::FxHashMap<Label, VId>>>,
    /// Places in `arcs` kept for the fields a pending comprehension will add.
    pub slots: Option<Box<ArcSlots>>,
}

/// The marks of a clone made for one disjunct (most vertices are not one, but a module's
/// disjunctions can make a third of them).
#[derive(Clone, Debug)]
pub struct CloneMarks {
    /// The vertex whose disjunction it is an alternative of.
    pub clone_of: VId,
    /// The alternative chosen for each disjunction (by key).
    pub choices: Rc<Vec<(u64, usize)>>,
    /// On an intermediate clone: the disjunctions of the vertex still to be expanded, left
    /// for later (nested ones met inside chosen alternatives are expanded at once).
    pub defer_disj: Option<Rc<Vec<u64>>>,
    /// The default mode of the combination it was made for, and that of its last chosen
    /// alternative (CUE's `defaultMode` and `origDefaultMode`): where the clone's own nested
    /// disjunctions start from.
    pub mode: u8,
    pub orig: u8,
    /// When its nested disjunctions left one result: that result's default mode.
    pub single: Option<u8>,
    /// An alternative it took lies in a closed group (it came from a definition): CUE's
    /// struct is then closed, even where the alternative is `_`.
    pub closed_choice: bool,
}

/// The order of a vertex's arcs once a comprehension has reserved places in it: CUE creates
/// the arcs of the fields a comprehension's body declares (`if c {x: 1}`) when the
/// comprehension is scheduled, so they come before the fields declared after it, and before
/// fields with computed labels, although the comprehension runs later.
#[derive(Clone, Debug, Default)]
pub struct ArcSlots {
    /// The sequence number of each arc (same indices as `arcs`; increasing).
    pub seqs: Vec<u32>,
    /// Labels reserved and not yet created, with their sequence numbers.
    pub reserved: Vec<(Label, u32)>,
    pub next: u32,
    /// Struct literals a comprehension declares as the value of a reserved field, whose own
    /// fields get places in that field once it is created (CUE creates them with the field).
    pub nested: Vec<(Label, StructId, u32)>,
}

impl ArcSlots {
    /// Starts the numbering again when the arcs were replaced behind the slots' back (a vertex
    /// reset or cloned): the arcs keep their order and the reservations come after them.
    fn resync(&mut self, arcs: usize) {
        if self.seqs.len() != arcs {
            self.seqs = (0..arcs as u32).collect();
            self.next = self.next.max(arcs as u32);
            for (i, r) in self.reserved.iter_mut().enumerate() {
                r.1 = self.next + i as u32;
            }
            self.next += self.reserved.len() as u32;
        }
    }
}

impl Vertex {
    fn new(parent: Option<VId>, label: Label, arc_type: ArcType) -> Vertex {
        Vertex {
            parent,
            label,
            arc_type,
            conjuncts: Conjuncts::new(),
            status: Status::Unprocessed,
            arcs: ThinVec::new(),
            kind: Kind::TOP,
            scalar: None,
            val_span: Span::default(),
            has_top: false,
            is_list: false,
            err: None,
            disj: None,
            forward: None,
            structs: ThinVec::new(),
            closed_groups: ThinVec::new(),
            is_disjunct: false,
            clone: None,
            anonymous: false,
            extra: None,
        }
    }

    /// The rarely used fields, created on first use.
    pub fn xm(&mut self) -> &mut VertexExtra {
        self.extra.get_or_insert_with(Default::default)
    }
    pub fn list_span(&self) -> Span {
        self.extra.as_ref().map_or(Span::default(), |x| x.list_span)
    }
    pub fn list_len(&self) -> Option<u32> {
        self.extra.as_ref().and_then(|x| x.list_len)
    }
    pub fn list_open(&self) -> bool {
        self.extra.as_ref().is_some_and(|x| x.list_open)
    }
    pub fn patterns(&self) -> &[(Value, Conjunct)] {
        self.extra.as_ref().map_or(&[], |x| &x.patterns)
    }
    pub fn list_patterns(&self) -> &[(u32, Conjunct)] {
        self.extra.as_ref().map_or(&[], |x| &x.list_patterns)
    }
    pub fn open_groups(&self) -> &[u32] {
        self.extra.as_ref().map_or(&[], |x| &x.open_groups)
    }
    pub fn constraints(&self) -> &[Value] {
        self.extra.as_ref().map_or(&[], |x| &x.constraints)
    }
    pub fn cons_spans(&self) -> &[Span] {
        self.extra.as_ref().map_or(&[], |x| &x.cons_spans)
    }
    /// Copies of the rare lists, to iterate over while the vertices change (no allocation
    /// while a list is empty).
    pub fn constraints_copy(&self) -> ThinVec<Value> {
        self.extra
            .as_ref()
            .map_or_else(ThinVec::new, |x| x.constraints.clone())
    }
    pub fn cons_spans_copy(&self) -> ThinVec<Span> {
        self.extra
            .as_ref()
            .map_or_else(ThinVec::new, |x| x.cons_spans.clone())
    }
    pub fn patterns_copy(&self) -> ThinVec<(Value, Conjunct)> {
        self.extra
            .as_ref()
            .map_or_else(ThinVec::new, |x| x.patterns.clone())
    }
    pub fn list_patterns_copy(&self) -> ThinVec<(u32, Conjunct)> {
        self.extra
            .as_ref()
            .map_or_else(ThinVec::new, |x| x.list_patterns.clone())
    }
    pub fn open_groups_copy(&self) -> ThinVec<u32> {
        self.extra
            .as_ref()
            .map_or_else(ThinVec::new, |x| x.open_groups.clone())
    }
    pub fn clone_of(&self) -> Option<VId> {
        self.clone.as_ref().map(|c| c.clone_of)
    }
    pub fn cycle_epoch(&self) -> u32 {
        self.extra.as_ref().map_or(0, |x| x.cycle_epoch)
    }
    pub fn choices(&self) -> Option<&Rc<Vec<(u64, usize)>>> {
        self.clone.as_ref().map(|c| &c.choices)
    }
    pub fn defer_disj(&self) -> Option<&Rc<Vec<u64>>> {
        self.clone.as_ref().and_then(|c| c.defer_disj.as_ref())
    }
    pub fn origin(&self) -> Option<ExprId> {
        self.extra.as_ref().and_then(|x| x.origin)
    }
    pub fn arc_map(&self) -> Option<&rustc_hash::FxHashMap<Label, VId>> {
        self.extra.as_ref().and_then(|x| x.arc_map.as_deref())
    }
}

/// Evaluation limits, so that pathological inputs end with an error.
pub const MAX_DEPTH: usize = 10_000;
pub const MAX_VERTICES: usize = 20_000_000;
/// Inline expressions (`(f & {n: 1}).out`) evaluated one inside another: beyond this, a
/// recursion through them that no cycle rule caught ends with an error.
pub const MAX_INLINE_NESTING: usize = 500;

/// The evaluator's state: the compiled program and the vertex arena.
pub struct Runtime {
    pub(crate) prog: Program,
    pub(crate) vertices: arena::Vertices,
    pub(crate) groups: Vec<Group>,
    /// Further groups a group lies in, besides its parent: the group of a definition inserted
    /// into a node also stands for a later reference to the same definition that was skipped as
    /// a duplicate (see `add_ref`).
    pub(crate) extra_parents: rustc_hash::FxHashMap<u32, Vec<u32>>,
    /// Groups opened by `x...` or created by `__reclose` (the `explicitopen` experiment).
    pub(crate) group_marks: rustc_hash::FxHashMap<u32, closedness::GroupMark>,
    /// Some group is marked [`closedness::GroupMark::Open`] (an `x...`). Only then may a group
    /// be closed after its creation or a requirement be lifted.
    pub(crate) open_marks: bool,
    /// Roots of imported packages, by import id.
    pub(crate) packages: Vec<Option<VId>>,
    pub(crate) depth: usize,
    /// Set when a limit was hit.
    pub(crate) aborted: Option<String>,
    /// The reference chain of the conjunct whose expression is being evaluated: an inline
    /// vertex made there (`(t & {a: 1}).out`) carries it on, so that an inline expression that
    /// feeds itself through a reference is found to be a structural cycle.
    pub(crate) cur_refs: Option<Rc<RefNode>>,
    /// Incremented each time a vertex retries the conjuncts it postponed on a cycle, having
    /// found a concrete value meanwhile (`X: b1, X: 5.0` with `b1` computed from `X`).
    pub(crate) cycle_epoch: u32,
    /// Conjuncts dropped because a cycle through a node further up could not resolve yet; they
    /// are checked against their node's value once the outermost evaluation is done.
    pub(crate) cycle_checks: Vec<(VId, Conjunct)>,
    /// Source texts by file id, for messages that quote an expression, and for the deferred
    /// fields of imported files.
    pub(crate) sources: Vec<std::sync::Arc<String>>,
    /// The parse cache of the build's load: the deferred fields of imported files parse
    /// through it, once for all the builds of a bundle.
    pub(crate) parse_cache: Option<std::sync::Arc<crate::ParseCache>>,
    /// The data `text/template.Execute` last converted, with the vertex it came from: a
    /// module's templates commonly pass the same finished value (`config`) to every call.
    pub(crate) template_memo: Option<(VId, builtins::template::exec::V)>,
    /// Vertices whose kind is struct only because a literal made of comprehensions yielded
    /// nothing else (`{if c {x: 1}}`): with another value it would have been that value's
    /// kind, so their kind says nothing about what a disjunct of them can be.
    pub(crate) weak_kinds: rustc_hash::FxHashSet<VId>,
    /// The vertices holding a file with deferred fields (imported packages' roots): their
    /// arcs may have conjuncts not compiled yet (see `Runtime::force_conjuncts`).
    pub(crate) lazy_roots: Vec<VId>,
    /// Each file's rank by name, by file id: field order compares positions by file name.
    pub(crate) file_ranks: Vec<u32>,
    /// The last comprehension firing numbered, and the one whose clauses are running.
    pub(crate) comp_ids: u32,
    pub(crate) cur_comp: u32,
    /// The source positions of the struct/list validators being run, so that a validator met
    /// again inside its own check (its argument carries it) is not re-run.
    pub(crate) validating: Vec<Span>,
    /// The value of each `or(list)` call already evaluated, by list expression and frame (the
    /// frame is kept alive so that its address is not reused): the disjuncts of a node that
    /// holds such a call re-evaluate its conjuncts, and must not rebuild and re-expand the whole
    /// disjunction each time (that was cubic in the number of alternatives).
    pub(crate) or_memo: rustc_hash::FxHashMap<(ExprId, usize), (EnvRef, Value)>,
    /// The `let` fields of a struct that is added to one vertex more than once with different
    /// surroundings (the body of a `for` in each iteration): the vertex holding the let for
    /// each further surrounding frame, by struct vertex and let label. The first addition uses
    /// the vertex's own let arc.
    pub(crate) split_lets: rustc_hash::FxHashMap<(VId, Label), SplitLets>,
    /// Vertices whose field set a comprehension saw while they were being evaluated, with the
    /// regular labels they had then (see `comprehension.rs`).
    pub(crate) frozen: rustc_hash::FxHashMap<VId, Vec<Label>>,
    /// The vertices being evaluated whose own conjuncts are all added (they are running their
    /// dynamic fields, embeddings and comprehensions), innermost last.
    pub(crate) in_tasks: Vec<VId>,
    /// The node whose comprehension condition is being evaluated, and the `_|_` tests it
    /// answered on incomplete values (see `comprehension.rs`).
    pub(crate) cond_node: Option<VId>,
    pub(crate) post_checks: Vec<comprehension::PostCheck>,
    /// Vertices whose only conjunct is a reference to another vertex, which CUE would share
    /// (structure sharing), by that vertex: finishing one finishes the other first, and its
    /// permanent error is the sharer's, named where it arose.
    pub(crate) shares: rustc_hash::FxHashMap<VId, VId>,
    /// Answers of `group_within` that searched extra parents, by (group, enclosing group);
    /// emptied whenever a group gains an extra parent.
    pub(crate) within_memo: std::cell::RefCell<rustc_hash::FxHashMap<(u32, u32), bool>>,
    /// Recent answers of `group_within`, any kind (see [`WithinCache`]).
    pub(crate) within_cache: std::cell::RefCell<WithinCache>,
    /// Buffers for export's field order, reused from struct to struct.
    topo: std::cell::RefCell<toposort::TopoScratch>,
    /// Lists of arcs that export lends out one per level of nesting and takes back, so that
    /// writing a struct or a list allocates nothing once the deepest level was reached.
    export_scratch: Vec<Vec<VId>>,
}

/// A small direct-mapped cache of `group_within` answers: a closed node asks, for every
/// conjunct of every field, whether its group lies within each required group, and the same
/// questions come back for each field of the node. A group's parent never changes; the answers
/// are dropped (by generation) when a group gains an extra parent, as `within_memo`'s are.
#[derive(Clone, Default)]
pub(crate) struct WithinCache {
    /// (group, enclosing group, generation, answer); allocated on first use.
    slots: Vec<(u32, u32, u32, bool)>,
    generation: u32,
}

impl WithinCache {
    const SIZE: usize = 1024;

    fn slot(g: u32, r: u32) -> usize {
        (g.wrapping_mul(0x9E37_79B9) ^ r.wrapping_mul(0x85EB_CA6B)) as usize & (Self::SIZE - 1)
    }

    pub(crate) fn get(&self, g: u32, r: u32) -> Option<bool> {
        let &(sg, sr, sgen, ans) = self.slots.get(Self::slot(g, r))?;
        (sg == g && sr == r && sgen == self.generation).then_some(ans)
    }

    pub(crate) fn put(&mut self, g: u32, r: u32, ans: bool) {
        if self.slots.is_empty() {
            self.slots = vec![(u32::MAX, u32::MAX, 0, false); Self::SIZE];
        }
        self.slots[Self::slot(g, r)] = (g, r, self.generation, ans);
    }

    /// Forgets every answer.
    pub(crate) fn clear(&mut self) {
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            self.slots.clear();
        }
    }
}

impl Default for Runtime {
    fn default() -> Self {
        Runtime::new()
    }
}

impl Runtime {
    pub fn new() -> Runtime {
        Runtime {
            prog: Program::default(),
            vertices: arena::Vertices::default(),
            groups: vec![Group {
                parent: 0,
                closed: false,
                recursive: true,
                embedded: false,
                origin: 0,
                inline: false,
                closed_chain: false,
                has_extra: false,
                closed_up: 0,
            }],
            extra_parents: Default::default(),
            group_marks: Default::default(),
            open_marks: false,
            packages: Vec::new(),
            depth: 0,
            aborted: None,
            cur_refs: None,
            cycle_epoch: 0,
            cycle_checks: Vec::new(),
            sources: Vec::new(),
            parse_cache: None,
            template_memo: None,
            weak_kinds: Default::default(),
            lazy_roots: Vec::new(),
            file_ranks: Vec::new(),
            comp_ids: 0,
            cur_comp: 0,
            validating: Vec::new(),
            or_memo: Default::default(),
            split_lets: Default::default(),
            frozen: Default::default(),
            in_tasks: Vec::new(),
            cond_node: None,
            post_checks: Vec::new(),
            shares: Default::default(),
            within_memo: Default::default(),
            within_cache: Default::default(),
            topo: Default::default(),
            export_scratch: Vec::new(),
        }
    }

    pub fn v(&self, id: VId) -> &Vertex {
        self.vertices.get(id)
    }
    pub fn vm(&mut self, id: VId) -> &mut Vertex {
        self.vertices.get_mut(id)
    }

    pub fn new_vertex(&mut self, parent: Option<VId>, label: Label, arc_type: ArcType) -> VId {
        if self.vertices.len() >= MAX_VERTICES && self.aborted.is_none() {
            self.aborted = Some("evaluation too large: vertex limit reached".into());
        }
        self.vertices.push(Vertex::new(parent, label, arc_type))
    }

    pub fn new_group(
        &mut self,
        parent: u32,
        closed: bool,
        recursive: bool,
        embedded: bool,
        origin: VId,
    ) -> u32 {
        let closed_chain = closed || self.groups[parent as usize].closed_chain;
        let id = self.groups.len() as u32;
        let closed_up = if closed {
            id
        } else {
            self.groups[parent as usize].closed_up
        };
        self.groups.push(Group {
            parent,
            closed,
            recursive,
            embedded,
            origin,
            inline: false,
            closed_chain,
            has_extra: false,
            closed_up,
        });
        id
    }

    /// Follows disjunction and sharing indirections to the vertex holding the value.
    pub fn deref(&self, mut id: VId) -> VId {
        for _ in 0..1000 {
            match self.v(id).forward {
                Some(f) => id = f,
                None => return id,
            }
        }
        id
    }

    /// The vertex after taking the default of a disjunction, if there is exactly one.
    pub fn default_of(&self, id: VId) -> VId {
        let id = self.deref(id);
        match &self.v(id).disj {
            Some(d) if d.num_defaults == 1 => self.deref(d.alts[0]),
            _ => id,
        }
    }

    /// Looks up an arc by label.
    pub fn arc(&self, v: VId, l: Label) -> Option<VId> {
        let vx = self.v(v);
        if let Some(m) = vx.arc_map() {
            return m.get(&l).copied();
        }
        vx.arcs.iter().copied().find(|&a| self.v(a).label == l)
    }

    /// A copy of the arcs of `v` to iterate over while the vertices change; no allocation for
    /// the usual few arcs.
    pub(crate) fn arcs_snapshot(&self, v: VId) -> smallvec::SmallVec<[VId; 8]> {
        smallvec::SmallVec::from_slice(&self.v(v).arcs)
    }

    /// Appends an arc, keeping the label index of large vertices.
    pub fn push_arc(&mut self, v: VId, a: VId) {
        const INDEX_FROM: usize = 16;
        let l = self.v(a).label;
        let n = self.v(v).arcs.len();
        if n + 1 >= INDEX_FROM && self.v(v).arc_map().is_none() {
            let m: rustc_hash::FxHashMap<Label, VId> = self
                .v(v)
                .arcs
                .iter()
                .map(|&x| (self.v(x).label, x))
                .collect();
            self.vm(v).xm().arc_map = Some(Box::new(m));
        }
        let vx = self.vm(v);
        if let Some(s) = vx.extra.as_mut().and_then(|x| x.slots.as_mut()) {
            s.resync(vx.arcs.len());
            let seq = match s.reserved.iter().position(|&(r, _)| r == l) {
                Some(i) => s.reserved.remove(i).1,
                None => {
                    s.next += 1;
                    s.next - 1
                }
            };
            let at = s.seqs.partition_point(|&x| x < seq);
            s.seqs.insert(at, seq);
            vx.arcs.insert(at, a);
        } else {
            vx.arcs.push(a);
        }
        if let Some(m) = vx.extra.as_mut().and_then(|x| x.arc_map.as_mut()) {
            m.entry(l).or_insert(a);
        }
        let nested: Vec<(StructId, u32)> =
            match self.vm(v).extra.as_mut().and_then(|x| x.slots.as_mut()) {
                Some(s) if s.nested.iter().any(|n| n.0 == l) => {
                    let (mine, rest) = std::mem::take(&mut s.nested)
                        .into_iter()
                        .partition(|n| n.0 == l);
                    s.nested = rest;
                    mine.into_iter().map(|(_, sid, d)| (sid, d)).collect()
                }
                _ => Vec::new(),
            };
        for (sid, depth) in nested {
            self.reserve_yielded(a, sid, depth);
        }
    }

    /// Keeps a place among `v`'s arcs for a field that a comprehension will add.
    pub(super) fn reserve_arc(&mut self, v: VId, l: Label) {
        if self.arc(v, l).is_some() {
            return;
        }
        let vx = self.vm(v);
        let n = vx.arcs.len() as u32;
        let s = vx.xm().slots.get_or_insert_with(|| {
            Box::new(ArcSlots {
                seqs: (0..n).collect(),
                reserved: Vec::new(),
                next: n,
                nested: Vec::new(),
            })
        });
        s.resync(n as usize);
        if s.reserved.iter().any(|&(r, _)| r == l) {
            return;
        }
        s.reserved.push((l, s.next));
        s.next += 1;
    }

    /// The CUE path of a vertex (`a.b.0."x-y"`), skipping anonymous and clone levels.
    pub fn path(&self, mut id: VId) -> String {
        let mut parts = Vec::new();
        loop {
            let v = self.v(id);
            let Some(p) = v.parent else { break };
            if !v.label.is_let() && !v.anonymous {
                parts.push(self.prog.labels.path_text(v.label));
            }
            id = p;
        }
        parts.reverse();
        parts.join(".")
    }
}

#[cfg(test)]
mod size_tests {
    use super::*;

    /// The arena holds one vertex per field: the fields most vertices never use live in
    /// [`VertexExtra`], so a vertex takes 128 bytes (it took 256 with them inline) besides its
    /// first conjunct, which it holds in place of a list on the heap (see [`Conjuncts`]).
    #[test]
    fn vertex_stays_small() {
        let conjunct = std::mem::size_of::<Conjunct>();
        assert!(conjunct <= 80);
        assert!(std::mem::size_of::<Vertex>() <= 128 + conjunct);
    }

    /// The compiled program holds one expression per value written (a field's literal in
    /// concrete data), each behind its own `Rc`: the rare large payloads are boxed so that an
    /// expression takes 32 bytes.
    #[test]
    fn expression_stays_small() {
        assert_eq!(std::mem::size_of::<ir::Expr>(), 32);
    }
}
