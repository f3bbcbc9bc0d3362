//! The `encoding/toml` package. `Marshal` writes TOML as CUE v0.17.1 does, which hands a Go
//! map to `go-toml/v2`'s encoder: keys sorted, a table's plain values before its sub-tables,
//! a blank line between tables, lists of structs as `[[array tables]]`, strings and keys as
//! literal `'...'` strings unless they need basic quoting. `Unmarshal` parses with the `toml`
//! crate (document order kept) and maps its errors onto go-toml's texts where CUE's corpus
//! shows them (`duplicate key: foo`, `invalid character at start of key: =`).

use std::rc::Rc;

use super::k::*;
use super::{StdMember, a_str, func, string};
use crate::encode::{Data, Field};
use crate::eval::value::Bottom;

pub(super) static MEMBERS: &[StdMember] = &[
    func("encoding/toml.Marshal", &[T], |rt, a| {
        let d = rt.value_to_data(&a[0])?;
        string(marshal(&d)?)
    }),
    func("encoding/toml.Unmarshal", &[B], |rt, a| {
        let d = unmarshal(&a_str(a, 0)?).map_err(Bottom::eval)?;
        Ok(rt.data_to_value(&d))
    }),
];

/// TOML text of a struct value.
pub(super) fn marshal(d: &Data) -> Result<String, Rc<Bottom>> {
    let Data::Struct(fields) = d else {
        return Err(Bottom::eval(format!(
            "toml: cannot encode {} at the top level, only a struct",
            d.kind_name()
        )));
    };
    let mut out = String::new();
    let mut path = Vec::new();
    table(&mut out, &mut path, fields, false)?;
    Ok(out)
}

/// Whether a value is written as a `[table]` or `[[array table]]` rather than `key = value`.
fn is_table(d: &Data) -> bool {
    match d {
        Data::Struct(_) => true,
        Data::List(items) => {
            !items.is_empty() && items.iter().all(|x| matches!(x, Data::Struct(_)))
        }
        _ => false,
    }
}

fn table(
    out: &mut String,
    path: &mut Vec<String>,
    fields: &[Field],
    header: bool,
) -> Result<(), Rc<Bottom>> {
    if header {
        out.push('[');
        out.push_str(&dotted(path));
        out.push_str("]\n");
    }
    let mut sorted: Vec<&Field> = fields.iter().collect();
    sorted.sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
    let (tables, kvs): (Vec<&Field>, Vec<&Field>) =
        sorted.into_iter().partition(|f| is_table(&f.value));
    for f in &kvs {
        out.push_str(&key(&f.name));
        out.push_str(" = ");
        inline(out, &f.value)?;
        out.push('\n');
    }
    for (i, f) in tables.iter().enumerate() {
        if i > 0 || !kvs.is_empty() {
            out.push('\n');
        }
        path.push(f.name.clone());
        match &f.value {
            Data::Struct(sub) => table(out, path, sub, true)?,
            Data::List(items) => {
                let head = format!("[[{}]]\n", dotted(path));
                for (j, it) in items.iter().enumerate() {
                    if j > 0 {
                        out.push('\n');
                    }
                    out.push_str(&head);
                    if let Data::Struct(sub) = it {
                        table(out, path, sub, false)?;
                    }
                }
            }
            _ => {}
        }
        path.pop();
    }
    Ok(())
}

fn dotted(path: &[String]) -> String {
    path.iter().map(|k| key(k)).collect::<Vec<_>>().join(".")
}

/// A value after `key = `: scalars, inline arrays and inline tables.
fn inline(out: &mut String, d: &Data) -> Result<(), Rc<Bottom>> {
    match d {
        Data::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Data::Number { text, float } => out.push_str(&number(text, *float)?),
        Data::String(s) => out.push_str(&string_text(s)),
        Data::List(items) => {
            out.push('[');
            for (i, x) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                inline(out, x)?;
            }
            out.push(']');
        }
        Data::Struct(fields) => {
            let mut sorted: Vec<&Field> = fields.iter().collect();
            sorted.sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
            out.push('{');
            for (i, f) in sorted.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&key(&f.name));
                out.push_str(" = ");
                inline(out, &f.value)?;
            }
            out.push('}');
        }
        Data::Null | Data::Bytes(_) => {
            return Err(Bottom::eval(format!(
                "toml: cannot encode a value of type {}",
                d.kind_name()
            )));
        }
    }
    Ok(())
}

/// An int as Go's `int64`, a float as go-toml prints a `float64` (`1.0`, `0.25`, `inf`).
fn number(text: &str, float: bool) -> Result<String, Rc<Bottom>> {
    if !float {
        return text.parse::<i64>().map(|i| i.to_string()).map_err(|_| {
            Bottom::eval(format!(
                "cannot use value {text} (type int) as int64: value out of range"
            ))
        });
    }
    let f: f64 = text
        .parse()
        .map_err(|_| Bottom::eval(format!("invalid float {text}")))?;
    Ok(if f.is_nan() {
        "nan".into()
    } else if f.is_infinite() {
        if f > 0.0 { "inf".into() } else { "-inf".into() }
    } else if f.trunc() == f {
        format!("{f:.1}")
    } else {
        format!("{f}")
    })
}

/// Characters that keep a string out of a literal `'...'` string.
fn needs_quoting(s: &str) -> bool {
    s.bytes()
        .any(|b| b == b'\'' || b == b'\r' || b == b'\n' || (b < 0x20 && b != b'\t') || b == 0x7f)
}

fn string_text(s: &str) -> String {
    if needs_quoting(s) {
        basic(s)
    } else {
        format!("'{s}'")
    }
}

/// A basic `"..."` string with go-toml's escapes.
fn basic(s: &str) -> String {
    let mut o = String::from("\"");
    for c in s.chars() {
        match c {
            '\\' => o.push_str("\\\\"),
            '"' => o.push_str("\\\""),
            '\u{8}' => o.push_str("\\b"),
            '\u{c}' => o.push_str("\\f"),
            '\n' => o.push_str("\\n"),
            '\r' => o.push_str("\\r"),
            '\t' => o.push_str("\\t"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                o.push_str(&format!("\\u00{:02X}", c as u32));
            }
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

/// A key: bare when it can be, else a literal or basic string.
fn key(k: &str) -> String {
    if k.is_empty() {
        return "''".into();
    }
    if k.bytes()
        .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_')
    {
        return k.to_string();
    }
    string_text(k)
}

/// Parses TOML text into data, in document order.
pub(super) fn unmarshal(s: &str) -> Result<Data, String> {
    let t: toml::Table = s.parse().map_err(|e: toml::de::Error| error_text(s, &e))?;
    Ok(table_data(&t))
}

fn table_data(t: &toml::Table) -> Data {
    Data::Struct(
        t.iter()
            .map(|(k, v)| Field {
                name: k.clone(),
                value: value_data(v),
                yaml_tag: None,
            })
            .collect(),
    )
}

fn value_data(v: &toml::Value) -> Data {
    match v {
        toml::Value::String(s) => Data::String(s.clone()),
        toml::Value::Integer(i) => Data::int(i.to_string()),
        toml::Value::Float(f) => {
            let text = if f.is_finite() && f.trunc() == *f && f.abs() < 1e21 {
                format!("{f:.1}")
            } else {
                format!("{f:?}")
            };
            Data::Number { text, float: true }
        }
        toml::Value::Boolean(b) => Data::Bool(*b),
        toml::Value::Datetime(d) => Data::String(d.to_string()),
        toml::Value::Array(items) => Data::List(items.iter().map(value_data).collect()),
        toml::Value::Table(t) => table_data(t),
    }
}

/// go-toml's text for the errors CUE's tests show, the `toml` crate's message otherwise.
fn error_text(src: &str, e: &toml::de::Error) -> String {
    let msg = e.message().trim();
    if msg.starts_with("duplicate key")
        && let Some(name) = e.span().and_then(|sp| src.get(sp))
    {
        let name = name.trim().trim_matches(|c| c == '"' || c == '\'');
        return format!("duplicate key: {name}");
    }
    if let Some(span) = e.span() {
        let line_start = src[..span.start.min(src.len())]
            .rfind('\n')
            .map_or(0, |i| i + 1);
        let line = src[line_start..].lines().next().unwrap_or("").trim_start();
        if let Some(c) = line.chars().next()
            && !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '"' | '\'' | '[' | '#'))
            && span.start
                <= line_start + (src[line_start..].len() - src[line_start..].trim_start().len())
        {
            return format!("invalid character at start of key: {c}");
        }
    }
    msg.lines().next().unwrap_or(msg).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(name: &str, value: Data) -> Field {
        Field {
            name: name.into(),
            value,
            yaml_tag: None,
        }
    }

    #[test]
    fn marshal_layout() {
        let d = Data::Struct(vec![
            s("z", Data::Struct(vec![s("k", Data::string("v"))])),
            s(
                "a",
                Data::List(vec![
                    Data::int("1"),
                    Data::Number {
                        text: "2.0".into(),
                        float: true,
                    },
                ]),
            ),
            s("q", Data::string("it's")),
            s("e", Data::Struct(vec![])),
        ]);
        assert_eq!(
            marshal(&d).unwrap(),
            "a = [1, 2.0]\nq = \"it's\"\n\n[e]\n\n[z]\nk = 'v'\n"
        );
    }

    #[test]
    fn unmarshal_errors() {
        assert_eq!(
            unmarshal("foo = 1\nfoo = 2\n").unwrap_err(),
            "duplicate key: foo"
        );
        assert_eq!(
            unmarshal("= \"no key name\"").unwrap_err(),
            "invalid character at start of key: ="
        );
    }
}
