//! The `time` package: Go's reference-time layouts (`Format`, `Parse`, `FormatString`), RFC 3339
//! timestamps (the `Time` validator, `Unix`, `ToUnix`, `Split`) and Go's duration syntax
//! (`ParseDuration`, `FormatDuration`, the `Duration` validator). Hand-written: no crate
//! implements Go's layout language, and CUE's output is Go's `time` output byte for byte.

use std::rc::Rc;

use super::k::*;
use super::{StdMember, a_int, a_str, constant, func, string, valid, validation_fail};
use crate::eval::label::quote;
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
    str_const!("time.Stamp", "Jan _2 15:04:05"),
    str_const!("time.StampMilli", "Jan _2 15:04:05.000"),
    str_const!("time.StampMicro", "Jan _2 15:04:05.000000"),
    str_const!("time.StampNano", "Jan _2 15:04:05.000000000"),
    str_const!("time.DateTime", "2006-01-02 15:04:05"),
    str_const!("time.DateOnly", "2006-01-02"),
    str_const!("time.TimeOnly", "15:04:05"),
    valid("time.Time", &[S], |_, a| {
        let s = a_str(a, 0)?;
        match parse(RFC3339_NANO, &s) {
            Ok(_) => Ok(Value::Bool(true)),
            Err(_) => Err(validation_fail(
                format!("invalid time {}", quote(&s)),
                false,
            )),
        }
    }),
    valid("time.Duration", &[S], |_, a| {
        let s = a_str(a, 0)?;
        match parse_duration(&s) {
            Ok(_) => Ok(Value::Bool(true)),
            Err(_) => Err(validation_fail(
                format!("invalid duration {}", quote(&s)),
                false,
            )),
        }
    }),
    func("time.ParseDuration", &[S], |_, a| {
        let s = a_str(a, 0)?;
        parse_duration(&s)
            .map(|d| Value::num(Num::from_i128(d), NumKind::Int))
            .map_err(Bottom::eval)
    }),
    func("time.FormatDuration", &[I], |_, a| {
        string(format_duration(i128::from(a_int(a, 0)?)))
    }),
    func("time.Format", &[S, S], |_, a| {
        let (v, layout) = (a_str(a, 0)?, a_str(a, 1)?);
        let t = parse(RFC3339_NANO, &v)
            .map_err(|_| Bottom::eval(format!("invalid time {}", quote(&v))))?;
        string(format(&t, &layout))
    }),
    func("time.FormatString", &[S, S], |_, a| {
        let (layout, v) = (a_str(a, 0)?, a_str(a, 1)?);
        let t = parse(RFC3339_NANO, &v)
            .map_err(|_| Bottom::eval(format!("invalid time {}", quote(&v))))?;
        string(format(&t, &layout))
    }),
    func("time.Parse", &[S, S], |_, a| {
        let (layout, v) = (a_str(a, 0)?, a_str(a, 1)?);
        let t = parse(&layout, &v).map_err(Bottom::eval)?;
        string(format(&t.utc(), RFC3339_NANO))
    }),
    func("time.Unix", &[I, I], |_, a| {
        let (sec, nsec) = (a_int(a, 0)?, a_int(a, 1)?);
        let total = i128::from(sec) * 1_000_000_000 + i128::from(nsec);
        let t = Time {
            sec: total.div_euclid(1_000_000_000) as i64,
            nsec: total.rem_euclid(1_000_000_000) as u32,
            offset: 0,
            utc: true,
        };
        string(format(&t, RFC3339_NANO))
    }),
    func("time.ToUnix", &[S], |_, a| {
        let t = parse_rfc(&a_str(a, 0)?)?;
        super::int(t.sec)
    }),
    func("time.ToUnixNano", &[S], |_, a| {
        let t = parse_rfc(&a_str(a, 0)?)?;
        let n = i128::from(t.sec) * 1_000_000_000 + i128::from(t.nsec);
        Ok(Value::num(Num::from_i128(n), NumKind::Int))
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

fn parse_rfc(s: &str) -> Result<Time, Rc<Bottom>> {
    parse(RFC3339_NANO, s).map_err(Bottom::eval)
}

/// An instant with the zone offset it was written in.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Time {
    /// Seconds since the Unix epoch (UTC).
    sec: i64,
    nsec: u32,
    /// Offset east of UTC, in seconds.
    offset: i32,
    /// Written as UTC (`Z`).
    utc: bool,
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

impl Time {
    fn utc(&self) -> Time {
        Time {
            offset: 0,
            utc: true,
            ..self.clone()
        }
    }

    fn civil(&self) -> Civil {
        let local = self.sec + i64::from(self.offset);
        let days = local.div_euclid(86_400);
        let secs = local.rem_euclid(86_400);
        let (year, month, day) = civil_from_days(days);
        Civil {
            year,
            month,
            day,
            hour: secs / 3600,
            min: secs / 60 % 60,
            sec: secs % 60,
            yday: days - days_from_civil(year, 1, 1) + 1,
            wday: (days + 4).rem_euclid(7),
        }
    }
}

const MONTHS: [&str; 12] = [
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
const DAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];

/// A piece of a Go layout.
#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Lit(String),
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
    /// Numeric zone: `Z` for UTC when `iso`, colons, seconds.
    Zone {
        iso: bool,
        colon: bool,
        secs: bool,
        hours_only: bool,
    },
    /// Fractional seconds: digits, and whether trailing zeros are dropped (`.999`).
    Frac(usize, bool),
}

fn tokenize(layout: &str) -> Vec<Tok> {
    let b = layout.as_bytes();
    let mut out = Vec::new();
    let mut lit = String::new();
    let mut i = 0;
    let zones: [(&str, Tok); 10] = [
        (
            "Z07:00:00",
            Tok::Zone {
                iso: true,
                colon: true,
                secs: true,
                hours_only: false,
            },
        ),
        (
            "-07:00:00",
            Tok::Zone {
                iso: false,
                colon: true,
                secs: true,
                hours_only: false,
            },
        ),
        (
            "Z070000",
            Tok::Zone {
                iso: true,
                colon: false,
                secs: true,
                hours_only: false,
            },
        ),
        (
            "-070000",
            Tok::Zone {
                iso: false,
                colon: false,
                secs: true,
                hours_only: false,
            },
        ),
        (
            "Z07:00",
            Tok::Zone {
                iso: true,
                colon: true,
                secs: false,
                hours_only: false,
            },
        ),
        (
            "-07:00",
            Tok::Zone {
                iso: false,
                colon: true,
                secs: false,
                hours_only: false,
            },
        ),
        (
            "Z0700",
            Tok::Zone {
                iso: true,
                colon: false,
                secs: false,
                hours_only: false,
            },
        ),
        (
            "-0700",
            Tok::Zone {
                iso: false,
                colon: false,
                secs: false,
                hours_only: false,
            },
        ),
        (
            "Z07",
            Tok::Zone {
                iso: true,
                colon: false,
                secs: false,
                hours_only: true,
            },
        ),
        (
            "-07",
            Tok::Zone {
                iso: false,
                colon: false,
                secs: false,
                hours_only: true,
            },
        ),
    ];
    let words: [(&str, Tok); 22] = [
        ("January", Tok::LongMonth),
        ("Jan", Tok::Month),
        ("Monday", Tok::LongWeekDay),
        ("Mon", Tok::WeekDay),
        ("MST", Tok::TZ),
        ("2006", Tok::LongYear),
        ("2", Tok::Day),
        ("_2", Tok::UnderDay),
        ("__2", Tok::UnderYearDay),
        ("002", Tok::ZeroYearDay),
        ("01", Tok::ZeroMonth),
        ("02", Tok::ZeroDay),
        ("03", Tok::ZeroHour12),
        ("04", Tok::ZeroMinute),
        ("05", Tok::ZeroSecond),
        ("06", Tok::Year),
        ("15", Tok::Hour),
        ("1", Tok::NumMonth),
        ("3", Tok::Hour12),
        ("4", Tok::Minute),
        ("5", Tok::Second),
        ("PM", Tok::PM),
    ];
    'outer: while i < b.len() {
        let rest = &layout[i..];
        // Fractional seconds: `.000` or `,999` after a digit-free position.
        if (b[i] == b'.' || b[i] == b',')
            && i + 1 < b.len()
            && (b[i + 1] == b'0' || b[i + 1] == b'9')
        {
            let d = b[i + 1];
            let mut j = i + 1;
            while j < b.len() && b[j] == d {
                j += 1;
            }
            if !(j < b.len() && b[j].is_ascii_digit()) {
                if !lit.is_empty() {
                    out.push(Tok::Lit(std::mem::take(&mut lit)));
                }
                out.push(Tok::Frac(j - i - 1, d == b'9'));
                i = j;
                continue;
            }
        }
        if rest.starts_with("pm") {
            if !lit.is_empty() {
                out.push(Tok::Lit(std::mem::take(&mut lit)));
            }
            out.push(Tok::Pm);
            i += 2;
            continue;
        }
        for (p, t) in zones.iter().chain(words.iter()) {
            if let Some(after) = rest.strip_prefix(p) {
                // `Jan` and `Mon` are only tokens when not followed by a lower-case letter.
                if matches!(t, Tok::Month | Tok::WeekDay)
                    && after.starts_with(|c: char| c.is_ascii_lowercase())
                {
                    continue;
                }
                if !lit.is_empty() {
                    out.push(Tok::Lit(std::mem::take(&mut lit)));
                }
                out.push(t.clone());
                i += p.len();
                continue 'outer;
            }
        }
        let c = rest.chars().next().unwrap_or(' ');
        lit.push(c);
        i += c.len_utf8();
    }
    if !lit.is_empty() {
        out.push(Tok::Lit(lit));
    }
    out
}

/// Go's `Time.Format`.
pub(super) fn format(t: &Time, layout: &str) -> String {
    let c = t.civil();
    let mut out = String::new();
    for tok in tokenize(layout) {
        match tok {
            Tok::Lit(s) => out.push_str(&s),
            Tok::LongMonth => out.push_str(MONTHS[(c.month - 1) as usize]),
            Tok::Month => out.push_str(&MONTHS[(c.month - 1) as usize][..3]),
            Tok::NumMonth => out.push_str(&c.month.to_string()),
            Tok::ZeroMonth => out.push_str(&format!("{:02}", c.month)),
            Tok::LongWeekDay => out.push_str(DAYS[c.wday as usize]),
            Tok::WeekDay => out.push_str(&DAYS[c.wday as usize][..3]),
            Tok::Day => out.push_str(&c.day.to_string()),
            Tok::UnderDay => out.push_str(&format!("{:>2}", c.day)),
            Tok::ZeroDay => out.push_str(&format!("{:02}", c.day)),
            Tok::UnderYearDay => out.push_str(&format!("{:>3}", c.yday)),
            Tok::ZeroYearDay => out.push_str(&format!("{:03}", c.yday)),
            Tok::Hour => out.push_str(&format!("{:02}", c.hour)),
            Tok::Hour12 => {
                out.push_str(&(if c.hour % 12 == 0 { 12 } else { c.hour % 12 }).to_string())
            }
            Tok::ZeroHour12 => out.push_str(&format!(
                "{:02}",
                if c.hour % 12 == 0 { 12 } else { c.hour % 12 }
            )),
            Tok::Minute => out.push_str(&c.min.to_string()),
            Tok::ZeroMinute => out.push_str(&format!("{:02}", c.min)),
            Tok::Second => out.push_str(&c.sec.to_string()),
            Tok::ZeroSecond => out.push_str(&format!("{:02}", c.sec)),
            Tok::LongYear => {
                if c.year < 0 {
                    out.push_str(&format!("-{:04}", -c.year));
                } else {
                    out.push_str(&format!("{:04}", c.year));
                }
            }
            Tok::Year => out.push_str(&format!("{:02}", c.year.rem_euclid(100))),
            Tok::PM => out.push_str(if c.hour >= 12 { "PM" } else { "AM" }),
            Tok::Pm => out.push_str(if c.hour >= 12 { "pm" } else { "am" }),
            Tok::TZ => {
                if t.utc || t.offset == 0 {
                    out.push_str("UTC");
                } else {
                    let m = t.offset / 60;
                    let (sign, m) = if m < 0 { ('-', -m) } else { ('+', m) };
                    out.push(sign);
                    out.push_str(&format!("{:02}", m / 60));
                    if m % 60 != 0 {
                        out.push_str(&format!("{:02}", m % 60));
                    }
                }
            }
            Tok::Zone {
                iso,
                colon,
                secs,
                hours_only,
            } => {
                if iso && t.offset == 0 {
                    out.push('Z');
                    continue;
                }
                let z = t.offset;
                let (sign, z) = if z < 0 { ('-', -z) } else { ('+', z) };
                out.push(sign);
                out.push_str(&format!("{:02}", z / 3600));
                if !hours_only {
                    if colon {
                        out.push(':');
                    }
                    out.push_str(&format!("{:02}", z / 60 % 60));
                }
                if secs {
                    if colon {
                        out.push(':');
                    }
                    out.push_str(&format!("{:02}", z % 60));
                }
            }
            Tok::Frac(n, trim) => {
                let digits = format!("{:09}", t.nsec);
                let mut d = digits[..n.min(9)].to_string();
                if trim {
                    d = d.trim_end_matches('0').to_string();
                    if d.is_empty() {
                        continue;
                    }
                }
                out.push('.');
                out.push_str(&d);
            }
        }
    }
    out
}

fn layout_elem_text(t: &Tok) -> &'static str {
    match t {
        Tok::LongMonth => "January",
        Tok::Month => "Jan",
        Tok::NumMonth => "1",
        Tok::ZeroMonth => "01",
        Tok::LongWeekDay => "Monday",
        Tok::WeekDay => "Mon",
        Tok::Day => "2",
        Tok::UnderDay => "_2",
        Tok::ZeroDay => "02",
        Tok::UnderYearDay => "__2",
        Tok::ZeroYearDay => "002",
        Tok::Hour => "15",
        Tok::Hour12 => "3",
        Tok::ZeroHour12 => "03",
        Tok::Minute => "4",
        Tok::ZeroMinute => "04",
        Tok::Second => "5",
        Tok::ZeroSecond => "05",
        Tok::LongYear => "2006",
        Tok::Year => "06",
        Tok::PM => "PM",
        Tok::Pm => "pm",
        Tok::TZ => "MST",
        Tok::Zone {
            iso: true,
            colon: true,
            secs: false,
            ..
        } => "Z07:00",
        Tok::Zone { iso: true, .. } => "Z0700",
        Tok::Zone { colon: true, .. } => "-07:00",
        Tok::Zone { .. } => "-0700",
        Tok::Frac(..) => ".000",
        Tok::Lit(_) => "",
    }
}

fn take_digits(s: &str, min: usize, max: usize) -> Option<(i64, &str)> {
    let n = s.bytes().take(max).take_while(u8::is_ascii_digit).count();
    if n < min {
        return None;
    }
    Some((s[..n].parse().ok()?, &s[n..]))
}

/// Go's `time.Parse` (no location database: zone abbreviations get offset zero).
pub(super) fn parse(layout: &str, value: &str) -> Result<Time, String> {
    let toks = tokenize(layout);
    let (mut year, mut month, mut day, mut hour, mut min, mut sec, mut nsec) =
        (1i64, 1i64, 1i64, 0i64, 0i64, 0i64, 0u32);
    let mut yday = -1i64;
    let mut pm: Option<bool> = None;
    let mut offset: Option<i32> = None;
    let mut v = value;
    let err_at = |elem: &str, v: &str| {
        format!(
            "parsing time {} as {}: cannot parse {} as {}",
            quote(value),
            quote(layout),
            quote(v),
            quote(elem)
        )
    };
    let range_err = |what: &str| format!("parsing time {}: {what} out of range", quote(value));
    for (ti, tok) in toks.iter().enumerate() {
        let elem = layout_elem_text(tok);
        match tok {
            Tok::Lit(l) => {
                // Spaces in the layout match any run of spaces in the value.
                let l_trim = l.trim_start_matches(' ');
                if l_trim.len() != l.len() {
                    v = v.trim_start_matches(' ');
                }
                match v.strip_prefix(l_trim) {
                    Some(r) => v = r,
                    None => {
                        return Err(format!(
                            "parsing time {} as {}: cannot parse {} as {}",
                            quote(value),
                            quote(layout),
                            quote(v),
                            quote(l)
                        ));
                    }
                }
            }
            Tok::LongYear => {
                let (y, r) = take_digits(v, 4, 4).ok_or_else(|| err_at(elem, v))?;
                year = y;
                v = r;
            }
            Tok::Year => {
                let (y, r) = take_digits(v, 2, 2).ok_or_else(|| err_at(elem, v))?;
                year = if y >= 69 { 1900 + y } else { 2000 + y };
                v = r;
            }
            Tok::LongMonth | Tok::Month => {
                let mut found = false;
                for (i, m) in MONTHS.iter().enumerate() {
                    let name = if *tok == Tok::Month { &m[..3] } else { m };
                    if v.len() >= name.len() && v[..name.len()].eq_ignore_ascii_case(name) {
                        month = i as i64 + 1;
                        v = &v[name.len()..];
                        found = true;
                        break;
                    }
                }
                if !found {
                    return Err(err_at(elem, v));
                }
            }
            Tok::LongWeekDay | Tok::WeekDay => {
                let mut found = false;
                for d in DAYS {
                    let name = if *tok == Tok::WeekDay { &d[..3] } else { d };
                    if v.len() >= name.len() && v[..name.len()].eq_ignore_ascii_case(name) {
                        v = &v[name.len()..];
                        found = true;
                        break;
                    }
                }
                if !found {
                    return Err(err_at(elem, v));
                }
            }
            Tok::NumMonth | Tok::ZeroMonth => {
                let min_d = if *tok == Tok::ZeroMonth { 2 } else { 1 };
                let (m, r) = take_digits(v, min_d, 2).ok_or_else(|| err_at(elem, v))?;
                if !(1..=12).contains(&m) {
                    return Err(range_err("month"));
                }
                month = m;
                v = r;
            }
            Tok::Day | Tok::UnderDay | Tok::ZeroDay => {
                if *tok == Tok::UnderDay {
                    v = v.strip_prefix(' ').unwrap_or(v);
                }
                let min_d = if *tok == Tok::ZeroDay { 2 } else { 1 };
                let (d, r) = take_digits(v, min_d, 2).ok_or_else(|| err_at(elem, v))?;
                day = d;
                v = r;
            }
            Tok::UnderYearDay | Tok::ZeroYearDay => {
                let v2 = v.trim_start_matches(' ');
                let (d, r) = take_digits(v2, 1, 3).ok_or_else(|| err_at(elem, v))?;
                yday = d;
                v = r;
            }
            Tok::Hour => {
                let (h, r) = take_digits(v, 2, 2).ok_or_else(|| err_at(elem, v))?;
                if h >= 24 {
                    return Err(range_err("hour"));
                }
                hour = h;
                v = r;
            }
            Tok::Hour12 | Tok::ZeroHour12 => {
                let min_d = if *tok == Tok::ZeroHour12 { 2 } else { 1 };
                let (h, r) = take_digits(v, min_d, 2).ok_or_else(|| err_at(elem, v))?;
                if h > 12 {
                    return Err(range_err("hour"));
                }
                hour = h;
                v = r;
            }
            Tok::Minute | Tok::ZeroMinute => {
                let min_d = if *tok == Tok::ZeroMinute { 2 } else { 1 };
                let (m, r) = take_digits(v, min_d, 2).ok_or_else(|| err_at(elem, v))?;
                if m >= 60 {
                    return Err(range_err("minute"));
                }
                min = m;
                v = r;
            }
            Tok::Second | Tok::ZeroSecond => {
                let min_d = if *tok == Tok::ZeroSecond { 2 } else { 1 };
                let (s, r) = take_digits(v, min_d, 2).ok_or_else(|| err_at(elem, v))?;
                if s >= 60 {
                    return Err(range_err("second"));
                }
                sec = s;
                v = r;
                // A fractional second may follow even if the layout has none.
                let next_is_frac = matches!(toks.get(ti + 1), Some(Tok::Frac(..)));
                if !next_is_frac
                    && (v.starts_with('.') || v.starts_with(','))
                    && v[1..].starts_with(|c: char| c.is_ascii_digit())
                {
                    let n = v[1..].bytes().take_while(u8::is_ascii_digit).count();
                    nsec = frac_nanos(&v[1..1 + n]);
                    v = &v[1 + n..];
                }
            }
            Tok::Frac(n, trim) => {
                if !(v.starts_with('.') || v.starts_with(',')) {
                    if *trim {
                        continue;
                    }
                    return Err(err_at(elem, v));
                }
                let digits = v[1..].bytes().take_while(u8::is_ascii_digit).count();
                if !*trim && digits != *n {
                    return Err(err_at(elem, v));
                }
                nsec = frac_nanos(&v[1..1 + digits]);
                v = &v[1 + digits..];
            }
            Tok::PM | Tok::Pm => {
                if v.len() < 2 {
                    return Err(err_at(elem, v));
                }
                match &v[..2] {
                    "PM" | "pm" => pm = Some(true),
                    "AM" | "am" => pm = Some(false),
                    _ => return Err(err_at(elem, v)),
                }
                v = &v[2..];
            }
            Tok::TZ => {
                if let Some(r) = v.strip_prefix("UTC") {
                    offset = Some(0);
                    v = r;
                    continue;
                }
                let n = v.bytes().take_while(u8::is_ascii_uppercase).count();
                let ok =
                    n == 3 || (n == 4 && v.as_bytes()[3] == b'T') || n == 5 && &v[3..5] == "ST";
                if !ok && !v.starts_with("ChST") && !v.starts_with("MeST") {
                    return Err(err_at(elem, v));
                }
                let n = if v.starts_with("ChST") || v.starts_with("MeST") {
                    4
                } else {
                    n
                };
                offset = Some(0);
                v = &v[n..];
            }
            Tok::Zone {
                iso,
                colon,
                secs,
                hours_only,
            } => {
                if *iso && let Some(r) = v.strip_prefix('Z') {
                    offset = Some(0);
                    v = r;
                    continue;
                }
                let sign = match v.as_bytes().first() {
                    Some(b'+') => 1,
                    Some(b'-') => -1,
                    _ => return Err(err_at(elem, v)),
                };
                let mut r = &v[1..];
                let (h, r2) = take_digits(r, 2, 2).ok_or_else(|| err_at(elem, v))?;
                r = r2;
                let mut m = 0;
                let mut s = 0;
                if !hours_only {
                    if *colon {
                        r = r.strip_prefix(':').ok_or_else(|| err_at(elem, v))?;
                    }
                    let (mm, r3) = take_digits(r, 2, 2).ok_or_else(|| err_at(elem, v))?;
                    m = mm;
                    r = r3;
                }
                if *secs {
                    if *colon {
                        r = r.strip_prefix(':').ok_or_else(|| err_at(elem, v))?;
                    }
                    let (ss, r3) = take_digits(r, 2, 2).ok_or_else(|| err_at(elem, v))?;
                    s = ss;
                    r = r3;
                }
                offset = Some(sign * (h * 3600 + m * 60 + s) as i32);
                v = r;
            }
        }
    }
    if !v.is_empty() {
        return Err(format!(
            "parsing time {}: extra text: {}",
            quote(value),
            quote(v)
        ));
    }
    if let Some(p) = pm {
        if p && hour < 12 {
            hour += 12;
        } else if !p && hour == 12 {
            hour = 0;
        }
    }
    if yday >= 0 {
        let (mut m, mut d) = (1, yday);
        while m <= 12 && d > days_in(m, year) {
            d -= days_in(m, year);
            m += 1;
        }
        month = m;
        day = d;
    }
    if day < 1 || day > days_in(month, year) {
        return Err(range_err("day"));
    }
    let off = offset.unwrap_or(0);
    let days = days_from_civil(year, month, day);
    let local = days * 86_400 + hour * 3600 + min * 60 + sec;
    Ok(Time {
        sec: local - i64::from(off),
        nsec,
        offset: off,
        utc: offset.is_none() || off == 0,
    })
}

fn frac_nanos(d: &str) -> u32 {
    let mut s: String = d.chars().take(9).collect();
    while s.len() < 9 {
        s.push('0');
    }
    s.parse().unwrap_or(0)
}

/// Go's `time.ParseDuration`, in nanoseconds.
pub(super) fn parse_duration(s: &str) -> Result<i128, String> {
    let orig = s;
    let bad = || format!("time: invalid duration {}", quote(orig));
    let (neg, mut s) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if s == "0" {
        return Ok(0);
    }
    if s.is_empty() {
        return Err(bad());
    }
    let mut total: i128 = 0;
    while !s.is_empty() {
        let n = s.bytes().take_while(u8::is_ascii_digit).count();
        let int_part = &s[..n];
        s = &s[n..];
        let mut frac = "";
        if let Some(r) = s.strip_prefix('.') {
            let f = r.bytes().take_while(u8::is_ascii_digit).count();
            frac = &r[..f];
            s = &r[f..];
        }
        if int_part.is_empty() && frac.is_empty() {
            return Err(bad());
        }
        let u = s
            .bytes()
            .take_while(|c| !c.is_ascii_digit() && *c != b'.')
            .count();
        let unit = &s[..u];
        s = &s[u..];
        let scale: i128 = match unit {
            "ns" => 1,
            "us" | "µs" | "μs" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            "" => return Err(format!("time: missing unit in duration {}", quote(orig))),
            _ => {
                return Err(format!(
                    "time: unknown unit {} in duration {}",
                    quote(unit),
                    quote(orig)
                ));
            }
        };
        let iv: i128 = if int_part.is_empty() {
            0
        } else {
            int_part.parse().map_err(|_| bad())?
        };
        let mut v = iv.checked_mul(scale).ok_or_else(bad)?;
        if !frac.is_empty() {
            let mut f: i128 = 0;
            let mut div: i128 = 1;
            for c in frac.bytes().take(30) {
                f = f * 10 + i128::from(c - b'0');
                div *= 10;
            }
            v += f * scale / div;
        }
        total = total.checked_add(v).ok_or_else(bad)?;
        if total > i128::from(i64::MAX) + 1 {
            return Err(bad());
        }
    }
    let total = if neg { -total } else { total };
    if total > i128::from(i64::MAX) || total < i128::from(i64::MIN) {
        return Err(bad());
    }
    Ok(total)
}

/// Go's `Duration.String`.
pub(super) fn format_duration(d: i128) -> String {
    if d == 0 {
        return "0s".into();
    }
    let neg = d < 0;
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
        let secs = u / 1_000_000_000;
        let h = secs / 3600;
        let m = secs / 60 % 60;
        let s_ns = u % 60_000_000_000;
        if h > 0 {
            out.push_str(&format!("{h}h"));
        }
        if h > 0 || m > 0 {
            out.push_str(&format!("{m}m"));
        }
        out.push_str(&frac_text(s_ns, 1_000_000_000));
        out.push('s');
    }
    if neg {
        out.insert(0, '-');
    }
    out
}

fn frac_text(v: u128, div: u128) -> String {
    let i = v / div;
    let f = v % div;
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
}
