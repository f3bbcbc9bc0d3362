//! CUE text for evaluated values, the way `cue eval` prints them: regular fields, definitions
//! and required fields (`a!:`) with their values, hidden and optional fields only on request
//! ([`Options`]), non-concrete values as constraints (`int`, `>=0 & <=10`, `uint8`),
//! disjunctions by their default (`*1 | 2` shows `1`; without a default, every alternative), and
//! errors as `_|_ // path: message` (what `cue eval -i` shows).
//!
//! The printer does not lay the text out itself. It writes plain CUE with one field per line and
//! one line per struct brace, then hands that text to the formatter ([`crate::format`]), which
//! knows `cue fmt`'s rules for aligning values in a column, keeping short lists on one line and
//! re-indenting multi-line strings. `cue eval` uses those same rules, with four spaces per level
//! instead of a tab, so the tabs are swapped for spaces at the end.
//!
//! Values whose evaluation stopped on an incomplete error (`a: b + 1` with `b: int`) print the
//! source text of their expressions, as `cue eval` prints the unevaluated expression, with the
//! imports these expressions use at the top. Struct patterns (`[string]: T`), `...` and `let`
//! declarations are not shown, as in `cue eval`.
//!
//! The module also holds the checks the `eval`, `vet` and `export -e` commands need on top of
//! [`Instance::export`]: the permanent errors of a package or of one value ([`eval_errors`],
//! [`eval_errors_at`]) and the export of one value selected by path ([`export_path`]).

use std::rc::Rc;

use crate::ast::{Span, UnaryOp};
use crate::encode::Data;
use crate::encode::sink::{DataBuilder, Sink};
use crate::num::Num;

use super::api::{EvalError, Instance};
use super::export::ExportError;
use super::ir::ArcType;
use super::label::{Label, LabelKind, is_identifier, quote};
use super::value::{Bottom, ErrCode, Kind, Value};
use super::{CExpr, MAX_DEPTH, Runtime, VId};

/// What to show besides regular fields and definitions, as `cue eval`'s `-H`, `-O` and `-a`
/// flags choose. By default hidden and optional fields are left out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// Show hidden fields (`_a`, `_#A`).
    pub hidden: bool,
    /// Show optional fields (`a?:`).
    pub optional: bool,
}

impl Options {
    fn shows(self, rt: &Runtime, a: VId) -> bool {
        let ax = rt.v(a);
        !ax.label.is_let()
            && (self.hidden || !ax.label.is_hidden())
            && (self.optional || ax.arc_type != ArcType::Optional)
    }
}

/// The whole package as `cue eval` prints it: the top-level fields without surrounding braces.
pub fn eval_text(inst: &mut Instance) -> String {
    eval_text_with(inst, Options::default())
}

/// [`eval_text`] with a choice of what to show.
pub fn eval_text_with(inst: &mut Instance, opts: Options) -> String {
    let root = inst.root;
    body_cue(&mut inst.rt, root, opts)
}

/// A value as CUE text (`1`, `"a" | "b"`, `{\n    a: 1\n}`), evaluated completely first.
pub fn vertex_cue(rt: &mut Runtime, v: VId) -> String {
    rt.finalize(v, true);
    let mut p = Printer::new(rt, Options::default());
    p.value(v, 0);
    p.flush_comment();
    let mut text = layout(&p.out, &p.notes);
    if text.ends_with('\n') {
        text.pop();
    }
    text
}

/// A value as `cue eval` prints a file or an `-e` expression: a struct's fields without the
/// braces around them, anything else as [`vertex_cue`] does. Ends with a newline unless empty.
pub fn body_cue(rt: &mut Runtime, v: VId, opts: Options) -> String {
    rt.finalize(v, true);
    let mut p = Printer::new(rt, opts);
    p.body(v);
    let text = p.imports_header() + &p.out;
    layout(&text, &p.notes)
}

/// `cue eval -e a.b` and the like: the value at a path of labels, as [`body_cue`] prints it.
pub fn eval_path_text(
    inst: &mut Instance,
    path: &[&str],
    opts: Options,
) -> Result<String, Vec<EvalError>> {
    let v = select(inst, path)?;
    Ok(body_cue(&mut inst.rt, v, opts))
}

/// The permanent errors of the value at a path (`cue eval -e a.b`; the whole package for an
/// empty path), which make `cue eval` and `cue vet` fail: errors from compiling (always
/// included) and every conflict in the evaluated tree, definitions included, and hidden and
/// optional fields as `opts` says. Incomplete values are not errors here (`cue vet -c` and
/// `cue export` ask for concreteness). Sorted and deduplicated as `cue` prints them.
pub fn eval_errors_at(inst: &mut Instance, path: &[&str], opts: Options) -> Vec<EvalError> {
    let mut out = inst.compile_errors();
    let v = match select(inst, path) {
        Ok(v) => v,
        Err(lookup) => {
            out.extend(lookup);
            return out;
        }
    };
    inst.rt.finalize(v, true);
    let mut errs = Vec::new();
    collect_errors(&mut inst.rt, v, opts, &mut errs, 0);
    errs.extend(aborted_error(&inst.rt));
    out.extend(convert(inst, errs));
    sort_errors(&mut out);
    out
}

/// The permanent errors at and below vertex `v` (as [`eval_errors_at`] finds them below a
/// path), sorted as `cue` prints them.
pub(crate) fn vertex_errors(inst: &mut Instance, v: VId, opts: Options) -> Vec<EvalError> {
    inst.rt.finalize(v, true);
    let mut errs = Vec::new();
    collect_errors(&mut inst.rt, v, opts, &mut errs, 0);
    errs.extend(aborted_error(&inst.rt));
    convert(inst, errs)
}

/// The error of an evaluation that was stopped (a bound was reached), if it was.
fn aborted_error(rt: &Runtime) -> Option<ExportError> {
    rt.aborted.clone().map(|msg| ExportError {
        path: String::new(),
        code: ErrCode::Eval,
        msg,
        spans: Vec::new(),
    })
}

/// `cue export -e a.b`: the concrete data of the value at a path of labels.
pub fn export_path(inst: &mut Instance, path: &[&str]) -> Result<Data, Vec<EvalError>> {
    DataBuilder::build_export(|b| export_path_to(inst, path, b))
}

/// [`export_path`] reported to `sink`; after an error, what the sink received is to be
/// discarded.
pub(crate) fn export_path_to<S: Sink>(
    inst: &mut Instance,
    path: &[&str],
    sink: &mut S,
) -> Result<(), Vec<EvalError>> {
    if path.is_empty() {
        return inst.export_to(sink);
    }
    let compile = inst.compile_errors();
    if !compile.is_empty() {
        return Err(compile);
    }
    // As `cue`, the whole instance is finished first, in field order, so that a struct with a
    // permanent error in a field is an error for selections made after it was finished.
    let root = inst.root;
    inst.rt.finalize(root, false);
    let v = select(inst, path)?;
    export_vertex_to(inst, v, sink)
}

/// Exports vertex `v` (the root for `cue export`) to `sink`, or returns the errors that keep
/// it from being data (and then what the sink received is to be discarded). As `cue`, a
/// permanent error anywhere below `v` fails the export, in definitions and hidden fields too (a
/// field a definition does not allow), and then only permanent errors are reported; incomplete
/// values are reported when there is none.
pub(crate) fn export_vertex_to<S: Sink>(
    inst: &mut Instance,
    v: VId,
    sink: &mut S,
) -> Result<(), Vec<EvalError>> {
    inst.rt.finalize(v, false);
    let mut errs = Vec::new();
    let ok = inst.rt.export_to(v, sink, &mut errs, 0);
    errs.extend(aborted_error(&inst.rt));
    errs.extend(inst.rt.errors_in_definitions(v));
    if ok && errs.is_empty() {
        return Ok(());
    }
    if errs.iter().any(|e| !e.code.is_incomplete()) {
        errs.retain(|e| !e.code.is_incomplete());
    }
    Err(convert(inst, errs))
}

/// Splits a selection such as `a.b."x-y".0` into labels (quotes removed).
pub fn split_path(expr: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut cur = String::new();
    let mut in_quote = false;
    let mut chars = expr.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => in_quote = !in_quote,
            '\\' if in_quote => {
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            '.' if !in_quote => parts.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    parts.push(cur);
    parts
}

/// The vertex at a path, or the error `cue` gives for a selection that does not exist.
fn select(inst: &mut Instance, path: &[&str]) -> Result<VId, Vec<EvalError>> {
    for i in 0..path.len() {
        if inst.lookup(&path[..=i]).is_none() {
            let msg = if i == 0 {
                format!("reference {} not found", quote(path[0]))
            } else {
                format!("undefined field: {}", path[i])
            };
            return Err(vec![EvalError {
                path: path[..i].join("."),
                code: ErrCode::Eval,
                msg,
                positions: Vec::new(),
            }]);
        }
    }
    inst.lookup(path).ok_or_else(Vec::new)
}

/// Gathers the permanent errors below `v`, in arc order.
pub(super) fn collect_errors(
    rt: &mut Runtime,
    v: VId,
    opts: Options,
    errs: &mut Vec<ExportError>,
    depth: usize,
) {
    if depth > MAX_DEPTH {
        return;
    }
    let d = rt.deref(v);
    let vx = rt.v(d);
    if vx.disj.is_some() {
        // Alternatives that failed were eliminated; the survivors are valid.
        return;
    }
    if let Some(e) = &vx.err
        && !e.child
    {
        if !e.is_incomplete() {
            let path = match e.at {
                Some(a) => rt.path(a),
                None => rt.path(v),
            };
            errs.push(ExportError {
                path,
                code: e.code,
                msg: e.msg.clone(),
                spans: e.spans.clone(),
            });
        }
        return;
    }
    let arcs: Vec<VId> = vx
        .arcs
        .iter()
        .copied()
        .filter(|&a| opts.shows(rt, a))
        .collect();
    for a in arcs {
        collect_errors(rt, a, opts, errs, depth + 1);
    }
}

/// Turns export errors into [`EvalError`]s with file positions, sorted and deduplicated.
pub(crate) fn convert(inst: &Instance, errs: Vec<ExportError>) -> Vec<EvalError> {
    let mut out: Vec<EvalError> = errs
        .into_iter()
        .map(|e| EvalError {
            positions: positions(inst, &e.spans),
            path: e.path,
            code: e.code,
            msg: e.msg,
        })
        .collect();
    sort_errors(&mut out);
    out
}

/// Sorts and deduplicates errors as `cue` prints them: position-less errors first, then by
/// first position and path.
fn sort_errors(errs: &mut Vec<EvalError>) {
    errs.sort_by(|a, b| match (primary_position(a), primary_position(b)) {
        (None, Some(_)) => std::cmp::Ordering::Less,
        (Some(_), None) => std::cmp::Ordering::Greater,
        (Some(x), Some(y)) => x.cmp(y).then_with(|| path_cmp(&a.path, &b.path)),
        (None, None) => path_cmp(&a.path, &b.path),
    });
    errs.dedup_by(|a, b| a.path == b.path && a.msg == b.msg && a.positions == b.positions);
}

/// The position `cue` sorts an error by: none for conflicts, disallowed fields and empty
/// disjunctions (CUE gives them no primary position, only the positions it prints), else the
/// first printed one.
fn primary_position(e: &EvalError) -> Option<&(String, usize, usize)> {
    let m = e.msg.as_str();
    if m == "field not allowed"
        || m.starts_with("conflicting values ")
        || m.contains(" errors in empty disjunction")
    {
        return None;
    }
    e.positions.first()
}

/// Paths compared label by label, as CUE compares them.
fn path_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    a.split('.').cmp(b.split('.'))
}

pub(crate) fn positions(inst: &Instance, spans: &[Span]) -> Vec<(String, usize, usize)> {
    let mut out: Vec<(String, usize, usize)> = Vec::new();
    for s in spans {
        if let Some(f) = inst.files.get(s.file.0 as usize) {
            let (l, c) = f.line_col(s.start as usize);
            let p = (f.name.clone(), l, c);
            if !out.contains(&p) {
                out.push(p);
            }
        }
    }
    out
}

/// The placeholder written for an error value of a field, replaced after formatting.
const ERR_MARK: &str = "__cue_print_err";

/// Formats the printer's text with `cue fmt`'s layout rules, puts the error comments of fields
/// back, and indents with four spaces.
///
/// Field errors go through the formatter as placeholders rather than as `_|_ // message`: the
/// formatter would take the comment for the user's and put a blank line before a commented field
/// that follows a definition, which `cue eval` (whose comment belongs to the `_|_`) does not.
fn layout(text: &str, notes: &[String]) -> String {
    let formatted = crate::format_source(text);
    let text = formatted.as_deref().unwrap_or(text);
    let mut out = String::with_capacity(text.len() + text.len() / 4);
    for line in text.split_inclusive('\n') {
        let tabs = line.len() - line.trim_start_matches('\t').len();
        for _ in 0..tabs {
            out.push_str("    ");
        }
        let line = &line[tabs..];
        match line.find(ERR_MARK) {
            Some(i) => {
                let rest = &line[i + ERR_MARK.len()..];
                let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
                let note = rest[..digits]
                    .parse::<usize>()
                    .ok()
                    .and_then(|n| notes.get(n));
                out.push_str(&line[..i]);
                out.push_str("_|_");
                if let Some(note) = note {
                    out.push_str(" // ");
                    out.push_str(note);
                }
                out.push_str(&rest[digits..]);
            }
            None => out.push_str(line),
        }
    }
    out
}

/// Writes CUE text with tab indentation; [`layout`] does the rest.
struct Printer<'a> {
    rt: &'a mut Runtime,
    opts: Options,
    out: String,
    /// The message of an error value just written (`_|_`), which the caller puts in a line
    /// comment after the separator that follows the value.
    comment: Option<String>,
    /// The comments of field errors, by placeholder number ([`ERR_MARK`]).
    notes: Vec<String>,
    /// The imported packages that the expressions printed refer to, in order of first use.
    imports: Vec<String>,
    depth: usize,
}

impl<'a> Printer<'a> {
    fn new(rt: &'a mut Runtime, opts: Options) -> Printer<'a> {
        Printer {
            rt,
            opts,
            out: String::new(),
            comment: None,
            notes: Vec::new(),
            imports: Vec::new(),
            depth: 0,
        }
    }

    fn indent(&mut self, n: usize) {
        for _ in 0..n {
            self.out.push('\t');
        }
    }

    fn flush_comment(&mut self) {
        if let Some(c) = self.comment.take() {
            self.out.push_str(" // ");
            self.out.push_str(&c);
        }
    }

    /// Records the imports an expression printed from source refers to (`strings.Join(x)`).
    fn note_imports(&mut self, text: &str) {
        let mut found: Vec<(usize, String)> = Vec::new();
        for path in &self.rt.prog.imports {
            let name = import_name(path);
            let at = text.match_indices(&format!("{name}.")).find(|(i, _)| {
                !text[..*i]
                    .chars()
                    .next_back()
                    .is_some_and(|c| c.is_alphanumeric() || matches!(c, '_' | '$' | '#' | '.'))
            });
            if let Some((i, _)) = at
                && !self.imports.contains(path)
            {
                found.push((i, path.clone()));
            }
        }
        found.sort();
        self.imports.extend(found.into_iter().map(|(_, p)| p));
    }

    /// The import declarations `cue eval` puts before expressions that use packages.
    fn imports_header(&self) -> String {
        match self.imports.as_slice() {
            [] => String::new(),
            [one] => format!("import {}\n\n", quote(one)),
            many => {
                let specs: String = many.iter().map(|p| format!("\t{}\n", quote(p))).collect();
                format!("import (\n{specs})\n\n")
            }
        }
    }

    /// A file or `-e` result: the fields of a struct at the top level, or the bare value.
    fn body(&mut self, v: VId) {
        let d = self.rt.deref(v);
        let vx = self.rt.v(d);
        let plain = vx.disj.is_none() && vx.err.as_ref().is_none_or(|e| e.child) && !vx.is_list;
        if plain {
            let fields = self.fields(d);
            let atom = self.atom(d);
            if !fields.is_empty() || (atom.is_none() && self.is_struct(d)) {
                if let Some(a) = atom {
                    self.out.push_str(&a);
                    self.out.push('\n');
                }
                for f in fields {
                    self.field(f, 0);
                }
                return;
            }
        }
        self.value(v, 0);
        self.flush_comment();
        self.out.push('\n');
    }

    /// The arcs to print, in output order: the regular fields in [`Runtime::field_order`]
    /// order, with definitions and hidden fields kept where they are among the arcs; hidden and
    /// optional fields only when the options ask for them.
    fn fields(&self, d: VId) -> Vec<VId> {
        let vx = self.rt.v(d);
        let mut regular = self.rt.field_order(d).into_iter();
        vx.arcs
            .iter()
            .copied()
            .filter(|&a| !self.rt.v(a).label.is_let())
            .filter_map(|a| {
                if self.rt.v(a).label.is_regular() {
                    regular.next()
                } else {
                    Some(a)
                }
            })
            .filter(|&a| self.opts.shows(self.rt, a))
            .collect()
    }

    fn is_struct(&self, d: VId) -> bool {
        let vx = self.rt.v(d);
        vx.kind.contains(Kind::STRUCT) && !vx.kind.intersects(Kind::SCALAR.or(Kind::LIST))
    }

    /// The scalar or scalar constraint of a vertex that is not a struct or list: `1`, `int`.
    fn atom(&mut self, d: VId) -> Option<String> {
        let vx = self.rt.v(d);
        if let Some(s) = vx.scalar.clone() {
            return Some(self.value_text(&s, 0));
        }
        // Optional fields do not make a value with a kind of its own a struct.
        let kinded = vx.kind != Kind::TOP && !vx.kind.contains(Kind::STRUCT);
        if vx.is_list
            || vx.arcs.iter().any(|&a| {
                let ax = self.rt.v(a);
                ax.label.is_regular() && !(kinded && ax.arc_type == ArcType::Optional)
            })
        {
            return None;
        }
        let has_arcs = vx.arcs.iter().any(|&a| !self.rt.v(a).label.is_let());
        match self.rt.value_of(d) {
            Value::Vertex(_) => None,
            // `{#a: 1}` is a struct, not `_` with a definition.
            Value::Top if has_arcs => None,
            other => Some(self.value_text(&other, 0)),
        }
    }

    /// `label: value` on a line of its own, with the error comment if any.
    fn field(&mut self, a: VId, indent: usize) {
        self.indent(indent);
        let (label, arc_type) = {
            let ax = self.rt.v(a);
            (ax.label, ax.arc_type)
        };
        let text = self.label_text(label);
        self.out.push_str(&text);
        self.out.push_str(match arc_type {
            ArcType::Member => "",
            ArcType::Optional => "?",
            ArcType::Required => "!",
        });
        self.out.push_str(": ");
        self.value(a, indent);
        if let Some(c) = self.comment.take()
            && self.out.ends_with("_|_")
        {
            self.out.truncate(self.out.len() - 3);
            self.out.push_str(ERR_MARK);
            self.out.push_str(&self.notes.len().to_string());
            self.notes.push(c);
        }
        self.out.push('\n');
    }

    fn label_text(&self, l: Label) -> String {
        let name = self.rt.prog.labels.name(l);
        match l.kind() {
            LabelKind::Int => l.index().to_string(),
            LabelKind::String => {
                if is_identifier(name) && !name.starts_with(['_', '#']) {
                    name.to_string()
                } else {
                    quote(name)
                }
            }
            _ => name.to_string(),
        }
    }

    /// A value, starting where the cursor is; `indent` is the level of the line it is on.
    fn value(&mut self, v: VId, indent: usize) {
        if self.depth > MAX_DEPTH {
            self.out.push('_');
            return;
        }
        self.depth += 1;
        crate::stack::guard(|| self.value_inner(v, indent));
        self.depth -= 1;
    }

    fn value_inner(&mut self, v: VId, indent: usize) {
        let d = self.rt.deref(v);
        if let Some(dj) = self.rt.v(d).disj.clone() {
            // `cue eval` shows the default: the alternatives marked as defaults, or all of them
            // when none is.
            let shown = match dj.num_defaults {
                0 => &dj.alts[..],
                n => &dj.alts[..n],
            };
            for (i, &alt) in shown.iter().enumerate() {
                if i > 0 {
                    self.out.push_str(" | ");
                }
                self.value(alt, indent);
                // A line comment cannot sit inside a disjunction.
                self.comment = None;
            }
            return;
        }
        if let Some(e) = self.rt.v(d).err.clone()
            && !e.child
        {
            self.error(v, d, &e);
            return;
        }
        let fields = self.fields(d);
        let atom = self.atom(d);
        if self.rt.v(d).is_list {
            self.list(d, indent);
            return;
        }
        if fields.is_empty() {
            match atom {
                Some(a) => self.out.push_str(&a),
                None if self.is_struct(d) => {
                    // An empty struct shows its validators (`struct.MaxFields(2)`) instead.
                    let constraints = self.rt.v(d).constraints_copy();
                    let text = match constraints.as_slice() {
                        [] => "{}".to_string(),
                        cs => cs
                            .iter()
                            .map(|c| self.value_text(c, indent))
                            .collect::<Vec<_>>()
                            .join(" & "),
                    };
                    self.note_imports(&text);
                    self.out.push_str(&text);
                }
                None => self.out.push('_'),
            }
            return;
        }
        self.out.push_str("{\n");
        if let Some(a) = atom {
            self.indent(indent + 1);
            self.out.push_str(&a);
            self.out.push('\n');
        }
        for f in fields {
            self.field(f, indent + 1);
        }
        self.indent(indent);
        self.out.push('}');
    }

    /// `_|_` with its message pending as a comment, or the source of the expressions of a value
    /// that is only incomplete.
    fn error(&mut self, v: VId, d: VId, e: &Rc<Bottom>) {
        if e.is_incomplete()
            && !self.rt.v(d).is_list
            && let Some(text) = self.conjunct_text(d).or_else(|| self.conjunct_text(v))
        {
            self.note_imports(&text);
            self.out.push_str(&text);
            return;
        }
        self.out.push_str("_|_");
        let msg = e.msg.replace('\n', " ");
        let path = match e.at {
            Some(a) => self.rt.path(a),
            None => self.rt.path(v),
        };
        let explicit = msg.starts_with("explicit error (_|_ literal)");
        self.comment = Some(if path.is_empty() || explicit {
            msg
        } else {
            format!("{path}: {msg}")
        });
    }

    /// The source text of the expressions of a vertex, joined with `&`.
    fn conjunct_text(&self, d: VId) -> Option<String> {
        let mut parts: Vec<String> = Vec::new();
        for c in &self.rt.v(d).conjuncts {
            let text = match &c.x {
                CExpr::Expr(id) => {
                    let span = self.rt.prog.span(*id);
                    match self.rt.sources.get(span.file.0 as usize) {
                        Some(src) if span.start < span.end && (span.end as usize) <= src.len() => {
                            src[span.range()].to_string()
                        }
                        _ => return None,
                    }
                }
                CExpr::Value(val) if !val.is_bottom() => self.rt.value_text(val),
                _ => return None,
            };
            if !parts.contains(&text) {
                parts.push(text);
            }
        }
        match parts.len() {
            0 => None,
            1 => parts.pop(),
            _ => Some(
                parts
                    .into_iter()
                    .map(|p| if p.contains('|') { format!("({p})") } else { p })
                    .collect::<Vec<_>>()
                    .join(" & "),
            ),
        }
    }

    /// `[1, 2]`, `[{` … `}, {` … `}]`; an element with an error ends its line with the comment.
    fn list(&mut self, d: VId, indent: usize) {
        let elems: Vec<VId> = self
            .rt
            .v(d)
            .arcs
            .iter()
            .copied()
            .filter(|&a| self.rt.v(a).label.is_int())
            .collect();
        self.out.push('[');
        let mut broke = false;
        for (i, &e) in elems.iter().enumerate() {
            if i > 0 && !broke {
                self.out.push(' ');
            }
            broke = false;
            self.value(e, indent);
            if let Some(c) = self.comment.take() {
                self.out.push_str(", // ");
                self.out.push_str(&c);
                self.out.push('\n');
                self.indent(indent + usize::from(i + 1 < elems.len()));
                broke = true;
            } else if i + 1 < elems.len() {
                self.out.push(',');
            }
        }
        self.out.push(']');
    }

    /// A scalar or constraint; strings with line breaks become `"""` strings at `indent`.
    fn value_text(&self, v: &Value, indent: usize) -> String {
        match v {
            Value::Str(s) if s.contains('\n') => multiline(s, indent),
            Value::Basic(k) => k.name().replace('|', " | "),
            Value::Conj(vs) if let Some(t) = simplify_bounds(self.rt, vs) => t,
            Value::Bytes(b) => quote_bytes(b, indent),
            Value::Conj(vs) => vs
                .iter()
                .map(|x| {
                    let t = self.value_text(x, indent);
                    if matches!(x, Value::Or(_)) || t.contains(" | ") {
                        format!("({t})")
                    } else {
                        t
                    }
                })
                .collect::<Vec<_>>()
                .join(" & "),
            other => self.rt.value_text(other),
        }
    }
}

/// Named numeric ranges, as CUE predeclares them: `(name, int?, low, high)`.
const RANGES: [(&str, bool, &str, &str); 13] = [
    ("int8", true, "-128", "127"),
    ("int16", true, "-32768", "32767"),
    ("int32", true, "-2147483648", "2147483647"),
    ("int64", true, "-9223372036854775808", "9223372036854775807"),
    (
        "int128",
        true,
        "-170141183460469231731687303715884105728",
        "170141183460469231731687303715884105727",
    ),
    ("uint8", true, "0", "255"),
    ("uint16", true, "0", "65535"),
    ("uint32", true, "0", "4294967295"),
    ("uint64", true, "0", "18446744073709551615"),
    (
        "uint128",
        true,
        "0",
        "340282366920938463463374607431768211455",
    ),
    ("rune", true, "0", "1114111"),
    (
        "float32",
        false,
        "-3.40282346638528859811704183484516925440e+38",
        "3.40282346638528859811704183484516925440e+38",
    ),
    (
        "float64",
        false,
        "-1.797693134862315708145274237317043567981e+308",
        "1.797693134862315708145274237317043567981e+308",
    ),
];

/// Numeric bounds the way `cue eval` shows them (CUE's exporter `boundSimplifier`). When there
/// are both a lower and an upper bound: a range that is exactly a predeclared one prints as its
/// name (`uint8`, `float64`); otherwise integers print as `int` or, for a non-negative lower
/// bound, `uint` (which absorbs `>=0`), followed by the bounds; the other constraints follow.
/// `int & >=0` alone is `uint`. `None` when nothing applies.
fn simplify_bounds(rt: &Runtime, parts: &[Value]) -> Option<String> {
    type Bound<'v> = (UnaryOp, &'v Num, &'v Value);
    let mut is_int = false;
    let mut min: Option<Bound> = None;
    let mut max: Option<Bound> = None;
    let mut others: Vec<&Value> = Vec::new();
    for p in parts {
        match p {
            Value::Basic(Kind::INT) if !is_int => is_int = true,
            Value::Bound(op @ (UnaryOp::Gt | UnaryOp::Ge), v) if min.is_none() => match &**v {
                Value::Num(n, _) => min = Some((*op, &**n, &**v)),
                _ => others.push(p),
            },
            Value::Bound(op @ (UnaryOp::Lt | UnaryOp::Le), v) if max.is_none() => match &**v {
                Value::Num(n, _) => max = Some((*op, &**n, &**v)),
                _ => others.push(p),
            },
            _ => others.push(p),
        }
    }
    let text = |op: UnaryOp, v: &Value| format!("{}{}", op.as_str(), rt.value_text(v));
    let (Some((lop, lo, lv)), Some((hop, hi, hv))) = (min, max) else {
        return match (is_int, min, max, others.is_empty()) {
            (true, Some((UnaryOp::Ge, lo, _)), None, true) if lo.is_zero() => Some("uint".into()),
            _ => None,
        };
    };
    let exact = RANGES.iter().find(|r| {
        r.1 == is_int
            && lop == UnaryOp::Ge
            && hop == UnaryOp::Le
            && Num::from_decimal_str(r.2).is_ok_and(|x| x.cmp(lo).is_eq())
            && Num::from_decimal_str(r.3).is_ok_and(|x| x.cmp(hi).is_eq())
    });
    let mut out = Vec::new();
    if let Some(r) = exact {
        out.push(r.0.to_string());
    } else {
        if is_int {
            out.push(if lo.sign() < 0 { "int" } else { "uint" }.to_string());
        }
        if !(is_int && lo.is_zero() && lop == UnaryOp::Ge) {
            out.push(text(lop, lv));
        }
        out.push(text(hop, hv));
    }
    out.extend(others.into_iter().map(|v| rt.value_text(v)));
    Some(out.join(" & "))
}

/// The name an import is referred to by when it has no alias: the qualifier after `:`, else the
/// last path element without its major version (`encoding/json` is `json`).
fn import_name(path: &str) -> &str {
    if let Some((_, q)) = path.rsplit_once(':') {
        return q;
    }
    let last = path.rsplit('/').next().unwrap_or(path);
    last.split('@').next().unwrap_or(last)
}

/// A bytes literal: `'…'` with escapes, or a `\'\'\'` literal when it spans lines.
fn quote_bytes(b: &[u8], indent: usize) -> String {
    // Escapes one line; bytes that are not UTF-8 become `\xNN`.
    let escape = |line: &[u8], multi: bool| {
        let mut out = String::new();
        for chunk in line.utf8_chunks() {
            for c in chunk.valid().chars() {
                match c {
                    '\\' => out.push_str("\\\\"),
                    '\'' if !multi => out.push_str("\\'"),
                    '\t' => out.push_str("\\t"),
                    '\r' => out.push_str("\\r"),
                    '\n' => out.push_str("\\n"),
                    c if (c as u32) < 0x20 || c == '\u{7f}' => {
                        out.push_str(&format!("\\x{:02x}", c as u32));
                    }
                    c => out.push(c),
                }
            }
            for byte in chunk.invalid() {
                out.push_str(&format!("\\x{byte:02x}"));
            }
        }
        out
    };
    if !b.contains(&b'\n') {
        return format!("'{}'", escape(b, false));
    }
    let tabs = "\t".repeat(indent + 1);
    let mut out = String::from("\'\'\'\n");
    for line in b.split(|&c| c == b'\n') {
        if !line.is_empty() {
            out.push_str(&tabs);
            out.push_str(&escape(line, true).replace("\'\'\'", "\\\'\'\'"));
        }
        out.push('\n');
    }
    out.push_str(&tabs);
    out.push_str("\'\'\'");
    out
}

/// A `"""` string whose lines are indented one level below `indent`.
fn multiline(s: &str, indent: usize) -> String {
    let tabs = "\t".repeat(indent + 1);
    let mut out = String::from("\"\"\"\n");
    for line in s.split('\n') {
        if !line.is_empty() {
            out.push_str(&tabs);
            let q = quote(line);
            // Inside `"""`, a quote needs no escape unless three of them follow each other.
            let body = q[1..q.len() - 1]
                .replace("\\\"", "\"")
                .replace("\"\"\"", "\\\"\"\"");
            out.push_str(&body);
        }
        out.push('\n');
    }
    out.push_str(&tabs);
    out.push_str("\"\"\"");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inst(src: &str) -> Instance {
        match Instance::from_sources(&[("in.cue".to_string(), src.to_string())]) {
            Ok(i) => i,
            Err(e) => panic!("{}", super::super::api::format_errors(&e)),
        }
    }

    fn eval(src: &str) -> String {
        eval_text(&mut inst(src))
    }

    #[test]
    fn fields_are_aligned_and_nested_with_four_spaces() {
        assert_eq!(
            eval("a: 1\nbcd: \"x\"\ns: {t: true, u: null}\n"),
            "a:   1\nbcd: \"x\"\ns: {\n    t: true\n    u: null\n}\n"
        );
    }

    #[test]
    fn definitions_and_required_fields_are_shown() {
        assert_eq!(
            eval("#A: {x?: int, y!: string}\n_h: 2\nz: 3\n"),
            "#A: {\n    y!: string\n}\nz: 3\n"
        );
    }

    #[test]
    fn hidden_and_optional_fields_are_shown_on_request() {
        let mut i = inst("#A: {x?: int, y!: string}\n_h: 2\nz: 3\n");
        assert_eq!(
            eval_text_with(
                &mut i,
                Options {
                    hidden: true,
                    optional: true
                }
            ),
            "#A: {\n    x?: int\n    y!: string\n}\n_h: 2\nz:  3\n"
        );
    }

    #[test]
    fn lists_of_scalars_stay_on_one_line() {
        assert_eq!(
            eval("l: [1, 2.5, \"a\"]\ne: []\nopen: [...int]\n"),
            "l: [1, 2.5, \"a\"]\ne: []\nopen: []\n"
        );
    }

    #[test]
    fn lists_of_structs_open_their_braces_inline() {
        assert_eq!(
            eval("l: [{a: 1}, {b: 2}]\n"),
            "l: [{\n    a: 1\n}, {\n    b: 2\n}]\n"
        );
    }

    #[test]
    fn non_concrete_values_print_as_constraints() {
        assert_eq!(
            eval("a: int\nb: >=0 & <=10\nc: string\nd: _\n"),
            "a: int\nb: >=0 & <=10\nc: string\nd: _\n"
        );
    }

    #[test]
    fn disjunctions_show_their_default() {
        assert_eq!(
            eval("a: *1 | 2\nb: \"x\" | \"y\"\nc: *1 | *2 | 3\n"),
            "a: 1\nb: \"x\" | \"y\"\nc: 1 | 2\n"
        );
    }

    #[test]
    fn errors_print_as_bottom_with_a_comment() {
        assert_eq!(
            eval("a: 1 & 2\nbb: 3\n"),
            "a:  _|_ // a: conflicting values 2 and 1\nbb: 3\n"
        );
        assert_eq!(
            eval("l: [1, 2 & 3]\n"),
            "l: [1, _|_, // l.1: conflicting values 3 and 2\n]\n"
        );
    }

    #[test]
    fn no_blank_line_after_a_definition() {
        // Regression: the formatter puts a blank line before a commented field that follows a
        // definition, and an error value carries a comment.
        assert_eq!(
            eval("#a: 1\nc: 1 & 2\n"),
            "#a: 1\nc:  _|_ // c: conflicting values 2 and 1\n"
        );
    }

    #[test]
    fn strings_with_line_breaks_are_multiline() {
        assert_eq!(
            eval("a: {s: \"x\\ny\\n\"}\n"),
            "a: {\n    s: \"\"\"\n        x\n        y\n\n        \"\"\"\n}\n"
        );
    }

    #[test]
    fn numeric_ranges_are_simplified_as_cue_does() {
        assert_eq!(
            eval("a: uint8\nb: uint\nc: int32\nd: int & >=1\ne: float64\n"),
            "a: uint8\nb: uint\nc: int32\nd: int & >=1\ne: float64\n"
        );
        assert_eq!(
            eval("a: uint16 & >0\nb: >=0 & <10 & int\nc: int & >=-2 & <=2\n"),
            "a: uint & >0 & <=65535\nb: uint & <10\nc: int & >=-2 & <=2\n"
        );
        // Without both bounds nothing is folded; other kinds follow the bounds.
        assert_eq!(
            eval("a: int & >0\nb: float & >=1.5 & <=2.5\n"),
            "a: int & >0\nb: >=1.5 & <=2.5 & float\n"
        );
    }

    #[test]
    fn bytes_are_single_quoted() {
        assert_eq!(
            eval("a: 'x\\'y'\nb: 'p\\nq'\n"),
            "a: 'x\\'y'\nb: \'\'\'\n    p\n    q\n    \'\'\'\n"
        );
        assert_eq!(eval("a: 'a\\xed\\x95a'\n"), "a: 'a\\xed\\x95a'\n");
    }

    #[test]
    fn labels_that_are_not_identifiers_are_quoted() {
        assert_eq!(
            eval("\"a-b\": 1\n\"_c\": 2\n\"0\": 3\n"),
            "\"a-b\": 1\n\"_c\":  2\n\"0\":   3\n"
        );
    }

    #[test]
    fn vertex_cue_keeps_the_braces() {
        let mut i = inst("a: {b: 1}\n");
        let v = i.lookup(&["a"]).unwrap();
        assert_eq!(vertex_cue(&mut i.rt, v), "{\n    b: 1\n}");
        assert_eq!(
            eval_path_text(&mut i, &["a"], Options::default()).unwrap(),
            "b: 1\n"
        );
    }

    #[test]
    fn eval_errors_skip_incomplete_values() {
        let mut i = inst("a: int\nb: 1 & 2\n#D: {c: \"x\" & \"y\"}\n");
        let errs = eval_errors_at(&mut i, &[], Options::default());
        let paths: Vec<&str> = errs.iter().map(|e| e.path.as_str()).collect();
        // Conflicts come by path, as `cue eval` v0.17.1 lists them for this input.
        assert_eq!(paths, ["#D.c", "b"]);
    }

    #[test]
    fn export_path_selects_a_value() {
        let mut i = inst("a: b: {c: 1}\nx: int\n");
        let d = export_path(&mut i, &["a", "b"]).unwrap();
        assert_eq!(crate::encode::to_json_compact(&d), "{\"c\":1}");
        assert!(export_path(&mut i, &["nope"]).is_err());
        assert!(export_path(&mut i, &["x"]).is_err());
    }

    #[test]
    fn imports_used_by_unevaluated_expressions_are_printed() {
        assert_eq!(
            eval("import \"strings\"\nx: string\ny: strings.ToUpper(x)\n"),
            "import \"strings\"\n\nx: string\ny: strings.ToUpper(x)\n"
        );
    }

    #[test]
    fn split_path_understands_quotes() {
        assert_eq!(split_path("a.\"x.y\".0"), ["a", "x.y", "0"]);
    }
}
