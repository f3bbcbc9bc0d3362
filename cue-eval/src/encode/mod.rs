//! Output encoders for concrete CUE data, byte-exact with CUE v0.17.1.
//!
//! The evaluator turns a finished value into a [`Data`] tree (defaults taken, fields in their
//! output order, numbers already spelled) and these functions print it:
//!
//! * [`to_json_indent`]: what `cue export --out json` prints (Go `json.Encoder` with a
//!   four-space indent and a trailing newline), and [`write_json_indent`], the same text
//!   written to an `io::Write` a piece at a time;
//! * [`to_json_compact`] and [`to_json_stream_compact`]: the builtins `json.Marshal` and
//!   `json.MarshalStream`;
//! * [`to_yaml`] and [`to_yaml_stream`]: `cue export --out yaml` and the builtins
//!   `yaml.Marshal` and `yaml.MarshalStream` (CUE's `internal/encoding/yaml` on top of the
//!   `yaml.v3` emitter with indent 2 and unlimited width).
//!
//! [`crate::Value::write_json`] and [`crate::Value::to_json`] build no tree: the exporter
//! reports the value as it walks it to the writer behind [`write_json_indent`].
//!
//! Every function writes into one `String` and allocates nothing per node beyond that buffer,
//! except where a YAML scalar needs a spelling that differs from the data (base64 of bytes,
//! the `.` CUE adds to some floats).

pub(crate) mod json;
pub(crate) mod sink;
mod yaml;

pub(crate) use yaml::yaml_style_float;

#[cfg(test)]
mod tests;

pub use json::{to_json_compact, to_json_indent, to_json_stream_compact, write_json_indent};
pub use yaml::{ScalarStyle, to_yaml, to_yaml_stream, yaml_string_style};

/// A concrete CUE value ready to encode. Field order is the output order (already decided by the evaluator).
#[derive(Clone, Debug, PartialEq)]
pub enum Data {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number, already spelled as CUE's JSON output spells it (apd 'G' format, e.g. "1.0", "1E+2", "100"); `float` tells whether its CUE kind is float.
    Number {
        /// The number as CUE writes it.
        text: String,
        /// Whether the number's kind is `float` (else `int`).
        float: bool,
    },
    /// A string, decoded.
    String(String),
    /// Bytes, decoded.
    Bytes(Vec<u8>),
    /// A list's elements in order.
    List(Vec<Data>),
    /// A struct's regular fields in output order.
    Struct(Vec<Field>),
}

impl Data {
    /// CUE's name of the value's kind (`int`, `float`, `string`, `struct`, ...), as messages
    /// print it.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Data::Null => "null",
            Data::Bool(_) => "bool",
            Data::Number { float: true, .. } => "float",
            Data::Number { .. } => "int",
            Data::String(_) => "string",
            Data::Bytes(_) => "bytes",
            Data::List(_) => "list",
            Data::Struct(_) => "struct",
        }
    }
}

/// One regular field of a struct: its label, its value and the YAML tag its attributes ask for.
#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    /// The label, unquoted.
    pub name: String,
    /// The field's value.
    pub value: Data,
    /// a `@yaml(,tag="!X")` attribute tag, if any
    pub yaml_tag: Option<String>,
}

impl Data {
    /// An integer number spelled `text`.
    pub fn int(text: impl Into<String>) -> Data {
        Data::Number {
            text: text.into(),
            float: false,
        }
    }

    /// A float number spelled `text`.
    pub fn float(text: impl Into<String>) -> Data {
        Data::Number {
            text: text.into(),
            float: true,
        }
    }

    /// A string.
    pub fn string(s: impl Into<String>) -> Data {
        Data::String(s.into())
    }
}

impl Field {
    /// A field without a YAML tag.
    pub fn new(name: impl Into<String>, value: Data) -> Field {
        Field {
            name: name.into(),
            value,
            yaml_tag: None,
        }
    }

    /// A field whose value carries the YAML tag `tag` (from `@yaml(,tag="...")`).
    pub fn tagged(name: impl Into<String>, value: Data, tag: impl Into<String>) -> Field {
        Field {
            name: name.into(),
            value,
            yaml_tag: Some(tag.into()),
        }
    }
}

const BASE64_ALPHABET: &[u8; 64] =
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Appends `n` spaces, copied from a string of them (the writers' indentation: generated
/// schemas nest thirty levels deep and more).
pub(crate) fn push_spaces(out: &mut String, n: usize) {
    const SPACES: &str = concat!(
        "                                                                ",
        "                                                                ",
        "                                                                ",
        "                                                                ",
    );
    let mut n = n;
    while n > SPACES.len() {
        out.push_str(SPACES);
        n -= SPACES.len();
    }
    out.push_str(&SPACES[..n]);
}

/// Appends the standard (padded) base64 encoding of `bytes` to `out`, as Go's
/// `base64.StdEncoding` does.
pub(crate) fn push_base64(out: &mut String, bytes: &[u8]) {
    out.reserve(bytes.len().div_ceil(3) * 4);
    let mut chunks = bytes.chunks_exact(3);
    for c in &mut chunks {
        let n = (u32::from(c[0]) << 16) | (u32::from(c[1]) << 8) | u32::from(c[2]);
        for shift in [18, 12, 6, 0] {
            out.push(char::from(BASE64_ALPHABET[((n >> shift) & 63) as usize]));
        }
    }
    match *chunks.remainder() {
        [a] => {
            let n = u32::from(a) << 16;
            out.push(char::from(BASE64_ALPHABET[((n >> 18) & 63) as usize]));
            out.push(char::from(BASE64_ALPHABET[((n >> 12) & 63) as usize]));
            out.push_str("==");
        }
        [a, b] => {
            let n = (u32::from(a) << 16) | (u32::from(b) << 8);
            out.push(char::from(BASE64_ALPHABET[((n >> 18) & 63) as usize]));
            out.push(char::from(BASE64_ALPHABET[((n >> 12) & 63) as usize]));
            out.push(char::from(BASE64_ALPHABET[((n >> 6) & 63) as usize]));
            out.push('=');
        }
        _ => {}
    }
}
