//! The `regexp` package, and the RE2 dialect shared with `=~`: patterns are translated so that
//! the Perl classes (`\d`, `\w`, `\s`, `\b`) are ASCII-only as in Go, compiled with the `regex`
//! crate (same RE2 syntax and linear-time guarantee), and syntax errors are worded as Go's
//! `regexp/syntax` words them (`error parsing regexp: unexpected ): `x)``).

use std::rc::Rc;

use regex_syntax::ast::ErrorKind;

use super::k::*;
use super::{R, Runtime, StdMember, a_int, a_str, func, string, valid, validation_fail};
use crate::eval::value::{Bottom, Value};

pub(super) static MEMBERS: &[StdMember] = &[
    func("regexp.Find", &[S, S], find),
    func("regexp.FindAll", &[S, S, I], find_all),
    func("regexp.FindSubmatch", &[S, S], find_submatch),
    func("regexp.FindAllSubmatch", &[S, S, I], find_all_submatch),
    func("regexp.FindNamedSubmatch", &[S, S], find_named_submatch),
    func(
        "regexp.FindAllNamedSubmatch",
        &[S, S, I],
        find_all_named_submatch,
    ),
    func("regexp.ReplaceAll", &[S, S, S], |_, a| replace(a, false)),
    func("regexp.ReplaceAllLiteral", &[S, S, S], |_, a| {
        replace(a, true)
    }),
    valid("regexp.Valid", &[S], valid_re),
    valid("regexp.Match", &[S, S], |_, a| {
        let re = compile(&a_str(a, 0)?)?;
        Ok(Value::Bool(re.is_match(&a_str(a, 1)?)))
    }),
    func("regexp.QuoteMeta", &[S], |_, a| {
        string(quote_meta(&a_str(a, 0)?))
    }),
];

/// Translates Go's ASCII Perl classes into explicit classes for the `regex` crate.
pub(super) fn translate(re: &str) -> String {
    let mut out = String::with_capacity(re.len() + 8);
    let mut in_class = false;
    let mut chars = re.chars().peekable();
    let mut class_start = false;
    while let Some(c) = chars.next() {
        if c == '\\' {
            let Some(n) = chars.next() else {
                out.push('\\');
                break;
            };
            let (outside, inside) = match n {
                'd' => ("[0-9]", "0-9"),
                'D' => ("[^0-9]", "[^0-9]"),
                'w' => ("[0-9A-Za-z_]", "0-9A-Za-z_"),
                'W' => ("[^0-9A-Za-z_]", "[^0-9A-Za-z_]"),
                's' => ("[\\t\\n\\f\\r ]", "\\t\\n\\f\\r "),
                'S' => ("[^\\t\\n\\f\\r ]", "[^\\t\\n\\f\\r ]"),
                'b' if !in_class => ("(?-u:\\b)", ""),
                'B' if !in_class => ("(?-u:\\B)", ""),
                _ => {
                    out.push('\\');
                    out.push(n);
                    class_start = false;
                    continue;
                }
            };
            out.push_str(if in_class { inside } else { outside });
            class_start = false;
            continue;
        }
        if in_class {
            if c == ']' && !class_start {
                in_class = false;
            } else if c == '[' && chars.peek() == Some(&':') {
                // A POSIX class `[:alpha:]`: copy through its closing `:]`.
                out.push(c);
                for d in chars.by_ref() {
                    out.push(d);
                    if d == ']' {
                        break;
                    }
                }
                class_start = false;
                continue;
            }
            class_start = class_start && c == '^';
            out.push(c);
            continue;
        }
        if c == '[' {
            in_class = true;
            class_start = true;
        }
        out.push(c);
    }
    out
}

/// Go's wording of a regular-expression syntax error.
pub(super) fn error_text(re: &str, e: &regex::Error) -> String {
    let go = |code: &str, frag: &str| format!("error parsing regexp: {code}: `{frag}`");
    match regex_syntax::ast::parse::Parser::new().parse(re) {
        Err(err) => {
            let span = err.span();
            let frag = re.get(span.start.offset..span.end.offset).unwrap_or(re);
            match err.kind() {
                ErrorKind::GroupUnopened => go("unexpected )", re),
                ErrorKind::GroupUnclosed => go("missing closing )", re),
                ErrorKind::ClassUnclosed => go(
                    "missing closing ]",
                    re.get(span.start.offset..).unwrap_or(re),
                ),
                ErrorKind::EscapeUnrecognized | ErrorKind::EscapeHexInvalid => {
                    go("invalid escape sequence", frag)
                }
                ErrorKind::EscapeUnexpectedEof => go("trailing backslash at end of expression", ""),
                ErrorKind::RepetitionMissing => go("missing argument to repetition operator", frag),
                ErrorKind::RepetitionCountInvalid
                | ErrorKind::RepetitionCountDecimalEmpty
                | ErrorKind::RepetitionCountUnclosed => go("invalid repeat count", frag),
                ErrorKind::ClassRangeInvalid => go("invalid character class range", frag),
                ErrorKind::GroupNameInvalid
                | ErrorKind::GroupNameEmpty
                | ErrorKind::GroupNameUnexpectedEof => go("invalid named capture", frag),
                ErrorKind::GroupNameDuplicate { .. } => go("duplicate capture group name", frag),
                ErrorKind::UnsupportedLookAround | ErrorKind::UnsupportedBackreference => {
                    go("invalid or unsupported Perl syntax", frag)
                }
                _ => format!("error parsing regexp: {}", err.kind()),
            }
        }
        Ok(_) => match e {
            regex::Error::CompiledTooBig(_) => go("expression too large", re),
            _ => format!("error parsing regexp: {e}"),
        },
    }
}

fn compile(re: &str) -> Result<Rc<regex::Regex>, Rc<Bottom>> {
    super::regex(re).map_err(|e| Bottom::eval(e.trim_start_matches("invalid regexp: ").to_string()))
}

fn no_match() -> Rc<Bottom> {
    Bottom::eval("no match")
}

/// At most `n` matches (`n < 0`: all), as Go's `FindAll*`.
fn limit(n: i64) -> usize {
    if n < 0 { usize::MAX } else { n as usize }
}

fn find(_: &mut Runtime, a: &[Value]) -> R {
    let re = compile(&a_str(a, 0)?)?;
    let s = a_str(a, 1)?;
    match re.find(&s) {
        Some(m) => string(m.as_str()),
        None => Err(no_match()),
    }
}

fn strs(rt: &mut Runtime, v: Vec<String>) -> Value {
    let vals = v.into_iter().map(|s| Value::Str(Rc::from(s))).collect();
    rt.make_list_values(vals)
}

fn find_all(rt: &mut Runtime, a: &[Value]) -> R {
    let re = compile(&a_str(a, 0)?)?;
    let s = a_str(a, 1)?;
    let n = limit(a_int(a, 2)?);
    let v: Vec<String> = re
        .find_iter(&s)
        .take(n)
        .map(|m| m.as_str().to_string())
        .collect();
    if v.is_empty() {
        return Err(no_match());
    }
    Ok(strs(rt, v))
}

fn groups(c: &regex::Captures<'_>) -> Vec<String> {
    c.iter()
        .map(|m| m.map(|m| m.as_str().to_string()).unwrap_or_default())
        .collect()
}

fn find_submatch(rt: &mut Runtime, a: &[Value]) -> R {
    let re = compile(&a_str(a, 0)?)?;
    let s = a_str(a, 1)?;
    match re.captures(&s) {
        Some(c) => Ok(strs(rt, groups(&c))),
        None => Err(no_match()),
    }
}

fn find_all_submatch(rt: &mut Runtime, a: &[Value]) -> R {
    let re = compile(&a_str(a, 0)?)?;
    let s = a_str(a, 1)?;
    let n = limit(a_int(a, 2)?);
    let all: Vec<Vec<String>> = re.captures_iter(&s).take(n).map(|c| groups(&c)).collect();
    if all.is_empty() {
        return Err(no_match());
    }
    let vals = all.into_iter().map(|g| strs(rt, g)).collect();
    Ok(rt.make_list_values(vals))
}

/// The named groups of a match as a struct. Go returns them as a map, which CUE turns into a
/// struct with its keys sorted.
fn named(rt: &mut Runtime, re: &regex::Regex, c: &regex::Captures<'_>) -> Value {
    let mut fields: Vec<(String, Value)> = re
        .capture_names()
        .enumerate()
        .filter_map(|(i, name)| {
            name.map(|n| {
                let v = c.get(i).map(|m| m.as_str()).unwrap_or("");
                (n.to_string(), Value::Str(Rc::from(v)))
            })
        })
        .collect();
    fields.sort_by(|a, b| a.0.cmp(&b.0));
    rt.make_struct(fields)
}

fn find_named_submatch(rt: &mut Runtime, a: &[Value]) -> R {
    let re = compile(&a_str(a, 0)?)?;
    let s = a_str(a, 1)?;
    match re.captures(&s) {
        Some(c) => Ok(named(rt, &re, &c)),
        None => Err(no_match()),
    }
}

fn find_all_named_submatch(rt: &mut Runtime, a: &[Value]) -> R {
    let re = compile(&a_str(a, 0)?)?;
    let s = a_str(a, 1)?;
    let n = limit(a_int(a, 2)?);
    let caps: Vec<regex::Captures<'_>> = re.captures_iter(&s).take(n).collect();
    if caps.is_empty() {
        return Err(no_match());
    }
    let vals = caps.iter().map(|c| named(rt, &re, c)).collect();
    Ok(rt.make_list_values(vals))
}

fn replace(a: &[Value], literal: bool) -> R {
    let re = compile(&a_str(a, 0)?)?;
    let s = a_str(a, 1)?;
    let repl = a_str(a, 2)?;
    let out = if literal {
        re.replace_all(&s, regex::NoExpand(&repl)).into_owned()
    } else {
        re.replace_all(&s, &*repl).into_owned()
    };
    if out.len() > 1 << 30 {
        return Err(Bottom::eval("regexp: result too large"));
    }
    string(out)
}

fn valid_re(_: &mut Runtime, a: &[Value]) -> R {
    let re = a_str(a, 0)?;
    match super::regex(&re) {
        Ok(_) => Ok(Value::Bool(true)),
        Err(e) => Err(validation_fail(
            e.trim_start_matches("invalid regexp: "),
            false,
        )),
    }
}

/// Go's `regexp.QuoteMeta`.
pub(super) fn quote_meta(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if "\\.+*?()|[]{}^$".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_classes() {
        assert_eq!(translate(r"f\w\w"), "f[0-9A-Za-z_][0-9A-Za-z_]");
        assert_eq!(translate(r"[\d.]"), "[0-9.]");
        assert_eq!(translate(r"[]\d]"), "[]0-9]");
        assert_eq!(translate(r"\."), r"\.");
        let re = super::super::regex(r"^\w+$").unwrap();
        assert!(!re.is_match("é"));
    }

    #[test]
    fn go_error_text() {
        assert_eq!(
            super::super::regex("invalid)").unwrap_err(),
            "invalid regexp: error parsing regexp: unexpected ): `invalid)`"
        );
        assert_eq!(
            super::super::regex("a(").unwrap_err(),
            "invalid regexp: error parsing regexp: missing closing ): `a(`"
        );
    }

    #[test]
    fn quote() {
        assert_eq!(quote_meta("a.b*c"), r"a\.b\*c");
    }
}
