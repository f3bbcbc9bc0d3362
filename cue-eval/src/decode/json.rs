//! A JSON parser (RFC 8259, as Go's `encoding/json` accepts it) producing [`Data`], with an
//! explicit stack instead of recursion so that nesting depth costs no native stack.

use std::collections::HashMap;

use super::{Data, DecodeError, Field, Limits};

/// A list or object being built.
enum Frame {
    List(Vec<Data>),
    Object {
        fields: Vec<Field>,
        index: Option<HashMap<String, usize>>,
        key: Option<(String, usize)>,
    },
}

struct Parser<'a> {
    src: &'a [u8],
    /// Whether the value is decoded (CUE's decoder: half a surrogate pair and conflicting
    /// duplicate keys are errors) or only the syntax checked (Go's `json.Valid`).
    strict_surrogates: bool,
    pos: usize,
    nodes: usize,
    limits: &'a Limits,
}

pub(super) fn parse(
    text: &str,
    limits: &Limits,
    strict_surrogates: bool,
) -> Result<Data, DecodeError> {
    let mut p = Parser {
        src: text.as_bytes(),
        strict_surrogates,
        pos: 0,
        nodes: 0,
        limits,
    };
    let v = p.value()?;
    p.ws();
    if p.pos < p.src.len() {
        return Err(p.err(format!(
            "invalid character {} after top-level value",
            p.describe()
        )));
    }
    Ok(v)
}

impl Parser<'_> {
    fn err(&self, msg: impl Into<String>) -> DecodeError {
        self.err_at(self.pos, msg)
    }

    fn err_at(&self, pos: usize, msg: impl Into<String>) -> DecodeError {
        let pos = pos.min(self.src.len());
        let before = &self.src[..pos];
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        let col = pos
            - before
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |p| p + 1)
            + 1;
        DecodeError::at(line, col, msg)
    }

    fn describe(&self) -> String {
        match self.src.get(self.pos) {
            None => "end of input".to_string(),
            Some(&b) if b.is_ascii_graphic() => format!("'{}'", b as char),
            Some(&b) => format!("0x{b:02x}"),
        }
    }

    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.src.get(self.pos) {
            self.pos += 1;
        }
    }

    fn count(&mut self) -> Result<(), DecodeError> {
        self.nodes += 1;
        if self.nodes > self.limits.max_nodes {
            return Err(self.err(format!(
                "JSON value has more than {} elements",
                self.limits.max_nodes
            )));
        }
        Ok(())
    }

    /// Parses one value, iteratively.
    fn value(&mut self) -> Result<Data, DecodeError> {
        let mut stack: Vec<Frame> = Vec::new();
        loop {
            // Parse a value start.
            self.ws();
            self.count()?;
            let mut done: Data = match self.src.get(self.pos) {
                Some(b'{') => {
                    self.pos += 1;
                    self.ws();
                    if self.src.get(self.pos) == Some(&b'}') {
                        self.pos += 1;
                        Data::Struct(Vec::new())
                    } else {
                        if stack.len() >= self.limits.max_depth {
                            return Err(self.err(format!(
                                "JSON nesting exceeds {} levels",
                                self.limits.max_depth
                            )));
                        }
                        let key = self.key()?;
                        stack.push(Frame::Object {
                            fields: Vec::new(),
                            index: None,
                            key: Some(key),
                        });
                        continue;
                    }
                }
                Some(b'[') => {
                    self.pos += 1;
                    self.ws();
                    if self.src.get(self.pos) == Some(&b']') {
                        self.pos += 1;
                        Data::List(Vec::new())
                    } else {
                        if stack.len() >= self.limits.max_depth {
                            return Err(self.err(format!(
                                "JSON nesting exceeds {} levels",
                                self.limits.max_depth
                            )));
                        }
                        stack.push(Frame::List(Vec::new()));
                        continue;
                    }
                }
                Some(b'"') => Data::String(self.string()?),
                Some(b'-' | b'0'..=b'9') => self.number()?,
                Some(b't') => self.word("true", Data::Bool(true))?,
                Some(b'f') => self.word("false", Data::Bool(false))?,
                Some(b'n') => self.word("null", Data::Null)?,
                _ => {
                    return Err(self.err(format!(
                        "invalid character {} looking for beginning of value",
                        self.describe()
                    )));
                }
            };
            // Attach the finished value to its parent, closing parents as they end.
            loop {
                let Some(top) = stack.last_mut() else {
                    return Ok(done);
                };
                self.ws();
                match top {
                    Frame::List(items) => {
                        items.push(done);
                        match self.src.get(self.pos) {
                            Some(b',') => {
                                self.pos += 1;
                                break;
                            }
                            Some(b']') => {
                                self.pos += 1;
                                let Some(Frame::List(items)) = stack.pop() else {
                                    unreachable!()
                                };
                                done = Data::List(items);
                            }
                            _ => {
                                return Err(self.err(format!(
                                    "invalid character {} after array element",
                                    self.describe()
                                )));
                            }
                        }
                    }
                    Frame::Object { fields, index, key } => {
                        let (k, kpos) = key.take().unwrap_or_default();
                        let added = add_field(fields, index, k, done);
                        // A syntax check ignores what the values are.
                        if self.strict_surrogates {
                            added.map_err(|m| self.err_at(kpos, m))?;
                        }
                        match self.src.get(self.pos) {
                            Some(b',') => {
                                self.pos += 1;
                                let nk = self.key()?;
                                if let Some(Frame::Object { key, .. }) = stack.last_mut() {
                                    *key = Some(nk);
                                }
                                break;
                            }
                            Some(b'}') => {
                                self.pos += 1;
                                let Some(Frame::Object { fields, .. }) = stack.pop() else {
                                    unreachable!()
                                };
                                done = Data::Struct(fields);
                            }
                            _ => {
                                return Err(self.err(format!(
                                    "invalid character {} after object key:value pair",
                                    self.describe()
                                )));
                            }
                        }
                    }
                }
            }
        }
    }

    /// `"key" :`, returning the key and its offset.
    fn key(&mut self) -> Result<(String, usize), DecodeError> {
        self.ws();
        let at = self.pos;
        if self.src.get(self.pos) != Some(&b'"') {
            return Err(self.err(format!(
                "invalid character {} looking for beginning of object key string",
                self.describe()
            )));
        }
        let k = self.string()?;
        self.ws();
        if self.src.get(self.pos) != Some(&b':') {
            return Err(self.err(format!(
                "invalid character {} after object key",
                self.describe()
            )));
        }
        self.pos += 1;
        Ok((k, at))
    }

    fn word(&mut self, w: &str, d: Data) -> Result<Data, DecodeError> {
        if self.src[self.pos..].starts_with(w.as_bytes()) {
            self.pos += w.len();
            Ok(d)
        } else {
            Err(self.err(format!("invalid literal, expected {w}")))
        }
    }

    fn number(&mut self) -> Result<Data, DecodeError> {
        let start = self.pos;
        let s = self.src;
        let mut i = self.pos;
        if s.get(i) == Some(&b'-') {
            i += 1;
        }
        match s.get(i) {
            Some(b'0') => i += 1,
            Some(b'1'..=b'9') => {
                while let Some(b'0'..=b'9') = s.get(i) {
                    i += 1;
                }
            }
            _ => return Err(self.err_at(i, "invalid number: expected a digit")),
        }
        if s.get(i) == Some(&b'.') {
            i += 1;
            if !matches!(s.get(i), Some(b'0'..=b'9')) {
                return Err(self.err_at(i, "invalid number: expected a digit after '.'"));
            }
            while let Some(b'0'..=b'9') = s.get(i) {
                i += 1;
            }
        }
        if let Some(b'e' | b'E') = s.get(i) {
            i += 1;
            if let Some(b'+' | b'-') = s.get(i) {
                i += 1;
            }
            if !matches!(s.get(i), Some(b'0'..=b'9')) {
                return Err(self.err_at(i, "invalid number: expected a digit in the exponent"));
            }
            while let Some(b'0'..=b'9') = s.get(i) {
                i += 1;
            }
        }
        self.pos = i;
        // The slice is ASCII by construction.
        let text = std::str::from_utf8(&s[start..i]).unwrap_or("0");
        super::number(text).ok_or_else(|| self.err_at(start, format!("invalid number {text}")))
    }

    fn string(&mut self) -> Result<String, DecodeError> {
        let start = self.pos;
        self.pos += 1;
        let s = self.src;
        let mut out: Vec<u8> = Vec::new();
        loop {
            let run = self.pos;
            while let Some(&b) = s.get(self.pos) {
                if b == b'"' || b == b'\\' || b < 0x20 {
                    break;
                }
                self.pos += 1;
            }
            out.extend_from_slice(&s[run..self.pos]);
            match s.get(self.pos) {
                None => return Err(self.err_at(start, "unterminated string")),
                Some(b'"') => {
                    self.pos += 1;
                    // The input is a &str and escapes push whole chars.
                    return String::from_utf8(out)
                        .map_err(|_| self.err_at(start, "invalid UTF-8 in string"));
                }
                Some(b'\\') => {
                    self.pos += 1;
                    let c = match s.get(self.pos) {
                        Some(b'"') => '"',
                        Some(b'\\') => '\\',
                        Some(b'/') => '/',
                        Some(b'b') => '\u{8}',
                        Some(b'f') => '\u{c}',
                        Some(b'n') => '\n',
                        Some(b'r') => '\r',
                        Some(b't') => '\t',
                        Some(b'u') => {
                            let hi = self.hex4(self.pos + 1)?;
                            self.pos += 4;
                            let lo = if (0xD800..0xDC00).contains(&hi)
                                && s.get(self.pos + 1) == Some(&b'\\')
                                && s.get(self.pos + 2) == Some(&b'u')
                            {
                                Some(self.hex4(self.pos + 3)?)
                            } else {
                                None
                            };
                            match lo {
                                Some(lo) if (0xDC00..0xE000).contains(&lo) => {
                                    self.pos += 6;
                                    let c = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
                                    char::from_u32(c).unwrap_or('\u{FFFD}')
                                }
                                _ => match char::from_u32(hi) {
                                    Some(c) => c,
                                    // CUE: "invalid string: unmatched surrogate pair".
                                    None if self.strict_surrogates => {
                                        return Err(self.err_at(
                                            start,
                                            "invalid string: unmatched surrogate pair",
                                        ));
                                    }
                                    None => '\u{FFFD}',
                                },
                            }
                        }
                        _ => {
                            return Err(self.err(format!(
                                "invalid character {} in string escape code",
                                self.describe()
                            )));
                        }
                    };
                    self.pos += 1;
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                }
                Some(_) => {
                    return Err(self.err(format!(
                        "invalid character {} in string literal",
                        self.describe()
                    )));
                }
            }
        }
    }

    fn hex4(&self, at: usize) -> Result<u32, DecodeError> {
        let digits = self
            .src
            .get(at..at + 4)
            .ok_or_else(|| self.err_at(at, "invalid \\u escape"))?;
        let mut v = 0u32;
        for &d in digits {
            let x = (d as char)
                .to_digit(16)
                .ok_or_else(|| self.err_at(at, "invalid \\u escape"))?;
            v = v * 16 + x;
        }
        Ok(v)
    }
}

/// Adds a field; a repeated key is unified with the earlier one, as CUE unifies duplicate
/// fields: structs merge (new fields after the earlier ones), lists of one length unify item by
/// item, and other values must be equal.
pub(super) fn add_field(
    fields: &mut Vec<Field>,
    index: &mut Option<HashMap<String, usize>>,
    key: String,
    value: Data,
) -> Result<(), String> {
    let found = match index {
        Some(map) => map.get(&key).copied(),
        None => fields.iter().position(|f| f.name == key),
    };
    if let Some(i) = found {
        return unify(&mut fields[i].value, value);
    }
    if let Some(map) = index {
        map.insert(key.clone(), fields.len());
    } else if fields.len() >= 16 {
        let mut map: HashMap<String, usize> = fields
            .iter()
            .enumerate()
            .map(|(i, f)| (f.name.clone(), i))
            .collect();
        map.insert(key.clone(), fields.len());
        *index = Some(map);
    }
    fields.push(Field::new(key, value));
    Ok(())
}

/// Unifies `new` into `old` (CUE's messages: `conflicting values 2 and 1`, `incompatible list
/// lengths (1 and 2)`).
pub(super) fn unify(old: &mut Data, new: Data) -> Result<(), String> {
    crate::stack::guard(|| match (old, new) {
        (Data::Struct(olds), Data::Struct(news)) => {
            let mut index = None;
            for f in news {
                add_field(olds, &mut index, f.name, f.value)?;
            }
            Ok(())
        }
        (Data::List(olds), Data::List(news)) => {
            if olds.len() != news.len() {
                return Err(format!(
                    "incompatible list lengths ({} and {})",
                    olds.len(),
                    news.len()
                ));
            }
            for (o, n) in olds.iter_mut().zip(news) {
                unify(o, n)?;
            }
            Ok(())
        }
        (old, new) if *old == new => Ok(()),
        // CUE names the later value first, or the earlier one when the kinds differ.
        (old, new) if kind(old) == kind(&new) => Err(format!(
            "conflicting values {} and {}",
            short(&new),
            short(old)
        )),
        (old, new) => Err(format!(
            "conflicting values {} and {} (mismatched types {} and {})",
            short(old),
            short(&new),
            kind(old),
            kind(&new)
        )),
    })
}

fn kind(d: &Data) -> &'static str {
    match d {
        Data::Null => "null",
        Data::Bool(_) => "bool",
        Data::Number { float: false, .. } => "int",
        Data::Number { .. } => "float",
        Data::String(_) => "string",
        Data::Bytes(_) => "bytes",
        Data::List(_) => "list",
        Data::Struct(_) => "struct",
    }
}

/// A value as CUE's conflict messages show it: CUE syntax on one line (`{b:1}`, `[1,2]`).
fn short(d: &Data) -> String {
    crate::stack::guard(|| match d {
        Data::Struct(fields) => {
            let items: Vec<String> = fields
                .iter()
                .map(|f| {
                    let mut k = String::new();
                    let ident = f
                        .name
                        .chars()
                        .next()
                        .is_some_and(|c| c.is_alphabetic() || c == '_')
                        && f.name.chars().all(|c| c.is_alphanumeric() || c == '_');
                    if ident {
                        k.push_str(&f.name);
                    } else {
                        super::write_cue_string(&mut k, &f.name);
                    }
                    format!("{k}:{}", short(&f.value))
                })
                .collect();
            format!("{{{}}}", items.join(","))
        }
        Data::List(items) => {
            let items: Vec<String> = items.iter().map(short).collect();
            format!("[{}]", items.join(","))
        }
        other => super::to_cue_expr(other),
    })
}
