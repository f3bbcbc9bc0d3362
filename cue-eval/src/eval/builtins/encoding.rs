//! The `encoding/*` packages: `json` and `yaml` (marshalling through `crate::encode`,
//! unmarshalling through `crate::decode`, validation by unifying the decoded value with a
//! schema), `base64` (the `base64` crate's standard engine, which is Go's `StdEncoding`),
//! `hex` (with Go's `hex.Dump` layout) and `csv` (Go's `encoding/csv` quoting rules).

use std::rc::Rc;

use base64::Engine as _;

use super::k::*;
use super::{R, Runtime, StdMember, a_bytes, a_str, bytes, func, raw, string};
use crate::encode::Data;
use crate::eval::value::{Bottom, ErrCode, Value};

pub(super) static MEMBERS: &[StdMember] = &[
    func("encoding/json.Marshal", &[T], |rt, a| {
        let d = rt.value_to_data(&a[0])?;
        string(crate::encode::to_json_compact(&d))
    }),
    func("encoding/json.MarshalStream", &[T], |rt, a| {
        let docs = docs_of(rt, &a[0])?;
        string(crate::encode::to_json_stream_compact(&docs))
    }),
    func("encoding/json.Unmarshal", &[B], json_unmarshal),
    func("encoding/json.UnmarshalStream", &[B], json_unmarshal_stream),
    raw("encoding/json.Validate", &[B, T], true, |rt, a| {
        validate(rt, a, Format::Json, false)
    }),
    func("encoding/json.Valid", &[B], |_, a| {
        let b = a_bytes(a, 0)?;
        Ok(Value::Bool(
            std::str::from_utf8(&b)
                .ok()
                .is_some_and(|s| crate::decode::json_valid(s).is_ok()),
        ))
    }),
    func("encoding/json.Compact", &[B], |_, a| {
        let s = json_text(a)?;
        string(reformat(&s, None))
    }),
    func("encoding/json.Indent", &[B, S, S], |_, a| {
        let s = json_text(a)?;
        let (prefix, indent) = (a_str(a, 1)?, a_str(a, 2)?);
        // Go's `json.Indent` keeps the white space after the value as it is.
        let body = s.trim_end_matches([' ', '\t', '\n', '\r']);
        let mut out = reformat(body, Some((&prefix, &indent)));
        out.push_str(&s[body.len()..]);
        string(out)
    }),
    func("encoding/json.HTMLEscape", &[B], |_, a| {
        let b = a_bytes(a, 0)?;
        string(html_escape(&String::from_utf8_lossy(&b)))
    }),
    func("encoding/yaml.Marshal", &[T], |rt, a| {
        let d = rt.value_to_data(&a[0])?;
        string(crate::encode::to_yaml(&d))
    }),
    func("encoding/yaml.MarshalStream", &[T], |rt, a| {
        let docs = docs_of(rt, &a[0])?;
        string(crate::encode::to_yaml_stream(&docs))
    }),
    func("encoding/yaml.Unmarshal", &[B], yaml_unmarshal),
    func("encoding/yaml.UnmarshalStream", &[B], yaml_unmarshal_stream),
    raw("encoding/yaml.Validate", &[B, T], true, |rt, a| {
        validate(rt, a, Format::Yaml, true)
    }),
    raw("encoding/yaml.ValidatePartial", &[B, T], true, |rt, a| {
        validate(rt, a, Format::Yaml, false)
    }),
    func("encoding/base64.EncodedLen", &[T, I], |_, a| {
        check_encoding(&a[0], "base64")?;
        let n = super::a_int(a, 1)?.max(0);
        super::int((n + 2) / 3 * 4)
    }),
    func("encoding/base64.DecodedLen", &[T, I], |_, a| {
        check_encoding(&a[0], "base64")?;
        let n = super::a_int(a, 1)?.max(0);
        super::int(n / 4 * 3)
    }),
    func("encoding/base64.Encode", &[T, B], |_, a| {
        check_encoding(&a[0], "base64")?;
        string(base64::engine::general_purpose::STANDARD.encode(a_bytes(a, 1)?))
    }),
    func("encoding/base64.Decode", &[T, S], |_, a| {
        check_encoding(&a[0], "base64")?;
        let s = a_str(a, 1)?;
        base64_decode(s.as_bytes())
    }),
    func("encoding/hex.EncodedLen", &[I], |_, a| {
        super::int(super::a_int(a, 0)?.saturating_mul(2))
    }),
    func("encoding/hex.DecodedLen", &[I], |_, a| {
        super::int(super::a_int(a, 0)? / 2)
    }),
    func("encoding/hex.Encode", &[B], |_, a| {
        let b = a_bytes(a, 0)?;
        string(hex_encode(&b))
    }),
    func("encoding/hex.Decode", &[S], |_, a| {
        let s = a_str(a, 0)?;
        hex_decode(s.as_bytes()).map(|b| Value::Bytes(Rc::from(b)))
    }),
    func("encoding/hex.Dump", &[B], |_, a| {
        string(hex_dump(&a_bytes(a, 0)?))
    }),
    func("encoding/csv.Encode", &[T], csv_encode),
    func("encoding/csv.Decode", &[B], csv_decode),
];

fn docs_of(rt: &mut Runtime, v: &Value) -> Result<Vec<Data>, Rc<Bottom>> {
    let items = rt.list_values(v, "MarshalStream")?;
    let mut docs = Vec::with_capacity(items.len());
    for it in &items {
        docs.push(rt.value_to_data(it)?);
    }
    Ok(docs)
}

fn json_text(a: &[Value]) -> Result<String, Rc<Bottom>> {
    let b = a_bytes(a, 0)?;
    let s = String::from_utf8(b).map_err(|_| Bottom::eval("json: invalid JSON"))?;
    if let Err(e) = crate::decode::json_valid(&s) {
        return Err(Bottom::eval(e.msg));
    }
    Ok(s)
}

fn json_unmarshal(rt: &mut Runtime, a: &[Value]) -> R {
    let b = a_bytes(a, 0)?;
    let s = std::str::from_utf8(&b).map_err(|_| Bottom::eval("json: invalid JSON"))?;
    if crate::decode::json_valid(s).is_err() {
        return Err(Bottom::eval("json: invalid JSON"));
    }
    // Valid JSON that CUE still refuses: a lone surrogate, conflicting duplicate keys.
    let d = crate::decode::json(s).map_err(|e| Bottom::eval(e.msg))?;
    Ok(rt.data_to_value(&d))
}

/// Splits a stream of JSON values at value boundaries (strings and nesting tracked).
fn split_json_stream(s: &str) -> Vec<&str> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        if i >= b.len() {
            break;
        }
        let start = i;
        let mut depth = 0i64;
        let mut in_str = false;
        while i < b.len() {
            let c = b[i];
            if in_str {
                if c == b'\\' {
                    i += 1;
                } else if c == b'"' {
                    in_str = false;
                    if depth == 0 {
                        i += 1;
                        break;
                    }
                }
            } else {
                match c {
                    b'"' => in_str = true,
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth <= 0 {
                            i += 1;
                            break;
                        }
                    }
                    c if depth == 0 && (c.is_ascii_whitespace() || c == b'{' || c == b'[') => {
                        break;
                    }
                    _ => {}
                }
            }
            i += 1;
        }
        out.push(&s[start..i.min(b.len())]);
    }
    out
}

fn json_unmarshal_stream(rt: &mut Runtime, a: &[Value]) -> R {
    let b = a_bytes(a, 0)?;
    let s = std::str::from_utf8(&b).map_err(|_| Bottom::eval("json: invalid JSON"))?;
    let mut vals = Vec::new();
    for part in split_json_stream(s) {
        let d = crate::decode::json(part).map_err(|e| {
            Bottom::eval(match crate::decode::json_valid(part) {
                Err(_) => format!("invalid JSON for file \"\": {}", e.msg),
                Ok(()) => e.msg,
            })
        })?;
        vals.push(rt.data_to_value(&d));
    }
    Ok(rt.make_list_values(vals))
}

/// A YAML decoding error as CUE's `yaml.Unmarshal` shows it: `:LINE: msg` (the file name is
/// empty), `: msg` without a line, and the errors of compiling a decoded literal as they are.
fn yaml_error(e: &crate::decode::DecodeError) -> String {
    if e.line > 0 {
        format!(":{}: {}", e.line, e.msg)
    } else if e.msg.starts_with("parse error: ") {
        e.msg.clone()
    } else {
        format!(": {}", e.msg)
    }
}

fn yaml_docs(a: &[Value]) -> Result<Vec<Data>, Rc<Bottom>> {
    let b = a_bytes(a, 0)?;
    let s = std::str::from_utf8(&b).map_err(|_| Bottom::eval("yaml: invalid UTF-8"))?;
    crate::decode::yaml(s).map_err(|e| Bottom::eval(yaml_error(&e)))
}

fn yaml_unmarshal(rt: &mut Runtime, a: &[Value]) -> R {
    let b = a_bytes(a, 0)?;
    let s = std::str::from_utf8(&b).map_err(|_| Bottom::eval("yaml: invalid UTF-8"))?;
    let (docs, err) = crate::decode::yaml_partial(s);
    match (docs.len(), err) {
        // An error in the first document is reported as is; one in a later document is
        // prefixed, as CUE decodes the second document only to see that there is one.
        (0, Some(e)) => Err(Bottom::eval(yaml_error(&e))),
        (1, Some(e)) => Err(Bottom::eval(format!(
            "expected a single YAML document: {}",
            yaml_error(&e)
        ))),
        (0, None) => Ok(Value::Null),
        (1, None) => Ok(rt.data_to_value(&docs[0])),
        _ => {
            let pos = crate::decode::yaml_doc_positions(s)
                .get(1)
                .map(|(l, c)| format!("{l}:{c}: "))
                .unwrap_or_default();
            Err(Bottom::eval(format!(
                "{pos}expected a single YAML document"
            )))
        }
    }
}

fn yaml_unmarshal_stream(rt: &mut Runtime, a: &[Value]) -> R {
    let docs = yaml_docs(a)?;
    let mut vals: Vec<Value> = docs.iter().map(|d| rt.data_to_value(d)).collect();
    if vals.is_empty() {
        vals.push(Value::Null);
    }
    Ok(rt.make_list_values(vals))
}

#[derive(Clone, Copy)]
enum Format {
    Json,
    Yaml,
}

/// Decodes the data and unifies every document with the schema; `concrete` also requires
/// every field of the result to be concrete (`yaml.Validate`).
fn validate(rt: &mut Runtime, a: &[Value], f: Format, concrete: bool) -> R {
    let b = match &a[0] {
        Value::Str(s) => s.as_bytes().to_vec(),
        Value::Bytes(b) => b.to_vec(),
        other => {
            return Err(Bottom::incomplete(format!(
                "non-concrete argument {}",
                rt.value_text(other)
            )));
        }
    };
    let text = String::from_utf8(b).map_err(|_| Bottom::eval("invalid UTF-8"))?;
    let docs = match f {
        Format::Json => {
            if crate::decode::json_valid(&text).is_err() {
                return Err(Bottom::eval("json: invalid JSON"));
            }
            vec![crate::decode::json(&text).map_err(|e| Bottom::eval(e.msg))?]
        }
        Format::Yaml => yaml_docs(&a[..1])?,
    };
    let schema = a[1].clone();
    let mode = (matches!(f, Format::Json) || concrete, concrete);
    let Some(_nest) = super::Nesting::enter() else {
        return Err(Bottom::new(ErrCode::StructuralCycle, "structural cycle"));
    };
    if docs.is_empty() {
        // An empty YAML stream is one document, `*null | _`: null if the schema allows it,
        // else the schema itself (which `Validate` requires to be concrete).
        let null_ok = {
            let probe = rt.data_to_value(&Data::Null);
            validate_one(rt, probe, &schema, mode).is_ok()
        };
        if !null_ok {
            validate_one(rt, Value::Top, &schema, mode)?;
        }
        return Ok(Value::Bool(true));
    }
    for d in &docs {
        let dv = rt.data_to_value(d);
        validate_one(rt, dv, &schema, mode)?;
    }
    Ok(Value::Bool(true))
}

/// Unifies one decoded document with the schema and checks the result. An error is the
/// call's, not that of a field of the data.
fn validate_one(
    rt: &mut Runtime,
    dv: Value,
    schema: &Value,
    (required, concrete): (bool, bool),
) -> Result<(), Rc<Bottom>> {
    validate_doc(rt, dv, schema, required, concrete).map_err(|e| {
        Rc::new(Bottom {
            at: None,
            child: false,
            ..(*e).clone()
        })
    })
}

fn validate_doc(
    rt: &mut Runtime,
    dv: Value,
    schema: &Value,
    required: bool,
    concrete: bool,
) -> Result<(), Rc<Bottom>> {
    // The schema's own conjuncts, so that closedness and references apply to the data.
    let v = rt.unify_values(&[dv]);
    let conjs = match schema {
        Value::Vertex(w) if !rt.v(*w).conjuncts.is_empty() => rt.v(*w).conjuncts.clone(),
        other => {
            let u = rt.unify_values(std::slice::from_ref(other));
            rt.v(u).conjuncts.clone()
        }
    };
    // A definition closes the data, as a reference to it would.
    let closes = matches!(schema, Value::Vertex(w) if rt.v(*w).label.is_def());
    let conjs: Vec<_> = if closes {
        let g = rt.new_group(0, true, true, false, v);
        conjs
            .into_iter()
            .map(|mut c| {
                c.ci.group = g;
                c
            })
            .collect()
    } else {
        // A `close()`d schema closes the data: its group is made again for the data's
        // vertex, where the closedness of one level applies.
        let mut remap: Vec<(u32, u32)> = Vec::new();
        conjs
            .into_iter()
            .map(|mut c| {
                let g = c.ci.group;
                let grp = &rt.groups[g as usize];
                if g != 0 && grp.closed && !grp.recursive {
                    let ng = match remap.iter().find(|(o, _)| *o == g) {
                        Some(&(_, n)) => n,
                        None => {
                            let (parent, embedded) = (grp.parent, grp.embedded);
                            let n = rt.new_group(parent, true, false, embedded, v);
                            remap.push((g, n));
                            n
                        }
                    };
                    c.ci.group = ng;
                }
                c
            })
            .collect()
    };
    rt.vm(v).conjuncts.extend(conjs);
    if let Some(e) = rt.finalize(v, false) {
        return Err(e);
    }
    let w = rt.deref(v);
    if let Some(e) = rt.v(w).err.clone() {
        return Err(e);
    }
    // `json.Validate` and `yaml.Validate` check the result as final: a required field must
    // be there (`yaml.ValidatePartial` does not).
    if required && rt.missing_required(w, &mut Vec::new()) {
        return Err(Bottom::eval("field is required but not present"));
    }
    if concrete && let Err(e) = rt.value_to_data(&Value::Vertex(v)) {
        return Err(Rc::new(Bottom {
            code: ErrCode::Eval,
            ..(*e).clone()
        }));
    }
    Ok(())
}

/// Go's `json.Compact` (no layout) and `json.Indent` (with a prefix and an indent), on text
/// already known to be valid JSON: strings and numbers are kept as written.
fn reformat(s: &str, layout: Option<(&str, &str)>) -> String {
    let mut out = String::with_capacity(s.len());
    let mut depth = 0usize;
    let mut chars = s.chars().peekable();
    let newline = |out: &mut String, depth: usize| {
        if let Some((prefix, indent)) = layout {
            out.push('\n');
            out.push_str(prefix);
            for _ in 0..depth {
                out.push_str(indent);
            }
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                out.push(c);
                while let Some(d) = chars.next() {
                    out.push(d);
                    if d == '\\' {
                        if let Some(e) = chars.next() {
                            out.push(e);
                        }
                    } else if d == '"' {
                        break;
                    }
                }
            }
            ' ' | '\t' | '\n' | '\r' => {}
            '{' | '[' => {
                out.push(c);
                while chars.peek().is_some_and(|d| d.is_ascii_whitespace()) {
                    chars.next();
                }
                if matches!(chars.peek(), Some('}' | ']')) {
                    out.push(chars.next().unwrap_or(']'));
                } else {
                    depth += 1;
                    newline(&mut out, depth);
                }
            }
            '}' | ']' => {
                depth = depth.saturating_sub(1);
                newline(&mut out, depth);
                out.push(c);
            }
            ',' => {
                out.push(c);
                newline(&mut out, depth);
            }
            ':' => {
                out.push(c);
                if layout.is_some() {
                    out.push(' ');
                }
            }
            c => out.push(c),
        }
    }
    out
}

fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

fn check_encoding(v: &Value, pkg: &str) -> Result<(), Rc<Bottom>> {
    match v {
        Value::Null => Ok(()),
        other => Err(Bottom::eval(format!(
            "{pkg}: unsupported encoding: cannot use value {} (type {}) as null",
            match other {
                Value::Vertex(_) => "{}".to_string(),
                o => super::value_text_plain(o),
            },
            match other {
                Value::Vertex(_) => "struct".to_string(),
                o => o.kind().name(),
            }
        ))),
    }
}

/// Go's `base64.StdEncoding.DecodeString`: padding required, `\r` and `\n` skipped anywhere,
/// unused bits of the last symbol ignored; an error names the offset of the bad byte.
fn base64_decode(s: &[u8]) -> R {
    go_base64(s)
        .map_err(|at| Bottom::eval(format!("illegal base64 data at input byte {at}")))
        .and_then(bytes)
}

fn go_base64(src: &[u8]) -> Result<Vec<u8>, usize> {
    fn sym(c: u8) -> Option<u32> {
        Some(u32::from(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        }))
    }
    let skip_nl = |mut si: usize| {
        while si < src.len() && (src[si] == b'\n' || src[si] == b'\r') {
            si += 1;
        }
        si
    };
    let mut out = Vec::with_capacity(src.len() / 4 * 3);
    let mut si = 0;
    loop {
        let mut buf = [0u32; 4];
        let mut len = 4;
        let mut j = 0;
        let mut done = false;
        while j < 4 {
            if si == src.len() {
                if j == 0 {
                    return Ok(out);
                }
                return Err(si - j);
            }
            let c = src[si];
            si += 1;
            if let Some(v) = sym(c) {
                buf[j] = v;
                j += 1;
                continue;
            }
            if c == b'\n' || c == b'\r' {
                continue;
            }
            if c != b'=' || j < 2 {
                return Err(si - 1);
            }
            // Padding ends the input: `==` after two symbols, `=` after three.
            if j == 2 {
                si = skip_nl(si);
                if si == src.len() {
                    return Err(src.len());
                }
                if src[si] != b'=' {
                    return Err(si - 1);
                }
                si += 1;
            }
            si = skip_nl(si);
            if si < src.len() {
                return Err(si);
            }
            len = j;
            done = true;
            break;
        }
        let val = buf[0] << 18 | buf[1] << 12 | buf[2] << 6 | buf[3];
        let three = [(val >> 16) as u8, (val >> 8) as u8, val as u8];
        out.extend_from_slice(&three[..len - 1]);
        if done {
            return Ok(out);
        }
    }
}

fn hex_encode(b: &[u8]) -> String {
    const D: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(b.len() * 2);
    for &x in b {
        s.push(D[(x >> 4) as usize] as char);
        s.push(D[(x & 15) as usize] as char);
    }
    s
}

fn hex_val(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// Go's `%#U` of a byte: `U+006F 'o'`.
fn go_byte_u(c: u8) -> String {
    let ch = c as char;
    if ch.is_ascii_graphic() || ch == ' ' {
        format!("U+{:04X} '{}'", c, ch)
    } else {
        format!("U+{:04X}", c)
    }
}

fn hex_decode(s: &[u8]) -> Result<Vec<u8>, Rc<Bottom>> {
    let mut out = Vec::with_capacity(s.len() / 2);
    let mut i = 1;
    while i < s.len() {
        let (p, q) = (s[i - 1], s[i]);
        let Some(a) = hex_val(p) else {
            return Err(Bottom::eval(format!(
                "encoding/hex: invalid byte: {}",
                go_byte_u(p)
            )));
        };
        let Some(b) = hex_val(q) else {
            return Err(Bottom::eval(format!(
                "encoding/hex: invalid byte: {}",
                go_byte_u(q)
            )));
        };
        out.push(a << 4 | b);
        i += 2;
    }
    if s.len() % 2 == 1 {
        let last = s[s.len() - 1];
        if hex_val(last).is_none() {
            return Err(Bottom::eval(format!(
                "encoding/hex: invalid byte: {}",
                go_byte_u(last)
            )));
        }
        return Err(Bottom::eval("encoding/hex: odd length hex string"));
    }
    Ok(out)
}

/// Go's `hex.Dump`.
fn hex_dump(b: &[u8]) -> String {
    let mut out = String::new();
    for (line, chunk) in b.chunks(16).enumerate() {
        out.push_str(&format!("{:08x}  ", line * 16));
        for i in 0..16 {
            match chunk.get(i) {
                Some(x) => out.push_str(&format!("{x:02x} ")),
                None => out.push_str("   "),
            }
            if i == 7 {
                out.push(' ');
            }
        }
        out.push_str(" |");
        for &x in chunk {
            out.push(if (32..=126).contains(&x) {
                x as char
            } else {
                '.'
            });
        }
        out.push_str("|\n");
    }
    out
}

/// Whether Go's csv writer quotes a field.
fn csv_needs_quotes(f: &str) -> bool {
    if f.is_empty() {
        return false;
    }
    if f == "\\." {
        return true;
    }
    if f.contains([',', '"', '\r', '\n']) {
        return true;
    }
    f.chars().next().is_some_and(super::strings::is_space)
}

fn csv_encode(rt: &mut Runtime, a: &[Value]) -> R {
    let rows = rt.list_values(&a[0], "csv.Encode")?;
    let mut out = String::new();
    for row in rows {
        let cells = rt.list_values(&row, "csv.Encode")?;
        for (i, c) in cells.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            // A string is written as is; any other value as its JSON text, as CUE's
            // `Value.MarshalJSON` gives it (bytes become a quoted base64 string).
            let text = match rt.value_to_data(c)? {
                Data::String(s) => s,
                d => crate::encode::to_json_compact(&d),
            };
            if csv_needs_quotes(&text) {
                out.push('"');
                for ch in text.chars() {
                    match ch {
                        '"' => out.push_str("\"\""),
                        c => out.push(c),
                    }
                }
                out.push('"');
            } else {
                out.push_str(&text);
            }
        }
        out.push('\n');
        if out.len() > 1 << 30 {
            return Err(Bottom::eval("csv: output too large"));
        }
    }
    string(out)
}

/// Go's `encoding/csv` `Reader.ReadAll` with its defaults: quoted fields with `""` escapes,
/// `\r\n` line ends read as `\n` (a lone `\r` is data), empty lines skipped, and every record
/// with as many fields as the first (`FieldsPerRecord` 0).
fn csv_decode(rt: &mut Runtime, a: &[Value]) -> R {
    let b = a_bytes(a, 0)?;
    let s = String::from_utf8_lossy(&b);
    let records = csv_read_all(&s).map_err(Bottom::eval)?;
    let vals = records
        .into_iter()
        .map(|r| {
            let cells = r.into_iter().map(|c| Value::Str(Rc::from(c))).collect();
            rt.make_list_values(cells)
        })
        .collect();
    Ok(rt.make_list_values(vals))
}

/// The lines of a CSV text as Go's reader sees them: each with its `\n` (a `\r\n` end becomes
/// `\n`), the last one without, and a `\r` ending the input dropped.
struct CsvLines<'a> {
    rest: &'a str,
    line: usize,
}

impl<'a> CsvLines<'a> {
    /// The next line, or `None` at the end of the input.
    fn next_line(&mut self) -> Option<std::borrow::Cow<'a, str>> {
        if self.rest.is_empty() {
            return None;
        }
        let (mut line, rest) = match self.rest.find('\n') {
            Some(i) => self.rest.split_at(i + 1),
            None => (self.rest, ""),
        };
        self.rest = rest;
        self.line += 1;
        if !line.ends_with('\n') {
            line = line.strip_suffix('\r').unwrap_or(line);
        }
        Some(match line.strip_suffix("\r\n") {
            Some(l) => std::borrow::Cow::Owned(format!("{l}\n")),
            None => std::borrow::Cow::Borrowed(line),
        })
    }
}

fn csv_read_all(s: &str) -> Result<Vec<Vec<String>>, String> {
    const BARE: &str = "bare \" in non-quoted-field";
    const QUOTE: &str = "extraneous or missing \" in quoted-field";
    let parse_err = |start: usize, line: usize, col: usize, what: &str| {
        if start == line {
            format!("parse error on line {line}, column {col}: {what}")
        } else {
            format!("record on line {start}; parse error on line {line}, column {col}: {what}")
        }
    };
    let nl_len = |l: &str| usize::from(l.ends_with('\n'));
    let mut lines = CsvLines { rest: s, line: 0 };
    let mut records = Vec::new();
    let mut per_record: Option<usize> = None;
    loop {
        // Skip empty lines.
        let mut line = loop {
            match lines.next_line() {
                None => return Ok(records),
                Some(l) if l.len() == nl_len(&l) => continue,
                Some(l) => break l.into_owned(),
            }
        };
        let rec_line = lines.line;
        let mut pos_line = lines.line;
        let mut col = 1usize;
        let mut fields: Vec<String> = Vec::new();
        'field: loop {
            if !line.starts_with('"') {
                let (field, more) = match line.find(',') {
                    Some(i) => (&line[..i], Some(i)),
                    None => (&line[..line.len() - nl_len(&line)], None),
                };
                if let Some(j) = field.find('"') {
                    return Err(parse_err(rec_line, lines.line, col + j, BARE));
                }
                fields.push(field.to_string());
                match more {
                    Some(i) => {
                        line = line[i + 1..].to_string();
                        col += i + 1;
                    }
                    None => break 'field,
                }
            } else {
                let mut field = String::new();
                line = line[1..].to_string();
                col += 1;
                loop {
                    if let Some(i) = line.find('"') {
                        field.push_str(&line[..i]);
                        line = line[i + 1..].to_string();
                        col += i + 1;
                        if line.starts_with('"') {
                            field.push('"');
                            line = line[1..].to_string();
                            col += 1;
                        } else if line.starts_with(',') {
                            line = line[1..].to_string();
                            col += 1;
                            fields.push(field);
                            continue 'field;
                        } else if line.len() == nl_len(&line) {
                            fields.push(field);
                            break 'field;
                        } else {
                            return Err(parse_err(rec_line, lines.line, col - 1, QUOTE));
                        }
                    } else if !line.is_empty() {
                        field.push_str(&line);
                        col += line.len();
                        match lines.next_line() {
                            Some(l) if !l.is_empty() => {
                                line = l.into_owned();
                                pos_line += 1;
                                col = 1;
                            }
                            _ => line = String::new(),
                        }
                    } else {
                        return Err(parse_err(rec_line, pos_line, col, QUOTE));
                    }
                }
            }
        }
        match per_record {
            None => per_record = Some(fields.len()),
            Some(n) if n != fields.len() => {
                return Err(format!("record on line {rec_line}: wrong number of fields"));
            }
            _ => {}
        }
        records.push(fields);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_layout() {
        assert_eq!(reformat("[1, 2]", None), "[1,2]");
        assert_eq!(
            reformat(r#"{"a": 1, "b": [], "c": "x y"}"#, Some(("", "  "))),
            "{\n  \"a\": 1,\n  \"b\": [],\n  \"c\": \"x y\"\n}"
        );
    }

    #[test]
    fn json_stream_split() {
        assert_eq!(
            split_json_stream(r#"{"a": 1}{"b": 2} 3 "x""#),
            [r#"{"a": 1}"#, r#"{"b": 2}"#, "3", r#""x""#]
        );
    }

    #[test]
    fn hex_like_go() {
        assert_eq!(hex_encode(b"foo"), "666f6f");
        assert_eq!(
            hex_decode(b"foo").unwrap_err().msg,
            "encoding/hex: invalid byte: U+006F 'o'"
        );
        assert_eq!(
            hex_dump(b"foo"),
            "00000000  66 6f 6f                                          |foo|\n"
        );
    }

    /// The messages are those of `cue export` of v0.17.1 (`error in call to
    /// encoding/csv.Decode: ...`), from Go's `encoding/csv`.
    #[test]
    fn csv_decode_errors() {
        let err = |s: &str| csv_read_all(s).unwrap_err();
        assert_eq!(err("a,b\nc"), "record on line 2: wrong number of fields");
        assert_eq!(
            err("a,b\nc,d,e"),
            "record on line 2: wrong number of fields"
        );
        assert_eq!(
            err("a,\"b\nc\"d"),
            "record on line 1; parse error on line 2, column 2: extraneous or missing \" in quoted-field"
        );
        assert_eq!(
            err("a\"b,c"),
            "parse error on line 1, column 2: bare \" in non-quoted-field"
        );
        assert_eq!(
            err("\"a\"b\",c"),
            "parse error on line 1, column 3: extraneous or missing \" in quoted-field"
        );
        assert_eq!(
            err("x\n\"a"),
            "parse error on line 2, column 3: extraneous or missing \" in quoted-field"
        );
        assert_eq!(
            err("a, \"b\"\n"),
            "parse error on line 1, column 4: bare \" in non-quoted-field"
        );
        assert_eq!(
            csv_read_all("a\r\rb").unwrap(),
            vec![vec!["a\r\rb".to_string()]]
        );
    }

    /// `cue export` of v0.17.1: `illegal base64 data at input byte N` (Go's
    /// `base64.StdEncoding`).
    #[test]
    fn base64_like_go() {
        assert_eq!(go_base64(b"aGl="), Ok(b"hi".to_vec()));
        assert_eq!(go_base64(b"aG\nk="), Ok(b"hi".to_vec()));
        assert_eq!(go_base64(b""), Ok(vec![]));
        assert_eq!(go_base64(b"aGk"), Err(0));
        assert_eq!(go_base64(b"a"), Err(0));
        assert_eq!(go_base64(b"===="), Err(0));
        assert_eq!(go_base64(b"aGk=aGk="), Err(4));
        assert_eq!(go_base64(b"aGk*"), Err(3));
        assert_eq!(go_base64(b"aG=="), Ok(b"h".to_vec()));
        assert_eq!(go_base64(b"aG="), Err(3));
    }

    #[test]
    fn csv_quoting() {
        assert!(csv_needs_quotes("a,b"));
        assert!(csv_needs_quotes(" a"));
        assert!(!csv_needs_quotes("ab"));
    }
}
