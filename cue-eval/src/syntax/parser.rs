//! The parser facade: [`parse`] turns source text into an [`ast::File`] and a list of errors.
//!
//! Parsing never fails. The generated LALRPOP parser (private, in `grammar.lalrpop`) recovers at
//! declarations and list elements, and the lexer closes brackets left open at the end of input,
//! so a file with one typo still yields a tree for everything else and one diagnostic.
//!
//! Valid input, nearly all input, first goes through the hand-written recursive-descent parser
//! in [`descent`], which builds the same tree about twice as fast; at its first syntax error it
//! gives up and the grammar parses the file again, so every diagnostic comes from the grammar.

use lalrpop_util::{ErrorRecovery, ParseError as LalrpopError, lalrpop_mod};

use crate::ast::{self, *};
use crate::lexer::{LexError, Lexer, Tok};

#[cfg(test)]
mod data_tests;
mod descent;
#[cfg(test)]
mod property_tests;

lalrpop_mod!(
    #[allow(
        clippy::all,
        clippy::pedantic,
        unused_parens,
        unused_imports,
        dead_code
    )]
    grammar,
    "/syntax/grammar.rs"
);

/// A syntax error: where, and what was expected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// Where the parser stopped.
    pub span: Span,
    /// What it expected there.
    pub message: String,
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ParseError {}

/// Parses one CUE source file. The tree is always returned; `errors` is empty when the file is
/// valid. Errors are in source order.
pub fn parse(file: FileId, src: &str) -> (ast::File, Vec<ParseError>) {
    parse_with(file, src, true)
}

/// [`parse`], optionally without collecting comments: the evaluator never reads them, and the
/// vendored schemas of a module are mostly documentation comments.
pub fn parse_with(file: FileId, src: &str, comments: bool) -> (ast::File, Vec<ParseError>) {
    let mut lexer = Lexer::new(file, src);
    lexer.keep_comments = comments;
    let mut ctx = Ctx {
        file,
        errors: Vec::new(),
        field_attrs: true,
    };
    if let Ok(decls) = descent::parse_file(&mut ctx, lexer.by_ref())
        && lexer.errors.is_empty()
    {
        let comments = std::mem::take(&mut lexer.comments);
        return finish(file, src, decls, comments, Vec::new());
    }
    parse_grammar(file, src, comments)
}

/// [`parse_with`] through the LALRPOP grammar alone: the path of input with syntax errors, and
/// the reference the fast path is checked against.
fn parse_grammar(file: FileId, src: &str, comments: bool) -> (ast::File, Vec<ParseError>) {
    let mut lexer = Lexer::new(file, src);
    lexer.keep_comments = comments;
    let mut decls = Vec::new();
    let mut errors = Vec::new();
    parse_decls(
        file,
        &grammar::FileParser::new(),
        &mut lexer,
        &mut decls,
        &mut errors,
    );
    let comments = std::mem::take(&mut lexer.comments);
    finish(file, src, decls, comments, errors)
}

/// Parses only the given byte ranges of `src`, each one or more whole top-level declarations,
/// in order. Positions are those of `src`. Comments are not collected, and neither are the
/// attributes written after a field's value (`a: int @go(A)`): the loader parses ranges only
/// of files outside the main module, whose field attributes nothing reads (`@tag` and
/// `@embed` apply in the main module, and [`crate::Value::attributes`] reads the main
/// package), while the vendored Kubernetes schemas carry one or two on every field.
/// Declaration attributes (`@if(x)` before the package clause) are kept. (Input with syntax
/// errors goes through the grammar, which keeps field attributes too.)
///
/// All ranges go through one run of the parser: the tokens of each range, lexed on their own,
/// follow each other with a comma between (the one the lexer inserts at the end of a range, or
/// one added when it does not), so a file with hundreds of kept declarations does not set a
/// parser up hundreds of times.
pub fn parse_ranges(
    file: FileId,
    src: &str,
    ranges: &[(usize, usize)],
) -> (ast::File, Vec<ParseError>) {
    let mut errors = Vec::new();
    let mut ctx = Ctx {
        file,
        errors: Vec::new(),
        field_attrs: false,
    };
    let mut tokens = RangeTokens {
        lexers: range_lexers(file, src, ranges, &mut errors).into_iter(),
        current: None,
        last_comma: true,
        errors: &mut errors,
    };
    if let Ok(decls) = descent::parse_file(&mut ctx, tokens.by_ref()) {
        tokens.flush_current();
        if errors.is_empty() {
            return finish(file, src, decls, Vec::new(), errors);
        }
    }
    let mut errors = Vec::new();
    let lexers = range_lexers(file, src, ranges, &mut errors);
    let mut ctx = Ctx {
        file,
        errors: Vec::new(),
        field_attrs: true,
    };
    let mut tokens = RangeTokens {
        lexers: lexers.into_iter(),
        current: None,
        last_comma: true,
        errors: &mut errors,
    };
    let decls = match grammar::FileParser::new().parse(&mut ctx, tokens.by_ref().map(Ok)) {
        Ok(d) => d,
        Err(e) => {
            let err = ctx.convert(e);
            ctx.errors.push(err);
            Vec::new()
        }
    };
    // The parser may stop early on an error: the lexers it did not reach have nothing to say.
    tokens.flush_current();
    errors.append(&mut ctx.errors);
    finish(file, src, decls, Vec::new(), errors)
}

/// One lexer per range, each ready at the start of its range and stopping at its end; a range
/// that is not within `src` is reported in `errors` and left out.
fn range_lexers<'s>(
    file: FileId,
    src: &'s str,
    ranges: &[(usize, usize)],
    errors: &mut Vec<ParseError>,
) -> Vec<(Lexer<'s>, usize)> {
    let mut lexers = Vec::with_capacity(ranges.len());
    for &(start, end) in ranges {
        let Some(text) = src.get(..end).filter(|t| t.is_char_boundary(start)) else {
            errors.push(ParseError {
                span: Span::new(file, start.min(src.len()), start.min(src.len())),
                message: "internal error: a declaration range is not within the file".into(),
            });
            continue;
        };
        let mut lexer = Lexer::new(file, text);
        lexer.keep_comments = false;
        lexer.skip_to(start);
        lexers.push((lexer, end));
    }
    lexers
}

/// The tokens of several lexers in a row, a comma between each two; lexer errors are moved
/// to `errors` as each lexer ends.
struct RangeTokens<'s, 'e, I: Iterator<Item = (Lexer<'s>, usize)>> {
    lexers: I,
    current: Option<(Lexer<'s>, usize)>,
    last_comma: bool,
    errors: &'e mut Vec<ParseError>,
}

impl<'s, I: Iterator<Item = (Lexer<'s>, usize)>> RangeTokens<'s, '_, I> {
    fn flush_current(&mut self) {
        if let Some((lexer, _)) = self.current.take() {
            self.errors
                .extend(lexer.errors.into_iter().map(|e| ParseError {
                    span: e.span,
                    message: e.message,
                }));
        }
    }
}

impl<'s, I: Iterator<Item = (Lexer<'s>, usize)>> Iterator for RangeTokens<'s, '_, I> {
    type Item = crate::lexer::Spanned<'s>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if self.current.is_none() {
                self.current = Some(self.lexers.next()?);
            }
            let (lexer, end) = self.current.as_mut()?;
            if let Some(t) = lexer.next() {
                self.last_comma = matches!(t.1, Tok::Comma(_));
                return Some(t);
            }
            let end = *end;
            self.flush_current();
            if !self.last_comma {
                self.last_comma = true;
                return Some((end, Tok::Comma("\n"), end));
            }
        }
    }
}

/// Runs the parser over `lexer`, appending declarations and errors (the lexer's too).
fn parse_decls(
    file: FileId,
    parser: &grammar::FileParser,
    lexer: &mut Lexer<'_>,
    decls: &mut Vec<ast::Decl>,
    errors: &mut Vec<ParseError>,
) {
    let mut ctx = Ctx {
        file,
        errors: Vec::new(),
        field_attrs: true,
    };
    match parser.parse(&mut ctx, lexer.by_ref().map(Ok)) {
        Ok(d) => decls.extend(d),
        Err(e) => {
            let err = ctx.convert(e);
            ctx.errors.push(err);
        }
    }
    errors.extend(lexer.errors.drain(..).map(|e| ParseError {
        span: e.span,
        message: e.message,
    }));
    errors.append(&mut ctx.errors);
}

fn finish(
    file: FileId,
    src: &str,
    decls: Vec<ast::Decl>,
    comments: Vec<ast::Comment>,
    mut errors: Vec<ParseError>,
) -> (ast::File, Vec<ParseError>) {
    check_preamble(&decls, &mut errors);
    errors.sort_by_key(|e| (e.span.start, e.span.end));
    errors.dedup_by(|a, b| a.span.start == b.span.start && a.message == b.message);
    let file = ast::File {
        span: Span::new(file, 0, src.len()),
        decls,
        comments,
    };
    (file, errors)
}

/// Parses bytes that may not be valid UTF-8: invalid sequences are reported (one error each, as
/// `illegal UTF-8 encoding`) and replaced by U+FFFD before parsing; spans refer to the replaced
/// text.
pub fn parse_bytes(file: FileId, src: &[u8]) -> (ast::File, Vec<ParseError>) {
    match std::str::from_utf8(src) {
        Ok(s) => parse(file, s),
        Err(_) => {
            let text = String::from_utf8_lossy(src);
            let mut offset = 0;
            // One error per run of invalid bytes; each invalid sequence became one U+FFFD.
            let mut bad: Vec<(usize, usize)> = Vec::new();
            for chunk in src.utf8_chunks() {
                offset += chunk.valid().len();
                if !chunk.invalid().is_empty() {
                    let end = offset + '\u{fffd}'.len_utf8();
                    match bad.last_mut() {
                        Some(last) if last.1 == offset => last.1 = end,
                        _ => bad.push((offset, end)),
                    }
                    offset = end;
                }
            }
            let (f, mut errors) = parse(file, &text);
            errors.extend(bad.into_iter().map(|(start, end)| ParseError {
                span: Span::new(file, start, end),
                message: "illegal UTF-8 encoding".to_string(),
            }));
            errors.sort_by_key(|e| (e.span.start, e.span.end));
            (f, errors)
        }
    }
}

/// Reports a package clause or import that is not in the preamble of the file.
fn check_preamble(decls: &[Decl], errors: &mut Vec<ParseError>) {
    // 0: only attributes so far; 1: after the package clause; 2: after imports; 3: in the body.
    let mut stage = 0;
    for d in decls {
        match d {
            Decl::Attribute(_) if stage == 0 => {}
            Decl::Package(p) => {
                if stage > 0 {
                    errors.push(ParseError {
                        span: p.span,
                        message: "unexpected package clause: it must be the first declaration"
                            .to_string(),
                    });
                }
                stage = stage.max(1);
            }
            Decl::Import(i) => {
                if stage > 2 {
                    errors.push(ParseError {
                        span: i.span,
                        message: "imports must come before other declarations".to_string(),
                    });
                }
                stage = stage.max(2);
            }
            _ => stage = 3,
        }
    }
}

/// State shared with the grammar's actions: the file id for spans, and the errors found while
/// building the tree.
pub struct Ctx {
    file: FileId,
    errors: Vec<ParseError>,
    /// Whether the fast path keeps the attributes written after a field's value; a parse of
    /// kept declaration ranges leaves them out (see [`parse_ranges`]).
    field_attrs: bool,
}

type Recovery<'s> = ErrorRecovery<usize, Tok<'s>, LexError>;

impl Ctx {
    pub(crate) fn span(&self, l: usize, r: usize) -> Span {
        Span::new(self.file, l, r)
    }

    fn error(&mut self, span: Span, message: impl Into<String>) {
        self.errors.push(ParseError {
            span,
            message: message.into(),
        });
    }

    pub(crate) fn ident(&mut self, l: usize, r: usize, name: &str) -> Ident {
        Ident {
            span: self.span(l, r),
            name: name.into(),
        }
    }

    pub(crate) fn lit(&mut self, l: usize, r: usize, kind: LitKind, raw: &str) -> Expr {
        Expr::Lit(BasicLit {
            span: self.span(l, r),
            kind,
            raw: raw.into(),
        })
    }

    pub(crate) fn string(&mut self, l: usize, r: usize, raw: &str) -> Expr {
        self.lit(l, r, quote_kind(raw), raw)
    }

    /// Builds the tree of `first op operand op operand …` by precedence climbing: operators of
    /// the same precedence associate to the left. Each operand comes with its start and end; a
    /// node spans from its leftmost operand's start to its rightmost operand's end. No recursion:
    /// an explicit stack, so a long chain costs no stack depth.
    pub(crate) fn binary_chain(
        &mut self,
        first: (usize, Expr, usize),
        rest: Vec<(BinaryOp, usize, Expr, usize)>,
    ) -> Expr {
        let mut operands: Vec<(usize, Expr, usize)> = Vec::with_capacity(rest.len() + 1);
        let mut ops: Vec<BinaryOp> = Vec::with_capacity(rest.len());
        operands.push(first);
        for (op, l, e, r) in rest {
            while ops
                .last()
                .is_some_and(|top| top.precedence() >= op.precedence())
            {
                self.reduce_top(&mut operands, &mut ops);
            }
            ops.push(op);
            operands.push((l, e, r));
        }
        while !ops.is_empty() {
            self.reduce_top(&mut operands, &mut ops);
        }
        operands
            .pop()
            .map_or(Expr::Bottom(self.span(0, 0)), |(_, e, _)| e)
    }

    /// Combines the two topmost operands with the topmost operator.
    fn reduce_top(&self, operands: &mut Vec<(usize, Expr, usize)>, ops: &mut Vec<BinaryOp>) {
        let (Some(op), Some((_, b, r)), Some((l, a, _))) =
            (ops.pop(), operands.pop(), operands.pop())
        else {
            return;
        };
        operands.push((
            l,
            Expr::Binary {
                span: self.span(l, r),
                op,
                lhs: Box::new(a),
                rhs: Box::new(b),
            },
            r,
        ));
    }

    pub(crate) fn interpolation(
        &mut self,
        l: usize,
        r: usize,
        first: (usize, &str, usize),
        e: Expr,
        rest: Vec<((usize, &str, usize), Expr)>,
        last: (usize, &str, usize),
    ) -> Interpolation {
        let kind = quote_kind(first.1);
        let frag = |(fl, s, fr): (usize, &str, usize)| BasicLit {
            span: Span::new(self.file, fl, fr),
            kind,
            raw: s.into(),
        };
        let mut fragments = vec![frag(first)];
        let mut exprs = vec![e];
        for (f, e) in rest {
            fragments.push(frag(f));
            exprs.push(e);
        }
        fragments.push(frag(last));
        Interpolation {
            span: self.span(l, r),
            fragments,
            exprs,
        }
    }

    /// Turns the expression parsed left of a `:` into a label, or reports why it is not one.
    pub(crate) fn label(
        &mut self,
        e: Expr,
        marker: Constraint,
    ) -> (Option<Ident>, Label, Constraint) {
        let span = e.span();
        let (alias, e) = match e {
            Expr::Alias { ident, expr, .. } => (Some(*ident), *expr),
            e => (None, e),
        };
        let (constraint, e) = match e {
            Expr::Optional { expr, .. } => {
                if marker == Constraint::Required {
                    self.error(span, "a field cannot be both optional and required");
                }
                (Constraint::Optional, *expr)
            }
            e => (marker, e),
        };
        let label = match e {
            Expr::Ident(i) => Label::Ident(i),
            Expr::Lit(lit) => match lit.kind {
                LitKind::Null | LitKind::True | LitKind::False => Label::Ident(Ident {
                    span: lit.span,
                    name: lit.raw,
                }),
                LitKind::String if !lit.raw.trim_start_matches('#').starts_with("\"\"\"") => {
                    Label::String(Box::new(Expr::Lit(lit)))
                }
                _ => {
                    self.error(lit.span, format!("invalid label {}", lit.raw));
                    Label::Ident(Ident {
                        span: lit.span,
                        name: "_".into(),
                    })
                }
            },
            e @ Expr::Interpolation(_) => Label::String(Box::new(e)),
            Expr::Paren { span, expr } => Label::Paren { span, expr },
            Expr::List(ListLit { span, elems }) => {
                // Anything but one expression (`[for x in y {x}]: v`, `[]: v`) parses, as in CUE;
                // the compiler rejects it ("comprehension values not allowed in this position").
                let list = |elems| Box::new(Expr::List(ListLit { span, elems }));
                match <[ListElem; 1]>::try_from(elems) {
                    Ok([ListElem::Expr(x)]) => Label::Pattern {
                        span,
                        expr: Box::new(x),
                    },
                    Ok([other]) => Label::List {
                        span,
                        list: list(vec![other]),
                    },
                    Err(elems) => Label::List {
                        span,
                        list: list(elems),
                    },
                }
            }
            other => {
                let s = other.span();
                self.error(
                    s,
                    "invalid label: expected identifier, string, (expr) or [pattern]",
                );
                Label::Paren {
                    span: s,
                    expr: Box::new(other),
                }
            }
        };
        (alias, label, constraint)
    }

    /// Records a recovered syntax error and returns the span of the skipped text.
    pub(crate) fn recover(&mut self, e: Recovery<'_>, l: usize, r: usize) -> Span {
        let err = self.convert(e.error);
        let start = err.span.start as usize;
        self.errors.push(err);
        let end = e.dropped_tokens.last().map_or(r, |t| t.2).max(r);
        self.span(l.min(start), end.max(start))
    }

    fn convert(&self, e: LalrpopError<usize, Tok<'_>, LexError>) -> ParseError {
        match e {
            LalrpopError::InvalidToken { location } => ParseError {
                span: self.span(location, location),
                message: "illegal token".to_string(),
            },
            LalrpopError::UnrecognizedEof { location, expected } => ParseError {
                span: self.span(location, location),
                message: format!("{}, found 'EOF'", expectation(&expected)),
            },
            LalrpopError::UnrecognizedToken {
                token: (l, tok, r),
                expected,
            } => ParseError {
                span: self.span(l, r),
                message: format!("{}, found {}", expectation(&expected), tok.describe()),
            },
            LalrpopError::ExtraToken { token: (l, tok, r) } => ParseError {
                span: self.span(l, r),
                message: format!("unexpected {}", tok.describe()),
            },
            LalrpopError::User { error } => ParseError {
                span: error.span,
                message: error.message,
            },
        }
    }
}

/// Whether a literal (or the first fragment of an interpolation) is a string or bytes: bytes
/// open with a single quote, after any `#` padding.
fn quote_kind(raw: &str) -> LitKind {
    if raw.trim_start_matches('#').starts_with('\'') {
        LitKind::Bytes
    } else {
        LitKind::String
    }
}

/// Describes what the parser expected, in the terse style of the Go implementation: a short
/// list of tokens, or `expected operand` / `expected declaration` when the list is long.
fn expectation(expected: &[String]) -> String {
    let names: Vec<String> = expected.iter().map(|s| display_terminal(s)).collect();
    let has = |t: &str| expected.iter().any(|e| e == t);
    if names.len() <= 3 {
        return format!("expected {}", join_or(&names));
    }
    if has("\"...\"") && has("\"}\"") {
        return "expected declaration or '}'".to_string();
    }
    if has("\"]\"") && has("\"...\"") {
        return "expected list element or ']'".to_string();
    }
    if has("\",\"") && has("\"}\"") {
        return "expected ',' or '}'".to_string();
    }
    if has("\",\"") && has("\"]\"") {
        return "expected ',' or ']'".to_string();
    }
    if has("\",\"") && has("\")\"") {
        return "expected ',' or ')'".to_string();
    }
    if has("IdentTok") && has("\"(\"") {
        return "expected operand".to_string();
    }
    format!("expected one of {}", names.join(", "))
}

fn display_terminal(t: &str) -> String {
    match t {
        "IdentTok" => "identifier".to_string(),
        "Int" | "Float" => "number".to_string(),
        "Str" => "string".to_string(),
        "Attr" => "attribute".to_string(),
        "InterpStart" | "InterpMid" | "InterpEnd" => "interpolation".to_string(),
        s if s.starts_with('"') && s.ends_with('"') && s.len() >= 2 => {
            format!("'{}'", &s[1..s.len() - 1])
        }
        s => s.to_string(),
    }
}

fn join_or(items: &[String]) -> String {
    match items {
        [] => "nothing".to_string(),
        [a] => a.clone(),
        [init @ .., last] => format!("{} or {}", init.join(", "), last),
    }
}

/// Checks the parser's invariants on arbitrary input, for fuzzing: no panic, the fast path and
/// the grammar give the same tree and errors, and when the input parses cleanly, formatting it
/// gives text that parses to the same tree and formats to itself.
pub fn check_parser(src: &str) {
    crate::lexer::check_lexer(src);
    let (file, errors) = parse(FileId(0), src);
    let (by_grammar, grammar_errors) = parse_grammar(FileId(0), src, true);
    assert!(
        file == by_grammar && errors == grammar_errors,
        "the fast path and the grammar disagree\n--- input\n{src}"
    );
    for e in &errors {
        assert!(e.span.start <= e.span.end && e.span.end as usize <= src.len().max(1));
    }
    if !errors.is_empty() {
        return;
    }
    let formatted = crate::format::format_file(&file, src);
    let (again, errors2) = parse(FileId(0), &formatted);
    assert!(
        errors2.is_empty(),
        "formatted output does not parse: {errors2:?}\n--- input\n{src}\n--- output\n{formatted}"
    );
    assert_eq!(
        crate::dump::dump_file(&file),
        crate::dump::dump_file(&again),
        "round trip changed the tree\n--- input\n{src}\n--- output\n{formatted}"
    );
    let twice = crate::format::format_file(&again, &formatted);
    assert_eq!(formatted, twice, "formatting is not idempotent");
}

#[cfg(test)]
mod range_tests {
    use super::*;

    fn fields(decls: &[ast::Decl]) -> Vec<&ast::Field> {
        decls
            .iter()
            .filter_map(|d| match d {
                ast::Decl::Field(f) => Some(f),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn parsing_ranges_leaves_out_field_attributes_only() {
        let src = "@if(x)\npackage p\n\na: int @go(A) @protobuf(1)\nb: {c: string @go(C)}\n";
        let a = src.find("a:").unwrap();
        let b = src.find("b:").unwrap();
        let ranges = [(0, "@if(x)".len()), (a, b - 1), (b, src.len() - 1)];
        let (ranged, errors) = parse_ranges(FileId(0), src, &ranges);
        assert!(errors.is_empty(), "{errors:?}");
        let (whole, _) = parse(FileId(0), src);

        assert!(matches!(&ranged.decls[0], ast::Decl::Attribute(at) if &*at.text == "@if(x)"));
        let (kept, all) = (fields(&ranged.decls), fields(&whole.decls));
        assert_eq!(kept.len(), 2);
        assert_eq!(all[0].attrs.len(), 2);
        assert!(kept[0].attrs.is_empty());
        assert_eq!(
            kept[0].span, all[0].span,
            "the field still ends after its attributes"
        );
        let ast::Expr::Struct(inner) = &kept[1].value else {
            panic!("b is a struct")
        };
        assert!(fields(&inner.decls)[0].attrs.is_empty());
    }
}
