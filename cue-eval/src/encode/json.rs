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
    write_indented(&mut out, d, 0, escape_html, &mut |_| {});
    out.push('\n');
    out
}

/// Writes what [`to_json_indent`] returns to `w`, a piece at a time, so that a large document
/// is never held as one text.
pub fn write_json_indent<W: std::io::Write>(
    w: &mut W,
    d: &Data,
    escape_html: bool,
) -> std::io::Result<()> {
    const PIECE: usize = 1 << 16;
    let mut out = String::with_capacity(PIECE + 1024);
    let mut failed = None;
    write_indented(&mut out, d, 0, escape_html, &mut |out: &mut String| {
        if out.len() >= PIECE && failed.is_none() {
            failed = w.write_all(out.as_bytes()).err();
            out.clear();
        }
    });
    if let Some(e) = failed {
        return Err(e);
    }
    out.push('\n');
    w.write_all(out.as_bytes())
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

/// `flush` is offered the text written so far after each element (see [`write_json_indent`]).
fn write_indented(
    out: &mut String,
    d: &Data,
    depth: usize,
    escape_html: bool,
    flush: &mut dyn FnMut(&mut String),
) {
    match d {
        Data::List(items) if !items.is_empty() => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(out, depth + 1);
                write_indented(out, item, depth + 1, escape_html, flush);
                flush(out);
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
                write_indented(out, &f.value, depth + 1, escape_html, flush);
                flush(out);
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
    /// Enough indentation for most depths in one copy.
    const SPACES: &str = "\n                                                                ";
    let want = 1 + depth * INDENT.len();
    if want <= SPACES.len() {
        out.push_str(&SPACES[..want]);
    } else {
        out.push('\n');
        for _ in 0..depth {
            out.push_str(INDENT);
        }
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
    let mut i = 0;
    // Byte by byte: every character that needs an escape starts with an ASCII byte, or with
    // 0xE2 for U+2028 and U+2029; other bytes are copied in runs.
    while i < bytes.len() {
        let b = bytes[i];
        if !NEEDS_CHECK[usize::from(b)] {
            i += 1;
            continue;
        }
        let (escape, len): (Option<&str>, usize) = match b {
            b'"' => (Some("\\\""), 1),
            b'\\' => (Some("\\\\"), 1),
            0x08 => (Some("\\b"), 1),
            0x0c => (Some("\\f"), 1),
            b'\n' => (Some("\\n"), 1),
            b'\r' => (Some("\\r"), 1),
            b'\t' => (Some("\\t"), 1),
            b'&' if escape_html => (Some("\\u0026"), 1),
            b'<' if escape_html => (Some("\\u003c"), 1),
            b'>' if escape_html => (Some("\\u003e"), 1),
            0xE2 if bytes.get(i + 1) == Some(&0x80) && bytes.get(i + 2) == Some(&0xA8) => {
                (Some("\\u2028"), 3)
            }
            0xE2 if bytes.get(i + 1) == Some(&0x80) && bytes.get(i + 2) == Some(&0xA9) => {
                (Some("\\u2029"), 3)
            }
            c if c < 0x20 => (None, 1),
            _ => {
                i += 1;
                continue;
            }
        };
        out.push_str(&s[start..i]);
        match escape {
            Some(e) => out.push_str(e),
            None => {
                out.push_str("\\u00");
                out.push(char::from(HEX[usize::from(b >> 4)]));
                out.push(char::from(HEX[usize::from(b & 0xf)]));
            }
        }
        i += len;
        start = i;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

/// The bytes that may start a character `write_string` escapes.
const NEEDS_CHECK: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 0x20 {
        t[b] = true;
        b += 1;
    }
    t[b'"' as usize] = true;
    t[b'\\' as usize] = true;
    t[b'&' as usize] = true;
    t[b'<' as usize] = true;
    t[b'>' as usize] = true;
    t[0xE2] = true;
    t
};

#[cfg(test)]
mod tests {
    use super::write_string;

    fn quoted(s: &str, escape_html: bool) -> String {
        let mut out = String::new();
        write_string(&mut out, s, escape_html);
        out
    }

    // Expected texts as Go's `encoding/json` writes them (the escapes `json.Encoder` uses, with
    // `SetEscapeHTML` off and on).
    #[test]
    fn strings_are_escaped_as_go_escapes_them() {
        assert_eq!(quoted("plain", false), r#""plain""#);
        assert_eq!(quoted("a\"b\\c", false), r#""a\"b\\c""#);
        assert_eq!(quoted("\u{8}\u{c}\n\r\t", false), r#""\b\f\n\r\t""#);
        assert_eq!(
            quoted("\u{0}\u{1f}\u{7f}", false),
            "\"\\u0000\\u001f\u{7f}\""
        );
        assert_eq!(quoted("<a&b>", false), r#""<a&b>""#);
        assert_eq!(quoted("<a&b>", true), r#""\u003ca\u0026b\u003e""#);
        // U+2028 and U+2029 are escaped; their neighbours with the same first bytes are not.
        assert_eq!(
            quoted("x\u{2027}\u{2028}\u{2029}\u{202a}", false),
            "\"x\u{2027}\\u2028\\u2029\u{202a}\""
        );
        assert_eq!(quoted("é😀\u{2028}", false), "\"é😀\\u2028\"");
        assert_eq!(quoted("", false), r#""""#);
    }

    #[test]
    fn written_in_pieces_is_the_same_text() {
        use crate::encode::{Data, Field};
        let item = |i: usize| {
            Data::Struct(vec![
                Field::new("name", Data::string(format!("item-{i} <&> \u{2028}"))),
                Field::new("tags", Data::List(vec![Data::Bool(true), Data::Null])),
            ])
        };
        let big = Data::Struct(vec![Field::new(
            "items",
            Data::List((0..5000).map(item).collect()),
        )]);
        for d in [big, Data::Struct(vec![]), Data::string("x")] {
            for escape in [false, true] {
                let mut w = Vec::new();
                super::write_json_indent(&mut w, &d, escape).unwrap();
                assert_eq!(
                    String::from_utf8(w).unwrap(),
                    super::to_json_indent(&d, escape)
                );
            }
        }
    }

    #[test]
    fn deep_indentation_matches_four_spaces_per_level() {
        for depth in [0, 1, 15, 16, 17, 40] {
            let mut out = String::new();
            super::newline(&mut out, depth);
            assert_eq!(out, format!("\n{}", "    ".repeat(depth)));
        }
    }
}
