//! `timoni mod init`: the starter blueprint embedded in the binary, written out as a new module.
//!
//! The blueprint (`timoni-core/blueprints/starter`) is a complete module whose name is
//! `blueprint` (`module: "timoni.sh/blueprint"`); [`init`] copies it to `PATH/NAME`, replacing
//! the word `blueprint` with NAME in every file, as Timoni does with the blueprints it pulls;
//! [`init_from`] does the same with a blueprint pulled from a registry. It never overwrites: the
//! target must not exist, or be an empty directory.

use std::fmt;
use std::path::{Path, PathBuf};

use include_dir::{Dir, include_dir};

static STARTER: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/blueprints/starter");

/// The word the blueprint uses for the module name.
pub const PLACEHOLDER: &str = "blueprint";

/// Why `init` failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InitError {
    /// The module name is not a DNS-1123 label.
    InvalidName(String),
    /// The target exists and is not an empty directory.
    NotEmpty(PathBuf),
    /// Writing failed.
    Io(String),
}

impl fmt::Display for InitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InitError::InvalidName(n) => write!(
                f,
                "invalid module name {n:?}: it must be lowercase alphanumerics and '-', starting and ending with an alphanumeric, at most 63 characters"
            ),
            InitError::NotEmpty(p) => {
                write!(
                    f,
                    "{} already exists and is not an empty directory",
                    p.display()
                )
            }
            InitError::Io(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for InitError {}

/// The files of the embedded starter, as (relative path, contents), sorted by path.
pub fn starter_files() -> Vec<(&'static Path, &'static [u8])> {
    embedded_files(&STARTER)
}

/// The files of a directory embedded with `include_dir!`, as (relative path, contents), sorted
/// by path.
pub fn embedded_files(dir: &'static Dir<'static>) -> Vec<(&'static Path, &'static [u8])> {
    fn walk(d: &'static Dir<'static>, out: &mut Vec<(&'static Path, &'static [u8])>) {
        for f in d.files() {
            out.push((f.path(), f.contents()));
        }
        for sub in d.dirs() {
            walk(sub, out);
        }
    }
    let mut out = Vec::new();
    walk(dir, &mut out);
    out.sort_by(|a, b| a.0.cmp(b.0));
    out
}

/// Writes a file of an embedded tree, creating its directory; the error names the path.
pub(crate) fn write_file(path: &Path, contents: &[u8]) -> Result<(), String> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    }
    std::fs::write(path, contents).map_err(|e| format!("writing {}: {e}", path.display()))
}

fn valid_name(name: &str) -> bool {
    let b = name.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        && b[0] != b'-'
        && b[b.len() - 1] != b'-'
}

/// The Kubernetes version of the schemas under the starter's `cue.mod/gen/k8s.io`.
pub const K8S_SCHEMA_VERSION: &str = "1.34";

/// `timoni mod vendor k8s` offline: writes the starter's Kubernetes schemas (core/v1, apps/v1,
/// meta/v1 and what they import, Kubernetes [`K8S_SCHEMA_VERSION`]) into
/// `module_root/cue.mod/gen/k8s.io`, replacing files of the same name. Returns the files
/// written, relative to `cue.mod/gen`.
pub fn vendor_k8s(module_root: &Path) -> Result<Vec<PathBuf>, InitError> {
    let cue_mod = module_root.join("cue.mod");
    if !cue_mod.is_dir() {
        return Err(InitError::Io(format!(
            "cue.mod not found in the module path {}",
            module_root.display()
        )));
    }
    let prefix = Path::new("cue.mod/gen");
    let mut written = Vec::new();
    for (rel, contents) in starter_files() {
        let Ok(sub) = rel.strip_prefix(prefix) else {
            continue;
        };
        if !sub.starts_with("k8s.io") {
            continue;
        }
        write_file(&cue_mod.join("gen").join(sub), contents).map_err(InitError::Io)?;
        written.push(sub.to_path_buf());
    }
    Ok(written)
}

/// Writes the starter as module `name` into `parent/name` and returns that directory and the
/// files written (relative paths, sorted).
pub fn init(name: &str, parent: &Path) -> Result<(PathBuf, Vec<PathBuf>), InitError> {
    let files: Vec<(PathBuf, Vec<u8>)> = starter_files()
        .into_iter()
        .map(|(p, c)| (p.to_path_buf(), c.to_vec()))
        .collect();
    init_from(name, parent, &files)
}

/// Like [`init`], from the files of a blueprint pulled from a registry (`mod init -b oci://…`),
/// as [`read_tree`] reads them; the starter's `timoni.ignore` is written when the blueprint has
/// none, as Timoni writes its default ignore file.
pub fn init_from(
    name: &str,
    parent: &Path,
    files: &[(PathBuf, Vec<u8>)],
) -> Result<(PathBuf, Vec<PathBuf>), InitError> {
    if !valid_name(name) {
        return Err(InitError::InvalidName(name.to_string()));
    }
    let dest = parent.join(name);
    if dest.exists() {
        let empty = dest.is_dir()
            && std::fs::read_dir(&dest)
                .map_err(|e| InitError::Io(format!("reading {}: {e}", dest.display())))?
                .next()
                .is_none();
        if !empty {
            return Err(InitError::NotEmpty(dest));
        }
    }
    let mut written = Vec::new();
    for (rel, contents) in files {
        let bytes = match std::str::from_utf8(contents) {
            Ok(text) => text.replace(PLACEHOLDER, name).into_bytes(),
            Err(_) => contents.clone(),
        };
        write_file(&dest.join(rel), &bytes).map_err(InitError::Io)?;
        written.push(rel.clone());
    }
    let ignore = Path::new("timoni.ignore");
    if !written.iter().any(|p| p == ignore)
        && let Some((_, default)) = starter_files().into_iter().find(|(p, _)| *p == ignore)
    {
        write_file(&dest.join(ignore), default).map_err(InitError::Io)?;
        written.push(ignore.to_path_buf());
    }
    Ok((dest, written))
}

/// The regular files under `dir` as (relative path, contents), sorted by path; anything else
/// (a symlink, a device) is refused, as Timoni refuses it in a blueprint.
pub fn read_tree(dir: &Path) -> Result<Vec<(PathBuf, Vec<u8>)>, InitError> {
    fn walk(root: &Path, d: &Path, out: &mut Vec<(PathBuf, Vec<u8>)>) -> Result<(), InitError> {
        let io = |e: std::io::Error| InitError::Io(format!("reading {}: {e}", d.display()));
        for entry in std::fs::read_dir(d).map_err(io)? {
            let entry = entry.map_err(io)?;
            let path = entry.path();
            let kind = entry.file_type().map_err(io)?;
            if kind.is_dir() {
                walk(root, &path, out)?;
            } else if kind.is_file() {
                let bytes = std::fs::read(&path).map_err(io)?;
                let rel = path.strip_prefix(root).unwrap_or(&path).to_path_buf();
                out.push((rel, bytes));
            } else {
                return Err(InitError::Io(format!(
                    "blueprint entry is not a regular file: {}",
                    path.display()
                )));
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out)?;
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_starter_has_the_module_contract() {
        let files: Vec<String> = starter_files()
            .iter()
            .map(|(p, _)| p.display().to_string())
            .collect();
        for want in [
            "cue.mod/module.cue",
            "timoni.cue",
            "values.cue",
            "timoni.ignore",
            "README.md",
            "templates/config.cue",
            "templates/deployment.cue",
            "templates/service.cue",
            "templates/serviceaccount.cue",
            "cue.mod/gen/k8s.io/api/core/v1/types_go_gen.cue",
            "cue.mod/gen/k8s.io/api/apps/v1/types_go_gen.cue",
            "cue.mod/gen/k8s.io/apimachinery/pkg/apis/meta/v1/types_go_gen.cue",
            "cue.mod/pkg/timoni.sh/core/v1alpha1/image.cue",
        ] {
            assert!(
                files.contains(&want.to_string()),
                "missing {want} in {files:?}"
            );
        }
    }

    #[test]
    fn vendor_k8s_writes_the_schemas_into_cue_mod_gen() {
        let tmp = tempfile::tempdir().unwrap();
        assert!(vendor_k8s(tmp.path()).is_err(), "no cue.mod");
        std::fs::create_dir(tmp.path().join("cue.mod")).unwrap();
        let files = vendor_k8s(tmp.path()).unwrap();
        assert!(
            files.contains(&PathBuf::from("k8s.io/api/core/v1/types_go_gen.cue")),
            "{files:?}"
        );
        let apps = tmp
            .path()
            .join("cue.mod/gen/k8s.io/api/apps/v1/types_go_gen.cue");
        assert!(
            std::fs::read_to_string(apps)
                .unwrap()
                .contains("#Deployment: {")
        );
    }

    #[test]
    fn names_are_dns_labels() {
        for ok in ["demo", "a", "my-app-2"] {
            assert!(valid_name(ok), "{ok}");
        }
        for bad in ["", "-a", "a-", "Demo", "a_b", "a.b", &"x".repeat(64)] {
            assert!(!valid_name(bad), "{bad}");
        }
    }

    #[test]
    fn a_pulled_blueprint_is_read_renamed_and_gets_the_default_ignore_file() {
        let tmp = tempfile::tempdir().unwrap();
        let src = tmp.path().join("pulled");
        std::fs::create_dir_all(src.join("cue.mod")).unwrap();
        std::fs::write(
            src.join("cue.mod/module.cue"),
            "module: \"x.io/blueprint\"\n",
        )
        .unwrap();
        std::fs::write(src.join("values.cue"), "values: {}\n").unwrap();
        let files = read_tree(&src).unwrap();
        let names: Vec<_> = files.iter().map(|(p, _)| p.display().to_string()).collect();
        assert_eq!(names, ["cue.mod/module.cue", "values.cue"]);
        let (dest, written) = init_from("app", tmp.path(), &files).unwrap();
        assert_eq!(written.last().unwrap(), Path::new("timoni.ignore"));
        let module = std::fs::read_to_string(dest.join("cue.mod/module.cue")).unwrap();
        assert_eq!(module, "module: \"x.io/app\"\n");
        assert!(dest.join("timoni.ignore").is_file());
    }

    #[test]
    fn init_replaces_the_name_and_never_overwrites() {
        let tmp = tempfile::tempdir().unwrap();
        let (dest, files) = init("demo", tmp.path()).unwrap();
        assert_eq!(dest, tmp.path().join("demo"));
        assert!(files.len() > 10);
        let module = std::fs::read_to_string(dest.join("cue.mod/module.cue")).unwrap();
        assert!(
            module.starts_with("module: \"timoni.sh/demo\"\n"),
            "{module}"
        );
        // The loader refuses a module without a language version, as cue and Timoni do.
        assert!(
            module.contains(&format!(
                "language: version: {:?}",
                cue_eval::LANGUAGE_VERSION
            )),
            "{module}"
        );
        let main = std::fs::read_to_string(dest.join("timoni.cue")).unwrap();
        assert!(
            main.contains("templates \"timoni.sh/demo/templates\""),
            "{main}"
        );
        assert_eq!(
            init("demo", tmp.path()).unwrap_err(),
            InitError::NotEmpty(tmp.path().join("demo"))
        );
        std::fs::create_dir(tmp.path().join("empty")).unwrap();
        assert!(init("empty", tmp.path()).is_ok());
        assert!(matches!(
            init("Bad", tmp.path()),
            Err(InitError::InvalidName(_))
        ));
    }
}
