//! Values files and Timoni's values merge (`MergeValue` in Timoni's `internal/engine/utils.go`).
//!
//! User values are not unified with the module defaults: they are merged over them. The result
//! starts as the overlay; each base field missing from the overlay is added after the overlay's
//! fields; structs present on both sides merge recursively; lists present on both sides become
//! a list of the shorter length (element-wise merges of structs, the overlay's element
//! otherwise) that is then unified with the overlay list, so an overlay list longer than the
//! base list fails with `incompatible list lengths (B and O)`; scalars present on both sides
//! keep the overlay's value.
//!
//! Values are concrete data here ([`Data`]); see `docs/divergences.md` for what that leaves out.

use std::path::{Path, PathBuf};

use cue_eval::decode;
use cue_eval::encode::{Data, Field};
use cue_eval::syntax::Outline;

use crate::error::Error;

/// Where a values document comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ValuesSource {
    /// A file: `.cue`, `.yaml`, `.yml` or `.json`.
    File(PathBuf),
    /// Text read from stdin (`-`), as CUE.
    Stdin(String),
}

/// Reads the `values` field of a values file as concrete data.
pub fn read_values(src: &ValuesSource) -> Result<Data, Error> {
    match src {
        ValuesSource::Stdin(text) => values_from_cue("-", text),
        ValuesSource::File(path) => {
            let name = path.display().to_string();
            let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
            let read = || std::fs::read_to_string(path).map_err(|e| Error::io(path, e));
            match ext {
                "cue" => values_from_cue(&name, &read()?),
                "yaml" | "yml" => {
                    let text = read()?;
                    let docs = decode::yaml(&text).map_err(|e| Error::Values {
                        file: name.clone(),
                        msg: e.in_file(&name),
                    })?;
                    let doc = docs.into_iter().next().unwrap_or(Data::Null);
                    values_field(&name, doc)
                }
                "json" => {
                    let text = read()?;
                    let doc = decode::json(&text).map_err(|e| Error::Values {
                        file: name.clone(),
                        msg: e.in_file(&name),
                    })?;
                    values_field(&name, doc)
                }
                _ => Err(Error::Values {
                    file: name.clone(),
                    msg: format!(
                        "unknown values file format {:?}: use .cue, .yaml, .yml or .json",
                        path.file_name()
                            .map(|n| n.to_string_lossy())
                            .unwrap_or_default()
                    ),
                }),
            }
        }
    }
}

/// The `values` field of a CUE file evaluated on its own (as Timoni compiles values files: no
/// imports, build attributes ignored).
pub fn values_from_cue(name: &str, text: &str) -> Result<Data, Error> {
    let err = |msg: String| Error::Values {
        file: name.to_string(),
        msg,
    };
    let file = [(name.to_string(), text.to_string())];
    let v = cue_eval::Context::new()
        .compile_files(&file)
        .map_err(|e| err(e.to_string()))?;
    if v.lookup("values").is_err() {
        return Err(err(format!("{name}: no 'values' field found")));
    }
    crate::instance::export_at(&v, &["values"]).map_err(|e| err(e.to_string()))
}

fn values_field(name: &str, doc: Data) -> Result<Data, Error> {
    if let Data::Struct(fields) = doc
        && let Some(f) = fields.into_iter().find(|f| f.name == "values")
    {
        return Ok(f.value);
    }
    Err(Error::Values {
        file: name.to_string(),
        msg: format!("{name}: no 'values' field found"),
    })
}

/// Merges `overlay` over `base` by Timoni's rules; `path` names the value in errors
/// (`values`).
pub fn merge(overlay: &Data, base: &Data, path: &str) -> Result<Data, String> {
    let (Data::Struct(ofields), Data::Struct(bfields)) = (overlay, base) else {
        return Err(format!(
            "{path}: conflicting values {} and {}",
            overlay.kind_name(),
            base.kind_name()
        ));
    };
    let mut out: Vec<Field> = ofields.clone();
    for bf in bfields {
        let sub = format!("{path}.{}", label(&bf.name));
        let Some(pos) = out.iter().position(|f| f.name == bf.name) else {
            out.push(bf.clone());
            continue;
        };
        let ov = &out[pos].value;
        let merged = match (&bf.value, ov) {
            (Data::Struct(_), _) => merge(ov, &bf.value, &sub)?,
            (Data::List(bl), Data::List(ol)) => {
                let n = bl.len().min(ol.len());
                let mut items = Vec::with_capacity(n);
                for (b, o) in bl.iter().zip(ol) {
                    items.push(match (b, o) {
                        (Data::Struct(_), Data::Struct(_)) => merge(o, b, &sub)?,
                        _ => o.clone(),
                    });
                }
                if ol.len() != n {
                    return Err(format!(
                        "{sub}: incompatible list lengths ({n} and {})",
                        ol.len()
                    ));
                }
                Data::List(items)
            }
            (Data::List(_), o) => {
                return Err(format!(
                    "{sub}: conflicting values {} and list",
                    o.kind_name()
                ));
            }
            _ => continue,
        };
        out[pos].value = merged;
    }
    Ok(Data::Struct(out))
}

/// Merges the values documents left to right over the module's defaults.
pub fn merge_all(defaults: Data, overlays: &[Data]) -> Result<Data, String> {
    let mut acc = defaults;
    for o in overlays {
        acc = merge(o, &acc, "values")?;
    }
    Ok(acc)
}

/// The in-memory `values.cue` Timoni writes: the package clause and the merged values.
pub fn values_file(package: &str, values: &Data) -> String {
    format!(
        "package {package}\n\nvalues: {}\n",
        decode::to_cue_expr(values)
    )
}

/// The `values` of a values file as Timoni stores them in an instance's inventory
/// (`fmt.Sprintf("%v", values.Eval())` of the file compiled on its own): CUE text of the
/// evaluated value, concrete or not, laid out by `cue fmt`'s rules with tabs. As Go's `%v`
/// prints a value (CUE's `Simplified` export profile, defaults not taken), a field with a
/// default keeps its disjunction and marker (`tag: *"1-alpine" | string`), required fields are
/// shown (`replicas!: int & >0`), optional fields, definitions and comments are not. `text` is
/// `values.cue` as the build used it: the module's file, or the one holding the merged values
/// when values files were given. Empty when the file has no `values` or does not compile, as
/// nothing else can be stored then.
pub fn stored_text(name: &str, text: &str) -> String {
    let file = [(name.to_string(), text.to_string())];
    let Ok(root) = cue_eval::Context::new().compile_files(&file) else {
        return String::new();
    };
    let Ok(v) = root.lookup("values") else {
        return String::new();
    };
    // The alternatives of a disjunction are read from the declarations, as written; the
    // evaluated value gives the default and everything else.
    let outlines = cue_eval::syntax::Document::parse(name, text)
        .map(|d| d.outline("values"))
        .unwrap_or_default();
    let outlines: Vec<&Outline> = outlines.iter().collect();
    let mut eval = String::new();
    go_value_text(&v, &outlines, &mut eval);
    // `cue fmt` aligns and indents with tabs, as Go's CUE formats a value.
    match cue_eval::format_source(&format!("values: {eval}\n")) {
        Ok(formatted) => formatted
            .strip_prefix("values: ")
            .unwrap_or(&formatted)
            .trim_end()
            .to_string(),
        Err(_) => eval,
    }
}

/// Writes `v` as Go's `%v` prints it (see [`stored_text`]); `decls` are the declarations of the
/// field in the source, for the alternatives of a disjunction.
fn go_value_text(v: &cue_eval::Value, decls: &[&Outline], out: &mut String) {
    use cue_eval::{FieldKind, FieldOptions, Kind};
    if !v.is_concrete()
        && let Some(alternatives) = disjunction_text(v, decls)
    {
        out.push_str(&alternatives);
        return;
    }
    if v.kind() != Kind::STRUCT {
        out.push_str(&v.to_string());
        return;
    }
    let fields = v.fields(FieldOptions {
        optional: true,
        ..Default::default()
    });
    if fields.is_empty() {
        out.push_str("{}");
        return;
    }
    out.push_str("{\n");
    for f in fields {
        let marker = match f.kind {
            FieldKind::Regular => "",
            FieldKind::Required => "!",
            _ => continue,
        };
        let below: Vec<&Outline> = decls
            .iter()
            .flat_map(|d| d.fields.iter())
            .filter(|o| o.label == f.label)
            .map(|o| &o.value)
            .collect();
        out.push_str(&format!("{}{marker}: ", label(&f.label)));
        go_value_text(&f.value, &below, out);
        out.push('\n');
    }
    out.push('}');
}

/// A field whose value is a disjunction with a scalar default, as Go prints it: the default
/// marked, then the other alternatives as declared (`*"1" | string`). `None` when the value
/// has no such default or its declaration is not one disjunction in the source.
fn disjunction_text(v: &cue_eval::Value, decls: &[&Outline]) -> Option<String> {
    let default = v.default();
    let kind = default.kind();
    if !default.is_concrete() || kind == cue_eval::Kind::STRUCT || kind == cue_eval::Kind::LIST {
        return None;
    }
    let [decl] = decls.iter().filter(|d| d.has_default).collect::<Vec<_>>()[..] else {
        return None;
    };
    let default = default.to_string();
    let others = decl.constraint.as_deref()?;
    Some(format!("*{default} | {others}"))
}

fn label(name: &str) -> String {
    if cue_eval::syntax::is_identifier(name) {
        name.to_string()
    } else {
        format!("{name:?}")
    }
}

/// Whether a path names stdin.
pub fn is_stdin(p: &Path) -> bool {
    p.as_os_str() == "-"
}

#[cfg(test)]
mod tests {
    #[test]
    fn stored_text_is_the_evaluated_values_as_cue_with_tabs() {
        let text = "package main\n\nvalues: {\n\t// a comment\n\tname: \"x\"\n\tport: 80 + 1\n\timage: {tag: *\"1\" | string}\n\treplicas!: int & >0\n\thost: string\n}\n";
        assert_eq!(
            stored_text("values.cue", text),
            "{\n\tname: \"x\"\n\tport: 81\n\timage: {\n\t\ttag: *\"1\" | string\n\t}\n\treplicas!: int & >0\n\thost:      string\n}"
        );
        assert_eq!(stored_text("values.cue", "package main\n"), "");
    }

    #[test]
    fn stored_text_keeps_defaults_marked_as_go_prints_them() {
        let text = r#"@if(!debug)

package main

values: {
	image: {
		repository: *"docker.io/nginx" | string
		tag:        *"1-alpine" | string
	}
	mode:     *"a" | "b" | "c"
	replicas: *1 | int & >0
	user:     "me" | *"you"
	opt?:     *1 | int
	#Def:     1
	set:      *1 | int
	set:      2
	kinds:    "x" | "y"
	calc:     *80 | 1 + 2
}
"#;
        assert_eq!(
            stored_text("values.cue", text),
            r#"{
	image: {
		repository: *"docker.io/nginx" | string
		tag:        *"1-alpine" | string
	}
	mode:     *"a" | "b" | "c"
	replicas: *1 | int & >0
	user:     *"you" | "me"
	set:      2
	kinds:    "x" | "y"
	calc:     *80 | 1+2
}"#
        );
    }

    use super::*;

    fn cue(text: &str) -> Data {
        values_from_cue("t.cue", text).expect("values")
    }

    fn show(d: &Data) -> String {
        decode::to_cue_expr(d)
    }

    // The behaviour of Timoni's `TestValuesBuilder` golden: overlay fields first, base fields
    // after them, scalars from the overlay, lists shrunk to the overlay's length.
    #[test]
    fn overlay_wins_field_by_field_and_comes_first() {
        let base = cue(r#"values: {
            a: "base"
            b: {x: 1, y: 2}
            l: [{n: 1, m: 1}, {n: 2}]
            z: true
        }"#);
        let over = cue(r#"values: {
            b: {y: 3, w: 4}
            a: "over"
            l: [{n: 5}]
        }"#);
        let m = merge(&over, &base, "values").unwrap();
        assert_eq!(
            show(&m),
            show(&cue(r#"values: {
                b: {y: 3, w: 4, x: 1}
                a: "over"
                l: [{n: 5, m: 1}]
                z: true
            }"#))
        );
    }

    #[test]
    fn a_longer_overlay_list_is_an_error() {
        let base = cue("values: list: []");
        let over = cue("values: list: [1]");
        assert_eq!(
            merge(&over, &base, "values").unwrap_err(),
            "values.list: incompatible list lengths (0 and 1)"
        );
    }

    #[test]
    fn several_overlays_merge_left_to_right() {
        let base = cue(r#"values: {host: "a", port: 1}"#);
        let o1 = cue(r#"values: {host: "b"}"#);
        let o2 = cue(r#"values: {port: 2, extra: "x"}"#);
        let m = merge_all(base, &[o1, o2]).unwrap();
        assert_eq!(
            show(&m),
            show(&cue(r#"values: {port: 2, extra: "x", host: "b"}"#))
        );
    }

    #[test]
    fn values_must_be_a_field() {
        let err = values_from_cue("x.cue", "other: 1").unwrap_err();
        assert!(err.to_string().contains("no 'values' field"), "{err}");
    }

    #[test]
    fn unknown_extensions_are_rejected() {
        let err = read_values(&ValuesSource::File("v.unknown-extension".into())).unwrap_err();
        assert!(
            err.to_string().contains("unknown values file format"),
            "{err}"
        );
    }
}
