//! The file table: source texts by [`FileId`], with line/column lookup for diagnostics.
//!
//! Spans in the syntax tree are byte ranges plus a file id; this is where they become
//! `file:line:col`. Columns are 1-based byte columns, as the Go implementation prints them.

use crate::ast::{FileId, Span};

/// One source file: its display name, text and the byte offset of each line start (computed on
/// first use: most files never need a position turned into a line).
#[derive(Clone, Debug)]
pub struct SourceFile {
    /// The name errors show for the file.
    pub name: String,
    /// The file's text, shared with the evaluator's messages and the errors that quote it. A
    /// loader's `String` becomes it without a copy.
    pub text: std::sync::Arc<String>,
    line_starts: std::cell::OnceCell<Vec<usize>>,
}

impl SourceFile {
    /// A file with this display name and text.
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> SourceFile {
        SourceFile {
            name: name.into(),
            text: std::sync::Arc::new(text.into()),
            line_starts: std::cell::OnceCell::new(),
        }
    }

    /// A file whose text is shared with others (a loader's, read once for many loads).
    pub fn shared(name: impl Into<String>, text: std::sync::Arc<String>) -> SourceFile {
        SourceFile {
            name: name.into(),
            text,
            line_starts: std::cell::OnceCell::new(),
        }
    }

    fn line_starts(&self) -> &[usize] {
        self.line_starts.get_or_init(|| {
            std::iter::once(0)
                .chain(self.text.match_indices('\n').map(|(i, _)| i + 1))
                .collect()
        })
    }

    /// 1-based line and column of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let starts = self.line_starts();
        let line = starts.partition_point(|&s| s <= offset).max(1);
        (line, offset - starts[line - 1] + 1)
    }
}

/// 1-based line and column of a byte offset in `text`, as [`SourceFile::line_col`] gives them,
/// without building the table of line starts (for a one-off position, such as an error's).
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let head = &text.as_bytes()[..offset.min(text.len())];
    let line = memchr::memchr_iter(b'\n', head).count() + 1;
    let start = memchr::memrchr(b'\n', head).map_or(0, |p| p + 1);
    (line, offset - start + 1)
}

/// All files of a session, addressed by [`FileId`].
#[derive(Clone, Debug, Default)]
pub struct SourceMap {
    files: Vec<SourceFile>,
}

impl SourceMap {
    /// An empty map.
    pub fn new() -> SourceMap {
        SourceMap::default()
    }

    /// Adds a file and returns its id.
    pub fn add(&mut self, name: impl Into<String>, text: impl Into<String>) -> FileId {
        self.files.push(SourceFile::new(name, text));
        FileId(self.files.len() as u32 - 1)
    }

    /// The file with this id, if there is one.
    pub fn get(&self, id: FileId) -> Option<&SourceFile> {
        self.files.get(id.0 as usize)
    }

    /// `name:line:col` of the start of a span.
    pub fn position(&self, span: Span) -> String {
        match self.get(span.file) {
            Some(f) => {
                let (l, c) = f.line_col(span.start as usize);
                format!("{}:{l}:{c}", f.name)
            }
            None => format!("<unknown>:{}", span.start),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_and_column() {
        let f = SourceFile::new("a.cue", "ab\ncd\n\nx");
        assert_eq!(f.line_col(0), (1, 1));
        assert_eq!(f.line_col(1), (1, 2));
        assert_eq!(f.line_col(3), (2, 1));
        assert_eq!(f.line_col(6), (3, 1));
        assert_eq!(f.line_col(7), (4, 1));
        assert_eq!(f.line_col(8), (4, 2));
    }

    #[test]
    fn one_off_positions_agree_with_the_table() {
        for text in ["ab\ncd\n\nx", "", "\n", "a\n"] {
            let f = SourceFile::new("a.cue", text);
            for offset in 0..text.len() + 3 {
                assert_eq!(
                    line_col(text, offset),
                    f.line_col(offset),
                    "{text:?} at {offset}"
                );
            }
        }
    }

    #[test]
    fn positions() {
        let mut m = SourceMap::new();
        let id = m.add("x.cue", "a: 1\nb: }");
        assert_eq!(m.position(Span::new(id, 8, 9)), "x.cue:2:4");
    }
}
