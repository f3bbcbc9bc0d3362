//! CUE numbers, computed exactly as CUE v0.17.1 computes them.
//!
//! The official implementation keeps every number as a `github.com/cockroachdb/apd/v3` decimal
//! (a sign, a coefficient of any size and a 32-bit exponent: the value is
//! `±coefficient × 10^exponent`) beside a kind, `int` or `float`. This module reproduces apd's
//! algorithms in CUE's context (`internal.BaseContext`: precision 34, rounding half-up, adjusted
//! exponents limited to ±100000), because the exact digits show in the output:
//!
//! * A literal keeps the coefficient and exponent it was written with: `1.50` is (150, −2) and
//!   prints `1.50`, `1e2` is (1, 2) and prints `1E+2` ([`Num::parse_literal`] is a port of
//!   `cue/literal.ParseNum`).
//! * `+`, `-` and `*` compute the exact result and round it half-up to 34 significant digits.
//!   This applies to integers too (CUE calls the same apd context for `int op int`), so an integer
//!   result of more than 34 digits is rounded and printed with an exponent, e.g.
//!   `1.000000000000000000000000000000000E+35`.
//! * `/` is apd's `Quo` at precision 34 followed by CUE's `reduceKeepingFloats`: trailing zeros
//!   are stripped, but a quotient whose exponent was negative keeps one fractional digit, so
//!   `10/2` is `5.0` and `2.0/3.0` is `0.6666666666666666666666666666666667`.
//! * The builtins `div`, `mod`, `quo` and `rem` work on integers with Go's `big.Int` semantics:
//!   `Div`/`Mod` are Euclidean (the modulus is never negative), `Quo`/`Rem` truncate.
//! * [`Num::to_g_string`] is apd's `String()` (the GDA *to-scientific-string*), used for JSON and
//!   interpolation; [`Num::to_cue_string`] adds what `cue export --out cue` and `cue/format` do.
//!
//! Apd's sign is a separate flag, so a negative zero exists: `-1 * 0` is `-0` (as in apd), while
//! negation (`-x`, [`Num::neg`]) and a zero sum are never negative.
//!
//! Representation: a coefficient that fits in a `u128` (every rounded result does, since
//! 10^34 < 2^128) is stored inline and its arithmetic runs on machine integers without allocating;
//! larger coefficients, which only literals and intermediate results produce, live in a shared
//! `BigUint`. `Num` is 24 bytes and cheap to clone.

use std::cmp::Ordering;
use std::fmt;
use std::sync::Arc;

use num_bigint::{BigInt, BigUint, Sign};
use num_integer::Integer;
use num_traits::{ToPrimitive, Zero};

/// Significant digits kept by `+`, `-`, `*` and `/` (CUE's `internal.BaseContext`).
pub const PRECISION: u32 = 34;
/// The largest adjusted exponent (`exponent + digits − 1`) apd allows.
pub const MAX_EXPONENT: i64 = 100_000;
/// The smallest adjusted exponent apd allows.
pub const MIN_EXPONENT: i64 = -100_000;
/// `cue/literal` multiplies SI and IEC multipliers in an apd context of precision 24.
const MULTIPLIER_PRECISION: u32 = 24;
/// Integer conversions refuse exponents beyond this, rather than build a gigantic integer.
const MAX_INTEGRAL_EXPONENT: i64 = 2 * MAX_EXPONENT;

/// An exact decimal number: `±coefficient × 10^exponent`, with apd's semantics.
///
/// There is deliberately no `PartialEq`: `1.0` and `1.00` are equal numbers but print
/// differently. Compare values with [`Num::cmp`].
#[derive(Clone, Debug)]
pub struct Num(Repr);

/// Whether a number is an `int` or a `float` in CUE's type system. The kind is not part of
/// [`Num`]: the evaluator keeps it beside the value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NumKind {
    Int,
    Float,
}

/// Why an arithmetic operation failed. `Display` gives apd's wording, which CUE prints after
/// `failed arithmetic: ` for `+ - * /`, and after `error in call to div: ` for the builtins.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NumError {
    /// A non-zero number divided by zero (`1.0 / 0`, and `div(x, 0)` for any `x`).
    DivisionByZero,
    /// Zero divided by zero (`0 / 0`).
    DivisionUndefined,
    /// A result whose adjusted exponent lies outside ±100000.
    Overflow,
    /// Any other failure, with apd's message.
    Invalid(String),
}

impl fmt::Display for NumError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NumError::DivisionByZero => f.write_str("division by zero"),
            NumError::DivisionUndefined => f.write_str("division undefined"),
            NumError::Overflow => f.write_str("exponent out of range"),
            NumError::Invalid(msg) => f.write_str(msg),
        }
    }
}

impl std::error::Error for NumError {}

impl Num {
    /// Parses a number literal as written in CUE source (a port of `cue/literal.ParseNum`, which
    /// also serves `strconv.ParseNumber`, so a leading `-` is accepted).
    ///
    /// Integer literals, including those with a multiplier (`1K` = 1000, `1Ki` = 1024,
    /// `1.5K` = 1500), are [`NumKind::Int`]; a literal with a `.` or an exponent is
    /// [`NumKind::Float`]. The coefficient and exponent are kept as written: `1.50` is (150, −2),
    /// `1e2` is (1, 2), `5.` is (5, 0). A legacy octal `0755` is 493, as in CUE. A multiplier whose
    /// product is not an integer (`1.3Ki`) is an error, as in CUE's implementation (the spec says
    /// the product is truncated). The error texts are CUE's.
    pub fn parse_literal(text: &str) -> Result<(Num, NumKind), String> {
        let mut scan = LiteralScanner::new(text);
        scan.parse()?;
        let num = match scan.value.take() {
            Some(num) => num,
            None => scan.decimal()?,
        };
        let kind = if scan.is_float {
            NumKind::Float
        } else {
            NumKind::Int
        };
        Ok((num, kind))
    }

    /// Parses a decimal string as apd's `SetString` does: an optional sign, digits with an
    /// optional `.`, and an optional `e`/`E` exponent (`-1.5e3`, `.5`, `5.`). No rounding is
    /// applied. Infinities and NaNs are refused.
    pub fn from_decimal_str(text: &str) -> Result<Num, String> {
        let (neg, mag, exp) = parse_apd_decimal(text)?;
        Ok(Num::from_mag(neg, mag, exp))
    }

    /// The integer `v`.
    pub fn from_i64(v: i64) -> Num {
        Num::small(v < 0, u128::from(v.unsigned_abs()), 0)
    }

    /// The integer `v`.
    pub fn from_i128(v: i128) -> Num {
        Num::small(v < 0, v.unsigned_abs(), 0)
    }

    /// The integer `v`.
    pub fn from_bigint(v: BigInt) -> Num {
        let (sign, mag) = v.into_parts();
        Num::from_mag(sign == Sign::Minus, Mag::big(mag), 0)
    }

    /// `±coefficient × 10^exponent`, with the sign flag as given (so `-0` can be built).
    pub fn from_parts(negative: bool, coefficient: BigUint, exponent: i32) -> Num {
        Num::from_mag(negative, Mag::big(coefficient), i64::from(exponent))
    }

    /// The exact value of a finite `f64`, with the shortest digits that round-trip (apd's
    /// `SetFloat64`); `None` for infinities and NaN.
    #[cfg(test)]
    pub fn from_f64(v: f64) -> Option<Num> {
        if !v.is_finite() {
            return None;
        }
        Num::from_decimal_str(&format!("{v:e}")).ok()
    }

    /// The coefficient's magnitude.
    pub fn coefficient(&self) -> BigUint {
        self.mag().to_big()
    }

    /// The exponent: the value is `±coefficient × 10^exponent`.
    pub fn exponent(&self) -> i32 {
        match self.0 {
            Repr::Small { exp, .. } | Repr::Big { exp, .. } => exp,
        }
    }

    /// apd's sign flag, which is also set for a negative zero.
    pub fn is_sign_negative(&self) -> bool {
        match self.0 {
            Repr::Small { neg, .. } | Repr::Big { neg, .. } => neg,
        }
    }

    /// `self + o`, rounded to 34 significant digits. apd's exponent limits are not enforced (the
    /// exponent saturates at the `i32` range); use [`Num::checked_add`] to get CUE's error when a
    /// result leaves them.
    pub fn add(&self, o: &Num) -> Num {
        // Unchecked, the operation cannot fail.
        add_impl(self, o, false, false).unwrap_or_else(|_| Num::from_i64(0))
    }

    /// `self - o`, rounded to 34 significant digits (see [`Num::add`]).
    pub fn sub(&self, o: &Num) -> Num {
        add_impl(self, o, true, false).unwrap_or_else(|_| Num::from_i64(0))
    }

    /// `self * o`, rounded to 34 significant digits (see [`Num::add`]).
    pub fn mul(&self, o: &Num) -> Num {
        mul_impl(self, o, false).unwrap_or_else(|_| Num::from_i64(0))
    }

    /// `self + o` as apd computes it, failing where apd fails: when a result's adjusted exponent
    /// leaves ±100000, or when the operands' exponents are more than 100000 apart.
    pub fn checked_add(&self, o: &Num) -> Result<Num, NumError> {
        add_impl(self, o, false, true)
    }

    /// `self * o` as apd computes it (see [`Num::checked_add`]).
    pub fn checked_mul(&self, o: &Num) -> Result<Num, NumError> {
        mul_impl(self, o, true)
    }

    /// CUE's `/`: apd's `Quo` at precision 34, then `reduceKeepingFloats`. The result is always a
    /// float: `10/2` is `5.0`, `1.0T/2.0` is `5.0E+11`, `2.0/3.0` is
    /// `0.6666666666666666666666666666666667`. `x/0` is [`NumError::DivisionByZero`] and `0/0`
    /// [`NumError::DivisionUndefined`].
    pub fn quo(&self, o: &Num) -> Result<Num, NumError> {
        quo_impl(self, o)
    }

    /// The builtin `div`: Euclidean division, as Go's `big.Int.Div` (`div(-5, 3)` is −2).
    pub fn int_div(&self, o: &Num) -> Result<Num, NumError> {
        int_op(self, o, IntOp::Div)
    }

    /// The builtin `mod`: Euclidean modulus, never negative, as Go's `big.Int.Mod`
    /// (`mod(-5, 3)` is 1).
    pub fn int_mod(&self, o: &Num) -> Result<Num, NumError> {
        int_op(self, o, IntOp::Mod)
    }

    /// The builtin `quo`: division truncated toward zero, as Go's `big.Int.Quo`
    /// (`quo(-5, 3)` is −1).
    pub fn int_quo(&self, o: &Num) -> Result<Num, NumError> {
        int_op(self, o, IntOp::Quo)
    }

    /// The builtin `rem`: the remainder of [`Num::int_quo`], with the sign of `self`, as Go's
    /// `big.Int.Rem` (`rem(-5, 3)` is −2).
    pub fn int_rem(&self, o: &Num) -> Result<Num, NumError> {
        int_op(self, o, IntOp::Rem)
    }

    /// `-self`, as apd's `Decimal.Neg`: the exponent is kept and zero stays non-negative.
    pub fn neg(&self) -> Num {
        let flag = !self.is_zero() && !self.is_sign_negative();
        self.with_sign(flag)
    }

    /// `|self|`, as apd's `Decimal.Abs`.
    pub fn abs(&self) -> Num {
        self.with_sign(false)
    }

    /// Whether the value is zero (of either sign).
    pub fn is_zero(&self) -> bool {
        match &self.0 {
            Repr::Small { lo, hi, .. } => *lo == 0 && *hi == 0,
            Repr::Big { .. } => false,
        }
    }

    /// −1, 0 or 1; zero is 0 whatever its sign flag.
    pub fn sign(&self) -> i32 {
        if self.is_zero() {
            0
        } else if self.is_sign_negative() {
            -1
        } else {
            1
        }
    }

    /// Compares by numeric value: `2.0` equals `2`, `-0` equals `0`.
    // Not `Ord::cmp`: `Num` has no `Eq`, since equal values can print differently.
    #[allow(clippy::should_implement_trait)]
    pub fn cmp(&self, o: &Num) -> Ordering {
        let (sa, sb) = (self.sign(), o.sign());
        if sa != sb || sa == 0 {
            return sa.cmp(&sb);
        }
        let ord = cmp_abs(self, o);
        if sa < 0 { ord.reverse() } else { ord }
    }

    /// Whether the values are numerically equal.
    #[cfg(test)]
    pub fn num_eq(&self, o: &Num) -> bool {
        self.cmp(o) == Ordering::Equal
    }

    /// Whether the value is a whole number (`1.0` is, `1.5` is not).
    pub fn is_integral(&self) -> bool {
        if let Some((_, m, e)) = self.small_parts() {
            if e >= 0 || m == 0 {
                return true;
            }
            let k = e.unsigned_abs() as usize;
            return k < POW10.len() && m % POW10[k] == 0;
        }
        let (_, m, e) = self.parts();
        if e >= 0 {
            return true;
        }
        let k = -e;
        k <= m.digits() && m.to_big().is_multiple_of(&pow10_big(k))
    }

    /// The value as an `i64`, if it is a whole number in range.
    pub fn to_i64(&self) -> Option<i64> {
        if let Some(v) = self.small_integral() {
            return i64::try_from(v).ok();
        }
        self.to_bigint()?.to_i64()
    }

    /// The value as a `u64`, if it is a whole number in range (`-0` is 0).
    #[cfg(test)]
    pub fn to_u64(&self) -> Option<u64> {
        if let Some(v) = self.small_integral() {
            return u64::try_from(v).ok();
        }
        self.to_bigint()?.to_u64()
    }

    /// The nearest `f64` (as Go's `strconv.ParseFloat` of the decimal string; out of range gives
    /// an infinity).
    pub fn to_f64(&self) -> f64 {
        if let Some((neg, m, e)) = self.small_parts()
            && m < (1 << 53)
            && e.unsigned_abs() < POW10_F64.len() as u32
        {
            // Both factors are exact (m < 2^53), so one IEEE operation rounds correctly.
            let v = m as f64;
            let p = POW10_F64[e.unsigned_abs() as usize];
            let v = if e >= 0 { v * p } else { v / p };
            return if neg { -v } else { v };
        }
        let sign = if self.is_sign_negative() { "-" } else { "" };
        let text = format!("{sign}{}e{}", self.coeff_string(), self.exponent());
        text.parse().unwrap_or(f64::NAN)
    }

    /// The value as a big integer, if it is a whole number (and its exponent is not absurdly
    /// large).
    pub fn to_bigint(&self) -> Option<BigInt> {
        if !self.is_integral() {
            return None;
        }
        let (neg, m, e) = self.parts();
        let mag = if m.is_zero() {
            BigUint::zero()
        } else if e >= 0 {
            if e > MAX_INTEGRAL_EXPONENT {
                return None;
            }
            m.mul_pow10(e).to_big()
        } else {
            m.div_rem(&Mag::pow10(-e)).0.to_big()
        };
        Some(BigInt::from_biguint(sign_of(neg), mag))
    }

    /// apd's `String()`, `Text('G')`: the GDA *to-scientific-string*. Plain notation when the
    /// exponent is ≤ 0 and the adjusted exponent ≥ −6, otherwise `d.dddE±n`: `1.0`, `1E+2`,
    /// `1E-7`, `100`, `0.000001`, `1.5E+3`, `1.23E+4`, `0.00`, `-0`. This is how numbers appear
    /// in JSON and in interpolations.
    pub fn to_g_string(&self) -> String {
        let digits = self.coeff_string();
        let exp = i64::from(self.exponent());
        let nd = digits.len() as i64;
        let adj = exp + nd - 1;
        let mut out = String::with_capacity(digits.len() + 8);
        if self.is_sign_negative() {
            out.push('-');
        }
        if exp <= 0 && adj >= -6 {
            if exp == 0 {
                out.push_str(&digits);
            } else if -exp >= nd {
                out.push_str("0.");
                for _ in 0..(-exp - nd) {
                    out.push('0');
                }
                out.push_str(&digits);
            } else {
                let split = (nd + exp) as usize;
                out.push_str(&digits[..split]);
                out.push('.');
                out.push_str(&digits[split..]);
            }
        } else {
            out.push_str(&digits[..1]);
            if digits.len() > 1 {
                out.push('.');
                out.push_str(&digits[1..]);
            }
            out.push('E');
            out.push(if adj < 0 { '-' } else { '+' });
            out.push_str(&adj.unsigned_abs().to_string());
        }
        out
    }

    /// The number as `cue eval` and `cue export --out cue` print it: the G string, where a float
    /// without `.` or exponent gets `.0` (the exporter appends `.`, which the formatter turns into
    /// `.0`) and `E` becomes `e` (`cue/format`): `5.0`, `1e+2`, `5.0e+11`.
    pub fn to_cue_string(&self, kind: NumKind) -> String {
        let mut s = self.to_g_string();
        if kind == NumKind::Float && !s.contains(['.', 'E']) {
            s.push_str(".0");
        }
        if s.contains('E') {
            s = s.replace('E', "e");
        }
        s
    }
}

impl fmt::Display for Num {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_g_string())
    }
}

// ---------------------------------------------------------------------------------------------
// Representation.

/// The coefficient inline (split in two `u64`s so that `Num` is 24 bytes) or, when it exceeds a
/// `u128`, shared on the heap. A `Big` coefficient is always larger than `u128::MAX`.
#[derive(Clone)]
enum Repr {
    Small {
        lo: u64,
        hi: u64,
        exp: i32,
        neg: bool,
    },
    Big {
        mag: Arc<BigUint>,
        exp: i32,
        neg: bool,
    },
}

impl fmt::Debug for Repr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (neg, exp) = match self {
            Repr::Small { exp, neg, .. } | Repr::Big { exp, neg, .. } => (*neg, *exp),
        };
        let sign = if neg { "-" } else { "" };
        match self {
            Repr::Small { lo, hi, .. } => {
                write!(f, "{sign}{}e{exp}", u128::from(*hi) << 64 | u128::from(*lo))
            }
            Repr::Big { mag, .. } => write!(f, "{sign}{mag}e{exp}"),
        }
    }
}

impl Num {
    #[inline]
    fn small(neg: bool, mag: u128, exp: i32) -> Num {
        Num(Repr::Small {
            lo: mag as u64,
            hi: (mag >> 64) as u64,
            exp,
            neg,
        })
    }

    /// Builds a number from a normalised magnitude; the exponent saturates at the `i32` range
    /// (only reachable by the unchecked operations).
    fn from_mag(neg: bool, mag: Mag, exp: i64) -> Num {
        let exp = exp.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32;
        match mag {
            Mag::S(v) => Num::small(neg, v, exp),
            Mag::B(b) => Num(Repr::Big {
                mag: Arc::new(b),
                exp,
                neg,
            }),
        }
    }

    #[inline]
    fn small_parts(&self) -> Option<(bool, u128, i32)> {
        match self.0 {
            Repr::Small { lo, hi, exp, neg } => {
                Some((neg, u128::from(hi) << 64 | u128::from(lo), exp))
            }
            Repr::Big { .. } => None,
        }
    }

    fn mag(&self) -> Mag {
        match &self.0 {
            Repr::Small { lo, hi, .. } => Mag::S(u128::from(*hi) << 64 | u128::from(*lo)),
            Repr::Big { mag, .. } => Mag::B(BigUint::clone(mag)),
        }
    }

    fn parts(&self) -> (bool, Mag, i64) {
        (
            self.is_sign_negative(),
            self.mag(),
            i64::from(self.exponent()),
        )
    }

    fn with_sign(&self, neg: bool) -> Num {
        let mut out = self.clone();
        match &mut out.0 {
            Repr::Small { neg: n, .. } | Repr::Big { neg: n, .. } => *n = neg,
        }
        out
    }

    fn coeff_string(&self) -> String {
        match &self.0 {
            Repr::Small { lo, hi, .. } => (u128::from(*hi) << 64 | u128::from(*lo)).to_string(),
            Repr::Big { mag, .. } => mag.to_string(),
        }
    }

    /// The exact integer value of an inline number, when it is integral and fits an `i128`.
    fn small_integral(&self) -> Option<i128> {
        let (neg, m, e) = self.small_parts()?;
        let v = if m == 0 {
            0
        } else if e >= 0 {
            m.checked_mul(*POW10.get(e as usize)?)?
        } else {
            let p = *POW10.get(e.unsigned_abs() as usize)?;
            if m % p != 0 {
                return None;
            }
            m / p
        };
        let v = i128::try_from(v).ok()?;
        Some(if neg { -v } else { v })
    }

    /// The value rounded half-up to an integer (apd's `RoundToIntegralValue`), for inline numbers
    /// whose result fits an `i128` without reaching `i128::MIN`.
    fn small_rounded_int(&self) -> Option<i128> {
        let (neg, m, e) = self.small_parts()?;
        let v = if e >= 0 {
            if m == 0 {
                0
            } else {
                m.checked_mul(*POW10.get(e as usize)?)?
            }
        } else {
            match POW10.get(e.unsigned_abs() as usize) {
                // m < 10^39, so a divisor of 10^39 or more leaves less than one half.
                None => 0,
                Some(&p) => {
                    let (q, r) = (m / p, m % p);
                    if r != 0 && r >= p - r { q + 1 } else { q }
                }
            }
        };
        let v = i128::try_from(v).ok()?;
        Some(if neg { -v } else { v })
    }

    /// [`Num::small_rounded_int`] for any number, as a big integer.
    fn rounded_bigint(&self) -> Result<BigInt, NumError> {
        let (neg, m, e) = self.parts();
        let mag = if m.is_zero() {
            Mag::S(0)
        } else if e >= 0 {
            if e > MAX_INTEGRAL_EXPONENT {
                return Err(NumError::Overflow);
            }
            m.mul_pow10(e)
        } else if -e > m.digits() {
            Mag::S(0)
        } else {
            let p = Mag::pow10(-e);
            let (q, r) = m.div_rem(&p);
            if r.at_least_half_of(&p) {
                q.add(&Mag::S(1))
            } else {
                q
            }
        };
        Ok(BigInt::from_biguint(sign_of(neg), mag.to_big()))
    }
}

fn sign_of(neg: bool) -> Sign {
    if neg { Sign::Minus } else { Sign::Plus }
}

const POW10: [u128; 39] = {
    let mut t = [1u128; 39];
    let mut i = 1;
    while i < t.len() {
        t[i] = t[i - 1] * 10;
        i += 1;
    }
    t
};

const POW10_F64: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// The number of decimal digits of `v`; zero has one, as in apd.
#[inline]
fn digits_u128(v: u128) -> u32 {
    if v == 0 {
        return 1;
    }
    let bits = 128 - v.leading_zeros();
    // bits·log10(2) ≤ digits ≤ that + 1; 1233/4096 approximates log10(2) from below.
    let t = (bits * 1233) >> 12;
    t + u32::from(v >= POW10[t as usize])
}

fn pow10_big(n: i64) -> BigUint {
    BigUint::from(10u8).pow(u32::try_from(n).unwrap_or(u32::MAX))
}

/// A coefficient magnitude while computing: inline when it fits a `u128` (`Mag::big` keeps it
/// so), big otherwise.
#[derive(Clone, Debug)]
enum Mag {
    S(u128),
    B(BigUint),
}

impl Mag {
    fn big(b: BigUint) -> Mag {
        match b.to_u128() {
            Some(v) => Mag::S(v),
            None => Mag::B(b),
        }
    }

    fn pow10(n: i64) -> Mag {
        debug_assert!(n >= 0);
        match POW10.get(n as usize) {
            Some(&p) if n >= 0 => Mag::S(p),
            _ => Mag::B(pow10_big(n)),
        }
    }

    fn to_big(&self) -> BigUint {
        match self {
            Mag::S(v) => BigUint::from(*v),
            Mag::B(b) => b.clone(),
        }
    }

    fn is_zero(&self) -> bool {
        matches!(self, Mag::S(0))
    }

    fn digits(&self) -> i64 {
        match self {
            Mag::S(v) => i64::from(digits_u128(*v)),
            Mag::B(b) => b.to_string().len() as i64,
        }
    }

    /// `self × 10^n` for `n ≥ 0`.
    fn mul_pow10(&self, n: i64) -> Mag {
        match self {
            _ if n == 0 => self.clone(),
            Mag::S(0) => Mag::S(0),
            Mag::S(v) => match POW10.get(n as usize).and_then(|p| v.checked_mul(*p)) {
                Some(r) => Mag::S(r),
                None => Mag::B(BigUint::from(*v) * pow10_big(n)),
            },
            Mag::B(b) => Mag::B(b * pow10_big(n)),
        }
    }

    fn add(&self, o: &Mag) -> Mag {
        if let (Mag::S(a), Mag::S(b)) = (self, o)
            && let Some(s) = a.checked_add(*b)
        {
            return Mag::S(s);
        }
        Mag::B(self.to_big() + o.to_big())
    }

    /// `self − o`, for `self ≥ o`.
    fn sub(&self, o: &Mag) -> Mag {
        match (self, o) {
            (Mag::S(a), Mag::S(b)) => Mag::S(a - b),
            _ => Mag::big(self.to_big() - o.to_big()),
        }
    }

    fn mul(&self, o: &Mag) -> Mag {
        if let (Mag::S(a), Mag::S(b)) = (self, o)
            && let Some(p) = a.checked_mul(*b)
        {
            return Mag::S(p);
        }
        Mag::big(self.to_big() * o.to_big())
    }

    fn cmp(&self, o: &Mag) -> Ordering {
        match (self, o) {
            (Mag::S(a), Mag::S(b)) => a.cmp(b),
            (Mag::S(_), Mag::B(_)) => Ordering::Less,
            (Mag::B(_), Mag::S(_)) => Ordering::Greater,
            (Mag::B(a), Mag::B(b)) => a.cmp(b),
        }
    }

    /// Truncated quotient and remainder; `o` is not zero.
    fn div_rem(&self, o: &Mag) -> (Mag, Mag) {
        match (self, o) {
            (Mag::S(a), Mag::S(b)) => (Mag::S(a / b), Mag::S(a % b)),
            _ => {
                let (q, r) = self.to_big().div_rem(&o.to_big());
                (Mag::big(q), Mag::big(r))
            }
        }
    }

    /// Whether this remainder is non-zero and at least half of `divisor` (apd rounds half-up).
    fn at_least_half_of(&self, divisor: &Mag) -> bool {
        match (self, divisor) {
            (Mag::S(0), _) => false,
            (Mag::S(r), Mag::S(d)) => *r >= d - r,
            _ => self.to_big() * 2u8 >= divisor.to_big(),
        }
    }
}

/// Rounds a magnitude of `nd` digits to `prec` significant digits, half-up (apd's `Round`).
/// Returns the new magnitude, how much the exponent grows, and the new number of digits.
fn round_mag(mag: Mag, nd: i64, prec: u32) -> (Mag, i64, i64) {
    let prec = i64::from(prec);
    if nd <= prec {
        return (mag, 0, nd);
    }
    let mut diff = nd - prec;
    let p = Mag::pow10(diff);
    let (mut q, r) = mag.div_rem(&p);
    if r.at_least_half_of(&p) {
        q = q.add(&Mag::S(1));
        // 99…9 + 1 gained a digit: drop the new trailing zero (apd's roundAddOne).
        if q.digits() > prec {
            q = q.div_rem(&Mag::S(10)).0;
            diff += 1;
        }
    }
    (q, diff, prec)
}

fn adjusted_in_range(adj: i64) -> bool {
    (MIN_EXPONENT..=MAX_EXPONENT).contains(&adj)
}

/// Rounds an exact result to [`PRECISION`] digits and checks apd's exponent limits, both before
/// rounding (apd's `setExponent` and subnormal check) and after.
fn finish(neg: bool, mag: Mag, exp: i64, checked: bool) -> Result<Num, NumError> {
    let nd = mag.digits();
    let pre_adj = exp + nd - 1;
    let (mag, grow, nd) = round_mag(mag, nd, PRECISION);
    let exp = exp + grow;
    if checked && !(adjusted_in_range(pre_adj) && adjusted_in_range(exp + nd - 1)) {
        return Err(NumError::Overflow);
    }
    Ok(Num::from_mag(neg, mag, exp))
}

// ---------------------------------------------------------------------------------------------
// Addition and subtraction (apd `Context.Add`/`Sub`: align the exponents, add exactly, round).

/// apd's sign rule for `±a ± b` on aligned magnitudes: the sign of the larger, and a zero result
/// is negative only when both operands were.
fn combine(xn: bool, a: &Mag, yn: bool, b: &Mag) -> (bool, Mag) {
    if xn == yn {
        return (xn, a.add(b));
    }
    match a.cmp(b) {
        Ordering::Greater => (xn, a.sub(b)),
        Ordering::Equal => (false, Mag::S(0)),
        Ordering::Less => (!xn, b.sub(a)),
    }
}

fn add_impl(x: &Num, y: &Num, subtract: bool, checked: bool) -> Result<Num, NumError> {
    let (xe, ye) = (i64::from(x.exponent()), i64::from(y.exponent()));
    if checked && (xe - ye).abs() > MAX_EXPONENT {
        // apd's `upscale` refuses to align such exponents.
        return Err(NumError::Invalid("add: exponent out of range".into()));
    }
    // Fast path: inline coefficients whose alignment fits a u128.
    if let (Some((xn, a, _)), Some((yn, b, _))) = (x.small_parts(), y.small_parts()) {
        let e = xe.min(ye);
        let scale = |v: u128, n: i64| -> Option<u128> {
            if n == 0 || v == 0 {
                Some(v)
            } else {
                v.checked_mul(*POW10.get(n as usize)?)
            }
        };
        if let (Some(a), Some(b)) = (scale(a, xe - e), scale(b, ye - e)) {
            let yn = yn != subtract;
            let combined = if xn == yn {
                a.checked_add(b).map(|s| (xn, s))
            } else {
                Some(match a.cmp(&b) {
                    Ordering::Greater => (xn, a - b),
                    Ordering::Equal => (false, 0),
                    Ordering::Less => (!xn, b - a),
                })
            };
            if let Some((neg, m)) = combined {
                return finish(neg, Mag::S(m), e, checked);
            }
        }
    }
    add_slow(x, y, subtract, checked)
}

fn add_slow(x: &Num, y: &Num, subtract: bool, checked: bool) -> Result<Num, NumError> {
    let (xn, mut xm, mut xe) = x.parts();
    let (yn, mut ym, mut ye) = y.parts();
    let yn = yn != subtract;
    // apd aligns both operands on the smaller exponent, which can take a power of ten as large
    // as the exponents are far apart. When one operand lies entirely below the digits that
    // rounding to 34 digits keeps, only its sign and that it is not zero can change the result
    // (through the rounding of the discarded part), so it is replaced by a token of the same sign
    // just below the larger operand. This keeps the work bounded by the operands' digit counts.
    match (xm.is_zero(), ym.is_zero()) {
        (true, true) => {}
        (true, false) => xe = lift_zero_exponent(xe, &ym, ye),
        (false, true) => ye = lift_zero_exponent(ye, &xm, xe),
        (false, false) => {
            let xadj = xe + xm.digits() - 1;
            let yadj = ye + ym.digits() - 1;
            if xadj >= yadj {
                shrink_tail(xe, xadj, &mut ym, &mut ye, yadj);
            } else {
                shrink_tail(ye, yadj, &mut xm, &mut xe, xadj);
            }
        }
    }
    let e = xe.min(ye);
    let a = xm.mul_pow10(xe - e);
    let b = ym.mul_pow10(ye - e);
    let (neg, m) = combine(xn, &a, yn, &b);
    finish(neg, m, e, checked)
}

/// A zero far below a non-zero operand only pads that operand with zeros that rounding drops
/// again, so any exponent well below the rounding point gives the same result.
fn lift_zero_exponent(zero_exp: i64, other: &Mag, other_exp: i64) -> i64 {
    let floor = other_exp + other.digits() - 1 - 40;
    zero_exp.max(floor)
}

/// Replaces the operand `lo` by a one-digit token of the same sign when it lies entirely below
/// both the lowest digit of the other operand (`hi_exp`) and three digits under the rounding
/// point of any result (the result's leading digit is at `hi_adj − 1` or above).
fn shrink_tail(hi_exp: i64, hi_adj: i64, lo: &mut Mag, lo_exp: &mut i64, lo_adj: i64) {
    let limit = hi_exp.min(hi_adj - 36) - 1;
    if lo_adj < limit {
        *lo = Mag::S(1);
        *lo_exp = limit - 1;
    }
}

// ---------------------------------------------------------------------------------------------
// Multiplication (apd `Context.Mul`: multiply the coefficients, add the exponents, round).

fn mul_impl(x: &Num, y: &Num, checked: bool) -> Result<Num, NumError> {
    let (xe, ye) = (i64::from(x.exponent()), i64::from(y.exponent()));
    let neg = x.is_sign_negative() != y.is_sign_negative();
    if checked && !(adjusted_in_range(xe) && adjusted_in_range(ye)) {
        return Err(NumError::Overflow);
    }
    let inline = x
        .small_parts()
        .zip(y.small_parts())
        .and_then(|((_, a, _), (_, b, _))| a.checked_mul(b));
    let product = match inline {
        Some(p) => Mag::S(p),
        None => x.mag().mul(&y.mag()),
    };
    finish(neg, product, xe + ye, checked)
}

// ---------------------------------------------------------------------------------------------
// Division (apd v3 `Context.Quo`, then CUE's `reduceKeepingFloats`).

fn quo_impl(x: &Num, y: &Num) -> Result<Num, NumError> {
    if y.is_zero() {
        return Err(if x.is_zero() {
            NumError::DivisionUndefined
        } else {
            NumError::DivisionByZero
        });
    }
    let neg = x.is_sign_negative() != y.is_sign_negative();
    let shift = i64::from(x.exponent()) - i64::from(y.exponent());
    if x.is_zero() {
        if !adjusted_in_range(shift) {
            return Err(NumError::Overflow);
        }
        return Ok(reduce_keeping_floats(neg, Mag::S(0), shift));
    }
    let (a, b) = (x.mag(), y.mag());
    // Scale so that the quotient has exactly PRECISION digits: apd first brings the dividend to
    // [divisor, 10·divisor) (adjCoeffs), then appends PRECISION − 1 zeros. Only the ratio matters,
    // so the zeros go on whichever side keeps the numbers small.
    let nd_diff = a.digits() - b.digits();
    let a1 = a.mul_pow10((-nd_diff).max(0));
    let b1 = b.mul_pow10(nd_diff.max(0));
    let adj_coeffs = -nd_diff + i64::from(a1.cmp(&b1) == Ordering::Less);
    let s = adj_coeffs + i64::from(PRECISION) - 1;
    let (num, den) = if s >= 0 {
        (a.mul_pow10(s), b)
    } else {
        (a, b.mul_pow10(-s))
    };
    let (mut q, r) = num.div_rem(&den);
    if r.at_least_half_of(&den) {
        // apd does not re-round a carry to 10^34 here; reducing below removes its zeros anyway.
        q = q.add(&Mag::S(1));
    }
    let exp = shift - s;
    if !adjusted_in_range(exp + q.digits() - 1) {
        return Err(NumError::Overflow);
    }
    Ok(reduce_keeping_floats(neg, q, exp))
}

/// CUE's `reduceKeepingFloats`: apd v3's `Reduce` (strip every trailing zero; a zero becomes
/// `0` with exponent 0 and no sign), then put one zero back if the number had decimal places
/// and lost them all, so that `3.000` becomes `3.0` and `5.000E+5` becomes `5.0E+5`.
fn reduce_keeping_floats(neg: bool, mag: Mag, exp: i64) -> Num {
    let old_exp = exp;
    if mag.is_zero() {
        return Num::small(false, 0, if old_exp < 0 { -1 } else { 0 });
    }
    let (mag, exp) = strip_zeros(mag, exp);
    if old_exp < 0 && exp >= 0 {
        Num::from_mag(neg, mag.mul_pow10(1), exp - 1)
    } else {
        Num::from_mag(neg, mag, exp)
    }
}

/// Strips the trailing zeros of a non-zero magnitude.
fn strip_zeros(mag: Mag, mut exp: i64) -> (Mag, i64) {
    match mag {
        Mag::S(mut v) => {
            while v % 10_000 == 0 {
                v /= 10_000;
                exp += 4;
            }
            while v % 10 == 0 {
                v /= 10;
                exp += 1;
            }
            (Mag::S(v), exp)
        }
        Mag::B(b) => {
            let zeros = b
                .to_string()
                .bytes()
                .rev()
                .take_while(|&c| c == b'0')
                .count() as i64;
            let m = Mag::B(b).div_rem(&Mag::pow10(zeros)).0;
            (m, exp + zeros)
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Integer division (CUE `intDivOp`: round both operands to integers, then Go's big.Int).

#[derive(Clone, Copy)]
enum IntOp {
    Div,
    Mod,
    Quo,
    Rem,
}

fn int_op(x: &Num, y: &Num, op: IntOp) -> Result<Num, NumError> {
    if y.is_zero() {
        return Err(NumError::DivisionByZero);
    }
    if let (Some(a), Some(b)) = (x.small_rounded_int(), y.small_rounded_int())
        && b != 0
    {
        // |a|, |b| < 2^127, so nothing below overflows.
        let (q, r) = (a / b, a % b);
        let v = match op {
            IntOp::Quo => q,
            IntOp::Rem => r,
            IntOp::Div if r < 0 => {
                if b < 0 {
                    q + 1
                } else {
                    q - 1
                }
            }
            IntOp::Div => q,
            IntOp::Mod if r < 0 => {
                if b < 0 {
                    r - b
                } else {
                    r + b
                }
            }
            IntOp::Mod => r,
        };
        return Ok(Num::from_i128(v));
    }
    let a = x.rounded_bigint()?;
    let b = y.rounded_bigint()?;
    if b.is_zero() {
        return Err(NumError::DivisionByZero);
    }
    let (q, r) = a.div_rem(&b);
    let v = match op {
        IntOp::Quo => q,
        IntOp::Rem => r,
        IntOp::Div if r.sign() == Sign::Minus => {
            if b.sign() == Sign::Minus {
                q + 1
            } else {
                q - 1
            }
        }
        IntOp::Div => q,
        IntOp::Mod if r.sign() == Sign::Minus => {
            if b.sign() == Sign::Minus {
                r - b
            } else {
                r + b
            }
        }
        IntOp::Mod => r,
    };
    Ok(Num::from_bigint(v))
}

// ---------------------------------------------------------------------------------------------
// Comparison.

fn cmp_abs(x: &Num, y: &Num) -> Ordering {
    if let (Some((_, a, xe)), Some((_, b, ye))) = (x.small_parts(), y.small_parts()) {
        if xe == ye {
            return a.cmp(&b);
        }
        let xadj = i64::from(xe) + i64::from(digits_u128(a));
        let yadj = i64::from(ye) + i64::from(digits_u128(b));
        if xadj != yadj {
            return xadj.cmp(&yadj);
        }
    }
    let (_, a, xe) = x.parts();
    let (_, b, ye) = y.parts();
    let (xadj, yadj) = (xe + a.digits(), ye + b.digits());
    if xadj != yadj {
        return xadj.cmp(&yadj);
    }
    // Same adjusted exponent: the exponents differ by at most the digit counts.
    if xe >= ye {
        a.mul_pow10(xe - ye).cmp(&b)
    } else {
        a.cmp(&b.mul_pow10(ye - xe))
    }
}

// ---------------------------------------------------------------------------------------------
// Literals.

/// apd's `SetString` for finite numbers: `[-+]digits[.digits][e[-+]digits]`, exponent checks
/// included.
fn parse_apd_decimal(text: &str) -> Result<(bool, Mag, i64), String> {
    let (neg, rest) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let fail = || format!("could not parse: {text}");
    let (mantissa, exp_part) = match rest.find(['e', 'E']) {
        Some(i) => (&rest[..i], Some(&rest[i + 1..])),
        None => (rest, None),
    };
    let mut exps = [0i64; 2];
    if let Some(e) = exp_part {
        exps[0] = i64::from(
            e.parse::<i32>()
                .map_err(|_| format!("parse exponent: {e}"))?,
        );
    }
    let mut digits = mantissa.to_string();
    if let Some(i) = mantissa.find('.') {
        exps[1] = -((mantissa.len() - i - 1) as i64);
        digits.remove(i);
    }
    if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return Err(fail());
    }
    let mag = parse_digits(&digits, 10).ok_or_else(fail)?;
    let exp = exps[0] + exps[1];
    if !exps.iter().all(|&e| adjusted_in_range(e)) || !adjusted_in_range(exp + mag.digits() - 1) {
        return Err("exponent out of range".into());
    }
    Ok((neg, mag, exp))
}

/// The value of a run of digits in `base` (no signs, no separators).
fn parse_digits(digits: &str, base: u32) -> Option<Mag> {
    if digits.is_empty() {
        return Some(Mag::S(0));
    }
    if let Ok(v) = u128::from_str_radix(digits, base) {
        return Some(Mag::S(v));
    }
    BigUint::parse_bytes(digits.as_bytes(), base).map(Mag::big)
}

/// A port of `cue/literal.NumInfo`'s scanner, quirks included: the text is copied to `buf`
/// without separators, `.` gains a leading `0`, and a single character the scanner stops at is
/// not checked when it is the last one (so `1x` reads as `1`, as in CUE).
struct LiteralScanner<'a> {
    src: &'a str,
    p: usize,
    ch: u8,
    buf: String,
    base: u32,
    neg: bool,
    is_float: bool,
    /// The multiplier as (power, binary).
    mul: Option<(u32, bool)>,
    err: Option<String>,
    /// The value, when computing it was part of scanning (multipliers).
    value: Option<Num>,
}

impl<'a> LiteralScanner<'a> {
    fn new(src: &'a str) -> Self {
        LiteralScanner {
            src,
            p: 0,
            ch: 0,
            buf: String::with_capacity(src.len() + 1),
            base: 10,
            neg: false,
            is_float: false,
            mul: None,
            err: None,
            value: None,
        }
    }

    fn quoted(&self) -> String {
        crate::eval::label::go_quote(self.src)
    }

    fn next(&mut self) -> bool {
        let Some(&c) = self.src.as_bytes().get(self.p) else {
            self.ch = 0;
            return false;
        };
        self.ch = c;
        self.p += 1;
        if c == b'.' {
            if self.buf.is_empty() {
                self.buf.push('0');
            }
            self.buf.push('.');
        }
        true
    }

    fn digit_val(c: u8) -> u32 {
        match c {
            b'0'..=b'9' => u32::from(c - b'0'),
            b'_' => 0,
            b'a'..=b'f' => u32::from(c - b'a' + 10),
            b'A'..=b'F' => u32::from(c - b'A' + 10),
            _ => 16,
        }
    }

    fn scan_mantissa(&mut self, base: u32) -> bool {
        let mut has_digit = false;
        let mut last = 0u8;
        while Self::digit_val(self.ch) < base {
            if self.ch != b'_' {
                self.buf.push(char::from(self.ch));
                has_digit = true;
            }
            last = self.ch;
            self.next();
        }
        if last == b'_' {
            self.err = Some("illegal '_' in number".into());
        }
        has_digit
    }

    fn parse(&mut self) -> Result<(), String> {
        if !self.next() {
            return Err(format!("invalid number {}", self.quoted()));
        }
        if self.ch == b'-' {
            self.neg = true;
            self.buf.push('-');
            self.next();
        }
        let mut seen_decimal_point = false;
        if self.ch == b'.' {
            self.next();
            seen_decimal_point = true;
        }
        self.scan_number(seen_decimal_point)?;
        if let Some(err) = self.err.take() {
            return Err(err);
        }
        if self.p < self.src.len() {
            return Err(format!("invalid number {}", self.quoted()));
        }
        if self.buf.is_empty() {
            self.buf.push('0');
        }
        Ok(())
    }

    fn scan_number(&mut self, seen_decimal_point: bool) -> Result<(), String> {
        self.base = 10;
        if seen_decimal_point {
            self.is_float = true;
            if !self.scan_mantissa(10) {
                return Err(format!("illegal fraction {}", self.quoted()));
            }
            return self.exponent();
        }
        if self.ch == b'0' {
            // An int or a float.
            self.next();
            match self.ch {
                b'x' | b'X' => return self.prefixed(16, "hexadecimal"),
                b'b' => return self.prefixed(2, "binary"),
                b'o' => return self.prefixed(8, "octal"),
                _ => {
                    // A legacy octal int, or a float.
                    self.scan_mantissa(8);
                    if self.ch == b'8' || self.ch == b'9' {
                        self.scan_mantissa(10);
                        if !matches!(self.ch, b'.' | b'e' | b'E') {
                            return Err(format!("illegal integer number {}", self.quoted()));
                        }
                    }
                    match self.ch {
                        b'e' | b'E' => {
                            if self.buf.is_empty() {
                                self.buf.push('0');
                            }
                            return self.fraction();
                        }
                        b'.' => return self.fraction(),
                        _ => {}
                    }
                    if !self.buf.is_empty() {
                        self.base = 8;
                    }
                    return Ok(());
                }
            }
        }
        if !self.scan_mantissa(10) {
            return Err(format!("illegal number start {}", self.quoted()));
        }
        self.fraction()
    }

    fn prefixed(&mut self, base: u32, name: &str) -> Result<(), String> {
        self.base = base;
        self.next();
        if !self.scan_mantissa(base) {
            return Err(format!("illegal {name} number {}", self.quoted()));
        }
        Ok(())
    }

    fn fraction(&mut self) -> Result<(), String> {
        if self.ch == b'.' {
            self.is_float = true;
            self.next();
            self.scan_mantissa(10);
        }
        self.exponent()
    }

    fn exponent(&mut self) -> Result<(), String> {
        match self.ch {
            b'K' | b'M' | b'G' | b'T' | b'P' => {
                let power = match self.ch {
                    b'K' => 1,
                    b'M' => 2,
                    b'G' => 3,
                    b'T' => 4,
                    _ => 5,
                };
                self.next();
                let binary = self.ch == b'i';
                if binary {
                    self.next();
                }
                self.mul = Some((power, binary));
                self.is_float = false;
                self.value = Some(self.decimal()?);
            }
            b'e' | b'E' => {
                self.is_float = true;
                self.next();
                self.buf.push('e');
                if self.ch == b'-' || self.ch == b'+' {
                    self.buf.push(char::from(self.ch));
                    self.next();
                }
                if !self.scan_mantissa(10) {
                    return Err(format!("illegal exponent {}", self.quoted()));
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// `NumInfo.decimal`: the value of the scanned text.
    fn decimal(&self) -> Result<Num, String> {
        if self.base != 10 {
            let digits = self.buf.strip_prefix('-').unwrap_or(&self.buf);
            let mag = parse_digits(digits, self.base)
                .ok_or_else(|| format!("invalid number {}", self.quoted()))?;
            return Ok(Num::from_mag(self.neg, mag, 0));
        }
        let (neg, mag, exp) = parse_apd_decimal(&self.buf)?;
        let Some((power, binary)) = self.mul else {
            return Ok(Num::from_mag(neg, mag, exp));
        };
        // Multiply in a context of precision 24, then insist on an integral result
        // (apd's RoundToIntegralExact), which also brings the exponent to 0.
        let factor = u128::from(if binary { 1024u32 } else { 1000 }).pow(power);
        let product = mag.mul(&Mag::S(factor));
        let nd = product.digits();
        let (mag, grow, _) = round_mag(product, nd, MULTIPLIER_PRECISION);
        let exp = exp + grow;
        let mag = if mag.is_zero() {
            mag
        } else if exp >= 0 {
            mag.mul_pow10(exp)
        } else if -exp > mag.digits() {
            return Err("number cannot be represented as int".into());
        } else {
            let (q, r) = mag.div_rem(&Mag::pow10(-exp));
            if !r.is_zero() {
                return Err("number cannot be represented as int".into());
            }
            q
        };
        Ok(Num::from_mag(neg, mag, 0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn lit(s: &str) -> Num {
        Num::parse_literal(s)
            .unwrap_or_else(|e| panic!("{s}: {e}"))
            .0
    }

    fn kind(s: &str) -> NumKind {
        Num::parse_literal(s).unwrap().1
    }

    fn parts(n: &Num) -> (bool, String, i32) {
        (n.is_sign_negative(), n.coeff_string(), n.exponent())
    }

    fn g(s: &str) -> String {
        lit(s).to_g_string()
    }

    fn quo(a: &str, b: &str) -> String {
        lit(a).quo(&lit(b)).unwrap().to_g_string()
    }

    #[test]
    fn num_is_small() {
        assert_eq!(std::mem::size_of::<Num>(), 24);
    }

    #[test]
    fn digits_u128_matches_the_decimal_length() {
        for (i, p) in POW10.iter().enumerate() {
            assert_eq!(digits_u128(*p), i as u32 + 1);
            if *p > 1 {
                assert_eq!(digits_u128(p - 1), i as u32);
            }
        }
        assert_eq!(digits_u128(0), 1);
        assert_eq!(digits_u128(u128::MAX), 39);
    }

    #[test]
    fn literal_forms() {
        assert_eq!(Num::parse_literal("0x10").unwrap().0.to_i64(), Some(16));
        assert_eq!(lit("0X1f").to_i64(), Some(31));
        assert_eq!(lit("0o17").to_i64(), Some(15));
        assert_eq!(lit("0b101").to_i64(), Some(5));
        assert_eq!(lit("0xBad_Face").to_i64(), Some(0xBAD_FACE));
        assert_eq!(lit("0b0101_0001").to_i64(), Some(0b0101_0001));
        assert_eq!(lit("1_000").to_i64(), Some(1000));
        assert_eq!(lit("1K").to_i64(), Some(1000));
        assert_eq!(lit("1Ki").to_i64(), Some(1024));
        assert_eq!(lit("1.5G").to_i64(), Some(1_500_000_000));
        assert_eq!(lit("1.5Mi").to_i64(), Some(1_572_864));
        assert_eq!(lit(".5K").to_i64(), Some(500));
        assert_eq!(lit("1.Ki").to_i64(), Some(1024));
        assert_eq!(lit("2Pi").to_u64(), Some(2 * 1024u64.pow(5)));
        for s in [
            "0x10", "0o17", "0b101", "1_000", "1K", "1Ki", "1.5K", "1.5Mi", "42", "0",
        ] {
            assert_eq!(kind(s), NumKind::Int, "{s}");
        }
        for s in [
            ".5", "5.", "1e3", "1E-7", "1.50", "0.", "1.e+0", "072.40", "0e5",
        ] {
            assert_eq!(kind(s), NumKind::Float, "{s}");
        }
        assert_eq!(parts(&lit("1.50")), (false, "150".into(), -2));
        assert_eq!(parts(&lit("1e2")), (false, "1".into(), 2));
        assert_eq!(parts(&lit("5.")), (false, "5".into(), 0));
        assert_eq!(parts(&lit(".5")), (false, "5".into(), -1));
        assert_eq!(parts(&lit("1E-7")), (false, "1".into(), -7));
        assert_eq!(parts(&lit("1.5e3")), (false, "15".into(), 2));
        assert_eq!(parts(&lit(".12345E+5")), (false, "12345".into(), 0));
        assert_eq!(parts(&lit("072.40")), (false, "7240".into(), -2));
        assert_eq!(parts(&lit("1.0T")), (false, "1000000000000".into(), 0));
        assert_eq!(parts(&lit("1.50K")), (false, "1500".into(), 0));
        assert_eq!(g("1e3"), "1E+3");
        assert_eq!(g("1E-7"), "1E-7");
        assert_eq!(g("6.67428e-11"), "6.67428E-11");
    }

    #[test]
    fn literal_legacy_octal_and_big_values() {
        assert_eq!(lit("0755").to_i64(), Some(0o755));
        assert_eq!(
            Num::parse_literal("0758").unwrap_err(),
            r#"illegal integer number "0758""#
        );
        assert_eq!(g("0758.5"), "758.5");
        let big = "170_141_183_460_469_231_731_687_303_715_884_105_727";
        assert_eq!(g(big), big.replace('_', ""));
        let huge = "340282366920938463463374607431768211456000";
        assert_eq!(g(huge), huge);
        assert_eq!(lit(huge).to_bigint().unwrap().to_string(), huge);
    }

    #[test]
    fn literal_errors_use_cues_wording() {
        let err = |s: &str| Num::parse_literal(s).unwrap_err();
        assert_eq!(err("1_"), "illegal '_' in number");
        assert_eq!(err("0xG"), r#"illegal hexadecimal number "0xG""#);
        assert_eq!(err("0b"), r#"illegal binary number "0b""#);
        assert_eq!(err("0o9"), r#"illegal octal number "0o9""#);
        assert_eq!(err(""), r#"invalid number """#);
        assert_eq!(err("12ab"), r#"invalid number "12ab""#);
        assert_eq!(err("-"), r#"illegal number start "-""#);
        assert_eq!(err("1e"), r#"illegal exponent "1e""#);
        // CUE's implementation refuses a fractional product (the spec would truncate).
        assert_eq!(err("1.3Ki"), "number cannot be represented as int");
        assert_eq!(err("1K12"), r#"invalid number "1K12""#);
        assert_eq!(err("1e100001"), "exponent out of range");
    }

    #[test]
    fn literal_quirks_follow_cue() {
        // strconv.ParseNumber cases from the corpus.
        assert_eq!(g("123.456"), "123.456");
        assert_eq!(g("0xFF"), "255");
        assert_eq!(g("1Ki"), "1024");
        assert_eq!(g("-.5"), "-0.5");
        assert_eq!(g("-0x10"), "-16");
        assert_eq!(g("-0"), "-0");
        // The last character is not checked when the scanner stops on it.
        assert_eq!(g("1x"), "1");
        // Multipliers multiply at precision 24, then the exponent is brought to 0.
        assert_eq!(
            g("123456789012345678901234567K"),
            "123456789012345678901235000000"
        );
    }

    #[test]
    fn g_strings() {
        assert_eq!(g("1.0"), "1.0");
        assert_eq!(g("1e2"), "1E+2");
        assert_eq!(g("1e-7"), "1E-7");
        assert_eq!(g("100"), "100");
        assert_eq!(g("0.000001"), "0.000001");
        assert_eq!(g("0.0000001"), "1E-7");
        assert_eq!(g("0.0000012"), "0.0000012");
        assert_eq!(g("0.00000012"), "1.2E-7");
        assert_eq!(g("1.5e3"), "1.5E+3");
        assert_eq!(g("123e2"), "1.23E+4");
        assert_eq!(g("0.00"), "0.00");
        assert_eq!(g("0e3"), "0E+3");
        assert_eq!(g("12.345"), "12.345");
        assert_eq!(g("1000000000000000000000"), "1000000000000000000000");
        assert_eq!(
            g("1.797693134862315708145274237317043567981e+308"),
            "1.797693134862315708145274237317043567981E+308"
        );
        assert_eq!(lit("5.").to_string(), "5");
        assert_eq!(format!("{}", Num::from_i64(-42)), "-42");
    }

    #[test]
    fn cue_strings() {
        let cue = |s: &str| {
            let (n, k) = Num::parse_literal(s).unwrap();
            n.to_cue_string(k)
        };
        assert_eq!(cue("5."), "5.0");
        assert_eq!(cue("1.0"), "1.0");
        assert_eq!(cue("1e2"), "1e+2");
        assert_eq!(cue("1E-7"), "1e-7");
        assert_eq!(cue("100"), "100");
        assert_eq!(cue("1K"), "1000");
        let v1 = lit("1.0T").quo(&lit("2.0")).unwrap();
        assert_eq!(v1.to_cue_string(NumKind::Float), "5.0e+11");
        let zero = lit("0").quo(&lit("5")).unwrap();
        assert_eq!(zero.to_g_string(), "0");
        assert_eq!(zero.to_cue_string(NumKind::Float), "0.0");
        assert_eq!(
            lit("-1.797693134862315708145274237317043567981e+308").to_cue_string(NumKind::Float),
            "-1.797693134862315708145274237317043567981e+308"
        );
    }

    #[test]
    fn arithmetic_from_the_corpus() {
        // cue/benchmarks/decimal
        assert_eq!(lit("123.45").add(&lit("987.65")).to_string(), "1111.10");
        assert_eq!(lit("123.45").sub(&lit("987.65")).to_string(), "-864.20");
        assert_eq!(lit("123.45").mul(&lit("987.65")).to_string(), "121925.3925");
        assert_eq!(
            quo("123.45", "987.65"),
            "0.1249936718473143320002025008859414"
        );
        assert_eq!(lit("2").add(&lit("3")).to_string(), "5");
        assert_eq!(lit("7").sub(&lit("1")).to_string(), "6");
        assert_eq!(lit("5").mul(&lit("10")).to_string(), "50");
        assert_eq!(quo("20", "4"), "5.0");
        assert_eq!(quo("1", "3"), "0.3333333333333333333333333333333333");
        // cue/basicrewrite/002_arithmetic
        assert_eq!(lit("-1").add(&lit("2")).to_string(), "1");
        let div1 = lit("2.0").quo(&lit("3")).unwrap().mul(&lit("6"));
        assert_eq!(div1.to_string(), "4.000000000000000000000000000000000");
        let div2 = lit("2").quo(&lit("3")).unwrap().mul(&lit("6"));
        assert_eq!(div2.to_string(), "4.000000000000000000000000000000000");
        assert!(div2.num_eq(&lit("4.0")));
        assert_eq!(
            div1.add(&lit("1.0")).to_string(),
            "5.000000000000000000000000000000000"
        );
        assert_eq!(quo("1.00", "1.00"), "1.0");
        assert_eq!(quo("1.0T", "2.0"), "5.0E+11");
        assert_eq!(quo("2.0", "3.0"), "0.6666666666666666666666666666666667");
        assert_eq!(quo("10", "2"), "5.0");
        assert_eq!(
            lit("0").int_div(&lit("0")).unwrap_err(),
            NumError::DivisionByZero
        );
        assert_eq!(lit("1").int_div(&lit("2")).unwrap().to_string(), "0");
        // The json.Marshal example of the internals guide.
        assert_eq!(quo("10", "4"), "2.5");
        assert_eq!(g("1e10"), "1E+10");
    }

    #[test]
    fn division() {
        assert_eq!(
            lit("1.0").quo(&lit("0")).unwrap_err(),
            NumError::DivisionByZero
        );
        assert_eq!(
            lit("0").quo(&lit("0")).unwrap_err(),
            NumError::DivisionUndefined
        );
        assert_eq!(NumError::DivisionByZero.to_string(), "division by zero");
        assert_eq!(
            NumError::DivisionUndefined.to_string(),
            "division undefined"
        );
        assert_eq!(quo("0.0", "1"), "0.0");
        assert_eq!(quo("0", "1.0"), "0");
        assert_eq!(quo("-0", "5"), "0");
        assert_eq!(quo("-1", "3"), "-0.3333333333333333333333333333333333");
        assert_eq!(quo("2", "-3"), "-0.6666666666666666666666666666666667");
        assert_eq!(quo("1", "8"), "0.125");
        assert_eq!(quo("100", "1"), "1.0E+2");
        assert_eq!(quo("1e10", "1"), "1.0E+10");
        assert_eq!(quo("1.5e10", "1"), "1.50E+10");
        assert_eq!(quo("7", "7"), "1.0");
        assert_eq!(quo("1", "7"), "0.1428571428571428571428571428571429");
        // A divisor too large for the inline fast path.
        assert_eq!(
            quo("1", "123456789012345678901234567890"),
            "8.100000072900000663390006036857155E-30"
        );
        assert_eq!(
            quo("123456789012345678901234567890123456789012345", "3"),
            "4.115226300411522630041152263004115E+43"
        );
        assert_eq!(
            quo("1", "3e99999"),
            "3.333333333333333333333333333333333E-100000"
        );
        assert_eq!(
            lit("1").quo(&lit("3e100000")).unwrap_err(),
            NumError::Overflow
        );
        assert_eq!(
            lit("1e-100000").quo(&lit("1e10")).unwrap_err(),
            NumError::Overflow
        );
    }

    #[test]
    fn rounding_to_34_digits() {
        let nines = "9".repeat(35);
        assert_eq!(
            lit(&nines).add(&lit("1")).to_string(),
            "1.000000000000000000000000000000000E+35"
        );
        let n = "12345678901234567890123456789012345";
        assert_eq!(
            lit(n).add(&lit("0")).to_string(),
            "1.234567890123456789012345678901235E+34"
        );
        assert_eq!(
            lit(&format!("-{n}")).add(&lit("0")).to_string(),
            "-1.234567890123456789012345678901235E+34"
        );
        assert_eq!(
            lit("12345678901234567890123456789012344")
                .add(&lit("0"))
                .to_string(),
            "1.234567890123456789012345678901234E+34"
        );
        assert_eq!(
            lit("1234567890123456789012345678901234")
                .mul(&lit("10"))
                .to_string(),
            "1.234567890123456789012345678901234E+34"
        );
        assert_eq!(
            lit("99999999999999999")
                .mul(&lit("99999999999999999"))
                .to_string(),
            "9999999999999999800000000000000001"
        );
        assert_eq!(
            lit("999999999999999999")
                .mul(&lit("999999999999999999"))
                .to_string(),
            "9.999999999999999980000000000000000E+35"
        );
        // A tiny operand still fills the result to 34 digits, and rounds it.
        let expect = "1.000000000000000000000000000000000";
        assert_eq!(lit("1").add(&lit("1e-50")).to_string(), expect);
        assert_eq!(lit("1").sub(&lit("1e-50")).to_string(), expect);
        assert_eq!(lit("1").add(&lit("0e-50")).to_string(), expect);
        assert_eq!(
            lit("1").add(&lit("1e-33")).to_string(),
            "1.000000000000000000000000000000001"
        );
        assert_eq!(
            lit("1").add(&lit("5e-34")).to_string(),
            "1.000000000000000000000000000000001"
        );
        assert_eq!(lit("1").add(&lit("4e-34")).to_string(), expect);
        // A large literal keeps its digits until it takes part in arithmetic.
        assert_eq!(g(&nines), nines);
    }

    #[test]
    fn signs_and_zeros() {
        assert_eq!(lit("-1").mul(&lit("0")).to_string(), "-0");
        assert_eq!(lit("0").neg().to_string(), "0");
        assert_eq!(lit("-0").neg().to_string(), "0");
        assert_eq!(lit("1.50").neg().to_string(), "-1.50");
        assert_eq!(lit("-0").add(&lit("-0")).to_string(), "-0");
        assert_eq!(lit("-0").add(&lit("0")).to_string(), "0");
        assert_eq!(lit("-1").add(&lit("1")).to_string(), "0");
        assert_eq!(lit("0.0").add(&lit("0")).to_string(), "0.0");
        assert_eq!(lit("-2.5").abs().to_string(), "2.5");
        assert_eq!(lit("-0").sign(), 0);
        assert_eq!(lit("-0.1").sign(), -1);
        assert!(lit("0.00").is_zero());
        assert_eq!(lit("1").sub(&lit("3")).to_string(), "-2");
        assert_eq!(lit("1.5").sub(&lit("-1.5")).to_string(), "3.0");
    }

    #[test]
    fn integer_division_follows_go() {
        let op = |f: fn(&Num, &Num) -> Result<Num, NumError>, a: i64, b: i64| {
            f(&Num::from_i64(a), &Num::from_i64(b))
                .unwrap()
                .to_i64()
                .unwrap()
        };
        assert_eq!(op(Num::int_div, -5, 3), -2);
        assert_eq!(op(Num::int_mod, -5, 3), 1);
        assert_eq!(op(Num::int_quo, -5, 3), -1);
        assert_eq!(op(Num::int_rem, -5, 3), -2);
        // cue/basicrewrite/003_integer-specific_arithmetic
        let table = [
            (5, 2, 2, 1, 2, 1),
            (5, -2, -2, 1, -2, 1),
            (-5, 2, -3, 1, -2, -1),
            (-5, -2, 3, 1, 2, -1),
        ];
        for (a, b, d, m, q, r) in table {
            assert_eq!(op(Num::int_div, a, b), d, "div({a}, {b})");
            assert_eq!(op(Num::int_mod, a, b), m, "mod({a}, {b})");
            assert_eq!(op(Num::int_quo, a, b), q, "quo({a}, {b})");
            assert_eq!(op(Num::int_rem, a, b), r, "rem({a}, {b})");
        }
        for f in [Num::int_div, Num::int_mod, Num::int_quo, Num::int_rem] {
            assert_eq!(
                f(&Num::from_i64(1), &Num::from_i64(0)).unwrap_err(),
                NumError::DivisionByZero
            );
        }
        // Beyond i128, through big integers.
        let a = lit("-1000000000000000000000000000000000000000000001");
        let b = lit("1000000000000000000000");
        assert_eq!(
            a.int_div(&b).unwrap().to_string(),
            "-1000000000000000000000001"
        );
        assert_eq!(a.int_mod(&b).unwrap().to_string(), "999999999999999999999");
        assert_eq!(
            a.int_quo(&b).unwrap().to_string(),
            "-1000000000000000000000000"
        );
        assert_eq!(a.int_rem(&b).unwrap().to_string(), "-1");
        // An integer with a positive exponent (a rounded product) is used at its full value.
        let rounded = lit(&"9".repeat(35)).add(&lit("1"));
        assert_eq!(
            rounded.int_quo(&lit("7")).unwrap().to_string(),
            "14285714285714285714285714285714285"
        );
        // The result has exponent 0 and no negative zero.
        assert_eq!(lit("-4").int_rem(&lit("2")).unwrap().to_string(), "0");
    }

    #[test]
    fn comparisons() {
        assert!(lit("2.0").num_eq(&lit("2")));
        assert!(lit("-0").num_eq(&lit("0.000")));
        assert_eq!(lit("1e2").cmp(&lit("99")), Ordering::Greater);
        assert_eq!(lit("1e2").cmp(&lit("100.0")), Ordering::Equal);
        assert_eq!(lit("-1e2").cmp(&lit("-99")), Ordering::Less);
        assert_eq!(lit("0.1").cmp(&lit("0.09999")), Ordering::Greater);
        assert_eq!(lit("-0.1").cmp(&lit("0")), Ordering::Less);
        assert_eq!(lit("1.5").cmp(&lit("1.50")), Ordering::Equal);
        let huge = lit("340282366920938463463374607431768211456");
        assert_eq!(
            huge.cmp(&lit("3.40282366920938463463374607431768211455e38")),
            Ordering::Greater
        );
        assert_eq!(
            huge.cmp(&lit("3.40282366920938463463374607431768211456e38")),
            Ordering::Equal
        );
        assert_eq!(huge.neg().cmp(&lit("-1")), Ordering::Less);
    }

    #[test]
    fn conversions() {
        assert_eq!(lit("1.0").to_i64(), Some(1));
        assert_eq!(lit("1.5").to_i64(), None);
        assert_eq!(lit("1e3").to_i64(), Some(1000));
        assert_eq!(lit("-9223372036854775808").to_i64(), Some(i64::MIN));
        assert_eq!(lit("9223372036854775808").to_i64(), None);
        assert_eq!(lit("18446744073709551615").to_u64(), Some(u64::MAX));
        assert_eq!(lit("-1").to_u64(), None);
        assert_eq!(lit("-0").to_u64(), Some(0));
        assert!(lit("1.000").is_integral());
        assert!(!lit("1.001").is_integral());
        assert!(lit("0.0").is_integral());
        assert!(!lit("1e-50").is_integral());
        assert_eq!(
            lit("1e40").to_bigint().unwrap().to_string(),
            format!("1{}", "0".repeat(40))
        );
        assert_eq!(lit("2.5").to_bigint(), None);
        assert_eq!(lit("0.1").to_f64(), 0.1);
        assert_eq!(lit("-2.5e-3").to_f64(), -0.0025);
        assert_eq!(
            lit("1.797693134862315708145274237317043567981e+308").to_f64(),
            f64::MAX
        );
        assert_eq!(lit("2.0E+400").to_f64(), f64::INFINITY);
        assert!(lit("-0").to_f64().is_sign_negative());
        assert_eq!(Num::from_f64(0.1).unwrap().to_string(), "0.1");
        assert_eq!(Num::from_f64(100.0).unwrap().to_string(), "1E+2");
        assert_eq!(Num::from_f64(-1.5e-7).unwrap().to_string(), "-1.5E-7");
        assert!(Num::from_f64(f64::NAN).is_none());
        assert_eq!(
            Num::from_bigint(BigInt::from(-7) * BigInt::from(10u8).pow(40)).to_string(),
            format!("-7{}", "0".repeat(40))
        );
        assert_eq!(
            Num::from_parts(true, BigUint::from(150u8), -2).to_string(),
            "-1.50"
        );
        assert_eq!(
            Num::from_decimal_str("-1.5e3").unwrap().to_string(),
            "-1.5E+3"
        );
        assert!(Num::from_decimal_str("NaN").is_err());
    }

    #[test]
    fn checked_operations_report_apds_limits() {
        let big = lit("1e99999");
        assert_eq!(big.checked_mul(&big).unwrap_err(), NumError::Overflow);
        assert_eq!(NumError::Overflow.to_string(), "exponent out of range");
        assert!(big.checked_add(&lit("1")).is_ok());
        assert_eq!(
            big.checked_add(&lit("1e-2")).unwrap_err().to_string(),
            "add: exponent out of range"
        );
        assert_eq!(
            lit("9.9e100000").checked_add(&lit("1e100000")).unwrap_err(),
            NumError::Overflow
        );
        // Unchecked arithmetic stays total.
        assert_eq!(big.mul(&big).to_string(), "1E+199998");
        assert_eq!(
            big.add(&lit("1e-99999")).to_string(),
            "1.000000000000000000000000000000000E+99999"
        );
    }

    /// apd's addition without shortcuts: align on the smaller exponent, add, round.
    fn reference_add(x: &Num, y: &Num, subtract: bool) -> Num {
        let (xn, xm, xe) = x.parts();
        let (yn, ym, ye) = y.parts();
        let e = xe.min(ye);
        let a = xm.mul_pow10(xe - e);
        let b = ym.mul_pow10(ye - e);
        let (neg, m) = combine(xn, &a, yn != subtract, &b);
        finish(neg, m, e, false).unwrap()
    }

    fn num_strategy() -> impl Strategy<Value = Num> {
        (
            any::<bool>(),
            prop_oneof![
                0u128..1000,
                any::<u64>().prop_map(u128::from),
                any::<u128>(),
                Just(5u128),
                Just(10u128.pow(33) * 5),
            ],
            -80i32..80,
            0u32..3,
        )
            .prop_map(|(neg, m, e, widen)| {
                // Sometimes go past u128 to exercise the big path.
                let mag = BigUint::from(m) * BigUint::from(10u8).pow(widen * 20);
                Num::from_parts(neg, mag, e)
            })
    }

    proptest! {
        #[test]
        fn addition_matches_the_reference(x in num_strategy(), y in num_strategy(), sub in any::<bool>()) {
            let got = if sub { x.sub(&y) } else { x.add(&y) };
            let want = reference_add(&x, &y, sub);
            prop_assert_eq!(parts(&got), parts(&want));
        }

        #[test]
        fn comparison_agrees_with_subtraction(x in num_strategy(), y in num_strategy()) {
            // An exact difference: big enough precision is not needed, only its sign.
            let (xn, xm, xe) = x.parts();
            let (yn, ym, ye) = y.parts();
            let e = xe.min(ye);
            let (neg, m) = combine(xn, &xm.mul_pow10(xe - e), !yn, &ym.mul_pow10(ye - e));
            let want = if m.is_zero() { Ordering::Equal } else if neg { Ordering::Less } else { Ordering::Greater };
            prop_assert_eq!(x.cmp(&y), want);
        }

        #[test]
        fn quotient_times_divisor_is_close(x in num_strategy(), y in num_strategy()) {
            prop_assume!(!y.is_zero() && !x.is_zero());
            let q = x.quo(&y).unwrap();
            let back = q.mul(&y);
            // Within 1e-32 relative error.
            let diff = back.sub(&x).abs();
            let tol = x.abs().mul(&lit("1e-32"));
            prop_assert!(diff.cmp(&tol) != Ordering::Greater, "{:?} / {:?} = {:?}", x, y, q);
        }

        #[test]
        fn literals_round_trip_through_g_strings(x in num_strategy()) {
            let back = Num::from_decimal_str(&x.to_g_string()).unwrap();
            prop_assert_eq!(parts(&back), parts(&x));
        }

        #[test]
        fn integer_ops_match_i128(a in -10_000_000i64..10_000_000, b in -1000i64..1000) {
            prop_assume!(b != 0);
            let (x, y) = (Num::from_i64(a), Num::from_i64(b));
            prop_assert_eq!(x.int_div(&y).unwrap().to_i64(), Some(a.div_euclid(b)));
            prop_assert_eq!(x.int_mod(&y).unwrap().to_i64(), Some(a.rem_euclid(b)));
            prop_assert_eq!(x.int_quo(&y).unwrap().to_i64(), Some(a / b));
            prop_assert_eq!(x.int_rem(&y).unwrap().to_i64(), Some(a % b));
            // The big path agrees with the inline one.
            let wide = BigUint::from(10u8).pow(40);
            let xb = Num::from_bigint(BigInt::from(a) * BigInt::from(wide.clone()));
            let yb = Num::from_bigint(BigInt::from(b) * BigInt::from(wide));
            prop_assert_eq!(xb.int_div(&yb).unwrap().to_i64(), Some(a.div_euclid(b)));
            prop_assert_eq!(xb.int_mod(&yb).unwrap().to_bigint().unwrap(),
                BigInt::from(a.rem_euclid(b)) * BigInt::from(10u8).pow(40));
        }
    }
}
