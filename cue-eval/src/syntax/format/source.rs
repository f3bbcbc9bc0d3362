//! What the formatter needs to know about the original text: line numbers, where the tokens that
//! have no node of their own are (colons, brackets, `=`), and the relative position of a token.
//!
//! The official printer keeps the author's layout through one fact per token, its *relative
//! position*: whether it was written right after the previous token, after a space, after one
//! line break, or after a blank line. The scanner computes it from the whitespace since the last
//! token or comment, and so do we, from the byte offsets the syntax tree keeps.

use crate::ast::Comment;

/// The layout of the text before a token, ordered like the official `token.RelPos` so that
/// comparisons such as "at least on a new line" read the same.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum RelPos {
    /// No information: the token was not in the source (a brace the printer adds).
    None,
    /// Right after the previous token.
    NoSpace,
    /// After spaces or tabs on the same line.
    Blank,
    /// After exactly one line break.
    Newline,
    /// After at least one blank line.
    NewSection,
}

/// The source text and its comment list, for position queries.
pub(super) struct Source<'a> {
    pub text: &'a str,
    bytes: &'a [u8],
    comments: &'a [Comment],
}

impl<'a> Source<'a> {
    pub fn new(text: &'a str, comments: &'a [Comment]) -> Source<'a> {
        Source {
            text,
            bytes: text.as_bytes(),
            comments,
        }
    }

    /// The number of line breaks in `start..end`. Line questions are always about the gap
    /// between two tokens or the extent of a node, so counting is cheaper than a line table.
    pub fn newlines(&self, start: u32, end: u32) -> usize {
        let end = (end as usize).min(self.bytes.len());
        let start = (start as usize).min(end);
        self.bytes[start..end]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
    }

    /// Whether `start..end` contains no line break.
    pub fn on_one_line(&self, start: u32, end: u32) -> bool {
        let end = (end as usize).min(self.bytes.len());
        let start = (start as usize).min(end);
        !self.bytes[start..end].contains(&b'\n')
    }

    /// The relative position of the token that starts at `offset`: the kind of whitespace
    /// between it and the previous token or comment.
    pub fn relpos(&self, offset: u32) -> RelPos {
        let mut i = (offset as usize).min(self.bytes.len());
        let mut newlines = 0;
        let mut spaces = false;
        while i > 0 {
            match self.bytes[i - 1] {
                b'\n' => newlines += 1,
                b' ' | b'\t' => spaces = true,
                b'\r' => {}
                _ => break,
            }
            i -= 1;
        }
        match newlines {
            0 if spaces => RelPos::Blank,
            0 => RelPos::NoSpace,
            1 => RelPos::Newline,
            _ => RelPos::NewSection,
        }
    }

    /// Whether the token at `offset` starts on a new line (`token.Pos.IsNewline`).
    pub fn is_newline(&self, offset: u32) -> bool {
        self.relpos(offset) >= RelPos::Newline
    }

    /// The comment that starts exactly at `offset`, if any.
    fn comment_at(&self, offset: u32) -> Option<&'a Comment> {
        let i = self.comments.partition_point(|c| c.span.start < offset);
        self.comments.get(i).filter(|c| c.span.start == offset)
    }

    /// The offset of the first byte at or after `offset` that is neither whitespace nor part
    /// of a comment: the start of the next token.
    pub fn skip_trivia(&self, offset: u32) -> u32 {
        let mut i = offset as usize;
        while i < self.bytes.len() {
            match self.bytes[i] {
                b' ' | b'\t' | b'\r' | b'\n' => i += 1,
                b'/' => match self.comment_at(i as u32) {
                    Some(c) => i = (c.span.end as usize).max(i + 1),
                    None => break,
                },
                _ => break,
            }
        }
        i as u32
    }

    /// The offset of the first byte at or after `offset` that is not whitespace.
    pub fn skip_space(&self, offset: u32) -> u32 {
        let mut i = offset as usize;
        while i < self.bytes.len() && matches!(self.bytes[i], b' ' | b'\t' | b'\r' | b'\n') {
            i += 1;
        }
        i as u32
    }

    /// The offset of the token `tok` that follows `offset` (skipping whitespace and comments).
    /// The syntax tree guarantees the token is there; if it is not (a tree built by hand), the
    /// position of whatever comes next is returned, which only affects spacing.
    pub fn token_after(&self, offset: u32, tok: &str) -> u32 {
        let at = self.skip_trivia(offset);
        if self.text.as_bytes()[at as usize..].starts_with(tok.as_bytes()) {
            return at;
        }
        // A keyword such as `in` may be preceded by something we do not model; search a little.
        match self.text.get(at as usize..).and_then(|rest| rest.find(tok)) {
            Some(d) => at + d as u32,
            None => at,
        }
    }

    /// The start of the last non-whitespace byte run that ends at or before `offset`, i.e. the
    /// end offset of the previous token or comment (exclusive).
    pub fn prev_end(&self, offset: u32) -> u32 {
        let mut i = (offset as usize).min(self.bytes.len());
        while i > 0 && matches!(self.bytes[i - 1], b' ' | b'\t' | b'\r' | b'\n') {
            i -= 1;
        }
        i as u32
    }

    pub fn len(&self) -> u32 {
        self.bytes.len() as u32
    }

    /// The text of a byte range, clamped to the source.
    pub fn slice(&self, start: u32, end: u32) -> &'a str {
        let end = (end as usize).min(self.text.len());
        let start = (start as usize).min(end);
        self.text.get(start..end).unwrap_or("")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_breaks_and_relative_positions() {
        let src = "a: 1\n\nb:  2\nc:3";
        let s = Source::new(src, &[]);
        assert!(
            s.on_one_line(0, 4),
            "a line break belongs to the line it ends"
        );
        assert_eq!(s.newlines(0, 7), 2);
        assert_eq!(s.relpos(0), RelPos::NoSpace);
        assert_eq!(s.relpos(3), RelPos::Blank);
        assert_eq!(s.relpos(6), RelPos::NewSection);
        assert_eq!(s.relpos(12), RelPos::Newline);
        assert_eq!(s.relpos(14), RelPos::NoSpace);
    }
}
