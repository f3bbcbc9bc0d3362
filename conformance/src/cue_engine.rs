//! The [`Engine`] of this project's evaluator (`cue-eval`): loads a case the way `cue` does
//! (root files as one package; imports from the case's module and `cue.mod/{pkg,gen,usr}`),
//! exports it, and answers the per-field questions of the inline assertions.

use cue_eval::eval::api::{EvalError, Instance};
use cue_eval::eval::label::Label;
use cue_eval::eval::value::{ErrCode as CErr, Kind};
use cue_eval::eval::{Status, VId};

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
    let (file, _) = cue_eval::parse(cue_eval::ast::FileId(0), text);
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

fn code(c: CErr) -> ErrCode {
    match c {
        CErr::Eval => ErrCode::Eval,
        CErr::User => ErrCode::User,
        CErr::StructuralCycle => ErrCode::StructuralCycle,
        CErr::Incomplete | CErr::Undefined => ErrCode::Incomplete,
        CErr::Cycle => ErrCode::Cycle,
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

fn entry(e: &EvalError) -> ErrEntry {
    let (format, args) = format_and_args(&e.msg).unwrap_or_default();
    ErrEntry {
        message: if e.path.is_empty() {
            e.msg.clone()
        } else {
            format!("{}: {}", e.path, e.msg)
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
            .map(|(f, l, c)| Pos {
                file: f.clone(),
                line: *l as u32,
                column: *c as u32,
            })
            .collect(),
    }
}

impl CueEval {
    fn label(inst: &mut Instance, s: &Selector) -> Label {
        let labels = &mut inst.rt.prog.labels;
        match s {
            Selector::Field(n) => labels.string(n),
            Selector::Definition(n) => labels.ident(n),
            Selector::Hidden { name, .. } => labels.ident(name),
            Selector::Index(i) => Label::int(*i as u32),
        }
    }

    fn find(inst: &mut Instance, path: &[Selector]) -> Result<VId, String> {
        let mut v = inst.root;
        for s in path {
            let l = Self::label(inst, s);
            inst.rt.evaluate(v);
            let d = inst.rt.default_of(v);
            inst.rt.evaluate(d);
            v = inst
                .rt
                .arc(d, l)
                .ok_or_else(|| format!("path {} not found", path_string(path)))?;
        }
        inst.rt.finalize(v, true);
        Ok(v)
    }

    /// Whether any label may be added: not closed, or closedness lifted by `...` or by a
    /// pattern for every label.
    fn open_to_any(&self, inst: &mut Instance, path: &[Selector]) -> Result<bool, String> {
        let v = Self::find(inst, path)?;
        let d = inst.rt.default_of(v);
        let vx = inst.rt.v(d);
        if vx.is_list {
            return Ok(!vx.list_open);
        }
        let mut in_def = false;
        let mut x = Some(d);
        while let Some(p) = x {
            if inst.rt.v(p).label.is_def() {
                in_def = true;
            }
            x = inst.rt.v(p).parent;
        }
        let vx = inst.rt.v(d);
        let closed = in_def || !vx.closed_groups.is_empty();
        let any = vx.patterns.iter().any(|(f, _)| {
            matches!(
                f,
                cue_eval::eval::value::Value::Top | cue_eval::eval::value::Value::Basic(_)
            )
        });
        Ok(!(closed && !any && vx.open_groups.is_empty()))
    }

    fn err_info(inst: &mut Instance, v: VId) -> Option<ErrInfo> {
        let d = inst.rt.deref(v);
        let e = inst.rt.v(d).err.clone()?;
        let path = match e.at {
            Some(a) => inst.rt.path(a),
            None => inst.rt.path(v),
        };
        // The header of an empty disjunction's list has no position of its own in CUE (its
        // disjuncts' errors carry them); the evaluator keeps them all on the header for the
        // text it prints.
        let header = !e.subs.is_empty() && e.msg.contains("errors in empty disjunction");
        let positions = Self::positions(inst, &e, header);
        let ee = EvalError {
            path: path.clone(),
            code: e.code,
            msg: e.msg.clone(),
            positions,
        };
        let mut errors = vec![entry(&ee)];
        for s in &e.subs {
            errors.push(Self::sub_entry(inst, s, &path));
        }
        Some(ErrInfo {
            code: code(e.code),
            errors,
        })
    }

    /// One entry of an error list after its header: a failed disjunct's error, at its own
    /// vertex's path when known, else at the header's.
    fn sub_entry(inst: &Instance, e: &cue_eval::eval::value::Bottom, path: &str) -> ErrEntry {
        // A nested empty disjunction's header has no position either (see `err_info`).
        let header = e.msg.contains("errors in empty disjunction");
        let positions = Self::positions(inst, e, header);
        let ee = EvalError {
            path: e.at.map_or_else(|| path.to_owned(), |a| inst.rt.path(a)),
            code: e.code,
            msg: e.msg.clone(),
            positions,
        };
        entry(&ee)
    }

    /// The (file, line, column) of each position of `e`; none for a disjunction's header.
    fn positions(
        inst: &Instance,
        e: &cue_eval::eval::value::Bottom,
        header: bool,
    ) -> Vec<(String, usize, usize)> {
        if header {
            return Vec::new();
        }
        e.spans
            .iter()
            .filter_map(|s| {
                let f = inst.files.get(s.file.0 as usize)?;
                let (l, c) = f.line_col(s.start as usize);
                Some((f.name.clone(), l, c))
            })
            .collect()
    }
}

fn kinds_of(k: Kind) -> Kinds {
    Kinds(k.0)
}

impl Engine for CueEval {
    type Instance = Instance;

    fn name(&self) -> &str {
        "cue-eval"
    }

    fn load(&self, all_files: &[SourceFile], root_files: &[String]) -> Result<Instance, String> {
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
        let all = all_files.to_vec();
        Instance::from_sources_with_imports(&sources, &mut |p| import_files(&all, p))
            .map_err(|e| cue_eval::eval::api::format_errors(&e))
    }

    fn export_json(&self, inst: &mut Instance) -> Result<String, String> {
        inst.export_json()
    }

    fn check_eq(
        &self,
        inst: &mut Instance,
        path: &[Selector],
        expected: &EqExpectation,
    ) -> Result<(), String> {
        let v = Self::find(inst, path)?;
        let e = inst.eval_expr_text(&expected.expr)?;
        if inst
            .rt
            .vertices_equal_inline_in(v, e, expected.package.as_deref())
        {
            Ok(())
        } else {
            Err(format!(
                "got {}, want {}",
                inst.rt.vertex_text(v),
                inst.rt.vertex_text(e)
            ))
        }
    }

    fn error(&self, inst: &mut Instance, path: &[Selector]) -> Result<Option<ErrInfo>, String> {
        let v = Self::find(inst, path)?;
        Ok(Self::err_info(inst, v))
    }

    fn descendant_errors(
        &self,
        inst: &mut Instance,
        path: &[Selector],
    ) -> Result<Vec<ErrInfo>, String> {
        let v = Self::find(inst, path)?;
        let mut out = Vec::new();
        let mut stack = vec![v];
        while let Some(x) = stack.pop() {
            if let Some(e) = Self::err_info(inst, x) {
                out.push(e);
                continue;
            }
            let d = inst.rt.deref(x);
            let mut kids: Vec<VId> = inst
                .rt
                .v(d)
                .arcs
                .iter()
                .copied()
                .filter(|&a| {
                    let l = inst.rt.v(a).label;
                    l.is_regular() && !l.is_int()
                })
                .collect();
            kids.reverse();
            stack.extend(kids);
        }
        Ok(out)
    }

    fn kind(&self, inst: &mut Instance, path: &[Selector]) -> Result<Kinds, String> {
        let v = Self::find(inst, path)?;
        let d = inst.rt.deref(v);
        if inst.rt.v(d).err.is_some() {
            return Ok(Kinds(0));
        }
        let k = if let Some(dj) = inst.rt.v(d).disj.clone() {
            dj.alts
                .iter()
                .fold(Kind::BOTTOM, |k, &a| k.or(inst.rt.v(inst.rt.deref(a)).kind))
        } else {
            let vx = inst.rt.v(d);
            match &vx.scalar {
                Some(s) => s.kind(),
                None => vx.kind,
            }
        };
        Ok(kinds_of(k))
    }

    /// Whether the struct carries closedness at all (`Value.IsClosed`): a `...` or a pattern
    /// for every label in a closed struct lifts the restriction ([`Self::open_to_any`]) but
    /// does not make the struct non-closed.
    fn is_closed(&self, inst: &mut Instance, path: &[Selector]) -> Result<bool, String> {
        let v = Self::find(inst, path)?;
        let d = inst.rt.default_of(v);
        let vx = inst.rt.v(d);
        if vx.is_list {
            return Ok(!vx.list_open);
        }
        let mut x = Some(d);
        while let Some(p) = x {
            if inst.rt.v(p).label.is_def() {
                return Ok(true);
            }
            x = inst.rt.v(p).parent;
        }
        Ok(!inst.rt.v(d).closed_groups.is_empty())
    }

    fn allows(
        &self,
        inst: &mut Instance,
        path: &[Selector],
        sel: &AllowsSelector,
    ) -> Result<bool, String> {
        let v = Self::find(inst, path)?;
        let d = inst.rt.default_of(v);
        let closed = !self.open_to_any(inst, path)?;
        match sel {
            AllowsSelector::AnyString => Ok(!closed),
            AllowsSelector::AnyIndex => {
                let vx = inst.rt.v(d);
                Ok(vx.is_list && vx.list_open)
            }
            AllowsSelector::Label(s) => {
                let l = Self::label(inst, s);
                if !l.is_regular() {
                    return Ok(true);
                }
                if inst.rt.arc(d, l).is_some() || !closed {
                    return Ok(true);
                }
                let pats = inst.rt.v(d).patterns.clone();
                for (f, _) in pats {
                    if inst.rt.label_matches(&f, l) {
                        return Ok(true);
                    }
                }
                Ok(false)
            }
        }
    }
}

/// Whether the instance's evaluation has begun (for tests).
pub fn evaluated(inst: &Instance) -> bool {
    inst.rt.v(inst.root).status != Status::Unprocessed
}
