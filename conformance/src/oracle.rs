//! Reading the official `cue`'s error output, and deciding from it which files are syntax errors.
//!
//! `cue` prints its error list with `errors.Print`: each error is a header line,
//! `<field path>: <message>:` (the path and its `": "` are absent when the error has no path), then
//! one line per position, indented by four spaces, `    ./in.cue:3:5`. Paths of files are relative
//! to the working directory, which the corpus tool rewrote to `.`. [`parse_stderr`] splits that
//! text into [`Diagnostic`]s; [`syntax_errors`] then picks out the ones that the CUE scanner and
//! parser produce, which tell which source files the official parser rejects.
//!
//! # The syntax-error rule
//!
//! A source file of a case is *expected to be a syntax error* when the `eval` or `export` stderr
//! of its `expected.json` holds a diagnostic that
//!
//! 1. carries a *scanner or parser message*: the header, with its trailing `:` removed, starts
//!    with one of [`PARSER_MESSAGE_PREFIXES`] (copied from the messages of `cue/scanner` and
//!    `cue/parser` at v0.17.1: `expected …`, `missing ',' …`, `illegal …`, `string literal not
//!    terminated`, `comment not terminated`, the escape-sequence messages, `non-matching whitespace
//!    for multiline string`, the attribute messages, `identifiers starting with '__' are
//!    reserved`, `invalid import path`, …). The prefix must start the header: syntax errors have
//!    no field path, because they are raised before there is any value. Anchoring matters,
//!    since evaluation errors may contain the same words later in the line (`… 0 matched,
//!    expected 1`, `error in call to encoding/yaml.Unmarshal: expected a single YAML document`,
//!    `invalid operand 2 (found int, …)`). The header may also carry its position inline in Go's
//!    `file.cue:3:5: message` style, which is accepted too; or
//! 2. carries a *literal-decoding message*: `invalid string: …` or `invalid number: …`, alone or
//!    after a field path (`a.b: invalid string: …`). These come from the compiler's decoding of string and number literals
//!    (an invalid escape or multi-line string indentation the scanner let through), which this
//!    project's parser may well report itself; they are lexical errors in the source either way;
//!
//! and whose first position (or inline position) names that file, after removing the leading
//! `./`. Only the root-level files are given to `cue`, but a syntax error in a file reached
//! through an import surfaces in the same way with that file's path, so the rule covers
//! sub-directory and `cue.mod` files too. `eval_i` is ignored: it is the same load as `eval`.
//!
//! Compile-time errors that are not syntax (`cannot use _ as label`, `reference "x" not found`,
//! `unreferenced alias or let clause`, `builtin package "x" undefined`) all either carry a field
//! path or use other words, so such files must parse cleanly.
//!
//! In the public corpus of CUE v0.17.1 this rule selects no file at all: none of its cases has a
//! syntax error. It is written for the held-out cases and for future corpora.

use crate::corpus::Expected;

/// A position printed by `cue`: `./in.cue:3:5`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Position {
    /// The file as printed, with a leading `./` removed.
    pub file: String,
    pub line: u32,
    pub column: u32,
}

/// One error of `cue`'s error list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// The header line without its trailing `:` (which `cue` adds when positions follow).
    pub header: String,
    /// The header's inline `file:line:col: ` position, when it has one.
    pub inline_position: Option<Position>,
    /// The indented position lines that follow the header.
    pub positions: Vec<Position>,
}

impl Diagnostic {
    /// The message text: the header after any inline position.
    pub fn message(&self) -> &str {
        match &self.inline_position {
            Some(_) => split_inline_position(&self.header)
                .map(|(_, m)| m)
                .unwrap_or(&self.header),
            None => &self.header,
        }
    }

    /// The position that locates the error: the inline one, else the first indented one.
    pub fn primary_position(&self) -> Option<&Position> {
        self.inline_position.as_ref().or(self.positions.first())
    }
}

/// Parses a `file:line:col` position, dropping a leading `./`.
pub fn parse_position(s: &str) -> Option<Position> {
    let mut parts = s.rsplitn(3, ':');
    let column = parts.next()?.parse().ok()?;
    let line = parts.next()?.parse().ok()?;
    let file = parts.next()?;
    if file.is_empty() {
        return None;
    }
    Some(Position {
        file: file.strip_prefix("./").unwrap_or(file).to_owned(),
        line,
        column,
    })
}

/// Splits a Go-style `file.cue:3:5: message` header into its position and message.
fn split_inline_position(header: &str) -> Option<(Position, &str)> {
    // The position ends at the first ": " that follows a `.cue:<line>:<col>` prefix.
    let idx = header.find(".cue:")?;
    let rest = &header[idx + ".cue:".len()..];
    let end = rest.find(": ")?;
    let pos = parse_position(&header[..idx + ".cue:".len() + end])?;
    Some((pos, &rest[end + 2..]))
}

/// Splits `cue`'s stderr into diagnostics. Lines that are neither headers nor positions (a
/// message's own continuation lines) are appended to the header they follow.
pub fn parse_stderr(stderr: &str) -> Vec<Diagnostic> {
    let mut out: Vec<Diagnostic> = Vec::new();
    for line in stderr.lines() {
        if let Some(indented) = line.strip_prefix("    ")
            && let (Some(pos), Some(last)) = (parse_position(indented.trim()), out.last_mut())
        {
            last.positions.push(pos);
            continue;
        }
        if line.starts_with(char::is_whitespace)
            && let Some(last) = out.last_mut()
        {
            last.header.push('\n');
            last.header.push_str(line);
            continue;
        }
        if line.is_empty() {
            continue;
        }
        let header = line.strip_suffix(':').unwrap_or(line).to_owned();
        let inline_position = split_inline_position(&header).map(|(p, _)| p);
        out.push(Diagnostic {
            header,
            inline_position,
            positions: Vec::new(),
        });
    }
    out
}

/// Message beginnings of `cue/scanner` and `cue/parser` errors (CUE v0.17.1). Each must start the
/// message; see the module documentation.
pub const PARSER_MESSAGE_PREFIXES: &[&str] = &[
    // parser: errorExpected / expect / expectClosing / field and interpolation errors, e.g.
    // "expected operand, found '}'", "expected ':'; found x", "expected ')' for string
    // interpolation", "expected identifier for alias"; scanner: "expected newline after
    // multiline quote".
    "expected ",
    // parser: "missing ',' in struct literal", "missing ',' before newline in list literal".
    "missing ','",
    // scanner: "illegal character U+0023 '#'", "illegal UTF-8 encoding", "illegal byte order
    // mark", "illegal '_' in number", "illegal hexadecimal number", "illegal token '..'; …",
    // "illegal integer number", "illegal exponent in number", "illegal character NUL".
    "illegal ",
    "string literal not terminated",
    "comment not terminated",
    "octal escape not allowed",
    "hexadecimal escape not allowed",
    "unknown escape sequence",
    "escape sequence not terminated",
    "escape sequence is invalid Unicode code point",
    "non-matching whitespace for multiline string",
    // scanner: attribute scanning.
    "invalid attribute",
    "attribute missing ",
    "interpolation not allowed in attribute",
    "unexpected '",
    // parser: checks made while parsing.
    "identifiers starting with '__' are reserved",
    "square bracket must have exactly one element",
    "invalid import path",
    "invalid package name",
    "use of deprecated ",
    "unmatched close list",
    "unmatched comments",
];

/// Message beginnings of the compiler's literal-decoding errors, which may follow a field path.
pub const LITERAL_MESSAGE_PREFIXES: &[&str] = &["invalid string: ", "invalid number: "];

/// Whether a message (without field path) is one the CUE scanner or parser produces.
pub fn is_parser_message(message: &str) -> bool {
    PARSER_MESSAGE_PREFIXES
        .iter()
        .any(|p| message.starts_with(p))
}

/// Whether a header is a literal-decoding error, with or without a field path before it. Only
/// the first `": "` may end a path, so that a builtin's error quoting such text
/// (`x: error in call to f: invalid string: …`) does not count.
pub fn is_literal_message(header: &str) -> bool {
    let after_path = header.split_once(": ").map_or(header, |(_, rest)| rest);
    LITERAL_MESSAGE_PREFIXES
        .iter()
        .any(|p| header.starts_with(p) || after_path.starts_with(p))
}

/// One syntax error found in the oracle's output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    /// Which run printed it: `eval` or `export`.
    pub run: String,
    pub position: Position,
    pub message: String,
}

/// The runs whose stderr is searched for syntax errors.
pub const SYNTAX_RUNS: [&str; 2] = ["eval", "export"];

/// Every syntax error that `cue` reported for a case, by the rule of the module documentation.
pub fn syntax_errors(expected: &Expected) -> Vec<SyntaxError> {
    let mut out = Vec::new();
    for run_name in SYNTAX_RUNS {
        let Some(run) = expected.run(run_name) else {
            continue;
        };
        for diag in parse_stderr(&run.stderr) {
            let syntax = is_parser_message(diag.message()) || is_literal_message(diag.message());
            if !syntax {
                continue;
            }
            if let Some(pos) = diag.primary_position()
                && pos.file.ends_with(".cue")
            {
                out.push(SyntaxError {
                    run: run_name.to_owned(),
                    position: pos.clone(),
                    message: diag.message().to_owned(),
                });
            }
        }
    }
    out
}

/// Whether `cue` reported a syntax error in the file at `path` (relative to the case directory).
pub fn is_syntax_error_file(errors: &[SyntaxError], path: &str) -> bool {
    errors.iter().any(|e| e.position.file == path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::Run;

    fn expected(eval_stderr: &str, export_stderr: &str) -> Expected {
        Expected {
            runs: vec![
                (
                    "export".to_owned(),
                    Run {
                        exit: Some(1),
                        stderr: export_stderr.to_owned(),
                        ..Run::default()
                    },
                ),
                (
                    "eval".to_owned(),
                    Run {
                        exit: Some(1),
                        stderr: eval_stderr.to_owned(),
                        ..Run::default()
                    },
                ),
            ],
            ..Expected::default()
        }
    }

    #[test]
    fn positions() {
        assert_eq!(
            parse_position("./in.cue:3:5"),
            Some(Position {
                file: "in.cue".into(),
                line: 3,
                column: 5
            })
        );
        assert_eq!(
            parse_position("./cue.mod/pkg/a.b/x.cue:10:2").unwrap().file,
            "cue.mod/pkg/a.b/x.cue"
        );
        assert_eq!(parse_position("in.cue:x:5"), None);
        assert_eq!(parse_position(":1:2"), None);
    }

    #[test]
    fn splits_error_lists() {
        let d = parse_stderr(
            "a.b: conflicting values 1 and 2:\n    ./in.cue:1:4\n    ./in.cue:2:4\nstructural cycle\nx: y:\n    ./sub/s.cue:7:1\n",
        );
        assert_eq!(d.len(), 3);
        assert_eq!(d[0].header, "a.b: conflicting values 1 and 2");
        assert_eq!(d[0].positions.len(), 2);
        assert_eq!(d[1].header, "structural cycle");
        assert!(d[1].positions.is_empty());
        assert_eq!(d[2].positions[0].file, "sub/s.cue");
    }

    #[test]
    fn recognises_parser_errors() {
        let e = expected(
            "expected operand, found '}':\n    ./in.cue:3:1\nmissing ',' in struct literal:\n    ./sub/x.cue:2:7\n",
            "expected operand, found '}':\n    ./in.cue:3:1\n",
        );
        let errs = syntax_errors(&e);
        assert_eq!(errs.len(), 3);
        assert!(is_syntax_error_file(&errs, "in.cue"));
        assert!(is_syntax_error_file(&errs, "sub/x.cue"));
        assert!(!is_syntax_error_file(&errs, "other.cue"));
        assert_eq!(errs[0].run, "eval");
        assert_eq!(errs[0].position.line, 3);
    }

    #[test]
    fn recognises_scanner_and_inline_errors() {
        for msg in [
            "string literal not terminated",
            "illegal character U+0060 '`'",
            "unknown escape sequence",
            "attribute missing ')'",
            "non-matching whitespace for multiline string (expected \"\\t\", got \"  \")",
        ] {
            let e = expected(&format!("{msg}:\n    ./in.cue:1:4\n"), "");
            assert_eq!(syntax_errors(&e).len(), 1, "{msg}");
        }
        let e = expected("in.cue:2:3: expected ']', found 'for'\n", "");
        let errs = syntax_errors(&e);
        assert_eq!(errs.len(), 1);
        assert_eq!(errs[0].message, "expected ']', found 'for'");
        assert_eq!(errs[0].position.file, "in.cue");
    }

    #[test]
    fn literal_errors_may_have_paths() {
        let e = expected(
            "a.b: invalid string: invalid whitespace:\n    ./in.cue:4:2\n",
            "",
        );
        assert_eq!(syntax_errors(&e).len(), 1);
        let e = expected(
            "x: error in call to f: invalid string: y:\n    ./in.cue:4:2\n",
            "",
        );
        assert_eq!(syntax_errors(&e), []);
    }

    #[test]
    fn evaluation_errors_are_not_syntax() {
        let e = expected(
            concat!(
                "x: invalid value 1 (does not satisfy matchN): 0 matched, expected 1:\n    ./in.cue:1:4\n",
                "t: error in call to encoding/yaml.Unmarshal: expected a single YAML document:\n    ./in.cue:2:4\n",
                "e2: invalid operand 2 (found int, want list or struct):\n    ./in.cue:3:4\n",
                "disallowTopAsLabel: cannot use _ as label:\n    ./in.cue:10:2\n",
                "unreferenced alias or let clause X:\n    ./in.cue:1:2\n",
                "a: reference \"Y\" not found:\n    ./in.cue:4:12\n",
                "invalid value 3 (does not satisfy matchN): 0 matched, expected 1:\n    ./in.cue:5:1\n",
            ),
            "",
        );
        assert_eq!(syntax_errors(&e), []);
    }

    #[test]
    fn needs_a_cue_position() {
        let e = expected("expected operand, found '}'\n", "");
        assert_eq!(syntax_errors(&e), []);
    }
}
