//! The `text/tabwriter` package: `Write` aligns tab-separated cells into columns as Go's
//! `tabwriter.NewWriter(w, 0, 4, 1, ' ', 0)` does (minimum width 0, padding 1, spaces).

use super::k::*;
use super::{R, Runtime, StdMember, func, string};
use crate::eval::value::{Bottom, Value};

pub(super) static MEMBERS: &[StdMember] = &[func("text/tabwriter.Write", &[T], write)];

fn write(rt: &mut Runtime, a: &[Value]) -> R {
    let text = match &a[0] {
        Value::Str(s) => s.to_string(),
        Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        v @ Value::Vertex(_) => {
            let items = rt.list_values(v, "text/tabwriter.Write")?;
            let mut s = String::new();
            for it in items {
                match it {
                    Value::Str(x) => {
                        s.push_str(&x);
                        s.push('\n');
                    }
                    other => {
                        return Err(Bottom::eval(format!(
                            "cannot use value {} as string",
                            rt.value_text(&other)
                        )));
                    }
                }
            }
            s
        }
        other => {
            return Err(Bottom::eval(format!(
                "cannot use value {} as string or list",
                rt.value_text(other)
            )));
        }
    };
    string(align(&text, 1))
}

/// Go's tabwriter algorithm: a column is a run of consecutive lines that have a cell in it;
/// cells terminated by a tab are padded to the column width plus `padding`; the last cell of a
/// line is not part of a column.
pub(super) fn align(text: &str, padding: usize) -> String {
    let lines: Vec<Vec<&str>> = text.split('\n').map(|l| l.split('\t').collect()).collect();
    let mut widths: Vec<Vec<usize>> = lines.iter().map(|c| vec![0; c.len()]).collect();
    format_block(&lines, &mut widths, 0, 0, lines.len(), padding);
    let mut out = String::with_capacity(text.len());
    for (i, cells) in lines.iter().enumerate() {
        for (j, c) in cells.iter().enumerate() {
            out.push_str(c);
            if j + 1 < cells.len() {
                let w = widths[i][j];
                let n = c.chars().count();
                out.extend(std::iter::repeat_n(' ', w.saturating_sub(n)));
            }
        }
        if i + 1 < lines.len() {
            out.push('\n');
        }
    }
    out
}

/// Computes the widths of column `col` for lines `[lo, hi)`, recursively, as Go's `format`.
fn format_block(
    lines: &[Vec<&str>],
    widths: &mut [Vec<usize>],
    col: usize,
    lo: usize,
    hi: usize,
    padding: usize,
) {
    let mut i = lo;
    while i < hi {
        if lines[i].len() <= col + 1 {
            i += 1;
            continue;
        }
        // A block of lines that all have a tab-terminated cell in this column.
        let start = i;
        let mut w = 0;
        while i < hi && lines[i].len() > col + 1 {
            w = w.max(lines[i][col].chars().count() + padding);
            i += 1;
        }
        for row in widths.iter_mut().take(i).skip(start) {
            row[col] = w;
        }
        format_block(lines, widths, col + 1, start, i, padding);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn columns() {
        assert_eq!(
            super::align("a\tb\tc\naaa\tbb\tvv", 1),
            "a   b  c\naaa bb vv"
        );
    }
}
