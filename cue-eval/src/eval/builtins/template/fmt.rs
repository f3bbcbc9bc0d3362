//! Go's `fmt` printing for template values: `%v` (`Print`) of every kind, and `Sprintf` with the
//! verbs `%v %s %d %q %x %X %o %b %c %t %f %F %e %E %g %G %%`, flags `-+# 0`, width and
//! precision (also `*`), and Go's `%!d(string=x)`, `%!d(MISSING)` and `%!(EXTRA ...)` texts.

use super::exec::V;
use crate::eval::label::go_quote;

/// `strconv.FormatFloat(f, 'g', -1, 64)` (what `%v` prints): shortest digits, exponent form
/// below 1e-4 and from 1e6 (`eprec`, 6 for the shortest form).
pub fn float_v(f: f64, eprec: i32) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 {
            "+Inf".into()
        } else {
            "-Inf".into()
        };
    }
    if f == 0.0 {
        return if f.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    let e = format!("{f:e}");
    let (mant, exp) = e.split_once('e').unwrap_or((&e, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let neg = mant.starts_with('-');
    let digits: String = mant.chars().filter(|c| c.is_ascii_digit()).collect();
    let nd = digits.len() as i32;
    let mut out = String::new();
    if neg {
        out.push('-');
    }
    if exp < -4 || exp >= eprec {
        out.push_str(&digits[..1]);
        if nd > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push_str(&exp_text('e', exp));
    } else if exp < 0 {
        out.push_str("0.");
        for _ in 0..(-exp - 1) {
            out.push('0');
        }
        out.push_str(&digits);
    } else {
        let dp = (exp + 1) as usize;
        if digits.len() <= dp {
            out.push_str(&digits);
            for _ in digits.len()..dp {
                out.push('0');
            }
        } else {
            out.push_str(&digits[..dp]);
            out.push('.');
            out.push_str(&digits[dp..]);
        }
    }
    out
}

fn exp_text(e: char, exp: i32) -> String {
    format!("{e}{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs())
}

/// `%e` with a precision.
fn float_e(f: f64, prec: usize, e: char) -> String {
    let s = format!("{f:.prec$e}");
    let (mant, exp) = s.split_once('e').unwrap_or((&s, "0"));
    format!("{mant}{}", exp_text(e, exp.parse().unwrap_or(0)))
}

/// `%g` with a precision.
fn float_g(f: f64, prec: usize, sharp: bool) -> String {
    let p = prec.max(1);
    let s = format!("{f:.*e}", p - 1);
    let (mant, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if exp < -4 || exp >= p as i32 {
        let m = if sharp {
            mant.to_string()
        } else {
            trim_zeros(mant)
        };
        return format!("{m}{}", exp_text('e', exp));
    }
    let decimals = (p as i32 - 1 - exp).max(0) as usize;
    let t = format!("{f:.decimals$}");
    if sharp { t } else { trim_zeros(&t) }
}

fn trim_zeros(s: &str) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s.to_string()
    }
}

/// Go's `%v` of a value (`top`: not inside a list or map, where nil prints `<nil>` too).
pub fn fmt_v(out: &mut String, v: &V, _top: bool) {
    match v {
        V::Nil => out.push_str("<nil>"),
        V::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        V::Int(i) => out.push_str(&i.to_string()),
        V::Float(f) => out.push_str(&float_v(*f, 6)),
        V::Str(s) => out.push_str(s),
        V::Bytes(b) => {
            out.push('[');
            for (i, x) in b.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                out.push_str(&x.to_string());
            }
            out.push(']');
        }
        V::List(l) => {
            out.push('[');
            for (i, x) in l.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                fmt_v(out, x, false);
            }
            out.push(']');
        }
        V::Map(m) => {
            out.push_str("map[");
            for (i, (k, x)) in m.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                out.push_str(k);
                out.push(':');
                fmt_v(out, x, false);
            }
            out.push(']');
        }
    }
}

#[derive(Default)]
struct Spec {
    minus: bool,
    plus: bool,
    sharp: bool,
    zero: bool,
    space: bool,
    width: Option<usize>,
    prec: Option<usize>,
}

fn pad(s: String, sp: &Spec, numeric: bool) -> String {
    let n = s.chars().count();
    let Some(w) = sp.width.filter(|&w| w > n) else {
        return s;
    };
    let fill = w - n;
    if sp.minus {
        return s + &" ".repeat(fill);
    }
    if sp.zero && numeric {
        let (sign, rest) = match s.strip_prefix(['-', '+']) {
            Some(r) => (&s[..1], r),
            None => ("", s.as_str()),
        };
        return format!("{sign}{}{rest}", "0".repeat(fill));
    }
    " ".repeat(fill) + &s
}

fn bad(verb: char, v: &V) -> String {
    match v {
        V::Nil => format!("%!{verb}(<nil>)"),
        v => {
            let mut s = String::new();
            fmt_v(&mut s, v, false);
            format!("%!{verb}({}={s})", v.type_name())
        }
    }
}

fn signed(i: i128, sp: &Spec, body: String) -> String {
    if i < 0 {
        format!("-{body}")
    } else if sp.plus {
        format!("+{body}")
    } else if sp.space {
        format!(" {body}")
    } else {
        body
    }
}

fn int_verb(i: i64, verb: char, sp: &Spec) -> String {
    let a = (i as i128).unsigned_abs();
    let body = match verb {
        'd' | 'v' => a.to_string(),
        'x' => format!("{}{a:x}", if sp.sharp { "0x" } else { "" }),
        'X' => format!("{}{a:X}", if sp.sharp { "0X" } else { "" }),
        'o' => format!("{}{a:o}", if sp.sharp { "0" } else { "" }),
        'O' => format!("0o{a:o}"),
        'b' => format!("{a:b}"),
        _ => unreachable!(),
    };
    let body = match sp.prec {
        Some(p) if body.len() < p => "0".repeat(p - body.len()) + &body,
        _ => body,
    };
    signed(i128::from(i), sp, body)
}

fn float_verb(f: f64, verb: char, sp: &Spec) -> String {
    let s = match verb {
        'v' => match sp.prec {
            Some(p) => float_g(f, p, sp.sharp),
            None => float_v(f, 6),
        },
        'f' | 'F' => format!("{f:.*}", sp.prec.unwrap_or(6)),
        'e' | 'E' => float_e(f, sp.prec.unwrap_or(6), verb),
        'g' | 'G' => match sp.prec {
            Some(p) => float_g(f, p, sp.sharp),
            None => float_v(f, 6),
        },
        _ => unreachable!(),
    };
    let s = if verb == 'G' || verb == 'E' {
        s.to_uppercase()
    } else {
        s
    };
    if !s.starts_with('-') && (sp.plus || sp.space) && f.is_finite() {
        format!("{}{s}", if sp.plus { '+' } else { ' ' })
    } else {
        s
    }
}

fn hex_bytes(b: &[u8], upper: bool, sp: &Spec) -> String {
    let mut o = String::new();
    for (i, x) in b.iter().enumerate() {
        if sp.space && i > 0 {
            o.push(' ');
        }
        if sp.sharp && (sp.space || i == 0) {
            o.push_str(if upper { "0X" } else { "0x" });
        }
        if upper {
            o.push_str(&format!("{x:02X}"));
        } else {
            o.push_str(&format!("{x:02x}"));
        }
    }
    o
}

fn one(verb: char, v: &V, sp: &Spec) -> String {
    let (s, numeric) = match (verb, v) {
        ('v', V::Int(i)) | ('d' | 'x' | 'X' | 'o' | 'O' | 'b', V::Int(i)) => {
            (int_verb(*i, verb, sp), true)
        }
        ('c', V::Int(i)) => (
            char::from_u32(*i as u32).unwrap_or('\u{FFFD}').to_string(),
            false,
        ),
        ('q', V::Int(i)) => (
            format!("'{}'", char::from_u32(*i as u32).unwrap_or('\u{FFFD}')),
            false,
        ),
        ('U', V::Int(i)) => (format!("U+{:04X}", i), false),
        ('v' | 'f' | 'F' | 'e' | 'E' | 'g' | 'G', V::Float(f)) => (float_verb(*f, verb, sp), true),
        ('v' | 't', V::Bool(b)) => (b.to_string(), false),
        ('v' | 's', V::Str(s)) => (
            match sp.prec {
                Some(p) => s.chars().take(p).collect(),
                None => s.to_string(),
            },
            false,
        ),
        ('v' | 's', V::Bytes(b)) if verb == 's' => (String::from_utf8_lossy(b).into_owned(), false),
        ('q', V::Str(s)) => (go_quote(s), false),
        ('q', V::Bytes(b)) => (go_quote(&String::from_utf8_lossy(b)), false),
        ('x' | 'X', V::Str(s)) => (hex_bytes(s.as_bytes(), verb == 'X', sp), false),
        ('x' | 'X', V::Bytes(b)) => (hex_bytes(b, verb == 'X', sp), false),
        ('v', v) => {
            let mut s = String::new();
            fmt_v(&mut s, v, true);
            (s, false)
        }
        ('s' | 'd' | 'x' | 'X' | 'q', V::List(l)) => {
            let parts: Vec<String> = l.iter().map(|x| one(verb, x, &Spec::default())).collect();
            (format!("[{}]", parts.join(" ")), false)
        }
        ('s' | 'd' | 'x' | 'X' | 'q', V::Map(m)) => {
            let parts: Vec<String> = m
                .iter()
                .map(|(k, x)| {
                    format!(
                        "{}:{}",
                        one(verb, &V::Str(k.as_str().into()), &Spec::default()),
                        one(verb, x, &Spec::default())
                    )
                })
                .collect();
            (format!("map[{}]", parts.join(" ")), false)
        }
        (verb, v) => (bad(verb, v), false),
    };
    pad(s, sp, numeric)
}

/// Go's `fmt.Sprintf`.
pub fn sprintf(format: &str, args: &[V]) -> String {
    let mut out = String::new();
    let mut argi = 0;
    let mut chars = format.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let mut sp = Spec::default();
        while let Some(&f) = chars.peek() {
            match f {
                '-' => sp.minus = true,
                '+' => sp.plus = true,
                '#' => sp.sharp = true,
                '0' => sp.zero = true,
                ' ' => sp.space = true,
                _ => break,
            }
            chars.next();
        }
        let num =
            |chars: &mut std::iter::Peekable<std::str::Chars>, argi: &mut usize| -> Option<usize> {
                if chars.peek() == Some(&'*') {
                    chars.next();
                    let v = match args.get(*argi) {
                        Some(V::Int(i)) => Some((*i).max(0) as usize),
                        _ => None,
                    };
                    *argi += 1;
                    return v;
                }
                let mut n: Option<usize> = None;
                while let Some(d) = chars.peek().and_then(|c| c.to_digit(10)) {
                    n = Some(
                        n.unwrap_or(0)
                            .saturating_mul(10)
                            .saturating_add(d as usize)
                            .min(1 << 20),
                    );
                    chars.next();
                }
                n
            };
        sp.width = num(&mut chars, &mut argi);
        if chars.peek() == Some(&'.') {
            chars.next();
            sp.prec = Some(num(&mut chars, &mut argi).unwrap_or(0));
        }
        let Some(verb) = chars.next() else {
            out.push_str("%!(NOVERB)");
            break;
        };
        if verb == '%' {
            out.push('%');
            continue;
        }
        match args.get(argi) {
            Some(v) => out.push_str(&one(verb, v, &sp)),
            None => out.push_str(&format!("%!{verb}(MISSING)")),
        }
        argi += 1;
    }
    if argi < args.len() {
        out.push_str("%!(EXTRA ");
        let extra: Vec<String> = args[argi..]
            .iter()
            .map(|v| match v {
                V::Nil => "<nil>".to_string(),
                v => {
                    let mut s = String::new();
                    fmt_v(&mut s, v, false);
                    format!("{}={s}", v.type_name())
                }
            })
            .collect();
        out.push_str(&extra.join(", "));
        out.push(')');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_as_go_prints_them() {
        assert_eq!(float_v(3.0, 6), "3");
        assert_eq!(float_v(1.5, 6), "1.5");
        assert_eq!(float_v(100000.0, 6), "100000");
        assert_eq!(float_v(1e6, 6), "1e+06");
        assert_eq!(float_v(0.00001, 6), "1e-05");
        assert_eq!(float_v(1234567.0, 6), "1.234567e+06");
    }

    #[test]
    fn printf_verbs() {
        let s = |x: &str| V::Str(x.into());
        assert_eq!(
            sprintf(
                "%5.2f|%-4d|%q|%x|%t|%%",
                &[
                    V::Float(2.5678),
                    V::Int(7),
                    s("a\"b"),
                    s("hi"),
                    V::Bool(true)
                ]
            ),
            " 2.57|7   |\"a\\\"b\"|6869|true|%"
        );
        assert_eq!(sprintf("%d %s", &[s("x")]), "%!d(string=x) %!s(MISSING)");
        assert_eq!(sprintf("%d", &[V::Int(1), V::Int(2)]), "1%!(EXTRA int=2)");
        assert_eq!(
            sprintf(
                "%05d|%e|%g",
                &[V::Int(-42), V::Float(1234.5), V::Float(0.000012)]
            ),
            "-0042|1.234500e+03|1.2e-05"
        );
    }
}
