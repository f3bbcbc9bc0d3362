//! Decoding of string and bytes literals: escapes, `#` padding and the indentation rules of
//! multi-line literals. The lexer only finds where a literal ends and validates escapes; the
//! value is computed here, once, when the evaluator needs it.

/// Why a literal could not be decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LiteralError {
    /// Byte offset within the raw literal.
    pub offset: usize,
    pub message: &'static str,
}

/// The delimiters of a literal: quote character, multi-line, number of `#`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Delims {
    pub quote: u8,
    pub multiline: bool,
    pub hashes: usize,
}

impl Delims {
    /// Reads the opening delimiter of a raw literal (or first interpolation fragment).
    pub fn of(raw: &str) -> Delims {
        let hashes = raw.bytes().take_while(|&b| b == b'#').count();
        let rest = &raw.as_bytes()[hashes..];
        let quote = rest.first().copied().unwrap_or(b'"');
        let multiline = rest.len() >= 3 && rest[1] == quote && rest[2] == quote;
        Delims {
            quote,
            multiline,
            hashes,
        }
    }

    fn open_len(&self) -> usize {
        self.hashes + if self.multiline { 3 } else { 1 }
    }
}

/// Decodes a complete literal (`"a\tb"`, `'\x00'`, `#"raw"#`, `"""` blocks) into its bytes.
/// For string literals the result is valid UTF-8.
pub fn decode(raw: &str) -> Result<Vec<u8>, LiteralError> {
    let d = Delims::of(raw);
    let open = d.open_len();
    if raw.len() < open * 2 {
        return Err(LiteralError {
            offset: 0,
            message: "literal not terminated",
        });
    }
    let body = &raw[open..raw.len() - open];
    if !d.multiline {
        return unescape(body, open, d);
    }
    let (indent, lines) = multiline_lines(body, open)?;
    let mut out = Vec::with_capacity(body.len());
    let mut text = String::with_capacity(body.len());
    for (i, (line, _)) in lines.iter().enumerate() {
        if i > 0 {
            text.push('\n');
        }
        text.push_str(line.strip_prefix(indent).unwrap_or(line.trim_start()));
    }
    out.extend(unescape(&text, open, d)?);
    Ok(out)
}

/// The text a string literal stands for, invalid UTF-8 from escapes replaced by U+FFFD: the
/// body as written, without decoding or a copy, for the common plain literal (see
/// [`plain_body`]), otherwise [`decode`]'s bytes.
pub fn decode_text(raw: &str) -> Result<std::borrow::Cow<'_, str>, LiteralError> {
    if let Some(body) = plain_body(raw) {
        return Ok(std::borrow::Cow::Borrowed(body));
    }
    let bytes = decode(raw)?;
    Ok(std::borrow::Cow::Owned(
        String::from_utf8_lossy(&bytes).into_owned(),
    ))
}

/// The text of a single-line literal without escapes or carriage returns, which is its body as
/// written: `None` for any other literal.
fn plain_body(raw: &str) -> Option<&str> {
    let b = raw.as_bytes();
    if b.len() >= 2 && b[0] == b'"' && b[b.len() - 1] == b'"' && !raw.starts_with("\"\"\"") {
        // The usual `"..."`: no hashes, not multi-line.
        let body = &raw[1..raw.len() - 1];
        return memchr::memchr2(b'\\', b'\r', body.as_bytes())
            .is_none()
            .then_some(body);
    }
    let d = Delims::of(raw);
    let open = d.open_len();
    if d.multiline || raw.len() < open * 2 {
        return None;
    }
    let body = &raw[open..raw.len() - open];
    if memchr::memchr2(b'\\', b'\r', body.as_bytes()).is_some() {
        return None;
    }
    Some(body)
}

/// The indentation of a multi-line literal, and its content lines with their offsets.
type MultilineBody<'a> = (&'a str, Vec<(&'a str, usize)>);

/// Splits a multi-line body into its content lines (without the first newline and the last
/// line holding the closing quote) and checks that each non-empty line starts with the
/// whitespace before the closing quote.
fn multiline_lines(body: &str, base: usize) -> Result<MultilineBody<'_>, LiteralError> {
    let Some(first_nl) = body.find('\n') else {
        return Err(LiteralError {
            offset: base,
            message: "expected newline after multiline quote",
        });
    };
    let last_nl = body.rfind('\n').unwrap_or(first_nl);
    let indent = &body[last_nl + 1..];
    if !indent.bytes().all(|b| b == b' ' || b == b'\t') {
        return Err(LiteralError {
            offset: base + last_nl + 1,
            message: "closing quote must be on its own line",
        });
    }
    let mut lines = Vec::new();
    if last_nl > first_nl {
        let mut offset = base + first_nl + 1;
        for line in body[first_nl + 1..last_nl].split('\n') {
            let line = line.strip_suffix('\r').unwrap_or(line);
            if !line.is_empty() && !line.starts_with(indent) {
                return Err(LiteralError {
                    offset,
                    message: "invalid whitespace",
                });
            }
            lines.push((line, offset));
            offset += line.len() + 1;
        }
    }
    Ok((indent, lines))
}

/// Resolves escapes in `s` (the text between the delimiters).
fn unescape(s: &str, base: usize, d: Delims) -> Result<Vec<u8>, LiteralError> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'\r' {
            i += 1;
            continue;
        }
        let is_escape = c == b'\\'
            && b.len() > i + d.hashes
            && b[i + 1..i + 1 + d.hashes].iter().all(|&h| h == b'#');
        if !is_escape {
            out.push(c);
            i += 1;
            continue;
        }
        let e = i + 1 + d.hashes;
        let err = |message| LiteralError {
            offset: base + i,
            message,
        };
        let Some(&k) = b.get(e) else {
            return Err(err("unknown escape sequence"));
        };
        let simple = match k {
            b'a' => Some(0x07),
            b'b' => Some(0x08),
            b'f' => Some(0x0c),
            b'n' => Some(b'\n'),
            b'r' => Some(b'\r'),
            b't' => Some(b'\t'),
            b'v' => Some(0x0b),
            b'/' => Some(b'/'),
            b'\\' => Some(b'\\'),
            b'"' | b'\'' if k == d.quote => Some(k),
            _ => None,
        };
        if let Some(v) = simple {
            out.push(v);
            i = e + 1;
            continue;
        }
        match k {
            b'\n' if d.multiline => i = e + 1,
            b'x' if d.quote == b'\'' => {
                let h = s.get(e + 1..e + 3).ok_or(err("invalid escape"))?;
                out.push(u8::from_str_radix(h, 16).map_err(|_| err("invalid escape"))?);
                i = e + 3;
            }
            b'0'..=b'7' if d.quote == b'\'' => {
                let o = s.get(e..e + 3).ok_or(err("invalid escape"))?;
                let v = u32::from_str_radix(o, 8).map_err(|_| err("invalid escape"))?;
                out.push(u8::try_from(v).map_err(|_| err("octal escape out of range"))?);
                i = e + 3;
            }
            b'u' | b'U' => {
                let n = if k == b'u' { 4 } else { 8 };
                let h = s.get(e + 1..e + 1 + n).ok_or(err("invalid escape"))?;
                let v = u32::from_str_radix(h, 16).map_err(|_| err("invalid escape"))?;
                let ch = char::from_u32(v)
                    .ok_or(err("escape sequence is invalid Unicode code point"))?;
                let mut buf = [0; 4];
                out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                i = e + 1 + n;
            }
            _ => return Err(err("unknown escape sequence")),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(raw: &str) -> String {
        String::from_utf8(decode(raw).unwrap()).unwrap()
    }

    #[test]
    fn a_plain_body_is_what_decoding_gives() {
        let plain = [
            r#""""#,
            r#""abc""#,
            r#""a b/c é""#,
            r##"#"abc"#"##,
            "'bytes'",
        ];
        for raw in plain {
            let body = plain_body(raw).unwrap_or_else(|| panic!("{raw} is plain"));
            assert_eq!(body.as_bytes(), decode(raw).unwrap().as_slice(), "{raw}");
        }
        // Escapes, carriage returns and multi-line literals need decoding.
        for raw in [
            r#""a\nb""#,
            "\"a\rb\"",
            "\"\"\"\n\tx\n\t\"\"\"",
            r##"#"a\#nb"#"##,
        ] {
            assert_eq!(plain_body(raw), None, "{raw}");
            let text = String::from_utf8_lossy(&decode(raw).unwrap()).into_owned();
            assert_eq!(decode_text(raw).unwrap(), text, "{raw}");
        }
        assert_eq!(decode_text(r#""abc""#).unwrap(), "abc");
        assert!(decode_text(r#""\q""#).is_err());
    }

    #[test]
    fn simple_escapes() {
        assert_eq!(s(r#""a\tb\n\"\\""#), "a\tb\n\"\\");
        assert_eq!(s(r#""\u65e5本\U00008a9e""#), "日本語");
        assert_eq!(decode(r"'\xff\377'").unwrap(), vec![0xff, 0xff]);
        assert_eq!(s(r##"#"no \n here"#"##), r"no \n here");
        assert_eq!(s(r###"#"yes \#n here"#"###), "yes \n here");
    }

    #[test]
    fn multiline_indentation() {
        let raw = "\"\"\"\n    lily:\n    out of the water\n\n    picking \\\n    bugs\n        — Nick\n    \"\"\"";
        assert_eq!(
            s(raw),
            "lily:\nout of the water\n\npicking bugs\n    — Nick"
        );
        assert_eq!(s("\"\"\"\n\t\"\"\""), "");
    }

    #[test]
    fn multiline_bad_indentation() {
        let err = decode("\"\"\"\n  a\n b\n  \"\"\"").unwrap_err();
        assert_eq!(err.message, "invalid whitespace");
    }

    #[test]
    fn bad_escapes() {
        assert!(decode(r#""\q""#).is_err());
        assert!(decode(r#""\x20""#).is_err());
        assert!(decode(r#""\U00110000""#).is_err());
    }
}
