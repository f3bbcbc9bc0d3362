//! The registry the OCI tests of `timoni-core` and `timoni-cli` share: Debian's
//! `docker-registry` (CNCF distribution) started on a free loopback port with filesystem storage
//! in a temporary directory, optionally with basic auth (an htpasswd file written with
//! `htpasswd` from `apache2-utils`), and killed when dropped. Without the tools, [`start`]
//! returns `None` after a loud `SKIPPED` message, or fails the test under
//! `TIMONI_REQUIRE_REGISTRY=1`; `.ci/run` installs both packages and sets it.
//!
//! Included by path (`#[path = …] mod registry;`) so that both crates' tests use one copy; it
//! depends on `std` and `tempfile` only.

#![allow(dead_code)]

use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Where Debian installs the registry.
pub const REGISTRY_BIN: &str = "/usr/bin/docker-registry";

/// A running registry; killed on drop.
pub struct TestRegistry {
    child: Child,
    /// The loopback port it listens on.
    pub port: u16,
    /// Its storage and config; tests may keep their own files here too.
    pub dir: tempfile::TempDir,
}

impl Drop for TestRegistry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl TestRegistry {
    /// `127.0.0.1:PORT`.
    pub fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// `oci://127.0.0.1:PORT/<repo>`.
    pub fn url(&self, repo: &str) -> String {
        format!("oci://{}/{repo}", self.host())
    }
}

/// Skips a registry test for `why`, loudly, unless `TIMONI_REQUIRE_REGISTRY=1` makes it a failure.
fn skip(why: &str) -> Option<TestRegistry> {
    if std::env::var("TIMONI_REQUIRE_REGISTRY").is_ok_and(|v| v == "1") {
        panic!("TIMONI_REQUIRE_REGISTRY=1 but {why}");
    }
    eprintln!("\n!!!!!!!! SKIPPED (set TIMONI_REQUIRE_REGISTRY=1 to fail instead): {why}\n");
    None
}

/// Starts a registry, with basic auth for `user` (name, password) when given.
pub fn start(user: Option<(&str, &str)>) -> Option<TestRegistry> {
    if !Path::new(REGISTRY_BIN).exists() {
        return skip(&format!(
            "{REGISTRY_BIN} is missing; install the Debian package docker-registry \
             (apt-get install -y docker-registry) to run the registry tests"
        ));
    }
    let dir = tempfile::tempdir().unwrap();
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut config = format!(
        "version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: {}\n\
         http:\n  addr: 127.0.0.1:{port}\n",
        dir.path().join("data").display()
    );
    if let Some((u, p)) = user {
        let line = match Command::new("htpasswd").args(["-Bbn", u, p]).output() {
            Ok(o) if o.status.success() => o.stdout,
            _ => {
                return skip(
                    "htpasswd is missing; install apache2-utils to run the basic-auth registry \
                     tests",
                );
            }
        };
        let path = dir.path().join("htpasswd");
        std::fs::write(&path, line).unwrap();
        config.push_str(&format!(
            "auth:\n  htpasswd:\n    realm: test\n    path: {}\n",
            path.display()
        ));
    }
    let config_path = dir.path().join("config.yml");
    std::fs::write(&config_path, config).unwrap();
    let child = Command::new(REGISTRY_BIN)
        .arg("serve")
        .arg(&config_path)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start docker-registry");
    let reg = TestRegistry { child, port, dir };
    let deadline = Instant::now() + Duration::from_secs(20);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "docker-registry did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
    Some(reg)
}
