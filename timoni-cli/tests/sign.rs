//! End-to-end tests of the signing flags: `mod push|artifact push --sign cosign --cosign-key`,
//! `mod pull|artifact pull --verify cosign` and `--verify` on `build` and `bundle build` with an
//! `oci://` module, the real binary against Debian's `docker-registry` (the harness shared with
//! timoni-core), keyless verification with the Sigstore stand-in of
//! `timoni-core/tests/support/sigstore.rs`, and keyless signing (`--sign cosign` without a key)
//! with a GitHub Actions token against sigstore-js's Fulcio and Rekor stand-ins
//! (`timoni-core/tests/support/sigstore_js.rs`). The flag checks need no registry; the rest
//! skips loudly without one (or without sigstore-js).

use std::path::Path;
use std::process::{Command, Output, Stdio};

#[path = "../../timoni-core/tests/support/sigstore.rs"]
mod fake;
#[path = "../../timoni-core/tests/support/sigstore_js.rs"]
mod js;
#[path = "../../timoni-core/tests/support/registry.rs"]
mod registry;

/// The variables keyless signing reads its OIDC token from, cleared so that the tests do not
/// depend on where they run.
const TOKEN_VARIABLES: [&str; 3] = [
    "SIGSTORE_ID_TOKEN",
    "ACTIONS_ID_TOKEN_REQUEST_URL",
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
];

/// Runs `timoni ARGS` with a private HOME and `COSIGN_PASSWORD`.
fn timoni(home: &Path, args: &[&str]) -> Output {
    timoni_with(home, args, &[])
}

/// Runs `timoni ARGS` as [`timoni`] does, with these variables too.
fn timoni_with(home: &Path, args: &[&str], vars: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_timoni"));
    for v in TOKEN_VARIABLES {
        command.env_remove(v);
    }
    command
        .args(args)
        .envs(vars.iter().copied())
        .env("HOME", home)
        .env_remove("DOCKER_CONFIG")
        .env_remove("TIMONI_CACHE_DIR")
        .env_remove("TIMONI_TRUSTED_ROOT")
        .env("COSIGN_PASSWORD", "s3cret")
        .env("SOURCE_DATE_EPOCH", "1700000000")
        .stdin(Stdio::null())
        .output()
        .expect("run timoni")
}

fn ok(out: Output) -> String {
    assert!(
        out.status.success(),
        "timoni failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stderr).unwrap()
}

/// The error line of a failed run.
fn fails(out: Output) -> String {
    assert!(!out.status.success(), "timoni succeeded unexpectedly");
    let time = regex::Regex::new(r"(?m)^\d{1,2}:\d\d[AP]M ").unwrap();
    time.replace_all(&String::from_utf8(out.stderr).unwrap(), "[HH:MM] ")
        .into_owned()
}

#[test]
fn signing_and_verification_flags_are_checked_with_timonis_messages() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let d = h.to_str().unwrap();
    let url = "oci://127.0.0.1:1/m";
    for (args, expected) in [
        (
            vec!["mod", "push", d, url, "-v", "1.0.0", "--cosign-key", "k"],
            "[HH:MM] ERR --cosign-key requires --sign\n",
        ),
        (
            vec!["mod", "push", d, url, "-v", "1.0.0", "--sign", "notary"],
            "[HH:MM] ERR signer not supported: notary\n",
        ),
        (
            vec!["artifact", "push", url, "-t", "1", "--sign", "cosign"],
            "[HH:MM] ERR keyless signing (--sign cosign without --cosign-key) needs an OIDC identity token: give --identity-token, set SIGSTORE_ID_TOKEN, or run in GitHub Actions with the permission id-token: write; or sign with a key (--cosign-key)\n",
        ),
        (
            vec![
                "mod",
                "pull",
                url,
                "-o",
                d,
                "--verify",
                "cosign",
                "--cosign-key",
                "cosign.pub",
                "--certificate-identity",
                "me",
            ],
            "[HH:MM] ERR --cosign-key cannot be combined with certificate verification flags\n",
        ),
        (
            vec!["mod", "push", d, url, "-v", "1.0.0", "--new-bundle-format"],
            "[HH:MM] ERR --new-bundle-format requires --sign\n",
        ),
        (
            vec![
                "artifact",
                "push",
                url,
                "-t",
                "1",
                "--sign",
                "cosign",
                "--new-bundle-format",
            ],
            "[HH:MM] ERR --new-bundle-format requires --cosign-key: keyless signatures are written to the sha256-<hex>.sig image\n",
        ),
        (
            vec!["mod", "pull", url, "-o", d, "--certificate-identity", "me"],
            "[HH:MM] ERR --certificate-identity requires --verify\n",
        ),
        (
            vec!["mod", "pull", url, "-o", d, "--verify", "gpg"],
            "[HH:MM] ERR verifier not supported: gpg\n",
        ),
        (
            vec![
                "artifact",
                "pull",
                url,
                "--verify",
                "cosign",
                "--certificate-oidc-issuer",
                "a",
                "--certificate-oidc-issuer-regexp",
                "b",
            ],
            "[HH:MM] ERR --certificate-oidc-issuer and --certificate-oidc-issuer-regexp are mutually exclusive\n",
        ),
        (
            vec!["mod", "pull", url, "-o", d, "--verify", "cosign"],
            "[HH:MM] ERR --certificate-identity or --certificate-identity-regexp is required for Cosign verification in keyless mode\n",
        ),
        (
            vec![
                "build",
                "x",
                url,
                "--verify",
                "cosign",
                "--certificate-identity",
                "me",
            ],
            "[HH:MM] ERR --certificate-oidc-issuer or --certificate-oidc-issuer-regexp is required for Cosign verification in keyless mode\n",
        ),
        (
            vec![
                "mod",
                "pull",
                url,
                "-o",
                d,
                "--verify",
                "cosign",
                "--certificate-identity",
                "me",
                "--certificate-oidc-issuer",
                "https://issuer",
            ],
            "[HH:MM] ERR keyless verification needs the Sigstore trusted root: give --trusted-root FILE (a trusted_root.json) or set TIMONI_TRUSTED_ROOT\n",
        ),
    ] {
        assert_eq!(fails(timoni(h, &args)), expected, "{args:?}");
    }

    // A trusted root without a certificate authority cannot verify keyless signatures.
    let root = h.join("trusted_root.json");
    std::fs::write(&root, r#"{"tlogs": [], "certificateAuthorities": []}"#).unwrap();
    let args = [
        "mod",
        "pull",
        url,
        "-o",
        d,
        "--verify",
        "cosign",
        "--certificate-identity",
        "me",
        "--certificate-oidc-issuer",
        "https://issuer",
        "--trusted-root",
        root.to_str().unwrap(),
    ];
    assert_eq!(
        fails(timoni(h, &args)),
        format!(
            "[HH:MM] ERR {}: invalid trusted root: keyless verification needs at least one certificate authority and one transparency log\n",
            root.display()
        )
    );
}

#[test]
fn signed_pushes_verify_on_pull_and_build_and_unsigned_or_foreign_ones_are_refused() {
    let Some(server) = registry::start(None) else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let keys = timoni_core::oci::sign::generate_key_pair(b"s3cret").unwrap();
    let other = timoni_core::oci::sign::generate_key_pair(b"other").unwrap();
    std::fs::write(h.join("cosign.key"), &keys.private_key).unwrap();
    std::fs::write(h.join("cosign.pub"), &keys.public_key).unwrap();
    std::fs::write(h.join("other.pub"), &other.public_key).unwrap();
    let key = h.join("cosign.key");
    let key = key.to_str().unwrap();
    let public = h.join("cosign.pub");
    let public = public.to_str().unwrap();
    let foreign = h.join("other.pub");
    let foreign = foreign.to_str().unwrap();
    let module = Path::new(env!("CARGO_MANIFEST_DIR")).join("../timoni-core/blueprints/starter");
    let module = module.to_str().unwrap();
    let url = server.url("modules/demo");

    // A wrong password fails before anything is pushed.
    let out = Command::new(env!("CARGO_BIN_EXE_timoni"))
        .args([
            "mod",
            "push",
            module,
            &url,
            "-v",
            "0.9.0",
            "--sign",
            "cosign",
            "--cosign-key",
            key,
        ])
        .env("HOME", h)
        .env("COSIGN_PASSWORD", "wrong")
        .output()
        .unwrap();
    let err = fails(out);
    assert!(
        err.starts_with(&format!(
            "[HH:MM] ERR cannot decrypt the private key {key} (is COSIGN_PASSWORD right?)"
        )),
        "{err}"
    );
    assert!(fails(timoni(h, &["mod", "pull", &url, "-v", "0.9.0", "-o", "x"])).contains("0.9.0"));

    let pushed = ok(timoni(
        h,
        &[
            "mod",
            "push",
            module,
            &url,
            "-v",
            "1.0.0",
            "--sign",
            "cosign",
            "--cosign-key",
            key,
        ],
    ));
    let digest = pushed
        .split('@')
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .unwrap()
        .to_string();
    assert!(
        pushed.contains(&format!(
            "signed {url}:1.0.0@{digest} ({url}:{}.sig)",
            digest.replace(':', "-")
        )),
        "{pushed}"
    );
    ok(timoni(h, &["mod", "push", module, &url, "-v", "2.0.0"]));

    // mod pull --verify: the signed version verifies and is extracted; the others are refused
    // and nothing is written.
    let out_dir = h.join("pulled");
    let o = out_dir.to_str().unwrap();
    let log = ok(timoni(
        h,
        &[
            "mod",
            "pull",
            &url,
            "-v",
            "1.0.0",
            "-o",
            o,
            "--verify",
            "cosign",
            "--cosign-key",
            public,
        ],
    ));
    assert!(log.contains(&format!("verified {url}@{digest}")), "{log}");
    assert!(out_dir.join("timoni.cue").is_file());
    let refused = h.join("refused");
    let r = refused.to_str().unwrap();
    let err = fails(timoni(
        h,
        &[
            "mod",
            "pull",
            &url,
            "-v",
            "1.0.0",
            "-o",
            r,
            "--verify",
            "cosign",
            "--cosign-key",
            foreign,
        ],
    ));
    assert_eq!(
        err,
        format!(
            "[HH:MM] ERR verifying {url}@{digest} failed: no matching signatures: none of the 1 signature(s) verifies with {foreign}\n"
        )
    );
    let err = fails(timoni(
        h,
        &[
            "mod",
            "pull",
            &url,
            "-v",
            "2.0.0",
            "-o",
            r,
            "--verify",
            "cosign",
            "--cosign-key",
            public,
        ],
    ));
    assert!(err.ends_with("failed: no signatures found\n"), "{err}");
    assert!(!refused.join("timoni.cue").exists());

    // build --verify: the unsigned version is refused before it is evaluated.
    let built = timoni(
        h,
        &[
            "build",
            "demo",
            &url,
            "-v",
            "1.0.0",
            "--verify",
            "cosign",
            "--cosign-key",
            public,
        ],
    );
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    assert!(String::from_utf8_lossy(&built.stdout).contains("kind: "));
    let err = fails(timoni(
        h,
        &[
            "build",
            "demo",
            &url,
            "-v",
            "2.0.0",
            "--verify",
            "cosign",
            "--cosign-key",
            public,
        ],
    ));
    assert!(err.contains("failed: no signatures found"), "{err}");

    // artifact push --sign and artifact pull --verify.
    let art = server.url("artifacts/config");
    let files = h.join("files");
    std::fs::create_dir_all(&files).unwrap();
    std::fs::write(files.join("a.txt"), "hello\n").unwrap();
    ok(timoni(
        h,
        &[
            "artifact",
            "push",
            &art,
            "-f",
            files.to_str().unwrap(),
            "-t",
            "v1",
            "--sign",
            "cosign",
            "--cosign-key",
            key,
        ],
    ));
    let into = h.join("art");
    ok(timoni(
        h,
        &[
            "artifact",
            "pull",
            &format!("{art}:v1"),
            "-o",
            into.to_str().unwrap(),
            "--verify",
            "cosign",
            "--cosign-key",
            public,
        ],
    ));
    assert_eq!(
        std::fs::read_to_string(into.join("a.txt")).unwrap(),
        "hello\n"
    );
    let err = fails(timoni(
        h,
        &[
            "artifact",
            "pull",
            &format!("{art}:v1"),
            "-o",
            into.to_str().unwrap(),
            "--verify",
            "cosign",
            "--cosign-key",
            foreign,
        ],
    ));
    assert!(err.contains("no matching signatures"), "{err}");
}

#[test]
fn keyless_verification_matches_identity_and_issuer_with_the_trusted_root_file() {
    let Some(server) = registry::start(None) else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let module = Path::new(env!("CARGO_MANIFEST_DIR")).join("../timoni-core/blueprints/starter");
    let url = server.url("keyless/demo");
    let pushed = ok(timoni(
        h,
        &["mod", "push", module.to_str().unwrap(), &url, "-v", "1.0.0"],
    ));
    let digest = pushed
        .split("digest: ")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .unwrap()
        .to_string();

    // Keyless signing as a GitHub workflow, by the stand-in Fulcio and Rekor.
    let sigstore = fake::FakeSigstore::new();
    let root = h.join("trusted_root.json");
    std::fs::write(&root, sigstore.root_json()).unwrap();
    let artifact = timoni_core::oci::ArtifactUrl::parse(&url).unwrap();
    let registry = timoni_core::oci::OciClientRegistry::new(
        &artifact,
        &timoni_core::oci::RegistryOptions {
            insecure: false,
            credentials: timoni_core::oci::Credentials::Anonymous,
        },
    )
    .unwrap();
    let payload = fake::simple_signing_payload(&artifact, &digest);
    let workflow = "https://github.com/org/repo/.github/workflows/release.yaml@refs/tags/v1.0.0";
    let annotations = sigstore.sign(
        &payload,
        workflow,
        "https://token.actions.githubusercontent.com",
    );
    fake::push_signature_image(&registry, &artifact, &digest, &payload, &annotations);

    let pull = |dir: &str, identity: &[&str]| {
        let out = h.join(dir);
        let mut args = vec![
            "mod",
            "pull",
            &url,
            "-v",
            "1.0.0",
            "-o",
            out.to_str().unwrap(),
        ];
        args.extend(["--verify", "cosign"]);
        args.extend(identity);
        args.extend([
            "--certificate-oidc-issuer",
            "https://token.actions.githubusercontent.com",
        ]);
        args.extend(["--trusted-root", root.to_str().unwrap()]);
        timoni(h, &args)
    };
    let log = ok(pull("exact", &["--certificate-identity", workflow]));
    assert!(log.contains(&format!("verified {url}@{digest}")), "{log}");
    ok(pull(
        "regexp",
        &["--certificate-identity-regexp", "^https://github.com/org/"],
    ));
    let err = fails(pull(
        "wrong",
        &["--certificate-identity-regexp", "^https://github.com/evil/"],
    ));
    assert_eq!(
        err,
        format!(
            "[HH:MM] ERR verifying {url}@{digest} failed: no matching signatures: none of the 1 signature(s) has a trusted certificate for identity matching /^https://github.com/evil// issued by \"https://token.actions.githubusercontent.com\", with a verified transparency log entry\n"
        )
    );
    assert!(!h.join("wrong").join("timoni.cue").exists());
}

#[test]
fn keyless_signing_with_the_github_actions_token_verifies_for_the_workflow() {
    let Some(server) = registry::start(None) else {
        return;
    };
    let Some(modules) = js::modules() else {
        return;
    };
    let workflow = "https://github.com/org/repo/.github/workflows/release.yaml@refs/tags/v1.0.0";
    let actions = "https://token.actions.githubusercontent.com";
    let services = js::Services::start(&modules, "request-token", workflow, actions);
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let root = h.join("trusted_root.json");
    std::fs::write(&root, &services.trusted_root).unwrap();
    let module = Path::new(env!("CARGO_MANIFEST_DIR")).join("../timoni-core/blueprints/starter");
    let url = server.url("keyless/signed");
    let request_url = services.actions_request_url();
    let push = [
        "mod",
        "push",
        module.to_str().unwrap(),
        &url,
        "-v",
        "1.0.0",
        "--sign",
        "cosign",
        "--fulcio-url",
        &services.url,
        "--rekor-url",
        &services.url,
    ];
    let pushed = ok(timoni_with(
        h,
        &push,
        &[
            ("ACTIONS_ID_TOKEN_REQUEST_URL", &request_url),
            ("ACTIONS_ID_TOKEN_REQUEST_TOKEN", "request-token"),
        ],
    ));
    let digest = pushed
        .split("digest: ")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .unwrap()
        .to_string();
    let tag = format!("{}.sig", digest.replace(':', "-"));
    let signed = format!("signed {url}:1.0.0@{digest} keyless as {workflow} ({url}:{tag})");
    assert!(pushed.contains(&signed), "{pushed}");

    let pull = |dir: &str, identity: &str| {
        let out = h.join(dir);
        timoni(
            h,
            &[
                "mod",
                "pull",
                &url,
                "-v",
                "1.0.0",
                "-o",
                out.to_str().unwrap(),
                "--verify",
                "cosign",
                "--certificate-identity",
                identity,
                "--certificate-oidc-issuer",
                actions,
                "--trusted-root",
                root.to_str().unwrap(),
            ],
        )
    };
    let log = ok(pull("right", workflow));
    assert!(log.contains(&format!("verified {url}@{digest}")), "{log}");
    let err = fails(pull("wrong", "https://github.com/evil/repo"));
    assert!(
        err.contains(
            "no matching signatures: none of the 1 signature(s) has a trusted certificate"
        ),
        "{err}"
    );
    assert!(!h.join("wrong").join("timoni.cue").exists());
}

#[test]
fn new_bundle_format_attaches_the_signature_as_a_referrer_that_pull_verifies() {
    let Some(server) = registry::start(None) else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let keys = timoni_core::oci::sign::generate_key_pair(b"s3cret").unwrap();
    std::fs::write(h.join("cosign.key"), &keys.private_key).unwrap();
    std::fs::write(h.join("cosign.pub"), &keys.public_key).unwrap();
    let (key, public) = (h.join("cosign.key"), h.join("cosign.pub"));
    let art = server.url("bundles/config");
    let files = h.join("files");
    std::fs::create_dir_all(&files).unwrap();
    std::fs::write(files.join("a.txt"), "hello\n").unwrap();
    let pushed = ok(timoni(
        h,
        &[
            "artifact",
            "push",
            &art,
            "-f",
            files.to_str().unwrap(),
            "-t",
            "v1",
            "--sign",
            "cosign",
            "--cosign-key",
            key.to_str().unwrap(),
            "--new-bundle-format",
        ],
    ));
    let signed = regex::Regex::new(&format!(
        r"signed {}:v1@(sha256:[0-9a-f]{{64}}) \({}@sha256:[0-9a-f]{{64}}\)",
        regex::escape(&art),
        regex::escape(&art)
    ))
    .unwrap();
    let digest = signed
        .captures(&pushed)
        .unwrap_or_else(|| panic!("{pushed}"))[1]
        .to_string();
    let listed = timoni(h, &["artifact", "list", &art]);
    let tags = String::from_utf8_lossy(&listed.stdout);
    assert!(tags.contains("v1") && !tags.contains(".sig"), "{tags}");
    let into = h.join("art");
    let log = ok(timoni(
        h,
        &[
            "artifact",
            "pull",
            &format!("{art}:v1"),
            "-o",
            into.to_str().unwrap(),
            "--verify",
            "cosign",
            "--cosign-key",
            public.to_str().unwrap(),
        ],
    ));
    assert!(log.contains(&format!("verified {art}@{digest}")), "{log}");
    assert_eq!(
        std::fs::read_to_string(into.join("a.txt")).unwrap(),
        "hello\n"
    );
}
