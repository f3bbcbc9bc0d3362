//! Column alignment: a reimplementation of the behaviour of Go's `text/tabwriter` with the
//! settings `cue fmt` uses (minimum width 0, tab width 4, padding 1, padding with spaces, and the
//! modes `StripEscape | TabIndent | DiscardEmptyColumns`).
//!
//! The official printer writes a byte stream in which `\t` (indentation) and `\v` (an alignment
//! point) end cells, `\n` (the alignment block continues) and `\f` (the block ends) end lines,
//! and escaped text (literals, comments) is opaque. Here the printer calls [`TabWriter::text`],
//! [`TabWriter::end_cell`] and [`TabWriter::end_line`] directly, which saves encoding and
//! rescanning that stream. Consecutive lines that have a cell in the same column form a block
//! whose cells are padded to the widest one; matching the exact block rules, including their
//! corner cases, is what makes the alignment of values and comments byte-identical to `cue fmt`.

const TAB_WIDTH: usize = 8;
const PADDING: usize = 1;

#[derive(Clone, Copy, Default)]
struct Cell {
    /// Bytes of text in the cell.
    size: usize,
    /// Display width in characters.
    width: usize,
    /// Whether the cell was terminated by a tab (an indentation cell) rather than `\v`.
    htab: bool,
}

/// Buffers cells until a block can be aligned, then writes it to `out`.
pub(super) struct TabWriter {
    out: Vec<u8>,
    /// Text of the buffered cells.
    buf: Vec<u8>,
    cell: Cell,
    /// The terminated cells of all buffered lines, line after line.
    cells: Vec<Cell>,
    /// Index in `cells` of the first cell of each buffered line; the last line is the one
    /// being filled.
    line_starts: Vec<usize>,
    widths: Vec<usize>,
}

/// The number of characters in UTF-8 text (continuation bytes are not counted).
fn char_count(b: &[u8]) -> usize {
    if b.is_ascii() {
        return b.len();
    }
    b.iter().filter(|&&c| (c & 0xC0) != 0x80).count()
}

impl TabWriter {
    pub fn new(capacity: usize) -> TabWriter {
        TabWriter {
            out: Vec::with_capacity(capacity),
            buf: Vec::with_capacity(4096),
            cell: Cell::default(),
            cells: Vec::with_capacity(256),
            line_starts: vec![0],
            widths: Vec::new(),
        }
    }

    /// Appends text to the current cell. Line breaks inside the text (multi-line literals)
    /// do not end the line: the text is opaque, as escaped text is in the official printer.
    pub fn text(&mut self, text: &[u8]) {
        self.append(text);
        self.cell.width += char_count(text);
    }

    /// Ends the current cell: a tab-terminated (indentation) cell if `htab`, else an alignment
    /// cell.
    pub fn end_cell(&mut self, htab: bool) {
        self.terminate_cell(htab);
    }

    /// Ends the current line; a form feed also ends the alignment block.
    pub fn end_line(&mut self, formfeed: bool) {
        let ncells = self.terminate_cell(false);
        self.line_starts.push(self.cells.len());
        // A line with a single cell ends the block too, since the last cell of a line never
        // takes part in alignment.
        if formfeed || ncells == 1 {
            self.flush();
        }
    }

    /// Whether anything was written.
    pub fn is_empty(&self) -> bool {
        self.out.is_empty() && self.buf.is_empty() && self.cells.is_empty()
    }

    /// Aligns what is left and returns the text.
    pub fn finish(mut self) -> Vec<u8> {
        self.flush();
        self.out
    }

    fn nlines(&self) -> usize {
        self.line_starts.len()
    }

    /// The cells of buffered line `i`.
    fn line(&self, i: usize) -> &[Cell] {
        let end = self
            .line_starts
            .get(i + 1)
            .copied()
            .unwrap_or(self.cells.len());
        &self.cells[self.line_starts[i]..end]
    }

    fn line_len(&self, i: usize) -> usize {
        let end = self
            .line_starts
            .get(i + 1)
            .copied()
            .unwrap_or(self.cells.len());
        end - self.line_starts[i]
    }

    fn append(&mut self, text: &[u8]) {
        self.buf.extend_from_slice(text);
        self.cell.size += text.len();
    }

    /// Ends the current cell; returns the number of cells of the current line.
    fn terminate_cell(&mut self, htab: bool) -> usize {
        self.cell.htab = htab;
        let cell = std::mem::take(&mut self.cell);
        self.cells.push(cell);
        self.cells.len() - self.line_starts[self.line_starts.len() - 1]
    }

    fn flush(&mut self) {
        if self.cell.size > 0 {
            self.terminate_cell(false);
        }
        let nlines = self.nlines();
        self.format(0, 0, nlines);
        self.buf.clear();
        self.cell = Cell::default();
        self.cells.clear();
        self.line_starts.clear();
        self.line_starts.push(0);
        self.widths.clear();
    }

    /// Formats the lines `line0..line1` whose columns left of `self.widths.len()` are known,
    /// finding the blocks of the next column recursively. Returns the new position in `buf`.
    fn format(&mut self, pos0: usize, line0: usize, line1: usize) -> usize {
        let mut pos = pos0;
        let mut line0 = line0;
        let column = self.widths.len();
        let mut this = line0;
        while this < line1 {
            if column + 1 >= self.line_len(this) {
                this += 1;
                continue;
            }
            // The line has a cell in this column: a block of such lines starts here.
            pos = self.write_lines(pos, line0, this);
            line0 = this;
            let mut width = 0;
            let mut discardable = true;
            while this < line1 {
                let line = self.line(this);
                if column + 1 >= line.len() {
                    break;
                }
                let c = line[column];
                width = width.max(c.width + PADDING);
                if c.width > 0 || c.htab {
                    discardable = false;
                }
                this += 1;
            }
            if discardable {
                width = 0;
            }
            self.widths.push(width);
            pos = self.format(pos, line0, this);
            self.widths.pop();
            line0 = this;
        }
        self.write_lines(pos, line0, line1)
    }

    fn write_lines(&mut self, pos0: usize, line0: usize, line1: usize) -> usize {
        let mut pos = pos0;
        let nlines = self.nlines();
        for i in line0..line1 {
            // Leading empty cells are indentation and are padded with tabs.
            let mut use_tabs = true;
            let start = self.line_starts[i];
            let len = self.line_len(i);
            for j in 0..len {
                let c = self.cells[start + j];
                let padding = self.widths.get(j).copied();
                if c.size == 0 {
                    if let Some(w) = padding {
                        self.write_padding(c.width, w, use_tabs);
                    }
                } else {
                    use_tabs = false;
                    self.out.extend_from_slice(&self.buf[pos..pos + c.size]);
                    pos += c.size;
                    if let Some(w) = padding {
                        self.write_padding(c.width, w, false);
                    }
                }
            }
            if i + 1 == nlines {
                // The last buffered line has no line break yet: write the pending text.
                let end = (pos + self.cell.size).min(self.buf.len());
                self.out.extend_from_slice(&self.buf[pos..end]);
                pos = end;
            } else {
                self.out.push(b'\n');
            }
        }
        pos
    }

    fn write_padding(&mut self, text_width: usize, cell_width: usize, use_tabs: bool) {
        if use_tabs {
            let cell_width = cell_width.div_ceil(TAB_WIDTH) * TAB_WIDTH;
            let n = cell_width.saturating_sub(text_width);
            let tabs = n.div_ceil(TAB_WIDTH);
            self.out.extend(std::iter::repeat_n(b'\t', tabs));
        } else {
            let n = cell_width.saturating_sub(text_width);
            self.out.extend(std::iter::repeat_n(b' ', n));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Drives the writer with the official byte protocol, for readable tests.
    fn run(s: &str) -> String {
        let mut w = TabWriter::new(64);
        let mut text = Vec::new();
        for b in s.bytes() {
            match b {
                b'\t' | b'\x0b' | b'\n' | b'\x0c' => {
                    w.text(&text);
                    text.clear();
                    match b {
                        b'\t' => w.end_cell(true),
                        b'\x0b' => w.end_cell(false),
                        _ => w.end_line(b == b'\x0c'),
                    }
                }
                _ => text.push(b),
            }
        }
        w.text(&text);
        String::from_utf8(w.finish()).unwrap()
    }

    #[test]
    fn aligns_a_block_of_cells() {
        assert_eq!(run("a:\x0b1\nbcd:\x0b2\n"), "a:   1\nbcd: 2\n");
    }

    #[test]
    fn form_feed_ends_a_block() {
        assert_eq!(run("a:\x0b1\x0cbcd:\x0b2\n"), "a: 1\nbcd: 2\n");
    }

    #[test]
    fn indentation_cells_become_tabs() {
        assert_eq!(
            run("x: {\x0c\ta:\x0b1\n\tbb:\x0b2\x0c}\n"),
            "x: {\n\ta:  1\n\tbb: 2\n}\n"
        );
    }

    #[test]
    fn an_empty_cell_under_wide_text_pads_with_tabs() {
        // The official writer pads a leading empty cell to the block width rounded up to the
        // tab width (8): two tabs under a nine-character label.
        assert_eq!(run("funcArg1:\x0bfoo(\n\tx\n"), "funcArg1: foo(\n\t\tx\n");
    }

    #[test]
    fn opaque_text_keeps_its_line_breaks() {
        let mut w = TabWriter::new(16);
        w.text(b"a:");
        w.end_cell(false);
        w.text(b"x\ty\nz");
        w.end_line(false);
        w.text(b"bb:");
        w.end_cell(false);
        w.text(b"2");
        w.end_line(false);
        assert_eq!(
            String::from_utf8(w.finish()).unwrap(),
            "a:  x\ty\nz\nbb: 2\n"
        );
    }
}
