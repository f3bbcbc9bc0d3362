//! Execution of a parsed template over data decoded as CUE decodes it into a Go `any`: structs
//! as `map[string]any` (ranged and printed in sorted key order), lists as `[]any`, ints as
//! `int`, floats as `float64`, and Go's builtin functions, truth, comparison and `fmt` printing.

use std::rc::Rc;

use super::parse::{Arg, Node, Parsed, Pipe};
use crate::encode::Data;

/// A Go value as the template sees it.
#[derive(Clone, Debug, PartialEq)]
pub enum V {
    /// A missing value (`<no value>`) or `nil`.
    Nil,
    Bool(bool),
    Int(i64),
    Float(f64),
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
            Data::Number { text, float } => {
                if !float && let Ok(i) = text.parse::<i64>() {
                    return V::Int(i);
                }
                V::Float(text.parse().unwrap_or(f64::NAN))
            }
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

    /// Go's name of the value's dynamic type, as `%v` errors and messages print it.
    pub(super) fn type_name(&self) -> &'static str {
        match self {
            V::Nil => "<nil>",
            V::Bool(_) => "bool",
            V::Int(_) => "int",
            V::Float(_) => "float64",
            V::Str(_) => "string",
            V::Bytes(_) => "[]uint8",
            V::List(_) => "[]interface {}",
            V::Map(_) => "map[string]interface {}",
        }
    }

    fn truth(&self) -> bool {
        match self {
            V::Nil => false,
            V::Bool(b) => *b,
            V::Int(i) => *i != 0,
            V::Float(f) => *f != 0.0,
            V::Str(s) => !s.is_empty(),
            V::Bytes(b) => !b.is_empty(),
            V::List(l) => !l.is_empty(),
            V::Map(m) => !m.is_empty(),
        }
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

pub struct Exec<'a> {
    parsed: &'a Parsed,
    vars: Vec<(String, V)>,
    out: String,
    depth: usize,
    steps: usize,
}

type Res<T> = Result<T, String>;

fn exec_err(p: &Pipe, msg: impl std::fmt::Display) -> String {
    format!(
        "template: :{}: executing \"\" at <{}>: {msg}",
        p.line, p.text
    )
}

impl<'a> Exec<'a> {
    pub fn run(parsed: &'a Parsed, data: V) -> Res<String> {
        let mut e = Exec {
            parsed,
            vars: vec![("$".into(), data.clone())],
            out: String::new(),
            depth: 0,
            steps: 0,
        };
        e.list(&parsed.main, &data)?;
        Ok(e.out)
    }

    fn list(&mut self, nodes: &[Node], dot: &V) -> Res<Flow> {
        for n in nodes {
            self.steps += 1;
            if self.steps > MAX_STEPS || self.out.len() > MAX_OUTPUT {
                return Err("template: execution too large".into());
            }
            match n {
                Node::Text(t) => self.out.push_str(t),
                Node::Action(p) => {
                    let v = self.pipe(p, dot)?;
                    if p.decl.is_empty() {
                        print_value(&mut self.out, &v);
                    }
                }
                Node::If(p, body, els) => {
                    let mark = self.vars.len();
                    let v = self.pipe(p, dot)?;
                    let f = if v.truth() {
                        self.list(body, dot)?
                    } else {
                        self.list(els, dot)?
                    };
                    self.vars.truncate(mark);
                    if !matches!(f, Flow::Normal) {
                        return Ok(f);
                    }
                }
                Node::With(p, body, els) => {
                    let mark = self.vars.len();
                    let v = self.pipe(p, dot)?;
                    let f = if v.truth() {
                        self.list(body, &v)?
                    } else {
                        self.list(els, dot)?
                    };
                    self.vars.truncate(mark);
                    if !matches!(f, Flow::Normal) {
                        return Ok(f);
                    }
                }
                Node::Range(p, body, els) => {
                    let mark = self.vars.len();
                    let mut pp = p.clone();
                    let names = std::mem::take(&mut pp.decl);
                    let v = self.pipe(&pp, dot)?;
                    let items: Vec<(V, V)> = match &v {
                        V::List(l) => l
                            .iter()
                            .enumerate()
                            .map(|(i, x)| (V::Int(i as i64), x.clone()))
                            .collect(),
                        V::Map(m) => m
                            .iter()
                            .map(|(k, x)| (V::Str(Rc::from(k.as_str())), x.clone()))
                            .collect(),
                        V::Int(n) => (0..*n).map(|i| (V::Int(i), V::Int(i))).collect(),
                        V::Nil => Vec::new(),
                        o => {
                            return Err(exec_err(
                                p,
                                format!("range can't iterate over {}", text_of(o)),
                            ));
                        }
                    };
                    if items.is_empty() {
                        let f = self.list(els, dot)?;
                        self.vars.truncate(mark);
                        if !matches!(f, Flow::Normal) {
                            return Ok(f);
                        }
                        continue;
                    }
                    for (k, x) in items {
                        let inner = self.vars.len();
                        match names.as_slice() {
                            [a] => self.vars.push((a.clone(), x.clone())),
                            [a, b] => {
                                self.vars.push((a.clone(), k));
                                self.vars.push((b.clone(), x.clone()));
                            }
                            _ => {}
                        }
                        let f = self.list(body, &x)?;
                        self.vars.truncate(inner);
                        if matches!(f, Flow::Break) {
                            break;
                        }
                    }
                    self.vars.truncate(mark);
                }
                Node::Template(name, p) => {
                    let v = match p {
                        Some(p) => self.pipe(p, dot)?,
                        None => V::Nil,
                    };
                    let Some(body) = self.parsed.defs.get(name) else {
                        return Err(format!(
                            "template: no template {:?} associated with template \"\"",
                            name
                        ));
                    };
                    if self.depth >= MAX_DEPTH {
                        return Err("template: exceeded maximum template depth (100000)".into());
                    }
                    let saved = std::mem::replace(&mut self.vars, vec![("$".into(), v.clone())]);
                    self.depth += 1;
                    let r = self.list(body, &v);
                    self.depth -= 1;
                    self.vars = saved;
                    r?;
                }
                Node::Break => return Ok(Flow::Break),
                Node::Continue => return Ok(Flow::Continue),
            }
        }
        Ok(Flow::Normal)
    }

    fn pipe(&mut self, p: &Pipe, dot: &V) -> Res<V> {
        let mut last: Option<V> = None;
        for cmd in &p.cmds {
            last = Some(self.command(p, cmd, dot, last)?);
        }
        let v = last.unwrap_or(V::Nil);
        if !p.decl.is_empty() {
            if p.assign {
                let name = &p.decl[0];
                match self.vars.iter_mut().rev().find(|(n, _)| n == name) {
                    Some(slot) => slot.1 = v.clone(),
                    None => return Err(exec_err(p, format!("undefined variable: {name}"))),
                }
            } else {
                self.vars.push((p.decl[0].clone(), v.clone()));
            }
        }
        Ok(v)
    }

    fn var(&self, p: &Pipe, name: &str) -> Res<V> {
        self.vars
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
            .ok_or_else(|| exec_err(p, format!("undefined variable: {name}")))
    }

    fn arg(&mut self, p: &Pipe, a: &Arg, dot: &V) -> Res<V> {
        Ok(match a {
            Arg::Field(f) => field(p, dot, f)?,
            Arg::Var(n, f) => {
                let v = self.var(p, n)?;
                field(p, &v, f)?
            }
            Arg::Sub(sub, f) => {
                let v = self.pipe(sub, dot)?;
                field(p, &v, f)?
            }
            Arg::Str(s) => V::Str(Rc::from(s.as_str())),
            Arg::Int(i) => V::Int(*i),
            Arg::Float(x) => V::Float(*x),
            Arg::Bool(b) => V::Bool(*b),
            Arg::Nil => return Err(exec_err(p, "nil is not a command")),
            Arg::Ident(name) => self.call(p, name, &[], dot, None)?,
        })
    }

    fn command(&mut self, p: &Pipe, cmd: &[Arg], dot: &V, piped: Option<V>) -> Res<V> {
        match &cmd[0] {
            Arg::Ident(name) => self.call(p, name, &cmd[1..], dot, piped),
            first => {
                if cmd.len() > 1 || piped.is_some() {
                    return Err(exec_err(
                        p,
                        format!("can't give argument to non-function {}", arg_text(first)),
                    ));
                }
                self.arg(p, first, dot)
            }
        }
    }

    fn call(&mut self, p: &Pipe, name: &str, args: &[Arg], dot: &V, piped: Option<V>) -> Res<V> {
        let nargs = args.len() + usize::from(piped.is_some());
        // `and` and `or` evaluate their arguments only as far as needed.
        if name == "and" || name == "or" {
            if nargs == 0 {
                return Err(exec_err(
                    p,
                    format!("wrong number of args for {name}: want at least 1 got 0"),
                ));
            }
            let mut v = V::Nil;
            for a in args {
                v = self.arg(p, a, dot)?;
                if v.truth() != (name == "and") {
                    return Ok(v);
                }
            }
            if let Some(x) = piped {
                v = x;
            }
            return Ok(v);
        }
        let mut vals = Vec::with_capacity(nargs);
        for a in args {
            vals.push(self.arg(p, a, dot)?);
        }
        vals.extend(piped);
        let want = |n: usize| -> Res<()> {
            if vals.len() != n {
                return Err(exec_err(
                    p,
                    format!(
                        "wrong number of args for {name}: want {n} got {}",
                        vals.len()
                    ),
                ));
            }
            Ok(())
        };
        match name {
            "not" => {
                want(1)?;
                Ok(V::Bool(!vals[0].truth()))
            }
            "len" => {
                want(1)?;
                match &vals[0] {
                    V::Str(s) => Ok(V::Int(s.len() as i64)),
                    V::Bytes(b) => Ok(V::Int(b.len() as i64)),
                    V::List(l) => Ok(V::Int(l.len() as i64)),
                    V::Map(m) => Ok(V::Int(m.len() as i64)),
                    o => Err(exec_err(
                        p,
                        format!("error calling len: len of type {}", o.type_name()),
                    )),
                }
            }
            "index" => {
                if vals.is_empty() {
                    return Err(exec_err(
                        p,
                        "wrong number of args for index: want at least 1 got 0",
                    ));
                }
                let mut v = vals[0].clone();
                for ix in &vals[1..] {
                    v = match (&v, ix) {
                        (V::List(l), V::Int(i)) => {
                            match usize::try_from(*i).ok().and_then(|i| l.get(i)) {
                                Some(x) => x.clone(),
                                None => {
                                    return Err(exec_err(
                                        p,
                                        format!("error calling index: index out of range: {i}"),
                                    ));
                                }
                            }
                        }
                        (V::Str(s), V::Int(i)) => {
                            match usize::try_from(*i).ok().and_then(|i| s.as_bytes().get(i)) {
                                Some(b) => V::Int(i64::from(*b)),
                                None => {
                                    return Err(exec_err(
                                        p,
                                        format!("error calling index: index out of range: {i}"),
                                    ));
                                }
                            }
                        }
                        (V::Map(m), V::Str(k)) => m
                            .iter()
                            .find(|(n, _)| **n == **k)
                            .map_or(V::Nil, |x| x.1.clone()),
                        (V::Nil, _) => {
                            return Err(exec_err(p, "error calling index: index of untyped nil"));
                        }
                        (V::List(_) | V::Str(_), o) => {
                            return Err(exec_err(
                                p,
                                format!(
                                    "error calling index: cannot index slice/array with type {}",
                                    o.type_name()
                                ),
                            ));
                        }
                        (V::Map(_), o) => {
                            return Err(exec_err(
                                p,
                                format!(
                                    "error calling index: value has type {}; should be string",
                                    o.type_name()
                                ),
                            ));
                        }
                        (o, _) => {
                            return Err(exec_err(
                                p,
                                format!(
                                    "error calling index: can't index item of type {}",
                                    o.type_name()
                                ),
                            ));
                        }
                    };
                }
                Ok(v)
            }
            "slice" => {
                if vals.is_empty() || vals.len() > 4 {
                    return Err(exec_err(
                        p,
                        format!(
                            "wrong number of args for slice: want 1 or more got {}",
                            vals.len()
                        ),
                    ));
                }
                let len = match &vals[0] {
                    V::Str(s) => s.len(),
                    V::List(l) => l.len(),
                    V::Bytes(b) => b.len(),
                    o => {
                        return Err(exec_err(
                            p,
                            format!(
                                "error calling slice: can't slice item of type {}",
                                o.type_name()
                            ),
                        ));
                    }
                };
                let mut ix = Vec::new();
                for v in &vals[1..] {
                    match v {
                        V::Int(i) if *i >= 0 => ix.push(*i as usize),
                        V::Int(i) => {
                            return Err(exec_err(
                                p,
                                format!("error calling slice: index out of range: {i}"),
                            ));
                        }
                        o => {
                            return Err(exec_err(
                                p,
                                format!(
                                    "error calling slice: cannot index slice/array with type {}",
                                    o.type_name()
                                ),
                            ));
                        }
                    }
                }
                let i = ix.first().copied().unwrap_or(0);
                let j = ix.get(1).copied().unwrap_or(len);
                if i > j || j > len {
                    return Err(exec_err(
                        p,
                        format!("error calling slice: invalid slice index: {i} > {j}"),
                    ));
                }
                Ok(match &vals[0] {
                    V::Str(s) => V::Str(Rc::from(
                        String::from_utf8_lossy(&s.as_bytes()[i..j]).as_ref(),
                    )),
                    V::List(l) => V::List(l[i..j].into()),
                    V::Bytes(b) => V::Bytes(b[i..j].into()),
                    _ => V::Nil,
                })
            }
            "print" => Ok(V::Str(Rc::from(sprint(&vals).as_str()))),
            "println" => Ok(V::Str(Rc::from(sprintln(&vals).as_str()))),
            "printf" => {
                if vals.is_empty() {
                    return Err(exec_err(
                        p,
                        "wrong number of args for printf: want at least 1 got 0",
                    ));
                }
                let V::Str(f) = &vals[0] else {
                    return Err(exec_err(
                        p,
                        format!(
                            "wrong type for value; expected string; got {}",
                            vals[0].type_name()
                        ),
                    ));
                };
                Ok(V::Str(Rc::from(
                    super::fmt::sprintf(f, &vals[1..]).as_str(),
                )))
            }
            "html" => Ok(V::Str(Rc::from(
                super::html_escape(&eval_args(&vals)).as_str(),
            ))),
            "js" => Ok(V::Str(Rc::from(
                super::js_escape(&eval_args(&vals)).as_str(),
            ))),
            "urlquery" => Ok(V::Str(Rc::from(query_escape(&eval_args(&vals)).as_str()))),
            "eq" => {
                if vals.len() < 2 {
                    return Err(exec_err(
                        p,
                        "error calling eq: missing argument for comparison",
                    ));
                }
                for x in &vals[1..] {
                    if compare(&vals[0], x)
                        .map_err(|e| exec_err(p, format!("error calling eq: {e}")))?
                        == Some(std::cmp::Ordering::Equal)
                    {
                        return Ok(V::Bool(true));
                    }
                }
                Ok(V::Bool(false))
            }
            "ne" | "lt" | "le" | "gt" | "ge" => {
                want(2)?;
                let c = compare(&vals[0], &vals[1])
                    .map_err(|e| exec_err(p, format!("error calling {name}: {e}")))?;
                use std::cmp::Ordering::*;
                if name != "ne" && matches!(vals[0], V::Bool(_) | V::Nil) {
                    return Err(exec_err(
                        p,
                        format!("error calling {name}: invalid type for comparison"),
                    ));
                }
                Ok(V::Bool(match (name, c) {
                    ("ne", c) => c != Some(Equal),
                    ("lt", Some(Less))
                    | ("le", Some(Less | Equal))
                    | ("gt", Some(Greater))
                    | ("ge", Some(Greater | Equal)) => true,
                    _ => false,
                }))
            }
            "call" => Err(exec_err(
                p,
                "error calling call: non-function of type interface {}",
            )),
            _ => Err(format!(
                "template: :{}: function {:?} not defined",
                p.line, name
            )),
        }
    }
}

fn arg_text(a: &Arg) -> String {
    match a {
        Arg::Field(f) => format!(".{}", f.join(".")),
        Arg::Var(n, f) if f.is_empty() => n.clone(),
        Arg::Var(n, f) => format!("{n}.{}", f.join(".")),
        Arg::Str(s) => format!("{s:?}"),
        Arg::Int(i) => i.to_string(),
        Arg::Float(x) => x.to_string(),
        Arg::Bool(b) => b.to_string(),
        Arg::Nil => "nil".into(),
        Arg::Ident(s) => s.clone(),
        Arg::Sub(..) => "(...)".into(),
    }
}

/// `.a.b` of a value: map keys. A missing key is no value, and so is every field after it (Go
/// reads fields of the invalid value as invalid), while a field of a present `null` is an error.
fn field(p: &Pipe, v: &V, path: &[String]) -> Res<V> {
    let mut cur = v.clone();
    for name in path {
        cur = match &cur {
            V::Map(m) => match m.iter().find(|(k, _)| k == name) {
                Some(x) => x.1.clone(),
                None => return Ok(V::Nil),
            },
            V::Nil => {
                return Err(exec_err(
                    p,
                    format!("nil pointer evaluating interface {{}}.{name}"),
                ));
            }
            o => {
                return Err(exec_err(
                    p,
                    format!("can't evaluate field {name} in type {}", o.type_name()),
                ));
            }
        };
    }
    Ok(cur)
}

/// Go's template comparison of basic kinds: `Some(order)`, `None` for unequal lists and maps.
fn compare(a: &V, b: &V) -> Result<Option<std::cmp::Ordering>, String> {
    Ok(match (a, b) {
        (V::Int(x), V::Int(y)) => Some(x.cmp(y)),
        (V::Float(x), V::Float(y)) => x.partial_cmp(y),
        (V::Str(x), V::Str(y)) => Some(x.cmp(y)),
        (V::Bool(x), V::Bool(y)) => Some(x.cmp(y)),
        (V::Nil, V::Nil) => Some(std::cmp::Ordering::Equal),
        (
            V::Int(_) | V::Float(_) | V::Str(_) | V::Bool(_),
            V::Int(_) | V::Float(_) | V::Str(_) | V::Bool(_),
        ) => {
            return Err("incompatible types for comparison".into());
        }
        (V::List(_) | V::Map(_) | V::Bytes(_), _) | (_, V::List(_) | V::Map(_) | V::Bytes(_)) => {
            return Err("non-comparable type".into());
        }
        _ => return Err("incompatible types for comparison".into()),
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
        v => super::fmt::fmt_v(out, v, false),
    }
}

fn text_of(v: &V) -> String {
    let mut s = String::new();
    super::fmt::fmt_v(&mut s, v, false);
    s
}

/// Go's `fmt.Sprint`: spaces between operands when neither side is a string.
pub fn sprint(vals: &[V]) -> String {
    let mut o = String::new();
    for (i, v) in vals.iter().enumerate() {
        if i > 0 && !matches!(v, V::Str(_)) && !matches!(vals[i - 1], V::Str(_)) {
            o.push(' ');
        }
        super::fmt::fmt_v(&mut o, v, false);
    }
    o
}

/// Go's `fmt.Sprintln`: spaces between all operands, then a newline.
pub fn sprintln(vals: &[V]) -> String {
    let mut o = String::new();
    for (i, v) in vals.iter().enumerate() {
        if i > 0 {
            o.push(' ');
        }
        super::fmt::fmt_v(&mut o, v, false);
    }
    o.push('\n');
    o
}
