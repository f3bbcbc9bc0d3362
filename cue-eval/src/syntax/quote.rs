//! Quoting text the way Go's `strconv` and CUE's `literal` package do: which characters are
//! printable (Go's `IsPrint` and `IsGraphic`), and how the rest are escaped. CUE prints labels
//! and strings with one form, Go's `strconv.Quote` family (and Go's `%q` in messages) with
//! another; they differ in how control characters are written.

use std::cell::OnceCell;

/// How [`quote_with`] escapes what is not printable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Form {
    /// The quote character, which is escaped inside the text.
    pub quote: char,
    /// Escape everything outside printable ASCII (`QuoteToASCII`).
    pub ascii_only: bool,
    /// Keep Unicode spaces as they are (`QuoteToGraphic`).
    pub graphic_only: bool,
    /// Write control characters as `\x1f` (Go's `strconv`, where DEL is one too) rather than
    /// `\u001f` (CUE's string and label form).
    pub hex_controls: bool,
}

impl Form {
    /// Go's `strconv.Quote`.
    pub const GO: Form = Form {
        quote: '"',
        ascii_only: false,
        graphic_only: false,
        hex_controls: true,
    };
    /// CUE's `literal.String` and `literal.Label`, single-line.
    pub const CUE: Form = Form {
        quote: '"',
        ascii_only: false,
        graphic_only: false,
        hex_controls: false,
    };
}

thread_local! {
    static PRINT: OnceCell<regex::Regex> = const { OnceCell::new() };
    static GRAPHIC: OnceCell<regex::Regex> = const { OnceCell::new() };
}

/// Whether a non-ASCII character belongs to one of the general categories of `class`.
fn in_classes(
    cell: &'static std::thread::LocalKey<OnceCell<regex::Regex>>,
    class: &str,
    c: char,
) -> bool {
    let mut buf = [0u8; 4];
    let s = c.encode_utf8(&mut buf);
    cell.with(|re| {
        re.get_or_init(|| {
            regex::Regex::new(&format!(r"\A[{class}]\z")).expect("a valid class of categories")
        })
        .is_match(s)
    })
}

/// Go's `strconv.IsPrint`: letters, marks, numbers, punctuation and symbols (categories L, M, N,
/// P and S), and the ASCII space.
pub fn is_print(c: char) -> bool {
    if c.is_ascii() {
        return (' '..='~').contains(&c);
    }
    in_classes(&PRINT, r"\p{L}\p{M}\p{N}\p{P}\p{S}", c)
}

/// Go's `strconv.IsGraphic`: what [`is_print`] accepts, and the space separators (Zs).
pub fn is_graphic(c: char) -> bool {
    if c.is_ascii() {
        return (' '..='~').contains(&c);
    }
    in_classes(&GRAPHIC, r"\p{L}\p{M}\p{N}\p{P}\p{S}\p{Zs}", c)
}

/// `s` between quotes, escaped as `form` says.
pub fn quote_with(s: &str, form: Form) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push(form.quote);
    for c in s.chars() {
        escape_char(&mut out, c, form);
    }
    out.push(form.quote);
    out
}

/// Appends `c` as it stands inside a quoted text of `form`.
pub fn escape_char(out: &mut String, c: char, form: Form) {
    if c == form.quote || c == '\\' {
        out.push('\\');
        out.push(c);
        return;
    }
    let keep = if form.ascii_only {
        c.is_ascii() && is_print(c)
    } else {
        is_print(c) || (form.graphic_only && is_graphic(c))
    };
    if keep {
        out.push(c);
        return;
    }
    let named = match c {
        '\u{7}' => "\\a",
        '\u{8}' => "\\b",
        '\u{c}' => "\\f",
        '\n' => "\\n",
        '\r' => "\\r",
        '\t' => "\\t",
        '\u{b}' => "\\v",
        _ => "",
    };
    if !named.is_empty() {
        out.push_str(named);
        return;
    }
    let n = c as u32;
    let hex = if form.hex_controls {
        n < 0x20 || n == 0x7f
    } else {
        false
    };
    if hex {
        out.push_str(&format!("\\x{n:02x}"));
    } else if n < 0x10000 {
        out.push_str(&format!("\\u{n:04x}"));
    } else {
        out.push_str(&format!("\\U{n:08x}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Expected texts: Go's `strconv` through `cue export` of v0.17.1 (`strconv.Quote`,
    /// `QuoteToASCII`, `QuoteToGraphic` of the same text).
    #[test]
    fn go_forms_escape_as_strconv() {
        let s = "a\u{1}\u{7}\u{b}\u{7f}\u{a0}\u{2028}é☺\u{1F600}";
        assert_eq!(
            quote_with(s, Form::GO),
            r#""a\x01\a\v\x7f\u00a0\u2028é☺😀""#
        );
        let ascii = Form {
            ascii_only: true,
            ..Form::GO
        };
        assert_eq!(
            quote_with(s, ascii),
            r#""a\x01\a\v\x7f\u00a0\u2028\u00e9\u263a\U0001f600""#
        );
        let graphic = Form {
            graphic_only: true,
            ..Form::GO
        };
        assert_eq!(
            quote_with(s, graphic),
            "\"a\\x01\\a\\v\\x7f\u{a0}\\u2028é☺😀\""
        );
    }

    /// CUE's form writes control characters as `\u` escapes, as `cue eval` prints them.
    #[test]
    fn cue_form_writes_controls_as_unicode_escapes() {
        assert_eq!(
            quote_with("a\u{1}\u{7f}\u{7}\"\\", Form::CUE),
            r#""a\u0001\u007f\a\"\\""#
        );
    }

    #[test]
    fn printable_and_graphic_follow_the_categories() {
        assert!(is_print('é') && is_print('☺') && is_print('😀') && is_print(' '));
        assert!(!is_print('\u{a0}') && !is_print('\u{2028}') && !is_print('\u{85}'));
        assert!(is_graphic('\u{a0}') && is_graphic('\u{3000}') && !is_graphic('\u{2028}'));
        assert!(!is_print('\t') && !is_graphic('\t'));
    }
}
