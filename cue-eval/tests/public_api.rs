//! The embedding API, written down: every public item of the facade, of the syntax entry points
//! and of the data codecs with its signature (what the `testing` cargo feature opens
//! is not covered). A change to one of them fails to compile here, so that it is a deliberate
//! change of this listing (and of the crate's version), not an accident.

#![allow(clippy::type_complexity)]

use std::path::PathBuf;

use cue_eval::syntax::{
    AttrElement, AttrText, Document, FieldConstraint, FieldDecl, Member, Outline, OutlineField,
    StructValue, attribute_elements, is_identifier, is_number_literal, one_line, quote, unquote,
};
use cue_eval::{
    AttrArg, Attribute, Context, Disjunct, DocumentLoads, Error, ErrorCode, ErrorItem, ErrorKind,
    Field, FieldKind, FieldOptions, ImportShare, Kind, Loader, ParseCache, Position, Presence,
    Result, Selector, ValidateOptions, Value,
};

#[derive(serde::Serialize, serde::Deserialize)]
struct T;

#[test]
fn the_facade_keeps_its_signatures() {
    // Context
    let _: fn() -> Context = Context::new;
    let _: fn(&Context, &str) -> Result<Value> = Context::compile_str;
    let _: fn(&Context, &str, &str) -> Result<Value> = Context::compile_file;
    let _: fn(&Context, &str, &str) -> Result<Value> = Context::compile_data;
    let _: fn(&Context, &[(String, String)]) -> Result<Value> = Context::compile_files;
    let _ = |c: &Context, files: &[(String, String)]| -> Result<Value> {
        c.compile_package(files, |p: &str| Err(p.to_string()))
    };
    let _ = |c: &Context, files: &[(String, String)]| -> Result<Value> {
        c.compile_package_partial(files, |p: &str| Err(p.to_string()))
    };
    let _: fn(&Context, &T) -> Result<Value> = Context::encode::<T>;
    let _ = |c: &Context, dir: PathBuf| -> Loader { c.loader(dir) };
    // Loader
    let _: fn(Loader, &str) -> Loader = Loader::package;
    let _: fn(Loader, Vec<String>) -> Loader = Loader::files::<Vec<String>, String>;
    let _: fn(Loader, Vec<String>) -> Loader = Loader::args::<Vec<String>, String>;
    let _: fn(Loader, std::sync::Arc<ParseCache>) -> Loader = Loader::parse_cache;
    let _: fn() -> ParseCache = ParseCache::new;
    let _: fn(&ParseCache) -> usize = ParseCache::computed;
    let _ = |l: Loader, s: &mut ImportShare| -> Result<Value> { l.load_sharing(s) };
    let _: fn() -> ImportShare = ImportShare::new;
    let _: fn(&ImportShare) -> usize = ImportShare::compiled;
    let _: fn(&ImportShare) -> usize = ImportShare::reused;
    let _ = |l: Loader, p: PathBuf, t: String| -> Loader { l.overlay(p, t) };
    let _ = |l: Loader, t: String| -> Loader { l.tag(t) };
    let _ = |l: Loader, k: String, v: String| -> Loader { l.tag_var(k, v) };
    let _: fn(Loader) -> Loader = Loader::inject_vars;
    let _: fn(Loader, bool) -> Loader = Loader::eager_imports;
    let _: fn(Loader) -> Result<Value> = Loader::load;
    let _: fn(Loader) -> Result<(Value, Vec<Document>)> = Loader::load_with_documents;
    let _: fn(Loader) -> Result<Value> = Loader::load_partial;
    let _: fn(Loader) -> Result<DocumentLoads> = Loader::load_partial_per_document;
    let _: fn(&DocumentLoads) -> bool = DocumentLoads::per_document;
    let _ = |l: DocumentLoads| -> Vec<Result<Value>> { l.collect() };
    // Value
    let _: fn(&Value, &str) -> Result<Value> = Value::lookup;
    let _ = |v: &Value, p: &[&str]| -> Result<Value> { v.lookup_path(p) };
    let _: fn(&Value, &Value) -> Result<Value> = Value::unify;
    let _: fn(&Value, &str, &T) -> Result<Value> = Value::fill::<T>;
    let _: fn(&Value) -> Value = Value::default;
    let _: fn(&Value) -> bool = Value::is_concrete;
    let _: fn(&Value) -> Kind = Value::kind;
    let _: fn(&Value, FieldOptions) -> Vec<Field> = Value::fields;
    let _: fn(&Value, ValidateOptions) -> Result<()> = Value::validate;
    let _: fn(&Value, &str) -> Vec<Attribute> = Value::attributes;
    let _: fn(&Value) -> Vec<Position> = Value::positions;
    let _: fn(&Value) -> String = Value::path;
    let _: fn(&Value) -> Result<cue_eval::encode::Data> = Value::export;
    let _: fn(&Value) -> Result<T> = Value::decode::<T>;
    let _: fn(&Value) -> Result<String> = Value::to_json;
    let _: fn(&Value, Vec<u8>) -> Result<std::io::Result<()>> = Value::write_json::<Vec<u8>>;
    let _: fn(&Value) -> Result<String> = Value::to_yaml;
    let _: fn(&Value, FieldOptions) -> Result<String> = Value::to_cue_text;
    let _: fn(&Value, &[Selector]) -> Result<Value> = Value::lookup_selectors;
    let _: fn(&Value) -> Option<Error> = Value::err;
    let _: fn(&Value) -> Kind = Value::incomplete_kind;
    let _: fn(&Value) -> bool = Value::is_closed;
    let _: fn(&Value, &Selector) -> bool = Value::allows;
    let _: fn(&Value, &Value) -> bool = Value::equals;
    let _: fn(&Value, &str) -> Result<Value> = Value::compile_expr;
    let _: fn(&Value) -> Vec<Disjunct> = Value::disjuncts;
    let _: fn(&Value) -> Vec<Value> = Value::constraints;
    let _ = |d: Disjunct| -> (Value, bool) { (d.value, d.default) };
    let _ = |s: Selector| -> Option<String> {
        match s {
            Selector::Field(n) | Selector::Definition(n) | Selector::Hidden(n) => Some(n),
            Selector::Index(i) => Some(i.to_string()),
            Selector::AnyString | Selector::AnyIndex => None,
        }
    };
    let _ = |s: &Selector| -> String { s.to_string() };
    let _ = |f: Field| -> (String, FieldKind, Presence, Value) {
        (f.label, f.kind, f.presence, f.value)
    };
    let _ = [Presence::Regular, Presence::Optional, Presence::Required];
    let _ = FieldOptions {
        optional: true,
        definitions: true,
        hidden: true,
    };
    let _ = ValidateOptions {
        concrete: true,
        hidden: true,
        optional: true,
    };
    let _ = [
        FieldKind::Regular,
        FieldKind::Optional,
        FieldKind::Required,
        FieldKind::Definition,
        FieldKind::Hidden,
    ];
    let _ = [
        Kind::BOTTOM,
        Kind::NULL,
        Kind::BOOL,
        Kind::INT,
        Kind::FLOAT,
        Kind::NUMBER,
        Kind::STRING,
        Kind::BYTES,
        Kind::LIST,
        Kind::STRUCT,
        Kind::TOP,
    ];
    let _: fn(Kind, Kind) -> bool = Kind::contains;
    let _: fn(Kind) -> bool = Kind::is_single;
    // Error
    let _: fn(&Error) -> &[ErrorItem] = Error::errors;
    let _ = |m: String| -> Error { Error::msg(m) };
    let _: fn(&Error) -> &ErrorKind = Error::kind;
    let _ = |p: String, m: String| -> Error { Error::at_path(p, m) };
    let _ = |e: &Error| -> Error { e.map_positions(|p: &Position| p.clone()) };
    let _: fn(&Error, &std::path::Path) -> Error = Error::relative_to;
    let _ = |k: ErrorKind| match k {
        ErrorKind::Eval | ErrorKind::Load => None,
        ErrorKind::NoLanguageVersion { module } => module,
        _ => None,
    };
    let _: fn(&ErrorItem) -> &str = ErrorItem::path;
    let _: fn(&ErrorItem) -> &str = ErrorItem::message;
    let _: fn(&ErrorItem) -> &[Position] = ErrorItem::positions;
    let _: fn(&ErrorItem) -> ErrorCode = ErrorItem::code;
    let _ = |c: ErrorCode| match c {
        ErrorCode::Eval
        | ErrorCode::User
        | ErrorCode::StructuralCycle
        | ErrorCode::Incomplete
        | ErrorCode::Cycle => (),
        _ => (),
    };
    let _: fn(&Position) -> &str = Position::file;
    let _: fn(&Position) -> usize = Position::line;
    let _: fn(&Position) -> usize = Position::column;
    let _: fn(&Position) -> Option<usize> = Position::offset;
    let _ = |f: String, l: usize, c: usize| -> Position { Position::new(f, l, c) };
    // Attributes
    let _ = |a: Attribute| -> (String, Vec<AttrArg>, String) { (a.name, a.args, a.text) };
    let _: fn(&Attribute, usize) -> Option<&str> = Attribute::positional;
    let _: for<'a> fn(&'a Attribute, &str) -> Option<&'a str> = Attribute::get;
    let _: fn(&Attribute, &str) -> bool = Attribute::has_flag;
    // Syntax
    let _: fn(&str, &str) -> Result<Document> = Document::parse;
    let _: fn(&str, &str) -> Document = Document::parse_partial;
    let _: fn(&Document) -> &str = Document::name;
    let _: fn(&Document) -> &str = Document::text;
    let _: fn(&Document) -> Option<&str> = Document::package_name;
    let _: fn(&Document) -> Vec<FieldDecl<'_>> = Document::fields;
    let _: fn(&Document, &[&str]) -> bool = Document::writes_path;
    let _: fn(&Document, &str) -> Vec<Outline> = Document::outline;
    let _: fn(&Document, &[(std::ops::Range<usize>, String)]) -> String = Document::replace_values;
    let _: fn(&Document) -> Vec<AttrText<'_>> = Document::attributes;
    let _: fn(&Document) -> Vec<FieldDecl<'_>> = Document::top_fields;
    fn struct_value<'a>(s: &StructValue<'a>) {
        let _: bool = s.braces();
        let _: usize = s.offset();
        let _: Vec<Member<'a>> = s.members();
    }
    let _ = struct_value;
    let _ = |m: Member<'_>| match m {
        Member::Field(f) => f.label(),
        Member::Attribute(a) => Some(a.name.to_string()),
    };
    let _: fn(&str) -> Result<Vec<AttrElement>> = attribute_elements;
    let _ =
        |e: AttrElement| -> (String, String, String, String) { (e.key, e.value, e.raw, e.text) };
    let _: fn(&str) -> Result<String> = unquote;
    fn field_decl<'a>(f: &FieldDecl<'a>) {
        let _: Option<Selector> = f.selector();
        let _: usize = f.label_offset();
        let _: Option<StructValue<'a>> = f.struct_value();
        let _: Option<String> = f.label();
        let _: FieldConstraint = f.constraint();
        let _: Vec<AttrText<'a>> = f.attributes();
        let _: std::ops::Range<usize> = f.value_range();
        let _: &'a str = f.value_text();
        let _: std::ops::Range<usize> = f.range();
    }
    let _ = field_decl;
    let _ = |a: AttrText<'_>| (a.name.len(), a.body.len(), a.text.len(), a.offset);
    let _ = |o: Outline| -> (Option<String>, bool, Vec<OutlineField>) {
        (o.constraint, o.has_default, o.fields)
    };
    let _ = |f: OutlineField| -> (String, FieldConstraint, Vec<String>, Outline) {
        (f.label, f.constraint, f.docs, f.value)
    };
    let _ = [
        FieldConstraint::Regular,
        FieldConstraint::Optional,
        FieldConstraint::Required,
    ];
    let _: fn(&str) -> bool = is_number_literal;
    let _: fn(&str) -> String = one_line;
    let _: fn(&str) -> bool = is_identifier;
    let _: fn(&str) -> String = quote;
}

#[test]
fn the_syntax_entry_points_and_codecs_keep_their_signatures() {
    use cue_eval::decode::{self, DecodeError, Limits};
    use cue_eval::diagnostic::Diagnostic;
    use cue_eval::encode::{self, Data};
    use cue_eval::source::{self, SourceFile};
    use cue_eval::{LANGUAGE_VERSION, ParseError};

    // Formatting and parse errors
    let _: &str = LANGUAGE_VERSION;
    let _: fn(&str) -> std::result::Result<String, Vec<ParseError>> = cue_eval::format_source;
    let _ = |e: ParseError| -> (String, usize, usize) {
        (e.message, e.span.start as usize, e.span.end as usize)
    };
    let _ = |n: String, t: String| -> SourceFile { SourceFile::new(n, t) };
    let _ = |f: SourceFile| -> (String, std::sync::Arc<String>) { (f.name, f.text) };
    let _: fn(&SourceFile, usize) -> (usize, usize) = SourceFile::line_col;
    let _: fn(&str, usize) -> (usize, usize) = source::line_col;
    let _: fn(&SourceFile, &ParseError) -> Diagnostic = Diagnostic::from_parse_error;
    let _ = |f: &SourceFile, m: String| -> Diagnostic { Diagnostic::new(f, 0, 1, m) };
    let _ = |d: Diagnostic, p: String| -> Diagnostic { d.with_path(p) };
    // Data codecs
    let _: fn(&Data, bool) -> String = encode::to_json_indent;
    let _: fn(&Data) -> String = encode::to_json_compact;
    let _: fn(&[Data]) -> String = encode::to_json_stream_compact;
    let _: fn(&Data) -> String = encode::to_yaml;
    let _: fn(&[Data]) -> String = encode::to_yaml_stream;
    let _ = |f: encode::Field| -> (String, Data, Option<String>) { (f.name, f.value, f.yaml_tag) };
    let _: fn(&str) -> std::result::Result<Data, DecodeError> = decode::json;
    let _: fn(&str, &Limits) -> std::result::Result<Data, DecodeError> = decode::json_with_limits;
    let _: fn(&str) -> std::result::Result<(), DecodeError> = decode::json_valid;
    let _: fn(&str) -> std::result::Result<Vec<Data>, DecodeError> = decode::yaml;
    let _: fn(&str, &Limits) -> std::result::Result<Vec<Data>, DecodeError> =
        decode::yaml_with_limits;
    let _: fn(&[u8]) -> std::result::Result<&str, DecodeError> = decode::utf8;
    let _: fn(&Data) -> String = decode::to_cue_expr;
    let _: fn(&Data) -> String = decode::to_cue_source;
    let _: fn(&mut String, &str) = decode::write_cue_string;
    let _ = |e: DecodeError| -> (String, usize, usize) { (e.msg, e.line, e.column) };
    let _ = Limits {
        max_bytes: 1,
        max_nodes: 1,
        max_depth: 1,
    };
}
