//! The low level of the formatter: turns tokens and whitespace *requests* into the cell stream
//! that [`super::tabwriter`] aligns.
//!
//! The formatter never writes whitespace directly. It accumulates requests (a blank, a line
//! break, a new section, an indentation level, ...) in [`Printer::allowed`], and the source
//! layout of each token (its [`RelPos`]) may add or remove line breaks, unless the request says
//! `NOOVERRIDE`. Only when the next token is printed is the accumulated whitespace resolved into
//! exactly one separator, with a fixed priority. This is the model of the official printer, and
//! reproducing it step by step is what keeps the output byte-identical to `cue fmt`, including
//! where the author's line breaks are kept and where they are not.

use super::source::RelPos;
use super::tabwriter::TabWriter;

/// A set of whitespace requests (bit flags).
pub(super) type Ws = u16;

/// A space.
pub(super) const BLANK: Ws = 1 << 0;
/// An alignment point (a `\v` cell terminator).
pub(super) const VTAB: Ws = 1 << 1;
/// No space, even if the source had one.
pub(super) const NOBLANK: Ws = 1 << 2;
/// Ignore the source layout of the next token.
pub(super) const NOOVERRIDE: Ws = 1 << 3;
/// A comma, unless `TRAILCOMMA` says the list closes on the same line.
pub(super) const COMMA: Ws = 1 << 4;
/// A trailing comma, written only before a line break.
pub(super) const TRAILCOMMA: Ws = 1 << 5;
/// A comma and a space between declarations written on one line.
pub(super) const DECLCOMMA: Ws = 1 << 6;
/// A line break within an alignment block.
pub(super) const NEWLINE: Ws = 1 << 7;
/// A line break that ends the alignment block.
pub(super) const FORMFEED: Ws = 1 << 8;
/// A blank line.
pub(super) const NEWSECTION: Ws = 1 << 9;
/// Indent one more level after the next line break.
pub(super) const INDENT: Ws = 1 << 10;
/// Undo the matching `INDENT`.
pub(super) const UNINDENT: Ws = 1 << 11;
/// Marks an indentation entry whose level was actually taken.
const INDENTED: Ws = 1 << 12;

/// The tokens the printer distinguishes: their text, and the few properties that decide
/// whether two adjacent tokens need a space so that they do not merge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Tok {
    /// Nothing printed yet.
    Illegal,
    Eof,
    Ident,
    Int,
    Float,
    String,
    Null,
    True,
    False,
    Attribute,
    Comment,
    LParen,
    RParen,
    LBrack,
    RBrack,
    LBrace,
    RBrace,
    Comma,
    Colon,
    Bind,
    Ellipsis,
    Period,
    Option,
    Tilde,
    Bottom,
    Let,
    /// An operator, with its text.
    Op(&'static str),
}

impl Tok {
    fn text(self) -> &'static str {
        match self {
            Tok::Illegal | Tok::Eof => "",
            Tok::Ident => "IDENT",
            Tok::Int => "INT",
            Tok::Float => "FLOAT",
            Tok::String => "STRING",
            Tok::Null => "null",
            Tok::True => "true",
            Tok::False => "false",
            Tok::Attribute => "ATTRIBUTE",
            Tok::Comment => "COMMENT",
            Tok::LParen => "(",
            Tok::RParen => ")",
            Tok::LBrack => "[",
            Tok::RBrack => "]",
            Tok::LBrace => "{",
            Tok::RBrace => "}",
            Tok::Comma => ",",
            Tok::Colon => ":",
            Tok::Bind => "=",
            Tok::Ellipsis => "...",
            Tok::Period => ".",
            Tok::Option => "?",
            Tok::Tilde => "~",
            Tok::Bottom => "_|_",
            Tok::Let => "let",
            Tok::Op(s) => s,
        }
    }
}

/// Whether a blank is needed before (`.0`) and after (`.1`) `next` when it follows `prev`, so
/// that the two do not read as one token (`- -x`, `/ *x`) and keywords stay separate words.
fn may_combine(prev: Tok, next: Tok) -> (bool, bool) {
    let s = next.text();
    let first = s.as_bytes().first().copied().unwrap_or(0);
    // Keywords need blanks around them. The official check is `'a' <= c && c < 'z'` (which
    // leaves out `z`, harmlessly: no keyword starts with it).
    if (b'a'..=b'y').contains(&first) {
        return (prev != Tok::Illegal, true);
    }
    let before = match prev {
        Tok::Int => next == Tok::Period,
        // The official check covers `+ +`, `- -` and `/ *`. Adjacent unary operators can merge
        // in more ways (`< ==x` would read `<= =x`, `/ /` a comment), so any pair whose joint
        // characters start a longer operator or a comment is kept apart.
        Tok::Op(p) => {
            let last = p.as_bytes().last().copied().unwrap_or(0);
            matches!(
                &[last, first],
                b"++"
                    | b"--"
                    | b"/*"
                    | b"//"
                    | b"&&"
                    | b"||"
                    | b"=="
                    | b"!="
                    | b"<="
                    | b">="
                    | b"=~"
                    | b"!~"
            )
        }
        _ => false,
    };
    (before, false)
}

/// Printer state; see the module documentation.
pub(super) struct Printer {
    /// Whitespace requested since the last token.
    pub allowed: Ws,
    /// Pending and taken indentation requests, innermost last.
    indent_stack: Vec<Ws>,
    /// Number of line breaks written so far.
    pub lineout: i32,
    pub last_tok: Tok,
    /// Receives the text, cell ends and line ends.
    pub out: TabWriter,
    /// Current indentation level.
    pub indent: i32,
    /// Whether the last thing written was whitespace.
    space_before: bool,
    /// Whether a `{` was written on the current line.
    pub prev_lbrace_on_line: bool,
    /// Set after a comment so that a line break always follows it.
    pub printing_comment: bool,
    /// 1-based column of the output position (bytes, tabs counting one).
    pub column: usize,
}

impl Printer {
    pub fn new(capacity: usize) -> Printer {
        Printer {
            // Gobble the whitespace before the first token.
            allowed: NOOVERRIDE,
            indent_stack: Vec::new(),
            lineout: 0,
            last_tok: Tok::Illegal,
            out: TabWriter::new(capacity),
            indent: 0,
            space_before: false,
            prev_lbrace_on_line: false,
            printing_comment: false,
            column: 1,
        }
    }

    /// Adds whitespace requests.
    pub fn ws(&mut self, ws: Ws) {
        self.allowed |= ws;
    }

    /// Applies the source layout of the token about to be printed, unless overridden.
    pub fn pos(&mut self, rel: RelPos) {
        if rel == RelPos::None || self.allowed & NOOVERRIDE != 0 {
            return;
        }
        // After a comment the token is on a new line whatever its source position (it can only
        // have been on the comment's line if the comment was moved to the end of its unit), so
        // it is laid out as a token on a new line, which keeps formatting idempotent.
        let rel = if self.printing_comment && rel < RelPos::Newline {
            RelPos::Newline
        } else {
            rel
        };
        let mut requested = self.allowed;
        match rel {
            RelPos::None => {}
            RelPos::NoSpace => requested &= !(NEWLINE | NEWSECTION | FORMFEED),
            RelPos::Blank => {
                requested |= BLANK;
                requested &= !(NEWLINE | NEWSECTION | FORMFEED);
            }
            RelPos::Newline => requested |= NEWLINE,
            RelPos::NewSection => requested |= NEWSECTION,
        }
        if self.printing_comment {
            requested |= NEWLINE;
        }
        self.write_whitespace(requested);
        self.allowed = 0;
    }

    /// Prints a token.
    pub fn token(&mut self, tok: Tok) {
        let (before, after) = may_combine(self.last_tok, tok);
        if before && !self.space_before {
            self.allowed |= BLANK;
        }
        if tok == Tok::Eof {
            self.allowed = NEWLINE;
        }
        self.last_tok = tok;
        self.emit(tok.text(), false, if after { BLANK } else { 0 });
    }

    /// Prints a literal's text (already normalised), protected from the tab writer.
    pub fn literal(&mut self, text: &str, tok: Tok) {
        self.last_tok = tok;
        self.emit(text, true, 0);
    }

    /// Prints an identifier used as an expression.
    pub fn ident(&mut self, name: &str) {
        self.last_tok = Tok::Ident;
        self.emit(name, false, 0);
    }

    /// Prints a word: a keyword written as text or a label.
    pub fn string(&mut self, s: &str) {
        self.last_tok = Tok::String;
        self.emit(s, true, 0);
    }

    pub fn attribute(&mut self, text: &str) {
        self.last_tok = Tok::Attribute;
        self.emit(text, true, 0);
    }

    pub fn comment(&mut self, text: &str) {
        self.last_tok = Tok::Comment;
        // A `//` comment never contains a line break.
        self.emit(text, false, 0);
    }

    /// Announces a comment group: a group on the line of the previous token cancels pending line
    /// breaks so that it stays on that line.
    pub fn comment_group(&mut self, rel: RelPos) {
        if matches!(rel, RelPos::Blank | RelPos::NoSpace) {
            if rel == RelPos::Blank {
                self.allowed |= BLANK;
            }
            self.allowed &= !(NEWLINE | NEWSECTION | FORMFEED | DECLCOMMA);
        }
    }

    fn emit(&mut self, data: &str, is_lit: bool, next_ws: Ws) {
        let ws = self.allowed;
        self.write_whitespace(ws);
        self.allowed = 0;
        self.printing_comment = false;
        self.write_string(data, is_lit);
        self.allowed = next_ws;
    }

    fn write_whitespace(&mut self, ws: Ws) {
        if ws & COMMA != 0 && (ws & (NEWSECTION | NEWLINE | FORMFEED) != 0 || ws & TRAILCOMMA == 0)
        {
            self.write_byte(b',', 1);
        }
        if ws & INDENT != 0 {
            self.indent_stack.push(ws);
        }
        if ws & UNINDENT != 0 {
            self.mark_unindent_line();
        }
        if ws & NEWSECTION != 0 {
            self.maybe_indent_line(ws);
            self.write_byte(b'\x0c', 2);
            self.lineout += 2;
            self.prev_lbrace_on_line = false;
            self.space_before = true;
        } else if ws & FORMFEED != 0 {
            self.maybe_indent_line(ws);
            self.write_byte(b'\x0c', 1);
            self.lineout += 1;
            self.prev_lbrace_on_line = false;
            self.space_before = true;
        } else if ws & NEWLINE != 0 {
            self.maybe_indent_line(ws);
            self.write_byte(b'\n', 1);
            self.lineout += 1;
            self.prev_lbrace_on_line = false;
            self.space_before = true;
        } else if ws & DECLCOMMA != 0 {
            self.write_byte(b',', 1);
            self.write_byte(b' ', 1);
            self.space_before = true;
        } else if ws & NOBLANK != 0 {
        } else if ws & VTAB != 0 {
            self.write_byte(b'\x0b', 1);
            self.space_before = true;
        } else if ws & BLANK != 0 {
            self.write_byte(b' ', 1);
            self.space_before = true;
        }
    }

    /// Pops the innermost indentation request, giving back its level if it was taken.
    pub fn mark_unindent_line(&mut self) {
        if let Some(ws) = self.indent_stack.pop()
            && ws & INDENTED != 0
        {
            self.indent -= 1;
        }
    }

    /// Takes the innermost pending indentation request at a line break.
    fn maybe_indent_line(&mut self, ws: Ws) {
        if ws & UNINDENT != 0 {
            return;
        }
        if let Some(top) = self.indent_stack.last_mut() {
            if *top & INDENTED != 0 || *top & INDENT == 0 {
                return;
            }
            *top |= INDENTED;
            self.indent += 1;
        }
    }

    /// Writes text; `is_lit` marks text that may contain line breaks (literals, attributes),
    /// which the column bookkeeping must look for.
    fn write_string(&mut self, s: &str, is_lit: bool) {
        if !s.is_empty() {
            self.space_before = false;
        }
        self.out.text(s.as_bytes());
        // Only literals and comments can span lines.
        match if is_lit { s.rfind('\n') } else { None } {
            Some(li) => self.column = s.len() - li,
            None => self.column += s.len(),
        }
    }

    fn write_byte(&mut self, ch: u8, n: usize) {
        for _ in 0..n {
            match ch {
                b'\n' => self.out.end_line(false),
                b'\x0c' => self.out.end_line(true),
                b'\x0b' => self.out.end_cell(false),
                _ => self.out.text(&[ch]),
            }
        }
        if ch == b'\n' || ch == b'\x0c' {
            self.column = 1;
            let tabs = self.indent.max(0) as usize;
            for _ in 0..tabs {
                self.out.end_cell(true);
            }
            self.column += tabs;
            return;
        }
        self.column += n;
    }
}
