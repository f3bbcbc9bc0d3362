//! [`Value`]: a CUE value of an evaluated instance, to look into, combine, check and convert.

use std::cell::RefCell;
use std::fmt;
use std::rc::Rc;
use std::sync::Arc;

use crate::encode::Data;
use crate::encode::json::{CappedBuffer, JsonWriter};
use crate::encode::sink::{DataBuilder, NullSink, Sink};
use crate::eval::VId;
use crate::eval::api::{EvalError, Instance};
use crate::eval::ir::ArcType;
use crate::eval::label::{Label, quote};
use crate::eval::print;
use crate::eval::value::ErrCode;
use crate::load::Attribute;

use super::error::{Error, Position, Result};

/// The evaluator state values share: one instance (its runtime holds every vertex), the
/// syntax of its main files (for attributes) and the file texts errors point into.
pub(crate) struct Shared {
    pub(crate) inst: Instance,
    pub(crate) main_files: Vec<crate::ast::File>,
    /// Files of the main package not parsed into `main_files` yet, by index in `inst.files`:
    /// a loaded package's trees go to the evaluator, and only [`Value::attributes`] needs
    /// them again, so they are parsed again from the text when it is first called.
    pub(crate) unparsed_main: Vec<usize>,
    sources: Arc<Vec<(String, Arc<String>)>>,
}

impl Shared {
    pub(crate) fn new(inst: Instance, main_files: Vec<crate::ast::File>) -> Rc<RefCell<Shared>> {
        Rc::new(RefCell::new(Shared {
            inst,
            main_files,
            unparsed_main: Vec::new(),
            sources: Arc::default(),
        }))
    }

    /// The state of a loaded package whose main files are `inst.files[i]` for `i` in `main`.
    pub(crate) fn loaded(inst: Instance, main: Vec<usize>) -> Rc<RefCell<Shared>> {
        let sh = Shared::new(inst, Vec::new());
        sh.borrow_mut().unparsed_main = main;
        sh
    }

    /// The syntax trees of the main files.
    fn main_files(&mut self) -> &[crate::ast::File] {
        for i in std::mem::take(&mut self.unparsed_main) {
            if let Some(f) = self.inst.files.get(i) {
                let (ast, _) = crate::parse(crate::ast::FileId(i as u32), &f.text);
                self.main_files.push(ast);
            }
        }
        &self.main_files
    }

    /// The names and texts of the instance's files, refreshed when files were added.
    pub(super) fn sources(&mut self) -> &Arc<Vec<(String, Arc<String>)>> {
        if self.sources.len() != self.inst.files.len() {
            self.sources = Arc::new(
                self.inst
                    .files
                    .iter()
                    .map(|f| (f.name.clone(), f.text.clone()))
                    .collect(),
            );
        }
        &self.sources
    }

    pub(crate) fn error(&mut self, errs: Vec<EvalError>) -> Error {
        let sources = self.sources().clone();
        Error::from_eval(errs, &sources)
    }

    /// Compiles `expr` as a new package of this runtime and evaluates it: the vertex of its
    /// value. Only a syntax error fails; an error of compiling it (an unknown reference) is an
    /// error in the value, not a compile error of the instance.
    pub(crate) fn compile_expr_alone(&mut self, name: &str, expr: &str) -> Result<VId> {
        self.compile_value(name, "__expr", expr, false)
    }

    /// Compiles `expr` as a new package of this runtime and returns the vertex of its value.
    pub(crate) fn compile_expr(&mut self, name: &str, expr: &str) -> Result<VId> {
        self.compile_value(name, "__value", expr, true)
    }

    /// Compiles `expr` as field `field` of a new package of this runtime and evaluates it.
    /// With `strict`, a compile error (an unknown reference) fails, as one of the instance;
    /// without, it stays an error in the value and the instance does not report it.
    fn compile_value(&mut self, name: &str, field: &str, expr: &str, strict: bool) -> Result<VId> {
        let seen = self.inst.rt.prog.errors.len();
        let text = format!("{field}: {expr}\n");
        let root = match self.inst.add_package(&[(name.to_string(), text)]) {
            Ok(r) => r,
            Err(e) => return Err(self.error(e)),
        };
        if strict {
            let errs = self.inst.compile_errors();
            if !errs.is_empty() {
                return Err(self.error(errs));
            }
        } else {
            // Errors of compiling the expression are errors in its value, where they occur;
            // they are not the compile errors of the instance, which exports report.
            self.inst.rt.prog.errors.truncate(seen);
        }
        self.inst.rt.evaluate(root);
        let l = self.inst.rt.prog.labels.ident(field);
        self.inst
            .rt
            .arc(root, l)
            .ok_or_else(|| Error::msg("compiled expression has no value"))
    }
}

/// A CUE value: a field of an evaluated package, or the result of [`Value::unify`],
/// [`Value::fill`] or [`crate::Context::encode`].
///
/// Values are evaluated on demand and share their instance: cloning a `Value` is cheap, and
/// values of one instance can be unified with each other. A `Value` is not `Send` (the
/// evaluator's arena lives on one thread).
///
/// ```
/// let ctx = cue_eval::Context::new();
/// let v = ctx.compile_str(r#"
/// #Port: int & >0 & <65536
/// port: #Port | *8080
/// name: "web"
/// "#).unwrap();
/// assert_eq!(v.lookup("name").unwrap().decode::<String>().unwrap(), "web");
/// assert_eq!(v.lookup("port").unwrap().default().decode::<u16>().unwrap(), 8080);
/// let bad = v.lookup("#Port").unwrap().unify(&ctx.encode(&0).unwrap()).unwrap();
/// assert!(bad.validate(Default::default()).is_err());
/// ```
#[derive(Clone)]
pub struct Value {
    pub(crate) sh: Rc<RefCell<Shared>>,
    pub(crate) v: VId,
    /// The labels from the package root, for values reached by [`Value::lookup`] (attributes
    /// are found by path in the syntax).
    pub(crate) path: Option<Vec<String>>,
    /// The package root the path starts from (`cue export -e` finishes it before selecting).
    root: Option<VId>,
}

/// A set of CUE kinds: what a value can still be (`int`, `string|int`, `_`).
///
/// ```
/// use cue_eval::Kind;
/// let ctx = cue_eval::Context::new();
/// let v = ctx.compile_str("a: int | string\nb: 1").unwrap();
/// assert_eq!(v.lookup("b").unwrap().kind(), Kind::INT);
/// assert_eq!(v.lookup("a").unwrap().kind().to_string(), "int|string");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Kind(crate::eval::value::Kind);

impl Kind {
    /// No kind: the value is an error (`_|_`).
    pub const BOTTOM: Kind = Kind(crate::eval::value::Kind::BOTTOM);
    /// `null`.
    pub const NULL: Kind = Kind(crate::eval::value::Kind::NULL);
    /// `bool`.
    pub const BOOL: Kind = Kind(crate::eval::value::Kind::BOOL);
    /// `int`.
    pub const INT: Kind = Kind(crate::eval::value::Kind::INT);
    /// `float`.
    pub const FLOAT: Kind = Kind(crate::eval::value::Kind::FLOAT);
    /// `int | float`.
    pub const NUMBER: Kind = Kind(crate::eval::value::Kind::NUMBER);
    /// `string`.
    pub const STRING: Kind = Kind(crate::eval::value::Kind::STRING);
    /// `bytes`.
    pub const BYTES: Kind = Kind(crate::eval::value::Kind::BYTES);
    /// A list.
    pub const LIST: Kind = Kind(crate::eval::value::Kind::LIST);
    /// A struct.
    pub const STRUCT: Kind = Kind(crate::eval::value::Kind::STRUCT);
    /// Any kind (`_`).
    pub const TOP: Kind = Kind(crate::eval::value::Kind::TOP);

    /// Whether every kind of `other` is in this set.
    pub fn contains(self, other: Kind) -> bool {
        self.0.contains(other.0)
    }

    /// Whether the set is a single kind.
    pub fn is_single(self) -> bool {
        self.0.0.count_ones() == 1
    }

    pub(crate) fn from_eval(k: crate::eval::value::Kind) -> Kind {
        Kind(k)
    }
}

impl fmt::Display for Kind {
    /// The kind as CUE writes it in messages (`int`, `number`, `string|int`, `_`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.name())
    }
}

/// Which fields [`Value::fields`] yields besides regular ones.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FieldOptions {
    /// Optional (`a?:`) and required (`a!:`) fields.
    pub optional: bool,
    /// Definitions (`#A`).
    pub definitions: bool,
    /// Hidden fields (`_a`, `_#A`).
    pub hidden: bool,
}

/// How a field is declared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldKind {
    /// `a: v`.
    Regular,
    /// `a?: v`.
    Optional,
    /// `a!: v`.
    Required,
    /// `#A: v`.
    Definition,
    /// `_a: v` or `_#A: v`.
    Hidden,
}

/// Whether a field must, may or must eventually exist, whatever its label (Go's
/// `Selector.ConstraintType`): `a?:`, `_a?:` and `#A?:` are all optional.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Presence {
    /// `a: v`, and list elements.
    Regular,
    /// `a?: v`.
    Optional,
    /// `a!: v`.
    Required,
}

/// A field of a struct, as [`Value::fields`] yields it.
#[derive(Clone)]
pub struct Field {
    /// The label as CUE prints it in paths (`a`, `#A`, `_a`, `x-y` unquoted, `0` for a list
    /// element). A hidden label is its name alone: the package it belongs to is the package of
    /// the file that declares it.
    pub label: String,
    /// Whether the field is regular, a definition or hidden.
    pub kind: FieldKind,
    /// Whether the field is optional or required, for definitions and hidden fields too.
    pub presence: Presence,
    /// The field's value.
    pub value: Value,
}

/// What [`Value::validate`] checks besides permanent errors (conflicts, failed constraints,
/// fields a closed struct does not allow, which are always errors).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ValidateOptions {
    /// Every regular field must be concrete, defaults taken (`cue vet -c`, `cue export`).
    pub concrete: bool,
    /// Also check hidden fields.
    pub hidden: bool,
    /// Also check optional fields.
    pub optional: bool,
}

impl Value {
    /// A value: a package root when `path` is empty, else one made by unification or encoding.
    pub(crate) fn new(sh: Rc<RefCell<Shared>>, v: VId, path: Option<Vec<String>>) -> Value {
        let root = path.as_ref().is_some_and(|p| p.is_empty()).then_some(v);
        Value { sh, v, path, root }
    }

    /// A value reached from this one (its path, if any, continued).
    pub(super) fn reached(&self, v: VId, path: Option<Vec<String>>) -> Value {
        Value {
            sh: self.sh.clone(),
            v,
            path,
            root: self.root,
        }
    }

    /// The labels from the root of the instance's own package, for a value reached from it by
    /// lookups (whose errors and exports are then those of `cue` with `-e path`).
    fn package_path(&self, sh: &Shared) -> Option<Vec<String>> {
        match (self.root, &self.path) {
            (Some(root), Some(path)) if root == sh.inst.root => Some(path.clone()),
            _ => None,
        }
    }

    fn derived(&self, v: VId) -> Value {
        Value::new(self.sh.clone(), v, None)
    }

    /// The value at `path` below this one: labels separated by dots, quoted where they are not
    /// identifiers (`spec.template."app.kubernetes.io/name"`), list indices as numbers
    /// (`items.0`), definitions as written (`#Config`). Defaults are taken on the way (a
    /// selection on `*{a: 1} | {}` selects in `{a: 1}`), as CUE's selectors do.
    ///
    /// ```
    /// let ctx = cue_eval::Context::new();
    /// let v = ctx.compile_str(r#"a: {"x-y": [1, 2]}"#).unwrap();
    /// assert_eq!(v.lookup(r#"a."x-y".1"#).unwrap().decode::<i64>().unwrap(), 2);
    /// let err = v.lookup("a.b").unwrap_err();
    /// assert_eq!(err.to_string(), "a: undefined field: b");
    /// ```
    pub fn lookup(&self, path: &str) -> Result<Value> {
        if path.is_empty() {
            return Ok(self.clone());
        }
        self.lookup_path(&print::split_path(path))
    }

    /// [`Value::lookup`] with the labels already separated (and unquoted): `["metadata",
    /// "labels", "app.kubernetes.io/name"]`.
    ///
    /// ```
    /// let ctx = cue_eval::Context::new();
    /// let v = ctx.compile_str(r#"a: {"x.y": [1, 2]}"#).unwrap();
    /// assert_eq!(v.lookup_path(&["a", "x.y", "0"]).unwrap().decode::<i64>().unwrap(), 1);
    /// ```
    pub fn lookup_path<S: AsRef<str>>(&self, labels: &[S]) -> Result<Value> {
        let labels: Vec<String> = labels.iter().map(|l| l.as_ref().to_string()).collect();
        if labels.is_empty() {
            return Ok(self.clone());
        }
        let mut sh = self.sh.borrow_mut();
        let rt = &mut sh.inst.rt;
        let mut v = self.v;
        for (i, p) in labels.iter().enumerate() {
            rt.evaluate(v);
            let d = rt.default_of(rt.deref(v));
            rt.evaluate(d);
            let label = match p.parse::<u32>() {
                Ok(n) if rt.v(d).is_list => Label::int(n),
                Ok(_) => rt.prog.labels.string(p),
                Err(_) => rt.prog.labels.ident(p),
            };
            match rt.arc(d, label) {
                Some(a) => v = a,
                None => {
                    let here = labels[..i].join(".");
                    let msg = if i == 0 && self.path.as_ref().is_some_and(|p| p.is_empty()) {
                        format!("reference {} not found", quote(p))
                    } else {
                        format!("undefined field: {p}")
                    };
                    let path = match &self.path {
                        Some(base) if !base.is_empty() && !here.is_empty() => {
                            format!("{}.{here}", base.join("."))
                        }
                        Some(base) if !base.is_empty() => base.join("."),
                        _ => here,
                    };
                    return Err(sh.error(vec![EvalError {
                        path,
                        code: ErrCode::Eval,
                        msg,
                        positions: Vec::new(),
                    }]));
                }
            }
        }
        let path = self.path.as_ref().map(|base| {
            let mut p = base.clone();
            p.extend(labels);
            p
        });
        drop(sh);
        Ok(self.reached(v, path))
    }

    /// The unification of two values (`a & b`). Values of one instance (or of one
    /// [`crate::Context`]) unify as CUE does, constraints and all; a value of another instance
    /// must be concrete, and is unified as data. Errors of the result show in
    /// [`Value::validate`] and in the conversions.
    ///
    /// ```
    /// let ctx = cue_eval::Context::new();
    /// let schema = ctx.compile_str("#A: {name: string, replicas: int | *1}").unwrap();
    /// let data = ctx.compile_str(r#"name: "web""#).unwrap();
    /// let v = schema.lookup("#A").unwrap().unify(&data).unwrap();
    /// assert_eq!(v.to_json().unwrap(), "{\n    \"name\": \"web\",\n    \"replicas\": 1\n}\n");
    /// ```
    pub fn unify(&self, other: &Value) -> Result<Value> {
        let w = if Rc::ptr_eq(&self.sh, &other.sh) {
            other.v
        } else {
            let data = other.export()?;
            let expr = crate::decode::to_cue_expr(&data);
            self.sh.borrow_mut().compile_expr("value.cue", &expr)?
        };
        let v = self.sh.borrow_mut().inst.unify_vertices(self.v, w);
        Ok(self.derived(v))
    }

    /// A CUE expression compiled and evaluated as a value of this value's instance, as Go's
    /// `v.Context().CompileString(src)` makes one: a value of its own (its references are to
    /// its own fields and the standard library, not to this value's), that [`Value::equals`]
    /// can compare with this value and [`Value::unify`] unifies with it as a CUE value. A
    /// syntax error fails. As with Go's `CompileString`, other errors are the result's
    /// ([`Value::err`]): an unknown reference makes the part of the value it is in an error,
    /// and is not a compile error of this value's package.
    ///
    /// ```
    /// let ctx = cue_eval::Context::new();
    /// let pkg = ctx.compile_files(&[("a.cue".into(), "a: {x: 1, y: x + 1}".into())]).unwrap();
    /// let a = pkg.lookup("a").unwrap();
    /// assert!(a.equals(&a.compile_expr("{x: 1, y: x + 1}").unwrap()));
    /// assert!(!a.equals(&a.compile_expr("{x: 1}").unwrap()));
    /// assert!(a.compile_expr("{x: ").is_err());
    /// assert!(a.compile_expr("1 & 2").unwrap().err().is_some());
    /// let unknown = a.compile_expr("{x: nowhere}").unwrap();
    /// assert!(unknown.lookup("x").unwrap().err().is_some());
    /// assert_eq!(pkg.to_json().unwrap(), "{\n    \"a\": {\n        \"x\": 1,\n        \"y\": 2\n    }\n}\n");
    /// ```
    pub fn compile_expr(&self, src: &str) -> Result<Value> {
        let v = self.sh.borrow_mut().compile_expr_alone("expr.cue", src)?;
        Ok(self.derived(v))
    }

    /// This value with `value` (any `serde::Serialize` value) unified at `path`, a dotted path
    /// of field labels as [`Value::lookup`] takes them (an empty path fills this value itself).
    ///
    /// ```
    /// let ctx = cue_eval::Context::new();
    /// let v = ctx.compile_str("replicas: int\nname: string").unwrap();
    /// let v = v.fill("replicas", &3).unwrap().fill("name", "web").unwrap();
    /// assert_eq!(v.to_json().unwrap(), "{\n    \"replicas\": 3,\n    \"name\": \"web\"\n}\n");
    /// ```
    pub fn fill<T: serde::Serialize + ?Sized>(&self, path: &str, value: &T) -> Result<Value> {
        let data = super::serde::to_data(value)?;
        let mut expr = crate::decode::to_cue_expr(&data);
        if !path.is_empty() {
            for label in print::split_path(path).iter().rev() {
                let l = if label.starts_with('#') || label.starts_with('_') {
                    label.clone()
                } else {
                    quote(label)
                };
                expr = format!("{{{l}: {expr}}}");
            }
        }
        let w = self.sh.borrow_mut().compile_expr("fill.cue", &expr)?;
        let v = self.sh.borrow_mut().inst.unify_vertices(self.v, w);
        Ok(self.derived(v))
    }

    /// The default of a disjunction (`*1 | 2` gives `1`), or the value itself.
    pub fn default(&self) -> Value {
        let mut sh = self.sh.borrow_mut();
        let rt = &mut sh.inst.rt;
        rt.evaluate(self.v);
        let d = rt.default_of(rt.deref(self.v));
        drop(sh);
        if d == self.v {
            return self.clone();
        }
        self.reached(d, self.path.clone())
    }

    /// Whether the value is concrete data at its top: a number, string, bytes, bool, null, a
    /// struct or a list (the fields or elements may not be; [`ValidateOptions::concrete`]
    /// checks them). A disjunction is concrete only through its default ([`Value::default`]).
    pub fn is_concrete(&self) -> bool {
        let mut sh = self.sh.borrow_mut();
        let rt = &mut sh.inst.rt;
        rt.evaluate(self.v);
        let d = rt.deref(self.v);
        let vx = rt.v(d);
        if vx.err.is_some() || vx.disj.is_some() {
            return false;
        }
        use crate::eval::value::Kind as K;
        vx.scalar.is_some()
            || (!vx.kind.intersects(K::SCALAR)
                && (vx.kind.contains(K::STRUCT) || vx.kind.contains(K::LIST)))
    }

    /// The kinds the value can still have (`int` for `int & >0` as for `1`; `_` for `_`; no
    /// kind for an error). A disjunction has the kinds of its alternatives.
    pub fn kind(&self) -> Kind {
        let mut sh = self.sh.borrow_mut();
        let rt = &mut sh.inst.rt;
        rt.evaluate(self.v);
        let d = rt.deref(self.v);
        let vx = rt.v(d);
        if vx.err.as_ref().is_some_and(|e| !e.is_incomplete()) {
            return Kind::BOTTOM;
        }
        if let Some(disj) = vx.disj.clone() {
            let alts: Vec<VId> = disj.alts.clone();
            let mut k = crate::eval::value::Kind::BOTTOM;
            for a in alts {
                rt.evaluate(a);
                let a = rt.deref(a);
                k = k.or(rt.v(a).kind);
            }
            return Kind(k);
        }
        match &vx.scalar {
            Some(s) => Kind(s.kind()),
            None => Kind(vx.kind),
        }
    }

    /// The fields of a struct in CUE's order (the order `cue export` writes them): regular
    /// fields, then, as `opts` asks, definitions and hidden fields in declaration order.
    /// Optional and required fields take their place among the regular ones. A list's fields
    /// are its elements, labelled `0`, `1`, ...; a scalar has none (unless hidden fields or
    /// definitions are declared beside it).
    ///
    /// ```
    /// use cue_eval::FieldOptions;
    /// let ctx = cue_eval::Context::new();
    /// let v = ctx.compile_str("b: 1\na?: int\n#D: {}\nc: 2").unwrap();
    /// let names = |o| v.fields(o).into_iter().map(|f| f.label).collect::<Vec<_>>();
    /// assert_eq!(names(FieldOptions::default()), ["b", "c"]);
    /// let all = FieldOptions { optional: true, definitions: true, hidden: true };
    /// assert_eq!(names(all), ["b", "a", "c", "#D"]);
    /// let l = ctx.compile_str("l: [1, 2, ...]").unwrap().lookup("l").unwrap();
    /// let elements = l.fields(FieldOptions::default());
    /// assert_eq!(elements.iter().map(|f| f.label.as_str()).collect::<Vec<_>>(), ["0", "1"]);
    /// ```
    pub fn fields(&self, opts: FieldOptions) -> Vec<Field> {
        let mut sh = self.sh.borrow_mut();
        let rt = &mut sh.inst.rt;
        rt.evaluate(self.v);
        let d = rt.default_of(rt.deref(self.v));
        rt.evaluate(d);
        let mut arcs: Vec<VId> = rt.field_order(d);
        for &a in &rt.v(d).arcs {
            let l = rt.v(a).label;
            if !l.is_regular() && !l.is_let() && !l.is_int() {
                arcs.push(a);
            }
        }
        let mut out = Vec::new();
        for a in arcs {
            let ax = rt.v(a);
            let l = ax.label;
            let presence = match ax.arc_type {
                ArcType::Member => Presence::Regular,
                ArcType::Optional => Presence::Optional,
                ArcType::Required => Presence::Required,
            };
            let kind = if l.is_hidden() {
                FieldKind::Hidden
            } else if l.is_def() {
                FieldKind::Definition
            } else {
                match presence {
                    Presence::Regular => FieldKind::Regular,
                    Presence::Optional => FieldKind::Optional,
                    Presence::Required => FieldKind::Required,
                }
            };
            let wanted = match kind {
                FieldKind::Regular => true,
                FieldKind::Optional | FieldKind::Required => opts.optional,
                FieldKind::Definition => opts.definitions,
                FieldKind::Hidden => opts.hidden,
            };
            if !wanted {
                continue;
            }
            let label = if l.is_int() {
                l.index().to_string()
            } else {
                rt.prog.labels.name(l).to_string()
            };
            let path = self.path.as_ref().map(|p| {
                let mut p = p.clone();
                p.push(label.clone());
                p
            });
            out.push(Field {
                label,
                kind,
                presence,
                value: self.reached(a, path),
            });
        }
        out
    }

    /// Checks the value and everything below it: permanent errors always (conflicts, failed
    /// bounds and validators, fields a closed struct does not allow), incomplete values when
    /// `opts.concrete` asks. Errors come sorted and worded as `cue vet` prints them.
    ///
    /// ```
    /// use cue_eval::ValidateOptions;
    /// let ctx = cue_eval::Context::new();
    /// let v = ctx.compile_str("#A: {a: int}\nx: #A & {b: 1}").unwrap();
    /// let err = v.lookup("x").unwrap().validate(ValidateOptions::default()).unwrap_err();
    /// assert_eq!(err.errors()[0].path(), "x.b");
    /// assert_eq!(err.errors()[0].message(), "field not allowed");
    /// let y = ctx.compile_str("y: int").unwrap();
    /// assert!(y.validate(ValidateOptions::default()).is_ok());
    /// let concrete = ValidateOptions { concrete: true, ..Default::default() };
    /// assert!(y.validate(concrete).is_err());
    /// ```
    pub fn validate(&self, opts: ValidateOptions) -> Result<()> {
        let mut sh = self.sh.borrow_mut();
        let o = print::Options {
            hidden: opts.hidden,
            optional: opts.optional,
        };
        if let Some(path) = self.package_path(&sh) {
            // A field of a loaded package: what `cue vet` and `cue eval -e path` report, the
            // package's compile errors and the permanent errors below the field together.
            let path: Vec<&str> = path.iter().map(String::as_str).collect();
            let mut errs = print::eval_errors_at(&mut sh.inst, &path, o);
            if errs.is_empty()
                && opts.concrete
                && let Err(e) =
                    print::export_path_to(&mut sh.inst, &path, &mut NullSink { ordered: true })
            {
                errs = e;
            }
            return if errs.is_empty() {
                Ok(())
            } else {
                Err(sh.error(errs))
            };
        }
        let mut errs = sh.inst.compile_errors();
        if errs.is_empty() {
            if opts.concrete
                && let Err(e) =
                    print::export_vertex_to(&mut sh.inst, self.v, &mut NullSink { ordered: true })
            {
                errs = e;
            }
            if errs.is_empty() {
                errs = print::vertex_errors(&mut sh.inst, self.v, o);
            }
        }
        if errs.is_empty() {
            Ok(())
        } else {
            Err(sh.error(errs))
        }
    }

    /// The attributes named `name` of the field this value was looked up at, as written on
    /// every declaration of that field in the package's files (`@go(Name)`, `@timoni(...)`).
    /// Values made by [`Value::unify`] or [`Value::fill`] have no field and no attributes.
    ///
    /// ```
    /// let ctx = cue_eval::Context::new();
    /// let v = ctx.compile_str("a: int @go(A) @tag(x, type=int)").unwrap();
    /// let attrs = v.lookup("a").unwrap().attributes("tag");
    /// assert_eq!(attrs[0].positional(0), Some("x"));
    /// assert_eq!(attrs[0].get("type"), Some("int"));
    /// ```
    pub fn attributes(&self, name: &str) -> Vec<Attribute> {
        let Some(path) = &self.path else {
            return Vec::new();
        };
        let mut sh = self.sh.borrow_mut();
        let files: Vec<&crate::ast::File> = sh.main_files().iter().collect();
        let path: Vec<&str> = path.iter().map(String::as_str).collect();
        let mut out = crate::load::attr::field_attributes(&files, &path);
        out.retain(|a| a.name == name);
        out
    }

    /// Where the value's conjuncts are written, in the order they were added.
    pub fn positions(&self) -> Vec<Position> {
        let sh = self.sh.borrow();
        let spans: Vec<crate::ast::Span> = sh
            .inst
            .rt
            .v(self.v)
            .conjuncts
            .iter()
            .map(|c| c.span)
            .filter(|s| *s != crate::ast::Span::default())
            .collect();
        let mut out: Vec<Position> = Vec::new();
        for s in spans {
            if let Some(f) = sh.inst.files.get(s.file.0 as usize) {
                let (line, column) = f.line_col(s.start as usize);
                let p = Position::at(f.name.clone(), line, column, s.start as usize);
                if !out.contains(&p) {
                    out.push(p);
                }
            }
        }
        out
    }

    /// The CUE path of the value from its package root (`a.b`, `#D.x`), empty for the root and
    /// for values not reached by a lookup.
    pub fn path(&self) -> String {
        match &self.path {
            Some(p) => p.join("."),
            None => String::new(),
        }
    }

    /// The value as concrete data (defaults taken), or the errors that keep it from being data:
    /// what `cue export` does with it (`cue export -e path` for a value looked up in a package,
    /// whose package is finished first, as `cue` does, so that a struct with a permanent error
    /// in one of its fields is an error for the selection too).
    pub fn export(&self) -> Result<Data> {
        DataBuilder::build_export(|b| self.export_to(b))
    }

    /// Whether the value exports: the error [`Value::export`] would return, if any, without
    /// building the data (a caller that needs only a part of a large value exports that part
    /// and checks the rest with this).
    ///
    /// ```
    /// let ctx = cue_eval::Context::new();
    /// let v = ctx.compile_str("a: {b: 1, c: [\"x\"]}\nd: int").unwrap();
    /// assert!(v.lookup("a").unwrap().check_export().is_ok());
    /// let err = v.lookup("d").unwrap().check_export().unwrap_err();
    /// assert_eq!(err.to_string(), v.lookup("d").unwrap().export().unwrap_err().to_string());
    /// // Several errors come in the order `export` reports them.
    /// let v = ctx.compile_str("x: {b: int}\nx: {a: string, c: 1, b: int}").unwrap();
    /// let x = v.lookup("x").unwrap();
    /// assert_eq!(x.check_export().unwrap_err().to_string(), x.export().unwrap_err().to_string());
    /// ```
    pub fn check_export(&self) -> Result<()> {
        // In any field order first; a failure is walked again in output order, for the errors
        // `export` reports in that order.
        if self.export_to(&mut NullSink { ordered: false }).is_ok() {
            return Ok(());
        }
        self.export_to(&mut NullSink { ordered: true })
    }

    /// What [`Value::export`] does, with the data reported to `sink` instead of built; after an
    /// error, what the sink received is to be discarded.
    fn export_to<S: Sink>(&self, sink: &mut S) -> Result<()> {
        let mut sh = self.sh.borrow_mut();
        let errs = sh.inst.compile_errors();
        if !errs.is_empty() {
            return Err(sh.error(errs));
        }
        let r = if self.v == sh.inst.root {
            sh.inst.export_to(sink)
        } else if let (Some(root), Some(path)) = (self.root, &self.path)
            && root == sh.inst.root
        {
            // A field of a loaded package: selected again once the package is finished, as
            // `cue export -e path` does.
            let path: Vec<&str> = path.iter().map(String::as_str).collect();
            print::export_path_to(&mut sh.inst, &path, sink)
        } else {
            if let Some(root) = self.root
                && root != self.v
            {
                sh.inst.rt.finalize(root, false);
            }
            print::export_vertex_to(&mut sh.inst, self.v, sink)
        };
        r.map_err(|e| sh.error(e))
    }

    /// The value decoded into any `serde` type, through its JSON form (numbers beyond what the
    /// type holds are an error, bytes are base64 strings).
    ///
    /// ```
    /// #[derive(serde::Deserialize, Debug, PartialEq)]
    /// struct App { name: String, replicas: u32 }
    /// let ctx = cue_eval::Context::new();
    /// let v = ctx.compile_str(r#"app: {name: "web", replicas: 1 + 2}"#).unwrap();
    /// let app: App = v.lookup("app").unwrap().decode().unwrap();
    /// assert_eq!(app, App { name: "web".into(), replicas: 3 });
    /// ```
    pub fn decode<T: serde::de::DeserializeOwned>(&self) -> Result<T> {
        super::serde::from_data(&self.export()?)
    }

    /// `cue export --out json`: the value as JSON, as the `cue` command writes it (four-space
    /// indent, fields in CUE's order, trailing newline).
    pub fn to_json(&self) -> Result<String> {
        let mut text = Vec::new();
        let mut w = JsonWriter::new(&mut text, false);
        self.export_to(&mut w)?;
        w.finish().expect("writing to memory does not fail");
        Ok(String::from_utf8(text).expect("the JSON text is UTF-8"))
    }

    /// Writes what [`Value::to_json`] returns to `w`, without building the value's data, and
    /// only when it exports: the outer error is the export's (then nothing is written), the
    /// inner one `w`'s. A text of up to 1 MiB is made in memory while the value is exported and
    /// then written; a longer one is not kept: once the export is known to succeed, the value
    /// is exported again straight to `w`, a piece of 64 KiB at a time.
    ///
    /// ```
    /// let ctx = cue_eval::Context::new();
    /// let v = ctx.compile_str("a: [1, \"x\"]\nb: {}").unwrap();
    /// let mut out = Vec::new();
    /// v.write_json(&mut out).unwrap().unwrap();
    /// assert_eq!(out, v.to_json().unwrap().as_bytes());
    /// assert_eq!(String::from_utf8(out).unwrap(), "{\n    \"a\": [\n        1,\n        \"x\"\n    ],\n    \"b\": {}\n}\n");
    ///
    /// let bad = ctx.compile_str("a: int").unwrap();
    /// let mut out = Vec::new();
    /// assert!(bad.write_json(&mut out).is_err());
    /// assert!(out.is_empty());
    /// ```
    pub fn write_json<W: std::io::Write>(&self, mut w: W) -> Result<std::io::Result<()>> {
        const IN_MEMORY: usize = 1 << 20;
        let mut text = CappedBuffer::new(IN_MEMORY);
        let mut j = JsonWriter::new(&mut text, false);
        self.export_to(&mut j)?;
        if j.finish().is_ok() {
            return Ok(w.write_all(&text.bytes));
        }
        drop(text);
        let mut j = JsonWriter::new(w, false);
        self.export_to(&mut j)?;
        Ok(j.finish())
    }

    /// `cue export --out yaml`: the value as YAML, as the `cue` command writes it.
    ///
    /// ```
    /// let ctx = cue_eval::Context::new();
    /// let v = ctx.compile_str("a: [1, \"x\"]").unwrap();
    /// assert_eq!(v.to_yaml().unwrap(), "a:\n  - 1\n  - x\n");
    /// ```
    pub fn to_yaml(&self) -> Result<String> {
        Ok(crate::encode::to_yaml(&self.export()?))
    }
}

impl Value {
    /// The value as `cue eval` prints a package or an `-e` selection: a struct's fields
    /// without the braces around them (after the imports it needs), anything else as
    /// [`Display`](fmt::Display) writes it. `opts.hidden` and `opts.optional` show hidden and
    /// optional fields (`-H`, `-O`); definitions are always shown. Errors are shown in place
    /// (`_|_ // message`), as `cue eval -i` shows them.
    ///
    /// ```
    /// use cue_eval::FieldOptions;
    /// let ctx = cue_eval::Context::new();
    /// let v = ctx.compile_str("a: int\nb?: 1\n_c: 2").unwrap();
    /// assert_eq!(v.to_cue_text(FieldOptions::default()).unwrap(), "a: int\n");
    /// let all = FieldOptions { optional: true, hidden: true, ..Default::default() };
    /// assert_eq!(v.to_cue_text(all).unwrap(), "a:  int\nb?: 1\n_c: 2\n");
    /// ```
    pub fn to_cue_text(&self, opts: FieldOptions) -> Result<String> {
        let mut sh = self.sh.borrow_mut();
        let o = print::Options {
            hidden: opts.hidden,
            optional: opts.optional,
        };
        if let Some(path) = self.package_path(&sh) {
            let path: Vec<&str> = path.iter().map(String::as_str).collect();
            return print::eval_path_text(&mut sh.inst, &path, o).map_err(|e| sh.error(e));
        }
        Ok(print::body_cue(&mut sh.inst.rt, self.v, o))
    }
}

impl fmt::Display for Value {
    /// The value as CUE text, the way `cue eval` prints it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut sh = self.sh.borrow_mut();
        f.write_str(&print::vertex_cue(&mut sh.inst.rt, self.v))
    }
}

impl fmt::Debug for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Value")
            .field("path", &self.path())
            .finish_non_exhaustive()
    }
}
