//! Parsing of artifact URLs `oci://<host>/<repo>[:tag|@sha256:…]`, with the OCI grammar for
//! repositories, tags and digests, so that a bad URL fails before any network access.

use std::fmt;

use super::error::{OciError, Result};

/// A parsed `oci://` URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArtifactUrl {
    /// Registry host, with its port if any (`127.0.0.1:5000`).
    pub registry: String,
    /// Repository path inside the registry (`stefanprodan/podinfo`).
    pub repository: String,
    /// The tag given after `:`.
    pub tag: Option<String>,
    /// The digest given after `@`.
    pub digest: Option<String>,
}

impl ArtifactUrl {
    /// Parses `oci://host/repo[:tag][@digest]`.
    pub fn parse(url: &str) -> Result<Self> {
        let bad = |reason: &str| OciError::InvalidUrl {
            url: url.to_string(),
            reason: reason.to_string(),
        };
        let rest = url
            .strip_prefix("oci://")
            .ok_or_else(|| bad("the URL must start with oci://"))?;
        let (rest, digest) = match rest.split_once('@') {
            Some((r, d)) => {
                validate_digest(d).map_err(|e| bad(&e))?;
                (r, Some(d.to_string()))
            }
            None => (rest, None),
        };
        let (host, path) = rest
            .split_once('/')
            .ok_or_else(|| bad("expected oci://<host>/<repository>"))?;
        if host.is_empty() {
            return Err(bad("the registry host is empty"));
        }
        // A ':' after the last '/' starts the tag; one before it belongs to the host's port.
        let (repository, tag) = match path.rfind(':') {
            Some(i) if !path[i..].contains('/') => (&path[..i], Some(path[i + 1..].to_string())),
            _ => (path, None),
        };
        validate_repository(repository).map_err(|e| bad(&e))?;
        if let Some(t) = &tag {
            validate_tag(t).map_err(|e| bad(&e))?;
        }
        Ok(ArtifactUrl {
            registry: host.to_string(),
            repository: repository.to_string(),
            tag,
            digest,
        })
    }

    /// `host/repo`, without tag or digest (Timoni's `repository` output field).
    pub fn repo(&self) -> String {
        format!("{}/{}", self.registry, self.repository)
    }

    /// The same repository with another tag and no digest.
    pub fn with_tag(&self, tag: &str) -> Self {
        ArtifactUrl {
            tag: Some(tag.to_string()),
            digest: None,
            ..self.clone()
        }
    }

    /// The same repository pinned to a digest.
    pub fn with_digest(&self, digest: &str) -> Self {
        ArtifactUrl {
            tag: None,
            digest: Some(digest.to_string()),
            ..self.clone()
        }
    }

    /// The digest if any, else the tag if any, else `latest`: what a manifest request names.
    pub fn reference(&self) -> &str {
        self.digest
            .as_deref()
            .or(self.tag.as_deref())
            .unwrap_or("latest")
    }
}

impl fmt::Display for ArtifactUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "oci://{}/{}", self.registry, self.repository)?;
        if let Some(t) = &self.tag {
            write!(f, ":{t}")?;
        }
        if let Some(d) = &self.digest {
            write!(f, "@{d}")?;
        }
        Ok(())
    }
}

/// Checks the OCI tag grammar `[a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}`.
pub fn validate_tag(tag: &str) -> std::result::Result<(), String> {
    let ok = !tag.is_empty()
        && tag.len() <= 128
        && tag
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_')
        && tag
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'));
    if ok {
        Ok(())
    } else {
        Err(format!("{tag:?} is not a valid tag"))
    }
}

/// Checks `sha256:<64 lowercase hex>`, the only algorithm Timoni produces.
pub fn validate_digest(digest: &str) -> std::result::Result<(), String> {
    match digest.strip_prefix("sha256:") {
        Some(hex)
            if hex.len() == 64 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) =>
        {
            Ok(())
        }
        _ => Err(format!("{digest:?} is not a sha256 digest")),
    }
}

/// Checks the OCI repository grammar: lowercase path components separated by `/`, each made of
/// alphanumerics joined by `.`, `_`, `__` or runs of `-`.
fn validate_repository(repo: &str) -> std::result::Result<(), String> {
    let component_ok = |c: &str| {
        let b = c.as_bytes();
        !b.is_empty()
            && b[0].is_ascii_lowercase() | b[0].is_ascii_digit()
            && b[b.len() - 1].is_ascii_lowercase() | b[b.len() - 1].is_ascii_digit()
            && b.iter()
                .all(|&x| x.is_ascii_lowercase() || x.is_ascii_digit() || b"._-".contains(&x))
            && !c.contains("..")
            && !c.contains("___")
    };
    if repo.is_empty() || !repo.split('/').all(component_ok) {
        return Err(format!("{repo:?} is not a valid repository name"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_host_port_repo_tag_and_digest() {
        let d = format!("sha256:{}", "a".repeat(64));
        let u = ArtifactUrl::parse(&format!("oci://127.0.0.1:5000/a/b:1.0.0@{d}")).unwrap();
        assert_eq!(u.registry, "127.0.0.1:5000");
        assert_eq!(u.repository, "a/b");
        assert_eq!(u.tag.as_deref(), Some("1.0.0"));
        assert_eq!(u.digest.as_deref(), Some(d.as_str()));
        assert_eq!(u.reference(), d);
        let u = ArtifactUrl::parse("oci://localhost:5000/starter").unwrap();
        assert_eq!((u.repository.as_str(), u.tag.as_deref()), ("starter", None));
        assert_eq!(u.reference(), "latest");
        assert_eq!(u.to_string(), "oci://localhost:5000/starter");
    }

    #[test]
    fn rejects_bad_urls_with_a_reason() {
        for bad in [
            "docker.io/x",
            "oci://host",
            "oci:///x",
            "oci://h/Upper",
            "oci://h/x:bad tag",
            "oci://h/x@sha256:12",
            "oci://h/a//b",
        ] {
            let e = ArtifactUrl::parse(bad).unwrap_err().to_string();
            assert!(e.starts_with("invalid artifact URL"), "{bad}: {e}");
        }
    }
}
