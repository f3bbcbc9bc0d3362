//! Concrete data back to CUE source text, so that a data file (or an `@embed`ded one) can be
//! compiled as a CUE value by the ordinary front end.

use std::fmt::Write as _;

use super::Data;

/// CUE source for `data`: a struct becomes top-level fields (a file whose value is that
/// struct); any other value becomes the file's embedded value. Labels are always quoted.
pub fn to_cue_source(data: &Data) -> String {
    let mut out = String::new();
    match data {
        Data::Struct(fields) => {
            for f in fields {
                write_string(&mut out, &f.name);
                out.push_str(": ");
                write_value(&mut out, &f.value, 1);
                out.push('\n');
            }
        }
        other => {
            write_value(&mut out, other, 0);
            out.push('\n');
        }
    }
    out
}

/// A CUE expression for `data`, on one line per field.
pub fn to_cue_expr(data: &Data) -> String {
    let mut out = String::new();
    write_value(&mut out, data, 0);
    out
}

fn indent(out: &mut String, n: usize) {
    for _ in 0..n {
        out.push('\t');
    }
}

fn write_value(out: &mut String, d: &Data, depth: usize) {
    crate::stack::guard(|| match d {
        Data::Null => out.push_str("null"),
        Data::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Data::Number { text, float } => {
            out.push_str(text);
            if *float && !text.contains(['.', 'E', 'e']) {
                out.push('.');
            }
        }
        Data::String(s) => write_string(out, s),
        Data::Bytes(b) => {
            out.push('\'');
            for &c in b {
                match c {
                    b'\'' => out.push_str("\\'"),
                    b'\\' => out.push_str("\\\\"),
                    0x20..=0x7e => out.push(char::from(c)),
                    _ => {
                        let _ = write!(out, "\\x{c:02x}");
                    }
                }
            }
            out.push('\'');
        }
        Data::List(items) => {
            if items.is_empty() {
                out.push_str("[]");
                return;
            }
            out.push_str("[\n");
            for i in items {
                indent(out, depth + 1);
                write_value(out, i, depth + 1);
                out.push_str(",\n");
            }
            indent(out, depth);
            out.push(']');
        }
        Data::Struct(fields) => {
            if fields.is_empty() {
                out.push_str("{}");
                return;
            }
            out.push_str("{\n");
            for f in fields {
                indent(out, depth + 1);
                write_string(out, &f.name);
                out.push_str(": ");
                write_value(out, &f.value, depth + 1);
                out.push('\n');
            }
            indent(out, depth);
            out.push('}');
        }
    })
}

/// A double-quoted CUE string: `"`, `\` and control characters escaped, so no `\(` can start
/// an interpolation.
pub fn write_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}
