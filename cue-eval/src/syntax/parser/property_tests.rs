//! Property tests for the front end.
//!
//! * Sources generated from a small CUE grammar parse without errors, and satisfy the laws that
//!   [`check_parser`] asserts: the formatted text parses to the same tree (modulo layout)
//!   and formatting is idempotent.
//! * Random token soup, valid or not, never panics the lexer, parser or formatter.

use proptest::prelude::*;

use super::{check_parser, parse};
use crate::ast::FileId;

/// A plain identifier: lower case, never a keyword or a predeclared constant.
fn plain_ident() -> impl Strategy<Value = String> {
    "[a-z][a-z0-9]{0,5}".prop_filter("keywords", |s| {
        !matches!(
            s.as_str(),
            "for" | "in" | "if" | "let" | "try" | "else" | "null" | "true" | "false" | "fallback"
        )
    })
}

fn ident() -> impl Strategy<Value = String> {
    prop_oneof![plain_ident(), "#[A-Z][a-z]{0,4}", "_[a-z]{1,4}",]
}

fn literal() -> impl Strategy<Value = String> {
    prop_oneof![
        (0u64..100_000).prop_map(|n| n.to_string()),
        (0u32..1000, 0u32..1000).prop_map(|(a, b)| format!("{a}.{b}")),
        "[a-z ]{0,8}".prop_map(|s| format!("\"{s}\"")),
        Just("null".to_string()),
        Just("true".to_string()),
        Just("_|_".to_string()),
        Just("1Ki".to_string()),
        Just("0x1F".to_string()),
        Just("'bytes'".to_string()),
    ]
}

fn expr() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![ident(), literal()];
    leaf.prop_recursive(4, 48, 6, |inner| {
        let binop = prop_oneof![
            Just("|"),
            Just("&"),
            Just("||"),
            Just("&&"),
            Just("=="),
            Just("<"),
            Just("+"),
            Just("-"),
            Just("*"),
            Just("/"),
            Just("=~"),
        ];
        let unop = prop_oneof![Just("-"), Just("!"), Just("*"), Just(">="), Just("!=")];
        prop_oneof![
            (inner.clone(), binop, inner.clone()).prop_map(|(a, o, b)| format!("{a} {o} {b}")),
            (unop, inner.clone()).prop_map(|(o, a)| format!("{o}{a}")),
            inner.clone().prop_map(|a| format!("({a})")),
            prop::collection::vec(inner.clone(), 0..4).prop_map(|v| format!("[{}]", v.join(", "))),
            (ident(), ident()).prop_map(|(a, b)| format!("{a}.{b}")),
            (ident(), prop::collection::vec(inner.clone(), 0..3))
                .prop_map(|(f, a)| format!("{f}({})", a.join(", "))),
            (ident(), inner.clone()).prop_map(|(a, i)| format!("{a}[{i}]")),
            inner.clone().prop_map(|a| format!("\"x\\({a})y\"")),
            prop::collection::vec((ident(), inner.clone()), 0..4).prop_map(|v| {
                let fields: Vec<String> = v.iter().map(|(l, e)| format!("{l}: {e}")).collect();
                format!("{{{}}}", fields.join(", "))
            }),
        ]
    })
}

fn decl() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => (ident(), prop_oneof![Just(""), Just("?"), Just("!")], expr())
            .prop_map(|(l, m, e)| format!("{l}{m}: {e}")),
        1 => (ident(), ident(), expr()).prop_map(|(a, b, e)| format!("{a}: {b}: {e}")),
        1 => (ident(), expr()).prop_map(|(l, e)| format!("[{l}]: {e}")),
        1 => (ident(), expr()).prop_map(|(l, e)| format!("let {l}_v = {e}")),
        1 => (ident(), expr(), ident(), expr()).prop_map(|(x, src, l, e)| {
            format!("for {x} in {src} {{\n\t{l}: {e}\n}}")
        }),
        1 => (expr(), ident(), expr()).prop_map(|(c, l, e)| format!("if {c} {{{l}: {e}}}")),
        1 => (ident(), expr()).prop_map(|(l, e)| format!("{l}: {e} @go({l})")),
        1 => (ident(), expr()).prop_map(|(l, e)| format!("// comment\n{l}: {e} // trailing\n")),
    ]
}

fn file() -> impl Strategy<Value = String> {
    (
        prop::option::of(plain_ident()),
        prop::collection::vec(
            (decl(), prop_oneof![Just("\n"), Just("\n\n"), Just(", ")]),
            0..8,
        ),
    )
        .prop_map(|(pkg, decls)| {
            let mut s = String::new();
            if let Some(p) = pkg {
                s.push_str(&format!("package {p}\n\n"));
            }
            for (d, sep) in decls {
                s.push_str(&d);
                s.push_str(sep);
            }
            s
        })
}

fn soup() -> impl Strategy<Value = String> {
    let tok = prop_oneof![
        Just("a"),
        Just("#B"),
        Just("1"),
        Just("2.5"),
        Just("\"s\""),
        Just("\"\\(x)\""),
        Just("\"\\("),
        Just(")"),
        Just("("),
        Just("["),
        Just("]"),
        Just("{"),
        Just("}"),
        Just(":"),
        Just("?"),
        Just("!"),
        Just(","),
        Just("..."),
        Just("|"),
        Just("&"),
        Just("*"),
        Just("="),
        Just("for"),
        Just("in"),
        Just("if"),
        Just("let"),
        Just("package"),
        Just("import"),
        Just("@a(x)"),
        Just("// c"),
        Just("\n"),
        Just("'''"),
        Just("\"\"\""),
        Just("_|_"),
        Just("~"),
    ];
    prop::collection::vec((tok, prop_oneof![Just(""), Just(" "), Just("\n")]), 0..40).prop_map(
        |v| {
            v.into_iter()
                .map(|(t, s)| format!("{t}{s}"))
                .collect::<String>()
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn generated_sources_parse_and_round_trip(src in file()) {
        let (_, errors) = parse(FileId(0), &src);
        prop_assert!(errors.is_empty(), "{src}\n{errors:?}");
        check_parser(&src);
    }

    #[test]
    fn token_soup_never_panics(src in soup()) {
        check_parser(&src);
    }
}
