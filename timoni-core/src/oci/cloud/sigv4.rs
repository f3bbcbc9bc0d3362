//! AWS Signature Version 4 for the one signed call Timoni makes (ECR `GetAuthorizationToken`):
//! the canonical request, the string to sign and the derived signing key of the AWS reference
//! ("Create a signed AWS API request"), over `hmac` and `sha2`. Checked against AWS's published
//! example below.

use hmac::{Hmac, KeyInit, Mac};
use sha2::{Digest, Sha256};

use super::AwsKeys;

fn hmac(key: &[u8], data: &str) -> Vec<u8> {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes any key length");
    mac.update(data.as_bytes());
    mac.finalize().into_bytes().to_vec()
}

fn sha256_hex(data: &[u8]) -> String {
    hex::encode(Sha256::digest(data))
}

/// What is signed.
pub(crate) struct Request<'a> {
    pub method: &'a str,
    /// The URI path, already encoded (`/`).
    pub path: &'a str,
    /// The canonical query string (sorted, encoded), often empty.
    pub query: &'a str,
    /// The headers to sign besides `x-amz-date` and `x-amz-security-token`: lowercase names,
    /// `host` among them.
    pub headers: Vec<(String, String)>,
    pub body: &'a [u8],
}

/// The headers to add to `request` (`authorization`, `x-amz-date` and, with a session token,
/// `x-amz-security-token`), signed for `service` in `region` at `amz_date`
/// (`YYYYMMDDTHHMMSSZ`).
pub(crate) fn sign(
    request: &Request<'_>,
    keys: &AwsKeys,
    region: &str,
    service: &str,
    amz_date: &str,
) -> Vec<(String, String)> {
    let mut headers = request.headers.clone();
    let mut added = vec![("x-amz-date".to_string(), amz_date.to_string())];
    if let Some(t) = &keys.session_token {
        added.push(("x-amz-security-token".to_string(), t.clone()));
    }
    headers.extend(added.iter().cloned());
    headers.sort();
    let canonical_headers: String = headers
        .iter()
        .map(|(k, v)| format!("{k}:{}\n", v.trim()))
        .collect();
    let signed: Vec<&str> = headers.iter().map(|(k, _)| k.as_str()).collect();
    let signed = signed.join(";");
    let canonical = format!(
        "{}\n{}\n{}\n{canonical_headers}\n{signed}\n{}",
        request.method,
        request.path,
        request.query,
        sha256_hex(request.body)
    );
    let date = &amz_date[..8];
    let scope = format!("{date}/{region}/{service}/aws4_request");
    let to_sign = format!(
        "AWS4-HMAC-SHA256\n{amz_date}\n{scope}\n{}",
        sha256_hex(canonical.as_bytes())
    );
    let k_date = hmac(format!("AWS4{}", keys.secret_access_key).as_bytes(), date);
    let k_region = hmac(&k_date, region);
    let k_service = hmac(&k_region, service);
    let k_signing = hmac(&k_service, "aws4_request");
    let signature = hex::encode(hmac(&k_signing, &to_sign));
    added.push((
        "authorization".to_string(),
        format!(
            "AWS4-HMAC-SHA256 Credential={}/{scope}, SignedHeaders={signed}, Signature={signature}",
            keys.access_key_id
        ),
    ));
    added
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The IAM `ListUsers` example of AWS's Signature Version 4 documentation.
    #[test]
    fn signs_the_documented_example() {
        let keys = AwsKeys {
            access_key_id: "AKIDEXAMPLE".into(),
            secret_access_key: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY".into(),
            session_token: None,
        };
        let request = Request {
            method: "GET",
            path: "/",
            query: "Action=ListUsers&Version=2010-05-08",
            headers: vec![
                (
                    "content-type".into(),
                    "application/x-www-form-urlencoded; charset=utf-8".into(),
                ),
                ("host".into(), "iam.amazonaws.com".into()),
            ],
            body: b"",
        };
        let added = sign(&request, &keys, "us-east-1", "iam", "20150830T123600Z");
        let auth = &added.iter().find(|(k, _)| k == "authorization").unwrap().1;
        assert_eq!(
            auth,
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/aws4_request, \
             SignedHeaders=content-type;host;x-amz-date, \
             Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7"
        );
    }
}
