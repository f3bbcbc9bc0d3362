//! End-to-end tests of `timoni mod|artifact|registry`: the real binary against Debian's
//! `docker-registry` on a free loopback port (killed on drop), and `skopeo` to inspect what was
//! pushed. Skips loudly without the registry binary; the starter-module acceptance test also
//! needs the shared corpus (`../shared/conformance`).

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

struct TestRegistry {
    child: Child,
    port: u16,
    dir: tempfile::TempDir,
}

impl Drop for TestRegistry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_registry() -> Option<TestRegistry> {
    start_registry_with(None)
}

/// Starts a registry, with basic auth from this htpasswd line when given.
fn start_registry_with(htpasswd: Option<&[u8]>) -> Option<TestRegistry> {
    let bin = "/usr/bin/docker-registry";
    if !Path::new(bin).exists() {
        eprintln!("SKIPPED: {bin} is missing; apt-get install -y docker-registry to run this test");
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let config = dir.path().join("config.yml");
    let mut text = format!(
        "version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: {}\n\
         http:\n  addr: 127.0.0.1:{port}\n",
        dir.path().join("data").display()
    );
    if let Some(line) = htpasswd {
        let path = dir.path().join("htpasswd");
        std::fs::write(&path, line).unwrap();
        text.push_str(&format!(
            "auth:\n  htpasswd:\n    realm: test\n    path: {}\n",
            path.display()
        ));
    }
    std::fs::write(&config, text).unwrap();
    let child = Command::new(bin)
        .arg("serve")
        .arg(&config)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let reg = TestRegistry { child, port, dir };
    let deadline = Instant::now() + Duration::from_secs(20);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "docker-registry did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
    Some(reg)
}

/// Runs `timoni ARGS` with a private HOME (cache, docker config) and a fixed SOURCE_DATE_EPOCH.
fn timoni(home: &Path, args: &[&str]) -> Output {
    timoni_with_path(home, args, None)
}

/// Like [`timoni`], with `extra` prepended to `PATH` (for credential helpers).
fn timoni_with_path(home: &Path, args: &[&str], extra: Option<&Path>) -> Output {
    let mut path = std::env::var_os("PATH").unwrap_or_default();
    if let Some(dir) = extra {
        let mut joined = dir.as_os_str().to_os_string();
        joined.push(":");
        joined.push(&path);
        path = joined;
    }
    Command::new(env!("CARGO_BIN_EXE_timoni"))
        .args(args)
        .env("PATH", path)
        .env("HOME", home)
        .env_remove("DOCKER_CONFIG")
        .env_remove("TIMONI_CACHE_DIR")
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
    String::from_utf8(out.stdout).unwrap()
}

fn starter() -> Option<PathBuf> {
    let root = std::env::var_os("CONFORMANCE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/conformance"));
    let dir = root.join("timoni/starter/module");
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!(
            "SKIPPED: no starter module at {} (set $CONFORMANCE_DIR)",
            dir.display()
        );
        None
    }
}

fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(dir).unwrap().to_string_lossy().into_owned();
                out.push((rel, std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn starter_module_push_inspect_pull_round_trip() {
    let Some(module) = starter() else { return };
    let Some(reg) = start_registry() else { return };
    let home = reg.dir.path().join("home");
    let url = format!("oci://127.0.0.1:{}/starter", reg.port);
    let m = module.to_str().unwrap();
    let push = |v: &str| -> serde_json::Value {
        serde_json::from_str(&ok(timoni(
            &home,
            &["mod", "push", m, &url, "-v", v, "-o", "json"],
        )))
        .unwrap()
    };
    let first = push("1.0.0");
    let second = push("1.0.0");
    assert_eq!(
        first["digest"], second["digest"],
        "pushing twice gives the same digest"
    );
    assert_eq!(first["version"], "1.0.0");

    // The manifest as the registry serves it (skopeo when available, else our own digest).
    if Command::new("skopeo").arg("--version").output().is_ok() {
        let raw = Command::new("skopeo")
            .args(["inspect", "--tls-verify=false", "--raw"])
            .arg(format!("docker://127.0.0.1:{}/starter:1.0.0", reg.port))
            .output()
            .unwrap();
        assert!(
            raw.status.success(),
            "{}",
            String::from_utf8_lossy(&raw.stderr)
        );
        let mf: serde_json::Value = serde_json::from_slice(&raw.stdout).unwrap();
        assert_eq!(
            mf["mediaType"],
            "application/vnd.oci.image.manifest.v1+json"
        );
        assert_eq!(
            mf["config"]["mediaType"],
            "application/vnd.timoni.config.v1+json"
        );
        assert_eq!(mf["config"]["size"], 342);
        let layers = mf["layers"].as_array().unwrap();
        let kinds: Vec<_> = layers
            .iter()
            .map(|l| {
                assert_eq!(l["mediaType"], "application/vnd.timoni.content.v1.tar+gzip");
                l["annotations"]["sh.timoni.content.type"].as_str().unwrap()
            })
            .collect();
        assert_eq!(kinds, ["module/vendor", "module"]);
        assert_eq!(
            mf["annotations"]["org.opencontainers.image.version"],
            "1.0.0"
        );
        assert_eq!(
            mf["annotations"]["org.opencontainers.image.created"],
            "2023-11-14T22:13:20Z"
        );
    } else {
        eprintln!("NOTE: skopeo missing; manifest not inspected with a second client");
    }

    let out = reg.dir.path().join("pulled");
    ok(timoni(
        &home,
        &[
            "mod",
            "pull",
            &url,
            "-v",
            "1.0.0",
            "-o",
            out.to_str().unwrap(),
        ],
    ));
    assert_eq!(
        files(&out),
        files(&module),
        "pulled tree equals the pushed one"
    );

    let list = ok(timoni(&home, &["mod", "list", &url]));
    let digest = first["digest"].as_str().unwrap();
    assert_eq!(
        list,
        format!("VERSION\tDIGEST\n1.0.0\t{digest}\nlatest\t{digest}\n")
    );
    let d = ok(timoni(
        &home,
        &["artifact", "digest", &format!("{url}:1.0.0")],
    ));
    assert_eq!(d.trim(), digest);
}

#[test]
fn bad_urls_and_versions_fail_with_one_clear_line() {
    let home = tempfile::tempdir().unwrap();
    let out = timoni(
        home.path(),
        &["mod", "push", ".", "docker.io/x", "-v", "1.0.0"],
    );
    insta::assert_snapshot!(String::from_utf8_lossy(&out.stderr), @r#"✗ invalid artifact URL "docker.io/x": the URL must start with oci://"#);
    assert!(!out.status.success());
    let out = timoni(
        home.path(),
        &["mod", "push", ".", "oci://127.0.0.1:1/x", "-v", "v1"],
    );
    insta::assert_snapshot!(String::from_utf8_lossy(&out.stderr), @r#"✗ version "v1" is not strict semver: unexpected character 'v' while parsing major version number"#);
}

#[test]
fn credentials_come_from_creds_login_or_a_docker_credential_helper() {
    let line = match Command::new("htpasswd")
        .args(["-Bbn", "alice", "s3cret"])
        .output()
    {
        Ok(o) if o.status.success() => o.stdout,
        _ => {
            eprintln!("SKIPPED: htpasswd is missing; apt-get install -y apache2-utils");
            return;
        }
    };
    let Some(reg) = start_registry_with(Some(&line)) else {
        return;
    };
    let home = reg.dir.path().join("home");
    let host = format!("127.0.0.1:{}", reg.port);
    let url = format!("oci://{host}/private");
    let module = Path::new(env!("CARGO_MANIFEST_DIR")).join("../timoni-core/testdata/oci/module");
    let m = module.to_str().unwrap();

    let denied = timoni(&home, &["mod", "push", m, &url, "-v", "1.0.0"]);
    assert!(!denied.status.success());
    assert!(String::from_utf8_lossy(&denied.stderr).contains("401"));
    ok(timoni(
        &home,
        &[
            "mod",
            "push",
            m,
            &url,
            "-v",
            "1.0.0",
            "--creds",
            "alice:s3cret",
        ],
    ));

    // `registry login` writes ~/.docker/config.json, which later commands read.
    ok(timoni(
        &home,
        &["registry", "login", &host, "-u", "alice", "-p", "s3cret"],
    ));
    assert!(ok(timoni(&home, &["mod", "list", &url])).contains("1.0.0"));
    ok(timoni(&home, &["registry", "logout", &host]));
    assert!(!timoni(&home, &["mod", "list", &url]).status.success());

    // A credential helper named in credHelpers.
    let bin = reg.dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let helper = bin.join("docker-credential-fake");
    std::fs::write(
        &helper,
        "#!/bin/sh\nread server\nprintf '{\"ServerURL\":\"%s\",\"Username\":\"alice\",\"Secret\":\"s3cret\"}' \"$server\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&helper, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    std::fs::write(
        home.join(".docker/config.json"),
        format!(r#"{{"credHelpers":{{"{host}":"fake"}}}}"#),
    )
    .unwrap();
    let listed = timoni_with_path(&home, &["mod", "list", &url, "-o", "json"], Some(&bin));
    assert!(ok(listed).contains("\"version\": \"1.0.0\""));
}

#[path = "../../timoni-core/tests/common/envtest.rs"]
mod envtest;

/// `timoni apply` of an `oci://` module: pulled by version, applied, and recorded with its
/// repository, version and digest in the inventory.
#[test]
fn apply_of_an_oci_module_records_its_reference() {
    let Some(reg) = start_registry() else { return };
    let Some(env) = envtest::Envtest::start() else {
        return;
    };
    let home = reg.dir.path().join("home");
    let url = format!("oci://127.0.0.1:{}/starter", reg.port);
    let module = Path::new(env!("CARGO_MANIFEST_DIR")).join("../timoni-core/blueprints/starter");
    let pushed: serde_json::Value = serde_json::from_str(&ok(timoni(
        &home,
        &[
            "mod",
            "push",
            module.to_str().unwrap(),
            &url,
            "-v",
            "1.2.3",
            "-o",
            "json",
        ],
    )))
    .unwrap();
    let kubeconfig = env.kubeconfig();
    let kc = kubeconfig.to_str().unwrap();
    let applied = timoni(
        &home,
        &[
            "apply",
            "demo",
            &url,
            "-v",
            "1.2.3",
            "-n",
            "apps",
            "--wait=false",
            "--kubeconfig",
            kc,
        ],
    );
    let log = String::from_utf8_lossy(&applied.stderr);
    assert!(applied.status.success(), "{log}");
    assert!(log.contains("Deployment/apps/demo created"), "{log}");
    let module_yaml = ok(timoni(
        &home,
        &[
            "inspect",
            "module",
            "demo",
            "-n",
            "apps",
            "--kubeconfig",
            kc,
        ],
    ));
    assert_eq!(
        module_yaml,
        format!(
            "digest: {}\nname: timoni.sh/blueprint\nrepository: {url}\nversion: 1.2.3\n",
            pushed["digest"].as_str().unwrap()
        )
    );
    // The module version reaches the objects (`moduleVersion`).
    let values = ok(timoni(
        &home,
        &["status", "demo", "-n", "apps", "--kubeconfig", kc],
    ));
    assert!(values.contains(&format!("module {url}:1.2.3")), "{values}");
    // A bundle of the same module: pulled once, applied, recorded with the bundle.
    let bundle = reg.dir.path().join("bundle.cue");
    std::fs::write(
        &bundle,
        format!(
            "bundle: {{\n\tapiVersion: \"v1alpha1\"\n\tname: \"oci\"\n\tinstances: {{\n\
             \t\tone: {{module: {{url: \"{url}\", version: \"1.2.3\"}}, namespace: \"b1\"}}\n\
             \t\ttwo: {{module: {{url: \"{url}\", version: \"1.2.3\"}}, namespace: \"b2\"}}\n\t}}\n}}\n"
        ),
    )
    .unwrap();
    let b = timoni(
        &home,
        &[
            "bundle",
            "apply",
            "-f",
            bundle.to_str().unwrap(),
            "--wait=false",
            "--kubeconfig",
            kc,
        ],
    );
    let log = String::from_utf8_lossy(&b.stderr);
    assert!(b.status.success(), "{log}");
    assert!(
        log.contains("b:oci > i:two Deployment/b2/two created"),
        "{log}"
    );
    let listed = ok(timoni(
        &home,
        &["list", "-A", "--bundle", "oci", "--kubeconfig", kc],
    ));
    assert_eq!(listed.lines().count(), 3, "{listed}");
    assert!(
        listed.contains(&format!("one\tb1\t{url}\t1.2.3\t")),
        "{listed}"
    );

    // A digest that does not match fails before anything is applied.
    let bad = timoni(
        &home,
        &[
            "apply",
            "demo",
            &url,
            "-v",
            "1.2.3",
            "-d",
            "sha256:0000000000000000000000000000000000000000000000000000000000000000",
            "-n",
            "apps",
            "--wait=false",
            "--kubeconfig",
            kc,
        ],
    );
    assert!(!bad.status.success());
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(err.contains("digest"), "{err}");
}
