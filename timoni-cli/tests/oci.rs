//! End-to-end tests of `timoni mod|artifact|registry` and of `oci://` modules in `build`,
//! `bundle build` and `mod show config`: the real binary against Debian's `docker-registry`
//! (the harness shared with timoni-core, `timoni-core/tests/support/registry.rs`), and `skopeo`
//! to inspect what was pushed. Skips loudly without the registry binary; the starter-module acceptance test also
//! needs the shared corpus (`../shared/conformance`).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

mod common;
#[path = "../../timoni-core/tests/support/registry.rs"]
mod registry;

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

/// The log lines of a run, with their clock time written `[HH:MM]`.
fn logs(out: &Output) -> String {
    let time = regex::Regex::new(r"(?m)^\d{1,2}:\d\d[AP]M ").unwrap();
    time.replace_all(&String::from_utf8_lossy(&out.stderr), "[HH:MM] ")
        .into_owned()
}

/// The log lines of a successful run.
fn ok_logs(out: Output) -> String {
    assert!(out.status.success(), "timoni failed: {}", logs(&out));
    logs(&out)
}

fn starter() -> Option<PathBuf> {
    common::corpus_path("timoni/starter/module")
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
    let Some(reg) = registry::start(None) else {
        return;
    };
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

    // `mod init -b` writes a new module from the pushed one, its name in place of `blueprint`.
    let parent = reg.dir.path().join("modules");
    std::fs::create_dir_all(&parent).unwrap();
    let init = ok_logs(timoni(
        &home,
        &[
            "mod",
            "init",
            "my-app",
            parent.to_str().unwrap(),
            "-b",
            &url,
        ],
    ));
    assert!(
        init.ends_with(&format!(
            "INF module initialized at {}/my-app\n",
            parent.display()
        )),
        "{init}"
    );
    let app = parent.join("my-app");
    let module_cue = std::fs::read_to_string(app.join("cue.mod/module.cue")).unwrap();
    assert!(module_cue.contains("timoni.sh/my-app"), "{module_cue}");
    assert!(app.join("timoni.ignore").is_file());
    ok_logs(timoni(&home, &["mod", "vet", app.to_str().unwrap()]));

    // `mod show readme` of the pushed module prints the README that was pushed.
    let readme = ok(timoni(
        &home,
        &["mod", "show", "readme", &url, "-v", "1.0.0"],
    ));
    assert_eq!(
        readme,
        std::fs::read_to_string(module.join("README.md")).unwrap()
    );

    let list = ok(timoni(&home, &["mod", "list", &url]));
    let digest = first["digest"].as_str().unwrap();
    // An aligned table: each cell padded to its column's width.
    assert_eq!(
        list,
        format!(
            "VERSION\t{:<71}\n1.0.0  \t{digest}\nlatest \t{digest}\n",
            "DIGEST"
        )
    );
    let d = ok_logs(timoni(
        &home,
        &["artifact", "digest", &format!("{url}:1.0.0")],
    ));
    assert_eq!(
        d,
        format!("[HH:MM] INF artifact: {url}:1.0.0\n[HH:MM] INF digest: {digest}\n")
    );
}

#[test]
fn bad_urls_and_versions_fail_with_one_clear_line() {
    let home = tempfile::tempdir().unwrap();
    let out = timoni(
        home.path(),
        &["mod", "push", ".", "docker.io/x", "-v", "1.0.0"],
    );
    insta::assert_snapshot!(logs(&out), @r#"[HH:MM] ERR invalid artifact URL "docker.io/x": the URL must start with oci://"#);
    assert!(!out.status.success());
    let out = timoni(
        home.path(),
        &["mod", "push", ".", "oci://127.0.0.1:1/x", "-v", "v1"],
    );
    insta::assert_snapshot!(logs(&out), @r#"[HH:MM] ERR version "v1" is not strict semver: unexpected character 'v' while parsing major version number"#);
}

#[test]
fn credentials_come_from_creds_login_or_a_docker_credential_helper() {
    let Some(reg) = registry::start(Some(("alice", "s3cret"))) else {
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

    // The same helper as the default store (credsStore).
    std::fs::write(home.join(".docker/config.json"), r#"{"credsStore":"fake"}"#).unwrap();
    let listed = timoni_with_path(&home, &["mod", "list", &url, "-o", "json"], Some(&bin));
    assert!(ok(listed).contains("\"version\": \"1.0.0\""));
}

/// Starts `moto_server` (the AWS emulator from PyPI) on a free port; `None` after a loud
/// message when it is missing, unless `TIMONI_REQUIRE_MOTO=1`.
fn moto() -> Option<(std::process::Child, u16)> {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = Command::new("moto_server")
        .args(["-H", "127.0.0.1", "-p", &port.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    let Ok(child) = child else {
        let why = "moto_server is missing; install it with `pip install 'moto[server]'`";
        if std::env::var("TIMONI_REQUIRE_MOTO").is_ok_and(|v| v == "1") {
            panic!("TIMONI_REQUIRE_MOTO=1 but {why}");
        }
        eprintln!("\n!!!!!!!! SKIPPED (set TIMONI_REQUIRE_MOTO=1 to fail instead): {why}\n");
        return None;
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            std::time::Instant::now() < deadline,
            "moto_server did not start"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    Some((child, port))
}

#[test]
fn provider_aws_logs_in_to_ecr_with_the_ambient_web_identity() {
    let Some((mut moto, port)) = moto() else {
        return;
    };
    let password = "123456789012-auth-token";
    let Some(reg) = registry::start(Some(("AWS", password))) else {
        let _ = moto.kill();
        return;
    };
    let home = reg.dir.path().join("home");
    let url = format!("oci://127.0.0.1:{}/private", reg.port);
    let module = Path::new(env!("CARGO_MANIFEST_DIR")).join("../timoni-core/testdata/oci/module");
    let token = reg.dir.path().join("web-identity-token");
    std::fs::write(&token, "eyJhbGciOiJub25lIn0.e30.").unwrap();
    let moto_url = format!("http://127.0.0.1:{port}/");
    let run = |provider: &str| {
        Command::new(env!("CARGO_BIN_EXE_timoni"))
            .args(["mod", "push", module.to_str().unwrap(), &url, "-v", "1.0.0"])
            .args(["--provider", provider])
            .env("HOME", &home)
            .env_remove("DOCKER_CONFIG")
            .env("SOURCE_DATE_EPOCH", "1700000000")
            .env("AWS_ROLE_ARN", "arn:aws:iam::123456789012:role/ci")
            .env("AWS_WEB_IDENTITY_TOKEN_FILE", &token)
            .env("AWS_REGION", "us-east-1")
            .env("TIMONI_AWS_STS_ENDPOINT", &moto_url)
            .env("TIMONI_AWS_ECR_ENDPOINT", &moto_url)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let denied = run("generic");
    assert!(!denied.status.success());
    ok(run("aws"));
    let _ = moto.kill();
    let _ = moto.wait();
}

/// Copies `src` into `dst` (files and directories only).
fn copy_tree(src: &Path, dst: &Path) {
    let mut stack = vec![src.to_path_buf()];
    while let Some(d) = stack.pop() {
        let to = dst.join(d.strip_prefix(src).unwrap());
        std::fs::create_dir_all(&to).unwrap();
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                std::fs::copy(&p, to.join(p.file_name().unwrap())).unwrap();
            }
        }
    }
}

/// Sets the modification time of every file and directory under `dir`, and, when running as
/// root, its owner.
fn restamp(dir: &Path, mtime: std::time::SystemTime, owner: Option<u32>) {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p.clone());
            } else {
                let f = std::fs::File::options().write(true).open(&p).unwrap();
                f.set_modified(mtime).unwrap();
            }
            if let Some(uid) = owner {
                std::os::unix::fs::chown(&p, Some(uid), Some(uid)).unwrap();
            }
        }
    }
}

/// The digest `mod build` logs last (`INF digest: sha256:…`).
fn built_digest(out: &Output) -> String {
    assert!(
        out.status.success(),
        "mod build failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    err.trim().rsplit(' ').next().unwrap().to_string()
}

#[test]
fn mod_build_gives_the_same_digest_on_two_checkouts_and_the_archive_pushes_as_is() {
    let Some(module) = starter() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    // Two checkouts outside any git repository, with other times (and owners, as root).
    let (a, b) = (tmp.path().join("a/starter"), tmp.path().join("b/starter"));
    copy_tree(&module, &a);
    copy_tree(&module, &b);
    let day = Duration::from_secs(86_400);
    restamp(&a, std::time::UNIX_EPOCH + day, None);
    let root = std::process::Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.starts_with(b"0\n"));
    if !root {
        eprintln!("NOTE: not root: the second checkout differs in times only, not in owner");
    }
    restamp(&b, std::time::SystemTime::now(), root.then_some(4321));

    let build = |dir: &Path, out: &Path, format: &str| {
        timoni(
            &home,
            &[
                "mod",
                "build",
                dir.to_str().unwrap(),
                "-v",
                "1.0.0",
                "-o",
                out.to_str().unwrap(),
                "--format",
                format,
            ],
        )
    };
    let (ta, tb) = (tmp.path().join("a.tar"), tmp.path().join("b.tar"));
    let da = built_digest(&build(&a, &ta, "oci-archive"));
    let db = built_digest(&build(&b, &tb, "oci-archive"));
    assert!(da.starts_with("sha256:") && da.len() == 71, "{da}");
    assert_eq!(da, db, "two checkouts give the same manifest digest");
    assert_eq!(
        std::fs::read(&ta).unwrap(),
        std::fs::read(&tb).unwrap(),
        "and the same archive bytes"
    );
    let layout = tmp.path().join("layout");
    assert_eq!(built_digest(&build(&a, &layout, "oci-layout")), da);
    assert!(layout.join("index.json").is_file() && layout.join("oci-layout").is_file());

    // The output must not exist.
    let again = build(&a, &ta, "oci-archive");
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("already exists"));

    // `artifact build` writes the one-layer artifact the same way.
    let art = tmp.path().join("art.tar");
    let out = timoni(
        &home,
        &[
            "artifact",
            "build",
            "-f",
            a.join("values.cue").to_str().unwrap(),
            "-t",
            "v1",
            "-o",
            art.to_str().unwrap(),
        ],
    );
    assert!(built_digest(&out).starts_with("sha256:"));

    // Pushing the directory, or the archive, gives the digest `mod build` computed.
    let Some(reg) = registry::start(None) else {
        return;
    };
    let url = reg.url("starter");
    let pushed: serde_json::Value = serde_json::from_str(&ok(timoni(
        &home,
        &[
            "mod",
            "push",
            b.to_str().unwrap(),
            &url,
            "-v",
            "1.0.0",
            "-o",
            "json",
        ],
    )))
    .unwrap();
    assert_eq!(pushed["digest"], da.as_str());
    let from_archive: serde_json::Value = serde_json::from_str(&ok(timoni(
        &home,
        &[
            "mod",
            "push",
            ta.to_str().unwrap(),
            &reg.url("archived"),
            "-o",
            "json",
        ],
    )))
    .unwrap();
    assert_eq!(from_archive["digest"], da.as_str());
    assert_eq!(from_archive["version"], "1.0.0");
    let wrong = timoni(
        &home,
        &[
            "mod",
            "push",
            ta.to_str().unwrap(),
            &reg.url("archived"),
            "-v",
            "2.0.0",
        ],
    );
    assert!(!wrong.status.success());
    insta::assert_snapshot!(logs(&wrong), @"[HH:MM] ERR --version 2.0.0 differs from the version 1.0.0 the archive was built with");
}

#[test]
fn oci_modules_build_show_and_bundle_like_local_ones() {
    let Some(module) = starter() else { return };
    let Some(reg) = registry::start(None) else {
        return;
    };
    let home = reg.dir.path().join("home");
    let checkout = reg.dir.path().join("src/starter");
    copy_tree(&module, &checkout);
    let m = checkout.to_str().unwrap();
    let url = reg.url("starter");
    let pushed: serde_json::Value = serde_json::from_str(&ok(timoni(
        &home,
        &["mod", "push", m, &url, "-v", "1.0.0", "-o", "json"],
    )))
    .unwrap();
    let digest = pushed["digest"].as_str().unwrap().to_string();

    // `timoni build x oci://…/starter -v 1.0.0` equals the local build, but for the module
    // version, which is the pulled one instead of 0.0.0-devel.
    let local = ok(timoni(&home, &["build", "x", m, "-n", "apps"]));
    assert!(local.contains("0.0.0-devel"), "{local}");
    let expected = local.replace("0.0.0-devel", "1.0.0");
    let remote = ok(timoni(
        &home,
        &["build", "x", &url, "-v", "1.0.0", "-n", "apps"],
    ));
    assert_eq!(remote, expected);
    // By the tag in the URL (the default -v latest does not override it).
    let tagged = format!("{url}:1.0.0");
    assert_eq!(
        ok(timoni(&home, &["build", "x", &tagged, "-n", "apps"])),
        expected
    );
    // By digest in the URL, by --digest alone (version latest), by version and digest.
    let by_digest = format!("{url}@{digest}");
    assert_eq!(
        ok(timoni(&home, &["build", "x", &by_digest, "-n", "apps"])),
        expected
    );
    assert_eq!(
        ok(timoni(
            &home,
            &["build", "x", &url, "-d", &digest, "-n", "apps"]
        )),
        expected
    );
    assert_eq!(
        ok(timoni(
            &home,
            &[
                "build", "x", &url, "-v", "1.0.0", "-d", &digest, "-n", "apps"
            ]
        )),
        expected
    );
    let other = format!("sha256:{}", "0".repeat(64));
    let out = timoni(&home, &["build", "x", &url, "-v", "1.0.0", "-d", &other]);
    assert!(!out.status.success());
    assert_eq!(
        logs(&out).trim(),
        format!(
            "[HH:MM] ERR build failed: the upstream digest {digest} of version 1.0.0 doesn't match the specified digest {other}"
        )
    );
    let out = timoni(&home, &["build", "x", &url, "-v", "9.9.9"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains(":9.9.9"));

    // mod show config of the OCI module equals the local one.
    assert_eq!(
        ok(timoni(
            &home,
            &["mod", "show", "config", &url, "-v", "1.0.0"]
        )),
        ok(timoni(&home, &["mod", "show", "config", m]))
    );

    // A bundle with an OCI instance (version, and latest + digest) and a file:// one.
    let bundle = reg.dir.path().join("bundle.cue");
    let write_bundle = |digest: &str| {
        std::fs::write(
            &bundle,
            format!(
                "bundle: {{\n\tapiVersion: \"v1alpha1\"\n\tname: \"demo\"\n\tinstances: {{\n\
                 \t\tlocal: {{module: url: \"file://{m}\", namespace: \"apps\"}}\n\
                 \t\tpinned: {{module: {{url: \"{url}\", version: \"1.0.0\", digest: \"{digest}\"}}, namespace: \"apps\"}}\n\
                 \t\tlatest: {{module: {{url: \"{url}\", digest: \"{digest}\"}}, namespace: \"apps\"}}\n\
                 \t}}\n}}\n"
            ),
        )
        .unwrap();
    };
    write_bundle(&digest);
    let out = ok(timoni(
        &home,
        &["bundle", "build", "-f", bundle.to_str().unwrap()],
    ));
    let sections: Vec<&str> = out.split("---\n# Instance: ").skip(1).collect();
    assert_eq!(sections.len(), 3, "{out}");
    let body = |s: &str, name: &str| s.trim_end().replace(name, "NAME");
    assert!(sections[0].contains("0.0.0-devel"));
    assert_eq!(
        body(sections[1], "pinned"),
        body(sections[0], "local").replace("0.0.0-devel", "1.0.0")
    );
    assert_eq!(body(sections[2], "latest"), body(sections[1], "pinned"));
    write_bundle(&other);
    let out = timoni(&home, &["bundle", "build", "-f", bundle.to_str().unwrap()]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "the upstream digest {digest} of version 1.0.0 doesn't match the specified digest {other}"
        )),
        "{err}"
    );
}

/// Runs `timoni ARGS` in `dir` with `stdin` (private HOME as [`timoni`]).
fn timoni_stdin(home: &Path, dir: &Path, args: &[&str], stdin: &str) -> Output {
    use std::io::Write as _;
    let mut child = Command::new(env!("CARGO_BIN_EXE_timoni"))
        .args(args)
        .current_dir(dir)
        .env("HOME", home)
        .env_remove("DOCKER_CONFIG")
        .env_remove("TIMONI_CACHE_DIR")
        .env_remove("TIMONI_CACHING")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run timoni");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn fn_is_hermetic_oci_modules_come_from_the_cache_unless_the_network_is_allowed() {
    let Some(module) = starter() else { return };
    let Some(reg) = registry::start(None) else {
        return;
    };
    // Home (and its cache) outlive the registry.
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let checkout = tmp.path().join("src/starter");
    copy_tree(&module, &checkout);
    let url = reg.url("starter");
    let pushed: serde_json::Value = serde_json::from_str(&ok(timoni(
        &home,
        &[
            "mod",
            "push",
            checkout.to_str().unwrap(),
            &url,
            "-v",
            "1.0.0",
            "-o",
            "json",
        ],
    )))
    .unwrap();
    let digest = pushed["digest"].as_str().unwrap().to_string();
    let list = format!(
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\nfunctionConfig:\n  \
         apiVersion: timoni.sh/v1alpha1\n  kind: Instance\n  metadata:\n    name: web\n    \
         namespace: apps\n  module:\n    url: {url}\n    version: 1.0.0\n    digest: {digest}\n"
    );
    let dir = tmp.path();

    // Nothing cached: the function fails offline and says how to allow the network.
    let offline = timoni_stdin(&home, dir, &["fn"], &list);
    assert!(!offline.status.success());
    let err = String::from_utf8_lossy(&offline.stderr);
    assert!(
        err.contains("is not available offline") && err.contains("--allow-network"),
        "{err}"
    );
    assert!(String::from_utf8_lossy(&offline.stdout).contains("severity: error"));

    // With --allow-network it pulls (through the cache) and builds.
    let online = timoni_stdin(&home, dir, &["fn", "--allow-network"], &list);
    assert!(
        online.status.success(),
        "{}",
        String::from_utf8_lossy(&online.stderr)
    );
    let generated = String::from_utf8(online.stdout).unwrap();
    assert!(generated.contains("kind: Deployment"), "{generated}");
    assert!(
        generated.contains("app.kubernetes.io/version: 1.0.0"),
        "{generated}"
    );
    assert!(generated.contains(&format!("ref: {digest}")), "{generated}");

    // The registry is gone: the cached module still builds, to the same bytes.
    drop(reg);
    let cached = timoni_stdin(&home, dir, &["fn"], &list);
    assert!(
        cached.status.success(),
        "{}",
        String::from_utf8_lossy(&cached.stderr)
    );
    assert_eq!(String::from_utf8(cached.stdout).unwrap(), generated);
}

#[path = "../../timoni-core/tests/common/envtest.rs"]
mod envtest;

/// `timoni apply` of an `oci://` module: pulled by version, applied, and recorded with its
/// repository, version and digest in the inventory.
#[test]
fn apply_of_an_oci_module_records_its_reference() {
    let Some(reg) = registry::start(None) else {
        return;
    };
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
    let values = ok_logs(timoni(
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
        log.contains("b:oci > i:two > Deployment/b2/two created"),
        "{log}"
    );
    let listed = ok(timoni(
        &home,
        &["list", "-A", "--bundle", "oci", "--kubeconfig", kc],
    ));
    assert_eq!(listed.lines().count(), 3, "{listed}");
    assert!(
        listed.lines().any(|l| {
            let cells: Vec<&str> = l.split('\t').map(str::trim_end).collect();
            cells[..4] == ["one", "b1", url.as_str(), "1.2.3"]
        }),
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

/// Tables are Timoni's `tablewriter` layout: upper-cased headers, every cell padded to its
/// column's width, columns separated by a tab (`→` in the snapshot), with and without digests.
#[test]
fn list_tables_are_aligned() {
    let Some(reg) = registry::start(None) else {
        return;
    };
    let home = reg.dir.path().join("home");
    let url = reg.url("tables");
    let file = reg.dir.path().join("data.txt");
    std::fs::write(&file, "data\n").unwrap();
    let pushed = ok(timoni(
        &home,
        &[
            "artifact",
            "push",
            &url,
            "-f",
            file.to_str().unwrap(),
            "-t",
            "v1.0.0",
            "-t",
            "v1.10.0-rc.1",
            "-t",
            "latest",
            "-o",
            "json",
        ],
    ));
    let digest: serde_json::Value = serde_json::from_str(&pushed).unwrap();
    let digest = digest["digest"].as_str().unwrap().to_string();
    let with = ok(timoni(&home, &["artifact", "list", &url]));
    let without = ok(timoni(
        &home,
        &["artifact", "list", &url, "--with-digest=false"],
    ));
    // The digest is replaced by a placeholder of the same width, so the padding shows as is.
    let placeholder = format!("sha256:{}", "d".repeat(64));
    insta::assert_snapshot!(
        format!("{with}\n{without}")
            .replace(&digest, &placeholder)
            .replace('\t', "→")
    );
}
