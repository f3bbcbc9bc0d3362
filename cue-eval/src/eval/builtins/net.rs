//! The `net` package: IP addresses and prefixes (as Go's `net/netip` parses, prints, compares
//! and classifies them, with its error texts), host:port splitting and joining, FQDN checks
//! (the IDNA profile CUE uses, restricted to ASCII as CUE restricts it), URL validation and
//! the `net/url` escaping functions.
//!
//! Addresses are held as `std::net` addresses. Go's `netip` keeps IPv4 apart from IPv4-mapped
//! IPv6 (`::ffff:1.2.3.4` is IPv6 there) and IPv6 zones, so [`Addr`] keeps that distinction;
//! the parser is our own because the error texts (`ParseAddr("1.2.3.256"): IPv4 field has
//! value >255`) are part of CUE's output.

use std::net::{Ipv4Addr, Ipv6Addr};
use std::rc::Rc;

use num_bigint::{BigInt, Sign};

use super::k::*;
use super::{R, Runtime, StdMember, a_str, constant, func, string, valid};
use crate::eval::label::go_quote;
use crate::eval::value::{Bottom, Value};
use crate::num::NumKind;

pub(super) static MEMBERS: &[StdMember] = &[
    func("net.SplitHostPort", &[S], split_host_port),
    func("net.JoinHostPort", &[T, T], join_host_port),
    valid("net.FQDN", &[S], |_, a| {
        Ok(Value::Bool(fqdn(&a_str(a, 0)?)))
    }),
    constant("net.IPv4len", |_| Value::int(4)),
    constant("net.IPv6len", |_| Value::int(16)),
    func("net.ParseIP", &[S], |rt, a| {
        let s = a_str(a, 0)?;
        let ip = parse_addr(&s)
            .map_err(|_| Bottom::eval(format!("invalid IP address {}", go_quote(&s))))?;
        Ok(byte_list(rt, &ip.octets()))
    }),
    valid("net.IPv4", &[T], |rt, a| check(rt, a, |ip| ip.is4())),
    valid("net.IPv6", &[T], |rt, a| check(rt, a, |ip| !ip.is4())),
    valid("net.IP", &[T], |rt, a| check(rt, a, |_| true)),
    valid("net.IPCIDR", &[T], |rt, a| {
        get_prefix(rt, &a[0])?;
        Ok(Value::Bool(true))
    }),
    valid("net.LoopbackIP", &[T], |rt, a| {
        check(rt, a, Addr::is_loopback)
    }),
    valid("net.MulticastIP", &[T], |rt, a| {
        check(rt, a, Addr::is_multicast)
    }),
    valid("net.InterfaceLocalMulticastIP", &[T], |rt, a| {
        check(
            rt,
            a,
            |ip| matches!(ip, Addr::V6(b, _) if b[0] == 0xff && b[1] & 0x0f == 0x01),
        )
    }),
    valid("net.LinkLocalMulticastIP", &[T], |rt, a| {
        check(rt, a, Addr::is_link_local_multicast)
    }),
    valid("net.LinkLocalUnicastIP", &[T], |rt, a| {
        check(rt, a, Addr::is_link_local_unicast)
    }),
    valid("net.GlobalUnicastIP", &[T], |rt, a| {
        check(rt, a, Addr::is_global_unicast)
    }),
    valid("net.UnspecifiedIP", &[T], |rt, a| {
        check(rt, a, |ip| match ip {
            Addr::V4(b) => *b == [0; 4],
            Addr::V6(b, z) => *b == [0; 16] && z.is_empty(),
        })
    }),
    func("net.ToIP4", &[T], |rt, a| {
        let ip = get_ip(rt, &a[0])?;
        match ip {
            Addr::V4(b) => Ok(byte_list(rt, &b)),
            ip => Err(Bottom::eval(format!(
                "cannot convert {} to IPv4",
                go_quote(&ip.to_string())
            ))),
        }
    }),
    func("net.ToIP16", &[T], |rt, a| {
        let ip = get_ip(rt, &a[0])?;
        Ok(byte_list(rt, &ip.as16()))
    }),
    func("net.IPString", &[T], |rt, a| {
        string(get_ip(rt, &a[0])?.to_string())
    }),
    func("net.AddIP", &[T, I], add_ip),
    func("net.AddIPCIDR", &[T, I], add_ip_cidr),
    func("net.ParseCIDR", &[S], parse_cidr_fn),
    valid("net.InCIDR", &[T, T], |rt, a| {
        let ip = get_ip(rt, &a[0])?;
        let p = get_prefix(rt, &a[1])?;
        Ok(Value::Bool(p.contains(&ip)))
    }),
    func("net.CompareIP", &[T, T], |rt, a| {
        let x = get_ip(rt, &a[0])?;
        let y = get_ip(rt, &a[1])?;
        super::int(match x.compare(&y) {
            std::cmp::Ordering::Less => -1,
            std::cmp::Ordering::Equal => 0,
            std::cmp::Ordering::Greater => 1,
        })
    }),
    valid("net.URL", &[S], |_, a| {
        parse_url(&a_str(a, 0)?).map_err(Bottom::eval)?;
        Ok(Value::Bool(true))
    }),
    valid("net.AbsURL", &[S], |_, a| {
        let scheme = parse_url(&a_str(a, 0)?).map_err(Bottom::eval)?;
        if scheme.is_empty() {
            return Err(Bottom::eval("URL is not absolute"));
        }
        Ok(Value::Bool(true))
    }),
    func("net.PathEscape", &[S], |_, a| {
        string(escape(&a_str(a, 0)?, Mode::PathSegment))
    }),
    func("net.PathUnescape", &[S], |_, a| {
        string(unescape(&a_str(a, 0)?, Mode::PathSegment).map_err(Bottom::eval)?)
    }),
    func("net.QueryEscape", &[S], |_, a| {
        string(escape(&a_str(a, 0)?, Mode::QueryComponent))
    }),
    func("net.QueryUnescape", &[S], |_, a| {
        string(unescape(&a_str(a, 0)?, Mode::QueryComponent).map_err(Bottom::eval)?)
    }),
];

/// An IP address as Go's `netip.Addr` sees it: IPv4, or IPv6 with an optional zone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Addr {
    V4([u8; 4]),
    V6([u8; 16], String),
}

impl Addr {
    fn is4(&self) -> bool {
        matches!(self, Addr::V4(_))
    }

    fn octets(&self) -> Vec<u8> {
        match self {
            Addr::V4(b) => b.to_vec(),
            Addr::V6(b, _) => b.to_vec(),
        }
    }

    fn as16(&self) -> [u8; 16] {
        match self {
            Addr::V4(b) => Ipv4Addr::from(*b).to_ipv6_mapped().octets(),
            Addr::V6(b, _) => *b,
        }
    }

    fn bit_len(&self) -> u32 {
        if self.is4() { 32 } else { 128 }
    }

    /// IPv4-mapped IPv6 addresses as IPv4 (Go's `Unmap`).
    fn unmap(&self) -> Addr {
        match self {
            Addr::V6(b, _) if b[..10] == [0; 10] && b[10] == 0xff && b[11] == 0xff => {
                Addr::V4([b[12], b[13], b[14], b[15]])
            }
            a => a.clone(),
        }
    }

    fn is_loopback(&self) -> bool {
        match self.unmap() {
            Addr::V4(b) => b[0] == 127,
            Addr::V6(b, _) => Ipv6Addr::from(b) == Ipv6Addr::LOCALHOST,
        }
    }

    fn is_multicast(&self) -> bool {
        match self.unmap() {
            Addr::V4(b) => b[0] & 0xf0 == 0xe0,
            Addr::V6(b, _) => b[0] == 0xff,
        }
    }

    fn is_link_local_multicast(&self) -> bool {
        match self.unmap() {
            Addr::V4(b) => b[0] == 224 && b[1] == 0 && b[2] == 0,
            Addr::V6(b, _) => b[0] == 0xff && b[1] & 0x0f == 0x02,
        }
    }

    fn is_link_local_unicast(&self) -> bool {
        match self.unmap() {
            Addr::V4(b) => b[0] == 169 && b[1] == 254,
            Addr::V6(b, _) => b[0] == 0xfe && b[1] & 0xc0 == 0x80,
        }
    }

    fn is_global_unicast(&self) -> bool {
        let ip = self.unmap();
        match &ip {
            Addr::V4(b) if *b == [0; 4] || *b == [255; 4] => return false,
            Addr::V6(b, _) if *b == [0; 16] => return false,
            _ => {}
        }
        !ip.is_loopback() && !ip.is_multicast() && !ip.is_link_local_unicast()
    }

    /// Go's `Addr.Compare`: by bit length, then bytes, then zone.
    fn compare(&self, o: &Addr) -> std::cmp::Ordering {
        self.bit_len()
            .cmp(&o.bit_len())
            .then_with(|| match (self, o) {
                (Addr::V6(a, za), Addr::V6(b, zb)) => a.cmp(b).then_with(|| za.cmp(zb)),
                _ => self.octets().cmp(&o.octets()),
            })
    }

    fn from_bytes(b: &[u8], like: &Addr) -> Addr {
        match like {
            Addr::V4(_) => Addr::V4(b.try_into().unwrap_or([0; 4])),
            Addr::V6(..) => Addr::V6(b.try_into().unwrap_or([0; 16]), String::new()),
        }
    }
}

impl std::fmt::Display for Addr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Addr::V4(b) => write!(f, "{}", Ipv4Addr::from(*b)),
            Addr::V6(b, z) => {
                let a = Ipv6Addr::from(*b);
                match a.to_ipv4_mapped() {
                    Some(v4) => write!(f, "::ffff:{v4}")?,
                    None => write!(f, "{a}")?,
                }
                if !z.is_empty() {
                    write!(f, "%{z}")?;
                }
                Ok(())
            }
        }
    }
}

/// A parse error of Go's `netip.ParseAddr`.
struct AddrError {
    input: String,
    msg: &'static str,
    at: String,
}

impl std::fmt::Display for AddrError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ParseAddr({}): {}", go_quote(&self.input), self.msg)?;
        if !self.at.is_empty() {
            write!(f, " (at {})", go_quote(&self.at))?;
        }
        Ok(())
    }
}

fn aerr(input: &str, msg: &'static str, at: &str) -> AddrError {
    AddrError {
        input: input.to_string(),
        msg,
        at: at.to_string(),
    }
}

/// Go's `netip.ParseAddr`.
fn parse_addr(s: &str) -> Result<Addr, AddrError> {
    for c in s.bytes() {
        match c {
            b'.' => return parse_v4(s, s).map(Addr::V4),
            b':' => return parse_v6(s),
            b'%' => return Err(aerr(s, "missing IPv6 address", "")),
            _ => {}
        }
    }
    Err(aerr(s, "unable to parse IP", ""))
}

/// The four fields of a dotted IPv4 address `s` (part of `input`).
fn parse_v4(input: &str, s: &str) -> Result<[u8; 4], AddrError> {
    let b = s.as_bytes();
    let mut fields = [0u8; 4];
    let (mut val, mut pos, mut digits) = (0u32, 0usize, 0usize);
    for i in 0..b.len() {
        let c = b[i];
        if c.is_ascii_digit() {
            if digits == 1 && val == 0 {
                return Err(aerr(input, "IPv4 field has octet with leading zero", ""));
            }
            val = val * 10 + u32::from(c - b'0');
            digits += 1;
            if val > 255 {
                return Err(aerr(input, "IPv4 field has value >255", ""));
            }
        } else if c == b'.' {
            if i == 0 || i == b.len() - 1 || b[i - 1] == b'.' {
                return Err(aerr(
                    input,
                    "IPv4 field must have at least one digit",
                    &s[i..],
                ));
            }
            if pos == 3 {
                return Err(aerr(input, "IPv4 address too long", ""));
            }
            fields[pos] = val as u8;
            pos += 1;
            val = 0;
            digits = 0;
        } else {
            return Err(aerr(input, "unexpected character", &s[i..]));
        }
    }
    if pos < 3 {
        return Err(aerr(input, "IPv4 address too short", ""));
    }
    fields[3] = val as u8;
    Ok(fields)
}

fn parse_v6(input: &str) -> Result<Addr, AddrError> {
    let (mut s, zone) = match input.find('%') {
        Some(i) => {
            let z = &input[i + 1..];
            if z.is_empty() {
                return Err(aerr(input, "zone must be a non-empty string", ""));
            }
            (&input[..i], z)
        }
        None => (input, ""),
    };
    let mut ip = [0u8; 16];
    let mut ellipsis: Option<usize> = None;
    if s.starts_with("::") {
        ellipsis = Some(0);
        s = &s[2..];
        if s.is_empty() {
            return Ok(Addr::V6(ip, zone.to_string()));
        }
    }
    let mut i = 0;
    while i < 16 {
        let b = s.as_bytes();
        let mut off = 0;
        let mut acc = 0u32;
        while off < b.len() {
            let Some(d) = (b[off] as char).to_digit(16) else {
                break;
            };
            acc = (acc << 4) + d;
            if off > 3 {
                return Err(aerr(input, "each group must have 4 or less digits", s));
            }
            off += 1;
        }
        if off == 0 {
            return Err(aerr(
                input,
                "each colon-separated field must have at least one digit",
                s,
            ));
        }
        if off < b.len() && b[off] == b'.' {
            if ellipsis.is_none() && i != 12 {
                return Err(aerr(
                    input,
                    "embedded IPv4 address must replace the final 2 fields of the address",
                    s,
                ));
            }
            if i + 4 > 16 {
                return Err(aerr(
                    input,
                    "too many hex fields to fit an embedded IPv4 at the end of the address",
                    s,
                ));
            }
            let f = parse_v4(input, s)?;
            ip[i..i + 4].copy_from_slice(&f);
            s = "";
            i += 4;
            break;
        }
        ip[i] = (acc >> 8) as u8;
        ip[i + 1] = acc as u8;
        i += 2;
        s = &s[off..];
        if s.is_empty() {
            break;
        }
        if !s.starts_with(':') {
            return Err(aerr(input, "unexpected character, want colon", s));
        } else if s.len() == 1 {
            return Err(aerr(input, "colon must be followed by more characters", s));
        }
        s = &s[1..];
        if s.starts_with(':') {
            if ellipsis.is_some() {
                return Err(aerr(input, "multiple :: in address", s));
            }
            ellipsis = Some(i);
            s = &s[1..];
            if s.is_empty() {
                break;
            }
        }
    }
    if !s.is_empty() {
        return Err(aerr(input, "trailing garbage after address", s));
    }
    if i < 16 {
        let Some(e) = ellipsis else {
            return Err(aerr(input, "address string too short", ""));
        };
        let n = 16 - i;
        for j in (e..i).rev() {
            ip[j + n] = ip[j];
        }
        ip[e..e + n].fill(0);
    } else if ellipsis.is_some() {
        return Err(aerr(
            input,
            "the :: must expand to at least one field of zeros",
            s,
        ));
    }
    Ok(Addr::V6(ip, zone.to_string()))
}

/// An IP prefix (`10.0.0.0/8`), not masked.
pub(super) struct Prefix {
    addr: Addr,
    bits: u32,
}

impl Prefix {
    fn masked(&self) -> Addr {
        let mut b = self.addr.octets();
        for (i, x) in b.iter_mut().enumerate() {
            let keep = self.bits.saturating_sub(i as u32 * 8).min(8);
            *x &= if keep == 0 { 0 } else { 0xffu8 << (8 - keep) };
        }
        Addr::from_bytes(&b, &self.addr)
    }

    /// Go's `Prefix.Contains`: same family, no zone, same masked bits.
    fn contains(&self, ip: &Addr) -> bool {
        if matches!(ip, Addr::V6(_, z) if !z.is_empty()) || ip.bit_len() != self.addr.bit_len() {
            return false;
        }
        let p = Prefix {
            addr: ip.clone(),
            bits: self.bits,
        };
        p.masked() == self.masked()
    }
}

/// Go's `netip.ParsePrefix`.
fn parse_prefix(s: &str) -> Result<Prefix, String> {
    let err = |m: &str| format!("netip.ParsePrefix({}): {m}", go_quote(s));
    let Some(i) = s.rfind('/') else {
        return Err(err("no '/'"));
    };
    let addr = parse_addr(&s[..i]).map_err(|e| err(&e.to_string()))?;
    if matches!(&addr, Addr::V6(_, z) if !z.is_empty()) {
        return Err(err("IPv6 zones cannot be present in a prefix"));
    }
    let bits_str = &s[i + 1..];
    let bad = || err(&format!("bad bits after slash: {}", go_quote(bits_str)));
    if bits_str.len() > 1 && !matches!(bits_str.as_bytes()[0], b'1'..=b'9') {
        return Err(bad());
    }
    let bits: u32 = if !bits_str.is_empty() && bits_str.bytes().all(|c| c.is_ascii_digit()) {
        bits_str.parse().map_err(|_| bad())?
    } else {
        return Err(bad());
    };
    if bits > addr.bit_len() {
        return Err(err("prefix length out of range"));
    }
    Ok(Prefix { addr, bits })
}

/// The address of a string, bytes or list argument, with CUE's errors.
fn get_ip(rt: &mut Runtime, v: &Value) -> Result<Addr, Rc<Bottom>> {
    match v {
        Value::Str(s) => parse_addr(s).map_err(|e| Bottom::eval(e.to_string())),
        Value::Bytes(b) => {
            parse_addr(&String::from_utf8_lossy(b)).map_err(|e| Bottom::eval(e.to_string()))
        }
        v if rt.is_list_value(v) => {
            let bad = |rt: &Runtime| Bottom::eval(format!("invalid IP {}", rt.value_text(v)));
            let items = rt.list_values(v, "net")?;
            let mut bytes = Vec::with_capacity(items.len());
            for it in &items {
                match it {
                    Value::Num(n, NumKind::Int) => match n.to_i64() {
                        Some(x @ 0..=255) => bytes.push(x as u8),
                        _ => return Err(bad(rt)),
                    },
                    _ => return Err(bad(rt)),
                }
            }
            match bytes.len() {
                4 => Ok(Addr::V4(bytes.try_into().unwrap_or([0; 4]))),
                16 => Ok(Addr::V6(bytes.try_into().unwrap_or([0; 16]), String::new())),
                _ => Err(bad(rt)),
            }
        }
        v => Err(Bottom::eval(format!(
            "invalid type {} for IP address",
            kind_name(rt, v)
        ))),
    }
}

fn kind_name(rt: &Runtime, v: &Value) -> String {
    match v {
        Value::Vertex(_) if rt.is_list_value(v) => "list".into(),
        Value::Vertex(_) => "struct".into(),
        v => v.kind().name(),
    }
}

/// The prefix of a string or bytes argument.
fn get_prefix(rt: &mut Runtime, v: &Value) -> Result<Prefix, Rc<Bottom>> {
    let s = match v {
        Value::Str(s) => s.to_string(),
        Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        v => {
            return Err(Bottom::eval(format!(
                "invalid type {} for IP CIDR",
                kind_name(rt, v)
            )));
        }
    };
    parse_prefix(&s).map_err(Bottom::eval)
}

/// A classification validator: errors for what is not an address, the predicate otherwise.
fn check(rt: &mut Runtime, a: &[Value], p: impl Fn(&Addr) -> bool) -> R {
    let ip = get_ip(rt, &a[0])?;
    Ok(Value::Bool(p(&ip)))
}

fn byte_list(rt: &mut Runtime, b: &[u8]) -> Value {
    let vals = b.iter().map(|&x| Value::int(i64::from(x))).collect();
    rt.make_list_values(vals)
}

fn a_bigint(a: &[Value], i: usize) -> Result<BigInt, Rc<Bottom>> {
    match a.get(i) {
        Some(Value::Num(n, _)) => n
            .to_bigint()
            .ok_or_else(|| Bottom::eval("offset is not an integer")),
        _ => Err(Bottom::eval("offset is not an integer")),
    }
}

/// `addr + offset`, within the address family.
fn ip_add(addr: &Addr, offset: &BigInt) -> Result<Addr, Rc<Bottom>> {
    let i = BigInt::from_bytes_be(Sign::Plus, &addr.octets()) + offset;
    if i.sign() == Sign::Minus {
        return Err(Bottom::eval(
            "IP address arithmetic resulted in out-of-range address (underflow)",
        ));
    }
    let (_, mut b) = i.to_bytes_be();
    if i.sign() == Sign::NoSign {
        b.clear();
    }
    let size = (addr.bit_len() / 8) as usize;
    if b.len() > size {
        return Err(Bottom::eval(
            "IP address arithmetic resulted in out-of-range address (overflow)",
        ));
    }
    let mut full = vec![0u8; size - b.len()];
    full.extend(b);
    Ok(Addr::from_bytes(&full, addr))
}

fn add_ip(rt: &mut Runtime, a: &[Value]) -> R {
    let off = a_bigint(a, 1)?;
    if let Ok(p) = get_prefix(rt, &a[0]) {
        let x = ip_add(&p.addr, &off)?;
        return string(format!("{x}/{}", p.bits));
    }
    let ip = get_ip(rt, &a[0])?;
    string(ip_add(&ip, &off)?.to_string())
}

fn add_ip_cidr(rt: &mut Runtime, a: &[Value]) -> R {
    let off = a_bigint(a, 1)?;
    let p = get_prefix(rt, &a[0])?;
    let shift = p.addr.bit_len() - p.bits;
    let x = ip_add(&p.addr, &(off << shift))?;
    string(format!("{x}/{}", p.bits))
}

fn parse_cidr_fn(rt: &mut Runtime, a: &[Value]) -> R {
    let p = parse_prefix(&a_str(a, 0)?).map_err(Bottom::eval)?;
    let n = p.addr.bit_len() as usize / 8;
    let mut mask = vec![0u8; n];
    for (i, m) in mask.iter_mut().enumerate() {
        let keep = p.bits.saturating_sub(i as u32 * 8).min(8);
        *m = if keep == 0 { 0 } else { 0xffu8 << (8 - keep) };
    }
    let net = p.masked();
    let mut fields = vec![
        (
            "prefix_mask".to_string(),
            Value::Str(Rc::from(Addr::from_bytes(&mask, &p.addr).to_string())),
        ),
        ("prefix_len".to_string(), Value::int(i64::from(p.bits))),
        (
            "prefix_addr".to_string(),
            Value::Str(Rc::from(net.to_string())),
        ),
    ];
    if p.addr.is4() {
        let b: Vec<u8> = net
            .octets()
            .iter()
            .zip(&mask)
            .map(|(x, m)| x | !m)
            .collect();
        fields.push((
            "broadcast_addr".to_string(),
            Value::Str(Rc::from(Addr::from_bytes(&b, &p.addr).to_string())),
        ));
    }
    Ok(rt.make_struct(fields))
}

/// Go's `net.SplitHostPort`.
fn split_host_port(rt: &mut Runtime, a: &[Value]) -> R {
    let s = a_str(a, 0)?;
    let err = |m: &str| Bottom::eval(format!("address {s}: {m}"));
    let Some(i) = s.rfind(':') else {
        return Err(err("missing port in address"));
    };
    let (host, j, k);
    if s.starts_with('[') {
        let Some(end) = s.find(']') else {
            return Err(err("missing ']' in address"));
        };
        if end + 1 == s.len() {
            return Err(err("missing port in address"));
        } else if end + 1 != i {
            return Err(if s.as_bytes()[end + 1] == b':' {
                err("too many colons in address")
            } else {
                err("missing port in address")
            });
        }
        host = &s[1..end];
        (j, k) = (1, end + 1);
    } else {
        host = &s[..i];
        if host.contains(':') {
            return Err(err("too many colons in address"));
        }
        (j, k) = (0, 0);
    }
    if s[j..].contains('[') {
        return Err(err("unexpected '[' in address"));
    }
    if s[k..].contains(']') {
        return Err(err("unexpected ']' in address"));
    }
    let port = &s[i + 1..];
    let vals = vec![Value::Str(Rc::from(host)), Value::Str(Rc::from(port))];
    Ok(rt.make_list_values(vals))
}

fn join_host_port(rt: &mut Runtime, a: &[Value]) -> R {
    let host = match &a[0] {
        Value::Str(s) => s.to_string(),
        Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        v if rt.is_list_value(v) => match get_ip(rt, v) {
            Ok(ip) => ip.to_string(),
            Err(_) => {
                let items = rt.list_values(v, "net")?;
                let texts: Vec<String> = items.iter().map(|x| rt.value_text(x)).collect();
                return Err(Bottom::eval(format!("invalid host [{}]", texts.join(", "))));
            }
        },
        v => {
            return Err(Bottom::eval(format!(
                "cannot use value {} (type {}) as string",
                rt.value_text(v),
                kind_name(rt, v)
            )));
        }
    };
    let port = match &a[1] {
        Value::Str(s) => s.to_string(),
        Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        Value::Num(n, NumKind::Int) => match n.to_i64() {
            Some(i) => i.to_string(),
            None => return Err(Bottom::eval("port out of range")),
        },
        v => {
            return Err(Bottom::eval(format!(
                "cannot use value {} (type {}) as int",
                rt.value_text(v),
                kind_name(rt, v)
            )));
        }
    };
    if host.contains(':') {
        string(format!("[{host}]:{port}"))
    } else {
        string(format!("{host}:{port}"))
    }
}

/// Whether `s` is a valid fully qualified domain name: ASCII only, labels of letters, digits
/// and hyphens (not at either end, not `--` at the third position but in `xn--`), 1 to 63
/// bytes each, at most 253 bytes in all, an optional final root dot.
fn fqdn(s: &str) -> bool {
    if !s.is_ascii() || s.is_empty() {
        return false;
    }
    let name = s.strip_suffix('.').unwrap_or(s);
    if name.is_empty() || name.len() > 253 {
        return false;
    }
    name.split('.').all(|l| {
        !l.is_empty()
            && l.len() <= 63
            && l.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-')
            && !l.starts_with('-')
            && !l.ends_with('-')
            && (l.len() < 4 || &l[2..4] != "--" || l[..2].eq_ignore_ascii_case("xn"))
    })
}

/// The parts of a URL `net/url` escapes differently.
#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Path,
    PathSegment,
    Host,
    UserPassword,
    QueryComponent,
    Fragment,
}

/// Go's `shouldEscape`.
fn should_escape(c: u8, mode: Mode) -> bool {
    if c.is_ascii_alphanumeric() {
        return false;
    }
    if mode == Mode::Host {
        return !matches!(
            c,
            b'!' | b'$'
                | b'&'
                | b'\''
                | b'('
                | b')'
                | b'*'
                | b'+'
                | b','
                | b';'
                | b'='
                | b':'
                | b'['
                | b']'
                | b'<'
                | b'>'
                | b'"'
                | b'-'
                | b'_'
                | b'.'
                | b'~'
        );
    }
    match c {
        b'-' | b'_' | b'.' | b'~' => return false,
        b'$' | b'&' | b'+' | b',' | b'/' | b':' | b';' | b'=' | b'?' | b'@' => {
            return match mode {
                Mode::Path => c == b'?',
                Mode::PathSegment => matches!(c, b'/' | b';' | b',' | b'?'),
                Mode::UserPassword => matches!(c, b'@' | b'/' | b'?' | b':'),
                Mode::QueryComponent => true,
                Mode::Fragment | Mode::Host => false,
            };
        }
        _ => {}
    }
    !(mode == Mode::Fragment && matches!(c, b'!' | b'(' | b')' | b'*'))
}

fn escape(s: &str, mode: Mode) -> String {
    let mut o = String::with_capacity(s.len());
    for &c in s.as_bytes() {
        if c == b' ' && mode == Mode::QueryComponent {
            o.push('+');
        } else if should_escape(c, mode) {
            o.push_str(&format!("%{c:02X}"));
        } else {
            o.push(c as char);
        }
    }
    o
}

/// Go's `unescape`, with its `invalid URL escape "%zz"` and host-character errors.
fn unescape(s: &str, mode: Mode) -> Result<String, String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' => {
                let hex = |c: u8| (c as char).to_digit(16);
                if i + 2 >= b.len() || hex(b[i + 1]).is_none() || hex(b[i + 2]).is_none() {
                    let end = (i + 3).min(b.len());
                    return Err(format!(
                        "invalid URL escape {}",
                        go_quote(&String::from_utf8_lossy(&b[i..end]))
                    ));
                }
                let v = (hex(b[i + 1]).unwrap_or(0) << 4 | hex(b[i + 2]).unwrap_or(0)) as u8;
                if mode == Mode::Host && v < 0x80 && &s[i..i + 3] != "%25" {
                    return Err(format!("invalid URL escape {}", go_quote(&s[i..i + 3])));
                }
                out.push(v);
                i += 3;
            }
            b'+' if mode == Mode::QueryComponent => {
                out.push(b' ');
                i += 1;
            }
            c => {
                if mode == Mode::Host && c < 0x80 && should_escape(c, mode) {
                    return Err(format!(
                        "invalid character {} in host name",
                        go_quote(&(c as char).to_string())
                    ));
                }
                out.push(c);
                i += 1;
            }
        }
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// Go's `url.Parse`, as a check: the scheme of a valid URL, or Go's error text.
fn parse_url(raw: &str) -> Result<String, String> {
    let fail = |e: String| format!("parse {}: {e}", go_quote(raw));
    let (rest, frag) = match raw.split_once('#') {
        Some((r, f)) => (r, Some(f)),
        None => (raw, None),
    };
    if raw.bytes().any(|c| c < 0x20 || c == 0x7f) {
        return Err(fail("net/url: invalid control character in URL".into()));
    }
    let scheme = parse_url_main(rest).map_err(fail)?;
    if let Some(f) = frag {
        unescape(f, Mode::Fragment).map_err(fail)?;
    }
    Ok(scheme)
}

fn parse_url_main(raw: &str) -> Result<String, String> {
    if raw == "*" {
        return Ok(String::new());
    }
    // The scheme.
    let mut scheme = "";
    let mut rest = raw;
    for (i, c) in raw.bytes().enumerate() {
        if c.is_ascii_alphabetic() {
            continue;
        }
        if c.is_ascii_digit() || matches!(c, b'+' | b'-' | b'.') {
            if i == 0 {
                break;
            }
            continue;
        }
        if c == b':' {
            if i == 0 {
                return Err("missing protocol scheme".into());
            }
            scheme = &raw[..i];
            rest = &raw[i + 1..];
        }
        break;
    }
    let scheme = scheme.to_ascii_lowercase();
    let rest = if rest.ends_with('?') && rest.matches('?').count() == 1 {
        &rest[..rest.len() - 1]
    } else {
        rest.split_once('?').map_or(rest, |(r, _)| r)
    };
    if !rest.starts_with('/') {
        if !scheme.is_empty() {
            return Ok(scheme);
        }
        let seg = rest.split('/').next().unwrap_or("");
        if seg.contains(':') {
            return Err("first path segment in URL cannot contain colon".into());
        }
    }
    let mut path = rest;
    if (!scheme.is_empty() || !rest.starts_with("///")) && rest.starts_with("//") {
        let r = &rest[2..];
        let (auth, p) = match r.find('/') {
            Some(i) => (&r[..i], &r[i..]),
            None => (r, ""),
        };
        parse_authority(auth)?;
        path = p;
    }
    unescape(path, Mode::Path)?;
    Ok(scheme)
}

fn parse_authority(auth: &str) -> Result<(), String> {
    let host = match auth.rfind('@') {
        Some(i) => {
            let user = &auth[..i];
            let ok = user.bytes().all(|c| {
                c.is_ascii_alphanumeric() || b"-._:~!$&'()*+,;=%@".contains(&c) || c >= 0x80
            });
            if !ok {
                return Err("net/url: invalid userinfo".into());
            }
            match user.split_once(':') {
                Some((u, p)) => {
                    unescape(u, Mode::UserPassword)?;
                    unescape(p, Mode::UserPassword)?;
                }
                None => {
                    unescape(user, Mode::UserPassword)?;
                }
            }
            &auth[i + 1..]
        }
        None => auth,
    };
    parse_host(host)
}

fn valid_port(p: &str) -> bool {
    p.is_empty() || (p.starts_with(':') && p[1..].bytes().all(|c| c.is_ascii_digit()))
}

fn parse_host(host: &str) -> Result<(), String> {
    if let Some(stripped) = host.strip_prefix('[') {
        let Some(i) = stripped.rfind(']') else {
            return Err("missing ']' in host".into());
        };
        let port = &stripped[i + 1..];
        if !valid_port(port) {
            return Err(format!("invalid port {} after host", go_quote(port)));
        }
        return Ok(());
    }
    if let Some(i) = host.rfind(':') {
        let port = &host[i..];
        if !valid_port(port) {
            return Err(format!("invalid port {} after host", go_quote(port)));
        }
    }
    unescape(host, Mode::Host).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_parse_and_print_as_go() {
        let p = |s: &str| {
            parse_addr(s)
                .map(|a| a.to_string())
                .unwrap_or_else(|e| e.to_string())
        };
        assert_eq!(p("0:0:0:0:0:0:23.23.23.23"), "::1717:1717");
        assert_eq!(p("::ffff:127.0.0.1"), "::ffff:127.0.0.1");
        assert_eq!(p("fe80::1%eth0"), "fe80::1%eth0");
        assert_eq!(
            p("2001:db8::1234567"),
            "ParseAddr(\"2001:db8::1234567\"): each group must have 4 or less digits (at \"1234567\")"
        );
        assert_eq!(p("1.2.3"), "ParseAddr(\"1.2.3\"): IPv4 address too short");
        assert_eq!(
            p("01.2.3.4"),
            "ParseAddr(\"01.2.3.4\"): IPv4 field has octet with leading zero"
        );
        assert_eq!(p("1:2"), "ParseAddr(\"1:2\"): address string too short");
        assert!(parse_prefix("1.2.3.4/33").is_err());
        assert!(parse_prefix("1.2.3.4/08").is_err());
    }

    #[test]
    fn escapes() {
        assert_eq!(escape("a b/c?", Mode::QueryComponent), "a+b%2Fc%3F");
        assert_eq!(escape("a b/c", Mode::PathSegment), "a%20b%2Fc");
        assert_eq!(
            unescape("%zz", Mode::Path).unwrap_err(),
            "invalid URL escape \"%zz\""
        );
        assert_eq!(
            unescape("a%2", Mode::Path).unwrap_err(),
            "invalid URL escape \"%2\""
        );
        assert!(parse_url("http://a b.com/").is_err());
        assert!(parse_url("http://[::1]:80/x").is_ok());
        assert_eq!(
            parse_url("1http:x").unwrap_err(),
            "parse \"1http:x\": first path segment in URL cannot contain colon"
        );
    }

    #[test]
    fn domain_names() {
        assert!(fqdn("foo.bar."));
        assert!(!fqdn("under_score.example.com."));
        assert!(!fqdn("-a.com"));
        assert!(!fqdn(&"a".repeat(64)));
    }
}
