//! Keyless signing as `timoni mod push --sign cosign` without `--cosign-key` does it in CI,
//! offline: the OIDC token from a GitHub Actions token endpoint or given as is, a certificate
//! from Fulcio and an entry in Rekor (sigstore-js's own stand-ins, `@sigstore/mock`, served by
//! `testdata/sigstore-js/services.js`), the signature stored in the cosign signature image of a
//! real registry; then checked by our keyless verification against the stand-ins' trusted root
//! (the right identity and issuer pass, others fail) and by sigstore-js's verifier, which also
//! checks the certificate's SCT. Skips loudly without `$TIMONI_SIGSTORE_JS` unless
//! `TIMONI_REQUIRE_SIGSTORE_JS=1`.

use std::collections::BTreeMap;
use std::path::Path;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use timoni_core::oci::sign::{
    self, KeylessIdentity, KeylessOptions, Matcher, SigningKey, TokenSource, TrustedRoot,
    VerificationPolicy,
};
use timoni_core::oci::{ArtifactUrl, ConnectOptions, Credentials, OciError, Registry};

#[path = "support/sigstore_js.rs"]
mod js;
#[path = "support/oci.rs"]
mod oci_support;
#[path = "support/registry.rs"]
mod support;

use oci_support::{RegistryExt, module_copy};

const WORKFLOW: &str =
    "https://github.com/org/repo/.github/workflows/release.yaml@refs/tags/v1.0.0";
const ACTIONS: &str = "https://token.actions.githubusercontent.com";
const REQUEST_TOKEN: &str = "actions-request-token";

fn keyless(identity: &str, issuer: &str, root: &TrustedRoot) -> VerificationPolicy {
    VerificationPolicy::Keyless {
        identities: vec![KeylessIdentity {
            identity: Matcher::Exact(identity.into()),
            issuer: Matcher::Exact(issuer.into()),
        }],
        root: root.clone(),
    }
}

/// An unsigned JWT with these claims (the stand-in Fulcio decodes tokens without verifying them).
fn token(claims: serde_json::Value) -> String {
    let part = |v: serde_json::Value| URL_SAFE_NO_PAD.encode(v.to_string());
    format!(
        "{}.{}.",
        part(serde_json::json!({"alg": "none"})),
        part(claims)
    )
}

fn path(p: &Path) -> String {
    p.to_str().unwrap().to_string()
}

#[test]
fn keyless_signature_from_fulcio_and_rekor_verifies_for_its_identity_only() {
    let Some(server) = support::start(None) else {
        return;
    };
    let Some(modules) = js::modules() else {
        return;
    };
    let services = js::Services::start(&modules, REQUEST_TOKEN, WORKFLOW, ACTIONS);
    let tmp = tempfile::tempdir().unwrap();
    let dir = module_copy(tmp.path());
    let reg = server.client(Credentials::Anonymous);
    let url: ArtifactUrl = server.oci_url("keyless-signed");
    let connect = ConnectOptions::default();
    let digest = oci_support::push(&reg, &dir, &url, "1.0.0", false);
    let pinned = url.with_digest(&digest);
    let root_file = tmp.path().join("trusted_root.json");
    std::fs::write(&root_file, &services.trusted_root).unwrap();
    let root = TrustedRoot::from_file(&root_file).unwrap();

    // Nothing signed yet.
    let reason = match sign::verify(&pinned, &keyless(WORKFLOW, ACTIONS, &root), &connect) {
        Err(OciError::Verification { reason, .. }) => reason,
        other => panic!("an unsigned module verified: {other:?}"),
    };
    assert_eq!(reason, "no signatures found");

    // GitHub Actions' ambient token, as in a release workflow.
    let options = KeylessOptions {
        token: TokenSource::GithubActions {
            request_url: services.actions_request_url(),
            request_token: REQUEST_TOKEN.into(),
        },
        fulcio_url: services.url.clone(),
        rekor_url: services.url.clone(),
    };
    let key = SigningKey::keyless(&options).unwrap();
    assert_eq!(key.keyless_identity(), Some(WORKFLOW));
    let signed = sign::sign(&pinned, &key, &connect).unwrap();
    let tag = format!("{}.sig", digest.replace(':', "-"));
    assert_eq!(signed, url.with_tag(&tag).to_string());

    let verified = sign::verify(&pinned, &keyless(WORKFLOW, ACTIONS, &root), &connect).unwrap();
    assert_eq!((verified.found, verified.matching), (1, 1));
    let regexp = VerificationPolicy::Keyless {
        identities: vec![KeylessIdentity {
            identity: Matcher::regex(r"^https://github\.com/org/repo/", "x").unwrap(),
            issuer: Matcher::regex(r"^https://token\.actions\.", "x").unwrap(),
        }],
        root: root.clone(),
    };
    assert_eq!(
        sign::verify(&pinned, &regexp, &connect).unwrap().matching,
        1
    );
    let refused = "no matching signatures: none of the 1 signature(s) has a trusted certificate";
    for (what, identity, issuer) in [
        ("a wrong identity", "https://github.com/evil/repo", ACTIONS),
        ("a wrong issuer", WORKFLOW, "https://accounts.google.com"),
    ] {
        match sign::verify(&pinned, &keyless(identity, issuer, &root), &connect) {
            Err(OciError::Verification { reason, .. }) => {
                assert!(reason.starts_with(refused), "{what}: {reason}")
            }
            other => panic!("{what} verified: {other:?}"),
        }
    }

    // The layer carries what cosign stores for a keyless signature.
    let sig_manifest: serde_json::Value =
        serde_json::from_slice(&reg.pull_manifest(&url.with_tag(&tag)).unwrap()).unwrap();
    let layer = &sig_manifest["layers"][0];
    let annotations: BTreeMap<String, String> =
        serde_json::from_value(layer["annotations"].clone()).unwrap();
    assert_eq!(
        annotations.keys().collect::<Vec<_>>(),
        [
            "dev.cosignproject.cosign/signature",
            "dev.sigstore.cosign/bundle",
            "dev.sigstore.cosign/certificate",
            "dev.sigstore.cosign/chain",
        ]
    );
    let bundle: serde_json::Value =
        serde_json::from_str(&annotations["dev.sigstore.cosign/bundle"]).unwrap();
    let fields = |v: &serde_json::Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    assert_eq!(fields(&bundle), ["SignedEntryTimestamp", "Payload"]);
    assert_eq!(
        fields(&bundle["Payload"]),
        ["body", "integratedTime", "logIndex", "logID"]
    );

    // sigstore-js checks the same layer, its SCT included.
    let payload = reg
        .pull_blob(
            &url,
            layer["digest"].as_str().unwrap(),
            layer["size"].as_u64().unwrap(),
            1 << 20,
        )
        .unwrap();
    let files = [
        ("payload", payload),
        (
            "cert.pem",
            annotations["dev.sigstore.cosign/certificate"]
                .clone()
                .into_bytes(),
        ),
        (
            "rekor.json",
            annotations["dev.sigstore.cosign/bundle"]
                .clone()
                .into_bytes(),
        ),
    ];
    for (name, bytes) in &files {
        std::fs::write(tmp.path().join(name), bytes).unwrap();
    }
    let js_verify = |identity: &str| {
        js::run(
            &modules,
            &[
                "verify-keyless",
                &path(&root_file),
                &path(&tmp.path().join("payload")),
                &annotations["dev.cosignproject.cosign/signature"],
                &path(&tmp.path().join("cert.pem")),
                &path(&tmp.path().join("rekor.json")),
                identity,
                ACTIONS,
            ],
        )
    };
    let out = js_verify(WORKFLOW);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "verified\n",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = js_verify("https://github.com/evil/repo");
    assert!(
        !out.status.success(),
        "sigstore-js accepted a wrong identity"
    );

    // A token given as is (SIGSTORE_ID_TOKEN) signs for its own subject: a second layer,
    // which verifies for that identity while the first still does for the workflow.
    let person = "https://example.com/users/dev";
    let given = KeylessOptions {
        token: TokenSource::Given(token(
            serde_json::json!({"iss": "https://accounts.example.com", "sub": person, "aud": "sigstore"}),
        )),
        ..options
    };
    sign::sign(&pinned, &SigningKey::keyless(&given).unwrap(), &connect).unwrap();
    let both = sign::verify(
        &pinned,
        &keyless(person, "https://accounts.example.com", &root),
        &connect,
    )
    .unwrap();
    assert_eq!((both.found, both.matching), (2, 1));
    assert_eq!(
        sign::verify(&pinned, &keyless(WORKFLOW, ACTIONS, &root), &connect)
            .unwrap()
            .matching,
        1
    );
}

/// What goes wrong before anything is signed names the step and the service.
#[test]
fn keyless_signing_failures_name_the_step() {
    let Some(modules) = js::modules() else {
        return;
    };
    let services = js::Services::start(&modules, REQUEST_TOKEN, WORKFLOW, ACTIONS);
    let options = |token| KeylessOptions {
        token,
        fulcio_url: services.url.clone(),
        rekor_url: services.url.clone(),
    };
    let message = |token| match SigningKey::keyless(&options(token)) {
        Err(e) => e.to_string(),
        Ok(k) => panic!("signing key made: {k:?}"),
    };
    let wrong = message(TokenSource::GithubActions {
        request_url: services.actions_request_url(),
        request_token: "wrong".into(),
    });
    assert_eq!(
        wrong,
        format!(
            "keyless signing: requesting the GitHub Actions OIDC token ({}/actions/token): HTTP 401 Unauthorized: bad request token",
            services.url
        )
    );
    assert_eq!(
        message(TokenSource::Given("not-a-jwt".into())),
        "keyless signing: the OIDC identity token is not a JWT"
    );
    let no_fulcio = KeylessOptions {
        fulcio_url: format!("{}/nowhere", services.url),
        ..options(TokenSource::Given(token(serde_json::json!({"sub": "x"}))))
    };
    let e = SigningKey::keyless(&no_fulcio).unwrap_err().to_string();
    assert_eq!(
        e,
        format!(
            "keyless signing: requesting a certificate from Fulcio ({}/nowhere/api/v2/signingCert): HTTP 404 Not Found: not found",
            services.url
        )
    );
}
