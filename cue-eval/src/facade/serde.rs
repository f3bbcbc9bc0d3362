//! Conversion between CUE data and `serde` types, through `serde_json`'s value model: the JSON
//! form of a CUE value is what `cue export` writes, so a type that reads that JSON reads the
//! value.

use crate::encode::{Data, Field};

use super::error::{Error, Result};

/// Decodes concrete data into a `serde` type.
pub(crate) fn from_data<T: serde::de::DeserializeOwned>(data: &Data) -> Result<T> {
    let json = crate::encode::to_json_compact(data);
    serde_json::from_str(&json).map_err(|e| Error::msg(format!("decode: {e}")))
}

/// Encodes a `serde` value as CUE data, fields in the order the type serializes them.
pub(crate) fn to_data<T: serde::Serialize + ?Sized>(value: &T) -> Result<Data> {
    let json = serde_json::to_value(value).map_err(|e| Error::msg(format!("encode: {e}")))?;
    Ok(json_to_data(json))
}

fn json_to_data(v: serde_json::Value) -> Data {
    match v {
        serde_json::Value::Null => Data::Null,
        serde_json::Value::Bool(b) => Data::Bool(b),
        serde_json::Value::Number(n) => {
            if n.is_f64() {
                // A float keeps a fraction or an exponent, so that CUE reads it as a float.
                let f = n.as_f64().unwrap_or_default();
                let mut text = n.to_string();
                if f.is_finite() && !text.contains(['.', 'e', 'E']) {
                    text.push_str(".0");
                }
                Data::float(text)
            } else {
                Data::int(n.to_string())
            }
        }
        serde_json::Value::String(s) => Data::String(s),
        serde_json::Value::Array(a) => Data::List(a.into_iter().map(json_to_data).collect()),
        serde_json::Value::Object(m) => Data::Struct(
            m.into_iter()
                .map(|(name, v)| Field {
                    name,
                    value: json_to_data(v),
                    yaml_tag: None,
                })
                .collect(),
        ),
    }
}
