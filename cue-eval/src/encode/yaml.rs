//! YAML output: `cue export --out yaml`, `yaml.Marshal` and `yaml.MarshalStream`.
//!
//! CUE v0.17.1 converts the exported syntax tree into `yaml.v3` nodes
//! (`internal/encoding/yaml/encode.go`) and prints them with a `yaml.v3` encoder set to indent 2
//! and unlimited width. This module does both steps for a [`Data`] tree:
//!
//! 1. **Node building** (CUE and `yaml.v3`'s `encoder.node`): a string node gets the tag `!!str`,
//!    literal style when it contains a newline, and double quotes when CUE's `shouldQuote` says
//!    so (YAML 1.1 words such as `yes`, dates, times and base-60 numbers, `0x…`). A `!!str` node
//!    without a style whose plain text would resolve to another type (`resolve`: null, bools,
//!    ints, floats, timestamps) is forced into double quotes. Bytes become `!!binary` base64.
//! 2. **Emitting** (`yaml.v3` `emitterc.go`): a small re-statement of the emitter's state
//!    machine for block mappings, block sequences, empty flow collections and scalars, keeping
//!    its column, indentation and whitespace bookkeeping so that every line break and space
//!    falls where `yaml.v3` puts it, and its scalar analysis (`yaml_emitter_analyze_scalar`)
//!    that decides when plain, single-quoted or literal style is impossible.

use std::borrow::Cow;

use super::{Data, Field, push_base64};

/// What `cue export --out yaml` and `yaml.Marshal` print for `d`; always ends with a newline.
pub fn to_yaml(d: &Data) -> String {
    let mut out = String::new();
    write_document(&mut out, d);
    out
}

/// The style in which [`to_yaml`] writes a string on its own, as chosen by the emitter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScalarStyle {
    /// As written, without quotes.
    Plain,
    /// Between single quotes.
    SingleQuoted,
    /// Between double quotes, with escapes.
    DoubleQuoted,
    /// A literal block (`|`), for text with line breaks.
    Literal,
}

/// The style of `to_yaml(&Data::String(s))`, decided without writing it (a writer with its
/// own layout asks this for each string).
///
/// ```
/// use cue_eval::encode::{ScalarStyle, yaml_string_style};
/// assert_eq!(yaml_string_style("web"), ScalarStyle::Plain);
/// assert_eq!(yaml_string_style("yes"), ScalarStyle::DoubleQuoted);
/// assert_eq!(yaml_string_style("a\nb"), ScalarStyle::Literal);
/// assert_eq!(yaml_string_style("- x"), ScalarStyle::SingleQuoted);
/// ```
pub fn yaml_string_style(s: &str) -> ScalarStyle {
    let node = scalar_node(Cow::Borrowed(s), Some(STR_TAG), string_node_style(s));
    match select_style(&node, &analyze(&node.value), false) {
        Style::Plain => ScalarStyle::Plain,
        Style::SingleQuoted => ScalarStyle::SingleQuoted,
        Style::DoubleQuoted => ScalarStyle::DoubleQuoted,
        Style::Literal => ScalarStyle::Literal,
    }
}

/// What `yaml.MarshalStream` returns for `docs`: the documents separated by `---` lines, with
/// no separator before the first one. An empty stream is the empty string.
pub fn to_yaml_stream(docs: &[Data]) -> String {
    let mut out = String::new();
    for (i, d) in docs.iter().enumerate() {
        if i > 0 {
            out.push_str("---\n");
        }
        write_document(&mut out, d);
    }
    out
}

fn write_document(out: &mut String, d: &Data) {
    let mut e = Emitter {
        out,
        indent: -1,
        column: 0,
        whitespace: true,
        indention: true,
    };
    e.value(d, None);
    // DOCUMENT-END (implicit): end the last line; no `...` marker.
    e.write_indent();
}

// ---------------------------------------------------------------------------------------------
// Node building: tags and requested styles.

const STR_TAG: &str = "!!str";
const NULL_TAG: &str = "!!null";
const BOOL_TAG: &str = "!!bool";
const INT_TAG: &str = "!!int";
const FLOAT_TAG: &str = "!!float";
const TIMESTAMP_TAG: &str = "!!timestamp";
const MERGE_TAG: &str = "!!merge";
const MAP_TAG: &str = "!!map";
const SEQ_TAG: &str = "!!seq";
const BINARY_TAG: &str = "!!binary";
const LONG_TAG_PREFIX: &str = "tag:yaml.org,2002:";

/// A scalar style, as requested by the node and then as chosen by the emitter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Style {
    Plain,
    SingleQuoted,
    DoubleQuoted,
    Literal,
}

/// A scalar event: its text, its explicit tag (long form) if it has one, and the style the
/// node asks for.
struct Scalar<'a> {
    value: Cow<'a, str>,
    tag: Option<Cow<'a, str>>,
    style: Style,
}

/// `yaml.v3` `shortTag`: `tag:yaml.org,2002:x` becomes `!!x`.
fn short_tag(tag: &str) -> Cow<'_, str> {
    match tag.strip_prefix(LONG_TAG_PREFIX) {
        Some(rest) => Cow::Owned(format!("!!{rest}")),
        None => Cow::Borrowed(tag),
    }
}

/// `yaml.v3` `longTag`: `!!x` becomes `tag:yaml.org,2002:x`.
fn long_tag(tag: &str) -> Cow<'_, str> {
    match tag.strip_prefix("!!") {
        Some(rest) => Cow::Owned(format!("{LONG_TAG_PREFIX}{rest}")),
        None => Cow::Borrowed(tag),
    }
}

/// The style CUE puts on a string node (`SetString` plus `shouldQuote`), `None` for none.
fn string_node_style(s: &str) -> Option<Style> {
    if s.contains('\n') {
        Some(Style::Literal)
    } else if should_quote(s) {
        Some(Style::DoubleQuoted)
    } else {
        None
    }
}

/// `yaml.v3` `encoder.node` for a scalar node with tag `tag` and style `style`: a tag that
/// the plain text implies anyway is dropped, and a `!!str` whose plain text would resolve to
/// something else is dropped in favour of double quotes.
fn scalar_node<'a>(value: Cow<'a, str>, tag: Option<&'a str>, style: Option<Style>) -> Scalar<'a> {
    let mut tag = tag.filter(|t| !t.is_empty());
    let mut force_quoting = false;
    if let Some(t) = tag {
        let stag = short_tag(t);
        if (stag == STR_TAG && style.is_some()) || resolve(&value) == stag {
            tag = None;
        } else if stag == STR_TAG {
            tag = None;
            force_quoting = true;
        }
    }
    let style = match style {
        Some(s) => s,
        None if value.contains('\n') => Style::Literal,
        None if force_quoting => Style::DoubleQuoted,
        None => Style::Plain,
    };
    Scalar {
        value,
        tag: tag.map(long_tag),
        style,
    }
}

/// The explicit tag of a mapping or sequence node, dropped when it is the implied one.
fn collection_tag<'a>(tag: Option<&'a str>, implied: &str) -> Option<Cow<'a, str>> {
    let t = tag.filter(|t| !t.is_empty())?;
    if short_tag(t) == implied {
        None
    } else {
        Some(long_tag(t))
    }
}

/// The scalar node for a non-collection value, `tag` being its `@yaml(,tag=…)` if any.
fn value_scalar<'a>(d: &'a Data, tag: Option<&'a str>) -> Scalar<'a> {
    let tag = tag.filter(|t| !t.is_empty());
    match d {
        Data::Null => scalar_node(Cow::Borrowed("null"), tag, None),
        Data::Bool(b) => scalar_node(Cow::Borrowed(if *b { "true" } else { "false" }), tag, None),
        Data::Number { text, float } => {
            // CUE's exporter spells a float without `.`, `e` or `E` with a trailing `.`.
            let text = if *float && !text.contains(['.', 'e', 'E']) {
                Cow::Owned(format!("{text}."))
            } else {
                Cow::Borrowed(text.as_str())
            };
            scalar_node(text, tag, None)
        }
        Data::String(s) => scalar_node(
            Cow::Borrowed(s),
            Some(tag.unwrap_or(STR_TAG)),
            string_node_style(s),
        ),
        Data::Bytes(b) => {
            // CUE calls `SetString` on the raw bytes before replacing the value with base64,
            // so the literal style `SetString` chose for the raw text sticks: raw text with a
            // newline, or invalid UTF-8 long enough for yaml.v3's 70-column base64 lines.
            let literal = match std::str::from_utf8(b) {
                Ok(s) => s.contains('\n'),
                Err(_) => b.len().div_ceil(3) * 4 >= 70,
            };
            let mut text = String::new();
            push_base64(&mut text, b);
            scalar_node(
                Cow::Owned(text),
                Some(tag.unwrap_or(BINARY_TAG)),
                literal.then_some(Style::Literal),
            )
        }
        Data::List(_) | Data::Struct(_) => unreachable!("collections are not scalars"),
    }
}

/// The YAML 1.1 words CUE always double-quotes (`legacyStrings`).
const LEGACY_STRINGS: [&str; 27] = [
    "y", "Y", "yes", "Yes", "YES", "n", "N", "t", "T", "f", "F", "no", "No", "NO", "true", "True",
    "TRUE", "false", "False", "FALSE", "on", "On", "ON", "off", "Off", "OFF", ".Nan",
];

/// CUE's `shouldQuote`: a legacy YAML 1.1 word, or a match of
/// `^[-+0-9:. \t]+([-:]|[tT])[-+0-9:. \t]+[zZ]?$|^0x[a-fA-F0-9]+$`.
fn should_quote(s: &str) -> bool {
    LEGACY_STRINGS.contains(&s) || matches_date_like(s.as_bytes())
}

fn matches_date_like(b: &[u8]) -> bool {
    if b.len() > 2 && b.starts_with(b"0x") && b[2..].iter().all(u8::is_ascii_hexdigit) {
        return true;
    }
    // `[zZ]?$`: a final z can only be that optional letter, as the classes exclude it.
    let body = match b.last() {
        Some(b'z' | b'Z') => &b[..b.len() - 1],
        _ => b,
    };
    if body.len() < 3 {
        return false;
    }
    let in_class = |c: u8| matches!(c, b'-' | b'+' | b'0'..=b'9' | b':' | b'.' | b' ' | b'\t');
    let mut t_at = None;
    for (i, &c) in body.iter().enumerate() {
        if in_class(c) {
            continue;
        }
        if matches!(c, b't' | b'T') && t_at.is_none() {
            t_at = Some(i);
            continue;
        }
        return false;
    }
    match t_at {
        // The `t` is the separator and needs class characters on both sides.
        Some(i) => i >= 1 && i + 1 < body.len(),
        // Otherwise some `-` or `:` that is neither first nor last separates the two runs.
        None => body[1..body.len() - 1]
            .iter()
            .any(|&c| c == b'-' || c == b':'),
    }
}

/// `yaml.v3` `resolve("", s)`: the tag a plain scalar with text `s` would get.
pub(super) fn resolve(s: &str) -> &'static str {
    let Some(&first) = s.as_bytes().first() else {
        return NULL_TAG;
    };
    let hint = match first {
        b'+' | b'-' => b'S',
        b'0'..=b'9' => b'D',
        b'y' | b'Y' | b'n' | b'N' | b't' | b'T' | b'f' | b'F' | b'o' | b'O' | b'~' => b'M',
        b'.' => b'.',
        // No hint: a string, without even looking the text up (so `<<` stays a string).
        _ => return STR_TAG,
    };
    match s {
        "true" | "True" | "TRUE" | "false" | "False" | "FALSE" => return BOOL_TAG,
        "~" | "null" | "Null" | "NULL" => return NULL_TAG,
        ".nan" | ".NaN" | ".NAN" | ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF"
        | "-.inf" | "-.Inf" | "-.INF" => return FLOAT_TAG,
        "<<" => return MERGE_TAG,
        _ => {}
    }
    match hint {
        b'.' if go_parse_float(s) => FLOAT_TAG,
        b'D' | b'S' => resolve_number(s),
        _ => STR_TAG,
    }
}

/// The `'D'`/`'S'` branch of `resolve`: timestamps, ints in Go's base-0 syntax (and the
/// `0b`/`0o` forms `yaml.v3` adds), and YAML-style floats.
fn resolve_number(s: &str) -> &'static str {
    if parse_timestamp(s) {
        return TIMESTAMP_TAG;
    }
    let plain: Cow<'_, str> = if s.contains('_') {
        Cow::Owned(s.replace('_', ""))
    } else {
        Cow::Borrowed(s)
    };
    let plain = plain.as_ref();
    if go_parse_int(plain, 0) || go_parse_uint(plain, 0).is_some() {
        return INT_TAG;
    }
    if yaml_style_float(plain) && go_parse_float(plain) {
        return FLOAT_TAG;
    }
    if let Some(rest) = plain.strip_prefix("0b") {
        if go_parse_int(rest, 2) || go_parse_uint(rest, 2).is_some() {
            return INT_TAG;
        }
    } else if let Some(rest) = plain.strip_prefix("-0b")
        && go_parse_int_parts(true, rest, 2)
    {
        return INT_TAG;
    }
    if let Some(rest) = plain.strip_prefix("0o") {
        if go_parse_int(rest, 8) || go_parse_uint(rest, 8).is_some() {
            return INT_TAG;
        }
    } else if let Some(rest) = plain.strip_prefix("-0o")
        && go_parse_int_parts(true, rest, 8)
    {
        return INT_TAG;
    }
    STR_TAG
}

/// Go `strconv.ParseUint(s, base, 64)` for the inputs `resolve` gives it (no underscores).
fn go_parse_uint(s: &str, base: u32) -> Option<u64> {
    let b = s.as_bytes();
    if b.is_empty() {
        return None;
    }
    let (base, digits) = match base {
        0 if b[0] == b'0' => match b.get(1).map(u8::to_ascii_lowercase) {
            Some(b'b') if b.len() >= 3 => (2, &b[2..]),
            Some(b'o') if b.len() >= 3 => (8, &b[2..]),
            Some(b'x') if b.len() >= 3 => (16, &b[2..]),
            _ => (8, &b[1..]),
        },
        0 => (10, b),
        base => (base, b),
    };
    let mut n: u64 = 0;
    for &c in digits {
        let d = match c {
            b'0'..=b'9' => u32::from(c - b'0'),
            b'a'..=b'z' | b'A'..=b'Z' => u32::from(c.to_ascii_lowercase() - b'a') + 10,
            _ => return None,
        };
        if d >= base {
            return None;
        }
        n = n.checked_mul(u64::from(base))?.checked_add(u64::from(d))?;
    }
    Some(n)
}

/// Go `strconv.ParseInt(s, base, 64) == nil`.
fn go_parse_int(s: &str, base: u32) -> bool {
    match s.as_bytes().first() {
        Some(b'+') => go_parse_int_parts(false, &s[1..], base),
        Some(b'-') => go_parse_int_parts(true, &s[1..], base),
        _ => go_parse_int_parts(false, s, base),
    }
}

/// Whether the unsigned `digits` with the given sign fit an `int64`.
fn go_parse_int_parts(neg: bool, digits: &str, base: u32) -> bool {
    const CUTOFF: u64 = 1 << 63;
    match go_parse_uint(digits, base) {
        Some(u) if neg => u <= CUTOFF,
        Some(u) => u < CUTOFF,
        None => false,
    }
}

/// yaml.v3's `yamlStyleFloat`: `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`. The
/// encoder quotes strings that would read back as floats; the decoder reads them as floats.
pub(crate) fn yaml_style_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    let digits = |i: &mut usize| {
        let start = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - start
    };
    if b.get(i) == Some(&b'.') {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    } else {
        if digits(&mut i) == 0 {
            return false;
        }
        if b.get(i) == Some(&b'.') {
            i += 1;
            digits(&mut i);
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

/// Go `strconv.ParseFloat(s, 64) == nil` for decimal text (the callers never pass hex floats
/// or the words `inf`/`nan`): Go's float syntax with `_` digit separators, and a finite value
/// (an overflow is an error in Go).
fn go_parse_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    let (mut saw_digits, mut saw_dot, mut underscores) = (false, false, false);
    while i < b.len() {
        match b[i] {
            b'_' => underscores = true,
            b'.' if !saw_dot => saw_dot = true,
            b'0'..=b'9' => saw_digits = true,
            _ => break,
        }
        i += 1;
    }
    if !saw_digits {
        return false;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if !b.get(i).is_some_and(u8::is_ascii_digit) {
            return false;
        }
        while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'_') {
            underscores |= b[i] == b'_';
            i += 1;
        }
    }
    if i != b.len() || (underscores && !underscore_ok(b)) {
        return false;
    }
    let text: Cow<'_, str> = if underscores {
        Cow::Owned(s.replace('_', ""))
    } else {
        Cow::Borrowed(s)
    };
    text.parse::<f64>().is_ok_and(f64::is_finite)
}

/// Go `strconv.underscoreOK`: every `_` sits between digits (or after a base prefix).
fn underscore_ok(s: &[u8]) -> bool {
    let mut s = s;
    if let Some(b'+' | b'-') = s.first() {
        s = &s[1..];
    }
    let mut saw = b'^';
    let mut i = 0;
    let mut hex = false;
    if s.len() >= 2 && s[0] == b'0' && matches!(s[1].to_ascii_lowercase(), b'b' | b'o' | b'x') {
        i = 2;
        saw = b'0';
        hex = s[1].eq_ignore_ascii_case(&b'x');
    }
    while i < s.len() {
        let c = s[i];
        if c.is_ascii_digit() || (hex && c.is_ascii_hexdigit()) {
            saw = b'0';
        } else if c == b'_' {
            if saw != b'0' {
                return false;
            }
            saw = b'_';
        } else {
            if saw == b'_' {
                return false;
            }
            saw = b'!';
        }
        i += 1;
    }
    saw != b'_'
}

/// `yaml.v3` `parseTimestamp`: `YYYY-` followed by one of Go's layouts
/// `2006-1-2T15:4:5.999999999Z07:00` (also with `t`), `2006-1-2 15:4:5.999999999` and
/// `2006-1-2`, with `time.Parse`'s range checks.
fn parse_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    let digits = b.iter().take_while(|c| c.is_ascii_digit()).count();
    if digits != 4 || b.get(4) != Some(&b'-') {
        return false;
    }
    [Some(b'T'), Some(b't'), Some(b' '), None]
        .into_iter()
        .any(|sep| timestamp_layout(b, sep))
}

/// One of the timestamp layouts: `sep` is the byte between date and time (`None`: date only).
fn timestamp_layout(b: &[u8], sep: Option<u8>) -> bool {
    fn getnum(s: &[u8]) -> Option<(u32, &[u8])> {
        let d0 = *s.first().filter(|c| c.is_ascii_digit())?;
        match s.get(1) {
            Some(&d1) if d1.is_ascii_digit() => {
                Some((u32::from(d0 - b'0') * 10 + u32::from(d1 - b'0'), &s[2..]))
            }
            _ => Some((u32::from(d0 - b'0'), &s[1..])),
        }
    }
    fn lit(s: &[u8], c: u8) -> Option<&[u8]> {
        s.strip_prefix(&[c])
    }
    fn fixed2(s: &[u8]) -> Option<u32> {
        match s {
            [a, b] if a.is_ascii_digit() && b.is_ascii_digit() => {
                Some(u32::from(a - b'0') * 10 + u32::from(b - b'0'))
            }
            _ => None,
        }
    }
    let parse = || -> Option<()> {
        let year = b[..4]
            .iter()
            .fold(0u32, |n, c| n * 10 + u32::from(c - b'0'));
        let r = lit(&b[4..], b'-')?;
        let (month, r) = getnum(r)?;
        if !(1..=12).contains(&month) {
            return None;
        }
        let r = lit(r, b'-')?;
        let (day, mut r) = getnum(r)?;
        if let Some(sep) = sep {
            if sep == b' ' {
                // A space in a Go layout matches any run of spaces.
                if r.first().is_some_and(|&c| c != b' ') {
                    return None;
                }
                while let Some(rest) = r.strip_prefix(b" ") {
                    r = rest;
                }
            } else {
                r = lit(r, sep)?;
            }
            let (hour, rest) = getnum(r)?;
            let (min, rest) = getnum(lit(rest, b':')?)?;
            let (sec, rest) = getnum(lit(rest, b':')?)?;
            if hour >= 24 || min >= 60 || sec >= 60 {
                return None;
            }
            r = rest;
            if r.len() >= 2 && matches!(r[0], b'.' | b',') && r[1].is_ascii_digit() {
                let n = 1 + r[1..].iter().take_while(|c| c.is_ascii_digit()).count();
                r = &r[n..];
            }
            if sep != b' ' {
                if let Some(rest) = r.strip_prefix(b"Z") {
                    r = rest;
                } else {
                    if r.len() < 6 || r[3] != b':' || !matches!(r[0], b'+' | b'-') {
                        return None;
                    }
                    if fixed2(&r[1..3])? > 24 || fixed2(&r[4..6])? > 60 {
                        return None;
                    }
                    r = &r[6..];
                }
            }
        }
        if !r.is_empty() {
            return None;
        }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
        let days = match month {
            2 if leap => 29,
            2 => 28,
            4 | 6 | 9 | 11 => 30,
            _ => 31,
        };
        (1..=days).contains(&day).then_some(())
    };
    parse().is_some()
}

// ---------------------------------------------------------------------------------------------
// Scalar analysis (`yaml_emitter_analyze_scalar`).

/// What the emitter may do with a scalar's text (the block-context subset; the encoder here
/// never puts a scalar inside a flow collection).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Analysis {
    multiline: bool,
    block_plain_allowed: bool,
    single_quoted_allowed: bool,
    block_allowed: bool,
}

/// `yaml.v3` `is_printable` on code points: LF, printable ASCII, U+00A0..U+D7FF and
/// U+E000..U+FFFD except the BOM. Tabs, other C0/C1 controls, DEL and everything above the
/// basic multilingual plane (emoji) are not printable.
fn is_printable(c: char) -> bool {
    let c = c as u32;
    c == 0x0A
        || (0x20..=0x7E).contains(&c)
        || (0xA0..=0xD7FF).contains(&c)
        || ((0xE000..=0xFFFD).contains(&c) && c != 0xFEFF)
}

/// `yaml.v3` `is_break`: CR, LF, NEL, LS and PS.
fn is_break(c: char) -> bool {
    matches!(c, '\r' | '\n' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

fn analyze(value: &str) -> Analysis {
    if plain_text(value) {
        return Analysis {
            multiline: false,
            block_plain_allowed: true,
            single_quoted_allowed: true,
            block_allowed: true,
        };
    }
    analyze_chars(value)
}

/// Whether the analysis of `value` finds nothing to forbid, known from its bytes alone: it
/// starts with an ASCII letter or digit (no indicator, no `---` or `...`), ends with no space,
/// and holds printable ASCII but `:` and `#` (the indicators that depend on their neighbours),
/// so no line break, tab or special character. Most text in documents is such text.
fn plain_text(value: &str) -> bool {
    const ALLOWED: [bool; 256] = {
        let mut t = [false; 256];
        let mut c = 0x20;
        while c <= 0x7E {
            t[c] = c != b':' as usize && c != b'#' as usize;
            c += 1;
        }
        t
    };
    let b = value.as_bytes();
    match (b.first(), b.last()) {
        (Some(f), Some(l)) => {
            f.is_ascii_alphanumeric() && *l != b' ' && b.iter().all(|&c| ALLOWED[c as usize])
        }
        _ => false,
    }
}

/// [`analyze`] a character at a time (`yaml_emitter_analyze_scalar`).
fn analyze_chars(value: &str) -> Analysis {
    if value.is_empty() {
        return Analysis {
            multiline: false,
            block_plain_allowed: true,
            single_quoted_allowed: true,
            block_allowed: false,
        };
    }
    let mut block_indicators = value.starts_with("---") || value.starts_with("...");
    let (mut line_breaks, mut special_characters, mut tab_characters) = (false, false, false);
    let (mut leading_space, mut leading_break) = (false, false);
    let (mut trailing_space, mut trailing_break) = (false, false);
    let (mut break_space, mut space_break) = (false, false);
    let (mut previous_space, mut previous_break) = (false, false);
    let mut preceded_by_whitespace = true;

    let mut chars = value.chars().peekable();
    let mut first = true;
    while let Some(c) = chars.next() {
        if !first && c.is_ascii_graphic() && c != ':' && c != '#' {
            // Neither an indicator here nor whitespace, a break or a special character: only
            // what the next character sees of its predecessor changes.
            previous_space = false;
            previous_break = false;
            preceded_by_whitespace = false;
            continue;
        }
        let next = chars.peek().copied();
        let last = next.is_none();
        let followed_by_whitespace = matches!(next, None | Some(' ' | '\t'));
        if first {
            match c {
                '#' | ',' | '[' | ']' | '{' | '}' | '&' | '*' | '!' | '|' | '>' | '\'' | '"'
                | '%' | '@' | '`' => block_indicators = true,
                '?' | ':' | '-' if followed_by_whitespace => block_indicators = true,
                _ => {}
            }
        } else {
            match c {
                ':' if followed_by_whitespace => block_indicators = true,
                '#' if preceded_by_whitespace => block_indicators = true,
                _ => {}
            }
        }
        if c == '\t' {
            tab_characters = true;
        } else if !is_printable(c) {
            special_characters = true;
        }
        if c == ' ' {
            leading_space |= first;
            trailing_space |= last;
            break_space |= previous_break;
            previous_space = true;
            previous_break = false;
        } else if is_break(c) {
            line_breaks = true;
            leading_break |= first;
            trailing_break |= last;
            space_break |= previous_space;
            previous_space = false;
            previous_break = true;
        } else {
            previous_space = false;
            previous_break = false;
        }
        preceded_by_whitespace = matches!(c, ' ' | '\t' | '\0') || is_break(c);
        first = false;
    }

    let mut a = Analysis {
        multiline: line_breaks,
        block_plain_allowed: true,
        single_quoted_allowed: true,
        block_allowed: true,
    };
    if leading_space || leading_break || trailing_space || trailing_break {
        a.block_plain_allowed = false;
    }
    if trailing_space {
        a.block_allowed = false;
    }
    if break_space || space_break || tab_characters || special_characters {
        a.block_plain_allowed = false;
        a.single_quoted_allowed = false;
    }
    if space_break || special_characters {
        a.block_allowed = false;
    }
    if line_breaks || block_indicators {
        a.block_plain_allowed = false;
    }
    a
}

/// `yaml_emitter_select_scalar_style` in block context.
fn select_style(s: &Scalar<'_>, a: &Analysis, simple_key: bool) -> Style {
    let mut style = s.style;
    if simple_key && a.multiline {
        style = Style::DoubleQuoted;
    }
    if style == Style::Plain && (!a.block_plain_allowed || (s.value.is_empty() && simple_key)) {
        style = Style::SingleQuoted;
    }
    if style == Style::SingleQuoted && !a.single_quoted_allowed {
        style = Style::DoubleQuoted;
    }
    if style == Style::Literal && (!a.block_allowed || simple_key) {
        style = Style::DoubleQuoted;
    }
    style
}

// ---------------------------------------------------------------------------------------------
// The emitter.

/// `yaml.v3`'s `best_indent` as CUE sets it (`SetIndent(2)`).
const BEST_INDENT: i32 = 2;

/// The part of `yaml_emitter_t` that shapes the output of block collections and scalars.
struct Emitter<'o> {
    out: &'o mut String,
    /// The current indentation; -1 before the root node.
    indent: i32,
    /// The current column, counted in characters.
    column: usize,
    /// Whether the last character written was whitespace (no space needed before a token).
    whitespace: bool,
    /// Whether only indentation has been written on the current line.
    indention: bool,
}

impl Emitter<'_> {
    fn put(&mut self, c: char) {
        self.out.push(c);
        self.column += 1;
    }

    fn put_break(&mut self) {
        self.out.push('\n');
        self.column = 0;
        self.indention = true;
    }

    fn write_str(&mut self, s: &str) {
        self.out.push_str(s);
        self.column += s.chars().count();
    }

    /// `write_break`: a line break from the scalar's text (LF becomes the output line break,
    /// the others are copied).
    fn write_break(&mut self, c: char) {
        if c == '\n' {
            self.put_break();
        } else {
            self.out.push(c);
            self.column = 0;
            self.indention = true;
        }
    }

    fn write_indent(&mut self) {
        let indent = usize::try_from(self.indent).unwrap_or(0);
        if !self.indention || self.column > indent || (self.column == indent && !self.whitespace) {
            self.put_break();
        }
        if self.column < indent {
            super::push_spaces(self.out, indent - self.column);
            self.column = indent;
        }
        self.whitespace = true;
    }

    fn write_indicator(
        &mut self,
        s: &str,
        need_whitespace: bool,
        is_whitespace: bool,
        is_indention: bool,
    ) {
        if need_whitespace && !self.whitespace {
            self.put(' ');
        }
        self.write_str(s);
        self.whitespace = is_whitespace;
        self.indention = self.indention && is_indention;
    }

    fn increase_indent(&mut self, flow: bool) {
        if self.indent < 0 {
            self.indent = if flow { BEST_INDENT } else { 0 };
        } else {
            self.indent += BEST_INDENT;
        }
    }

    /// Writes the value of a field, a list element or the document root.
    fn value(&mut self, d: &Data, tag: Option<&str>) {
        match d {
            Data::Struct(fields) => {
                if let Some(t) = collection_tag(tag, MAP_TAG) {
                    self.process_tag(&t);
                }
                if fields.is_empty() {
                    self.write_indicator("{", true, true, false);
                    self.write_indicator("}", false, false, false);
                } else {
                    self.block_mapping(fields);
                }
            }
            Data::List(items) => {
                if let Some(t) = collection_tag(tag, SEQ_TAG) {
                    self.process_tag(&t);
                }
                if items.is_empty() {
                    self.write_indicator("[", true, true, false);
                    self.write_indicator("]", false, false, false);
                } else {
                    self.block_sequence(items);
                }
            }
            scalar => {
                let s = value_scalar(scalar, tag);
                let a = analyze(&s.value);
                self.scalar(&s, &a, false);
            }
        }
    }

    fn block_mapping(&mut self, fields: &[Field]) {
        let saved = self.indent;
        self.increase_indent(false);
        for f in fields {
            self.write_indent();
            let key = scalar_node(
                Cow::Borrowed(&f.name),
                Some(STR_TAG),
                string_node_style(&f.name),
            );
            let a = analyze(&key.value);
            // `yaml_emitter_check_simple_key`: one line and at most 128 bytes.
            if !a.multiline && key.value.len() <= 128 {
                self.scalar(&key, &a, true);
                self.write_indicator(":", false, false, false);
            } else {
                self.write_indicator("?", true, false, true);
                self.scalar(&key, &a, false);
                self.write_indent();
                self.write_indicator(":", true, false, true);
            }
            self.value(&f.value, f.yaml_tag.as_deref());
        }
        self.indent = saved;
    }

    fn block_sequence(&mut self, items: &[Data]) {
        let saved = self.indent;
        self.increase_indent(false);
        for item in items {
            self.write_indent();
            self.write_indicator("-", true, false, true);
            self.value(item, None);
        }
        self.indent = saved;
    }

    fn scalar(&mut self, s: &Scalar<'_>, a: &Analysis, simple_key: bool) {
        let style = select_style(s, a, simple_key);
        if let Some(t) = &s.tag {
            self.process_tag(t);
        }
        let saved = self.indent;
        self.increase_indent(true);
        match style {
            Style::Plain => self.write_plain(&s.value),
            Style::SingleQuoted => self.write_single_quoted(&s.value),
            Style::DoubleQuoted => self.write_double_quoted(&s.value),
            Style::Literal => self.write_literal(&s.value),
        }
        self.indent = saved;
    }

    /// `yaml_emitter_process_tag` for a tag in long form, split by the default `%TAG`
    /// directives `!` and `!!` (`tag:yaml.org,2002:`).
    fn process_tag(&mut self, tag: &str) {
        let (handle, suffix) = if let Some(rest) = tag.strip_prefix('!') {
            ("!", rest)
        } else if let Some(rest) = tag.strip_prefix(LONG_TAG_PREFIX) {
            ("!!", rest)
        } else {
            ("", tag)
        };
        if handle.is_empty() {
            self.write_indicator("!<", true, false, false);
            self.write_tag_content(suffix);
            self.write_indicator(">", false, false, false);
        } else {
            if !self.whitespace {
                self.put(' ');
            }
            self.write_str(handle);
            self.whitespace = false;
            self.indention = false;
            if !suffix.is_empty() {
                self.write_tag_content(suffix);
            }
        }
    }

    /// `yaml_emitter_write_tag_content`: URI characters are copied, every other byte is
    /// written `%XX`.
    fn write_tag_content(&mut self, value: &str) {
        const HEX: &[u8; 16] = b"0123456789ABCDEF";
        for c in value.chars() {
            let keep = c.is_ascii_alphanumeric()
                || matches!(
                    c,
                    '_' | '-'
                        | ';'
                        | '/'
                        | '?'
                        | ':'
                        | '@'
                        | '&'
                        | '='
                        | '+'
                        | '$'
                        | ','
                        | '.'
                        | '~'
                        | '*'
                        | '\''
                        | '('
                        | ')'
                        | '['
                        | ']'
                );
            if keep {
                self.put(c);
            } else {
                let mut buf = [0u8; 4];
                for &byte in c.encode_utf8(&mut buf).as_bytes() {
                    self.put('%');
                    self.put(char::from(HEX[usize::from(byte >> 4)]));
                    self.put(char::from(HEX[usize::from(byte & 0xf)]));
                }
            }
        }
        self.whitespace = false;
        self.indention = false;
    }

    fn write_plain(&mut self, value: &str) {
        if !value.is_empty() && !self.whitespace {
            self.put(' ');
        }
        // Plain style is only chosen for text without line breaks, so it is copied as is.
        self.write_str(value);
        if !value.is_empty() {
            self.whitespace = false;
        }
        self.indention = false;
    }

    fn write_single_quoted(&mut self, value: &str) {
        self.write_indicator("'", true, false, false);
        let mut breaks = false;
        for c in value.chars() {
            if c == ' ' {
                self.put(c);
            } else if is_break(c) {
                if !breaks && c == '\n' {
                    self.put_break();
                }
                self.write_break(c);
                breaks = true;
            } else {
                if breaks {
                    self.write_indent();
                }
                if c == '\'' {
                    self.put('\'');
                }
                self.put(c);
                self.indention = false;
                breaks = false;
            }
        }
        self.write_indicator("'", false, false, false);
        self.whitespace = false;
        self.indention = false;
    }

    fn write_double_quoted(&mut self, value: &str) {
        const HEX: &[u8; 16] = b"0123456789ABCDEF";
        self.write_indicator("\"", true, false, false);
        // yaml.v3's `is_bom` looks at the start of the text whatever the position, so text
        // that starts with a BOM has every character escaped.
        let bom = value.starts_with('\u{FEFF}');
        for c in value.chars() {
            if !(bom || !is_printable(c) || is_break(c) || c == '"' || c == '\\') {
                self.put(c);
                continue;
            }
            self.put('\\');
            let short = match c {
                '\0' => Some('0'),
                '\u{7}' => Some('a'),
                '\u{8}' => Some('b'),
                '\t' => Some('t'),
                '\n' => Some('n'),
                '\u{b}' => Some('v'),
                '\u{c}' => Some('f'),
                '\r' => Some('r'),
                '\u{1b}' => Some('e'),
                '"' => Some('"'),
                '\\' => Some('\\'),
                '\u{85}' => Some('N'),
                '\u{a0}' => Some('_'),
                '\u{2028}' => Some('L'),
                '\u{2029}' => Some('P'),
                _ => None,
            };
            if let Some(e) = short {
                self.put(e);
                continue;
            }
            let v = c as u32;
            let (letter, width) = match v {
                0..=0xFF => ('x', 2),
                0x100..=0xFFFF => ('u', 4),
                _ => ('U', 8),
            };
            self.put(letter);
            for k in (0..width).rev() {
                self.put(char::from(HEX[((v >> (4 * k)) & 0xF) as usize]));
            }
        }
        self.write_indicator("\"", false, false, false);
        self.whitespace = false;
        self.indention = false;
    }

    fn write_literal(&mut self, value: &str) {
        self.write_indicator("|", true, false, false);
        // `yaml_emitter_write_block_scalar_hints`.
        let mut chars = value.chars();
        if chars.next().is_some_and(|c| c == ' ' || is_break(c)) {
            self.write_indicator("2", false, false, false);
        }
        let mut rev = value.chars().rev();
        let chomp = match (rev.next(), rev.next()) {
            (Some(last), _) if !is_break(last) => Some("-"),
            (Some(_), None) => Some("+"),
            (Some(_), Some(prev)) if is_break(prev) => Some("+"),
            (None, _) => Some("-"),
            _ => None,
        };
        if let Some(chomp) = chomp {
            self.write_indicator(chomp, false, false, false);
        }
        // go.yaml.in/yaml/v3 ends the header line here (the fix for go-yaml issue 755), so a
        // leading line break of the text becomes an empty first line of the block.
        self.put_break();
        self.whitespace = true;
        let mut breaks = true;
        let mut start = 0;
        for (i, c) in value.char_indices() {
            if is_break(c) {
                self.flush_run(&value[start..i]);
                self.write_break(c);
                breaks = true;
                start = i + c.len_utf8();
            } else if breaks {
                self.write_indent();
                self.indention = false;
                breaks = false;
                start = i;
            }
        }
        self.flush_run(&value[start..]);
    }

    /// Copies a run of non-break characters of a literal block.
    fn flush_run(&mut self, run: &str) {
        if !run.is_empty() {
            self.write_str(run);
            self.indention = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]

        /// The analysis is the analysis a character at a time, on strings made of the
        /// characters that decide it; the ones the byte check calls plain are among them.
        #[test]
        fn the_byte_check_agrees_with_the_analysis_by_characters(
            s in "[aZ0 .:#'\"\n\t?@|{\\[,~é\u{85}\u{7f}_-]{0,8}",
        ) {
            prop_assert_eq!(super::analyze(&s), super::analyze_chars(&s));
        }
    }

    #[test]
    fn plain_text_is_text_without_indicators() {
        for s in ["a", "metadata", "Z0 a.b", "1 2", "x - y", "a_b/c"] {
            assert!(super::plain_text(s), "{s:?}");
        }
        for s in [
            "", "-a", "a ", " a", "a:", "a: b", "a #b", "a#b", "---", "a\tb", "é", "a\nb",
        ] {
            assert!(!super::plain_text(s), "{s:?}");
        }
    }
}
