//! AWS ECR login: AWS credentials from STS `AssumeRoleWithWebIdentity` (the service account
//! token for `sts.amazonaws.com` and the role of its `eks.amazonaws.com/role-arn` annotation;
//! an unsigned call), from the EKS Pod Identity agent, or static keys (CLI), then ECR
//! `GetAuthorizationToken` (SigV4-signed, see `sigv4`), whose token is `AWS:<password>`.

use std::time::{Duration, SystemTime};

use base64::Engine as _;

use super::http::{Http, form, snippet};
use super::{
    AWS_AUDIENCE, AWS_POD_IDENTITY_AUDIENCE, AWS_ROLE_ARN_ANNOTATION, AwsKeys, Endpoints, Identity,
    Login, Provider, fail, sigv4,
};
use crate::oci::auth::Credentials;
use crate::oci::error::Result;

const P: Provider = Provider::Aws;

/// The region of an ECR registry host (`<account>.dkr.ecr.<region>.amazonaws.com[.cn]`).
pub(crate) fn region_of(host: &str) -> Option<String> {
    let host = host.split(':').next().unwrap_or(host);
    let rest = host
        .strip_suffix(".amazonaws.com")
        .or_else(|| host.strip_suffix(".amazonaws.com.cn"))?;
    let (account, rest) = rest.split_once(".dkr.ecr")?;
    let region = rest
        .strip_prefix('.')
        .or_else(|| rest.strip_prefix("-fips."))?;
    let ok = !account.is_empty()
        && account.bytes().all(|b| b.is_ascii_digit())
        && !region.is_empty()
        && region
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    ok.then(|| region.to_string())
}

/// The text of the first `<tag>` element of an AWS XML answer.
fn xml_text<'a>(xml: &'a str, tag: &str) -> Option<&'a str> {
    let open = format!("<{tag}>");
    let start = xml.find(&open)? + open.len();
    let end = xml[start..].find(&format!("</{tag}>"))? + start;
    Some(&xml[start..end])
}

fn xml_unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

fn timestamp(s: &str) -> Option<SystemTime> {
    let t: jiff::Timestamp = s.trim().parse().ok()?;
    Some(SystemTime::UNIX_EPOCH + Duration::from_secs(t.as_second().max(0) as u64))
}

/// A role session name: `timoni-<identity>` in the characters STS allows, at most 64.
fn session_name(identity: &str) -> String {
    let clean: String = format!("timoni-{identity}")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "+=,.@-_".contains(c) {
                c
            } else {
                '-'
            }
        })
        .collect();
    clean.chars().take(64).collect()
}

fn assume_role(
    http: &Http,
    endpoints: &Endpoints,
    region: &str,
    identity: &Identity,
    role: &str,
) -> Result<(AwsKeys, SystemTime)> {
    let step = "sts AssumeRoleWithWebIdentity";
    let token = identity.token(P, AWS_AUDIENCE)?;
    let url = endpoints
        .aws_sts
        .clone()
        .unwrap_or_else(|| format!("https://sts.{region}.amazonaws.com/"));
    let body = form(&[
        ("Action", "AssumeRoleWithWebIdentity"),
        ("Version", "2011-06-15"),
        ("RoleArn", role),
        ("RoleSessionName", &session_name(&identity.name)),
        ("WebIdentityToken", &token),
    ]);
    let request = http
        .request(reqwest::Method::POST, &url)
        .header("content-type", "application/x-www-form-urlencoded")
        .header("accept", "application/xml")
        .body(body);
    let answer = http.send(step, request)?;
    let xml = &answer.body;
    if !(200..300).contains(&answer.status) {
        let detail = match (xml_text(xml, "Code"), xml_text(xml, "Message")) {
            (Some(c), Some(m)) => format!("{c}: {}", xml_unescape(m)),
            _ => snippet(xml),
        };
        return Err(fail(
            P,
            step,
            format!("role {role}: HTTP {}: {detail}", answer.status),
        ));
    }
    let field = |tag: &str| {
        xml_text(xml, tag)
            .map(xml_unescape)
            .ok_or_else(|| fail(P, step, format!("the answer has no {tag}")))
    };
    let keys = AwsKeys {
        access_key_id: field("AccessKeyId")?,
        secret_access_key: field("SecretAccessKey")?,
        session_token: Some(field("SessionToken")?),
    };
    let expires = timestamp(&field("Expiration")?)
        .ok_or_else(|| fail(P, step, "the answer's Expiration is not a timestamp"))?;
    Ok((keys, expires))
}

fn pod_identity(http: &Http, url: &str, identity: &Identity) -> Result<(AwsKeys, SystemTime)> {
    let step = "eks pod identity";
    let token = identity.token(P, AWS_POD_IDENTITY_AUDIENCE)?;
    let request = http
        .request(reqwest::Method::GET, url)
        .header("authorization", token);
    let v = http.send(step, request)?.json(P, step)?;
    let field = |k: &str| {
        v.get(k)
            .and_then(|x| x.as_str())
            .map(str::to_string)
            .ok_or_else(|| fail(P, step, format!("the answer has no {k}")))
    };
    let keys = AwsKeys {
        access_key_id: field("AccessKeyId")?,
        secret_access_key: field("SecretAccessKey")?,
        session_token: v.get("Token").and_then(|x| x.as_str()).map(str::to_string),
    };
    let expires = timestamp(&field("Expiration")?)
        .ok_or_else(|| fail(P, step, "the answer's Expiration is not a timestamp"))?;
    Ok((keys, expires))
}

fn authorization_token(
    http: &Http,
    endpoints: &Endpoints,
    region: &str,
    keys: &AwsKeys,
) -> Result<Login> {
    let step = "ecr GetAuthorizationToken";
    let url = endpoints
        .aws_ecr
        .clone()
        .unwrap_or_else(|| format!("https://api.ecr.{region}.amazonaws.com/"));
    let parsed = reqwest::Url::parse(&url).map_err(|e| fail(P, step, format!("{url}: {e}")))?;
    let host = match (parsed.host_str(), parsed.port()) {
        (Some(h), Some(p)) => format!("{h}:{p}"),
        (Some(h), None) => h.to_string(),
        (None, _) => return Err(fail(P, step, format!("{url} names no host"))),
    };
    let target = "AmazonEC2ContainerRegistry_V20150921.GetAuthorizationToken";
    let content_type = "application/x-amz-json-1.1";
    let body = b"{}";
    let signed = sigv4::sign(
        &sigv4::Request {
            method: "POST",
            path: parsed.path(),
            query: "",
            headers: vec![
                ("content-type".into(), content_type.into()),
                ("host".into(), host),
                ("x-amz-target".into(), target.into()),
            ],
            body,
        },
        keys,
        region,
        "ecr",
        &jiff::Timestamp::now()
            .strftime("%Y%m%dT%H%M%SZ")
            .to_string(),
    );
    let mut request = http
        .request(reqwest::Method::POST, parsed.as_str())
        .header("content-type", content_type)
        .header("x-amz-target", target)
        .body(&body[..]);
    for (k, v) in signed {
        request = request.header(k, v);
    }
    let answer = http.send(step, request)?;
    if !(200..300).contains(&answer.status) {
        let v: serde_json::Value = serde_json::from_str(&answer.body).unwrap_or_default();
        let detail = match (v.get("__type"), v.get("message").or(v.get("Message"))) {
            (Some(t), Some(m)) => format!(
                "{}: {}",
                t.as_str().unwrap_or_default(),
                m.as_str().unwrap_or_default()
            ),
            _ => snippet(&answer.body),
        };
        return Err(fail(P, step, format!("HTTP {}: {detail}", answer.status)));
    }
    let v: serde_json::Value = serde_json::from_str(&answer.body)
        .map_err(|e| fail(P, step, format!("answer is not JSON: {e}")))?;
    let data = &v["authorizationData"][0];
    let token = data["authorizationToken"]
        .as_str()
        .ok_or_else(|| fail(P, step, "the answer has no authorizationToken"))?;
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(token)
        .ok()
        .and_then(|b| String::from_utf8(b).ok())
        .ok_or_else(|| fail(P, step, "the authorizationToken is not base64 text"))?;
    let (username, password) = decoded
        .split_once(':')
        .ok_or_else(|| fail(P, step, "the authorizationToken is not user:password"))?;
    let expires = data["expiresAt"]
        .as_f64()
        .map(|s| SystemTime::UNIX_EPOCH + Duration::from_secs(s.max(0.0) as u64))
        .unwrap_or_else(|| SystemTime::now() + Duration::from_secs(12 * 3600));
    Ok(Login {
        credentials: Credentials::Basic {
            username: username.to_string(),
            password: password.to_string(),
        },
        expires,
    })
}

/// An ECR login for `registry`.
pub(crate) fn login(
    http: &Http,
    endpoints: &Endpoints,
    identity: &Identity,
    registry: &str,
) -> Result<Login> {
    let region = region_of(registry)
        .or_else(|| endpoints.aws_region.clone())
        .unwrap_or_else(|| "us-east-1".to_string());
    let (keys, keys_expire) = if let Some(role) = &identity.aws_role_arn {
        assume_role(http, endpoints, &region, identity, role)?
    } else if let Some(keys) = &identity.aws_keys {
        (keys.clone(), SystemTime::now() + Duration::from_secs(3600))
    } else if let Some(url) = &endpoints.aws_pod_identity {
        pod_identity(http, url, identity)?
    } else {
        return Err(fail(
            P,
            "sts AssumeRoleWithWebIdentity",
            format!(
                "service account {} has no {AWS_ROLE_ARN_ANNOTATION} annotation naming the IAM \
                 role to assume (and EKS Pod Identity is not configured)",
                identity.name
            ),
        ));
    };
    let mut login = authorization_token(http, endpoints, &region, &keys)?;
    login.expires = login.expires.min(keys_expire);
    Ok(login)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ecr_hosts_name_their_region() {
        assert_eq!(
            region_of("123456789012.dkr.ecr.eu-west-1.amazonaws.com").as_deref(),
            Some("eu-west-1")
        );
        assert_eq!(
            region_of("123456789012.dkr.ecr-fips.us-east-1.amazonaws.com").as_deref(),
            Some("us-east-1")
        );
        assert_eq!(region_of("public.ecr.aws"), None);
        assert_eq!(region_of("x.dkr.ecr.eu-west-1.amazonaws.com"), None);
    }

    #[test]
    fn sts_answers_are_read_by_tag() {
        let xml =
            "<R><Error><Code>AccessDenied</Code><Message>no &amp; never</Message></Error></R>";
        assert_eq!(xml_text(xml, "Code"), Some("AccessDenied"));
        assert_eq!(
            xml_unescape(xml_text(xml, "Message").unwrap()),
            "no & never"
        );
        assert_eq!(session_name("team/deployer"), "timoni-team-deployer");
    }
}
