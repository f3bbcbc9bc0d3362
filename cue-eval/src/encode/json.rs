//! JSON output: `cue export --out json`, `json.Marshal` and `json.MarshalStream`.
//!
//! CUE's `Value.MarshalJSON` writes compact JSON with Go's string escaping and HTML escaping
//! off. `cue export` passes that through a Go `json.Encoder` with `SetIndent("", "    ")` (so
//! `json.Indent` layout: one element per line, `": "` after keys, `{}` and `[]` kept compact)
//! and `SetEscapeHTML(--escape)`, and ends the value with a newline.

use super::sink::Sink;
use super::{Data, push_base64};

const INDENT: &str = "    ";

/// What `cue export --out json` prints for `d`: four-space indentation, a newline at the end,
/// and `&`, `<`, `>` escaped as `\u0026`, `\u003c`, `\u003e` only when `escape_html` is set
/// (`cue export --escape`).
pub fn to_json_indent(d: &Data, escape_html: bool) -> String {
    let mut buf = Vec::new();
    // Writing to a vector does not fail.
    let _ = write_json_indent(&mut buf, d, escape_html);
    String::from_utf8(buf).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// Writes what [`to_json_indent`] returns to `w`, a piece at a time, so that a large document
/// is never held as one text.
pub fn write_json_indent<W: std::io::Write>(
    w: &mut W,
    d: &Data,
    escape_html: bool,
) -> std::io::Result<()> {
    let mut j = JsonWriter::new(w, escape_html);
    report(d, &mut j);
    j.finish()
}

/// Reports `d` to `sink`, as the exporter reports the value it was made from.
fn report<S: Sink>(d: &Data, sink: &mut S) {
    match d {
        Data::Null => sink.null(),
        Data::Bool(b) => sink.bool(*b),
        Data::Number { text, float } => sink.number(text, *float),
        Data::String(s) => sink.string(s),
        Data::Bytes(b) => sink.bytes(b),
        Data::List(items) => {
            sink.begin_list(items.len());
            for item in items {
                report(item, sink);
            }
            sink.end_list();
        }
        Data::Struct(fields) => {
            sink.begin_struct(fields.len());
            for f in fields {
                sink.field(&f.name);
                report(&f.value, sink);
            }
            sink.end_struct();
        }
    }
}

/// A [`Sink`] that writes the reported value as [`to_json_indent`] spells it to an
/// `io::Write`, a piece of about 64 KiB at a time (between elements), with the newline at the
/// end written by [`JsonWriter::finish`].
pub(crate) struct JsonWriter<W: std::io::Write> {
    w: W,
    out: String,
    escape_html: bool,
    /// The open lists and structs: whether each is a list, and whether it has an element yet.
    open: Vec<(bool, bool)>,
    failed: Option<std::io::Error>,
}

impl<W: std::io::Write> JsonWriter<W> {
    const PIECE: usize = 1 << 16;

    /// A writer to `w`; `escape_html` as for [`to_json_indent`].
    pub(crate) fn new(w: W, escape_html: bool) -> Self {
        JsonWriter {
            w,
            out: String::with_capacity(Self::PIECE + 1024),
            escape_html,
            open: Vec::new(),
            failed: None,
        }
    }

    /// Ends the document with its newline and writes what is left, or returns the first
    /// error of writing.
    pub(crate) fn finish(mut self) -> std::io::Result<()> {
        if let Some(e) = self.failed {
            return Err(e);
        }
        self.out.push('\n');
        self.w.write_all(self.out.as_bytes())
    }

    /// Before a value: in a list, the separator and indentation of a new element.
    fn before_value(&mut self) {
        self.next_item(true);
    }

    /// Starts the next item of the innermost open list (`list`) or struct (not `list`): its
    /// separator and indentation. Returns false, writing nothing, when the innermost open
    /// value is not of that kind.
    fn next_item(&mut self, list: bool) -> bool {
        let depth = self.open.len();
        match self.open.last_mut() {
            Some((is_list, any)) if *is_list == list => {
                if *any {
                    self.out.push(',');
                }
                *any = true;
                newline(&mut self.out, depth);
                true
            }
            _ => false,
        }
    }

    /// After a value: the text so far is written once it is a piece long.
    /// Once writing has failed, the rest is not formatted (nor kept).
    fn after_value(&mut self) {
        if self.out.len() >= Self::PIECE && !self.open.is_empty() {
            if self.failed.is_none() {
                self.failed = self.w.write_all(self.out.as_bytes()).err();
            }
            self.out.clear();
        }
    }

    /// Writes one scalar where the next value goes (`write` gets the text and whether HTML
    /// characters are escaped), unless writing has stopped.
    fn scalar(&mut self, write: impl FnOnce(&mut String, bool)) {
        if self.stopped() {
            return;
        }
        self.before_value();
        write(&mut self.out, self.escape_html);
        self.after_value();
    }

    /// Whether writing has failed, after which events are ignored.
    fn stopped(&self) -> bool {
        self.failed.is_some()
    }

    /// Opens a list (`list`) or struct with `open` where the next value goes.
    fn begin(&mut self, open: char, list: bool) {
        if self.stopped() {
            return;
        }
        self.before_value();
        self.out.push(open);
        self.open.push((list, false));
    }

    /// Closes the innermost open list or struct with `close`.
    fn end(&mut self, close: char) {
        if self.stopped() {
            return;
        }
        if let Some((_, any)) = self.open.pop() {
            if any {
                newline(&mut self.out, self.open.len());
            }
            self.out.push(close);
        }
        self.after_value();
    }
}

impl<W: std::io::Write> Sink for JsonWriter<W> {
    fn null(&mut self) {
        self.scalar(|out, _| out.push_str("null"));
    }
    fn bool(&mut self, b: bool) {
        self.scalar(|out, _| out.push_str(if b { "true" } else { "false" }));
    }
    fn number(&mut self, text: &str, _: bool) {
        self.scalar(|out, _| out.push_str(text));
    }
    fn string(&mut self, s: &str) {
        self.scalar(|out, escape_html| write_string(out, s, escape_html));
    }
    fn bytes(&mut self, b: &[u8]) {
        self.scalar(|out, _| write_bytes(out, b));
    }
    fn begin_list(&mut self, _: usize) {
        self.begin('[', true);
    }
    fn end_list(&mut self) {
        self.end(']');
    }
    fn begin_struct(&mut self, _: usize) {
        self.begin('{', false);
    }
    fn field(&mut self, name: &str) {
        if self.stopped() {
            return;
        }
        if self.next_item(false) {
            write_string(&mut self.out, name, self.escape_html);
            self.out.push_str(": ");
        }
    }
    fn end_struct(&mut self) {
        self.end('}');
    }
}

/// A byte buffer that refuses a write that would take it past `cap` bytes (its error is of
/// kind `OutOfMemory`): [`JsonWriter`] then stops formatting, so a text that turns out to be
/// long costs no more memory than `cap`.
pub(crate) struct CappedBuffer {
    /// The text written so far.
    pub(crate) bytes: Vec<u8>,
    cap: usize,
}

impl CappedBuffer {
    /// An empty buffer that holds up to `cap` bytes.
    pub(crate) fn new(cap: usize) -> Self {
        CappedBuffer {
            bytes: Vec::new(),
            cap,
        }
    }
}

impl std::io::Write for CappedBuffer {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.bytes.len() + buf.len() > self.cap {
            return Err(std::io::ErrorKind::OutOfMemory.into());
        }
        self.bytes.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
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

fn newline(out: &mut String, depth: usize) {
    out.push('\n');
    super::push_spaces(out, depth * INDENT.len());
}

fn write_scalar(out: &mut String, d: &Data, escape_html: bool) {
    match d {
        Data::Null => out.push_str("null"),
        Data::Bool(true) => out.push_str("true"),
        Data::Bool(false) => out.push_str("false"),
        Data::Number { text, .. } => out.push_str(text),
        Data::String(s) => write_string(out, s, escape_html),
        Data::Bytes(b) => write_bytes(out, b),
        Data::List(_) | Data::Struct(_) => unreachable!("collections are written by the callers"),
    }
}

/// Bytes as JSON writes them: a base64 string.
fn write_bytes(out: &mut String, b: &[u8]) {
    out.push('"');
    push_base64(out, b);
    out.push('"');
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
        for depth in [0, 1, 15, 16, 17, 40, 63, 64, 65, 128, 129, 200] {
            let mut out = String::new();
            super::newline(&mut out, depth);
            assert_eq!(out, format!("\n{}", "    ".repeat(depth)));
        }
    }
}
