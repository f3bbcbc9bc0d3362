//! The `time` package: Go's reference-time layouts (`Format`, `Parse`, `FormatString`), RFC 3339
//! timestamps (the `Time` validator, `Unix`, `ToUnix`, `Split`) and Go's duration syntax
//! (`ParseDuration`, `FormatDuration`, the `Duration` validator). Hand-written: no crate
//! implements Go's layout language, and CUE's output is Go's `time` output byte for byte, down to
//! its leniencies (a one-digit hour in RFC 3339, zone offsets up to 24 hours) and its int64
//! wrap-around.

use std::rc::Rc;

use super::k::*;
use super::{R, StdMember, a_int, a_str, constant, func, string, valid};
use crate::eval::label::go_quote;
use crate::eval::value::{Bottom, Value};
use crate::num::{Num, NumKind};

const RFC3339_NANO: &str = "2006-01-02T15:04:05.999999999Z07:00";

macro_rules! str_const {
    ($name:literal, $v:literal) => {
        constant($name, |_| Value::Str(Rc::from($v)))
    };
}

pub(super) static MEMBERS: &[StdMember] = &[
    constant("time.Nanosecond", |_| Value::int(1)),
    constant("time.Microsecond", |_| Value::int(1_000)),
    constant("time.Millisecond", |_| Value::int(1_000_000)),
    constant("time.Second", |_| Value::int(1_000_000_000)),
    constant("time.Minute", |_| Value::int(60_000_000_000)),
    constant("time.Hour", |_| Value::int(3_600_000_000_000)),
    constant("time.January", |_| Value::int(1)),
    constant("time.February", |_| Value::int(2)),
    constant("time.March", |_| Value::int(3)),
    constant("time.April", |_| Value::int(4)),
    constant("time.May", |_| Value::int(5)),
    constant("time.June", |_| Value::int(6)),
    constant("time.July", |_| Value::int(7)),
    constant("time.August", |_| Value::int(8)),
    constant("time.September", |_| Value::int(9)),
    constant("time.October", |_| Value::int(10)),
    constant("time.November", |_| Value::int(11)),
    constant("time.December", |_| Value::int(12)),
    constant("time.Sunday", |_| Value::int(0)),
    constant("time.Monday", |_| Value::int(1)),
    constant("time.Tuesday", |_| Value::int(2)),
    constant("time.Wednesday", |_| Value::int(3)),
    constant("time.Thursday", |_| Value::int(4)),
    constant("time.Friday", |_| Value::int(5)),
    constant("time.Saturday", |_| Value::int(6)),
    // CUE's package has these layouts only (not Go's Stamp, DateTime, DateOnly or TimeOnly).
    str_const!("time.ANSIC", "Mon Jan _2 15:04:05 2006"),
    str_const!("time.UnixDate", "Mon Jan _2 15:04:05 MST 2006"),
    str_const!("time.RubyDate", "Mon Jan 02 15:04:05 -0700 2006"),
    str_const!("time.RFC822", "02 Jan 06 15:04 MST"),
    str_const!("time.RFC822Z", "02 Jan 06 15:04 -0700"),
    str_const!("time.RFC850", "Monday, 02-Jan-06 15:04:05 MST"),
    str_const!("time.RFC1123", "Mon, 02 Jan 2006 15:04:05 MST"),
    str_const!("time.RFC1123Z", "Mon, 02 Jan 2006 15:04:05 -0700"),
    str_const!("time.RFC3339", "2006-01-02T15:04:05Z07:00"),
    str_const!("time.RFC3339Nano", "2006-01-02T15:04:05.999999999Z07:00"),
    str_const!("time.RFC3339Date", "2006-01-02"),
    str_const!("time.Kitchen", "3:04PM"),
    str_const!("time.Kitchen24", "15:04"),
    valid("time.Time", &[S], |_, a| {
        conforms(&a_str(a, 0)?, RFC3339_NANO)
    }),
    // `Format(value, layout)` is a validator (`time.Format(layout)` checks a value against the
    // layout); `FormatString` is the formatter.
    valid("time.Format", &[S, S], |_, a| {
        conforms(&a_str(a, 0)?, &a_str(a, 1)?)
    }),
    valid("time.Duration", &[S], |_, a| {
        parse_duration(&a_str(a, 0)?)
            .map(|_| Value::Bool(true))
            .map_err(Bottom::eval)
    }),
    func("time.ParseDuration", &[S], |_, a| {
        parse_duration(&a_str(a, 0)?)
            .map(|d| Value::num(Num::from_i64(d), NumKind::Int))
            .map_err(Bottom::eval)
    }),
    func("time.FormatDuration", &[I], |_, a| {
        string(format_duration(a_int64(a, 0)?))
    }),
    func("time.FormatString", &[S, S], |_, a| {
        let (layout, v) = (a_str(a, 0)?, a_str(a, 1)?);
        let t = parse(RFC3339_NANO, &v).map_err(Bottom::eval)?;
        string(format(&t, &layout))
    }),
    func("time.Parse", &[S, S], |_, a| {
        let (layout, v) = (a_str(a, 0)?, a_str(a, 1)?);
        let t = parse(&layout, &v).map_err(Bottom::eval)?;
        string(format(&t.utc(), RFC3339_NANO))
    }),
    func("time.Unix", &[I, I], |_, a| {
        let (sec, nsec) = (a_int64(a, 0)?, a_int64(a, 1)?);
        string(format(&Time::unix(sec, nsec), RFC3339_NANO))
    }),
    func("time.ToUnix", &[S], |_, a| {
        let t = parse_rfc(&a_str(a, 0)?)?;
        super::int(t.sec)
    }),
    func("time.ToUnixNano", &[S], |_, a| {
        let t = parse_rfc(&a_str(a, 0)?)?;
        // Go's `UnixNano` wraps around outside the years 1678 to 2261.
        super::int(
            t.sec
                .wrapping_mul(1_000_000_000)
                .wrapping_add(i64::from(t.nsec)),
        )
    }),
    func("time.Split", &[S], |rt, a| {
        let t = parse_rfc(&a_str(a, 0)?)?;
        let c = t.civil();
        let fields = vec![
            ("year".to_string(), Value::int(c.year)),
            ("month".to_string(), Value::int(c.month)),
            ("day".to_string(), Value::int(c.day)),
            ("hour".to_string(), Value::int(c.hour)),
            ("minute".to_string(), Value::int(c.min)),
            ("second".to_string(), Value::int(c.sec)),
            ("nanosecond".to_string(), Value::int(i64::from(t.nsec))),
        ];
        Ok(rt.make_struct(fields))
    }),
];

/// CUE's `timeFormat`: whether `value` parses with `layout` (in UTC), with CUE's own message.
fn conforms(value: &str, layout: &str) -> R {
    match parse(layout, value) {
        Ok(_) => Ok(Value::Bool(true)),
        Err(_) => Err(Bottom::eval(format!("invalid time {}", go_quote(value)))),
    }
}

fn parse_rfc(s: &str) -> Result<Time, Rc<Bottom>> {
    parse(RFC3339_NANO, s).map_err(Bottom::eval)
}

/// An int argument as CUE's `CallCtxt.Int64` takes it: values of up to 64 bits saturate, larger
/// ones are an error.
fn a_int64(a: &[Value], i: usize) -> Result<i64, Rc<Bottom>> {
    if let Some(Value::Num(n, NumKind::Int)) = a.get(i)
        && n.to_i64().is_none()
        && let Some(b) = n.to_bigint()
    {
        if b.bits() > 64 {
            return Err(Bottom::eval(format!(
                "int {b} overflows int64 in argument {i}"
            )));
        }
        return Ok(if n.is_sign_negative() {
            i64::MIN
        } else {
            i64::MAX
        });
    }
    a_int(a, i)
}

/// An instant and the zone offset it is shown in. Zones have no names here: CUE parses in UTC,
/// where Go names a zero offset `UTC` and leaves other offsets unnamed.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Time {
    /// Seconds since the Unix epoch.
    sec: i64,
    nsec: u32,
    /// Offset east of UTC, in seconds.
    offset: i64,
}

struct Civil {
    year: i64,
    month: i64,
    day: i64,
    hour: i64,
    min: i64,
    sec: i64,
    yday: i64,
    wday: i64,
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The civil date (year, month, day) of a day count since 1970-01-01 (Howard Hinnant's
/// algorithm).
pub(crate) fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// Go's leap-year rule (with Go's truncating remainder, as for negative years).
fn is_leap(y: i64) -> bool {
    y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)
}

fn days_in(m: i64, y: i64) -> i64 {
    match m {
        2 if is_leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days before the first of month `m` (1 to 13) in a common year.
fn days_before(m: i64) -> i64 {
    const D: [i64; 13] = [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334, 365];
    D[(m - 1).clamp(0, 12) as usize]
}

/// Go counts calendar fields from an "absolute" epoch, March 1 of year -292277022400, in
/// unsigned seconds; times far outside it (`time.Unix` of huge values) wrap around as in Go.
const ABSOLUTE_YEARS: u64 = 292_277_022_400;
const ABSOLUTE_EPOCH_DAYS: i64 = (ABSOLUTE_YEARS * 365 + ABSOLUTE_YEARS / 400 * 97 + 306) as i64;
const UNIX_TO_INTERNAL: i64 = (1969 * 365 + 1969 / 4 - 1969 / 100 + 1969 / 400) * 86_400;
const UNIX_TO_ABSOLUTE: i64 = UNIX_TO_INTERNAL + ABSOLUTE_EPOCH_DAYS * 86_400;

impl Time {
    fn utc(&self) -> Time {
        Time {
            offset: 0,
            ..self.clone()
        }
    }

    /// Go's `time.Unix(sec, nsec).UTC()`, with Go's normalisation of `nsec` and its wrap-around.
    fn unix(sec: i64, nsec: i64) -> Time {
        let (mut sec, mut nsec) = (sec, nsec);
        if !(0..1_000_000_000).contains(&nsec) {
            let n = nsec / 1_000_000_000;
            sec = sec.wrapping_add(n);
            nsec -= n * 1_000_000_000;
            if nsec < 0 {
                nsec += 1_000_000_000;
                sec = sec.wrapping_sub(1);
            }
        }
        Time {
            sec,
            nsec: nsec as u32,
            offset: 0,
        }
    }

    /// The calendar fields in the time's zone, computed as Go does.
    fn civil(&self) -> Civil {
        let abs = self
            .sec
            .wrapping_add(self.offset)
            .wrapping_add(UNIX_TO_ABSOLUTE) as u64;
        let days = abs / 86_400;
        // Split into century, year of century and day of a March-based year.
        let d = 4 * days + 3;
        let century = d / 146_097;
        let cd = (d % 146_097) | 3;
        let p = 2_939_745 * cd;
        let cyear = p >> 32;
        let ayday = (p & 0xffff_ffff) / 2_939_745 / 4;
        let md = 2141 * ayday + 197_913;
        let amonth = (md >> 16) as i64;
        let mday = 1 + (md & 0xffff) / 2141;
        let jan_feb = i64::from(ayday >= 306);
        let year = (century.wrapping_mul(100).wrapping_sub(ABSOLUTE_YEARS) as i64)
            .wrapping_add(cyear as i64)
            .wrapping_add(jan_feb);
        let leap = cyear.is_multiple_of(4) && (cyear != 0 || century.is_multiple_of(4));
        let secs = (abs % 86_400) as i64;
        Civil {
            year,
            month: amonth - jan_feb * 12,
            day: mday as i64,
            hour: secs / 3600,
            min: secs / 60 % 60,
            sec: secs % 60,
            yday: ayday as i64 + 60 + i64::from(leap && jan_feb == 0) - 365 * jan_feb,
            wday: ((days + 3) % 7) as i64,
        }
    }
}

const LONG_MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
const SHORT_MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];
const LONG_DAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];
const SHORT_DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];

/// An element of a Go layout.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Std {
    LongMonth,
    Month,
    NumMonth,
    ZeroMonth,
    LongWeekDay,
    WeekDay,
    Day,
    UnderDay,
    ZeroDay,
    UnderYearDay,
    ZeroYearDay,
    Hour,
    Hour12,
    ZeroHour12,
    Minute,
    ZeroMinute,
    Second,
    ZeroSecond,
    LongYear,
    Year,
    PM,
    Pm,
    TZ,
    /// A numeric zone: `Z` for UTC when `iso`; hours only when `short`, else hours and
    /// minutes, and seconds when `secs`; `colon` between them.
    Zone {
        iso: bool,
        short: bool,
        colon: bool,
        secs: bool,
    },
    /// Fractional seconds: how many digits, the separator (`.` or `,`), and whether trailing
    /// zeros are dropped (`.999`).
    Frac {
        n: usize,
        sep: u8,
        trim: bool,
    },
}

/// Go's `nextStdChunk`: the length of the literal text before the next layout element, the
/// element, and where the rest of the layout begins.
fn next_std_chunk(l: &[u8]) -> (usize, Option<Std>, usize) {
    use Std::*;
    let has = |i: usize, p: &str| l[i..].starts_with(p.as_bytes());
    let lower_at = |j: usize| l.get(j).is_some_and(u8::is_ascii_lowercase);
    let zone = |iso, short, colon, secs| Zone {
        iso,
        short,
        colon,
        secs,
    };
    for i in 0..l.len() {
        let found = match l[i] {
            b'J' if has(i, "January") => Some((i, LongMonth, i + 7)),
            b'J' if has(i, "Jan") && !lower_at(i + 3) => Some((i, Month, i + 3)),
            b'M' if has(i, "Monday") => Some((i, LongWeekDay, i + 6)),
            b'M' if has(i, "Mon") && !lower_at(i + 3) => Some((i, WeekDay, i + 3)),
            b'M' if has(i, "MST") => Some((i, TZ, i + 3)),
            b'0' if matches!(l.get(i + 1), Some(b'1'..=b'6')) => {
                let std = [ZeroMonth, ZeroDay, ZeroHour12, ZeroMinute, ZeroSecond, Year]
                    [usize::from(l[i + 1] - b'1')];
                Some((i, std, i + 2))
            }
            b'0' if has(i, "002") => Some((i, ZeroYearDay, i + 3)),
            b'1' if has(i, "15") => Some((i, Hour, i + 2)),
            b'1' => Some((i, NumMonth, i + 1)),
            b'2' if has(i, "2006") => Some((i, LongYear, i + 4)),
            b'2' => Some((i, Day, i + 1)),
            // `_2006` is a literal `_` and the year.
            b'_' if has(i, "_2006") => Some((i + 1, LongYear, i + 5)),
            b'_' if has(i, "_2") => Some((i, UnderDay, i + 2)),
            b'_' if has(i, "__2") => Some((i, UnderYearDay, i + 3)),
            b'3' => Some((i, Hour12, i + 1)),
            b'4' => Some((i, Minute, i + 1)),
            b'5' => Some((i, Second, i + 1)),
            b'P' if has(i, "PM") => Some((i, PM, i + 2)),
            b'p' if has(i, "pm") => Some((i, Pm, i + 2)),
            c @ (b'-' | b'Z') => {
                let iso = c == b'Z';
                let rest = &l[i + 1..];
                [
                    ("070000", false, false, true),
                    ("07:00:00", false, true, true),
                    ("0700", false, false, false),
                    ("07:00", false, true, false),
                    ("07", true, false, false),
                ]
                .into_iter()
                .find(|(p, ..)| rest.starts_with(p.as_bytes()))
                .map(|(p, short, colon, secs)| (i, zone(iso, short, colon, secs), i + 1 + p.len()))
            }
            sep @ (b'.' | b',') if matches!(l.get(i + 1), Some(b'0' | b'9')) => {
                let ch = l[i + 1];
                let mut j = i + 1;
                while j < l.len() && l[j] == ch {
                    j += 1;
                }
                // Only a run of one digit that ends the number is a fraction.
                (!l.get(j).is_some_and(u8::is_ascii_digit)).then_some((
                    i,
                    Frac {
                        n: (j - i - 1) & 0xfff,
                        sep,
                        trim: ch == b'9',
                    },
                    j,
                ))
            }
            _ => None,
        };
        if let Some((p, std, rest)) = found {
            return (p, Some(std), rest);
        }
    }
    (l.len(), None, l.len())
}

/// Go's `appendInt`: the decimal form of `x`, its digits padded with zeros to `width`.
fn append_int(b: &mut Vec<u8>, x: i64, width: usize) {
    if x < 0 {
        b.push(b'-');
    }
    let digits = x.unsigned_abs().to_string();
    b.resize(b.len() + width.saturating_sub(digits.len()), b'0');
    b.extend_from_slice(digits.as_bytes());
}

/// Go's `Time.Format`.
pub(super) fn format(t: &Time, layout: &str) -> String {
    let c = t.civil();
    let offset = t.offset;
    let mut b: Vec<u8> = Vec::new();
    let mut l = layout.as_bytes();
    while !l.is_empty() {
        let (p, std, rest) = next_std_chunk(l);
        b.extend_from_slice(&l[..p]);
        let Some(std) = std else { break };
        l = &l[rest..];
        let hr12 = if c.hour % 12 == 0 { 12 } else { c.hour % 12 };
        match std {
            Std::Year => append_int(&mut b, c.year.unsigned_abs() as i64 % 100, 2),
            Std::LongYear => append_int(&mut b, c.year, 4),
            Std::Month => b.extend_from_slice(SHORT_MONTHS[(c.month - 1) as usize].as_bytes()),
            Std::LongMonth => b.extend_from_slice(LONG_MONTHS[(c.month - 1) as usize].as_bytes()),
            Std::NumMonth => append_int(&mut b, c.month, 0),
            Std::ZeroMonth => append_int(&mut b, c.month, 2),
            Std::WeekDay => b.extend_from_slice(SHORT_DAYS[c.wday as usize].as_bytes()),
            Std::LongWeekDay => b.extend_from_slice(LONG_DAYS[c.wday as usize].as_bytes()),
            Std::Day => append_int(&mut b, c.day, 0),
            Std::UnderDay => {
                if c.day < 10 {
                    b.push(b' ');
                }
                append_int(&mut b, c.day, 0);
            }
            Std::ZeroDay => append_int(&mut b, c.day, 2),
            Std::UnderYearDay => {
                if c.yday < 100 {
                    b.push(b' ');
                    if c.yday < 10 {
                        b.push(b' ');
                    }
                }
                append_int(&mut b, c.yday, 0);
            }
            Std::ZeroYearDay => append_int(&mut b, c.yday, 3),
            Std::Hour => append_int(&mut b, c.hour, 2),
            Std::Hour12 => append_int(&mut b, hr12, 0),
            Std::ZeroHour12 => append_int(&mut b, hr12, 2),
            Std::Minute => append_int(&mut b, c.min, 0),
            Std::ZeroMinute => append_int(&mut b, c.min, 2),
            Std::Second => append_int(&mut b, c.sec, 0),
            Std::ZeroSecond => append_int(&mut b, c.sec, 2),
            Std::PM => b.extend_from_slice(if c.hour >= 12 { b"PM" } else { b"AM" }),
            Std::Pm => b.extend_from_slice(if c.hour >= 12 { b"pm" } else { b"am" }),
            Std::Zone {
                iso,
                short,
                colon,
                secs,
            } => {
                if offset == 0 && iso {
                    b.push(b'Z');
                    continue;
                }
                // The sign is that of the offset in whole minutes, as in Go.
                let (mut zone, mut abs_off) = (offset / 60, offset);
                if zone < 0 {
                    b.push(b'-');
                    zone = -zone;
                    abs_off = -abs_off;
                } else {
                    b.push(b'+');
                }
                append_int(&mut b, zone / 60, 2);
                if colon {
                    b.push(b':');
                }
                if !short {
                    append_int(&mut b, zone % 60, 2);
                }
                if secs {
                    if colon {
                        b.push(b':');
                    }
                    append_int(&mut b, abs_off % 60, 2);
                }
            }
            Std::TZ => {
                // A zero offset is Go's UTC zone; other offsets have no zone name and print
                // as -0700.
                if offset == 0 {
                    b.extend_from_slice(b"UTC");
                    continue;
                }
                let mut zone = offset / 60;
                if zone < 0 {
                    b.push(b'-');
                    zone = -zone;
                } else {
                    b.push(b'+');
                }
                append_int(&mut b, zone / 60, 2);
                append_int(&mut b, zone % 60, 2);
            }
            Std::Frac { n, sep, trim } => {
                if trim && (n == 0 || t.nsec == 0) {
                    continue;
                }
                let start = b.len();
                b.push(sep);
                append_int(&mut b, i64::from(t.nsec), 9);
                if n < 9 {
                    b.truncate(b.len() - 9 + n);
                }
                if trim {
                    while b.len() > start && b.last() == Some(&b'0') {
                        b.pop();
                    }
                    if b.last() == Some(&sep) {
                        b.pop();
                    }
                }
            }
        }
    }
    String::from_utf8_lossy(&b).into_owned()
}

/// Go's `time.quote`, for its error messages: bytes outside printable ASCII as `\x..`.
fn tquote(s: &[u8]) -> String {
    let mut out = String::from("\"");
    for &c in s {
        if !(b' '..0x80).contains(&c) {
            out.push_str(&format!("\\x{c:02x}"));
        } else {
            if c == b'"' || c == b'\\' {
                out.push('\\');
            }
            out.push(char::from(c));
        }
    }
    out.push('"');
    out
}

fn is_digit(s: &[u8], i: usize) -> bool {
    s.get(i).is_some_and(u8::is_ascii_digit)
}

/// Go's `leadingInt`: the leading digits, up to 2^63.
fn leading_int(s: &[u8]) -> Option<(u64, &[u8])> {
    let mut x: u64 = 0;
    let mut i = 0;
    while i < s.len() && s[i].is_ascii_digit() {
        if x > (1 << 63) / 10 {
            return None;
        }
        x = x * 10 + u64::from(s[i] - b'0');
        if x > 1 << 63 {
            return None;
        }
        i += 1;
    }
    Some((x, &s[i..]))
}

/// Go's `atoi` of the time package: an optional sign and digits only.
fn atoi(s: &[u8]) -> Option<i64> {
    let (neg, s) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let (x, rem) = leading_int(s)?;
    if !rem.is_empty() {
        return None;
    }
    let x = x as i64;
    Some(if neg { x.wrapping_neg() } else { x })
}

/// Go's `getnum`: one or two digits (two when `fixed`).
fn getnum(s: &[u8], fixed: bool) -> Option<(i64, &[u8])> {
    if !is_digit(s, 0) {
        return None;
    }
    if !is_digit(s, 1) {
        if fixed {
            return None;
        }
        return Some((i64::from(s[0] - b'0'), &s[1..]));
    }
    Some((
        i64::from(s[0] - b'0') * 10 + i64::from(s[1] - b'0'),
        &s[2..],
    ))
}

/// Go's `getnum3`: one to three digits (three when `fixed`).
fn getnum3(s: &[u8], fixed: bool) -> Option<(i64, &[u8])> {
    let mut n = 0;
    let mut i = 0;
    while i < 3 && is_digit(s, i) {
        n = n * 10 + i64::from(s[i] - b'0');
        i += 1;
    }
    if i == 0 || fixed && i != 3 {
        return None;
    }
    Some((n, &s[i..]))
}

/// Go's `lookup`: the entry of `tab` that `val` starts with, ignoring ASCII case.
fn lookup<'a>(tab: &[&str], val: &'a [u8]) -> Option<(i64, &'a [u8])> {
    let matches = |a: &[u8], b: &[u8]| {
        a.iter().zip(b).all(|(&c1, &c2)| {
            c1 == c2 || {
                let (l1, l2) = (c1 | 0x20, c2 | 0x20);
                l1 == l2 && l1.is_ascii_lowercase()
            }
        })
    };
    tab.iter().enumerate().find_map(|(i, v)| {
        let v = v.as_bytes();
        (val.len() >= v.len() && matches(&val[..v.len()], v)).then(|| (i as i64, &val[v.len()..]))
    })
}

fn cutspace(s: &[u8]) -> &[u8] {
    let n = s.iter().take_while(|&&c| c == b' ').count();
    &s[n..]
}

/// Go's `skip`: removes the literal `prefix` from `value`, a run of spaces matching any run;
/// on failure, the value from where it differs.
fn skip<'a>(value: &'a [u8], prefix: &[u8]) -> Result<&'a [u8], &'a [u8]> {
    let (mut v, mut p) = (value, prefix);
    while let Some(&c) = p.first() {
        if c == b' ' {
            if v.first().is_some_and(|&x| x != b' ') {
                return Err(v);
            }
            p = cutspace(p);
            v = cutspace(v);
            continue;
        }
        if v.first() != Some(&c) {
            return Err(v);
        }
        p = &p[1..];
        v = &v[1..];
    }
    Ok(v)
}

/// Go's `parseSignedOffset`: the length of a signed hour offset (-23 to +23), or 0.
fn parse_signed_offset(v: &[u8]) -> usize {
    if !matches!(v.first(), Some(b'-' | b'+')) {
        return 0;
    }
    match leading_int(&v[1..]) {
        Some((x, rem)) if rem.len() != v.len() - 1 && x <= 23 => v.len() - rem.len(),
        _ => 0,
    }
}

/// Go's `parseTimeZone`: the length of a zone abbreviation at the start of `v`.
fn parse_time_zone(v: &[u8]) -> Option<usize> {
    if v.len() < 3 {
        return None;
    }
    if v.starts_with(b"ChST") || v.starts_with(b"MeST") {
        return Some(4);
    }
    if v.starts_with(b"GMT") {
        let rest = &v[3..];
        return Some(if rest.is_empty() {
            3
        } else {
            3 + parse_signed_offset(rest)
        });
    }
    if v[0] == b'+' || v[0] == b'-' {
        let n = parse_signed_offset(v);
        return (n > 0).then_some(n);
    }
    let upper = v
        .iter()
        .take(6)
        .take_while(|c| c.is_ascii_uppercase())
        .count();
    match upper {
        5 if v[4] == b'T' => Some(5),
        4 if v[3] == b'T' || v.starts_with(b"WITA") => Some(4),
        3 => Some(3),
        _ => None,
    }
}

/// Go's `parseNanoseconds` of a separator and digits: nanoseconds, or whether the failure is
/// a range error.
fn parse_nanoseconds(value: &[u8], nbytes: usize) -> Result<i64, bool> {
    if !matches!(value.first(), Some(b'.' | b',')) {
        return Err(false);
    }
    let nbytes = nbytes.min(10);
    let ns = atoi(&value[1..nbytes]).ok_or(false)?;
    if ns < 0 {
        return Err(true);
    }
    Ok(ns * 10i64.pow((10 - nbytes) as u32))
}

/// Go's `time.ParseInLocation(layout, value, time.UTC)` (also what `time.Parse` gives with the
/// local zone UTC). Zone abbreviations do not move the time; `GMT+3` only labels it.
pub(super) fn parse(layout: &str, value: &str) -> Result<Time, String> {
    let (alayout, avalue) = (layout.as_bytes(), value.as_bytes());
    let mut l = alayout;
    let mut v = avalue;
    let (mut year, mut month, mut day, mut yday) = (0i64, -1i64, -1i64, -1i64);
    let (mut hour, mut min, mut sec, mut nsec) = (0i64, 0i64, 0i64, 0i64);
    let (mut am, mut pm) = (false, false);
    let mut utc = false;
    let mut zone_offset: i64 = -1;
    let mut zone_name: &[u8] = b"";
    let cannot = |lelem: &[u8], velem: &[u8]| {
        format!(
            "parsing time {} as {}: cannot parse {} as {}",
            tquote(avalue),
            tquote(alayout),
            tquote(velem),
            tquote(lelem)
        )
    };
    let message = |m: &str| format!("parsing time {}{m}", tquote(avalue));
    loop {
        let (p, std, rest) = next_std_chunk(l);
        let prefix = &l[..p];
        let stdstr = &l[p..rest];
        v = skip(v, prefix).map_err(|at| cannot(prefix, at))?;
        let Some(std) = std else {
            if !v.is_empty() {
                return Err(message(&format!(": extra text: {}", tquote(v))));
            }
            break;
        };
        l = &l[rest..];
        let hold = v;
        let mut range = "";
        let mut bad = false;
        match std {
            Std::Year => {
                if v.len() < 2 {
                    bad = true;
                } else {
                    let (p, r) = v.split_at(2);
                    v = r;
                    match atoi(p) {
                        Some(y) => year = if y >= 69 { y + 1900 } else { y + 2000 },
                        None => bad = true,
                    }
                }
            }
            Std::LongYear => {
                if v.len() < 4 || !is_digit(v, 0) {
                    bad = true;
                } else {
                    let (p, r) = v.split_at(4);
                    v = r;
                    match atoi(p) {
                        Some(y) => year = y,
                        None => bad = true,
                    }
                }
            }
            Std::Month | Std::LongMonth | Std::WeekDay | Std::LongWeekDay => {
                let tab: &[&str] = match std {
                    Std::Month => &SHORT_MONTHS,
                    Std::LongMonth => &LONG_MONTHS,
                    Std::WeekDay => &SHORT_DAYS,
                    _ => &LONG_DAYS,
                };
                match lookup(tab, v) {
                    Some((i, r)) => {
                        if matches!(std, Std::Month | Std::LongMonth) {
                            month = i + 1;
                        }
                        v = r;
                    }
                    None => bad = true,
                }
            }
            Std::NumMonth | Std::ZeroMonth => match getnum(v, std == Std::ZeroMonth) {
                Some((m, r)) => {
                    month = m;
                    v = r;
                    if !(1..=12).contains(&m) {
                        range = "month";
                    }
                }
                None => bad = true,
            },
            Std::Day | Std::UnderDay | Std::ZeroDay => {
                if std == Std::UnderDay && v.first() == Some(&b' ') {
                    v = &v[1..];
                }
                match getnum(v, std == Std::ZeroDay) {
                    Some((d, r)) => {
                        day = d;
                        v = r;
                    }
                    None => bad = true,
                }
            }
            Std::UnderYearDay | Std::ZeroYearDay => {
                for _ in 0..2 {
                    if std == Std::UnderYearDay && v.first() == Some(&b' ') {
                        v = &v[1..];
                    }
                }
                match getnum3(v, std == Std::ZeroYearDay) {
                    Some((d, r)) => {
                        yday = d;
                        v = r;
                    }
                    None => bad = true,
                }
            }
            Std::Hour | Std::Hour12 | Std::ZeroHour12 => {
                match getnum(v, std == Std::ZeroHour12) {
                    Some((h, r)) => {
                        hour = h;
                        v = r;
                    }
                    None => {
                        hour = 0;
                        bad = true;
                    }
                }
                if (std == Std::Hour && hour >= 24) || (std != Std::Hour && hour > 12) {
                    range = "hour";
                }
            }
            Std::Minute | Std::ZeroMinute => {
                match getnum(v, std == Std::ZeroMinute) {
                    Some((m, r)) => {
                        min = m;
                        v = r;
                    }
                    None => {
                        min = 0;
                        bad = true;
                    }
                }
                if min >= 60 {
                    range = "minute";
                }
            }
            Std::Second | Std::ZeroSecond => match getnum(v, std == Std::ZeroSecond) {
                None => bad = true,
                Some((s, r)) => {
                    sec = s;
                    v = r;
                    if sec >= 60 {
                        range = "second";
                    } else if v.len() >= 2 && matches!(v[0], b'.' | b',') && is_digit(v, 1) {
                        // A fraction the layout does not ask for is taken here, unless the
                        // next element is a fraction.
                        if !matches!(next_std_chunk(l).1, Some(Std::Frac { .. })) {
                            let mut n = 2;
                            while is_digit(v, n) {
                                n += 1;
                            }
                            match parse_nanoseconds(v, n) {
                                Ok(ns) => nsec = ns,
                                Err(true) => range = "fractional second",
                                Err(false) => bad = true,
                            }
                            v = &v[n..];
                        }
                    }
                }
            },
            Std::PM | Std::Pm => {
                if v.len() < 2 {
                    bad = true;
                } else {
                    let (p, r) = v.split_at(2);
                    v = r;
                    match (std, p) {
                        (Std::PM, b"PM") | (Std::Pm, b"pm") => pm = true,
                        (Std::PM, b"AM") | (Std::Pm, b"am") => am = true,
                        _ => bad = true,
                    }
                }
            }
            Std::Zone { iso: true, .. } if v.first() == Some(&b'Z') => {
                v = &v[1..];
                utc = true;
            }
            Std::Zone {
                short, colon, secs, ..
            } => {
                // Sign, hours, minutes, seconds, and the length taken.
                let parts: Option<(usize, usize, usize, usize)> = if colon && !secs {
                    (v.len() >= 6 && v[3] == b':').then_some((1, 4, 0, 6))
                } else if short {
                    (v.len() >= 3).then_some((1, 0, 0, 3))
                } else if colon {
                    (v.len() >= 9 && v[3] == b':' && v[6] == b':').then_some((1, 4, 7, 9))
                } else if secs {
                    (v.len() >= 7).then_some((1, 3, 5, 7))
                } else {
                    (v.len() >= 5).then_some((1, 3, 0, 5))
                };
                match parts {
                    None => bad = true,
                    Some((hi, mi, si, len)) => {
                        let field = |at: usize| if at == 0 { &b"00"[..] } else { &v[at..at + 2] };
                        let (hh, mm, ss) = (field(hi), field(mi), field(si));
                        let sign = v[0];
                        v = &v[len..];
                        let (mut hr, mut mn, mut sc) = (0, 0, 0);
                        match getnum(hh, true) {
                            Some((h, _)) => {
                                hr = h;
                                match getnum(mm, true) {
                                    Some((m, _)) => {
                                        mn = m;
                                        match getnum(ss, true) {
                                            Some((s, _)) => sc = s,
                                            None => bad = true,
                                        }
                                    }
                                    None => bad = true,
                                }
                            }
                            None => bad = true,
                        }
                        // Go allows 24 hours, 60 minutes and 60 seconds.
                        if hr > 24 {
                            range = "time zone offset hour";
                        }
                        if mn > 60 {
                            range = "time zone offset minute";
                        }
                        if sc > 60 {
                            range = "time zone offset second";
                        }
                        zone_offset = (hr * 60 + mn) * 60 + sc;
                        match sign {
                            b'+' => {}
                            b'-' => zone_offset = -zone_offset,
                            _ => bad = true,
                        }
                    }
                }
            }
            Std::TZ => {
                if v.starts_with(b"UTC") {
                    utc = true;
                    v = &v[3..];
                } else {
                    match parse_time_zone(v) {
                        Some(n) => {
                            zone_name = &v[..n];
                            v = &v[n..];
                        }
                        None => bad = true,
                    }
                }
            }
            Std::Frac { n, trim: false, .. } => {
                let ndigit = 1 + n;
                if v.len() < ndigit {
                    bad = true;
                } else {
                    match parse_nanoseconds(v, ndigit) {
                        Ok(ns) => nsec = ns,
                        Err(true) => range = "fractional second",
                        Err(false) => bad = true,
                    }
                    v = &v[ndigit..];
                }
            }
            Std::Frac { trim: true, .. } => {
                // An omitted fraction is fine; otherwise every digit is taken.
                if v.len() >= 2 && matches!(v[0], b'.' | b',') && v[1].is_ascii_digit() {
                    let mut i = 0;
                    while is_digit(v, i + 1) {
                        i += 1;
                    }
                    match parse_nanoseconds(v, 1 + i) {
                        Ok(ns) => nsec = ns,
                        Err(true) => range = "fractional second",
                        Err(false) => bad = true,
                    }
                    v = &v[1 + i..];
                }
            }
        }
        if !range.is_empty() {
            return Err(message(&format!(": {range} out of range")));
        }
        if bad {
            return Err(cannot(stdstr, hold));
        }
    }
    if pm && hour < 12 {
        hour += 12;
    } else if am && hour == 12 {
        hour = 0;
    }
    if yday >= 0 {
        let (mut m, mut d) = (0, 0);
        if is_leap(year) {
            if yday == 31 + 29 {
                m = 2;
                d = 29;
            } else if yday > 31 + 29 {
                yday -= 1;
            }
        }
        if !(1..=365).contains(&yday) {
            return Err(message(": day-of-year out of range"));
        }
        if m == 0 {
            m = (yday - 1) / 31 + 1;
            if days_before(m + 1) < yday {
                m += 1;
            }
            d = yday - days_before(m);
        }
        if month >= 0 && month != m {
            return Err(message(": day-of-year does not match month"));
        }
        month = m;
        if day >= 0 && day != d {
            return Err(message(": day-of-year does not match day"));
        }
        day = d;
    } else {
        if month < 0 {
            month = 1;
        }
        if day < 0 {
            day = 1;
        }
    }
    if day < 1 || day > days_in(month, year) {
        return Err(message(": day out of range"));
    }
    let local = days_from_civil(year, month, day) * 86_400 + hour * 3600 + min * 60 + sec;
    let at = |sec: i64, offset: i64| Time {
        sec,
        nsec: nsec as u32,
        offset,
    };
    if utc {
        return Ok(at(local, 0));
    }
    // An offset of exactly -1 second reads as no offset, as in Go.
    if zone_offset != -1 {
        return Ok(at(local - zone_offset, zone_offset));
    }
    if zone_name.len() > 3 && zone_name.starts_with(b"GMT") {
        return Ok(at(local, atoi(&zone_name[3..]).unwrap_or(0) * 3600));
    }
    Ok(at(local, 0))
}

/// Go's `time.ParseDuration`, in nanoseconds.
pub(super) fn parse_duration(s: &str) -> Result<i64, String> {
    let orig = s.as_bytes();
    let invalid = || format!("time: invalid duration {}", tquote(orig));
    let mut s = orig;
    let mut neg = false;
    if let Some(&c) = s.first()
        && (c == b'-' || c == b'+')
    {
        neg = c == b'-';
        s = &s[1..];
    }
    if s == b"0" {
        return Ok(0);
    }
    if s.is_empty() {
        return Err(invalid());
    }
    let mut d: u64 = 0;
    while !s.is_empty() {
        if !(s[0] == b'.' || s[0].is_ascii_digit()) {
            return Err(invalid());
        }
        let before = s.len();
        let (mut v, rest) = leading_int(s).ok_or_else(invalid)?;
        s = rest;
        let pre = before != s.len();
        // The fraction keeps what fits in 63 bits and scales it as a float64, as Go does.
        let (mut f, mut scale, mut post) = (0u64, 1f64, false);
        if s.first() == Some(&b'.') {
            s = &s[1..];
            let mut overflow = false;
            let mut i = 0;
            while i < s.len() && s[i].is_ascii_digit() {
                if !overflow {
                    if f > ((1u64 << 63) - 1) / 10 {
                        overflow = true;
                    } else {
                        let y = f * 10 + u64::from(s[i] - b'0');
                        if y > 1 << 63 {
                            overflow = true;
                        } else {
                            f = y;
                            scale *= 10.0;
                        }
                    }
                }
                i += 1;
            }
            post = i > 0;
            s = &s[i..];
        }
        if !pre && !post {
            return Err(invalid());
        }
        let u = s
            .iter()
            .take_while(|&&c| c != b'.' && !c.is_ascii_digit())
            .count();
        if u == 0 {
            return Err(format!("time: missing unit in duration {}", tquote(orig)));
        }
        let unit_name = &s[..u];
        s = &s[u..];
        let unit: u64 = match unit_name {
            b"ns" => 1,
            b"us" => 1_000,
            u if u == "µs".as_bytes() || u == "μs".as_bytes() => 1_000,
            b"ms" => 1_000_000,
            b"s" => 1_000_000_000,
            b"m" => 60_000_000_000,
            b"h" => 3_600_000_000_000,
            _ => {
                return Err(format!(
                    "time: unknown unit {} in duration {}",
                    tquote(unit_name),
                    tquote(orig)
                ));
            }
        };
        if v > (1 << 63) / unit {
            return Err(invalid());
        }
        v *= unit;
        if f > 0 {
            v += (f as f64 * (unit as f64 / scale)) as u64;
            if v > 1 << 63 {
                return Err(invalid());
            }
        }
        d = d.wrapping_add(v);
        if d > 1 << 63 {
            return Err(invalid());
        }
    }
    if neg {
        return Ok((d as i64).wrapping_neg());
    }
    if d > (1 << 63) - 1 {
        return Err(invalid());
    }
    Ok(d as i64)
}

/// Go's `Duration.String`.
pub(super) fn format_duration(d: i64) -> String {
    if d == 0 {
        return "0s".into();
    }
    let u = d.unsigned_abs();
    let mut out = String::new();
    if u < 1_000_000_000 {
        let (unit, div) = if u < 1_000 {
            ("ns", 1)
        } else if u < 1_000_000 {
            ("µs", 1_000)
        } else {
            ("ms", 1_000_000)
        };
        out.push_str(&frac_text(u, div));
        out.push_str(unit);
    } else {
        let mins = u / 60_000_000_000;
        let (h, m) = (mins / 60, mins % 60);
        if h > 0 {
            out.push_str(&format!("{h}h"));
        }
        if mins > 0 {
            out.push_str(&format!("{m}m"));
        }
        out.push_str(&frac_text(u % 60_000_000_000, 1_000_000_000));
        out.push('s');
    }
    if d < 0 {
        out.insert(0, '-');
    }
    out
}

fn frac_text(v: u64, div: u64) -> String {
    let (i, f) = (v / div, v % div);
    if f == 0 {
        return i.to_string();
    }
    let width = div.to_string().len() - 1;
    let fs = format!("{f:0width$}");
    format!("{i}.{}", fs.trim_end_matches('0'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(format_duration(10_920_000_000_000), "3h2m0s");
        assert_eq!(format_duration(5_000_000_000), "5s");
        assert_eq!(format_duration(600_000_000), "600ms");
        assert_eq!(format_duration(1_500), "1.5µs");
        assert_eq!(parse_duration("1h30m").unwrap(), 5_400_000_000_000);
        assert_eq!(parse_duration("1.5s").unwrap(), 1_500_000_000);
        assert!(parse_duration("1x").is_err());
    }

    #[test]
    fn layouts() {
        let t = parse(RFC3339_NANO, "2017-07-14T02:40:00.000123456Z").unwrap();
        assert_eq!(t.sec, 1_500_000_000);
        assert_eq!(format(&t, RFC3339_NANO), "2017-07-14T02:40:00.000123456Z");
        let l = "01/02 03:04:05PM '06 -0700";
        assert_eq!(
            format(&parse(l, l).unwrap().utc(), RFC3339_NANO),
            "2006-01-02T22:04:05Z"
        );
        let t = parse("02 Jan 06 15:04 MST", "01 Jul 21 17:54 CEST").unwrap();
        assert_eq!(format(&t.utc(), RFC3339_NANO), "2021-07-01T17:54:00Z");
        let t = parse(RFC3339_NANO, "1937-01-01T12:00:27.87+00:20").unwrap();
        assert_eq!(format(&t, RFC3339_NANO), "1937-01-01T12:00:27.87+00:20");
        assert_eq!(
            parse(RFC3339_NANO, "2019-01-02T15:04:05").unwrap_err(),
            "parsing time \"2019-01-02T15:04:05\" as \"2006-01-02T15:04:05.999999999Z07:00\": cannot parse \"\" as \"Z07:00\""
        );
        assert_eq!(
            parse(RFC3339_NANO, "2019-01-02T15:04:61Z").unwrap_err(),
            "parsing time \"2019-01-02T15:04:61Z\": second out of range"
        );
    }

    fn export(src: &str) -> String {
        let src = format!("import \"time\"\n{src}");
        let mut inst =
            crate::eval::api::Instance::from_sources(&[("in.cue".to_string(), src.to_string())])
                .unwrap_or_else(|e| panic!("{e:?}"));
        match inst.export_json() {
            Ok(s) => s,
            Err(e) => format!("ERROR: {e}"),
        }
    }

    fn assert_error(src: &str, want: &str) {
        let out = export(src);
        assert!(
            out.starts_with("ERROR") && out.contains(want),
            "{src}: {out}"
        );
    }

    // The messages below are from `cue export` of cue v0.17.1.

    #[test]
    fn format_is_a_validator() {
        // x: invalid value "2021-3-04" (does not satisfy time.Format("2006-01-02")): invalid time "2021-3-04"
        assert_error(
            "x: \"2021-3-04\" & time.Format(\"2006-01-02\")",
            "invalid value \"2021-3-04\" (does not satisfy time.Format(\"2006-01-02\")): invalid time \"2021-3-04\"",
        );
        // x: error in call to time.Format: invalid time "x"
        assert_error(
            "x: time.Format(\"x\", time.RFC3339)",
            "error in call to time.Format: invalid time \"x\"",
        );
        // x: error in call to time.Time: invalid time "x"
        assert_error(
            "x: time.Time(\"x\")",
            "error in call to time.Time: invalid time \"x\"",
        );
    }

    #[test]
    fn rfc3339_validation_is_go_parse() {
        // x: invalid value "2021-03-04T05:06:07+25:00" (does not satisfy time.Time): invalid time "2021-03-04T05:06:07+25:00"
        for bad in [
            "2021-03-04T05:06:07+25:00",
            "2021-03-04T05:06:07+23:61",
            "2021-03-04T05:06:05.Z",
            "2021-03-04t05:06:07Z",
            "2021-03-04T05:06:07z",
            "10000-01-01T00:00:00Z",
            "2021-02-29T00:00:00Z",
            "2021-12-01T24:00:00Z",
            "2021-12-01T23:59:60Z",
            "2021-12-01T23:59:59+0100",
        ] {
            assert_error(
                &format!("x: time.Time & {bad:?}"),
                &format!(
                    "invalid value {bad:?} (does not satisfy time.Time): invalid time {bad:?}"
                ),
            );
        }
    }

    #[test]
    fn go_error_messages() {
        // x: error in call to time.Parse: parsing time "12:00:59 +99:00": time zone offset hour out of range
        assert_error(
            "x: time.Parse(\"15:04:05 -07:00\", \"12:00:59 +99:00\")",
            "error in call to time.Parse: parsing time \"12:00:59 +99:00\": time zone offset hour out of range",
        );
        // parsing time "2021 h\xc3\xa8llo" as "2006 h\xc3\xa9llo": cannot parse "\xa8llo" as " h\xc3\xa9llo"
        assert_eq!(
            parse("2006 héllo", "2021 hèllo").unwrap_err(),
            r#"parsing time "2021 h\xc3\xa8llo" as "2006 h\xc3\xa9llo": cannot parse "\xa8llo" as " h\xc3\xa9llo""#
        );
        // parsing time "12:00:59.-12": fractional second out of range
        assert_eq!(
            parse("15:04:05.000", "12:00:59.-12").unwrap_err(),
            r#"parsing time "12:00:59.-12": fractional second out of range"#
        );
        // parsing time "060 02 2021": day-of-year does not match month
        assert_eq!(
            parse("002 01 2006", "060 02 2021").unwrap_err(),
            r#"parsing time "060 02 2021": day-of-year does not match month"#
        );
        // x: invalid value "1µm" (does not satisfy time.Duration): time: unknown unit "\xc2\xb5m" in duration "1\xc2\xb5m"
        assert_error(
            "x: \"1µm\" & time.Duration",
            r#"invalid value "1µm" (does not satisfy time.Duration): time: unknown unit "\xc2\xb5m" in duration "1\xc2\xb5m""#,
        );
        // x: error in call to time.ParseDuration: time: invalid duration "9223372036854775808ns"
        assert_error(
            "x: time.ParseDuration(\"9223372036854775808ns\")",
            "time: invalid duration \"9223372036854775808ns\"",
        );
        // x: error in call to time.FormatDuration: int 18446744073709551616 overflows int64 in argument 0
        assert_error(
            "x: time.FormatDuration(18446744073709551616)",
            "error in call to time.FormatDuration: int 18446744073709551616 overflows int64 in argument 0",
        );
        // x: undefined field: Stamp
        assert_error("x: time.Stamp", "undefined field: Stamp");
    }
}
