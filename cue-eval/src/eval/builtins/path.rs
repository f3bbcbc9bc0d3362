//! The `path` package for slash-separated paths (`path.Unix`, and `path.Plan9`, which shares
//! its rules): `Join`, `Clean`, `Split`, `Base`, `Dir`, `Ext`, `IsAbs`, with Go's `path`
//! semantics. The OS argument may be left out (it defaults to `path.Unix`, as in CUE);
//! Windows rules (volume names, `\`) are not implemented yet and are reported as such.

use std::rc::Rc;

use super::k::*;
use super::{R, Runtime, StdMember, a_str, constant, func, string};
use crate::eval::value::{Bottom, Value};

pub(super) static MEMBERS: &[StdMember] = &[
    constant("path.Unix", |_| Value::Str(Rc::from("unix"))),
    constant("path.Windows", |_| Value::Str(Rc::from("windows"))),
    constant("path.Plan9", |_| Value::Str(Rc::from("plan9"))),
    func("path.Join", &[L, S], join),
    func("path.Clean", &[S, S], |_, a| {
        os(a, 1)?;
        string(clean(&a_str(a, 0)?))
    }),
    func("path.Base", &[S, S], |_, a| {
        os(a, 1)?;
        string(base(&a_str(a, 0)?))
    }),
    func("path.Dir", &[S, S], |_, a| {
        os(a, 1)?;
        let p = a_str(a, 0)?;
        let i = p.rfind('/').map(|i| i + 1).unwrap_or(0);
        string(clean(&p[..i]))
    }),
    func("path.Ext", &[S, S], |_, a| {
        os(a, 1)?;
        let p = a_str(a, 0)?;
        let ext = p
            .rfind(['.', '/'])
            .filter(|&i| p.as_bytes()[i] == b'.')
            .map(|i| &p[i..])
            .unwrap_or("");
        string(ext)
    }),
    func("path.IsAbs", &[S, S], |_, a| {
        os(a, 1)?;
        Ok(Value::Bool(a_str(a, 0)?.starts_with('/')))
    }),
    func("path.Split", &[S, S], |rt, a| {
        os(a, 1)?;
        let p = a_str(a, 0)?;
        let i = p.rfind('/').map(|i| i + 1).unwrap_or(0);
        let v = vec![Value::Str(Rc::from(&p[..i])), Value::Str(Rc::from(&p[i..]))];
        Ok(rt.make_list_values(v))
    }),
];

/// The names of members whose last parameter (the OS) may be left out.
pub(super) fn has_default_os(name: &str) -> bool {
    name.starts_with("path.") && !matches!(name, "path.Unix" | "path.Windows" | "path.Plan9")
}

fn os(a: &[Value], i: usize) -> Result<(), Rc<Bottom>> {
    match a_str(a, i)?.as_ref() {
        "unix" | "plan9" => Ok(()),
        "windows" => Err(Bottom::eval("windows paths are not supported yet")),
        other => Err(Bottom::eval(format!("unsupported OS {other:?}"))),
    }
}

fn join(rt: &mut Runtime, a: &[Value]) -> R {
    os(a, 1)?;
    let parts = rt.list_strings(&a[0], "path.Join")?;
    let nonempty: Vec<&str> = parts
        .iter()
        .map(|s| &**s)
        .filter(|s| !s.is_empty())
        .collect();
    if nonempty.is_empty() {
        return string("");
    }
    string(clean(&nonempty.join("/")))
}

/// Go's `path.Clean`.
pub(super) fn clean(p: &str) -> String {
    if p.is_empty() {
        return ".".into();
    }
    let rooted = p.starts_with('/');
    let mut out: Vec<&str> = Vec::new();
    for part in p.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if out.last().is_some_and(|l| *l != "..") {
                    out.pop();
                } else if !rooted {
                    out.push("..");
                }
            }
            s => out.push(s),
        }
    }
    let body = out.join("/");
    match (rooted, body.is_empty()) {
        (true, _) => format!("/{body}"),
        (false, true) => ".".into(),
        (false, false) => body,
    }
}

fn base(p: &str) -> String {
    if p.is_empty() {
        return ".".into();
    }
    let t = p.trim_end_matches('/');
    if t.is_empty() {
        return "/".into();
    }
    t.rsplit('/').next().unwrap_or(t).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clean_like_go() {
        assert_eq!(clean("a//b/./c/.."), "a/b");
        assert_eq!(clean("/../a"), "/a");
        assert_eq!(clean("../../a"), "../../a");
        assert_eq!(clean(""), ".");
        assert_eq!(base("/a/b/"), "b");
    }
}
