//! What the registry tests of `timoni-core` (`registry.rs`, `sign.rs`) share on top of the
//! registry harness `registry.rs`: typed URLs and clients for the running registry, the test
//! module copied out of the repository, and a push with fixed annotations. Included by path;
//! depends on timoni-core, tempfile and walkdir.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use timoni_core::oci::{self, ArtifactUrl, Credentials, OciClientRegistry, RegistryOptions};

use super::support::TestRegistry;

/// Typed access to the shared test registry.
pub trait RegistryExt {
    fn oci_url(&self, repo: &str) -> ArtifactUrl;
    fn client(&self, credentials: Credentials) -> OciClientRegistry;
}

impl RegistryExt for TestRegistry {
    fn oci_url(&self, repo: &str) -> ArtifactUrl {
        ArtifactUrl::parse(&self.url(repo)).unwrap()
    }

    fn client(&self, credentials: Credentials) -> OciClientRegistry {
        OciClientRegistry::new(
            &self.oci_url("x"),
            &RegistryOptions {
                insecure: false,
                credentials,
            },
        )
        .unwrap()
    }
}

/// The test module, copied outside any git repository so that no git annotation varies.
pub fn module_copy(into: &Path) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/oci/module");
    let dst = into.join("module");
    for e in walkdir::WalkDir::new(&src) {
        let e = e.unwrap();
        let to = dst.join(e.path().strip_prefix(&src).unwrap());
        if e.file_type().is_dir() {
            std::fs::create_dir_all(&to).unwrap();
        } else {
            std::fs::copy(e.path(), &to).unwrap();
        }
    }
    dst
}

/// Pushes the module in `dir` as version `v` (a fixed creation time, no annotations) and
/// returns its digest.
pub fn push(
    reg: &OciClientRegistry,
    dir: &Path,
    url: &ArtifactUrl,
    v: &str,
    latest: bool,
) -> String {
    oci::push_module(
        reg,
        dir,
        url,
        v,
        latest,
        &BTreeMap::new(),
        Some("1700000000"),
        false,
    )
    .unwrap()
    .digest
}
