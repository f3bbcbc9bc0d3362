//! The instance builder: what `timoni build`, `timoni mod vet` and each bundle instance do with a
//! module (Timoni's `internal/engine/module_builder.go`).
//!
//! 0. An `oci://` module is first fetched into a temporary directory through a
//!    [`ModuleFetch`] ([`open_module`]); its version becomes `moduleVersion`.
//! 1. The module directory (a path or a `file://` URL) must hold `cue.mod/module.cue`,
//!    `timoni.cue` and `values.cue`.
//! 2. Values files are merged over `values.cue` by Timoni's rules ([`crate::values`]) and the
//!    result replaces `values.cue` in memory; without values files it is left as on disk.
//! 3. Timoni's instance schema ([`crate::schema`]) is added in memory as `timoni.schema.cue`.
//! 4. The package is loaded with the tags `name` and `namespace` (and `debug` on request), the
//!    tag variables `moduleVersion` and `kubeVersion`, then evaluated.
//! 5. `timoni.instance` must be concrete, `timoni.apiVersion` must be `v1alpha1`, and the apply
//!    sets are read in field order: each must be a list; `null` items are skipped, `List`
//!    objects expanded, Kustomize configs skipped; every object's metadata is checked
//!    ([`crate::meta`]).
//! 6. The container images of `timoni.instance.config` are collected.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use cue_eval::encode::Data;
use cue_eval::syntax::Document;
use cue_eval::{Context, ErrorKind, ImportShare, ParseCache, Value};

use crate::error::{CueError, Error, Result};
use crate::meta::{self, get, get_str};
use crate::oci::{ArtifactUrl, FetchedModule, ModuleFetch};
use crate::schema;
use crate::values::{self, ValuesSource};

/// The Kubernetes version of offline builds, unless `TIMONI_KUBE_VERSION` says otherwise.
pub const DEFAULT_KUBE_VERSION: &str = "1.36.3";
/// The module version of local modules.
pub const DEVEL_VERSION: &str = "0.0.0-devel";

/// What to build.
#[derive(Clone, Debug)]
pub struct BuildOptions {
    /// The instance name (`@tag(name)`).
    pub name: String,
    /// The instance namespace (`@tag(namespace)`).
    pub namespace: String,
    /// The module: a directory, a `file://` URL or an `oci://` URL.
    pub module: String,
    /// `-v/--version` of an `oci://` module (`None`: the URL's tag, else `latest`).
    pub version: Option<String>,
    /// `-d/--digest` of an `oci://` module.
    pub digest: Option<String>,
    /// The CUE package of the instance (`main` unless `-p`).
    pub package: String,
    /// Values files, merged in order over the module's `values.cue`.
    pub values: Vec<ValuesSource>,
    /// Values already read (a bundle's `values:`), merged after `values`.
    pub values_data: Vec<Data>,
    /// Sets the `debug` tag (`@if(debug)` files).
    pub debug: bool,
    /// The `moduleVersion` tag variable.
    pub module_version: String,
    /// The `kubeVersion` tag variable.
    pub kube_version: String,
    /// Extra CUE files of the package, added in memory (name in the package dir, text).
    pub extra_files: Vec<(String, String)>,
    /// Parse results shared with the other builds of one run (a bundle's instances), so that a
    /// module and its vendored packages are parsed once per run, not once per instance.
    pub parse_cache: Option<std::sync::Arc<ParseCache>>,
    /// The process ends after this build (a one-shot command): the evaluator's graph is left
    /// for the exit to reclaim instead of being freed piece by piece, which takes a tenth of
    /// a large module's build. Builds that follow one another in a process leave it unset.
    pub leave_graph_to_exit: bool,
}

impl BuildOptions {
    /// Options for an instance of `module` with the offline defaults.
    pub fn new(name: &str, namespace: &str, module: &str) -> BuildOptions {
        BuildOptions {
            name: name.to_string(),
            namespace: namespace.to_string(),
            module: module.to_string(),
            version: None,
            digest: None,
            package: "main".to_string(),
            values: Vec::new(),
            values_data: Vec::new(),
            debug: false,
            module_version: DEVEL_VERSION.to_string(),
            kube_version: default_kube_version(),
            extra_files: Vec::new(),
            parse_cache: None,
            leave_graph_to_exit: false,
        }
    }
}

/// `TIMONI_KUBE_VERSION`, or [`DEFAULT_KUBE_VERSION`].
pub fn default_kube_version() -> String {
    std::env::var("TIMONI_KUBE_VERSION")
        .ok()
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| DEFAULT_KUBE_VERSION.to_string())
}

/// One apply set: its name and its objects in order.
#[derive(Clone, Debug, PartialEq)]
pub struct ApplySet {
    pub name: String,
    pub objects: Vec<Data>,
}

/// A built instance.
#[derive(Clone, Debug, PartialEq)]
pub struct BuiltInstance {
    pub name: String,
    pub namespace: String,
    /// The module name (`module:` of `cue.mod/module.cue`).
    pub module_name: String,
    pub module_root: PathBuf,
    pub apply_sets: Vec<ApplySet>,
    /// Image references found in the config, sorted and deduplicated.
    pub images: Vec<String>,
    /// The merged values (`values` of the instance), `Null` when they are not concrete.
    pub values: Data,
    /// The text of the `values.cue` the build used (the module's, or the merged values of the
    /// values files), from which the inventory's values are printed
    /// ([`values::stored_text`]).
    pub values_source: String,
}

impl BuiltInstance {
    /// Every object, apply set after apply set.
    pub fn objects(&self) -> Vec<Data> {
        self.apply_sets
            .iter()
            .flat_map(|s| s.objects.iter().cloned())
            .collect()
    }

    /// Every object, apply set after apply set, borrowed.
    pub fn each_object(&self) -> impl Iterator<Item = &Data> {
        self.apply_sets.iter().flat_map(|s| &s.objects)
    }

    /// Every object, apply set after apply set, without copying them.
    pub fn into_objects(self) -> Vec<Data> {
        self.apply_sets
            .into_iter()
            .flat_map(|s| s.objects)
            .collect()
    }
}

/// A local module's root directory from a path or `file://` URL (`oci://` modules go through
/// [`open_module`]).
pub fn module_dir(module: &str) -> Result<PathBuf> {
    if module.starts_with("oci://") {
        return Err(Error::Unsupported(format!(
            "{module}: an OCI module must be fetched first (this command takes local modules only)"
        )));
    }
    let path = module.strip_prefix("file://").unwrap_or(module);
    if path.is_empty() {
        return Err(Error::Module("module path is empty".into()));
    }
    Ok(PathBuf::from(path))
}

/// A module ready to load: a local directory, or an `oci://` module fetched into a temporary
/// directory that lives as long as this value.
pub struct ModuleSource {
    /// The module root.
    pub dir: PathBuf,
    /// What was fetched, for `oci://` modules.
    pub fetched: Option<FetchedModule>,
    _tmp: Option<tempfile::TempDir>,
}

/// Opens `module`: a local path or `file://` URL as is, or an `oci://` URL fetched with
/// `fetcher` at `version`/`digest` (Timoni's rules, see [`crate::oci::fetch_module`]).
pub fn open_module(
    module: &str,
    version: Option<&str>,
    digest: Option<&str>,
    fetcher: Option<&dyn ModuleFetch>,
) -> Result<ModuleSource> {
    if !module.starts_with("oci://") {
        return Ok(ModuleSource {
            dir: module_dir(module)?,
            fetched: None,
            _tmp: None,
        });
    }
    let Some(fetcher) = fetcher else {
        return module_dir(module).map(|dir| ModuleSource {
            dir,
            fetched: None,
            _tmp: None,
        });
    };
    let url = ArtifactUrl::parse(module).map_err(|e| Error::Fetch(e.to_string()))?;
    let tmp = tempfile::Builder::new()
        .prefix("timoni-module-")
        .tempdir()
        .map_err(|e| Error::io(&std::env::temp_dir(), e))?;
    let dest = tmp.path().join("module");
    let fetched = fetcher
        .fetch(&url, version, digest, &dest)
        .map_err(|e| match e {
            crate::oci::OciError::Verification { .. } => Error::Verification(e.to_string()),
            e => Error::Fetch(e.to_string()),
        })?;
    Ok(ModuleSource {
        dir: dest,
        fetched: Some(fetched),
        _tmp: Some(tmp),
    })
}

/// Checks the files a module needs and returns the module's absolute root.
pub fn check_module(dir: &Path) -> Result<PathBuf> {
    if !dir.is_dir() {
        return Err(Error::Module(format!(
            "module not found at path {}",
            dir.display()
        )));
    }
    for f in ["cue.mod/module.cue", "timoni.cue", "values.cue"] {
        if !dir.join(f).is_file() {
            return Err(Error::Module(format!(
                "{}: the module has no {f}: a Timoni module needs cue.mod/module.cue, timoni.cue and values.cue",
                dir.display()
            )));
        }
    }
    std::path::absolute(dir).map_err(|e| Error::io(dir, e))
}

/// The `module:` path of `cue.mod/module.cue` (without its major version), empty when unreadable.
pub fn module_name(root: &Path) -> String {
    let text = std::fs::read_to_string(root.join("cue.mod/module.cue")).unwrap_or_default();
    let Ok(v) = Context::new().compile_file("module.cue", &text) else {
        return String::new();
    };
    match export_at(&v, &["module"]) {
        Ok(Data::String(s)) => s.split('@').next().unwrap_or(&s).to_string(),
        _ => String::new(),
    }
}

fn cue_error(e: cue_eval::Error) -> Error {
    Error::from(e)
}

/// The concrete data at a path of labels below `v`, as `cue export -e path` gives it.
pub(crate) fn export_at(v: &Value, path: &[&str]) -> cue_eval::Result<Data> {
    v.lookup_path(path)?.export()
}

/// A loading error as `cue` words it, except a module without a language version, which Timoni
/// words `import failed: timoni.sh/x@v0: no language version declared in module.cue`; ours
/// adds how to fix it.
fn load_error(e: cue_eval::Error) -> Error {
    match e.kind() {
        ErrorKind::NoLanguageVersion { module } => {
            let module = match module.as_deref() {
                Some(m) if m.contains('@') => format!("{m}: "),
                Some(m) => format!("{m}@v0: "),
                None => String::new(),
            };
            Error::Module(format!(
                "import failed: {module}no language version declared in module.cue (add `language: version: \"{}\"` to cue.mod/module.cue)",
                cue_eval::LANGUAGE_VERSION
            ))
        }
        _ => cue_error(e),
    }
}

/// A module loaded for an instance: its root, its parsed files (the schema and values
/// overlays included; only when asked for) and the package's value.
pub struct Loaded {
    pub root: PathBuf,
    /// The merged values file written over `values.cue`, when values were given.
    pub values_overlay: Option<String>,
    pub files: Vec<Document>,
    pub value: Value,
}

/// Loads a local module for an instance: module checks, values merge, schema overlay, tags.
/// `keep_files` keeps a copy of the parsed files in [`Loaded::files`].
pub fn load_module(opts: &BuildOptions, keep_files: bool) -> Result<Loaded> {
    load_module_sharing(opts, keep_files, None)
}

/// [`load_module`], starting from the compiled imports of the module built before on this
/// thread when `share` holds them (see [`ImportShare`]).
pub fn load_module_sharing(
    opts: &BuildOptions,
    keep_files: bool,
    share: Option<&mut ImportShare>,
) -> Result<Loaded> {
    let root = check_module(&module_dir(&opts.module)?)?;
    let pkg_dir = if opts.package == "main" {
        root.clone()
    } else {
        root.join(&opts.package)
    };
    if !pkg_dir.is_dir() {
        return Err(Error::Module(format!(
            "cannot find package {:?}: no directory {}",
            opts.package,
            pkg_dir.display()
        )));
    }

    let mut overlay = BTreeMap::new();
    overlay.insert(
        pkg_dir.join(schema::SCHEMA_FILE),
        schema::schema_file(&opts.package),
    );
    let mut values_overlay = None;
    if !opts.values.is_empty() || !opts.values_data.is_empty() {
        let values_path = pkg_dir.join("values.cue");
        let text = std::fs::read_to_string(&values_path).map_err(|e| Error::io(&values_path, e))?;
        let defaults = values::values_from_cue(&values_path.display().to_string(), &text)?;
        let mut overlays = Vec::new();
        for v in &opts.values {
            overlays.push(values::read_values(v)?);
        }
        overlays.extend(opts.values_data.iter().cloned());
        let merged = values::merge_all(defaults, &overlays).map_err(|msg| Error::Values {
            file: values_path.display().to_string(),
            msg,
        })?;
        let text = values::values_file(&opts.package, &merged);
        values_overlay = Some(text.clone());
        overlay.insert(values_path, text);
    }

    for (name, text) in &opts.extra_files {
        overlay.insert(pkg_dir.join(name), text.clone());
    }
    let mut loader = Context::new().loader(&root);
    for (path, text) in overlay {
        loader = loader.overlay(path, text);
    }
    if let Some(cache) = &opts.parse_cache {
        loader = loader.parse_cache(cache.clone());
    }
    loader = loader
        .tag(format!("name={}", opts.name))
        .tag(format!("namespace={}", opts.namespace));
    if opts.debug {
        loader = loader.tag("debug");
    }
    let arg = if opts.package == "main" {
        ".".to_string()
    } else {
        format!("./{}", opts.package)
    };
    let loader = loader
        .tag_var("moduleVersion", opts.module_version.clone())
        .tag_var("kubeVersion", opts.kube_version.clone())
        .args([arg]);
    let (value, files) = match (keep_files, share) {
        (true, _) => loader.load_with_documents(),
        (false, Some(share)) => loader.load_sharing(share).map(|v| (v, Vec::new())),
        (false, None) => loader.load().map(|v| (v, Vec::new())),
    }
    .map_err(load_error)?;
    Ok(Loaded {
        root,
        values_overlay,
        files,
        value,
    })
}

/// Builds an instance of a module, fetching an `oci://` one with `fetcher` first; its version
/// (from the manifest) is the `moduleVersion` tag variable.
pub fn build_with(opts: &BuildOptions, fetcher: Option<&dyn ModuleFetch>) -> Result<BuiltInstance> {
    if !opts.module.starts_with("oci://") {
        return build(opts);
    }
    let source = open_module(
        &opts.module,
        opts.version.as_deref(),
        opts.digest.as_deref(),
        fetcher,
    )?;
    let mut local = opts.clone();
    local.module = source.dir.display().to_string();
    if let Some(f) = &source.fetched {
        local.module_version = f.version.clone();
    }
    build(&local)
}

/// Builds an instance of a local module.
pub fn build(opts: &BuildOptions) -> Result<BuiltInstance> {
    build_sharing(opts, None)
}

/// [`build`], sharing compiled imports with the builds before it through `share`.
pub fn build_sharing(
    opts: &BuildOptions,
    share: Option<&mut ImportShare>,
) -> Result<BuiltInstance> {
    let Loaded {
        root,
        values_overlay,
        value,
        ..
    } = load_module_sharing(opts, false, share)?;
    if value.lookup("timoni").is_err() {
        return Err(Error::Cue(CueError::at_path(
            "timoni",
            "field not found: the module's timoni.cue must define timoni",
        )));
    }
    // The instance must be concrete. It is checked without building its data (in Timoni's
    // modules it holds every object of the apply sets again), and only its config is
    // exported, for the images.
    let mut images = Vec::new();
    value
        .lookup_path(&["timoni", "instance"])
        .and_then(|instance| instance.check_export())
        .map_err(cue_error)?;
    if let Ok(config) = export_at(&value, &["timoni", "instance", "config"]) {
        collect_images(&config, &mut images);
    }
    match export_at(&value, &["timoni", "apiVersion"]) {
        Ok(Data::String(v)) if v == "v1alpha1" => {}
        Ok(_) => {
            return Err(Error::Cue(CueError::at_path(
                "timoni.apiVersion",
                "unsupported API version, expected v1alpha1",
            )));
        }
        Err(e) => return Err(cue_error(e)),
    }
    let apply = export_at(&value, &["timoni", "apply"]).map_err(cue_error)?;
    let Data::Struct(sets) = apply else {
        return Err(Error::Cue(CueError::at_path(
            "timoni.apply",
            "must be a struct of lists",
        )));
    };
    let mut apply_sets = Vec::new();
    let mut problems = Vec::new();
    for set in sets {
        let Data::List(items) = set.value else {
            problems.push(format!(
                "timoni.apply.{}: must be a list of objects",
                set.name
            ));
            continue;
        };
        let mut objects = Vec::new();
        for (i, item) in items.into_iter().enumerate() {
            let path = format!("timoni.apply.{}.{i}", set.name);
            collect_object(item, &path, &mut objects, &mut problems);
        }
        apply_sets.push(ApplySet {
            name: set.name,
            objects,
        });
    }
    if !problems.is_empty() {
        return Err(Error::Objects(problems));
    }
    images.sort();
    images.dedup();
    let values = export_at(&value, &["values"]).unwrap_or(Data::Null);
    if opts.leave_graph_to_exit {
        std::mem::forget(value);
    }
    let values_source = match values_overlay {
        Some(text) => text,
        None => {
            let pkg_dir = if opts.package == "main" {
                root.clone()
            } else {
                root.join(&opts.package)
            };
            std::fs::read_to_string(pkg_dir.join("values.cue")).unwrap_or_default()
        }
    };
    Ok(BuiltInstance {
        name: opts.name.clone(),
        namespace: opts.namespace.clone(),
        module_name: module_name(&root),
        module_root: root,
        apply_sets,
        images,
        values,
        values_source,
    })
}

/// Adds one apply-set item: `null` is skipped, a `List` contributes its items, a Kustomize
/// config is skipped, anything else must be a valid object.
fn collect_object(item: Data, path: &str, out: &mut Vec<Data>, problems: &mut Vec<String>) {
    match item {
        Data::Null => {}
        Data::Struct(_) => {
            let kind = get_str(&item, &["kind"]);
            let api = get_str(&item, &["apiVersion"]).unwrap_or("");
            if kind == Some("List")
                && let Some(Data::List(items)) = get(&item, &["items"])
            {
                // Timoni names the list's path for errors in its items.
                for sub in items.clone() {
                    collect_object(sub, path, out, problems);
                }
                return;
            }
            if api.starts_with("kustomize.config.k8s.io/") {
                return;
            }
            let errs = meta::validate(&item);
            if errs.is_empty() {
                out.push(item);
            } else {
                problems.extend(
                    errs.into_iter()
                        .map(|e| format!("invalid object at path {path}: {e}")),
                );
            }
        }
        _ => problems.push(format!(
            "decoding object at path {path} failed: an object must be a struct"
        )),
    }
}

/// Collects the `reference` of every struct with `repository`, `tag`, `digest` and
/// `reference` fields.
fn collect_images(d: &Data, out: &mut Vec<String>) {
    match d {
        Data::Struct(fields) => {
            let has = |n: &str| fields.iter().any(|f| f.name == n);
            if has("repository")
                && has("tag")
                && has("digest")
                && let Some(r) = get_str(d, &["reference"])
            {
                out.push(r.to_string());
            }
            for f in fields {
                collect_images(&f.value, out);
            }
        }
        Data::List(items) => items.iter().for_each(|i| collect_images(i, out)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instances_of_one_module_compile_its_imports_once() {
        let parent = tempfile::tempdir().unwrap();
        let (dir, _) = crate::blueprint::init("app", parent.path()).unwrap();
        let module = dir.display().to_string();
        let yaml = |b: &BuiltInstance| crate::render::objects_yaml(&b.objects());
        // What one instance loads on its own: how many trees of vendored files it builds.
        let mut alone = ImportShare::new();
        build_sharing(&BuildOptions::new("app", "ns", &module), Some(&mut alone)).unwrap();
        let trees = alone.imported_trees();
        assert!(trees > 0, "the starter vendors Kubernetes schemas");
        let mut share = ImportShare::new();
        for i in 0..4 {
            let mut opts = BuildOptions::new(&format!("app{i}"), &format!("ns{i}"), &module);
            let replicas = Data::int(format!("{}", i + 1));
            opts.values_data = vec![Data::Struct(vec![cue_eval::encode::Field::new(
                "replicas", replicas,
            )])];
            let shared = build_sharing(&opts, Some(&mut share)).unwrap();
            // Starting from another instance's compiled imports changes nothing.
            assert_eq!(yaml(&shared), yaml(&build(&opts).unwrap()), "instance {i}");
        }
        assert_eq!((share.compiled(), share.reused()), (1, 3));
        // The loads after the first neither search the vendored packages for what they reach
        // nor build their trees again.
        assert_eq!((share.searched(), share.imported_trees()), (1, trees));

        // An imported file that changed is compiled again, and the result is its own.
        let templates = dir.join("templates");
        let file = std::fs::read_dir(&templates)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.extension().is_some_and(|x| x == "cue"))
            .unwrap();
        let text = std::fs::read_to_string(&file).unwrap();
        std::fs::write(&file, format!("{text}\n// edited\n")).unwrap();
        let mut opts = BuildOptions::new("app9", "ns9", &module);
        opts.values_data = vec![Data::Struct(Vec::new())];
        let shared = build_sharing(&opts, Some(&mut share)).unwrap();
        assert_eq!(yaml(&shared), yaml(&build(&opts).unwrap()));
        assert_eq!((share.compiled(), share.reused()), (2, 3));
        // The vendored packages are the same, and so is what the module needs of them.
        assert_eq!((share.searched(), share.imported_trees()), (1, 2 * trees));
    }

    #[test]
    fn oci_urls_need_a_fetcher() {
        let err = module_dir("oci://ghcr.io/x/y").unwrap_err();
        assert!(err.to_string().contains("must be fetched first"), "{err}");
        let err = build_with(&BuildOptions::new("a", "b", "oci://ghcr.io/x/y"), None).unwrap_err();
        assert!(err.to_string().contains("must be fetched first"), "{err}");
    }

    #[test]
    fn file_urls_name_directories() {
        assert_eq!(module_dir("file://./m").unwrap(), PathBuf::from("./m"));
    }

    #[test]
    fn a_missing_module_file_is_named() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("cue.mod")).unwrap();
        std::fs::write(
            dir.path().join("cue.mod/module.cue"),
            "module: \"x.io/m\"\nlanguage: version: \"v0.17.1\"\n",
        )
        .unwrap();
        let err = check_module(dir.path()).unwrap_err();
        assert!(err.to_string().contains("no timoni.cue"), "{err}");
    }

    #[test]
    fn images_need_all_four_fields() {
        let d = cue_eval::decode::json(
            r#"{"a":{"repository":"r","tag":"t","digest":"","reference":"r:t"},"b":[{"repository":"x","reference":"x"}]}"#,
        )
        .unwrap();
        let mut out = Vec::new();
        collect_images(&d, &mut out);
        assert_eq!(out, ["r:t"]);
    }
}
