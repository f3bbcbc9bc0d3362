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

use cue_eval::ast::{Decl, Expr, FileId, Label, StructLit};
use timoni_core::values::{self, ValuesSource};

/// `msg` with every position in the merged `values.cue` of the module at `module` (package
/// `package`) replaced by the position of the same value in the file that set it.
pub fn in_user_files(msg: &str, module: &str, package: &str, sources: &[ValuesSource]) -> String {
    if sources.is_empty() || module.starts_with("oci://") {
        return msg.to_string();
    }
    let Some(mapper) = Mapper::new(module, package, sources) else {
        return msg.to_string();
    };
    let prefix = format!("{}:", mapper.merged_path.display());
    let mut out = String::with_capacity(msg.len());
    let mut rest = msg;
    while let Some(i) = rest.find(&prefix) {
        out.push_str(&rest[..i]);
        let after = &rest[i + prefix.len()..];
        let end = after
            .find(|c: char| !c.is_ascii_digit() && c != ':')
            .unwrap_or(after.len());
        let pos = &after[..end];
        match pos
            .split_once(':')
            .and_then(|(l, c)| Some((l.parse().ok()?, c.parse().ok()?)))
        {
            Some((line, col)) => match mapper.map(line, col) {
                Some(p) => out.push_str(&p),
                None => out.push_str(&format!("{prefix}{pos}")),
            },
            None => out.push_str(&format!("{prefix}{pos}")),
        }
        rest = &after[end..];
    }
    out.push_str(rest);
    out
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

    /// The position (`file:line:col`) that set the value at `line:col` of the merged text.
    fn map(&self, line: usize, col: usize) -> Option<String> {
        let offset = offset_of(&self.merged, line, col)?;
        let merged = fields(&self.merged);
        let (path, ..) = merged
            .iter()
            .filter(|(_, start, end)| *start <= offset && offset < *end)
            .max_by_key(|(p, ..)| p.len())?;
        for (file, text) in &self.files {
            if let Some((_, start, _)) = fields(text).into_iter().find(|(p, ..)| p == path) {
                let (l, c) = cue_eval::source::line_col(text, start);
                return Some(format!("{}:{l}:{c}", file.display()));
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
/// end of its value), into nested struct values.
fn fields(text: &str) -> Vec<(Vec<String>, usize, usize)> {
    let (file, _) = cue_eval::parse(FileId(0), text);
    let mut out = Vec::new();
    walk(&file.decls, &mut Vec::new(), &mut out);
    out
}

fn walk(decls: &[Decl], path: &mut Vec<String>, out: &mut Vec<(Vec<String>, usize, usize)>) {
    for d in decls {
        match d {
            Decl::Field(f) => {
                let Some(name) = label_name(&f.label) else {
                    continue;
                };
                path.push(name);
                let span = f.value.span();
                out.push((path.clone(), span.start as usize, span.end as usize));
                if let Expr::Struct(StructLit { decls, .. }) = &f.value {
                    walk(decls, path, out);
                }
                path.pop();
            }
            Decl::Embed(Expr::Struct(StructLit { decls, .. })) => walk(decls, path, out),
            _ => {}
        }
    }
}

fn label_name(label: &Label) -> Option<String> {
    match label {
        Label::Ident(i) => Some(i.name.to_string()),
        Label::String(e) => match e.as_ref() {
            Expr::Lit(l) => String::from_utf8(cue_eval::literal::decode(&l.raw).ok()?).ok(),
            _ => None,
        },
        _ => None,
    }
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
