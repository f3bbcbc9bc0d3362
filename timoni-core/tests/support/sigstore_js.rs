//! sigstore-js for the signature tests (`sign.rs`, `keyless_signing.rs`): the `node_modules`
//! that `.ci/run` installs (`$TIMONI_SIGSTORE_JS`: npm `sigstore` 3.1.0 and `@sigstore/mock`),
//! the scripts of `testdata/sigstore-js` run with it, and the Fulcio/Rekor stand-ins of
//! `services.js` started for a test. Skips loudly without it unless
//! `TIMONI_REQUIRE_SIGSTORE_JS=1`. Included by path.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// The `node_modules` holding sigstore-js and its mock services, or `None` (after a loud
/// skip line) without them.
pub fn modules() -> Option<PathBuf> {
    let dir = std::env::var_os("TIMONI_SIGSTORE_JS").map(PathBuf::from);
    let complete =
        |d: &PathBuf| d.join("@sigstore/verify").is_dir() && d.join("@sigstore/mock").is_dir();
    if let Some(dir) = dir.filter(complete) {
        return Some(dir);
    }
    let why = "TIMONI_SIGSTORE_JS does not name a node_modules with sigstore-js and its mock services (npm install sigstore@3.1.0 @sigstore/mock@0.10.0)";
    if std::env::var("TIMONI_REQUIRE_SIGSTORE_JS").is_ok_and(|v| v == "1") {
        panic!("TIMONI_REQUIRE_SIGSTORE_JS=1 but {why}");
    }
    eprintln!("\n!!!!!!!! SKIPPED (set TIMONI_REQUIRE_SIGSTORE_JS=1 to fail instead): {why}\n");
    None
}

fn script(name: &str) -> PathBuf {
    // The crate including this file is timoni-core or a sibling of it.
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../timoni-core/testdata/sigstore-js")
        .join(name)
}

/// Runs `testdata/sigstore-js/cosign.js` with sigstore-js.
pub fn run(modules: &Path, args: &[&str]) -> std::process::Output {
    Command::new("node")
        .arg(script("cosign.js"))
        .args(args)
        .env("NODE_PATH", modules)
        .output()
        .unwrap()
}

/// Fulcio, Rekor and a GitHub Actions token endpoint (`services.js`) on a local port, stopped
/// when dropped.
pub struct Services {
    child: Child,
    /// Their base URL.
    pub url: String,
    /// A `trusted_root.json` naming their CA, CT log and transparency log.
    pub trusted_root: String,
}

impl Services {
    /// Starts them; the Actions endpoint answers tokens for `subject` and `issuer` to a
    /// request bearing `request_token`.
    pub fn start(modules: &Path, request_token: &str, subject: &str, issuer: &str) -> Services {
        let mut child = Command::new("node")
            .arg(script("services.js"))
            .args([request_token, subject, issuer])
            .env("NODE_PATH", modules)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let ready: serde_json::Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("services.js did not start ({e}): {line:?}"));
        Services {
            child,
            url: ready["url"].as_str().unwrap().to_string(),
            trusted_root: ready["trustedRoot"].to_string(),
        }
    }

    /// GitHub Actions' `ACTIONS_ID_TOKEN_REQUEST_URL` for these services.
    pub fn actions_request_url(&self) -> String {
        format!("{}/actions/token?api-version=2.0", self.url)
    }
}

impl Drop for Services {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
