//! A small JSON reader for comparing `cue export` outputs: it keeps object keys in their order
//! and numbers as their text, so that values can be compared exactly.
//!
//! `serde_json` would round numbers to `f64` (the workspace does not enable its
//! `arbitrary_precision` feature, and enabling it here would change it for every crate of the
//! workspace), and CUE prints integers and decimals of any size. Numbers are compared as decimal
//! values: `1.0`, `1`, `10E-1` and `1e0` are equal, `-0` equals `0`. Objects compare as
//! unordered maps; [`same_key_order`] tells separately whether their keys also come in the same
//! order, since CUE defines the order of the fields it emits.

use std::cmp::Ordering;
use std::fmt::Write as _;

/// A parsed JSON value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Json {
    Null,
    Bool(bool),
    /// The number as written.
    Number(String),
    String(String),
    Array(Vec<Json>),
    /// Members in their order of appearance.
    Object(Vec<(String, Json)>),
}

/// Parses one JSON text (surrounding white space allowed).
pub fn parse(text: &str) -> Result<Json, String> {
    let mut p = Parser {
        s: text.as_bytes(),
        i: 0,
        depth: 0,
    };
    p.ws();
    let v = p.value()?;
    p.ws();
    if p.i != p.s.len() {
        return Err(p.err("trailing data after the JSON value"));
    }
    Ok(v)
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
    depth: usize,
}

/// Deeper nesting is rejected rather than risking the stack.
const MAX_DEPTH: usize = 10_000;

impl Parser<'_> {
    fn err(&self, msg: &str) -> String {
        let line = self.s[..self.i.min(self.s.len())]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1;
        format!("line {line}: {msg}")
    }

    fn ws(&mut self) {
        while self.i < self.s.len() && matches!(self.s[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }

    fn eat(&mut self, lit: &str) -> bool {
        if self.s[self.i..].starts_with(lit.as_bytes()) {
            self.i += lit.len();
            true
        } else {
            false
        }
    }

    fn value(&mut self) -> Result<Json, String> {
        match self.s.get(self.i) {
            None => Err(self.err("unexpected end of input")),
            Some(b'{') => self.nested(Parser::object),
            Some(b'[') => self.nested(Parser::array),
            Some(b'"') => self.string().map(Json::String),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ if self.eat("null") => Ok(Json::Null),
            _ if self.eat("true") => Ok(Json::Bool(true)),
            _ if self.eat("false") => Ok(Json::Bool(false)),
            Some(_) => Err(self.err("expected a JSON value")),
        }
    }

    fn nested(&mut self, f: fn(&mut Self) -> Result<Json, String>) -> Result<Json, String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.err("nesting too deep"));
        }
        let v = f(self);
        self.depth -= 1;
        v
    }

    fn object(&mut self) -> Result<Json, String> {
        self.i += 1;
        let mut members = Vec::new();
        self.ws();
        if self.eat("}") {
            return Ok(Json::Object(members));
        }
        loop {
            self.ws();
            if self.s.get(self.i) != Some(&b'"') {
                return Err(self.err("expected a string key"));
            }
            let key = self.string()?;
            self.ws();
            if !self.eat(":") {
                return Err(self.err("expected ':'"));
            }
            self.ws();
            let v = self.value()?;
            members.push((key, v));
            self.ws();
            if self.eat(",") {
                continue;
            }
            if self.eat("}") {
                return Ok(Json::Object(members));
            }
            return Err(self.err("expected ',' or '}'"));
        }
    }

    fn array(&mut self) -> Result<Json, String> {
        self.i += 1;
        let mut elems = Vec::new();
        self.ws();
        if self.eat("]") {
            return Ok(Json::Array(elems));
        }
        loop {
            self.ws();
            elems.push(self.value()?);
            self.ws();
            if self.eat(",") {
                continue;
            }
            if self.eat("]") {
                return Ok(Json::Array(elems));
            }
            return Err(self.err("expected ',' or ']'"));
        }
    }

    fn hex4(&mut self) -> Result<u32, String> {
        let digits = self
            .s
            .get(self.i..self.i + 4)
            .and_then(|d| std::str::from_utf8(d).ok())
            .and_then(|d| u32::from_str_radix(d, 16).ok())
            .ok_or_else(|| self.err("invalid \\u escape"))?;
        self.i += 4;
        Ok(digits)
    }

    fn string(&mut self) -> Result<String, String> {
        self.i += 1;
        let mut out = Vec::new();
        loop {
            let Some(&b) = self.s.get(self.i) else {
                return Err(self.err("unterminated string"));
            };
            self.i += 1;
            match b {
                b'"' => break,
                b'\\' => {
                    let Some(&e) = self.s.get(self.i) else {
                        return Err(self.err("unterminated escape"));
                    };
                    self.i += 1;
                    let c = match e {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => {
                            let hi = self.hex4()?;
                            let code = if (0xd800..0xdc00).contains(&hi) && self.eat("\\u") {
                                let lo = self.hex4()?;
                                if (0xdc00..0xe000).contains(&lo) {
                                    0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00)
                                } else {
                                    0xfffd
                                }
                            } else {
                                hi
                            };
                            char::from_u32(code).unwrap_or('\u{fffd}')
                        }
                        _ => return Err(self.err("invalid escape")),
                    };
                    let mut buf = [0; 4];
                    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                }
                0x00..=0x1f => return Err(self.err("control character in string")),
                _ => out.push(b),
            }
        }
        String::from_utf8(out).map_err(|_| self.err("invalid UTF-8 in string"))
    }

    fn number(&mut self) -> Result<Json, String> {
        let start = self.i;
        self.eat("-");
        let int_start = self.i;
        self.digits();
        let int_len = self.i - int_start;
        if int_len == 0 || (int_len > 1 && self.s[int_start] == b'0') {
            return Err(self.err("invalid number"));
        }
        if self.eat(".") && self.digits() == 0 {
            return Err(self.err("invalid number"));
        }
        if matches!(self.s.get(self.i), Some(b'e' | b'E')) {
            self.i += 1;
            if matches!(self.s.get(self.i), Some(b'+' | b'-')) {
                self.i += 1;
            }
            if self.digits() == 0 {
                return Err(self.err("invalid number"));
            }
        }
        let text = std::str::from_utf8(&self.s[start..self.i]).expect("ASCII");
        Ok(Json::Number(text.to_owned()))
    }

    fn digits(&mut self) -> usize {
        let start = self.i;
        while self.s.get(self.i).is_some_and(u8::is_ascii_digit) {
            self.i += 1;
        }
        self.i - start
    }
}

/// A number as an exact decimal: sign, significant digits without leading or trailing zeros,
/// and the power of ten of the last digit. Zero is `(false, "", 0)` whatever its spelling.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decimal {
    pub negative: bool,
    pub digits: String,
    pub exponent: i64,
}

/// Reads a JSON number's text as a [`Decimal`]; `None` when it is not a JSON number.
pub fn decimal(text: &str) -> Option<Decimal> {
    let (negative, rest) = match text.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, text),
    };
    let (mantissa, exp) = match rest.find(['e', 'E']) {
        Some(i) => (&rest[..i], rest[i + 1..].parse::<i64>().ok()?),
        None => (rest, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if int.is_empty() || !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit()) {
        return None;
    }
    let all = format!("{int}{frac}");
    let trimmed = all.trim_start_matches('0');
    let without_trailing = trimmed.trim_end_matches('0');
    if without_trailing.is_empty() {
        return Some(Decimal {
            negative: false,
            digits: String::new(),
            exponent: 0,
        });
    }
    let trailing = (trimmed.len() - without_trailing.len()) as i64;
    Some(Decimal {
        negative,
        digits: without_trailing.to_owned(),
        exponent: exp
            .saturating_sub(frac.len() as i64)
            .saturating_add(trailing),
    })
}

/// Whether two number texts denote the same decimal value.
pub fn numbers_equal(a: &str, b: &str) -> bool {
    match (decimal(a), decimal(b)) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

/// Whether two values are equal: objects as unordered maps, arrays in order, numbers by value.
pub fn equal(a: &Json, b: &Json) -> bool {
    first_difference(a, b).is_none()
}

/// Where two values first differ, as `$.a[2].b: expected 1, got 2`, or `None` when they are
/// equal in the sense of [`equal`]. Object members are visited in the order of `expected`.
pub fn first_difference(expected: &Json, actual: &Json) -> Option<String> {
    let mut path = String::from("$");
    diff(expected, actual, &mut path)
}

fn describe(v: &Json) -> String {
    let s = match v {
        Json::Null => "null".to_owned(),
        Json::Bool(b) => b.to_string(),
        Json::Number(n) => n.clone(),
        Json::String(s) => serde_json::Value::String(s.clone()).to_string(),
        Json::Array(a) => format!("an array of {}", a.len()),
        Json::Object(o) => format!("an object of {} members", o.len()),
    };
    if s.len() > 80 {
        let cut = (0..=77).rev().find(|&i| s.is_char_boundary(i)).unwrap_or(0);
        format!("{}...", &s[..cut])
    } else {
        s
    }
}

fn diff(e: &Json, a: &Json, path: &mut String) -> Option<String> {
    let mismatch = |path: &str| {
        Some(format!(
            "{path}: expected {}, got {}",
            describe(e),
            describe(a)
        ))
    };
    match (e, a) {
        (Json::Null, Json::Null) => None,
        (Json::Bool(x), Json::Bool(y)) if x == y => None,
        (Json::Number(x), Json::Number(y)) if numbers_equal(x, y) => None,
        (Json::String(x), Json::String(y)) if x == y => None,
        (Json::Array(x), Json::Array(y)) => {
            for (i, (xe, ye)) in x.iter().zip(y).enumerate() {
                let len = path.len();
                let _ = write!(path, "[{i}]");
                let d = diff(xe, ye, path);
                path.truncate(len);
                if d.is_some() {
                    return d;
                }
            }
            match x.len().cmp(&y.len()) {
                Ordering::Equal => None,
                _ => Some(format!(
                    "{path}: expected {} elements, got {}",
                    x.len(),
                    y.len()
                )),
            }
        }
        (Json::Object(x), Json::Object(y)) => {
            for (k, xv) in x {
                let len = path.len();
                if is_simple_key(k) {
                    let _ = write!(path, ".{k}");
                } else {
                    let _ = write!(path, "[{}]", serde_json::Value::String(k.clone()));
                }
                let d = match y.iter().find(|(yk, _)| yk == k) {
                    Some((_, yv)) => diff(xv, yv, path),
                    None => Some(format!("{path}: missing")),
                };
                path.truncate(len);
                if d.is_some() {
                    return d;
                }
            }
            if let Some((k, _)) = y.iter().find(|(yk, _)| !x.iter().any(|(xk, _)| xk == yk)) {
                return Some(format!("{path}: unexpected member {k:?}"));
            }
            // Same key sets; duplicate keys could still make the counts differ.
            (x.len() != y.len())
                .then(|| format!("{path}: expected {} members, got {}", x.len(), y.len()))
        }
        _ => mismatch(path),
    }
}

fn is_simple_key(k: &str) -> bool {
    !k.is_empty()
        && k.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b == b'#')
}

/// Whether the objects in two equal values list their keys in the same order, at every depth.
/// Meaningful only when [`equal`] holds.
pub fn same_key_order(a: &Json, b: &Json) -> bool {
    match (a, b) {
        (Json::Array(x), Json::Array(y)) => x.iter().zip(y).all(|(p, q)| same_key_order(p, q)),
        (Json::Object(x), Json::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|((xk, xv), (yk, yv))| xk == yk && same_key_order(xv, yv))
        }
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_keeps_order() {
        let v = parse(" {\"b\": [1, 2.5e3, -0], \"a\": {\"x\": null, \"y\": true}} ").unwrap();
        let Json::Object(m) = &v else { panic!() };
        assert_eq!(m[0].0, "b");
        assert_eq!(m[1].0, "a");
        assert_eq!(
            m[0].1,
            Json::Array(vec![
                Json::Number("1".into()),
                Json::Number("2.5e3".into()),
                Json::Number("-0".into())
            ])
        );
        assert!(parse("{\"a\": 1,}").is_err());
        assert!(parse("[1] x").is_err());
        assert!(parse("01").is_err());
        assert!(parse("1.").is_err());
        assert_eq!(
            parse(r#""a\u00e9\ud83d\ude00\n""#).unwrap(),
            Json::String("a\u{e9}\u{1f600}\n".into())
        );
    }

    #[test]
    fn numbers_compare_by_value() {
        for (a, b) in [
            ("1", "1.0"),
            ("1E+2", "100"),
            ("100", "1e2"),
            ("0.1", "1e-1"),
            ("-0", "0"),
            ("0.000", "0e10"),
            (
                "123456789012345678901234567890",
                "1.2345678901234567890123456789e29",
            ),
            ("-2.50", "-25E-1"),
        ] {
            assert!(numbers_equal(a, b), "{a} == {b}");
        }
        for (a, b) in [
            ("1", "-1"),
            ("1", "10"),
            ("0.1", "0.01"),
            (
                "123456789012345678901234567890",
                "123456789012345678901234567891",
            ),
        ] {
            assert!(!numbers_equal(a, b), "{a} != {b}");
        }
    }

    #[test]
    fn objects_are_unordered_but_order_is_reported() {
        let a = parse(r#"{"a": 1, "b": [{"c": 1, "d": 2}]}"#).unwrap();
        let b = parse(r#"{"b": [{"d": 2, "c": 1.0}], "a": 1}"#).unwrap();
        assert!(equal(&a, &b));
        assert!(!same_key_order(&a, &b));
        assert!(same_key_order(&a, &a));
        let c = parse(r#"{"a": 1, "b": [{"c": 1, "d": 3}]}"#).unwrap();
        assert_eq!(
            first_difference(&a, &c).unwrap(),
            "$.b[0].d: expected 2, got 3"
        );
        let d = parse(r#"{"a": 1, "b": [], "e": 1}"#).unwrap();
        assert_eq!(
            first_difference(&a, &d).unwrap(),
            "$.b: expected 1 elements, got 0"
        );
        let e = parse(r#"{"a": 1, "b": [{"c": 1, "d": 2}], "z y": 1}"#).unwrap();
        assert_eq!(
            first_difference(&a, &e).unwrap(),
            "$: unexpected member \"z y\""
        );
        assert_eq!(first_difference(&e, &a).unwrap(), "$[\"z y\"]: missing");
    }
}
