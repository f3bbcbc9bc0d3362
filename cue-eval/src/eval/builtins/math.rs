//! The `math` and `math/bits` packages. Functions CUE computes with apd decimals (`Floor`,
//! `Round`, `Exp`, `Log`, `Pow`, `Cbrt`...) are computed here exactly or with fixed-point big
//! integers well beyond the 34 significant digits of CUE's decimal context, then rounded half up
//! to 34 digits, as apd does. Functions CUE computes with Go's float64 (`Sqrt`, `Sin`...) use
//! `f64` with the `libm` crate's functions (not the C library's, so that a process using this
//! crate need not load `libm.so`), and their results are spelled as Go's shortest `'E'` format.
//! No crate offers apd's decimal transcendental functions, hence the hand-written series.

use std::rc::Rc;

use num_bigint::{BigInt, BigUint, Sign};
use num_integer::Integer;
use num_traits::{One, Signed, ToPrimitive, Zero};

use super::k::*;
use super::list::{dec_value, dec_value_signed};
use super::{R, Runtime, StdMember, a_int, a_num, constant, func, valid};
use crate::eval::value::{Bottom, Value};
use crate::num::{Num, NumKind};

/// Significant digits of CUE's decimal context.
const PRECISION: usize = 34;
/// Fractional digits of the fixed-point intermediate results.
const WORK: u32 = 80;

macro_rules! float_fn {
    ($name:literal, $f:expr) => {
        func($name, &[N], |_, a| {
            let x = f64_arg(a, 0)?;
            float_result($f(x))
        })
    };
}

macro_rules! float_fn2 {
    ($name:literal, $f:expr) => {
        func($name, &[N, N], |_, a| {
            let (x, y) = (f64_arg(a, 0)?, f64_arg(a, 1)?);
            float_result($f(x, y))
        })
    };
}

macro_rules! num_constant {
    ($name:literal, $text:literal) => {
        constant($name, |_| {
            let (n, k) = Num::parse_literal($text).unwrap_or((Num::from_i64(0), NumKind::Int));
            Value::num(n, k)
        })
    };
}

pub(super) static MEMBERS: &[StdMember] = &[
    func("math.Floor", &[N], |_, a| round_with(a, Mode::Floor)),
    func("math.Ceil", &[N], |_, a| round_with(a, Mode::Ceil)),
    func("math.Trunc", &[N], |_, a| round_with(a, Mode::Trunc)),
    func("math.Round", &[N], |_, a| round_with(a, Mode::HalfUp)),
    func("math.RoundToEven", &[N], |_, a| {
        round_with(a, Mode::HalfEven)
    }),
    valid("math.MultipleOf", &[N, N], multiple_of),
    func("math.Abs", &[N], |_, a| Ok(dec_value(a_num(a, 0)?.0.abs()))),
    func("math.Copysign", &[N, N], copysign),
    func("math.Dim", &[N, N], dim),
    func("math.Signbit", &[N], |_, a| {
        Ok(Value::Bool(a_num(a, 0)?.0.is_sign_negative()))
    }),
    func("math.Pow10", &[I], pow10),
    func("math.Cbrt", &[N], |_, a| unary_dec(a, cbrt)),
    func("math.Exp", &[N], |_, a| unary_dec(a, exp)),
    func("math.Exp2", &[N], |_, a| {
        let (x, _) = a_num(a, 0)?;
        decimal_result(pow(&Num::from_i64(2), &x)?)
    }),
    func("math.Log", &[N], |_, a| unary_dec(a, ln)),
    func("math.Log10", &[N], |_, a| unary_dec(a, log10)),
    func("math.Log2", &[N], |_, a| unary_dec(a, log2)),
    func("math.Pow", &[N, N], |_, a| {
        let ((x, _), (y, _)) = (a_num(a, 0)?, a_num(a, 1)?);
        decimal_result(pow(&x, &y)?)
    }),
    func("math.Jacobi", &[I, I], jacobi),
    float_fn!("math.Acos", libm::acos),
    float_fn!("math.Acosh", libm::acosh),
    float_fn!("math.Asin", libm::asin),
    float_fn!("math.Asinh", libm::asinh),
    float_fn!("math.Atan", libm::atan),
    float_fn!("math.Atanh", libm::atanh),
    float_fn2!("math.Atan2", libm::atan2),
    float_fn!("math.Cos", libm::cos),
    float_fn!("math.Cosh", libm::cosh),
    float_fn!("math.Sin", libm::sin),
    float_fn!("math.Sinh", libm::sinh),
    float_fn!("math.Tan", libm::tan),
    float_fn!("math.Tanh", libm::tanh),
    float_fn!("math.Sqrt", f64::sqrt),
    float_fn!("math.Expm1", libm::expm1),
    float_fn!("math.Log1p", libm::log1p),
    float_fn!("math.Logb", |x: f64| {
        if x == 0.0 {
            f64::NEG_INFINITY
        } else if x.is_infinite() {
            f64::INFINITY
        } else {
            ilogb(x) as f64
        }
    }),
    func("math.Ilogb", &[N], |_, a| {
        let x = f64_arg(a, 0)?;
        super::int(if x == 0.0 {
            i64::from(i32::MIN)
        } else if !x.is_finite() {
            i64::from(i32::MAX)
        } else {
            ilogb(x)
        })
    }),
    float_fn2!("math.Hypot", libm::hypot),
    float_fn2!("math.Mod", |x: f64, y: f64| x % y),
    float_fn2!("math.Remainder", |x: f64, y: f64| {
        let n = (x / y).round_ties_even();
        x - n * y
    }),
    func("math.Ldexp", &[N, I], |_, a| {
        let (f, e) = (f64_arg(a, 0)?, a_int(a, 1)?);
        float_result(f * 2f64.powi(e.clamp(-2000, 2000) as i32))
    }),
    num_constant!(
        "math.E",
        "2.71828182845904523536028747135266249775724709369995957496696763"
    ),
    num_constant!(
        "math.Pi",
        "3.14159265358979323846264338327950288419716939937510582097494459"
    ),
    num_constant!(
        "math.Phi",
        "1.61803398874989484820458683436563811772030917980576286213544861"
    ),
    num_constant!(
        "math.Sqrt2",
        "1.41421356237309504880168872420969807856967187537694807317667974"
    ),
    num_constant!(
        "math.SqrtE",
        "1.64872127070012814684865078781416357165377610071014801157507931"
    ),
    num_constant!(
        "math.SqrtPi",
        "1.77245385090551602729816748334114518279754945612238712821380779"
    ),
    num_constant!(
        "math.SqrtPhi",
        "1.27201964951406896425242246173749149171560804184009624861664038"
    ),
    num_constant!(
        "math.Ln2",
        "0.693147180559945309417232121458176568075500134360255254120680009"
    ),
    num_constant!(
        "math.Log2E",
        "1.442695040888963407359924681001892137426645954152985934135449408"
    ),
    num_constant!(
        "math.Ln10",
        "2.3025850929940456840179914546843642076011014886287729760333278"
    ),
    num_constant!(
        "math.Log10E",
        "0.43429448190325182765112891891660508229439700580366656611445378"
    ),
    num_constant!("math.MaxExp", "2147483647"),
    num_constant!("math.MinExp", "-2147483648"),
    num_constant!("math.MaxPrec", "4294967295"),
    num_constant!("math.MaxBase", "62"),
    num_constant!("math.ToNearestEven", "0"),
    num_constant!("math.ToNearestAway", "1"),
    num_constant!("math.ToZero", "2"),
    num_constant!("math.AwayFromZero", "3"),
    num_constant!("math.ToNegativeInf", "4"),
    num_constant!("math.ToPositiveInf", "5"),
    num_constant!("math.Below", "-1"),
    num_constant!("math.Exact", "0"),
    num_constant!("math.Above", "1"),
    num_constant!("math.MaxInt", "9223372036854775807"),
    num_constant!("math.MinInt", "-9223372036854775808"),
    num_constant!("math.MaxInt8", "127"),
    num_constant!("math.MinInt8", "-128"),
    num_constant!("math.MaxInt16", "32767"),
    num_constant!("math.MinInt16", "-32768"),
    num_constant!("math.MaxInt32", "2147483647"),
    num_constant!("math.MinInt32", "-2147483648"),
    num_constant!("math.MaxInt64", "9223372036854775807"),
    num_constant!("math.MinInt64", "-9223372036854775808"),
    num_constant!("math.MaxUint", "18446744073709551615"),
    num_constant!("math.MaxUint8", "255"),
    num_constant!("math.MaxUint16", "65535"),
    num_constant!("math.MaxUint32", "4294967295"),
    num_constant!("math.MaxUint64", "18446744073709551615"),
    num_constant!(
        "math.MaxFloat32",
        "340282346638528859811704183484516925440.0"
    ),
    num_constant!(
        "math.SmallestNonzeroFloat32",
        "1.401298464324817070923729583289916131280e-45"
    ),
    num_constant!(
        "math.MaxFloat64",
        "1.797693134862315708145274237317043567981e+308"
    ),
    num_constant!(
        "math.SmallestNonzeroFloat64",
        "4.940656458412465441765687928682213723651e-324"
    ),
    func("math/bits.And", &[I, I], |_, a| bits2(a, |x, y| x & y)),
    func("math/bits.Or", &[I, I], |_, a| bits2(a, |x, y| x | y)),
    func("math/bits.Xor", &[I, I], |_, a| bits2(a, |x, y| x ^ y)),
    func("math/bits.Clear", &[I, I], |_, a| bits2(a, |x, y| x & !y)),
    func("math/bits.Lsh", &[I, I], |_, a| {
        let (x, n) = (big_arg(a, 0)?, uint_arg(a, 1)?);
        if n > 1 << 20 {
            return Err(Bottom::eval("shift count too large"));
        }
        Ok(big_value(x << n))
    }),
    func("math/bits.Rsh", &[I, I], |_, a| {
        let (x, n) = (big_arg(a, 0)?, uint_arg(a, 1)?);
        Ok(big_value(x >> n.min(1 << 24)))
    }),
    func("math/bits.At", &[I, I], |_, a| {
        let (x, i) = (big_arg(a, 0)?, uint_arg(a, 1)?);
        super::int(i64::from(bit_at(&x, i)))
    }),
    func("math/bits.Set", &[I, I, I], |_, a| {
        let (x, i, b) = (big_arg(a, 0)?, uint_arg(a, 1)?, uint_arg(a, 2)?);
        if i > 1 << 20 {
            return Err(Bottom::eval("bit index too large"));
        }
        let mask = BigInt::one() << i;
        let cur = bit_at(&x, i);
        let r = match (b, cur) {
            (0, 1) => x ^ mask,
            (1, 0) => x | mask,
            (0 | 1, _) => x,
            _ => return Err(Bottom::eval(format!("bit value must be 0 or 1, got {b}"))),
        };
        Ok(big_value(r))
    }),
    func("math/bits.OnesCount", &[I], |_, a| {
        let x = big_arg(a, 0)?;
        let n: u64 = x
            .magnitude()
            .to_u64_digits()
            .iter()
            .map(|d| u64::from(d.count_ones()))
            .sum();
        super::int(n as i64)
    }),
    func("math/bits.Len", &[I], |_, a| {
        super::int(big_arg(a, 0)?.magnitude().bits() as i64)
    }),
];

// ---------------------------------------------------------------------------------------------
// float64 functions

fn f64_arg(a: &[Value], i: usize) -> Result<f64, Rc<Bottom>> {
    let (n, k) = a_num(a, i)?;
    let f = n.to_f64();
    if f.is_infinite() {
        return Err(Bottom::eval(format!(
            "cannot use {} (type {}) as float64 in argument {}: value was rounded {}",
            n.to_g_string(),
            if k == NumKind::Int { "int" } else { "float" },
            i,
            if f > 0.0 { "up" } else { "down" }
        )));
    }
    Ok(f)
}

/// A float64 result, spelled as Go's `strconv.FormatFloat(f, 'E', -1, 64)` reads into apd.
fn float_result(f: f64) -> R {
    if f.is_nan() {
        return Err(Bottom::eval("invalid operation: result is NaN"));
    }
    if f.is_infinite() {
        return Err(Bottom::eval(format!(
            "value was rounded {}",
            if f > 0.0 { "up" } else { "down" }
        )));
    }
    let s = format!("{f:e}");
    match Num::parse_literal(&s) {
        Ok((n, _)) => Ok(Value::num(n, NumKind::Float)),
        Err(e) => Err(Bottom::eval(e)),
    }
}

fn ilogb(x: f64) -> i64 {
    let bits = x.abs().to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i64;
    if exp == 0 {
        // Subnormal.
        let m = bits & ((1 << 52) - 1);
        return -1074 + (63 - i64::from(m.leading_zeros()));
    }
    exp - 1023
}

// ---------------------------------------------------------------------------------------------
// Rounding

#[derive(Clone, Copy)]
enum Mode {
    Floor,
    Ceil,
    Trunc,
    HalfUp,
    HalfEven,
}

/// A number as a big integer numerator over 10^scale (scale ≥ 0).
fn split(n: &Num) -> (BigInt, u32) {
    let c = BigInt::from_biguint(
        if n.is_sign_negative() {
            Sign::Minus
        } else {
            Sign::Plus
        },
        n.coefficient(),
    );
    let e = n.exponent();
    if e >= 0 {
        (c * BigInt::from(10).pow(e as u32), 0)
    } else {
        (c, (-e) as u32)
    }
}

fn round_int(x: &BigInt, scale: u32, mode: Mode) -> BigInt {
    if scale == 0 {
        return x.clone();
    }
    let d = BigInt::from(10).pow(scale);
    let (q, r) = x.div_rem(&d); // truncated towards zero
    if r.is_zero() {
        return q;
    }
    let neg = x.is_negative();
    let twice = r.abs() * 2;
    let away = match mode {
        Mode::Trunc => false,
        Mode::Floor => neg,
        Mode::Ceil => !neg,
        Mode::HalfUp => twice >= d,
        Mode::HalfEven => twice > d || (twice == d && q.is_odd()),
    };
    if away {
        if neg { q - 1 } else { q + 1 }
    } else {
        q
    }
}

fn round_with(a: &[Value], mode: Mode) -> R {
    let (n, _) = a_num(a, 0)?;
    if n.exponent() < -100_000 || n.exponent() > 100_000 {
        return Err(Bottom::eval("exponent out of range"));
    }
    let (x, scale) = split(&n);
    Ok(big_value(round_int(&x, scale, mode)))
}

/// The largest integer not above `n`.
pub(crate) fn floor_num(n: &Num) -> Num {
    integral_num(n, Mode::Floor)
}

/// The smallest integer not below `n`.
pub(crate) fn ceil_num(n: &Num) -> Num {
    integral_num(n, Mode::Ceil)
}

/// `n` rounded to an integer by `mode` (an integer, or a number too small to split, as is).
fn integral_num(n: &Num, mode: Mode) -> Num {
    if n.is_integral() || n.exponent() < -100_000 {
        return n.clone();
    }
    let (x, scale) = split(n);
    Num::from_bigint(round_int(&x, scale, mode))
}

fn big_value(b: BigInt) -> Value {
    Value::num(Num::from_bigint(b), NumKind::Int)
}

fn multiple_of(_: &mut Runtime, a: &[Value]) -> R {
    let ((x, _), (y, _)) = (a_num(a, 0)?, a_num(a, 1)?);
    if y.is_zero() {
        return Err(Bottom::eval("division by zero"));
    }
    let (xs, xe) = split(&x);
    let (ys, ye) = split(&y);
    // x/y = (xs/10^xe) / (ys/10^ye) = xs*10^ye / (ys*10^xe)
    let num = xs * BigInt::from(10).pow(ye);
    let den = ys * BigInt::from(10).pow(xe);
    Ok(Value::Bool((num % den).is_zero()))
}

fn copysign(_: &mut Runtime, a: &[Value]) -> R {
    let ((x, _), (y, _)) = (a_num(a, 0)?, a_num(a, 1)?);
    let m = x.abs();
    Ok(dec_value_signed(if y.is_sign_negative() {
        Num::from_parts(true, m.coefficient(), m.exponent())
    } else {
        m
    }))
}

fn dim(_: &mut Runtime, a: &[Value]) -> R {
    let ((x, _), (y, _)) = (a_num(a, 0)?, a_num(a, 1)?);
    let d = x.sub(&y);
    if d.is_sign_negative() && !d.is_zero() {
        return Ok(Value::int(0));
    }
    Ok(dec_value(d))
}

fn pow10(_: &mut Runtime, a: &[Value]) -> R {
    let n = a_int(a, 0)?;
    if n.abs() > 100_000 {
        return Err(Bottom::eval("exponent out of range"));
    }
    Ok(dec_value(Num::from_parts(false, BigUint::one(), n as i32)))
}

fn jacobi(_: &mut Runtime, a: &[Value]) -> R {
    let x = big_arg(a, 0)?;
    let y = big_arg(a, 1)?;
    if y.is_even() {
        return Err(Bottom::eval(format!(
            "big: invalid 2nd argument to Int.Jacobi: need odd integer but got {y}"
        )));
    }
    // The Jacobi symbol (x/y) for odd y, extended to negative y as Go does.
    let mut a = x;
    let mut b = y;
    let mut j = 1i64;
    if b.is_negative() {
        if a.is_negative() {
            j = -1;
        }
        b = -b;
    }
    a = a.mod_floor(&b);
    loop {
        if b.is_one() {
            return super::int(j);
        }
        if a.is_zero() {
            return super::int(0);
        }
        let s = a.trailing_zeros().unwrap_or(0);
        if s % 2 == 1 {
            let bmod8 = (&b % 8u32).to_u32().unwrap_or(0);
            if bmod8 == 3 || bmod8 == 5 {
                j = -j;
            }
        }
        let c = &a >> s;
        if (&b % 4u32).to_u32() == Some(3) && (&c % 4u32).to_u32() == Some(3) {
            j = -j;
        }
        a = b.mod_floor(&c);
        b = c;
    }
}

// ---------------------------------------------------------------------------------------------
// Decimal transcendental functions, at 34 significant digits.

/// A fixed-point value: numerator over 10^WORK.
type Fixed = BigInt;

fn scale() -> BigInt {
    BigInt::from(10).pow(WORK)
}

fn to_fixed(n: &Num) -> Fixed {
    let (x, s) = split(n);
    if s <= WORK {
        x * BigInt::from(10).pow(WORK - s)
    } else {
        x / BigInt::from(10).pow(s - WORK)
    }
}

fn fmul(a: &Fixed, b: &Fixed) -> Fixed {
    (a * b) / scale()
}

fn fdiv(a: &Fixed, b: &Fixed) -> Fixed {
    (a * scale()) / b
}

/// atanh(z) for |z| < 1 (fixed point), by its series.
fn atanh(z: &Fixed) -> Fixed {
    let z2 = fmul(z, z);
    let mut term = z.clone();
    let mut sum = z.clone();
    let mut k = 1u32;
    loop {
        term = fmul(&term, &z2);
        k += 2;
        let t = &term / BigInt::from(k);
        if t.is_zero() {
            break;
        }
        sum += t;
    }
    sum
}

fn ln2() -> Fixed {
    // ln 2 = 2 atanh(1/3)
    atanh(&(scale() / 3)) * 2
}

fn ln10() -> Fixed {
    // ln 10 = 3 ln 2 + ln(5/4) = 3 ln 2 + 2 atanh(1/9)
    ln2() * 3 + atanh(&(scale() / 9)) * 2
}

/// ln(x) for x > 0, in fixed point.
fn ln_fixed(n: &Num) -> Result<Fixed, Rc<Bottom>> {
    if n.is_sign_negative() || n.is_zero() {
        return Err(Bottom::eval("invalid operation: result is NaN"));
    }
    // x = m * 10^e with m in [1, 10).
    let digits = n.coefficient().to_string().len() as i64;
    let e = i64::from(n.exponent()) + digits - 1;
    let m = Num::from_parts(false, n.coefficient(), -(digits as i32 - 1));
    let mut mf = to_fixed(&m);
    // Bring m into [0.75, 1.5) with powers of two.
    let mut k = 0i64;
    let hi = scale() * 3 / 2;
    while mf >= hi {
        mf /= 2;
        k += 1;
    }
    let one = scale();
    let r = atanh(&fdiv(&(&mf - &one), &(&mf + &one))) * 2;
    Ok(r + ln2() * k + ln10() * e)
}

fn exp_fixed(x: &Fixed) -> Result<Fixed, Rc<Bottom>> {
    let limit = scale() * 1_000_000;
    if x.abs() > limit {
        return Err(Bottom::eval("exponent out of range"));
    }
    if x.is_negative() {
        let p = exp_fixed(&-x)?;
        return Ok(fdiv(&scale(), &p));
    }
    // exp(x) = 2^k exp(r), r = x - k ln 2 in [0, ln 2).
    let l2 = ln2();
    let k = x / &l2;
    let r = x - &k * &l2;
    let mut term = scale();
    let mut sum = scale();
    let mut i = 1u32;
    loop {
        term = fmul(&term, &r) / BigInt::from(i);
        if term.is_zero() {
            break;
        }
        sum += &term;
        i += 1;
    }
    let k = k.to_u64().unwrap_or(0);
    Ok(sum << k)
}

/// Rounds a positive or negative fixed-point value to 34 significant digits, half up.
fn fixed_to_num(x: &Fixed) -> Num {
    let neg = x.is_negative();
    let mag = x.magnitude().clone();
    if mag.is_zero() {
        return Num::from_i64(0);
    }
    let digits = mag.to_string().len();
    let (coeff, exp) = if digits > PRECISION {
        let drop = (digits - PRECISION) as u32;
        let d = BigUint::from(10u32).pow(drop);
        let (q, r) = mag.div_rem(&d);
        let q = if r * 2u32 >= d { q + 1u32 } else { q };
        (q, drop as i32 - WORK as i32)
    } else {
        (mag, -(WORK as i32))
    };
    // A carry may give 35 digits (999.. -> 1000..): drop one.
    let (coeff, exp) = if coeff.to_string().len() > PRECISION {
        (coeff / 10u32, exp + 1)
    } else {
        (coeff, exp)
    };
    Num::from_parts(neg, coeff, exp)
}

fn decimal_result(n: Num) -> R {
    Ok(dec_value(n))
}

fn unary_dec(a: &[Value], f: fn(&Num) -> Result<Num, Rc<Bottom>>) -> R {
    let (x, _) = a_num(a, 0)?;
    decimal_result(f(&x)?)
}

fn ln(x: &Num) -> Result<Num, Rc<Bottom>> {
    if x.cmp(&Num::from_i64(1)) == std::cmp::Ordering::Equal {
        return Ok(Num::from_i64(0));
    }
    Ok(fixed_to_num(&ln_fixed(x)?))
}

fn log10(x: &Num) -> Result<Num, Rc<Bottom>> {
    // Exact powers of ten give exact results.
    let c = x.coefficient();
    let cs = c.to_string();
    if !x.is_sign_negative() && cs.starts_with('1') && cs[1..].bytes().all(|b| b == b'0') {
        let e = i64::from(x.exponent()) + cs.len() as i64 - 1;
        return Ok(Num::from_i64(e));
    }
    let l = ln_fixed(x)?;
    Ok(fixed_to_num(&fdiv(&l, &ln10())))
}

fn log2(x: &Num) -> Result<Num, Rc<Bottom>> {
    // As CUE: Ln(x) and Ln(2), each rounded to 34 digits, then divided.
    let l = fixed_to_num(&ln_fixed(x)?);
    let l2 = fixed_to_num(&ln2());
    l.quo(&l2).map_err(|e| Bottom::eval(e.to_string()))
}

fn exp(x: &Num) -> Result<Num, Rc<Bottom>> {
    if x.is_zero() {
        return Ok(Num::from_i64(1));
    }
    Ok(fixed_to_num(&exp_fixed(&to_fixed(x))?))
}

fn cbrt(x: &Num) -> Result<Num, Rc<Bottom>> {
    if x.is_zero() {
        return Ok(Num::from_i64(0));
    }
    // Exact cubes first.
    if x.is_integral()
        && let Some(b) = x.to_bigint()
    {
        let r = b.cbrt();
        if &r * &r * &r == b {
            return Ok(Num::from_bigint(r));
        }
    }
    let neg = x.is_sign_negative();
    let l = ln_fixed(&x.abs())?;
    let r = exp_fixed(&(l / 3))?;
    let n = fixed_to_num(&r);
    Ok(if neg { n.neg() } else { n })
}

/// x**y: exact for integer y (within the precision), exp(y ln x) otherwise.
fn pow(x: &Num, y: &Num) -> Result<Num, Rc<Bottom>> {
    if y.is_zero() {
        if x.is_zero() {
            // apd: 0**0 is NaN.
            return Err(Bottom::eval("invalid operation"));
        }
        return Ok(Num::from_i64(1));
    }
    if y.is_integral()
        && let Some(n) = y.to_i64()
    {
        if n.unsigned_abs() > 100_000 {
            return Err(Bottom::eval("exponent out of range"));
        }
        if x.is_zero() {
            if n < 0 {
                return Err(Bottom::eval("division by zero"));
            }
            return Ok(Num::from_i64(0));
        }
        // Exact when the result is small enough.
        let (xs, xscale) = split(x);
        let bits = xs.magnitude().bits() * n.unsigned_abs();
        if bits < 4096 {
            let p = xs.pow(n.unsigned_abs() as u32);
            let s = u64::from(xscale) * n.unsigned_abs();
            if n > 0 {
                let num = Num::from_parts(p.is_negative(), p.magnitude().clone(), -(s as i32));
                return Ok(round_num(&num));
            }
            // 1 / x**|n|, divided as apd divides: to the working precision of apd's `Pow`
            // (34 digits and 10 more, or the digits of x), then rounded to 34 digits, so
            // that `2**-1` is `0.5000…` with 34 digits as in `cue`.
            let den = Num::from_parts(p.is_negative(), p.magnitude().clone(), -(s as i32));
            let prec = PRECISION.max(x.coefficient().to_string().len()) + 10;
            return Ok(round_num(&reciprocal(&den, prec)));
        }
    }
    if x.is_sign_negative() {
        return Err(Bottom::eval("invalid operation: result is NaN"));
    }
    if x.is_zero() {
        return Ok(Num::from_i64(0));
    }
    let l = ln_fixed(x)?;
    let e = fmul(&l, &to_fixed(y));
    Ok(fixed_to_num(&exp_fixed(&e)?))
}

/// `1 / z` as apd's `Quo` computes it at precision `prec`: exactly `prec` significant digits,
/// the last one rounded half up, trailing zeros kept.
fn reciprocal(z: &Num, prec: usize) -> Num {
    let c = z.coefficient();
    let nd = c.to_string().len();
    let ten = BigUint::from(10u8);
    let mut dividend = ten.pow((nd - 1) as u32);
    let mut adjust = nd as i64 - 1;
    if dividend < c {
        dividend *= &ten;
        adjust += 1;
    }
    dividend *= ten.pow((prec - 1) as u32);
    let (mut q, rem) = dividend.div_rem(&c);
    if &rem * 2u8 >= c {
        q += 1u8;
    }
    let mut exp = -i64::from(z.exponent()) - adjust - (prec as i64 - 1);
    if q.to_string().len() > prec {
        // 99…9 rounded up: 10^prec, one digit too many.
        q /= &ten;
        exp += 1;
    }
    Num::from_parts(z.is_sign_negative(), q, exp as i32)
}

/// Rounds an exact number to 34 significant digits, half up.
fn round_num(n: &Num) -> Num {
    let c = n.coefficient();
    let digits = c.to_string().len();
    if digits <= PRECISION {
        return n.clone();
    }
    let drop = (digits - PRECISION) as u32;
    let d = BigUint::from(10u32).pow(drop);
    let (q, r) = c.div_rem(&d);
    let q = if r * 2u32 >= d { q + 1u32 } else { q };
    Num::from_parts(n.is_sign_negative(), q, n.exponent() + drop as i32)
}

// ---------------------------------------------------------------------------------------------
// math/bits

fn big_arg(a: &[Value], i: usize) -> Result<BigInt, Rc<Bottom>> {
    let (n, _) = a_num(a, i)?;
    n.to_bigint()
        .ok_or_else(|| Bottom::eval("argument is not an integer"))
}

fn uint_arg(a: &[Value], i: usize) -> Result<u64, Rc<Bottom>> {
    let b = big_arg(a, i)?;
    b.to_u64().ok_or_else(|| {
        Bottom::eval(format!(
            "cannot use {b} (type int) as uint in argument {}",
            i + 1
        ))
    })
}

fn bits2(a: &[Value], f: fn(BigInt, BigInt) -> BigInt) -> R {
    let (x, y) = (big_arg(a, 0)?, big_arg(a, 1)?);
    Ok(big_value(f(x, y)))
}

fn bit_at(x: &BigInt, i: u64) -> u8 {
    if x.is_negative() {
        // Two's complement: bit i of -m is the inverse of bit i of m-1.
        let m: BigInt = -x - 1;
        1 - u8::from(m.bit(i))
    } else {
        u8::from(x.bit(i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(s: &str) -> Num {
        Num::parse_literal(s).unwrap().0
    }

    #[test]
    fn transcendental_at_34_digits() {
        assert_eq!(
            ln(&n("4")).unwrap().to_g_string(),
            "1.386294361119890618834464242916353"
        );
        assert_eq!(
            exp(&n("3")).unwrap().to_g_string(),
            "20.08553692318766774092852965458172"
        );
        assert_eq!(
            pow(&n("2"), &n("3.5")).unwrap().to_g_string(),
            "11.31370849898476039041350979367758"
        );
        assert_eq!(
            cbrt(&n("2")).unwrap().to_g_string(),
            "1.259921049894873164767210607278228"
        );
        assert_eq!(
            log10(&n("4")).unwrap().to_g_string(),
            "0.6020599913279623904274777894489861"
        );
        assert_eq!(
            log2(&n("5")).unwrap().to_g_string(),
            "2.321928094887362347870319429489391"
        );
        assert_eq!(
            ln(&n("32.45")).unwrap().to_g_string(),
            "3.479700443150099001242770375542286"
        );
    }

    #[test]
    fn rounding_modes() {
        let (x, s) = split(&n("-2.5"));
        assert_eq!(round_int(&x, s, Mode::HalfUp), BigInt::from(-3));
        assert_eq!(round_int(&x, s, Mode::HalfEven), BigInt::from(-2));
        assert_eq!(round_int(&x, s, Mode::Floor), BigInt::from(-3));
        assert_eq!(round_int(&x, s, Mode::Ceil), BigInt::from(-2));
        assert_eq!(round_int(&x, s, Mode::Trunc), BigInt::from(-2));
    }

    #[test]
    fn float_spelling() {
        let Ok(Value::Num(v, _)) = float_result(2f64.sqrt()) else {
            panic!()
        };
        assert_eq!(v.to_g_string(), "1.4142135623730951");
    }
}
