//! The package loader: what `cue export ./dir` does before evaluation, as CUE v0.17.1's
//! `cue/load` does it.
//!
//! * **Module root**: the nearest directory at or above the working directory holding
//!   `cue.mod` (a directory with `module.cue`, or a legacy `cue.mod` file or bare directory).
//!   The module path comes from `module: "..."` in `cue.mod/module.cue`, which must declare
//!   `language: version:` as CUE requires of every module file; loading fails without it
//!   ([`LoadErrorKind::NoLanguageVersion`]), before tags are checked.
//! * **Packages**: a directory's `.cue` files of one package, in name order (`_*`, `.*`,
//!   `*_test.cue` and `*_tool.cue` skipped, files of other packages ignored; several packages in
//!   one directory need `./dir:pkg`), then the files of the same package in each parent
//!   directory up to the module root (or up to `cue.mod/{gen,pkg,usr}`).
//! * **Imports**: from sub-directories of the module (by module path), and from
//!   `cue.mod/gen`, `cue.mod/pkg` and `cue.mod/usr`, merged as one package; `:pkg` qualifiers;
//!   symlinks followed; each package loaded once; cycles reported with the cycle; a missing
//!   package names the directories searched.
//! * **Overlay**: files replaced or added in memory by absolute path ([`Config::overlay`]).
//! * **Attributes**: `@if(expr)` and `@ignore()` file attributes select files; `@tag` fields get
//!   the `-t` values ([`tags`]); `@extern(embed)` files get their `@embed` fields ([`embed`]).
//!   Both are syntax-tree transformations before compilation: the field's value `v` becomes
//!   `v & <literal>`, so the evaluator needs nothing special.
//! * **Data files**: `.json`, `.yaml`, `.yml` arguments decode to [`Data`] ([`crate::decode`]).
//!
//! [`Build::instance`] hands the result to the evaluator ([`Instance::from_parsed`]); the
//! facade's [`crate::Loader`] does what the `cue` command does with it.

pub(crate) mod attr;
pub(crate) mod buildattr;
mod cache;
mod closure;
#[cfg(test)]
mod data_tests;
pub(crate) mod embed;
mod fs;
mod prune;
mod share;
pub(crate) mod skim;
pub(crate) mod tags;

use std::collections::BTreeMap;

use rustc_hash::FxHashMap as HashMap;
use std::ffi::OsString;
use std::fmt;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use crate::ast::{self, FileId};
use crate::decode::{self, Data, Limits};
use crate::eval::api::{EvalError, Instance, ParsedSource};

pub use attr::{AttrArg, Attribute};
pub use cache::ParseCache;
use fs::Fs;
pub use share::ImportShare;

/// How to load.
#[derive(Clone, Debug, Default)]
pub struct Config {
    /// The working directory (relative arguments are resolved against it, and the module root
    /// is searched from it). Empty means the process's current directory.
    pub dir: PathBuf,
    /// `-t` arguments: `key=value` for `@tag(key)`, `name` for a shorthand or an `@if` tag.
    pub tags: Vec<String>,
    /// Tag variables (`@tag(x, var=name)`) used when `x` is not set by `-t`.
    pub tag_vars: BTreeMap<String, String>,
    /// Files replaced or added in memory, by path (relative paths are resolved against `dir`).
    pub overlay: BTreeMap<PathBuf, String>,
    /// Bounds for data files and embedded files.
    pub limits: Option<Limits>,
    /// Parse and compile every declaration of imported packages outside the main module, not
    /// only those the build can reach (see `prune.rs`); slower, and reports syntax errors in
    /// unused declarations of vendored packages.
    pub eager_imports: bool,
    /// Skims, parses and disk reads shared with other loads (the instances of one module in a
    /// bundle); each file is then read and parsed once, whichever load asks first, and every
    /// load sees it as it was first read.
    pub parse_cache: Option<std::sync::Arc<ParseCache>>,
}

impl Config {
    /// A configuration for the working directory `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> Config {
        Config {
            dir: dir.into(),
            ..Config::default()
        }
    }

    /// The values CUE's `-T` (`--inject-vars`) gives tag variables: `now`, `os`, `arch`, `cwd`,
    /// `username`, `hostname` and `rand`.
    pub fn inject_default_vars(&mut self) {
        let vars = tags::default_vars(&self.dir);
        for (k, v) in vars {
            self.tag_vars.entry(k).or_insert(v);
        }
    }
}

/// A loading error: a message and the positions it concerns (`file`, line, column).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadError {
    pub msg: String,
    pub positions: Vec<(String, usize, usize)>,
    /// What went wrong, for callers that word some errors their own way.
    pub kind: LoadErrorKind,
}

/// The loading errors a caller may want to tell apart; every other one is [`LoadErrorKind::Other`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum LoadErrorKind {
    #[default]
    Other,
    /// `cue.mod/module.cue` declares no `language: version:`. The message is what `cue` prints
    /// (`no language version declared in module.cue; run 'cue mod fix'`); `module` is the
    /// file's `module:` value as written (`timoni.sh/x`, `x.io/m@v1`), when it has one.
    NoLanguageVersion { module: Option<String> },
}

/// What `cue` prints for a module file without a language version.
pub const NO_LANGUAGE_VERSION: &str = "no language version declared in module.cue";

/// A file's name and text, borrowed, to turn an offset into `file:line:col` for an error
/// without copying the text.
#[derive(Clone, Copy)]
pub(crate) struct FileRef<'a> {
    name: &'a str,
    text: &'a str,
}

impl<'a> FileRef<'a> {
    pub(crate) fn new(name: &'a str, text: &'a str) -> FileRef<'a> {
        FileRef { name, text }
    }
}

impl LoadError {
    pub fn new(msg: impl Into<String>) -> LoadError {
        LoadError {
            msg: msg.into(),
            positions: Vec::new(),
            kind: LoadErrorKind::Other,
        }
    }

    fn at(msg: impl Into<String>, file: &FileRef<'_>, offset: u32) -> LoadError {
        let (l, c) = crate::source::line_col(file.text, offset as usize);
        LoadError {
            msg: msg.into(),
            positions: vec![(file.name.to_string(), l, c)],
            kind: LoadErrorKind::Other,
        }
    }

    /// As an evaluation error, to print with [`crate::eval::api::format_errors`].
    pub fn to_eval_error(&self) -> EvalError {
        EvalError {
            path: String::new(),
            code: crate::eval::value::ErrCode::Eval,
            msg: self.msg.clone(),
            positions: self.positions.clone(),
        }
    }
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.msg)?;
        for (file, l, c) in &self.positions {
            write!(f, "\n    {file}:{l}:{c}")?;
        }
        Ok(())
    }
}

impl std::error::Error for LoadError {}

/// A parsed file of a build. `ast` was parsed with `FileId(index in Build::files)`.
#[derive(Clone, Debug)]
pub struct LoadedFile {
    /// The absolute path (or the name given for a data file), as positions print it.
    pub name: String,
    /// The text, shared with the other loads of a run that read the same file.
    pub text: Arc<String>,
    /// The tree, shared with the run's parse cache (and so with the other loads of a bundle)
    /// until the loader rewrites it (tag values, embedded files).
    pub ast: Arc<ast::File>,
    /// Whether the file belongs to the main module (not `cue.mod/{gen,pkg,usr}`): tags and
    /// `@if` apply to it.
    pub in_main_module: bool,
    /// Whether it was left out by `@if` or `@ignore` (kept so that file ids stay dense).
    pub excluded: bool,
    /// The top-level fields of an imported file that the build may use but `ast` leaves out:
    /// the evaluator parses and compiles each the first time it is used (see
    /// [`prune`](self::prune)).
    pub(crate) deferred: Vec<crate::eval::compile::DeferredField>,
}

/// A data file given on the command line.
#[derive(Clone, Debug)]
pub struct DataFile {
    pub name: String,
    /// One value per document (JSON files have one).
    pub docs: Vec<Data>,
}

/// Everything loaded for one instance.
#[derive(Clone, Debug, Default)]
pub struct Build {
    pub module_root: Option<PathBuf>,
    /// `module:` of `cue.mod/module.cue`, without a major-version suffix.
    pub module_path: Option<String>,
    /// The package name of the main instance (`None` for anonymous files).
    pub package: Option<String>,
    /// The directory of the main instance.
    pub dir: PathBuf,
    pub files: Vec<LoadedFile>,
    /// The main instance's files (indices in `files`).
    pub main: Vec<usize>,
    /// Imported packages by import path as written, each with its files.
    pub imports: BTreeMap<String, Vec<usize>>,
    /// Data files given as arguments, in order.
    pub data: Vec<DataFile>,
    /// Files of imported packages whose trees were not built by [`load_sharing`], because
    /// the import share holds them compiled already: each with the byte ranges of the
    /// declarations to parse should the tree be needed after all ([`Build::build_deferred`]).
    /// Until then such a file's tree holds its package clause, imports and unlabelled
    /// declarations only.
    pub(crate) deferred: Vec<prune::Deferred>,
    /// The parse cache of the load, for the deferred trees.
    pub(crate) parse_cache: Option<std::sync::Arc<ParseCache>>,
}

impl Build {
    /// Adds a CUE source to the main instance (a data file converted to CUE, say).
    pub fn add_main_source(&mut self, name: &str, text: String) -> Result<(), LoadError> {
        let idx = self.push_source(name, text, true)?;
        self.main.push(idx);
        Ok(())
    }

    fn push_source(&mut self, name: &str, text: String, main: bool) -> Result<usize, LoadError> {
        let idx = self.files.len();
        let (ast, errs) = crate::parse(FileId(idx as u32), &text);
        if let Some(e) = errs.first() {
            let sf = FileRef::new(name, &text);
            return Err(LoadError::at(e.message.clone(), &sf, e.span.start));
        }
        self.files.push(LoadedFile {
            name: name.to_string(),
            text: Arc::new(text),
            ast: Arc::new(ast),
            in_main_module: main,
            excluded: false,
            deferred: Vec::new(),
        });
        Ok(idx)
    }

    /// Adds the data files' documents to the main instance as CUE values, as `cue export`
    /// does. A multi-document YAML file is an error here (`vet` checks documents one by one).
    pub fn merge_data_files(&mut self) -> Result<(), LoadError> {
        let data = std::mem::take(&mut self.data);
        for d in &data {
            match d.docs.as_slice() {
                [doc] => self.add_main_source(&d.name, decode::to_cue_source(doc))?,
                [] => {}
                _ => {
                    return Err(LoadError::new(format!(
                        "{}: a stream of {} YAML documents cannot be merged into one value",
                        d.name,
                        d.docs.len()
                    )));
                }
            }
        }
        Ok(())
    }

    /// The attributes of the fields at `path` in the main instance's files (syntactic: fields
    /// written at that path, see [`attr::field_attributes`]).
    pub fn attributes(&self, path: &[&str]) -> Vec<Attribute> {
        let files: Vec<&ast::File> = self.main.iter().map(|&i| &*self.files[i].ast).collect();
        attr::field_attributes(&files, path)
    }

    /// Builds the trees [`load_sharing`] deferred.
    pub(crate) fn build_deferred(&mut self) -> Result<(), LoadError> {
        for (f, kept) in std::mem::take(&mut self.deferred) {
            prune::parse_kept(f, &mut self.files[f], &kept, self.parse_cache.as_deref())?;
        }
        Ok(())
    }

    /// Compiles the build into an evaluator instance.
    pub fn instance(&self) -> Result<Instance, Vec<EvalError>> {
        if !self.deferred.is_empty() {
            let mut b = self.clone();
            b.build_deferred().map_err(|e| vec![e.to_eval_error()])?;
            return b.into_instance();
        }
        let files = self
            .files
            .iter()
            .map(|f| ParsedSource {
                name: f.name.clone(),
                text: f.text.clone(),
                ast: f.ast.clone(),
                deferred: f.deferred.clone(),
            })
            .collect();
        let mut inst = Instance::from_parsed(files, &self.main, &self.imports)?;
        inst.rt.parse_cache = self.parse_cache.clone();
        Ok(inst)
    }

    /// Like [`Build::instance`], consuming the build (no copies of the sources).
    pub fn into_instance(mut self) -> Result<Instance, Vec<EvalError>> {
        self.build_deferred().map_err(|e| vec![e.to_eval_error()])?;
        let cache = self.parse_cache.clone();
        let (files, main, imports) = self.into_parsed();
        let mut inst = Instance::from_parsed(files, &main, &imports)?;
        inst.rt.parse_cache = cache;
        Ok(inst)
    }

    /// The build's files as the evaluator takes them, its main files and its imports.
    fn into_parsed(self) -> (Vec<ParsedSource>, Vec<usize>, BTreeMap<String, Vec<usize>>) {
        let files = self
            .files
            .into_iter()
            .map(|f| ParsedSource {
                name: f.name,
                text: f.text,
                ast: f.ast,
                deferred: f.deferred,
            })
            .collect();
        (files, self.main, self.imports)
    }
}

/// Loads the instance named by `args` (as `cue export ARGS...` does): a package directory
/// (`.`, `./dir`, `./dir:pkg`; the default is `.`), or `.cue` files, plus any data files.
pub fn load(cfg: &Config, args: &[String]) -> Result<Build, LoadError> {
    let mut l = Loader::new(cfg)?;
    l.load_args(args, None)?;
    l.finish(None)
}

/// [`load`], for [`Build::into_instance_sharing`] with the same `share`: the reachability
/// search over imported packages is taken from the load before when its input is the same
/// (see `prune.rs`), and the trees of imported files that `share` holds compiled, from
/// exactly the same text and declarations, are not built ([`Build::deferred`]).
pub fn load_sharing(
    cfg: &Config,
    args: &[String],
    share: &mut ImportShare,
) -> Result<Build, LoadError> {
    let mut l = Loader::new(cfg)?;
    l.load_args(args, Some(&mut *share))?;
    l.finish(Some(share))
}

/// One module: its root and path.
#[derive(Clone, Debug)]
struct Module {
    root: PathBuf,
    path: Option<String>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum PkgState {
    Loading,
    Done,
}

struct Loader<'a> {
    cfg: &'a Config,
    cwd: PathBuf,
    fs: Fs,
    module: Option<Module>,
    build: Build,
    /// By import path: loading state.
    state: HashMap<String, PkgState>,
    /// The chain of packages being loaded, for cycle reports.
    chain: Vec<String>,
    build_tags: Vec<String>,
    limits: Limits,
    /// Files already parsed, by path. The loader's paths are cleaned ([`clean`]) or joined
    /// from cleaned directories and plain names, so one file has one spelling, and the maps
    /// by path hash and compare its bytes rather than its components.
    parsed: HashMap<OsString, usize>,
    /// Files of imported packages parsed lazily (only what is reachable; see `prune.rs`).
    lazy: HashMap<usize, prune::Lazy>,
    /// What [`Loader::dir_files`] found in each directory already read. The parent directories
    /// of a vendored package are read again for every package below them, and a file is parsed
    /// once per load whichever directory asks for it, so the answer does not change.
    dirs: HashMap<OsString, DirFiles>,
}

/// The files of a directory that are kept (`@if`), each with its package name.
type DirFiles = Vec<(usize, Option<String>)>;

/// Whether an import path names a standard-library package (no dot in its first element).
pub fn is_std_path(path: &str) -> bool {
    let p = path.split(':').next().unwrap_or(path);
    let first = p.split('/').next().unwrap_or(p);
    !first.contains('.')
}

/// Writes `text` to `dir/name`, making the directories above it (for the loader's tests).
#[cfg(test)]
fn write_file(dir: &Path, name: &str, text: &str) {
    let p = dir.join(name);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// The module file of the loader's test modules, whose path is `example.com/m`.
#[cfg(test)]
const TEST_MODULE: (&str, &str) = (
    "cue.mod/module.cue",
    "module: \"example.com/m\"\nlanguage: version: \"v0.9.0\"\n",
);

/// A temporary module `example.com/m` ([`TEST_MODULE`]) holding `files` too (for the loader's
/// tests).
#[cfg(test)]
fn test_module(files: &[(&str, &str)]) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    for (name, text) in std::iter::once(&TEST_MODULE).chain(files) {
        write_file(d.path(), name, text);
    }
    d
}

/// Whether two texts are equal: at once when they are the same text (the loads of a run share
/// each file's text through the run's disk memo), by comparing them otherwise.
fn same_text(a: &str, b: &str) -> bool {
    (a.as_ptr() == b.as_ptr() && a.len() == b.len()) || a == b
}

/// Whether `p` is `root` or below it, for cleaned paths: [`Path::starts_with`] on their bytes,
/// which is what it answers on components when neither path has `.`, `//` or a trailing `/`.
fn within(p: &Path, root: &Path) -> bool {
    let (p, r) = (
        p.as_os_str().as_encoded_bytes(),
        root.as_os_str().as_encoded_bytes(),
    );
    p.starts_with(r) && (p.len() == r.len() || r.ends_with(b"/") || p[r.len()] == b'/')
}

/// Lexically cleaned path (`.` dropped, `..` applied), without touching the file system.
fn clean(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

impl<'a> Loader<'a> {
    fn new(cfg: &'a Config) -> Result<Loader<'a>, LoadError> {
        let cwd = if cfg.dir.as_os_str().is_empty() {
            std::env::current_dir()
                .map_err(|e| LoadError::new(format!("working directory: {e}")))?
        } else if cfg.dir.is_absolute() {
            clean(&cfg.dir)
        } else {
            let here = std::env::current_dir()
                .map_err(|e| LoadError::new(format!("working directory: {e}")))?;
            clean(&here.join(&cfg.dir))
        };
        let overlay = cfg
            .overlay
            .iter()
            .map(|(p, t)| (clean(&cwd.join(p)), t.clone()))
            .collect();
        let fs = Fs::new(overlay, cfg.parse_cache.clone());
        let build_tags = cfg
            .tags
            .iter()
            .filter(|t| !t.contains('='))
            .cloned()
            .collect();
        let mut l = Loader {
            cfg,
            cwd: cwd.clone(),
            fs,
            module: None,
            build: Build::default(),
            state: HashMap::default(),
            chain: Vec::new(),
            build_tags,
            limits: cfg.limits.unwrap_or_default(),
            parsed: HashMap::default(),
            lazy: HashMap::default(),
            dirs: HashMap::default(),
        };
        l.module = l.find_module(&cwd)?;
        if let Some(m) = &l.module {
            l.build.module_root = Some(m.root.clone());
            l.build.module_path = m.path.clone();
        }
        Ok(l)
    }

    /// The nearest `cue.mod` at or above `dir`.
    fn find_module(&mut self, dir: &Path) -> Result<Option<Module>, LoadError> {
        let mut d = Some(dir);
        while let Some(dir) = d {
            let cm = dir.join("cue.mod");
            if self.fs.exists(&cm) {
                let file = if self.fs.is_dir(&cm) {
                    cm.join("module.cue")
                } else {
                    cm.clone()
                };
                let path = if self.fs.is_file(&file) {
                    let text = self.fs.read(&file)?;
                    let m = module_file(&file, &text)?;
                    // Only `cue.mod/module.cue` must declare its language version; a legacy
                    // `cue.mod` file is read for its module path alone.
                    if file != cm && !m.has_language_version {
                        return Err(LoadError {
                            kind: LoadErrorKind::NoLanguageVersion { module: m.declared },
                            ..LoadError::new(format!("{NO_LANGUAGE_VERSION}; run 'cue mod fix'"))
                        });
                    }
                    m.path
                } else {
                    None
                };
                return Ok(Some(Module {
                    root: dir.to_path_buf(),
                    path,
                }));
            }
            d = dir.parent();
        }
        Ok(None)
    }

    fn load_args(
        &mut self,
        args: &[String],
        share: Option<&mut ImportShare>,
    ) -> Result<(), LoadError> {
        let mut cue_files = Vec::new();
        let mut dirs = Vec::new();
        for a in args {
            let lower = a.to_ascii_lowercase();
            if lower.ends_with("_test.cue") {
                // As `cue`: test files stay out of a build even when named on the command line.
                continue;
            } else if lower.ends_with(".cue") {
                cue_files.push(a.clone());
            } else if lower.ends_with(".json")
                || lower.ends_with(".yaml")
                || lower.ends_with(".yml")
            {
                self.load_data_file(a)?;
            } else if a == "-" {
                return Err(LoadError::new(
                    "reading from standard input is not supported",
                ));
            } else {
                dirs.push(a.clone());
            }
        }
        if dirs.is_empty() && cue_files.is_empty() && self.build.data.is_empty() {
            dirs.push(".".to_string());
        }
        if !dirs.is_empty() && !cue_files.is_empty() {
            return Err(LoadError::new(
                "cannot mix .cue files and package directories in one instance",
            ));
        }
        if dirs.len() > 1 {
            return Err(LoadError::new(format!(
                "only one package can be loaded at a time, got {}",
                dirs.join(", ")
            )));
        }
        if let Some(d) = dirs.first() {
            let (dir, pkg) = split_qualifier(d);
            let abs = clean(&self.cwd.join(dir));
            if !self.fs.is_dir(&abs) {
                return Err(LoadError::new(format!(
                    "cannot find package {d:?}: directory {} does not exist",
                    abs.display()
                )));
            }
            self.build.dir = abs.clone();
            let files = self.load_main_dir(&abs, pkg.as_deref(), d)?;
            self.build.main = files;
        } else if !cue_files.is_empty() {
            self.build.dir = self.cwd.clone();
            let mut pkg: Option<(String, String)> = None;
            for f in &cue_files {
                let abs = clean(&self.cwd.join(f));
                let idx = self.parse_file(&abs, true)?;
                let file = &self.build.files[idx];
                if file.excluded {
                    continue;
                }
                let name = file.ast.package_name().map(str::to_string);
                if let Some(n) = &name {
                    match &pkg {
                        Some((p, first)) if p != n => {
                            return Err(LoadError::new(format!(
                                "found packages {p:?} ({first}) and {n:?} ({f}) in {:?}",
                                self.cwd.display().to_string()
                            )));
                        }
                        None => pkg = Some((n.clone(), f.clone())),
                        _ => {}
                    }
                }
                self.build.main.push(idx);
            }
            self.build.package = pkg.map(|p| p.0);
        }
        let main = self.build.main.clone();
        self.load_main_imports(&main, share)
    }

    /// Loads the imports of the main files `main`, or takes those the share's last load found
    /// when nothing they depend on differs (see `closure.rs`; only for loads of a run, whose
    /// disk reads are shared).
    fn load_main_imports(
        &mut self,
        main: &[usize],
        share: Option<&mut ImportShare>,
    ) -> Result<(), LoadError> {
        let Some(share) = share else {
            return self.load_imports_of(main);
        };
        let key = (self.cfg.parse_cache.as_ref()).map(|run| closure::Key::of(self, main, run));
        if let Some(key) = &key
            && let Some(c) = share.closure.as_ref().filter(|c| c.fits(key))
        {
            c.replay(self);
            return Ok(());
        }
        let to_record = key.map(|key| (key, closure::Before::of(self)));
        share.closure = None;
        self.load_imports_of(main)?;
        share.resolved += 1;
        if let Some((key, before)) = to_record {
            share.closure = Some(closure::Closure::record(self, key, before));
        }
        Ok(())
    }

    fn load_data_file(&mut self, arg: &str) -> Result<(), LoadError> {
        let abs = clean(&self.cwd.join(arg));
        // A file over the size limit is refused before it is read.
        if let Some(len) = self
            .fs
            .size(&abs)
            .filter(|&n| n > self.limits.max_bytes as u64)
        {
            return Err(LoadError::new(format!(
                "{arg}: data file of {len} bytes exceeds the limit of {} bytes",
                self.limits.max_bytes
            )));
        }
        let bytes = self.fs.read_bytes(&abs)?;
        let text = decode::utf8(&bytes).map_err(|e| LoadError::new(e.in_file(arg)))?;
        let lower = arg.to_ascii_lowercase();
        let docs = if lower.ends_with(".json") {
            vec![
                decode::json_with_limits(text, &self.limits)
                    .map_err(|e| LoadError::new(e.in_file(arg)))?,
            ]
        } else {
            decode::yaml_with_limits(text, &self.limits)
                .map_err(|e| LoadError::new(e.in_file(arg)))?
        };
        self.build.data.push(DataFile {
            name: abs.display().to_string(),
            docs,
        });
        Ok(())
    }

    /// Reads and parses one file, applying `@if`/`@ignore`; returns its index.
    fn parse_file(&mut self, path: &Path, in_main_module: bool) -> Result<usize, LoadError> {
        if let Some(&i) = self.parsed.get(path.as_os_str()) {
            return Ok(i);
        }
        let content = self.fs.read_content(path)?;
        // What `path.display()` writes, without the formatting machinery.
        let name = path.to_string_lossy().into_owned();
        let text = match content {
            fs::Content::Text(t) => t,
            fs::Content::Bytes(b) => {
                let e = decode::utf8(&b)
                    .err()
                    .unwrap_or_else(|| decode::DecodeError::new("invalid UTF-8"));
                return Err(LoadError::new(e.in_file(&name)));
            }
        };
        let idx = self.build.files.len();
        // Outside the main module, only what the build reaches is parsed in the end; for now
        // the package clause, imports and unlabelled declarations (see `prune.rs`). A file
        // with `@embed` attributes is parsed whole, for `embed.rs`.
        let mut skim = (!in_main_module && !self.cfg.eager_imports)
            .then(|| cache::skim(self.cfg.parse_cache.as_deref(), &name, &text))
            .flatten()
            .filter(|sk| !sk.embeds);
        let mut parsed = skim.as_ref().map(|sk| {
            let head = prune::ranges(sk, &|i| sk.chunks[i].label.is_none());
            cache::parse_ranges(
                self.cfg.parse_cache.as_deref(),
                FileId(idx as u32),
                &name,
                &text,
                &head,
            )
        });
        if parsed.as_ref().is_some_and(|(_, errs)| !errs.is_empty()) {
            // Report errors as a whole parse finds them.
            skim = None;
            parsed = None;
        }
        // Comments are only read from the main module (documentation of its values).
        let (ast, errs) = parsed.unwrap_or_else(|| {
            cache::parse_with(
                self.cfg.parse_cache.as_deref(),
                FileId(idx as u32),
                &name,
                &text,
                in_main_module,
            )
        });
        let sf = FileRef::new(&name, &text);
        if let Some(e) = errs.first() {
            return Err(LoadError::at(e.message.clone(), &sf, e.span.start));
        }
        if let Some(sk) = skim {
            self.lazy.insert(idx, prune::Lazy::new(sk));
        }
        let excluded = self.excluded_by_build_attrs(&ast, &sf, in_main_module)?;
        self.build.files.push(LoadedFile {
            name,
            text,
            ast,
            in_main_module,
            excluded,
            deferred: Vec::new(),
        });
        self.parsed.insert(path.as_os_str().to_owned(), idx);
        Ok(idx)
    }

    /// `@if(expr)` and `@ignore()` before the package clause.
    fn excluded_by_build_attrs(
        &self,
        f: &ast::File,
        sf: &FileRef<'_>,
        in_main_module: bool,
    ) -> Result<bool, LoadError> {
        let mut seen_if = false;
        let mut excluded = false;
        for d in &f.decls {
            match d {
                ast::Decl::Attribute(a) => match a.name() {
                    "if" => {
                        if seen_if {
                            return Err(LoadError::at("multiple @if attributes", sf, a.span.start));
                        }
                        seen_if = true;
                        let tags = &self.build_tags;
                        let is_set = |n: &str| in_main_module && tags.iter().any(|t| t == n);
                        let keep = buildattr::eval_if(a.body(), &is_set)
                            .map_err(|m| LoadError::at(m, sf, a.span.start))?;
                        if !keep {
                            excluded = true;
                        }
                    }
                    "ignore" => excluded = true,
                    _ => {}
                },
                ast::Decl::Package(_) => break,
                _ => break,
            }
        }
        Ok(excluded)
    }

    /// The `.cue` files of directory `dir` that may belong to a package, sorted by name.
    fn candidate_files(&mut self, dir: &Path) -> Result<Vec<PathBuf>, LoadError> {
        let mut out = Vec::new();
        for (name, is_file) in self.fs.list(dir)? {
            if !name.ends_with(".cue")
                || name.starts_with(['.', '_'])
                || name.ends_with("_test.cue")
                || name.ends_with("_tool.cue")
            {
                continue;
            }
            if is_file {
                out.push(dir.join(name));
            }
        }
        Ok(out)
    }

    /// Parses the candidate files of `dir`, returning (index, package name) of those kept.
    fn dir_files(&mut self, dir: &Path, in_main_module: bool) -> Result<DirFiles, LoadError> {
        if let Some(found) = self.dirs.get(dir.as_os_str()) {
            return Ok(found.clone());
        }
        let mut out = Vec::new();
        for p in self.candidate_files(dir)? {
            let idx = self.parse_file(&p, in_main_module)?;
            let f = &self.build.files[idx];
            if !f.excluded {
                out.push((idx, f.ast.package_name().map(str::to_string)));
            }
        }
        self.dirs.insert(dir.as_os_str().to_owned(), out.clone());
        Ok(out)
    }

    /// The main package of directory `dir`, with the same package's files of its parent
    /// directories up to the module root.
    fn load_main_dir(
        &mut self,
        dir: &Path,
        pkg: Option<&str>,
        arg: &str,
    ) -> Result<Vec<usize>, LoadError> {
        if let Some(m) = &self.module {
            let cm = m.root.join("cue.mod");
            if dir.starts_with(&cm)
                && !["gen", "pkg", "usr"]
                    .iter()
                    .any(|s| dir.starts_with(cm.join(s)))
            {
                return Err(LoadError::new(format!(
                    "cannot load package {arg:?}: it is inside the cue.mod directory"
                )));
            }
        }
        let files = self.dir_files(dir, true)?;
        let name = match pkg {
            Some(p) => p.to_string(),
            None => {
                let mut names: Vec<(&str, usize)> = Vec::new();
                for (idx, n) in &files {
                    if let Some(n) = n
                        && !names.iter().any(|(x, _)| x == n)
                    {
                        names.push((n, *idx));
                    }
                }
                match names.as_slice() {
                    [] => {
                        if files.is_empty() {
                            return Err(LoadError::new(format!(
                                "no CUE files in {}",
                                if arg == "." { "." } else { arg }
                            )));
                        }
                        String::new()
                    }
                    [(n, _)] => n.to_string(),
                    [(a, ia), (b, ib), ..] => {
                        return Err(LoadError::new(format!(
                            "found packages {a:?} ({}) and {b:?} ({}) in {:?}",
                            file_base(&self.build.files[*ia].name),
                            file_base(&self.build.files[*ib].name),
                            dir.display().to_string()
                        )));
                    }
                }
            }
        };
        let mut out: Vec<usize> = if name.is_empty() {
            files.iter().map(|(i, _)| *i).collect()
        } else {
            files
                .iter()
                .filter(|(_, n)| n.as_deref() == Some(name.as_str()))
                .map(|(i, _)| *i)
                .collect()
        };
        if out.is_empty() {
            return Err(LoadError::new(format!(
                "no files of package {name:?} in {}",
                dir.display()
            )));
        }
        if !name.is_empty() {
            self.build.package = Some(name.clone());
            if let Some(root) = self.module.as_ref().map(|m| m.root.clone()) {
                out.extend(self.parent_files(dir, &root, &name, true)?);
            }
        }
        Ok(out)
    }

    /// Files of package `name` in the parents of `dir` up to and including `root`.
    fn parent_files(
        &mut self,
        dir: &Path,
        root: &Path,
        name: &str,
        in_main_module: bool,
    ) -> Result<Vec<usize>, LoadError> {
        let mut out = Vec::new();
        if !within(dir, root) || dir == root {
            return Ok(out);
        }
        let mut d = dir.parent();
        while let Some(p) = d {
            if !within(p, root) {
                break;
            }
            for (idx, n) in self.dir_files(p, in_main_module)? {
                if n.as_deref() == Some(name) {
                    out.push(idx);
                }
            }
            if p == root {
                break;
            }
            d = p.parent();
        }
        Ok(out)
    }

    /// Loads the imports of the given files, depth first.
    fn load_imports_of(&mut self, files: &[usize]) -> Result<(), LoadError> {
        let mut specs: Vec<(String, usize, u32)> = Vec::new();
        for &i in files {
            let f = &self.build.files[i];
            for spec in f.ast.imports() {
                let path = match crate::literal::decode(&spec.path.raw) {
                    Ok(b) => String::from_utf8_lossy(&b).into_owned(),
                    Err(_) => continue,
                };
                specs.push((path, i, spec.path.span.start));
            }
        }
        for (path, file, offset) in specs {
            if is_std_path(&path) {
                continue;
            }
            self.load_import(&path, file, offset)?;
        }
        Ok(())
    }

    fn load_import(&mut self, path: &str, from: usize, offset: u32) -> Result<(), LoadError> {
        match self.state.get(path) {
            Some(PkgState::Done) => return Ok(()),
            Some(PkgState::Loading) => {
                let start = self.chain.iter().position(|p| p == path).unwrap_or(0);
                let mut cycle: Vec<String> = self.chain[start..]
                    .iter()
                    .map(|p| format!("{p:?}"))
                    .collect();
                cycle.push(format!("{path:?}"));
                let f = &self.build.files[from];
                let sf = FileRef::new(&f.name, &f.text);
                return Err(LoadError::at(
                    format!("import cycle not allowed: {}", cycle.join(" imports ")),
                    &sf,
                    offset,
                ));
            }
            None => {}
        }
        self.state.insert(path.to_string(), PkgState::Loading);
        self.chain.push(path.to_string());
        let files = self.resolve_import(path, from, offset)?;
        self.build.imports.insert(path.to_string(), files.clone());
        self.load_imports_of(&files)?;
        self.chain.pop();
        self.state.insert(path.to_string(), PkgState::Done);
        Ok(())
    }

    /// Finds the files of an imported package.
    fn resolve_import(
        &mut self,
        path: &str,
        from: usize,
        offset: u32,
    ) -> Result<Vec<usize>, LoadError> {
        // The importing file, for error positions (built only when an error is reported).
        fn here<'t>(this: &'t Loader<'_>, from: usize) -> FileRef<'t> {
            let f = &this.build.files[from];
            FileRef::new(&f.name, &f.text)
        }
        let (p, qual) = match path.rsplit_once(':') {
            Some((p, q)) if !q.contains('/') => (p, Some(q.to_string())),
            _ => (path, None),
        };
        let p = p.split('@').next().unwrap_or(p);
        let name = qual.unwrap_or_else(|| {
            let last = p.rsplit('/').next().unwrap_or(p);
            last.to_string()
        });
        let Some(module) = self.module.clone() else {
            return Err(LoadError::at(
                format!(
                    "cannot find package {path:?}: imports are unavailable because there is no cue.mod/module.cue file"
                ),
                &here(self, from),
                offset,
            ));
        };
        let mut searched = Vec::new();
        let mut found: Vec<usize> = Vec::new();
        let mut in_module = false;
        // The main module, by module path.
        if let Some(mp) = &module.path {
            let rest = if p == mp {
                Some("")
            } else {
                p.strip_prefix(mp.as_str())
                    .and_then(|r| r.strip_prefix('/'))
            };
            if let Some(rest) = rest {
                let dir = clean(&module.root.join(rest));
                if self.fs.is_dir(&dir) {
                    let files = self.package_in(&dir, &module.root, &name, true)?;
                    if !files.is_empty() {
                        in_module = true;
                        found.extend(files);
                    }
                }
                searched.push(dir);
            }
        }
        // cue.mod/{gen,pkg,usr}, merged.
        let mut in_cue_mod = false;
        for sub in ["gen", "pkg", "usr"] {
            let base = module.root.join("cue.mod").join(sub);
            let dir = clean(&base.join(p));
            if self.fs.is_dir(&dir) {
                let files = self.package_in(&dir, &base, &name, false)?;
                if !files.is_empty() {
                    in_cue_mod = true;
                    found.extend(files);
                }
            }
            searched.push(dir);
        }
        if in_module && in_cue_mod {
            return Err(LoadError::at(
                format!(
                    "ambiguous import: package {path:?} is both in the main module and in cue.mod"
                ),
                &here(self, from),
                offset,
            ));
        }
        if found.is_empty() {
            return Err(LoadError::at(
                format!(
                    "cannot find package {path:?}: no files of package {name:?} in any of:\n\t{}",
                    searched
                        .iter()
                        .map(|d| d.display().to_string())
                        .collect::<Vec<_>>()
                        .join("\n\t")
                ),
                &here(self, from),
                offset,
            ));
        }
        Ok(found)
    }

    /// The files of package `name` in `dir` and its parents up to `root`.
    fn package_in(
        &mut self,
        dir: &Path,
        root: &Path,
        name: &str,
        in_main_module: bool,
    ) -> Result<Vec<usize>, LoadError> {
        let mut out: Vec<usize> = self
            .dir_files(dir, in_main_module)?
            .into_iter()
            .filter(|(_, n)| n.as_deref() == Some(name))
            .map(|(i, _)| i)
            .collect();
        if out.is_empty() {
            return Ok(out);
        }
        out.extend(self.parent_files(dir, root, name, in_main_module)?);
        Ok(out)
    }

    fn finish(mut self, share: Option<&mut ImportShare>) -> Result<Build, LoadError> {
        // Tags apply to the main module's files that are part of the build.
        let mut used: Vec<usize> = self.build.main.clone();
        for files in self.build.imports.values() {
            used.extend(files.iter().copied());
        }
        used.sort_unstable();
        used.dedup();
        let cache = self.cfg.parse_cache.as_deref();
        self.build.deferred = match share {
            Some(share) => {
                let (memo, base) = share.prune_parts();
                let defer = |f: usize, file: &LoadedFile, kept: &[(usize, usize)]| {
                    base.is_some_and(|b| b.holds(f, file, kept))
                };
                let pruned =
                    prune::apply(&mut self.build, &mut self.lazy, &used, cache, memo, &defer)?;
                share.count_load(pruned.searched, pruned.built);
                pruned.deferred
            }
            None => {
                let never = |_: usize, _: &LoadedFile, _: &[(usize, usize)]| false;
                prune::apply(&mut self.build, &mut self.lazy, &used, cache, None, &never)?.deferred
            }
        };
        self.build.parse_cache = self.cfg.parse_cache.clone();
        let module_files: Vec<usize> = used
            .iter()
            .copied()
            .filter(|&i| self.build.files[i].in_main_module)
            .collect();
        tags::inject(
            &mut self.build.files,
            &module_files,
            &self.cfg.tags,
            &self.cfg.tag_vars,
        )?;
        for &i in &used {
            embed::apply(&mut self.build.files[i], &mut self.fs, &self.limits)?;
        }
        Ok(self.build)
    }
}

/// `./dir:pkg` → (`./dir`, `pkg`).
fn split_qualifier(arg: &str) -> (&str, Option<String>) {
    if let Some((d, q)) = arg.rsplit_once(':')
        && !q.is_empty()
        && !q.contains(['/', '\\'])
        && q.chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '#')
    {
        let d = if d.is_empty() { "." } else { d };
        return (d, Some(q.to_string()));
    }
    (arg, None)
}

fn file_base(name: &str) -> &str {
    name.rsplit('/').next().unwrap_or(name)
}

/// What the loader reads from a module file.
#[derive(Debug, Default, PartialEq, Eq)]
struct ModuleFile {
    /// `module:` as written (`x.io/m@v1`).
    declared: Option<String>,
    /// `module:` without its `@vN` suffix.
    path: Option<String>,
    /// Whether `language: version:` is a non-empty string.
    has_language_version: bool,
}

/// Reads `cue.mod/module.cue` (or a legacy `cue.mod` file): its module path and whether it
/// declares a language version.
fn module_file(file: &Path, text: &str) -> Result<ModuleFile, LoadError> {
    let name = file.display().to_string();
    let (ast, errs) = crate::parse(FileId(0), text);
    if let Some(e) = errs.first() {
        let sf = FileRef::new(&name, text);
        return Err(LoadError::at(e.message.clone(), &sf, e.span.start));
    }
    let declared = fields_named(&ast.decls, "module")
        .into_iter()
        .find_map(string_value);
    let path = declared
        .as_deref()
        .map(|v| v.split('@').next().unwrap_or(v).to_string());
    // The module file is data: `language: version: "v0.9.0"`, `language: {version: ...}` and a
    // `language` field written twice all unify to the same struct, which CUE decodes; an empty
    // version counts as none, as in CUE.
    let has_language_version = fields_named(&ast.decls, "language")
        .into_iter()
        .any(|v| match v {
            ast::Expr::Struct(s) => fields_named(&s.decls, "version")
                .into_iter()
                .filter_map(string_value)
                .any(|v| !v.is_empty()),
            _ => false,
        });
    Ok(ModuleFile {
        declared,
        path,
        has_language_version,
    })
}

/// The values of the fields labelled `name` (an identifier or a quoted label) among `decls`,
/// including those of embedded struct literals.
fn fields_named<'a>(decls: &'a [ast::Decl], name: &str) -> Vec<&'a ast::Expr> {
    let mut out = Vec::new();
    for d in decls {
        match d {
            ast::Decl::Field(f) if label_is(&f.label, name) => out.push(&f.value),
            ast::Decl::Embed(e) => {
                if let ast::Expr::Struct(s) = &**e {
                    out.extend(fields_named(&s.decls, name));
                }
            }
            _ => {}
        }
    }
    out
}

fn label_is(label: &ast::Label, name: &str) -> bool {
    match label {
        ast::Label::Ident(i) => &*i.name == name,
        ast::Label::String(e) => string_value(e).as_deref() == Some(name),
        _ => false,
    }
}

/// The text of a string literal.
fn string_value(e: &ast::Expr) -> Option<String> {
    match e {
        ast::Expr::Lit(lit) if lit.kind == ast::LitKind::String => crate::literal::decode(&lit.raw)
            .ok()
            .and_then(|b| String::from_utf8(b).ok()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> ModuleFile {
        module_file(Path::new("cue.mod/module.cue"), text).expect("module file parses")
    }

    /// Every spelling of `language.version` that CUE decodes from a module file counts.
    #[test]
    fn language_version_in_any_form() {
        for text in [
            "module: \"x.io/m\"\nlanguage: version: \"v0.9.0\"\n",
            "module: \"x.io/m\"\nlanguage: {version: \"v0.9.0\"}\n",
            "module: \"x.io/m\"\n\"language\": \"version\": \"v0.9.0\"\n",
            "module: \"x.io/m\"\nlanguage: {}\nlanguage: version: \"v0.9.0\"\n",
            "{module: \"x.io/m\", language: version: \"v0.9.0\"}\n",
        ] {
            assert!(read(text).has_language_version, "{text}");
        }
        for text in [
            "",
            "module: \"x.io/m\"\n",
            "module: \"x.io/m\"\nlanguage: version: \"\"\n",
            "module: \"x.io/m\"\nlanguage: {}\n",
            "module: \"x.io/m\"\nversion: \"v0.9.0\"\n",
        ] {
            assert!(!read(text).has_language_version, "{text:?}");
        }
    }

    #[test]
    fn module_path_drops_the_major_version() {
        let m = read("module: \"timoni.sh/x@v0\"\nlanguage: version: \"v0.9.0\"\n");
        assert_eq!(m.declared.as_deref(), Some("timoni.sh/x@v0"));
        assert_eq!(m.path.as_deref(), Some("timoni.sh/x"));
    }

    /// A module without a language version is refused when the module file is read, before
    /// anything else (an unknown tag included), with `cue`'s message; a legacy `cue.mod` file
    /// or a `cue.mod` directory without `module.cue` loads as before.
    #[test]
    fn module_without_language_version_is_refused() {
        let tmp = std::env::temp_dir().join(format!("cue-load-nolang-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&tmp);
        std::fs::create_dir_all(tmp.join("cue.mod")).unwrap();
        std::fs::write(tmp.join("a.cue"), "package p\n\nx: 1\n").unwrap();
        let load_with = |module: Option<&str>| {
            let _ = std::fs::remove_file(tmp.join("cue.mod/module.cue"));
            if let Some(text) = module {
                std::fs::write(tmp.join("cue.mod/module.cue"), text).unwrap();
            }
            let mut cfg = Config::new(&tmp);
            cfg.tags = vec!["mv=1.0.0".to_string()];
            load(&cfg, &[])
        };
        let err = load_with(Some("module: \"x.io/m\"\n")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "no language version declared in module.cue; run 'cue mod fix'"
        );
        assert_eq!(
            err.kind,
            LoadErrorKind::NoLanguageVersion {
                module: Some("x.io/m".to_string())
            }
        );
        // With the version, the unknown tag is the error.
        let err =
            load_with(Some("module: \"x.io/m\"\nlanguage: version: \"v0.17.1\"\n")).unwrap_err();
        assert_eq!(err.kind, LoadErrorKind::Other);
        assert!(err.msg.contains("no tag for \"mv\""), "{err}");
        // A bare cue.mod directory, then a legacy cue.mod file, have no version to declare.
        let err = load_with(None).unwrap_err();
        assert_eq!(err.kind, LoadErrorKind::Other);
        std::fs::remove_dir_all(tmp.join("cue.mod")).unwrap();
        std::fs::write(tmp.join("cue.mod"), "module: \"x.io/m\"\n").unwrap();
        let err = load(&Config::new(&tmp), &["./".to_string()]);
        let _ = std::fs::remove_dir_all(&tmp);
        assert_eq!(err.map(|b| b.module_path), Ok(Some("x.io/m".to_string())));
    }
}
