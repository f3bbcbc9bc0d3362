//! The `strconv` package: Go's `strconv` over CUE values. Integers are arbitrary precision as
//! in CUE (`Atoi`, `ParseInt` with bit size 0, `FormatInt` of big values); `FormatFloat`
//! reproduces Go's `'e'`, `'E'`, `'f'`, `'g'`, `'G'` formats from Rust's shortest and fixed
//! float formatting.

use std::rc::Rc;

use num_bigint::BigInt;
use num_traits::{Signed, Zero};

use super::k::*;
use super::{R, Runtime, StdMember, a_bool, a_int, a_num, a_str, constant, func, string};
use crate::eval::label::{go_quote, quote};
use crate::eval::value::{Bottom, Value};
use crate::num::{Num, NumKind};
use crate::syntax::quote::{Form, is_graphic, is_print, quote_with};

pub(super) static MEMBERS: &[StdMember] = &[
    func("strconv.Atoi", &[S], atoi),
    func("strconv.Itoa", &[I], |_, a| string(big(a, 0)?.to_string())),
    func("strconv.ParseInt", &[S, I, I], |_, a| parse_int(a, true)),
    func("strconv.ParseUint", &[S, I, I], |_, a| parse_int(a, false)),
    func("strconv.ParseBool", &[S], parse_bool),
    func("strconv.ParseFloat", &[S, I], parse_float),
    func("strconv.ParseNumber", &[S], parse_number),
    func("strconv.FormatInt", &[I, I], format_int),
    func("strconv.FormatUint", &[I, I], format_int),
    func("strconv.FormatBool", &[BOOL], |_, a| {
        string(a_bool(a, 0)?.to_string())
    }),
    func("strconv.FormatFloat", &[N, T, I, I], format_float),
    func("strconv.Quote", &[S], |_, a| {
        string(go_quote(&a_str(a, 0)?))
    }),
    func("strconv.QuoteToASCII", &[S], |_, a| quote_as(a, ASCII, '"')),
    func("strconv.QuoteToGraphic", &[S], |_, a| {
        quote_as(a, GRAPHIC, '"')
    }),
    func("strconv.QuoteRune", &[I], |_, a| {
        quote_as(a, Form::GO, '\'')
    }),
    func("strconv.QuoteRuneToASCII", &[I], |_, a| {
        quote_as(a, ASCII, '\'')
    }),
    func("strconv.QuoteRuneToGraphic", &[I], |_, a| {
        quote_as(a, GRAPHIC, '\'')
    }),
    func("strconv.IsPrint", &[I], |_, a| {
        Ok(Value::Bool(a_rune(a, 0)?.is_some_and(is_print)))
    }),
    func("strconv.IsGraphic", &[I], |_, a| {
        Ok(Value::Bool(a_rune(a, 0)?.is_some_and(is_graphic)))
    }),
    constant("strconv.IntSize", |_| Value::int(64)),
    func("strconv.Unquote", &[S], unquote),
];

fn big(a: &[Value], i: usize) -> Result<BigInt, Rc<Bottom>> {
    let (n, _) = a_num(a, i)?;
    n.to_bigint()
        .ok_or_else(|| Bottom::eval("argument is not an integer"))
}

fn num_err(func: &str, s: &str, what: &str) -> Rc<Bottom> {
    Bottom::eval(format!("strconv.{func}: parsing {}: {what}", quote(s)))
}

/// Go's integer syntax for `ParseInt` (base 0 takes a prefix; underscores only with base 0).
fn parse_big(s: &str, base: i64, signed: bool) -> Result<BigInt, &'static str> {
    let (neg, body) = match s.as_bytes().first() {
        Some(b'-') if signed => (true, &s[1..]),
        Some(b'+') if signed => (false, &s[1..]),
        _ => (false, s),
    };
    if body.is_empty() {
        return Err("invalid syntax");
    }
    let mut prefixed = false;
    let (radix, digits, underscores) = if base == 0 {
        prefixed = body.len() > 1 && body.starts_with('0');
        let lower = body.to_ascii_lowercase();
        if lower.starts_with("0x") {
            (16, &body[2..], true)
        } else if lower.starts_with("0b") {
            (2, &body[2..], true)
        } else if lower.starts_with("0o") {
            (8, &body[2..], true)
        } else if body.len() > 1 && body.starts_with('0') {
            (8, &body[1..], true)
        } else {
            (10, body, true)
        }
    } else if (2..=36).contains(&base) {
        (base as u32, body, false)
    } else {
        return Err("invalid base");
    };
    let clean: String = if underscores {
        if (digits.starts_with('_') && !prefixed) || digits.ends_with('_') || digits.contains("__")
        {
            return Err("invalid syntax");
        }
        digits.chars().filter(|&c| c != '_').collect()
    } else {
        digits.to_string()
    };
    if clean.is_empty() || !clean.chars().all(|c| c.is_digit(radix)) {
        return Err("invalid syntax");
    }
    let v = BigInt::parse_bytes(clean.as_bytes(), radix).ok_or("invalid syntax")?;
    Ok(if neg { -v } else { v })
}

fn atoi(_: &mut Runtime, a: &[Value]) -> R {
    let s = a_str(a, 0)?;
    match parse_big(&s, 10, true) {
        Ok(v) => Ok(Value::num(Num::from_bigint(v), NumKind::Int)),
        Err(e) => Err(num_err("Atoi", &s, e)),
    }
}

fn parse_int(a: &[Value], signed: bool) -> R {
    let name = if signed { "ParseInt" } else { "ParseUint" };
    let s = a_str(a, 0)?;
    let base = a_int(a, 1)?;
    let bits = a_int(a, 2)?;
    let v = match parse_big(&s, base, signed) {
        Ok(v) => v,
        Err(_) if !signed && s.starts_with('-') => {
            return Err(num_err(name, &s, "value out of range"));
        }
        Err(e) => return Err(num_err(name, &s, e)),
    };
    if bits < 0 {
        return Err(num_err(name, &s, "value out of range"));
    }
    if bits > 0 {
        let bits = bits.min(4096) as usize;
        let (lo, hi) = if signed {
            let h = BigInt::from(1) << (bits - 1);
            (-h.clone(), h - 1)
        } else {
            (BigInt::zero(), (BigInt::from(1) << bits) - 1)
        };
        if v < lo || v > hi {
            return Err(num_err(name, &s, "value out of range"));
        }
    }
    Ok(Value::num(Num::from_bigint(v), NumKind::Int))
}

fn parse_bool(_: &mut Runtime, a: &[Value]) -> R {
    let s = a_str(a, 0)?;
    match &*s {
        "1" | "t" | "T" | "true" | "TRUE" | "True" => Ok(Value::Bool(true)),
        "0" | "f" | "F" | "false" | "FALSE" | "False" => Ok(Value::Bool(false)),
        _ => Err(num_err("ParseBool", &s, "invalid syntax")),
    }
}

fn parse_float(_: &mut Runtime, a: &[Value]) -> R {
    let s = a_str(a, 0)?;
    let clean: String = s.chars().filter(|&c| c != '_').collect();
    match clean.parse::<f64>() {
        Ok(f) if f.is_finite() => {
            let t = format!("{f:e}");
            match Num::parse_literal(&t) {
                Ok((n, _)) => Ok(Value::num(n, NumKind::Float)),
                Err(e) => Err(Bottom::eval(e)),
            }
        }
        Ok(_) => Err(num_err("ParseFloat", &s, "value out of range")),
        Err(_) => Err(num_err("ParseFloat", &s, "invalid syntax")),
    }
}

fn parse_number(_: &mut Runtime, a: &[Value]) -> R {
    let s = a_str(a, 0)?;
    let t = s.trim();
    let (neg, body) = match t.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let body = if body.starts_with('.') {
        format!("0{body}")
    } else {
        body.to_string()
    };
    if body.ends_with('_') || body.contains("__") {
        return Err(num_err("ParseNumber", &s, "illegal '_' in number"));
    }
    let lower = body.to_ascii_lowercase();
    for (p, name) in [("0x", "hexadecimal"), ("0b", "binary"), ("0o", "octal")] {
        if let Some(d) = lower.strip_prefix(p) {
            let radix = match p {
                "0x" => 16,
                "0b" => 2,
                _ => 8,
            };
            if d.is_empty() || !d.chars().all(|c| c == '_' || c.is_digit(radix)) {
                return Err(num_err(
                    "ParseNumber",
                    &s,
                    &format!("illegal {name} number {}", quote(&body)),
                ));
            }
        }
    }
    match Num::parse_literal(&body) {
        Ok((n, k)) => Ok(Value::num(if neg { n.neg() } else { n }, k)),
        Err(e) => Err(num_err("ParseNumber", &s, &e)),
    }
}

fn format_int(_: &mut Runtime, a: &[Value]) -> R {
    let x = big(a, 0)?;
    let base = a_int(a, 1)?;
    if !(2..=62).contains(&base) {
        return Err(Bottom::eval(format!("invalid base {base}")));
    }
    string(format_radix(&x, base as u32))
}

/// Digits of Go's `big.Int.Text` (bases up to 62: 0-9, a-z, A-Z).
fn format_radix(x: &BigInt, base: u32) -> String {
    const DIGITS: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    if x.is_zero() {
        return "0".into();
    }
    let digits = x.magnitude().to_radix_be(base);
    let mut s: String = digits.iter().map(|&d| DIGITS[d as usize] as char).collect();
    if x.is_negative() {
        s.insert(0, '-');
    }
    s
}

fn format_float(_: &mut Runtime, a: &[Value]) -> R {
    let (n, _) = a_num(a, 0)?;
    let fmt = match &a[1] {
        Value::Str(s) => {
            let mut c = s.chars();
            match (c.next(), c.next()) {
                (Some(ch), None) => ch,
                _ => return Err(Bottom::eval(format!("invalid format {}", quote(s)))),
            }
        }
        Value::Num(f, NumKind::Int) => match f.to_i64() {
            Some(i) if (0..=255).contains(&i) => i as u8 as char,
            _ => {
                return Err(Bottom::eval(format!(
                    "format value {} out of range [0, 255]",
                    f.to_g_string()
                )));
            }
        },
        other => {
            return Err(Bottom::eval(format!(
                "unexpected kind {}",
                other.kind().name()
            )));
        }
    };
    let prec = a_int(a, 2)?;
    let bits = a_int(a, 3)?;
    let f = if bits == 32 {
        f64::from(n.to_f64() as f32)
    } else {
        n.to_f64()
    };
    string(go_format_float(f, fmt, prec.clamp(-1, 1000), bits == 32))
}

/// Go's exponent spelling: `e+00`.
fn go_exp(mant: &str, exp: i32, e: char) -> String {
    let sign = if exp < 0 { '-' } else { '+' };
    format!("{mant}{e}{sign}{:02}", exp.abs())
}

/// Go's `strconv.FormatFloat`.
pub(super) fn go_format_float(f: f64, fmt: char, prec: i64, f32: bool) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "+Inf" } else { "-Inf" }.into();
    }
    let shortest = |f: f64| -> String {
        if f32 {
            format!("{:e}", f as f32)
        } else {
            format!("{f:e}")
        }
    };
    // Mantissa digits and decimal exponent (d.ddd × 10^exp).
    let sci = |p: Option<usize>| -> (String, i32) {
        let s = match p {
            Some(p) => format!("{f:.p$e}"),
            None => shortest(f),
        };
        let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
        (m.to_string(), e.parse().unwrap_or(0))
    };
    match fmt {
        'e' | 'E' => {
            let (m, e) = sci(if prec < 0 { None } else { Some(prec as usize) });
            go_exp(&m, e, fmt)
        }
        'f' => {
            if prec < 0 {
                let (m, e) = sci(None);
                // Shortest digits in fixed notation.
                let neg = m.starts_with('-');
                let digits: String = m.chars().filter(char::is_ascii_digit).collect();
                let mut out = String::new();
                if neg {
                    out.push('-');
                }
                let dp = e + 1;
                if dp <= 0 {
                    out.push_str("0.");
                    out.push_str(&"0".repeat((-dp) as usize));
                    out.push_str(&digits);
                } else if dp as usize >= digits.len() {
                    out.push_str(&digits);
                    out.push_str(&"0".repeat(dp as usize - digits.len()));
                } else {
                    out.push_str(&digits[..dp as usize]);
                    out.push('.');
                    out.push_str(&digits[dp as usize..]);
                }
                out
            } else {
                format!("{f:.0$}", prec as usize)
            }
        }
        'g' | 'G' => {
            let (m, e) = sci(if prec < 0 {
                None
            } else {
                Some((prec.max(1) - 1) as usize)
            });
            let nd = m.chars().filter(char::is_ascii_digit).count() as i64;
            let eprec = if prec < 0 {
                6
            } else if prec > nd && nd > i64::from(e) {
                nd
            } else {
                prec.max(1)
            };
            if e < -4 || i64::from(e) >= eprec {
                // %e with the mantissa's digits, trailing zeros dropped.
                let m = if m.contains('.') {
                    m.trim_end_matches('0').trim_end_matches('.').to_string()
                } else {
                    m
                };
                go_exp(&m, e, if fmt == 'g' { 'e' } else { 'E' })
            } else {
                let p = (nd - 1 - i64::from(e)).max(0) as usize;
                let s = format!("{f:.p$}");
                if s.contains('.') && prec >= 0 {
                    s.trim_end_matches('0').trim_end_matches('.').to_string()
                } else {
                    s
                }
            }
        }
        'b' | 'x' | 'X' => format!("{f:e}"),
        _ => format!("%{fmt}"),
    }
}

/// Go's `QuoteToASCII` form.
const ASCII: Form = Form {
    ascii_only: true,
    ..Form::GO
};

/// Go's `QuoteToGraphic` form.
const GRAPHIC: Form = Form {
    graphic_only: true,
    ..Form::GO
};

/// A rune argument: an int that fits Go's `rune` (`int32`). `None` for one that is no Unicode
/// character (negative, a surrogate, above U+10FFFF), which Go quotes as U+FFFD.
fn a_rune(a: &[Value], i: usize) -> Result<Option<char>, Rc<Bottom>> {
    let n = a_int(a, i)?;
    let r = i32::try_from(n)
        .map_err(|_| Bottom::eval(format!("int {n} overflows rune in argument {i}")))?;
    Ok(u32::try_from(r).ok().and_then(char::from_u32))
}

/// The string argument, or for a rune quote the rune argument, quoted in `form` with `q`.
fn quote_as(a: &[Value], form: Form, q: char) -> R {
    let form = Form { quote: q, ..form };
    if q == '"' {
        return string(quote_with(&a_str(a, 0)?, form));
    }
    let c = a_rune(a, 0)?.unwrap_or('\u{fffd}');
    string(quote_with(c.encode_utf8(&mut [0; 4]), form))
}

fn unquote(_: &mut Runtime, a: &[Value]) -> R {
    let s = a_str(a, 0)?;
    let bad = || Bottom::eval("invalid syntax");
    if s.len() >= 2 && s.starts_with('`') && s.ends_with('`') {
        return string(&s[1..s.len() - 1]);
    }
    if s.len() < 2 || !(s.starts_with('"') && s.ends_with('"')) {
        return Err(bad());
    }
    match crate::literal::decode(&s) {
        Ok(b) => match String::from_utf8(b) {
            Ok(t) => string(t),
            Err(_) => Err(bad()),
        },
        Err(_) => Err(bad()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_float_formats() {
        assert_eq!(go_format_float(1.23456, 'g', -1, false), "1.23456");
        assert_eq!(go_format_float(1.23456, 'f', 2, false), "1.23");
        assert_eq!(go_format_float(1.23456, 'e', 4, false), "1.2346e+00");
        assert_eq!(go_format_float(1.23456, 'E', 4, false), "1.2346E+00");
        assert_eq!(go_format_float(0.0, 'f', -1, false), "0");
        assert_eq!(go_format_float(1e21, 'g', -1, false), "1e+21");
        assert_eq!(go_format_float(100000.0, 'g', -1, false), "100000");
    }

    #[test]
    fn radix_digits() {
        assert_eq!(format_radix(&BigInt::from(61), 62), "Z");
        assert_eq!(format_radix(&BigInt::from(-64), 16), "-40");
    }

    #[test]
    fn parse_with_prefixes() {
        assert_eq!(parse_big("0x_1F", 0, true), Ok(BigInt::from(31)));
        assert_eq!(parse_big("15", 16, true), Ok(BigInt::from(21)));
        assert!(parse_big("1_0", 10, true).is_err());
    }
}
