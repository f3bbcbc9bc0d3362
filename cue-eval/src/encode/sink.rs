//! Receivers of exported data: the exporter walks an evaluated value once and reports each
//! scalar, list and struct to a [`Sink`] in output order. [`DataBuilder`] builds a [`Data`]
//! tree from those events, [`NullSink`] keeps nothing (to learn only whether a value exports),
//! and the JSON writer in `json.rs` prints them as `cue export` does without any tree.

use super::{Data, Field};

/// What the exporter reports, in document order. A struct's fields are each a
/// [`field`](Sink::field) call followed by the field's value; a list's elements are values.
/// When the export fails, the events stop being a well-formed document (a field may have no
/// value) and whatever the sink made of them is to be discarded.
pub(crate) trait Sink {
    /// `null`.
    fn null(&mut self);
    /// `true` or `false`.
    fn bool(&mut self, b: bool);
    /// A number spelled as CUE's JSON output spells it; `float` tells its kind.
    fn number(&mut self, text: &str, float: bool);
    /// A string.
    fn string(&mut self, s: &str);
    /// Bytes.
    fn bytes(&mut self, b: &[u8]);
    /// A list starts; `len` is its number of elements when all of them export.
    fn begin_list(&mut self, len: usize);
    /// The list ends.
    fn end_list(&mut self);
    /// A struct starts; `len` is at least its number of exported fields.
    fn begin_struct(&mut self, len: usize);
    /// The next field's name (its value follows).
    fn field(&mut self, name: &str);
    /// The struct ends.
    fn end_struct(&mut self);
    /// Whether the fields of a struct must come in output order. A sink that keeps nothing
    /// does not need it when the export succeeds; the errors of a failed export are
    /// collected in output order, so it is exported again with a sink that does.
    fn ordered(&self) -> bool {
        true
    }
}

/// A sink that keeps nothing: it only learns whether a value exports. Unless `ordered`, the
/// fields of a struct may come in any order (see [`Sink::ordered`]).
pub(crate) struct NullSink {
    pub(crate) ordered: bool,
}

impl Sink for NullSink {
    fn null(&mut self) {}
    fn bool(&mut self, _: bool) {}
    fn number(&mut self, _: &str, _: bool) {}
    fn string(&mut self, _: &str) {}
    fn bytes(&mut self, _: &[u8]) {}
    fn begin_list(&mut self, _: usize) {}
    fn end_list(&mut self) {}
    fn begin_struct(&mut self, _: usize) {}
    fn field(&mut self, _: &str) {}
    fn end_struct(&mut self) {}
    fn ordered(&self) -> bool {
        self.ordered
    }
}

/// Builds the [`Data`] tree of the reported value.
#[derive(Default)]
pub(crate) struct DataBuilder {
    open: Vec<Open>,
    done: Option<Data>,
}

/// A list or struct being built, with the name of the field whose value comes next.
enum Open {
    List(Vec<Data>),
    Struct(Vec<Field>, Option<String>),
}

impl DataBuilder {
    /// The value built, once every list and struct reported has ended.
    pub(crate) fn finish(self) -> Option<Data> {
        self.done
    }

    /// The value `report` reports to a new builder, when it says it reported one.
    pub(crate) fn build(report: impl FnOnce(&mut DataBuilder) -> bool) -> Option<Data> {
        let mut b = DataBuilder::default();
        if report(&mut b) { b.finish() } else { None }
    }

    /// The value an export reports to a new builder, or the export's error.
    pub(crate) fn build_export<E>(
        export: impl FnOnce(&mut DataBuilder) -> Result<(), E>,
    ) -> Result<Data, E> {
        let mut b = DataBuilder::default();
        export(&mut b)?;
        Ok(b.finish().expect("an export that succeeds reports a value"))
    }

    fn value(&mut self, d: Data) {
        match self.open.last_mut() {
            None => self.done = Some(d),
            Some(Open::List(items)) => items.push(d),
            Some(Open::Struct(fields, name)) => {
                if let Some(name) = name.take() {
                    fields.push(Field {
                        name,
                        value: d,
                        yaml_tag: None,
                    });
                }
            }
        }
    }
}

impl Sink for DataBuilder {
    fn null(&mut self) {
        self.value(Data::Null);
    }
    fn bool(&mut self, b: bool) {
        self.value(Data::Bool(b));
    }
    fn number(&mut self, text: &str, float: bool) {
        self.value(Data::Number {
            text: text.to_string(),
            float,
        });
    }
    fn string(&mut self, s: &str) {
        self.value(Data::String(s.to_string()));
    }
    fn bytes(&mut self, b: &[u8]) {
        self.value(Data::Bytes(b.to_vec()));
    }
    fn begin_list(&mut self, len: usize) {
        self.open.push(Open::List(Vec::with_capacity(len)));
    }
    fn end_list(&mut self) {
        if let Some(Open::List(items)) = self.open.pop() {
            self.value(Data::List(items));
        }
    }
    fn begin_struct(&mut self, len: usize) {
        self.open.push(Open::Struct(Vec::with_capacity(len), None));
    }
    fn field(&mut self, name: &str) {
        if let Some(Open::Struct(_, next)) = self.open.last_mut() {
            *next = Some(name.to_string());
        }
    }
    fn end_struct(&mut self) {
        if let Some(Open::Struct(fields, _)) = self.open.pop() {
            self.value(Data::Struct(fields));
        }
    }
}
