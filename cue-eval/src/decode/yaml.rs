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
        /// Merged fields and where they go.
        merges: Vec<(usize, Data)>,
    },
}

fn err_at(m: &Marker, msg: impl Into<String>) -> DecodeError {
    DecodeError::at(m.line(), m.col() + 1, msg)
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

fn parse_once(text: &str, limits: &Limits) -> Result<Vec<Data>, DecodeError> {
    let mut parser = Parser::new_from_str(text);
    let mut docs = Vec::new();
    let mut stack: Vec<Frame> = Vec::new();
    let mut anchors: HashMap<usize, (Data, usize)> = HashMap::new();
    let mut nodes = 0usize;
    let mut current: Option<Data> = None;
    loop {
        let (ev, mark) = parser
            .next_token()
            .map_err(|e| err_at(e.marker(), e.info().to_string()))?;
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
                    match d {
                        Data::String(s) => {
                            *k = Some((s.clone(), mark, false));
                            continue;
                        }
                        _ => {
                            return Err(err_at(&mark, "invalid map key: an alias to a non-string"));
                        }
                    }
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
                if let Some(Frame::Map { key: k @ None, .. }) = stack.last_mut() {
                    let merge = style == TScalarStyle::Plain && tag.is_none() && value == "<<";
                    if anchor > 0 {
                        anchors.insert(anchor, (Data::String(value.clone()), 1));
                    }
                    *k = Some((value, mark, merge));
                    continue;
                }
                let d = resolve(&value, style, tag.as_ref()).map_err(|m| err_at(&mark, m))?;
                if anchor > 0 {
                    anchors.insert(anchor, (d.clone(), 1));
                }
                d
            }
            Event::SequenceStart(anchor, _) | Event::MappingStart(anchor, _) => {
                if let Some(Frame::Map { key: None, .. }) = stack.last() {
                    return Err(err_at(&mark, "invalid map key: a collection"));
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
                        merges: Vec::new(),
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
                    merges,
                    ..
                }) => {
                    let d = Data::Struct(apply_merges(fields, merges));
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
                merges,
                ..
            }) => {
                let Some((k, kmark, merge)) = key.take() else {
                    return Err(err_at(&mark, "mapping value without a key"));
                };
                if merge {
                    match &done {
                        Data::Struct(_) => merges.push((fields.len(), done)),
                        Data::List(items) if items.iter().all(|i| matches!(i, Data::Struct(_))) => {
                            merges.push((fields.len(), done))
                        }
                        _ => {
                            return Err(err_at(
                                &kmark,
                                "map merge requires map or sequence of maps as the value",
                            ));
                        }
                    }
                } else {
                    if fields.iter().any(|f| f.name == k) && index.is_none() {
                        return Err(err_at(&kmark, format!("mapping key {k:?} already defined")));
                    }
                    if let Some(m) = index
                        && m.contains_key(&k)
                    {
                        return Err(err_at(&kmark, format!("mapping key {k:?} already defined")));
                    }
                    add_field(fields, index, k, done).map_err(|m| err_at(&kmark, m))?;
                }
            }
        }
    }
    Ok(docs)
}

/// Inserts merged fields (`<<: *base`) where the merge key stood; explicit keys win, and among
/// merged maps the earlier one wins, as in `yaml.v3`.
fn apply_merges(fields: Vec<Field>, merges: Vec<(usize, Data)>) -> Vec<Field> {
    if merges.is_empty() {
        return fields;
    }
    let mut seen: std::collections::HashSet<String> =
        fields.iter().map(|f| f.name.clone()).collect();
    let mut inserts: Vec<(usize, Vec<Field>)> = Vec::new();
    for (pos, d) in merges {
        let maps: Vec<Data> = match d {
            Data::List(items) => items,
            other => vec![other],
        };
        let mut add = Vec::new();
        for m in maps {
            if let Data::Struct(fs) = m {
                for f in fs {
                    if seen.insert(f.name.clone()) {
                        add.push(f);
                    }
                }
            }
        }
        inserts.push((pos, add));
    }
    let mut out = Vec::new();
    let mut ins = inserts.into_iter().peekable();
    for (i, f) in fields.into_iter().enumerate() {
        while let Some((p, _)) = ins.peek() {
            if *p > i {
                break;
            }
            if let Some((_, add)) = ins.next() {
                out.extend(add);
            }
        }
        out.push(f);
    }
    for (_, add) in ins {
        out.extend(add);
    }
    out
}

fn is_core_tag(tag: &Tag, name: &str) -> bool {
    (tag.handle == "tag:yaml.org,2002:" || tag.handle == "!!") && tag.suffix == name
}

/// A scalar as CUE decodes it: quoted and block scalars are strings; plain ones are resolved.
fn resolve(value: &str, style: TScalarStyle, tag: Option<&Tag>) -> Result<Data, String> {
    if let Some(t) = tag {
        if is_core_tag(t, "str") || is_core_tag(t, "binary") || is_core_tag(t, "timestamp") {
            return Ok(Data::String(value.to_string()));
        }
        if is_core_tag(t, "null") {
            return Ok(Data::Null);
        }
        if is_core_tag(t, "bool") || is_core_tag(t, "int") || is_core_tag(t, "float") {
            let d = resolve_plain(value)?;
            let ok = match &d {
                Data::Bool(_) => is_core_tag(t, "bool"),
                Data::Number { float, .. } => {
                    is_core_tag(t, "float") || (!*float && is_core_tag(t, "int"))
                }
                _ => false,
            };
            if !ok {
                return Err(format!(
                    "cannot decode !!{} `{value}` as a !!{}",
                    kind_name(&d),
                    t.suffix
                ));
            }
            return Ok(d);
        }
    }
    if style != TScalarStyle::Plain {
        return Ok(Data::String(value.to_string()));
    }
    resolve_plain(value)
}

fn kind_name(d: &Data) -> &'static str {
    match d {
        Data::Null => "null",
        Data::Bool(_) => "bool",
        Data::Number { float: false, .. } => "int",
        Data::Number { .. } => "float",
        _ => "str",
    }
}

/// `yaml.v3`'s `resolve` for an untagged plain scalar.
fn resolve_plain(v: &str) -> Result<Data, String> {
    match v {
        "" | "~" | "null" | "Null" | "NULL" => return Ok(Data::Null),
        "true" | "True" | "TRUE" => return Ok(Data::Bool(true)),
        "false" | "False" | "FALSE" => return Ok(Data::Bool(false)),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" | "-.inf" | "-.Inf" | "-.INF" => {
            return Err(format!("cannot represent infinity ({v}) in CUE"));
        }
        ".nan" | ".NaN" | ".NAN" => return Err("cannot represent NaN in CUE".to_string()),
        _ => {}
    }
    let first = v.as_bytes()[0];
    if !(first.is_ascii_digit() || first == b'-' || first == b'+' || first == b'.') {
        return Ok(Data::String(v.to_string()));
    }
    let plain: String = v.chars().filter(|&c| c != '_').collect();
    if let Some(d) = go_int(&plain) {
        return Ok(d);
    }
    if crate::encode::yaml_style_float(&plain)
        && let Some(d) = super::number(&plain)
    {
        let text = match d {
            Data::Number { text, .. } => text,
            _ => return Ok(Data::String(v.to_string())),
        };
        return Ok(Data::float(text));
    }
    Ok(Data::String(v.to_string()))
}

/// Go's `strconv.ParseInt(s, 0, 64)` / `ParseUint` acceptance, with YAML 1.1 octals (`0777`),
/// giving the decimal spelling.
fn go_int(s: &str) -> Option<Data> {
    let (neg, body) = match s.as_bytes().first()? {
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
        return None;
    }
    let mag = u128::from_str_radix(digits, radix).ok()?;
    if neg {
        if mag > 1u128 << 63 {
            return None;
        }
        if mag == 0 {
            return Some(Data::int("0"));
        }
        Some(Data::int(format!("-{mag}")))
    } else {
        if mag > u128::from(u64::MAX) {
            return None;
        }
        Some(Data::int(mag.to_string()))
    }
}
