//! The comparison of CUE's inline `@test(eq, expr)` assertions, on the public
//! [`cue_eval::Value`] alone: the expected expression is compiled as a value of the actual
//! value's instance ([`Value::compile_expr`]) and the two are compared structurally, as
//! [`Value::equals`] compares them, with the relaxations of the inline test harness:
//!
//! - a struct whose own error is only incomplete (a comprehension or validator that cannot be
//!   decided yet) equals an expected plain struct with equal fields;
//! - a list compares by its elements, whether or not it is open (`[...int]` equals `[]`);
//! - a hidden field `_x` of the case's package may be written `_x$pkg` in the expected value;
//! - fields compare by label and by whether they are optional or required
//!   ([`cue_eval::Presence`]), hidden fields and definitions included; `let` fields are no
//!   fields;
//! - two disjunctions compare as the sets of their alternatives with their default marks, and
//!   a disjunction equals a value that each of its alternatives equals (an expected
//!   `{a: 1} | {a: 1}` evaluates to one value, where the value it describes may hold two that
//!   differ only in being closed).
//!
//! Where the two values are equal as [`Value::equals`] sees them they are equal here too (the
//! harness only relaxes). Otherwise the comparison descends: errors, then disjunctions
//! ([`Value::disjuncts`], defaults matched with defaults), then the value at the node, then the
//! fields one by one. The value at a node is its scalar, or its kinds and its constraints
//! ([`Value::constraints`], each compared with [`Value::equals`]).

use cue_eval::{ErrorCode, Field, FieldKind, FieldOptions, Kind, Presence, Selector, Value};

/// How deep the comparison goes before it gives up (unequal).
const MAX_DEPTH: usize = 64;

/// Whether `value` equals the CUE expression `expr`, as the inline harness compares them; a
/// hidden field `_x` of `package` may be written `_x$package` in `expr`. The error says what
/// each side is when they differ, or why `expr` has no value.
pub fn check(value: &Value, expr: &str, package: Option<&str>) -> Result<(), String> {
    // Finished first, as `cue` has it before the assertions look at it.
    let _ = value.err();
    let want = value.compile_expr(expr).map_err(|e| e.to_string())?;
    if (Cmp { package }).equal(value, &want, 0) {
        Ok(())
    } else {
        Err(format!("got {}, want {}", describe(value), describe(&want)))
    }
}

/// The value as `cue eval` prints it, or, for a disjunction, its alternatives with their
/// default marks (which `cue eval` resolves).
fn describe(v: &Value) -> String {
    let alternatives = v.disjuncts();
    if alternatives.is_empty() {
        return v.to_string();
    }
    let text: Vec<String> = alternatives
        .iter()
        .map(|d| format!("{}{}", if d.default { "*" } else { "" }, d.value))
        .collect();
    text.join(" | ")
}

struct Cmp<'a> {
    package: Option<&'a str>,
}

const ALL: FieldOptions = FieldOptions {
    optional: true,
    definitions: true,
    hidden: true,
};

impl Cmp<'_> {
    fn equal(&self, a: &Value, b: &Value, depth: usize) -> bool {
        if depth > MAX_DEPTH {
            return false;
        }
        if a.equals(b) {
            return true;
        }
        let (fa, fb) = (a.fields(ALL), b.fields(ALL));
        match (own_error(a, &fa), own_error(b, &fb)) {
            (true, true) => return true,
            (true, false) => {
                return incomplete(a)
                    && struct_like(a)
                    && plain_struct(b)
                    && self.fields(&fa, &fb, depth);
            }
            (false, true) => return false,
            (false, false) => {}
        }
        let (da, db) = (a.disjuncts(), b.disjuncts());
        match (da.is_empty(), db.is_empty()) {
            (true, true) => {}
            (false, false) => {
                // The same alternatives with the same default marks, compared as sets: the
                // expected expression is evaluated too, and a disjunction keeps one of two
                // equal alternatives, so `{a: 1} | {a: 1}` written in an expectation is one
                // alternative, while the value it describes holds two that differ only in
                // being closed (`{a: 1} | #b`, which `equals` does not tell apart).
                let covers = |p: &[cue_eval::Disjunct], q: &[cue_eval::Disjunct]| {
                    p.iter().all(|x| {
                        q.iter().any(|y| {
                            x.default == y.default && self.equal(&x.value, &y.value, depth + 1)
                        })
                    })
                };
                return covers(&da, &db) && covers(&db, &da);
            }
            // For the same reason an expected `*{} | {}` is one value, which each alternative
            // must then equal.
            (false, true) => return da.iter().all(|x| self.equal(&x.value, b, depth + 1)),
            (true, false) => return db.iter().all(|y| self.equal(a, &y.value, depth + 1)),
        }
        let (ka, kb) = (shape(a, &fa), shape(b, &fb));
        if (ka == Kind::LIST) != (kb == Kind::LIST) {
            return false;
        }
        if fa.len() != fb.len() {
            return false;
        }
        if fa.is_empty() {
            // Nothing but the value at the node, which `equals` found different: equal only
            // when they are lists that differ in being open and nothing else.
            let open = |v: &Value| v.allows(&Selector::AnyIndex);
            return ka == Kind::LIST && open(a) != open(b) && at_node(a, b, ka, kb);
        }
        at_node(a, b, ka, kb) && self.fields(&fa, &fb, depth)
    }

    /// Field-by-field equality: the same labels (an expected `_x$pkg` for `_x`), the same
    /// presence, equal values.
    fn fields(&self, fa: &[Field], fb: &[Field], depth: usize) -> bool {
        fa.len() == fb.len()
            && fa.iter().all(|x| {
                fb.iter().find(|y| self.same_label(x, y)).is_some_and(|y| {
                    x.presence == y.presence && self.equal(&x.value, &y.value, depth + 1)
                })
            })
    }

    fn same_label(&self, x: &Field, y: &Field) -> bool {
        let class = |f: &Field| match f.kind {
            FieldKind::Definition => 1,
            FieldKind::Hidden => 2,
            FieldKind::Regular | FieldKind::Optional | FieldKind::Required => 0,
        };
        if class(x) != class(y) {
            return false;
        }
        x.label == y.label
            || (x.kind == FieldKind::Hidden
                && self.package.is_some_and(|p| {
                    y.label.strip_suffix(p).and_then(|n| n.strip_suffix('$'))
                        == Some(x.label.as_str())
                }))
    }
}

/// Whether the value is an error of its own, not one of a field's that it carries
/// ([`Value::err`] reports both; a field's error is the struct's with the field's path and
/// message).
fn own_error(v: &Value, fields: &[Field]) -> bool {
    let Some(e) = v.err() else {
        return false;
    };
    let first = &e.errors()[0];
    !fields.iter().any(|f| {
        f.presence != Presence::Optional
            && f.value.err().is_some_and(|fe| {
                let g = &fe.errors()[0];
                g.path() == first.path() && g.message() == first.message()
            })
    })
}

/// Whether the values at the nodes are equal, fields aside: the same scalar, or the same kinds
/// (any kinds of struct alike) and constraints.
fn at_node(a: &Value, b: &Value, ka: Kind, kb: Kind) -> bool {
    match (scalar(a, ka), scalar(b, kb)) {
        (true, true) => ka == kb && matches!((a.export(), b.export()), (Ok(x), Ok(y)) if x == y),
        (false, false) => {
            if ka != kb && !(structish(ka) && structish(kb)) {
                return false;
            }
            let (ca, cb) = (a.constraints(), b.constraints());
            ca.len() == cb.len() && ca.iter().all(|c| cb.iter().any(|d| c.equals(d)))
        }
        _ => false,
    }
}

/// Whether the value's error is only incomplete.
fn incomplete(v: &Value) -> bool {
    v.err().is_some_and(|e| {
        matches!(
            e.errors()[0].code(),
            ErrorCode::Incomplete | ErrorCode::Cycle
        )
    })
}

/// Whether a value with an incomplete error is a struct as far as it got: no disjunction, no
/// list, no scalar.
fn struct_like(v: &Value) -> bool {
    let k = v.kind();
    v.disjuncts().is_empty() && (!k.is_single() || k == Kind::STRUCT)
}

/// Whether the value is a struct without error, disjunction, scalar or constraints.
fn plain_struct(v: &Value) -> bool {
    v.err().is_none()
        && v.disjuncts().is_empty()
        && structish(v.kind())
        && v.constraints().is_empty()
}

/// Whether the kinds include struct and no scalar.
fn structish(k: Kind) -> bool {
    k.contains(Kind::STRUCT)
        && ![
            Kind::NULL,
            Kind::BOOL,
            Kind::INT,
            Kind::FLOAT,
            Kind::STRING,
            Kind::BYTES,
        ]
        .iter()
        .any(|&s| k.contains(s))
}

/// The kinds of a value that is no error of its own; a struct or list that carries a field's
/// error has no kind ([`Value::kind`]) and is taken for a list when it has elements.
fn shape(v: &Value, fields: &[Field]) -> Kind {
    let k = v.kind();
    if k != Kind::BOTTOM {
        return k;
    }
    let element = |f: &Field| f.kind == FieldKind::Regular && f.label.parse::<u32>().is_ok();
    if fields.iter().any(element) {
        Kind::LIST
    } else {
        Kind::STRUCT
    }
}

/// Whether the value is a concrete scalar (with hidden fields or definitions beside it).
fn scalar(v: &Value, k: Kind) -> bool {
    k.is_single() && k != Kind::STRUCT && k != Kind::LIST && v.is_concrete()
}

#[cfg(test)]
mod tests {
    use super::check;
    use cue_eval::Context;

    fn value(src: &str, path: &str) -> cue_eval::Value {
        let files = [("in.cue".to_string(), src.to_string())];
        let v = Context::new().compile_files(&files).unwrap();
        v.lookup(path).unwrap()
    }

    /// A struct whose comprehension cannot be decided yet carries an incomplete error, yet the
    /// comparison sees its fields; a permanent error does not compare equal to a struct.
    #[test]
    fn looks_through_incomplete_struct_errors() {
        let src = "#D: {\n\td: string\n\tif d != \"c\" {\n\t\te: string\n\t}\n}\nbad: {a: 1 & 2}\n";
        let d = value(src, "#D");
        assert!(d.err().is_some());
        assert_eq!(check(&d, "{d: string}", None), Ok(()));
        assert!(check(&d, "{d: int}", None).is_err());
        assert!(check(&value(src, "bad.a"), "{}", None).is_err());
        assert_eq!(check(&value(src, "bad.a"), "_|_", None), Ok(()));
    }

    /// A list compares by its elements, not by whether it is open; `equals` tells them apart.
    #[test]
    fn ignores_list_openness() {
        let src = "#R: [...string]\nx: [1, ...int]\ny: [1, 2, 3, ...]\n";
        let r = value(src, "#R");
        assert_eq!(check(&r, "[]", None), Ok(()));
        assert!(!r.equals(&r.compile_expr("[]").unwrap()));
        let x = value(src, "x");
        assert_eq!(check(&x, "[1]", None), Ok(()));
        assert!(check(&x, "[2]", None).is_err());
        assert_eq!(check(&value(src, "y"), "[1, 2, 3]", None), Ok(()));
        assert!(check(&value(src, "y"), "[1, 3, 2]", None).is_err());
    }

    /// A hidden field `_x` of package `p` may be written `_x$p`; another package does not match.
    #[test]
    fn names_hidden_fields_with_their_package() {
        let x = value("package p\nx: {_h: 1, _#D: {a: 1}, b: 2}\n", "x");
        let want = "{_h$p: 1, _#D$p: {a: 1}, b: 2}";
        assert_eq!(check(&x, want, Some("p")), Ok(()));
        assert!(check(&x, want, Some("q")).is_err());
        assert_eq!(check(&x, "{_h: 1, _#D: {a: 1}, b: 2}", Some("p")), Ok(()));
    }

    /// Optional and required fields match only their like, hidden ones included; `let` fields
    /// are no fields.
    #[test]
    fn compares_presence_and_ignores_lets() {
        let x = value("x: {a?: int, _b!: string, let c = 1, d: c}\n", "x");
        assert_eq!(check(&x, "{a?: int, _b!: string, d: 1}", None), Ok(()));
        assert!(check(&x, "{a: int, _b!: string, d: 1}", None).is_err());
        assert!(check(&x, "{a?: int, _b: string, d: 1}", None).is_err());
    }

    /// Constraints compare by what they are, beside the fields too; defaults are kept apart.
    #[test]
    fn compares_constraints_and_defaults() {
        let src = "a: int & >0\nb: {!=null, x: 1}\nc: *1 | 2\n";
        assert_eq!(check(&value(src, "a"), ">0 & int", None), Ok(()));
        assert!(check(&value(src, "a"), ">1 & int", None).is_err());
        assert!(check(&value(src, "b"), "{x: 1}", None).is_err());
        assert_eq!(check(&value(src, "b"), "{!=null, x: 1}", None), Ok(()));
        assert_eq!(check(&value(src, "c"), "2 | *1", None), Ok(()));
        let err = check(&value(src, "c"), "1 | 2", None).unwrap_err();
        assert_eq!(err, "got *1 | 2, want 1 | 2");
    }
}
