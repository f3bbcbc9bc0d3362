//! Cosign-compatible signing and verification against a real registry (Debian's
//! `docker-registry`, from the shared harness `support/registry.rs` and `support/oci.rs`):
//! key-based signatures made with a generated cosign key pair, refusals of unsigned, re-tagged and foreign signatures,
//! several signatures in one signature image, key signatures written in cosign v3's bundle form
//! (a referrer, `sign_bundle`), keyless verification with the throwaway Fulcio
//! CA, leaf certificates and Rekor entries of `support/sigstore.rs`, and interoperability: a
//! signature made by cosign verifies with our key check; ours verify with skopeo and openssl
//! doing cosign's key-based check (skips loudly without them unless `TIMONI_REQUIRE_SKOPEO=1`)
//! and with sigstore-js (our `.sig` layers and bundles), whose bundles in cosign v3's referrers
//! form verify with ours (skips loudly without `$TIMONI_SIGSTORE_JS` unless
//! `TIMONI_REQUIRE_SIGSTORE_JS=1`, through `support/sigstore_js.rs`).

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use sha2::{Digest, Sha256};
use timoni_core::oci::sign::{
    self, KeylessIdentity, Matcher, PublicKey, SigningKey, TrustedRoot, VerificationPolicy,
};
use timoni_core::oci::{
    ArtifactUrl, ConnectOptions, Credentials, OciClientRegistry, OciError, Registry,
};

#[path = "support/sigstore.rs"]
mod fake;
#[path = "support/sigstore_js.rs"]
mod js;
#[path = "support/oci.rs"]
mod oci_support;
#[path = "support/registry.rs"]
mod support;

use fake::{
    FakeSigstore, SIMPLE_SIGNING, attach_bundles, push_signature_image, simple_signing_payload,
};

use oci_support::{RegistryExt, module_copy};

/// The reason given when signatures are stored but none holds up (around the tag name).
const INVALID: &str = "no valid signatures: the 1 signature(s) under ";
const INVALID_END: &str =
    "do not sign this digest, or their certificate or transparency log entry does not verify";

/// Pushes the test module as `version` (with `message` in its values) and returns its digest.
fn push(
    reg: &OciClientRegistry,
    dir: &Path,
    url: &ArtifactUrl,
    version: &str,
    message: &str,
) -> String {
    std::fs::write(
        dir.join("values.cue"),
        format!("package main\n\nvalues: message: {message:?}\n"),
    )
    .unwrap();
    oci_support::push(reg, dir, url, version, false)
}

struct Keys {
    signing: SigningKey,
    public: String,
}

fn keys(password: &str) -> Keys {
    let pair = sign::generate_key_pair(password.as_bytes()).unwrap();
    Keys {
        signing: SigningKey::from_encrypted_pem(
            pair.private_key.as_bytes(),
            password.as_bytes(),
            "cosign.key",
        )
        .unwrap(),
        public: pair.public_key,
    }
}

fn by_key(k: &Keys, name: &str) -> VerificationPolicy {
    VerificationPolicy::Keys(vec![
        PublicKey::from_pem(k.public.as_bytes(), name).unwrap(),
    ])
}

fn verification_reason(r: Result<sign::Verified, OciError>) -> String {
    match r {
        Err(OciError::Verification { reason, .. }) => reason,
        other => panic!("expected a verification failure, got {other:?}"),
    }
}

/// The manifest of `url` and its digest.
fn manifest(reg: &OciClientRegistry, url: &ArtifactUrl) -> (serde_json::Value, String) {
    let bytes = reg.pull_manifest(url).unwrap();
    let digest = format!("sha256:{}", hex::encode(Sha256::digest(&bytes)));
    (serde_json::from_slice(&bytes).unwrap(), digest)
}

#[test]
fn key_signed_module_verifies_and_unsigned_retagged_or_foreign_signatures_fail() {
    let Some(server) = support::start(None) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = module_copy(tmp.path());
    let reg = server.client(Credentials::Anonymous);
    let url = server.oci_url("signed");
    let connect = ConnectOptions::default();
    let ours = keys("s3cret");
    let other = keys("other");

    let d1 = push(&reg, &dir, &url, "1.0.0", "one");
    let signed = sign::sign(&url.with_digest(&d1), &ours.signing, &connect).unwrap();
    assert_eq!(
        signed,
        format!(
            "oci://{}/signed:{}.sig",
            server.host(),
            d1.replace(':', "-")
        )
    );

    // The signature image is cosign's: one simple-signing layer whose payload names the digest
    // and whose annotation holds the base64 signature.
    let sig_url = url.with_tag(&format!("{}.sig", d1.replace(':', "-")));
    let (m, _) = manifest(&reg, &sig_url);
    let layer = &m["layers"][0];
    assert_eq!(layer["mediaType"], SIMPLE_SIGNING);
    assert!(
        layer["annotations"]["dev.cosignproject.cosign/signature"]
            .as_str()
            .is_some_and(|s| STANDARD.decode(s).is_ok())
    );
    let payload = reg
        .pull_blob(
            &url,
            layer["digest"].as_str().unwrap(),
            layer["size"].as_u64().unwrap(),
            1 << 20,
        )
        .unwrap();
    let payload: serde_json::Value = serde_json::from_slice(&payload).unwrap();
    assert_eq!(
        payload["critical"]["image"]["docker-manifest-digest"],
        d1.as_str()
    );
    assert_eq!(
        payload["critical"]["type"],
        "cosign container image signature"
    );
    assert_eq!(
        payload["critical"]["identity"]["docker-reference"],
        format!("{}/signed", server.host())
    );

    // Verified with the public key, by digest and through the version tag.
    let v = sign::verify(
        &url.with_digest(&d1),
        &by_key(&ours, "cosign.pub"),
        &connect,
    )
    .unwrap();
    assert_eq!(
        (v.digest.as_str(), v.found, v.matching),
        (d1.as_str(), 1, 1)
    );
    let (pinned, _) = sign::verify_reference(
        &reg,
        &url,
        Some("1.0.0"),
        &by_key(&ours, "cosign.pub"),
        &connect,
    )
    .unwrap();
    assert_eq!(pinned, url.with_digest(&d1));

    // Another key's public key does not verify it.
    let reason = verification_reason(sign::verify(
        &url.with_digest(&d1),
        &by_key(&other, "other.pub"),
        &connect,
    ));
    assert_eq!(
        reason,
        "no matching signatures: none of the 1 signature(s) verifies with other.pub"
    );

    // The tag moved to another manifest (a tampered module): that manifest has no signature.
    let d2 = push(&reg, &dir, &url, "1.0.0", "tampered");
    assert_ne!(d1, d2);
    let err = sign::verify_reference(
        &reg,
        &url,
        Some("1.0.0"),
        &by_key(&ours, "cosign.pub"),
        &connect,
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "verifying oci://{}/signed@{d2} failed: no signatures found",
            server.host()
        )
    );

    // A valid signature of d1 copied to d2's signature tag does not count for d2.
    let (m1, _) = manifest(&reg, &sig_url);
    reg.push_manifest(
        &url,
        &format!("{}.sig", d2.replace(':', "-")),
        &serde_json::to_vec(&m1).unwrap(),
        "application/vnd.oci.image.manifest.v1+json",
    )
    .unwrap();
    let reason = verification_reason(sign::verify(
        &url.with_digest(&d2),
        &by_key(&ours, "cosign.pub"),
        &connect,
    ));
    assert_eq!(
        reason,
        format!("{INVALID}{}.sig {INVALID_END}", d2.replace(':', "-"))
    );

    // A payload for d2 carrying d1's signature (bytes that were never signed) is refused.
    let payload = simple_signing_payload(&url, &d2);
    let forged = layer["annotations"]["dev.cosignproject.cosign/signature"]
        .as_str()
        .unwrap()
        .to_string();
    push_signature_image(
        &reg,
        &url,
        &d2,
        &payload,
        &BTreeMap::from([("dev.cosignproject.cosign/signature".to_string(), forged)]),
    );
    let reason = verification_reason(sign::verify(
        &url.with_digest(&d2),
        &by_key(&ours, "cosign.pub"),
        &connect,
    ));
    assert_eq!(
        reason,
        "no matching signatures: none of the 1 signature(s) verifies with cosign.pub"
    );
}

#[test]
fn encrypted_private_key_needs_its_password() {
    let pair = sign::generate_key_pair(b"right").unwrap();
    assert!(
        pair.private_key
            .starts_with("-----BEGIN ENCRYPTED SIGSTORE PRIVATE KEY-----"),
        "{}",
        pair.private_key
    );
    assert!(pair.public_key.starts_with("-----BEGIN PUBLIC KEY-----"));
    let err = SigningKey::from_encrypted_pem(pair.private_key.as_bytes(), b"wrong", "cosign.key")
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("cannot decrypt the private key cosign.key (is COSIGN_PASSWORD right?)"),
        "{err}"
    );
    let err = PublicKey::from_pem(b"not a key", "cosign.pub")
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("cannot read the public key cosign.pub"),
        "{err}"
    );
}

fn keyless(identity: Matcher, issuer: Matcher, root: TrustedRoot) -> VerificationPolicy {
    VerificationPolicy::Keyless {
        identities: vec![KeylessIdentity { identity, issuer }],
        root,
    }
}

#[test]
fn keyless_signature_verifies_identity_and_issuer_against_the_trusted_root() {
    let Some(server) = support::start(None) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = module_copy(tmp.path());
    let reg = server.client(Credentials::Anonymous);
    let url = server.oci_url("keyless");
    let connect = ConnectOptions::default();
    let sigstore = FakeSigstore::new();
    let root_file = tmp.path().join("trusted_root.json");
    std::fs::write(&root_file, sigstore.root_json()).unwrap();
    let root = TrustedRoot::from_file(&root_file).unwrap();
    let workflow = "https://github.com/org/repo/.github/workflows/release.yaml@refs/tags/v1.0.0";
    let actions = "https://token.actions.githubusercontent.com";

    let digest = push(&reg, &dir, &url, "1.0.0", "keyless");
    let payload = simple_signing_payload(&url, &digest);
    push_signature_image(
        &reg,
        &url,
        &digest,
        &payload,
        &sigstore.sign(&payload, workflow, actions),
    );
    let pinned = url.with_digest(&digest);

    let exact = keyless(
        Matcher::Exact(workflow.into()),
        Matcher::Exact(actions.into()),
        root.clone(),
    );
    assert_eq!(sign::verify(&pinned, &exact, &connect).unwrap().matching, 1);
    let regexp = keyless(
        Matcher::regex("^https://github.com/org/.*$", "certificate-identity-regexp").unwrap(),
        Matcher::regex(
            r"^https://token\.actions\.",
            "certificate-oidc-issuer-regexp",
        )
        .unwrap(),
        root.clone(),
    );
    assert_eq!(
        sign::verify(&pinned, &regexp, &connect).unwrap().matching,
        1
    );

    let expected = "no matching signatures: none of the 1 signature(s) has a trusted certificate";
    for (what, policy) in [
        (
            "a wrong identity",
            keyless(
                Matcher::Exact("https://github.com/evil/repo".into()),
                Matcher::Exact(actions.into()),
                root.clone(),
            ),
        ),
        (
            "a wrong identity pattern",
            keyless(
                Matcher::regex("^https://github.com/other/", "x").unwrap(),
                Matcher::Exact(actions.into()),
                root.clone(),
            ),
        ),
        (
            "a wrong issuer",
            keyless(
                Matcher::Exact(workflow.into()),
                Matcher::Exact("https://accounts.google.com".into()),
                root.clone(),
            ),
        ),
    ] {
        let reason = verification_reason(sign::verify(&pinned, &policy, &connect));
        assert!(reason.starts_with(expected), "{what}: {reason}");
    }
    // Another instance's root: the Rekor bundle's log is unknown, so the signature is unusable.
    let stranger = keyless(
        Matcher::Exact(workflow.into()),
        Matcher::Exact(actions.into()),
        FakeSigstore::new().root(),
    );
    let reason = verification_reason(sign::verify(&pinned, &stranger, &connect));
    let tag = format!("{}.sig", digest.replace(':', "-"));
    assert_eq!(reason, format!("{INVALID}{tag} {INVALID_END}"));

    // An email identity from another module signed by the right CA, but a Rekor bundle whose
    // signed timestamp was altered (a later integrated time), is refused.
    let d2 = push(&reg, &dir, &url, "2.0.0", "email");
    let payload = simple_signing_payload(&url, &d2);
    let mut annotations = sigstore.sign(&payload, "dev@example.com", "https://accounts.google.com");
    let email = keyless(
        Matcher::Exact("dev@example.com".into()),
        Matcher::Exact("https://accounts.google.com".into()),
        root.clone(),
    );
    push_signature_image(&reg, &url, &d2, &payload, &annotations);
    assert_eq!(
        sign::verify(&url.with_digest(&d2), &email, &connect)
            .unwrap()
            .matching,
        1
    );
    let bundle = annotations.get_mut("dev.sigstore.cosign/bundle").unwrap();
    let mut b: serde_json::Value = serde_json::from_str(bundle).unwrap();
    b["Payload"]["logIndex"] = 8.into();
    *bundle = b.to_string();
    push_signature_image(&reg, &url, &d2, &payload, &annotations);
    let reason = verification_reason(sign::verify(&url.with_digest(&d2), &email, &connect));
    let tag = format!("{}.sig", d2.replace(':', "-"));
    assert_eq!(reason, format!("{INVALID}{tag} {INVALID_END}"));

    // A Rekor entry that records another signature does not vouch for this one.
    let mut annotations = sigstore.sign(&payload, "dev@example.com", "https://accounts.google.com");
    let other = sigstore.sign(
        b"something else",
        "dev@example.com",
        "https://accounts.google.com",
    );
    annotations.insert(
        "dev.sigstore.cosign/bundle".into(),
        other["dev.sigstore.cosign/bundle"].clone(),
    );
    push_signature_image(&reg, &url, &d2, &payload, &annotations);
    let reason = verification_reason(sign::verify(&url.with_digest(&d2), &email, &connect));
    assert!(reason.starts_with(expected), "{reason}");
}

/// Whether `skopeo` and `openssl` are here; skips loudly when not, unless
/// `TIMONI_REQUIRE_SKOPEO=1` (set by `.ci/run`, which installs them).
fn independent_tools() -> bool {
    let present = |t: &str| Command::new(t).arg("--version").output().is_ok();
    if present("skopeo") && present("openssl") {
        return true;
    }
    let why = "skopeo or openssl is missing; install the Debian packages skopeo and openssl to check signatures with independent tools";
    if std::env::var("TIMONI_REQUIRE_SKOPEO").is_ok_and(|v| v == "1") {
        panic!("TIMONI_REQUIRE_SKOPEO=1 but {why}");
    }
    eprintln!("\n!!!!!!!! SKIPPED (set TIMONI_REQUIRE_SKOPEO=1 to fail instead): {why}\n");
    false
}

fn run(cmd: &mut Command) -> Vec<u8> {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// cosign's key-based check done by other implementations: skopeo (containers/image) reads the
/// signature image from the `.sig` tag and the module's manifest, and openssl checks the ECDSA
/// signature of the payload with the PEM public key. (Debian's skopeo is built without its own
/// sigstore verification, and no cosign binary is installable here.)
#[test]
fn our_signatures_verify_with_skopeo_and_openssl() {
    let Some(server) = support::start(None) else {
        return;
    };
    if !independent_tools() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = module_copy(tmp.path());
    let reg = server.client(Credentials::Anonymous);
    let host = server.host();
    let url = server.oci_url("interop");
    let ours = keys("s3cret");
    let pub_file = tmp.path().join("cosign.pub");
    std::fs::write(&pub_file, &ours.public).unwrap();
    let digest = push(&reg, &dir, &url, "1.0.0", "interop");
    sign::sign(
        &url.with_digest(&digest),
        &ours.signing,
        &ConnectOptions::default(),
    )
    .unwrap();

    let skopeo = |args: &[&str]| {
        run(Command::new("skopeo")
            .args(["--insecure-policy"])
            .args(args))
    };
    let manifest = skopeo(&[
        "inspect",
        "--raw",
        "--tls-verify=false",
        &format!("docker://{host}/interop:1.0.0"),
    ]);
    let module_digest = format!("sha256:{}", hex::encode(Sha256::digest(&manifest)));
    assert_eq!(module_digest, digest);
    let sig_tag = format!("{}.sig", digest.replace(':', "-"));
    let copied = tmp.path().join("sig");
    skopeo(&[
        "copy",
        "--src-tls-verify=false",
        &format!("docker://{host}/interop:{sig_tag}"),
        &format!("dir:{}", copied.display()),
    ]);
    let m: serde_json::Value =
        serde_json::from_slice(&std::fs::read(copied.join("manifest.json")).unwrap()).unwrap();
    let layer = &m["layers"][0];
    assert_eq!(layer["mediaType"], SIMPLE_SIGNING);
    let blob = layer["digest"]
        .as_str()
        .unwrap()
        .trim_start_matches("sha256:");
    let payload_file = copied.join(blob);
    let payload: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&payload_file).unwrap()).unwrap();
    assert_eq!(
        payload["critical"]["image"]["docker-manifest-digest"],
        module_digest.as_str()
    );
    let signature = STANDARD
        .decode(
            layer["annotations"]["dev.cosignproject.cosign/signature"]
                .as_str()
                .unwrap(),
        )
        .unwrap();
    let sig_file = tmp.path().join("payload.sig");
    std::fs::write(&sig_file, &signature).unwrap();
    let verify = |key: &Path| {
        Command::new("openssl")
            .args(["dgst", "-sha256", "-verify"])
            .arg(key)
            .arg("-signature")
            .arg(&sig_file)
            .arg(&payload_file)
            .output()
            .unwrap()
    };
    let out = verify(&pub_file);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "Verified OK\n",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let other_pub = tmp.path().join("other.pub");
    std::fs::write(&other_pub, keys("other").public).unwrap();
    assert!(
        !verify(&other_pub).status.success(),
        "openssl accepted another key"
    );
}

/// A signature made by cosign (Go) and published with the `sigstore` crate's tests: the
/// simple-signing payload of `registry-testing.svc.lan/busybox` and its signature, with the
/// public key. Our key verification accepts it, and refuses it for another payload.
#[test]
fn a_signature_made_by_cosign_verifies_with_its_public_key() {
    let public = "-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAENptdY/l3nB0yqkXLBWkZWQwo6+cu
OSWS1X9vPavpiQOoTTGC0xX57OojUadxF1cdQmrsiReWg2Wn4FneJfa8xw==
-----END PUBLIC KEY-----";
    let signature = "MEUCIQD6q/COgzOyW0YH1Dk+CCYSt4uAhm3FDHUwvPI55zwnlwIgE0ZK58ZOWpZw8YVmBapJhBqCfdPekIknimuO0xH8Jh8=";
    let payload = br#"{"critical":{"identity":{"docker-reference":"registry-testing.svc.lan/busybox"},"image":{"docker-manifest-digest":"sha256:f3cfc9d0dbf931d3db4685ec659b7ac68e2a578219da4aae65427886e649b06b"},"type":"cosign container image signature"},"optional":null}"#;
    let key = PublicKey::from_pem(public.as_bytes(), "cosign.pub").unwrap();
    assert!(key.verifies(payload, signature));
    let other = String::from_utf8_lossy(payload).replace("busybox", "alpine");
    assert!(!key.verifies(other.as_bytes(), signature));
}

/// `cosign sign` adds a layer to the signature image instead of replacing it, so that an
/// artifact signed by two parties (or keylessly in CI and by a release key) keeps both
/// signatures; verification accepts the artifact when any one layer satisfies the policy.
#[test]
fn signing_twice_appends_a_layer_and_each_key_verifies() {
    let Some(server) = support::start(None) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = module_copy(tmp.path());
    let reg = server.client(Credentials::Anonymous);
    let url = server.oci_url("twice");
    let connect = ConnectOptions::default();
    let (alice, bob) = (keys("alice"), keys("bob"));
    let digest = push(&reg, &dir, &url, "1.0.0", "twice");
    let pinned = url.with_digest(&digest);
    let sig_url = url.with_tag(&format!("{}.sig", digest.replace(':', "-")));

    // A keyless signature is there first, as CI would leave it.
    let sigstore = FakeSigstore::new();
    let ci = "https://github.com/org/repo/.github/workflows/release.yaml@refs/tags/v1.0.0";
    let actions = "https://token.actions.githubusercontent.com";
    let payload = simple_signing_payload(&url, &digest);
    push_signature_image(
        &reg,
        &url,
        &digest,
        &payload,
        &sigstore.sign(&payload, ci, actions),
    );
    let (keyless_image, _) = manifest(&reg, &sig_url);

    sign::sign(&pinned, &alice.signing, &connect).unwrap();
    sign::sign(&pinned, &bob.signing, &connect).unwrap();
    let (m, _) = manifest(&reg, &sig_url);
    let layers = m["layers"].as_array().unwrap();
    assert_eq!(layers.len(), 3, "{m:#}");
    // The keyless layer is kept as it was, certificate and Rekor bundle included.
    assert_eq!(layers[0], keyless_image["layers"][0]);
    assert!(
        layers
            .iter()
            .all(|l| l["mediaType"] == SIMPLE_SIGNING && l["annotations"].is_object())
    );
    // The config lists every layer, as the image cosign writes does.
    let config = reg
        .pull_blob(
            &url,
            m["config"]["digest"].as_str().unwrap(),
            m["config"]["size"].as_u64().unwrap(),
            1 << 20,
        )
        .unwrap();
    let config: serde_json::Value = serde_json::from_slice(&config).unwrap();
    let diff_ids: Vec<&serde_json::Value> = layers.iter().map(|l| &l["digest"]).collect();
    assert_eq!(
        config["rootfs"]["diff_ids"]
            .as_array()
            .unwrap()
            .iter()
            .collect::<Vec<_>>(),
        diff_ids
    );

    for (k, name) in [(&alice, "alice.pub"), (&bob, "bob.pub")] {
        let v = sign::verify(&pinned, &by_key(k, name), &connect).unwrap();
        assert_eq!((v.found, v.matching), (3, 1), "{name}");
    }
    let both = VerificationPolicy::Keys(vec![
        PublicKey::from_pem(alice.public.as_bytes(), "alice.pub").unwrap(),
        PublicKey::from_pem(bob.public.as_bytes(), "bob.pub").unwrap(),
    ]);
    assert_eq!(sign::verify(&pinned, &both, &connect).unwrap().matching, 2);
    let root = sigstore.root();
    let ci_policy = keyless(
        Matcher::Exact(ci.into()),
        Matcher::Exact(actions.into()),
        root,
    );
    assert_eq!(
        sign::verify(&pinned, &ci_policy, &connect)
            .unwrap()
            .matching,
        1
    );
    let carol = keys("carol");
    let reason = verification_reason(sign::verify(
        &pinned,
        &by_key(&carol, "carol.pub"),
        &connect,
    ));
    assert_eq!(
        reason,
        "no matching signatures: none of the 3 signature(s) verifies with carol.pub"
    );
}

/// Interoperability with sigstore-js, an implementation independent of ours and of the Rust
/// `sigstore` crate (no cosign binary can be built here): the `.sig` layers we push verify
/// with its verifier, and the bundle form cosign v3 writes (a DSSE-signed in-toto statement
/// attached through the referrers tag), signed by sigstore-js, verifies with ours, next to a
/// `.sig` signature; a bundle for another digest, another key, or an attestation that is not a
/// signature do not.
#[test]
fn sigstore_js_verifies_our_signatures_and_we_verify_its_bundles() {
    let Some(server) = support::start(None) else {
        return;
    };
    let Some(modules) = js::modules() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = module_copy(tmp.path());
    let reg = server.client(Credentials::Anonymous);
    let url = server.oci_url("bundles");
    let connect = ConnectOptions::default();
    let ours = keys("s3cret");
    let digest = push(&reg, &dir, &url, "1.0.0", "bundles");
    let pinned = url.with_digest(&digest);
    sign::sign(&pinned, &ours.signing, &connect).unwrap();

    // Our `.sig` layer, checked by sigstore-js with the public key.
    let (m, _) = manifest(
        &reg,
        &url.with_tag(&format!("{}.sig", digest.replace(':', "-"))),
    );
    let layer = &m["layers"][0];
    let payload = reg
        .pull_blob(
            &url,
            layer["digest"].as_str().unwrap(),
            layer["size"].as_u64().unwrap(),
            1 << 20,
        )
        .unwrap();
    let signature = layer["annotations"]["dev.cosignproject.cosign/signature"]
        .as_str()
        .unwrap();
    let (pub_file, payload_file) = (tmp.path().join("cosign.pub"), tmp.path().join("payload"));
    std::fs::write(&pub_file, &ours.public).unwrap();
    std::fs::write(&payload_file, &payload).unwrap();
    let path = |p: &Path| p.to_str().unwrap().to_string();
    let out = js::run(
        &modules,
        &[
            "verify-blob",
            &path(&pub_file),
            &path(&payload_file),
            signature,
        ],
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "verified\n",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let other_pub = tmp.path().join("other.pub");
    std::fs::write(&other_pub, keys("other").public).unwrap();
    let out = js::run(
        &modules,
        &[
            "verify-blob",
            &path(&other_pub),
            &path(&payload_file),
            signature,
        ],
    );
    assert!(!out.status.success(), "sigstore-js accepted another key");

    // A bundle signed by sigstore-js, attached as cosign v3 attaches it.
    let signed = |d: &str| -> (String, Vec<u8>) {
        let out = js::run(&modules, &["sign-image", d]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let bundle = serde_json::to_vec(&v["bundle"]).unwrap();
        (v["publicKey"].as_str().unwrap().to_string(), bundle)
    };
    let (js_public, js_bundle) = signed(&digest);
    let subject_size = reg.pull_manifest(&pinned).unwrap().len();
    attach_bundles(
        &reg,
        &url,
        &digest,
        subject_size,
        std::slice::from_ref(&js_bundle),
    );
    let js_key = VerificationPolicy::Keys(vec![
        PublicKey::from_pem(js_public.as_bytes(), "js.pub").unwrap(),
    ]);
    let v = sign::verify(&pinned, &js_key, &connect).unwrap();
    assert_eq!((v.found, v.matching), (2, 1));
    // Our key still verifies through the `.sig` layer; a third key matches neither.
    let v = sign::verify(&pinned, &by_key(&ours, "cosign.pub"), &connect).unwrap();
    assert_eq!((v.found, v.matching), (2, 1));
    let reason = verification_reason(sign::verify(
        &pinned,
        &by_key(&keys("third"), "third.pub"),
        &connect,
    ));
    assert_eq!(
        reason,
        "no matching signatures: none of the 2 signature(s) verifies with third.pub"
    );

    // Bundle form only: a second module version with no `.sig` image.
    let d2 = push(&reg, &dir, &url, "2.0.0", "bundle only");
    let pinned2 = url.with_digest(&d2);
    let size2 = reg.pull_manifest(&pinned2).unwrap().len();
    let (js2_public, js2_bundle) = signed(&d2);
    let js2_key = VerificationPolicy::Keys(vec![
        PublicKey::from_pem(js2_public.as_bytes(), "js2.pub").unwrap(),
    ]);
    // The first bundle signs another digest: attached to d2 it is not a signature of d2.
    attach_bundles(&reg, &url, &d2, size2, std::slice::from_ref(&js_bundle));
    let reason = verification_reason(sign::verify(&pinned2, &js_key, &connect));
    assert_eq!(
        reason,
        "no valid signatures: the 1 attached Sigstore bundle(s) do not sign this digest, or their certificate or transparency log entry does not verify"
    );
    // An attestation of another predicate about d2 (e.g. provenance) is not a signature.
    let mut attestation: serde_json::Value = serde_json::from_slice(&js2_bundle).unwrap();
    let envelope = &mut attestation["dsseEnvelope"];
    let mut statement: serde_json::Value = serde_json::from_slice(
        &STANDARD
            .decode(envelope["payload"].as_str().unwrap())
            .unwrap(),
    )
    .unwrap();
    statement["predicateType"] = "https://slsa.dev/provenance/v1".into();
    envelope["payload"] = STANDARD
        .encode(serde_json::to_vec(&statement).unwrap())
        .into();
    attach_bundles(
        &reg,
        &url,
        &d2,
        size2,
        &[serde_json::to_vec(&attestation).unwrap()],
    );
    let reason = verification_reason(sign::verify(&pinned2, &js2_key, &connect));
    assert!(
        reason.starts_with("no valid signatures: the 1 attached"),
        "{reason}"
    );
    // Its own bundle verifies, through the version tag too.
    attach_bundles(&reg, &url, &d2, size2, &[js_bundle, js2_bundle]);
    let (pinned, v) =
        sign::verify_reference(&reg, &url, Some("2.0.0"), &js2_key, &connect).unwrap();
    assert_eq!(pinned, pinned2);
    assert_eq!((v.found, v.matching), (1, 1));
    let reason = verification_reason(sign::verify(&pinned2, &js_key, &connect));
    assert_eq!(
        reason,
        "no matching signatures: none of the 1 signature(s) verifies with js.pub"
    );
}

/// The keyless bundle form of cosign v2.5+/v3, built per the Sigstore bundle and OCI referrers
/// specifications by `support/sigstore.rs` (a DSSE statement, the Fulcio leaf, a Rekor `dsse`
/// entry with its inclusion proof and signed checkpoint) and attached through the referrers
/// tag: the identity and issuer are matched, a wrong identity, an untrusted root, a bundle of
/// another digest or a tampered statement fail.
#[test]
fn keyless_bundle_attached_as_a_referrer_verifies_identity_and_issuer() {
    let Some(server) = support::start(None) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = module_copy(tmp.path());
    let reg = server.client(Credentials::Anonymous);
    let url = server.oci_url("keyless-bundle");
    let connect = ConnectOptions::default();
    let sigstore = FakeSigstore::new();
    let workflow = "https://github.com/org/repo/.github/workflows/release.yaml@refs/tags/v1.0.0";
    let actions = "https://token.actions.githubusercontent.com";
    let policy = |identity: &str, root: TrustedRoot| {
        keyless(
            Matcher::Exact(identity.into()),
            Matcher::Exact(actions.into()),
            root,
        )
    };

    let digest = push(&reg, &dir, &url, "1.0.0", "keyless bundle");
    let pinned = url.with_digest(&digest);
    let size = reg.pull_manifest(&pinned).unwrap().len();
    let bundle = sigstore.bundle(&digest, workflow, actions);
    attach_bundles(&reg, &url, &digest, size, std::slice::from_ref(&bundle));
    let v = sign::verify(&pinned, &policy(workflow, sigstore.root()), &connect).unwrap();
    assert_eq!((v.found, v.matching), (1, 1));

    let reason = verification_reason(sign::verify(
        &pinned,
        &policy("https://github.com/evil/repo", sigstore.root()),
        &connect,
    ));
    assert!(
        reason.starts_with(
            "no matching signatures: none of the 1 signature(s) has a trusted certificate"
        ),
        "{reason}"
    );
    let invalid = "no valid signatures: the 1 attached Sigstore bundle(s) do not sign this digest, or their certificate or transparency log entry does not verify";
    // Another instance's root: neither its Rekor nor its CA vouches for the bundle.
    let reason = verification_reason(sign::verify(
        &pinned,
        &policy(workflow, FakeSigstore::new().root()),
        &connect,
    ));
    assert_eq!(reason, invalid);
    // A key policy does not accept a keyless bundle.
    let reason = verification_reason(sign::verify(
        &pinned,
        &by_key(&keys("k"), "cosign.pub"),
        &connect,
    ));
    assert_eq!(reason, invalid);

    // The bundle of this digest attached to another one does not sign it.
    let d2 = push(&reg, &dir, &url, "2.0.0", "other");
    let pinned2 = url.with_digest(&d2);
    let size2 = reg.pull_manifest(&pinned2).unwrap().len();
    attach_bundles(&reg, &url, &d2, size2, std::slice::from_ref(&bundle));
    let reason = verification_reason(sign::verify(
        &pinned2,
        &policy(workflow, sigstore.root()),
        &connect,
    ));
    assert_eq!(reason, invalid);
    // A statement rewritten to name d2 no longer matches its signature or its Rekor entry.
    let mut forged: serde_json::Value = serde_json::from_slice(&bundle).unwrap();
    let statement = STANDARD
        .decode(forged["dsseEnvelope"]["payload"].as_str().unwrap())
        .unwrap();
    let statement = String::from_utf8(statement).unwrap().replace(
        digest.trim_start_matches("sha256:"),
        d2.trim_start_matches("sha256:"),
    );
    forged["dsseEnvelope"]["payload"] = STANDARD.encode(statement).into();
    attach_bundles(
        &reg,
        &url,
        &d2,
        size2,
        &[serde_json::to_vec(&forged).unwrap()],
    );
    let reason = verification_reason(sign::verify(
        &pinned2,
        &policy(workflow, sigstore.root()),
        &connect,
    ));
    assert_eq!(reason, invalid);
    // Its own bundle verifies.
    attach_bundles(
        &reg,
        &url,
        &d2,
        size2,
        &[sigstore.bundle(&d2, workflow, actions)],
    );
    let v = sign::verify(&pinned2, &policy(workflow, sigstore.root()), &connect).unwrap();
    assert_eq!((v.found, v.matching), (1, 1));
}

/// `--new-bundle-format`: a key signature in the form cosign v3 writes by default, a Sigstore
/// bundle attached as a referrer (listed under the referrers tag, as `docker-registry` has no
/// referrers API), verifies with its key and not another, also with sigstore-js; a second
/// bundle keeps the first in the referrers index, and nothing goes to the `.sig` image.
#[test]
fn key_signature_in_the_bundle_form_is_attached_as_a_referrer_and_verifies() {
    let Some(server) = support::start(None) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = module_copy(tmp.path());
    let reg = server.client(Credentials::Anonymous);
    let url = server.oci_url("bundle-form");
    let connect = ConnectOptions::default();
    let (alice, bob) = (keys("alice"), keys("bob"));
    let digest = push(&reg, &dir, &url, "1.0.0", "bundle-form");
    let pinned = url.with_digest(&digest);

    let referrer = sign::sign_bundle(&pinned, &alice.signing, &connect).unwrap();
    let referrer = ArtifactUrl::parse(&referrer).unwrap();
    let (m, _) = manifest(&reg, &referrer);
    assert_eq!(m["subject"]["digest"], digest.as_str());
    assert_eq!(
        m["artifactType"],
        "application/vnd.dev.sigstore.bundle.v0.3+json"
    );
    let tags = reg.list_tags(&url).unwrap();
    assert!(!tags.contains(&format!("{}.sig", digest.replace(':', "-"))));
    let v = sign::verify(&pinned, &by_key(&alice, "alice.pub"), &connect).unwrap();
    assert_eq!((v.found, v.matching), (1, 1));
    let reason = verification_reason(sign::verify(&pinned, &by_key(&bob, "bob.pub"), &connect));
    assert_eq!(
        reason,
        "no matching signatures: none of the 1 signature(s) verifies with bob.pub"
    );

    sign::sign_bundle(&pinned, &bob.signing, &connect).unwrap();
    let listed = reg.referrers(&pinned).unwrap();
    assert_eq!(listed.len(), 2);
    assert!(listed.contains(&referrer.digest.clone().unwrap()));
    for (k, name) in [(&alice, "alice.pub"), (&bob, "bob.pub")] {
        let v = sign::verify(&pinned, &by_key(k, name), &connect).unwrap();
        assert_eq!((v.found, v.matching), (2, 1), "{name}");
    }

    // sigstore-js checks the bundle with the key.
    let Some(modules) = js::modules() else {
        return;
    };
    let layer = &m["layers"][0];
    let bundle = reg
        .pull_blob(
            &url,
            layer["digest"].as_str().unwrap(),
            layer["size"].as_u64().unwrap(),
            1 << 20,
        )
        .unwrap();
    let files = [
        ("bundle.json", bundle),
        ("alice.pub", alice.public.clone().into_bytes()),
        ("bob.pub", bob.public.clone().into_bytes()),
    ];
    for (name, bytes) in &files {
        std::fs::write(tmp.path().join(name), bytes).unwrap();
    }
    let path = |n: &str| tmp.path().join(n).to_str().unwrap().to_string();
    let out = js::run(
        &modules,
        &[
            "verify-bundle",
            &path("alice.pub"),
            &path("bundle.json"),
            &digest,
        ],
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "verified\n",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = js::run(
        &modules,
        &[
            "verify-bundle",
            &path("bob.pub"),
            &path("bundle.json"),
            &digest,
        ],
    );
    assert!(!out.status.success(), "sigstore-js accepted another key");
}
