//! A door into the crate for its own conformance runners, tests, benchmarks and fuzz targets,
//! behind the `testing` cargo feature and **not covered by semantic versioning**.
//!
//! Embedders use the facade ([`crate::Context`], [`crate::Value`], [`crate::Error`],
//! [`crate::syntax::Document`]). What is here only makes sense for checking this implementation
//! against CUE's own test corpus and against itself:
//!
//! * the syntax tree and its tools ([`ast`], [`lexer`], [`literal`], [`dump`],
//!   [`format`](mod@format), [`parse`], [`check_parser`]), which the `parse` runner compares with
//!   CUE's and which the inline `@test` extraction walks;
//! * [`Probe`]: an evaluated package queried at a path the way CUE's inline `@test(...)`
//!   assertions ask (`cue.Value.Err`, `IncompleteKind`, `IsClosed`, `Allows`, equality with
//!   an expression), answered from the evaluator's vertices and error codes;
//! * [`eval_text`], [`export_path`] and [`export_at`], the `cue eval` text and `cue export -e`
//!   data of a few sources or of an [`Instance`], and the loader ([`load`]), for the crate's
//!   own tests and benchmarks.
//!
//! Any of it may change in any release.

use crate::encode::Data;

use crate::eval::label::Label;
use crate::eval::value::{Bottom, ErrCode, Kind, Value as Val};
use crate::eval::{Status, VId};
use crate::facade::Position;

pub use crate::decode::Limits;
pub use crate::eval::api::{Instance, format_errors};
pub use crate::lexer::check_lexer;
pub use crate::load::{Build as LoadBuild, Config as LoadConfig, load};
pub use crate::parser::{check_parser, parse, parse_bytes, parse_with};
pub use crate::syntax::{ast, dump, format, lexer, literal};

/// One step of a path into a [`Probe`]'s value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selector {
    /// A regular field, by its label as a string (`a` for `a:` and for `"a":`).
    Field(String),
    /// A definition, `#A`, with its `#`.
    Definition(String),
    /// A hidden field or hidden definition, `_a`, with its underscore. The package that scopes
    /// it is not distinguished.
    Hidden(String),
    /// A list element.
    Index(usize),
}

/// What a label query of [`Probe::allows`] asks about (`cue.Value.Allows`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Allows {
    /// Any string label (`cue.AnyString`).
    AnyString,
    /// Any list index (`cue.AnyIndex`).
    AnyIndex,
    /// One label.
    Label(Selector),
}

/// The class of an error, as CUE's `adt.ErrorCode` has it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorCode {
    /// A permanent evaluation error (`EvalError`).
    Eval,
    /// An error written by the user, `_|_` or an `error()` call (`UserError`).
    User,
    /// A structural cycle (`StructuralCycleError`).
    StructuralCycle,
    /// An incomplete value, which more input could resolve (`IncompleteError`).
    Incomplete,
    /// A reference cycle (`CycleError`).
    Cycle,
}

/// One entry of an error list: the error's CUE path, its message and its positions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorEntry {
    /// The path as CUE prints it (`a.b."x-y"`), empty for the root.
    pub path: String,
    /// The message without the path.
    pub message: String,
    /// Where the error comes from, in the order CUE lists the positions.
    pub positions: Vec<Position>,
}

/// The error of a value (`cue.Value.Err`): its code, and the list CUE's `errors.Errors` gives
/// (an empty disjunction's header first, then one entry per failed disjunct).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorReport {
    pub code: ErrorCode,
    pub errors: Vec<ErrorEntry>,
}

/// An evaluated package, queried by path. Paths are meant as `cue.Value.LookupPath` means
/// them: a field is selected whatever its constraint, through the default of each value on the
/// way.
pub struct Probe {
    inst: Instance,
}

impl Probe {
    /// Compiles `sources` (name, text) as one package; `imports` gives the files (name, text)
    /// of each imported package by import path. The error is the text `cue` prints.
    pub fn load(
        sources: &[(String, String)],
        mut imports: impl FnMut(&str) -> Result<Vec<(String, String)>, String>,
    ) -> Result<Probe, String> {
        Instance::from_sources_with_imports(sources, &mut imports)
            .map(|inst| Probe { inst })
            .map_err(|e| format_errors(&e))
    }

    /// Compiles `sources` as one package without imports (besides the standard library).
    pub fn from_sources(sources: &[(String, String)]) -> Result<Probe, String> {
        Instance::from_sources(sources)
            .map(|inst| Probe { inst })
            .map_err(|e| format_errors(&e))
    }

    /// Whether evaluation has begun (loading alone does not evaluate).
    pub fn evaluated(&self) -> bool {
        self.inst.rt.v(self.inst.root).status != Status::Unprocessed
    }

    /// The whole value as `cue export --out json` writes it, or the errors as `cue` prints them.
    pub fn export_json(&mut self) -> Result<String, String> {
        self.inst.export_json()
    }

    /// The whole value as `cue export --out yaml` writes it, or the errors as `cue` prints them.
    pub fn export_yaml(&mut self) -> Result<String, String> {
        self.inst.export_yaml()
    }

    /// The whole value as `cue eval` prints it.
    pub fn eval_text(&mut self) -> String {
        crate::eval::print::eval_text(&mut self.inst)
    }

    /// Whether the values at the top-level fields `a` and `b` are structurally equal after
    /// evaluation (the lattice laws' notion of equality); false when either is missing.
    pub fn structurally_equal(&mut self, a: &str, b: &str) -> bool {
        let (Some(x), Some(y)) = (self.inst.lookup(&[a]), self.inst.lookup(&[b])) else {
            return false;
        };
        self.inst.rt.vertices_equal(x, y, 0)
    }

    /// Whether the finished value at the top-level field `a` is bottom; false when missing.
    pub fn is_bottom(&mut self, a: &str) -> bool {
        let Some(x) = self.inst.lookup(&[a]) else {
            return false;
        };
        self.inst.rt.finalize(x, true);
        let d = self.inst.rt.deref(x);
        self.inst.rt.v(d).err.is_some()
    }

    /// The error of the value at `path`, if it has one.
    pub fn error(&mut self, path: &[Selector]) -> Result<Option<ErrorReport>, String> {
        let v = self.find(path)?;
        Ok(self.report(v))
    }

    /// The errors of the value at `path` and of its regular, non-index descendants, depth
    /// first in field order; the descendants of a value with an error are not visited.
    pub fn descendant_errors(&mut self, path: &[Selector]) -> Result<Vec<ErrorReport>, String> {
        let v = self.find(path)?;
        let mut out = Vec::new();
        let mut stack = vec![v];
        while let Some(x) = stack.pop() {
            if let Some(e) = self.report(x) {
                out.push(e);
                continue;
            }
            let rt = &self.inst.rt;
            let d = rt.deref(x);
            let mut kids: Vec<VId> = rt
                .v(d)
                .arcs
                .iter()
                .copied()
                .filter(|&a| {
                    let l = rt.v(a).label;
                    l.is_regular() && !l.is_int()
                })
                .collect();
            kids.reverse();
            stack.extend(kids);
        }
        Ok(out)
    }

    /// The kinds the value at `path` may still take (`cue.Value.IncompleteKind`), as CUE's
    /// bit set: null 1, bool 2, int 4, float 8, string 16, bytes 32, list 64, struct 128; 0 for
    /// an error.
    pub fn kinds(&mut self, path: &[Selector]) -> Result<u16, String> {
        let v = self.find(path)?;
        let rt = &self.inst.rt;
        let d = rt.deref(v);
        if rt.v(d).err.is_some() {
            return Ok(0);
        }
        let k = if let Some(dj) = rt.v(d).disj.clone() {
            dj.alts
                .iter()
                .fold(Kind::BOTTOM, |k, &a| k.or(rt.v(rt.deref(a)).kind))
        } else {
            let vx = rt.v(d);
            match &vx.scalar {
                Some(s) => s.kind(),
                None => vx.kind,
            }
        };
        Ok(k.0)
    }

    /// Whether the value at `path` carries closedness at all (`cue.Value.IsClosed`): a closed
    /// list, a value inside a definition, or a struct closed by `close` or a definition. A `...`
    /// or a pattern for every label lifts the restriction ([`Probe::allows`]) but does not make
    /// the struct non-closed.
    pub fn is_closed(&mut self, path: &[Selector]) -> Result<bool, String> {
        let v = self.find(path)?;
        let rt = &self.inst.rt;
        let d = rt.default_of(v);
        let vx = rt.v(d);
        if vx.is_list {
            return Ok(!vx.list_open);
        }
        Ok(self.in_definition(d) || !rt.v(d).closed_groups.is_empty())
    }

    /// Whether the value at `path` allows `sel` (`cue.Value.Allows`).
    pub fn allows(&mut self, path: &[Selector], sel: &Allows) -> Result<bool, String> {
        let v = self.find(path)?;
        let d = self.inst.rt.default_of(v);
        let closed = !self.open_to_any(d);
        match sel {
            Allows::AnyString => Ok(!closed),
            Allows::AnyIndex => {
                let vx = self.inst.rt.v(d);
                Ok(vx.is_list && vx.list_open)
            }
            Allows::Label(s) => {
                let l = self.label(s);
                if !l.is_regular() {
                    return Ok(true);
                }
                if self.inst.rt.arc(d, l).is_some() || !closed {
                    return Ok(true);
                }
                let pats = self.inst.rt.v(d).patterns.clone();
                for (f, _) in pats {
                    if self.inst.rt.label_matches(&f, l) {
                        return Ok(true);
                    }
                }
                Ok(false)
            }
        }
    }

    /// Whether the value at `path` equals `expr` evaluated on its own, in the scope of
    /// `package` for its hidden fields; the error says what each side is when not.
    pub fn equals(
        &mut self,
        path: &[Selector],
        expr: &str,
        package: Option<&str>,
    ) -> Result<(), String> {
        let v = self.find(path)?;
        let e = self.inst.eval_expr_text(expr)?;
        if self.inst.rt.vertices_equal_inline_in(v, e, package) {
            Ok(())
        } else {
            Err(format!(
                "got {}, want {}",
                self.inst.rt.vertex_text(v),
                self.inst.rt.vertex_text(e)
            ))
        }
    }

    fn label(&mut self, s: &Selector) -> Label {
        let labels = &mut self.inst.rt.prog.labels;
        match s {
            Selector::Field(n) => labels.string(n),
            Selector::Definition(n) | Selector::Hidden(n) => labels.ident(n),
            Selector::Index(i) => Label::int(*i as u32),
        }
    }

    fn find(&mut self, path: &[Selector]) -> Result<VId, String> {
        let mut v = self.inst.root;
        for s in path {
            let l = self.label(s);
            let rt = &mut self.inst.rt;
            rt.evaluate(v);
            let d = rt.default_of(v);
            rt.evaluate(d);
            v = rt
                .arc(d, l)
                .ok_or_else(|| format!("path {} not found", path_text(path)))?;
        }
        self.inst.rt.finalize(v, true);
        Ok(v)
    }

    fn in_definition(&self, d: VId) -> bool {
        let rt = &self.inst.rt;
        let mut x = Some(d);
        while let Some(p) = x {
            if rt.v(p).label.is_def() {
                return true;
            }
            x = rt.v(p).parent;
        }
        false
    }

    /// Whether any label may be added: not closed, or closedness lifted by `...` or by a
    /// pattern for every label.
    fn open_to_any(&self, d: VId) -> bool {
        let vx = self.inst.rt.v(d);
        if vx.is_list {
            return !vx.list_open;
        }
        let closed = self.in_definition(d) || !vx.closed_groups.is_empty();
        let any = vx
            .patterns
            .iter()
            .any(|(f, _)| matches!(f, Val::Top | Val::Basic(_)));
        !(closed && !any && vx.open_groups.is_empty())
    }

    fn report(&self, v: VId) -> Option<ErrorReport> {
        let rt = &self.inst.rt;
        let d = rt.deref(v);
        let e = rt.v(d).err.clone()?;
        let path = rt.path(e.at.unwrap_or(v));
        // The header of an empty disjunction's list has no position of its own in CUE (its
        // disjuncts' errors carry them); the evaluator keeps them all on the header for the
        // text it prints.
        let header = !e.subs.is_empty() && e.msg.contains("errors in empty disjunction");
        let mut errors = vec![ErrorEntry {
            path: path.clone(),
            message: e.msg.clone(),
            positions: self.positions(&e, header),
        }];
        for s in &e.subs {
            errors.push(self.sub_entry(s, &path));
        }
        Some(ErrorReport {
            code: code(e.code),
            errors,
        })
    }

    /// One entry of an error list after its header: a failed disjunct's error, at its own
    /// vertex's path when known, else at the header's.
    fn sub_entry(&self, e: &Bottom, path: &str) -> ErrorEntry {
        // A nested empty disjunction's header has no position either (see `report`).
        let header = e.msg.contains("errors in empty disjunction");
        ErrorEntry {
            path: e
                .at
                .map_or_else(|| path.to_owned(), |a| self.inst.rt.path(a)),
            message: e.msg.clone(),
            positions: self.positions(e, header),
        }
    }

    /// The positions of `e`; none for a disjunction's header.
    fn positions(&self, e: &Bottom, header: bool) -> Vec<Position> {
        if header {
            return Vec::new();
        }
        e.spans
            .iter()
            .filter_map(|s| {
                let f = self.inst.files.get(s.file.0 as usize)?;
                let (l, c) = f.line_col(s.start as usize);
                Some(Position::new(f.name.clone(), l, c))
            })
            .collect()
    }
}

/// A path as CUE writes it (`a."x-y".#D._h.0`), for messages.
fn path_text(path: &[Selector]) -> String {
    path.iter()
        .map(|s| match s {
            Selector::Field(n) if is_plain_identifier(n) => n.clone(),
            Selector::Field(n) => serde_json::Value::String(n.clone()).to_string(),
            Selector::Definition(n) | Selector::Hidden(n) => n.clone(),
            Selector::Index(i) => i.to_string(),
        })
        .collect::<Vec<_>>()
        .join(".")
}

/// Whether `s` can be written unquoted as a regular field label.
fn is_plain_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_alphabetic() || c == '$')
        && chars.all(|c| c.is_alphanumeric() || c == '_' || c == '$')
}

fn code(c: ErrCode) -> ErrorCode {
    match c {
        ErrCode::Eval => ErrorCode::Eval,
        ErrCode::User => ErrorCode::User,
        ErrCode::StructuralCycle => ErrorCode::StructuralCycle,
        ErrCode::Incomplete | ErrCode::Undefined => ErrorCode::Incomplete,
        ErrCode::Cycle => ErrorCode::Cycle,
    }
}

/// The `cue eval` text of `sources` compiled as one package, or the errors as `cue` prints them.
pub fn eval_text(sources: &[(String, String)]) -> Result<String, String> {
    let mut inst = Instance::from_sources(sources).map_err(|e| format_errors(&e))?;
    Ok(crate::eval::print::eval_text(&mut inst))
}

/// The value at `path` (labels, as [`Instance::lookup`] takes them) of `inst`, as `cue export -e`
/// exports it, or the errors as `cue` prints them.
pub fn export_at(inst: &mut Instance, path: &[&str]) -> Result<Data, String> {
    crate::eval::print::export_path(inst, path).map_err(|e| format_errors(&e))
}

/// The value at the `cue export -e` expression `path` (`a.b`, `"x-y".c`) of `sources` compiled
/// as one package, or the errors as `cue` prints them.
pub fn export_path(sources: &[(String, String)], path: &str) -> Result<Data, String> {
    let mut inst = Instance::from_sources(sources).map_err(|e| format_errors(&e))?;
    let labels = crate::eval::print::split_path(path);
    let labels: Vec<&str> = labels.iter().map(String::as_str).collect();
    crate::eval::print::export_path(&mut inst, &labels).map_err(|e| format_errors(&e))
}
