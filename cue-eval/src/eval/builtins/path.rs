//! The `path` package: CUE's `pkg/path`, which ports Go's `path/filepath` with the operating
//! system as an argument. Members: `Base`, `Clean`, `Dir`, `Ext`, `FromSlash`, `ToSlash`,
//! `IsAbs`, `Join`, `Match`, `Rel`, `Resolve`, `Split`, `SplitList`, `VolumeName` and the
//! constants `Unix`, `Windows` and `Plan9`.
//!
//! The OS argument accepts every Go `GOOS` name; all but `windows` and `plan9` follow the Unix
//! rules. It may be left out where CUE gives it a default: `unix`, except for `VolumeName`
//! (`windows`); `SplitList`, `ToSlash` and `FromSlash` require it. Windows rules: both `\` and
//! `/` separate elements (`\` is the one written), paths may start with a volume name (`c:`,
//! UNC `\\host\share`), a few device names (`NUL`, `COM1`, ...) are absolute, names compare
//! case-insensitively in `Rel`, and `\` is no escape character in `Match` patterns.

use std::rc::Rc;

use super::k::*;
use super::{Runtime, StdMember, a_str, constant, func, string};
use crate::eval::value::{Bottom, Value};

/// The OS argument `a[i]` of member `name`; a bad one makes the call's value an error.
macro_rules! os {
    ($rt:expr, $name:literal, $a:expr, $i:literal) => {
        match os_arg($rt, $name, $a, $i)? {
            Ok(os) => os,
            Err(bad) => return Ok(bad),
        }
    };
}

pub(super) static MEMBERS: &[StdMember] = &[
    constant("path.Unix", |_| Value::Str(Rc::from("unix"))),
    constant("path.Windows", |_| Value::Str(Rc::from("windows"))),
    constant("path.Plan9", |_| Value::Str(Rc::from("plan9"))),
    func("path.Join", &[L, S], |rt, a| {
        let os = os!(rt, "path.Join", a, 1);
        let elems = rt.list_strings(&a[0], "path.Join")?;
        let elems: Vec<&str> = elems.iter().map(|s| &**s).collect();
        string(os.join(&elems))
    }),
    func("path.Split", &[S, S], |rt, a| {
        let os = os!(rt, "path.Split", a, 1);
        let p = a_str(a, 0)?;
        let (dir, file) = os.split(&p);
        let v = vec![Value::Str(Rc::from(dir)), Value::Str(Rc::from(file))];
        Ok(rt.make_list_values(v))
    }),
    func("path.SplitList", &[S, S], |rt, a| {
        let os = os!(rt, "path.SplitList", a, 1);
        let parts = os.split_list(&a_str(a, 0)?);
        let v = parts.into_iter().map(|s| Value::Str(Rc::from(s))).collect();
        Ok(rt.make_list_values(v))
    }),
    func("path.Match", &[S, S, S], |rt, a| {
        let os = os!(rt, "path.Match", a, 2);
        match os.matches(&a_str(a, 0)?, &a_str(a, 1)?) {
            Ok(b) => Ok(Value::Bool(b)),
            Err(BadPattern) => Err(Bottom::eval(BAD_PATTERN)),
        }
    }),
    func("path.Clean", &[S, S], |rt, a| {
        let os = os!(rt, "path.Clean", a, 1);
        string(os.clean(&a_str(a, 0)?))
    }),
    func("path.ToSlash", &[S, S], |rt, a| {
        let os = os!(rt, "path.ToSlash", a, 1);
        string(os.seps_to_slash(&a_str(a, 0)?))
    }),
    func("path.FromSlash", &[S, S], |rt, a| {
        let os = os!(rt, "path.FromSlash", a, 1);
        string(os.slashes_to_sep(&a_str(a, 0)?))
    }),
    func("path.Ext", &[S, S], |rt, a| {
        let os = os!(rt, "path.Ext", a, 1);
        string(os.ext(&a_str(a, 0)?))
    }),
    func("path.Resolve", &[S, S, S], |rt, a| {
        let os = os!(rt, "path.Resolve", a, 2);
        string(os.resolve(&a_str(a, 0)?, &a_str(a, 1)?))
    }),
    func("path.Rel", &[S, S, S], |rt, a| {
        let os = os!(rt, "path.Rel", a, 2);
        os.rel(&a_str(a, 0)?, &a_str(a, 1)?)
            .map(|s| Value::Str(Rc::from(s)))
            .map_err(Bottom::eval)
    }),
    func("path.Base", &[S, S], |rt, a| {
        let os = os!(rt, "path.Base", a, 1);
        string(os.base(&a_str(a, 0)?))
    }),
    func("path.Dir", &[S, S], |rt, a| {
        let os = os!(rt, "path.Dir", a, 1);
        string(os.dir(&a_str(a, 0)?))
    }),
    func("path.IsAbs", &[S, S], |rt, a| {
        let os = os!(rt, "path.IsAbs", a, 1);
        Ok(Value::Bool(os.is_abs(&a_str(a, 0)?)))
    }),
    func("path.VolumeName", &[S, S], |rt, a| {
        let os = os!(rt, "path.VolumeName", a, 1);
        string(os.volume_name(&a_str(a, 0)?))
    }),
];

/// The OS a member uses when its last argument is left out, if it has a default.
pub(super) fn default_os(name: &str) -> Option<&'static str> {
    match name {
        "path.Unix" | "path.Windows" | "path.Plan9" => None,
        "path.SplitList" | "path.ToSlash" | "path.FromSlash" => None,
        "path.VolumeName" => Some("windows"),
        n if n.starts_with("path.") => Some("unix"),
        _ => None,
    }
}

/// `GOOS` names other than `windows` and `plan9`: they all follow the Unix rules.
const UNIX_LIKE: &[&str] = &[
    "aix",
    "android",
    "darwin",
    "dragonfly",
    "freebsd",
    "hurd",
    "illumos",
    "ios",
    "js",
    "linux",
    "nacl",
    "netbsd",
    "openbsd",
    "solaris",
    "zos",
];

/// The OS argument `a[i]` of `name`. A name outside CUE's list is reported as CUE does, as
/// a failed unification with the parameter's disjunction: that error is a value
/// (`Ok(Err(bottom))`), returned as the call's value so it is not wrapped in `error in call to`.
fn os_arg(
    rt: &Runtime,
    name: &str,
    a: &[Value],
    i: usize,
) -> Result<Result<Os, Value>, Rc<Bottom>> {
    let s = a_str(a, i)?;
    if let Some(os) = Os::parse(&s) {
        return Ok(Ok(os));
    }
    let names = ["unix", "windows", "plan9"].iter().chain(UNIX_LIKE);
    let mut alts: Vec<String> = names.map(|n| format!("{n:?}")).collect();
    if let Some(d) = default_os(name) {
        let at = alts
            .iter()
            .position(|s| s[1..s.len() - 1] == *d)
            .unwrap_or(0);
        let def = alts.remove(at);
        alts.insert(0, format!("*{def}"));
    }
    Ok(Err(Value::Bottom(Bottom::eval(format!(
        "cannot use {} as {} in argument {} to {}",
        rt.value_text(&a[i]),
        alts.join(" | "),
        i + 1,
        name
    )))))
}

/// The message of Go's `ErrBadPattern`.
const BAD_PATTERN: &str = "syntax error in pattern";

/// A malformed `Match` pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct BadPattern;

/// Which rules a path follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Os {
    Unix,
    Windows,
    Plan9,
}

/// Windows device names that are absolute paths on their own.
const RESERVED_NAMES: &[&str] = &[
    "CON", "PRN", "AUX", "NUL", "COM1", "COM2", "COM3", "COM4", "COM5", "COM6", "COM7", "COM8",
    "COM9", "LPT1", "LPT2", "LPT3", "LPT4", "LPT5", "LPT6", "LPT7", "LPT8", "LPT9",
];

fn is_slash(b: u8) -> bool {
    b == b'\\' || b == b'/'
}

impl Os {
    fn parse(s: &str) -> Option<Os> {
        match s {
            "unix" => Some(Os::Unix),
            "windows" => Some(Os::Windows),
            "plan9" => Some(Os::Plan9),
            s if UNIX_LIKE.contains(&s) => Some(Os::Unix),
            _ => None,
        }
    }

    /// The separator written between elements.
    fn sep(self) -> u8 {
        match self {
            Os::Windows => b'\\',
            Os::Unix | Os::Plan9 => b'/',
        }
    }

    fn is_sep(self, b: u8) -> bool {
        match self {
            Os::Windows => is_slash(b),
            Os::Unix | Os::Plan9 => b == b'/',
        }
    }

    /// The length of the leading volume name (Windows only): `c:` or UNC `\\host\share`.
    fn volume_len(self, path: &str) -> usize {
        if self != Os::Windows {
            return 0;
        }
        let p = path.as_bytes();
        let l = p.len();
        if l < 2 {
            return 0;
        }
        if p[1] == b':' && p[0].is_ascii_alphabetic() {
            return 2;
        }
        // UNC: two separators, a host name, one separator, a share name.
        if l >= 5 && is_slash(p[0]) && is_slash(p[1]) && !is_slash(p[2]) && p[2] != b'.' {
            let mut n = 3;
            while n < l - 1 {
                if is_slash(p[n]) {
                    n += 1;
                    if is_slash(p[n]) || p[n] == b'.' {
                        return 0;
                    }
                    while n < l && !is_slash(p[n]) {
                        n += 1;
                    }
                    return n;
                }
                n += 1;
            }
        }
        0
    }

    fn volume_name(self, path: &str) -> String {
        path[..self.volume_len(path)].to_string()
    }

    fn is_abs(self, path: &str) -> bool {
        match self {
            Os::Unix => path.starts_with('/'),
            Os::Plan9 => path.starts_with('/') || path.starts_with('#'),
            Os::Windows => {
                if RESERVED_NAMES.iter().any(|r| r.eq_ignore_ascii_case(path)) {
                    return true;
                }
                let l = self.volume_len(path);
                l > 0 && path.as_bytes().get(l).is_some_and(|&b| is_slash(b))
            }
        }
    }

    /// Whether two path elements name the same thing (case-insensitive on Windows, like
    /// Go's `strings.EqualFold`).
    fn same_word(self, a: &str, b: &str) -> bool {
        if self != Os::Windows {
            return a == b;
        }
        a.chars().count() == b.chars().count()
            && a.chars().zip(b.chars()).all(|(x, y)| {
                x == y
                    || x.to_lowercase().eq(y.to_lowercase())
                    || x.to_uppercase().eq(y.to_uppercase())
            })
    }

    /// Go's `filepath.Clean`: the shortest equivalent path, by lexical processing, written
    /// with the OS separator.
    fn clean(self, path: &str) -> String {
        let vol_len = self.volume_len(path);
        let (vol, rest) = path.split_at(vol_len);
        let p = rest.as_bytes();
        if p.is_empty() {
            if vol_len > 1 && path.as_bytes()[1] != b':' {
                // A UNC volume alone.
                return self.slashes_to_sep(path);
            }
            return format!("{path}.");
        }
        let sep = self.sep();
        let rooted = self.is_sep(p[0]);
        let n = p.len();
        let mut out: Vec<u8> = Vec::with_capacity(n + 1);
        // `dotdot` is where `..` must stop: after the root or a leading `../..`.
        let (mut r, mut dotdot) = (0, 0);
        if rooted {
            out.push(sep);
            (r, dotdot) = (1, 1);
        }
        let ends_elem = |i: usize| i == n || self.is_sep(p[i]);
        while r < n {
            if self.is_sep(p[r]) || (p[r] == b'.' && ends_elem(r + 1)) {
                // An empty or `.` element.
                r += 1;
            } else if p[r] == b'.' && p.get(r + 1) == Some(&b'.') && ends_elem(r + 2) {
                r += 2;
                if out.len() > dotdot {
                    let mut w = out.len() - 1;
                    while w > dotdot && !self.is_sep(out[w]) {
                        w -= 1;
                    }
                    out.truncate(w);
                } else if !rooted {
                    if !out.is_empty() {
                        out.push(sep);
                    }
                    out.extend_from_slice(b"..");
                    dotdot = out.len();
                }
            } else {
                if out.len() != usize::from(rooted) {
                    out.push(sep);
                }
                while r < n && !self.is_sep(p[r]) {
                    out.push(p[r]);
                    r += 1;
                }
            }
        }
        if out.is_empty() {
            out.push(b'.');
        }
        // Whole elements were copied between ASCII separators: the bytes stay UTF-8.
        let body = String::from_utf8(out)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
        self.slashes_to_sep(&format!("{vol}{body}"))
    }

    fn seps_to_slash(self, path: &str) -> String {
        match self {
            Os::Windows => path.replace('\\', "/"),
            Os::Unix | Os::Plan9 => path.to_string(),
        }
    }

    fn slashes_to_sep(self, path: &str) -> String {
        match self {
            Os::Windows => path.replace('/', "\\"),
            Os::Unix | Os::Plan9 => path.to_string(),
        }
    }

    /// Splits a list of paths joined by the OS list separator (`:`, `;`, or NUL on Plan 9);
    /// on Windows a `;` inside double quotes does not split, and the quotes are removed.
    fn split_list(self, path: &str) -> Vec<String> {
        if path.is_empty() {
            return Vec::new();
        }
        match self {
            Os::Unix => path.split(':').map(str::to_string).collect(),
            Os::Plan9 => path.split('\0').map(str::to_string).collect(),
            Os::Windows => {
                let mut list = Vec::new();
                let (mut start, mut quoted) = (0, false);
                for (i, c) in path.char_indices() {
                    match c {
                        '"' => quoted = !quoted,
                        ';' if !quoted => {
                            list.push(path[start..i].replace('"', ""));
                            start = i + 1;
                        }
                        _ => {}
                    }
                }
                list.push(path[start..].replace('"', ""));
                list
            }
        }
    }

    /// The index just after the final separator (not inside the volume name).
    fn last_sep_end(self, path: &str) -> usize {
        let vol = self.volume_len(path);
        let p = path.as_bytes();
        let mut i = p.len();
        while i > vol && !self.is_sep(p[i - 1]) {
            i -= 1;
        }
        i
    }

    /// `[dir, file]`, split just after the final separator.
    fn split(self, path: &str) -> (String, String) {
        let (dir, file) = path.split_at(self.last_sep_end(path));
        (dir.to_string(), file.to_string())
    }

    /// Joins the elements with the separator, ignoring empty ones, and cleans the result; on
    /// Windows the result is a UNC path only if the first non-empty element is one.
    fn join(self, elems: &[&str]) -> String {
        let Some(first) = elems.iter().position(|e| !e.is_empty()) else {
            return String::new();
        };
        let elems = &elems[first..];
        let sep = char::from(self.sep()).to_string();
        if self != Os::Windows {
            return self.clean(&elems.join(&sep));
        }
        let e0 = elems[0];
        if e0.len() == 2 && e0.as_bytes()[1] == b':' {
            // A drive letter alone: the path stays relative to that drive's current directory.
            let rest: Vec<&str> = elems[1..]
                .iter()
                .copied()
                .skip_while(|e| e.is_empty())
                .collect();
            return self.clean(&format!("{e0}{}", rest.join(&sep)));
        }
        let p = self.clean(&elems.join(&sep));
        if !self.is_unc(&p) {
            return p;
        }
        let head = self.clean(e0);
        if self.is_unc(&head) {
            return p;
        }
        // Joining non-UNC elements must not make a UNC path.
        let tail = self.clean(&elems[1..].join(&sep));
        if head.ends_with('\\') {
            format!("{head}{tail}")
        } else {
            format!("{head}\\{tail}")
        }
    }

    fn is_unc(self, path: &str) -> bool {
        self.volume_len(path) > 2
    }

    /// The suffix from the final dot of the final element, or "".
    fn ext(self, path: &str) -> String {
        let p = path.as_bytes();
        let mut i = p.len();
        while i > 0 && !self.is_sep(p[i - 1]) {
            i -= 1;
            if p[i] == b'.' {
                return path[i..].to_string();
            }
        }
        String::new()
    }

    /// `sub` resolved against `dir`, cleaned: `sub` itself when it is absolute.
    fn resolve(self, dir: &str, sub: &str) -> String {
        if self.is_abs(sub) {
            return self.clean(sub);
        }
        let dir = self.clean(dir);
        self.join(&[&dir, sub])
    }

    /// A relative path that, joined to `base_path`, is lexically `targ_path`.
    fn rel(self, base_path: &str, targ_path: &str) -> Result<String, String> {
        let fail = || format!("Rel: can't make {targ_path} relative to {base_path}");
        let base_vol = &base_path[..self.volume_len(base_path)];
        let targ_vol = &targ_path[..self.volume_len(targ_path)];
        let base = self.clean(base_path);
        let targ = self.clean(targ_path);
        if self.same_word(&targ, &base) {
            return Ok(".".into());
        }
        let mut base = &base[base_vol.len()..];
        let targ = &targ[targ_vol.len()..];
        if base == "." {
            base = "";
        }
        // Not IsAbs: `\a` and `a` are both relative on Windows.
        let sep = self.sep();
        let base_slashed = base.as_bytes().first() == Some(&sep);
        let targ_slashed = targ.as_bytes().first() == Some(&sep);
        if base_slashed != targ_slashed || !self.same_word(base_vol, targ_vol) {
            return Err(fail());
        }
        let (b, t) = (base.as_bytes(), targ.as_bytes());
        let (bl, tl) = (b.len(), t.len());
        let (mut b0, mut bi, mut t0, mut ti) = (0, 0, 0, 0);
        // Move base[b0..bi] and targ[t0..ti] to the first elements that differ.
        loop {
            while bi < bl && b[bi] != sep {
                bi += 1;
            }
            while ti < tl && t[ti] != sep {
                ti += 1;
            }
            if !self.same_word(&targ[t0..ti], &base[b0..bi]) {
                break;
            }
            if bi < bl {
                bi += 1;
            }
            if ti < tl {
                ti += 1;
            }
            b0 = bi;
            t0 = ti;
        }
        if &base[b0..bi] == ".." {
            return Err(fail());
        }
        if b0 == bl {
            return Ok(targ[t0..].to_string());
        }
        // Base elements are left: go up before going down.
        let seps = b[b0..].iter().filter(|&&c| c == sep).count();
        let sep = char::from(sep);
        let mut out = String::from("..");
        for _ in 0..seps {
            out.push(sep);
            out.push_str("..");
        }
        if t0 != tl {
            out.push(sep);
            out.push_str(&targ[t0..]);
        }
        Ok(out)
    }

    /// The last element, trailing separators removed; "." for "", a separator for a path of
    /// separators only.
    fn base(self, path: &str) -> String {
        if path.is_empty() {
            return ".".into();
        }
        let p = path.trim_end_matches(|c: char| c.is_ascii() && self.is_sep(c as u8));
        let p = &p[self.volume_len(p)..];
        let p = &p[self.last_sep_end(p)..];
        if p.is_empty() {
            return char::from(self.sep()).to_string();
        }
        p.to_string()
    }

    /// All but the last element, cleaned.
    fn dir(self, path: &str) -> String {
        let vol_len = self.volume_len(path);
        let vol = &path[..vol_len];
        let dir = self.clean(&path[vol_len..self.last_sep_end(path)]);
        if dir == "." && vol_len > 2 {
            // A UNC volume.
            return vol.to_string();
        }
        format!("{vol}{dir}")
    }

    /// Go's `filepath.Match`: whether all of `name` matches the shell pattern. `*` and `?`
    /// do not match the separator; `\` escapes, except on Windows.
    fn matches(self, pattern: &str, name: &str) -> Result<bool, BadPattern> {
        let mut pattern = pattern.as_bytes();
        let mut name = name.as_bytes();
        let sep = self.sep();
        'pattern: while !pattern.is_empty() {
            let (star, chunk, rest) = self.scan_chunk(pattern);
            pattern = rest;
            if star && chunk.is_empty() {
                // A trailing `*` matches the rest unless it has a separator.
                return Ok(!name.contains(&sep));
            }
            match self.match_chunk(chunk, name) {
                Ok(Some(t)) if t.is_empty() || !pattern.is_empty() => {
                    name = t;
                    continue;
                }
                Err(e) => return Err(e),
                _ => {}
            }
            if star {
                // Skip i+1 bytes, never a separator.
                let mut i = 0;
                while i < name.len() && name[i] != sep {
                    match self.match_chunk(chunk, &name[i + 1..]) {
                        Ok(Some(t)) => {
                            // The last chunk must use up the name.
                            if pattern.is_empty() && !t.is_empty() {
                                i += 1;
                                continue;
                            }
                            name = t;
                            continue 'pattern;
                        }
                        Err(e) => return Err(e),
                        Ok(None) => {}
                    }
                    i += 1;
                }
            }
            // No match: still check that the rest of the pattern is well-formed.
            while !pattern.is_empty() {
                let (_, chunk, rest) = self.scan_chunk(pattern);
                pattern = rest;
                self.match_chunk(chunk, b"")?;
            }
            return Ok(false);
        }
        Ok(name.is_empty())
    }

    /// The next segment of a pattern: leading stars, then everything up to the next `*`
    /// outside a character class.
    fn scan_chunk(self, pattern: &[u8]) -> (bool, &[u8], &[u8]) {
        let stars = pattern.iter().take_while(|&&c| c == b'*').count();
        let pattern = &pattern[stars..];
        let mut in_range = false;
        let mut i = 0;
        while i < pattern.len() {
            match pattern[i] {
                // An escape skips the next byte; a bad trailing one is reported by
                // match_chunk.
                b'\\' if self != Os::Windows && i + 1 < pattern.len() => i += 1,
                b'[' => in_range = true,
                b']' => in_range = false,
                b'*' if !in_range => break,
                _ => {}
            }
            i += 1;
        }
        (stars > 0, &pattern[..i], &pattern[i..])
    }

    /// Whether `chunk` matches the start of `s`, and the rest of `s` if so. After a mismatch
    /// the chunk is still read to the end, to report a malformed pattern.
    fn match_chunk<'s>(
        self,
        mut chunk: &[u8],
        mut s: &'s [u8],
    ) -> Result<Option<&'s [u8]>, BadPattern> {
        let escapes = self != Os::Windows;
        let mut failed = false;
        while let Some(&c) = chunk.first() {
            if !failed && s.is_empty() {
                failed = true;
            }
            match c {
                b'[' => {
                    let mut r = 0u32;
                    if !failed {
                        let (ch, n) = decode_rune(s);
                        r = ch;
                        s = &s[n..];
                    }
                    chunk = &chunk[1..];
                    let negated = chunk.first() == Some(&b'^');
                    if negated {
                        chunk = &chunk[1..];
                    }
                    let mut matched = false;
                    let mut nrange = 0;
                    loop {
                        if chunk.first() == Some(&b']') && nrange > 0 {
                            chunk = &chunk[1..];
                            break;
                        }
                        let (lo, rest) = get_esc(chunk, escapes)?;
                        chunk = rest;
                        let mut hi = lo;
                        if chunk.first() == Some(&b'-') {
                            let (h, rest) = get_esc(&chunk[1..], escapes)?;
                            hi = h;
                            chunk = rest;
                        }
                        if lo <= r && r <= hi {
                            matched = true;
                        }
                        nrange += 1;
                    }
                    if matched == negated {
                        failed = true;
                    }
                }
                b'?' => {
                    if !failed {
                        if s[0] == self.sep() {
                            failed = true;
                        }
                        let (_, n) = decode_rune(s);
                        s = &s[n..];
                    }
                    chunk = &chunk[1..];
                }
                _ => {
                    if c == b'\\' && escapes {
                        chunk = &chunk[1..];
                        if chunk.is_empty() {
                            return Err(BadPattern);
                        }
                    }
                    if !failed {
                        if chunk[0] != s[0] {
                            failed = true;
                        }
                        s = &s[1..];
                    }
                    chunk = &chunk[1..];
                }
            }
        }
        Ok((!failed).then_some(s))
    }
}

/// A possibly escaped character of a character class, and the rest of the chunk.
fn get_esc(chunk: &[u8], escapes: bool) -> Result<(u32, &[u8]), BadPattern> {
    let mut chunk = chunk;
    match chunk.first() {
        None | Some(b'-') | Some(b']') => return Err(BadPattern),
        Some(b'\\') if escapes => {
            chunk = &chunk[1..];
            if chunk.is_empty() {
                return Err(BadPattern);
            }
        }
        _ => {}
    }
    let (r, n) = decode_rune(chunk);
    let rest = &chunk[n..];
    if (r == u32::from(char::REPLACEMENT_CHARACTER) && n == 1) || rest.is_empty() {
        return Err(BadPattern);
    }
    Ok((r, rest))
}

/// The first UTF-8 character of `s` and its length; U+FFFD and 1 for an invalid byte (the
/// matcher may resume inside a character, as Go's does).
fn decode_rune(s: &[u8]) -> (u32, usize) {
    for w in 1..=s.len().min(4) {
        if let Ok(t) = std::str::from_utf8(&s[..w])
            && let Some(c) = t.chars().next()
        {
            return (u32::from(c), w);
        }
    }
    (u32::from(char::REPLACEMENT_CHARACTER), 1)
}

#[cfg(test)]
mod tests {
    use super::Os::{Plan9, Unix, Windows};
    use super::*;

    /// Runs `f` on each input of the table and compares with the wanted output.
    fn table<T, W>(os: Os, f: impl Fn(&str) -> T, cases: &[(&str, W)])
    where
        T: std::fmt::Debug + PartialEq<W>,
        W: std::fmt::Debug,
    {
        for (input, want) in cases {
            assert_eq!(&f(input), want, "{os:?} on {input:?}");
        }
    }

    #[test]
    fn os_names() {
        assert_eq!(Os::parse("unix"), Some(Unix));
        assert_eq!(Os::parse("linux"), Some(Unix));
        assert_eq!(Os::parse("darwin"), Some(Unix));
        assert_eq!(Os::parse("windows"), Some(Windows));
        assert_eq!(Os::parse("plan9"), Some(Plan9));
        assert_eq!(Os::parse("foo"), None);
        assert_eq!(Os::parse("Windows"), None);
        assert_eq!(default_os("path.Join"), Some("unix"));
        assert_eq!(default_os("path.VolumeName"), Some("windows"));
        assert_eq!(default_os("path.SplitList"), None);
        assert_eq!(default_os("path.ToSlash"), None);
        assert_eq!(default_os("path.Unix"), None);
        assert_eq!(default_os("strings.Join"), None);
    }

    #[test]
    fn clean_unix_and_plan9() {
        let cases = [
            ("", "."),
            ("abc", "abc"),
            ("abc/def", "abc/def"),
            (".", "."),
            ("..", ".."),
            ("../..", "../.."),
            ("../../abc", "../../abc"),
            ("/abc", "/abc"),
            ("/", "/"),
            ("abc/", "abc"),
            ("abc//def//ghi", "abc/def/ghi"),
            ("//abc", "/abc"),
            ("abc/./def", "abc/def"),
            ("/./abc/def", "/abc/def"),
            ("abc/.", "abc"),
            ("abc/def/../ghi/../jkl", "abc/jkl"),
            ("abc/def/../..", "."),
            ("/abc/def/../..", "/"),
            ("abc/def/../../..", ".."),
            ("/abc/def/../../..", "/"),
            ("abc/./../def", "def"),
            ("abc//./../def", "def"),
            ("abc/../../././../def", "../../def"),
            (r"c:\abc\def\..\..", r"c:\abc\def\..\.."),
            ("a/é/../b", "a/b"),
        ];
        table(Unix, |p| Unix.clean(p), &cases);
        table(Plan9, |p| Plan9.clean(p), &cases);
    }

    #[test]
    fn clean_windows() {
        table(
            Windows,
            |p| Windows.clean(p),
            &[
                ("", "."),
                ("abc//def//ghi", r"abc\def\ghi"),
                ("/", r"\"),
                ("//abc", r"\abc"),
                ("///abc", r"\abc"),
                (r"c:\abc\def\..\..", r"c:\"),
                ("c:", "c:."),
                (r"c:\", r"c:\"),
                (r"c:\abc", r"c:\abc"),
                ("c:abc\\..\\..\\.\\.\\..\\def", r"c:..\..\def"),
                (r"c:\abc\def\..\..\..\ghi", r"c:\ghi"),
                ("c:/abc/./def", r"c:\abc\def"),
                (r"\\host\share", r"\\host\share"),
                ("//host/share", r"\\host\share"),
                (r"\\host\share\", r"\\host\share\"),
                (r"\\host\share\foo\..\bar", r"\\host\share\bar"),
                (r"\\host\share\..\..", r"\\host\share\"),
                (r"a\..\..\b", r"..\b"),
                // As in CUE (Go before its fix): a first element ending in `:` becomes a
                // volume name.
                ("./a:", "a:"),
                ("a:", "a:."),
            ],
        );
    }

    #[test]
    fn join_per_os() {
        let join = |os: Os| move |s: &str| os.join(&s.split('|').collect::<Vec<_>>());
        table(
            Unix,
            join(Unix),
            &[
                ("a|b", "a/b".to_string()),
                ("|", String::new()),
                ("a|", "a".into()),
                ("|b", "b".into()),
                ("/|a/b", "/a/b".into()),
                ("//|a", "/a".into()),
                (r"C:\Windows\|System32", r"C:\Windows\/System32".into()),
                ("C:||b", "C:/b".into()),
            ],
        );
        table(
            Windows,
            join(Windows),
            &[
                ("a|b", r"a\b".to_string()),
                ("a/b|c/d", r"a\b\c\d".into()),
                ("/", r"\".into()),
                ("|", String::new()),
                ("/|a", r"\a".into()),
                ("//|a", r"\a".into()),
                (r"C:\Windows\|System32", r"C:\Windows\System32".into()),
                (r"C:\Windows\|", r"C:\Windows".into()),
                (r"C:\|Windows", r"C:\Windows".into()),
                (r"C:|a\b", r"C:a\b".into()),
                ("C:|a|b", r"C:a\b".into()),
                ("C:|||b", "C:b".into()),
                ("C:|", "C:.".into()),
                ("C:.|a", "C:a".into()),
                ("C:a|b", r"C:a\b".into()),
                (r"\\host\share|foo", r"\\host\share\foo".into()),
                (r"//host/share|foo/bar", r"\\host\share\foo\bar".into()),
                // Joining non-UNC elements does not make a UNC path.
                (r"\|\host\share", r"\host\share".into()),
                (r"\|\\host\share", r"\host\share".into()),
                ("//|host/share", r"\host\share".into()),
            ],
        );
    }

    #[test]
    fn split_dir_base_ext() {
        let split = |os: Os| move |p: &str| os.split(p);
        let pair = |a: &str, b: &str| (a.to_string(), b.to_string());
        table(
            Unix,
            split(Unix),
            &[
                ("a/b", pair("a/", "b")),
                ("a/b/", pair("a/b/", "")),
                ("a/", pair("a/", "")),
                ("a", pair("", "a")),
                ("/", pair("/", "")),
                (r"c:\foo\bar", pair("", r"c:\foo\bar")),
            ],
        );
        table(
            Windows,
            split(Windows),
            &[
                (r"c:\foo\bar", pair(r"c:\foo\", "bar")),
                ("c:foo", pair("c:", "foo")),
                ("c:", pair("c:", "")),
                (r"\\host\share\foo", pair(r"\\host\share\", "foo")),
                (r"\\host\share", pair(r"\\host\share", "")),
            ],
        );
        let dir = |os: Os| move |p: &str| os.dir(p);
        table(
            Unix,
            dir(Unix),
            &[
                ("", ".".to_string()),
                (".", ".".into()),
                ("/.", "/".into()),
                ("/", "/".into()),
                ("////", "/".into()),
                ("/foo", "/".into()),
                ("x/", "x".into()),
                ("abc", ".".into()),
                ("abc/def", "abc".into()),
                ("a/b/.x", "a/b".into()),
                ("a/b/c.", "a/b".into()),
                ("a/b/c.x", "a/b".into()),
            ],
        );
        table(
            Windows,
            dir(Windows),
            &[
                (r"c:\", r"c:\".to_string()),
                ("c:.", "c:.".into()),
                (r"c:\a\b", r"c:\a".into()),
                ("c:a\\b", "c:a".into()),
                ("c:a\\b\\c", r"c:a\b".into()),
                (r"\\host\share", r"\\host\share".into()),
                (r"\\host\share\", r"\\host\share\".into()),
                (r"\\host\share\a", r"\\host\share\".into()),
                (r"\\host\share\a\b", r"\\host\share\a".into()),
            ],
        );
        let base = |os: Os| move |p: &str| os.base(p);
        let unix_base = [
            ("", ".".to_string()),
            (".", ".".into()),
            ("/.", ".".into()),
            ("/", "/".into()),
            ("////", "/".into()),
            ("x/", "x".into()),
            ("abc", "abc".into()),
            ("abc/def", "def".into()),
            ("a/b/.x", ".x".into()),
            (r"a\b", r"a\b".into()),
        ];
        table(Unix, base(Unix), &unix_base);
        table(Plan9, base(Plan9), &unix_base);
        table(
            Windows,
            base(Windows),
            &[
                (r"c:\", r"\".to_string()),
                ("c:.", ".".into()),
                (r"c:\a\b", "b".into()),
                ("c:a\\b", "b".into()),
                (r"\\host\share\", r"\".into()),
                (r"\\host\share\a", "a".into()),
                (r"a\b", "b".into()),
            ],
        );
        let ext = |os: Os| move |p: &str| os.ext(p);
        let common = [
            ("path.go", ".go".to_string()),
            ("path.pb.go", ".go".into()),
            ("a.dir/b", "".into()),
            ("a.dir/b.go", ".go".into()),
            ("a.dir/", "".into()),
        ];
        table(Unix, ext(Unix), &common);
        table(Windows, ext(Windows), &common);
        assert_eq!(Unix.ext(r"a.dir\foo"), r".dir\foo");
        assert_eq!(Windows.ext(r"a.dir\foo"), "");
    }

    #[test]
    fn is_abs_and_volume() {
        let abs = |os: Os| move |p: &str| os.is_abs(p);
        table(
            Unix,
            abs(Unix),
            &[
                ("", false),
                ("/a", true),
                ("a", false),
                ("c:/", false),
                ("#c", false),
            ],
        );
        table(
            Plan9,
            abs(Plan9),
            &[("/a", true), ("#c", true), ("a", false)],
        );
        table(
            Windows,
            abs(Windows),
            &[
                ("", false),
                ("/a", false),
                (r"\a", false),
                ("c:", false),
                ("c:a", false),
                ("c:/", true),
                (r"c:\a", true),
                ("//host/share/foo", true),
                (r"\\host\share", false),
                ("NUL", true),
                ("nul", true),
                ("com1", true),
                ("nul.txt", false),
            ],
        );
        let vol = |os: Os| move |p: &str| os.volume_name(p);
        table(
            Windows,
            vol(Windows),
            &[
                ("c:/foo/bar", "c:".to_string()),
                ("c:", "c:".into()),
                ("2:", "".into()),
                ("", "".into()),
                (r"\\\host", "".into()),
                (r"\\\host\share", "".into()),
                (r"\\host", "".into()),
                (r"\\host\", "".into()),
                (r"\\host\share", r"\\host\share".into()),
                ("//host/share/", "//host/share".into()),
                (r"\\host\share\\foo\\\bar", r"\\host\share".into()),
                (r"\\host\.\foo", "".into()),
                (r"\\.\c:\foo", "".into()),
            ],
        );
        assert_eq!(Unix.volume_name("c:/foo"), "");
        assert_eq!(Plan9.volume_name(r"\\host\share"), "");
    }

    #[test]
    fn slashes_and_lists() {
        assert_eq!(Windows.slashes_to_sep("/a//b"), r"\a\\b");
        assert_eq!(Windows.seps_to_slash(r"\a\\b"), "/a//b");
        assert_eq!(Unix.slashes_to_sep(r"/a\b"), r"/a\b");
        assert_eq!(Plan9.seps_to_slash(r"/a\b"), r"/a\b");
        let list = |os: Os| move |p: &str| os.split_list(p);
        let v = |s: &[&str]| s.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        table(
            Unix,
            list(Unix),
            &[
                ("", v(&[])),
                ("a:b", v(&["a", "b"])),
                ("a;b", v(&["a;b"])),
                ("a:", v(&["a", ""])),
            ],
        );
        table(
            Plan9,
            list(Plan9),
            &[("a\0b", v(&["a", "b"])), ("a:b", v(&["a:b"]))],
        );
        table(
            Windows,
            list(Windows),
            &[
                ("", v(&[])),
                ("a;b", v(&["a", "b"])),
                (r#""a;b";c"#, v(&["a;b", "c"])),
                (r#"a";"b;c"#, v(&["a;b", "c"])),
                ("a:b", v(&["a:b"])),
            ],
        );
    }

    #[test]
    fn resolve_and_rel() {
        assert_eq!(Unix.resolve("a/b/c", "d/e"), "a/b/c/d/e");
        assert_eq!(Unix.resolve("/a/b", "/c/d"), "/c/d");
        assert_eq!(Unix.resolve("c:/a", r"d:\"), r"c:/a/d:\");
        assert_eq!(Windows.resolve("/a/b", "/c/d"), r"\a\b\c\d");
        assert_eq!(Windows.resolve("c:/a", r"d:\"), r"d:\");
        assert_eq!(
            Windows.resolve("//home/user/foo", "bar"),
            r"\\home\user\foo\bar"
        );
        let ok = |s: &str| Ok(s.to_string());
        let fail = |b: &str, t: &str| Err(format!("Rel: can't make {t} relative to {b}"));
        for (b, t, want) in [
            ("a/b", "a/b", ok(".")),
            ("a/b/.", "a/b", ok(".")),
            ("a/b", "a/b/c", ok("c")),
            ("a/b/c", "a/b", ok("..")),
            ("a/b/c", "a/c/d", ok("../../c/d")),
            ("a/b", "c/d", ok("../../c/d")),
            ("../../a/b", "../../a/b/c/d", ok("c/d")),
            ("/a/b", "/a/b/c", ok("c")),
            ("/", "/a/b", ok("a/b")),
            ("/a", "/b", ok("../b")),
            ("/", ".", fail("/", ".")),
            ("a", "/a", fail("a", "/a")),
            ("../a", "b", fail("../a", "b")),
        ] {
            assert_eq!(Unix.rel(b, t), want, "Rel({b:?}, {t:?})");
        }
        for (b, t, want) in [
            (r"C:a\b\c", r"C:a/b/d", ok(r"..\d")),
            (r"C:\", r"D:\", fail(r"C:\", r"D:\")),
            ("C:", "D:", fail("C:", "D:")),
            (r"C:\Projects", r"c:\projects\src", ok("src")),
            (r"C:\Projects", r"c:\projects", ok(".")),
            (r"C:\Projects\a\..", r"c:\projects", ok(".")),
            (r"\\host\share\foo", r"\\host\share\foo\bar", ok("bar")),
            (r"\\host\share\foo", r"\\HOST\share\bar", ok(r"..\bar")),
            // Volume names compare as written: `//` and `\\` differ.
            (
                r"//host/share/foo",
                r"\\host\share\bar",
                fail(r"//host/share/foo", r"\\host\share\bar"),
            ),
            // CUE's port keeps a bare UNC volume unrooted, unlike its subpaths.
            (
                r"\\host\share",
                r"\\host\share\file.txt",
                fail(r"\\host\share", r"\\host\share\file.txt"),
            ),
        ] {
            assert_eq!(Windows.rel(b, t), want, "Rel({b:?}, {t:?})");
        }
    }

    #[test]
    fn match_unix_and_plan9() {
        let bad = Err(BadPattern);
        let cases: &[(&str, &str, Result<bool, BadPattern>)] = &[
            ("abc", "abc", Ok(true)),
            ("*", "abc", Ok(true)),
            ("*c", "abc", Ok(true)),
            ("a*", "a", Ok(true)),
            ("a*", "ab/c", Ok(false)),
            ("a*/b", "abc/b", Ok(true)),
            ("a*/b", "a/c/b", Ok(false)),
            ("a*b*c*d*e*/f", "axbxcxdxexxx/f", Ok(true)),
            ("a*b*c*d*e*/f", "axbxcxdxe/xxx/f", Ok(false)),
            ("a*b?c*x", "abxbbxdbxebxczzx", Ok(true)),
            ("a*b?c*x", "abxbbxdbxebxczzy", Ok(false)),
            ("ab[b-d]", "abc", Ok(true)),
            ("ab[^b-d]", "abc", Ok(false)),
            ("ab[^e-g]", "abc", Ok(true)),
            (r"a\*b", "a*b", Ok(true)),
            (r"a\*b", "ab", Ok(false)),
            ("a?b", "a☺b", Ok(true)),
            ("a[^a]b", "a☺b", Ok(true)),
            ("a???b", "a☺b", Ok(false)),
            ("[a-ζ]*", "α", Ok(true)),
            ("*[a-ζ]", "A", Ok(false)),
            ("a?b", "a/b", Ok(false)),
            ("a*b", "a/b", Ok(false)),
            (r"[\]a]", "]", Ok(true)),
            (r"[x\-]", "-", Ok(true)),
            (r"[\-x]", "a", Ok(false)),
            ("[]a]", "]", bad),
            ("[-]", "-", bad),
            ("[x-]", "x", bad),
            ("[-x]", "x", bad),
            ("\\", "a", bad),
            ("[a-b-c]", "a", bad),
            ("[", "a", bad),
            ("[^bc", "a", bad),
            ("a[", "ab", bad),
            ("a/b[", "x", bad),
            ("*x", "xxx", Ok(true)),
            ("**", "ab/c", Ok(false)),
            ("**/c", "ab/c", Ok(true)),
            ("*.zip", r"c:\a\b\file.zip", Ok(true)),
            ("*.txt", "a/b.txt", Ok(false)),
        ];
        for os in [Unix, Plan9] {
            for (p, n, want) in cases {
                assert_eq!(&os.matches(p, n), want, "{os:?}: Match({p:?}, {n:?})");
            }
        }
    }

    #[test]
    fn match_windows() {
        for (p, n, want) in [
            ("*c", "abc", Ok(true)),
            ("*.txt", "a/b.txt", Ok(true)),
            ("*.zip", r"c:\a\b\file.zip", Ok(false)),
            (r"c:\*\*.zip", r"c:\a\file.zip", Ok(true)),
            (r"a?b", r"a\b", Ok(false)),
            // `\` is a plain character, not an escape.
            (r"a\", r"a\", Ok(true)),
            (r"[\]", r"\", Ok(true)),
            // `[\]` is a class of one `\`, then a literal `a]`.
            (r"[\]a]", "]", Ok(false)),
            (r"[\]a]", r"\a]", Ok(true)),
            ("[", "a", Err(BadPattern)),
        ] {
            assert_eq!(Windows.matches(p, n), want, "Match({p:?}, {n:?})");
        }
    }

    /// All strings over `alphabet` up to `max` characters.
    fn strings(alphabet: &[char], max: usize) -> Vec<String> {
        let mut all = vec![String::new()];
        let mut last = vec![String::new()];
        for _ in 0..max {
            last = last
                .iter()
                .flat_map(|s| alphabet.iter().map(move |c| format!("{s}{c}")))
                .collect();
            all.extend(last.iter().cloned());
        }
        all
    }

    #[test]
    fn no_panics_on_odd_input() {
        let alphabet = ['a', '/', '\\', ':', '.', '*', '[', ']', '-', '^', '?', 'é'];
        let inputs = strings(&alphabet, 4);
        let short = strings(&alphabet, 2);
        for os in [Unix, Windows, Plan9] {
            for p in &inputs {
                let c = os.clean(p);
                // Clean is idempotent, except on Windows, where CUE's port (older than Go's
                // fix) turns `./a:` into the volume-looking `a:`.
                if os != Windows {
                    assert_eq!(os.clean(&c), c, "{os:?}: Clean({p:?})");
                }
                let (dir, file) = os.split(p);
                assert_eq!(format!("{dir}{file}"), *p, "{os:?}: Split({p:?})");
                os.base(p);
                os.dir(p);
                os.ext(p);
                os.is_abs(p);
                os.volume_name(p);
                os.split_list(p);
                if p.chars().count() > 3 {
                    continue;
                }
                for q in &short {
                    os.join(&[p, q]);
                    os.resolve(p, q);
                    let _ = os.rel(p, q);
                    let _ = os.matches(q, p);
                    let _ = os.matches(p, q);
                }
            }
        }
    }
}
