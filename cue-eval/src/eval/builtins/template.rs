//! The `text/template` package: `Execute` (Go `text/template` semantics over the data as CUE
//! decodes it into a Go `any`), `HTMLEscape` and `JSEscape`.
//!
//! The engine is our own small lexer/parser ([`parse`]), executor ([`exec`]) and `fmt` subset
//! ([`fmt`]). `gtmpl` was considered: it follows Go's grammar only loosely (no `break`/
//! `continue`, `block`, Go's `fmt` verbs or Go's error texts), so its output could not be
//! trusted to match CUE's byte for byte.

use super::k::*;
use super::{R, Runtime, StdMember, a_str, func, string};
use crate::eval::value::{Bottom, Value};
use std::rc::Rc;

pub(super) static MEMBERS: &[StdMember] = &[
    func("text/template.Execute", &[S, T], execute),
    func("text/template.HTMLEscape", &[S], |_, a| {
        string(html_escape(&a_str(a, 0)?))
    }),
    func("text/template.JSEscape", &[S], |_, a| {
        string(js_escape(&a_str(a, 0)?))
    }),
];

pub(crate) mod exec;
mod float;
mod fmt;
mod parse;

fn execute(rt: &mut Runtime, a: &[Value]) -> R {
    let tmpl = a_str(a, 0)?;
    let data = template_value(rt, &a[1])?;
    let parsed = parse::parse(&tmpl).map_err(Bottom::eval)?;
    let out = exec::Exec::run(&parsed, data).map_err(Bottom::eval)?;
    string(out)
}

/// The template data of `v`. The data of a finished vertex can no longer change, so it is
/// converted once and kept for the next call on the same vertex (`Runtime::template_memo`),
/// also when the calls pass definition copies of that vertex (`#config` in each template).
fn template_value(rt: &mut Runtime, v: &Value) -> Result<exec::V, Rc<Bottom>> {
    let Value::Vertex(w) = v else {
        let data = rt.value_to_data(v).map_err(non_concrete_data)?;
        return Ok(exec::V::from_data(&data));
    };
    let (src, copy) = rt.template_source(*w);
    if let Some((k, data)) = &rt.template_memo
        && *k == src
    {
        return Ok(data.clone());
    }
    let data = rt
        .value_to_data(&Value::Vertex(src))
        .map_err(non_concrete_data)?;
    let data = exec::V::from_data(&data);
    if copy || rt.data_is_final(src) {
        rt.template_memo = Some((src, data.clone()));
    }
    Ok(data)
}

/// CUE reports template data that is not concrete as `error in call to text/template.Execute:
/// cannot convert non-concrete value string`, still an incomplete error.
fn non_concrete_data(b: Rc<Bottom>) -> Rc<Bottom> {
    match b.msg.strip_prefix("incomplete value ") {
        Some(rest) if b.is_incomplete() => {
            let mut bb = (*b).clone();
            bb.msg = format!(
                "error in call to text/template.Execute: cannot convert non-concrete value {rest}"
            );
            Rc::new(bb)
        }
        _ => b,
    }
}

pub(super) fn html_escape(s: &str) -> String {
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

/// Go's `JSEscapeString`: backslash escapes for quotes and the backslash, `\u003C` style for
/// `< > & =` and ASCII controls, `\u2028` style for runes that are not printable; DEL and
/// printable runes stay as they are.
pub(super) fn js_escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => o.push_str("\\\\"),
            '\'' => o.push_str("\\'"),
            '"' => o.push_str("\\\""),
            '<' | '>' | '&' | '=' => o.push_str(&format!("\\u{:04X}", c as u32)),
            c if c < ' ' => o.push_str(&format!("\\u{:04X}", c as u32)),
            c if c.is_ascii() || crate::syntax::quote::is_print(c) => o.push(c),
            c => o.push_str(&format!("\\u{:04X}", c as u32)),
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode::Data;

    fn run(t: &str, data: &Data) -> String {
        let p = match parse::parse(t) {
            Ok(p) => p,
            Err(e) => return e,
        };
        exec::Exec::run(&p, exec::V::from_data(data)).unwrap_or_else(|e| e)
    }

    fn data() -> Data {
        let f = |n: &str, v: Data| crate::encode::Field {
            name: n.into(),
            value: v,
            yaml_tag: None,
        };
        Data::Struct(vec![
            f("name", Data::string("web")),
            f("n", Data::int("3")),
            f(
                "x",
                Data::Number {
                    text: "1.5".into(),
                    float: true,
                },
            ),
            f(
                "list",
                Data::List(vec![
                    Data::string("a"),
                    Data::string("b"),
                    Data::string("c"),
                ]),
            ),
            f(
                "m",
                Data::Struct(vec![f("z", Data::int("1")), f("a", Data::int("2"))]),
            ),
            f("empty", Data::List(vec![])),
            f("ok", Data::Bool(true)),
        ])
    }

    #[test]
    fn actions_and_control_flow() {
        let d = data();
        let cases = [
            ("{{.name}}-{{.n}}-{{.x}}", "web-3-1.5"),
            ("a {{- \" b \" -}} c", "a b c"),
            ("{{/* c */}}x{{- /* c */ -}} y", "xy"),
            ("{{if .ok}}yes{{else}}no{{end}}", "yes"),
            ("{{if not .ok}}a{{else if eq .n 3}}b{{else}}c{{end}}", "b"),
            (
                "{{range $i, $v := .list}}{{$i}}={{$v}};{{end}}",
                "0=a;1=b;2=c;",
            ),
            ("{{range .m}}{{.}}{{end}}", "21"),
            ("{{range $k, $v := .m}}{{$k}}{{end}}", "az"),
            ("{{range .empty}}x{{else}}none{{end}}", "none"),
            (
                "{{range .list}}{{if eq . \"b\"}}{{break}}{{end}}{{.}}{{end}}",
                "a",
            ),
            (
                "{{range .list}}{{if eq . \"b\"}}{{continue}}{{end}}{{.}}{{end}}",
                "ac",
            ),
            (
                "{{with .m}}{{.a}}{{end}}{{with .missing}}x{{else}}y{{end}}",
                "2y",
            ),
            ("{{$x := 1}}{{if .ok}}{{$x = 2}}{{end}}{{$x}}", "2"),
            (
                "{{define \"t\"}}[{{.}}]{{end}}{{template \"t\" .name}}",
                "[web]",
            ),
            ("{{block \"b\" .n}}<{{.}}>{{end}}", "<3>"),
            (
                "{{len .list}} {{index .list 1}} {{index .m \"a\"}} {{slice .name 1 2}}",
                "3 b 2 e",
            ),
            (
                "{{printf \"%s=%d %5.1f %q\" .name .n .x .name}}",
                "web=3   1.5 \"web\"",
            ),
            (
                "{{print 1 2 \"a\" 3}}|{{println .n .name}}",
                "1 2a3|3 web\n",
            ),
            ("{{.name | printf \"%s!\"}}", "web!"),
            ("{{(index .list 0) | len}}", "1"),
            (
                "{{and .ok .n}} {{or .empty .name}} {{and .empty .n}}",
                "3 web []",
            ),
            (
                "{{lt .n 4}} {{ge .x 2.0}} {{ne .name \"x\"}}",
                "true false true",
            ),
            (
                "{{html \"<a&b>\"}} {{js \"it's\"}} {{urlquery \"a b&c\"}}",
                "&lt;a&amp;b&gt; it\\'s a+b%26c",
            ),
            (
                "{{.m}} {{.list}} {{.nope}}",
                "map[a:2 z:1] [a b c] <no value>",
            ),
            (
                "{{$}}",
                "map[empty:[] list:[a b c] m:map[a:2 z:1] n:3 name:web ok:true x:1.5]",
            ),
        ];
        for (t, want) in cases {
            assert_eq!(run(t, &d), want, "{t}");
        }
    }

    #[test]
    fn errors() {
        let d = data();
        // cue v0.17.1: `can't evaluate field x in type interface {}` (CUE hands Go an `any`).
        assert!(run("{{.name.x}}", &d).contains("can't evaluate field x in type interface {}"));
        assert!(run("{{if .ok}}", &d).contains("unexpected EOF"));
        assert!(run("{{end}}", &d).contains("unexpected {{end}}"));
        assert!(run("{{nofunc 1}}", &d).contains("function \"nofunc\" not defined"));
        assert!(run("{{call .n}}", &d).contains("error calling call"));
        assert!(run("{{lt .n .name}}", &d).contains("incompatible types for comparison"));
        assert!(run("{{template \"x\"}}", &d).contains("template \"x\" not defined"));
        assert!(
            run(
                "{{define \"r\"}}{{template \"r\"}}{{end}}{{template \"r\"}}",
                &d
            )
            .contains("depth")
        );
    }

    /// Calls on the same finished value convert it once (`Runtime::template_memo`); a value
    /// that is not a finished vertex of its own (a reference, a literal) gives the same results
    /// as converting on every call.
    #[test]
    fn the_data_of_a_finished_value_is_converted_once() {
        let run = |src: &str| {
            let mut inst =
                crate::eval::api::Instance::from_sources(&[("t.cue".to_string(), src.to_string())])
                    .expect("compiles");
            let json = inst.export_json().expect("exports");
            (inst, json)
        };
        let head = "import \"text/template\"\nconfig: {name: \"web\", ports: [80, 443]}\n";
        let (mut inst, json) = run(&format!(
            "{head}out: [for i in [1, 2, 3] {{template.Execute(\"{{{{.name}}}}-\\(i) {{{{range .ports}}}}{{{{.}}}} {{{{end}}}}\", config)}}]\n"
        ));
        for i in 1..=3 {
            let want = format!("\"web-{i} 80 443 \"");
            assert!(json.contains(&want), "{want} in {json}");
        }
        let config = inst.rt.prog.labels.ident("config");
        let config = inst.rt.arc(inst.root, config).expect("config");
        assert_eq!(inst.rt.template_memo.as_ref().map(|m| m.0), Some(config));
        let (_, json) = run(&format!(
            "{head}ref: config\na: template.Execute(\"{{{{.name}}}}\", ref)\nb: template.Execute(\"{{{{.name}}}}\", ref)\nc: template.Execute(\"{{{{.x}}}}\", {{x: 1}})\nd: template.Execute(\"{{{{.x}}}}\", {{x: 2}})\n"
        ));
        for want in [
            r#""a": "web""#,
            r#""b": "web""#,
            r#""c": "1""#,
            r#""d": "2""#,
        ] {
            assert!(json.contains(want), "{want} in {json}");
        }
    }

    /// Calls on definition copies of a finished value (`#config` in a template used with
    /// `#config: config`) convert that value once, and keep it as the memo's key.
    #[test]
    fn copies_of_a_finished_value_convert_it_once() {
        let src = "import \"text/template\"\n#C: {name: string, port: *80 | int}\n\
            config: #C\nconfig: name: \"web\"\n\
            #T: {#config: #C, a: template.Execute(\"{{.name}}\", #config), \
            b: template.Execute(\"{{.name}}:{{.port}}\", #config)}\n\
            obj: #T & {#config: config}\n";
        let mut inst =
            crate::eval::api::Instance::from_sources(&[("t.cue".to_string(), src.to_string())])
                .expect("compiles");
        let json = inst.export_json().expect("exports");
        for want in [r#""a": "web""#, r#""b": "web:80""#] {
            assert!(json.contains(want), "{want} in {json}");
        }
        let config = inst.rt.prog.labels.ident("config");
        let config = inst.rt.arc(inst.root, config).expect("config");
        assert_eq!(inst.rt.template_memo.as_ref().map(|m| m.0), Some(config));
    }
}
