//! Discovery of the shared conformance corpus: every case, its expected outputs and its CUE sources.
//!
//! The corpus lives outside the repository (it is data produced by the official CUE v0.17.1 and
//! must never be copied in). [`locate`] finds it through `$CONFORMANCE_DIR` or next to the
//! workspace, and [`Corpus::load`] reads it whole: it is a few megabytes, and every runner (parse,
//! format, eval, export) wants all of it. Four kinds of case are found:
//!
//! - `cue/<dir>/<name>/` and `cue-pkg/<pkg>/testdata/<name>/`: a `case.txtar` archive and its
//!   `expected.json`. The CUE sources are the archive's `.cue` members, sub-directory and
//!   `cue.mod` members included; `out/**` and `diff/**` members are goldens of the upstream
//!   harness and were never given to `cue`, so they are left out.
//! - `timoni/<name>/`: a `module/` tree and its `expected.json`; the sources are every `.cue`
//!   file under `module/`, `cue.mod/gen` and `cue.mod/pkg` included.
//! - `timoni/timoni.schema.cue`: the schema overlay Timoni injects into every module build.
//! - `timoni-crd/golden/`: the CUE that `timoni mod vendor crd` must write, byte for byte.

use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::txtar;

/// Where the corpus was found, and how.
#[derive(Debug, Clone)]
pub struct Location {
    pub root: PathBuf,
    /// True when `$CONFORMANCE_DIR` named it, false when it is the default next to the
    /// workspace.
    pub from_env: bool,
}

/// The default corpus directory: `<workspace root>/../shared/conformance`.
pub fn default_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("..")
        .join("shared")
        .join("conformance")
}

/// Whether `root` has the corpus's layout: its README and at least one of its parts.
pub fn looks_like_corpus(root: &Path) -> bool {
    root.join("README.md").is_file() && (root.join("cue").is_dir() || root.join("timoni").is_dir())
}

/// Finds the corpus. The error is a human-readable reason to skip, since a missing corpus is an
/// environment matter rather than a failure of the code under test.
pub fn locate() -> Result<Location, String> {
    let (root, from_env) = match std::env::var_os("CONFORMANCE_DIR") {
        Some(dir) if !dir.is_empty() => (PathBuf::from(dir), true),
        _ => (default_root(), false),
    };
    if looks_like_corpus(&root) {
        Ok(Location { root, from_env })
    } else if from_env {
        Err(format!(
            "$CONFORMANCE_DIR={} does not look like the conformance corpus (no README.md with cue/ or timoni/ beside it)",
            root.display()
        ))
    } else {
        Err(format!(
            "no conformance corpus at {} (set $CONFORMANCE_DIR to point at it)",
            root.display()
        ))
    }
}

/// What a case is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CaseKind {
    /// Part A: `cue/testdata/**` language tests.
    Language,
    /// Part B: `pkg/**/testdata` standard-library tests.
    Stdlib,
    /// Part C: a Timoni module.
    TimoniModule,
    /// Timoni's schema overlay, `timoni/timoni.schema.cue`.
    TimoniSchema,
    /// The `timoni mod vendor crd` goldens.
    CrdGolden,
}

impl CaseKind {
    pub fn as_str(self) -> &'static str {
        match self {
            CaseKind::Language => "cue-lang",
            CaseKind::Stdlib => "cue-stdlib",
            CaseKind::TimoniModule => "timoni-module",
            CaseKind::TimoniSchema => "timoni-schema",
            CaseKind::CrdGolden => "timoni-crd",
        }
    }
}

/// One run of the official `cue` recorded in `expected.json` (`export`, `eval` or `eval_i`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Run {
    pub command: Option<String>,
    /// `None` when the run timed out.
    pub exit: Option<i64>,
    pub timeout: bool,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    fn from_json(v: &Value) -> Run {
        Run {
            command: v.get("command").and_then(Value::as_str).map(str::to_owned),
            exit: v.get("exit").and_then(Value::as_i64),
            timeout: v.get("timeout").and_then(Value::as_bool).unwrap_or(false),
            stdout: string_field(v, "stdout"),
            stderr: string_field(v, "stderr"),
        }
    }

    /// Whether the oracle succeeded. A timed-out run is neither success nor failure.
    pub fn ok(&self) -> Option<bool> {
        if self.timeout {
            None
        } else {
            self.exit.map(|e| e == 0)
        }
    }
}

/// The typed part of an `expected.json`; `raw` keeps everything for runners that need more.
#[derive(Debug, Clone, Default)]
pub struct Expected {
    pub kind: String,
    /// The root `.cue` files given to `cue`, in order (parts A and B only).
    pub files: Vec<String>,
    pub inline_test: bool,
    pub golden_only: bool,
    pub experiment: bool,
    pub experiments: Vec<String>,
    pub harness_selftest: bool,
    /// The recorded runs by name, in a fixed order: `export`, `eval`, `eval_i`.
    pub runs: Vec<(String, Run)>,
    pub raw: Value,
}

impl Expected {
    pub const RUN_NAMES: [&'static str; 3] = ["export", "eval", "eval_i"];

    pub fn from_json(raw: Value) -> Expected {
        let strings = |key: &str| -> Vec<String> {
            raw.get(key)
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default()
        };
        let flag = |key: &str| raw.get(key).and_then(Value::as_bool).unwrap_or(false);
        let runs = Self::RUN_NAMES
            .iter()
            .filter_map(|name| {
                raw.get(*name)
                    .map(|v| (name.to_string(), Run::from_json(v)))
            })
            .collect();
        Expected {
            kind: string_field(&raw, "kind"),
            files: strings("files"),
            inline_test: flag("inline_test"),
            golden_only: flag("golden_only"),
            experiment: flag("experiment"),
            experiments: strings("experiments"),
            harness_selftest: flag("harness_selftest"),
            runs,
            raw,
        }
    }

    pub fn run(&self, name: &str) -> Option<&Run> {
        self.runs.iter().find(|(n, _)| n == name).map(|(_, r)| r)
    }
}

fn string_field(v: &Value, key: &str) -> String {
    v.get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// One CUE source file of a case.
#[derive(Debug, Clone)]
pub struct SourceFile {
    /// The path relative to the case's working directory (the archive member name, or the path
    /// under `module/`), with `/` separators. This is how `cue` names the file in positions,
    /// after its leading `./`.
    pub path: String,
    pub bytes: Vec<u8>,
    /// True for the files `cue` was given on its command line (root-level archive members, or
    /// module-root files of a Timoni module); the others are reached only through imports.
    pub is_root: bool,
}

impl SourceFile {
    /// The source as text, or `None` when it is not valid UTF-8.
    pub fn text(&self) -> Option<&str> {
        std::str::from_utf8(&self.bytes).ok()
    }

    /// True for files under a `cue.mod/gen` directory (schemas generated from Go or CRDs).
    pub fn is_gen(&self) -> bool {
        self.path.starts_with("cue.mod/gen/") || self.path.contains("/cue.mod/gen/")
    }
}

/// One case of the corpus.
#[derive(Debug, Clone)]
pub struct Case {
    /// The case directory relative to the corpus root, e.g. `cue/eval/closedness`; this is the
    /// `id` used by `index.json`.
    pub id: String,
    pub kind: CaseKind,
    /// The case directory (or file, for the schema overlay).
    pub dir: PathBuf,
    /// The row of per-directory tables: `cue/<dir>`, `cue-pkg/<pkg>`, `timoni/<name>`, ...
    pub group: String,
    /// `None` only for the schema overlay and the CRD goldens, which have no oracle run.
    pub expected: Option<Expected>,
    /// The parsed archive of txtar cases, for runners that need its comment or goldens.
    pub archive: Option<txtar::Archive>,
    pub sources: Vec<SourceFile>,
}

/// The whole corpus, cases sorted by kind (language, stdlib, Timoni, schema, CRD) then id.
#[derive(Debug, Clone)]
pub struct Corpus {
    pub root: PathBuf,
    pub cases: Vec<Case>,
}

/// A problem reading the corpus.
#[derive(Debug)]
pub struct CorpusError {
    pub path: PathBuf,
    pub message: String,
}

impl fmt::Display for CorpusError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.message)
    }
}

impl std::error::Error for CorpusError {}

fn err(path: &Path, message: impl fmt::Display) -> CorpusError {
    CorpusError {
        path: path.to_path_buf(),
        message: message.to_string(),
    }
}

fn read(path: &Path) -> Result<Vec<u8>, CorpusError> {
    std::fs::read(path).map_err(|e| err(path, e))
}

fn read_expected(path: &Path) -> Result<Expected, CorpusError> {
    let bytes = read(path)?;
    let raw: Value = serde_json::from_slice(&bytes).map_err(|e| err(path, e))?;
    Ok(Expected::from_json(raw))
}

impl Corpus {
    /// Reads every case under `root`. Parts that are absent are simply empty, so a partial
    /// corpus still loads; a case directory with a missing or malformed file is an error.
    pub fn load(root: &Path) -> Result<Corpus, CorpusError> {
        let mut cases = Vec::new();
        for part in ["cue", "cue-pkg"] {
            let dir = root.join(part);
            if dir.is_dir() {
                let mut found = Vec::new();
                find_txtar_cases(&dir, &mut found)?;
                for case_dir in found {
                    cases.push(load_txtar_case(root, &case_dir)?);
                }
            }
        }
        let timoni = root.join("timoni");
        if timoni.is_dir() {
            for entry in sorted_entries(&timoni)? {
                if entry.join("module").is_dir() {
                    cases.push(load_timoni_case(root, &entry)?);
                }
            }
            let schema = timoni.join("timoni.schema.cue");
            if schema.is_file() {
                cases.push(Case {
                    id: "timoni/timoni.schema.cue".to_owned(),
                    kind: CaseKind::TimoniSchema,
                    dir: schema.clone(),
                    group: "timoni/timoni.schema.cue".to_owned(),
                    expected: None,
                    archive: None,
                    sources: vec![SourceFile {
                        path: "timoni.schema.cue".to_owned(),
                        bytes: read(&schema)?,
                        is_root: true,
                    }],
                });
            }
        }
        let crd = root.join("timoni-crd").join("golden");
        if crd.is_dir() {
            let mut files = Vec::new();
            collect_cue_files(&crd, &crd, &mut files)?;
            let sources = files
                .into_iter()
                .map(|(path, bytes)| SourceFile {
                    path,
                    bytes,
                    is_root: false,
                })
                .collect();
            cases.push(Case {
                id: "timoni-crd".to_owned(),
                kind: CaseKind::CrdGolden,
                dir: crd,
                group: "timoni-crd".to_owned(),
                expected: None,
                archive: None,
                sources,
            });
        }
        cases.sort_by(|a, b| (a.kind, &a.id).cmp(&(b.kind, &b.id)));
        Ok(Corpus {
            root: root.to_path_buf(),
            cases,
        })
    }

    /// Total number of CUE source files over all cases.
    pub fn source_count(&self) -> usize {
        self.cases.iter().map(|c| c.sources.len()).sum()
    }
}

/// Directory entries sorted by name, so that discovery order never depends on the file system.
fn sorted_entries(dir: &Path) -> Result<Vec<PathBuf>, CorpusError> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(|e| err(dir, e))? {
        out.push(entry.map_err(|e| err(dir, e))?.path());
    }
    out.sort();
    Ok(out)
}

/// Finds every directory holding a `case.txtar`, depth first.
fn find_txtar_cases(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), CorpusError> {
    if dir.join("case.txtar").is_file() {
        out.push(dir.to_path_buf());
        return Ok(());
    }
    for entry in sorted_entries(dir)? {
        if entry.is_dir() {
            find_txtar_cases(&entry, out)?;
        }
    }
    Ok(())
}

/// The corpus-relative id of a path, with `/` separators on every platform.
fn relative_id(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// The table row of a case: `cue/<dir>` for part A, the package path for part B (the part of the
/// id before `/testdata/`), the module for Timoni.
fn group_of(id: &str, kind: CaseKind) -> String {
    match kind {
        CaseKind::Language => id.split('/').take(2).collect::<Vec<_>>().join("/"),
        CaseKind::Stdlib => id.split("/testdata/").next().unwrap_or(id).to_owned(),
        _ => id.to_owned(),
    }
}

/// Archive members that `cue` never saw: the upstream harness's goldens.
fn is_golden_member(name: &str) -> bool {
    name.starts_with("out/") || name.starts_with("diff/")
}

fn load_txtar_case(root: &Path, dir: &Path) -> Result<Case, CorpusError> {
    let id = relative_id(root, dir);
    let kind = if id.starts_with("cue-pkg/") {
        CaseKind::Stdlib
    } else {
        CaseKind::Language
    };
    let archive = txtar::parse(&read(&dir.join("case.txtar"))?);
    let expected = read_expected(&dir.join("expected.json"))?;
    let sources = archive
        .files
        .iter()
        .filter(|m| m.name.ends_with(".cue") && !is_golden_member(&m.name))
        .map(|m| SourceFile {
            path: m.name.clone(),
            bytes: m.data.clone(),
            is_root: !m.name.contains('/'),
        })
        .collect();
    Ok(Case {
        group: group_of(&id, kind),
        id,
        kind,
        dir: dir.to_path_buf(),
        expected: Some(expected),
        archive: Some(archive),
        sources,
    })
}

fn load_timoni_case(root: &Path, dir: &Path) -> Result<Case, CorpusError> {
    let id = relative_id(root, dir);
    let module = dir.join("module");
    let expected = read_expected(&dir.join("expected.json"))?;
    let mut files = Vec::new();
    collect_cue_files(&module, &module, &mut files)?;
    let sources = files
        .into_iter()
        .map(|(path, bytes)| SourceFile {
            is_root: !path.contains('/'),
            path,
            bytes,
        })
        .collect();
    Ok(Case {
        group: group_of(&id, CaseKind::TimoniModule),
        id,
        kind: CaseKind::TimoniModule,
        dir: dir.to_path_buf(),
        expected: Some(expected),
        archive: None,
        sources,
    })
}

/// Collects every `.cue` file under `dir`, with paths relative to `base`, sorted by path.
fn collect_cue_files(
    base: &Path,
    dir: &Path,
    out: &mut Vec<(String, Vec<u8>)>,
) -> Result<(), CorpusError> {
    for entry in sorted_entries(dir)? {
        if entry.is_dir() {
            collect_cue_files(base, &entry, out)?;
        } else if entry.extension().is_some_and(|e| e == "cue") && entry.is_file() {
            out.push((relative_id(base, &entry), read(&entry)?));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A throwaway directory under the system temporary directory, removed on drop, so the tests need no
    /// extra crate.
    struct TempDir(PathBuf);

    impl TempDir {
        fn new(name: &str) -> TempDir {
            // Tests run in parallel in one process, so the process id alone is not unique.
            static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
            let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let dir = std::env::temp_dir().join(format!(
                "conformance-corpus-test-{}-{}-{n}",
                name,
                std::process::id()
            ));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            TempDir(dir)
        }

        fn write(&self, rel: &str, content: &str) {
            let path = self.0.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, content).unwrap();
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    const EXPECTED: &str = r#"{"kind":"cue-lang","files":["in.cue","b.cue"],"inline_test":true,
        "experiments":["x"],
        "export":{"command":"cue export","exit":1,"timeout":false,"stdout":"","stderr":"e\n"},
        "eval":{"command":"cue eval","exit":0,"timeout":false,"stdout":"a: 1\n","stderr":""}}"#;

    fn fake_corpus() -> TempDir {
        let t = TempDir::new("fake");
        t.write("README.md", "corpus\n");
        t.write(
            "cue/eval/one/case.txtar",
            "comment\n-- in.cue --\na: 1\n-- b.cue --\nb: 2\n-- sub/s.cue --\npackage sub\n\
             -- cue.mod/module.cue --\nmodule: \"x.test\"\n-- out/eval --\nx\n-- out/x.cue --\n\
             y\n-- data.json --\n{}\n",
        );
        t.write("cue/eval/one/expected.json", EXPECTED);
        t.write(
            "cue-pkg/encoding/yaml/testdata/gen/case.txtar",
            "-- in.cue --\nx: 1",
        );
        t.write("cue-pkg/encoding/yaml/testdata/gen/expected.json", "{}");
        t.write(
            "timoni/mod/expected.json",
            r#"{"kind":"timoni-module","export":{"exit":0}}"#,
        );
        t.write("timoni/mod/module/timoni.cue", "package main\n");
        t.write("timoni/mod/module/README.md", "not cue\n");
        t.write("timoni/mod/module/templates/a.cue", "package templates\n");
        t.write(
            "timoni/mod/module/cue.mod/gen/k8s.io/api/x.cue",
            "package api\n",
        );
        t.write(
            "timoni/mod/module/cue.mod/pkg/timoni.sh/y.cue",
            "package y\n",
        );
        t.write("timoni/timoni.schema.cue", "package main\n");
        t.write(
            "timoni-crd/golden/cue.mod/gen/a/v1/types_gen.cue",
            "package v1\n",
        );
        t
    }

    #[test]
    fn discovers_all_kinds() {
        let t = fake_corpus();
        let corpus = Corpus::load(&t.0).unwrap();
        let ids: Vec<_> = corpus.cases.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "cue/eval/one",
                "cue-pkg/encoding/yaml/testdata/gen",
                "timoni/mod",
                "timoni/timoni.schema.cue",
                "timoni-crd",
            ]
        );
        let groups: Vec<_> = corpus.cases.iter().map(|c| c.group.as_str()).collect();
        assert_eq!(
            groups,
            [
                "cue/eval",
                "cue-pkg/encoding/yaml",
                "timoni/mod",
                "timoni/timoni.schema.cue",
                "timoni-crd",
            ]
        );
        assert_eq!(corpus.source_count(), 1 + 4 + 1 + 4 + 1);
    }

    #[test]
    fn txtar_sources_and_expected() {
        let t = fake_corpus();
        let corpus = Corpus::load(&t.0).unwrap();
        let case = corpus
            .cases
            .iter()
            .find(|c| c.id == "cue/eval/one")
            .unwrap();
        assert_eq!(case.kind, CaseKind::Language);
        let paths: Vec<_> = case.sources.iter().map(|s| s.path.as_str()).collect();
        assert_eq!(
            paths,
            ["in.cue", "b.cue", "sub/s.cue", "cue.mod/module.cue"]
        );
        let roots: Vec<_> = case.sources.iter().map(|s| s.is_root).collect();
        assert_eq!(roots, [true, true, false, false]);
        assert_eq!(case.sources[0].text(), Some("a: 1\n"));

        let exp = case.expected.as_ref().unwrap();
        assert_eq!(exp.kind, "cue-lang");
        assert_eq!(exp.files, ["in.cue", "b.cue"]);
        assert!(exp.inline_test && !exp.golden_only);
        assert_eq!(exp.experiments, ["x"]);
        let export = exp.run("export").unwrap();
        assert_eq!(export.exit, Some(1));
        assert_eq!(export.ok(), Some(false));
        assert_eq!(export.stderr, "e\n");
        assert_eq!(exp.run("eval").unwrap().ok(), Some(true));
        assert!(exp.run("eval_i").is_none());

        // The last member gets its newline fixed, as txtar does.
        let pkg = corpus
            .cases
            .iter()
            .find(|c| c.kind == CaseKind::Stdlib)
            .unwrap();
        assert_eq!(pkg.sources[0].text(), Some("x: 1\n"));
    }

    #[test]
    fn timoni_sources_include_cue_mod() {
        let t = fake_corpus();
        let corpus = Corpus::load(&t.0).unwrap();
        let case = corpus.cases.iter().find(|c| c.id == "timoni/mod").unwrap();
        let paths: Vec<_> = case.sources.iter().map(|s| s.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "cue.mod/gen/k8s.io/api/x.cue",
                "cue.mod/pkg/timoni.sh/y.cue",
                "templates/a.cue",
                "timoni.cue"
            ]
        );
        let gens: Vec<_> = case.sources.iter().map(|s| s.is_gen()).collect();
        assert_eq!(gens, [true, false, false, false]);
        assert_eq!(
            case.expected.as_ref().unwrap().run("export").unwrap().ok(),
            Some(true)
        );
        let crd = corpus
            .cases
            .iter()
            .find(|c| c.kind == CaseKind::CrdGolden)
            .unwrap();
        assert!(crd.sources[0].is_gen());
    }

    #[test]
    fn malformed_expected_is_an_error() {
        let t = TempDir::new("bad");
        t.write("README.md", "x\n");
        t.write("cue/a/b/case.txtar", "-- in.cue --\n");
        t.write("cue/a/b/expected.json", "{not json");
        let e = Corpus::load(&t.0).unwrap_err();
        assert!(e.path.ends_with("expected.json"), "{e}");
    }

    #[test]
    fn group_names() {
        assert_eq!(group_of("cue/eval/x", CaseKind::Language), "cue/eval");
        assert_eq!(
            group_of("cue-pkg/math/bits/testdata/gen", CaseKind::Stdlib),
            "cue-pkg/math/bits"
        );
    }
}
