//! Builtin functions: the predeclared ones (`len`, `close`, `and`, `or`, `div`, `mod`, `quo`,
//! `rem`, `matchN`, `matchIf`, `error`) and the registry of standard-library members, with
//! CUE's rule that a bool-returning function called with one argument too few is a validator.
//!
//! Every standard-library package has its own submodule with a table of [`StdMember`]s: a
//! function (its parameter kinds, whether it can be used as a validator, its implementation)
//! or a constant. Arguments are checked against the parameter kinds before the implementation
//! runs (`cannot use 1 (type int) as list in argument 1 to list.Concat`, not wrapped), and errors
//! of the implementation are reported as `error in call to <name>: <message>`, as CUE does.

mod crypto;
#[cfg(test)]
mod data_tests;
mod encoding;
mod html;
mod list;
pub(super) mod math;
mod net;
mod path;
mod regexp;
mod strconv;
mod strings;
mod tabwriter;
pub(crate) mod template;
mod time;
mod toml;

pub(crate) use time::civil_from_days;

use rustc_hash::FxHashMap as HashMap;
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::LazyLock;

use crate::ast::Span;
use crate::encode::Data;
use crate::num::{Num, NumKind};

use super::ir::{ArcType, Builtin, Expr, ExprId};
use super::label::Label;
use super::value::{Bottom, ErrCode, Kind, Value};
use super::*;

/// The result of a builtin implementation.
pub(super) type R = Result<Value, Rc<Bottom>>;
/// A standard-library function: the runtime and the (checked) arguments.
pub(super) type Impl = fn(&mut Runtime, &[Value]) -> R;

/// What a standard-library member is.
pub(super) enum Member {
    /// A function.
    Func {
        /// The kind each parameter accepts (its length is the number of parameters).
        params: &'static [Kind],
        /// Returns a bool: called with one argument too few, it is a validator.
        validator: bool,
        /// Arguments are passed as evaluated, not made concrete (schemas, constraints).
        raw: bool,
        f: Impl,
    },
    /// A constant, computed when referenced.
    Const(fn(&mut Runtime) -> Value),
}

/// One member of a standard-library package, by qualified name (`strings.ToUpper`).
pub(super) struct StdMember {
    pub name: &'static str,
    pub member: Member,
}

/// Parameter kinds, for the tables.
pub(super) mod k {
    use super::Kind;
    pub const S: Kind = Kind::STRING;
    pub const I: Kind = Kind::INT;
    pub const N: Kind = Kind::NUMBER;
    pub const L: Kind = Kind::LIST;
    pub const ST: Kind = Kind::STRUCT;
    pub const B: Kind = Kind(Kind::STRING.0 | Kind::BYTES.0);
    pub const BOOL: Kind = Kind::BOOL;
    pub const T: Kind = Kind::TOP;
}

/// A function member.
pub(super) const fn func(name: &'static str, params: &'static [Kind], f: Impl) -> StdMember {
    StdMember {
        name,
        member: Member::Func {
            params,
            validator: false,
            raw: false,
            f,
        },
    }
}

/// A bool-returning function member, usable as a validator.
pub(super) const fn valid(name: &'static str, params: &'static [Kind], f: Impl) -> StdMember {
    StdMember {
        name,
        member: Member::Func {
            params,
            validator: true,
            raw: false,
            f,
        },
    }
}

/// A function member whose arguments are not made concrete.
pub(super) const fn raw(
    name: &'static str,
    params: &'static [Kind],
    validator: bool,
    f: Impl,
) -> StdMember {
    StdMember {
        name,
        member: Member::Func {
            params,
            validator,
            raw: true,
            f,
        },
    }
}

/// A constant member.
pub(super) const fn constant(name: &'static str, f: fn(&mut Runtime) -> Value) -> StdMember {
    StdMember {
        name,
        member: Member::Const(f),
    }
}

static TABLES: &[&[StdMember]] = &[
    strings::MEMBERS,
    strconv::MEMBERS,
    list::MEMBERS,
    math::MEMBERS,
    regexp::MEMBERS,
    encoding::MEMBERS,
    crypto::MEMBERS,
    time::MEMBERS,
    net::MEMBERS,
    path::MEMBERS,
    template::MEMBERS,
    tabwriter::MEMBERS,
    toml::MEMBERS,
    html::MEMBERS,
];

static REGISTRY: LazyLock<Vec<&'static StdMember>> =
    LazyLock::new(|| TABLES.iter().flat_map(|t| t.iter()).collect());

static BY_NAME: LazyLock<HashMap<&'static str, u32>> = LazyLock::new(|| {
    REGISTRY
        .iter()
        .enumerate()
        .map(|(i, m)| (m.name, i as u32))
        .collect()
});

fn member(id: u32) -> &'static StdMember {
    REGISTRY[id as usize]
}

/// A validator: a builtin with all arguments but the value it checks.
#[derive(Clone, Debug)]
pub struct ValidatorCall {
    pub func: Func,
    pub args: Vec<Value>,
    /// The kinds the validated value may have.
    pub kind: Kind,
    /// A function referred to without a call (`fn: yaml.Validate`): calling it calls the
    /// function; as a constraint it is the validator with no extra arguments.
    pub uncalled: bool,
    /// Where the arguments that are not lists or structs were written (CUE lists them, after
    /// the call, in a validator's error).
    pub arg_spans: Vec<Span>,
}

impl ValidatorCall {
    pub fn text(&self, rt: &Runtime) -> String {
        let name = self.func.name();
        // `net.IPv4()` prints as `net.IPv4`, as an uncalled function does.
        if self.uncalled || self.args.is_empty() {
            return name.to_string();
        }
        // A validator's argument may hold the validator itself (`x: y: list.MatchN(1, x)`):
        // nested texts stop after a few levels.
        thread_local! {
            static DEPTH: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
        }
        if DEPTH.with(|d| d.get()) >= 4 {
            return format!("{name}(...)");
        }
        DEPTH.with(|d| d.set(d.get() + 1));
        let args: Vec<String> = self.args.iter().map(|a| rt.value_text(a)).collect();
        DEPTH.with(|d| d.set(d.get() - 1));
        format!("{}({})", name, args.join(", "))
    }
}

/// A callable builtin.
#[derive(Clone, Copy, Debug)]
pub enum Func {
    Core(Builtin),
    Std(u32),
}

impl Func {
    pub fn name(self) -> &'static str {
        match self {
            Func::Core(b) => match b {
                Builtin::Len => "len",
                Builtin::Close => "close",
                Builtin::And => "and",
                Builtin::Or => "or",
                Builtin::Div => "div",
                Builtin::Mod => "mod",
                Builtin::Quo => "quo",
                Builtin::Rem => "rem",
                Builtin::MatchN => "matchN",
                Builtin::MatchIf => "matchIf",
                Builtin::Error => "error",
                Builtin::Reclose(_) => "__reclose",
                Builtin::CloseAll(_) => "__closeAll",
                Builtin::Pkg(_) => "?",
            },
            Func::Std(i) => member(i).name,
        }
    }
}

const STD_PACKAGES: &[&str] = &[
    "strings",
    "list",
    "struct",
    "math",
    "math/bits",
    "strconv",
    "regexp",
    "encoding/json",
    "encoding/yaml",
    "encoding/base64",
    "encoding/hex",
    "encoding/csv",
    "encoding/toml",
    "crypto/sha256",
    "crypto/sha1",
    "crypto/md5",
    "crypto/sha512",
    "crypto/hmac",
    "crypto/ed25519",
    "uuid",
    "time",
    "net",
    "path",
    "path/filepath",
    "text/template",
    "text/tabwriter",
    "tool",
    "tool/exec",
    "tool/file",
    "tool/http",
    "tool/os",
    "tool/cli",
    "html",
];

/// Whether an import path names a standard-library package.
pub fn is_std_package(path: &str) -> bool {
    STD_PACKAGES.contains(&path)
}

/// The id of a standard-library member by qualified name (`strings.ToUpper`).
pub fn lookup_pkg(name: &str) -> Option<u32> {
    BY_NAME.get(name).copied()
}

thread_local! {
    static REGEX_CACHE: RefCell<HashMap<String, Result<Rc<regex::Regex>, String>>> = RefCell::new(HashMap::default());
}

/// The most regular expressions kept compiled.
const REGEX_CACHE_MAX: usize = 1024;

/// Compiles a regular expression (RE2 syntax), cached.
pub fn regex(re: &str) -> Result<Rc<regex::Regex>, String> {
    REGEX_CACHE.with(|c| {
        if let Some(r) = c.borrow().get(re) {
            return r.clone();
        }
        let r = regex::RegexBuilder::new(&regexp::translate(re))
            .size_limit(1 << 24)
            .build()
            .map(Rc::new)
            .map_err(|e| format!("invalid regexp: {}", regexp::error_text(re, &e)));
        let mut c = c.borrow_mut();
        if c.len() >= REGEX_CACHE_MAX {
            c.clear();
        }
        c.insert(re.to_string(), r.clone());
        r
    })
}

// ---------------------------------------------------------------------------------------------
// Argument accessors. Arguments have been checked against the parameter kinds, but the
// accessors still fail cleanly on anything else (validators get the checked value unchecked).

fn arg_err(a: &[Value], i: usize, want: &str) -> Rc<Bottom> {
    match a.get(i) {
        Some(v) => Bottom::eval(format!(
            "cannot use value {} (type {}) as {}",
            value_text_plain(v),
            v.kind().name(),
            want
        )),
        None => Bottom::eval(format!("missing argument {}", i + 1)),
    }
}

/// A short text of a value for messages where no runtime is at hand.
fn value_text_plain(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Num(n, k) => n.to_cue_string(*k),
        Value::Str(s) => super::label::quote(s),
        Value::Bytes(b) => format!("'{}'", String::from_utf8_lossy(b)),
        Value::Vertex(_) => "{...}".into(),
        _ => "_".into(),
    }
}

/// A string argument (bytes are taken as UTF-8, lossily).
pub(super) fn a_str(a: &[Value], i: usize) -> Result<Rc<str>, Rc<Bottom>> {
    match a.get(i) {
        Some(Value::Str(s)) => Ok(s.clone()),
        Some(Value::Bytes(b)) => Ok(Rc::from(String::from_utf8_lossy(b).as_ref())),
        _ => Err(arg_err(a, i, "string")),
    }
}

/// A bytes argument (strings are taken as their UTF-8 bytes).
pub(super) fn a_bytes(a: &[Value], i: usize) -> Result<Vec<u8>, Rc<Bottom>> {
    match a.get(i) {
        Some(Value::Str(s)) => Ok(s.as_bytes().to_vec()),
        Some(Value::Bytes(b)) => Ok(b.to_vec()),
        _ => Err(arg_err(a, i, "bytes")),
    }
}

/// An int argument that fits Go's `int`.
pub(super) fn a_int(a: &[Value], i: usize) -> Result<i64, Rc<Bottom>> {
    match a.get(i) {
        Some(Value::Num(n, NumKind::Int)) => n.to_i64().ok_or_else(|| {
            Bottom::eval(format!(
                "cannot use value {} (type int) as int: value out of range",
                n.to_cue_string(NumKind::Int)
            ))
        }),
        _ => Err(arg_err(a, i, "int")),
    }
}

/// A number argument.
pub(super) fn a_num(a: &[Value], i: usize) -> Result<(Rc<Num>, NumKind), Rc<Bottom>> {
    match a.get(i) {
        Some(Value::Num(n, k)) => Ok((n.clone(), *k)),
        _ => Err(arg_err(a, i, "number")),
    }
}

/// A bool argument.
pub(super) fn a_bool(a: &[Value], i: usize) -> Result<bool, Rc<Bottom>> {
    match a.get(i) {
        Some(Value::Bool(b)) => Ok(*b),
        _ => Err(arg_err(a, i, "bool")),
    }
}

pub(super) fn string(s: impl Into<String>) -> R {
    Ok(Value::Str(Rc::from(s.into())))
}

pub(super) fn bytes(b: Vec<u8>) -> R {
    Ok(Value::Bytes(Rc::from(b)))
}

pub(super) fn int(i: i64) -> R {
    Ok(Value::int(i))
}

/// An error whose message is shown as the reason a validator failed (and which makes a plain
/// call return `false`): `len(list) < MinItems(1) (0 < 1)`.
pub(super) fn validation_fail(msg: impl Into<String>, incomplete: bool) -> Rc<Bottom> {
    Bottom::new(
        if incomplete {
            ErrCode::Incomplete
        } else {
            ErrCode::Eval
        },
        format!("{VALIDATION_MARK}{}", msg.into()),
    )
}

const VALIDATION_MARK: char = '\u{1}';

impl Runtime {
    /// The value of a standard-library member referred to without a call: a constant, or the
    /// function itself (a validator that can still be called). The evaluator core calls it for
    /// `Expr::Builtin(Builtin::Pkg(id))` in value position (`math.Pi`, `list.Ascending`).
    pub(super) fn std_member_value(&mut self, id: u32, span: Span) -> Value {
        match &member(id).member {
            Member::Const(f) => match f(self) {
                Value::Bottom(b) if b.spans.is_empty() => {
                    let mut bb = (*b).clone();
                    bb.spans.push(span);
                    Value::Bottom(Rc::new(bb))
                }
                v => v,
            },
            Member::Func { params, .. } => Value::Validator(Rc::new(ValidatorCall {
                func: Func::Std(id),
                args: Vec::new(),
                kind: params.first().copied().unwrap_or(Kind::TOP),
                uncalled: true,
                arg_spans: Vec::new(),
            })),
        }
    }

    pub(super) fn eval_call(
        &mut self,
        env: Option<&EnvRef>,
        f: ExprId,
        args: &[ExprId],
        cur: Option<VId>,
        span: Span,
    ) -> Value {
        let func = match self.prog.expr(f) {
            Expr::Builtin(Builtin::Pkg(i)) => Func::Std(*i),
            Expr::Builtin(b) => Func::Core(*b),
            _ => {
                let fv = self.eval_value(env, f, cur);
                let fv = match fv {
                    Value::Vertex(w) => match self.concrete(Value::Vertex(w)) {
                        Ok(v) => v,
                        Err(b) => return Value::Bottom(b),
                    },
                    v => v,
                };
                match fv {
                    Value::Bottom(b) => return Value::Bottom(b),
                    Value::Validator(c) if c.uncalled => c.func,
                    Value::Validator(_) => {
                        return Value::Bottom(Bottom::with_span(
                            ErrCode::Eval,
                            "cannot call previously called validator",
                            span,
                        ));
                    }
                    // `_` could still be a function (CUE's kind of top includes functions).
                    Value::Top => {
                        return Value::Bottom(Bottom::with_span(
                            ErrCode::Incomplete,
                            format!(
                                "cannot call non-concrete value {} (type _)",
                                self.expr_text(f)
                            ),
                            span,
                        ));
                    }
                    other => {
                        let t = match &other {
                            Value::Vertex(_) | Value::Top => String::new(),
                            o => format!(" (type {})", o.kind().name()),
                        };
                        return Value::Bottom(Bottom::with_span(
                            ErrCode::Eval,
                            format!("cannot call non-function {}{}", self.expr_text(f), t),
                            span,
                        ));
                    }
                }
            }
        };
        let callv = |this: &mut Runtime, conjs: Vec<Conjunct>| -> VId {
            let l = this.prog.labels.string("");
            let a = this.new_vertex(None, l, ArcType::Member);
            this.vm(a).anonymous = true;
            this.vm(a).conjuncts = conjs.into();
            a
        };
        match func {
            Func::Core(Builtin::Close) => {
                if args.len() != 1 {
                    return self.arg_count_error("close", 1, args.len(), span);
                }
                let g = self.new_group(0, true, false, false, 0);
                let a = callv(
                    self,
                    vec![Conjunct {
                        env: env.cloned(),
                        x: CExpr::Expr(args[0]),
                        ci: CloseInfo {
                            group: g,
                            ..Default::default()
                        },
                        span,
                    }],
                );
                self.groups[g as usize].origin = a;
                return self.value_of(a);
            }
            Func::Core(Builtin::MatchN) | Func::Core(Builtin::MatchIf) => {
                // Non-concrete arguments: schemas are kept as vertices.
                let mut vals = Vec::new();
                for &a in args {
                    let v = self.eval_value(env, a, cur);
                    vals.push(v);
                }
                let (name, n) = if matches!(func, Func::Core(Builtin::MatchN)) {
                    ("matchN", 2)
                } else {
                    ("matchIf", 3)
                };
                if vals.len() != n {
                    return self.arg_count_error(name, n, vals.len(), span);
                }
                let arg_spans = self.scalar_arg_spans(args, &vals);
                return Value::Validator(Rc::new(ValidatorCall {
                    func,
                    args: vals,
                    kind: Kind::TOP,
                    uncalled: false,
                    arg_spans,
                }));
            }
            Func::Core(Builtin::Or) => {
                let memo_key = match (env, args.first()) {
                    (Some(e), Some(&a)) => Some((a, Rc::as_ptr(e) as usize)),
                    _ => None,
                };
                if let Some(k) = memo_key
                    && let Some((_, v)) = self.or_memo.get(&k)
                {
                    return v.clone();
                }
                let w = match self.list_arg(env, args, cur, "or", span) {
                    Ok(w) => w,
                    Err(v) => return v,
                };
                let elems: Vec<VId> = self.list_elems(w);
                if elems.is_empty() {
                    return Value::Bottom(Bottom::with_span(
                        ErrCode::Incomplete,
                        "empty list in call to or",
                        span,
                    ));
                }
                // Only alternatives without fields are kept: a struct may still be growing
                // through a cycle (`d: or([for y in #A {y}])` with `#A: x: b: d`).
                let memo_key = memo_key.filter(|_| {
                    elems.iter().all(|&e| {
                        self.evaluate(e);
                        let d = self.deref(e);
                        let x = self.v(d);
                        x.arcs.is_empty()
                            && x.err.is_none()
                            && x.disj.is_none()
                            && !x.kind.intersects(Kind::STRUCT.or(Kind::LIST))
                    })
                });
                let alts: Vec<Value> = elems.iter().map(|&e| Value::Vertex(e)).collect();
                let a = callv(
                    self,
                    vec![Conjunct {
                        env: None,
                        x: CExpr::Value(Value::Or(Rc::from(alts))),
                        ci: CloseInfo::default(),
                        span,
                    }],
                );
                let v = self.value_of(a);
                if let (Some(k), Some(e)) = (memo_key, env)
                    && !matches!(v, Value::Bottom(_))
                {
                    self.or_memo.insert(k, (e.clone(), v.clone()));
                }
                return v;
            }
            Func::Core(Builtin::And) => {
                let w = match self.list_arg(env, args, cur, "and", span) {
                    Ok(w) => w,
                    Err(v) => return v,
                };
                let elems = self.list_elems(w);
                if elems.is_empty() {
                    return Value::Top;
                }
                let conjs = elems
                    .iter()
                    .map(|&e| Conjunct {
                        env: None,
                        x: CExpr::Vertex(e),
                        ci: CloseInfo::default(),
                        span,
                    })
                    .collect();
                let a = callv(self, conjs);
                return self.value_of(a);
            }
            _ => {}
        }
        if let Func::Std(i) = func {
            return self.call_std_member(env, i, args, cur, span);
        }
        let mut vals = Vec::with_capacity(args.len());
        for &a in args {
            let v = self.eval_value(env, a, cur);
            match self.concrete(v) {
                Ok(v) => vals.push(v),
                Err(b) => return Value::Bottom(b),
            }
        }
        for v in &vals {
            if !v.is_concrete_scalar() && !matches!(v, Value::Vertex(_)) {
                return Value::Bottom(Bottom::with_span(
                    ErrCode::Incomplete,
                    format!("non-concrete argument {}", self.value_text(v)),
                    span,
                ));
            }
        }
        // The integer builtins point at the argument that is not an int.
        if let Func::Core(b @ (Builtin::Div | Builtin::Mod | Builtin::Quo | Builtin::Rem)) = func
            && vals.len() == 2
        {
            for (i, v) in vals.iter().enumerate() {
                if !matches!(v, Value::Num(_, NumKind::Int)) {
                    return Value::Bottom(Bottom::with_span(
                        ErrCode::Eval,
                        format!(
                            "cannot use {} (type {}) as int in argument {} to {}",
                            self.value_text(v),
                            v.kind().name(),
                            i + 1,
                            Func::Core(b).name()
                        ),
                        self.prog.span(args[i]),
                    ));
                }
            }
        }
        match self.call(func, &vals, span) {
            Ok(v) => v,
            Err(b) => Value::Bottom(b),
        }
    }

    /// Calls a standard-library member: checks the arguments, makes a validator of a bool
    /// function missing its first argument, and runs the implementation.
    /// Where the arguments that are not structs or lists were written: a validator's error
    /// names them (CUE reports the call, its scalar arguments and the value).
    fn scalar_arg_spans(&self, args: &[ExprId], vals: &[Value]) -> Vec<Span> {
        // A disjunction of scalars (`matchN(2 | 3, ...)`) counts as a scalar.
        let scalar = |v: &Value| match v {
            Value::Vertex(w) => self.v(self.deref(*w)).disj.as_ref().is_some_and(|d| {
                d.alts
                    .iter()
                    .all(|&a| self.v(self.deref(a)).scalar.is_some())
            }),
            _ => true,
        };
        args.iter()
            .zip(vals)
            .filter(|(_, v)| scalar(v))
            .map(|(&a, _)| self.prog.span(a))
            .collect()
    }

    fn call_std_member(
        &mut self,
        env: Option<&EnvRef>,
        id: u32,
        args: &[ExprId],
        cur: Option<VId>,
        span: Span,
    ) -> Value {
        let m = member(id);
        let (params, validator, raw) = match &m.member {
            Member::Func {
                params,
                validator,
                raw,
                ..
            } => (*params, *validator, *raw),
            Member::Const(c) => {
                let v = c(self);
                return Value::Bottom(Bottom::with_span(
                    ErrCode::Eval,
                    format!("cannot call non-function {} (type {})", m.name, {
                        match &v {
                            Value::Vertex(w) if self.v(self.deref(*w)).is_list => "list".into(),
                            Value::Vertex(_) => "struct".into(),
                            v => v.kind().name(),
                        }
                    }),
                    span,
                ));
            }
        };
        let n = params.len();
        // `path` functions take the OS as an optional last argument (`path.Unix`).
        let default_os = path::default_os(m.name).filter(|_| args.len() + 1 == n);
        let as_validator = validator && default_os.is_none() && args.len() + 1 == n;
        if let Some(os) = default_os {
            let mut vals = Vec::with_capacity(n);
            for &a in args {
                let v = self.eval_value(env, a, cur);
                match self.concrete(v) {
                    Ok(v) => vals.push(v),
                    Err(b) => return Value::Bottom(b),
                }
            }
            vals.push(Value::Str(Rc::from(os)));
            return match crate::stack::guard(|| self.call(Func::Std(id), &vals, span)) {
                Ok(v) => v,
                Err(b) => Value::Bottom(b),
            };
        }
        if !as_validator && args.len() != n {
            return self.arg_count_error(m.name, n, args.len(), span);
        }
        let offset = usize::from(as_validator);
        let mut vals = Vec::with_capacity(args.len());
        for (i, &a) in args.iter().enumerate() {
            // A schema argument keeps its disjunction whole (`list.MatchN(3, int | *1)`).
            let v = if raw && matches!(self.prog.expr(a), super::ir::Expr::Disj(_)) {
                let span = self.prog.span(a);
                let w = self.anon_vertex(
                    vec![Conjunct {
                        env: env.cloned(),
                        x: CExpr::Expr(a),
                        ci: CloseInfo::default(),
                        span,
                    }],
                    cur,
                );
                self.evaluate(w);
                Value::Vertex(w)
            } else {
                self.eval_value(env, a, cur)
            };
            let v = if raw {
                match v {
                    Value::Bottom(b) => return Value::Bottom(b),
                    v => v,
                }
            } else {
                match self.concrete(v) {
                    Ok(v) => v,
                    Err(b) => return Value::Bottom(b),
                }
            };
            let want = params[i + offset];
            if !raw && !v.is_concrete_scalar() && !matches!(v, Value::Vertex(_)) {
                // A list parameter given a value that may still become a list.
                // At the call and, for a scalar, where the value was written.
                let (msg, at) = if want == Kind::LIST && v.kind().contains(Kind::LIST) {
                    (format!("non-concrete list for argument {i}"), None)
                } else if want == Kind::TOP {
                    (format!("non-concrete argument {i}"), None)
                } else {
                    let at = self.arg_value_span(env, a, cur);
                    let text = self.value_text(&v);
                    (format!("non-concrete value {text}"), Some(at))
                };
                return Value::Bottom(Bottom::with_spans(
                    ErrCode::Incomplete,
                    format!("error in call to {}: {msg}", m.name),
                    [span].into_iter().chain(at),
                ));
            }
            if !raw && want != Kind::TOP {
                let have = match &v {
                    Value::Vertex(w) => {
                        let w = self.default_of(*w);
                        if self.v(w).is_list {
                            Kind::LIST
                        } else {
                            Kind::STRUCT
                        }
                    }
                    v => v.kind(),
                };
                if !want.contains(have) {
                    let aspan = self.arg_value_span(env, a, cur);
                    return Value::Bottom(Bottom::with_span(
                        ErrCode::Eval,
                        format!(
                            "cannot use {} (type {}) as {} in argument {} to {}",
                            self.value_text(&v),
                            have.name(),
                            param_kind_name(want),
                            i + 1 + offset,
                            m.name
                        ),
                        aspan,
                    ));
                }
            }
            vals.push(v);
        }
        if as_validator {
            let arg_spans = self.scalar_arg_spans(args, &vals);
            return Value::Validator(Rc::new(ValidatorCall {
                func: Func::Std(id),
                args: vals,
                kind: params[0],
                uncalled: false,
                arg_spans,
            }));
        }
        match crate::stack::guard(|| self.call(Func::Std(id), &vals, span)) {
            Ok(v) => v,
            Err(b) => Value::Bottom(b),
        }
    }

    /// Where the value of argument `a` was written: for a reference, where the referenced
    /// field got its value (CUE reports an argument's type error there), else the argument.
    fn arg_value_span(&mut self, env: Option<&EnvRef>, a: ExprId, cur: Option<VId>) -> Span {
        let aspan = self.prog.span(a);
        let is_ref = matches!(
            self.prog.expr(a),
            Expr::FieldRef { .. } | Expr::LetRef { .. } | Expr::Selector(..)
        );
        if let (true, Some(cur)) = (is_ref, cur)
            && let Ok(super::unify::Resolved::Vertex(w)) = self.resolve(env, a, cur)
        {
            let w = self.default_of(w);
            let sp = self.v(w).val_span;
            if sp != Span::default() {
                return sp;
            }
        }
        aspan
    }

    /// The single list argument of `and`/`or`, evaluated, or the value to return instead.
    fn list_arg(
        &mut self,
        env: Option<&EnvRef>,
        args: &[ExprId],
        cur: Option<VId>,
        name: &str,
        span: Span,
    ) -> Result<VId, Value> {
        if args.len() != 1 {
            return Err(self.arg_count_error(name, 1, args.len(), span));
        }
        let v = self.eval_value(env, args[0], cur);
        match self.concrete(v) {
            Ok(Value::Vertex(w)) if self.v(self.deref(w)).is_list => Ok(self.deref(w)),
            Ok(Value::Bottom(b)) | Err(b) => Err(Value::Bottom(b)),
            Ok(other) => Err(Value::Bottom(Bottom::with_span(
                ErrCode::Eval,
                format!(
                    "cannot use {} as list in argument 1 to {}",
                    self.value_text(&other),
                    name
                ),
                span,
            ))),
        }
    }

    fn arg_count_error(&self, name: &str, want: usize, got: usize, span: Span) -> Value {
        Value::Bottom(Bottom::with_span(
            ErrCode::Eval,
            format!(
                "{} arguments in call to {} (have {}, want {})",
                if got < want { "not enough" } else { "too many" },
                name,
                got,
                want
            ),
            span,
        ))
    }

    pub(super) fn list_elems(&mut self, w: VId) -> Vec<VId> {
        self.evaluate(w);
        let w = self.default_of(w);
        self.v(w)
            .arcs
            .iter()
            .copied()
            .filter(|&a| self.v(a).label.is_int())
            .collect()
    }

    /// Whether a value is a list (after taking defaults).
    pub(super) fn is_list_value(&self, v: &Value) -> bool {
        matches!(v, Value::Vertex(w) if self.v(self.default_of(*w)).is_list)
    }

    /// The concrete elements of a list argument.
    pub(super) fn list_values(&mut self, v: &Value, name: &str) -> Result<Vec<Value>, Rc<Bottom>> {
        let Value::Vertex(w) = v else {
            return Err(Bottom::eval(format!(
                "cannot use value {} (type {}) as list",
                self.value_text(v),
                v.kind().name(),
            )));
        };
        let w = self.default_of(*w);
        if !self.v(w).is_list {
            let _ = name;
            return Err(Bottom::eval(format!(
                "cannot use value {} (type struct) as list",
                self.vertex_text(w),
            )));
        }
        let elems = self.list_elems(w);
        let mut out = Vec::with_capacity(elems.len());
        for e in elems {
            let v = self.value_of(e);
            out.push(self.concrete(v)?);
        }
        Ok(out)
    }

    /// The string elements of a list argument, with CUE's error for other elements.
    pub(super) fn list_strings(
        &mut self,
        v: &Value,
        name: &str,
    ) -> Result<Vec<Rc<str>>, Rc<Bottom>> {
        let items = self.list_values(v, name)?;
        let mut out = Vec::with_capacity(items.len());
        for (i, it) in items.into_iter().enumerate() {
            match it {
                Value::Str(s) => out.push(s),
                other => {
                    return Err(Bottom::eval(format!(
                        "invalid list element {} in argument 0 to call: cannot use value {} ({}) as string",
                        i,
                        self.value_text(&other),
                        match &other {
                            Value::Vertex(_) => "struct".to_string(),
                            o => o.kind().name(),
                        }
                    )));
                }
            }
        }
        Ok(out)
    }

    /// A new, already evaluated struct vertex with the given regular fields, in order.
    pub(super) fn make_struct(&mut self, fields: Vec<(String, Value)>) -> Value {
        let l = self.prog.labels.string("");
        let a = self.new_vertex(None, l, ArcType::Member);
        let ax = self.vm(a);
        ax.anonymous = true;
        ax.kind = Kind::STRUCT;
        for (name, v) in fields {
            let label: Label = self.prog.labels.string(&name);
            if let Some(old) = self.arc(a, label) {
                self.vm(old).conjuncts.push(Conjunct {
                    env: None,
                    x: CExpr::Value(v),
                    ci: CloseInfo::default(),
                    span: Span::default(),
                });
                continue;
            }
            let c = self.new_vertex(Some(a), label, ArcType::Member);
            let x = match v {
                Value::Vertex(w) => CExpr::Vertex(w),
                v => CExpr::Value(v),
            };
            self.vm(c).conjuncts.push(Conjunct {
                env: None,
                x,
                ci: CloseInfo::default(),
                span: Span::default(),
            });
            self.push_arc(a, c);
        }
        self.vm(a).status = Status::Evaluated;
        Value::Vertex(a)
    }

    /// Concrete data as a CUE value (numbers keep their int/float kind).
    pub(super) fn data_to_value(&mut self, d: &Data) -> Value {
        match d {
            Data::Null => Value::Null,
            Data::Bool(b) => Value::Bool(*b),
            Data::Number { text, float } => match Num::parse_literal(text) {
                Ok((n, k)) => Value::num(
                    n,
                    if *float || k == NumKind::Float {
                        NumKind::Float
                    } else {
                        NumKind::Int
                    },
                ),
                Err(e) => Value::Bottom(Bottom::eval(e)),
            },
            Data::String(s) => Value::Str(Rc::from(s.as_str())),
            Data::Bytes(b) => Value::Bytes(Rc::from(b.as_slice())),
            Data::List(items) => {
                let vals = items.iter().map(|x| self.data_to_value(x)).collect();
                self.make_list_values(vals)
            }
            Data::Struct(fields) => {
                let vals = fields
                    .iter()
                    .map(|f| (f.name.clone(), self.data_to_value(&f.value)))
                    .collect();
                self.make_struct(vals)
            }
        }
    }

    /// Parses and compiles CUE source defining members of a standard-library package (such
    /// as `list.Ascending`), returning the vertex of the named field.
    pub(super) fn std_cue_value(&mut self, pkg: &str, src: &str, field: &str) -> Value {
        // File ids far above any real file: positions in these sources are not printed.
        let file = crate::ast::FileId(u32::MAX - 1);
        let (ast, errs) = crate::parse(file, src);
        if !errs.is_empty() {
            return Value::Bottom(Bottom::eval(format!("internal error in package {pkg}")));
        }
        let ids = compile::compile_package(&mut self.prog, &[&ast]);
        let l = self.prog.labels.string("");
        let root = self.new_vertex(None, l, ArcType::Member);
        self.vm(root).anonymous = true;
        for id in ids {
            self.vm(root).conjuncts.push(Conjunct {
                env: None,
                x: CExpr::Struct(id),
                ci: CloseInfo::default(),
                span: Span::default(),
            });
        }
        self.evaluate(root);
        let fl = self.prog.labels.ident(field);
        match self.arc(root, fl) {
            Some(a) => {
                self.evaluate(a);
                Value::Vertex(a)
            }
            None => Value::Bottom(Bottom::eval(format!("undefined field: {field}"))),
        }
    }

    /// Calls a builtin with concrete arguments.
    fn call(&mut self, func: Func, a: &[Value], span: Span) -> Result<Value, Rc<Bottom>> {
        let name = func.name();
        // CUE reports a call's error at the call first, then where its cause was written.
        let at_call = |mut bb: Bottom| -> Rc<Bottom> {
            if span != Span::default() && !bb.spans.contains(&span) {
                bb.spans.insert(0, span);
            }
            Rc::new(bb)
        };
        let wrap = |b: Rc<Bottom>| -> Rc<Bottom> {
            if b.is_incomplete() || b.msg.starts_with("error in call") {
                if b.is_incomplete() {
                    return at_call((*b).clone());
                }
                return b;
            }
            let mut bb = (*b).clone();
            bb.msg = format!("error in call to {}: {}", name, b.msg);
            at_call(bb)
        };
        match self.call_inner(func, a, span) {
            Err(b) if b.msg.starts_with(VALIDATION_MARK) => Ok(Value::Bool(false)),
            r => r.map_err(wrap),
        }
    }

    fn call_inner(&mut self, func: Func, a: &[Value], span: Span) -> Result<Value, Rc<Bottom>> {
        let name = func.name();
        match func {
            Func::Core(Builtin::Len) => {
                if a.len() != 1 {
                    return Ok(self.arg_count_error("len", 1, a.len(), span));
                }
                match &a[0] {
                    Value::Str(s) => Ok(Value::int(s.len() as i64)),
                    Value::Bytes(b) => Ok(Value::int(b.len() as i64)),
                    Value::Vertex(w) => {
                        let w = self.default_of(*w);
                        self.evaluate(w);
                        let vx = self.v(w);
                        let n = if vx.is_list {
                            vx.arcs
                                .iter()
                                .filter(|&&x| self.v(x).label.is_int())
                                .count()
                        } else {
                            vx.arcs
                                .iter()
                                .filter(|&&x| {
                                    let ax = self.v(x);
                                    ax.label.is_regular() && ax.arc_type == ArcType::Member
                                })
                                .count()
                        };
                        Ok(Value::int(n as i64))
                    }
                    other => Err(Bottom::eval(format!(
                        "invalid argument {} (type {}) for len",
                        self.value_text(other),
                        other.kind().name()
                    ))),
                }
            }
            Func::Core(Builtin::Error) => {
                let msg = match a.first() {
                    Some(Value::Str(s)) => s.to_string(),
                    Some(v) => self.value_text(v),
                    None => String::new(),
                };
                Err(Rc::new(Bottom {
                    code: ErrCode::User,
                    msg,
                    spans: vec![span],
                    child: false,
                    at: None,
                    subs: Vec::new(),
                }))
            }
            Func::Core(b @ (Builtin::Div | Builtin::Mod | Builtin::Quo | Builtin::Rem)) => {
                if a.len() != 2 {
                    return Ok(self.arg_count_error(name, 2, a.len(), span));
                }
                let (x, y) = match (&a[0], &a[1]) {
                    (Value::Num(x, NumKind::Int), Value::Num(y, NumKind::Int)) => (x, y),
                    (Value::Num(_, NumKind::Int), o) => {
                        return Err(Bottom::eval(format!(
                            "cannot use {} (type {}) as int in argument 2 to {}",
                            self.value_text(o),
                            o.kind().name(),
                            name
                        )));
                    }
                    (o, _) => {
                        return Err(Bottom::eval(format!(
                            "cannot use {} (type {}) as int in argument 1 to {}",
                            self.value_text(o),
                            o.kind().name(),
                            name
                        )));
                    }
                };
                let r = match b {
                    Builtin::Div => x.int_div(y),
                    Builtin::Mod => x.int_mod(y),
                    Builtin::Quo => x.int_quo(y),
                    _ => x.int_rem(y),
                };
                r.map(|n| Value::num(n, NumKind::Int))
                    .map_err(|_| Bottom::eval("division by zero"))
            }
            Func::Std(i) => match &member(i).member {
                Member::Func { f, .. } => f(self, a),
                Member::Const(_) => Err(Bottom::eval(format!("cannot call non-function {name}"))),
            },
            Func::Core(_) => Err(Bottom::eval(format!("unsupported builtin {name}"))),
        }
    }

    /// Runs a validator against a value.
    pub(super) fn run_validator(
        &mut self,
        call: &ValidatorCall,
        x: &Value,
    ) -> Result<(), Rc<Bottom>> {
        match call.func {
            Func::Core(Builtin::MatchN) => {
                let (count, missing) = self.count_matches(x, &call.args[1])?;
                let open = missing.len();
                let accepts = |this: &mut Runtime, k: usize| {
                    let n = Value::int(k as i64);
                    match &call.args[0] {
                        Value::Num(..) => super::expr::scalar_eq(&call.args[0], &n),
                        c => this.value_accepts(c, &n),
                    }
                };
                if accepts(self, count) {
                    return Ok(());
                }
                // Schemas that only lack required fields may still match once those are given:
                // while that could satisfy the count, the failure is incomplete.
                let could = (count + 1..=count + open).any(|k| accepts(self, k));
                // CUE names matchN and matchIf without their arguments here.
                let b = Bottom::eval(format!(
                    "invalid value {} (does not satisfy {}): {} matched, expected {}",
                    self.value_text(x),
                    call.func.name(),
                    count,
                    self.value_text(&call.args[0])
                ));
                if could {
                    // Each schema that lacks a required field says so in a further error, at
                    // the field's declaration (the caller adds the call's position).
                    let subs = missing
                        .into_iter()
                        .map(|a| {
                            let spans = self.v(a).conjuncts.iter().map(|c| c.span);
                            Bottom::with_spans(
                                ErrCode::Incomplete,
                                "field is required but not present",
                                spans,
                            )
                        })
                        .collect();
                    return Err(Rc::new(Bottom {
                        code: ErrCode::Incomplete,
                        subs,
                        ..(*b).clone()
                    }));
                }
                Err(b)
            }
            Func::Core(Builtin::MatchIf) => {
                let cond = self.matches_schema(x, &call.args[0]);
                let target = if cond { &call.args[1] } else { &call.args[2] };
                if self.matches_schema(x, target) {
                    Ok(())
                } else {
                    let head = format!(
                        "invalid value {} (does not satisfy {})",
                        self.value_text(x),
                        call.func.name()
                    );
                    // CUE adds the error of the schema that did not match, at its positions
                    // and where the value was written.
                    match self.schema_error(x, target).filter(|e| !e.is_incomplete()) {
                        Some(e) => {
                            let mut spans = e.spans.clone();
                            if let Value::Vertex(d) = x
                                && let Some(sp) = self.written_at(*d)
                                && !spans.contains(&sp)
                            {
                                spans.push(sp);
                            }
                            Err(Rc::new(Bottom {
                                code: ErrCode::Eval,
                                msg: format!("{head}: {}", e.msg),
                                spans,
                                child: false,
                                at: None,
                                subs: Vec::new(),
                            }))
                        }
                        None => Err(Bottom::eval(head)),
                    }
                }
            }
            _ => {
                // The value and the validator's own arguments, without an allocation for the
                // usual few.
                let mut args: smallvec::SmallVec<[Value; 4]> = smallvec::SmallVec::new();
                args.push(x.clone());
                args.extend(call.args.iter().cloned());
                if let Func::Std(id) = call.func
                    && let Member::Func { params, .. } = &member(id).member
                    && params.len() != args.len()
                {
                    return Err(Bottom::eval(format!(
                        "invalid value {} (does not satisfy {}): wrong number of arguments",
                        self.value_text(x),
                        call.text(self)
                    )));
                }
                match crate::stack::guard(|| self.call_inner(call.func, &args, Span::default())) {
                    Ok(Value::Bool(true)) => Ok(()),
                    Ok(Value::Bottom(b)) => Err(b),
                    Ok(_) => Err(Bottom::eval(format!(
                        "invalid value {} (does not satisfy {})",
                        self.value_text(x),
                        call.text(self)
                    ))),
                    Err(b) => {
                        let msg = b.msg.strip_prefix(VALIDATION_MARK).unwrap_or(&b.msg);
                        Err(Rc::new(Bottom {
                            code: b.code,
                            msg: format!(
                                "invalid value {} (does not satisfy {}): {}",
                                self.value_text(x),
                                call.text(self),
                                msg
                            ),
                            spans: b.spans.clone(),
                            child: false,
                            at: None,
                            subs: Vec::new(),
                        }))
                    }
                }
            }
        }
    }

    /// How many schemas `x` matches, and for each schema it matches but for a required field
    /// it does not have yet, that field (in the unification).
    pub(super) fn count_matches(
        &mut self,
        x: &Value,
        schemas: &Value,
    ) -> Result<(usize, Vec<VId>), Rc<Bottom>> {
        let Value::Vertex(w) = schemas else {
            return Err(Bottom::eval("matchN: schemas must be a list"));
        };
        let elems = self.list_elems(*w);
        let (mut count, mut open) = (0, Vec::new());
        for e in elems {
            match self.schema_match(x, &Value::Vertex(e)) {
                Ok(true) => count += 1,
                Err(path) => {
                    // The field as the schema declares it.
                    let mut f = Some(self.deref(e));
                    for l in path {
                        f = f.and_then(|s| self.arc(s, l)).map(|a| self.deref(a));
                    }
                    open.push(f.unwrap_or(e));
                }
                Ok(false) => {}
            }
        }
        Ok((count, open))
    }

    /// Whether `x` matches `schema`: `Err(path)` when it does but for the missing required
    /// field at `path`.
    fn schema_match(&mut self, x: &Value, schema: &Value) -> Result<bool, Vec<Label>> {
        let Some(_nest) = Nesting::enter() else {
            return Ok(false);
        };
        let a = self.unify_values(&[x.clone(), schema.clone()]);
        if self.finalize(a, false).is_some() || self.v(self.deref(a)).err.is_some() {
            return Ok(false);
        }
        if let Value::Vertex(xv) = x
            && !self.defaults_kept(*xv, a, 0)
        {
            return Ok(false);
        }
        let mut path = Vec::new();
        if self.missing_required(self.deref(a), &mut path) {
            Err(path)
        } else {
            Ok(true)
        }
    }

    /// The error of unifying `x` with `schema`, if any.
    fn schema_error(&mut self, x: &Value, schema: &Value) -> Option<Rc<Bottom>> {
        let _nest = Nesting::enter()?;
        let a = self.unify_values(&[x.clone(), schema.clone()]);
        self.finalize(a, false)
            .or_else(|| self.v(self.deref(a)).err.clone())
    }

    /// Where the struct or list `d` was written.
    pub(super) fn written_at(&self, d: VId) -> Option<Span> {
        let vx = self.v(self.deref(d));
        // A list at its literal (its kind may have been narrowed at the field).
        if vx.is_list && vx.list_span() != Span::default() {
            return Some(vx.list_span());
        }
        if vx.val_span != Span::default() {
            return Some(vx.val_span);
        }
        vx.structs
            .iter()
            .map(|s| s.pos)
            .find(|p| *p != Span::default())
    }

    /// Whether every field of `x` that has a concrete default kept that default in `a`, the
    /// unification of `x` with a schema. `matchN` checks the data form of a value, in which
    /// defaults are taken: `{a: *3 | int}` does not match `{a: 2}`.
    fn defaults_kept(&mut self, x: VId, a: VId, depth: usize) -> bool {
        if depth > MAX_NESTING {
            return true;
        }
        let (x, a) = (self.deref(x), self.deref(a));
        let arcs = self.v(x).arcs.clone();
        for xa in arcs {
            let label = self.v(xa).label;
            if !label.is_regular() || self.v(xa).arc_type != ArcType::Member {
                continue;
            }
            let Some(aa) = self.arc(a, label) else {
                continue;
            };
            let xd = self.deref(xa);
            let dv = self.default_of(xa);
            if self.v(xd).disj.is_some()
                && dv != xd
                && let Some(s) = self.v(dv).scalar.clone()
                && s.is_concrete_scalar()
            {
                let ad = self.default_of(aa);
                match &self.v(ad).scalar {
                    Some(t) if super::expr::scalar_eq(&s, t) => {}
                    _ => return false,
                }
                continue;
            }
            if !self.defaults_kept(dv, self.default_of(aa), depth + 1) {
                return false;
            }
        }
        true
    }

    /// Whether a required field below `v` has no value; `path` ends up holding its labels.
    fn missing_required(&mut self, v: VId, path: &mut Vec<Label>) -> bool {
        if path.len() > MAX_NESTING {
            return false;
        }
        let arcs = self.v(v).arcs.clone();
        for a in arcs {
            let ax = self.v(a);
            if !ax.label.is_regular() {
                continue;
            }
            path.push(ax.label);
            match ax.arc_type {
                ArcType::Required => return true,
                ArcType::Optional => {}
                ArcType::Member => {
                    let d = self.deref(a);
                    if self.missing_required(d, path) {
                        return true;
                    }
                }
            }
            path.pop();
        }
        false
    }

    /// A new anonymous vertex holding the unification of the given values.
    pub(super) fn unify_values(&mut self, vals: &[Value]) -> VId {
        let l = self.prog.labels.string("");
        let a = self.new_vertex(None, l, ArcType::Member);
        self.vm(a).anonymous = true;
        let mut conjs = Vec::with_capacity(vals.len());
        for v in vals {
            // A definition passed as a value stays closed, as a reference to it would be.
            let group = match v {
                Value::Vertex(w) if self.v(*w).label.is_def() => {
                    let g = self.new_group(0, true, true, false, a);
                    self.register_requirements(a, g);
                    g
                }
                _ => 0,
            };
            conjs.push(Conjunct {
                env: None,
                x: match v {
                    Value::Vertex(w) => CExpr::Vertex(*w),
                    v => CExpr::Value(v.clone()),
                },
                ci: CloseInfo {
                    group,
                    ..CloseInfo::default()
                },
                span: Span::default(),
            });
        }
        self.vm(a).conjuncts = conjs.into();
        a
    }

    /// Whether `x` unifies with `schema` without error. A schema that checks values against
    /// itself (`x: y: list.MatchN(1, x)`) would nest without end: past [`MAX_NESTING`] nested
    /// checks the value does not match.
    pub(super) fn matches_schema(&mut self, x: &Value, schema: &Value) -> bool {
        let Some(_nest) = Nesting::enter() else {
            return false;
        };
        let a = self.unify_values(&[x.clone(), schema.clone()]);
        self.finalize(a, false).is_none() && self.v(self.deref(a)).err.is_none()
    }
}

/// How deeply builtins may nest evaluations of schemas and comparators inside each other.
pub(super) const MAX_NESTING: usize = 64;

thread_local! {
    static NESTING: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// A level of nested schema evaluation, released when dropped.
pub(super) struct Nesting;

impl Nesting {
    /// Enters one level, or `None` when [`MAX_NESTING`] levels are already active.
    pub(super) fn enter() -> Option<Nesting> {
        NESTING.with(|n| {
            if n.get() >= MAX_NESTING {
                None
            } else {
                n.set(n.get() + 1);
                Some(Nesting)
            }
        })
    }
}

impl Drop for Nesting {
    fn drop(&mut self) {
        NESTING.with(|n| n.set(n.get().saturating_sub(1)));
    }
}

/// The name of a parameter kind in argument errors.
fn param_kind_name(k: Kind) -> String {
    if k == k::B {
        return "bytes|string".into();
    }
    k.name()
}

#[cfg(test)]
mod tests;
