//! The `encoding/toml` package. `Marshal` writes TOML as CUE v0.17.1 does, which hands a Go
//! map to `go-toml/v2`'s encoder: keys sorted, a table's plain values before its sub-tables,
//! a blank line between tables, lists of structs as `[[array tables]]`, strings and keys as
//! literal `'...'` strings unless they need basic quoting. `Unmarshal` is a port of
//! go-toml's lenient parser, hand-written because no TOML crate reads as it does: numbers and
//! dates are runs of characters compiled as CUE literals (`1e3` stays `1E+3`, an integer beyond
//! 64 bits is kept), keys repeated across dotted keys and tables unify as CUE fields do, and
//! errors carry go-toml's texts.

use std::rc::Rc;

use super::k::*;
use super::{StdMember, a_str, func, string};
use crate::encode::{Data, Field};
use crate::eval::value::Bottom;

pub(super) static MEMBERS: &[StdMember] = &[
    func("encoding/toml.Marshal", &[T], |rt, a| {
        let d = rt.value_to_data(&a[0])?;
        string(marshal(&d)?)
    }),
    func("encoding/toml.Unmarshal", &[B], |rt, a| {
        let d = unmarshal(&a_str(a, 0)?).map_err(Bottom::eval)?;
        Ok(rt.data_to_value(&d))
    }),
];

/// TOML text of a value, as CUE's `toml.Marshal` gives it: the value is decoded into Go's
/// `any` (`cue.Value.Decode`) and encoded by `go-toml/v2`, whose rules are followed here.
pub(super) fn marshal(d: &Data) -> Result<String, Rc<Bottom>> {
    let v = go_value(d);
    if let GoVal::Nil = v {
        return Err(Bottom::eval("toml: cannot encode a nil interface"));
    }
    let mut out = String::new();
    encode(&mut out, Ctx::default(), &v).map_err(Bottom::eval)?;
    Ok(out)
}

/// A value as `cue.Value.Decode` into `any` makes it: ints within ±(2⁶³−1) are `int64` and
/// other ints `*big.Int`; floats within `float64`'s range are `float64`, others `*big.Float`
/// (both `encoding.TextMarshaler`s, which go-toml writes as strings).
enum GoVal {
    Nil,
    Bool(bool),
    Int(i64),
    Float(f64),
    /// A text marshaler: its Go type and text.
    Text(&'static str, String),
    Str(String),
    Bytes(Vec<u8>),
    List(Vec<GoVal>),
    /// A Go map: go-toml sorts its keys.
    Map(Vec<(String, GoVal)>),
}

fn go_value(d: &Data) -> GoVal {
    match d {
        Data::Null => GoVal::Nil,
        Data::Bool(b) => GoVal::Bool(*b),
        Data::Number { text, float: false } => match text.parse::<i64>() {
            Ok(i) if i != i64::MIN => GoVal::Int(i),
            _ => GoVal::Text("*big.Int", text.clone()),
        },
        Data::Number { text, float: true } => {
            let f: f64 = text.parse().unwrap_or(f64::NAN);
            let zero = text
                .split(['e', 'E'])
                .next()
                .is_some_and(|m| m.bytes().all(|c| matches!(c, b'0' | b'.' | b'-' | b'+')));
            if zero {
                GoVal::Float(0.0)
            } else if f.is_finite() && f != 0.0 {
                GoVal::Float(f)
            } else {
                GoVal::Text("*big.Float", big_float_text(text))
            }
        }
        Data::String(s) => GoVal::Str(s.clone()),
        Data::Bytes(b) => GoVal::Bytes(b.clone()),
        Data::List(items) => GoVal::List(items.iter().map(go_value).collect()),
        Data::Struct(fields) => GoVal::Map(
            fields
                .iter()
                .map(|f| (f.name.clone(), go_value(&f.value)))
                .collect(),
        ),
    }
}

/// `big.Float.Text('g', -1)` of a decimal outside `float64`'s range, parsed at 64 bits of
/// precision: the digits rounded to 19 significant ones, in exponent form (`1.5e+1000`).
fn big_float_text(text: &str) -> String {
    let (neg, rest) = match text.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let (mant, exp) = match rest.find(['e', 'E']) {
        Some(i) => (&rest[..i], rest[i + 1..].parse::<i64>().unwrap_or(0)),
        None => (rest, 0),
    };
    let (int_part, frac) = mant.split_once('.').unwrap_or((mant, ""));
    let all: String = format!("{int_part}{frac}");
    let lead = all.bytes().take_while(|&c| c == b'0').count();
    let mut digits: Vec<u8> = all.as_bytes()[lead..].iter().map(|c| c - b'0').collect();
    // The value is 0.d1d2... × 10^point.
    let mut point = int_part.len() as i64 - lead as i64 + exp;
    if digits.len() > 19 {
        let up = digits[19] >= 5;
        digits.truncate(19);
        if up {
            let mut i = 19;
            loop {
                if i == 0 {
                    digits.insert(0, 1);
                    digits.truncate(19);
                    point += 1;
                    break;
                }
                i -= 1;
                if digits[i] == 9 {
                    digits[i] = 0;
                } else {
                    digits[i] += 1;
                    break;
                }
            }
        }
    }
    while digits.len() > 1 && digits.last() == Some(&0) {
        digits.pop();
    }
    let mut out = String::new();
    if neg {
        out.push('-');
    }
    out.push(char::from(b'0' + digits[0]));
    if digits.len() > 1 {
        out.push('.');
        out.extend(digits[1..].iter().map(|&d| char::from(b'0' + d)));
    }
    let e = point - 1;
    out.push_str(&format!("e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs()));
    out
}

/// go-toml's encoder context: the keys of the enclosing tables, the key of the value being
/// written, and whether it is inside a `key = value` (where tables are inline).
#[derive(Clone, Default)]
struct Ctx {
    parent_key: Vec<String>,
    key: Option<String>,
    inside_kv: bool,
    skip_table_header: bool,
}

impl Ctx {
    fn shift_key(&mut self) {
        if let Some(k) = self.key.take() {
            self.parent_key.push(k);
        }
    }

    fn is_root(&self) -> bool {
        self.parent_key.is_empty() && self.key.is_none()
    }
}

fn encode(out: &mut String, ctx: Ctx, v: &GoVal) -> Result<(), String> {
    crate::stack::guard(|| {
        match v {
            GoVal::Text(ty, s) => {
                if ctx.is_root() {
                    return Err(format!(
                        "toml: type {ty} implementing the TextMarshaler interface cannot be a root element"
                    ));
                }
                out.push_str(&string_text(s));
            }
            GoVal::Map(m) => encode_map(out, ctx, m)?,
            GoVal::List(items) => {
                if items.is_empty() {
                    out.push_str("[]");
                } else if will_convert_to_table_or_array(&ctx, v) {
                    encode_array_table(out, ctx, items)?;
                } else {
                    out.push('[');
                    for (i, x) in items.iter().enumerate() {
                        if i > 0 {
                            out.push_str(", ");
                        }
                        encode(out, ctx.clone(), x)?;
                    }
                    out.push(']');
                }
            }
            GoVal::Bytes(b) => {
                let items: Vec<String> = b.iter().map(u8::to_string).collect();
                out.push('[');
                out.push_str(&items.join(", "));
                out.push(']');
            }
            GoVal::Nil => return Err("toml: encoding a nil interface is not supported".into()),
            GoVal::Str(s) => out.push_str(&string_text(s)),
            GoVal::Float(f) => out.push_str(&float_text(*f)),
            GoVal::Int(i) => out.push_str(&i.to_string()),
            GoVal::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        }
        Ok(())
    })
}

/// go-toml's `float64`: `1.0` for integral values, else the shortest digits, never an exponent.
fn float_text(f: f64) -> String {
    if f.trunc() == f {
        format!("{f:.1}")
    } else {
        format!("{f}")
    }
}

/// Whether a value is written as a `[table]` or `[[array table]]` rather than `key = value`.
fn will_convert_to_table_or_array(ctx: &Ctx, v: &GoVal) -> bool {
    if ctx.inside_kv {
        return false;
    }
    match v {
        GoVal::Map(_) => true,
        GoVal::List(items) => !items.is_empty() && items.iter().all(|x| matches!(x, GoVal::Map(_))),
        _ => false,
    }
}

fn encode_map(out: &mut String, ctx: Ctx, m: &[(String, GoVal)]) -> Result<(), String> {
    let mut kvs: Vec<&(String, GoVal)> = Vec::new();
    let mut tables: Vec<&(String, GoVal)> = Vec::new();
    for e in m {
        if matches!(e.1, GoVal::Nil) {
            continue;
        }
        if will_convert_to_table_or_array(&ctx, &e.1) {
            tables.push(e);
        } else {
            kvs.push(e);
        }
    }
    kvs.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    tables.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let mut ctx = ctx;
    ctx.shift_key();
    if ctx.inside_kv {
        out.push('{');
        for (i, (k, v)) in kvs.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            let mut c = ctx.clone();
            c.key = Some(k.clone());
            encode_kv(out, c, v)?;
        }
        out.push('}');
        return Ok(());
    }
    if !ctx.skip_table_header && !ctx.parent_key.is_empty() {
        out.push('[');
        out.push_str(&dotted(&ctx.parent_key));
        out.push_str("]\n");
    }
    ctx.skip_table_header = false;
    for (k, v) in &kvs {
        let mut c = ctx.clone();
        c.key = Some(k.clone());
        encode_kv(out, c, v)?;
        out.push('\n');
    }
    for (i, (k, v)) in tables.iter().enumerate() {
        if i > 0 || !kvs.is_empty() {
            out.push('\n');
        }
        let mut c = ctx.clone();
        c.key = Some(k.clone());
        encode(out, c, v)?;
    }
    Ok(())
}

fn encode_kv(out: &mut String, ctx: Ctx, v: &GoVal) -> Result<(), String> {
    out.push_str(&key(ctx.key.as_deref().unwrap_or_default()));
    out.push_str(" = ");
    let mut sub = ctx;
    sub.inside_kv = true;
    sub.shift_key();
    encode(out, sub, v)
}

fn encode_array_table(out: &mut String, ctx: Ctx, items: &[GoVal]) -> Result<(), String> {
    let mut ctx = ctx;
    ctx.shift_key();
    let head = format!("[[{}]]\n", dotted(&ctx.parent_key));
    ctx.skip_table_header = true;
    for (i, it) in items.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&head);
        encode(out, ctx.clone(), it)?;
    }
    Ok(())
}

fn dotted(path: &[String]) -> String {
    path.iter().map(|k| key(k)).collect::<Vec<_>>().join(".")
}

/// Characters that keep a string out of a literal `'...'` string.
fn needs_quoting(s: &str) -> bool {
    s.bytes()
        .any(|b| b == b'\'' || b == b'\r' || b == b'\n' || (b < 0x20 && b != b'\t') || b == 0x7f)
}

fn string_text(s: &str) -> String {
    if needs_quoting(s) {
        basic(s)
    } else {
        format!("'{s}'")
    }
}

/// A basic `"..."` string with go-toml's escapes.
fn basic(s: &str) -> String {
    let mut o = String::from("\"");
    for c in s.chars() {
        match c {
            '\\' => o.push_str("\\\\"),
            '"' => o.push_str("\\\""),
            '\u{8}' => o.push_str("\\b"),
            '\u{c}' => o.push_str("\\f"),
            '\n' => o.push_str("\\n"),
            '\r' => o.push_str("\\r"),
            '\t' => o.push_str("\\t"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                o.push_str(&format!("\\u00{:02X}", c as u32));
            }
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

/// A key: bare when it can be, else a literal or basic string.
fn key(k: &str) -> String {
    if k.is_empty() {
        return "''".into();
    }
    if k.bytes()
        .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_')
    {
        return k.to_string();
    }
    string_text(k)
}

/// Parses TOML text into data as CUE's `encoding/toml` decoder does: `go-toml/v2`'s lenient
/// parser reads the expressions (numbers and dates are runs of characters it does not check),
/// each becomes CUE fields (numbers as CUE literals, dates as strings checked by
/// `time.Format`), and the fields are unified.
pub(super) fn unmarshal(s: &str) -> Result<Data, String> {
    let mut d = TomlDecoder::default();
    d.nodes.push(TNode::Struct(Vec::new()));
    let mut p = TomlParser {
        src: s.as_bytes(),
        pos: 0,
    };
    let mut first = true;
    loop {
        if p.pos >= p.src.len() {
            break;
        }
        if !first {
            p.newline()?;
        }
        first = false;
        if p.pos >= p.src.len() {
            break;
        }
        if let Some(expr) = p.expression()? {
            d.root_expr(expr)?;
        }
    }
    d.data(0)
}

/// A parsed key, its parts decoded.
type TKey = Vec<String>;

/// A parsed value.
enum TVal {
    Str(String),
    Num(String),
    Bool(bool),
    /// A date or time and the layout CUE checks it against.
    Date(String, &'static str),
    Array(Vec<TVal>),
    Inline(Vec<(TKey, TVal)>),
}

/// A top-level expression.
enum TExpr {
    KeyValue(TKey, TVal),
    Table(TKey),
    ArrayTable(TKey),
}

struct TomlParser<'a> {
    src: &'a [u8],
    pos: usize,
}

/// Go's `%#U` of a byte: `U+0078 'x'`.
fn go_u(b: u8) -> String {
    if (0x20..0x7f).contains(&b) {
        format!("U+{:04X} '{}'", b, b as char)
    } else {
        format!("U+{b:04X}")
    }
}

/// Whether a byte is a control character TOML does not allow in strings and comments.
fn invalid_ascii(b: u8) -> bool {
    (b < 0x20 && b != b'\t' && b != b'\n' && b != b'\r') || b == 0x7f
}

impl TomlParser<'_> {
    fn peek(&self) -> Option<u8> {
        self.src.get(self.pos).copied()
    }

    fn follows(&self, pat: &str) -> bool {
        self.src[self.pos..].starts_with(pat.as_bytes())
    }

    fn ws(&mut self) {
        while let Some(b' ' | b'\t') = self.peek() {
            self.pos += 1;
        }
    }

    fn newline(&mut self) -> Result<(), String> {
        match self.peek() {
            Some(b'\n') => {
                self.pos += 1;
                Ok(())
            }
            Some(b'\r') => {
                if self.src.len() < self.pos + 2 {
                    return Err("windows new line expected".into());
                }
                if self.src[self.pos + 1] != b'\n' {
                    return Err(r"windows new line should be \r\n".into());
                }
                self.pos += 2;
                Ok(())
            }
            Some(b) => Err(format!("expected newline but got {}", go_u(b))),
            None => Ok(()),
        }
    }

    fn comment(&mut self) -> Result<(), String> {
        let mut i = self.pos + 1;
        while i < self.src.len() {
            match self.src[i] {
                b'\n' => break,
                b'\r' => {
                    if self.src.get(i + 1) == Some(&b'\n') {
                        break;
                    }
                    return Err("invalid character in comment".into());
                }
                b if invalid_ascii(b) => return Err("invalid character in comment".into()),
                _ => i += 1,
            }
        }
        self.pos = i;
        Ok(())
    }

    fn expect(&mut self, c: u8) -> Result<(), String> {
        match self.peek() {
            None => Err(format!(
                "expected character {} but the document ended here",
                c as char
            )),
            Some(b) if b != c => Err(format!("expected character {}", c as char)),
            Some(_) => {
                self.pos += 1;
                Ok(())
            }
        }
    }

    fn expression(&mut self) -> Result<Option<TExpr>, String> {
        self.ws();
        match self.peek() {
            None | Some(b'\n' | b'\r') => return Ok(None),
            Some(b'#') => {
                self.comment()?;
                return Ok(None);
            }
            _ => {}
        }
        let expr = if self.peek() == Some(b'[') {
            if self.src.get(self.pos + 1) == Some(&b'[') {
                self.pos += 2;
                self.ws();
                let k = self.key()?;
                self.ws();
                self.expect(b']')?;
                self.expect(b']')?;
                TExpr::ArrayTable(k)
            } else {
                self.pos += 1;
                self.ws();
                let k = self.key()?;
                self.ws();
                self.expect(b']')?;
                TExpr::Table(k)
            }
        } else {
            let (k, v) = self.keyval()?;
            TExpr::KeyValue(k, v)
        };
        self.ws();
        if self.peek() == Some(b'#') {
            self.comment()?;
        }
        Ok(Some(expr))
    }

    fn keyval(&mut self) -> Result<(TKey, TVal), String> {
        let k = self.key()?;
        self.ws();
        if self.peek().is_none() {
            return Err("expected = after a key, but the document ends there".into());
        }
        self.expect(b'=')?;
        self.ws();
        let v = self.value()?;
        Ok((k, v))
    }

    fn key(&mut self) -> Result<TKey, String> {
        let mut parts = vec![self.simple_key()?];
        loop {
            self.ws();
            if self.peek() == Some(b'.') {
                self.pos += 1;
                self.ws();
                parts.push(self.simple_key()?);
            } else {
                return Ok(parts);
            }
        }
    }

    fn simple_key(&mut self) -> Result<String, String> {
        match self.peek() {
            None => Err("expected key but found none".into()),
            Some(b'\'') => self.literal_string(),
            Some(b'"') => self.basic_string(),
            Some(b) if b.is_ascii_alphanumeric() || b == b'-' || b == b'_' => {
                let start = self.pos;
                while let Some(b) = self.peek() {
                    if !(b.is_ascii_alphanumeric() || b == b'-' || b == b'_') {
                        break;
                    }
                    self.pos += 1;
                }
                Ok(String::from_utf8_lossy(&self.src[start..self.pos]).into_owned())
            }
            Some(b) => Err(format!(
                "invalid character at start of key: {}",
                char_at(self.src, self.pos).unwrap_or(b as char)
            )),
        }
    }

    fn value(&mut self) -> Result<TVal, String> {
        let Some(c) = self.peek() else {
            return Err("expected value, not eof".into());
        };
        match c {
            b'"' => {
                if self.follows("\"\"\"") {
                    self.multiline_basic().map(TVal::Str)
                } else {
                    self.basic_string().map(TVal::Str)
                }
            }
            b'\'' => {
                if self.follows("'''") {
                    self.multiline_literal().map(TVal::Str)
                } else {
                    self.literal_string().map(TVal::Str)
                }
            }
            b't' => {
                if !self.follows("true") {
                    return Err("expected 'true'".into());
                }
                self.pos += 4;
                Ok(TVal::Bool(true))
            }
            b'f' => {
                if !self.follows("false") {
                    return Err("expected 'false'".into());
                }
                self.pos += 5;
                Ok(TVal::Bool(false))
            }
            b'[' => self.array(),
            b'{' => self.inline_table(),
            _ => self.number_or_date(),
        }
    }

    fn array(&mut self) -> Result<TVal, String> {
        self.pos += 1;
        let mut items = Vec::new();
        let mut first = true;
        while self.pos < self.src.len() {
            self.ws_comment_newline()?;
            let Some(b) = self.peek() else {
                return Err("array is incomplete".into());
            };
            if b == b']' {
                break;
            }
            if b == b',' {
                if first {
                    return Err("array cannot start with comma".into());
                }
                self.pos += 1;
                self.ws_comment_newline()?;
            } else if !first {
                return Err("array elements must be separated by commas".into());
            }
            if self.peek() == Some(b']') {
                break;
            }
            items.push(self.value()?);
            self.ws_comment_newline()?;
            first = false;
        }
        self.expect(b']')?;
        Ok(TVal::Array(items))
    }

    fn ws_comment_newline(&mut self) -> Result<(), String> {
        while self.pos < self.src.len() {
            self.ws();
            if self.peek() == Some(b'#') {
                self.comment()?;
            }
            match self.peek() {
                Some(b'\n' | b'\r') => self.newline()?,
                _ => break,
            }
        }
        Ok(())
    }

    fn inline_table(&mut self) -> Result<TVal, String> {
        self.pos += 1;
        let mut fields = Vec::new();
        let mut first = true;
        while self.pos < self.src.len() {
            self.ws();
            let Some(b) = self.peek() else {
                return Err("inline table is incomplete".into());
            };
            if b == b'}' {
                break;
            }
            if !first {
                self.expect(b',')?;
                self.ws();
            }
            fields.push(self.keyval()?);
            first = false;
        }
        self.expect(b'}')?;
        Ok(TVal::Inline(fields))
    }

    fn literal_string(&mut self) -> Result<String, String> {
        let start = self.pos + 1;
        let mut i = start;
        while i < self.src.len() {
            match self.src[i] {
                b'\'' => {
                    self.pos = i + 1;
                    return Ok(String::from_utf8_lossy(&self.src[start..i]).into_owned());
                }
                b'\n' | b'\r' => return Err("literal strings cannot have new lines".into()),
                b if invalid_ascii(b) => return Err("invalid character".into()),
                _ => i += 1,
            }
        }
        Err("unterminated literal string".into())
    }

    /// The end of a multi-line string's closing delimiter at `i` (up to two more quotes
    /// belong to the string), or an error for a third.
    fn closing(&self, mut i: usize, q: u8) -> Result<usize, String> {
        i += 3;
        let mut extra = 0;
        while extra < 2 && self.src.get(i) == Some(&q) {
            i += 1;
            extra += 1;
        }
        if extra == 2 && self.src.get(i) == Some(&q) {
            return Err(if q == b'"' {
                "\"\"\" not allowed in multiline basic string".into()
            } else {
                "''' not allowed in multiline literal string".into()
            });
        }
        Ok(i)
    }

    /// Where a multi-line string's body starts: after a newline that follows the delimiter.
    fn body_start(&self) -> usize {
        let b = self.src;
        let body = self.pos + 3;
        match b.get(body) {
            Some(b'\n') => body + 1,
            Some(b'\r') if b.get(body + 1) == Some(&b'\n') => body + 2,
            _ => body,
        }
    }

    fn multiline_literal(&mut self) -> Result<String, String> {
        let b = self.src;
        let mut i = self.pos + 3;
        let end = loop {
            match b.get(i) {
                None => return Err("multiline literal string not terminated by '''".into()),
                Some(b'\'') if b[i..].starts_with(b"'''") => break self.closing(i, b'\'')?,
                Some(b'\r') => {
                    if b.get(i + 1) != Some(&b'\n') {
                        return Err(r"need a \n after \r".into());
                    }
                    i += 2;
                }
                Some(&c) if c != b'\n' && invalid_ascii(c) => {
                    return Err("invalid character".into());
                }
                Some(_) => i += 1,
            }
        };
        let body = self.body_start();
        self.pos = end;
        Ok(String::from_utf8_lossy(&b[body..end - 3]).into_owned())
    }

    /// A basic string: the raw token is found first, then its escapes are decoded.
    fn basic_string(&mut self) -> Result<String, String> {
        let b = self.src;
        let mut i = self.pos + 1;
        loop {
            match b.get(i) {
                None => return Err("basic string not terminated by \"".into()),
                Some(b'"') => break,
                Some(b'\n' | b'\r') => return Err("basic strings cannot have new lines".into()),
                Some(b'\\') => {
                    if b.len() < i + 2 {
                        return Err("need a character after \\".into());
                    }
                    i += 2;
                }
                Some(_) => i += 1,
            }
        }
        let body = &b[self.pos + 1..i];
        self.pos = i + 1;
        unescape(body, false)
    }

    fn multiline_basic(&mut self) -> Result<String, String> {
        let b = self.src;
        let mut i = self.pos + 3;
        let end = loop {
            match b.get(i) {
                None => return Err("multiline basic string not terminated by \"\"\"".into()),
                Some(b'"') if b[i..].starts_with(b"\"\"\"") => break self.closing(i, b'"')?,
                Some(b'\\') => {
                    if b.len() < i + 2 {
                        return Err("need a character after \\".into());
                    }
                    i += 2;
                }
                Some(b'\r') => {
                    if b.get(i + 1) != Some(&b'\n') {
                        return Err(r"need a \n after \r".into());
                    }
                    i += 2;
                }
                Some(_) => i += 1,
            }
        };
        let body = self.body_start();
        self.pos = end;
        unescape(&b[body..end - 3], true)
    }

    fn number_or_date(&mut self) -> Result<TVal, String> {
        let b = &self.src[self.pos..];
        match b[0] {
            b'i' | b'n' => {
                let w = if b[0] == b'i' { "inf" } else { "nan" };
                if !b.starts_with(w.as_bytes()) {
                    return Err(format!("expected '{w}'"));
                }
                self.pos += 3;
                return Ok(TVal::Num(w.into()));
            }
            b'+' | b'-' => return self.int_or_float(),
            _ => {}
        }
        if b.len() >= 3 {
            for (idx, &c) in b.iter().take(5).enumerate() {
                if c.is_ascii_digit() {
                    continue;
                }
                if (idx == 2 && c == b':') || (idx == 4 && c == b'-') {
                    return Ok(self.date_time());
                }
                break;
            }
        }
        self.int_or_float()
    }

    fn date_time(&mut self) -> TVal {
        let b = &self.src[self.pos..];
        let (mut has_date, mut has_time, mut has_tz, mut seen_space) = (false, false, false, false);
        let mut i = 0;
        while i < b.len() {
            match b[i] {
                b'0'..=b'9' => {}
                b'-' => {
                    has_date = true;
                    if i >= 8 {
                        has_tz = true;
                    }
                }
                b'T' | b't' | b':' | b'.' => has_time = true,
                b'+' | b'Z' | b'z' => has_tz = true,
                b' ' if !seen_space && b.get(i + 1).is_some_and(u8::is_ascii_digit) => {
                    i += 2;
                    if i >= b.len() {
                        i -= 1;
                    }
                    seen_space = true;
                    has_time = true;
                    continue;
                }
                _ => break,
            }
            i += 1;
        }
        let text = String::from_utf8_lossy(&b[..i]).into_owned();
        self.pos += i;
        let layout = match (has_time, has_date, has_tz) {
            (true, true, true) => "2006-01-02T15:04:05Z07:00",
            (true, true, false) => "2006-01-02T15:04:05",
            (true, false, _) => "15:04:05",
            (false, _, _) => "2006-01-02",
        };
        TVal::Date(text, layout)
    }

    fn int_or_float(&mut self) -> Result<TVal, String> {
        let b = &self.src[self.pos..];
        if b.len() > 2 && b[0] == b'0' && !matches!(b[1], b'.' | b'e' | b'E') {
            let valid: Option<fn(u8) -> bool> = match b[1] {
                b'x' => Some(|c: u8| c.is_ascii_hexdigit() || c == b'_'),
                b'o' => Some(|c: u8| (b'0'..=b'7').contains(&c) || c == b'_'),
                b'b' => Some(|c: u8| c == b'0' || c == b'1' || c == b'_'),
                _ => None,
            };
            let mut i = 1;
            if let Some(valid) = valid {
                i = 2;
                while i < b.len() && valid(b[i]) {
                    i += 1;
                }
            }
            let text = String::from_utf8_lossy(&b[..i]).into_owned();
            self.pos += i;
            return Ok(TVal::Num(text));
        }
        let mut i = 0;
        while i < b.len() {
            let c = b[i];
            if c.is_ascii_digit() || matches!(c, b'+' | b'-' | b'_' | b'.' | b'e' | b'E') {
                i += 1;
                continue;
            }
            if c == b'i' || c == b'n' {
                let w: &[u8] = if c == b'i' { b"inf" } else { b"nan" };
                if b[i..].starts_with(w) {
                    let text = String::from_utf8_lossy(&b[..i + 3]).into_owned();
                    self.pos += i + 3;
                    return Ok(TVal::Num(text));
                }
                return Err(format!(
                    "unexpected character '{}' while scanning for a number",
                    c as char
                ));
            }
            break;
        }
        if i == 0 {
            return Err("incomplete number".into());
        }
        let text = String::from_utf8_lossy(&b[..i]).into_owned();
        self.pos += i;
        Ok(TVal::Num(text))
    }
}

/// The character starting at a byte offset.
fn char_at(src: &[u8], pos: usize) -> Option<char> {
    (1..=4)
        .rev()
        .find_map(|n| std::str::from_utf8(src.get(pos..pos + n)?).ok())
        .and_then(|s| s.chars().next())
}

/// The escapes of a basic string's body; in a multi-line one, a `\` ending a line also
/// removes the white space that follows.
fn unescape(body: &[u8], multiline: bool) -> Result<String, String> {
    let mut out: Vec<u8> = Vec::with_capacity(body.len());
    let mut i = 0;
    while i < body.len() {
        let c = body[i];
        if c != b'\\' {
            if invalid_ascii(c) {
                return Err(format!("invalid character {}", go_u(c)));
            }
            out.push(c);
            i += 1;
            continue;
        }
        if multiline {
            // A line-ending backslash.
            let mut j = i + 1;
            while j < body.len() && matches!(body[j], b' ' | b'\t') {
                j += 1;
            }
            let eol = match body.get(j) {
                Some(b'\n') => true,
                Some(b'\r') => body.get(j + 1) == Some(&b'\n'),
                _ => false,
            };
            if eol {
                i = j;
                while i < body.len() && matches!(body[i], b'\n' | b'\r' | b' ' | b'\t') {
                    i += 1;
                }
                continue;
            }
        }
        i += 1;
        let e = body[i];
        match e {
            b'"' | b'\\' => out.push(e),
            b'b' => out.push(8),
            b'f' => out.push(12),
            b'n' => out.push(b'\n'),
            b'r' => out.push(b'\r'),
            b't' => out.push(b'\t'),
            b'e' => out.push(0x1b),
            b'u' | b'U' => {
                let n = if e == b'u' { 4 } else { 8 };
                let hex = &body[i + 1..body.len().min(i + 1 + n)];
                if hex.len() < n {
                    return Err(format!(
                        "unicode point needs {n} character, not {}",
                        hex.len()
                    ));
                }
                let mut r: u32 = 0;
                for &h in hex {
                    let Some(d) = char::from(h).to_digit(16) else {
                        return Err("non-hex character".into());
                    };
                    r = r.wrapping_mul(16).wrapping_add(d);
                }
                let Some(ch) = char::from_u32(r) else {
                    return Err("escape sequence is invalid Unicode code point".into());
                };
                let mut buf = [0u8; 4];
                out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                i += n;
            }
            _ => {
                let shown = match char_at(body, i) {
                    Some(ch) if u32::from(ch) > 0x7f => format!("U+{:04X} '{ch}'", u32::from(ch)),
                    _ => go_u(e),
                };
                return Err(format!("invalid escaped character {shown}"));
            }
        }
        i += 1;
    }
    String::from_utf8(out).map_err(|_| "invalid UTF-8".to_string())
}

/// The CUE fields being built, as CUE's decoder builds its syntax tree: a struct may hold a
/// label more than once (the values are unified at the end).
enum TNode {
    Struct(Vec<(String, usize)>),
    List(Vec<usize>),
    Value(Data),
}

/// An array of tables that later headers may extend.
struct OpenArray {
    rkey: String,
    level: usize,
    list: usize,
    last_table: usize,
}

#[derive(Default)]
struct TomlDecoder {
    nodes: Vec<TNode>,
    seen: std::collections::HashSet<String>,
    open_arrays: Vec<OpenArray>,
    current_key: String,
    current_table: Option<usize>,
}

/// A key part as CUE writes it in a path: quoted unless it is an identifier.
fn quote_label(name: &str) -> String {
    let ident = name
        .chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_' || c == '$')
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '$')
        && !name.starts_with("__");
    if ident {
        name.to_string()
    } else {
        let mut out = String::new();
        crate::decode::write_cue_string(&mut out, name);
        out
    }
}

fn rooted(mut rkey: String, key: &[String]) -> String {
    for k in key {
        if !rkey.is_empty() {
            rkey.push('.');
        }
        rkey.push_str(&quote_label(k));
    }
    rkey
}

impl TomlDecoder {
    fn push(&mut self, n: TNode) -> usize {
        self.nodes.push(n);
        self.nodes.len() - 1
    }

    /// `keys[0]: {keys[1]: {... leaf}}`: the label and value of the outer field.
    fn nest(&mut self, keys: &[String], leaf: usize) -> (String, usize) {
        let mut v = leaf;
        for k in keys[1..].iter().rev() {
            v = self.push(TNode::Struct(vec![(k.clone(), v)]));
        }
        (keys[0].clone(), v)
    }

    fn add_to(&mut self, table: usize, field: (String, usize)) {
        if let TNode::Struct(fields) = &mut self.nodes[table] {
            fields.push(field);
        }
    }

    fn find_array(&self, rkey: &str) -> Option<usize> {
        self.open_arrays.iter().position(|a| a.rkey == rkey)
    }

    /// The open array a header `rkey` belongs to: the same key (whose nested arrays and
    /// keys are forgotten, as a new element starts) or the deepest prefix.
    fn find_array_prefix(&mut self, rkey: &str) -> Option<usize> {
        let prefix = format!("{rkey}.");
        if self.find_array(rkey).is_some() {
            self.open_arrays.retain(|a| !a.rkey.starts_with(&prefix));
            self.seen.retain(|k| !k.starts_with(&prefix));
            return self.find_array(rkey);
        }
        let mut best: Option<usize> = None;
        for (i, a) in self.open_arrays.iter().enumerate() {
            if rkey.starts_with(&format!("{}.", a.rkey))
                && best.is_none_or(|b| a.level > self.open_arrays[b].level)
            {
                best = Some(i);
            }
        }
        best
    }

    fn root_expr(&mut self, expr: TExpr) -> Result<(), String> {
        match expr {
            TExpr::KeyValue(k, v) => {
                let f = self.field(self.current_key.clone(), &k, v)?;
                let table = self.current_table.unwrap_or(0);
                self.add_to(table, f);
            }
            TExpr::Table(k) => {
                let key = rooted(String::new(), &k);
                if !self.seen.insert(key.clone()) {
                    return Err(format!("duplicate key: {key}"));
                }
                let table = self.push(TNode::Struct(Vec::new()));
                self.current_table = Some(table);
                match self.find_array_prefix(&key) {
                    Some(a) => {
                        if self.open_arrays[a].rkey == key {
                            return Err(format!("cannot redeclare table array {key:?} as a table"));
                        }
                        let level = self.open_arrays[a].level;
                        let last = self.open_arrays[a].last_table;
                        let f = self.nest(&k[level..], table);
                        self.add_to(last, f);
                    }
                    None => {
                        let f = self.nest(&k, table);
                        self.add_to(0, f);
                    }
                }
                self.current_key = key;
            }
            TExpr::ArrayTable(k) => {
                let key = rooted(String::new(), &k);
                if self.seen.contains(&key) {
                    return Err(format!("cannot redeclare key {key:?} as a table array"));
                }
                let table = self.push(TNode::Struct(Vec::new()));
                self.current_table = Some(table);
                let array = self.find_array_prefix(&key);
                if let Some(a) = array
                    && self.open_arrays[a].level == k.len()
                {
                    let list = self.open_arrays[a].list;
                    let n = match &mut self.nodes[list] {
                        TNode::List(items) => {
                            items.push(table);
                            items.len() - 1
                        }
                        _ => 0,
                    };
                    self.current_key = format!("{key}.{n}");
                    self.open_arrays[a].last_table = table;
                } else {
                    let list = self.push(TNode::List(vec![table]));
                    match array {
                        None => {
                            let f = self.nest(&k, list);
                            self.add_to(0, f);
                        }
                        Some(a) => {
                            let level = self.open_arrays[a].level;
                            let last = self.open_arrays[a].last_table;
                            let f = self.nest(&k[level..], list);
                            self.add_to(last, f);
                        }
                    }
                    self.current_key = format!("{key}.0");
                    self.open_arrays.push(OpenArray {
                        rkey: key,
                        level: k.len(),
                        list,
                        last_table: table,
                    });
                }
            }
        }
        Ok(())
    }

    /// A `key = value` under the rooted key `rkey`.
    fn field(&mut self, rkey: String, k: &[String], v: TVal) -> Result<(String, usize), String> {
        let rkey = rooted(rkey, k);
        if self.find_array(&rkey).is_some() {
            return Err(format!("cannot redeclare table array {rkey:?} as a table"));
        }
        if !self.seen.insert(rkey.clone()) {
            return Err(format!("duplicate key: {rkey}"));
        }
        let value = self.expr(&rkey, v)?;
        Ok(self.nest(k, value))
    }

    fn expr(&mut self, rkey: &str, v: TVal) -> Result<usize, String> {
        let d = match v {
            TVal::Str(s) => Data::String(s),
            TVal::Bool(b) => Data::Bool(b),
            TVal::Num(t) => number_literal(&t)?,
            TVal::Date(t, layout) => {
                if super::time::parse(layout, &t).is_err() {
                    return Err(format!(
                        "invalid value {t:?} (does not satisfy time.Format({layout:?})): invalid time {t:?}"
                    ));
                }
                Data::String(t)
            }
            TVal::Array(items) => {
                let mut ids = Vec::with_capacity(items.len());
                for (i, it) in items.into_iter().enumerate() {
                    ids.push(self.expr(&format!("{rkey}.{i}"), it)?);
                }
                return Ok(self.push(TNode::List(ids)));
            }
            TVal::Inline(kvs) => {
                let mut fields = Vec::with_capacity(kvs.len());
                for (k, v) in kvs {
                    fields.push(self.field(rkey.to_string(), &k, v)?);
                }
                return Ok(self.push(TNode::Struct(fields)));
            }
        };
        Ok(self.push(TNode::Value(d)))
    }

    /// The data of a node, repeated labels unified.
    fn data(&self, id: usize) -> Result<Data, String> {
        crate::stack::guard(|| match &self.nodes[id] {
            TNode::Value(d) => Ok(d.clone()),
            TNode::List(items) => Ok(Data::List(
                items
                    .iter()
                    .map(|&i| self.data(i))
                    .collect::<Result<_, _>>()?,
            )),
            TNode::Struct(fields) => {
                let mut out = Data::Struct(Vec::new());
                for (k, v) in fields {
                    let one = Data::Struct(vec![Field::new(k.clone(), self.data(*v)?)]);
                    crate::decode::unify_data(&mut out, one)?;
                }
                Ok(out)
            }
        })
    }
}

/// A number as CUE compiles the literal go-toml scanned: `1e3` stays `1E+3`, `1.50` keeps
/// its digits, `0x1F` is 31; what is no CUE literal is an error.
fn number_literal(t: &str) -> Result<Data, String> {
    let (n, float) =
        crate::decode::cue_literal(t, false).map_err(|e| format!("parse error: {e}"))?;
    if !float && n.is_zero() && n.is_sign_negative() {
        // CUE keeps the sign of the literal `-0`, and its JSON encoder refuses the result.
        return Err("invalid character 'N' in numeric literal".into());
    }
    let text = n.to_g_string();
    Ok(if float {
        Data::float(text)
    } else {
        Data::int(text)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(name: &str, value: Data) -> Field {
        Field {
            name: name.into(),
            value,
            yaml_tag: None,
        }
    }

    #[test]
    fn marshal_layout() {
        let d = Data::Struct(vec![
            s("z", Data::Struct(vec![s("k", Data::string("v"))])),
            s(
                "a",
                Data::List(vec![
                    Data::int("1"),
                    Data::Number {
                        text: "2.0".into(),
                        float: true,
                    },
                ]),
            ),
            s("q", Data::string("it's")),
            s("e", Data::Struct(vec![])),
        ]);
        assert_eq!(
            marshal(&d).unwrap(),
            "a = [1, 2.0]\nq = \"it's\"\n\n[e]\n\n[z]\nk = 'v'\n"
        );
    }

    /// The messages are those of `cue export` of v0.17.1 (`error in call to
    /// encoding/toml.Unmarshal: ...`, or the evaluation error of a decoded field).
    #[test]
    fn unmarshal_errors_like_cue() {
        let err = |s: &str| unmarshal(s).unwrap_err();
        assert_eq!(err("a = inf"), "parse error: illegal number start \"inf\"");
        assert_eq!(
            err("a = -inf"),
            "parse error: illegal number start \"-inf\""
        );
        assert_eq!(err("a = nan"), "parse error: illegal number start \"nan\"");
        assert_eq!(err("a = -0"), "invalid character 'N' in numeric literal");
        assert_eq!(err("a = 00"), "parse error: illegal integer number \"00\"");
        assert_eq!(err("a = 01"), "parse error: illegal integer number \"01\"");
        assert_eq!(err("a = 0x"), "expected newline but got U+0078 'x'");
        assert_eq!(err("a = 1e"), "parse error: illegal exponent \"1e\"");
        assert_eq!(err("a = 0.1e"), "parse error: illegal exponent \"0.1e\"");
        assert_eq!(err("a = 1__0"), "parse error: illegal '_' in number");
        assert_eq!(err("a = 1_"), "parse error: illegal '_' in number");
        assert_eq!(err("a = {b = 1,}"), "invalid character at start of key: }");
        assert_eq!(
            err("a = {\nb = 1}"),
            "invalid character at start of key: \n"
        );
        assert_eq!(err("a = \"\\x41\""), "invalid escaped character U+0078 'x'");
        assert_eq!(
            err("a = 1979-05-27 07:32:00Z"),
            "invalid value \"1979-05-27 07:32:00Z\" (does not satisfy time.Format(\"2006-01-02T15:04:05Z07:00\")): invalid time \"1979-05-27 07:32:00Z\""
        );
        assert_eq!(
            err("a = 1979-02-30"),
            "invalid value \"1979-02-30\" (does not satisfy time.Format(\"2006-01-02\")): invalid time \"1979-02-30\""
        );
        assert_eq!(
            err("a = 07:32"),
            "invalid value \"07:32\" (does not satisfy time.Format(\"15:04:05\")): invalid time \"07:32\""
        );
        assert_eq!(err("[a]\n[a]"), "duplicate key: a");
        assert_eq!(
            err("[[a]]\n[a]"),
            "cannot redeclare table array \"a\" as a table"
        );
        assert_eq!(
            err("a = 1\n[[a]]"),
            "cannot redeclare key \"a\" as a table array"
        );
        assert_eq!(err("a = 1\na = {}"), "duplicate key: a");
        assert_eq!(
            err("a.b = 1\na = 2"),
            "conflicting values {b:1} and 2 (mismatched types struct and int)"
        );
    }

    /// `cue export` of v0.17.1 (`error in call to encoding/toml.Marshal: ...`).
    #[test]
    fn marshal_errors_like_go_toml() {
        let err = |d: Data| marshal(&d).unwrap_err().msg.clone();
        assert_eq!(err(Data::Null), "toml: cannot encode a nil interface");
        assert_eq!(
            err(Data::List(vec![Data::Null])),
            "toml: encoding a nil interface is not supported"
        );
        assert_eq!(
            err(Data::int("9223372036854775808")),
            "toml: type *big.Int implementing the TextMarshaler interface cannot be a root element"
        );
        assert_eq!(
            err(Data::float("1E+1000")),
            "toml: type *big.Float implementing the TextMarshaler interface cannot be a root element"
        );
    }

    #[test]
    fn unmarshal_errors() {
        assert_eq!(
            unmarshal("foo = 1\nfoo = 2\n").unwrap_err(),
            "duplicate key: foo"
        );
        assert_eq!(
            unmarshal("= \"no key name\"").unwrap_err(),
            "invalid character at start of key: ="
        );
    }
}
