//! The CUE lexer: source text to tokens, with automatic commas and string interpolation.
//!
//! Two layers. [`RawTok`] is a `logos` automaton for the context-free tokens (identifiers, numbers,
//! operators, comments, newlines, and the *opening* delimiters of strings and attributes). The
//! [`Lexer`] wrapper on top is a small state machine that adds what a regular automaton cannot do:
//!
//! * **String bodies** are scanned by hand from the opening delimiter, because the closing
//!   delimiter depends on it (`"`, `"""`, `'`, `'''`, each padded with any number of `#`), and
//!   escapes are validated on the way.
//! * **Interpolation** is modal. When a string body reaches `\(` (or `\#(` in a `#`-padded string),
//!   the lexer emits [`Tok::InterpStart`] and pushes a frame recording the string's delimiter and a
//!   count of open parentheses. In expression mode it lexes normally, counting `(` and `)` on the
//!   top frame; the `)` that brings the count below zero ends the expression, and the lexer resumes
//!   the string body right after it, emitting [`Tok::InterpMid`] (another `\(` follows) or
//!   [`Tok::InterpEnd`] (the closing quote). Frames nest, so `"a\("b\(c)")"` works at any depth.
//! * **Automatic commas** follow the spec: at a newline, a comment or the end of input, a comma is
//!   inserted when the last token was an identifier, keyword, literal, `_|_`, `)`, `]`, `}`, `?`,
//!   `...` or an attribute. Inserted commas are [`Tok::Comma`] with the text `"\n"`.
//! * **Attributes** `@name(...)` are one token; the body is scanned with balanced brackets.
//! * **Limits**: nesting of brackets and interpolations deeper than [`MAX_DEPTH`], and operator
//!   chains longer than [`MAX_CHAIN`] within one list element or declaration, are reported as
//!   errors and the offending part is skipped, so later stages never recurse without bound.
//!
//! Comments are collected in [`Lexer::comments`] for the formatter. Errors never stop lexing.

use std::collections::VecDeque;

use logos::Logos;

use crate::ast::{Comment, FileId, Span};

/// Maximum nesting of brackets, braces, parentheses and interpolations.
pub const MAX_DEPTH: usize = 1000;
/// Maximum number of operators (binary, unary, selectors, colons) in one element at one depth.
pub const MAX_CHAIN: usize = 1000;

/// The context-free token classes recognised by `logos`.
#[derive(Logos, Clone, Copy, Debug, PartialEq, Eq)]
#[logos(skip r"[ \t\r\f\u{feff}]+")]
pub enum RawTok {
    #[token("\n")]
    Newline,
    /// `//` to the end of the line. The body is skipped with `memchr` rather than by the
    /// automaton: vendored schemas are mostly documentation comments.
    #[token("//", comment_body)]
    Comment,
    #[regex(r"(#|_#)?[\p{L}_$][\p{L}\p{Nd}_$]*")]
    #[token("#")]
    Ident,
    #[regex(r"[0-9](_?[0-9])*")]
    #[regex(r"0[xX](_?[0-9a-fA-F])+")]
    #[regex(r"0o(_?[0-7])+")]
    #[regex(r"0b(_?[01])+")]
    #[regex(r"([0-9](_?[0-9])*(\.([0-9](_?[0-9])*)?)?|\.[0-9](_?[0-9])*)[KMGTP]i?")]
    Int,
    #[regex(r"[0-9](_?[0-9])*\.([0-9](_?[0-9])*)?([eE][+-]?[0-9](_?[0-9])*)?")]
    #[regex(r"[0-9](_?[0-9])*[eE][+-]?[0-9](_?[0-9])*")]
    #[regex(r"\.[0-9](_?[0-9])*([eE][+-]?[0-9](_?[0-9])*)?")]
    Float,
    /// An opening string or bytes delimiter, with its `#` padding.
    #[regex(r#"#*(""?"?|''?'?)"#)]
    Quote,
    #[token("@")]
    At,
    #[token("_|_")]
    Bottom,
    #[token("...")]
    Ellipsis,
    #[token("(")]
    LParen,
    #[token(")")]
    RParen,
    #[token("[")]
    LBrack,
    #[token("]")]
    RBrack,
    #[token("{")]
    LBrace,
    #[token("}")]
    RBrace,
    #[token(",")]
    Comma,
    #[token(".")]
    Dot,
    #[token(":")]
    Colon,
    #[token("?")]
    Question,
    #[token("=")]
    Assign,
    #[token("+")]
    Plus,
    #[token("-")]
    Minus,
    #[token("*")]
    Star,
    #[token("/")]
    Slash,
    #[token("&&")]
    AndAnd,
    #[token("||")]
    OrOr,
    #[token("&")]
    Amp,
    #[token("|")]
    Pipe,
    #[token("==")]
    EqEq,
    #[token("!=")]
    NotEq,
    #[token("<")]
    Lt,
    #[token("<=")]
    Le,
    #[token(">")]
    Gt,
    #[token(">=")]
    Ge,
    #[token("=~")]
    Match,
    #[token("!~")]
    NotMatch,
    #[token("!")]
    Not,
    #[token("~")]
    Tilde,
}

/// Moves a comment token's end to the end of its line (the newline is not part of it).
fn comment_body(lex: &mut logos::Lexer<'_, RawTok>) {
    let rest = lex.remainder().as_bytes();
    lex.bump(memchr::memchr(b'\n', rest).unwrap_or(rest.len()));
}

/// A token as the parser sees it. Payloads are slices of the source.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tok<'s> {
    Ident(&'s str),
    Int(&'s str),
    Float(&'s str),
    /// A complete string or bytes literal, delimiters included.
    Str(&'s str),
    /// From the opening delimiter to the first `\(` included.
    InterpStart(&'s str),
    /// From `)` to the next `\(` included.
    InterpMid(&'s str),
    /// From `)` to the closing delimiter included.
    InterpEnd(&'s str),
    Attr(&'s str),
    /// `,` as written, or `"\n"` when inserted automatically.
    Comma(&'s str),
    Package,
    Import,
    For,
    In,
    If,
    Let,
    Try,
    Else,
    Fallback,
    Null,
    True,
    False,
    Bottom,
    Ellipsis,
    LParen,
    RParen,
    LBrack,
    RBrack,
    LBrace,
    RBrace,
    Dot,
    Colon,
    Question,
    Assign,
    Plus,
    Minus,
    Star,
    Slash,
    AndAnd,
    OrOr,
    Amp,
    Pipe,
    EqEq,
    NotEq,
    Lt,
    Le,
    Gt,
    Ge,
    Match,
    NotMatch,
    Not,
    /// `~`, of a postfix alias.
    Tilde,
}

impl Tok<'_> {
    /// How the token is named in error messages, as the Go implementation does: `'}'`, `newline`,
    /// `identifier`, ...
    pub fn describe(&self) -> String {
        match self {
            Tok::Ident(s) => format!("identifier {s}"),
            Tok::Int(s) | Tok::Float(s) => format!("number {s}"),
            Tok::Str(s) => format!("string {s}"),
            Tok::InterpStart(_) | Tok::InterpMid(_) | Tok::InterpEnd(_) => {
                "interpolation".to_string()
            }
            Tok::Attr(s) => format!("attribute {s}"),
            Tok::Comma("\n") => "newline".to_string(),
            other => format!("'{}'", other.text()),
        }
    }

    /// The fixed text of keyword and punctuation tokens.
    pub fn text(&self) -> &str {
        match self {
            Tok::Ident(s)
            | Tok::Int(s)
            | Tok::Float(s)
            | Tok::Str(s)
            | Tok::InterpStart(s)
            | Tok::InterpMid(s)
            | Tok::InterpEnd(s)
            | Tok::Attr(s)
            | Tok::Comma(s) => s,
            Tok::Package => "package",
            Tok::Import => "import",
            Tok::For => "for",
            Tok::In => "in",
            Tok::If => "if",
            Tok::Let => "let",
            Tok::Try => "try",
            Tok::Else => "else",
            Tok::Fallback => "fallback",
            Tok::Null => "null",
            Tok::True => "true",
            Tok::False => "false",
            Tok::Bottom => "_|_",
            Tok::Ellipsis => "...",
            Tok::LParen => "(",
            Tok::RParen => ")",
            Tok::LBrack => "[",
            Tok::RBrack => "]",
            Tok::LBrace => "{",
            Tok::RBrace => "}",
            Tok::Dot => ".",
            Tok::Colon => ":",
            Tok::Question => "?",
            Tok::Assign => "=",
            Tok::Plus => "+",
            Tok::Minus => "-",
            Tok::Star => "*",
            Tok::Slash => "/",
            Tok::AndAnd => "&&",
            Tok::OrOr => "||",
            Tok::Amp => "&",
            Tok::Pipe => "|",
            Tok::EqEq => "==",
            Tok::NotEq => "!=",
            Tok::Lt => "<",
            Tok::Le => "<=",
            Tok::Gt => ">",
            Tok::Ge => ">=",
            Tok::Match => "=~",
            Tok::NotMatch => "!~",
            Tok::Not => "!",
            Tok::Tilde => "~",
        }
    }

    /// Whether a newline after this token inserts a comma.
    fn ends_line(&self) -> bool {
        matches!(
            self,
            Tok::Ident(_)
                | Tok::Int(_)
                | Tok::Float(_)
                | Tok::Str(_)
                | Tok::InterpEnd(_)
                | Tok::Attr(_)
                | Tok::Package
                | Tok::Import
                | Tok::For
                | Tok::In
                | Tok::If
                | Tok::Let
                | Tok::Try
                | Tok::Else
                | Tok::Fallback
                | Tok::Null
                | Tok::True
                | Tok::False
                | Tok::Bottom
                | Tok::Ellipsis
                | Tok::RParen
                | Tok::RBrack
                | Tok::RBrace
                | Tok::Question
        )
    }

    /// Operators that deepen the syntax tree without a bracket: they count towards [`MAX_CHAIN`].
    fn is_chain_op(&self) -> bool {
        matches!(
            self,
            Tok::Dot
                | Tok::Colon
                | Tok::Question
                | Tok::Plus
                | Tok::Minus
                | Tok::Star
                | Tok::Slash
                | Tok::AndAnd
                | Tok::OrOr
                | Tok::Amp
                | Tok::Pipe
                | Tok::EqEq
                | Tok::NotEq
                | Tok::Lt
                | Tok::Le
                | Tok::Gt
                | Tok::Ge
                | Tok::Match
                | Tok::NotMatch
                | Tok::Not
                | Tok::Assign
                | Tok::InterpMid(_)
        )
    }
}

/// A problem found while lexing. The lexer goes on after it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LexError {
    pub span: Span,
    pub message: String,
}

/// The delimiter of the string being scanned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Quote {
    /// `"` or `'`.
    ch: u8,
    multiline: bool,
    hashes: usize,
}

/// An open interpolation: the string to resume, and the parentheses opened inside it.
#[derive(Clone, Copy, Debug)]
struct Frame {
    quote: Quote,
    parens: usize,
}

/// How the scan of a string body ended.
enum BodyEnd {
    /// At the closing delimiter; the position is just past it.
    Closed(usize),
    /// At `\(`; the position is just past the `(`.
    Interpolation(usize),
    /// Not terminated; the position is where scanning stopped.
    Unterminated(usize),
}

/// A spanned token, as LALRPOP's external lexer interface wants it.
pub type Spanned<'s> = (usize, Tok<'s>, usize);

/// The modal CUE lexer. Iterate it for tokens; read [`Lexer::comments`] and [`Lexer::errors`]
/// afterwards.
pub struct Lexer<'s> {
    src: &'s str,
    file: FileId,
    raw: logos::Lexer<'s, RawTok>,
    frames: Vec<Frame>,
    /// Open brackets and interpolations, as the byte that opened them (`"` for an interpolation).
    brackets: Vec<u8>,
    /// Where each open bracket starts, parallel to `brackets`.
    bracket_starts: Vec<usize>,
    /// Operator count of the current element, one entry per depth.
    chains: Vec<usize>,
    last: Option<Tok<'s>>,
    eof_reported: bool,
    /// Tokens produced ahead of time, emitted before lexing on.
    pending: VecDeque<Spanned<'s>>,
    pub comments: Vec<Comment>,
    /// Whether comments are collected; an evaluator-only parse skips them (and their copies).
    pub keep_comments: bool,
    pub errors: Vec<LexError>,
}

impl<'s> Lexer<'s> {
    pub fn new(file: FileId, src: &'s str) -> Lexer<'s> {
        Lexer {
            src,
            file,
            raw: RawTok::lexer(src),
            frames: Vec::new(),
            brackets: Vec::new(),
            bracket_starts: Vec::new(),
            chains: vec![0],
            last: None,
            eof_reported: false,
            pending: VecDeque::new(),
            comments: Vec::new(),
            keep_comments: true,
            errors: Vec::new(),
        }
    }

    /// Starts lexing at byte `pos` (a token boundary at bracket depth 0), as if the text before
    /// it were not there; positions stay those of the whole source.
    pub fn skip_to(&mut self, pos: usize) {
        let at = self.raw.span().end;
        if pos > at {
            self.raw.bump(pos - at);
        }
    }

    fn error(&mut self, start: usize, end: usize, message: impl Into<String>) {
        self.errors.push(LexError {
            span: Span::new(self.file, start, end),
            message: message.into(),
        });
    }

    /// Lexes the next token, before comma insertion and limits.
    fn next_raw(&mut self) -> Option<Spanned<'s>> {
        loop {
            let raw = self.raw.next()?;
            let span = self.raw.span();
            let (start, end) = (span.start, span.end);
            let text = &self.src[start..end];
            let tok = match raw {
                Err(()) => {
                    let ch = self.src[start..].chars().next().unwrap_or('\u{fffd}');
                    self.error(
                        start,
                        end,
                        format!("illegal character U+{:04X} {ch:?}", ch as u32),
                    );
                    continue;
                }
                Ok(RawTok::Newline) => {
                    if self.last.is_some_and(|t| t.ends_line()) && !self.continues_line(end) {
                        self.last = None;
                        return Some((start, Tok::Comma("\n"), start));
                    }
                    continue;
                }
                Ok(RawTok::Comment) => {
                    if self.keep_comments {
                        self.comments.push(Comment {
                            span: Span::new(self.file, start, end),
                            text: text.into(),
                        });
                    }
                    if self.last.is_some_and(|t| t.ends_line()) && !self.continues_line(end) {
                        self.last = None;
                        return Some((start, Tok::Comma("\n"), start));
                    }
                    continue;
                }
                Ok(RawTok::Ident) => match keyword(text) {
                    // The preamble keywords only exist outside brackets, so that a field named
                    // `import` can be referred to inside a struct.
                    Some(Tok::Package | Tok::Import) if !self.brackets.is_empty() => {
                        Tok::Ident(text)
                    }
                    Some(k) => k,
                    None => Tok::Ident(text),
                },
                Ok(RawTok::Int) => {
                    // A leading zero makes a legacy octal literal (`0755`), as in Go.
                    let b = text.as_bytes();
                    if b.len() > 1
                        && b[0] == b'0'
                        && b[1].is_ascii_digit()
                        && b.iter().all(|c| c.is_ascii_digit() || *c == b'_')
                        && b.iter().any(|c| matches!(c, b'8' | b'9'))
                    {
                        self.error(start, end, "illegal octal number");
                    }
                    Tok::Int(text)
                }
                Ok(RawTok::Float) => {
                    // `1...` is the integer 1 followed by `...` (postfix open), not `1.` and `..`.
                    if text.ends_with('.') && self.src[end..].starts_with("..") {
                        self.raw.bump(2);
                        self.pending.push_back((end - 1, Tok::Ellipsis, end + 2));
                        return Some((start, Tok::Int(&text[..text.len() - 1]), end - 1));
                    }
                    Tok::Float(text)
                }
                Ok(RawTok::Quote) => return Some(self.string(start, end)),
                Ok(RawTok::At) => match self.attribute(start) {
                    Some(t) => return Some(t),
                    None => continue,
                },
                Ok(RawTok::Bottom) => Tok::Bottom,
                Ok(RawTok::Ellipsis) => Tok::Ellipsis,
                Ok(RawTok::LParen) => {
                    if let Some(f) = self.frames.last_mut() {
                        f.parens += 1;
                    }
                    Tok::LParen
                }
                Ok(RawTok::RParen) => {
                    if let Some(f) = self.frames.last_mut() {
                        if f.parens == 0 {
                            return Some(self.resume_string(start));
                        }
                        f.parens -= 1;
                    }
                    Tok::RParen
                }
                Ok(RawTok::LBrack) => Tok::LBrack,
                Ok(RawTok::RBrack) => Tok::RBrack,
                Ok(RawTok::LBrace) => Tok::LBrace,
                Ok(RawTok::RBrace) => Tok::RBrace,
                Ok(RawTok::Comma) => Tok::Comma(text),
                Ok(RawTok::Dot) => Tok::Dot,
                Ok(RawTok::Colon) => Tok::Colon,
                Ok(RawTok::Question) => Tok::Question,
                Ok(RawTok::Assign) => Tok::Assign,
                Ok(RawTok::Plus) => Tok::Plus,
                Ok(RawTok::Minus) => Tok::Minus,
                Ok(RawTok::Star) => Tok::Star,
                Ok(RawTok::Slash) => Tok::Slash,
                Ok(RawTok::AndAnd) => Tok::AndAnd,
                Ok(RawTok::OrOr) => Tok::OrOr,
                Ok(RawTok::Amp) => Tok::Amp,
                Ok(RawTok::Pipe) => Tok::Pipe,
                Ok(RawTok::EqEq) => Tok::EqEq,
                Ok(RawTok::NotEq) => Tok::NotEq,
                Ok(RawTok::Lt) => Tok::Lt,
                Ok(RawTok::Le) => Tok::Le,
                Ok(RawTok::Gt) => Tok::Gt,
                Ok(RawTok::Ge) => Tok::Ge,
                Ok(RawTok::Match) => Tok::Match,
                Ok(RawTok::NotMatch) => Tok::NotMatch,
                Ok(RawTok::Not) => Tok::Not,
                Ok(RawTok::Tilde) => Tok::Tilde,
            };
            return Some((start, tok, end));
        }
    }

    /// Whether the next significant character after `pos` is a `:` or `,` that continues the
    /// current line ("front-style" commas and colons, which CUE accepts after a newline).
    fn continues_line(&self, pos: usize) -> bool {
        let rest = &self.src.as_bytes()[pos..];
        let skip = rest
            .iter()
            .position(|b| !matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
            .unwrap_or(rest.len());
        match rest[skip..] {
            [b':', ..] => true,
            [b',', b',', ..] => false,
            [b',', ..] => true,
            _ => false,
        }
    }

    /// Scans a string literal whose opening delimiter spans `start..open_end`.
    fn string(&mut self, start: usize, open_end: usize) -> Spanned<'s> {
        let delim = &self.src[start..open_end];
        let hashes = delim.bytes().take_while(|&b| b == b'#').count();
        let quotes = &delim[hashes..];
        let ch = quotes.as_bytes()[0];
        let mut body_start = open_end;
        let quote = match quotes.len() {
            3 => Quote {
                ch,
                multiline: true,
                hashes,
            },
            2 => {
                // `""` is an empty string; logos matched both quotes as one delimiter.
                body_start = start + hashes + 1;
                Quote {
                    ch,
                    multiline: false,
                    hashes,
                }
            }
            _ => Quote {
                ch,
                multiline: false,
                hashes,
            },
        };
        if quote.multiline {
            let rest = &self.src.as_bytes()[body_start..];
            let ws = rest
                .iter()
                .take_while(|&&b| b == b' ' || b == b'\t' || b == b'\r')
                .count();
            if rest.get(ws) != Some(&b'\n') {
                self.error(
                    start,
                    open_end,
                    "expected newline after multiline quote \"\"\"",
                );
            }
        }
        self.finish_body(start, body_start, quote, true)
    }

    /// Resumes the string of the top frame after the `)` at `paren`.
    fn resume_string(&mut self, paren: usize) -> Spanned<'s> {
        let frame = self.frames.pop().expect("resume_string needs a frame");
        self.finish_body(paren, paren + 1, frame.quote, false)
    }

    fn finish_body(
        &mut self,
        start: usize,
        body_start: usize,
        quote: Quote,
        first: bool,
    ) -> Spanned<'s> {
        let end = self.scan_body(body_start, quote);
        let (stop, tok): (usize, fn(&'s str) -> Tok<'s>) = match end {
            BodyEnd::Closed(e) => (e, if first { Tok::Str } else { Tok::InterpEnd }),
            BodyEnd::Unterminated(e) => {
                let what = if quote.ch == b'\'' { "bytes" } else { "string" };
                self.error(start, e, format!("{what} literal not terminated"));
                (e, if first { Tok::Str } else { Tok::InterpEnd })
            }
            BodyEnd::Interpolation(e) => {
                self.frames.push(Frame { quote, parens: 0 });
                (
                    e,
                    if first {
                        Tok::InterpStart
                    } else {
                        Tok::InterpMid
                    },
                )
            }
        };
        let consumed = self.raw.span().end;
        self.raw.bump(stop - consumed);
        (start, tok(&self.src[start..stop]), stop)
    }

    /// Scans a string body from `pos`, validating escapes, up to the closing delimiter, an
    /// interpolation, or the point where the string cannot go on.
    fn scan_body(&mut self, mut pos: usize, q: Quote) -> BodyEnd {
        let bytes = self.src.as_bytes();
        loop {
            // Only the quote, a backslash and (in a single-line string) a newline stop the scan;
            // they are ASCII, so jumping to the next of them lands on a character boundary.
            let rest = &bytes[pos..];
            let skip = if q.multiline {
                memchr::memchr2(q.ch, b'\\', rest)
            } else {
                memchr::memchr3(q.ch, b'\\', b'\n', rest)
            };
            pos += skip.unwrap_or(rest.len());
            let Some(&b) = bytes.get(pos) else {
                return BodyEnd::Unterminated(pos);
            };
            if b == b'\n' && !q.multiline {
                return BodyEnd::Unterminated(pos);
            }
            if b == q.ch && self.closes_at(pos, q) {
                let n = if q.multiline { 3 } else { 1 };
                return BodyEnd::Closed(pos + n + q.hashes);
            }
            if b == b'\\' && bytes[pos + 1..].iter().take_while(|&&c| c == b'#').count() >= q.hashes
            {
                let esc = pos + 1 + q.hashes;
                match bytes.get(esc) {
                    Some(b'(') => return BodyEnd::Interpolation(esc + 1),
                    Some(c) => {
                        pos = self.escape(pos, esc, *c, q);
                        continue;
                    }
                    None => return BodyEnd::Unterminated(esc),
                }
            }
            // Advance by one UTF-8 character.
            pos += utf8_len(b);
        }
    }

    /// Whether the closing delimiter of `q` starts at `pos`.
    fn closes_at(&self, pos: usize, q: Quote) -> bool {
        let bytes = self.src.as_bytes();
        let n = if q.multiline { 3 } else { 1 };
        bytes.len() >= pos + n + q.hashes
            && bytes[pos..pos + n].iter().all(|&c| c == q.ch)
            && bytes[pos + n..pos + n + q.hashes]
                .iter()
                .all(|&c| c == b'#')
    }

    /// Validates the escape whose letter is `c` at `esc` (the backslash is at `bs`); returns the
    /// position after it.
    fn escape(&mut self, bs: usize, esc: usize, c: u8, q: Quote) -> usize {
        let bytes = self.src.as_bytes();
        let hex_digits = |n: usize| -> bool {
            bytes.len() >= esc + 1 + n
                && bytes[esc + 1..esc + 1 + n]
                    .iter()
                    .all(u8::is_ascii_hexdigit)
        };
        match c {
            b'a' | b'b' | b'f' | b'n' | b'r' | b't' | b'v' | b'/' | b'\\' => esc + 1,
            b'\n' if q.multiline => esc + 1,
            b'"' | b'\'' => {
                if c != q.ch {
                    self.error(bs, esc + 1, "unknown escape sequence");
                }
                esc + 1
            }
            b'x' => {
                if q.ch != b'\'' {
                    self.error(bs, esc + 1, "unknown escape sequence");
                    return esc + 1;
                }
                if !hex_digits(2) {
                    self.error(bs, esc + 1, "illegal character in escape sequence");
                    return esc + 1;
                }
                esc + 3
            }
            b'0'..=b'7' => {
                let ok = bytes.len() >= esc + 3
                    && bytes[esc..esc + 3]
                        .iter()
                        .all(|c| (b'0'..=b'7').contains(c));
                if q.ch != b'\'' {
                    self.error(bs, esc + 1, "unknown escape sequence");
                    return esc + 1;
                }
                if !ok {
                    self.error(bs, esc + 1, "illegal character in escape sequence");
                    return esc + 1;
                }
                let v = (bytes[esc] - b'0') as u32 * 64
                    + (bytes[esc + 1] - b'0') as u32 * 8
                    + (bytes[esc + 2] - b'0') as u32;
                if v > 255 {
                    self.error(bs, esc + 3, "escape sequence is invalid Unicode code point");
                }
                esc + 3
            }
            b'u' | b'U' => {
                let n = if c == b'u' { 4 } else { 8 };
                if !hex_digits(n) {
                    self.error(bs, esc + 1, "illegal character in escape sequence");
                    return esc + 1;
                }
                let digits = &self.src[esc + 1..esc + 1 + n];
                let v = u32::from_str_radix(digits, 16).unwrap_or(u32::MAX);
                if v > 0x10FFFF || (0xD800..0xE000).contains(&v) {
                    self.error(
                        bs,
                        esc + 1 + n,
                        "escape sequence is invalid Unicode code point",
                    );
                }
                esc + 1 + n
            }
            _ => {
                self.error(bs, esc + 1, "unknown escape sequence");
                esc + utf8_len(c)
            }
        }
    }

    /// Scans an attribute `@name(...)` starting at `start`.
    fn attribute(&mut self, start: usize) -> Option<Spanned<'s>> {
        let bytes = self.src.as_bytes();
        let mut pos = start + 1;
        let name_start = pos;
        while pos < bytes.len() {
            let ch = self.src[pos..].chars().next().unwrap_or(' ');
            if ch.is_alphanumeric() || ch == '_' || ch == '$' || ch == '#' {
                pos += ch.len_utf8();
            } else {
                break;
            }
        }
        if pos == name_start || bytes.get(pos) != Some(&b'(') {
            self.error(start, pos.max(start + 1), "invalid attribute: expected '('");
            let consumed = self.raw.span().end;
            self.raw.bump(pos - consumed);
            return None;
        }
        // Balanced scan of the body; strings inside may hold brackets.
        let mut stack: Vec<u8> = Vec::new();
        loop {
            let Some(&b) = bytes.get(pos) else {
                self.error(start, pos, "attribute missing ')'");
                break;
            };
            match b {
                b'(' | b'[' | b'{' => stack.push(b),
                b')' | b']' | b'}' => {
                    let open = match b {
                        b')' => b'(',
                        b']' => b'[',
                        _ => b'{',
                    };
                    if stack.pop() != Some(open) {
                        self.error(pos, pos + 1, "unbalanced brackets in attribute");
                    }
                    if stack.is_empty() {
                        pos += 1;
                        break;
                    }
                }
                b'"' | b'\'' => {
                    pos = skip_attr_string(bytes, pos) - 1;
                }
                _ => {}
            }
            pos += 1;
            pos = pos.min(bytes.len());
            while !self.src.is_char_boundary(pos) {
                pos += 1;
            }
        }
        let consumed = self.raw.span().end;
        self.raw.bump(pos - consumed);
        Some((start, Tok::Attr(&self.src[start..pos]), pos))
    }

    /// Applies the depth and chain limits to a token about to be emitted, and tracks open
    /// brackets. Returns `None` when the token, and what follows it up to the end of its element,
    /// were skipped.
    fn check_limits(&mut self, tok: &Spanned<'s>) -> Option<Spanned<'s>> {
        let (start, t, end) = *tok;
        match t {
            Tok::LParen | Tok::LBrack | Tok::LBrace | Tok::InterpStart(_) => {
                if self.brackets.len() >= MAX_DEPTH {
                    self.error(
                        start,
                        end,
                        format!("nesting too deep: more than {MAX_DEPTH} levels"),
                    );
                    let stop = self.skip_nested(end);
                    return Some((start, Tok::Bottom, stop));
                }
                self.brackets.push(match t {
                    Tok::LParen => b'(',
                    Tok::LBrack => b'[',
                    Tok::LBrace => b'{',
                    _ => b'"',
                });
                self.bracket_starts.push(start);
                self.chains.push(0);
            }
            Tok::RParen | Tok::RBrack | Tok::RBrace | Tok::InterpEnd(_) => {
                let open = match t {
                    Tok::RParen => b'(',
                    Tok::RBrack => b'[',
                    Tok::RBrace => b'{',
                    _ => b'"',
                };
                // A wrong closer on the line that opened the innermost bracket is a typo for
                // its closer (`[1, 2}`); on a later line, the brackets in between were left open.
                // Only asked for a mismatch: scanning back on every closer would cost a pass
                // over the file per nesting level.
                let same_line = || {
                    let inner_start = self.bracket_starts.last().copied().unwrap_or(0);
                    !self.src[inner_start..start].contains('\n')
                };
                if self.brackets.last() == Some(&open) {
                    self.brackets.pop();
                    self.bracket_starts.pop();
                    if t == Tok::InterpEnd("") {
                        // Synthesized to close an interpolation: its string is abandoned.
                        self.frames.pop();
                    }
                    if self.chains.len() > 1 {
                        self.chains.pop();
                    }
                } else if let Some(at) = self
                    .brackets
                    .iter()
                    .rposition(|&b| b == open)
                    .filter(|_| !same_line())
                {
                    // Brackets opened inside this one were left open (`[1, 2}`): report the
                    // innermost once, and close them all here so the parser does not cascade.
                    let inner = self.brackets[self.brackets.len() - 1];
                    self.error(
                        start,
                        end,
                        format!(
                            "expected {}, found {}",
                            closer(inner).describe(),
                            t.describe()
                        ),
                    );
                    for &b in self.brackets[at + 1..].iter().rev() {
                        self.pending.push_back((start, closer(b), start));
                    }
                    self.pending.push_back(*tok);
                    return None;
                } else if let Some(&top) = self.brackets.last() {
                    // Nothing open matches: take it for a typo of the innermost closer.
                    self.error(
                        start,
                        end,
                        format!(
                            "expected {}, found {}",
                            closer(top).describe(),
                            t.describe()
                        ),
                    );
                    self.pending.push_back((start, closer(top), end));
                    return None;
                }
                // A closer with nothing open is left for the parser to report.
            }
            Tok::Comma(_) => {
                if let Some(c) = self.chains.last_mut() {
                    *c = 0;
                }
            }
            _ if t.is_chain_op() => {
                let c = self.chains.last_mut().expect("chains is never empty");
                *c += 1;
                if *c > MAX_CHAIN {
                    self.error(
                        start,
                        end,
                        format!("expression too long: more than {MAX_CHAIN} operators"),
                    );
                    self.skip_element();
                    return None;
                }
            }
            _ => {}
        }
        Some(*tok)
    }

    /// Skips everything up to the bracket matching the one that ends at `from`; returns the
    /// position after it.
    fn skip_nested(&mut self, from: usize) -> usize {
        let mut depth = 1usize;
        let mut end = from;
        while let Some((_, t, e)) = self.next_raw() {
            end = e;
            match t {
                Tok::LParen | Tok::LBrack | Tok::LBrace | Tok::InterpStart(_) => depth += 1,
                Tok::RParen | Tok::RBrack | Tok::RBrace | Tok::InterpEnd(_) => depth -= 1,
                _ => {}
            }
            if depth == 0 {
                break;
            }
        }
        end
    }

    /// Skips tokens up to (not including) the next comma or closing bracket of this depth.
    fn skip_element(&mut self) {
        let mut depth = 0usize;
        while let Some(tok) = self.next_raw() {
            // Skipped tokens still decide whether a newline inserts a comma.
            self.last = match tok.1 {
                Tok::Comma(_) => None,
                t => Some(t),
            };
            match tok.1 {
                Tok::LParen | Tok::LBrack | Tok::LBrace | Tok::InterpStart(_) => depth += 1,
                Tok::RParen | Tok::RBrack | Tok::RBrace | Tok::InterpEnd(_) | Tok::Comma(_)
                    if depth == 0 =>
                {
                    self.pending.push_back(tok);
                    return;
                }
                Tok::RParen | Tok::RBrack | Tok::RBrace | Tok::InterpEnd(_) => depth -= 1,
                _ => {}
            }
        }
    }

    /// At the end of input: the automatic comma, then a closer for each bracket or interpolation
    /// still open (innermost first, one error for all), so that the parser can finish the tree.
    fn at_eof(&mut self) -> Option<Spanned<'s>> {
        let n = self.src.len();
        if self.last.is_some_and(|t| t.ends_line()) {
            return Some((n, Tok::Comma("\n"), n));
        }
        let open = self.brackets.pop()?;
        self.bracket_starts.pop();
        if !self.eof_reported {
            self.eof_reported = true;
            let msg = match open {
                b'"' => "interpolation not terminated".to_string(),
                _ => format!("expected {}, found 'EOF'", closer(open).describe()),
            };
            self.error(n, n, msg);
        }
        if open == b'"' {
            self.frames.pop();
        }
        Some((n, closer(open), n))
    }
}

impl<'s> Iterator for Lexer<'s> {
    type Item = Spanned<'s>;

    fn next(&mut self) -> Option<Spanned<'s>> {
        loop {
            let tok = match self.pending.pop_front() {
                Some(t) => t,
                None => match self.next_raw() {
                    Some(t) => t,
                    None => {
                        let t = self.at_eof()?;
                        self.last = match t.1 {
                            Tok::Comma(_) => None,
                            t => Some(t),
                        };
                        return Some(t);
                    }
                },
            };
            let Some(tok) = self.check_limits(&tok) else {
                continue;
            };
            self.last = match tok.1 {
                Tok::Comma(_) => None,
                t => Some(t),
            };
            return Some(tok);
        }
    }
}

/// The token that closes a bracket recorded in `Lexer::brackets`.
fn closer(open: u8) -> Tok<'static> {
    match open {
        b'(' => Tok::RParen,
        b'[' => Tok::RBrack,
        b'{' => Tok::RBrace,
        _ => Tok::InterpEnd(""),
    }
}

fn keyword(s: &str) -> Option<Tok<'static>> {
    Some(match s {
        "package" => Tok::Package,
        "import" => Tok::Import,
        "for" => Tok::For,
        "in" => Tok::In,
        "if" => Tok::If,
        "let" => Tok::Let,
        "try" => Tok::Try,
        "else" => Tok::Else,
        "fallback" => Tok::Fallback,
        "null" => Tok::Null,
        "true" => Tok::True,
        "false" => Tok::False,
        _ => return None,
    })
}

/// Returns the position after the string literal starting at `pos` inside an attribute body
/// (single or triple quoted); escapes are skipped, not validated. The loader's skim
/// (`load::skim`) skips attribute bodies with it too.
pub(crate) fn skip_attr_string(bytes: &[u8], pos: usize) -> usize {
    let q = bytes[pos];
    let triple = bytes.len() >= pos + 3 && bytes[pos + 1] == q && bytes[pos + 2] == q;
    let mut i = pos + if triple { 3 } else { 1 };
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'\n' if !triple => return i,
            c if c == q => {
                if !triple {
                    return i + 1;
                }
                if bytes.len() >= i + 3 && bytes[i + 1] == q && bytes[i + 2] == q {
                    return i + 3;
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
    bytes.len()
}

fn utf8_len(first: u8) -> usize {
    match first {
        0x00..=0x7f => 1,
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xff => 4,
        _ => 1,
    }
}

/// Lexes a whole source into tokens, comments and errors (for tests and tools).
pub fn tokenize(src: &str) -> (Vec<Spanned<'_>>, Vec<Comment>, Vec<LexError>) {
    let mut lx = Lexer::new(FileId(0), src);
    let toks: Vec<_> = lx.by_ref().collect();
    (toks, lx.comments, lx.errors)
}

/// Checks the lexer's invariants on arbitrary input, for fuzzing: it terminates without
/// panicking, spans are in bounds, ordered and on character boundaries.
pub fn check_lexer(src: &str) {
    let (toks, comments, errors) = tokenize(src);
    let mut prev = 0;
    for (s, _, e) in &toks {
        assert!(s <= e && *e <= src.len(), "token span out of bounds");
        assert!(*s >= prev, "tokens out of order");
        assert!(src.is_char_boundary(*s) && src.is_char_boundary(*e));
        prev = *s;
    }
    for c in &comments {
        assert!(c.span.end as usize <= src.len());
    }
    for e in &errors {
        assert!(e.span.start <= e.span.end && e.span.end as usize <= src.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(src: &str) -> Vec<String> {
        let (toks, _, errors) = tokenize(src);
        assert!(errors.is_empty(), "{src:?}: {errors:?}");
        toks.iter()
            .map(|(_, t, _)| match t {
                Tok::Comma("\n") => "NL".to_string(),
                t => t.text().to_string(),
            })
            .collect()
    }

    fn toks_lossy(src: &str) -> Vec<String> {
        tokenize(src)
            .0
            .iter()
            .map(|(_, t, _)| t.text().to_string())
            .map(|t| if t == "\n" { "NL".to_string() } else { t })
            .collect()
    }

    fn errs(src: &str) -> Vec<String> {
        tokenize(src).2.into_iter().map(|e| e.message).collect()
    }

    #[test]
    fn identifiers_and_keywords() {
        assert_eq!(
            toks("#Def _h _#hd __x αβ $x for in if let package import null true false"),
            [
                "#Def", "_h", "_#hd", "__x", "αβ", "$x", "for", "in", "if", "let", "package",
                "import", "null", "true", "false", "NL"
            ]
        );
    }

    #[test]
    fn numbers() {
        let src = "3.T 42 1.5G 1.3Ki 0xBad_Face 0o755 0b0101_0001 0. 72.40 1.e+0 6.67428e-11 1E6 .25 .12345E+5 1_000 .5Mi";
        let (t, _, e) = tokenize(src);
        assert!(e.is_empty());
        let kinds: Vec<_> = t
            .iter()
            .map(|(_, t, _)| match t {
                Tok::Int(s) => format!("I:{s}"),
                Tok::Float(s) => format!("F:{s}"),
                t => t.text().to_string(),
            })
            .collect();
        assert_eq!(
            kinds,
            [
                "I:3.T",
                "I:42",
                "I:1.5G",
                "I:1.3Ki",
                "I:0xBad_Face",
                "I:0o755",
                "I:0b0101_0001",
                "F:0.",
                "F:72.40",
                "F:1.e+0",
                "F:6.67428e-11",
                "F:1E6",
                "F:.25",
                "F:.12345E+5",
                "I:1_000",
                "I:.5Mi",
                "\n"
            ]
        );
    }

    #[test]
    fn automatic_commas() {
        assert_eq!(
            toks("a: 1\nb: 2\n"),
            ["a", ":", "1", "NL", "b", ":", "2", "NL"]
        );
        assert_eq!(toks("a: {\n}\n"), ["a", ":", "{", "}", "NL"]);
        assert_eq!(toks("a: 1 // c\n"), ["a", ":", "1", "NL"]);
        assert_eq!(toks("a?\n"), ["a", "?", "NL"]);
        assert_eq!(toks("x: [\n1,\n]"), ["x", ":", "[", "1", ",", "]", "NL"]);
        assert_eq!(toks("a: 1 +\n 2"), ["a", ":", "1", "+", "2", "NL"]);
        assert_eq!(toks("a: int @go(A)\n"), ["a", ":", "int", "@go(A)", "NL"]);
        assert_eq!(
            toks("a\n: 1\n, b: 2"),
            ["a", ":", "1", ",", "b", ":", "2", "NL"]
        );
        assert_eq!(toks("z: 1...\n"), ["z", ":", "1", "...", "NL"]);
    }

    #[test]
    fn strings() {
        assert_eq!(toks(r#"a: "x\"y""#), ["a", ":", r#""x\"y""#, "NL"]);
        assert_eq!(toks(r#""""#), [r#""""#, "NL"]);
        assert_eq!(toks("'a\\000\\xab'"), ["'a\\000\\xab'", "NL"]);
        assert_eq!(toks("#\"a \\(x) \"# x"), ["#\"a \\(x) \"#", "x", "NL"]);
        assert_eq!(
            toks("\"\"\"\n  a\"\"\n  \"\"\""),
            ["\"\"\"\n  a\"\"\n  \"\"\"", "NL"]
        );
        assert_eq!(toks("'''\n x\n '''"), ["'''\n x\n '''", "NL"]);
    }

    #[test]
    fn interpolation_nests() {
        assert_eq!(
            toks(r#""a\(b)c\("d\(e)" + (f))g""#),
            [
                r#""a\("#, "b", r#")c\("#, r#""d\("#, "e", r#")""#, "+", "(", "f", ")", r#")g""#,
                "NL"
            ]
        );
        assert_eq!(
            toks(r##"#"x\#(y)z"#"##),
            [r##"#"x\#("##, "y", r##")z"#"##, "NL"]
        );
    }

    #[test]
    fn string_errors() {
        assert_eq!(errs("\"abc\n"), ["string literal not terminated"]);
        assert_eq!(errs("'\\xa'"), ["illegal character in escape sequence"]);
        assert_eq!(errs("\"\\q\""), ["unknown escape sequence"]);
        assert_eq!(errs("\"\\x20\""), ["unknown escape sequence"]);
        assert_eq!(
            errs("\"\\U00110000\""),
            ["escape sequence is invalid Unicode code point"]
        );
        assert_eq!(
            errs("\"\\(a\""),
            [
                "string literal not terminated",
                "interpolation not terminated"
            ]
        );
    }

    #[test]
    fn attributes() {
        assert_eq!(toks("@if(a && (b || c))"), ["@if(a && (b || c))", "NL"]);
        assert_eq!(toks(r#"@go(x,type="a)b")"#), [r#"@go(x,type="a)b")"#, "NL"]);
        assert_eq!(errs("@foo"), ["invalid attribute: expected '('"]);
    }

    #[test]
    fn mismatched_closers_are_repaired_once() {
        // On the line that opened the innermost bracket: a typo for its closer.
        assert_eq!(errs("a: [1, 2}\nb: 1"), ["expected ']', found '}'"]);
        assert_eq!(errs("a: {\n\tb: [1, 2}\n}\n"), ["expected ']', found '}'"]);
        // On a later line: the brackets in between were left open, and are closed here.
        assert_eq!(
            toks_lossy("a: {b: [1, (2\n}"),
            [
                "a", ":", "{", "b", ":", "[", "1", ",", "(", "2", "NL", ")", "]", "}", "NL"
            ]
        );
        assert_eq!(errs("a: {b: [1, (2\n}"), ["expected ')', found '}'"]);
        assert_eq!(
            errs("a: ({[\n}"),
            ["expected ']', found '}'", "expected ')', found 'EOF'"]
        );
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let src = format!("a: {}{}", "[".repeat(10_000), "]".repeat(10_000));
        let (t, _, e) = tokenize(&src);
        assert_eq!(e.len(), 1, "{e:?}");
        assert!(e[0].message.contains("nesting too deep"));
        assert!(t.len() < 2_100);
    }

    #[test]
    fn long_operator_chains_are_cut() {
        let src = format!("a: 1{}\nb: 2", "+1".repeat(10_000));
        let (t, _, e) = tokenize(&src);
        assert_eq!(e.len(), 1, "{e:?}");
        assert!(t.iter().any(|(_, t, _)| *t == Tok::Ident("b")));
    }

    #[test]
    fn legacy_octal_numbers() {
        assert!(errs("a: 0755").is_empty());
        assert_eq!(errs("a: 0758"), ["illegal octal number"]);
        assert!(errs("a: 0758.5").is_empty());
    }

    #[test]
    fn illegal_characters() {
        assert_eq!(errs("a: ^"), ["illegal character U+005E '^'"]);
    }
}
