//! A parser for the txtar archive format, following the rules of `golang.org/x/tools/txtar`.
//!
//! The CUE test corpus stores every case as a txtar archive: a free-form comment section, then
//! members introduced by marker lines of the form `-- name --`. The upstream harness and the tool
//! that produced the expected outputs both read archives with the Go package, so this module
//! reproduces its behaviour byte for byte, including its quirks: a marker must start a line and
//! end with ` --` right before the newline (so a `\r\n` line is not a marker), the name is trimmed
//! of surrounding white space, an empty name does not make a marker, and the last member (or the
//! comment, when there are no members) gets a final newline added when it is non-empty and lacks
//! one. Content is kept as bytes because the format itself says nothing about encodings.

/// A parsed archive: the comment before the first marker, then the members in archive order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Archive {
    pub comment: Vec<u8>,
    pub files: Vec<Member>,
}

/// One member of an archive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    pub name: String,
    pub data: Vec<u8>,
}

impl Archive {
    /// Returns the member called `name`, if any. Go's txtar allows duplicate names; like a
    /// directory extraction, the last one wins.
    pub fn get(&self, name: &str) -> Option<&Member> {
        self.files.iter().rev().find(|m| m.name == name)
    }
}

impl Member {
    /// The member's content as text, or `None` when it is not valid UTF-8.
    pub fn text(&self) -> Option<&str> {
        std::str::from_utf8(&self.data).ok()
    }
}

const MARKER: &[u8] = b"-- ";
const MARKER_END: &[u8] = b" --";
const NEWLINE_MARKER: &[u8] = b"\n-- ";

/// Parses the serialised form of an archive. Every input is a valid archive, so this cannot fail.
pub fn parse(data: &[u8]) -> Archive {
    let (comment, mut name, mut rest) = find_file_marker(data);
    let mut archive = Archive {
        comment,
        files: Vec::new(),
    };
    while let Some(member_name) = name {
        let (content, next_name, next_rest) = find_file_marker(rest);
        archive.files.push(Member {
            name: member_name,
            data: content,
        });
        name = next_name;
        rest = next_rest;
    }
    archive
}

/// Finds the next marker line. Returns the data before it, the marker's name and the data after
/// the marker line; without a further marker, the name is `None` and the data before it gets
/// its final newline fixed, as in Go.
fn find_file_marker(data: &[u8]) -> (Vec<u8>, Option<String>, &[u8]) {
    let mut i = 0;
    loop {
        if let Some((name, after)) = is_marker(&data[i..]) {
            return (data[..i].to_vec(), Some(name), after);
        }
        match find(&data[i..], NEWLINE_MARKER) {
            Some(j) => i += j + 1,
            None => return (fix_newline(data), None, &[]),
        }
    }
}

/// Checks whether `data` begins with a marker line, and if so returns the trimmed name and the
/// data after the line.
fn is_marker(data: &[u8]) -> Option<(String, &[u8])> {
    if !data.starts_with(MARKER) {
        return None;
    }
    let (line, after): (&[u8], &[u8]) = match data.iter().position(|&b| b == b'\n') {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[]),
    };
    if !(line.ends_with(MARKER_END) && line.len() >= MARKER.len() + MARKER_END.len()) {
        return None;
    }
    let raw = &line[MARKER.len()..line.len() - MARKER_END.len()];
    // Go converts the bytes to a string before trimming; invalid UTF-8 becomes U+FFFD here,
    // which only matters for names, never for content.
    let name = String::from_utf8_lossy(raw).trim().to_string();
    if name.is_empty() {
        return None;
    }
    Some((name, after))
}

fn fix_newline(data: &[u8]) -> Vec<u8> {
    let mut out = data.to_vec();
    if !out.is_empty() && !out.ends_with(b"\n") {
        out.push(b'\n');
    }
    out
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(a: &Archive) -> Vec<&str> {
        a.files.iter().map(|m| m.name.as_str()).collect()
    }

    #[test]
    fn comment_and_members() {
        let a = parse(b"comment\nmore\n-- a.cue --\nx: 1\n-- b/c.cue --\ny: 2\n");
        assert_eq!(a.comment, b"comment\nmore\n");
        assert_eq!(names(&a), ["a.cue", "b/c.cue"]);
        assert_eq!(a.files[0].data, b"x: 1\n");
        assert_eq!(a.files[1].data, b"y: 2\n");
    }

    #[test]
    fn no_comment() {
        let a = parse(b"-- in.cue --\na: 1\n");
        assert!(a.comment.is_empty());
        assert_eq!(names(&a), ["in.cue"]);
    }

    #[test]
    fn final_newline_added_only_to_last_member() {
        let a = parse(b"-- a --\nx-- b --\ny");
        // The first member ends at a newline, then "x-- b --" is not a marker since it does
        // not start a line, so everything is one member.
        assert_eq!(names(&a), ["a"]);
        assert_eq!(a.files[0].data, b"x-- b --\ny\n");

        let a = parse(b"-- a --\nx\n-- b --\ny");
        assert_eq!(a.files[0].data, b"x\n");
        assert_eq!(a.files[1].data, b"y\n");
    }

    #[test]
    fn empty_members_stay_empty() {
        let a = parse(b"-- a --\n-- b --\n");
        assert_eq!(names(&a), ["a", "b"]);
        assert!(a.files[0].data.is_empty());
        assert!(a.files[1].data.is_empty());
        // A marker at end of input without a newline is still a marker.
        let a = parse(b"c\n-- a --");
        assert_eq!(a.comment, b"c\n");
        assert_eq!(names(&a), ["a"]);
        assert!(a.files[0].data.is_empty());
    }

    #[test]
    fn comment_without_members_gets_newline() {
        let a = parse(b"just a comment");
        assert_eq!(a.comment, b"just a comment\n");
        assert!(a.files.is_empty());
        assert_eq!(parse(b""), Archive::default());
    }

    #[test]
    fn names_are_trimmed_and_empty_names_are_not_markers() {
        let a = parse(b"--   spaced.cue   --\nx\n--  --\ny\n");
        assert_eq!(names(&a), ["spaced.cue"]);
        assert_eq!(a.files[0].data, b"x\n--  --\ny\n");
    }

    #[test]
    fn lookalike_lines_are_content() {
        // Missing trailing " --", missing space, indented, and CRLF-terminated marker lines
        // are all plain content.
        let src = b"-- a --\n-- b\n--c --\n -- d --\n-- e --\r\nend\n";
        let a = parse(src);
        assert_eq!(names(&a), ["a"]);
        assert_eq!(a.files[0].data, b"-- b\n--c --\n -- d --\n-- e --\r\nend\n");
    }

    #[test]
    fn marker_needs_room_for_both_ends() {
        // "-- --" overlaps its start and end markers, so it is not a marker.
        let a = parse(b"-- --\nx\n");
        assert!(a.files.is_empty());
        assert_eq!(a.comment, b"-- --\nx\n");
    }

    #[test]
    fn duplicate_names_last_wins() {
        let a = parse(b"-- a --\n1\n-- a --\n2\n");
        assert_eq!(a.files.len(), 2);
        assert_eq!(a.get("a").unwrap().data, b"2\n");
        assert!(a.get("b").is_none());
    }

    #[test]
    fn text_rejects_invalid_utf8() {
        let a = parse(b"-- a --\n\xff\n");
        assert_eq!(a.files[0].text(), None);
        let a = parse(b"-- a --\nok\n");
        assert_eq!(a.files[0].text(), Some("ok\n"));
    }
}
