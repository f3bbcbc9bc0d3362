//! A byte-level skim of a CUE file: where each top-level declaration starts and ends, the label
//! of those that are plain fields, and the identifiers each one mentions.
//!
//! The loader uses it to parse only the declarations of an imported package that something can
//! reach (see [`super::prune`]): a module's vendored Kubernetes schemas are ~600 KB of CUE of
//! which a module uses about half. The skim follows the lexer's rules for what matters here:
//! strings (quoted, multi-line, raw `#"…"#`, with `\(…)` interpolations), comments, brackets, and
//! the automatic comma at the end of a line (after an identifier, keyword, literal, `)`, `]`,
//! `}`, `?`, `...` or attribute, unless the next line starts with `:` or `,`), and attributes,
//! whose bodies it skips as the lexer does (balanced brackets and strings; nothing inside an
//! attribute refers to anything). It is written by hand because it must agree with our own
//! lexer, not with a general tokenizer.
//!
//! Whenever the text is not what the skim expects (unbalanced brackets, an unterminated string,
//! nesting deeper than [`MAX_NEST`]) it returns `None`, and the file is parsed whole.

use crate::syntax::lexer::skip_attr_string;

/// Interpolations nested deeper than this make the skim give up.
const MAX_NEST: u32 = 64;

/// A byte range in the source.
pub type Range = (u32, u32);

/// One top-level declaration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chunk {
    /// From its first token to the end of its last token.
    pub start: u32,
    pub end: u32,
    /// The label of a field `label: …` (`label?:`, `label!:`) written as an identifier; `None`
    /// for everything else (package clause, imports, embeddings, `let`, comprehensions, quoted
    /// or dynamic labels, patterns), which is always kept.
    pub label: Option<Range>,
    /// Identifiers written in the declaration, each with the identifier selected right after it
    /// (`name.sel`), if any: this range of [`Skim::refs`].
    pub refs: (u32, u32),
}

/// An identifier and what is selected from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ref {
    pub name: Range,
    /// `sel` in `name.sel` (an identifier right after the dot).
    pub sel: Option<Range>,
    /// Whether something other than `.ident` follows (`name[…]`, `name."x"`, or the name used
    /// as a value), which needs the whole of an imported package.
    pub whole: bool,
}

/// The top-level declarations of a file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Skim {
    pub chunks: Vec<Chunk>,
    /// The identifiers of all declarations, in the order they are written (one vector for the
    /// file rather than one per declaration).
    pub refs: Vec<Ref>,
    /// Whether an `@embed` attribute is written anywhere (outside comments and strings).
    pub embeds: bool,
}

impl Skim {
    /// The identifiers written in declaration `i`.
    pub fn refs_of(&self, i: usize) -> &[Ref] {
        let (from, to) = self.chunks[i].refs;
        &self.refs[from as usize..to as usize]
    }
}

/// Skims `src`; `None` when it is not well-formed enough to be split safely.
pub fn skim(src: &str) -> Option<Skim> {
    let mut s = Scanner {
        b: src.as_bytes(),
        i: 0,
        refs: Vec::new(),
        nest: 0,
        embeds: false,
    };
    s.top()
}

/// Bytes that can continue an identifier, as a table: identifiers are most of what the skim
/// scans outside comments, and one load per byte beats five comparisons.
static IDENT_BYTE: [bool; 256] = {
    let mut t = [false; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        t[c] = b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b == b'#' || b >= 0x80;
        c += 1;
    }
    t
};

/// Whether a byte can continue an identifier.
fn ident_byte(c: u8) -> bool {
    IDENT_BYTE[c as usize]
}

/// The end of the identifier bytes starting at `i`.
fn ident_end(b: &[u8], i: usize) -> usize {
    b.get(i..)
        .and_then(|rest| rest.iter().position(|&c| !ident_byte(c)))
        .map_or(b.len(), |n| i + n)
}

/// Whether a byte can start an identifier (`#` is checked separately: it may open a raw string).
fn ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_' || c == b'$' || c == b'#' || c >= 0x80
}

/// The kind of the last token seen, for the automatic comma.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Last {
    /// Nothing yet in this declaration.
    None,
    /// A token after which a newline ends the declaration.
    EndsLine,
    /// An operator or opening bracket: the declaration goes on.
    Continues,
}

struct Scanner<'a> {
    b: &'a [u8],
    i: usize,
    refs: Vec<Ref>,
    nest: u32,
    embeds: bool,
}

impl Scanner<'_> {
    fn peek(&self, k: usize) -> u8 {
        self.b.get(self.i + k).copied().unwrap_or(0)
    }

    fn top(&mut self) -> Option<Skim> {
        // Room for the declarations and identifiers of a typical file, so that neither vector
        // is reallocated many times as it grows.
        let mut chunks = Vec::with_capacity(self.b.len() / 256);
        self.refs.reserve(self.b.len() / 64);
        let mut start: Option<usize> = None;
        let mut last_end = 0usize;
        let mut last = Last::None;
        while self.i < self.b.len() {
            let c = self.b[self.i];
            match c {
                b' ' | b'\t' | b'\r' => self.i += 1,
                b'\n' => {
                    self.i += 1;
                    if last == Last::EndsLine && !self.continues_line() {
                        self.close(&mut chunks, &mut start, last_end);
                        last = Last::None;
                    }
                }
                b'/' if self.peek(1) == b'/' => self.comment(),
                b',' => {
                    self.i += 1;
                    self.close(&mut chunks, &mut start, last_end);
                    last = Last::None;
                }
                _ => {
                    if start.is_none() {
                        start = Some(self.i);
                    }
                    // A bracket's inside is `group`'s: this loop is always at depth 0, where a
                    // closing bracket is unbalanced (`token` gives up on it).
                    if matches!(c, b'(' | b'[' | b'{') {
                        self.i += 1;
                        self.group()?;
                        last = Last::EndsLine;
                    } else {
                        last = self.token(&mut 0)?;
                    }
                    last_end = self.i;
                }
            }
        }
        self.close(&mut chunks, &mut start, last_end);
        Some(Skim {
            chunks,
            refs: std::mem::take(&mut self.refs),
            embeds: self.embeds,
        })
    }

    /// Ends the declaration that began at `start` (if any) at `end`, with the references
    /// recorded since it began.
    fn close(&mut self, chunks: &mut Vec<Chunk>, start: &mut Option<usize>, end: usize) {
        let Some(st) = start.take() else {
            return;
        };
        // The references recorded since the last declaration ended are this one's.
        let from = chunks.last().map_or(0, |c: &Chunk| c.refs.1);
        if is_clause(&self.b[st..end]) {
            // The names in a package clause or an import bind; they do not refer.
            self.refs.truncate(from as usize);
        }
        chunks.push(Chunk {
            start: st as u32,
            end: end as u32,
            label: field_label(self.b, st),
            refs: (from, self.refs.len() as u32),
        });
    }

    /// Whether the next significant text starts with `:` or a single `,` (no comma is inserted).
    fn continues_line(&self) -> bool {
        let mut j = self.i;
        while j < self.b.len() && matches!(self.b[j], b' ' | b'\t' | b'\r' | b'\n') {
            j += 1;
        }
        match self.b.get(j) {
            Some(b':') => true,
            Some(b',') => self.b.get(j + 1) != Some(&b','),
            _ => false,
        }
    }

    fn comment(&mut self) {
        self.i = memchr::memchr(b'\n', &self.b[self.i..]).map_or(self.b.len(), |n| self.i + n);
    }

    /// Scans one token at `self.i` (not whitespace, not a comment); `depth` counts brackets.
    fn token(&mut self, depth: &mut u32) -> Option<Last> {
        let c = self.b[self.i];
        match c {
            b'(' | b'[' | b'{' => {
                *depth += 1;
                self.i += 1;
                Some(Last::Continues)
            }
            b')' | b']' | b'}' => {
                *depth = depth.checked_sub(1)?;
                self.i += 1;
                Some(Last::EndsLine)
            }
            b'"' | b'\'' => {
                self.string(0)?;
                Some(Last::EndsLine)
            }
            b'#' => {
                let h = self.b[self.i..].iter().take_while(|&&x| x == b'#').count();
                if matches!(self.peek(h), b'"' | b'\'') {
                    self.i += h;
                    self.string(h)?;
                    Some(Last::EndsLine)
                } else {
                    self.ident();
                    Some(Last::EndsLine)
                }
            }
            b'@' => {
                // An attribute: `@name(` … balanced … `)`.
                self.i += 1;
                let name = self.i;
                while self.i < self.b.len() && ident_byte(self.b[self.i]) {
                    self.i += 1;
                }
                self.embeds |= &self.b[name..self.i] == b"embed";
                if self.peek(0) == b'(' {
                    self.attribute_body()?;
                }
                Some(Last::EndsLine)
            }
            b'0'..=b'9' => {
                self.number();
                Some(Last::EndsLine)
            }
            b'.' => {
                if self.peek(1) == b'.' && self.peek(2) == b'.' {
                    self.i += 3;
                    Some(Last::EndsLine)
                } else if self.peek(1).is_ascii_digit() {
                    self.number();
                    Some(Last::EndsLine)
                } else {
                    self.i += 1;
                    Some(Last::Continues)
                }
            }
            b'?' => {
                self.i += 1;
                Some(Last::EndsLine)
            }
            _ if ident_start(c) => {
                self.ident();
                Some(Last::EndsLine)
            }
            _ => {
                // Operators: one byte at a time is enough, none of them ends a line.
                self.i += 1;
                Some(Last::Continues)
            }
        }
    }

    /// Scans the inside of a bracket whose opening byte was just consumed, up to and including
    /// its closing byte. Inside brackets a newline never ends a declaration, so this loop only
    /// follows brackets, strings, comments and attributes, and records identifiers.
    fn group(&mut self) -> Option<()> {
        let b = self.b;
        let mut depth: u32 = 1;
        loop {
            let c = *b.get(self.i)?;
            match CLASS[c as usize] {
                C_SPACE => self.i += 1,
                C_IDENT => self.ident(),
                C_OPEN => {
                    depth += 1;
                    self.i += 1;
                }
                C_CLOSE => {
                    depth -= 1;
                    self.i += 1;
                    if depth == 0 {
                        return Some(());
                    }
                }
                C_SLASH => {
                    if b.get(self.i + 1) == Some(&b'/') {
                        self.comment();
                    } else {
                        self.i += 1;
                    }
                }
                C_HASH if !matches!(b.get(self.i + 1), Some(b'#' | b'"' | b'\'')) => self.ident(),
                C_TOKEN | C_HASH => {
                    self.token(&mut depth)?;
                }
                _ => self.i += 1,
            }
        }
    }

    /// Scans the body of an attribute from its `(` the way the lexer does: brackets are
    /// balanced, strings are skipped, and nothing inside is a reference.
    fn attribute_body(&mut self) -> Option<()> {
        let b = self.b;
        // The open brackets, innermost last; nesting deeper than this gives up.
        let mut stack = [0u8; 32];
        let mut len = 0;
        let mut i = self.i;
        loop {
            while b.get(i).is_some_and(|&c| !ATTR_SPECIAL[c as usize]) {
                i += 1;
            }
            let &c = b.get(i)?;
            match c {
                b'(' | b'[' | b'{' => {
                    *stack.get_mut(len)? = c;
                    len += 1;
                }
                b')' | b']' | b'}' => {
                    let open = match c {
                        b')' => b'(',
                        b']' => b'[',
                        _ => b'{',
                    };
                    if len == 0 || stack[len - 1] != open {
                        return None;
                    }
                    len -= 1;
                    if len == 0 {
                        self.i = i + 1;
                        return Some(());
                    }
                }
                b'"' | b'\'' => i = skip_attr_string(b, i) - 1,
                _ => {}
            }
            i += 1;
        }
    }

    fn number(&mut self) {
        while self.i < self.b.len() {
            let c = self.b[self.i];
            let sign = (c == b'+' || c == b'-')
                && self.i > 0
                && matches!(self.b[self.i - 1], b'e' | b'E')
                && !self.b[..self.i].starts_with(b"0x");
            if c.is_ascii_alphanumeric() || c == b'_' || c == b'.' || sign {
                // `1...` is not a number followed by an ellipsis in valid CUE; stop at `..`.
                if c == b'.' && self.peek(1) == b'.' {
                    break;
                }
                self.i += 1;
            } else {
                break;
            }
        }
    }

    fn ident(&mut self) {
        let st = self.i;
        let b = self.b;
        let mut i = st + 1;
        while i < b.len() && IDENT_BYTE[b[i] as usize] {
            i += 1;
        }
        self.i = i;
        // A selector (`x.name`, not `...name`) was recorded with the identifier before it.
        if st > 0 && self.b[st - 1] == b'.' && (st < 2 || self.b[st - 2] != b'.') {
            return;
        }
        let name = (st as u32, self.i as u32);
        let mut sel = None;
        let mut whole = true;
        if self.peek(0) == b'.' && self.peek(1) != b'.' {
            let s = self.i + 1;
            if self.b.get(s).is_some_and(|&c| ident_start(c)) {
                let e = ident_end(self.b, s);
                sel = Some((s as u32, e as u32));
                whole = false;
            }
        }
        self.refs.push(Ref { name, sel, whole });
    }

    /// Scans tokens up to the closing byte `close` (the opening one is consumed).
    fn balanced(&mut self, close: u8) -> Option<()> {
        self.nest += 1;
        if self.nest > MAX_NEST {
            return None;
        }
        let mut depth: u32 = 0;
        loop {
            let c = *self.b.get(self.i)?;
            match c {
                b' ' | b'\t' | b'\r' | b'\n' => self.i += 1,
                b'/' if self.peek(1) == b'/' => self.comment(),
                _ if c == close && depth == 0 => {
                    self.i += 1;
                    break;
                }
                _ => {
                    self.token(&mut depth)?;
                }
            }
        }
        self.nest -= 1;
        Some(())
    }

    /// Scans a string whose opening quote is at `self.i`, after `hashes` `#`.
    fn string(&mut self, hashes: usize) -> Option<()> {
        let q = self.b[self.i];
        let multi = self.peek(1) == q && self.peek(2) == q;
        if !multi && self.peek(1) == q {
            // `""`: the empty string.
            self.i += 2;
            return self.hashes_after(hashes);
        }
        self.i += if multi { 3 } else { 1 };
        loop {
            // Only a backslash, the quote and a newline matter inside a string.
            self.i += memchr::memchr3(b'\\', q, b'\n', self.b.get(self.i..)?)?;
            let c = *self.b.get(self.i)?;
            if c == b'\\'
                && self.b[self.i + 1..]
                    .iter()
                    .take_while(|&&x| x == b'#')
                    .count()
                    >= hashes
            {
                self.i += 1 + hashes;
                match self.b.get(self.i)? {
                    b'(' => {
                        self.i += 1;
                        self.balanced(b')')?;
                    }
                    _ => self.i += 1,
                }
                continue;
            }
            if c == b'\n' && !multi {
                return None;
            }
            if c == q {
                let closes = if multi {
                    self.peek(1) == q && self.peek(2) == q
                } else {
                    true
                };
                let n = if multi { 3 } else { 1 };
                if closes
                    && self.b[self.i + n..]
                        .iter()
                        .take_while(|&&x| x == b'#')
                        .count()
                        >= hashes
                {
                    self.i += n;
                    return self.hashes_after(hashes);
                }
            }
            self.i += 1;
        }
    }

    fn hashes_after(&mut self, hashes: usize) -> Option<()> {
        for _ in 0..hashes {
            if self.peek(0) != b'#' {
                return None;
            }
            self.i += 1;
        }
        Some(())
    }
}

/// Whether a declaration is a package clause or an import declaration.
fn is_clause(d: &[u8]) -> bool {
    [&b"import"[..], b"package"]
        .iter()
        .any(|k| d.starts_with(k) && !d.get(k.len()).is_some_and(|&c| ident_byte(c)))
}

/// The label of the declaration starting at `st` if it is `ident:`, `ident?:` or `ident!:`.
fn field_label(b: &[u8], st: usize) -> Option<Range> {
    let mut j = st;
    if !b.get(j).is_some_and(|&c| ident_start(c)) {
        return None;
    }
    while j < b.len() && ident_byte(b[j]) {
        j += 1;
    }
    let label = (st as u32, j as u32);
    if matches!(b.get(j), Some(b'?' | b'!')) {
        j += 1;
    }
    while matches!(b.get(j), Some(b' ' | b'\t')) {
        j += 1;
    }
    (b.get(j) == Some(&b':')).then_some(label)
}

const C_OTHER: u8 = 0;
const C_SPACE: u8 = 1;
const C_IDENT: u8 = 2;
const C_OPEN: u8 = 3;
const C_CLOSE: u8 = 4;
const C_SLASH: u8 = 5;
const C_TOKEN: u8 = 6;
const C_HASH: u8 = 7;

/// What a byte starts inside brackets, for [`Scanner::group`]'s dispatch (`#` is not an
/// identifier start here: it may open a raw string).
static CLASS: [u8; 256] = {
    let mut t = [C_OTHER; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        t[c] = match b {
            b' ' | b'\t' | b'\r' | b'\n' => C_SPACE,
            b'(' | b'[' | b'{' => C_OPEN,
            b')' | b']' | b'}' => C_CLOSE,
            b'/' => C_SLASH,
            b'#' => C_HASH,
            b'"' | b'\'' | b'@' | b'.' | b'0'..=b'9' => C_TOKEN,
            _ if b.is_ascii_alphabetic() || b == b'_' || b == b'$' || b >= 0x80 => C_IDENT,
            _ => C_OTHER,
        };
        c += 1;
    }
    t
};

/// The bytes that matter in an attribute's body: brackets and quotes.
static ATTR_SPECIAL: [bool; 256] = {
    let mut t = [false; 256];
    let mut c = 0;
    while c < 256 {
        t[c] = matches!(
            c as u8,
            b'(' | b')' | b'[' | b']' | b'{' | b'}' | b'"' | b'\''
        );
        c += 1;
    }
    t
};

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(src: &str) -> Vec<(Option<&str>, &str)> {
        let s = skim(src).expect("skims");
        s.chunks
            .iter()
            .map(|c| {
                (
                    c.label.map(|(a, b)| &src[a as usize..b as usize]),
                    &src[c.start as usize..c.end as usize],
                )
            })
            .collect()
    }

    #[test]
    fn splits_top_level_declarations() {
        let src = "package x\n\nimport (\n\t\"strings\"\n)\n\n// doc\n#A: {\n\ta: int\n} @go(A)\n#B: int |\n\tstring\nc?: \"x\" // note\nlet y = 1\n#D: #A & {b: y}, e: 1\n";
        assert_eq!(
            labels(src),
            vec![
                (None, "package x"),
                (None, "import (\n\t\"strings\"\n)"),
                (Some("#A"), "#A: {\n\ta: int\n} @go(A)"),
                (Some("#B"), "#B: int |\n\tstring"),
                (Some("c"), "c?: \"x\""),
                (None, "let y = 1"),
                (Some("#D"), "#D: #A & {b: y}"),
                (Some("e"), "e: 1"),
            ]
        );
    }

    #[test]
    fn strings_comments_and_interpolations_do_not_split() {
        let src = "a: \"x } // \\(b + \"}\")\"\nb: #\"raw \" \\#(c) \"#\nc: \"\"\"\n\t{\n\t\"\"\"\nd: '\\''\n";
        let l = labels(src);
        assert_eq!(
            l.iter().map(|x| x.0.unwrap()).collect::<Vec<_>>(),
            ["a", "b", "c", "d"]
        );
        let s = skim(src).unwrap();
        let names = |i: usize| {
            s.refs_of(i)
                .iter()
                .map(|r| &src[r.name.0 as usize..r.name.1 as usize])
                .collect::<Vec<_>>()
        };
        assert_eq!(names(0), ["a", "b"]);
        assert_eq!(names(1), ["b", "c"]);
    }

    #[test]
    fn a_line_starting_with_a_colon_continues() {
        assert_eq!(labels("a\n: 1\nb: 2\n").len(), 2);
    }

    #[test]
    fn selectors_are_recorded() {
        let src = "a: v1.#Pod & v1 & v1[\"x\"]\n";
        let s = skim(src).unwrap();
        let r: Vec<(&str, Option<&str>, bool)> = s
            .refs_of(0)
            .iter()
            .map(|r| {
                (
                    &src[r.name.0 as usize..r.name.1 as usize],
                    r.sel.map(|(a, b)| &src[a as usize..b as usize]),
                    r.whole,
                )
            })
            .collect();
        assert_eq!(
            r,
            vec![
                ("a", None, true),
                ("v1", Some("#Pod"), false),
                ("v1", None, true),
                ("v1", None, true),
            ]
        );
    }

    /// `@embed` attributes are noticed wherever they are written, and only they: not in
    /// comments or strings, and not other attributes.
    #[test]
    fn embed_attributes_are_noticed() {
        let embeds = |src: &str| skim(src).expect("skims").embeds;
        assert!(embeds("package p\na: _ @embed(file=\"x.json\")\n"));
        assert!(embeds("package p\na: b: {c: _ @embed(glob=*.yaml)}\n"));
        assert!(!embeds("package p\n// a: _ @embed(file=x.json)\n"));
        assert!(!embeds(
            "package p\na: \"@embed(file=x.json)\"\nb: _ @embedded(x)\n"
        ));
    }

    /// An attribute's body is skipped the way the lexer scans it: identifiers in it are not
    /// references, `//` in it is not a comment, and brackets inside its strings do not count.
    #[test]
    fn attribute_bodies_are_skipped_as_the_lexer_does() {
        let src = "#A: {\n\tb?: #B @go(B,*B) @protobuf(1,bytes,opt)\n\tc: d @x(a//b, \")}\", [{}])\n}\ne: f\n";
        let s = skim(src).expect("skims");
        assert_eq!(
            labels(src).iter().map(|x| x.0).collect::<Vec<_>>(),
            [Some("#A"), Some("e")]
        );
        let names = |i: usize| {
            s.refs_of(i)
                .iter()
                .map(|r| &src[r.name.0 as usize..r.name.1 as usize])
                .collect::<Vec<_>>()
        };
        assert_eq!(names(0), ["#A", "b", "#B", "c", "d"]);
        assert_eq!(names(1), ["e", "f"]);
        // Unbalanced or unterminated bodies give up, as the lexer reports them.
        assert_eq!(skim("a: b @x(c]\n"), None);
        assert_eq!(skim("a: b @x(c\n"), None);
    }

    #[test]
    fn malformed_text_gives_up() {
        assert_eq!(skim("a: {\n"), None);
        assert_eq!(skim("a: }\n"), None);
        assert_eq!(skim("a: \"x\nb: 1\n"), None);
        assert_eq!(skim("a: \"\\(b\"\n"), None);
    }
}
