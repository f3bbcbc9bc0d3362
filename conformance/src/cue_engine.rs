//! The [`Engine`] of this project's evaluator (`cue-eval`): loads a case the way `cue` does
//! (root files as one package; imports from the case's module and `cue.mod/{pkg,gen,usr}`),
//! exports it, and answers the per-field questions of the inline assertions through
//! `cue_eval::testing::Probe`.

use cue_eval::testing::{self, Probe};

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
    let (file, _) = testing::parse(testing::ast::FileId(0), text);
    file.package_name().map(str::to_string)
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

fn code(c: testing::ErrorCode) -> ErrCode {
    match c {
        testing::ErrorCode::Eval => ErrCode::Eval,
        testing::ErrorCode::User => ErrCode::User,
        testing::ErrorCode::StructuralCycle => ErrCode::StructuralCycle,
        testing::ErrorCode::Incomplete => ErrCode::Incomplete,
        testing::ErrorCode::Cycle => ErrCode::Cycle,
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

fn entry(e: &testing::ErrorEntry) -> ErrEntry {
    let (format, args) = format_and_args(&e.message).unwrap_or_default();
    ErrEntry {
        message: if e.path.is_empty() {
            e.message.clone()
        } else {
            format!("{}: {}", e.path, e.message)
        },
        format,
        args,
        path: if e.path.is_empty() {
            Vec::new()
        } else {
            e.path.split('.').map(str::to_string).collect()
        },
        positions: e
            .positions
            .iter()
            .map(|p| Pos {
                file: p.file().to_string(),
                line: p.line() as u32,
                column: p.column() as u32,
            })
            .collect(),
    }
}

fn err_info(r: testing::ErrorReport) -> ErrInfo {
    ErrInfo {
        code: code(r.code),
        errors: r.errors.iter().map(entry).collect(),
    }
}

fn selectors(path: &[Selector]) -> Vec<testing::Selector> {
    path.iter().map(selector).collect()
}

fn selector(s: &Selector) -> testing::Selector {
    match s {
        Selector::Field(n) => testing::Selector::Field(n.clone()),
        Selector::Definition(n) => testing::Selector::Definition(n.clone()),
        Selector::Hidden { name, .. } => testing::Selector::Hidden(name.clone()),
        Selector::Index(i) => testing::Selector::Index(*i),
    }
}

impl Engine for CueEval {
    type Instance = Probe;

    fn name(&self) -> &str {
        "cue-eval"
    }

    fn load(&self, all_files: &[SourceFile], root_files: &[String]) -> Result<Probe, String> {
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
        Probe::load(&sources, |p| import_files(all_files, p))
    }

    fn export_json(&self, inst: &mut Probe) -> Result<String, String> {
        inst.export_json()
    }

    fn check_eq(
        &self,
        inst: &mut Probe,
        path: &[Selector],
        expected: &EqExpectation,
    ) -> Result<(), String> {
        inst.equals(
            &selectors(path),
            &expected.expr,
            expected.package.as_deref(),
        )
    }

    fn error(&self, inst: &mut Probe, path: &[Selector]) -> Result<Option<ErrInfo>, String> {
        Ok(inst.error(&selectors(path))?.map(err_info))
    }

    fn descendant_errors(
        &self,
        inst: &mut Probe,
        path: &[Selector],
    ) -> Result<Vec<ErrInfo>, String> {
        Ok(inst
            .descendant_errors(&selectors(path))?
            .into_iter()
            .map(err_info)
            .collect())
    }

    fn kind(&self, inst: &mut Probe, path: &[Selector]) -> Result<Kinds, String> {
        inst.kinds(&selectors(path)).map(Kinds)
    }

    /// Whether the struct carries closedness at all (`Value.IsClosed`): a `...` or a pattern
    /// for every label in a closed struct lifts the restriction but does not make the struct
    /// non-closed.
    fn is_closed(&self, inst: &mut Probe, path: &[Selector]) -> Result<bool, String> {
        inst.is_closed(&selectors(path))
    }

    fn allows(
        &self,
        inst: &mut Probe,
        path: &[Selector],
        sel: &AllowsSelector,
    ) -> Result<bool, String> {
        let sel = match sel {
            AllowsSelector::AnyString => testing::Allows::AnyString,
            AllowsSelector::AnyIndex => testing::Allows::AnyIndex,
            AllowsSelector::Label(s) => testing::Allows::Label(selector(s)),
        };
        inst.allows(&selectors(path), &sel)
    }
}

/// Whether the instance's evaluation has begun (for tests).
pub fn evaluated(inst: &Probe) -> bool {
    inst.evaluated()
}
