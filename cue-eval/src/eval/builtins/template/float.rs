//! Go's `strconv.FormatFloat` for `float64`, which `fmt` uses for every float verb: the
//! decimal forms `e`, `f` and `g` (shortest or with a precision), the hexadecimal form `x`
//! (`0x1.8p+00`) and the binary form `b` (`6755399441055744p-52`).

/// The decimal digits of a float: `0.d1d2d3... × 10^dp`, without trailing zeros (none at all
/// for zero), as Go's `decimalSlice` holds them.
struct Digits {
    d: Vec<u8>,
    dp: i32,
}

impl Digits {
    /// From Rust's scientific form (`1.25e-3`) of a non-negative finite float.
    fn from_sci(s: &str) -> Digits {
        let (mant, exp) = s.split_once('e').unwrap_or((s, "0"));
        let exp: i32 = exp.parse().unwrap_or(0);
        let mut d: Vec<u8> = mant.bytes().filter(u8::is_ascii_digit).collect();
        while d.last() == Some(&b'0') {
            d.pop();
        }
        if d.is_empty() {
            return Digits { d, dp: 0 };
        }
        Digits { d, dp: exp + 1 }
    }

    /// The shortest digits that read back as `f`.
    fn shortest(f: f64) -> Digits {
        Digits::from_sci(&format!("{:e}", f.abs()))
    }

    /// `f` rounded to `n` (at least 1) significant digits.
    fn rounded(f: f64, n: usize) -> Digits {
        Digits::from_sci(&format!("{:.*e}", n.max(1) - 1, f.abs()))
    }

    fn nd(&self) -> i32 {
        self.d.len() as i32
    }

    /// Go's `%e` of these digits with `prec` decimals.
    fn fmt_e(&self, out: &mut String, prec: i32, e: char) {
        out.push(self.d.first().map_or('0', |&c| c as char));
        if prec > 0 {
            out.push('.');
            let have = (self.nd() - 1).clamp(0, prec) as usize;
            out.extend(self.d.iter().skip(1).take(have).map(|&c| c as char));
            out.extend(std::iter::repeat_n('0', prec as usize - have));
        }
        let exp = if self.d.is_empty() { 0 } else { self.dp - 1 };
        push_exp(out, e, exp);
    }

    /// Go's `%f` of these digits with `prec` decimals.
    fn fmt_f(&self, out: &mut String, prec: i32) {
        let digit = |i: i32| -> char {
            usize::try_from(i)
                .ok()
                .and_then(|i| self.d.get(i))
                .map_or('0', |&c| c as char)
        };
        if self.dp > 0 {
            out.extend((0..self.dp).map(digit));
        } else {
            out.push('0');
        }
        if prec > 0 {
            out.push('.');
            out.extend((0..prec).map(|i| digit(self.dp + i)));
        }
    }
}

/// `e+07`, `e-300`: the exponent with its sign and at least two digits.
fn push_exp(out: &mut String, e: char, exp: i32) {
    out.push(e);
    out.push(if exp < 0 { '-' } else { '+' });
    out.push_str(&format!("{:02}", exp.unsigned_abs()));
}

/// `strconv.FormatFloat(f, verb, prec, 64)`; `prec` < 0 asks for the shortest form.
pub(super) fn format_float(f: f64, verb: char, prec: i32) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "+Inf" } else { "-Inf" }.into();
    }
    let mut out = String::new();
    if f.is_sign_negative() {
        out.push('-');
    }
    match verb {
        'b' => fmt_b(&mut out, f),
        'x' | 'X' => fmt_x(&mut out, f, prec, verb),
        'f' if prec >= 0 => out.push_str(&format!("{:.*}", prec as usize, f.abs())),
        _ => fmt_decimal(&mut out, f, verb, prec),
    }
    out
}

/// The `e`, `f` and `g` forms, from the shortest digits or digits rounded to the precision.
fn fmt_decimal(out: &mut String, f: f64, verb: char, prec: i32) {
    let shortest = prec < 0;
    let digs = match (verb, shortest) {
        (_, true) => Digits::shortest(f),
        ('e' | 'E', false) => Digits::rounded(f, prec as usize + 1),
        (_, false) => Digits::rounded(f, prec.max(1) as usize),
    };
    let mut prec = prec;
    if shortest {
        prec = match verb {
            'e' | 'E' => digs.nd() - 1,
            'f' => (digs.nd() - digs.dp).max(0),
            _ => digs.nd(),
        };
    } else if matches!(verb, 'g' | 'G') && prec == 0 {
        prec = 1;
    }
    match verb {
        'e' | 'E' => digs.fmt_e(out, prec, verb),
        'f' => digs.fmt_f(out, prec),
        _ => {
            // `%e` when the exponent is below -4 or from the precision on (6 for the shortest
            // form), `%f` otherwise.
            let mut eprec = prec;
            if eprec > digs.nd() && digs.nd() >= digs.dp {
                eprec = digs.nd();
            }
            if shortest {
                eprec = 6;
            }
            let exp = digs.dp - 1;
            let e = if verb == 'G' { 'E' } else { 'e' };
            if exp < -4 || exp >= eprec {
                digs.fmt_e(out, prec.min(digs.nd()) - 1, e);
            } else {
                let p = if prec > digs.dp { digs.nd() } else { prec };
                digs.fmt_f(out, (p - digs.dp).max(0));
            }
        }
    }
}

/// The mantissa (with the implicit bit) and binary exponent of a finite float:
/// `|f| = mant × 2^(exp - 52)`.
fn mant_exp(f: f64) -> (u64, i32) {
    let bits = f.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i32;
    let mant = bits & ((1 << 52) - 1);
    if exp == 0 {
        (mant, -1022)
    } else {
        (mant | (1 << 52), exp - 1023)
    }
}

/// `%b`: `ddddp±ddd`, the mantissa as a decimal integer and a power of two.
fn fmt_b(out: &mut String, f: f64) {
    let (mant, exp) = mant_exp(f);
    let exp = exp - 52;
    out.push_str(&mant.to_string());
    out.push('p');
    if exp >= 0 {
        out.push('+');
    }
    out.push_str(&exp.to_string());
}

/// `%x`: `0x1.yyyp±dd`, the mantissa in hexadecimal with its leading 1, rounded to `prec`
/// hexadecimal digits (half to even) when one is given.
fn fmt_x(out: &mut String, f: f64, prec: i32, verb: char) {
    let (mut mant, mut exp) = mant_exp(f);
    if mant == 0 {
        exp = 0;
    }
    // The leading 1 at bit 60, four bits above each following hexadecimal digit.
    mant <<= 8;
    while mant != 0 && mant & (1 << 60) == 0 {
        mant <<= 1;
        exp -= 1;
    }
    if (0..15).contains(&prec) {
        let shift = prec as u32 * 4;
        let extra = (mant << shift) & ((1 << 60) - 1);
        mant >>= 60 - shift;
        if extra | (mant & 1) > 1 << 59 {
            mant += 1;
        }
        mant <<= 60 - shift;
        if mant & (1 << 61) != 0 {
            mant >>= 1;
            exp += 1;
        }
    }
    let upper = verb == 'X';
    let hex = |d: u64| {
        let c = char::from_digit(d as u32, 16).unwrap_or('0');
        if upper { c.to_ascii_uppercase() } else { c }
    };
    out.push('0');
    out.push(verb);
    out.push(if mant >> 60 & 1 == 1 { '1' } else { '0' });
    mant <<= 4;
    let ndigits = if prec < 0 {
        if mant != 0 {
            16 - mant.trailing_zeros() as i32 / 4
        } else {
            0
        }
    } else {
        prec
    };
    if ndigits > 0 {
        out.push('.');
        for _ in 0..ndigits {
            out.push(hex(mant >> 60 & 15));
            mant <<= 4;
        }
    }
    push_exp(out, if upper { 'P' } else { 'p' }, exp);
}

#[cfg(test)]
mod tests {
    use super::format_float as ff;

    /// Expected texts: Go's `strconv.FormatFloat` (through `printf` in `cue export` of v0.17.1).
    #[test]
    fn floats_as_strconv_formats_them() {
        assert_eq!(ff(3.0, 'g', -1), "3");
        assert_eq!(ff(1e6, 'g', -1), "1e+06");
        assert_eq!(ff(0.00001, 'g', -1), "1e-05");
        assert_eq!(ff(1234567.0, 'g', -1), "1.234567e+06");
        assert_eq!(ff(100.0, 'g', 3), "100");
        assert_eq!(ff(1234.0, 'g', 3), "1.23e+03");
        assert_eq!(ff(0.0, 'e', 6), "0.000000e+00");
        assert_eq!(ff(-1234.5, 'e', -1), "-1.2345e+03");
        assert_eq!(ff(1.5, 'x', -1), "0x1.8p+00");
        assert_eq!(ff(1.0, 'x', 2), "0x1.00p+00");
        assert_eq!(ff(0.0, 'x', -1), "0x0p+00");
        assert_eq!(ff(1.0, 'b', -1), "4503599627370496p-52");
        assert_eq!(ff(1e21, 'f', -1), "1000000000000000000000");
    }
}
