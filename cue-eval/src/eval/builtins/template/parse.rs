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
    Template(String, Option<Pipe>),
    Break,
    Continue,
}

/// A pipeline: optional variable declaration or assignment, then commands joined by `|`.
#[derive(Debug, Clone)]
pub struct Pipe {
    pub decl: Vec<String>,
    pub assign: bool,
    pub cmds: Vec<Vec<Arg>>,
    /// Source text, for error messages (`<.a.b>`).
    pub text: String,
    pub line: usize,
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
    pub main: Vec<Node>,
    pub defs: HashMap<String, Vec<Node>>,
}

/// One piece of source: text or an action's inner text, with its line.
enum Piece {
    Text(String),
    Action(String, usize),
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
            out.push(Piece::Action(inner.to_string(), line));
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

fn lex(src: &str, line: usize) -> Result<Vec<Tok>, String> {
    let mut toks = Vec::new();
    let mut s = src;
    loop {
        s = s.trim_start_matches(is_space);
        let Some(c) = s.chars().next() else {
            break;
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
                if toks.last() == Some(&Tok::RParen) && n > 1 {
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
}

/// How a list of nodes ended.
enum Stop {
    Eof,
    End,
    Else(Option<String>, usize),
}

impl P<'_> {
    fn list(&mut self) -> Result<(Vec<Node>, Stop), String> {
        let mut out = Vec::new();
        while self.pos < self.pieces.len() {
            let piece = &self.pieces[self.pos];
            self.pos += 1;
            let (src, line) = match piece {
                Piece::Text(t) => {
                    out.push(Node::Text(t.clone()));
                    continue;
                }
                Piece::Action(s, l) => (s.trim(), *l),
            };
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
                        Stop::Else(Some(rest.to_string()).filter(|r| !r.is_empty()), line),
                    ));
                }
                "if" | "range" | "with" => {
                    let pipe = pipeline(rest, line, kw)?;
                    let (body, end) = self.list()?;
                    let (els, _) = self.chain_rest(end, line)?;
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
                    let (body, end) = self.list()?;
                    if !matches!(end, Stop::End) {
                        return Err(err(line, "unexpected EOF"));
                    }
                    self.defs.insert(name.clone(), body);
                    if kw == "block" {
                        let p = rest[n..].trim();
                        let pipe = if p.is_empty() {
                            None
                        } else {
                            Some(pipeline(p, line, kw)?)
                        };
                        out.push(Node::Template(name, pipe));
                    }
                }
                "template" => {
                    let (name, n) = string_lit(rest).ok_or_else(|| {
                        err(line, format!("unexpected {:?} in template clause", rest))
                    })?;
                    let p = rest[n..].trim();
                    let pipe = if p.is_empty() {
                        None
                    } else {
                        Some(pipeline(p, line, kw)?)
                    };
                    out.push(Node::Template(name, pipe));
                }
                "break" => out.push(Node::Break),
                "continue" => out.push(Node::Continue),
                _ => {
                    if src.is_empty() {
                        return Err(err(line, "missing value for command"));
                    }
                    out.push(Node::Action(pipeline(src, line, "command")?));
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
            Stop::Else(Some(chain), l) => {
                let ckw = chain.split_whitespace().next().unwrap_or("").to_string();
                let cpipe = pipeline(chain[ckw.len()..].trim(), l, &ckw)?;
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

/// Parses a pipeline's text.
fn pipeline(src: &str, line: usize, ctx: &str) -> Result<Pipe, String> {
    let toks = lex(src, line)?;
    let mut i = 0;
    let mut decl = Vec::new();
    let mut assign = false;
    // `$x :=`, `$i, $v :=`, `$x =`
    let mut j = 0;
    let mut names = Vec::new();
    while let Some(Tok::Var(n, f)) = toks.get(j) {
        if !f.is_empty() {
            break;
        }
        names.push(n.clone());
        j += 1;
        match toks.get(j) {
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
    let (pipe_cmds, used) = commands(&toks[i..], line)?;
    if i + used != toks.len() {
        return Err(err(
            line,
            format!("unexpected {:?} in {ctx}", toks[i + used]),
        ));
    }
    if pipe_cmds.is_empty() {
        return Err(err(line, format!("missing value for {ctx}")));
    }
    Ok(Pipe {
        decl,
        assign,
        cmds: pipe_cmds,
        text: src.to_string(),
        line,
    })
}

/// Commands up to a `)` or the end, and the tokens used.
fn commands(toks: &[Tok], line: usize) -> Result<(Vec<Vec<Arg>>, usize), String> {
    let mut cmds = Vec::new();
    let mut cur = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        let t = &toks[i];
        i += 1;
        let arg = match t {
            Tok::RParen => {
                i -= 1;
                break;
            }
            Tok::Pipe => {
                if cur.is_empty() {
                    return Err(err(line, "missing command"));
                }
                cmds.push(std::mem::take(&mut cur));
                continue;
            }
            Tok::LParen => {
                let (sub, used) = commands(&toks[i..], line)?;
                i += used;
                if toks.get(i) != Some(&Tok::RParen) {
                    return Err(err(line, "unclosed left paren"));
                }
                i += 1;
                let chain = match toks.get(i) {
                    Some(Tok::Chain(f)) => {
                        i += 1;
                        f.clone()
                    }
                    _ => Vec::new(),
                };
                Arg::Sub(
                    Box::new(Pipe {
                        decl: Vec::new(),
                        assign: false,
                        cmds: sub,
                        text: String::new(),
                        line,
                    }),
                    chain,
                )
            }
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
            Tok::Num(n) => {
                number(n).ok_or_else(|| err(line, format!("bad number syntax: {:?}", n)))?
            }
            t => return Err(err(line, format!("unexpected {t:?} in operand"))),
        };
        cur.push(arg);
    }
    if !cur.is_empty() {
        cmds.push(cur);
    }
    Ok((cmds, i))
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
    let f: f64 = lower.parse().ok()?;
    Some(Arg::Float(if neg { -f } else { f }))
}

/// Parses template source.
pub fn parse(src: &str) -> Result<Parsed, String> {
    let pieces = split(src)?;
    let mut p = P {
        pieces: &pieces,
        pos: 0,
        defs: HashMap::new(),
    };
    let (main, end) = p.list()?;
    match end {
        Stop::Eof => {}
        Stop::End => return Err(err(line_of(&pieces, p.pos), "unexpected {{end}}")),
        Stop::Else(..) => return Err(err(line_of(&pieces, p.pos), "unexpected {{else}}")),
    }
    Ok(Parsed { main, defs: p.defs })
}

fn line_of(pieces: &[Piece], pos: usize) -> usize {
    match pieces.get(pos.saturating_sub(1)) {
        Some(Piece::Action(_, l)) => *l,
        _ => 1,
    }
}
