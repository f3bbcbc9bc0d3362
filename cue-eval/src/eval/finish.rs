//! Finishing a vertex once all its conjuncts are in: its scalar is checked against its bounds
//! and validators, a scalar with regular fields fails, and so does a list longer than its fixed
//! length; [`Runtime::finalize`] evaluates a vertex and everything below it, running the
//! validators of structs and lists once their fields are final.

use std::rc::Rc;

use crate::ast::Span;

use super::expr::env_up;
use super::ir::{ArcType, Expr, ExprId};
use super::value::{Bottom, ErrCode, Value};
use super::*;

impl Runtime {
    /// Checks the scalar against bounds and validators once all conjuncts are in.
    pub(super) fn finish_value(&mut self, v: VId) {
        if self.v(v).err.as_ref().is_some_and(|e| !e.is_incomplete()) {
            return;
        }
        let scalar = self.v(v).scalar.clone();
        let cons = self.v(v).constraints_copy();
        if let Some(s) = scalar {
            for (i, c) in cons.iter().enumerate() {
                if let Err(mut b) = self.check_constraint(c, &s) {
                    // A bound's conflict is placed at the bound and at the value, as CUE does.
                    // A validator's: at the call, its scalar arguments and the value.
                    if let Value::Validator(call) = c
                        && b.spans.is_empty()
                    {
                        let mut spans: Vec<Span> =
                            self.v(v).cons_spans().get(i).copied().into_iter().collect();
                        spans.extend(call.arg_spans.iter().copied());
                        spans.push(self.v(v).val_span);
                        spans.retain(|sp| *sp != Span::default());
                        Rc::make_mut(&mut b).spans = spans;
                    }
                    if matches!(c, Value::Bound(..)) && b.spans.is_empty() {
                        let spans: Vec<Span> = [
                            self.v(v).cons_spans().get(i).copied(),
                            Some(self.v(v).val_span),
                        ]
                        .into_iter()
                        .flatten()
                        .filter(|sp| *sp != Span::default())
                        .collect();
                        Rc::make_mut(&mut b).spans = spans;
                    }
                    self.set_err(v, b);
                    return;
                }
            }
            let has_fields =
                self.v(v).arcs.iter().any(|&a| {
                    self.v(a).label.is_regular() && self.v(a).arc_type == ArcType::Member
                });
            if has_fields {
                let a = self
                    .v(v)
                    .arcs
                    .iter()
                    .copied()
                    .find(|&a| self.v(a).label.is_regular())
                    .unwrap();
                let msg = format!(
                    "cannot combine regular field {:?} with {}",
                    self.prog.labels.text(self.v(a).label),
                    self.value_text(&s)
                );
                self.err_at(v, ErrCode::Eval, msg, Span::default());
            }
        } else if !cons.is_empty() {
            self.simplify_bounds(v);
        }
        // List lengths.
        let vx = self.v(v);
        if vx.is_list {
            let n = vx
                .arcs
                .iter()
                .filter(|&&a| self.v(a).label.is_int())
                .count() as u32;
            if let Some(len) = vx.list_len()
                && n > len
            {
                let msg = format!("incompatible list lengths ({} and {})", len, n);
                self.err_at(v, ErrCode::Eval, msg, Span::default());
            }
        }
    }

    /// Evaluates `v` and all its descendants but optional fields (and, with `all`, those too).
    /// Returns the first permanent error found below.
    pub fn finalize(&mut self, v: VId, all: bool) -> Option<Rc<Bottom>> {
        self.evaluate(v);
        let d = self.deref(v);
        if d != v {
            self.evaluate(d);
        }
        let vx = self.v(d);
        if let Some(e) = &vx.err
            && !e.is_incomplete()
        {
            return Some(e.clone());
        }
        if vx.status == Status::Finalizing || vx.status == Status::Finalized {
            return None;
        }
        self.vm(d).status = Status::Finalizing;
        // A vertex CUE would share with the one it refers to is finished with it, and that
        // vertex's permanent error is its own, at the path where it arose.
        // Not for a vertex inside an inline expression: its closedness errors are not the
        // sharer's (CUE's `OpenInline`).
        if let Some(&w) = self.shares.get(&d)
            && w != d
            && self.v(d).conjuncts.len() == 1
            && !self.inside_inline(w)
        {
            crate::stack::guard(|| self.finalize(w, all));
            let wd = self.deref(w);
            if let Some(e) = self.v(wd).err.clone()
                && !e.is_incomplete()
                && self
                    .v(d)
                    .err
                    .as_ref()
                    .is_none_or(|x| x.child || x.is_incomplete())
            {
                let at = e.at.or(Some(wd)).filter(|&a| !self.v(a).anonymous);
                self.vm(d).err = Some(Rc::new(Bottom {
                    child: false,
                    at,
                    ..(*e).clone()
                }));
                self.vm(d).status = Status::Finalized;
                return self.v(d).err.clone();
            }
        }
        if !all && self.copy_of_finished(d) {
            self.vm(d).status = Status::Finalized;
            return None;
        }
        let mut first = None;
        if let Some(dj) = self.v(d).disj.clone() {
            for &alt in &dj.alts {
                self.finalize(alt, all);
            }
        }
        let arcs = self.arcs_snapshot(d);
        for a in arcs {
            let ax = self.v(a);
            let l = ax.label;
            if l.is_let() {
                continue;
            }
            // As CUE's `completeAllArcs`: every field but optional ones (hidden fields and
            // definitions too) is finished, and its permanent error is the struct's.
            let counts = ax.arc_type != ArcType::Optional;
            if !counts && !all {
                continue;
            }
            // A leaf of concrete data is finished as soon as it has its literal's value:
            // what `finalize` would do for it, without the round trip.
            if ax.status == Status::Unprocessed
                && self.aborted.is_none()
                && self.cycle_checks.is_empty()
                && self.lone_scalar(a)
            {
                self.vm(a).status = Status::Finalized;
                continue;
            }
            let e = crate::stack::guard(|| self.finalize(a, all));
            if counts && first.is_none() {
                first = e.map(|e| (a, e));
            }
        }
        if let Some(e) = self.check_composite_validators(d) {
            self.vm(d).status = Status::Finalized;
            return Some(e);
        }
        let first = first.map(|(a, e)| {
            // As CUE's `AddChildError`: a permanent error of a field makes the struct an error
            // too (`child`), which `Value.Err`, `@test(err)` and a later selection from the
            // struct see; export and printing look through it to the fields' own errors.
            if self.v(d).err.is_none() {
                // The path is the erroneous field's, however deep.
                let below = self.v(self.deref(a)).err.as_ref().filter(|x| x.child);
                let at = below.and_then(|x| x.at).or(e.at).or(Some(a));
                self.vm(d).err = Some(Rc::new(Bottom {
                    child: true,
                    at,
                    ..(*e).clone()
                }));
            }
            e
        });
        self.vm(d).status = Status::Finalized;
        first
    }
}

impl Runtime {
    /// Whether `d`, a definition or hidden field, is a copy of a finished vertex without
    /// errors, which its fields need not be finished for: every conjunct of `d` is a plain
    /// reference, one of them to that vertex `t`, and each of the others to a vertex that a
    /// plain reference among `t`'s own conjuncts names (directly or through such references).
    /// A lone reference to a definition (`#config: #Config`) makes `t` that definition.
    /// Unification is idempotent, so `d` is `t` unified with values `t` already holds: the
    /// same fields with the same values, and no error `t` does not have. This is the
    /// `#config: #Config` of a template meeting the `#config: config` of its use, with
    /// `config` itself `#Config & values`. Its fields are still evaluated when something
    /// refers to them, or exports them through a reference to `d`, with `d`'s own conjuncts,
    /// so the order export gives them is `d`'s. Regular fields are always finished: they are
    /// what export writes.
    fn copy_of_finished(&mut self, d: VId) -> bool {
        self.finished_copy_target(d).is_some()
    }

    /// The finished vertex that `d` is a copy of, in the sense of
    /// [`Runtime::copy_of_finished`]; `None` when `d` is not such a copy.
    pub(super) fn finished_copy_target(&mut self, d: VId) -> Option<VId> {
        #[cfg(test)]
        if tests::FINISH_COPIES.get() {
            return None;
        }
        let dx = self.v(d);
        if dx.label.is_regular()
            || dx.label.is_let()
            || dx.anonymous
            || dx.is_disjunct
            || dx.disj.is_some()
            || dx.err.is_some()
            || dx.arcs.is_empty()
            || self.aborted.is_some()
            || !self.cycle_checks.is_empty()
        {
            return None;
        }
        let mut named: smallvec::SmallVec<[VId; 4]> = smallvec::SmallVec::new();
        for c in dx.conjuncts.iter() {
            let CExpr::Expr(id) = c.x else { return None };
            if c.ci.optional || c.ci.embedded || c.ci.cyclic || c.ci.maybe_cyclic {
                return None;
            }
            match self.peek_ref(c.env.as_ref(), id, 0) {
                Some(w) if w != d && !self.is_ancestor(w, d) && !self.is_ancestor(d, w) => {
                    named.push(w)
                }
                _ => return None,
            }
        }
        // The target: one that holds all the others, finished ones first, so that a vertex
        // is finished early only when it is the one the copy can stand on.
        let holds_all = |rt: &Self, t: VId| {
            named
                .iter()
                .all(|&w| w == t || rt.holds_ref(t, w, COPY_SEARCH_DEPTH))
        };
        let t = named
            .iter()
            .copied()
            .find(|&t| self.v(t).status == Status::Finalized && holds_all(self, t))
            .or_else(|| named.iter().copied().find(|&t| holds_all(self, t)));
        t.filter(|&t| self.finished_clean(t))
    }

    /// Whether `w` is finished with no error of its own or below, finishing it first unless
    /// that is under way.
    fn finished_clean(&mut self, w: VId) -> bool {
        let wx = self.v(w);
        if wx.err.is_some() || wx.is_disjunct || wx.disj.is_some() || wx.arc_type != ArcType::Member
        {
            return false;
        }
        match wx.status {
            Status::Finalized => true,
            Status::Unprocessed | Status::Evaluated => {
                if crate::stack::guard(|| self.finalize(w, false)).is_some() {
                    return false;
                }
                let wx = self.v(w);
                wx.status == Status::Finalized
                    && wx.err.is_none()
                    && !wx.is_disjunct
                    && wx.disj.is_none()
                    && wx.forward.is_none()
            }
            _ => false,
        }
    }

    /// Whether a plain reference among the conjuncts of `t` names `w`, looking `depth`
    /// references deep.
    fn holds_ref(&self, t: VId, w: VId, depth: u32) -> bool {
        self.v(t).conjuncts.iter().any(|c| {
            let CExpr::Expr(id) = c.x else { return false };
            match self.peek_ref(c.env.as_ref(), id, 0) {
                Some(x) if x == w => true,
                Some(x) if depth > 1 && x != t => self.holds_ref(x, w, depth - 1),
                _ => false,
            }
        })
    }

    /// The vertex a plain reference (`a`, `pkg.#A`, `a.b.c`) names, found among arcs that are
    /// there already; `None` for any other expression or an arc not known yet.
    fn peek_ref(&self, env: Option<&EnvRef>, id: ExprId, hops: u32) -> Option<VId> {
        if hops > COPY_SEARCH_DEPTH * 4 {
            return None;
        }
        let scope = match self.prog.expr(id) {
            Expr::FieldRef { up, label } => (env_up(env, *up)?.vertex, *label),
            Expr::Selector(x, label) => (self.peek_ref(env, *x, hops + 1)?, *label),
            Expr::Import(pkg) => return self.packages.get(*pkg as usize).copied().flatten(),
            _ => return None,
        };
        let (s, label) = (self.deref(scope.0), scope.1);
        let sx = self.v(s);
        if !matches!(
            sx.status,
            Status::Evaluated | Status::Finalizing | Status::Finalized
        ) || sx.is_disjunct
            || sx.disj.is_some()
        {
            return None;
        }
        self.arc(s, label).map(|a| self.deref(a))
    }
}

/// How many references deep [`Runtime::copy_of_finished`] looks for a conjunct's target.
const COPY_SEARCH_DEPTH: u32 = 4;

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::super::api::Instance;
    use super::*;

    thread_local! {
        /// Finishes definition copies as any other vertex, to compare with skipping them.
        pub(super) static FINISH_COPIES: Cell<bool> = const { Cell::new(false) };
    }

    /// The JSON export of `src`, or its errors.
    pub(super) fn export_of(src: &str) -> String {
        match Instance::from_sources(&[("t.cue".to_string(), src.to_string())]) {
            Ok(mut inst) => inst.export_json().unwrap_or_else(|e| e),
            Err(e) => super::super::api::format_errors(&e),
        }
    }

    /// The status of the vertex at `path` once the whole file is finished.
    fn status_after_finishing(src: &str, path: &[&str]) -> Status {
        let mut inst =
            Instance::from_sources(&[("t.cue".to_string(), src.to_string())]).expect("compiles");
        let root = inst.root;
        assert!(inst.rt.finalize(root, false).is_none(), "no error");
        let mut v = root;
        for p in path {
            let label = inst.rt.prog.labels.ident(p);
            v = inst.rt.deref(v);
            v = inst
                .rt
                .arc(v, label)
                .unwrap_or_else(|| panic!("no field {p}"));
        }
        inst.rt.v(v).status
    }

    const TEMPLATE: &str = include_str!("../../testdata/eval/copy_definition_template.cue");

    #[test]
    fn a_definition_copy_of_a_finished_value_is_not_finished_again() {
        assert_eq!(
            status_after_finishing(TEMPLATE, &["config", "name"]),
            Status::Finalized
        );
        let copy = ["objects", "a", "#config"];
        assert_eq!(status_after_finishing(TEMPLATE, &copy), Status::Finalized);
        // Nothing refers to the copy's `name`: it is never evaluated.
        let name = ["objects", "a", "#config", "name"];
        assert_eq!(status_after_finishing(TEMPLATE, &name), Status::Unprocessed);
    }

    #[test]
    fn a_definition_copy_with_a_literal_of_its_own_is_finished() {
        let src =
            format!("{TEMPLATE}\nobjects: c: #Template & {{#config: config, #config: port: 80}}\n");
        let name = ["objects", "c", "#config", "name"];
        assert_eq!(status_after_finishing(&src, &name), Status::Finalized);
    }

    #[test]
    fn template_data_of_a_definition_copy_is_read_from_what_it_copies() {
        let src = include_str!("../../testdata/eval/copy_definition_template_execute.cue");
        // `objects.a.conf` needs the data of the copy; `config` gives it.
        let name = ["objects", "a", "#config", "name"];
        assert_eq!(status_after_finishing(src, &name), Status::Unprocessed);
        // A copy with a value of its own is read itself.
        let name = ["objects", "c", "#config", "name"];
        assert_eq!(status_after_finishing(src, &name), Status::Finalized);
        FINISH_COPIES.set(true);
        let finished = export_of(src);
        FINISH_COPIES.set(false);
        assert_eq!(finished, export_of(src));
    }

    #[test]
    fn a_lone_definition_copy_stands_on_the_definition() {
        let src = "#C: {a: {b: 1}, c: a.b + 1, d: {e: 1}}\n#T: {#c: #C, out: #c.c}\nx: #T\n";
        assert_eq!(status_after_finishing(src, &["#C", "d"]), Status::Finalized);
        // `out` evaluates the copy's `c` and so `a`; nothing refers to `d`.
        assert_eq!(
            status_after_finishing(src, &["x", "#c", "a"]),
            Status::Evaluated
        );
        assert_eq!(
            status_after_finishing(src, &["x", "#c", "d"]),
            Status::Unprocessed
        );
    }
}

/// Programs in the shape of a module's templates: a schema `#C`, values for it, a `config` that
/// is both, and templates that carry `#config: #C` and are used with `#config: config`, in
/// either order, sometimes with more of their own. Leaving the copies unfinished must change
/// nothing export shows, errors included.
#[cfg(test)]
mod copy_law {
    use proptest::prelude::*;

    use super::tests::FINISH_COPIES;

    /// The fields a schema `#C` is made of.
    const SCHEMA_FIELDS: &[&str] = &[
        "a: int",
        "a: *1 | int",
        "a: >0",
        "b: string",
        "b: *\"x\" | string",
        "s: {x: 1, y: *2 | int, ...}",
        "s: {x: int, z?: int}",
        "l: [...int]",
        "c: a + 1",
        "t: {u: b}",
        "o?: {p: int}",
    ];

    /// The fields of the values: some conflict with the schema or are not allowed by it.
    const VALUE_FIELDS: &[&str] = &[
        "a: 3",
        "a: -1",
        "b: \"v\"",
        "s: {x: 1, w: 5}",
        "s: {y: 7}",
        "s: {x: 2}",
        "l: [1, 2]",
        "e: 1",
        "o: {p: 1}",
        "t: u: \"v\"",
    ];

    /// What a use of the template may add to the copy besides `config`.
    const USE_EXTRAS: &[&str] = &[
        "",
        ", #config: a: 3",
        ", #config: s: w: 1",
        ", #config: q: 1",
    ];

    /// The copy as a definition or as a hidden field.
    const COPY_NAMES: &[&str] = &["#config", "_config"];

    /// What a template selects from its copy, or the text `text/template` makes of it.
    const OUT_FIELDS: &[&str] = &[
        "#config.s",
        "#config.a",
        "#config",
        "#config.t",
        "#config.l",
        "template.Execute(\"{{ . }}\", #config)",
    ];

    fn program() -> impl Strategy<Value = String> {
        (
            prop::collection::vec(prop::sample::select(SCHEMA_FIELDS), 1..5),
            prop::collection::vec(prop::sample::select(VALUE_FIELDS), 0..4),
            any::<bool>(),
            prop::collection::vec(prop::sample::select(OUT_FIELDS), 1..3),
            prop::collection::vec(prop::sample::select(USE_EXTRAS), 1..3),
            prop::sample::select(COPY_NAMES),
        )
            .prop_map(|(schema, values, values_first, outs, uses, name)| {
                let mut p = format!("#C: {{\n\t{}\n}}\n", schema.join("\n\t"));
                let vals = format!("values: {{{}}}\n", values.join(", "));
                if values_first {
                    p += &vals;
                    p += "values: #C\nconfig: values\n";
                } else {
                    p += "values: #C\n";
                    p += &vals;
                    p += "config: #C\nconfig: values\n";
                }
                p += "#T: {\n\t#config: #C\n";
                for (i, o) in outs.iter().enumerate() {
                    p += &format!("\tout{i}: {o}\n");
                }
                p += "}\n";
                for (i, u) in uses.iter().enumerate() {
                    p += &format!("obj{i}: #T & {{#config: config{u}}}\n");
                }
                if p.contains("template.Execute") {
                    p.insert_str(0, "import \"text/template\"\n");
                }
                p.replace("#config", name)
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

        #[test]
        fn unfinished_copies_export_the_same(src in program()) {
            FINISH_COPIES.set(true);
            let finished = super::tests::export_of(&src);
            FINISH_COPIES.set(false);
            let skipped = super::tests::export_of(&src);
            prop_assert_eq!(finished, skipped, "{}", src);
        }
    }
}
