//! Lexing and parsing of Go `text/template` source into a tree: text, actions with pipelines,
//! `if`/`range`/`with` (with `else` and `else if`/`else with`), `template`, `block`, `define`,
//! `break`/`continue`, trim markers and comments, with Go's error texts where known.

use std::collections::HashMap;

/// A template tree node.
#[derive(Debug, Clone)]
pub enum Node {
    Text(String),
    Action(Pipe),
    If(Pipe, Vec<Node>, Vec<Node>),
    Range(Pipe, Vec<Node>, Vec<Node>),
    With(Pipe, Vec<Node>, Vec<Node>),
    Template(Call),
    Break,
    Continue,
}

/// `{{template "name" pipeline}}` (also what `block` leaves in place).
#[derive(Debug, Clone)]
pub struct Call {
    pub name: String,
    pub pipe: Option<Pipe>,
    /// Where the name starts, and Go's text of the node, for error messages.
    pub pos: usize,
    pub text: String,
}

/// A pipeline: optional variable declaration or assignment, then commands joined by `|`.
#[derive(Debug, Clone)]
pub struct Pipe {
    pub decl: Vec<String>,
    pub assign: bool,
    pub cmds: Vec<Cmd>,
    /// Go's text of the pipeline (`$x := .a | len`), for error messages (`<.a.b>`).
    pub text: String,
    /// The byte offset in the template where the pipeline starts.
    pub pos: usize,
}

/// A command of a pipeline: a function and its arguments, or a single operand.
#[derive(Debug, Clone)]
pub struct Cmd {
    pub ops: Vec<Operand>,
    /// Where its first operand starts, and Go's text of it (operands joined by spaces).
    pub pos: usize,
    pub text: String,
}

/// An operand with where Go places it (a field chain at its second field) and Go's text of it.
#[derive(Debug, Clone)]
pub struct Operand {
    pub arg: Arg,
    pub pos: usize,
    pub text: String,
}

/// An operand of a command.
#[derive(Debug, Clone)]
pub enum Arg {
    /// `.a.b` (empty path: `.`).
    Field(Vec<String>),
    /// `$x.a.b` (`$` alone is the data).
    Var(String, Vec<String>),
    /// A function name.
    Ident(String),
    Str(String),
    Int(i64),
    Float(f64),
    Bool(bool),
    Nil,
    /// An integer literal beyond Go's `int`.
    Overflow(String),
    /// `(pipeline).a.b`.
    Sub(Box<Pipe>, Vec<String>),
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Field(Vec<String>),
    Var(String, Vec<String>),
    Ident(String),
    Str(String),
    Num(String),
    Char(char),
    LParen,
    RParen,
    /// `.x` right after `)`.
    Chain(Vec<String>),
    Pipe,
    Declare,
    Assign,
    Comma,
}

/// The parsed templates: the main one and those defined by `define`/`block`.
pub struct Parsed {
    /// The template source, for the line and column of error messages.
    pub src: String,
    pub main: Vec<Node>,
    pub defs: HashMap<String, Vec<Node>>,
}

/// One piece of source: text or an action's inner text, with its line and byte offset.
enum Piece {
    Text(String),
    Action(String, usize, usize),
}

fn err(line: usize, msg: impl std::fmt::Display) -> String {
    format!("template: :{line}: {msg}")
}

fn split(src: &str) -> Result<Vec<Piece>, String> {
    let mut out = Vec::new();
    let mut rest = src;
    let mut line = 1;
    let mut trim_next = false;
    while !rest.is_empty() {
        let Some(i) = rest.find("{{") else {
            let t = if trim_next {
                rest.trim_start_matches(is_space)
            } else {
                rest
            };
            out.push(Piece::Text(t.to_string()));
            break;
        };
        let mut text = &rest[..i];
        if trim_next {
            text = text.trim_start_matches(is_space);
        }
        let mut body = &rest[i + 2..];
        line += rest[..i].matches('\n').count();
        if body.starts_with('-') && body[1..].starts_with(is_space) {
            text = text.trim_end_matches(is_space);
            body = &body[1..];
        }
        if !text.is_empty() {
            out.push(Piece::Text(text.to_string()));
        }
        // The end of the action, skipping quoted strings and comments.
        let end = action_end(body).ok_or_else(|| err(line, "unclosed action"))?;
        let mut inner = &body[..end];
        trim_next = false;
        if inner.ends_with('-') && inner[..inner.len() - 1].ends_with(is_space) {
            inner = &inner[..inner.len() - 1];
            trim_next = true;
        }
        let t = inner.trim();
        if t.starts_with("/*") {
            if !t.ends_with("*/") {
                return Err(err(line, "unclosed comment"));
            }
        } else {
            let offset = src.len() - body.len();
            out.push(Piece::Action(inner.to_string(), line, offset));
        }
        line += body[..end].matches('\n').count();
        rest = &body[end + 2..];
    }
    Ok(out)
}

fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\n')
}

fn action_end(body: &str) -> Option<usize> {
    let b = body.as_bytes();
    let t = body.trim_start();
    if t.starts_with("/*") {
        let start = body.len() - t.len();
        let close = body[start..].find("*/")? + start + 2;
        return body[close..].find("}}").map(|i| i + close);
    }
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' | b'\'' => {
                let q = b[i];
                i += 1;
                while i < b.len() && b[i] != q {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            b'`' => {
                i += 1;
                while i < b.len() && b[i] != b'`' {
                    i += 1;
                }
            }
            b'}' if b.get(i + 1) == Some(&b'}') => return Some(i),
            _ => {}
        }
        i += 1;
    }
    None
}

fn path_chars(s: &str) -> usize {
    s.find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
        .unwrap_or(s.len())
}

fn fields(s: &str) -> Vec<String> {
    s.split('.')
        .filter(|p| !p.is_empty())
        .map(String::from)
        .collect()
}

/// A token with its byte offset in the template and its source text.
#[derive(Debug, Clone)]
struct Lexed {
    tok: Tok,
    pos: usize,
    raw: String,
}

/// The tokens of an action's text `src`, which starts at byte `base` of the template.
fn lex(src: &str, base: usize, line: usize) -> Result<Vec<Lexed>, String> {
    let mut toks: Vec<Lexed> = Vec::new();
    let mut s = src;
    loop {
        // Each token is pushed below as a bare `Tok`, then given its place and text here.
        if let Some(last) = toks.last_mut()
            && last.raw.is_empty()
        {
            last.raw = src[last.pos - base..src.len() - s.len()].to_string();
        }
        let before = s.len();
        s = s.trim_start_matches(is_space);
        // `(x).f` is a chain only without space before the dot.
        let spaced = s.len() != before;
        let Some(c) = s.chars().next() else {
            break;
        };
        let at = base + src.len() - s.len();
        let mut toks = Pusher {
            toks: &mut toks,
            pos: at,
        };
        match c {
            '.' if s[1..].starts_with(|c: char| c.is_ascii_digit()) => {
                let n = number_len(s);
                toks.push(Tok::Num(s[..n].to_string()));
                s = &s[n..];
            }
            '.' => {
                let n = 1 + path_chars(&s[1..]);
                let f = fields(&s[..n]);
                if !spaced && toks.last_tok() == Some(&Tok::RParen) && n > 1 {
                    toks.push(Tok::Chain(f));
                } else {
                    toks.push(Tok::Field(f));
                }
                s = &s[n..];
            }
            '$' => {
                let n = 1 + s[1..]
                    .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .unwrap_or(s.len() - 1);
                let name = s[..n].to_string();
                s = &s[n..];
                let m = if s.starts_with('.') { path_chars(s) } else { 0 };
                toks.push(Tok::Var(name, fields(&s[..m])));
                s = &s[m..];
            }
            '"' | '`' => {
                let (v, n) =
                    string_lit(s).ok_or_else(|| err(line, "unterminated quoted string"))?;
                toks.push(Tok::Str(v));
                s = &s[n..];
            }
            '\'' => {
                let (v, n) =
                    string_lit(s).ok_or_else(|| err(line, "unterminated character constant"))?;
                let mut cs = v.chars();
                match (cs.next(), cs.next()) {
                    (Some(ch), None) => toks.push(Tok::Char(ch)),
                    _ => {
                        return Err(err(
                            line,
                            format!("malformed character constant: {}", &s[..n]),
                        ));
                    }
                }
                s = &s[n..];
            }
            '(' => {
                toks.push(Tok::LParen);
                s = &s[1..];
            }
            ')' => {
                toks.push(Tok::RParen);
                s = &s[1..];
            }
            '|' => {
                toks.push(Tok::Pipe);
                s = &s[1..];
            }
            ',' => {
                toks.push(Tok::Comma);
                s = &s[1..];
            }
            ':' if s.starts_with(":=") => {
                toks.push(Tok::Declare);
                s = &s[2..];
            }
            '=' => {
                toks.push(Tok::Assign);
                s = &s[1..];
            }
            c if c.is_ascii_digit() || c == '-' || c == '+' => {
                let n = number_len(s);
                if n == 0 {
                    return Err(err(line, format!("unexpected {:?} in command", c)));
                }
                toks.push(Tok::Num(s[..n].to_string()));
                s = &s[n..];
            }
            c if c.is_alphabetic() || c == '_' => {
                let n = s
                    .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .unwrap_or(s.len());
                toks.push(Tok::Ident(s[..n].to_string()));
                s = &s[n..];
            }
            c => {
                return Err(err(
                    line,
                    format!("unrecognized character in action: {c:?}"),
                ));
            }
        }
    }
    Ok(toks)
}

/// Pushes tokens at one place.
struct Pusher<'a> {
    toks: &'a mut Vec<Lexed>,
    pos: usize,
}

impl Pusher<'_> {
    fn push(&mut self, tok: Tok) {
        self.toks.push(Lexed {
            tok,
            pos: self.pos,
            raw: String::new(),
        });
    }

    fn last_tok(&self) -> Option<&Tok> {
        self.toks.last().map(|l| &l.tok)
    }
}

fn number_len(s: &str) -> usize {
    s.find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '+' | '-')))
        .unwrap_or(s.len())
        .min(if s.len() > 1 && s[1..].contains(['+', '-']) {
            // A sign is part of a number only at its start or after an exponent.
            let b = s.as_bytes();
            (1..b.len())
                .find(|&i| {
                    matches!(b[i], b'+' | b'-') && !matches!(b[i - 1], b'e' | b'E' | b'p' | b'P')
                })
                .unwrap_or(s.len())
        } else {
            s.len()
        })
}

/// A Go string literal (`"..."` with escapes, or a raw `` `...` ``) and its length.
fn string_lit(s: &str) -> Option<(String, usize)> {
    let q = s.chars().next()?;
    if q == '`' {
        let end = s[1..].find('`')?;
        return Some((s[1..1 + end].to_string(), end + 2));
    }
    let mut out = String::new();
    let mut it = s.char_indices().skip(1);
    while let Some((i, c)) = it.next() {
        if c == q {
            return Some((out, i + 1));
        }
        if c == '\n' {
            return None;
        }
        if c != '\\' {
            out.push(c);
            continue;
        }
        let (_, e) = it.next()?;
        match e {
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            'a' => out.push('\u{7}'),
            'b' => out.push('\u{8}'),
            'f' => out.push('\u{c}'),
            'v' => out.push('\u{b}'),
            '\\' | '"' | '\'' => out.push(e),
            'x' | 'u' | 'U' => {
                let n = match e {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let mut v = 0u32;
                for _ in 0..n {
                    v = v * 16 + it.next()?.1.to_digit(16)?;
                }
                out.push(char::from_u32(v)?);
            }
            _ => return None,
        }
    }
    None
}

struct P<'a> {
    pieces: &'a [Piece],
    pos: usize,
    defs: HashMap<String, Vec<Node>>,
    /// How many `range` bodies enclose the current node of the current template: `break` and
    /// `continue` are errors outside them.
    range_depth: usize,
    /// The variables declared so far and still in scope (Go's parser refuses others).
    vars: Vec<String>,
}

/// How a list of nodes ended.
enum Stop {
    Eof,
    End,
    /// `else` and what follows it (`if ...`, `with ...`) with its offset, and the line.
    Else(Option<(String, usize)>, usize),
}

impl P<'_> {
    fn list(&mut self) -> Result<(Vec<Node>, Stop), String> {
        let mut out = Vec::new();
        while self.pos < self.pieces.len() {
            let piece = &self.pieces[self.pos];
            self.pos += 1;
            let (src, line, off) = match piece {
                Piece::Text(t) => {
                    out.push(Node::Text(t.clone()));
                    continue;
                }
                Piece::Action(s, l, o) => (s.trim(), *l, *o + s.len() - s.trim_start().len()),
            };
            // The byte offset in the template of a part of `src`.
            let at = |part: &str| off + (part.as_ptr() as usize - src.as_ptr() as usize);
            let kw = src
                .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .next()
                .unwrap_or("");
            let rest = src[kw.len()..].trim();
            match kw {
                "end" => return Ok((out, Stop::End)),
                "else" => {
                    return Ok((
                        out,
                        Stop::Else(
                            Some((rest.to_string(), at(rest))).filter(|r| !r.0.is_empty()),
                            line,
                        ),
                    ));
                }
                "if" | "range" | "with" => {
                    // Variables declared in the pipeline or body end with the `end`.
                    let mark = self.vars.len();
                    let pipe = pipeline(&mut self.vars, rest, at(rest), line, kw)?;
                    let inside = usize::from(kw == "range");
                    self.range_depth += inside;
                    let body = self.list();
                    self.range_depth -= inside;
                    let (body, end) = body?;
                    let (els, _) = self.chain_rest(end, line)?;
                    self.vars.truncate(mark);
                    out.push(match kw {
                        "if" => Node::If(pipe, body, els),
                        "range" => Node::Range(pipe, body, els),
                        _ => Node::With(pipe, body, els),
                    });
                }
                "define" | "block" => {
                    let (name, n) = string_lit(rest).ok_or_else(|| {
                        err(line, format!("unexpected {:?} in {kw} clause", rest))
                    })?;
                    // The body is a template of its own, outside any range.
                    let depth = std::mem::take(&mut self.range_depth);
                    let vars = std::mem::replace(&mut self.vars, vec!["$".into()]);
                    let body = self.list();
                    self.range_depth = depth;
                    self.vars = vars;
                    let (body, end) = body?;
                    if !matches!(end, Stop::End) {
                        return Err(err(line, "unexpected EOF"));
                    }
                    self.defs.insert(name.clone(), body);
                    if kw == "block" {
                        out.push(Node::Template(call(
                            &mut self.vars,
                            &name,
                            rest,
                            n,
                            at(rest),
                            line,
                            kw,
                        )?));
                    }
                }
                "template" => {
                    let (name, n) = string_lit(rest).ok_or_else(|| {
                        err(line, format!("unexpected {:?} in template clause", rest))
                    })?;
                    out.push(Node::Template(call(
                        &mut self.vars,
                        &name,
                        rest,
                        n,
                        at(rest),
                        line,
                        kw,
                    )?));
                }
                "break" | "continue" if self.range_depth == 0 => {
                    return Err(err(line, format!("{{{{{kw}}}}} outside {{{{range}}}}")));
                }
                "break" => out.push(Node::Break),
                "continue" => out.push(Node::Continue),
                _ => {
                    if src.is_empty() {
                        return Err(err(line, "missing value for command"));
                    }
                    out.push(Node::Action(pipeline(
                        &mut self.vars,
                        src,
                        off,
                        line,
                        "command",
                    )?));
                }
            }
        }
        Ok((out, Stop::Eof))
    }

    /// After an `else if` body: its own `else` branch (possibly chained again) up to `end`.
    fn chain_rest(&mut self, end: Stop, line: usize) -> Result<(Vec<Node>, Stop), String> {
        match end {
            Stop::End => Ok((Vec::new(), Stop::End)),
            Stop::Eof => Err(err(line, "unexpected EOF")),
            Stop::Else(None, _) => {
                let (e, end2) = self.list()?;
                match end2 {
                    Stop::End => Ok((e, Stop::End)),
                    _ => Err(err(line, "expected end; found else")),
                }
            }
            Stop::Else(Some((chain, off)), l) => {
                let ckw = chain.split_whitespace().next().unwrap_or("").to_string();
                let rest = chain[ckw.len()..].trim_start();
                let cpipe = pipeline(
                    &mut self.vars,
                    rest,
                    off + chain.len() - rest.len(),
                    l,
                    &ckw,
                )?;
                let (cbody, cend) = self.list()?;
                let (celse, fin) = self.chain_rest(cend, l)?;
                let node = if ckw == "with" {
                    Node::With(cpipe, cbody, celse)
                } else {
                    Node::If(cpipe, cbody, celse)
                };
                Ok((vec![node], fin))
            }
        }
    }
}

/// The call of a template `name` (its literal `n` bytes of `rest`, at byte `pos`), with the
/// pipeline after it.
fn call(
    vars: &mut Vec<String>,
    name: &str,
    rest: &str,
    n: usize,
    pos: usize,
    line: usize,
    kw: &str,
) -> Result<Call, String> {
    let p = rest[n..].trim_start();
    let pipe = if p.trim().is_empty() {
        None
    } else {
        Some(pipeline(vars, p, pos + rest.len() - p.len(), line, kw)?)
    };
    let text = match &pipe {
        Some(pipe) => format!("{{{{template {} {}}}}}", &rest[..n], pipe.text),
        None => format!("{{{{template {}}}}}", &rest[..n]),
    };
    Ok(Call {
        name: name.to_string(),
        pipe,
        pos,
        text,
    })
}

/// Parses a pipeline's text `src`, which starts at byte `base` of the template.
fn pipeline(
    vars: &mut Vec<String>,
    src: &str,
    base: usize,
    line: usize,
    ctx: &str,
) -> Result<Pipe, String> {
    let toks = lex(src, base, line)?;
    let mut i = 0;
    let mut decl = Vec::new();
    let mut assign = false;
    // `$x :=`, `$i, $v :=`, `$x =`
    let mut j = 0;
    let mut names = Vec::new();
    while let Some(Tok::Var(n, f)) = toks.get(j).map(|l| &l.tok) {
        if !f.is_empty() {
            break;
        }
        names.push(n.clone());
        j += 1;
        match toks.get(j).map(|l| &l.tok) {
            Some(Tok::Comma) if names.len() == 1 => j += 1,
            Some(Tok::Declare) => {
                decl = names;
                i = j + 1;
                break;
            }
            Some(Tok::Assign) => {
                decl = names;
                assign = true;
                i = j + 1;
                break;
            }
            _ => break,
        }
    }
    vars.extend(decl.iter().cloned());
    let (cmds, used) = commands(vars, &toks[i..], line)?;
    if let Some(t) = toks.get(i + used) {
        return Err(err(line, format!("unexpected {:?} in {ctx}", t.tok)));
    }
    if cmds.is_empty() {
        return Err(err(line, format!("missing value for {ctx}")));
    }
    let pos = toks.get(i).map_or(base, |t| t.pos);
    Ok(new_pipe(decl, assign, cmds, pos))
}

fn new_pipe(decl: Vec<String>, assign: bool, cmds: Vec<Cmd>, pos: usize) -> Pipe {
    let mut text = String::new();
    if !decl.is_empty() {
        text = format!("{} {} ", decl.join(", "), if assign { "=" } else { ":=" });
    }
    text.push_str(
        &cmds
            .iter()
            .map(|c| c.text.as_str())
            .collect::<Vec<_>>()
            .join(" | "),
    );
    Pipe {
        decl,
        assign,
        cmds,
        text,
        pos,
    }
}

/// Go's names of the builtin functions: any other name is a parse error.
const FUNCS: &[&str] = &[
    "and", "call", "html", "index", "slice", "js", "len", "not", "or", "print", "printf",
    "println", "urlquery", "eq", "ge", "gt", "le", "lt", "ne",
];

/// Commands up to a `)` or the end, and the tokens used.
fn commands(vars: &[String], toks: &[Lexed], line: usize) -> Result<(Vec<Cmd>, usize), String> {
    let mut cmds = Vec::new();
    let mut cur: Vec<Operand> = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        let t = &toks[i];
        i += 1;
        let (arg, pos, text) = match &t.tok {
            Tok::RParen => {
                i -= 1;
                break;
            }
            Tok::Pipe => {
                if cur.is_empty() {
                    return Err(err(line, "missing command"));
                }
                cmds.push(new_cmd(std::mem::take(&mut cur)));
                continue;
            }
            Tok::LParen => {
                let (sub, used) = commands(vars, &toks[i..], line)?;
                let pos = toks.get(i).map_or(t.pos, |t| t.pos);
                i += used;
                if !matches!(toks.get(i).map(|t| &t.tok), Some(Tok::RParen)) {
                    return Err(err(line, "unclosed left paren"));
                }
                i += 1;
                let sub = new_pipe(Vec::new(), false, sub, pos);
                let mut text = format!("({})", sub.text);
                let (chain, pos) = match toks.get(i) {
                    Some(Lexed {
                        tok: Tok::Chain(f),
                        pos,
                        raw,
                    }) => {
                        i += 1;
                        text.push_str(raw);
                        (f.clone(), *pos)
                    }
                    _ => (Vec::new(), pos),
                };
                (Arg::Sub(Box::new(sub), chain), pos, text)
            }
            tok => (operand(tok, line)?, chain_pos(t), t.raw.clone()),
        };
        match &arg {
            Arg::Ident(name) if !FUNCS.contains(&name.as_str()) => {
                return Err(err(line, format!("function {name:?} not defined")));
            }
            Arg::Var(name, _) if !vars.contains(name) => {
                return Err(err(line, format!("undefined variable {name:?}")));
            }
            _ => {}
        }
        cur.push(Operand { arg, pos, text });
    }
    if !cur.is_empty() {
        cmds.push(new_cmd(cur));
    }
    Ok((cmds, i))
}

fn new_cmd(ops: Vec<Operand>) -> Cmd {
    let text = ops
        .iter()
        .map(|o| o.text.clone())
        .collect::<Vec<_>>()
        .join(" ");
    Cmd {
        pos: ops.first().map_or(0, |o| o.pos),
        ops,
        text,
    }
}

/// Where Go places a field or variable chain: at its second part (`.b` of `.a.b`, `.a` of
/// `$x.a`), else at its start.
fn chain_pos(t: &Lexed) -> usize {
    let skip = match t.tok {
        Tok::Field(_) => 1,
        Tok::Var(..) => 0,
        _ => return t.pos,
    };
    match t.raw[skip..].find('.') {
        Some(i) => t.pos + skip + i,
        None => t.pos,
    }
}

/// An operand token other than a parenthesized pipeline.
fn operand(t: &Tok, line: usize) -> Result<Arg, String> {
    Ok(match t {
        Tok::Field(f) => Arg::Field(f.clone()),
        Tok::Var(n, f) => Arg::Var(n.clone(), f.clone()),
        Tok::Ident(s) => match s.as_str() {
            "true" => Arg::Bool(true),
            "false" => Arg::Bool(false),
            "nil" => Arg::Nil,
            _ => Arg::Ident(s.clone()),
        },
        Tok::Str(s) => Arg::Str(s.clone()),
        Tok::Char(c) => Arg::Int(i64::from(u32::from(*c))),
        Tok::Num(n) => number(n).ok_or_else(|| err(line, format!("bad number syntax: {:?}", n)))?,
        t => return Err(err(line, format!("unexpected {t:?} in operand"))),
    })
}

fn number(n: &str) -> Option<Arg> {
    let clean = n.replace('_', "");
    let (neg, body) = match clean.strip_prefix('-') {
        Some(b) => (true, b.to_string()),
        None => (false, clean.trim_start_matches('+').to_string()),
    };
    let lower = body.to_ascii_lowercase();
    let int = if let Some(h) = lower.strip_prefix("0x") {
        i64::from_str_radix(h, 16).ok()
    } else if let Some(o) = lower.strip_prefix("0o") {
        i64::from_str_radix(o, 8).ok()
    } else if let Some(b) = lower.strip_prefix("0b") {
        i64::from_str_radix(b, 2).ok()
    } else if lower.len() > 1 && lower.starts_with('0') && lower.bytes().all(|c| c.is_ascii_digit())
    {
        i64::from_str_radix(&lower[1..], 8).ok()
    } else {
        lower.parse::<i64>().ok()
    };
    if let Some(i) = int {
        return Some(Arg::Int(if neg { -i } else { i }));
    }
    // An integer too large for Go's `int` (a float has a point, an exponent or is hexadecimal
    // with `p`).
    let hex = lower.starts_with("0x");
    if !(if hex {
        lower.contains('p')
    } else {
        lower.contains(['.', 'e'])
    }) {
        return Some(Arg::Overflow(n.to_string()));
    }
    let f: f64 = match lower.strip_prefix("0x") {
        Some(h) => hex_float(h)?,
        None => lower.parse().ok()?,
    };
    Some(Arg::Float(if neg { -f } else { f }))
}

/// A hexadecimal float after its `0x`: `1.8p3` is 1.5 × 2³.
fn hex_float(h: &str) -> Option<f64> {
    let (mant, exp) = h.split_once('p')?;
    let exp: i32 = exp.parse().ok()?;
    let (int, frac) = mant.split_once('.').unwrap_or((mant, ""));
    let mut v = 0f64;
    for c in int.chars().chain(frac.chars()) {
        v = v * 16.0 + f64::from(c.to_digit(16)?);
    }
    Some(v * 2f64.powi(exp - 4 * frac.len() as i32))
}

/// Parses template source.
pub fn parse(src: &str) -> Result<Parsed, String> {
    let pieces = split(src)?;
    let mut p = P {
        pieces: &pieces,
        pos: 0,
        defs: HashMap::new(),
        range_depth: 0,
        vars: vec!["$".into()],
    };
    let (main, end) = p.list()?;
    match end {
        Stop::Eof => {}
        Stop::End => return Err(err(line_of(&pieces, p.pos), "unexpected {{end}}")),
        Stop::Else(..) => return Err(err(line_of(&pieces, p.pos), "unexpected {{else}}")),
    }
    Ok(Parsed {
        src: src.to_string(),
        main,
        defs: p.defs,
    })
}

fn line_of(pieces: &[Piece], pos: usize) -> usize {
    match pieces.get(pos.saturating_sub(1)) {
        Some(Piece::Action(_, l, _)) => *l,
        _ => 1,
    }
}
