//! OCI operations against a real registry: Debian's `docker-registry` (CNCF distribution),
//! started by the shared harness `support/registry.rs` (also used by the CLI tests), with the
//! helpers of `support/oci.rs`. Without the binary (package `docker-registry`) or, for the
//! auth test, `htpasswd` (package `apache2-utils`), the tests skip with a loud reason; CI
//! installs both.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use timoni_core::oci::{self, Cache, Credentials, OciError};

#[path = "support/oci.rs"]
mod oci_support;
#[path = "support/registry.rs"]
mod support;

use oci_support::{RegistryExt, module_copy, push};

/// Every file under `dir` with its bytes, relative to `dir`.
fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .map(Result::unwrap)
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            let rel = e
                .path()
                .strip_prefix(dir)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            (rel, std::fs::read(e.path()).unwrap())
        })
        .collect()
}

#[test]
fn push_pull_list_tag_and_latest_round_trip() {
    let Some(server) = support::start(None) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = module_copy(tmp.path());
    let reg = server.client(Credentials::Anonymous);
    let url = server.oci_url("tiny");

    let d1 = push(&reg, &dir, &url, "1.0.0", true);
    assert_eq!(
        push(&reg, &dir, &url, "1.0.0", true),
        d1,
        "same module, same digest"
    );
    std::fs::write(
        dir.join("values.cue"),
        "package main\n\nvalues: message: \"v2\"\n",
    )
    .unwrap();
    let d2 = push(&reg, &dir, &url, "1.1.0", true);
    let d3 = {
        std::fs::write(dir.join("extra.cue"), "package main\n").unwrap();
        push(&reg, &dir, &url, "0.9.0", false)
    };
    assert_ne!(d1, d2);

    // mod list: semver newest first, then latest (which moved to 1.1.0, not to 0.9.0).
    let list = oci::list_module_versions(&reg, &url, true, 0).unwrap();
    let got: Vec<_> = list
        .iter()
        .map(|m| (m.version.as_str(), m.digest.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            ("1.1.0", d2.as_str()),
            ("1.0.0", d1.as_str()),
            ("0.9.0", d3.as_str()),
            ("latest", d2.as_str())
        ]
    );
    assert_eq!(
        oci::list_module_versions(&reg, &url, false, 2)
            .unwrap()
            .len(),
        2
    );

    // mod pull of 1.0.0 restores the pushed tree minus ignored files.
    let cache_dir = tmp.path().join("cache");
    let cache = Cache::new(&cache_dir);
    let out = tmp.path().join("pulled");
    let pulled = oci::pull_module(&reg, &url, Some("1.0.0"), &out, &cache).unwrap();
    assert_eq!(pulled.digest, d1);
    assert_eq!(
        pulled.annotations["org.opencontainers.image.version"],
        "1.0.0"
    );
    assert_eq!(
        pulled.annotations["org.opencontainers.image.created"],
        "2023-11-14T22:13:20Z"
    );
    let mut expected = tree(&module_copy(&tmp.path().join("fresh")));
    expected.remove("debug_tool.cue");
    expected.remove("debug_values.cue");
    assert_eq!(tree(&out), expected);
    assert_eq!(layer_files(&cache_dir).len(), 2, "both layers cached");
    assert_eq!(
        std::fs::read_dir(cache_dir.join("manifests"))
            .unwrap()
            .count(),
        1,
        "and the manifest"
    );

    // Pulling `latest` gives 1.1.0.
    let latest = oci::pull_module(&reg, &url, None, &tmp.path().join("latest"), &cache).unwrap();
    assert_eq!(latest.digest, d2);

    // artifact tag, list with filters, digest.
    let tagged = oci::tag_artifact(&reg, &url.with_tag("1.0.0"), &["stable".to_string()]).unwrap();
    assert_eq!(tagged, d1);
    let r = oci::artifact_digest(&reg, &url.with_tag("stable")).unwrap();
    assert_eq!((r.tag.as_str(), r.digest.as_str()), ("stable", d1.as_str()));
    let tags = oci::list_artifact_tags(&reg, &url, false, 0, None, None).unwrap();
    let names: Vec<_> = tags.iter().map(|t| t.tag.as_str()).collect();
    assert_eq!(names, ["stable", "latest", "1.1.0", "1.0.0", "0.9.0"]);
    let tags =
        oci::list_artifact_tags(&reg, &url, false, 0, Some("^1"), Some(">=1.0.0, <1.1.0")).unwrap();
    assert_eq!(
        tags.iter().map(|t| t.tag.as_str()).collect::<Vec<_>>(),
        ["1.0.0"]
    );
}

#[test]
fn digest_pinning_accepts_the_right_digest_and_rejects_others() {
    let Some(server) = support::start(None) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = module_copy(tmp.path());
    let reg = server.client(Credentials::Anonymous);
    let url = server.oci_url("pinned");
    let d1 = push(&reg, &dir, &url, "1.0.0", true);
    let cache = Cache::disabled();

    // Version + matching digest.
    let m = oci::fetch_module(
        &reg,
        &url,
        Some("1.0.0"),
        Some(&d1),
        &tmp.path().join("a"),
        &cache,
    )
    .unwrap();
    assert_eq!(
        (m.version.as_str(), m.digest.as_str()),
        ("1.0.0", d1.as_str())
    );
    assert!(m.dir.join("timoni.cue").is_file());
    // `latest` + digest pulls by digest.
    let m = oci::fetch_module(
        &reg,
        &url,
        Some("latest"),
        Some(&d1),
        &tmp.path().join("b"),
        &cache,
    )
    .unwrap();
    assert_eq!(m.digest, d1);
    // A digest in the URL.
    let m = oci::fetch_module(
        &reg,
        &url.with_digest(&d1),
        None,
        None,
        &tmp.path().join("c"),
        &cache,
    )
    .unwrap();
    assert_eq!(m.digest, d1);
    // Version + another digest: Timoni's error, and nothing extracted.
    let other = format!("sha256:{}", "0".repeat(64));
    let dest = tmp.path().join("d");
    let err =
        oci::fetch_module(&reg, &url, Some("1.0.0"), Some(&other), &dest, &cache).unwrap_err();
    assert!(
        matches!(err, OciError::VersionDigestMismatch { .. }),
        "{err}"
    );
    assert_eq!(
        err.to_string(),
        format!(
            "the upstream digest {d1} of version 1.0.0 doesn't match the specified digest {other}"
        )
    );
    assert!(!dest.exists(), "nothing half-written");
    // An unknown version is a registry error naming the reference.
    let err = oci::fetch_module(&reg, &url, Some("9.9.9"), None, &dest, &cache).unwrap_err();
    assert!(err.to_string().contains(":9.9.9"), "{err}");
}

#[test]
fn a_corrupt_cache_entry_is_refetched() {
    let Some(server) = support::start(None) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = module_copy(tmp.path());
    let reg = server.client(Credentials::Anonymous);
    let url = server.oci_url("cached");
    push(&reg, &dir, &url, "1.0.0", true);
    let cache_dir = tmp.path().join("cache");
    let cache = Cache::new(&cache_dir);
    oci::pull_module(&reg, &url, None, &tmp.path().join("a"), &cache).unwrap();
    for layer in layer_files(&cache_dir) {
        std::fs::write(layer, b"garbage").unwrap();
    }
    oci::pull_module(&reg, &url, None, &tmp.path().join("b"), &cache).unwrap();
    assert_eq!(tree(&tmp.path().join("a")), tree(&tmp.path().join("b")));
}

#[test]
fn basic_auth_is_required_and_accepted() {
    let Some(server) = support::start(Some(("alice", "s3cret"))) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = module_copy(tmp.path());
    let url = server.oci_url("private");
    let anon = server.client(Credentials::Anonymous);
    let err = oci::push_module(
        &anon,
        &dir,
        &url,
        "1.0.0",
        true,
        &BTreeMap::new(),
        None,
        false,
    )
    .unwrap_err();
    assert!(err.to_string().contains("401"), "{err}");
    let wrong = server.client(Credentials::Basic {
        username: "alice".into(),
        password: "nope".into(),
    });
    assert!(oci::list_module_versions(&wrong, &url, false, 0).is_err());
    let alice = server.client(Credentials::Basic {
        username: "alice".into(),
        password: "s3cret".into(),
    });
    let d = push(&alice, &dir, &url, "1.0.0", true);
    let list = oci::list_module_versions(&alice, &url, true, 0).unwrap();
    assert_eq!(list[0].digest, d);
    // Credentials found in a docker config written by `registry login`.
    let config = tmp.path().join("docker/config.json");
    oci::login(&config, &url.registry, "alice", "s3cret").unwrap();
    let creds = oci::resolve_credentials(None, &url.registry, Some(&config)).unwrap();
    let from_config = server.client(creds);
    assert_eq!(
        oci::list_module_versions(&from_config, &url, false, 0)
            .unwrap()
            .len(),
        2
    );
}

#[test]
fn a_tampered_blob_is_a_digest_error_and_nothing_is_extracted() {
    let Some(server) = support::start(None) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = module_copy(tmp.path());
    let reg = server.client(Credentials::Anonymous);
    let url = server.oci_url("tampered");
    push(&reg, &dir, &url, "1.0.0", true);
    // Rewrite every stored layer blob behind the registry's back (same length, other bytes).
    let blobs = server.dir.path().join("data/docker/registry/v2/blobs");
    for e in walkdir::WalkDir::new(&blobs) {
        let e = e.unwrap();
        if e.file_name() == "data" {
            let mut bytes = std::fs::read(e.path()).unwrap();
            if bytes.starts_with(&[0x1f, 0x8b]) {
                let last = bytes.len() - 1;
                bytes[last] ^= 0xff;
                std::fs::write(e.path(), bytes).unwrap();
            }
        }
    }
    let dest = tmp.path().join("out");
    let err = oci::pull_module(&reg, &url, None, &dest, &Cache::disabled()).unwrap_err();
    assert!(err.to_string().to_lowercase().contains("digest"), "{err}");
    assert!(!dest.exists(), "nothing half-written");
    let leftovers: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with(".timoni-pull-"))
        .collect();
    assert!(leftovers.is_empty(), "staging removed: {leftovers:?}");
}

#[test]
fn a_hostile_layer_from_the_registry_is_refused_before_anything_lands() {
    use oci::Registry as _;
    let Some(server) = support::start(None) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let reg = server.client(Credentials::Anonymous);
    let url = server.oci_url("hostile");
    // A good file, then an entry climbing out of the target.
    let mut b = tar::Builder::new(Vec::new());
    for (name, data) in [
        ("ok.cue", &b"package main\n"[..]),
        ("../escaped", &b"pwned"[..]),
    ] {
        let mut h = tar::Header::new_ustar();
        h.as_old_mut().name[..name.len()].copy_from_slice(name.as_bytes());
        h.set_size(data.len() as u64);
        h.set_mode(0o644);
        h.set_entry_type(tar::EntryType::Regular);
        h.set_cksum();
        b.append(&h, data).unwrap();
    }
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut gz, &b.into_inner().unwrap()).unwrap();
    let blob = gz.finish().unwrap();
    let layer = oci::Layer {
        digest: format!("sha256:{}", sha256_hex(&blob)),
        diff_id: String::new(),
        blob,
        content_type: "generic".into(),
    };
    let image = oci::assemble_image(vec![layer.clone()], BTreeMap::new());
    reg.push_blob(
        &url,
        &format!("sha256:{}", sha256_hex(&image.config)),
        &image.config,
    )
    .unwrap();
    reg.push_blob(&url, &layer.digest, &layer.blob).unwrap();
    reg.push_manifest(&url, "1", &image.manifest, oci::MANIFEST_MEDIA_TYPE)
        .unwrap();

    let dest = tmp.path().join("out");
    let err =
        oci::pull_artifact(&reg, &url.with_tag("1"), None, &dest, &Cache::disabled()).unwrap_err();
    assert!(matches!(err, OciError::UnsafeEntry { .. }), "{err}");
    assert!(!dest.exists(), "the good entry did not land either");
    assert!(!tmp.path().join("escaped").exists());
}

/// The cached layers (`<hex>.tgz`) directly under the cache directory.
fn layer_files(cache_dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(cache_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "tgz"))
        .collect()
}

#[test]
fn the_cache_alone_serves_modules_pulled_before_and_names_the_rest() {
    use oci::ModuleFetch as _;
    let Some(server) = support::start(None) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = module_copy(tmp.path());
    let reg = server.client(Credentials::Anonymous);
    let url = server.oci_url("offline");
    let d1 = push(&reg, &dir, &url, "1.0.0", true);
    let cache = Cache::new(tmp.path().join("cache"));
    let offline = oci::Fetcher {
        connect: oci::ConnectOptions::default(),
        cache: cache.clone(),
        network: false,
    };
    // Nothing cached yet: the error says what is missing and how to allow the network.
    let err = offline
        .fetch(&url, Some("1.0.0"), None, &tmp.path().join("x"))
        .unwrap_err();
    assert!(matches!(err, OciError::Offline { .. }), "{err}");
    let msg = err.to_string();
    assert!(msg.contains(&format!("{}", url.with_tag("1.0.0"))), "{msg}");
    assert!(msg.contains("--allow-network"), "{msg}");
    assert!(!tmp.path().join("x").exists());

    let online = oci::Fetcher {
        network: true,
        ..offline.clone()
    };
    online
        .fetch(&url, Some("1.0.0"), None, &tmp.path().join("a"))
        .unwrap();
    // The registry is gone; the cache serves the version by tag and by digest.
    drop(server);
    let by_tag = offline
        .fetch(&url, Some("1.0.0"), None, &tmp.path().join("b"))
        .unwrap();
    assert_eq!(by_tag.digest, d1);
    assert_eq!(by_tag.version, "1.0.0");
    let by_digest = offline
        .fetch(&url, None, Some(&d1), &tmp.path().join("c"))
        .unwrap();
    assert_eq!(by_digest.digest, d1);
    assert_eq!(tree(&tmp.path().join("a")), tree(&tmp.path().join("b")));
    // A version never pulled is still offline-missing.
    let err = offline
        .fetch(&url, Some("2.0.0"), None, &tmp.path().join("d"))
        .unwrap_err();
    assert!(matches!(err, OciError::Offline { .. }), "{err}");
}

fn sha256_hex(data: &[u8]) -> String {
    use sha2::Digest as _;
    hex::encode(sha2::Sha256::digest(data))
}
