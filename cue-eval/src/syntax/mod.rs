//! The CUE syntax as embedders use it: [`Document`], a parsed file to query and edit by field
//! (labels, attributes, values, doc comments, the outline of a schema) without walking the
//! syntax tree.

mod query;

pub use query::{
    AttrText, Document, FieldConstraint, FieldDecl, Outline, OutlineField, is_number_literal,
    one_line,
};
