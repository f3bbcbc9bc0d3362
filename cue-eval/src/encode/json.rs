//! JSON output: `cue export --out json`, `json.Marshal` and `json.MarshalStream`.
//!
//! CUE's `Value.MarshalJSON` writes compact JSON with Go's string escaping and HTML escaping
//! off. `cue export` passes that through a Go `json.Encoder` with `SetIndent("", "    ")` (so
//! `json.Indent` layout: one element per line, `": "` after keys, `{}` and `[]` kept compact)
//! and `SetEscapeHTML(--escape)`, and ends the value with a newline.

use super::{Data, push_base64};

const INDENT: &str = "    ";

/// What `cue export --out json` prints for `d`: four-space indentation, a newline at the end,
/// and `&`, `<`, `>` escaped as `\u0026`, `\u003c`, `\u003e` only when `escape_html` is set
/// (`cue export --escape`).
pub fn to_json_indent(d: &Data, escape_html: bool) -> String {
    let mut out = String::new();
    write_indented(&mut out, d, 0, escape_html);
    out.push('\n');
    out
}

/// What the builtin `json.Marshal` returns for `d`: compact JSON on one line, no trailing
/// newline, HTML escaping off.
pub fn to_json_compact(d: &Data) -> String {
    let mut out = String::new();
    write_compact(&mut out, d);
    out
}

/// What the builtin `json.MarshalStream` returns: each value in compact JSON followed by a
/// newline.
pub fn to_json_stream_compact(docs: &[Data]) -> String {
    let mut out = String::new();
    for d in docs {
        write_compact(&mut out, d);
        out.push('\n');
    }
    out
}

fn write_compact(out: &mut String, d: &Data) {
    match d {
        Data::List(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_compact(out, item);
            }
            out.push(']');
        }
        Data::Struct(fields) => {
            out.push('{');
            for (i, f) in fields.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(out, &f.name, false);
                out.push(':');
                write_compact(out, &f.value);
            }
            out.push('}');
        }
        scalar => write_scalar(out, scalar, false),
    }
}

fn write_indented(out: &mut String, d: &Data, depth: usize, escape_html: bool) {
    match d {
        Data::List(items) if !items.is_empty() => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(out, depth + 1);
                write_indented(out, item, depth + 1, escape_html);
            }
            newline(out, depth);
            out.push(']');
        }
        Data::Struct(fields) if !fields.is_empty() => {
            out.push('{');
            for (i, f) in fields.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(out, depth + 1);
                write_string(out, &f.name, escape_html);
                out.push_str(": ");
                write_indented(out, &f.value, depth + 1, escape_html);
            }
            newline(out, depth);
            out.push('}');
        }
        Data::List(_) => out.push_str("[]"),
        Data::Struct(_) => out.push_str("{}"),
        scalar => write_scalar(out, scalar, escape_html),
    }
}

fn newline(out: &mut String, depth: usize) {
    out.push('\n');
    for _ in 0..depth {
        out.push_str(INDENT);
    }
}

fn write_scalar(out: &mut String, d: &Data, escape_html: bool) {
    match d {
        Data::Null => out.push_str("null"),
        Data::Bool(true) => out.push_str("true"),
        Data::Bool(false) => out.push_str("false"),
        Data::Number { text, .. } => out.push_str(text),
        Data::String(s) => write_string(out, s, escape_html),
        Data::Bytes(b) => {
            out.push('"');
            push_base64(out, b);
            out.push('"');
        }
        Data::List(_) | Data::Struct(_) => unreachable!("collections are written by the callers"),
    }
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Writes `s` as a JSON string the way Go's `encoding/json` does: `"` and `\` and the
/// control characters `\b \f \n \r \t` get short escapes, other control characters
/// `\u00xx` (lower-case hex), U+2028 and U+2029 `\u2028`/`\u2029`, and with `escape_html`
/// also `&`, `<` and `>`. Everything else, non-ASCII included, is copied.
fn write_string(out: &mut String, s: &str, escape_html: bool) {
    out.reserve(s.len() + 2);
    out.push('"');
    let bytes = s.as_bytes();
    let mut start = 0;
    for (i, c) in s.char_indices() {
        let escape: Option<&str> = match c {
            '"' => Some("\\\""),
            '\\' => Some("\\\\"),
            '\u{8}' => Some("\\b"),
            '\u{c}' => Some("\\f"),
            '\n' => Some("\\n"),
            '\r' => Some("\\r"),
            '\t' => Some("\\t"),
            '\u{2028}' => Some("\\u2028"),
            '\u{2029}' => Some("\\u2029"),
            '&' if escape_html => Some("\\u0026"),
            '<' if escape_html => Some("\\u003c"),
            '>' if escape_html => Some("\\u003e"),
            c if (c as u32) < 0x20 => None,
            _ => continue,
        };
        out.push_str(&s[start..i]);
        match escape {
            Some(e) => out.push_str(e),
            None => {
                let b = bytes[i];
                out.push_str("\\u00");
                out.push(char::from(HEX[usize::from(b >> 4)]));
                out.push(char::from(HEX[usize::from(b & 0xf)]));
            }
        }
        start = i + c.len_utf8();
    }
    out.push_str(&s[start..]);
    out.push('"');
}
