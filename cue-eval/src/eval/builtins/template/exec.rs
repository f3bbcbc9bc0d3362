//! Execution of a parsed template over data decoded as CUE decodes it into a Go `any`: structs
//! as `map[string]any` (ranged and printed in sorted key order), lists as `[]any`, ints as
//! `int`, floats as `float64`, and Go's builtin functions, truth, comparison and `fmt` printing.

use std::rc::Rc;

use num_bigint::BigInt;

use super::fmt::{BigDec, fmt_v, sprint, sprintln};
use super::parse::{Arg, Call, Cmd, Node, Operand, Parsed, Pipe};
use crate::encode::Data;

/// Go's integer types in templates: `int64` (CUE data), `int` (literals in the template,
/// lengths, range indexes) and `uint8` (a byte that `index` takes from text or bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntTy {
    Int,
    Int64,
    Uint8,
}

/// A Go value as the template sees it: what CUE's `Decode` into an `any` gives.
#[derive(Clone, Debug, PartialEq)]
pub enum V {
    /// A missing value (`<no value>`) or `nil`.
    Nil,
    Bool(bool),
    Int(i64, IntTy),
    /// `*big.Int`: a CUE int beyond `int64`.
    BigInt(Rc<BigInt>),
    Float(f64),
    /// `*big.Float`: a CUE number beyond the range of `float64`.
    BigFloat(Rc<BigDec>),
    Str(Rc<str>),
    Bytes(Rc<[u8]>),
    List(Rc<[V]>),
    /// Sorted by key.
    Map(Rc<[(String, V)]>),
}

impl V {
    pub fn from_data(d: &Data) -> V {
        match d {
            Data::Null => V::Nil,
            Data::Bool(b) => V::Bool(*b),
            Data::Number { text, float } => number(text, *float),
            Data::String(s) => V::Str(Rc::from(s.as_str())),
            Data::Bytes(b) => V::Bytes(Rc::from(b.as_slice())),
            Data::List(items) => V::List(items.iter().map(V::from_data).collect()),
            Data::Struct(fields) => {
                let mut m: Vec<(String, V)> = fields
                    .iter()
                    .map(|f| (f.name.clone(), V::from_data(&f.value)))
                    .collect();
                m.sort_by(|a, b| a.0.cmp(&b.0));
                V::Map(m.into())
            }
        }
    }

    /// Go's name of the value's dynamic type, as `%T` and messages print it.
    pub(super) fn type_name(&self) -> &'static str {
        match self {
            V::Nil => "<nil>",
            V::Bool(_) => "bool",
            V::Int(_, IntTy::Int) => "int",
            V::Int(_, IntTy::Int64) => "int64",
            V::Int(_, IntTy::Uint8) => "uint8",
            V::BigInt(_) => "*big.Int",
            V::Float(_) => "float64",
            V::BigFloat(_) => "*big.Float",
            V::Str(_) => "string",
            V::Bytes(_) => "[]uint8",
            V::List(_) => "[]interface {}",
            V::Map(_) => "map[string]interface {}",
        }
    }

    /// The type behind a pointer, as `len` and `index` name it (`big.Int`).
    fn elem_type_name(&self) -> &'static str {
        match self {
            V::BigInt(_) => "big.Int",
            V::BigFloat(_) => "big.Float",
            v => v.type_name(),
        }
    }

    fn truth(&self) -> bool {
        match self {
            V::Nil => false,
            V::Bool(b) => *b,
            V::Int(i, _) => *i != 0,
            V::Float(f) => *f != 0.0,
            // Non-nil pointers.
            V::BigInt(_) | V::BigFloat(_) => true,
            V::Str(s) => !s.is_empty(),
            V::Bytes(b) => !b.is_empty(),
            V::List(l) => !l.is_empty(),
            V::Map(m) => !m.is_empty(),
        }
    }

    /// A Go `int` (lengths, indexes).
    fn int(i: usize) -> V {
        V::Int(i as i64, IntTy::Int)
    }
}

/// A CUE number as Go gets it: `int64` when it fits, else `*big.Int`; `float64` when in its
/// range (CUE's `Float64` fails beyond it, also for values too small), else `*big.Float`.
fn number(text: &str, float: bool) -> V {
    if !float {
        if let Ok(i) = text.parse::<i64>() {
            return V::Int(i, IntTy::Int64);
        }
        if let Ok(n) = text.replace('_', "").parse::<BigInt>() {
            return V::BigInt(Rc::new(n));
        }
    }
    let f: f64 = text.parse().unwrap_or(f64::NAN);
    // A zero that is not written as one (digits other than 0 before any exponent) underflowed.
    let mantissa = text.split(['e', 'E']).next().unwrap_or(text);
    let out_of_range = f.is_infinite()
        || (f == 0.0
            && mantissa.contains(['1', '2', '3', '4', '5', '6', '7', '8', '9'])
            && !text.starts_with("0x"));
    match BigDec::parse(text) {
        Some(d) if out_of_range => V::BigFloat(Rc::new(d)),
        _ => V::Float(f),
    }
}

/// Control flow out of a list of nodes.
enum Flow {
    Normal,
    Break,
    Continue,
}

/// The most output, nested template calls and range iterations.
const MAX_OUTPUT: usize = 1 << 26;
const MAX_DEPTH: usize = 100;
const MAX_STEPS: usize = 10_000_000;

/// A value with whether Go holds it in an `interface {}` (an element of a list or map that has
/// not passed through a pipeline), which names its type in messages about its fields.
#[derive(Clone)]
struct Dot {
    v: V,
    boxed: bool,
}

impl Dot {
    fn plain(v: V) -> Dot {
        Dot { v, boxed: false }
    }
}

/// The node Go's executor last stood at (`state.at`), where an error points.
#[derive(Clone, Copy)]
enum At<'a> {
    Start,
    Pipe(&'a Pipe),
    Cmd(&'a Cmd),
    Op(&'a Operand),
    Call(&'a Call),
}

pub struct Exec<'a> {
    parsed: &'a Parsed,
    /// The name of the template running (`""` for the main one).
    name: &'a str,
    vars: Vec<(String, Dot)>,
    out: String,
    depth: usize,
    steps: usize,
    at: At<'a>,
}

type Res<T> = Result<T, String>;

impl<'a> Exec<'a> {
    pub fn run(parsed: &'a Parsed, data: V) -> Res<String> {
        let dot = Dot::plain(data);
        let mut e = Exec {
            parsed,
            name: "",
            vars: vec![("$".into(), dot.clone())],
            out: String::new(),
            depth: 0,
            steps: 0,
            at: At::Start,
        };
        e.list(&parsed.main, &dot)?;
        Ok(e.out)
    }

    /// Go's `state.errorf`: `template: :LINE:COL: executing "NAME" at <NODE>: msg`, the column
    /// counted in bytes from 0.
    fn errorf(&self, msg: impl std::fmt::Display) -> String {
        let (pos, text) = match self.at {
            At::Start => return format!("template: {:?}: {msg}", self.name),
            At::Pipe(p) => (p.pos, p.text.as_str()),
            At::Cmd(c) => (c.pos, c.text.as_str()),
            At::Op(o) => (o.pos, o.text.as_str()),
            At::Call(c) => (c.pos, c.text.as_str()),
        };
        let before = &self.parsed.src[..pos.min(self.parsed.src.len())];
        let line = 1 + before.matches('\n').count();
        let col = before.rfind('\n').map_or(pos, |i| pos - i - 1);
        format!(
            "template: :{line}:{col}: executing {:?} at <{text}>: {msg}",
            self.name
        )
    }

    fn list(&mut self, nodes: &'a [Node], dot: &Dot) -> Res<Flow> {
        for n in nodes {
            self.steps += 1;
            if self.steps > MAX_STEPS || self.out.len() > MAX_OUTPUT {
                return Err("template: execution too large".into());
            }
            let f = match n {
                Node::Text(t) => {
                    self.out.push_str(t);
                    Flow::Normal
                }
                Node::Action(p) => {
                    let v = self.pipe(p, dot, true)?;
                    if p.decl.is_empty() {
                        print_value(&mut self.out, &v);
                    }
                    Flow::Normal
                }
                Node::If(p, body, els) => self.if_with(p, body, els, dot, false)?,
                Node::With(p, body, els) => self.if_with(p, body, els, dot, true)?,
                Node::Range(p, body, els) => self.range(p, body, els, dot)?,
                Node::Template(c) => {
                    self.template(c, dot)?;
                    Flow::Normal
                }
                Node::Break => Flow::Break,
                Node::Continue => Flow::Continue,
            };
            if !matches!(f, Flow::Normal) {
                return Ok(f);
            }
        }
        Ok(Flow::Normal)
    }

    /// `if` and `with` (which sets dot to the value); the variables they declare end with them.
    fn if_with(
        &mut self,
        p: &'a Pipe,
        body: &'a [Node],
        els: &'a [Node],
        dot: &Dot,
        with: bool,
    ) -> Res<Flow> {
        let mark = self.vars.len();
        let v = self.pipe(p, dot, true)?;
        let f = if !v.truth() {
            self.list(els, dot)
        } else if with {
            self.list(body, &Dot::plain(v))
        } else {
            self.list(body, dot)
        };
        self.vars.truncate(mark);
        f
    }

    fn range(&mut self, p: &'a Pipe, body: &'a [Node], els: &'a [Node], dot: &Dot) -> Res<Flow> {
        let mark = self.vars.len();
        let v = self.pipe(p, dot, false)?;
        let items = range_items(&v, p.decl.len()).map_err(|m| self.errorf(m))?;
        if items.is_empty() {
            let f = self.list(els, dot);
            self.vars.truncate(mark);
            return f;
        }
        for (k, x) in items {
            let inner = self.vars.len();
            match p.decl.as_slice() {
                [a] => self.vars.push((a.clone(), x.clone())),
                [a, b] => {
                    self.vars.push((a.clone(), Dot::plain(k)));
                    self.vars.push((b.clone(), x.clone()));
                }
                _ => {}
            }
            let f = self.list(body, &x);
            self.vars.truncate(inner);
            if matches!(f?, Flow::Break) {
                break;
            }
        }
        self.vars.truncate(mark);
        Ok(Flow::Normal)
    }

    /// `{{template "name" pipeline}}`: the named template with the value as dot and `$`, and
    /// no other variables.
    fn template(&mut self, c: &'a Call, dot: &Dot) -> Res<()> {
        self.at = At::Call(c);
        let Some((name, body)) = self.parsed.defs.get_key_value(&c.name) else {
            return Err(self.errorf(format!("template {:?} not defined", c.name)));
        };
        if self.depth >= MAX_DEPTH {
            return Err(self.errorf("exceeded maximum template depth (100000)"));
        }
        let v = match &c.pipe {
            Some(p) => Dot::plain(self.pipe(p, dot, true)?),
            None => Dot::plain(V::Nil),
        };
        let saved = std::mem::replace(&mut self.vars, vec![("$".into(), v.clone())]);
        let saved_name = std::mem::replace(&mut self.name, name.as_str());
        self.depth += 1;
        let r = self.list(body, &v);
        self.depth -= 1;
        self.vars = saved;
        self.name = saved_name;
        r.map(|_| ())
    }

    /// A pipeline's value; it declares or assigns its variables unless `declare` is false
    /// (`range` binds them itself).
    fn pipe(&mut self, p: &'a Pipe, dot: &Dot, declare: bool) -> Res<V> {
        self.at = At::Pipe(p);
        let mut last: Option<V> = None;
        for cmd in &p.cmds {
            last = Some(self.command(cmd, dot, last)?);
        }
        let v = last.unwrap_or(V::Nil);
        if !declare || p.decl.is_empty() {
            return Ok(v);
        }
        let name = &p.decl[0];
        if !p.assign {
            self.vars.push((name.clone(), Dot::plain(v.clone())));
            return Ok(v);
        }
        match self.vars.iter_mut().rev().find(|(n, _)| n == name) {
            Some(slot) => slot.1 = Dot::plain(v.clone()),
            None => return Err(self.errorf(format!("undefined variable: {name}"))),
        }
        Ok(v)
    }

    fn var(&self, name: &str) -> Res<Dot> {
        self.vars
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
            .ok_or_else(|| self.errorf(format!("undefined variable: {name}")))
    }

    /// An operand as an argument.
    fn arg(&mut self, op: &'a Operand, dot: &Dot) -> Res<V> {
        self.at = At::Op(op);
        Ok(match &op.arg {
            Arg::Field(f) => self.field(dot, f, false)?,
            Arg::Var(n, f) => {
                let v = self.var(n)?;
                self.field(&v, f, false)?
            }
            Arg::Sub(sub, f) => {
                let v = Dot::plain(self.pipe(sub, dot, true)?);
                self.field(&v, f, false)?
            }
            Arg::Str(s) => V::Str(Rc::from(s.as_str())),
            Arg::Int(i) => V::Int(*i, IntTy::Int),
            Arg::Float(x) => V::Float(*x),
            Arg::Bool(b) => V::Bool(*b),
            // `nil` is a value as an argument (Go's untyped nil), only not as a command.
            Arg::Nil => V::Nil,
            Arg::Overflow(t) => return Err(self.errorf(format!("{t} overflows int"))),
            Arg::Ident(name) => self.call(At::Op(op), name, &[], dot, None)?,
        })
    }

    fn command(&mut self, cmd: &'a Cmd, dot: &Dot, piped: Option<V>) -> Res<V> {
        let first = &cmd.ops[0];
        let has_args = cmd.ops.len() > 1 || piped.is_some();
        match &first.arg {
            Arg::Ident(name) => {
                self.at = At::Op(first);
                return self.call(At::Cmd(cmd), name, &cmd.ops[1..], dot, piped);
            }
            // Fields take the arguments as a method would, and refuse them.
            Arg::Field(f) if !f.is_empty() => {
                self.at = At::Op(first);
                return self.field(dot, f, has_args);
            }
            Arg::Var(n, f) if !f.is_empty() => {
                self.at = At::Op(first);
                let v = self.var(n)?;
                return self.field(&v, f, has_args);
            }
            Arg::Sub(sub, f) if !f.is_empty() => {
                self.at = At::Op(first);
                let v = Dot::plain(self.pipe(sub, dot, true)?);
                return self.field(&v, f, has_args);
            }
            // Go checks a parenthesized pipeline before standing at it.
            Arg::Sub(..) => {}
            _ => self.at = At::Op(first),
        }
        if has_args {
            return Err(self.errorf(format!(
                "can't give argument to non-function {}",
                first.text
            )));
        }
        if matches!(first.arg, Arg::Nil) {
            return Err(self.errorf("nil is not a command"));
        }
        self.arg(first, dot)
    }

    /// A builtin function's call; `node` is where its errors point (the command, or the name
    /// when it is an argument itself).
    fn call(
        &mut self,
        node: At<'a>,
        name: &str,
        args: &'a [Operand],
        dot: &Dot,
        piped: Option<V>,
    ) -> Res<V> {
        let nargs = args.len() + usize::from(piped.is_some());
        let arity = arity(name);
        let ok = match arity {
            Arity::Exactly(n) => nargs == n,
            Arity::AtLeast(n) => nargs >= n,
        };
        if !ok {
            let want = match arity {
                Arity::Exactly(n) => n.to_string(),
                Arity::AtLeast(n) => format!("at least {n}"),
            };
            return Err(self.errorf(format!(
                "wrong number of args for {name}: want {want} got {nargs}"
            )));
        }
        // `and` and `or` evaluate their arguments only as far as needed.
        if name == "and" || name == "or" {
            let mut v = V::Nil;
            for a in args {
                v = self.arg(a, dot)?;
                if v.truth() != (name == "and") {
                    return Ok(v);
                }
            }
            return Ok(piped.unwrap_or(v));
        }
        let mut vals = Vec::with_capacity(nargs);
        for (i, a) in args.iter().enumerate() {
            if i == 0 && name == "printf" {
                vals.push(self.format_arg(a, dot)?);
            } else {
                vals.push(self.arg(a, dot)?);
            }
        }
        if name == "printf" && args.is_empty() {
            let f = piped.clone().unwrap_or(V::Nil);
            vals.push(string_param(&f).map_err(|m| self.errorf(m))?);
        } else {
            vals.extend(piped);
        }
        let r = if name == "call" {
            // No value of CUE data is a Go function.
            // Go names a piped callee by `reflect.Value.String`.
            let callee = match (args.first(), &vals[0]) {
                (Some(a), _) => a.text.clone(),
                (None, V::Str(s)) => s.to_string(),
                (None, o) => format!("<{} Value>", o.type_name()),
            };
            Err(match &vals[0] {
                V::Nil => "call of nil".to_string(),
                o => format!("non-function {callee} of type {}", o.type_name()),
            })
        } else {
            builtin(name, &vals)
        };
        r.map_err(|e| {
            self.at = node;
            self.errorf(format!("error calling {name}: {e}"))
        })
    }

    /// `printf`'s format, a Go `string` parameter: only a string literal or a string value.
    fn format_arg(&mut self, a: &'a Operand, dot: &Dot) -> Res<V> {
        self.at = At::Op(a);
        match &a.arg {
            Arg::Nil => Err(self.errorf("cannot assign nil to string")),
            Arg::Int(_) | Arg::Float(_) | Arg::Bool(_) | Arg::Overflow(_) => {
                Err(self.errorf(format!("expected string; found {}", a.text)))
            }
            _ => {
                let v = self.arg(a, dot)?;
                string_param(&v).map_err(|m| self.errorf(m))
            }
        }
    }

    /// `.a.b` of a value: map keys. A missing key is no value, and so is every field after it
    /// (Go reads fields of the invalid value as invalid), while a field of a `null` held in a
    /// list or map is an error. The last field refuses arguments (`has_args`).
    fn field(&self, recv: &Dot, path: &[String], has_args: bool) -> Res<V> {
        let mut cur = recv.v.clone();
        let mut boxed = recv.boxed;
        for (i, name) in path.iter().enumerate() {
            cur = match &cur {
                V::Map(_) if has_args && i + 1 == path.len() => {
                    return Err(self.errorf(format!("{name} is not a method but has arguments")));
                }
                V::Map(m) => match m.iter().find(|(k, _)| k == name) {
                    Some(x) => x.1.clone(),
                    None => return Ok(V::Nil),
                },
                V::Nil if !boxed => return Ok(V::Nil),
                V::Nil => {
                    return Err(
                        self.errorf(format!("nil pointer evaluating interface {{}}.{name}"))
                    );
                }
                o => {
                    let ty = if boxed { "interface {}" } else { o.type_name() };
                    return Err(self.errorf(format!("can't evaluate field {name} in type {ty}")));
                }
            };
            boxed = true;
        }
        Ok(cur)
    }
}

/// A value passed as a Go `string` parameter.
fn string_param(v: &V) -> Result<V, String> {
    match v {
        V::Str(_) => Ok(v.clone()),
        V::Nil => Err("invalid value; expected string".into()),
        o => Err(format!(
            "wrong type for value; expected string; got {}",
            o.type_name()
        )),
    }
}

/// How many arguments a builtin takes.
#[derive(Clone, Copy)]
enum Arity {
    Exactly(usize),
    AtLeast(usize),
}

/// The builtins other than `and` and `or`, with their argument counts.
fn arity(name: &str) -> Arity {
    use Arity::*;
    match name {
        "not" | "len" => Exactly(1),
        "ne" | "lt" | "le" | "gt" | "ge" => Exactly(2),
        "index" | "slice" | "eq" | "printf" | "call" => AtLeast(1),
        // The parser admits only Go's builtins; `and` and `or` take at least one.
        "print" | "println" | "html" | "js" | "urlquery" => AtLeast(0),
        _ => AtLeast(1),
    }
}

/// A builtin over evaluated arguments; the error is what follows `error calling NAME: `.
fn builtin(name: &str, vals: &[V]) -> Result<V, String> {
    let text = |s: String| V::Str(Rc::from(s.as_str()));
    Ok(match name {
        "not" => V::Bool(!vals[0].truth()),
        "len" => V::int(length(&vals[0])?),
        "index" => index(&vals[0], &vals[1..])?,
        "slice" => slice(&vals[0], &vals[1..])?,
        "print" => text(sprint(vals)),
        "println" => text(sprintln(vals)),
        "printf" => match &vals[0] {
            V::Str(f) => text(super::fmt::sprintf(f, &vals[1..])),
            V::Nil => return Err("invalid value; expected string".into()),
            o => {
                return Err(format!(
                    "wrong type for value; expected string; got {}",
                    o.type_name()
                ));
            }
        },
        "html" => text(super::html_escape(&eval_args(vals))),
        "js" => text(super::js_escape(&eval_args(vals))),
        "urlquery" => text(query_escape(&eval_args(vals))),
        "eq" => V::Bool(eq(&vals[0], &vals[1..])?),
        "ne" => V::Bool(!eq(&vals[0], &vals[1..])?),
        "lt" => V::Bool(lt(&vals[0], &vals[1])?),
        "le" => V::Bool(lt(&vals[0], &vals[1])? || eq(&vals[0], &vals[1..])?),
        "gt" => V::Bool(!(lt(&vals[0], &vals[1])? || eq(&vals[0], &vals[1..])?)),
        "ge" => V::Bool(!lt(&vals[0], &vals[1])?),
        _ => return Err(format!("unknown function {name}")),
    })
}

fn length(v: &V) -> Result<usize, String> {
    Ok(match v {
        V::Str(s) => s.len(),
        V::Bytes(b) => b.len(),
        V::List(l) => l.len(),
        V::Map(m) => m.len(),
        // Go asks an invalid value for its type, which panics.
        V::Nil => return Err("reflect: call of reflect.Value.Type on zero Value".into()),
        o => return Err(format!("len of type {}", o.elem_type_name())),
    })
}

/// Go's `indexArg`: an index of any integer type within `0..=cap`.
fn index_arg(ix: &V, cap: usize) -> Result<usize, String> {
    match ix {
        V::Int(i, _) if *i < 0 || *i as u64 > cap as u64 => Err(format!("index out of range: {i}")),
        V::Int(i, _) => Ok(*i as usize),
        V::Nil => Err("cannot index slice/array with nil".into()),
        o => Err(format!(
            "cannot index slice/array with type {}",
            o.type_name()
        )),
    }
}

/// `index item i j...`: lists, bytes and text (a `uint8`) by integer, maps by string; a
/// missing key gives the map's zero element, nil.
fn index(item: &V, ixs: &[V]) -> Result<V, String> {
    if matches!(item, V::Nil) {
        return Err("index of untyped nil".into());
    }
    let mut v = item.clone();
    for ix in ixs {
        let len = match &v {
            V::List(l) => l.len(),
            V::Bytes(b) => b.len(),
            V::Str(s) => s.len(),
            V::Nil => return Err("index of nil pointer".into()),
            V::Map(m) => {
                let k = match ix {
                    V::Str(k) => k,
                    V::Nil => return Err("value is nil; should be of type string".into()),
                    o => {
                        return Err(format!(
                            "value has type {}; should be string",
                            o.type_name()
                        ));
                    }
                };
                v = m
                    .iter()
                    .find(|(n, _)| **n == **k)
                    .map_or(V::Nil, |x| x.1.clone());
                continue;
            }
            o => return Err(format!("can't index item of type {}", o.elem_type_name())),
        };
        let i = index_arg(ix, len)?;
        // An index equal to the length passes Go's check, then panics in reflect.
        v = match &v {
            V::List(l) => l.get(i).cloned(),
            V::Bytes(b) => b.get(i).map(|c| V::Int(i64::from(*c), IntTy::Uint8)),
            V::Str(s) => s
                .as_bytes()
                .get(i)
                .map(|c| V::Int(i64::from(*c), IntTy::Uint8)),
            _ => None,
        }
        .ok_or_else(|| {
            let what = if matches!(v, V::Str(_)) {
                "string"
            } else {
                "slice"
            };
            format!("reflect: {what} index out of range")
        })?;
    }
    Ok(v)
}

/// `slice item i j k`: Go's `item[i:j:k]` of text, bytes and lists.
fn slice(item: &V, ixs: &[V]) -> Result<V, String> {
    if matches!(item, V::Nil) {
        return Err("slice of untyped nil".into());
    }
    if ixs.len() > 3 {
        return Err(format!("too many slice indexes: {}", ixs.len()));
    }
    let len = match item {
        V::Str(_) if ixs.len() == 3 => return Err("cannot 3-index slice a string".into()),
        V::Str(s) => s.len(),
        V::List(l) => l.len(),
        V::Bytes(b) => b.len(),
        o => return Err(format!("can't slice item of type {}", o.elem_type_name())),
    };
    let mut idx = [0, len, len];
    for (k, ix) in ixs.iter().enumerate() {
        idx[k] = index_arg(ix, len)?;
    }
    if idx[0] > idx[1] {
        return Err(format!("invalid slice index: {} > {}", idx[0], idx[1]));
    }
    if ixs.len() == 3 && idx[1] > idx[2] {
        return Err(format!("invalid slice index: {} > {}", idx[1], idx[2]));
    }
    let (i, j) = (idx[0], idx[1]);
    Ok(match item {
        V::Str(s) => V::Str(Rc::from(
            String::from_utf8_lossy(&s.as_bytes()[i..j]).as_ref(),
        )),
        V::List(l) => V::List(l[i..j].into()),
        V::Bytes(b) => V::Bytes(b[i..j].into()),
        _ => V::Nil,
    })
}

/// The (key, element) pairs `range` visits: list and bytes indexes are `int`, map keys in
/// order, and an integer `n` counts `0..n` in its own type. Elements of lists and maps stay
/// in their `interface {}`.
fn range_items(v: &V, nvars: usize) -> Result<Vec<(V, Dot)>, String> {
    let boxed = |v: &V| Dot {
        v: v.clone(),
        boxed: true,
    };
    Ok(match v {
        V::List(l) => l
            .iter()
            .enumerate()
            .map(|(i, x)| (V::int(i), boxed(x)))
            .collect(),
        V::Bytes(b) => b
            .iter()
            .enumerate()
            .map(|(i, c)| (V::int(i), Dot::plain(V::Int(i64::from(*c), IntTy::Uint8))))
            .collect(),
        V::Map(m) => m
            .iter()
            .map(|(k, x)| (V::Str(Rc::from(k.as_str())), boxed(x)))
            .collect(),
        V::Int(n, _) if nvars > 1 => {
            return Err(format!(
                "can't use {n} to iterate over more than one variable"
            ));
        }
        V::Int(n, ty) => (0..*n)
            .map(|i| (V::Nil, Dot::plain(V::Int(i, *ty))))
            .collect(),
        V::Nil => Vec::new(),
        // Go prints the `big.Int` struct: its sign and its 64-bit words.
        V::BigInt(n) => {
            let words: Vec<String> = n
                .magnitude()
                .to_u64_digits()
                .iter()
                .map(u64::to_string)
                .collect();
            return Err(format!(
                "range can't iterate over {{{} [{}]}}",
                n.sign() == num_bigint::Sign::Minus,
                words.join(" ")
            ));
        }
        o => return Err(format!("range can't iterate over {}", text_of(o))),
    })
}

/// Go's comparison classes (`basicKind`): `None` for what only `eq` compares, by identity.
#[derive(PartialEq, Clone, Copy)]
enum Kind {
    Bool,
    Int,
    Uint,
    Float,
    Str,
}

fn kind(v: &V) -> Option<Kind> {
    Some(match v {
        V::Bool(_) => Kind::Bool,
        V::Int(_, IntTy::Uint8) => Kind::Uint,
        V::Int(..) => Kind::Int,
        V::Float(_) => Kind::Float,
        V::Str(_) => Kind::Str,
        _ => return None,
    })
}

/// Integers of any type compare by value.
fn int_of(v: &V) -> Option<i64> {
    match v {
        V::Int(i, _) => Some(*i),
        _ => None,
    }
}

/// Go's `eq a b c...`: whether `a` equals any of the others.
fn eq(a: &V, others: &[V]) -> Result<bool, String> {
    if others.is_empty() {
        return Err("missing argument for comparison".into());
    }
    for b in others {
        if eq1(a, b)? {
            return Ok(true);
        }
    }
    Ok(false)
}

fn eq1(a: &V, b: &V) -> Result<bool, String> {
    let (ka, kb) = (kind(a), kind(b));
    if ka != kb {
        if let (Some(x), Some(y)) = (int_of(a), int_of(b)) {
            return Ok(x == y);
        }
        if matches!(a, V::Nil) || matches!(b, V::Nil) {
            return Ok(false);
        }
        return Err(format!(
            "incompatible types for comparison: {} and {}",
            a.type_name(),
            b.type_name()
        ));
    }
    Ok(match (a, b) {
        (V::Bool(x), V::Bool(y)) => x == y,
        (V::Int(x, _), V::Int(y, _)) => x == y,
        (V::Float(x), V::Float(y)) => x == y,
        (V::Str(x), V::Str(y)) => x == y,
        _ => return eq_nillable(a, b),
    })
}

/// `eq` of lists, maps, bytes and big numbers: only against nil or (big numbers) by identity.
fn eq_nillable(a: &V, b: &V) -> Result<bool, String> {
    let reflect_kind = |v: &V| match v {
        V::Nil => 0,
        V::List(_) | V::Bytes(_) => 1,
        V::Map(_) => 2,
        _ => 3,
    };
    let (ra, rb) = (reflect_kind(a), reflect_kind(b));
    if ra != rb && ra != 0 && rb != 0 {
        return Err(format!(
            "non-comparable types {}: {}, {}: {}",
            text_s(a),
            a.type_name(),
            b.type_name(),
            text_of(b)
        ));
    }
    if ra == 0 || rb == 0 {
        return Ok(ra == rb);
    }
    Ok(match (a, b) {
        (V::BigInt(x), V::BigInt(y)) => Rc::ptr_eq(x, y),
        (V::BigFloat(x), V::BigFloat(y)) => Rc::ptr_eq(x, y),
        _ => {
            return Err(format!(
                "non-comparable type {}: {}",
                text_s(b),
                b.type_name()
            ));
        }
    })
}

/// Go's `lt a b` of basic values.
fn lt(a: &V, b: &V) -> Result<bool, String> {
    let bad = || "invalid type for comparison".to_string();
    let (ka, kb) = (kind(a).ok_or_else(bad)?, kind(b).ok_or_else(bad)?);
    if ka != kb {
        if let (Some(x), Some(y)) = (int_of(a), int_of(b)) {
            return Ok(x < y);
        }
        return Err(format!(
            "incompatible types for comparison: {} and {}",
            a.type_name(),
            b.type_name()
        ));
    }
    Ok(match (a, b) {
        (V::Int(x, _), V::Int(y, _)) => x < y,
        (V::Float(x), V::Float(y)) => x < y,
        (V::Str(x), V::Str(y)) => x < y,
        _ => return Err(bad()),
    })
}

/// `html`, `js` and `urlquery` take their arguments as `fmt.Sprint` does (one string as is).
fn eval_args(vals: &[V]) -> String {
    match vals {
        [V::Str(s)] => s.to_string(),
        _ => sprint(vals),
    }
}

fn query_escape(s: &str) -> String {
    let mut o = String::new();
    for &c in s.as_bytes() {
        if c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.' | b'~') {
            o.push(c as char);
        } else if c == b' ' {
            o.push('+');
        } else {
            o.push_str(&format!("%{c:02X}"));
        }
    }
    o
}

/// How a template action prints a value: Go's `fmt.Print`, `<no value>` for a missing one.
fn print_value(out: &mut String, v: &V) {
    match v {
        V::Nil => out.push_str("<no value>"),
        v => fmt_v(out, v),
    }
}

/// A value as Go's `%s` prints it (messages about comparisons use it).
fn text_s(v: &V) -> String {
    super::fmt::sprintf("%s", std::slice::from_ref(v))
}

fn text_of(v: &V) -> String {
    let mut s = String::new();
    fmt_v(&mut s, v);
    s
}
