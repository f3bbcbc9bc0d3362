//! Tests of evaluator internals reached through an [`Instance`]: the error a field leaves on
//! its struct, the sub-errors of empty disjunctions and non-concrete operands, and the equality
//! the inline `@test(eq, ...)` assertions use.

use super::{Instance, format_errors};

/// A permanent error of a field makes its struct (and the structs above it) an error, as CUE's
/// `AddChildError` does, with the path of the field; an incomplete field does not. Export still
/// reports each field's own error, once.
#[test]
fn field_errors_make_their_structs_errors() {
    let src =
        "#A: {b: int, q: {...}}\na: #A & {b: 1, q: {c: 1 & 2}, x: 3}\ni: {y: int, z: y + 1}\n";
    let mut inst = Instance::from_sources(&[("in.cue".into(), src.into())]).unwrap();
    let errs = inst.export().unwrap_err();
    let text = format_errors(&errs);
    assert_eq!(
        text.matches("a.q.c: conflicting values 2 and 1").count(),
        1,
        "{text}"
    );
    assert_eq!(text.matches("a.x: field not allowed").count(), 1, "{text}");
    for (path, at) in [(&["a"][..], "a.q.c"), (&["a", "q"][..], "a.q.c")] {
        let v = inst.lookup(path).unwrap();
        let d = inst.rt.deref(v);
        let e = inst.rt.v(d).err.clone().expect("struct is an error");
        assert!(e.child, "{path:?}");
        assert_eq!(inst.rt.path(e.at.unwrap()), at);
    }
    let i = inst.lookup(&["i"]).unwrap();
    assert!(
        inst.rt.v(inst.rt.deref(i)).err.is_none(),
        "incomplete stays below"
    );
}

/// The error of top-level field `name`, which must be one.
fn field_error(inst: &mut Instance, name: &str) -> std::rc::Rc<crate::eval::value::Bottom> {
    let v = inst.lookup(&[name]).unwrap();
    inst.rt
        .v(inst.rt.deref(v))
        .err
        .clone()
        .unwrap_or_else(|| panic!("{name} is an error"))
}

/// An empty disjunction keeps the error of each failed disjunct as a sub-error (CUE's error
/// list after the "N errors in empty disjunction" header); a nested empty disjunction is
/// spliced in after its own header.
#[test]
fn empty_disjunction_lists_its_disjuncts_errors() {
    let src = "a: 8000.9\na: 7080 | int\nb: 3\nb: (1 | 2) | \"s\"\n";
    let mut inst = Instance::from_sources(&[("in.cue".into(), src.into())]).unwrap();
    assert!(inst.export().is_err());
    let e = field_error(&mut inst, "a");
    assert!(
        e.msg.starts_with("2 errors in empty disjunction"),
        "{}",
        e.msg
    );
    assert_eq!(e.subs.len(), 2);
    assert!(e.subs.iter().all(|s| s.msg.contains("conflicting values")));
    let e = field_error(&mut inst, "b");
    assert!(e.subs.len() >= 2, "{:?}", e.subs);
}

/// Both operands of an operation non-concrete: one error per operand, as one list.
#[test]
fn non_concrete_operands_are_each_an_error() {
    let src = "s: string\ne: s + s\nf: s + 1\n";
    let mut inst = Instance::from_sources(&[("in.cue".into(), src.into())]).unwrap();
    assert!(inst.export().is_err());
    let e = field_error(&mut inst, "e");
    assert!(e.msg.starts_with("non-concrete value string"), "{}", e.msg);
    assert_eq!(e.subs.len(), 1);
    let e = field_error(&mut inst, "f");
    assert!(e.subs.is_empty());
}

/// `matchN` that the value could still satisfy once required fields are given makes it
/// incomplete, keeping its fields, with one further error per schema lacking a required field
/// (at the call and at that field); a count that cannot be reached is a permanent error.
#[test]
fn match_n_lacking_required_fields_is_incomplete() {
    let src = "x: matchN(1, [{foo!: string}])\nx: bar: 2\ny: matchN(2, [{foo!: int}])\ny: bar: 2\n";
    let mut inst = Instance::from_sources(&[("in.cue".into(), src.into())]).unwrap();
    assert!(inst.export().is_err());
    let e = field_error(&mut inst, "x");
    assert!(e.is_incomplete(), "{e:?}");
    assert!(e.msg.contains("does not satisfy matchN"), "{}", e.msg);
    assert_eq!(e.subs.len(), 1, "{e:?}");
    assert_eq!(e.subs[0].msg, "field is required but not present");
    let cols: Vec<_> = e.subs[0].spans.iter().map(|s| s.start).collect();
    assert_eq!(cols, [3, 15], "{e:?}");
    let e = field_error(&mut inst, "y");
    assert!(!e.is_incomplete(), "{e:?}");
}
