//! Builtin functions: the predeclared ones (`len`, `close`, `and`, `or`, `div`, `mod`, `quo`,
//! `rem`, `matchN`, `matchIf`, `error`) and the registry of standard-library functions, with
//! CUE's rule that a bool-returning function called with one argument too few is a validator.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use crate::ast::Span;
use crate::num::{Num, NumKind};

use super::ir::{ArcType, Builtin, Expr, ExprId};
use super::value::{Bottom, ErrCode, Kind, Value};
use super::*;

/// A validator: a builtin with all arguments but the value it checks.
#[derive(Clone, Debug)]
pub struct ValidatorCall {
    pub func: Func,
    pub args: Vec<Value>,
    /// The kinds the validated value may have.
    pub kind: Kind,
}

impl ValidatorCall {
    pub fn text(&self, rt: &Runtime) -> String {
        let name = self.func.name();
        if matches!(self.func, Func::Core(Builtin::MatchN | Builtin::MatchIf)) {
            let args: Vec<String> = self.args.iter().map(|a| rt.value_text(a)).collect();
            return format!("{}({})", name, args.join(", "));
        }
        let args: Vec<String> = self.args.iter().map(|a| rt.value_text(a)).collect();
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
    pub fn name(self) -> String {
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
                Builtin::Pkg(_) => "?",
            }
            .to_string(),
            Func::Std(i) => STD[i as usize].0.to_string(),
        }
    }
}

/// The standard-library functions known so far: name, number of parameters, whether it returns
/// a bool (and so can be used as a validator), and the kind it validates.
const STD: &[(&str, usize, bool, Kind)] = &[
    ("strings.Join", 2, false, Kind::TOP),
    ("strings.ToUpper", 1, false, Kind::TOP),
    ("strings.ToLower", 1, false, Kind::TOP),
    ("strings.HasPrefix", 2, true, Kind::STRING),
    ("strings.HasSuffix", 2, true, Kind::STRING),
    ("strings.Contains", 2, true, Kind::STRING),
    ("strings.ContainsAny", 2, true, Kind::STRING),
    ("strings.Split", 2, false, Kind::TOP),
    ("strings.Replace", 4, false, Kind::TOP),
    ("strings.TrimSuffix", 2, false, Kind::TOP),
    ("strings.TrimPrefix", 2, false, Kind::TOP),
    ("strings.TrimSpace", 1, false, Kind::TOP),
    ("strings.MinRunes", 2, true, Kind::STRING),
    ("strings.MaxRunes", 2, true, Kind::STRING),
    ("strings.Repeat", 2, false, Kind::TOP),
    ("list.Concat", 1, false, Kind::TOP),
    ("list.FlattenN", 2, false, Kind::TOP),
    ("list.Range", 3, false, Kind::TOP),
    ("list.Repeat", 2, false, Kind::TOP),
    ("list.Max", 1, false, Kind::TOP),
    ("list.Min", 1, false, Kind::TOP),
    ("list.Sum", 1, false, Kind::TOP),
    ("list.Contains", 2, true, Kind::LIST),
    ("list.UniqueItems", 1, true, Kind::LIST),
    ("list.MinItems", 2, true, Kind::LIST),
    ("list.MaxItems", 2, true, Kind::LIST),
    ("struct.MinFields", 2, true, Kind::STRUCT),
    ("struct.MaxFields", 2, true, Kind::STRUCT),
    ("math.MultipleOf", 2, true, Kind::NUMBER),
    ("math.Abs", 1, false, Kind::TOP),
    ("strconv.Atoi", 1, false, Kind::TOP),
    ("strconv.FormatInt", 2, false, Kind::TOP),
    ("encoding/json.Marshal", 1, false, Kind::TOP),
    ("encoding/yaml.Marshal", 1, false, Kind::TOP),
    ("encoding/json.MarshalStream", 1, false, Kind::TOP),
    ("encoding/yaml.MarshalStream", 1, false, Kind::TOP),
];

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
    "crypto/sha256",
    "crypto/sha1",
    "crypto/md5",
    "crypto/sha512",
    "crypto/hmac",
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

/// The id of a standard-library function by qualified name (`strings.ToUpper`).
pub fn lookup_pkg(name: &str) -> Option<u32> {
    STD.iter().position(|s| s.0 == name).map(|i| i as u32)
}

thread_local! {
    static REGEX_CACHE: RefCell<HashMap<String, Result<Rc<regex::Regex>, String>>> = RefCell::new(HashMap::new());
}

/// Compiles a regular expression (RE2 syntax), cached.
pub fn regex(re: &str) -> Result<Rc<regex::Regex>, String> {
    REGEX_CACHE.with(|c| {
        if let Some(r) = c.borrow().get(re) {
            return r.clone();
        }
        let r = regex::Regex::new(re)
            .map(Rc::new)
            .map_err(|e| format!("invalid regexp: {e}"));
        c.borrow_mut().insert(re.to_string(), r.clone());
        r
    })
}

fn int_arg(v: &Value) -> Option<i64> {
    match v {
        Value::Num(n, NumKind::Int) => n.to_i64(),
        _ => None,
    }
}

impl Runtime {
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
                if let Value::Bottom(b) = fv {
                    return Value::Bottom(b);
                }
                if let Value::Validator(_) = fv {
                    return Value::Bottom(Bottom::with_span(
                        ErrCode::Eval,
                        "cannot call previously called validator",
                        span,
                    ));
                }
                return Value::Bottom(Bottom::with_span(
                    ErrCode::Eval,
                    format!("cannot call non-function {}", self.expr_text(f)),
                    span,
                ));
            }
        };
        let callv = |this: &mut Runtime, conjs: Vec<Conjunct>| -> VId {
            let l = this.prog.labels.string("");
            let a = this.new_vertex(None, l, ArcType::Member);
            this.vm(a).anonymous = true;
            this.vm(a).conjuncts = conjs;
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
                return Value::Validator(Rc::new(ValidatorCall {
                    func,
                    args: vals,
                    kind: Kind::TOP,
                }));
            }
            Func::Core(Builtin::Or) => {
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
                return self.value_of(a);
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
        let mut vals = Vec::with_capacity(args.len());
        for &a in args {
            let v = self.eval_value(env, a, cur);
            match self.concrete(v) {
                Ok(v) => vals.push(v),
                Err(b) => return Value::Bottom(b),
            }
        }
        // A bool function called with one argument too few is a validator.
        if let Func::Std(i) = func {
            let (name, n, is_bool, kind) = STD[i as usize];
            if is_bool && vals.len() + 1 == n {
                return Value::Validator(Rc::new(ValidatorCall {
                    func,
                    args: vals,
                    kind,
                }));
            }
            if vals.len() != n {
                return self.arg_count_error(name, n, vals.len(), span);
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
        match self.call(func, &vals, span) {
            Ok(v) => v,
            Err(b) => Value::Bottom(b),
        }
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

    fn list_values(&mut self, v: &Value, name: &str) -> Result<Vec<Value>, Rc<Bottom>> {
        let Value::Vertex(w) = v else {
            return Err(Bottom::eval(format!(
                "cannot use {} (type {}) as list in argument to {}",
                self.value_text(v),
                v.kind().name(),
                name
            )));
        };
        let w = self.default_of(*w);
        if !self.v(w).is_list {
            return Err(Bottom::eval(format!(
                "cannot use {} as list in argument to {}",
                self.vertex_text(w),
                name
            )));
        }
        let elems = self.list_elems(w);
        let mut out = Vec::new();
        for e in elems {
            let v = self.value_of(e);
            out.push(self.concrete(v)?);
        }
        Ok(out)
    }

    fn str_arg(&self, v: &Value, name: &str, i: usize) -> Result<Rc<str>, Rc<Bottom>> {
        match v {
            Value::Str(s) => Ok(s.clone()),
            other => Err(Bottom::eval(format!(
                "cannot use {} (type {}) as string in argument {} to {}",
                self.value_text(other),
                other.kind().name(),
                i + 1,
                name
            ))),
        }
    }

    fn int_arg_of(&self, v: &Value, name: &str, i: usize) -> Result<i64, Rc<Bottom>> {
        int_arg(v).ok_or_else(|| {
            Bottom::eval(format!(
                "cannot use {} (type {}) as int in argument {} to {}",
                self.value_text(v),
                v.kind().name(),
                i + 1,
                name
            ))
        })
    }

    /// Calls a builtin with concrete arguments.
    fn call(&mut self, func: Func, a: &[Value], span: Span) -> Result<Value, Rc<Bottom>> {
        let name = func.name();
        let wrap = |b: Rc<Bottom>| -> Rc<Bottom> {
            if b.is_incomplete() || b.msg.starts_with("error in call") {
                return b;
            }
            let mut bb = (*b).clone();
            bb.msg = format!("error in call to {}: {}", name, b.msg);
            if bb.spans.is_empty() {
                bb.spans.push(span);
            }
            Rc::new(bb)
        };
        let r = self.call_inner(func, a, span);
        r.map_err(wrap)
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
                }))
            }
            Func::Core(b @ (Builtin::Div | Builtin::Mod | Builtin::Quo | Builtin::Rem)) => {
                if a.len() != 2 {
                    return Ok(self.arg_count_error(&name, 2, a.len(), span));
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
            Func::Std(_) => self.call_std(&name, a),
            Func::Core(_) => Err(Bottom::eval(format!("unsupported builtin {name}"))),
        }
    }

    fn call_std(&mut self, name: &str, a: &[Value]) -> Result<Value, Rc<Bottom>> {
        let s = |this: &Runtime, i: usize| this.str_arg(&a[i], name, i);
        let n = |this: &Runtime, i: usize| this.int_arg_of(&a[i], name, i);
        let string = |x: String| Ok(Value::Str(Rc::from(x)));
        match name {
            "strings.Join" => {
                let items = self.list_values(&a[0], name)?;
                let sep = s(self, 1)?;
                let mut parts = Vec::new();
                for it in items {
                    parts.push(self.str_arg(&it, name, 0)?.to_string());
                }
                string(parts.join(&sep))
            }
            "strings.ToUpper" => string(s(self, 0)?.to_uppercase()),
            "strings.ToLower" => string(s(self, 0)?.to_lowercase()),
            "strings.TrimSpace" => string(s(self, 0)?.trim().to_string()),
            "strings.HasPrefix" => Ok(Value::Bool(s(self, 0)?.starts_with(&*s(self, 1)?))),
            "strings.HasSuffix" => Ok(Value::Bool(s(self, 0)?.ends_with(&*s(self, 1)?))),
            "strings.Contains" => Ok(Value::Bool(s(self, 0)?.contains(&*s(self, 1)?))),
            "strings.ContainsAny" => {
                let chars = s(self, 1)?;
                Ok(Value::Bool(s(self, 0)?.chars().any(|c| chars.contains(c))))
            }
            "strings.Split" => {
                let x = s(self, 0)?;
                let sep = s(self, 1)?;
                let parts: Vec<Value> = if sep.is_empty() {
                    x.chars()
                        .map(|c| Value::Str(Rc::from(c.to_string())))
                        .collect()
                } else {
                    x.split(&*sep).map(|p| Value::Str(Rc::from(p))).collect()
                };
                Ok(self.make_list_values(parts))
            }
            "strings.Replace" => {
                let x = s(self, 0)?;
                let old = s(self, 1)?;
                let new = s(self, 2)?;
                let k = n(self, 3)?;
                if k < 0 {
                    string(x.replace(&*old, &new))
                } else {
                    string(x.replacen(&*old, &new, k as usize))
                }
            }
            "strings.TrimSuffix" => {
                let x = s(self, 0)?;
                let suf = s(self, 1)?;
                string(x.strip_suffix(&*suf).unwrap_or(&x).to_string())
            }
            "strings.TrimPrefix" => {
                let x = s(self, 0)?;
                let p = s(self, 1)?;
                string(x.strip_prefix(&*p).unwrap_or(&x).to_string())
            }
            "strings.MinRunes" => Ok(Value::Bool(
                s(self, 0)?.chars().count() as i64 >= n(self, 1)?,
            )),
            "strings.MaxRunes" => Ok(Value::Bool(
                s(self, 0)?.chars().count() as i64 <= n(self, 1)?,
            )),
            "strings.Repeat" => string(s(self, 0)?.repeat(n(self, 1)?.max(0) as usize)),
            "list.Concat" => {
                let lists = self.list_values(&a[0], name)?;
                let mut out = Vec::new();
                for l in lists {
                    out.extend(self.list_values(&l, name)?);
                }
                Ok(self.make_list_values(out))
            }
            "list.FlattenN" => {
                let depth = n(self, 1)?;
                let out = self.flatten(&a[0], depth)?;
                Ok(self.make_list_values(out))
            }
            "list.Range" => {
                let (start, limit, step) = (&a[0], &a[1], &a[2]);
                let (Value::Num(st, k1), Value::Num(li, k2), Value::Num(sp, k3)) =
                    (start, limit, step)
                else {
                    return Err(Bottom::eval("non-number argument to list.Range"));
                };
                if sp.is_zero() {
                    return Err(Bottom::eval("step must be non zero"));
                }
                let kind = if *k1 == NumKind::Int && *k2 == NumKind::Int && *k3 == NumKind::Int {
                    NumKind::Int
                } else {
                    NumKind::Float
                };
                let mut out = Vec::new();
                let mut cur: Num = (**st).clone();
                let up = sp.sign() > 0;
                while out.len() < 1_000_000 {
                    let c = cur.cmp(li);
                    if (up && c != std::cmp::Ordering::Less)
                        || (!up && c != std::cmp::Ordering::Greater)
                    {
                        break;
                    }
                    out.push(Value::num(cur.clone(), kind));
                    cur = cur.add(sp);
                }
                Ok(self.make_list_values(out))
            }
            "list.Repeat" => {
                let items = self.list_values(&a[0], name)?;
                let k = n(self, 1)?;
                if k < 0 {
                    return Err(Bottom::eval("negative count"));
                }
                if (k as u128) * (items.len() as u128) > 10_000_000 {
                    return Err(Bottom::eval("result too large"));
                }
                let mut out = Vec::new();
                for _ in 0..k {
                    out.extend(items.iter().cloned());
                }
                Ok(self.make_list_values(out))
            }
            "list.Max" | "list.Min" | "list.Sum" => {
                let items = self.list_values(&a[0], name)?;
                if items.is_empty() {
                    if name == "list.Sum" {
                        return Ok(Value::int(0));
                    }
                    return Err(Bottom::eval(format!("{}: empty list", &name[5..])));
                }
                let mut acc: Option<(Num, NumKind)> = None;
                for it in items {
                    let Value::Num(x, k) = it else {
                        return Err(Bottom::eval("non-number in list"));
                    };
                    acc = Some(match acc {
                        None => ((*x).clone(), k),
                        Some((y, ky)) => {
                            let kk = if k == NumKind::Int && ky == NumKind::Int {
                                NumKind::Int
                            } else {
                                NumKind::Float
                            };
                            match name {
                                "list.Sum" => (y.add(&x), kk),
                                "list.Max" => {
                                    if x.cmp(&y) == std::cmp::Ordering::Greater {
                                        ((*x).clone(), k)
                                    } else {
                                        (y, ky)
                                    }
                                }
                                _ => {
                                    if x.cmp(&y) == std::cmp::Ordering::Less {
                                        ((*x).clone(), k)
                                    } else {
                                        (y, ky)
                                    }
                                }
                            }
                        }
                    });
                }
                let (x, k) = acc.unwrap();
                Ok(Value::num(x, k))
            }
            "list.Contains" => {
                let items = self.list_values(&a[0], name)?;
                let x = a[1].clone();
                for it in items {
                    if self.values_equal(&it, &x) {
                        return Ok(Value::Bool(true));
                    }
                }
                Ok(Value::Bool(false))
            }
            "list.UniqueItems" => {
                let items = self.list_values(&a[0], name)?;
                for i in 0..items.len() {
                    for j in i + 1..items.len() {
                        if self.values_equal(&items[i], &items[j]) {
                            return Ok(Value::Bool(false));
                        }
                    }
                }
                Ok(Value::Bool(true))
            }
            "list.MinItems" | "list.MaxItems" => {
                let items = self.list_values(&a[0], name)?;
                let k = n(self, 1)?;
                Ok(Value::Bool(if name == "list.MinItems" {
                    items.len() as i64 >= k
                } else {
                    items.len() as i64 <= k
                }))
            }
            "struct.MinFields" | "struct.MaxFields" => {
                let Value::Vertex(w) = &a[0] else {
                    return Err(Bottom::eval("not a struct"));
                };
                let w = self.default_of(*w);
                let cnt = self
                    .v(w)
                    .arcs
                    .iter()
                    .filter(|&&x| {
                        let ax = self.v(x);
                        ax.label.is_regular() && ax.arc_type == ArcType::Member
                    })
                    .count() as i64;
                let k = n(self, 1)?;
                Ok(Value::Bool(if name == "struct.MinFields" {
                    cnt >= k
                } else {
                    cnt <= k
                }))
            }
            "math.MultipleOf" => {
                let (Value::Num(x, _), Value::Num(y, _)) = (&a[0], &a[1]) else {
                    return Err(Bottom::eval("non-number argument"));
                };
                if y.is_zero() {
                    return Err(Bottom::eval("division by zero"));
                }
                let q = x.quo(y).map_err(|_| Bottom::eval("division by zero"))?;
                Ok(Value::Bool(q.is_integral()))
            }
            "math.Abs" => match &a[0] {
                Value::Num(x, k) => Ok(Value::num(x.abs(), *k)),
                _ => Err(Bottom::eval("non-number argument")),
            },
            "strconv.Atoi" => {
                let x = s(self, 0)?;
                match x.parse::<i64>() {
                    Ok(i) => Ok(Value::int(i)),
                    Err(_) => Err(Bottom::eval(format!(
                        "strconv.Atoi: parsing {}: invalid syntax",
                        super::label::quote(&x)
                    ))),
                }
            }
            "strconv.FormatInt" => {
                let x = n(self, 0)?;
                let base = n(self, 1)?;
                if !(2..=36).contains(&base) {
                    return Err(Bottom::eval("invalid base"));
                }
                string(format_radix(x, base as u32))
            }
            "encoding/json.Marshal" => {
                let d = self.value_to_data(&a[0])?;
                string(crate::encode::to_json_compact(&d))
            }
            "encoding/yaml.Marshal" => {
                let d = self.value_to_data(&a[0])?;
                string(crate::encode::to_yaml(&d))
            }
            "encoding/json.MarshalStream" | "encoding/yaml.MarshalStream" => {
                let items = self.list_values(&a[0], name)?;
                let mut docs = Vec::new();
                for it in &items {
                    docs.push(self.value_to_data(it)?);
                }
                if name.starts_with("encoding/json") {
                    string(crate::encode::to_json_stream_compact(&docs))
                } else {
                    string(crate::encode::to_yaml_stream(&docs))
                }
            }
            _ => Err(Bottom::eval(format!("builtin {name} not implemented"))),
        }
    }

    fn flatten(&mut self, v: &Value, depth: i64) -> Result<Vec<Value>, Rc<Bottom>> {
        let items = self.list_values(v, "list.FlattenN")?;
        let mut out = Vec::new();
        for it in items {
            let is_list = matches!(&it, Value::Vertex(w) if self.v(self.default_of(*w)).is_list);
            if is_list && depth != 0 {
                out.extend(self.flatten(&it, depth - 1)?);
            } else {
                out.push(it);
            }
        }
        Ok(out)
    }

    /// Runs a validator against a value.
    pub(super) fn run_validator(
        &mut self,
        call: &ValidatorCall,
        x: &Value,
    ) -> Result<(), Rc<Bottom>> {
        match call.func {
            Func::Core(Builtin::MatchN) => {
                let count = self.count_matches(x, &call.args[1])?;
                let n = Value::int(count as i64);
                let ok = match &call.args[0] {
                    Value::Num(..) => super::expr::scalar_eq(&call.args[0], &n),
                    c => self.value_accepts(c, &n),
                };
                if ok {
                    Ok(())
                } else {
                    Err(Bottom::eval(format!(
                        "invalid value {} (does not satisfy {}): {} matched, expected {}",
                        self.value_text(x),
                        call.text(self),
                        count,
                        self.value_text(&call.args[0])
                    )))
                }
            }
            Func::Core(Builtin::MatchIf) => {
                let cond = self.matches_schema(x, &call.args[0]);
                let target = if cond { &call.args[1] } else { &call.args[2] };
                if self.matches_schema(x, target) {
                    Ok(())
                } else {
                    Err(Bottom::eval(format!(
                        "invalid value {} (does not satisfy {})",
                        self.value_text(x),
                        call.text(self)
                    )))
                }
            }
            _ => {
                let mut args = vec![x.clone()];
                args.extend(call.args.iter().cloned());
                match self.call(call.func, &args, Span::default()) {
                    Ok(Value::Bool(true)) => Ok(()),
                    Ok(_) => Err(Bottom::eval(format!(
                        "invalid value {} (does not satisfy {})",
                        self.value_text(x),
                        call.text(self)
                    ))),
                    Err(b) => Err(b),
                }
            }
        }
    }

    fn count_matches(&mut self, x: &Value, schemas: &Value) -> Result<usize, Rc<Bottom>> {
        let Value::Vertex(w) = schemas else {
            return Err(Bottom::eval("matchN: schemas must be a list"));
        };
        let elems = self.list_elems(*w);
        let mut count = 0;
        for e in elems {
            if self.matches_schema(x, &Value::Vertex(e)) {
                count += 1;
            }
        }
        Ok(count)
    }

    /// Whether `x` unifies with `schema` without error.
    fn matches_schema(&mut self, x: &Value, schema: &Value) -> bool {
        let xc = match x {
            Value::Vertex(w) => CExpr::Vertex(*w),
            v => CExpr::Value(v.clone()),
        };
        let sc = match schema {
            Value::Vertex(w) => {
                // Use the schema's conjuncts so that closedness applies.
                CExpr::Vertex(*w)
            }
            v => CExpr::Value(v.clone()),
        };
        let l = self.prog.labels.string("");
        let a = self.new_vertex(None, l, ArcType::Member);
        self.vm(a).anonymous = true;
        self.vm(a).conjuncts = vec![
            Conjunct {
                env: None,
                x: xc,
                ci: CloseInfo::default(),
                span: Span::default(),
            },
            Conjunct {
                env: None,
                x: sc,
                ci: CloseInfo::default(),
                span: Span::default(),
            },
        ];
        self.finalize(a, false).is_none() && self.v(self.deref(a)).err.is_none()
    }
}

fn format_radix(x: i64, base: u32) -> String {
    if x == 0 {
        return "0".into();
    }
    let neg = x < 0;
    let mut n = x.unsigned_abs();
    let mut digits = Vec::new();
    while n > 0 {
        let d = (n % base as u64) as u32;
        digits.push(std::char::from_digit(d, base).unwrap());
        n /= base as u64;
    }
    if neg {
        digits.push('-');
    }
    digits.iter().rev().collect()
}
