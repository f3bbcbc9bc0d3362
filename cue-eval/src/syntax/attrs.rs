//! Reading attribute bodies and string literals as CUE does: the elements of `@name(body)`
//! (Go's `cue.Attribute` arguments, split by `internal.ParseAttrBody`) and the text a quoted
//! literal stands for (Go's `literal.Unquote`).

use crate::facade::{Error, Result};
use crate::lexer::{self, Tok};

/// One comma-separated element of an attribute body: `key=value`, or a positional `value`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttrElement {
    /// The key before `=`, trimmed; empty for a positional element.
    pub key: String,
    /// The value, trimmed, and unquoted when it is a string literal (`"a\tb"` is `a<TAB>b`).
    pub value: String,
    /// The value as written, trimmed but not unquoted (Go's `RawArg`).
    pub raw: String,
    /// The whole element as written, key included, untrimmed.
    pub text: String,
}

/// Splits an attribute body (the text between `@name(` and `)`) into its elements as CUE does:
/// elements are separated by commas outside brackets, braces, parentheses and string literals,
/// and the first `=` outside those separates a key. An empty body is one empty element.
///
/// ```
/// use cue_eval::syntax::attribute_elements;
/// let els = attribute_elements(r#"eq, {a: 1, b: [2, 3]}, at="x,y""#).unwrap();
/// assert_eq!(els.len(), 3);
/// assert_eq!(els[1].value, "{a: 1, b: [2, 3]}");
/// assert_eq!((els[2].key.as_str(), els[2].value.as_str(), els[2].raw.as_str()), ("at", "x,y", "\"x,y\""));
/// ```
pub fn attribute_elements(body: &str) -> Result<Vec<AttrElement>> {
    let (toks, _, errors) = lexer::tokenize(body);
    if let Some(e) = errors.first() {
        return Err(Error::msg(format!("cannot scan attribute body: {e:?}")));
    }
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut start = 0usize;
    let mut assign: Option<(usize, usize)> = None;
    for &(s, ref tok, e) in &toks {
        match tok {
            Tok::LParen | Tok::LBrack | Tok::LBrace => depth += 1,
            Tok::RParen | Tok::RBrack | Tok::RBrace => {
                depth = depth.checked_sub(1).ok_or_else(|| {
                    Error::msg(format!("unexpected '{}' in attribute body", &body[s..e]))
                })?;
            }
            Tok::Comma(",") if depth == 0 => {
                out.push(element(body, start, s, assign));
                start = e;
                assign = None;
            }
            Tok::Assign if depth == 0 && assign.is_none() => assign = Some((s, e)),
            _ => {}
        }
    }
    if depth != 0 {
        return Err(Error::msg("unbalanced brackets in attribute body"));
    }
    out.push(element(body, start, body.len(), assign));
    Ok(out)
}

fn element(body: &str, start: usize, end: usize, assign: Option<(usize, usize)>) -> AttrElement {
    let (key, raw) = match assign {
        Some((s, e)) => (body[start..s].trim(), body[e..end].trim()),
        None => ("", body[start..end].trim()),
    };
    AttrElement {
        key: key.to_owned(),
        value: maybe_unquote(raw),
        raw: raw.to_owned(),
        text: body[start..end].to_owned(),
    }
}

/// Go's `maybeUnquote`: a value that looks like a string literal is decoded, otherwise kept.
fn maybe_unquote(s: &str) -> String {
    let b = s.as_bytes();
    let quoted = b.len() >= 2
        && ((b[0] == b'#' && b[b.len() - 1] == b'#')
            || (b[0] == b'"' && b[b.len() - 1] == b'"')
            || (b[0] == b'\'' && b[b.len() - 1] == b'\''));
    if !quoted {
        return s.to_owned();
    }
    unquote(s).unwrap_or_else(|_| s.to_owned())
}

/// The text a CUE string (or bytes) literal stands for, as written with its quotes: `"a\tb"`,
/// `#"raw \n"#`, `'bytes'`, multi-line `"""` literals. Fails on a malformed literal or one whose
/// bytes are not UTF-8; the error's message is the decoder's (`unknown escape sequence`).
///
/// ```
/// use cue_eval::syntax::unquote;
/// assert_eq!(unquote(r#""a\tb""#).unwrap(), "a\tb");
/// assert_eq!(unquote(r##"#"a\nb"#"##).unwrap(), r"a\nb");
/// assert!(unquote(r#""\q""#).is_err());
/// ```
pub fn unquote(lit: &str) -> Result<String> {
    let bytes = crate::literal::decode(lit).map_err(|e| Error::msg(e.message))?;
    String::from_utf8(bytes).map_err(|_| Error::msg("invalid UTF-8"))
}
