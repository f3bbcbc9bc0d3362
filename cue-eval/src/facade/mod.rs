//! The embedding API: a [`Context`] to compile sources and encode Rust values, a [`Loader`]
//! to load packages from disk as `cue export` does, [`Value`] to look into, combine, validate and
//! convert what they give, and one [`Error`] type.
//!
//! Everything here stands on the evaluator's own entry points ([`crate::eval::api::Instance`],
//! [`crate::load`], the codecs in [`crate::decode`] and [`crate::encode`]); the figures of the
//! `cue` command (export text, error text and order) are the same through either.

mod error;
mod inspect;
mod serde;
#[cfg(test)]
mod tests;
mod value;

use std::cell::RefCell;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;

use crate::eval::api::Instance;
use crate::load;
use crate::syntax::Document;

pub use crate::load::{ImportShare, ParseCache};
pub use error::{Error, ErrorCode, ErrorItem, ErrorKind, Position, Result};
pub use inspect::{Disjunct, Selector};
pub use value::{Field, FieldKind, FieldOptions, Kind, Presence, ValidateOptions, Value};

use value::Shared;

/// Where values made from strings and Rust data live: values of one context unify with each
/// other as CUE values do.
///
/// ```
/// let ctx = cue_eval::Context::new();
/// let v = ctx.compile_str("a: 1\nb: a + 1").unwrap();
/// assert_eq!(v.to_json().unwrap(), "{\n    \"a\": 1,\n    \"b\": 2\n}\n");
/// ```
#[derive(Clone)]
pub struct Context {
    sh: Rc<RefCell<Shared>>,
}

impl Default for Context {
    fn default() -> Self {
        Context::new()
    }
}

impl Context {
    /// An empty context.
    pub fn new() -> Context {
        let inst = match Instance::from_sources(&[]) {
            Ok(i) => i,
            Err(_) => unreachable!("an instance of no files has no parse error"),
        };
        Context {
            sh: Shared::new(inst, Vec::new()),
        }
    }

    /// Compiles CUE source text (a file's contents) as one package, named `source.cue` in
    /// positions. Imports of the standard library work; other imports need a [`Loader`].
    pub fn compile_str(&self, src: &str) -> Result<Value> {
        self.compile_file("source.cue", src)
    }

    /// [`Context::compile_str`] with the file name positions show.
    ///
    /// ```
    /// let ctx = cue_eval::Context::new();
    /// let err = ctx.compile_file("bad.cue", "a: {").unwrap_err();
    /// assert_eq!(err.errors()[0].positions()[0].file(), "bad.cue");
    /// ```
    pub fn compile_file(&self, name: &str, src: &str) -> Result<Value> {
        let mut sh = self.sh.borrow_mut();
        let root = match sh.inst.add_package(&[(name.to_string(), src.to_string())]) {
            Ok(r) => r,
            Err(e) => return Err(sh.error(e)),
        };
        let errs = sh.inst.compile_errors();
        if !errs.is_empty() {
            return Err(sh.error(errs));
        }
        let id = sh.inst.files.len() - 1;
        sh.unparsed_main.push(id);
        drop(sh);
        Ok(Value::new(self.sh.clone(), root, Some(Vec::new())))
    }

    /// Compiles the files (name, text) of one package, as an instance of its own (see
    /// [`Context::compile_package`]); imports of the standard library work.
    ///
    /// ```
    /// let ctx = cue_eval::Context::new();
    /// let files = [("a.cue".to_string(), "a: b".to_string()), ("b.cue".to_string(), "b: 1".to_string())];
    /// assert_eq!(ctx.compile_files(&files).unwrap().lookup("a").unwrap().decode::<i64>().unwrap(), 1);
    /// ```
    pub fn compile_files(&self, files: &[(String, String)]) -> Result<Value> {
        self.compile_package(files, |p| {
            Err(format!(
                "package {p:?} not found (imports need a module loader)"
            ))
        })
    }

    /// Compiles the files (name, text) of one package, whose imports outside the standard
    /// library `imports` gives (the files of the package at an import path, or why there is
    /// none). The package is an instance of its own: its values unify with this context's as
    /// data ([`Value::unify`]).
    ///
    /// ```
    /// let ctx = cue_eval::Context::new();
    /// let files = [("main.cue".to_string(), "import \"x.io/s\"\na: s.#N & 1".to_string())];
    /// let v = ctx
    ///     .compile_package(&files, |path| match path {
    ///         "x.io/s" => Ok(vec![("s.cue".into(), "package s\n#N: int".into())]),
    ///         _ => Err(format!("package {path:?} not found")),
    ///     })
    ///     .unwrap();
    /// assert_eq!(v.lookup("a").unwrap().decode::<i64>().unwrap(), 1);
    /// ```
    pub fn compile_package<F>(&self, files: &[(String, String)], imports: F) -> Result<Value>
    where
        F: FnMut(&str) -> std::result::Result<Vec<(String, String)>, String>,
    {
        self.compile_package_with(files, imports, true)
    }

    /// [`Context::compile_package`], leaving the errors of its imports (a package `imports`
    /// does not give, an imported package that does not compile) to the exports and
    /// [`Value::validate`], which report them, as `cue export` does; the rest of the package
    /// can still be looked into. Errors of parsing and compiling the package itself still fail.
    ///
    /// ```
    /// let ctx = cue_eval::Context::new();
    /// let files = [("a.cue".to_string(), "import \"x.io/m\"\na: 1\nb: m.c".to_string())];
    /// let missing = |p: &str| Err(format!("package {p:?} not found"));
    /// assert!(ctx.compile_package(&files, missing).is_err());
    /// let v = ctx.compile_package_partial(&files, missing).unwrap();
    /// assert_eq!(v.lookup("a").unwrap().to_string(), "1");
    /// assert!(v.to_json().unwrap_err().to_string().contains("package \"x.io/m\" not found"));
    /// ```
    pub fn compile_package_partial<F>(
        &self,
        files: &[(String, String)],
        imports: F,
    ) -> Result<Value>
    where
        F: FnMut(&str) -> std::result::Result<Vec<(String, String)>, String>,
    {
        self.compile_package_with(files, imports, false)
    }

    fn compile_package_with<F>(
        &self,
        files: &[(String, String)],
        mut imports: F,
        strict: bool,
    ) -> Result<Value>
    where
        F: FnMut(&str) -> std::result::Result<Vec<(String, String)>, String>,
    {
        let inst = Instance::from_sources_with_imports(files, &mut imports)
            .map_err(|e| Error::from_eval(e, &Default::default()))?;
        let sh = Shared::loaded(inst, (0..files.len()).collect());
        if strict {
            let errs = sh.borrow_mut().inst.compile_errors();
            if !errs.is_empty() {
                return Err(sh.borrow_mut().error(errs));
            }
        }
        let root = sh.borrow().inst.root;
        Ok(Value::new(sh, root, Some(Vec::new())))
    }

    /// A `serde::Serialize` value as a CUE value of this context (structs keep the order their
    /// fields serialize in).
    ///
    /// ```
    /// let ctx = cue_eval::Context::new();
    /// let v = ctx.encode(&std::collections::BTreeMap::from([("a", 1.5)])).unwrap();
    /// assert_eq!(v.to_yaml().unwrap(), "a: 1.5\n");
    /// ```
    pub fn encode<T: ::serde::Serialize + ?Sized>(&self, value: &T) -> Result<Value> {
        let data = serde::to_data(value)?;
        let v = self
            .sh
            .borrow_mut()
            .compile_expr("value.cue", &crate::decode::to_cue_expr(&data))?;
        Ok(Value::new(self.sh.clone(), v, None))
    }

    /// A JSON or YAML document as a CUE value of this context (one document; `name` is used in
    /// errors). YAML is read as CUE reads it (`yes` is a string, `1.0` a float).
    ///
    /// ```
    /// let ctx = cue_eval::Context::new();
    /// let v = ctx.compile_data("in.yaml", "a: 1\nb: [x, y]\n").unwrap();
    /// assert_eq!(v.lookup("b.1").unwrap().decode::<String>().unwrap(), "y");
    /// ```
    pub fn compile_data(&self, name: &str, text: &str) -> Result<Value> {
        let docs = if name.ends_with(".json") {
            crate::decode::json(text).map(|d| vec![d])
        } else {
            crate::decode::yaml(text)
        }
        .map_err(|e| Error::msg(e.in_file(name)))?;
        let data = match docs.as_slice() {
            [d] => d,
            [] => &crate::encode::Data::Null,
            _ => {
                return Err(Error::msg(format!(
                    "{name}: a stream of {} documents is not one value",
                    docs.len()
                )));
            }
        };
        let v = self
            .sh
            .borrow_mut()
            .compile_expr(name, &crate::decode::to_cue_expr(data))?;
        Ok(Value::new(self.sh.clone(), v, None))
    }

    /// A loader of the package in directory `dir` (see [`Loader`]).
    pub fn loader(&self, dir: impl Into<PathBuf>) -> Loader {
        Loader {
            cfg: load::Config::new(dir),
            args: Vec::new(),
        }
    }
}

/// Loads a package from disk as `cue export` does: the module root above the directory, the
/// package's files, its imports from the module and `cue.mod/{gen,pkg,usr}`, an overlay of
/// files held in memory, `-t` tags and `@if` flags. Each loaded package is its own instance.
///
/// ```
/// let dir = std::env::temp_dir().join(format!("cue-eval-doc-loader-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let ctx = cue_eval::Context::new();
/// let v = ctx
///     .loader(&dir)
///     .overlay(dir.join("a.cue"), "package app\nenv: *\"dev\" | string @tag(env)\n")
///     .overlay(dir.join("b.cue"), "@if(debug)\npackage app\nlevel: \"debug\"\n")
///     .tag("env=prod")
///     .tag("debug")
///     .load()
///     .unwrap();
/// assert_eq!(v.to_json().unwrap(), "{\n    \"env\": \"prod\",\n    \"level\": \"debug\"\n}\n");
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
#[derive(Clone, Debug)]
pub struct Loader {
    cfg: load::Config,
    args: Vec<String>,
}

impl Loader {
    /// Loads the package named `name` of the directory (`./:name`), when it holds several.
    pub fn package(mut self, name: &str) -> Loader {
        self.args.push(format!(".:{name}"));
        self
    }

    /// Loads these files (relative to the directory, `.cue` files of one package, and `.json`
    /// and `.yaml` data files merged into it) instead of the directory's package.
    pub fn files<I, S>(mut self, files: I) -> Loader
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.args.extend(files.into_iter().map(Into::into));
        self
    }

    /// Adds arguments as `cue export` takes them: a package directory (`.`, `./dir`,
    /// `./dir:pkg`), `.cue` files of one package, and `.json` and `.yaml` data files.
    pub fn args<I, S>(mut self, args: I) -> Loader
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Replaces or adds a file in memory (a relative path is taken from the directory).
    pub fn overlay(mut self, path: impl Into<PathBuf>, text: impl Into<String>) -> Loader {
        self.cfg.overlay.insert(path.into(), text.into());
        self
    }

    /// A `-t` tag: `key=value` for a `@tag(key)` field, or a name for a shorthand tag or an
    /// `@if(name)` file.
    pub fn tag(mut self, tag: impl Into<String>) -> Loader {
        self.cfg.tags.push(tag.into());
        self
    }

    /// The value of a tag variable (`@tag(x, var=name)`).
    pub fn tag_var(mut self, name: impl Into<String>, value: impl Into<String>) -> Loader {
        self.cfg.tag_vars.insert(name.into(), value.into());
        self
    }

    /// The tag variables CUE's `-T` injects (`now`, `os`, `cwd`, ...), where not set.
    pub fn inject_vars(mut self) -> Loader {
        self.cfg.inject_default_vars();
        self
    }

    /// Compiles every declaration of imported packages outside the main module (by default
    /// only what the package can reach is parsed and compiled; eager loading is slower and
    /// reports errors in unused vendored declarations).
    pub fn eager_imports(mut self, eager: bool) -> Loader {
        self.cfg.eager_imports = eager;
        self
    }

    /// Shares parse results with the other loads given the same cache (the instances of one
    /// module in a bundle, loaded on several threads): each file is then read from the disk
    /// and parsed once. The cache is meant for one run: its loads see each file as it was
    /// first read.
    pub fn parse_cache(mut self, cache: Arc<ParseCache>) -> Loader {
        self.cfg.parse_cache = Some(cache);
        self
    }

    /// Loads and compiles the package; its root value, evaluated on demand.
    ///
    /// Errors of finding, reading and parsing the files are of kind [`ErrorKind::Load`] (or
    /// [`ErrorKind::NoLanguageVersion`]); errors of compiling them, of kind [`ErrorKind::Eval`].
    pub fn load(self) -> Result<Value> {
        Ok(self.load_build(false, true, None)?.0)
    }

    /// [`Loader::load`], starting from the compiled imports in `share` when the package
    /// imports exactly the same files as the load that left them there (the instances of one
    /// module, say); otherwise leaving its own there for the next load. The loading itself
    /// takes the share's last search for the reachable declarations of vendored packages when
    /// its input is the same, and does not parse again the imported files the share compiled.
    /// See [`ImportShare`](crate::ImportShare).
    pub fn load_sharing(self, share: &mut crate::ImportShare) -> Result<Value> {
        Ok(self.load_build(false, true, Some(share))?.0)
    }

    /// [`Loader::load`], with a [`Document`] of each file the package was built from (its own
    /// files and those of the packages it imports, in load order; files left out by `@if` or
    /// `@ignore` are not among them), for queries on their syntax.
    pub fn load_with_documents(self) -> Result<(Value, Vec<Document>)> {
        self.load_build(true, true, None)
    }

    /// [`Loader::load`], leaving the package's compile errors (an unknown reference, say) to
    /// [`Value::validate`] and the exports, which report them with the errors they cause, as
    /// `cue eval` and `cue vet` do; [`Value::to_cue_text`] shows them in place.
    pub fn load_partial(self) -> Result<Value> {
        Ok(self.load_build(false, false, None)?.0)
    }

    /// Loads the package once for each document of the data files among the arguments, with
    /// that document merged into it, as `cue vet schema.cue data.yaml` checks each document;
    /// once, as [`Loader::load_partial`] does, when there are no data files. Each load happens
    /// when the iterator reaches it.
    ///
    /// ```
    /// let dir = std::env::temp_dir().join(format!("cue-eval-doc-docs-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir).unwrap();
    /// std::fs::write(dir.join("s.cue"), "a: int\n").unwrap();
    /// std::fs::write(dir.join("d.yaml"), "a: 1\n---\na: x\n").unwrap();
    /// let loads = cue_eval::Context::new().loader(&dir).args(["s.cue", "d.yaml"]).load_partial_per_document().unwrap();
    /// assert!(loads.per_document());
    /// let ok: Vec<bool> = loads.map(|v| v.unwrap().validate(Default::default()).is_ok()).collect();
    /// assert_eq!(ok, [true, false]);
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// ```
    pub fn load_partial_per_document(self) -> Result<DocumentLoads> {
        let mut build = load::load(&self.cfg, &self.args).map_err(Error::from_load)?;
        let data = std::mem::take(&mut build.data);
        let per_document = !data.is_empty();
        let mut docs: std::collections::VecDeque<(String, Option<crate::encode::Data>)> = data
            .into_iter()
            .flat_map(|f| {
                let name = f.name;
                f.docs.into_iter().map(move |d| (name.clone(), Some(d)))
            })
            .collect();
        if !per_document {
            docs.push_back((String::new(), None));
        }
        Ok(DocumentLoads {
            build,
            docs,
            per_document,
        })
    }

    fn load_build(
        self,
        documents: bool,
        strict: bool,
        mut share: Option<&mut crate::ImportShare>,
    ) -> Result<(Value, Vec<Document>)> {
        let mut build = match &mut share {
            Some(share) => load::load_sharing(&self.cfg, &self.args, share),
            None => load::load(&self.cfg, &self.args),
        }
        .map_err(Error::from_load)?;
        build.merge_data_files().map_err(Error::from_load)?;
        let docs = if documents {
            build
                .files
                .iter()
                .filter(|f| !f.excluded)
                .map(Document::from_loaded)
                .collect()
        } else {
            Vec::new()
        };
        let main = build.main.clone();
        let inst = match share {
            Some(share) => build.into_instance_sharing(share),
            None => build.into_instance(),
        };
        let sh = match inst {
            Ok(inst) => Shared::loaded(inst, main),
            Err(errs) => {
                return Err(Error::from_eval(errs, &Default::default()).with_kind(ErrorKind::Load));
            }
        };
        let errs = sh.borrow_mut().inst.compile_errors();
        if strict && !errs.is_empty() {
            return Err(sh.borrow_mut().error(errs));
        }
        let root = sh.borrow().inst.root;
        Ok((Value::new(sh, root, Some(Vec::new())), docs))
    }
}

/// The loads of [`Loader::load_partial_per_document`]: one value per data document (or one
/// for the package alone), each loaded when the iterator reaches it.
pub struct DocumentLoads {
    build: load::Build,
    docs: std::collections::VecDeque<(String, Option<crate::encode::Data>)>,
    per_document: bool,
}

impl DocumentLoads {
    /// Whether data files were given (one load per document), or the package is loaded alone.
    pub fn per_document(&self) -> bool {
        self.per_document
    }
}

impl Iterator for DocumentLoads {
    type Item = Result<Value>;

    fn next(&mut self) -> Option<Result<Value>> {
        let (name, doc) = self.docs.pop_front()?;
        let build = match doc {
            Some(doc) => {
                let mut b = self.build.clone();
                if let Err(e) = b.add_main_source(&name, crate::decode::to_cue_source(&doc)) {
                    return Some(Err(Error::from_load(e)));
                }
                b
            }
            None => std::mem::take(&mut self.build),
        };
        let main = build.main.clone();
        Some(match build.into_instance() {
            Ok(inst) => {
                let root = inst.root;
                Ok(Value::new(
                    Shared::loaded(inst, main),
                    root,
                    Some(Vec::new()),
                ))
            }
            Err(errs) => {
                Err(Error::from_eval(errs, &Default::default()).with_kind(ErrorKind::Load))
            }
        })
    }
}
