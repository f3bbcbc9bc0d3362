//! Export: turning an evaluated vertex into concrete data the way `cue export` does, reported
//! to a sink (one that builds a [`crate::encode::Data`] tree, or one that writes JSON as it
//! goes), gathering every error on the way (conflicts, incomplete values, required fields that
//! are missing), with CUE's field order.

use std::rc::Rc;

use crate::ast::Span;
use crate::encode::Data;
use crate::encode::sink::{DataBuilder, Sink};
use crate::num::NumKind;

use super::ir::ArcType;
use super::value::{Bottom, ErrCode, Kind, Value};
use super::*;

/// An error found while exporting, with the CUE path it belongs to.
#[derive(Clone, Debug)]
pub struct ExportError {
    pub path: String,
    pub code: ErrCode,
    pub msg: String,
    pub spans: Vec<Span>,
}

impl Runtime {
    /// The vertex whose data stands for vertex `w` for a reader that sorts the fields of a
    /// struct by name, as `text/template` ranges over and prints a map: a definition copy that
    /// stands for a finished vertex (`#config: #Config` meeting `#config: config`, see
    /// [`Runtime::finished_copy_target`]) has that vertex's fields and values, in another
    /// order only, so its data is that vertex's, and the copy is not evaluated again. With it,
    /// whether it is such a finished vertex (its data can no longer change).
    pub(super) fn template_source(&mut self, w: VId) -> (VId, bool) {
        self.evaluate(w);
        let d = self.deref(w);
        match self.finished_copy_target(d) {
            // Only ever a finished vertex without errors, and none while evaluation is aborted.
            Some(t) => (t, true),
            None => (w, false),
        }
    }

    /// Whether the data of vertex `w`, just converted, is final: `w` is its own value (no
    /// reference to another vertex) and is finished, so its data can no longer change.
    pub(super) fn data_is_final(&self, w: VId) -> bool {
        self.deref(w) == w && self.aborted.is_none() && self.v(w).status == Status::Finalized
    }

    /// Converts a concrete value to data, for builtins such as `json.Marshal`.
    pub(super) fn value_to_data(&mut self, v: &Value) -> Result<Data, Rc<Bottom>> {
        match v {
            Value::Vertex(w) => {
                let mut errs = Vec::new();
                let w = *w;
                self.finalize(w, false);
                match self.export_vertex(w, &mut errs, 0) {
                    Some(d) if errs.is_empty() => Ok(d),
                    _ => {
                        let e = errs.into_iter().next();
                        Err(match e {
                            Some(e) => Rc::new(Bottom {
                                code: e.code,
                                msg: e.msg,
                                spans: e.spans,
                                child: false,
                                at: None,
                                subs: Vec::new(),
                            }),
                            None => Bottom::incomplete("incomplete value"),
                        })
                    }
                }
            }
            other => scalar_data(other).ok_or_else(|| {
                Bottom::incomplete(format!(
                    "cannot convert incomplete value {} to JSON",
                    super::label::quote(&self.value_text(other))
                ))
            }),
        }
    }

    /// Exports a vertex: its data, or `None` with the errors appended to `errs`.
    pub fn export_vertex(
        &mut self,
        v: VId,
        errs: &mut Vec<ExportError>,
        depth: usize,
    ) -> Option<Data> {
        DataBuilder::build(|b| self.export_to(v, b, errs, depth))
    }

    /// Exports a vertex to `sink`, in output order: whether it exports, with the errors that
    /// keep it from exporting appended to `errs`. After a failure the traversal goes on to find
    /// every error, and what the sink received is to be discarded.
    pub(crate) fn export_to<S: Sink>(
        &mut self,
        v: VId,
        sink: &mut S,
        errs: &mut Vec<ExportError>,
        depth: usize,
    ) -> bool {
        if depth > MAX_DEPTH {
            errs.push(ExportError {
                path: self.path(v),
                code: ErrCode::Eval,
                msg: "value too deep to export".into(),
                spans: Vec::new(),
            });
            return false;
        }
        self.evaluate(v);
        let d = self.deref(v);
        self.evaluate(d);
        if let Some(dj) = self.v(d).disj.clone() {
            if dj.num_defaults == 1 {
                return self.export_to(dj.alts[0], sink, errs, depth + 1);
            }
            let text = self.vertex_text(d);
            errs.push(ExportError {
                path: self.path(v),
                code: ErrCode::Incomplete,
                msg: format!("incomplete value {}", text),
                spans: Vec::new(),
            });
            return false;
        }
        let ok = self.export_inner(v, d, sink, errs, depth);
        // A permanent error of a field that is not exported (a definition, a hidden field) still
        // fails the struct, as CUE's child error does; it is reported where it arose.
        if ok
            && let Some(e) = self.v(d).err.clone()
            && e.child
            && !e.is_incomplete()
        {
            errs.push(ExportError {
                path: self.path(e.at.unwrap_or(v)),
                code: e.code,
                msg: e.msg.clone(),
                spans: e.spans.clone(),
            });
            return false;
        }
        ok
    }

    fn export_inner<S: Sink>(
        &mut self,
        v: VId,
        d: VId,
        sink: &mut S,
        errs: &mut Vec<ExportError>,
        depth: usize,
    ) -> bool {
        let vx = self.v(d);
        if let Some(e) = vx.err.clone()
            && !e.child
        {
            let path = match e.at {
                Some(a) => self.path(a),
                None => self.path(v),
            };
            errs.push(ExportError {
                path,
                code: e.code,
                msg: e.msg.clone(),
                spans: e.spans.clone(),
            });
            return false;
        }
        if let Some(s) = &vx.scalar
            && scalar_to(s, sink)
        {
            return true;
        }
        if vx.is_list {
            let mut elems = self.export_scratch.pop().unwrap_or_default();
            elems.extend(
                self.v(d)
                    .arcs
                    .iter()
                    .copied()
                    .filter(|&a| self.v(a).label.is_int()),
            );
            sink.begin_list(elems.len());
            let mut ok = true;
            for &a in &elems {
                ok &= self.export_to(a, sink, errs, depth + 1);
            }
            sink.end_list();
            elems.clear();
            self.export_scratch.push(elems);
            return ok;
        }
        // Only fields that are not optional are written (or reported missing); with fewer than
        // two of them, their order needs no sort, however many optional fields the struct's
        // definitions declare.
        let mut written =
            vx.arcs.iter().copied().filter(|&a| {
                self.v(a).label.is_regular() && self.v(a).arc_type != ArcType::Optional
            });
        let (first, second) = (written.next(), written.next());
        let is_struct =
            vx.kind.contains(Kind::STRUCT) && !vx.kind.intersects(Kind::SCALAR) || first.is_some();
        if is_struct && vx.scalar.is_none() {
            let mut order = self.export_scratch.pop().unwrap_or_default();
            match second {
                None => order.extend(first),
                Some(_) if !sink.ordered() => self.regular_arcs_into(d, &mut order),
                Some(_) => self.sorted_arcs_into(d, &mut order),
            }
            sink.begin_struct(order.len());
            let mut ok = true;
            for &a in &order {
                let ax = self.v(a);
                match ax.arc_type {
                    ArcType::Optional => continue,
                    ArcType::Required => {
                        let spans = ax
                            .conjuncts
                            .iter()
                            .map(|c| c.span)
                            .filter(|s| *s != Span::default())
                            .collect();
                        errs.push(ExportError {
                            path: self.path(a),
                            code: ErrCode::Incomplete,
                            msg: "field is required but not present".into(),
                            spans,
                        });
                        ok = false;
                        continue;
                    }
                    ArcType::Member => {}
                }
                let label = ax.label;
                if label.is_int() {
                    sink.field(&label.index().to_string());
                } else {
                    sink.field(self.prog.labels.name(label));
                }
                ok &= self.export_to(a, sink, errs, depth + 1);
            }
            sink.end_struct();
            order.clear();
            self.export_scratch.push(order);
            return ok;
        }
        let val = self.value_of(d);
        let text = match &val {
            Value::Vertex(_) => "_".to_string(),
            other => self.value_text(other),
        };
        errs.push(ExportError {
            path: self.path(v),
            code: ErrCode::Incomplete,
            msg: format!("incomplete value {}", text),
            spans: Vec::new(),
        });
        false
    }

    /// The regular fields of a struct in output order.
    pub fn field_order(&self, v: VId) -> Vec<VId> {
        self.sorted_arcs(v)
    }

    /// CUE's order of labels when nothing else decides: integers first, then by raw bytes.
    pub(super) fn label_cmp(&self, a: Label, b: Label) -> std::cmp::Ordering {
        match (a.is_int(), b.is_int()) {
            (true, true) => a.index().cmp(&b.index()),
            (true, false) => std::cmp::Ordering::Less,
            (false, true) => std::cmp::Ordering::Greater,
            (false, false) => self
                .prog
                .labels
                .name(a)
                .as_bytes()
                .cmp(self.prog.labels.name(b).as_bytes()),
        }
    }
}

/// Data for a concrete scalar.
pub fn scalar_data(v: &Value) -> Option<Data> {
    DataBuilder::build(|b| scalar_to(v, b))
}

/// Reports a concrete scalar to `sink`: whether `v` is one.
fn scalar_to<S: Sink>(v: &Value, sink: &mut S) -> bool {
    match v {
        Value::Null => sink.null(),
        Value::Bool(b) => sink.bool(*b),
        Value::Num(n, k) => sink.number(&n.to_g_string(), *k == NumKind::Float),
        Value::Str(s) => sink.string(s),
        Value::Bytes(b) => sink.bytes(b),
        _ => return false,
    }
    true
}
