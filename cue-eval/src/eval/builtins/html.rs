//! The `html` package: Go's `html.EscapeString` and `html.UnescapeString`. Named character
//! references come from the `htmlize` crate's table of the HTML standard's entities, which
//! also decodes numeric references as the standard (and Go) do.

use super::k::*;
use super::{StdMember, a_str, func, string};

pub(super) static MEMBERS: &[StdMember] = &[
    func("html.Escape", &[S], |_, a| string(escape(&a_str(a, 0)?))),
    func("html.Unescape", &[S], |_, a| {
        string(unescape(&a_str(a, 0)?))
    }),
];

/// Go's `html.EscapeString`: the five characters `<`, `>`, `&`, `'` and `"`.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '\'' => out.push_str("&#39;"),
            '"' => out.push_str("&#34;"),
            c => out.push(c),
        }
    }
    out
}

/// Go's `html.UnescapeString`. Go reads `&#x;` as a numeric reference without digits, which is
/// U+FFFD; the standard's algorithm, and `htmlize`, leave it as text.
fn unescape(s: &str) -> String {
    if !s.contains('&') {
        return s.to_string();
    }
    let s = if s.contains("&#x;") || s.contains("&#X;") {
        std::borrow::Cow::Owned(s.replace("&#x;", "\u{fffd}").replace("&#X;", "\u{fffd}"))
    } else {
        std::borrow::Cow::Borrowed(s)
    };
    htmlize::unescape(s.as_ref()).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Expected texts: `cue export` of v0.17.1 on `html.Escape` and `html.Unescape` of the same
    /// inputs.
    #[test]
    fn escape_and_unescape_as_go() {
        assert_eq!(
            escape("<a href=\"x\">'&'</a>é"),
            "&lt;a href=&#34;x&#34;&gt;&#39;&amp;&#39;&lt;/a&gt;é"
        );
        let cases = [
            (
                "&lt;a&amp;&#39;&quot;&eacute;&#x41;&nbsp;x&notanentity;",
                "<a&'\"éA\u{a0}x¬anentity;",
            ),
            (
                "&#x80;&#0;&#xD800;&#x110000;&amp",
                "€\u{fffd}\u{fffd}\u{fffd}&",
            ),
            (
                "&AMP;&ampx&notin;&notit;&#65&#x41x&#;&#x;&&;",
                "&&x∉¬it;AAx&#;\u{fffd}&&;",
            ),
            ("&lt&gt&quot&NotEqualTilde;&acE;", "<>\"≂\u{338}∾\u{333}"),
            ("&#9999999999;&#x0d;&#13;&#x9F;&#128;", "\u{fffd}\r\rŸ€"),
            ("&amp;amp;&;&a;&z;", "&amp;&;&a;&z;"),
            ("plain", "plain"),
        ];
        for (input, want) in cases {
            assert_eq!(unescape(input), want, "{input}");
        }
    }
}
