//! Where the shared conformance corpus is, and a sorted walk over its files, for the tests and
//! benchmarks of this crate. The corpus is data outside the repository; the rule is the one of
//! `conformance::corpus::locate`: `$CONFORMANCE_DIR`, else `../shared/conformance` beside the
//! workspace. Shared by the formatter's tests (`src/syntax/format/golden_tests.rs`) and the benchmarks
//! through `#[path]`.

use std::path::{Path, PathBuf};

/// The conformance corpus directory, if it is present.
pub fn conformance_dir() -> Option<PathBuf> {
    let dir = match std::env::var_os("CONFORMANCE_DIR") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/conformance"),
    };
    dir.is_dir().then_some(dir)
}

/// Every file under `dir` whose path ends with `suffix`, in sorted order.
pub fn files_with_suffix(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    walk(dir, suffix, &mut out);
    out
}

fn walk(dir: &Path, suffix: &str, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            walk(&p, suffix, out);
        } else if p.to_string_lossy().ends_with(suffix) {
            out.push(p);
        }
    }
}
