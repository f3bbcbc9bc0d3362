//! The `strings` package: Go's `strings` functions over CUE strings (byte offsets, as Go),
//! plus CUE's own `ByteAt`, `ByteSlice`, `Runes`, `MinRunes`, `MaxRunes`, `ToTitle`, `ToCamel`
//! and `SliceRunes`.

use std::rc::Rc;

use super::k::*;
use super::{R, Runtime, StdMember, a_bytes, a_int, a_str, bytes, func, int, string, valid};
use crate::eval::value::{Bottom, Value};

/// The largest result `strings.Repeat` builds, as CUE limits it.
pub(super) const REPEAT_LIMIT: i64 = 1_000_000;

pub(super) static MEMBERS: &[StdMember] = &[
    func("strings.ByteAt", &[B, I], byte_at),
    func("strings.ByteSlice", &[B, I, I], byte_slice),
    func("strings.Runes", &[S], runes),
    func("strings.Repeat", &[S, I], repeat),
    valid("strings.MinRunes", &[S, I], min_runes),
    valid("strings.MaxRunes", &[S, I], max_runes),
    func("strings.ToTitle", &[S], to_title),
    func("strings.ToCamel", &[S], to_camel),
    func("strings.SliceRunes", &[S, I, I], slice_runes),
    func("strings.Compare", &[S, S], compare),
    func("strings.Count", &[S, S], count),
    valid("strings.Contains", &[S, S], contains),
    valid("strings.ContainsAny", &[S, S], contains_any),
    func("strings.LastIndex", &[S, S], last_index),
    func("strings.IndexAny", &[S, S], index_any),
    func("strings.LastIndexAny", &[S, S], last_index_any),
    func("strings.SplitN", &[S, S, I], split_n),
    func("strings.SplitAfterN", &[S, S, I], split_after_n),
    func("strings.Split", &[S, S], split),
    func("strings.SplitAfter", &[S, S], split_after),
    func("strings.Fields", &[S], fields),
    func("strings.Join", &[L, S], join),
    valid("strings.HasPrefix", &[S, S], has_prefix),
    valid("strings.HasSuffix", &[S, S], has_suffix),
    func("strings.ToUpper", &[S], to_upper),
    func("strings.ToLower", &[S], to_lower),
    func("strings.Trim", &[S, S], trim),
    func("strings.TrimLeft", &[S, S], trim_left),
    func("strings.TrimRight", &[S, S], trim_right),
    func("strings.TrimSpace", &[S], trim_space),
    func("strings.TrimPrefix", &[S, S], trim_prefix),
    func("strings.TrimSuffix", &[S, S], trim_suffix),
    func("strings.Replace", &[S, S, S, I], replace),
    func("strings.Index", &[S, S], index),
];

fn byte_at(_: &mut Runtime, a: &[Value]) -> R {
    let b = a_bytes(a, 0)?;
    let i = a_int(a, 1)?;
    if i < 0 || i as usize >= b.len() {
        return Err(Bottom::eval("index out of range"));
    }
    int(i64::from(b[i as usize]))
}

fn byte_slice(_: &mut Runtime, a: &[Value]) -> R {
    let b = a_bytes(a, 0)?;
    let (start, end) = (a_int(a, 1)?, a_int(a, 2)?);
    if start < 0 || start > end || end as usize > b.len() {
        return Err(Bottom::eval("index out of range"));
    }
    bytes(b[start as usize..end as usize].to_vec())
}

fn runes(rt: &mut Runtime, a: &[Value]) -> R {
    let s = a_str(a, 0)?;
    let v = s
        .chars()
        .map(|c| Value::int(i64::from(u32::from(c))))
        .collect();
    Ok(rt.make_list_values(v))
}

fn repeat(_: &mut Runtime, a: &[Value]) -> R {
    let s = a_str(a, 0)?;
    let n = a_int(a, 1)?;
    if n < 0 {
        return Err(Bottom::eval("strings: negative Repeat count"));
    }
    if n > REPEAT_LIMIT {
        return Err(Bottom::eval(format!(
            "count {n} exceeds limit of {REPEAT_LIMIT}"
        )));
    }
    if (s.len() as u128) * (n as u128) > 1 << 30 {
        return Err(Bottom::eval("strings: Repeat output length overflow"));
    }
    string(s.repeat(n as usize))
}

fn min_runes(_: &mut Runtime, a: &[Value]) -> R {
    Ok(Value::Bool(
        a_str(a, 0)?.chars().count() as i64 >= a_int(a, 1)?,
    ))
}

fn max_runes(_: &mut Runtime, a: &[Value]) -> R {
    Ok(Value::Bool(
        a_str(a, 0)?.chars().count() as i64 <= a_int(a, 1)?,
    ))
}

/// Go's `unicode.ToUpper` (simple case mapping: one rune to one rune).
pub(super) fn upper(c: char) -> char {
    let mut u = c.to_uppercase();
    match (u.next(), u.next()) {
        (Some(x), None) => x,
        _ => c,
    }
}

/// Go's `unicode.ToLower` (simple case mapping).
pub(super) fn lower(c: char) -> char {
    let mut u = c.to_lowercase();
    match (u.next(), u.next()) {
        (Some(x), None) => x,
        _ => c,
    }
}

/// Go's `unicode.ToTitle`: the title case of a rune (upper case for all but a few digraphs).
fn title(c: char) -> char {
    match c {
        'Ǆ' | 'ǅ' | 'ǆ' => 'ǅ',
        'Ǉ' | 'ǈ' | 'ǉ' => 'ǈ',
        'Ǌ' | 'ǋ' | 'ǌ' => 'ǋ',
        'Ǳ' | 'ǲ' | 'ǳ' => 'ǲ',
        _ => upper(c),
    }
}

/// Go's `unicode.IsSpace`.
pub(super) fn is_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{b}' | '\u{c}' | '\r' | ' ' | '\u{85}' | '\u{a0}'
    ) || (c as u32 > 0xff && c.is_whitespace())
}

fn map_word_starts(s: &str, f: fn(char) -> char) -> String {
    let mut prev = ' ';
    s.chars()
        .map(|c| {
            let r = if is_space(prev) { f(c) } else { c };
            prev = c;
            r
        })
        .collect()
}

fn to_title(_: &mut Runtime, a: &[Value]) -> R {
    string(map_word_starts(&a_str(a, 0)?, title))
}

fn to_camel(_: &mut Runtime, a: &[Value]) -> R {
    string(map_word_starts(&a_str(a, 0)?, lower))
}

fn slice_runes(_: &mut Runtime, a: &[Value]) -> R {
    let s = a_str(a, 0)?;
    let (start, end) = (a_int(a, 1)?, a_int(a, 2)?);
    let runes: Vec<char> = s.chars().collect();
    if start < 0 || start > end || end as usize > runes.len() {
        return Err(Bottom::eval("index out of range"));
    }
    string(
        runes[start as usize..end as usize]
            .iter()
            .collect::<String>(),
    )
}

fn compare(_: &mut Runtime, a: &[Value]) -> R {
    int(match a_str(a, 0)?.as_bytes().cmp(a_str(a, 1)?.as_bytes()) {
        std::cmp::Ordering::Less => -1,
        std::cmp::Ordering::Equal => 0,
        std::cmp::Ordering::Greater => 1,
    })
}

fn count(_: &mut Runtime, a: &[Value]) -> R {
    let (s, sub) = (a_str(a, 0)?, a_str(a, 1)?);
    if sub.is_empty() {
        return int(s.chars().count() as i64 + 1);
    }
    int(s.matches(&*sub).count() as i64)
}

fn contains(_: &mut Runtime, a: &[Value]) -> R {
    Ok(Value::Bool(a_str(a, 0)?.contains(&*a_str(a, 1)?)))
}

fn contains_any(_: &mut Runtime, a: &[Value]) -> R {
    let chars = a_str(a, 1)?;
    Ok(Value::Bool(a_str(a, 0)?.chars().any(|c| chars.contains(c))))
}

fn idx(i: Option<usize>) -> R {
    int(i.map(|i| i as i64).unwrap_or(-1))
}

fn index(_: &mut Runtime, a: &[Value]) -> R {
    idx(a_str(a, 0)?.find(&*a_str(a, 1)?))
}

fn last_index(_: &mut Runtime, a: &[Value]) -> R {
    idx(a_str(a, 0)?.rfind(&*a_str(a, 1)?))
}

fn index_any(_: &mut Runtime, a: &[Value]) -> R {
    let chars = a_str(a, 1)?;
    idx(a_str(a, 0)?.find(|c| chars.contains(c)))
}

fn last_index_any(_: &mut Runtime, a: &[Value]) -> R {
    let chars = a_str(a, 1)?;
    idx(a_str(a, 0)?.rfind(|c| chars.contains(c)))
}

/// Go's `genSplit`: splits `s` after each `sep` keeping `keep` bytes of it, at most `n` parts
/// (`n < 0`: all).
fn gen_split(s: &str, sep: &str, keep: usize, n: i64) -> Vec<String> {
    if n == 0 {
        return Vec::new();
    }
    if sep.is_empty() {
        // Explode into runes, the last part holding the rest.
        let chars: Vec<(usize, char)> = s.char_indices().collect();
        let limit = if n < 0 || n as usize > chars.len() {
            chars.len()
        } else {
            n as usize
        };
        let mut out = Vec::with_capacity(limit);
        for (i, &(off, c)) in chars.iter().enumerate().take(limit) {
            if i + 1 == limit {
                out.push(s[off..].to_string());
            } else {
                out.push(c.to_string());
            }
        }
        return out;
    }
    let mut out = Vec::new();
    let mut rest = s;
    while n < 0 || (out.len() as i64) < n - 1 {
        match rest.find(sep) {
            Some(i) => {
                out.push(rest[..i + keep].to_string());
                rest = &rest[i + sep.len()..];
            }
            None => break,
        }
    }
    out.push(rest.to_string());
    out
}

fn str_list(rt: &mut Runtime, parts: Vec<String>) -> R {
    let v = parts.into_iter().map(|p| Value::Str(Rc::from(p))).collect();
    Ok(rt.make_list_values(v))
}

fn split(rt: &mut Runtime, a: &[Value]) -> R {
    let parts = gen_split(&a_str(a, 0)?, &a_str(a, 1)?, 0, -1);
    str_list(rt, parts)
}

fn split_after(rt: &mut Runtime, a: &[Value]) -> R {
    let sep = a_str(a, 1)?;
    let parts = gen_split(&a_str(a, 0)?, &sep, sep.len(), -1);
    str_list(rt, parts)
}

fn split_n(rt: &mut Runtime, a: &[Value]) -> R {
    let parts = gen_split(&a_str(a, 0)?, &a_str(a, 1)?, 0, a_int(a, 2)?);
    str_list(rt, parts)
}

fn split_after_n(rt: &mut Runtime, a: &[Value]) -> R {
    let sep = a_str(a, 1)?;
    let parts = gen_split(&a_str(a, 0)?, &sep, sep.len(), a_int(a, 2)?);
    str_list(rt, parts)
}

fn fields(rt: &mut Runtime, a: &[Value]) -> R {
    let parts = a_str(a, 0)?
        .split(is_space)
        .filter(|p| !p.is_empty())
        .map(str::to_string)
        .collect();
    str_list(rt, parts)
}

fn join(rt: &mut Runtime, a: &[Value]) -> R {
    let items = rt.list_strings(&a[0], "strings.Join")?;
    let sep = a_str(a, 1)?;
    let total: usize = items.iter().map(|s| s.len() + sep.len()).sum();
    if total > 1 << 30 {
        return Err(Bottom::eval("strings: Join output too large"));
    }
    let parts: Vec<&str> = items.iter().map(|s| &**s).collect();
    string(parts.join(&sep))
}

fn has_prefix(_: &mut Runtime, a: &[Value]) -> R {
    Ok(Value::Bool(a_str(a, 0)?.starts_with(&*a_str(a, 1)?)))
}

fn has_suffix(_: &mut Runtime, a: &[Value]) -> R {
    Ok(Value::Bool(a_str(a, 0)?.ends_with(&*a_str(a, 1)?)))
}

fn to_upper(_: &mut Runtime, a: &[Value]) -> R {
    string(a_str(a, 0)?.chars().map(upper).collect::<String>())
}

fn to_lower(_: &mut Runtime, a: &[Value]) -> R {
    string(a_str(a, 0)?.chars().map(lower).collect::<String>())
}

fn trim(_: &mut Runtime, a: &[Value]) -> R {
    let cut = a_str(a, 1)?;
    string(a_str(a, 0)?.trim_matches(|c| cut.contains(c)))
}

fn trim_left(_: &mut Runtime, a: &[Value]) -> R {
    let cut = a_str(a, 1)?;
    string(a_str(a, 0)?.trim_start_matches(|c| cut.contains(c)))
}

fn trim_right(_: &mut Runtime, a: &[Value]) -> R {
    let cut = a_str(a, 1)?;
    string(a_str(a, 0)?.trim_end_matches(|c| cut.contains(c)))
}

fn trim_space(_: &mut Runtime, a: &[Value]) -> R {
    string(a_str(a, 0)?.trim_matches(is_space))
}

fn trim_prefix(_: &mut Runtime, a: &[Value]) -> R {
    let (s, p) = (a_str(a, 0)?, a_str(a, 1)?);
    string(s.strip_prefix(&*p).unwrap_or(&s))
}

fn trim_suffix(_: &mut Runtime, a: &[Value]) -> R {
    let (s, p) = (a_str(a, 0)?, a_str(a, 1)?);
    string(s.strip_suffix(&*p).unwrap_or(&s))
}

/// Go's `strings.Replace`: an empty `old` matches before every rune and at the end.
pub(super) fn go_replace(s: &str, old: &str, new: &str, n: i64) -> String {
    if old == new || n == 0 {
        return s.to_string();
    }
    if old.is_empty() {
        let mut out = String::new();
        let mut done = 0i64;
        for c in s.chars() {
            if n < 0 || done < n {
                out.push_str(new);
                done += 1;
            }
            out.push(c);
        }
        if n < 0 || done < n {
            out.push_str(new);
        }
        return out;
    }
    if n < 0 {
        s.replace(old, new)
    } else {
        s.replacen(old, new, n as usize)
    }
}

fn replace(_: &mut Runtime, a: &[Value]) -> R {
    let (s, old, new) = (a_str(a, 0)?, a_str(a, 1)?, a_str(a, 2)?);
    let n = a_int(a, 3)?;
    let matches = if old.is_empty() {
        s.chars().count() + 1
    } else {
        s.matches(&*old).count()
    };
    if (s.len() as u128) + (matches as u128) * (new.len() as u128) > 1 << 30 {
        return Err(Bottom::eval("strings: Replace output too large"));
    }
    string(go_replace(&s, &old, &new, n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_like_go() {
        assert_eq!(gen_split("a,b,c", ",", 0, -1), ["a", "b", "c"]);
        assert_eq!(gen_split("a,b,c", ",", 0, 2), ["a", "b,c"]);
        assert_eq!(gen_split("a,b,c", ",", 1, -1), ["a,", "b,", "c"]);
        assert_eq!(gen_split("abc", "", 0, 2), ["a", "bc"]);
        assert!(gen_split("abc", ",", 0, 0).is_empty());
    }

    #[test]
    fn replace_like_go() {
        assert_eq!(go_replace("ab", "", "-", -1), "-a-b-");
        assert_eq!(go_replace("aaa", "a", "b", 2), "bba");
    }

    #[test]
    fn title_and_camel() {
        assert_eq!(map_word_starts("alpha beta", title), "Alpha Beta");
        assert_eq!(map_word_starts("AlphaBeta", lower), "alphaBeta");
    }
}
