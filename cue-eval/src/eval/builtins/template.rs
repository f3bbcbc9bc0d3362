//! The `text/template` package. So far `Execute` supports text, comments, and actions that
//! print a field path of the data (`{{.}}`, `{{.a.b}}`, `{{- .x -}}` trimming), printed as Go's
//! `fmt` prints the decoded JSON value; other actions are reported as unsupported.

use super::k::*;
use super::{R, Runtime, StdMember, a_str, func, string};
use crate::encode::Data;
use crate::eval::value::{Bottom, Value};

pub(super) static MEMBERS: &[StdMember] = &[
    func("text/template.Execute", &[S, T], execute),
    func("text/template.HTMLEscape", &[S], |_, a| {
        string(html_escape(&a_str(a, 0)?))
    }),
    func("text/template.JSEscape", &[S], |_, a| {
        string(js_escape(&a_str(a, 0)?))
    }),
];

/// The most output `Execute` produces.
const MAX_OUTPUT: usize = 1 << 28;

fn execute(rt: &mut Runtime, a: &[Value]) -> R {
    let tmpl = a_str(a, 0)?;
    let data = rt.value_to_data(&a[1])?;
    let mut out = String::new();
    let mut rest: &str = &tmpl;
    while let Some(i) = rest.find("{{") {
        let mut text = &rest[..i];
        let mut action = &rest[i + 2..];
        if action.starts_with("- ") {
            text = text.trim_end_matches([' ', '\t', '\r', '\n']);
            action = &action[2..];
        }
        out.push_str(text);
        let Some(end) = action.find("}}") else {
            return Err(Bottom::eval("template: unclosed action"));
        };
        let mut body = &action[..end];
        let mut after = &action[end + 2..];
        if body.ends_with(" -") {
            body = &body[..body.len() - 2];
            after = after.trim_start_matches([' ', '\t', '\r', '\n']);
        }
        let body = body.trim();
        if body.starts_with("/*") {
            rest = after;
            continue;
        }
        if !body.starts_with('.') || body.contains(' ') {
            return Err(Bottom::eval(format!(
                "template: unsupported action {{{{{body}}}}}"
            )));
        }
        match lookup(&data, &body[1..])? {
            Some(d) => print_go(&mut out, d),
            None => out.push_str("<no value>"),
        }
        if out.len() > MAX_OUTPUT {
            return Err(Bottom::eval("template: output too large"));
        }
        rest = after;
    }
    out.push_str(rest);
    string(out)
}

/// The value at a dotted field path (`a.b`), `None` for a missing field.
fn lookup<'a>(data: &'a Data, path: &str) -> Result<Option<&'a Data>, std::rc::Rc<Bottom>> {
    let mut cur = data;
    for part in path.split('.').filter(|p| !p.is_empty()) {
        cur = match cur {
            Data::Struct(fields) => match fields.iter().find(|f| f.name == part) {
                Some(f) => &f.value,
                None => return Ok(None),
            },
            _ => {
                return Err(Bottom::eval(format!(
                    "template: can't evaluate field {part}"
                )));
            }
        };
    }
    Ok(Some(cur))
}

/// Go's `fmt.Print` of a decoded JSON value (`map[a:1]`, `[1 2]`).
fn print_go(out: &mut String, d: &Data) {
    match d {
        Data::Null => out.push_str("<nil>"),
        Data::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Data::Number { text, .. } => out.push_str(text),
        Data::String(s) => out.push_str(s),
        Data::Bytes(b) => out.push_str(&String::from_utf8_lossy(b)),
        Data::List(items) => {
            out.push('[');
            for (i, x) in items.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                print_go(out, x);
            }
            out.push(']');
        }
        Data::Struct(fields) => {
            let mut fs: Vec<_> = fields.iter().collect();
            fs.sort_by(|a, b| a.name.cmp(&b.name));
            out.push_str("map[");
            for (i, f) in fs.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                out.push_str(&f.name);
                out.push(':');
                print_go(out, &f.value);
            }
            out.push(']');
        }
    }
}

fn html_escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' => o.push_str("&#34;"),
            '\'' => o.push_str("&#39;"),
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '\0' => o.push('\u{FFFD}'),
            c => o.push(c),
        }
    }
    o
}

fn js_escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => o.push_str("\\\\"),
            '\'' => o.push_str("\\'"),
            '"' => o.push_str("\\\""),
            '<' => o.push_str("\\u003C"),
            '>' => o.push_str("\\u003E"),
            '&' => o.push_str("\\u0026"),
            '=' => o.push_str("\\u003D"),
            '\n' => o.push_str("\\n"),
            '\r' => o.push_str("\\r"),
            '\t' => o.push_str("\\t"),
            c if (c as u32) < 0x20 => o.push_str(&format!("\\u{:04X}", c as u32)),
            c => o.push(c),
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_print() {
        let mut s = String::new();
        print_go(&mut s, &Data::List(vec![Data::int("1"), Data::string("a")]));
        assert_eq!(s, "[1 a]");
    }
}
