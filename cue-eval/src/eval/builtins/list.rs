//! The `list` and `struct` packages: list arithmetic (`Sum`, `Avg`, `Range`...), slicing
//! (`Take`, `Drop`, `Slice`), `Concat`, `FlattenN`, `Repeat`, `Reverse`, sorting with a
//! comparator struct (`Sort`, `SortStable`, `IsSorted`, with `Ascending`/`Descending` defined
//! in CUE as upstream does), and the validators `MinItems`, `MaxItems`, `UniqueItems`,
//! `MatchN`, `struct.MinFields` and `struct.MaxFields`.

use std::cmp::Ordering;
use std::rc::Rc;

use super::k::*;
use super::{R, Runtime, StdMember, a_int, a_num, constant, func, raw, valid, validation_fail};
use crate::eval::ir::ArcType;
use crate::eval::value::{Bottom, Value};
use crate::num::{Num, NumKind};

/// The largest count `list.Repeat` accepts, as CUE limits it.
const REPEAT_LIMIT: i64 = 1_000_000;
/// The longest list `list.Range` builds.
const RANGE_LIMIT: usize = 10_000_000;

pub(super) static MEMBERS: &[StdMember] = &[
    func("list.Drop", &[L, I], drop),
    func("list.FlattenN", &[T, I], flatten_n),
    func("list.Repeat", &[L, I], repeat),
    func("list.Concat", &[L], concat),
    func("list.Take", &[L, I], take),
    func("list.Slice", &[L, I, I], slice),
    func("list.Reverse", &[L], reverse),
    valid("list.MinItems", &[L, I], min_items),
    valid("list.MaxItems", &[L, I], max_items),
    raw("list.UniqueItems", &[L], true, unique_items),
    valid("list.Contains", &[L, T], contains),
    func("list.Avg", &[L], avg),
    func("list.Max", &[L], max),
    func("list.Min", &[L], min),
    func("list.Product", &[L], product),
    func("list.Range", &[N, N, N], range),
    func("list.Sum", &[L], sum),
    func("list.Sort", &[L, T], sort),
    func("list.SortStable", &[L, T], sort),
    func("list.SortStrings", &[L], sort_strings),
    valid("list.IsSorted", &[L, T], is_sorted),
    valid("list.IsSortedStrings", &[L], is_sorted_strings),
    raw("list.MatchN", &[L, T, T], true, match_n),
    constant("list.Comparer", |rt| {
        rt.std_cue_value("list", SORT_CUE, "Comparer")
    }),
    constant("list.Ascending", |rt| {
        rt.std_cue_value("list", SORT_CUE, "Ascending")
    }),
    constant("list.Descending", |rt| {
        rt.std_cue_value("list", SORT_CUE, "Descending")
    }),
    valid("struct.MinFields", &[ST, I], min_fields),
    valid("struct.MaxFields", &[ST, I], max_fields),
];

/// The comparators of the `list` package, written in CUE as the upstream package defines them.
const SORT_CUE: &str = "Comparer: {
\tT:    _
\tx:    T
\ty:    T
\tless: bool
}
Ascending: {
\tComparer
\tT:    number | string
\tx:    T
\ty:    T
\tless: x < y
}
Descending: {
\tComparer
\tT:    number | string
\tx:    T
\ty:    T
\tless: x > y
}
";

fn items(rt: &mut Runtime, a: &[Value], name: &str) -> Result<Vec<Value>, Rc<Bottom>> {
    rt.list_values(&a[0], name)
}

fn drop(rt: &mut Runtime, a: &[Value]) -> R {
    let x = items(rt, a, "list.Drop")?;
    let n = a_int(a, 1)?;
    if n < 0 {
        return Err(Bottom::eval("negative index"));
    }
    let n = (n as usize).min(x.len());
    Ok(rt.make_list_values(x[n..].to_vec()))
}

fn take(rt: &mut Runtime, a: &[Value]) -> R {
    let x = items(rt, a, "list.Take")?;
    let n = a_int(a, 1)?;
    if n < 0 {
        return Err(Bottom::eval("negative index"));
    }
    let n = (n as usize).min(x.len());
    Ok(rt.make_list_values(x[..n].to_vec()))
}

fn slice(rt: &mut Runtime, a: &[Value]) -> R {
    let x = items(rt, a, "list.Slice")?;
    let (i, j) = (a_int(a, 1)?, a_int(a, 2)?);
    if i < 0 {
        return Err(Bottom::eval("negative index"));
    }
    if i > j {
        return Err(Bottom::eval(format!("invalid index: {i} > {j}")));
    }
    if i as usize > x.len() || j as usize > x.len() {
        return Err(Bottom::eval("slice bounds out of range"));
    }
    Ok(rt.make_list_values(x[i as usize..j as usize].to_vec()))
}

fn reverse(rt: &mut Runtime, a: &[Value]) -> R {
    let mut x = items(rt, a, "list.Reverse")?;
    x.reverse();
    Ok(rt.make_list_values(x))
}

fn flatten(
    rt: &mut Runtime,
    v: &Value,
    depth: i64,
    out: &mut Vec<Value>,
) -> Result<(), Rc<Bottom>> {
    let items = rt.list_values(v, "list.FlattenN")?;
    for it in items {
        if depth != 0 && rt.is_list_value(&it) {
            crate::stack::guard(|| flatten(rt, &it, depth - 1, out))?;
        } else {
            out.push(it);
        }
        if out.len() > RANGE_LIMIT {
            return Err(Bottom::eval("list too large"));
        }
    }
    Ok(())
}

fn flatten_n(rt: &mut Runtime, a: &[Value]) -> R {
    let depth = a_int(a, 1)?;
    let mut out = Vec::new();
    flatten(rt, &a[0], depth, &mut out)?;
    Ok(rt.make_list_values(out))
}

fn repeat(rt: &mut Runtime, a: &[Value]) -> R {
    let x = items(rt, a, "list.Repeat")?;
    let n = a_int(a, 1)?;
    if n < 0 {
        return Err(Bottom::eval("negative count"));
    }
    if n > REPEAT_LIMIT {
        return Err(Bottom::eval(format!(
            "count {n} exceeds limit of {REPEAT_LIMIT}"
        )));
    }
    if (n as u128) * (x.len() as u128) > RANGE_LIMIT as u128 {
        return Err(Bottom::eval("list.Repeat: result too large"));
    }
    let mut out = Vec::with_capacity(x.len() * n as usize);
    for _ in 0..n {
        out.extend(x.iter().cloned());
    }
    Ok(rt.make_list_values(out))
}

fn concat(rt: &mut Runtime, a: &[Value]) -> R {
    let lists = items(rt, a, "list.Concat")?;
    let mut out = Vec::new();
    for l in lists {
        out.extend(rt.list_values(&l, "list.Concat")?);
        if out.len() > RANGE_LIMIT {
            return Err(Bottom::eval("list too large"));
        }
    }
    Ok(rt.make_list_values(out))
}

/// The list vertex of a validated value, its elements and whether it is open.
fn list_of(rt: &mut Runtime, v: &Value) -> Result<(Vec<crate::eval::VId>, bool), Rc<Bottom>> {
    let Value::Vertex(w) = v else {
        return Err(Bottom::eval(format!(
            "cannot use value {} (type {}) as list",
            rt.value_text(v),
            v.kind().name()
        )));
    };
    let w = rt.default_of(*w);
    rt.evaluate(w);
    let elems = rt.list_elems(w);
    Ok((elems, rt.v(w).list_open()))
}

fn min_items(rt: &mut Runtime, a: &[Value]) -> R {
    let (elems, open) = list_of(rt, &a[0])?;
    let n = a_int(a, 1)?;
    let c = elems.len() as i64;
    if c >= n {
        return Ok(Value::Bool(true));
    }
    Err(validation_fail(
        format!("len(list) < MinItems({n}) ({c} < {n})"),
        open,
    ))
}

fn max_items(rt: &mut Runtime, a: &[Value]) -> R {
    let (elems, _) = list_of(rt, &a[0])?;
    let n = a_int(a, 1)?;
    let c = elems.len() as i64;
    if c <= n {
        return Ok(Value::Bool(true));
    }
    Err(validation_fail(
        format!("len(list) > MaxItems({n}) ({c} > {n})"),
        false,
    ))
}

fn unique_items(rt: &mut Runtime, a: &[Value]) -> R {
    let (elems, _) = list_of(rt, &a[0])?;
    let mut vals = Vec::with_capacity(elems.len());
    for &e in &elems {
        let v = rt.value_of(e);
        match rt.concrete(v) {
            Ok(v) if v.is_concrete_scalar() || matches!(v, Value::Vertex(_)) => vals.push(v),
            Ok(_) | Err(_) => return Err(Bottom::incomplete("incomplete list element")),
        }
    }
    for i in 0..vals.len() {
        for j in i + 1..vals.len() {
            if rt.values_equal_structural(&vals[i], &vals[j]) {
                let msg = if vals[i].is_concrete_scalar() {
                    format!(
                        "equal value ({}) at position {} and {}",
                        rt.value_text(&vals[i]),
                        i,
                        j
                    )
                } else {
                    format!("equal values at position {i} and {j}")
                };
                return Err(validation_fail(msg, false));
            }
        }
    }
    Ok(Value::Bool(true))
}

fn contains(rt: &mut Runtime, a: &[Value]) -> R {
    let x = items(rt, a, "list.Contains")?;
    for it in x {
        if rt.values_equal_structural(&it, &a[1]) {
            return Ok(Value::Bool(true));
        }
    }
    Ok(Value::Bool(false))
}

/// A decimal result as CUE converts it: an int when it is integral, a float otherwise.
/// [`dec_value`] that keeps the sign of a zero: apd's `Mul` and `Copysign` give `-0`, which
/// `cue` prints as such, where rounding functions give a plain `0`.
pub(super) fn dec_value_signed(n: Num) -> Value {
    if n.is_zero() && n.is_sign_negative() {
        let z = Num::from_parts(true, num_bigint::BigUint::from(0u8), 0);
        return Value::num(z, NumKind::Int);
    }
    dec_value(n)
}

pub(super) fn dec_value(n: Num) -> Value {
    if n.is_integral()
        && let Some(b) = n.to_bigint()
    {
        return Value::num(Num::from_bigint(b), NumKind::Int);
    }
    Value::num(n, NumKind::Float)
}

fn numbers(rt: &mut Runtime, a: &[Value], name: &str) -> Result<Vec<Rc<Num>>, Rc<Bottom>> {
    let x = items(rt, a, name)?;
    let mut out = Vec::with_capacity(x.len());
    for (i, v) in x.into_iter().enumerate() {
        match v {
            Value::Num(n, _) => out.push(n),
            other => {
                return Err(Bottom::eval(format!(
                    "invalid list element {} in argument 0 to call: cannot use value {} ({}) as number",
                    i,
                    rt.value_text(&other),
                    match &other {
                        Value::Vertex(_) => "struct".to_string(),
                        o => o.kind().name(),
                    }
                )));
            }
        }
    }
    Ok(out)
}

fn avg(rt: &mut Runtime, a: &[Value]) -> R {
    let x = numbers(rt, a, "list.Avg")?;
    if x.is_empty() {
        return Err(Bottom::eval("empty list"));
    }
    let mut s = Num::from_i64(0);
    for n in &x {
        s = s.add(n);
    }
    let q = s
        .quo(&Num::from_i64(x.len() as i64))
        .map_err(|e| Bottom::eval(e.to_string()))?;
    Ok(dec_value(q))
}

fn extreme(rt: &mut Runtime, a: &[Value], name: &str, want: Ordering) -> R {
    let x = numbers(rt, a, name)?;
    let Some(mut best) = x.first().cloned() else {
        return Err(Bottom::eval("empty list"));
    };
    for n in &x[1..] {
        if n.cmp(&best) == want {
            best = n.clone();
        }
    }
    Ok(dec_value((*best).clone()))
}

fn max(rt: &mut Runtime, a: &[Value]) -> R {
    extreme(rt, a, "list.Max", Ordering::Greater)
}

fn min(rt: &mut Runtime, a: &[Value]) -> R {
    extreme(rt, a, "list.Min", Ordering::Less)
}

fn product(rt: &mut Runtime, a: &[Value]) -> R {
    let x = numbers(rt, a, "list.Product")?;
    let mut p = Num::from_i64(1);
    for n in &x {
        p = p.checked_mul(n).map_err(|e| Bottom::eval(e.to_string()))?;
    }
    Ok(dec_value_signed(p))
}

fn sum(rt: &mut Runtime, a: &[Value]) -> R {
    let x = numbers(rt, a, "list.Sum")?;
    let mut s = Num::from_i64(0);
    for n in &x {
        s = s.checked_add(n).map_err(|e| Bottom::eval(e.to_string()))?;
    }
    Ok(dec_value(s))
}

fn range(rt: &mut Runtime, a: &[Value]) -> R {
    let (start, _) = a_num(a, 0)?;
    let (limit, _) = a_num(a, 1)?;
    let (step, _) = a_num(a, 2)?;
    if step.is_zero() {
        return Err(Bottom::eval("step must be non zero"));
    }
    let up = step.sign() > 0;
    if up && start.cmp(&limit) == Ordering::Greater {
        return Err(Bottom::eval(
            "end must be greater than start when step is positive",
        ));
    }
    if !up && start.cmp(&limit) == Ordering::Less {
        return Err(Bottom::eval(
            "end must be less than start when step is negative",
        ));
    }
    let mut out = Vec::new();
    let mut cur: Num = (*start).clone();
    loop {
        let c = cur.cmp(&limit);
        if (up && c != Ordering::Less) || (!up && c != Ordering::Greater) {
            break;
        }
        if out.len() >= RANGE_LIMIT {
            return Err(Bottom::eval(format!(
                "range too large (more than {RANGE_LIMIT} elements)"
            )));
        }
        out.push(dec_value(cur.clone()));
        cur = cur.add(&step);
    }
    Ok(rt.make_list_values(out))
}

/// Compares two values with a comparator struct: unifies it with `{x: a, y: b}` and reads
/// `less`.
fn less(rt: &mut Runtime, cmp: &Value, x: &Value, y: &Value) -> Result<bool, Rc<Bottom>> {
    let Some(_nest) = super::Nesting::enter() else {
        return Err(Bottom::new(
            crate::eval::value::ErrCode::StructuralCycle,
            "structural cycle in comparator",
        ));
    };
    let xy = rt.make_struct(vec![("x".into(), x.clone()), ("y".into(), y.clone())]);
    let v = rt.unify_values(&[xy]);
    // The comparator's own conjuncts, so that `x` and `y` in `less` refer to the new fields.
    let conjs = match cmp {
        Value::Vertex(w) if !rt.v(*w).conjuncts.is_empty() => rt.v(*w).conjuncts.clone(),
        other => {
            let u = rt.unify_values(std::slice::from_ref(other));
            rt.v(u).conjuncts.clone()
        }
    };
    rt.vm(v).conjuncts.extend(conjs);
    rt.evaluate(v);
    let v = rt.default_of(v);
    if let Some(e) = rt.v(v).err.clone() {
        return Err(e);
    }
    let l = rt.prog.labels.ident("less");
    let Some(la) = rt.arc(v, l) else {
        return Err(Bottom::eval("comparator has no field less"));
    };
    let lv = rt.value_of(la);
    match rt.concrete(lv)? {
        Value::Bool(b) => Ok(b),
        other => Err(Bottom::eval(format!(
            "less: cannot use {} as bool",
            rt.value_text(&other)
        ))),
    }
}

/// A fallible "less than".
type Less<'a> = dyn FnMut(&Value, &Value) -> Result<bool, Rc<Bottom>> + 'a;

/// A stable merge sort with a fallible comparison.
fn merge_sort(items: Vec<Value>, lt: &mut Less<'_>) -> Result<Vec<Value>, Rc<Bottom>> {
    if items.len() <= 1 {
        return Ok(items);
    }
    let mut v = items;
    let right = v.split_off(v.len() / 2);
    let l = merge_sort(v, lt)?;
    let r = merge_sort(right, lt)?;
    let mut out = Vec::with_capacity(l.len() + r.len());
    let (mut i, mut j) = (0, 0);
    while i < l.len() && j < r.len() {
        // Take from the right only when it is strictly less: stable.
        if lt(&r[j], &l[i])? {
            out.push(r[j].clone());
            j += 1;
        } else {
            out.push(l[i].clone());
            i += 1;
        }
    }
    out.extend_from_slice(&l[i..]);
    out.extend_from_slice(&r[j..]);
    Ok(out)
}

fn sort(rt: &mut Runtime, a: &[Value]) -> R {
    let x = items(rt, a, "list.Sort")?;
    let cmp = a[1].clone();
    let sorted = merge_sort(x, &mut |p, q| less(rt, &cmp, p, q))?;
    Ok(rt.make_list_values(sorted))
}

fn is_sorted(rt: &mut Runtime, a: &[Value]) -> R {
    let x = items(rt, a, "list.IsSorted")?;
    for w in x.windows(2) {
        if less(rt, &a[1], &w[1], &w[0])? {
            return Ok(Value::Bool(false));
        }
    }
    Ok(Value::Bool(true))
}

fn sort_strings(rt: &mut Runtime, a: &[Value]) -> R {
    let mut x = rt.list_strings(&a[0], "list.SortStrings")?;
    x.sort_by(|p, q| p.as_bytes().cmp(q.as_bytes()));
    let v = x.into_iter().map(Value::Str).collect();
    Ok(rt.make_list_values(v))
}

fn is_sorted_strings(rt: &mut Runtime, a: &[Value]) -> R {
    let x = rt.list_strings(&a[0], "list.IsSortedStrings")?;
    Ok(Value::Bool(x.windows(2).all(|w| w[0] <= w[1])))
}

fn match_n(rt: &mut Runtime, a: &[Value]) -> R {
    let (elems, _) = list_of(rt, &a[0])?;
    let schema = a[2].clone();
    let mut count = 0i64;
    for &e in &elems {
        if rt.matches_schema(&Value::Vertex(e), &schema) {
            count += 1;
        }
    }
    let n = Value::int(count);
    let ok = match &a[1] {
        Value::Num(..) => crate::eval::expr::scalar_eq(&a[1], &n),
        c => rt.matches_schema(&n, c),
    };
    if ok {
        return Ok(Value::Bool(true));
    }
    Err(validation_fail(
        format!(
            "{} matches {} list items, want {}",
            rt.value_text(&schema),
            count,
            rt.value_text(&a[1])
        ),
        false,
    ))
}

/// The regular fields of a struct argument and whether the struct is closed.
fn struct_fields(rt: &mut Runtime, v: &Value) -> Result<(i64, bool), Rc<Bottom>> {
    let Value::Vertex(w) = v else {
        return Err(Bottom::eval(format!(
            "cannot use value {} (type {}) as struct",
            rt.value_text(v),
            v.kind().name()
        )));
    };
    let w = rt.default_of(*w);
    rt.evaluate(w);
    let vx = rt.v(w);
    let n = vx
        .arcs
        .iter()
        .filter(|&&x| {
            let ax = rt.v(x);
            ax.label.is_regular() && ax.arc_type == ArcType::Member
        })
        .count() as i64;
    let closed = !vx.closed_groups.is_empty();
    Ok((n, closed))
}

fn min_fields(rt: &mut Runtime, a: &[Value]) -> R {
    let (c, closed) = struct_fields(rt, &a[0])?;
    let n = a_int(a, 1)?;
    if c >= n {
        return Ok(Value::Bool(true));
    }
    Err(validation_fail(
        format!("len(fields) < MinFields({n}) ({c} < {n})"),
        !closed,
    ))
}

fn max_fields(rt: &mut Runtime, a: &[Value]) -> R {
    let (c, _) = struct_fields(rt, &a[0])?;
    let n = a_int(a, 1)?;
    if c <= n {
        return Ok(Value::Bool(true));
    }
    Err(validation_fail(
        format!("len(fields) > MaxFields({n}) ({c} > {n})"),
        false,
    ))
}
