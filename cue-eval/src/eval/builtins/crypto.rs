//! The `crypto/*` hash packages (`md5`, `sha1`, `sha256`, `sha512`, `hmac`), `crypto/ed25519`
//! (on `ed25519-dalek`) and `uuid`, on the RustCrypto hash crates (bit-for-bit the same digests
//! as Go's). Name-based UUIDs (v3, v5) are built as Go's `github.com/google/uuid` builds them: hash of namespace bytes and name, then
//! version and variant bits; parsing accepts the same four spellings with the same errors.

use std::rc::Rc;

use hmac::{KeyInit, Mac};
use num_bigint::BigUint;
use sha1::Digest;

use super::k::*;
use super::{
    R, Runtime, StdMember, a_bytes, a_num, a_str, bytes, constant, func, string, valid,
    validation_fail,
};
use crate::eval::value::{Bottom, Value};
use crate::num::{Num, NumKind};

macro_rules! hash_fn {
    ($name:literal, $ty:ty) => {
        func($name, &[B], |_, a| {
            let d = <$ty>::digest(a_bytes(a, 0)?);
            bytes(d.to_vec())
        })
    };
}

/// Go's `ed25519.Verify` (cofactorless, canonical `S` only) behind CUE's check of the key length.
fn ed25519_valid(_: &mut Runtime, a: &[Value]) -> R {
    let key = a_bytes(a, 0)?;
    let msg = a_bytes(a, 1)?;
    let sig = a_bytes(a, 2)?;
    let Ok(key) = <[u8; 32]>::try_from(key.as_slice()) else {
        return Err(Bottom::eval("ed25519: publicKey must be 32 bytes"));
    };
    let ok = match (
        ed25519_dalek::VerifyingKey::from_bytes(&key),
        ed25519_dalek::Signature::from_slice(&sig),
    ) {
        (Ok(k), Ok(s)) if sig[63] & 224 == 0 => {
            use ed25519_dalek::Verifier;
            k.verify(&msg, &s).is_ok()
        }
        _ => false,
    };
    Ok(Value::Bool(ok))
}

fn str_const(s: &'static str) -> Value {
    Value::Str(Rc::from(s))
}

pub(super) static MEMBERS: &[StdMember] = &[
    hash_fn!("crypto/md5.Sum", md5::Md5),
    constant("crypto/md5.Size", |_| Value::int(16)),
    constant("crypto/md5.BlockSize", |_| Value::int(64)),
    hash_fn!("crypto/sha1.Sum", sha1::Sha1),
    constant("crypto/sha1.Size", |_| Value::int(20)),
    constant("crypto/sha1.BlockSize", |_| Value::int(64)),
    hash_fn!("crypto/sha256.Sum256", sha2::Sha256),
    hash_fn!("crypto/sha256.Sum224", sha2::Sha224),
    constant("crypto/sha256.Size", |_| Value::int(32)),
    constant("crypto/sha256.Size224", |_| Value::int(28)),
    constant("crypto/sha256.BlockSize", |_| Value::int(64)),
    hash_fn!("crypto/sha512.Sum512", sha2::Sha512),
    hash_fn!("crypto/sha512.Sum384", sha2::Sha384),
    hash_fn!("crypto/sha512.Sum512_224", sha2::Sha512_224),
    hash_fn!("crypto/sha512.Sum512_256", sha2::Sha512_256),
    constant("crypto/sha512.Size", |_| Value::int(64)),
    constant("crypto/sha512.Size224", |_| Value::int(28)),
    constant("crypto/sha512.Size256", |_| Value::int(32)),
    constant("crypto/sha512.Size384", |_| Value::int(48)),
    constant("crypto/sha512.BlockSize", |_| Value::int(128)),
    func("crypto/hmac.Sign", &[S, B, B], hmac_sign),
    valid("crypto/ed25519.Valid", &[B, B, B], ed25519_valid),
    constant("crypto/ed25519.PublicKeySize", |_| Value::int(32)),
    constant("crypto/hmac.MD5", |_| str_const("MD5")),
    constant("crypto/hmac.SHA1", |_| str_const("SHA1")),
    constant("crypto/hmac.SHA224", |_| str_const("SHA224")),
    constant("crypto/hmac.SHA256", |_| str_const("SHA256")),
    constant("crypto/hmac.SHA384", |_| str_const("SHA384")),
    constant("crypto/hmac.SHA512", |_| str_const("SHA512")),
    constant("crypto/hmac.SHA512_224", |_| str_const("SHA512_224")),
    constant("crypto/hmac.SHA512_256", |_| str_const("SHA512_256")),
    valid("uuid.Valid", &[S], |_, a| match parse(&a_str(a, 0)?) {
        Ok(_) => Ok(Value::Bool(true)),
        Err(e) => Err(validation_fail(e, false)),
    }),
    func("uuid.Parse", &[S], |_, a| {
        let u = parse(&a_str(a, 0)?).map_err(Bottom::eval)?;
        string(format_uuid(&u))
    }),
    func("uuid.String", &[B], |_, a| {
        let b = a_bytes(a, 0)?;
        let u: [u8; 16] = b
            .as_slice()
            .try_into()
            .map_err(|_| Bottom::eval(format!("invalid UUID (got {} bytes)", b.len())))?;
        string(format_uuid(&u))
    }),
    func("uuid.URN", &[S], |_, a| {
        let u = parse(&a_str(a, 0)?).map_err(Bottom::eval)?;
        string(format!("urn:uuid:{}", format_uuid(&u)))
    }),
    func("uuid.FromInt", &[I], from_int),
    func("uuid.ToInt", &[S], |_, a| {
        let s = a_str(a, 0)?;
        let n = BigUint::from_bytes_be(s.as_bytes());
        Ok(Value::num(Num::from_parts(false, n, 0), NumKind::Int))
    }),
    func("uuid.Variant", &[S], |_, a| {
        let u = parse(&a_str(a, 0)?).map_err(Bottom::eval)?;
        let b = u[8];
        super::int(if b & 0xc0 == 0x80 {
            1
        } else if b & 0xe0 == 0xc0 {
            2
        } else if b & 0xe0 == 0xe0 {
            3
        } else {
            0
        })
    }),
    func("uuid.Version", &[S], |_, a| {
        let u = parse(&a_str(a, 0)?).map_err(Bottom::eval)?;
        super::int(i64::from(u[6] >> 4))
    }),
    func("uuid.SHA1", &[S, B], |_, a| name_based(a, 5)),
    func("uuid.MD5", &[S, B], |_, a| name_based(a, 3)),
    constant("uuid.ns", |rt| {
        let fields = vec![
            ("DNS".to_string(), str_const(NS_DNS)),
            ("URL".to_string(), str_const(NS_URL)),
            ("OID".to_string(), str_const(NS_OID)),
            ("X500".to_string(), str_const(NS_X500)),
            (
                "Nil".to_string(),
                str_const("00000000-0000-0000-0000-000000000000"),
            ),
        ];
        rt.make_struct(fields)
    }),
];

const NS_DNS: &str = "6ba7b810-9dad-11d1-80b4-00c04fd430c8";
const NS_URL: &str = "6ba7b811-9dad-11d1-80b4-00c04fd430c8";
const NS_OID: &str = "6ba7b812-9dad-11d1-80b4-00c04fd430c8";
const NS_X500: &str = "6ba7b814-9dad-11d1-80b4-00c04fd430c8";

fn hmac_sign(_: &mut Runtime, a: &[Value]) -> R {
    let name = a_str(a, 0)?;
    let key = a_bytes(a, 1)?;
    let data = a_bytes(a, 2)?;
    macro_rules! mac {
        ($ty:ty) => {{
            let mut m = <hmac::Hmac<$ty> as KeyInit>::new_from_slice(&key)
                .map_err(|e| Bottom::eval(e.to_string()))?;
            m.update(&data);
            m.finalize().into_bytes().to_vec()
        }};
    }
    let out = match &*name {
        "MD5" => mac!(md5::Md5),
        "SHA1" => mac!(sha1::Sha1),
        "SHA224" => mac!(sha2::Sha224),
        "SHA256" => mac!(sha2::Sha256),
        "SHA384" => mac!(sha2::Sha384),
        "SHA512" => mac!(sha2::Sha512),
        "SHA512_224" => mac!(sha2::Sha512_224),
        "SHA512_256" => mac!(sha2::Sha512_256),
        other => {
            return Err(Bottom::eval(format!("unsupported hash function {other}")));
        }
    };
    bytes(out)
}

/// Parses a UUID as `uuid.Parse` of google/uuid does.
fn parse(s: &str) -> Result<[u8; 16], String> {
    let b = s.as_bytes();
    let body: &[u8] = match b.len() {
        36 => b,
        45 => {
            if !s[..9].eq_ignore_ascii_case("urn:uuid:") {
                return Err(format!("invalid urn prefix: {:?}", &s[..9]));
            }
            &b[9..]
        }
        38 => {
            if b[0] != b'{' || b[37] != b'}' {
                return Err("invalid UUID format".into());
            }
            &b[1..37]
        }
        32 => {
            let mut u = [0u8; 16];
            for (i, out) in u.iter_mut().enumerate() {
                *out = hex_pair(b[2 * i], b[2 * i + 1]).ok_or("invalid UUID format")?;
            }
            return Ok(u);
        }
        n => return Err(format!("invalid UUID length: {n}")),
    };
    if body[8] != b'-' || body[13] != b'-' || body[18] != b'-' || body[23] != b'-' {
        return Err("invalid UUID format".into());
    }
    let mut u = [0u8; 16];
    let offsets = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34];
    for (i, &o) in offsets.iter().enumerate() {
        u[i] = hex_pair(body[o], body[o + 1]).ok_or("invalid UUID format")?;
    }
    Ok(u)
}

fn hex_pair(a: u8, b: u8) -> Option<u8> {
    let h = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    Some(h(a)? << 4 | h(b)?)
}

fn format_uuid(u: &[u8; 16]) -> String {
    let h: String = u.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..]
    )
}

fn name_based(a: &[Value], version: u8) -> R {
    let ns = parse(&a_str(a, 0)?).map_err(Bottom::eval)?;
    let name = a_bytes(a, 1)?;
    let h: Vec<u8> = if version == 5 {
        let mut d = sha1::Sha1::new();
        d.update(ns);
        d.update(&name);
        d.finalize().to_vec()
    } else {
        let mut d = md5::Md5::new();
        d.update(ns);
        d.update(&name);
        d.finalize().to_vec()
    };
    let mut u = [0u8; 16];
    u.copy_from_slice(&h[..16]);
    u[6] = (u[6] & 0x0f) | (version << 4);
    u[8] = (u[8] & 0x3f) | 0x80;
    string(format_uuid(&u))
}

fn from_int(_: &mut Runtime, a: &[Value]) -> R {
    let (n, _) = a_num(a, 0)?;
    let b = n
        .to_bigint()
        .and_then(|b| b.to_biguint())
        .ok_or_else(|| Bottom::eval("UUID value must be a non-negative integer"))?;
    let bytes = b.to_bytes_be();
    if bytes.len() > 16 {
        return Err(Bottom::eval("UUID value too large"));
    }
    let mut u = [0u8; 16];
    u[16 - bytes.len()..].copy_from_slice(&bytes);
    string(format_uuid(&u))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_based_like_google_uuid() {
        let v = name_based(
            &[
                Value::Str(Rc::from(NS_DNS)),
                Value::Str(Rc::from("cuelang.org")),
            ],
            5,
        )
        .unwrap();
        let Value::Str(s) = v else { panic!() };
        assert_eq!(&*s, "052ef62d-7223-58b6-a551-c1deee46d401");
        let v = name_based(
            &[
                Value::Str(Rc::from(NS_URL)),
                Value::Str(Rc::from("https://cuelang.org")),
            ],
            3,
        )
        .unwrap();
        let Value::Str(s) = v else { panic!() };
        assert_eq!(&*s, "d891d69e-ae5c-39e0-9ead-164abd207f1f");
    }

    #[test]
    fn parse_errors() {
        assert_eq!(
            parse("052ef62d-7223-58b6-a551-c1deee").unwrap_err(),
            "invalid UUID length: 30"
        );
        assert_eq!(
            parse("052ef62d_7223_58b6_a551_c1deee46d401").unwrap_err(),
            "invalid UUID format"
        );
        assert!(parse("{123e4567-e89b-12d3-a456-426655440000}").is_ok());
    }
}
