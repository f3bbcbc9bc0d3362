//! The spellings `cue fmt` normalises: numbers (`0755` → `0o755`, `.5` → `0.5`, `1E3` → `1e3`),
//! the indentation of multi-line strings, and string labels written as raw or multi-line strings.

use std::borrow::Cow;

/// Normalises an integer literal (including SI forms such as `1.5Ki`).
pub(super) fn int(raw: &str) -> Cow<'_, str> {
    let b = raw.as_bytes();
    // Only a plain run of digits is a legacy octal: `02G` is an SI literal, and `0o2G` would
    // not lex.
    let legacy_octal = b.len() > 1
        && b[0] == b'0'
        && b[1].is_ascii_digit()
        && b.iter().all(|c| c.is_ascii_digit() || *c == b'_');
    if !legacy_octal && !raw.contains(['.', 'E']) {
        return Cow::Borrowed(raw);
    }
    let mut data = raw.to_string();
    // Legacy octal: `0755` is written `0o755`.
    if legacy_octal {
        data = format!("0o{}", &data[1..]);
    }
    // A multiplier right after the dot gets a zero: `1.Ki` becomes `1.0Ki`.
    if let Some(p) = data.find('.')
        && data.as_bytes().get(p + 1).is_some_and(|&c| c > b'9')
    {
        data.insert(p + 1, '0');
    }
    // `E` is lowered unless it is the last character (which may one day mean exa).
    if let Some(p) = data.find('E')
        && p + 1 < data.len()
    {
        data = data.to_lowercase();
    }
    Cow::Owned(data)
}

/// Normalises a float literal: a dot gets digits on both sides, and `E` becomes `e`.
pub(super) fn float(raw: &str) -> Cow<'_, str> {
    let mut data = raw.to_string();
    match data.find('.') {
        None => {}
        Some(0) => data.insert(0, '0'),
        Some(p) if p + 1 == data.len() => data.push('0'),
        Some(p) if data.as_bytes()[p + 1] > b'9' => data.insert(p + 1, '0'),
        Some(_) => {}
    }
    if data.contains('E') {
        data = data.to_lowercase();
    }
    Cow::Owned(data)
}

/// Re-indents a multi-line string or bytes literal so that its closing quote (and every line
/// indented like it) is indented by `n` tabs. Other literals are returned unchanged, as are
/// interpolation fragments, which do not start and end with quotes.
pub(super) fn indent_tabs(s: &str, n: usize) -> Cow<'_, str> {
    let Some(ws) = multiline_whitespace(s) else {
        return Cow::Borrowed(s);
    };
    let indent = "\t".repeat(n);
    if ws == indent {
        return Cow::Borrowed(s);
    }
    Cow::Owned(s.replace(&format!("\n{ws}"), &format!("\n{indent}")))
}

/// For a well-formed multi-line literal, the whitespace before its closing quote.
fn multiline_whitespace(s: &str) -> Option<&str> {
    let b = s.as_bytes();
    let hashes = b.iter().take_while(|&&c| c == b'#').count();
    let rest = &b[hashes..];
    let q = *rest.first()?;
    if q != b'"' && q != b'\'' {
        return None;
    }
    if !(rest.len() > 3 && rest[1] == q && rest[2] == q && rest[3] != b'#') {
        return None;
    }
    let quote_len = 3 + hashes;
    let n_start = match rest[3] {
        b'\n' => quote_len + 1,
        b'\r' if rest.get(4) == Some(&b'\n') => quote_len + 2,
        _ => return None,
    };
    // The literal must end with the same quote, mirrored: `#"""` closes with `"""#`.
    let quote = &b[..quote_len];
    if b.len() < quote_len {
        return None;
    }
    for (i, &c) in quote.iter().enumerate() {
        if b[b.len() - i - 1] != c {
            return None;
        }
    }
    let end = s.len() - quote_len;
    let before = &s[..end];
    let trimmed = before.trim_end_matches(|c: char| c != '\n' && c.is_whitespace());
    if !trimmed.ends_with('\n') {
        return None;
    }
    let ws = &s[trimmed.len()..end];
    // The first content line must start with that whitespace (unless it is empty).
    if b.len() > n_start && b[n_start] != b'\n' && !s[n_start..].starts_with(ws) {
        return None;
    }
    Some(ws)
}

/// The spelling of a string label: raw (`#"…"#`) and multi-line labels are rewritten as plain
/// double-quoted strings; other labels are kept as written.
pub(super) fn label(raw: &str) -> String {
    if !(raw.starts_with("\"\"\"") || raw.starts_with('#')) {
        return raw.to_string();
    }
    match crate::literal::decode(raw)
        .ok()
        .and_then(|v| String::from_utf8(v).ok())
    {
        Some(value) => quote(&value),
        None => raw.to_string(),
    }
}

/// Quotes a string as a single-line CUE string literal.
fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if c == ' ' || !(c.is_control() || c.is_whitespace()) => out.push(c),
            c if (c as u32) < 0x10000 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push_str(&format!("\\U{:08x}", c as u32)),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers() {
        assert_eq!(int("0755"), "0o755");
        assert_eq!(int("0"), "0");
        assert_eq!(int("0x1F"), "0x1F");
        assert_eq!(int("1.Ki"), "1.0Ki");
        assert_eq!(int("0xABE1"), "0xabe1");
        assert_eq!(int("1E"), "1E");
        assert_eq!(float(".5"), "0.5");
        assert_eq!(float("5."), "5.0");
        assert_eq!(float("1.E3"), "1.0e3");
        assert_eq!(float("1E3"), "1e3");
    }

    #[test]
    fn multiline_strings_are_reindented() {
        let s = "\"\"\"\n    a\n\n    b\n    \"\"\"";
        assert_eq!(indent_tabs(s, 1), "\"\"\"\n\ta\n\n\tb\n\t\"\"\"");
        assert_eq!(indent_tabs("\"x\"", 1), "\"x\"");
        assert_eq!(indent_tabs("\"\"\"\n\ta \\(", 2), "\"\"\"\n\ta \\(");
    }

    #[test]
    fn labels() {
        assert_eq!(label("\"a\""), "\"a\"");
        assert_eq!(label("#\"a\"b\"#"), "\"a\\\"b\"");
    }
}
