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
        string(reformat(&s, Some((&prefix, &indent))))
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
    func("encoding/base64.Decode", &[T, B], |_, a| {
        check_encoding(&a[0], "base64")?;
        let s = a_bytes(a, 1)?;
        base64_decode(&s)
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
        return Err(Bottom::eval(format!("json: {}", e.msg)));
    }
    Ok(s)
}

fn json_unmarshal(rt: &mut Runtime, a: &[Value]) -> R {
    let b = a_bytes(a, 0)?;
    let s = std::str::from_utf8(&b).map_err(|_| Bottom::eval("json: invalid JSON"))?;
    if crate::decode::json_valid(s).is_err() {
        return Err(Bottom::eval("json: invalid JSON"));
    }
    let d = crate::decode::json(s).map_err(|e| Bottom::eval(format!("json: {}", e.msg)))?;
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
        let d = crate::decode::json(part).map_err(|e| Bottom::eval(format!("json: {}", e.msg)))?;
        vals.push(rt.data_to_value(&d));
    }
    Ok(rt.make_list_values(vals))
}

fn yaml_docs(a: &[Value]) -> Result<Vec<Data>, Rc<Bottom>> {
    let b = a_bytes(a, 0)?;
    let s = std::str::from_utf8(&b).map_err(|_| Bottom::eval("yaml: invalid UTF-8"))?;
    crate::decode::yaml(s).map_err(|e| {
        Bottom::eval(if e.line > 0 {
            format!(":{}: {}", e.line, e.msg)
        } else {
            e.msg
        })
    })
}

fn yaml_unmarshal(rt: &mut Runtime, a: &[Value]) -> R {
    let docs = match yaml_docs(a) {
        Ok(d) => d,
        Err(e) => {
            return Err(Bottom::eval(format!(
                "expected a single YAML document: {}",
                e.msg
            )));
        }
    };
    match docs.len() {
        0 => Ok(Value::Null),
        1 => Ok(rt.data_to_value(&docs[0])),
        _ => Err(Bottom::eval("expected a single YAML document")),
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
    let Some(_nest) = super::Nesting::enter() else {
        return Err(Bottom::new(ErrCode::StructuralCycle, "structural cycle"));
    };
    for d in &docs {
        let dv = rt.data_to_value(d);
        // The schema's own conjuncts, so that closedness and references apply to the data.
        let v = rt.unify_values(&[dv]);
        let conjs = match &schema {
            Value::Vertex(w) if !rt.v(*w).conjuncts.is_empty() => rt.v(*w).conjuncts.clone(),
            other => {
                let u = rt.unify_values(std::slice::from_ref(other));
                rt.v(u).conjuncts.clone()
            }
        };
        // A definition closes the data, as a reference to it would.
        let closes = matches!(&schema, Value::Vertex(w) if rt.v(*w).label.is_def());
        let conjs = if closes {
            let g = rt.new_group(0, true, true, false, v);
            conjs
                .into_iter()
                .map(|mut c| {
                    c.ci.group = g;
                    c
                })
                .collect()
        } else {
            conjs
        };
        rt.vm(v).conjuncts.extend(conjs);
        if let Some(e) = rt.finalize(v, false) {
            return Err(e);
        }
        let w = rt.deref(v);
        if let Some(e) = rt.v(w).err.clone() {
            return Err(e);
        }
        if concrete && let Err(e) = rt.value_to_data(&Value::Vertex(v)) {
            return Err(Rc::new(Bottom {
                code: ErrCode::Eval,
                ..(*e).clone()
            }));
        }
    }
    Ok(Value::Bool(true))
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

/// Go's `base64.StdEncoding.DecodeString`, which skips `\r` and `\n` anywhere in the input; an
/// error names the offset of the bad byte in the input as given.
fn base64_decode(s: &[u8]) -> R {
    use base64::DecodeError as E;
    let kept: Vec<usize> = (0..s.len())
        .filter(|&i| s[i] != b'\r' && s[i] != b'\n')
        .collect();
    let text: Vec<u8> = kept.iter().map(|&i| s[i]).collect();
    match base64::engine::general_purpose::STANDARD.decode(&text) {
        Ok(b) => bytes(b),
        Err(e) => {
            let at = match e {
                E::InvalidByte(off, _) => off,
                _ => text.len() / 4 * 4,
            };
            let at = kept.get(at).copied().unwrap_or(s.len());
            Err(Bottom::eval(format!(
                "illegal base64 data at input byte {at}"
            )))
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
            let text = match c {
                Value::Str(s) => s.to_string(),
                Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
                Value::Num(n, _) => n.to_g_string(),
                Value::Bool(b) => b.to_string(),
                Value::Null => String::new(),
                other => {
                    return Err(Bottom::eval(format!(
                        "unsupported type {}",
                        rt.value_text(other)
                    )));
                }
            };
            if csv_needs_quotes(&text) {
                out.push('"');
                for ch in text.chars() {
                    match ch {
                        '"' => out.push_str("\"\""),
                        '\r' => {}
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

/// Go's `encoding/csv` reader with `FieldsPerRecord = -1`: quoted fields, `""` escapes, CRLF
/// line ends, empty lines skipped.
fn csv_decode(rt: &mut Runtime, a: &[Value]) -> R {
    let b = a_bytes(a, 0)?;
    let s = String::from_utf8_lossy(&b).replace("\r\n", "\n");
    let mut records: Vec<Vec<String>> = Vec::new();
    let mut chars = s.chars().peekable();
    let mut line = 1usize;
    while chars.peek().is_some() {
        if chars.peek() == Some(&'\n') {
            chars.next();
            line += 1;
            continue;
        }
        let mut rec = Vec::new();
        loop {
            let mut field = String::new();
            if chars.peek() == Some(&'"') {
                chars.next();
                loop {
                    match chars.next() {
                        Some('"') => {
                            if chars.peek() == Some(&'"') {
                                chars.next();
                                field.push('"');
                            } else {
                                break;
                            }
                        }
                        Some(c) => {
                            if c == '\n' {
                                line += 1;
                            }
                            field.push(c);
                        }
                        None => {
                            return Err(Bottom::eval(format!(
                                "parse error on line {line}, column 0: extraneous or missing \" in quoted-field"
                            )));
                        }
                    }
                }
                if !matches!(chars.peek(), None | Some(',') | Some('\n')) {
                    return Err(Bottom::eval(format!(
                        "parse error on line {line}, column 0: extraneous or missing \" in quoted-field"
                    )));
                }
            } else {
                while let Some(&c) = chars.peek() {
                    if c == ',' || c == '\n' {
                        break;
                    }
                    if c == '"' {
                        return Err(Bottom::eval(format!(
                            "parse error on line {line}, column 0: bare \" in non-quoted-field"
                        )));
                    }
                    field.push(c);
                    chars.next();
                }
            }
            rec.push(field);
            match chars.next() {
                Some(',') => continue,
                Some('\n') => {
                    line += 1;
                    break;
                }
                _ => break,
            }
        }
        records.push(rec);
    }
    let vals = records
        .into_iter()
        .map(|r| {
            let cells = r.into_iter().map(|c| Value::Str(Rc::from(c))).collect();
            rt.make_list_values(cells)
        })
        .collect();
    Ok(rt.make_list_values(vals))
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

    #[test]
    fn csv_quoting() {
        assert!(csv_needs_quotes("a,b"));
        assert!(csv_needs_quotes(" a"));
        assert!(!csv_needs_quotes("ab"));
    }
}
