//! Go's `fmt` printing of template values: `Sprint`, `Sprintln` and `Sprintf` with every verb
//! Go applies to the types CUE data decodes to, the flags `-+# 0`, width and precision (also
//! `*`), explicit argument indexes (`%[2]d`), and Go's texts for what is wrong
//! (`%!d(string=x)`, `%!d(MISSING)`, `%!(EXTRA ...)`, `%!d(BADINDEX)`).

use super::exec::{IntTy, V};
use super::float::format_float;
use crate::syntax::quote::{Form, is_print, quote_with};

/// The flags, width and precision of one verb (Go's `fmt.fmtFlags`). `%#v` and `%+v` move
/// `sharp` and `plus` to `sharp_v` and `plus_v`, as Go does.
#[derive(Default, Clone)]
struct Flags {
    minus: bool,
    plus: bool,
    sharp: bool,
    zero: bool,
    space: bool,
    sharp_v: bool,
    plus_v: bool,
    wid: Option<usize>,
    prec: Option<usize>,
}

/// Widths and precisions above this are not numbers (Go's `tooLarge`).
const MAX_NUM: usize = 1_000_000;

#[derive(Default)]
struct Printer {
    buf: String,
    f: Flags,
}

impl Printer {
    fn write_padding(&mut self, n: usize) {
        let c = if self.f.zero && !self.f.minus {
            '0'
        } else {
            ' '
        };
        self.buf.extend(std::iter::repeat_n(c, n));
    }

    /// `s` padded to the width: on the left, or on the right with `-`.
    fn pad(&mut self, s: &str) {
        let n = s.chars().count();
        let fill = self.f.wid.unwrap_or(0).saturating_sub(n);
        if self.f.minus {
            self.buf.push_str(s);
            self.write_padding(fill);
        } else {
            self.write_padding(fill);
            self.buf.push_str(s);
        }
    }

    /// Like [`Printer::pad`], but never with zeros (numbers pad with zeros themselves).
    fn pad_spaces(&mut self, s: &str) {
        let zero = std::mem::take(&mut self.f.zero);
        self.pad(s);
        self.f.zero = zero;
    }

    /// One operand of `Sprintf`, or of `Sprint` with `v` (Go's `printArg`).
    fn print_arg(&mut self, v: &V, verb: char) {
        match (v, verb) {
            (V::Nil, 'T' | 'v') => self.pad("<nil>"),
            (V::Nil, _) => self.bad_verb(v, verb),
            (_, 'T') => self.pad(v.type_name()),
            _ => self.print_value(v, verb, 0),
        }
    }

    /// A value at `depth` (0: the operand itself, more: inside a list or map).
    fn print_value(&mut self, v: &V, verb: char, depth: usize) {
        match v {
            // Only inside lists and maps: the operand itself is handled by `print_arg`.
            V::Nil if self.f.sharp_v => self.buf.push_str("interface {}(nil)"),
            V::Nil => self.buf.push_str("<nil>"),
            V::Bool(b) => match verb {
                't' | 'v' => self.pad(if *b { "true" } else { "false" }),
                _ => self.bad_verb(v, verb),
            },
            V::Int(i, ty) => self.fmt_int(v, *i, *ty, verb),
            V::Float(x) => self.fmt_float(v, *x, verb),
            V::Str(s) => self.fmt_string(v, s, verb),
            V::Bytes(b) => self.fmt_bytes(b, verb, depth),
            V::BigInt(n) => self.fmt_big_int(n, verb),
            V::BigFloat(x) => self.fmt_big_float(x, verb),
            V::List(items) => {
                self.open(v, "[");
                for (i, x) in items.iter().enumerate() {
                    self.separate(i);
                    self.print_value(x, verb, depth + 1);
                }
                self.close("]");
            }
            V::Map(fields) => {
                self.open(v, "map[");
                for (i, (k, x)) in fields.iter().enumerate() {
                    self.separate(i);
                    self.print_value(&V::Str(k.as_str().into()), verb, depth + 1);
                    self.buf.push(':');
                    self.print_value(x, verb, depth + 1);
                }
                self.close("]");
            }
        }
    }

    /// The start of a list or map: Go syntax (`[]interface {}{`) for `%#v`.
    fn open(&mut self, v: &V, plain: &str) {
        if self.f.sharp_v {
            self.buf.push_str(v.type_name());
            self.buf.push('{');
        } else {
            self.buf.push_str(plain);
        }
    }

    fn separate(&mut self, i: usize) {
        if i > 0 {
            self.buf.push_str(if self.f.sharp_v { ", " } else { " " });
        }
    }

    fn close(&mut self, plain: &str) {
        self.buf.push_str(if self.f.sharp_v { "}" } else { plain });
    }

    /// `%!verb(type=value)`, the value printed with `%v` and the same flags.
    fn bad_verb(&mut self, v: &V, verb: char) {
        self.buf.push_str("%!");
        self.buf.push(verb);
        self.buf.push('(');
        if !matches!(v, V::Nil) {
            self.buf.push_str(v.type_name());
            self.buf.push('=');
            self.print_arg(v, 'v');
        } else {
            self.buf.push_str("<nil>");
        }
        self.buf.push(')');
    }

    fn fmt_int(&mut self, v: &V, i: i64, ty: IntTy, verb: char) {
        let signed = ty != IntTy::Uint8;
        let (neg, u) = (i < 0, i.unsigned_abs());
        match verb {
            'v' if self.f.sharp_v && !signed => self.hex_0x(u),
            'v' | 'd' => self.fmt_integer(neg, u, 10, verb),
            'b' => self.fmt_integer(neg, u, 2, verb),
            'o' | 'O' => self.fmt_integer(neg, u, 8, verb),
            'x' | 'X' => self.fmt_integer(neg, u, 16, verb),
            // Go reads a negative int as a huge rune: the replacement character.
            'c' => self.pad(&rune_of(i).to_string()),
            'q' => {
                let form = Form {
                    quote: '\'',
                    ascii_only: self.f.plus,
                    ..Form::GO
                };
                self.pad(&quote_with(&rune_of(i).to_string(), form));
            }
            'U' => self.fmt_unicode(i as u64),
            _ => self.bad_verb(v, verb),
        }
    }

    /// `0x61`: an unsigned integer in `%#v` (bytes).
    fn hex_0x(&mut self, u: u64) {
        let sharp = std::mem::replace(&mut self.f.sharp, true);
        self.fmt_integer(false, u, 16, 'v');
        self.f.sharp = sharp;
    }

    /// Go's `fmt.fmtInteger`: precision or zero flag as leading zeros, base prefix, sign.
    fn fmt_integer(&mut self, neg: bool, u: u64, base: u32, verb: char) {
        self.fmt_digits(neg, &to_base(u, base, verb == 'X'), u == 0, base, verb);
    }

    fn fmt_digits(&mut self, neg: bool, digits: &str, is_zero: bool, base: u32, verb: char) {
        let mut prec = 0;
        if let Some(p) = self.f.prec {
            // Precision 0 and value 0 print nothing but the padding.
            if p == 0 && is_zero {
                let zero = std::mem::take(&mut self.f.zero);
                self.write_padding(self.f.wid.unwrap_or(0));
                self.f.zero = zero;
                return;
            }
            prec = p;
        } else if let (true, false, Some(w)) = (self.f.zero, self.f.minus, self.f.wid) {
            prec = w;
            if neg || self.f.plus || self.f.space {
                prec = prec.saturating_sub(1);
            }
        }
        let mut body = "0".repeat(prec.saturating_sub(digits.len()));
        body.push_str(digits);
        let prefix = match (self.f.sharp, base) {
            (true, 2) => "0b",
            (true, 8) if !body.starts_with('0') => "0",
            (true, 16) if verb == 'X' => "0X",
            (true, 16) => "0x",
            _ => "",
        };
        let o = if verb == 'O' { "0o" } else { "" };
        let sign = if neg {
            "-"
        } else if self.f.plus {
            "+"
        } else if self.f.space {
            " "
        } else {
            ""
        };
        self.pad_spaces(&format!("{sign}{o}{prefix}{body}"));
    }

    /// `%U`: `U+0041`, with `'A'` after it for `%#U` of a printable rune.
    fn fmt_unicode(&mut self, u: u64) {
        let digits = format!("{u:X}");
        let prec = self.f.prec.filter(|&p| p > 4).unwrap_or(4);
        let mut s = format!(
            "U+{}{digits}",
            "0".repeat(prec.saturating_sub(digits.len()))
        );
        if let Some(c) = u32::try_from(u).ok().and_then(char::from_u32)
            && self.f.sharp
            && is_print(c)
        {
            s.push_str(&format!(" '{c}'"));
        }
        self.pad_spaces(&s);
    }

    fn fmt_float(&mut self, v: &V, x: f64, verb: char) {
        match verb {
            'v' => self.float(x, 'g', -1),
            'b' | 'g' | 'G' | 'x' | 'X' => self.float(x, verb, -1),
            'f' | 'e' | 'E' => self.float(x, verb, 6),
            'F' => self.float(x, 'f', 6),
            _ => self.bad_verb(v, verb),
        }
    }

    /// Go's `fmt.fmtFloat`: the sign, `#` (a point and trailing zeros kept) and zero padding.
    fn float(&mut self, x: f64, verb: char, prec: i32) {
        let prec = self.f.prec.map_or(prec, |p| p as i32);
        let lower = verb.to_ascii_lowercase();
        let mut num = format_float(x, lower, prec);
        if verb.is_ascii_uppercase() {
            num = num.to_uppercase();
        }
        if !num.starts_with(['-', '+']) {
            num.insert(0, '+');
        }
        if self.f.space && num.starts_with('+') && !self.f.plus {
            num.replace_range(..1, " ");
        }
        if num[1..].starts_with(['I', 'N']) {
            // Infinities and NaN are not zero padded; NaN shows a sign only when asked.
            if num[1..].starts_with('N') && !self.f.space && !self.f.plus {
                num.remove(0);
            }
            self.pad_spaces(&num);
            return;
        }
        if self.f.sharp && verb != 'b' {
            num = sharp_float(&num, lower, prec);
        }
        let signed = self.f.plus || !num.starts_with('+');
        match self.f.wid {
            Some(w) if signed && self.f.zero && !self.f.minus && w > num.len() => {
                self.buf.push_str(&num[..1]);
                self.write_padding(w - num.len());
                self.buf.push_str(&num[1..]);
            }
            _ if signed => self.pad(&num),
            _ => self.pad(&num[1..]),
        }
    }

    fn fmt_string(&mut self, v: &V, s: &str, verb: char) {
        match verb {
            'v' if self.f.sharp_v => self.fmt_q(s),
            'v' | 's' => {
                let t = self.truncate(s);
                self.pad(t);
            }
            'x' | 'X' => self.fmt_hex(s.as_bytes(), verb == 'X'),
            'q' => self.fmt_q(s),
            _ => self.bad_verb(v, verb),
        }
    }

    /// `s` cut to the precision, counted in characters.
    fn truncate<'s>(&self, s: &'s str) -> &'s str {
        match self.f.prec.and_then(|p| s.char_indices().nth(p)) {
            Some((i, _)) => &s[..i],
            None => s,
        }
    }

    /// `%q`: Go's `strconv.Quote`, a raw string for `%#q`, ASCII only for `%+q`.
    fn fmt_q(&mut self, s: &str) {
        let s = self.truncate(s);
        let q = if self.f.sharp && can_backquote(s) {
            format!("`{s}`")
        } else {
            let form = Form {
                ascii_only: self.f.plus,
                ..Form::GO
            };
            quote_with(s, form)
        };
        self.pad(&q);
    }

    /// `%x` of text: two hexadecimal digits a byte, `0x` once (`#`) or before each byte and
    /// spaces between them (`# ` and ` `).
    fn fmt_hex(&mut self, b: &[u8], upper: bool) {
        let b = &b[..self.f.prec.unwrap_or(b.len()).min(b.len())];
        if b.is_empty() {
            self.write_padding(self.f.wid.unwrap_or(0));
            return;
        }
        let x = if upper { "0X" } else { "0x" };
        let mut s = String::new();
        for (i, c) in b.iter().enumerate() {
            if self.f.space && i > 0 {
                s.push(' ');
            }
            if self.f.sharp && (self.f.space || i == 0) {
                s.push_str(x);
            }
            s.push_str(&if upper {
                format!("{c:02X}")
            } else {
                format!("{c:02x}")
            });
        }
        self.pad(&s);
    }

    /// Bytes: text for `%s %q %x %X`, else a list of `uint8` (`[]byte{0x61}` for `%#v`, named
    /// `[]uint8` inside lists and maps).
    fn fmt_bytes(&mut self, b: &[u8], verb: char, depth: usize) {
        match verb {
            's' => {
                let s = String::from_utf8_lossy(b);
                let t = self.truncate(&s).to_string();
                self.pad(&t);
            }
            'q' => self.fmt_q(&String::from_utf8_lossy(b)),
            'x' | 'X' => self.fmt_hex(b, verb == 'X'),
            'v' | 'd' if self.f.sharp_v => {
                self.buf
                    .push_str(if depth == 0 { "[]byte{" } else { "[]uint8{" });
                for (i, c) in b.iter().enumerate() {
                    self.separate(i);
                    self.hex_0x(u64::from(*c));
                }
                self.buf.push('}');
            }
            _ => {
                self.open(&V::Bytes(b.into()), "[");
                for (i, c) in b.iter().enumerate() {
                    self.separate(i);
                    self.print_value(&V::Int(i64::from(*c), IntTy::Uint8), verb, depth + 1);
                }
                self.close("]");
            }
        }
    }

    /// `*big.Int`'s own `Format`: bases for `b o O d s v x X`, Go's text for other verbs.
    fn fmt_big_int(&mut self, n: &num_bigint::BigInt, verb: char) {
        let base = match verb {
            'b' => 2,
            'o' | 'O' => 8,
            'd' | 's' | 'v' => 10,
            'x' | 'X' => 16,
            _ => {
                self.buf.push_str(&format!("%!{verb}(big.Int={n})"));
                return;
            }
        };
        let mut digits = n.magnitude().to_str_radix(base);
        if verb == 'X' {
            digits = digits.to_uppercase();
        }
        let neg = n.sign() == num_bigint::Sign::Minus;
        let sign = if neg {
            "-"
        } else if self.f.plus || self.f.plus_v {
            "+"
        } else if self.f.space {
            " "
        } else {
            ""
        };
        let sharp = self.f.sharp || self.f.sharp_v;
        let prefix = match verb {
            'b' if sharp => "0b",
            'o' if sharp => "0",
            'x' if sharp => "0x",
            'X' if sharp => "0X",
            'O' => "0o",
            _ => "",
        };
        let mut zeros = self.f.prec.map_or(0, |p| p.saturating_sub(digits.len()));
        let len = sign.len() + prefix.len() + zeros + digits.len();
        let (mut left, mut right) = (0, 0);
        if let Some(d) = self.f.wid.and_then(|w| w.checked_sub(len)) {
            if self.f.minus {
                right = d;
            } else if self.f.zero && self.f.prec.is_none() {
                zeros = d;
            } else {
                left = d;
            }
        }
        let s = format!(
            "{}{sign}{prefix}{}{digits}{}",
            " ".repeat(left),
            "0".repeat(zeros),
            " ".repeat(right)
        );
        self.buf.push_str(&s);
    }

    /// `*big.Float` (numbers beyond `float64`): `%v` and `%g` in the shortest form, `%e` with
    /// six decimals or the precision.
    fn fmt_big_float(&mut self, x: &BigDec, verb: char) {
        match verb {
            'v' | 'g' | 'G' => self.pad(&x.sci(verb == 'G', None)),
            'e' | 'E' => self.pad(&x.sci(verb == 'E', Some(self.f.prec.unwrap_or(6)))),
            _ => self
                .buf
                .push_str(&format!("%!{verb}(*big.Float={})", x.sci(false, None))),
        }
    }
}

/// A decimal number beyond the range of `float64` (Go's `*big.Float`): `0.digits × 10^dp`.
#[derive(Clone, Debug, PartialEq)]
pub struct BigDec {
    pub neg: bool,
    pub digits: String,
    pub dp: i64,
}

impl BigDec {
    /// From a CUE number's text (`1e400`, `-2.5E-400`).
    pub fn parse(text: &str) -> Option<BigDec> {
        let (neg, t) = match text.strip_prefix('-') {
            Some(t) => (true, t),
            None => (false, text),
        };
        let (mant, exp) = match t.split_once(['e', 'E']) {
            Some((m, e)) => (m, e.parse::<i64>().ok()?),
            None => (t, 0),
        };
        let (int, frac) = mant.split_once('.').unwrap_or((mant, ""));
        let all = format!("{int}{frac}").replace('_', "");
        let lead = all.len() - all.trim_start_matches('0').len();
        let digits = all.trim_matches('0').to_string();
        let dp = int.len() as i64 - lead as i64 + exp;
        Some(BigDec { neg, digits, dp })
    }

    /// `1.5e+400`: the digits in scientific form, as `big.Float` prints its shortest `%g`, or
    /// with `prec` decimals (cut, or padded with zeros).
    fn sci(&self, upper: bool, prec: Option<usize>) -> String {
        let mut s = String::new();
        if self.neg {
            s.push('-');
        }
        let mut d = if self.digits.is_empty() {
            "0".to_string()
        } else {
            self.digits.clone()
        };
        if let Some(p) = prec {
            d.truncate(p + 1);
            d.extend(std::iter::repeat_n('0', p + 1 - d.len()));
        }
        s.push_str(&d[..1]);
        if d.len() > 1 {
            s.push('.');
            s.push_str(&d[1..]);
        }
        let e = if upper { 'E' } else { 'e' };
        let exp = if self.digits.is_empty() {
            0
        } else {
            self.dp - 1
        };
        s.push(e);
        s.push(if exp < 0 { '-' } else { '+' });
        s.push_str(&format!("{:02}", exp.unsigned_abs()));
        s
    }
}

/// Go's `rune(i)` as `fmt` prints it: the replacement character for what is no Unicode scalar.
fn rune_of(i: i64) -> char {
    u32::try_from(i)
        .ok()
        .and_then(char::from_u32)
        .unwrap_or('\u{FFFD}')
}

fn to_base(u: u64, base: u32, upper: bool) -> String {
    match base {
        2 => format!("{u:b}"),
        8 => format!("{u:o}"),
        16 if upper => format!("{u:X}"),
        16 => format!("{u:x}"),
        _ => u.to_string(),
    }
}

/// Go's `strconv.CanBackquote`: no backquote, no control character but tab, no U+FEFF.
fn can_backquote(s: &str) -> bool {
    !s.chars()
        .any(|c| c == '`' || c == '\u{FEFF}' || c == '\u{7f}' || (c < ' ' && c != '\t'))
}

/// `%#g` and friends: a decimal point always, and for `g` and `v` trailing zeros up to the
/// precision (6 by default).
fn sharp_float(num: &str, verb: char, prec: i32) -> String {
    let mut digits = match verb {
        'v' | 'g' | 'x' => {
            if prec == -1 {
                6
            } else {
                prec
            }
        }
        _ => 0,
    };
    let (sign, rest) = num.split_at(1);
    let cut = rest
        .find(|c: char| c == 'p' || c == 'P' || (verb != 'x' && (c == 'e' || c == 'E')))
        .unwrap_or(rest.len());
    let (body, tail) = rest.split_at(cut);
    let mut body = body.to_string();
    let mut seen_nonzero = false;
    for c in body.chars().filter(|&c| c != '.') {
        seen_nonzero |= c != '0';
        if seen_nonzero {
            digits -= 1;
        }
    }
    if !body.contains('.') {
        if body == "0" {
            digits -= 1;
        }
        body.push('.');
    }
    while digits > 0 {
        body.push('0');
        digits -= 1;
    }
    format!("{sign}{body}{tail}")
}

/// Go's `parsenum`: a decimal number, `None` above [`MAX_NUM`].
fn parse_num(b: &[u8], i: &mut usize) -> Option<usize> {
    let start = *i;
    let mut n: usize = 0;
    while let Some(d) = b.get(*i).filter(|c| c.is_ascii_digit()) {
        n = n.saturating_mul(10).saturating_add(usize::from(d - b'0'));
        *i += 1;
    }
    (*i > start && n <= MAX_NUM).then_some(n)
}

/// Go's `intFromArg`: an int operand for `*` (of any int type, not beyond [`MAX_NUM`]).
fn int_arg(args: &[V], argn: &mut usize) -> Option<i64> {
    let v = args.get(*argn)?;
    *argn += 1;
    match v {
        V::Int(i, _) if i.unsigned_abs() <= MAX_NUM as u64 => Some(*i),
        _ => None,
    }
}

/// Go's `argNumber`: an explicit index `[n]` at `i`. Returns whether one was there; an index
/// out of range (or malformed) makes `good` false.
fn arg_index(b: &[u8], i: &mut usize, argn: &mut usize, nargs: usize, good: &mut bool) -> bool {
    if b.get(*i) != Some(&b'[') {
        return false;
    }
    if b.len() - *i < 3 {
        *i += 1;
        *good = false;
        return false;
    }
    let Some(close) = b[*i..].iter().position(|&c| c == b']') else {
        // No closing bracket: Go skips the `[` alone.
        *i += 1;
        *good = false;
        return false;
    };
    let mut j = *i + 1;
    let n = parse_num(b, &mut j);
    let end = *i + close;
    *i = end + 1;
    match n {
        Some(n) if j == end && n >= 1 && n <= nargs => {
            *argn = n - 1;
            true
        }
        Some(_) if j == end => {
            *good = false;
            true
        }
        _ => {
            *good = false;
            false
        }
    }
}

/// Go's `fmt.Sprintf`.
pub fn sprintf(format: &str, args: &[V]) -> String {
    let b = format.as_bytes();
    let mut p = Printer::default();
    let mut argn = 0;
    let mut reordered = false;
    let mut i = 0;
    while i < b.len() {
        let start = i;
        while i < b.len() && b[i] != b'%' {
            i += 1;
        }
        p.buf.push_str(&format[start..i]);
        if i >= b.len() {
            break;
        }
        i += 1;
        p.f = Flags::default();
        while let Some(&c) = b.get(i) {
            match c {
                b'#' => p.f.sharp = true,
                b'0' => p.f.zero = true,
                b'+' => p.f.plus = true,
                b'-' => p.f.minus = true,
                b' ' => p.f.space = true,
                _ => break,
            }
            i += 1;
        }
        // Zero padding only to the left.
        if p.f.minus {
            p.f.zero = false;
        }
        let mut good = true;
        reordered |= b.get(i) == Some(&b'[');
        let mut after_index = arg_index(b, &mut i, &mut argn, args.len(), &mut good);
        if b.get(i) == Some(&b'*') {
            i += 1;
            match int_arg(args, &mut argn) {
                Some(w) => {
                    if w < 0 {
                        p.f.minus = true;
                        p.f.zero = false;
                    }
                    p.f.wid = Some(w.unsigned_abs() as usize);
                }
                None => p.buf.push_str("%!(BADWIDTH)"),
            }
            after_index = false;
        } else {
            p.f.wid = parse_num(b, &mut i);
            if after_index && p.f.wid.is_some() {
                good = false;
            }
        }
        if i + 1 < b.len() && b[i] == b'.' {
            i += 1;
            if after_index {
                good = false;
            }
            reordered |= b.get(i) == Some(&b'[');
            after_index = arg_index(b, &mut i, &mut argn, args.len(), &mut good);
            if b.get(i) == Some(&b'*') {
                i += 1;
                match int_arg(args, &mut argn) {
                    Some(n) if n >= 0 => p.f.prec = Some(n as usize),
                    _ => p.buf.push_str("%!(BADPREC)"),
                }
                after_index = false;
            } else {
                p.f.prec = Some(parse_num(b, &mut i).unwrap_or(0));
            }
        }
        if !after_index {
            reordered |= b.get(i) == Some(&b'[');
            arg_index(b, &mut i, &mut argn, args.len(), &mut good);
        }
        let Some(verb) = format[i.min(b.len())..].chars().next() else {
            p.buf.push_str("%!(NOVERB)");
            break;
        };
        i += verb.len_utf8();
        match args.get(argn) {
            _ if verb == '%' => p.buf.push('%'),
            _ if !good => p.buf.push_str(&format!("%!{verb}(BADINDEX)")),
            None => p.buf.push_str(&format!("%!{verb}(MISSING)")),
            Some(v) => {
                if verb == 'v' {
                    p.f.sharp_v = std::mem::take(&mut p.f.sharp);
                    p.f.plus_v = std::mem::take(&mut p.f.plus);
                }
                p.print_arg(v, verb);
                argn += 1;
            }
        }
    }
    // Extra operands, unless the format chose operands by index.
    if !reordered && argn < args.len() {
        p.f = Flags::default();
        p.buf.push_str("%!(EXTRA ");
        for (k, v) in args[argn..].iter().enumerate() {
            if k > 0 {
                p.buf.push_str(", ");
            }
            if !matches!(v, V::Nil) {
                p.buf.push_str(v.type_name());
                p.buf.push('=');
            }
            p.print_arg(v, 'v');
        }
        p.buf.push(')');
    }
    p.buf
}

/// Go's `%v` of a value, as `fmt.Sprint` prints one operand.
pub fn fmt_v(out: &mut String, v: &V) {
    let mut p = Printer::default();
    p.print_arg(v, 'v');
    out.push_str(&p.buf);
}

/// Go's `fmt.Sprint`: spaces between operands when neither side is a string.
pub fn sprint(vals: &[V]) -> String {
    let mut o = String::new();
    for (i, v) in vals.iter().enumerate() {
        if i > 0 && !matches!(v, V::Str(_)) && !matches!(vals[i - 1], V::Str(_)) {
            o.push(' ');
        }
        fmt_v(&mut o, v);
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
        fmt_v(&mut o, v);
    }
    o.push('\n');
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int64(i: i64) -> V {
        V::Int(i, IntTy::Int64)
    }

    /// Expected texts: Go's `fmt` through `printf` in `cue export` of v0.17.1.
    #[test]
    fn printf_verbs() {
        let s = |x: &str| V::Str(x.into());
        assert_eq!(
            sprintf(
                "%5.2f|%-4d|%q|%x|%t|%%",
                &[
                    V::Float(2.5678),
                    int64(7),
                    s("a\"b"),
                    s("hi"),
                    V::Bool(true)
                ]
            ),
            " 2.57|7   |\"a\\\"b\"|6869|true|%"
        );
        assert_eq!(sprintf("%d %s", &[s("x")]), "%!d(string=x) %!s(MISSING)");
        assert_eq!(sprintf("%d", &[int64(1), int64(2)]), "1%!(EXTRA int64=2)");
        assert_eq!(
            sprintf(
                "%05d|%e|%g",
                &[int64(-42), V::Float(1234.5), V::Float(0.000012)]
            ),
            "-0042|1.234500e+03|1.2e-05"
        );
        assert_eq!(sprintf("%[2]d %[1]d", &[int64(1), int64(2)]), "2 1");
        assert_eq!(sprintf("%[3]d", &[int64(1)]), "%!d(BADINDEX)");
        assert_eq!(
            sprintf("%#08x|%#v", &[int64(255), s("s")]),
            "0x000000ff|\"s\""
        );
    }
}
