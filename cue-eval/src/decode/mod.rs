//! Input decoders: JSON and YAML text to concrete CUE data ([`crate::encode::Data`]), as CUE
//! v0.17.1 reads data files and as `json.Unmarshal` / `yaml.Unmarshal` decode their argument.
//!
//! * [`json`]: one JSON value; numbers keep their CUE spelling (`1.50` stays `1.50`), object
//!   keys keep their order, duplicate keys must agree (CUE unifies them).
//! * [`yaml`]: a YAML stream, one [`Data`] per document, with the scalar resolution of Go's
//!   `yaml.v3` as CUE's YAML decoder applies it (YAML 1.2 core schema: `yes`/`no` are strings,
//!   `0x1F` is 31, `~` is null, timestamps stay strings), anchors, aliases and `<<` merge keys.
//! * [`utf8`]: bytes to text, with the line and column of the first invalid byte.
//! * [`to_cue_source`]: data back to CUE source text, to load a data file as a CUE value.
//!
//! Every decoder is bounded by [`Limits`]: input size, node count (an alias-expansion bomb ends
//! in an error instead of exhausting memory) and nesting depth (no recursion on the input).

mod cue;
mod json;
mod yaml;

#[cfg(test)]
mod tests;

use std::fmt;

pub use crate::encode::{Data, Field};
pub use cue::{to_cue_expr, to_cue_source, write_string as write_cue_string};

/// Why a decoder refused its input. `line` and `column` are 1-based (columns in bytes); both are
/// 0 when the error has no position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodeError {
    /// What is wrong, without the position.
    pub msg: String,
    /// The 1-based line, or 0.
    pub line: usize,
    /// The 1-based column in bytes, or 0.
    pub column: usize,
}

impl DecodeError {
    /// An error at a position.
    pub fn at(line: usize, column: usize, msg: impl Into<String>) -> DecodeError {
        DecodeError {
            msg: msg.into(),
            line,
            column,
        }
    }

    /// An error without a position.
    pub fn new(msg: impl Into<String>) -> DecodeError {
        DecodeError::at(0, 0, msg)
    }

    /// The error prefixed with a file name: `file:line:col: msg`.
    pub fn in_file(&self, file: &str) -> String {
        if self.line == 0 {
            format!("{file}: {}", self.msg)
        } else {
            format!("{file}:{}:{}: {}", self.line, self.column, self.msg)
        }
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            f.write_str(&self.msg)
        } else {
            write!(f, "{}:{}: {}", self.line, self.column, self.msg)
        }
    }
}

impl std::error::Error for DecodeError {}

/// Bounds on what a decoder accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Largest input, in bytes.
    pub max_bytes: usize,
    /// Most values (scalars, lists, structs) in the result, aliases expanded.
    pub max_nodes: usize,
    /// Deepest nesting of lists and structs.
    pub max_depth: usize,
}

impl Default for Limits {
    /// 16 MiB of input, 1 million values, 1,000 levels. The evaluator holds about 1.4 KB per
    /// value of a data file at its peak (a 12 MB JSON file of 700,000 values: 980 MB of RSS), so
    /// these bounds keep the memory of `cue export big.json` around 1.5 GB at most; larger inputs
    /// end with an error naming the limit (`docs/evaluator.md`, "Performance").
    fn default() -> Limits {
        Limits {
            max_bytes: 16 << 20,
            max_nodes: 1_000_000,
            max_depth: 1000,
        }
    }
}

impl Limits {
    fn check_size(&self, kind: &str, len: usize) -> Result<(), DecodeError> {
        if len > self.max_bytes {
            return Err(DecodeError::new(format!(
                "{kind} input of {len} bytes exceeds the limit of {} bytes",
                self.max_bytes
            )));
        }
        Ok(())
    }
}

/// Decodes one JSON value with the default [`Limits`].
pub fn json(text: &str) -> Result<Data, DecodeError> {
    json_with_limits(text, &Limits::default())
}

/// Decodes one JSON value.
pub fn json_with_limits(text: &str, limits: &Limits) -> Result<Data, DecodeError> {
    limits.check_size("JSON", text.len())?;
    json::parse(text, limits, true)
}

/// Checks that `text` is one valid JSON value (the `json.Valid` of Go), without building it.
pub fn json_valid(text: &str) -> Result<(), DecodeError> {
    json::parse(
        text,
        &Limits {
            max_bytes: usize::MAX,
            max_nodes: usize::MAX,
            max_depth: 10_000,
        },
        false,
    )
    .map(|_| ())
}

/// Decodes a YAML stream with the default [`Limits`]: one value per document (an empty stream
/// gives none).
pub fn yaml(text: &str) -> Result<Vec<Data>, DecodeError> {
    yaml_with_limits(text, &Limits::default())
}

/// Decodes a YAML stream.
pub fn yaml_with_limits(text: &str, limits: &Limits) -> Result<Vec<Data>, DecodeError> {
    limits.check_size("YAML", text.len())?;
    yaml::parse(text, limits)
}

/// Decodes a YAML stream as far as it goes: the documents before the first error, and the
/// error (CUE's `yaml.Unmarshal` tells an error in a second document from one in the first).
pub fn yaml_partial(text: &str) -> (Vec<Data>, Option<DecodeError>) {
    let limits = Limits::default();
    if let Err(e) = limits.check_size("YAML", text.len()) {
        return (Vec::new(), Some(e));
    }
    yaml::parse_partial(text, &limits)
}

/// The line and column (1-based) where each document of a YAML stream starts its value.
pub fn yaml_doc_positions(text: &str) -> Vec<(usize, usize)> {
    yaml::doc_positions(text, &Limits::default())
}

/// Bytes to text: a clear error with the position of the first byte that is not UTF-8.
pub fn utf8(bytes: &[u8]) -> Result<&str, DecodeError> {
    match std::str::from_utf8(bytes) {
        Ok(s) => Ok(s),
        Err(e) => {
            let good = &bytes[..e.valid_up_to()];
            let line = good.iter().filter(|&&b| b == b'\n').count() + 1;
            let col = good.len() - good.iter().rposition(|&b| b == b'\n').map_or(0, |p| p + 1) + 1;
            Err(DecodeError::at(
                line,
                col,
                format!(
                    "invalid UTF-8 (byte 0x{:02x} at offset {})",
                    bytes[e.valid_up_to()],
                    e.valid_up_to()
                ),
            ))
        }
    }
}

/// The canonical spelling of a number literal (as CUE's JSON output spells it) and whether it
/// is a float, or `None` when `text` is not a CUE number literal.
fn number(text: &str) -> Option<Data> {
    let (neg, body) = match text.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let (n, kind) = crate::num::Num::parse_literal(body).ok()?;
    let n = if neg { n.neg() } else { n };
    Some(Data::Number {
        text: n.to_g_string(),
        float: kind == crate::num::NumKind::Float,
    })
}

/// A number literal as CUE's `literal.ParseNum` reads it (the literal a data decoder builds):
/// an optional sign, `_` between digits, `0x`/`0o`/`0b` prefixes, no legacy octal (`017`),
/// with CUE's error texts. Gives the value and whether the literal is a float.
///
/// `unary` reads a leading `-` as negation (as the JSON and YAML decoders build `-X`), so
/// that `-0` is zero; otherwise the literal keeps its sign (`-0.0`), as TOML's do.
pub(crate) fn cue_literal(text: &str, unary: bool) -> Result<(crate::num::Num, bool), String> {
    use crate::num::{Num, NumKind};
    let quoted = |t: &str| format!("{t:?}");
    let (neg, body) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let b = body.as_bytes();
    // `0` followed by digits and no fraction or exponent: CUE has no legacy octal.
    if b.len() > 1
        && b[0] == b'0'
        && b[1..].iter().all(|c| c.is_ascii_digit() || *c == b'_')
        && b[1..].iter().any(u8::is_ascii_digit)
    {
        return Err(format!("illegal integer number {}", quoted(text)));
    }
    let (n, kind) =
        Num::parse_literal(body).map_err(|e| e.replace(&quoted(body), &quoted(text)))?;
    if body.contains("__") {
        return Err("illegal '_' in number".to_string());
    }
    let n = match (neg, unary) {
        (false, _) => n,
        (true, true) => n.neg(),
        (true, false) if n.is_zero() => Num::from_parts(true, n.coefficient(), n.exponent()),
        (true, false) => n.neg(),
    };
    Ok((n, kind == NumKind::Float))
}

/// Unifies `new` into `old` as CUE unifies two concrete values (see [`json`]'s duplicate
/// keys).
pub(crate) fn unify_data(old: &mut Data, new: Data) -> Result<(), String> {
    json::unify(old, new)
}
