//! Error positions in the user's own values files.
//!
//! With `-f` values files, a module is evaluated with its `values.cue` replaced by the values
//! merged by Timoni's rules, so evaluation errors point at lines of that merged text, which no
//! file on disk has. This maps each such position back: the field at that position in the merged
//! text gives a path (`values.client.enabled`); the last CUE values file given that sets the
//! path names the user's file and position of the value (`my-values.cue:1:26`), else the
//! module's own `values.cue` on disk does. YAML, JSON and stdin values are not mapped (they are
//! not CUE source), nor is a position whose field cannot be found.

use std::path::PathBuf;

use cue_eval::Position;
use cue_eval::syntax::Document;
use timoni_core::values::{self, ValuesSource};
use timoni_core::{CueError, Error};

/// The error as text, with every position in the merged `values.cue` of the module at `module`
/// (package `package`) replaced by the position of the same value in the file that set it.
pub fn in_user_files(e: &Error, module: &str, package: &str, sources: &[ValuesSource]) -> String {
    let Error::Cue(cue) = e else {
        return e.to_string();
    };
    if sources.is_empty() || module.starts_with("oci://") {
        return e.to_string();
    }
    let Some(mapper) = Mapper::new(module, package, sources) else {
        return e.to_string();
    };
    let merged = mapper.merged_path.display().to_string();
    let error = cue.error.map_positions(|p| {
        if p.file() == merged {
            mapper
                .map(p.line(), p.column())
                .unwrap_or_else(|| p.clone())
        } else {
            p.clone()
        }
    });
    CueError {
        context: cue.context.clone(),
        error,
    }
    .to_string()
}

struct Mapper {
    merged_path: PathBuf,
    merged: String,
    /// The CUE files to look in, last given first, the module's `values.cue` last.
    files: Vec<(PathBuf, String)>,
}

impl Mapper {
    fn new(module: &str, package: &str, sources: &[ValuesSource]) -> Option<Mapper> {
        let root = std::path::absolute(module.strip_prefix("file://").unwrap_or(module)).ok()?;
        let pkg_dir = if package == "main" {
            root
        } else {
            root.join(package)
        };
        let merged_path = pkg_dir.join("values.cue");
        let own = std::fs::read_to_string(&merged_path).ok()?;
        let defaults = values::values_from_cue(&merged_path.display().to_string(), &own).ok()?;
        let overlays = sources
            .iter()
            .map(values::read_values)
            .collect::<Result<Vec<_>, _>>()
            .ok()?;
        let merged = values::values_file(package, &values::merge_all(defaults, &overlays).ok()?);
        let mut files: Vec<(PathBuf, String)> = sources
            .iter()
            .rev()
            .filter_map(|s| match s {
                ValuesSource::File(p) if p.extension().is_some_and(|e| e == "cue") => {
                    Some((p.clone(), std::fs::read_to_string(p).ok()?))
                }
                _ => None,
            })
            .collect();
        files.push((merged_path.clone(), own));
        Some(Mapper {
            merged_path,
            merged,
            files,
        })
    }

    /// The position that set the value at `line:col` of the merged text.
    fn map(&self, line: usize, col: usize) -> Option<Position> {
        let offset = offset_of(&self.merged, line, col)?;
        let merged = fields(&self.merged);
        let (path, ..) = merged
            .iter()
            .filter(|(_, start, end)| *start <= offset && offset < *end)
            .max_by_key(|(p, ..)| p.len())?;
        for (file, text) in &self.files {
            if let Some((_, start, _)) = fields(text).into_iter().find(|(p, ..)| p == path) {
                let (l, c) = cue_eval::source::line_col(text, start);
                return Some(Position::new(file.display().to_string(), l, c));
            }
        }
        None
    }
}

/// The byte offset of 1-based `line:col` in `text`.
fn offset_of(text: &str, line: usize, col: usize) -> Option<usize> {
    let start: usize = text
        .split_inclusive('\n')
        .take(line.checked_sub(1)?)
        .map(str::len)
        .sum();
    let offset = start + col.checked_sub(1)?;
    (offset <= text.len()).then_some(offset)
}

/// Every regular field of a CUE text with a name or quoted label, as (path, start of its value,
/// end of its value), into nested struct values (not into lists, nor below a computed label).
fn fields(text: &str) -> Vec<(Vec<String>, usize, usize)> {
    let doc = Document::parse_partial("values.cue", text);
    // The enclosing fields of the current one: value range, label (None: not followed into).
    let mut open: Vec<(std::ops::Range<usize>, Option<String>)> = Vec::new();
    let mut out = Vec::new();
    for f in doc.fields() {
        let range = f.value_range();
        while open
            .last()
            .is_some_and(|(r, _)| !(r.start <= range.start && range.end <= r.end))
        {
            open.pop();
        }
        let followed = open.iter().all(|(_, l)| l.is_some());
        let label = f.label().filter(|_| followed);
        let in_struct = !f.value_text().starts_with('[');
        if let Some(name) = &label {
            let mut path: Vec<String> = open.iter().filter_map(|(_, l)| l.clone()).collect();
            path.push(name.clone());
            out.push((path, range.start, range.end));
        }
        open.push((range, label.filter(|_| in_struct)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{fields, offset_of};

    #[test]
    fn fields_have_paths_through_shorthands_and_braces() {
        let text = "values: client: enabled: \"yes\"\nvalues: {\n\tport: 1\n}\n";
        let paths: Vec<String> = fields(text).iter().map(|(p, ..)| p.join(".")).collect();
        assert_eq!(
            paths,
            [
                "values",
                "values.client",
                "values.client.enabled",
                "values",
                "values.port"
            ]
        );
        let (_, start, _) = &fields(text)[2];
        assert_eq!(&text[*start..*start + 5], "\"yes\"");
        assert_eq!(offset_of(text, 3, 2), Some(text.find("port").unwrap()));
    }
}
