//! YAML streams to [`Data`] over the `yaml-rust2` event parser, resolving plain scalars as Go's
//! `yaml.v3` does (the YAML 1.2 core schema with `yaml.v3`'s extensions) and converting them as
//! CUE's `internal/encoding/yaml` decoder does. Anchored values are kept with their size, so
//! alias expansion is counted against [`Limits::max_nodes`] before it is made.

use std::collections::HashMap;

use yaml_rust2::parser::{Event, Parser, Tag};
use yaml_rust2::scanner::{Marker, TScalarStyle};

use super::json::add_field;
use super::{Data, DecodeError, Field, Limits};

enum Frame {
    Seq {
        items: Vec<Data>,
        anchor: usize,
        nodes_at_start: usize,
    },
    Map {
        fields: Vec<Field>,
        index: Option<HashMap<String, usize>>,
        anchor: usize,
        nodes_at_start: usize,
        /// The key waiting for its value, `"<<"` for a merge key.
        key: Option<(String, Marker, bool)>,
        /// Whether a merge key has been seen: later keys then replace.
        merged: bool,
    },
}

fn err_at(m: &Marker, msg: impl Into<String>) -> DecodeError {
    DecodeError::at(m.line(), m.col() + 1, msg)
}

/// A scalar's error at the scalar, except the errors of compiling the literal CUE built for
/// it, which CUE reports without a YAML position.
fn position(e: DecodeError, m: &Marker) -> DecodeError {
    if e.msg.starts_with("parse error: ") {
        e
    } else {
        err_at(m, e.msg)
    }
}

/// yaml-rust2's message for a continuation line of a quoted scalar that is not indented past
/// its block; Go's `yaml.v3` (which CUE uses) accepts such lines, and CRDs written by
/// controller-gen are full of them.
const QUOTED_INDENT: &str = "invalid indentation in quoted scalar";

pub(super) fn parse(text: &str, limits: &Limits) -> Result<Vec<Data>, DecodeError> {
    let mut fixed: Option<String> = None;
    // Each round indents the continuation lines of one quoted scalar (the value is the same,
    // since line folding drops leading white space) and parses again from the start, so a text
    // with many such scalars costs rounds × size: past REPARSE_BUDGET bytes the error stands.
    const REPARSE_BUDGET: usize = 1 << 30;
    let mut parsed = 0usize;
    loop {
        let t = fixed.as_deref().unwrap_or(text);
        parsed = parsed.saturating_add(t.len());
        match parse_once(t, limits) {
            Err(e) if e.msg == QUOTED_INDENT && parsed < REPARSE_BUDGET => {
                match reindent_quoted(t, e.line, e.column) {
                    Some(next) => fixed = Some(next),
                    None => return Err(e),
                }
            }
            Err(e) if e.msg == QUOTED_INDENT => {
                return Err(DecodeError::at(
                    e.line,
                    e.column,
                    format!(
                        "{QUOTED_INDENT} (too many quoted scalars continued at their key's indentation to re-indent)"
                    ),
                ));
            }
            other => return other,
        }
    }
}

/// `text` with the continuation lines of the quoted scalar opening at `line`:`column` (1-based,
/// columns in characters) indented one space past the line that opens it; `None` if nothing
/// changes.
fn reindent_quoted(text: &str, line: usize, column: usize) -> Option<String> {
    let start = text
        .split_inclusive('\n')
        .take(line.checked_sub(1)?)
        .map(str::len)
        .sum::<usize>();
    let first = &text[start..];
    let indent = first.len() - first.trim_start_matches(' ').len();
    let (qi, q) = first.char_indices().nth(column.checked_sub(1)?)?;
    if q != '\'' && q != '"' {
        return None;
    }
    let body = start + qi + 1;
    let mut out = String::with_capacity(text.len() + 64);
    out.push_str(&text[..body]);
    let mut chars = text[body..].char_indices().peekable();
    let mut changed = false;
    let mut end = text.len();
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' if q == '"' => {
                out.push(c);
                if let Some((_, n)) = chars.next() {
                    out.push(n);
                }
                continue;
            }
            '\'' if q == '\'' && chars.peek().is_some_and(|&(_, n)| n == '\'') => {
                out.push_str("''");
                chars.next();
                continue;
            }
            _ if c == q => {
                end = body + i;
                break;
            }
            '\n' => {
                out.push('\n');
                let rest = &text[body + i + 1..];
                let k = rest.len() - rest.trim_start_matches(' ').len();
                let blank = rest[k..].starts_with('\n') || rest[k..].is_empty();
                if !blank && k <= indent {
                    out.extend(std::iter::repeat_n(' ', indent + 1 - k));
                    changed = true;
                }
                continue;
            }
            _ => {}
        }
        out.push(c);
    }
    out.push_str(&text[end..]);
    changed.then_some(out)
}

/// The documents of a stream that decode before its first error, and that error.
pub(super) fn parse_partial(text: &str, limits: &Limits) -> (Vec<Data>, Option<DecodeError>) {
    match parse(text, limits) {
        Ok(docs) => (docs, None),
        Err(e) => {
            let mut docs = Vec::new();
            let _ = parse_into(text, limits, &mut docs, &mut Vec::new());
            (docs, Some(e))
        }
    }
}

fn parse_once(text: &str, limits: &Limits) -> Result<Vec<Data>, DecodeError> {
    let mut docs = Vec::new();
    parse_into(text, limits, &mut docs, &mut Vec::new())?;
    Ok(docs)
}

/// The line and column (1-based) of each document's root node.
pub(super) fn doc_positions(text: &str, limits: &Limits) -> Vec<(usize, usize)> {
    let mut marks = Vec::new();
    let _ = parse_into(text, limits, &mut Vec::new(), &mut marks);
    marks
}

/// The line and column (1-based) `yaml.v3` gives a document's root node: a block mapping
/// starts at its first key (yaml-rust2 marks it a column later), and an empty node at the end
/// of the line before (after its line break).
fn node_position(text: &str, ev: &Event, mark: &Marker) -> (usize, usize) {
    match ev {
        Event::MappingStart(..)
            if mark.col() > 0
                && text
                    .lines()
                    .nth(mark.line().saturating_sub(1))
                    .is_some_and(|l| l.chars().nth(mark.col()) != Some('{')) =>
        {
            (mark.line(), mark.col())
        }
        Event::Scalar(v, TScalarStyle::Plain, _, None) if v.is_empty() && mark.col() == 0 => {
            let line = mark.line().saturating_sub(1).max(1);
            let prev = text.split_inclusive('\n').nth(line - 1).unwrap_or("");
            let len = prev.trim_end_matches('\n').chars().count();
            (line, len + 1 + usize::from(prev.ends_with('\n')))
        }
        _ => (mark.line(), mark.col() + 1),
    }
}

/// `yaml.v3` reads YAML 1.1 documents only: a `%YAML` directive of another version is an
/// error; and a tab cannot start a token where indentation is read.
fn check_directives(text: &str) -> Result<(), DecodeError> {
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("%YAML")
            && rest.starts_with([' ', '\t'])
            && rest.split_whitespace().next() != Some("1.1")
        {
            return Err(DecodeError::new("found incompatible YAML document"));
        }
    }
    // Before the first token, a line may not start with a tab (after spaces).
    for (i, line) in text.lines().enumerate() {
        let body = line.trim_start_matches(' ');
        if body.starts_with('\t') {
            let msg = "found character that cannot start any token";
            return Err(if i == 0 {
                DecodeError::new(msg)
            } else {
                DecodeError::at(i + 1, line.len() - body.len() + 1, msg)
            });
        }
        if !(body.is_empty() || body.starts_with('#')) {
            break;
        }
    }
    Ok(())
}

fn parse_into(
    text: &str,
    limits: &Limits,
    docs: &mut Vec<Data>,
    marks: &mut Vec<(usize, usize)>,
) -> Result<(), DecodeError> {
    check_directives(text)?;
    let mut parser = Parser::new_from_str(text);
    let mut stack: Vec<Frame> = Vec::new();
    let mut anchors: HashMap<usize, (Data, usize)> = HashMap::new();
    // The text, style and tag of anchored scalars, for aliases used as keys.
    let mut scalar_anchors: HashMap<usize, (String, TScalarStyle, Option<Tag>)> = HashMap::new();
    let mut nodes = 0usize;
    let mut current: Option<Data> = None;
    loop {
        let (ev, mark) = parser
            .next_token()
            .map_err(|e| err_at(e.marker(), e.info().to_string()))?;
        if stack.is_empty()
            && current.is_none()
            && marks.len() == docs.len()
            && matches!(
                ev,
                Event::Scalar(..)
                    | Event::Alias(_)
                    | Event::SequenceStart(..)
                    | Event::MappingStart(..)
            )
        {
            marks.push(node_position(text, &ev, &mark));
        }
        let done: Data = match ev {
            Event::StreamEnd => break,
            Event::StreamStart | Event::Nothing => continue,
            Event::DocumentStart => {
                current = None;
                continue;
            }
            Event::DocumentEnd => {
                docs.push(current.take().unwrap_or(Data::Null));
                continue;
            }
            Event::Alias(id) => {
                let Some((d, n)) = anchors.get(&id) else {
                    return Err(err_at(&mark, "unknown anchor"));
                };
                nodes = nodes.saturating_add(*n);
                if nodes > limits.max_nodes {
                    return Err(err_at(
                        &mark,
                        format!(
                            "YAML alias expansion exceeds {} values (excessive aliasing)",
                            limits.max_nodes
                        ),
                    ));
                }
                if let Some(Frame::Map { key: k @ None, .. }) = stack.last_mut() {
                    let Some((value, style, tag)) = scalar_anchors.get(&id) else {
                        let kind = if matches!(d, Data::List(_)) {
                            "!!seq"
                        } else {
                            "!!map"
                        };
                        return Err(err_at(&mark, format!("invalid map key: {kind}")));
                    };
                    let label =
                        key_label(value, *style, tag.as_ref()).map_err(|e| position(e, &mark))?;
                    *k = Some((label, mark, false));
                    continue;
                }
                d.clone()
            }
            Event::Scalar(value, style, anchor, tag) => {
                nodes += 1;
                if nodes > limits.max_nodes {
                    return Err(err_at(
                        &mark,
                        format!("YAML document has more than {} values", limits.max_nodes),
                    ));
                }
                if anchor > 0 {
                    scalar_anchors.insert(anchor, (value.clone(), style, tag.clone()));
                }
                if let Some(Frame::Map { key: k @ None, .. }) = stack.last_mut() {
                    // CUE's `isMerge`: a plain `<<`, untagged or tagged `!` or `!!merge`.
                    let merge = value == "<<"
                        && ((style == TScalarStyle::Plain
                            && tag
                                .as_ref()
                                .is_none_or(|t| t.handle.is_empty() && t.suffix == "!"))
                            || tag.as_ref().is_some_and(|t| {
                                t.handle == "tag:yaml.org,2002:" && t.suffix == "merge"
                            }));
                    let label = if merge {
                        value
                    } else {
                        key_label(&value, style, tag.as_ref()).map_err(|e| position(e, &mark))?
                    };
                    if anchor > 0 {
                        anchors.insert(anchor, (Data::String(label.clone()), 1));
                    }
                    *k = Some((label, mark, merge));
                    continue;
                }
                let d = resolve(&value, style, tag.as_ref()).map_err(|e| position(e, &mark))?;
                if anchor > 0 {
                    anchors.insert(anchor, (d.clone(), 1));
                }
                d
            }
            Event::SequenceStart(anchor, _) | Event::MappingStart(anchor, _) => {
                if let Some(Frame::Map { key: None, .. }) = stack.last() {
                    let kind = if matches!(ev, Event::SequenceStart(..)) {
                        "!!seq"
                    } else {
                        "!!map"
                    };
                    return Err(err_at(&mark, format!("invalid map key: {kind}")));
                }
                if stack.len() >= limits.max_depth {
                    return Err(err_at(
                        &mark,
                        format!("YAML nesting exceeds {} levels", limits.max_depth),
                    ));
                }
                nodes += 1;
                if matches!(ev, Event::SequenceStart(..)) {
                    stack.push(Frame::Seq {
                        items: Vec::new(),
                        anchor,
                        nodes_at_start: nodes,
                    });
                } else {
                    stack.push(Frame::Map {
                        fields: Vec::new(),
                        index: None,
                        anchor,
                        nodes_at_start: nodes,
                        key: None,
                        merged: false,
                    });
                }
                continue;
            }
            Event::SequenceEnd => match stack.pop() {
                Some(Frame::Seq {
                    items,
                    anchor,
                    nodes_at_start,
                }) => {
                    let d = Data::List(items);
                    if anchor > 0 {
                        anchors.insert(anchor, (d.clone(), nodes - nodes_at_start + 1));
                    }
                    d
                }
                _ => return Err(err_at(&mark, "unbalanced sequence end")),
            },
            Event::MappingEnd => match stack.pop() {
                Some(Frame::Map {
                    fields,
                    anchor,
                    nodes_at_start,
                    ..
                }) => {
                    let d = Data::Struct(fields);
                    if anchor > 0 {
                        anchors.insert(anchor, (d.clone(), nodes - nodes_at_start + 1));
                    }
                    d
                }
                _ => return Err(err_at(&mark, "unbalanced mapping end")),
            },
        };
        match stack.last_mut() {
            None => current = Some(done),
            Some(Frame::Seq { items, .. }) => items.push(done),
            Some(Frame::Map {
                fields,
                index,
                key,
                merged,
                ..
            }) => {
                let Some((k, kmark, merge)) = key.take() else {
                    return Err(err_at(&mark, "mapping value without a key"));
                };
                if merge {
                    // CUE's decoder inserts a merged map's fields, the maps of a sequence
                    // from the last one, each replacing a field of the same name.
                    let maps: Vec<Data> = match done {
                        Data::Struct(_) => vec![done],
                        Data::List(items) if items.iter().all(|i| matches!(i, Data::Struct(_))) => {
                            items.into_iter().rev().collect()
                        }
                        _ => {
                            return Err(err_at(
                                &kmark,
                                "map merge requires map or sequence of maps as the value",
                            ));
                        }
                    };
                    for m in maps {
                        if let Data::Struct(fs) = m {
                            for f in fs {
                                replace_or_add(fields, index, f.name, f.value);
                            }
                        }
                    }
                    *merged = true;
                } else if *merged {
                    // After a merge key, a key that is already there replaces its value.
                    replace_or_add(fields, index, k, done);
                } else {
                    // Repeated keys are unified, as CUE unifies repeated fields.
                    add_field(fields, index, k, done).map_err(|m| err_at(&kmark, m))?;
                }
            }
        }
    }
    Ok(())
}

/// Replaces the value of the field `key`, or adds the field.
fn replace_or_add(
    fields: &mut Vec<Field>,
    index: &mut Option<HashMap<String, usize>>,
    key: String,
    value: Data,
) {
    let found = match index {
        Some(map) => map.get(&key).copied(),
        None => fields.iter().position(|f| f.name == key),
    };
    match found {
        Some(i) => fields[i].value = value,
        None => {
            // Cannot fail: the key is new.
            let _ = add_field(fields, index, key, value);
        }
    }
}

/// A scalar's tag as CUE's decoder acts on it (`yaml.v3`'s `Node.ShortTag`): an explicit tag
/// in its short form (`!!int`, `!custom`), else `!!str` for a quoted or block scalar, else the
/// tag `yaml.v3` resolves a plain scalar to.
fn short_tag(value: &str, style: TScalarStyle, tag: Option<&Tag>) -> String {
    if let Some(t) = tag {
        let full = format!("{}{}", t.handle, t.suffix);
        if full != "!" {
            return match full.strip_prefix("tag:yaml.org,2002:") {
                Some(name) => format!("!!{name}"),
                None => full,
            };
        }
    }
    if style != TScalarStyle::Plain {
        return "!!str".into();
    }
    match resolve_tag(value) {
        // CUE keeps an untagged float that reads as a YAML 1.1 octal (`08`) a string.
        "!!float" if yaml11_octal_like(value) => "!!str".into(),
        t => t.into(),
    }
}

/// `^[-+]?0[0-9_]+$`
fn yaml11_octal_like(v: &str) -> bool {
    let b = v.strip_prefix(['-', '+']).unwrap_or(v).as_bytes();
    b.len() > 1 && b[0] == b'0' && b[1..].iter().all(|c| c.is_ascii_digit() || *c == b'_')
}

/// `yaml.v3`'s `resolve` of an untagged plain scalar: the tag only (timestamps, which CUE keeps
/// as strings, are `!!str` here).
fn resolve_tag(v: &str) -> &'static str {
    match v {
        "" | "~" | "null" | "Null" | "NULL" => return "!!null",
        "true" | "True" | "TRUE" | "false" | "False" | "FALSE" => return "!!bool",
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" | "-.inf" | "-.Inf" | "-.INF"
        | ".nan" | ".NaN" | ".NAN" => return "!!float",
        "<<" => return "!!merge",
        _ => {}
    }
    match v.as_bytes()[0] {
        b'.' if go_float(v) => "!!float",
        b'.' => "!!str",
        b'0'..=b'9' | b'+' | b'-' => {
            let plain: String = v.chars().filter(|&c| c != '_').collect();
            if go_int(&plain) {
                "!!int"
            } else if crate::encode::yaml_style_float(&plain) && go_float(&plain) {
                "!!float"
            } else {
                "!!str"
            }
        }
        _ => "!!str",
    }
}

/// Go's `strconv.ParseFloat(s, 64)` succeeding on a decimal float: out of range is an error,
/// too small is zero.
fn go_float(s: &str) -> bool {
    !s.contains('_') && s.parse::<f64>().is_ok_and(f64::is_finite)
}

/// A scalar as CUE's YAML decoder makes it, by its tag.
fn resolve(value: &str, style: TScalarStyle, tag: Option<&Tag>) -> Result<Data, DecodeError> {
    let at = |m: String| DecodeError::new(m);
    match short_tag(value, style, tag).as_str() {
        "!!str" | "!!timestamp" => Ok(Data::String(value.to_string())),
        "!!null" => Ok(Data::Null),
        "!!bool" => Ok(Data::Bool(matches!(value, "true" | "True" | "TRUE"))),
        "!!binary" => {
            let clean: Vec<u8> = value
                .bytes()
                .filter(|&b| b != b'\r' && b != b'\n')
                .collect();
            use base64::Engine as _;
            base64::engine::general_purpose::STANDARD
                .decode(clean)
                .map(Data::Bytes)
                .map_err(|_| at("!!binary value contains invalid base64 data".into()))
        }
        "!!int" => {
            let v = octal_prefix(value, b'0'..=b'9');
            let (n, float) = super::cue_literal(&v, true)
                .map_err(|e| at(format!("cannot decode {v:?} as !!int: {e}")))?;
            if float {
                return Err(at(format!(
                    "cannot decode {v:?} as !!int: not a literal number"
                )));
            }
            Ok(Data::int(n.to_g_string()))
        }
        "!!float" => {
            let v = float_literal(value)?;
            let (n, float) = super::cue_literal(&v, true).map_err(DecodeError::new)?;
            let text = n.to_g_string();
            Ok(if float {
                Data::float(text)
            } else {
                Data::int(text)
            })
        }
        other => Err(at(format!("cannot unmarshal tag {other:?}"))),
    }
}

/// `0` and a digit start a YAML 1.1 octal, which CUE reads as `0o...`.
fn octal_prefix(v: &str, second: std::ops::RangeInclusive<u8>) -> String {
    let b = v.as_bytes();
    if b.len() > 1 && b[0] == b'0' && second.contains(&b[1]) {
        format!("0o{}", &v[1..])
    } else {
        v.to_string()
    }
}

/// The literal CUE builds for a `!!float` scalar, or the error compiling it gives: infinities
/// and NaN are no CUE numbers, and a float without `.`, `e` (or `i`, `n`) becomes the
/// expression `number & X`, which is no literal either.
fn float_literal(value: &str) -> Result<String, DecodeError> {
    let start = |lit: &str| DecodeError::new(format!("parse error: illegal number start {lit:?}"));
    match value {
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => return Err(start("+Inf")),
        "-.inf" | "-.Inf" | "-.INF" => return Err(start("Inf")),
        ".nan" | ".NaN" | ".NAN" => return Err(start("NaN")),
        _ => {}
    }
    let v = octal_prefix(value, b'0'..=b'9');
    if let Err(e) = super::cue_literal(&v, true) {
        return Err(DecodeError::new(format!(
            "cannot decode {v:?} as !!float: {e}"
        )));
    }
    if !v.contains(['.', 'e', 'E', 'i', 'I', 'n', 'N']) {
        return Err(start(&format!("number & {v}")));
    }
    Ok(v)
}

/// The label CUE gives a scalar map key: a string's text, else the literal's text (`null`,
/// `true`, `0o17`, `1e3`); a negative number is no label.
fn key_label(value: &str, style: TScalarStyle, tag: Option<&Tag>) -> Result<String, DecodeError> {
    let tag_name = short_tag(value, style, tag);
    let d = match tag_name.as_str() {
        // `number & 1` is a fine label, though no value.
        "!!float" => None,
        _ => Some(resolve(value, style, tag)?),
    };
    let invalid = || DecodeError::new(format!("invalid label {value}"));
    Ok(match (tag_name.as_str(), d) {
        ("!!null", _) => "null".into(),
        ("!!bool", Some(Data::Bool(b))) => b.to_string(),
        ("!!int", _) => {
            if value.starts_with('-') {
                return Err(invalid());
            }
            octal_prefix(value, b'0'..=b'9')
        }
        ("!!float", _) => {
            let lit = match float_literal(value) {
                Ok(v) => v,
                Err(e) => match e.msg.strip_prefix("parse error: illegal number start ") {
                    Some(q) => q.trim_matches('"').to_string(),
                    None => return Err(e),
                },
            };
            if value.starts_with('-') {
                return Err(invalid());
            }
            lit
        }
        _ => value.to_string(),
    })
}

/// Go's `strconv.ParseInt(s, 0, 64)` or `ParseUint(s, 0, 64)` accepting `s`.
fn go_int(s: &str) -> bool {
    let Some(&first) = s.as_bytes().first() else {
        return false;
    };
    let (neg, body) = match first {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let (radix, digits) = if let Some(d) = body.strip_prefix("0x").or(body.strip_prefix("0X")) {
        (16, d)
    } else if let Some(d) = body.strip_prefix("0o").or(body.strip_prefix("0O")) {
        (8, d)
    } else if let Some(d) = body.strip_prefix("0b").or(body.strip_prefix("0B")) {
        (2, d)
    } else if body.len() > 1 && body.starts_with('0') {
        (8, &body[1..])
    } else {
        (10, body)
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return false;
    }
    let Ok(mag) = u128::from_str_radix(digits, radix) else {
        return false;
    };
    if neg {
        mag <= 1u128 << 63
    } else {
        mag <= u128::from(u64::MAX)
    }
}
