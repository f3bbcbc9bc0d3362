//! The [`Engine`] of this project's evaluator (`cue-eval`): loads a case the way `cue` does
//! (root files as one package; imports from the case's module and `cue.mod/{pkg,gen,usr}`),
//! exports it, and answers the per-field questions of the inline assertions through the
//! public [`cue_eval::Value`] (Go's `cue.Value` queries: `Err`, `IncompleteKind`, `IsClosed`,
//! `Allows`); `@test(eq, ...)` compares as upstream's test harness does rather than as
//! `cue.Value.Equals` does ([`crate::inline_eq`]), on the same public API.

use cue_eval::syntax::Document;
use cue_eval::{Context, ErrorItem, FieldOptions, Value};

use crate::engine::*;

/// The engine backed by `cue-eval`.
#[derive(Debug, Clone, Copy, Default)]
pub struct CueEval;

/// The module path declared in `cue.mod/module.cue`.
fn module_path(files: &[SourceFile]) -> Option<String> {
    let m = files.iter().find(|f| f.path == "cue.mod/module.cue")?;
    for line in m.text.lines() {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix("module:") {
            let v = rest.trim().trim_matches('"');
            return Some(v.split('@').next().unwrap_or(v).to_string());
        }
    }
    None
}

fn package_clause(text: &str) -> Option<String> {
    Document::parse_partial("", text)
        .package_name()
        .map(str::to_string)
}

/// The files of the package an import path names, from the case's files.
fn import_files(files: &[SourceFile], path: &str) -> Result<Vec<(String, String)>, String> {
    let (dir_path, qual) = match path.rsplit_once(':') {
        Some((p, q)) => (p, Some(q.to_string())),
        None => (path, None),
    };
    let dir_path = dir_path.split('@').next().unwrap_or(dir_path);
    let want = qual.unwrap_or_else(|| dir_path.rsplit('/').next().unwrap_or(dir_path).to_string());
    let mut dirs = Vec::new();
    if let Some(m) = module_path(files) {
        if dir_path == m {
            dirs.push(String::new());
        } else if let Some(rest) = dir_path.strip_prefix(&format!("{m}/")) {
            dirs.push(rest.to_string());
        }
    }
    for sub in ["cue.mod/gen", "cue.mod/pkg", "cue.mod/usr"] {
        dirs.push(format!("{sub}/{dir_path}"));
    }
    let mut out = Vec::new();
    for d in &dirs {
        for f in files {
            let parent = f.path.rsplit_once('/').map(|(p, _)| p).unwrap_or("");
            if parent == d && f.path.ends_with(".cue") {
                let pkg = package_clause(&f.text);
                if pkg.as_deref() == Some(want.as_str()) || (pkg.is_some() && dirs.len() == 1) {
                    out.push((f.path.clone(), f.text.clone()));
                }
            }
        }
    }
    if out.is_empty() {
        return Err(format!("cannot find package {path:?}"));
    }
    Ok(out)
}

fn code(c: cue_eval::ErrorCode) -> ErrCode {
    match c {
        cue_eval::ErrorCode::User => ErrCode::User,
        cue_eval::ErrorCode::StructuralCycle => ErrCode::StructuralCycle,
        cue_eval::ErrorCode::Incomplete => ErrCode::Incomplete,
        cue_eval::ErrorCode::Cycle => ErrCode::Cycle,
        _ => ErrCode::Eval,
    }
}

/// The Go format strings of `cue`'s error messages that `cue-eval` reproduces. An error keeps
/// only its rendered text, so the engine recovers the format and arguments by matching the
/// message against these, most specific first (upstream's harness compares `contains=` with
/// the format and `args=` with the arguments).
const FORMATS: &[&str] = &[
    "conflicting values %s and %s (mismatched types %s and %s)",
    "conflicting values %s and %s",
    "incompatible %s bounds %v and %s",
    "invalid value %v (out of bound %s)",
    "invalid value %v (does not satisfy %s)",
    "invalid value %v (does not satisfy %s): %v",
    "non-concrete value %s for bound %s",
    "non-concrete value %v in operand to %s",
    "unresolved disjunction %v (type %s)",
    "undefined field: %s",
    "field not found: %v",
    "required field missing: %s",
    "cannot reference optional field: %s",
    "cycle with field: %v",
    "error in call to %s: %v",
    "failed arithmetic: %v",
    "circular dependency in evaluation of conditionals: %v changed after evaluation",
    "adding field %v not allowed as field set was already referenced",
    "%d errors in empty disjunction:",
    "index out of range [%d] with length %d",
    "key value of dynamic field must be concrete, found %v",
    "invalid operands %s and %s to '%s' (type %s and %s)",
    "invalid operand %s ('%s' requires concrete value)",
    "incomplete %s: %s",
    "incompatible list lengths (%d and %d)",
    "%s undefined as %s is incomplete (type %s)",
    "invalid non-ground value %s (must be concrete %s)",
    "cannot use %s (type %s) as type %s in argument %d to %s",
    "cannot use %s (type %s) as %s in argument %d to %s",
    "invalid list index %v (type %s)",
    "invalid %s index %v (type %s)",
    "invalid index %v (out of bounds)",
    "cannot add field %s: was already used",
    "reference %q not found",
    "reference %q set to unresolved value",
    "structural cycle",
];

/// The format and arguments of `msg`, from [`FORMATS`].
fn format_and_args(msg: &str) -> Option<(String, Vec<String>)> {
    use std::sync::OnceLock;
    static RES: OnceLock<Vec<regex::Regex>> = OnceLock::new();
    let res = RES.get_or_init(|| {
        FORMATS
            .iter()
            .map(|f| {
                let mut pat = String::from("(?s)^");
                let mut rest = *f;
                while let Some(i) = rest.find('%') {
                    pat.push_str(&regex::escape(&rest[..i]));
                    pat.push_str(if rest[i + 1..].starts_with('d') {
                        "(-?[0-9]+)"
                    } else {
                        "(.+?)"
                    });
                    rest = &rest[i + 2..];
                }
                pat.push_str(&regex::escape(rest));
                if !f.ends_with(':') {
                    pat.push('$');
                }
                regex::Regex::new(&pat).expect("format patterns are valid")
            })
            .collect()
    });
    for (f, re) in FORMATS.iter().zip(res) {
        if let Some(c) = re.captures(msg) {
            let args = c
                .iter()
                .skip(1)
                .flatten()
                .map(|m| m.as_str().to_string())
                .collect();
            return Some((f.to_string(), args));
        }
    }
    None
}

fn entry(e: &ErrorItem) -> ErrEntry {
    let (format, args) = format_and_args(e.message()).unwrap_or_default();
    ErrEntry {
        message: if e.path().is_empty() {
            e.message().to_string()
        } else {
            format!("{}: {}", e.path(), e.message())
        },
        format,
        args,
        path: if e.path().is_empty() {
            Vec::new()
        } else {
            e.path().split('.').map(str::to_string).collect()
        },
        positions: e
            .positions()
            .iter()
            .map(|p| Pos {
                file: p.file().to_string(),
                line: p.line() as u32,
                column: p.column() as u32,
            })
            .collect(),
    }
}

fn err_info(e: &cue_eval::Error) -> ErrInfo {
    ErrInfo {
        code: code(e.errors()[0].code()),
        errors: e.errors().iter().map(entry).collect(),
    }
}

fn selector(s: &Selector) -> cue_eval::Selector {
    match s {
        Selector::Field(n) => cue_eval::Selector::Field(n.clone()),
        Selector::Definition(n) => cue_eval::Selector::Definition(n.clone()),
        Selector::Hidden { name, .. } => cue_eval::Selector::Hidden(name.clone()),
        Selector::Index(i) => cue_eval::Selector::Index(*i),
    }
}

/// The value at `path`; the error names the whole path.
fn find(inst: &Value, path: &[Selector]) -> Result<Value, String> {
    let sels: Vec<cue_eval::Selector> = path.iter().map(selector).collect();
    inst.lookup_selectors(&sels).map_err(|_| {
        let text: Vec<String> = sels.iter().map(|s| s.to_string()).collect();
        format!("path {} not found", text.join("."))
    })
}

impl Engine for CueEval {
    type Instance = Value;

    fn name(&self) -> &str {
        "cue-eval"
    }

    fn load(&self, all_files: &[SourceFile], root_files: &[String]) -> Result<Value, String> {
        // `*_test.cue` files stay out of the build, as `cue` leaves them out even when they are
        // named on its command line.
        let sources: Vec<(String, String)> = root_files
            .iter()
            .filter(|r| !r.ends_with("_test.cue"))
            .map(|r| {
                let text = all_files
                    .iter()
                    .find(|f| &f.path == r)
                    .map(|f| f.text.clone())
                    .unwrap_or_default();
                (r.clone(), text)
            })
            .collect();
        Context::new()
            .compile_package_partial(&sources, |p| import_files(all_files, p))
            .map_err(|e| format!("{e}\n"))
    }

    fn export_json(&self, inst: &mut Value) -> Result<String, String> {
        inst.to_json().map_err(|e| format!("{e}\n"))
    }

    fn check_eq(
        &self,
        inst: &mut Value,
        path: &[Selector],
        expected: &EqExpectation,
    ) -> Result<(), String> {
        let v = find(inst, path)?;
        crate::inline_eq::check(&v, &expected.expr, expected.package.as_deref())
    }

    fn error(&self, inst: &mut Value, path: &[Selector]) -> Result<Option<ErrInfo>, String> {
        Ok(find(inst, path)?.err().as_ref().map(err_info))
    }

    /// The value's error, else those of its regular fields, depth first in field order (Go's
    /// `v.Fields()` with no options).
    fn descendant_errors(
        &self,
        inst: &mut Value,
        path: &[Selector],
    ) -> Result<Vec<ErrInfo>, String> {
        let mut out = Vec::new();
        let mut stack = vec![find(inst, path)?];
        while let Some(v) = stack.pop() {
            if let Some(e) = v.err() {
                out.push(err_info(&e));
                continue;
            }
            stack.extend(
                v.fields(FieldOptions::default())
                    .into_iter()
                    .rev()
                    .map(|f| f.value),
            );
        }
        Ok(out)
    }

    fn kind(&self, inst: &mut Value, path: &[Selector]) -> Result<Kinds, String> {
        let k = find(inst, path)?.incomplete_kind();
        let bits = [
            (cue_eval::Kind::NULL, Kinds::NULL),
            (cue_eval::Kind::BOOL, Kinds::BOOL),
            (cue_eval::Kind::INT, Kinds::INT),
            (cue_eval::Kind::FLOAT, Kinds::FLOAT),
            (cue_eval::Kind::STRING, Kinds::STRING),
            (cue_eval::Kind::BYTES, Kinds::BYTES),
            (cue_eval::Kind::LIST, Kinds::LIST),
            (cue_eval::Kind::STRUCT, Kinds::STRUCT),
        ];
        Ok(Kinds(
            bits.iter()
                .filter(|(c, _)| k.contains(*c))
                .fold(0, |acc, (_, b)| acc | b.0),
        ))
    }

    /// Whether the struct carries closedness at all (`Value.IsClosed`): a `...` or a pattern
    /// for every label in a closed struct lifts the restriction but does not make the struct
    /// non-closed.
    fn is_closed(&self, inst: &mut Value, path: &[Selector]) -> Result<bool, String> {
        Ok(find(inst, path)?.is_closed())
    }

    fn allows(
        &self,
        inst: &mut Value,
        path: &[Selector],
        sel: &AllowsSelector,
    ) -> Result<bool, String> {
        let sel = match sel {
            AllowsSelector::AnyString => cue_eval::Selector::AnyString,
            AllowsSelector::AnyIndex => cue_eval::Selector::AnyIndex,
            AllowsSelector::Label(s) => selector(s),
        };
        Ok(find(inst, path)?.allows(&sel))
    }
}
