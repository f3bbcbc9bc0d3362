//! A Project's `spec.verify`: the verification policy its artifact must satisfy, read from the
//! spec and its Secret (public keys in the `*.pub` entries, or for keyless verification the
//! Sigstore trust root in `trusted_root.json` with the `matchOIDCIdentity` regular
//! expressions), as Flux's `OCIRepository` does. The check itself is
//! `timoni_core::oci::sign::verify`, run before the artifact is pulled.

use k8s_openapi::api::core::v1::Secret;
use kube::{Api, Client};
use timoni_core::oci::sign::{
    KeylessIdentity, Matcher, PROVIDER, PublicKey, TrustedRoot, VerificationPolicy,
};
use timoni_core::project::api::VerifySpec;

/// The entry of the Secret holding the trust root for keyless verification.
pub const TRUSTED_ROOT_KEY: &str = "trusted_root.json";

/// The policy of `spec`, reading its Secret from `namespace`; the error says what is wrong.
pub async fn policy(
    client: &Client,
    namespace: &str,
    spec: &VerifySpec,
) -> Result<VerificationPolicy, String> {
    let entries = match &spec.secret_ref {
        Some(r) => {
            let secret = Api::<Secret>::namespaced(client.clone(), namespace)
                .get(&r.name)
                .await
                .map_err(|e| format!("reading the verification Secret {:?}: {e}", r.name))?;
            secret
                .data
                .unwrap_or_default()
                .into_iter()
                .map(|(k, v)| (k, v.0))
                .collect()
        }
        None => std::collections::BTreeMap::new(),
    };
    let secret_name = spec.secret_ref.as_ref().map(|r| r.name.as_str());
    from_entries(spec, secret_name.unwrap_or_default(), &entries)
}

/// The policy of `spec` given the entries of its Secret (named `secret`).
pub fn from_entries(
    spec: &VerifySpec,
    secret: &str,
    entries: &std::collections::BTreeMap<String, Vec<u8>>,
) -> Result<VerificationPolicy, String> {
    if spec.provider != PROVIDER {
        return Err(format!(
            "verification provider {:?} is not supported: use {PROVIDER:?}",
            spec.provider
        ));
    }
    let keys = entries
        .iter()
        .filter(|(k, _)| k.ends_with(".pub"))
        .map(|(k, v)| PublicKey::from_pem(v, &format!("{secret}/{k}")))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())?;
    if !keys.is_empty() {
        return Ok(VerificationPolicy::Keys(keys));
    }
    if spec.match_oidc_identity.is_empty() {
        return Err(match spec.secret_ref {
            Some(_) => format!(
                "the verification Secret {secret:?} has no public key (*.pub) and spec.verify.matchOIDCIdentity is empty"
            ),
            None => "spec.verify needs a secretRef with public keys, or matchOIDCIdentity with a secretRef holding trusted_root.json".to_string(),
        });
    }
    let identities = spec
        .match_oidc_identity
        .iter()
        .map(|m| {
            Ok(KeylessIdentity {
                identity: Matcher::regex(&m.subject, "matchOIDCIdentity.subject")?,
                issuer: Matcher::regex(&m.issuer, "matchOIDCIdentity.issuer")?,
            })
        })
        .collect::<Result<Vec<_>, timoni_core::oci::OciError>>()
        .map_err(|e| e.to_string())?;
    let root = entries.get(TRUSTED_ROOT_KEY).ok_or_else(|| {
        format!(
            "keyless verification needs the Sigstore trust root: put it in the {TRUSTED_ROOT_KEY} entry of the Secret named by spec.verify.secretRef"
        )
    })?;
    let root = TrustedRoot::from_json(root).map_err(|e| e.to_string())?;
    Ok(VerificationPolicy::Keyless { identities, root })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;
    use timoni_core::project::api::{OidcIdentityMatch, SecretRef};

    fn spec(secret: bool, identities: &[(&str, &str)]) -> VerifySpec {
        VerifySpec {
            provider: "cosign".into(),
            secret_ref: secret.then(|| SecretRef {
                name: "keys".into(),
            }),
            match_oidc_identity: identities
                .iter()
                .map(|(i, s)| OidcIdentityMatch {
                    issuer: i.to_string(),
                    subject: s.to_string(),
                })
                .collect(),
        }
    }

    fn err(spec: &VerifySpec, entries: &[(&str, &[u8])]) -> String {
        let entries: BTreeMap<String, Vec<u8>> = entries
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_vec()))
            .collect();
        from_entries(spec, "keys", &entries).unwrap_err()
    }

    #[test]
    fn unusable_policies_say_what_is_missing() {
        let mut other = spec(true, &[]);
        other.provider = "notation".into();
        assert_eq!(
            err(&other, &[]),
            "verification provider \"notation\" is not supported: use \"cosign\""
        );
        assert_eq!(
            err(&spec(true, &[]), &[("README", b"x")]),
            "the verification Secret \"keys\" has no public key (*.pub) and spec.verify.matchOIDCIdentity is empty"
        );
        assert!(
            err(&spec(true, &[]), &[("cosign.pub", b"junk")])
                .starts_with("cannot read the public key keys/cosign.pub")
        );
        assert_eq!(
            err(&spec(true, &[("^https://issuer$", ".*")]), &[]),
            "keyless verification needs the Sigstore trust root: put it in the trusted_root.json entry of the Secret named by spec.verify.secretRef"
        );
        assert!(
            err(&spec(true, &[("(", ".*")]), &[]).starts_with("invalid matchOIDCIdentity.issuer")
        );
        let keys = timoni_core::oci::sign::generate_key_pair(b"").unwrap();
        let entries = BTreeMap::from([("cosign.pub".to_string(), keys.public_key.into_bytes())]);
        assert!(matches!(
            from_entries(&spec(true, &[]), "keys", &entries),
            Ok(VerificationPolicy::Keys(k)) if k.len() == 1
        ));
    }
}
