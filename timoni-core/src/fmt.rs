//! `timoni fmt`: format CUE files in place, or report how they differ from their formatted form.
//!
//! Directories are walked recursively in name order, skipping `cue.mod` and directories whose name
//! starts with `.` or `_`, as Timoni does; `dir/...` (or `...`) names the directory `dir`. A file
//! named explicitly must be a `.cue` file. A file that does not parse is reported with its errors
//! and left untouched: formatting a broken tree could lose text. Diffs are unified diffs headed
//! as Timoni's (`diff a.cue.orig a.cue`), paths relative to the working directory.

use std::path::{Path, PathBuf};

use cue_eval::ParseError;
use cue_eval::source::SourceFile;

/// What to do with files that are not formatted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Rewrite them in place.
    Write,
    /// Leave them, and report a unified diff for each.
    Diff,
}

/// The outcome for one file.
#[derive(Debug)]
pub enum Outcome {
    /// Already formatted.
    Unchanged,
    /// Rewritten in place ([`Mode::Write`]).
    Formatted,
    /// Not formatted; the unified diff from the file to its formatted form ([`Mode::Diff`]).
    Differs(String),
    /// The file does not parse; nothing was written.
    Invalid(SourceFile, Vec<ParseError>),
}

/// One file's path and outcome.
#[derive(Debug)]
pub struct FileReport {
    pub path: PathBuf,
    pub outcome: Outcome,
}

/// Errors that stop `fmt` before it reaches a file.
#[derive(Debug)]
pub enum Error {
    /// A path could not be read, or a formatted file could not be written.
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A file named explicitly is not a `.cue` file.
    NotCue(String),
    /// A `...` that does not trail a directory (`a/...b`, `a...`).
    BadEllipsis { arg: String, why: String },
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Io { path, source } => write!(f, "{}: {source}", path.display()),
            Error::NotCue(arg) => write!(f, "not a CUE file: {arg}"),
            Error::BadEllipsis { arg, why } => write!(f, "invalid path {arg:?}: {why}"),
        }
    }
}

impl std::error::Error for Error {}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Formats the CUE text of one file named `name`; for stdin and in-memory use.
pub fn format_text(name: &str, text: &str) -> Result<String, (SourceFile, Vec<ParseError>)> {
    cue_eval::format_source(text).map_err(|errors| (SourceFile::new(name, text), errors))
}

/// Formats every `.cue` file under `paths` (files or directories, `dir/...` for `dir`).
pub fn format_paths(paths: &[PathBuf], mode: Mode) -> Result<Vec<FileReport>> {
    let mut files = Vec::new();
    for p in paths {
        let arg = p.to_string_lossy().into_owned();
        let path = resolve_arg(&arg)?;
        let meta = std::fs::metadata(&path).map_err(io(&path))?;
        if !meta.is_dir() && !arg.ends_with(".cue") {
            return Err(Error::NotCue(arg));
        }
        collect(&path, &mut files)?;
    }
    files.into_iter().map(|p| format_file(p, mode)).collect()
}

/// An argument as a path: a trailing `/...` (or a bare `...`) names the directory before it.
fn resolve_arg(arg: &str) -> Result<PathBuf> {
    if !arg.contains("...") {
        return Ok(PathBuf::from(arg));
    }
    let bad = |why: &str| Error::BadEllipsis {
        arg: arg.to_string(),
        why: why.to_string(),
    };
    let trimmed = match arg.strip_suffix("...") {
        Some(t) if !t.contains("...") => t,
        _ => {
            return Err(bad(
                "\"...\" is only accepted as a trailing directory alias",
            ));
        }
    };
    let dir = match trimmed {
        "" => PathBuf::from("."),
        t if t.ends_with('/') => PathBuf::from(t.trim_end_matches('/')),
        _ => return Err(bad("\"...\" must follow a directory separator")),
    };
    let dir = if dir.as_os_str().is_empty() {
        PathBuf::from("/")
    } else {
        dir
    };
    let meta = std::fs::metadata(&dir).map_err(io(&dir))?;
    if !meta.is_dir() {
        return Err(bad(&format!("{} is not a directory", dir.display())));
    }
    Ok(dir)
}

/// A path as Timoni shows it in a diff: relative to the working directory when below it.
fn shown(path: &Path) -> String {
    let clean: PathBuf = path
        .components()
        .filter(|c| !matches!(c, std::path::Component::CurDir))
        .collect();
    if clean.is_relative() {
        return clean.display().to_string();
    }
    match std::env::current_dir() {
        Ok(cwd) => match clean.strip_prefix(&cwd) {
            Ok(rel) => rel.display().to_string(),
            Err(_) => clean.display().to_string(),
        },
        Err(_) => clean.display().to_string(),
    }
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |source| Error::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn collect(path: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    let meta = std::fs::metadata(path).map_err(io(path))?;
    if !meta.is_dir() {
        out.push(path.to_path_buf());
        return Ok(());
    }
    let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
        .map_err(io(path))?
        .map(|e| e.map(|e| e.path()))
        .collect::<std::io::Result<_>>()
        .map_err(io(path))?;
    entries.sort();
    for e in entries {
        let name = e.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if e.is_dir() {
            if name != "cue.mod" && !name.starts_with('.') && !name.starts_with('_') {
                collect(&e, out)?;
            }
        } else if name.ends_with(".cue") {
            out.push(e);
        }
    }
    Ok(())
}

fn format_file(path: PathBuf, mode: Mode) -> Result<FileReport> {
    let text = std::fs::read_to_string(&path).map_err(io(&path))?;
    let outcome = match format_text(&path.display().to_string(), &text) {
        Err((file, errors)) => Outcome::Invalid(file, errors),
        Ok(formatted) if formatted == text => Outcome::Unchanged,
        Ok(formatted) => match mode {
            Mode::Write => {
                std::fs::write(&path, formatted).map_err(io(&path))?;
                Outcome::Formatted
            }
            Mode::Diff => {
                let name = shown(&path);
                let orig = format!("{name}.orig");
                let hunks = similar::TextDiff::from_lines(&text, &formatted)
                    .unified_diff()
                    .header(&orig, &name)
                    .to_string();
                Outcome::Differs(format!("diff {orig} {name}\n{hunks}"))
            }
        },
    };
    Ok(FileReport { path, outcome })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walks_directories_and_skips_cue_mod_and_hidden() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        for p in [
            "a.cue",
            "sub/b.cue",
            "cue.mod/c.cue",
            ".git/d.cue",
            "_x/e.cue",
            "f.txt",
        ] {
            let path = d.join(p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "a: 1\n").unwrap();
        }
        let reports = format_paths(&[d.to_path_buf()], Mode::Diff).unwrap();
        let names: Vec<_> = reports
            .iter()
            .map(|r| r.path.strip_prefix(d).unwrap().display().to_string())
            .collect();
        assert_eq!(names, ["a.cue", "sub/b.cue"]);
    }

    #[test]
    fn invalid_files_are_left_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.cue");
        std::fs::write(&path, "a: {\n").unwrap();
        let reports = format_paths(std::slice::from_ref(&path), Mode::Write).unwrap();
        assert!(matches!(reports[0].outcome, Outcome::Invalid(..)));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "a: {\n");
    }
}
