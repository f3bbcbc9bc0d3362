//! Output of built objects as Timoni prints them.
//!
//! * YAML as `sigs.k8s.io/yaml` writes an object (go-yaml v2): keys sorted in go-yaml's
//!   "natural" order (runs of digits compare as numbers), two-space indentation, sequence items
//!   at their parent's indentation, scalars quoted as go-yaml quotes them (the scalar styles are
//!   those of the yaml.v3 emitter that `cue-eval` reproduces; both come from libyaml).
//! * JSON as Go's `json.MarshalIndent(…, "", "    ")`: map keys sorted bytewise, HTML
//!   characters escaped.
//! * Secret masking, the server-side-apply kind order `bundle build` sorts by, and the file
//!   names `bundle build --output-dir` writes.

use std::cmp::Ordering;

use cue_eval::encode::{Data, Field, ScalarStyle, to_yaml, write_json_indent, yaml_string_style};

use crate::meta::get_str;

/// One object as a YAML document (no `---`), ending with a newline.
pub fn object_yaml(obj: &Data) -> String {
    let mut out = String::new();
    write_object_yaml(&mut out, obj);
    out
}

/// `timoni build -o yaml`: every object followed by `---`.
pub fn objects_yaml(objs: &[Data]) -> String {
    let mut out = String::new();
    for o in objs {
        write_object_yaml(&mut out, o);
        out.push_str("---\n");
    }
    out
}

/// Writes [`objects_yaml`] of `objs` to `w` an object at a time, so that the text of all of
/// them is never held at once.
pub fn write_objects_yaml<W: std::io::Write>(w: &mut W, objs: &[Data]) -> std::io::Result<()> {
    write_documents(w, objs, false)
}

/// Writes `objs` to `w` as YAML documents separated by `---` lines, with none after the last
/// (an instance's section of `timoni bundle build`), an object at a time.
pub fn write_objects_yaml_between<W: std::io::Write>(
    w: &mut W,
    objs: &[Data],
) -> std::io::Result<()> {
    write_documents(w, objs, true)
}

/// Writes each object as a YAML document, with `---` before every one but the first
/// (`between`) or after every one.
fn write_documents<W: std::io::Write>(
    w: &mut W,
    objs: &[Data],
    between: bool,
) -> std::io::Result<()> {
    let mut out = String::new();
    for (i, o) in objs.iter().enumerate() {
        out.clear();
        if between && i > 0 {
            out.push_str("---\n");
        }
        write_object_yaml(&mut out, o);
        if !between {
            out.push_str("---\n");
        }
        w.write_all(out.as_bytes())?;
    }
    Ok(())
}

/// Appends [`object_yaml`] of `obj` to `out`. The keys are sorted as they are written, and
/// scalars are converted as [`sort_keys`] converts them, so that the object is not copied.
fn write_object_yaml(out: &mut String, obj: &Data) {
    match obj {
        Data::Struct(f) if !f.is_empty() => write_mapping(out, f, 0),
        Data::List(l) if !l.is_empty() => write_sequence(out, l, 0),
        other => {
            write_scalar(out, other, 0, 2);
            out.push('\n');
        }
    }
}

/// `timoni build -o json`: writes a `List` of the objects to `w` a piece at a time, with
/// four-space indentation and no trailing newline (and no `items` when there are no objects).
/// The objects are not copied: their keys are sorted and their bytes and floats converted in
/// place, so `objs` is left in the form Timoni prints.
pub fn write_objects_json<W: std::io::Write>(
    w: &mut W,
    objs: &mut Vec<Data>,
) -> std::io::Result<()> {
    for o in objs.iter_mut() {
        sort_keys(o, |a, b| a < b, go_json_float);
    }
    let mut fields = vec![
        Field::new("apiVersion", Data::string("v1")),
        Field::new("kind", Data::string("List")),
    ];
    // Timoni's list struct tags `items` with `omitempty`.
    if !objs.is_empty() {
        fields.push(Field::new("items", Data::List(std::mem::take(objs))));
    }
    let mut list = Data::Struct(fields);
    let written = write_json_indent(&mut NoFinalNewline { w, held: false }, &list, true);
    if let Data::Struct(fields) = &mut list
        && let Some(Field {
            value: Data::List(items),
            ..
        }) = fields.pop()
    {
        *objs = items;
    }
    written
}

/// Passes writes on to `w` but for a final newline, which the JSON writer ends with and
/// `timoni build -o json` does not.
struct NoFinalNewline<'a, W: std::io::Write> {
    w: &'a mut W,
    /// A newline held back from the end of the last write.
    held: bool,
}

impl<W: std::io::Write> std::io::Write for NoFinalNewline<'_, W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        if std::mem::take(&mut self.held) {
            self.w.write_all(b"\n")?;
        }
        let (body, held) = match buf.strip_suffix(b"\n") {
            Some(body) => (body, true),
            None => (buf, false),
        };
        self.w.write_all(body)?;
        self.held = held;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.w.flush()
    }
}

/// Objects as Timoni prints them: keys sorted by `less`, bytes as their raw text (Timoni decodes
/// values with bytes through YAML, where `!!binary` becomes a string) and numbers as they come
/// out of Go's JSON round trip (`float` spells the non-integral ones). In place.
fn sort_keys(d: &mut Data, less: fn(&str, &str) -> bool, float: fn(f64) -> String) {
    match d {
        Data::Struct(fields) => {
            for f in fields.iter_mut() {
                sort_keys(&mut f.value, less, float);
            }
            fields.sort_by(|a, b| key_order(less, &a.name, &b.name));
        }
        Data::List(items) => {
            for i in items.iter_mut() {
                sort_keys(i, less, float);
            }
        }
        Data::Bytes(b) => {
            let text = String::from_utf8_lossy(b).into_owned();
            *d = Data::String(text);
        }
        Data::Number { text, float: true } => {
            let n = number_from_float(text, float);
            *d = n;
        }
        _ => {}
    }
}

/// The order of two keys under `less`.
fn key_order(less: fn(&str, &str) -> bool, a: &str, b: &str) -> Ordering {
    if less(a, b) {
        Ordering::Less
    } else if less(b, a) {
        Ordering::Greater
    } else {
        Ordering::Equal
    }
}

/// Go's JSON round trip turns integral floats into integers (`1.0` prints `1`).
fn number_from_float(text: &str, float: fn(f64) -> String) -> Data {
    match text.parse::<f64>() {
        Ok(f) if f.is_finite() && f.fract() == 0.0 && f.abs() < 1e21 => {
            Data::int(format!("{f:.0}"))
        }
        Ok(f) if f.is_finite() => Data::float(float(f)),
        _ => Data::float(text),
    }
}

/// Go's `encoding/json` spelling of a float: plain decimals, with an exponent (`1e-7`,
/// `1e+21`) below 1e-6 and from 1e21.
pub fn go_json_float(f: f64) -> String {
    let abs = f.abs();
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        go_exponent(&format!("{f:e}"), 1)
    } else {
        format!("{f}")
    }
}

/// go-yaml v2's spelling of a float (`strconv.FormatFloat(f, 'g', -1, 64)`): plain decimals
/// from 1e-4 to below 1e6, otherwise an exponent of at least two digits (`1e-05`,
/// `1.2345675e+06`).
pub fn go_yaml_float(f: f64) -> String {
    let abs = f.abs();
    if abs != 0.0 && !(1e-4..1e6).contains(&abs) {
        go_exponent(&format!("{f:e}"), 2)
    } else {
        format!("{f}")
    }
}

/// Rust's `1.5e7` as Go writes it: `1.5e+07` (at least `digits` exponent digits).
fn go_exponent(rust: &str, digits: usize) -> String {
    let Some((mant, exp)) = rust.split_once('e') else {
        return rust.to_string();
    };
    let (sign, num) = match exp.strip_prefix('-') {
        Some(n) => ('-', n),
        None => ('+', exp),
    };
    format!("{mant}e{sign}{num:0>digits$}")
}

/// go-yaml v2's key order (`keyList.Less`): letters compare by code point, a non-letter sorts
/// before a letter, and runs of digits compare by their numeric value.
pub fn yaml_key_less(a: &str, b: &str) -> bool {
    // The bytes decide when the keys first differ in an ASCII byte on both sides: the equal
    // bytes before it are the same characters (UTF-8 is self-synchronizing), so that byte is
    // the first differing character on each side, and the digit runs around it are ASCII.
    let (ab, bb) = (a.as_bytes(), b.as_bytes());
    let first_diff = ab.iter().zip(bb).position(|(x, y)| x != y);
    match first_diff {
        Some(i) if ab[i].is_ascii() && bb[i].is_ascii() => key_less(ab, bb, i),
        // One key is a prefix of the other: the shorter comes first, in bytes as in chars.
        None => ab.len() < bb.len(),
        Some(_) => {
            let ar: Vec<char> = a.chars().collect();
            let br: Vec<char> = b.chars().collect();
            key_less(&ar, &br, 0)
        }
    }
}

/// A character of a key as [`key_less`] reads it: bytes for ASCII keys (no copy), `char`s
/// otherwise.
trait KeyChar: Copy + PartialEq + PartialOrd {
    fn is_letter(self) -> bool;
    /// The value of an ASCII digit, `None` for anything else.
    fn digit(self) -> Option<u8>;
}

impl KeyChar for u8 {
    fn is_letter(self) -> bool {
        self.is_ascii_alphabetic()
    }
    fn digit(self) -> Option<u8> {
        self.is_ascii_digit().then(|| self - b'0')
    }
}

impl KeyChar for char {
    fn is_letter(self) -> bool {
        self.is_alphabetic()
    }
    fn digit(self) -> Option<u8> {
        self.is_ascii_digit().then(|| self as u8 - b'0')
    }
}

/// [`yaml_key_less`] on the characters of both keys, equal before `start`.
fn key_less<C: KeyChar>(ar: &[C], br: &[C], start: usize) -> bool {
    let mut i = start;
    while i < ar.len() && i < br.len() {
        if ar[i] == br[i] {
            i += 1;
            continue;
        }
        let al = ar[i].is_letter();
        let bl = br[i].is_letter();
        if al && bl {
            return ar[i] < br[i];
        }
        if al || bl {
            return bl;
        }
        let (mut an, mut bn) = (0i64, 0i64);
        if ar[i].digit() == Some(0) || br[i].digit() == Some(0) {
            let mut j = i;
            while j > 0 && ar[j - 1].digit().is_some() {
                j -= 1;
                if ar[j].digit() != Some(0) {
                    an = 1;
                    bn = 1;
                    break;
                }
            }
        }
        let mut ai = i;
        while let Some(d) = ar.get(ai).and_then(|c| c.digit()) {
            an = an.saturating_mul(10).saturating_add(i64::from(d));
            ai += 1;
        }
        let mut bi = i;
        while let Some(d) = br.get(bi).and_then(|c| c.digit()) {
            bn = bn.saturating_mul(10).saturating_add(i64::from(d));
            bi += 1;
        }
        if an != bn {
            return an < bn;
        }
        if ai != bi {
            return ai < bi;
        }
        return ar[i] < br[i];
    }
    ar.len() < br.len()
}

fn pad(out: &mut String, n: usize) {
    const SPACES: &str = "                                                                ";
    let mut n = n;
    while n > SPACES.len() {
        out.push_str(SPACES);
        n -= SPACES.len();
    }
    out.push_str(&SPACES[..n]);
}

/// Writes the fields of a struct in go-yaml's key order (a stable sort, as [`sort_keys`]
/// does), each key at column `indent`: the first where the caller left `out`, the others on
/// lines of their own.
fn write_mapping(out: &mut String, fields: &[Field], indent: usize) {
    // Objects often come with their keys in order already (CRD schemas do): then they are
    // written as they are, without sorting a copy.
    if fields
        .windows(2)
        .all(|w| !yaml_key_less(&w[1].name, &w[0].name))
    {
        write_entries(out, fields.iter(), indent);
    } else {
        let mut sorted: Vec<&Field> = fields.iter().collect();
        sorted.sort_by(|a, b| key_order(yaml_key_less, &a.name, &b.name));
        write_entries(out, sorted.into_iter(), indent);
    }
}

fn write_entries<'a>(out: &mut String, fields: impl Iterator<Item = &'a Field>, indent: usize) {
    for (i, f) in fields.enumerate() {
        if i > 0 {
            pad(out, indent);
        }
        let start = out.len();
        push_key(out, &f.name);
        out.push(':');
        // The column after `key: `; a key is written on one line.
        let col = indent + text_width(&out[start..]) + 1;
        write_value_after_indicator(out, &f.value, indent, col);
    }
}

/// The width of `s` in characters.
fn text_width(s: &str) -> usize {
    if s.is_ascii() {
        s.len()
    } else {
        s.chars().count()
    }
}

fn write_sequence(out: &mut String, items: &[Data], indent: usize) {
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            pad(out, indent);
        }
        out.push('-');
        match item {
            Data::Struct(f) if !f.is_empty() => {
                out.push(' ');
                write_mapping(out, f, indent + 2);
            }
            Data::List(l) if !l.is_empty() => {
                out.push(' ');
                write_sequence(out, l, indent + 2);
            }
            other => {
                out.push(' ');
                write_scalar(out, other, indent + 2, indent + 2);
                out.push('\n');
            }
        }
    }
}

/// Writes the value of a mapping entry after `key:`; a scalar starts at column `col`, after
/// the space that follows the colon.
fn write_value_after_indicator(out: &mut String, v: &Data, indent: usize, col: usize) {
    match v {
        Data::Struct(f) if !f.is_empty() => {
            out.push('\n');
            pad(out, indent + 2);
            write_mapping(out, f, indent + 2);
        }
        Data::List(l) if !l.is_empty() => {
            out.push('\n');
            pad(out, indent);
            write_sequence(out, l, indent);
        }
        other => {
            out.push(' ');
            debug_assert_eq!(col, text_width(out.rsplit('\n').next().unwrap_or_default()));
            write_scalar(out, other, col, indent + 2);
            out.push('\n');
        }
    }
}

/// Appends the scalar `d` as [`object_yaml`] writes it: bytes as their text and numbers as
/// they come out of Go's JSON round trip (what [`sort_keys`] makes of them), then as
/// [`scalar`] spells them.
fn write_scalar(out: &mut String, d: &Data, col: usize, indent: usize) {
    match d {
        Data::Number { text, float: true } => out.push_str(&scalar(
            &number_from_float(text, go_yaml_float),
            col,
            indent,
        )),
        Data::Number { text, .. } => out.push_str(text),
        Data::String(s) => push_string(out, s, col, indent),
        Data::Bytes(b) => push_string(out, &String::from_utf8_lossy(b), col, indent),
        other => out.push_str(&scalar(other, col, indent)),
    }
}

/// Appends the string `s` as go-yaml writes it starting at column `col`; a plain string that
/// cannot reach the line width is written as it is, without [`fold_into`].
fn push_string(out: &mut String, s: &str, col: usize, indent: usize) {
    match string_style(s) {
        Style::Plain if s.is_ascii() && col + s.len() <= BEST_WIDTH => out.push_str(s),
        Style::Literal => push_literal(out, s, indent),
        style => fold_into(out, s, style, col, indent, true),
    }
}

/// Appends `s` as a literal block scalar (`|`), written by the emitter, with its content lines
/// indented to `indent`.
fn push_literal(out: &mut String, s: &str, indent: usize) {
    let text = to_yaml(&Data::String(s.to_string()));
    let text = text.strip_suffix('\n').unwrap_or(&text);
    // The emitter indented the content by two spaces at the top level.
    let mut lines = text.split('\n');
    out.push_str(lines.next().unwrap_or_default());
    for line in lines {
        out.push('\n');
        if let Some(rest) = line.strip_prefix("  ") {
            pad(out, indent);
            out.push_str(rest);
        } else {
            out.push_str(line);
        }
    }
}

/// How go-yaml writes a string.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Style {
    Plain,
    Single,
    Double,
    Literal,
}

/// The style go-yaml v2 picks for a string: the libyaml emitter's choice (which `cue-eval`'s
/// YAML encoder reproduces) except that tabs force double quotes in go-yaml v2 and that
/// go-yaml v2 quotes what YAML 1.1 reads as another type (and nothing else).
fn string_style(s: &str) -> Style {
    // Keys and short values repeat from object to object (`name`, `app.kubernetes.io/name`, a
    // namespace); deciding a style writes the string as YAML, so short ones are remembered.
    const REMEMBERED_LEN: usize = 128;
    const REMEMBERED_COUNT: usize = 4096;
    thread_local! {
        static STYLES: std::cell::RefCell<rustc_hash::FxHashMap<Box<str>, Style>> =
            std::cell::RefCell::default();
    }
    if plain_word(s) {
        return Style::Plain;
    }
    if s.len() > REMEMBERED_LEN {
        return decide_string_style(s);
    }
    if let Some(style) = STYLES.with(|m| m.borrow().get(s).copied()) {
        return style;
    }
    let style = decide_string_style(s);
    STYLES.with(|m| {
        let mut m = m.borrow_mut();
        if m.len() >= REMEMBERED_COUNT {
            m.clear();
        }
        m.insert(s.into(), style);
    });
    style
}

/// Whether `s` is a word that every writer leaves plain: an ASCII letter followed by letters,
/// digits, `_`, `.`, `/` and `-` (`metadata`, `app.kubernetes.io/name`), at least six bytes
/// long. Every word that YAML 1.1 or 1.2 reads as another type and starts with a letter
/// (`false`, `null`, `Off`) is shorter; none of these characters is an indicator after the
/// first; a word has no space or line break.
fn plain_word(s: &str) -> bool {
    const WORD: [bool; 256] = {
        let mut t = [false; 256];
        let mut c = 0;
        while c < 256 {
            let b = c as u8;
            t[c] = b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'/' | b'-');
            c += 1;
        }
        t
    };
    let b = s.as_bytes();
    b.len() >= 6 && b[0].is_ascii_alphabetic() && b.iter().all(|&c| WORD[c as usize])
}

/// [`string_style`] worked out.
fn decide_string_style(s: &str) -> Style {
    if s.contains('\t') || (!s.contains('\n') && go_yaml_v2_non_string(s)) {
        return Style::Double;
    }
    let emitted = yaml_string_style(s);
    if !s.contains('\n') && cue_forces_quotes(s, emitted) {
        return if plain_safe(s) {
            Style::Plain
        } else {
            Style::Single
        };
    }
    match emitted {
        ScalarStyle::DoubleQuoted => Style::Double,
        ScalarStyle::SingleQuoted => Style::Single,
        ScalarStyle::Literal => Style::Literal,
        ScalarStyle::Plain => Style::Plain,
    }
}

/// Appends a mapping key as go-yaml writes it.
fn push_key(out: &mut String, name: &str) {
    match string_style(name) {
        Style::Plain => out.push_str(name),
        Style::Single => fold_into(out, name, Style::Single, 0, 0, false),
        _ => fold_into(out, name, Style::Double, 0, 0, false),
    }
}

/// go-yaml v2's line width: plain and quoted scalars are folded at a space once the line is
/// longer than this.
const BEST_WIDTH: usize = 80;

/// Appends a plain, single- or double-quoted scalar starting at column `col`, folding at
/// spaces past [`BEST_WIDTH`] onto lines indented by `indent` (libyaml's `write_*_scalar`).
fn fold_into(
    out: &mut String,
    s: &str,
    style: Style,
    col: usize,
    indent: usize,
    allow_breaks: bool,
) {
    let mut column = col;
    match style {
        Style::Single => out.push('\''),
        Style::Double => out.push('"'),
        _ => {}
    }
    if matches!(style, Style::Single | Style::Double) {
        column += 1;
    }
    let mut spaces = false;
    let len = if s.is_ascii() {
        s.len()
    } else {
        s.chars().count()
    };
    let last = len.saturating_sub(1);
    if matches!(style, Style::Plain | Style::Single) && s.is_ascii() && !char_walk_forced() {
        // The same walk from space to space, each byte one column (a single quote of a
        // single-quoted scalar two, written doubled): the text between two folds is written
        // at once.
        let doubled = style == Style::Single;
        let b = s.as_bytes();
        let mut written = 0;
        let mut from = 0;
        // The quotes in `b[written..from]`, each one more column.
        let mut quotes = 0;
        while let Some(k) = b[from..].iter().position(|&c| c == b' ') {
            let p = from + k;
            if doubled {
                quotes += b[from..p].iter().filter(|&&c| c == b'\'').count();
            }
            from = p + 1;
            let next_space = b.get(p + 1) == Some(&b' ');
            let fold = allow_breaks
                && !(p > 0 && b[p - 1] == b' ')
                && column + (p - written) + quotes > BEST_WIDTH
                && match style {
                    Style::Plain => !next_space,
                    _ => p > 0 && p < last && !next_space,
                };
            if fold {
                push_run(out, &s[written..p], doubled);
                out.push('\n');
                pad(out, indent);
                column = indent;
                written = p + 1;
                quotes = 0;
            }
        }
        push_run(out, &s[written..], doubled);
        if doubled {
            out.push('\'');
        }
        return;
    }
    let mut chars = s.chars().enumerate().peekable();
    while let Some((i, c)) = chars.next() {
        let next_space = chars.peek().is_some_and(|&(_, n)| n == ' ');
        if style == Style::Double && (c != ' ') && needs_escape(c) {
            let e = escape(c);
            out.push_str(&e);
            column += e.chars().count();
            spaces = false;
            continue;
        }
        if c == ' ' {
            let fold = allow_breaks
                && !spaces
                && column > BEST_WIDTH
                && match style {
                    Style::Plain => !next_space,
                    Style::Single => i > 0 && i < last && !next_space,
                    _ => i > 0 && i < last,
                };
            if fold {
                out.push('\n');
                pad(out, indent);
                column = indent;
                if style == Style::Double && next_space {
                    out.push('\\');
                    column += 1;
                }
            } else {
                out.push(' ');
                column += 1;
            }
            spaces = true;
            continue;
        }
        if style == Style::Single && c == '\'' {
            out.push('\'');
            column += 1;
        }
        out.push(c);
        column += 1;
        spaces = false;
    }
    match style {
        Style::Single => out.push('\''),
        Style::Double => out.push('"'),
        _ => {}
    }
}

/// Appends `run`, its single quotes doubled when `doubled` (inside a single-quoted scalar).
fn push_run(out: &mut String, run: &str, doubled: bool) {
    if !doubled {
        out.push_str(run);
        return;
    }
    for (i, part) in run.split('\'').enumerate() {
        if i > 0 {
            out.push_str("''");
        }
        out.push_str(part);
    }
}

#[cfg(test)]
thread_local! {
    /// Set by tests to make [`fold_into`] walk every string a character at a time.
    static CHAR_WALK: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether a test asked [`fold_into`] for its walk by characters.
fn char_walk_forced() -> bool {
    #[cfg(test)]
    if CHAR_WALK.get() {
        return true;
    }
    false
}

/// Whether libyaml escapes `c` in a double-quoted scalar.
fn needs_escape(c: char) -> bool {
    let n = c as u32;
    let printable = n == 0x0A
        || (0x20..=0x7E).contains(&n)
        || (0xA0..=0xD7FF).contains(&n)
        || ((0xE000..=0xFFFD).contains(&n) && n != 0xFEFF);
    !printable
        || matches!(
            c,
            '\n' | '\r' | '\u{85}' | '\u{2028}' | '\u{2029}' | '"' | '\\' | '\u{feff}'
        )
}

/// libyaml's escape for `c`.
fn escape(c: char) -> String {
    match c {
        '\0' => "\\0".into(),
        '\u{7}' => "\\a".into(),
        '\u{8}' => "\\b".into(),
        '\t' => "\\t".into(),
        '\n' => "\\n".into(),
        '\u{b}' => "\\v".into(),
        '\u{c}' => "\\f".into(),
        '\r' => "\\r".into(),
        '\u{1b}' => "\\e".into(),
        '"' => "\\\"".into(),
        '\\' => "\\\\".into(),
        '\u{85}' => "\\N".into(),
        '\u{a0}' => "\\_".into(),
        '\u{2028}' => "\\L".into(),
        '\u{2029}' => "\\P".into(),
        c if (c as u32) <= 0xFF => format!("\\x{:02X}", c as u32),
        c if (c as u32) <= 0xFFFF => format!("\\u{:04X}", c as u32),
        c => format!("\\U{:08X}", c as u32),
    }
}

/// A scalar (or an empty collection) as go-yaml writes it, starting at column `col`; folded
/// lines and block scalars' content lines are indented to `indent`.
fn scalar(d: &Data, col: usize, indent: usize) -> String {
    match d {
        Data::Null => "null".into(),
        Data::Bool(b) => b.to_string(),
        Data::Number { text, .. } => text.clone(),
        Data::Struct(_) => "{}".into(),
        Data::List(_) => "[]".into(),
        Data::Bytes(b) => {
            let mut out = String::new();
            push_string(&mut out, &String::from_utf8_lossy(b), col, indent);
            out
        }
        Data::String(s) => {
            let mut out = String::new();
            push_string(&mut out, s, col, indent);
            out
        }
    }
}

/// Whether go-yaml v2 would read `s` written plain as something other than a string (a YAML
/// 1.1 bool, a null, a number, a timestamp, a base-60 float or the merge key), so that it must
/// quote it.
pub fn go_yaml_v2_non_string(s: &str) -> bool {
    const WORDS: &[&str] = &[
        "y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "true", "True", "TRUE", "false",
        "False", "FALSE", "on", "On", "ON", "off", "Off", "OFF", "~", "null", "Null", "NULL",
        ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF", ".nan",
        ".NaN", ".NAN", "<<", "",
    ];
    if WORDS.contains(&s) {
        return true;
    }
    let first = s.as_bytes()[0];
    if !(first.is_ascii_digit() || matches!(first, b'+' | b'-' | b'.')) {
        return false;
    }
    is_timestamp(s) || is_base60_float(s) || {
        let plain = s.replace('_', "");
        go_parse_int(&plain) || yaml_style_float(&plain)
    }
}

fn go_parse_int(s: &str) -> bool {
    let unsigned = s.strip_prefix(['+', '-']).unwrap_or(s);
    let (digits, radix) = if let Some(r) = unsigned
        .strip_prefix("0x")
        .or_else(|| unsigned.strip_prefix("0X"))
    {
        (r, 16)
    } else if let Some(r) = unsigned
        .strip_prefix("0b")
        .or_else(|| unsigned.strip_prefix("0B"))
    {
        (r, 2)
    } else if let Some(r) = unsigned
        .strip_prefix("0o")
        .or_else(|| unsigned.strip_prefix("0O"))
    {
        (r, 8)
    } else if unsigned.len() > 1 && unsigned.starts_with('0') {
        (&unsigned[1..], 8)
    } else {
        (unsigned, 10)
    };
    !digits.is_empty() && u64::from_str_radix(digits, radix).is_ok()
}

/// `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`
fn yaml_style_float(s: &str) -> bool {
    let b = s.strip_prefix(['+', '-']).unwrap_or(s).as_bytes();
    let digits = |b: &[u8], i: &mut usize| {
        let start = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - start
    };
    let mut i = 0;
    if b.first() == Some(&b'.') {
        i = 1;
        if digits(b, &mut i) == 0 {
            return false;
        }
    } else {
        if digits(b, &mut i) == 0 {
            return false;
        }
        if b.get(i) == Some(&b'.') {
            i += 1;
            digits(b, &mut i);
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if digits(b, &mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

/// `^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$`
fn is_base60_float(s: &str) -> bool {
    let b = s.strip_prefix(['+', '-']).unwrap_or(s).as_bytes();
    let mut i = 0;
    if !b.first().is_some_and(u8::is_ascii_digit) {
        return false;
    }
    while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'_') {
        i += 1;
    }
    let mut groups = 0;
    while b.get(i) == Some(&b':') {
        i += 1;
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() && i - start < 2 {
            i += 1;
        }
        let g = &b[start..i];
        if g.is_empty() || (g.len() == 2 && g[0] > b'5') {
            return false;
        }
        groups += 1;
    }
    if groups == 0 {
        return false;
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'_') {
            i += 1;
        }
    }
    i == b.len()
}

/// go-yaml v2's timestamps: four digits, `-`, then a date (and optionally a time).
fn is_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 8 || !b[..4].iter().all(u8::is_ascii_digit) || b[4] != b'-' {
        return false;
    }
    let rest = &s[5..];
    let (date, time) = match rest.find(['T', 't', ' ']) {
        Some(i) => (&rest[..i], Some(&rest[i + 1..])),
        None => (rest, None),
    };
    let mut parts = date.split('-');
    let ok_num = |p: Option<&str>| {
        p.is_some_and(|p| (1..=2).contains(&p.len()) && p.bytes().all(|c| c.is_ascii_digit()))
    };
    if !ok_num(parts.next()) || !ok_num(parts.next()) || parts.next().is_some() {
        return false;
    }
    match time {
        None => true,
        Some(t) => t.len() >= 5 && t.as_bytes()[0].is_ascii_digit() && t.contains(':'),
    }
}

/// Strings CUE's YAML encoder quotes although go-yaml v2 would not.
/// `emitted` is the style CUE's encoder writes `s` in ([`yaml_string_style`]).
fn cue_forces_quotes(s: &str, emitted: ScalarStyle) -> bool {
    matches!(s, "t" | "T" | "f" | "F")
        || emitted == ScalarStyle::DoubleQuoted
            && !s.chars().any(|c| c.is_control() || c == '"' || c == '\\')
}

/// Whether a string can be written plain (conservatively).
fn plain_safe(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && !b[0].is_ascii_whitespace()
        && !b[b.len() - 1].is_ascii_whitespace()
        && !matches!(
            b[0],
            b'-' | b'?'
                | b':'
                | b','
                | b'['
                | b']'
                | b'{'
                | b'}'
                | b'#'
                | b'&'
                | b'*'
                | b'!'
                | b'|'
                | b'>'
                | b'\''
                | b'"'
                | b'%'
                | b'@'
                | b'`'
        )
        && !s.contains(": ")
        && !s.contains(" #")
        && !s.ends_with(':')
        && s.chars().all(|c| !c.is_control())
}

/// Masks the values of a `v1` `Secret`'s `data` and `stringData` (and the
/// last-applied-configuration annotation), as `--mask-secrets` does.
pub fn mask_secret(obj: &Data) -> Data {
    if get_str(obj, &["apiVersion"]) != Some("v1") || get_str(obj, &["kind"]) != Some("Secret") {
        return obj.clone();
    }
    let mask = Data::string("***");
    let Data::Struct(fields) = obj else {
        return obj.clone();
    };
    let fields = fields
        .iter()
        .map(|f| {
            let value = match (f.name.as_str(), &f.value) {
                ("data" | "stringData", Data::Struct(items)) => Data::Struct(
                    items
                        .iter()
                        .map(|i| Field::new(i.name.clone(), mask.clone()))
                        .collect(),
                ),
                ("data" | "stringData", _) => mask.clone(),
                ("metadata", Data::Struct(m)) => Data::Struct(
                    m.iter()
                        .map(|mf| match (&*mf.name, &mf.value) {
                            ("annotations", Data::Struct(a)) => Field::new(
                                "annotations",
                                Data::Struct(
                                    a.iter()
                                        .map(|af| {
                                            if af.name
                                                == "kubectl.kubernetes.io/last-applied-configuration"
                                            {
                                                Field::new(af.name.clone(), mask.clone())
                                            } else {
                                                af.clone()
                                            }
                                        })
                                        .collect(),
                                ),
                            ),
                            _ => mf.clone(),
                        })
                        .collect(),
                ),
                _ => f.value.clone(),
            };
            Field::new(f.name.clone(), value)
        })
        .collect();
    Data::Struct(fields)
}

/// The kinds server-side apply reconciles first, in order (Flux's `ssa` reconcile order).
const KIND_FIRST: &[&str] = &[
    "CustomResourceDefinition",
    "Namespace",
    "ClusterClass",
    "RuntimeClass",
    "PriorityClass",
    "StorageClass",
    "VolumeSnapshotClass",
    "IngressClass",
    "GatewayClass",
    "ResourceQuota",
    "ServiceAccount",
    "Role",
    "ClusterRole",
    "RoleBinding",
    "ClusterRoleBinding",
    "ConfigMap",
    "Secret",
    "Service",
    "LimitRange",
    "Deployment",
    "StatefulSet",
    "CronJob",
    "PodDisruptionBudget",
];
/// The kinds it reconciles last.
const KIND_LAST: &[&str] = &[
    "MutatingWebhookConfiguration",
    "ValidatingWebhookConfiguration",
];

/// The rank of a kind in the server-side apply order (lower first).
pub fn kind_rank(kind: &str) -> usize {
    if let Some(i) = KIND_FIRST.iter().position(|k| *k == kind) {
        i
    } else if let Some(i) = KIND_LAST.iter().position(|k| *k == kind) {
        KIND_FIRST.len() + 1 + i
    } else {
        KIND_FIRST.len()
    }
}

/// The API group of an object (`apps` of `apps/v1`, empty for `v1`).
fn group(obj: &Data) -> &str {
    match get_str(obj, &["apiVersion"]).unwrap_or("").split_once('/') {
        Some((g, _)) => g,
        None => "",
    }
}

/// Sorts objects in the server-side apply order: by kind rank, then group, kind, namespace and
/// name.
pub fn sort_for_apply(objs: &mut [Data]) {
    objs.sort_by(|a, b| {
        let ka = get_str(a, &["kind"]).unwrap_or("");
        let kb = get_str(b, &["kind"]).unwrap_or("");
        kind_rank(ka)
            .cmp(&kind_rank(kb))
            .then_with(|| group(a).cmp(group(b)))
            .then_with(|| ka.cmp(kb))
            .then_with(|| {
                get_str(a, &["metadata", "namespace"])
                    .unwrap_or("")
                    .cmp(get_str(b, &["metadata", "namespace"]).unwrap_or(""))
            })
            .then_with(|| {
                get_str(a, &["metadata", "name"])
                    .unwrap_or("")
                    .cmp(get_str(b, &["metadata", "name"]).unwrap_or(""))
            })
    });
}

/// The file name `bundle build --output-dir` gives an object:
/// `[ns_]group_version_kind_name.yaml`, lowercased, empty parts left out; the namespace only
/// when the instance's objects span several namespaces.
pub fn resource_file_name(obj: &Data, with_namespace: bool) -> String {
    let api_version = get_str(obj, &["apiVersion"]).unwrap_or("");
    let (group, version) = match api_version.split_once('/') {
        Some((g, v)) => (g, v),
        None => ("", api_version),
    };
    let ns = if with_namespace {
        get_str(obj, &["metadata", "namespace"]).unwrap_or("")
    } else {
        ""
    };
    let parts = [
        ns,
        group,
        version,
        get_str(obj, &["kind"]).unwrap_or(""),
        get_str(obj, &["metadata", "name"]).unwrap_or(""),
    ];
    let name: Vec<&str> = parts.into_iter().filter(|p| !p.is_empty()).collect();
    format!("{}.yaml", name.join("_").to_lowercase())
}

/// Whether the objects' namespaces (the non-empty ones) are more than one, in which case
/// `--output-dir` file names of namespaced objects get a namespace prefix.
pub fn spans_namespaces(objs: &[Data]) -> bool {
    let mut seen: Vec<&str> = Vec::new();
    for o in objs {
        if let Some(ns) = get_str(o, &["metadata", "namespace"])
            && !ns.is_empty()
            && !seen.contains(&ns)
        {
            seen.push(ns);
        }
    }
    seen.len() > 1
}

#[cfg(test)]
mod tests {
    use super::*;
    use cue_eval::decode;

    fn yaml_of(json: &str) -> String {
        object_yaml(&decode::json(json).unwrap())
    }

    #[test]
    fn yaml_sorts_keys_and_puts_sequences_at_the_parent_indent() {
        insta::assert_snapshot!(yaml_of(
            r#"{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","labels":{"b":"1","a10":"x","a9":"y"}},
               "data":{"multi":"line one\nline two\n","empty":"","yes":"yes","num":"123","colon":"a: b"},
               "list":[{"name":"x","ports":[1,2]},[3],{},[]],"f":1.0,"n":null}"#
        ));
    }

    #[test]
    fn floats_are_spelled_as_go_spells_them() {
        assert_eq!(go_json_float(0.5), "0.5");
        assert_eq!(go_json_float(1e-7), "1e-7");
        assert_eq!(go_json_float(1.5e21), "1.5e+21");
        assert_eq!(go_yaml_float(0.5), "0.5");
        assert_eq!(go_yaml_float(0.00001), "1e-05");
        assert_eq!(go_yaml_float(1234567.5), "1.2345675e+06");
        assert_eq!(go_yaml_float(100000.5), "100000.5");
        assert_eq!(number_from_float("2.0", go_json_float), Data::int("2"));
    }

    #[test]
    fn go_yaml_key_order_compares_digit_runs_as_numbers() {
        assert!(yaml_key_less("a9", "a10"));
        assert!(yaml_key_less("_x", "Ax"));
        assert!(yaml_key_less("app", "app.kubernetes.io/name"));
        assert!(!yaml_key_less("b", "a"));
        assert!(yaml_key_less("é9", "é10"));
        assert!(yaml_key_less("a_", "aé"));
        assert!(!yaml_key_less("aé", "a_"));
    }

    proptest::proptest! {
        /// Comparing bytes where they decide is comparing characters.
        #[test]
        fn key_order_by_bytes_is_key_order_by_characters(
            a in "[a-c0-2_é€.]{0,6}",
            b in "[a-c0-2_é€.]{0,6}",
        ) {
            let ac: Vec<char> = a.chars().collect();
            let bc: Vec<char> = b.chars().collect();
            proptest::prop_assert_eq!(yaml_key_less(&a, &b), key_less(&ac, &bc, 0));
        }

        /// A string the shortcut calls a plain word is one the writers leave plain.
        #[test]
        fn plain_words_are_plain(s in "[a-zA-Z0-9_./:# -]{0,12}") {
            if plain_word(&s) {
                proptest::prop_assert_eq!(decide_string_style(&s), Style::Plain);
            }
        }
    }

    #[test]
    fn plain_words_that_look_like_other_types_are_short() {
        for w in [
            "y", "Yes", "NO", "on", "Off", "true", "FALSE", "null", "Null", "t", "F", "nan",
        ] {
            assert!(!plain_word(w), "{w}");
        }
        // Spaces and colons are not in words.
        for w in ["A0 aA ", "abcdef ghijk", "abcdef:", "abcdef: x"] {
            assert!(!plain_word(w), "{w}");
        }
        for w in [
            "metadata",
            "app.kubernetes.io/name",
            "v1beta1",
            "Infinity",
            "nanoseconds",
        ] {
            assert!(plain_word(w), "{w}");
            assert_eq!(decide_string_style(w), Style::Plain, "{w}");
        }
    }

    #[test]
    fn strings_are_quoted_when_go_yaml_v2_would_read_something_else() {
        for s in [
            "yes",
            "on",
            "~",
            "12",
            "0x1f",
            "1_000",
            "1.5",
            "1e3",
            "2001-12-14",
            "1:20",
            "",
        ] {
            assert!(go_yaml_v2_non_string(s), "{s}");
        }
        for s in ["f", "t", "abc", "1.2.3", "v1", "1-2", "Infinity"] {
            assert!(!go_yaml_v2_non_string(s), "{s}");
        }
        assert_eq!(scalar(&Data::string("f"), 0, 0), "f");
        assert_eq!(scalar(&Data::string("1-2"), 0, 0), "1-2");
        assert_eq!(scalar(&Data::string("yes"), 0, 0), "\"yes\"");
    }

    // go-yaml v2 double-quotes strings with tabs and folds long lines at spaces past column 80.
    #[test]
    fn tabs_force_double_quotes_and_long_lines_fold() {
        let long = "word ".repeat(30);
        insta::assert_snapshot!(yaml_of(&format!(
            r#"{{"a":"x\ty\n","plain":"{long}end","quoted":": {long}end","spaced":"{long}  end"}}"#
        )));
    }

    /// The text [`write_objects_json`] writes.
    fn objects_json(mut objs: Vec<Data>) -> String {
        let mut out = Vec::new();
        write_objects_json(&mut out, &mut objs).unwrap();
        String::from_utf8(out).unwrap()
    }

    fn fold(s: &str, style: Style, col: usize, indent: usize, allow_breaks: bool) -> String {
        let mut out = String::new();
        fold_into(&mut out, s, style, col, indent, allow_breaks);
        out
    }

    /// The walk a word at a time folds every plain and single-quoted ASCII string where the
    /// walk by characters folds it: strings of letters, spaces and quotes, at every column.
    #[test]
    fn folding_by_words_is_folding_by_characters() {
        let mut seed = 7u64;
        let mut next = |n: u64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) % n
        };
        for round in 0..6000 {
            let len = next(120) as usize;
            // Every other string without single quotes, which are walked apart.
            let kinds = if round % 2 == 0 { 5 } else { 4 };
            let s: String = (0..len)
                .map(|_| [b'a', b'b', b' ', b' ', b'\''][next(kinds) as usize] as char)
                .collect();
            let col = next(100) as usize;
            let indent = next(12) as usize;
            for style in [Style::Plain, Style::Single] {
                for breaks in [true, false] {
                    let words = fold(&s, style, col, indent, breaks);
                    CHAR_WALK.set(true);
                    let chars = fold(&s, style, col, indent, breaks);
                    CHAR_WALK.set(false);
                    assert_eq!(words, chars, "{s:?} {style:?} at {col}, indent {indent}");
                }
            }
        }
    }

    #[test]
    fn json_is_a_list_with_sorted_keys_and_no_trailing_newline() {
        let o = decode::json(r#"{"kind":"A","apiVersion":"v1","x":"<&>"}"#).unwrap();
        insta::assert_snapshot!(objects_json(vec![o]));
    }

    /// The JSON writer hands its text over in pieces of about 64 KiB: the objects' text is the
    /// text of the whole list, without its last newline.
    #[test]
    fn a_long_json_list_is_written_in_pieces_as_one_text_and_the_objects_kept() {
        let objs: Vec<Data> = (0..3000)
            .map(|i| {
                decode::json(&format!(
                    r#"{{"kind":"K","apiVersion":"v1","metadata":{{"name":"o{i}"}},"n":{i}.5}}"#
                ))
                .unwrap()
            })
            .collect();
        let mut sorted = objs.clone();
        for o in &mut sorted {
            sort_keys(o, |a, b| a < b, go_json_float);
        }
        let list = Data::Struct(vec![
            Field::new("apiVersion", Data::string("v1")),
            Field::new("kind", Data::string("List")),
            Field::new("items", Data::List(sorted.clone())),
        ]);
        let whole = cue_eval::encode::to_json_indent(&list, true);
        assert!(whole.len() > 4 << 16, "several pieces");
        let mut out = Vec::new();
        let mut given = objs;
        write_objects_json(&mut out, &mut given).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            whole.trim_end_matches('\n')
        );
        assert_eq!(given, sorted, "the objects come back, sorted in place");
    }

    /// A newline that ends one write but not the last is passed on with the next.
    #[test]
    fn only_the_final_newline_is_held_back() {
        use std::io::Write;
        let mut out = Vec::new();
        let mut w = NoFinalNewline {
            w: &mut out,
            held: false,
        };
        for piece in ["{\n", "", "  a\n\n", "}\n"] {
            w.write_all(piece.as_bytes()).unwrap();
        }
        assert_eq!(String::from_utf8(out).unwrap(), "{\n  a\n\n}");
    }

    #[test]
    fn an_empty_json_list_has_no_items() {
        assert_eq!(
            objects_json(Vec::new()),
            "{\n    \"apiVersion\": \"v1\",\n    \"kind\": \"List\"\n}"
        );
    }

    #[test]
    fn secrets_are_masked_and_other_kinds_are_not() {
        let s = decode::json(
            r#"{"apiVersion":"v1","kind":"Secret","data":{"a":"YQ=="},"stringData":"x"}"#,
        )
        .unwrap();
        assert_eq!(
            object_yaml(&mask_secret(&s)),
            "apiVersion: v1\ndata:\n  a: '***'\nkind: Secret\nstringData: '***'\n"
        );
        let c = decode::json(r#"{"apiVersion":"v1","kind":"ConfigMap","data":{"a":"b"}}"#).unwrap();
        assert_eq!(mask_secret(&c), c);
    }

    // Timoni's `Test_resourceFileName` cases.
    #[test]
    fn output_dir_file_names() {
        let obj = |api: &str, kind: &str, ns: &str, name: &str| {
            decode::json(&format!(
                r#"{{"apiVersion":"{api}","kind":"{kind}","metadata":{{"name":"{name}","namespace":"{ns}"}}}}"#
            ))
            .unwrap()
        };
        assert_eq!(
            resource_file_name(&obj("v1", "ConfigMap", "d", "my-cm"), false),
            "v1_configmap_my-cm.yaml"
        );
        assert_eq!(
            resource_file_name(&obj("apps/v1", "Deployment", "d", "web"), false),
            "apps_v1_deployment_web.yaml"
        );
        assert_eq!(
            resource_file_name(
                &obj("rbac.authorization.k8s.io/v1", "ClusterRole", "", "admin"),
                false
            ),
            "rbac.authorization.k8s.io_v1_clusterrole_admin.yaml"
        );
        assert_eq!(
            resource_file_name(&obj("v1", "Service", "prod", "api"), true),
            "prod_v1_service_api.yaml"
        );
    }

    #[test]
    fn only_several_non_empty_namespaces_prefix_file_names() {
        let mk = |ns: &str| {
            decode::json(&format!(
                r#"{{"kind":"A","metadata":{{"name":"a","namespace":"{ns}"}}}}"#
            ))
            .unwrap()
        };
        assert!(!spans_namespaces(&[mk("a"), mk(""), mk("a")]));
        assert!(spans_namespaces(&[mk("a"), mk("b")]));
    }

    #[test]
    fn apply_order_puts_namespaces_before_deployments() {
        let mk = |k: &str| {
            decode::json(&format!(r#"{{"kind":"{k}","metadata":{{"name":"a"}}}}"#)).unwrap()
        };
        let mut objs = vec![
            mk("Deployment"),
            mk("Foo"),
            mk("Namespace"),
            mk("ValidatingWebhookConfiguration"),
        ];
        sort_for_apply(&mut objs);
        let kinds: Vec<_> = objs
            .iter()
            .map(|o| get_str(o, &["kind"]).unwrap().to_string())
            .collect();
        assert_eq!(
            kinds,
            [
                "Namespace",
                "Deployment",
                "Foo",
                "ValidatingWebhookConfiguration"
            ]
        );
    }
}
