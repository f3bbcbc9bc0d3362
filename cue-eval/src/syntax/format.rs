//! The CUE formatter: prints a parsed file exactly as `cue fmt` (CUE v0.17.1, default options)
//! would.
//!
//! The official formatter is a token printer driven by whitespace requests that the original
//! source layout can override, followed by Go's `text/tabwriter` for alignment. Byte-identical
//! output depends on the details of that model (which line breaks of the author survive, which
//! fields share an alignment column, where a comment lands), so this module reproduces the model
//! rather than inventing a new layout algorithm:
//!
//! * `source` computes each token's relative position (same line, new line, blank line before)
//!   from the text;
//! * `comments` groups the comments and attaches each group to a node;
//! * `node` walks the tree and emits tokens and whitespace requests;
//! * `printer` resolves the requests into cells and lines;
//! * `tabwriter` aligns the cells into columns;
//! * `lit` normalises the spelling of literals.
//!
//! Where `cue fmt` would print a moved comment so that the output no longer parses or changes on
//! the next run (a comment after an operator inside an expression), the comment is printed after
//! its declaration instead: the output is always valid and formatting is idempotent.

use crate::ast;

mod comments;
#[cfg(test)]
mod golden_tests;
mod lit;
mod node;
mod printer;
mod source;
mod tabwriter;

/// Formats a parsed file as `cue fmt` v0.17.1 would. `src` is the text the file was parsed from:
/// line breaks, blank lines and comments are taken from it.
pub fn format_file(file: &ast::File, src: &str) -> String {
    let source = source::Source::new(src, &file.comments);
    let comments = comments::CommentMap::build(file, &source);
    let mut f = node::Formatter::new(&source, &comments);
    f.file(file);
    let out = f.finish();
    match String::from_utf8(out) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::format_file;
    use crate::ast::FileId;

    /// Formats `src` (which must parse) and checks that the result is a fixed point.
    fn fmt(src: &str) -> String {
        let (file, errors) = crate::parse(FileId(0), src);
        assert!(errors.is_empty(), "{src:?} does not parse: {errors:?}");
        let out = format_file(&file, src);
        let (file2, errors2) = crate::parse(FileId(0), &out);
        assert!(errors2.is_empty(), "output does not parse: {out}");
        assert_eq!(format_file(&file2, &out), out, "not idempotent");
        out
    }

    #[test]
    fn consecutive_fields_share_a_column() {
        assert_eq!(fmt("a: 1\nbcd: 2\n"), "a:   1\nbcd: 2\n");
        // A blank line starts a new block; runs of blank lines collapse to one.
        assert_eq!(fmt("a: 1\n\n\n\nbcd: 2\n"), "a: 1\n\nbcd: 2\n");
        // A struct value ends the block, and so does a different shorthand depth.
        assert_eq!(
            fmt("a: 1\nb: {\nc: 2\n}\nde: 3\n"),
            "a: 1\nb: {\n\tc: 2\n}\nde: 3\n"
        );
        assert_eq!(fmt("a: b: 1\ncde: 2\n"), "a: b: 1\ncde: 2\n");
    }

    #[test]
    fn trailing_comments_are_aligned() {
        assert_eq!(
            fmt("a: 1 // one\nbcd: 222 // two\n"),
            "a:   1   // one\nbcd: 222 // two\n"
        );
    }

    #[test]
    fn binary_operators_are_spaced_by_precedence() {
        assert_eq!(fmt("a: 1+2*3\n"), "a: 1 + 2*3\n");
        assert_eq!(fmt("a: 1*2*3\n"), "a: 1 * 2 * 3\n");
        assert_eq!(fmt("a: f(1+2, 3)\n"), "a: f(1+2, 3)\n");
        assert_eq!(fmt("a: x[1+2]\n"), "a: x[1+2]\n");
        assert_eq!(fmt("a: x - -y\n"), "a: x - -y\n");
        assert_eq!(fmt("a: >=1&<=2\n"), "a: >=1 & <=2\n");
    }

    #[test]
    fn literals_are_normalised() {
        assert_eq!(
            fmt("a: 0755\nb: .5\nc: 5.\nd: 1E3\n"),
            "a: 0o755\nb: 0.5\nc: 5.0\nd: 1e3\n"
        );
        assert_eq!(
            fmt("a: {\n    s: \"\"\"\n        x\n        \"\"\"\n}\n"),
            "a: {\n\ts: \"\"\"\n\t\tx\n\t\t\"\"\"\n}\n"
        );
    }

    #[test]
    fn one_line_structs_and_lists_stay_on_one_line() {
        assert_eq!(fmt("a: { b: 1, c: 2 }\n"), "a: {b: 1, c: 2}\n");
        assert_eq!(fmt("a: [ 1, 2 ]\n"), "a: [1, 2]\n");
        assert_eq!(fmt("a: {\n}\nb: [\n]\n"), "a: {}\nb: []\n");
        // A multi-line list gets its trailing comma.
        assert_eq!(fmt("a: [\n1,\n2\n]\n"), "a: [\n\t1,\n\t2,\n]\n");
    }

    #[test]
    fn doc_comments_after_a_definition_get_a_blank_line() {
        assert_eq!(fmt("#A: int\n// doc\nb: 1\n"), "#A: int\n\n// doc\nb: 1\n");
        assert_eq!(fmt("a: int\n// doc\nb: 1\n"), "a: int\n// doc\nb: 1\n");
    }

    #[test]
    fn package_and_imports_are_followed_by_a_blank_line() {
        assert_eq!(
            fmt("package p\nimport \"strings\"\na: strings.ToUpper(\"x\")\n"),
            "package p\n\nimport \"strings\"\n\na: strings.ToUpper(\"x\")\n"
        );
    }

    #[test]
    fn doubled_parentheses_are_dropped() {
        assert_eq!(fmt("a: ((1 + 2))\n"), "a: (1 + 2)\n");
    }

    #[test]
    fn a_comment_inside_an_expression_moves_after_its_declaration() {
        assert_eq!(fmt("a: 1 + // c\n\t2\nb: 3\n"), "a: 1 +\n\t2 // c\nb: 3\n");
    }

    #[test]
    fn comments_in_empty_containers_stay_inside() {
        assert_eq!(fmt("a: {\n// c\n}\n"), "a: {\n\t// c\n}\n");
        assert_eq!(fmt("a: [\n// c\n]\n"), "a: [\n\t// c\n]\n");
    }

    #[test]
    fn comment_only_and_empty_files() {
        assert_eq!(fmt("// only\n"), "// only\n");
        assert_eq!(fmt(""), "\n");
    }
}
