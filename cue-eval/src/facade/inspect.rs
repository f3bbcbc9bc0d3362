//! What Go's `cue.Value` answers about a value beyond its data: its error ([`Value::err`]), the
//! kinds it may still take ([`Value::incomplete_kind`]), its closedness ([`Value::is_closed`],
//! [`Value::allows`]) and equality with another value ([`Value::equals`]), with the
//! [`Selector`]s that name fields as Go's `cue.Selector` does ([`Value::lookup_selectors`]).
//!
//! A value is finished (evaluated completely, as `cue` does before it reports) before any of
//! these answer.

use std::fmt;

use crate::eval::VId;
use crate::eval::label::Label;
use crate::eval::value::{Bottom, Value as Val};

use super::error::{Error, ErrorCode, ErrorItem, Position, Result};
use super::value::{Kind, Value};

/// One step of a path, as Go's `cue.Selector`: a field by the kind of its label, a list
/// index, or, for [`Value::allows`], any label of a kind.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Selector {
    /// A regular field by its label, unquoted (`a` for `a:` and for `"a":`, `x-y` for
    /// `"x-y":`); Go's `cue.Str`.
    Field(String),
    /// A definition, with its `#` (`#A`); Go's `cue.Def`.
    Definition(String),
    /// A hidden field or hidden definition, with its underscore (`_a`, `_#A`), of whichever
    /// package declares it; Go's `cue.Hid`.
    Hidden(String),
    /// A list element; Go's `cue.Index`.
    Index(usize),
    /// Any string label (`cue.AnyString`), for [`Value::allows`].
    AnyString,
    /// Any list index (`cue.AnyIndex`), for [`Value::allows`].
    AnyIndex,
}

/// An alternative of a disjunction, as [`Value::disjuncts`] gives it.
#[derive(Clone, Debug)]
pub struct Disjunct {
    /// The alternative's value.
    pub value: Value,
    /// Whether the alternative is a default (`*v`).
    pub default: bool,
}

impl fmt::Display for Selector {
    /// The selector as CUE writes it in a path (`a`, `"x-y"`, `"_a"` for a regular field, `#A`,
    /// `_a`, `0`); `[string]` and `[int]` for the patterns.
    ///
    /// ```
    /// use cue_eval::Selector;
    /// let path = [Selector::Field("a".into()), Selector::Field("x-y".into()), Selector::Index(0)];
    /// let text: Vec<String> = path.iter().map(|s| s.to_string()).collect();
    /// assert_eq!(text.join("."), "a.\"x-y\".0");
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Selector::Field(n) if is_plain(n) => f.write_str(n),
            Selector::Field(n) => f.write_str(&crate::eval::label::quote(n)),
            Selector::Definition(n) | Selector::Hidden(n) => f.write_str(n),
            Selector::Index(i) => write!(f, "{i}"),
            Selector::AnyString => f.write_str("[string]"),
            Selector::AnyIndex => f.write_str("[int]"),
        }
    }
}

impl Value {
    /// The value at a path of [`Selector`]s below this one (Go's `LookupPath`), taking
    /// defaults on the way as [`Value::lookup`] does. A selector of a pattern
    /// ([`Selector::AnyString`], [`Selector::AnyIndex`]) selects no field.
    ///
    /// ```
    /// use cue_eval::Selector;
    /// let ctx = cue_eval::Context::new();
    /// let v = ctx.compile_str("#A: {\"x-y\": [1, 2]}\n_h: 3").unwrap();
    /// let path = [Selector::Definition("#A".into()), Selector::Field("x-y".into()), Selector::Index(1)];
    /// assert_eq!(v.lookup_selectors(&path).unwrap().decode::<i64>().unwrap(), 2);
    /// assert_eq!(v.lookup_selectors(&[Selector::Hidden("_h".into())]).unwrap().decode::<i64>().unwrap(), 3);
    /// assert!(v.lookup_selectors(&[Selector::Field("b".into())]).is_err());
    /// ```
    pub fn lookup_selectors(&self, path: &[Selector]) -> Result<Value> {
        let mut sh = self.sh.borrow_mut();
        let mut v = self.v;
        let mut labels = Vec::with_capacity(path.len());
        for (i, s) in path.iter().enumerate() {
            let Some(l) = label(&mut sh.inst.rt.prog.labels, s) else {
                return Err(Error::msg(format!("{s}: a pattern selects no field")));
            };
            let rt = &mut sh.inst.rt;
            rt.evaluate(v);
            let d = rt.default_of(v);
            rt.evaluate(d);
            match rt.arc(d, l) {
                Some(a) => v = a,
                None => {
                    let here: Vec<String> = path[..i].iter().map(|s| s.to_string()).collect();
                    return Err(Error::at_path(
                        here.join("."),
                        format!("undefined field: {s}"),
                    ));
                }
            }
            labels.push(match s {
                Selector::Field(n) | Selector::Definition(n) | Selector::Hidden(n) => n.clone(),
                Selector::Index(i) => i.to_string(),
                Selector::AnyString | Selector::AnyIndex => unreachable!("no label"),
            });
        }
        drop(sh);
        let path = self.path.as_ref().map(|base| {
            let mut p = base.clone();
            p.extend(labels);
            p
        });
        Ok(self.reached(v, path))
    }

    /// The value's error, when it is one (Go's `Err`): the error's CUE path, message and
    /// positions, its [`ErrorCode`], and, for a disjunction none of whose alternatives
    /// succeeds, one more item per failed alternative after the `N errors in empty
    /// disjunction` header. A struct whose field has a permanent error carries that error too,
    /// with the field's path.
    ///
    /// ```
    /// use cue_eval::ErrorCode;
    /// let ctx = cue_eval::Context::new();
    /// let v = ctx.compile_str("a: {b: 1 & 2}\nc: *(1 & 2) | (3 & 4)\nd: _|_").unwrap();
    /// let e = v.lookup("a.b").unwrap().err().unwrap();
    /// assert_eq!(v.lookup("a").unwrap().err().unwrap().errors()[0].path(), "a.b");
    /// assert_eq!((e.errors()[0].path(), e.errors()[0].message()), ("a.b", "conflicting values 2 and 1"));
    /// assert_eq!(v.lookup("c").unwrap().err().unwrap().errors().len(), 3);
    /// assert_eq!(v.lookup("d").unwrap().err().unwrap().errors()[0].code(), ErrorCode::User);
    /// ```
    pub fn err(&self) -> Option<Error> {
        let mut sh = self.sh.borrow_mut();
        sh.inst.rt.finalize(self.v, true);
        let rt = &sh.inst.rt;
        let d = rt.deref(self.v);
        let e = rt.v(d).err.clone()?;
        let path = rt.path(e.at.unwrap_or(self.v));
        // The header of an empty disjunction's list has no position of its own in CUE (its
        // disjuncts' errors carry them); the evaluator keeps them all on the header for the
        // text it prints.
        let header = !e.subs.is_empty() && e.msg.contains("errors in empty disjunction");
        let code = ErrorCode::from_eval(e.code);
        let mut items = vec![ErrorItem::new(
            path.clone(),
            e.msg.clone(),
            positions(&sh.inst, &e, header),
            code,
        )];
        for s in &e.subs {
            // A failed alternative's error, at its own vertex's path when known; a nested
            // empty disjunction's header has no position either.
            let header = s.msg.contains("errors in empty disjunction");
            items.push(ErrorItem::new(
                s.at.map_or_else(|| path.clone(), |a| sh.inst.rt.path(a)),
                s.msg.clone(),
                positions(&sh.inst, s, header),
                ErrorCode::from_eval(s.code),
            ));
        }
        let sources = sh.sources().clone();
        Some(Error::from_items(items, &sources))
    }

    /// The kinds the value may still take, defaults not taken (Go's `IncompleteKind`): `int`
    /// for `int`, `>0` and `3`; `int|string` for `int | string` and for `*1 | "a"`; no kind
    /// ([`Kind::BOTTOM`]) for an error, incomplete ones included. [`Value::kind`] is the same
    /// but keeps the kinds of a value whose only error is being incomplete.
    ///
    /// ```
    /// use cue_eval::Kind;
    /// let ctx = cue_eval::Context::new();
    /// let v = ctx.compile_str("a: *1 | \"s\"\nb: number\nc: 1 & 2").unwrap();
    /// assert_eq!(v.lookup("a").unwrap().incomplete_kind().to_string(), "int|string");
    /// assert_eq!(v.lookup("b").unwrap().incomplete_kind(), Kind::NUMBER);
    /// assert_eq!(v.lookup("c").unwrap().incomplete_kind(), Kind::BOTTOM);
    /// ```
    pub fn incomplete_kind(&self) -> Kind {
        let mut sh = self.sh.borrow_mut();
        let rt = &mut sh.inst.rt;
        rt.finalize(self.v, true);
        let d = rt.deref(self.v);
        if rt.v(d).err.is_some() {
            return Kind::BOTTOM;
        }
        let k = if let Some(dj) = rt.v(d).disj.clone() {
            dj.alts
                .iter()
                .fold(crate::eval::value::Kind::BOTTOM, |k, &a| {
                    k.or(rt.v(rt.deref(a)).kind)
                })
        } else {
            let vx = rt.v(d);
            match &vx.scalar {
                Some(s) => s.kind(),
                None => vx.kind,
            }
        };
        Kind::from_eval(k)
    }

    /// Whether the value carries closedness (Go's `IsClosed`): a list without `...`, a value
    /// inside a definition, or a struct closed by `close()` or by a definition. A `...` or a
    /// pattern for every label lifts the restriction ([`Value::allows`]) without making the
    /// struct non-closed. The default of a disjunction is asked.
    ///
    /// ```
    /// let ctx = cue_eval::Context::new();
    /// let v = ctx.compile_str("#A: {a: int}\nb: #A\nc: {a: 1}\nd: close({a: 1})\ne: [1]\nf: [...]").unwrap();
    /// let closed = |p| v.lookup(p).unwrap().is_closed();
    /// assert_eq!([closed("#A"), closed("b"), closed("c"), closed("d")], [true, true, false, true]);
    /// assert_eq!([closed("e"), closed("f")], [true, false]);
    /// ```
    pub fn is_closed(&self) -> bool {
        let mut sh = self.sh.borrow_mut();
        let rt = &mut sh.inst.rt;
        rt.finalize(self.v, true);
        let d = rt.default_of(self.v);
        let vx = rt.v(d);
        if vx.is_list {
            return !vx.list_open();
        }
        in_definition(rt, d) || !rt.v(d).closed_groups.is_empty()
    }

    /// Whether a field (or list element) named by `sel` may be added to the value (Go's
    /// `Allows`): any label of an open struct, a label a closed struct declares or one of its
    /// patterns matches; [`Selector::AnyString`] for any string label, [`Selector::AnyIndex`]
    /// for any further element of a list. Definitions and hidden fields are always allowed.
    /// The default of a disjunction is asked.
    ///
    /// ```
    /// use cue_eval::Selector;
    /// let ctx = cue_eval::Context::new();
    /// let v = ctx.compile_str("#A: {a: int, [=~\"^x\"]: int}\nb: {}\nl: [...int]").unwrap();
    /// let a = v.lookup("#A").unwrap();
    /// assert!(a.allows(&Selector::Field("a".into())));
    /// assert!(a.allows(&Selector::Field("xy".into())));
    /// assert!(!a.allows(&Selector::Field("b".into())));
    /// assert!(!a.allows(&Selector::AnyString));
    /// assert!(v.lookup("b").unwrap().allows(&Selector::AnyString));
    /// assert!(v.lookup("l").unwrap().allows(&Selector::AnyIndex));
    /// ```
    pub fn allows(&self, sel: &Selector) -> bool {
        let mut sh = self.sh.borrow_mut();
        sh.inst.rt.finalize(self.v, true);
        let d = sh.inst.rt.default_of(self.v);
        let closed = !open_to_any(&sh.inst.rt, d);
        let l = match sel {
            Selector::AnyString => return !closed,
            Selector::AnyIndex => {
                let vx = sh.inst.rt.v(d);
                return vx.is_list && vx.list_open();
            }
            s => match label(&mut sh.inst.rt.prog.labels, s) {
                Some(l) => l,
                None => return false,
            },
        };
        let rt = &mut sh.inst.rt;
        if !l.is_regular() || rt.arc(d, l).is_some() || !closed {
            return true;
        }
        let pats = rt.v(d).patterns_copy();
        pats.iter().any(|(f, _)| rt.label_matches(f, l))
    }

    /// The alternatives of a disjunction (Go's `Expr` with `OrOp`), each with whether it is a
    /// default (marked `*`), as evaluation left them: alternatives that failed are gone and
    /// equal ones merged, defaults first. Empty when the value is not a disjunction, one that
    /// evaluation resolved to a single alternative included.
    ///
    /// ```
    /// let ctx = cue_eval::Context::new();
    /// let v = ctx.compile_str("a: *1 | string | (3 & 4)\nb: 1 | 1").unwrap();
    /// let alts: Vec<(String, bool)> = v.lookup("a").unwrap().disjuncts().into_iter()
    ///     .map(|d| (d.value.to_string(), d.default)).collect();
    /// assert_eq!(alts, [("1".to_string(), true), ("string".to_string(), false)]);
    /// assert!(v.lookup("b").unwrap().disjuncts().is_empty());
    /// ```
    pub fn disjuncts(&self) -> Vec<Disjunct> {
        let mut sh = self.sh.borrow_mut();
        let rt = &mut sh.inst.rt;
        rt.finalize(self.v, true);
        let d = rt.deref(self.v);
        let Some(dj) = rt.v(d).disj.clone() else {
            return Vec::new();
        };
        drop(sh);
        dj.alts
            .iter()
            .enumerate()
            .map(|(i, &a)| Disjunct {
                value: self.reached(a, None),
                default: i < dj.num_defaults,
            })
            .collect()
    }

    /// The bounds and validators the value carries besides its kind, its scalar and its fields
    /// (`>0` and `<10` of `int & >0 & <10`, `strings.MinRunes(3)`, `!=null` embedded in a
    /// struct that has fields too), each as a value of its own that [`Value::equals`] compares
    /// and [`Display`](fmt::Display) prints: the operands of Go's `Expr()` on such a
    /// conjunction, without the kind and the fields. The alternatives of a disjunction are
    /// asked through [`Value::disjuncts`].
    ///
    /// ```
    /// let ctx = cue_eval::Context::new();
    /// let v = ctx.compile_str("a: int & >0 & <10\nb: {!=null, x: 1}\nc: {x: 1}").unwrap();
    /// let texts = |p| v.lookup(p).unwrap().constraints().iter().map(|c| c.to_string()).collect::<Vec<_>>();
    /// assert_eq!(texts("a"), [">0", "<10"]);
    /// assert_eq!(texts("b"), ["!=null"]);
    /// assert!(texts("c").is_empty());
    /// let a = v.lookup("a").unwrap().constraints();
    /// assert!(a[0].equals(&v.compile_expr(">0").unwrap()));
    /// ```
    pub fn constraints(&self) -> Vec<Value> {
        use crate::eval::ir::ArcType;
        use crate::eval::{CExpr, Conjunct};
        let mut sh = self.sh.borrow_mut();
        let rt = &mut sh.inst.rt;
        rt.finalize(self.v, true);
        let d = rt.deref(self.v);
        let cs = rt.v(d).constraints_copy();
        let label = rt.prog.labels.string("");
        let out: Vec<VId> = cs
            .into_iter()
            .map(|c| {
                let w = rt.new_vertex(None, label, ArcType::Member);
                rt.vm(w).conjuncts.push(Conjunct {
                    env: None,
                    x: CExpr::Value(c),
                    ci: Default::default(),
                    span: Default::default(),
                });
                w
            })
            .collect();
        drop(sh);
        out.into_iter().map(|w| self.reached(w, None)).collect()
    }

    /// Whether two values of one instance are the same CUE value, compared structurally (Go's
    /// `Equals`, which this extends to values that are not concrete): the same scalar, the same
    /// kind and constraints (`int & >0` equals `>0 & int`), disjunctions with the same
    /// alternatives and defaults, fields and elements equal one by one. Two errors are equal.
    /// Values of different instances are never equal.
    ///
    /// ```
    /// let ctx = cue_eval::Context::new();
    /// let v = ctx.compile_str("a: {x: int & >0}\nb: {x: >0 & int}\nc: {x: 1}").unwrap();
    /// let at = |p| v.lookup(p).unwrap();
    /// assert!(at("a").equals(&at("b")));
    /// assert!(!at("a").equals(&at("c")));
    /// ```
    pub fn equals(&self, other: &Value) -> bool {
        if !std::rc::Rc::ptr_eq(&self.sh, &other.sh) {
            return false;
        }
        self.sh
            .borrow_mut()
            .inst
            .rt
            .vertices_equal(self.v, other.v, 0)
    }
}

/// Whether `s` can be written unquoted as a regular field's label.
fn is_plain(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_alphabetic() || c == '$')
        && chars.all(|c| c.is_alphanumeric() || c == '_' || c == '$')
}

/// The label a selector names, none for a pattern.
fn label(labels: &mut crate::eval::label::Interner, s: &Selector) -> Option<Label> {
    Some(match s {
        Selector::Field(n) => labels.string(n),
        Selector::Definition(n) | Selector::Hidden(n) => labels.ident(n),
        Selector::Index(i) => Label::int(*i as u32),
        Selector::AnyString | Selector::AnyIndex => return None,
    })
}

/// Whether `d` or a vertex above it is a definition.
fn in_definition(rt: &crate::eval::Runtime, d: VId) -> bool {
    std::iter::successors(Some(d), |&p| rt.v(p).parent).any(|p| rt.v(p).label.is_def())
}

/// Whether any label may be added to `d`: not closed, or closedness lifted by `...` or by a
/// pattern for every label.
fn open_to_any(rt: &crate::eval::Runtime, d: VId) -> bool {
    let vx = rt.v(d);
    if vx.is_list {
        return !vx.list_open();
    }
    let closed = in_definition(rt, d) || !vx.closed_groups.is_empty();
    let any = vx
        .patterns()
        .iter()
        .any(|(f, _)| matches!(f, Val::Top | Val::Basic(_)));
    !(closed && !any && vx.open_groups().is_empty())
}

/// The positions of `e`; none for a disjunction's header.
fn positions(inst: &crate::eval::api::Instance, e: &Bottom, header: bool) -> Vec<Position> {
    if header {
        return Vec::new();
    }
    e.spans
        .iter()
        .filter_map(|s| {
            let f = inst.files.get(s.file.0 as usize)?;
            let (l, c) = f.line_col(s.start as usize);
            Some(Position::at(f.name.clone(), l, c, s.start as usize))
        })
        .collect()
}
