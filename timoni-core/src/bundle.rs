//! Bundles (Timoni's `internal/engine/bundle_builder.go`): one or more files (CUE, YAML, JSON
//! or stdin) unified with the `#Bundle` schema, runtime values injected before evaluation, and
//! the instances built in declaration order.
//!
//! Each file is runtime-injected ([`crate::runtime::inject`]) and loaded in memory as
//! `<workdir>/<i>.<basename>.cue` next to `<n>.schema.cue` (the schema and `bundle: #Bundle`),
//! so that bundles can import packages of the working directory's `cue.mod`. The `bundle`
//! value must be concrete. Relative `file://` module URLs are resolved against the directory of
//! the file that wrote them. `oci://` modules are fetched first (once per URL, version and
//! digest) through a [`ModuleFetch`]. Instances are built in parallel on rayon's pool; results
//! keep the declaration order.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use cue_eval::decode;
use cue_eval::encode::Data;
use cue_eval::syntax::Document;
use cue_eval::{Context, ErrorKind, ImportShare, ParseCache};
use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::instance::{self, BuildOptions, BuiltInstance, DEVEL_VERSION};
use crate::meta::{get, get_str};
use crate::oci::ModuleFetch;
use crate::runtime;

/// The bundle schema, written from Timoni's documented `#Bundle`.
const BUNDLE_SCHEMA: &str = r#"import "strings"

#Bundle: {
	apiVersion: string & =~"^v1alpha1$"
	name:       string & =~"^(([a-z0-9][-a-z0-9_.]*)?[a-z0-9])?$" & strings.MaxRunes(63) & strings.MinRunes(1)
	instances: [string & =~"^(([a-z0-9][-a-z0-9_.]*)?[a-z0-9])?$" & strings.MaxRunes(63) & strings.MinRunes(1)]: {
		module: close({
			url:     string & =~"^(oci|file)://.*$"
			version: *"latest" | string
			digest?: string
		})
		namespace: string & =~"^(([a-z0-9][-a-z0-9_.]*)?[a-z0-9])?$" & strings.MaxRunes(63) & strings.MinRunes(1)
		values: {...}
	}
}

bundle: #Bundle
"#;

/// One input file of a bundle or runtime.
#[derive(Clone, Debug)]
pub struct SourceFile {
    /// The path as given (`-` for stdin).
    pub path: PathBuf,
    /// The text (read by the caller, so that stdin works).
    pub text: String,
}

impl SourceFile {
    /// Reads a file from disk.
    pub fn read(path: &Path) -> Result<SourceFile> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        Ok(SourceFile {
            path: path.to_path_buf(),
            text,
        })
    }

    /// This file as CUE text: YAML and JSON are converted, CUE is kept.
    pub fn cue_text(&self) -> Result<String> {
        let name = self.path.display().to_string();
        let ext = self.path.extension().and_then(|e| e.to_str()).unwrap_or("");
        let data = match ext {
            "yaml" | "yml" => {
                let docs = decode::yaml(&self.text).map_err(|e| Error::Bundle(e.in_file(&name)))?;
                docs.into_iter().next().unwrap_or(Data::Struct(Vec::new()))
            }
            "json" => decode::json(&self.text).map_err(|e| Error::Bundle(e.in_file(&name)))?,
            "cue" | "" => return Ok(self.text.clone()),
            _ => {
                return Err(Error::Bundle(format!(
                    "{name}: unsupported file format: use .cue, .yaml, .yml or .json"
                )));
            }
        };
        Ok(decode::to_cue_source(&data))
    }

    /// The directory relative `file://` URLs in this file are resolved against.
    fn base_dir(&self) -> PathBuf {
        if self.path.as_os_str() == "-" {
            return std::env::current_dir().unwrap_or_default();
        }
        match self.path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        }
    }
}

/// One instance of a bundle.
#[derive(Clone, Debug, PartialEq)]
pub struct BundleInstance {
    pub name: String,
    pub namespace: String,
    /// The module URL as written.
    pub url: String,
    /// For `file://` URLs, the module directory (relative URLs resolved).
    pub module_dir: Option<PathBuf>,
    pub version: String,
    pub digest: Option<String>,
    pub values: Data,
}

/// An evaluated bundle.
#[derive(Clone, Debug, PartialEq)]
pub struct Bundle {
    pub name: String,
    pub instances: Vec<BundleInstance>,
    /// The `bundle` value as formatted CUE (what `bundle vet --print-value` shows).
    pub cue: String,
}

/// How to load a bundle.
#[derive(Clone, Debug, Default)]
pub struct LoadOptions {
    /// The runtime values injected into `@timoni(runtime:…)` fields.
    pub runtime_values: BTreeMap<String, String>,
    /// The directory whose `cue.mod` bundles import from (default: the working directory).
    pub workdir: Option<PathBuf>,
}

fn cue_error(e: cue_eval::Error) -> Error {
    Error::Bundle(e.to_string())
}

/// Timoni's prefixes: reading, injecting and loading the files is parsing; evaluating them is
/// building.
fn prefixed(what: &str, e: Error) -> Error {
    match e {
        Error::Bundle(m) => Error::Bundle(format!("failed to {what} bundle: {m}")),
        other => Error::Bundle(format!("failed to {what} bundle: {other}")),
    }
}

/// Loads, injects and evaluates the bundle files.
pub fn load_bundle(files: &[SourceFile], opts: &LoadOptions) -> Result<Bundle> {
    if files.is_empty() {
        return Err(Error::Bundle("no bundle files given (use -f)".into()));
    }
    let workdir = match &opts.workdir {
        Some(d) => std::path::absolute(d).map_err(|e| Error::io(d, e))?,
        None => std::env::current_dir().map_err(|e| Error::io(Path::new("."), e))?,
    };
    let mut overlay = BTreeMap::new();
    let mut args = Vec::new();
    let mut texts = Vec::new();
    for (i, f) in files.iter().enumerate() {
        let base = match f.path.file_name() {
            Some(n) if f.path.as_os_str() != "-" => n.to_string_lossy().to_string(),
            _ => "stdin".to_string(),
        };
        let base = base.strip_suffix(".cue").unwrap_or(&base).to_string();
        let virt = workdir.join(format!("{i}.{base}.cue"));
        let text = f.cue_text().map_err(|e| prefixed("parse", e))?;
        let text = runtime::inject(&virt.display().to_string(), &text, &opts.runtime_values)
            .map_err(|e| prefixed("parse", e))?;
        overlay.insert(virt.clone(), text.clone());
        args.push(virt.display().to_string());
        texts.push(text);
    }
    let schema = workdir.join(format!("{}.schema.cue", files.len()));
    overlay.insert(schema.clone(), BUNDLE_SCHEMA.to_string());
    args.push(schema.display().to_string());

    let mut loader = Context::new().loader(&workdir).args(args);
    for (path, text) in overlay {
        loader = loader.overlay(path, text);
    }
    let root = loader.load().map_err(|e| match e.kind() {
        ErrorKind::Eval => prefixed("build", cue_error(e)),
        _ => prefixed("parse", cue_error(e)),
    })?;
    let Ok(v) = root.lookup("bundle") else {
        return Err(Error::Bundle(
            "failed to build bundle: bundle: field not found".into(),
        ));
    };
    let data = v.export().map_err(|e| prefixed("build", cue_error(e)))?;
    let cue = v.to_string();
    let name = get_str(&data, &["name"]).unwrap_or_default().to_string();
    let mut instances = Vec::new();
    if let Some(Data::Struct(list)) = get(&data, &["instances"]) {
        for f in list {
            let url = get_str(&f.value, &["module", "url"])
                .unwrap_or_default()
                .to_string();
            let module_dir = url.strip_prefix("file://").map(|p| {
                let p = Path::new(p);
                if p.is_absolute() {
                    p.to_path_buf()
                } else {
                    let dir = defining_file(files, &texts, &f.name)
                        .map(|i| files[i].base_dir())
                        .unwrap_or_else(|| PathBuf::from("."));
                    dir.join(p)
                }
            });
            instances.push(BundleInstance {
                name: f.name.clone(),
                namespace: get_str(&f.value, &["namespace"])
                    .unwrap_or_default()
                    .to_string(),
                url,
                module_dir,
                version: get_str(&f.value, &["module", "version"])
                    .unwrap_or("latest")
                    .to_string(),
                digest: get_str(&f.value, &["module", "digest"]).map(str::to_string),
                values: get(&f.value, &["values"])
                    .cloned()
                    .unwrap_or(Data::Struct(Vec::new())),
            });
        }
    }
    if instances.is_empty() {
        return Err(Error::Bundle("no instances found in bundle".into()));
    }
    Ok(Bundle {
        name,
        instances,
        cue,
    })
}

/// The index of the file that writes `bundle.instances.<name>.module.url` (the last one that
/// does, as a later file's value is the one a user means to override with).
fn defining_file(files: &[SourceFile], texts: &[String], instance: &str) -> Option<usize> {
    let path = ["bundle", "instances", instance, "module", "url"];
    let mut found = None;
    for (i, text) in texts.iter().enumerate() {
        if Document::parse_partial("bundle.cue", text).writes_path(&path) {
            found = Some(i);
        }
    }
    found.filter(|&i| i < files.len())
}

/// The build options of one bundle instance of a local (`file://`, or already fetched) module.
pub fn instance_options(bi: &BundleInstance, package: &str) -> Result<BuildOptions> {
    let Some(dir) = &bi.module_dir else {
        return Err(Error::Unsupported(format!(
            "instance {}: {}: an OCI module must be fetched first (see build_all_with)",
            bi.name, bi.url
        )));
    };
    Ok(options_at(bi, dir, DEVEL_VERSION, package))
}

/// Builds one bundle instance of a local (`file://`) module.
pub fn build_instance(bi: &BundleInstance, package: &str) -> Result<BuiltInstance> {
    let Some(dir) = &bi.module_dir else {
        return Err(Error::Unsupported(format!(
            "instance {}: {}: an OCI module must be fetched first (see build_all_with)",
            bi.name, bi.url
        )));
    };
    build_instance_at(
        bi,
        dir,
        DEVEL_VERSION,
        package,
        None,
        &mut ImportShare::new(),
    )
}

/// The build options of a bundle instance whose module is in `dir`, with `module_version` as
/// the `moduleVersion` tag variable.
fn options_at(
    bi: &BundleInstance,
    dir: &Path,
    module_version: &str,
    package: &str,
) -> BuildOptions {
    let mut opts = BuildOptions::new(&bi.name, &bi.namespace, &dir.display().to_string());
    opts.package = package.to_string();
    opts.values_data = vec![bi.values.clone()];
    opts.module_version = module_version.to_string();
    opts
}

/// Builds one bundle instance from the module in `dir`.
fn build_instance_at(
    bi: &BundleInstance,
    dir: &Path,
    module_version: &str,
    package: &str,
    cache: Option<&Arc<ParseCache>>,
    share: &mut ImportShare,
) -> Result<BuiltInstance> {
    let mut opts = options_at(bi, dir, module_version, package);
    opts.parse_cache = cache.cloned();
    // Instances of a module used once share nothing, and need no copy of its imports kept.
    let share = cache.is_some().then_some(share);
    instance::build_sharing(&opts, share).map_err(|e| match e {
        Error::Objects(errs) => Error::Objects(
            errs.into_iter()
                .map(|m| format!("build failed for {}: {m}", bi.name))
                .collect(),
        ),
        other => Error::Bundle(format!("build failed for {}: {other}", bi.name)),
    })
}

/// Builds every instance of local modules in parallel; see [`build_all_with`].
pub fn build_all(bundle: &Bundle, package: &str, concurrency: usize) -> Result<Vec<BuiltInstance>> {
    build_all_with(bundle, package, concurrency, None)
}

/// Builds every instance in parallel on at most `concurrency` threads, returning the results
/// in declaration order. `oci://` modules are fetched first with `fetcher`, in declaration
/// order and once per (URL, version, digest), as Timoni fetches once per repository and version.
pub fn build_all_with(
    bundle: &Bundle,
    package: &str,
    concurrency: usize,
    fetcher: Option<&dyn ModuleFetch>,
) -> Result<Vec<BuiltInstance>> {
    // One cache for the run: each module (and what it vendors) is parsed once, whichever
    // instance asks first, and the trees are shared by every instance on every thread.
    let cache = Arc::new(ParseCache::new());
    build_all_sharing(bundle, package, concurrency, fetcher, &cache)
}

/// [`build_all_with`], parsing the modules that several instances use through `cache` (which
/// the caller can share further, or inspect: [`ParseCache::computed`] counts the files actually
/// parsed).
pub fn build_all_sharing(
    bundle: &Bundle,
    package: &str,
    concurrency: usize,
    fetcher: Option<&dyn ModuleFetch>,
    cache: &Arc<ParseCache>,
) -> Result<Vec<BuiltInstance>> {
    build_all_each(bundle, package, concurrency, fetcher, cache, &|built| built)
}

/// [`build_all_sharing`], handing each built instance to `each` on the thread that built it,
/// and returning what `each` made of them in declaration order. What `each` drops, such as
/// the objects of an instance once rendered, is freed while the other instances build, so
/// the run holds only what `each` returns.
pub fn build_all_each<T: Send>(
    bundle: &Bundle,
    package: &str,
    concurrency: usize,
    fetcher: Option<&dyn ModuleFetch>,
    cache: &Arc<ParseCache>,
    each: &(dyn Fn(BuiltInstance) -> T + Sync),
) -> Result<Vec<T>> {
    let mut sources: BTreeMap<(String, String, Option<String>), instance::ModuleSource> =
        BTreeMap::new();
    for bi in &bundle.instances {
        if bi.module_dir.is_some() {
            continue;
        }
        let key = (bi.url.clone(), bi.version.clone(), bi.digest.clone());
        if sources.contains_key(&key) {
            continue;
        }
        let source =
            instance::open_module(&bi.url, Some(&bi.version), bi.digest.as_deref(), fetcher)
                .map_err(|e| {
                    Error::Bundle(format!("failed to fetch module for {}: {e}", bi.name))
                })?;
        sources.insert(key, source);
    }
    // The directory each instance's module is in; a module used once is parsed without the
    // cache (keeping a copy of its trees would only cost).
    let dirs: Vec<&Path> = bundle
        .instances
        .iter()
        .map(|bi| match &bi.module_dir {
            Some(dir) => dir.as_path(),
            None => sources[&(bi.url.clone(), bi.version.clone(), bi.digest.clone())]
                .dir
                .as_path(),
        })
        .collect();
    let mut uses: BTreeMap<&Path, usize> = BTreeMap::new();
    for d in &dirs {
        *uses.entry(d).or_default() += 1;
    }
    release_freed_memory();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(concurrency.max(1))
        .build()
        .map_err(|e| Error::Bundle(format!("starting the build threads: {e}")))?;
    let results: Vec<Result<T>> = pool.install(|| {
        bundle
            .instances
            .par_iter()
            .zip(&dirs)
            // A few runs of consecutive instances per thread. Each thread keeps the compiled
            // imports of the module it built last (`THREAD_SHARE`), over all its runs: the
            // next instance of that module starts from them.
            .with_min_len(
                bundle
                    .instances
                    .len()
                    .div_ceil(2 * concurrency.max(1))
                    .max(1),
            )
            .map(|(bi, dir)| {
                let cache = (uses[dir] > 1).then_some(cache);
                let version = match &bi.module_dir {
                    Some(_) => DEVEL_VERSION,
                    None => {
                        let key = (bi.url.clone(), bi.version.clone(), bi.digest.clone());
                        sources[&key]
                            .fetched
                            .as_ref()
                            .map_or(DEVEL_VERSION, |f| f.version.as_str())
                    }
                };
                THREAD_SHARE
                    .with_borrow_mut(|share| {
                        build_instance_at(bi, dir, version, package, cache, share)
                    })
                    .map(each)
            })
            .collect()
    });
    // The pool's threads end with it, and their shares with them.
    drop(pool);
    results.into_iter().collect()
}

/// Hands the memory freed so far back to the system. The build threads allocate from arenas of
/// their own, which cannot reuse what the calling thread freed, such as the graph of the
/// bundle's own evaluation (about 9 KiB per instance): without this, a run's peak memory is
/// that graph's and the builds' together. The calling thread's spare vertex chunks go first.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
fn release_freed_memory() {
    cue_eval::release_thread_memory();
    // SAFETY: `malloc_trim` has no preconditions: it takes the C allocator's locks, returns
    // the whole free pages of its arenas to the system and leaves every allocation in place.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// `malloc_trim` is the GNU C library's.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn release_freed_memory() {
    cue_eval::release_thread_memory();
}

thread_local! {
    /// The compiled imports a build thread of [`build_all_sharing`]'s pool keeps from one instance to
    /// the next. The pool is made for one run, so a share lives as long as the run.
    static THREAD_SHARE: std::cell::RefCell<ImportShare> =
        std::cell::RefCell::new(ImportShare::new());
}

/// The default `--concurrency`: the number of CPUs, at most 8 (or `RAYON_NUM_THREADS`).
pub fn default_concurrency() -> usize {
    if let Some(n) = std::env::var("RAYON_NUM_THREADS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|n| *n > 0)
    {
        return n;
    }
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(8)
}

/// What `bundle build`, `bundle vet` and `runtime build` work on: bundle files, runtime files
/// and how to pick clusters.
#[derive(Clone, Debug, Default)]
pub struct BundleRequest {
    pub files: Vec<SourceFile>,
    pub runtime_files: Vec<SourceFile>,
    /// The process environment, used as runtime values with `--runtime-from-env`.
    pub env: Option<BTreeMap<String, String>>,
    /// `--runtime-cluster` (`*` for all).
    pub cluster: String,
    /// `--runtime-group` (`*` for all).
    pub group: String,
    pub workdir: Option<PathBuf>,
}

/// The runtime of a request: its files unified, or the implicit one.
pub fn request_runtime(req: &BundleRequest) -> Result<runtime::Runtime> {
    if req.runtime_files.is_empty() {
        return Ok(runtime::Runtime::implicit());
    }
    let mut sources = Vec::new();
    for f in &req.runtime_files {
        sources.push((f.path.display().to_string(), f.cue_text()?));
    }
    runtime::load_runtime(&sources)
}

/// The selected clusters, each with its runtime values: the environment (with
/// `--runtime-from-env`), then the cluster's name and group. Runtimes that read values from
/// clusters need [`runtime_values_with`].
pub fn runtime_values(
    req: &BundleRequest,
) -> Result<Vec<(runtime::Cluster, BTreeMap<String, String>)>> {
    runtime_values_with(req, &mut |rt, _| {
        Err(Error::Unsupported(format!(
            "runtime {:?}: values read from a cluster ({}) need a cluster; this command does \
             not read them yet",
            rt.name,
            rt.queries.join(", ")
        )))
    })
}

/// Reads the query values of a runtime on one of its clusters.
pub type QueryFn<'a> =
    dyn FnMut(&runtime::Runtime, &runtime::Cluster) -> Result<BTreeMap<String, String>> + 'a;

/// The selected clusters, each with its runtime values in Timoni's precedence: the environment
/// (with `--runtime-from-env`), then what `query` reads from the cluster (called only when
/// the runtime has `values`), then the cluster's name and group.
pub fn runtime_values_with(
    req: &BundleRequest,
    query: &mut QueryFn,
) -> Result<Vec<(runtime::Cluster, BTreeMap<String, String>)>> {
    let rt = request_runtime(req)?;
    let clusters = rt.select(&req.cluster, &req.group);
    if clusters.is_empty() {
        return Err(Error::Bundle(format!(
            "no cluster found (--runtime-cluster={:?} --runtime-group={:?})",
            req.cluster, req.group
        )));
    }
    let mut out = Vec::new();
    for c in clusters {
        let mut values = req.env.clone().unwrap_or_default();
        if !rt.values.is_empty() {
            values.extend(query(&rt, &c)?);
        }
        values.extend(c.values());
        out.push((c, values));
    }
    Ok(out)
}

/// `bundle vet`: the bundle evaluated for every selected cluster.
pub fn vet_bundle(req: &BundleRequest) -> Result<Vec<(runtime::Cluster, Bundle)>> {
    vet_bundle_for(req, runtime_values(req)?)
}

/// `bundle vet` for clusters whose runtime values are already read (from the clusters
/// themselves with `cluster::runtime_values::runtime_values`).
pub fn vet_bundle_for(
    req: &BundleRequest,
    clusters: Vec<(runtime::Cluster, BTreeMap<String, String>)>,
) -> Result<Vec<(runtime::Cluster, Bundle)>> {
    let mut out = Vec::new();
    for (cluster, values) in clusters {
        let opts = LoadOptions {
            runtime_values: values,
            workdir: req.workdir.clone(),
        };
        out.push((cluster, load_bundle(&req.files, &opts)?));
    }
    Ok(out)
}

/// `bundle build` of local modules only; see [`build_bundle_with`].
pub fn build_bundle(
    req: &BundleRequest,
    package: &str,
    concurrency: usize,
) -> Result<(runtime::Cluster, Bundle, Vec<BuiltInstance>)> {
    build_bundle_with(req, package, concurrency, None)
}

/// `bundle build`: the bundle built for the one selected cluster (a runtime with several
/// clusters needs `--runtime-cluster`), `oci://` modules fetched with `fetcher`.
pub fn build_bundle_with(
    req: &BundleRequest,
    package: &str,
    concurrency: usize,
    fetcher: Option<&dyn ModuleFetch>,
) -> Result<(runtime::Cluster, Bundle, Vec<BuiltInstance>)> {
    build_bundle_for(req, runtime_values(req)?, package, concurrency, fetcher)
}

/// `bundle build` for clusters whose runtime values are already read (see [`vet_bundle_for`]).
pub fn build_bundle_for(
    req: &BundleRequest,
    clusters: Vec<(runtime::Cluster, BTreeMap<String, String>)>,
    package: &str,
    concurrency: usize,
    fetcher: Option<&dyn ModuleFetch>,
) -> Result<(runtime::Cluster, Bundle, Vec<BuiltInstance>)> {
    build_bundle_each(req, clusters, package, concurrency, fetcher, &|built| built)
}

/// [`build_bundle_for`], handing each built instance to `each` on its build thread (see
/// [`build_all_each`]): `bundle build` renders an instance there and keeps only its text.
pub fn build_bundle_each<T: Send>(
    req: &BundleRequest,
    mut clusters: Vec<(runtime::Cluster, BTreeMap<String, String>)>,
    package: &str,
    concurrency: usize,
    fetcher: Option<&dyn ModuleFetch>,
    each: &(dyn Fn(BuiltInstance) -> T + Sync),
) -> Result<(runtime::Cluster, Bundle, Vec<T>)> {
    if clusters.len() > 1 {
        return Err(Error::Bundle(
            "you must select a cluster with --runtime-cluster".into(),
        ));
    }
    let (cluster, values) = clusters.remove(0);
    let opts = LoadOptions {
        runtime_values: values,
        workdir: req.workdir.clone(),
    };
    let bundle = load_bundle(&req.files, &opts)?;
    // One cache for the run, as in `build_all_with`.
    let cache = Arc::new(ParseCache::new());
    let built = build_all_each(&bundle, package, concurrency, fetcher, &cache, each)?;
    Ok((cluster, bundle, built))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn src(path: &str, text: &str) -> SourceFile {
        SourceFile {
            path: path.into(),
            text: text.into(),
        }
    }

    #[test]
    fn instances_keep_field_order_and_relative_urls_follow_their_file() {
        let dir = tempfile::tempdir().unwrap();
        let a = src(
            "conf/a.cue",
            r#"bundle: {
                apiVersion: "v1alpha1"
                name: "demo"
                instances: {
                    zeta: {module: url: "file://../mods/z", namespace: "n"}
                    alpha: {module: url: "oci://r.io/a", namespace: "n"}
                }
            }"#,
        );
        let b = src(
            "other/b.yaml",
            "bundle:\n  instances:\n    alpha:\n      values:\n        x: 1\n",
        );
        let opts = LoadOptions {
            workdir: Some(dir.path().to_path_buf()),
            ..LoadOptions::default()
        };
        let bundle = load_bundle(&[a, b], &opts).unwrap();
        assert_eq!(bundle.name, "demo");
        let names: Vec<_> = bundle.instances.iter().map(|i| i.name.as_str()).collect();
        assert_eq!(names, ["zeta", "alpha"]);
        assert_eq!(
            bundle.instances[0].module_dir.as_deref(),
            Some(Path::new("conf/../mods/z"))
        );
        assert_eq!(bundle.instances[1].module_dir, None);
        assert_eq!(bundle.instances[1].version, "latest");
    }

    #[test]
    fn bundles_import_packages_from_the_workdir_module() {
        let dir = tempfile::tempdir().unwrap();
        let pkg = dir.path().join("cue.mod/pkg/example.com/shared");
        std::fs::create_dir_all(&pkg).unwrap();
        std::fs::write(
            dir.path().join("cue.mod/module.cue"),
            "module: \"example.com/wd\"\nlanguage: version: \"v0.17.1\"\n",
        )
        .unwrap();
        std::fs::write(pkg.join("s.cue"), "package shared\n\nns: \"imported\"\n").unwrap();
        let a = src(
            "b.cue",
            "import \"example.com/shared\"\n\nbundle: {apiVersion: \"v1alpha1\", name: \"x\", instances: a: {module: url: \"file://m\", namespace: shared.ns}}\n",
        );
        let opts = LoadOptions {
            workdir: Some(dir.path().to_path_buf()),
            ..LoadOptions::default()
        };
        let bundle = load_bundle(&[a], &opts).unwrap();
        assert_eq!(bundle.instances[0].namespace, "imported");
    }

    /// A bundle of `n` instances of the module in `dir`, each in its own namespace.
    fn bundle_of(dir: &Path, n: usize) -> Bundle {
        let mut text =
            String::from("bundle: {apiVersion: \"v1alpha1\", name: \"perf\", instances: {\n");
        for i in 0..n {
            text.push_str(&format!(
                "app{i}: {{module: url: \"file://{}\", namespace: \"ns{i}\", values: {{}}}}\n",
                dir.display()
            ));
        }
        text.push_str("}}\n");
        load_bundle(&[src("bundle.cue", &text)], &LoadOptions::default()).unwrap()
    }

    #[test]
    fn each_instance_is_handed_over_on_its_build_thread_in_declaration_order() {
        let parent = tempfile::tempdir().unwrap();
        let (dir, _) = crate::blueprint::init("app", parent.path()).unwrap();
        let bundle = bundle_of(&dir, 5);
        let cache = Arc::new(ParseCache::new());
        let whole = build_all_sharing(&bundle, "main", 2, None, &cache).unwrap();
        let main_thread = std::thread::current().id();
        let each = build_all_each(&bundle, "main", 2, None, &cache, &|built| {
            (
                built.name.clone(),
                built.into_objects(),
                std::thread::current().id() != main_thread,
            )
        })
        .unwrap();
        let names: Vec<_> = each.iter().map(|(n, _, _)| n.as_str()).collect();
        assert_eq!(names, ["app0", "app1", "app2", "app3", "app4"]);
        assert!(each.iter().all(|(_, _, on_pool)| *on_pool));
        for (built, (_, objects, _)) in whole.into_iter().zip(each) {
            assert_eq!(built.into_objects(), objects);
        }
        // An instance that fails fails the run, whatever `each` makes of the others.
        let mut broken = bundle_of(&dir, 3);
        broken.instances[1].module_dir = Some(parent.path().join("missing"));
        let err = build_all_each(&broken, "main", 2, None, &cache, &|b| b.name).unwrap_err();
        assert!(err.to_string().contains("app1"), "{err}");
    }

    #[test]
    fn instances_of_one_module_parse_it_once_per_run() {
        let parent = tempfile::tempdir().unwrap();
        let (dir, _) = crate::blueprint::init("app", parent.path()).unwrap();
        // A module used once is not cached.
        let alone_cache = Arc::new(ParseCache::new());
        let single = build_all_sharing(&bundle_of(&dir, 1), "main", 1, None, &alone_cache).unwrap();
        assert_eq!(alone_cache.computed() + alone_cache.reused(), 0);
        let two = Arc::new(ParseCache::new());
        build_all_sharing(&bundle_of(&dir, 2), "main", 1, None, &two).unwrap();
        let many = Arc::new(ParseCache::new());
        let built = build_all_sharing(&bundle_of(&dir, 6), "main", 3, None, &many).unwrap();
        assert_eq!(built.len(), 6);
        // Each instance differs only in its overlaid values (the same here) and tags, which
        // are applied after parsing: six instances parse exactly what two parse, and every
        // instance after the first reuses what it needs of it. An instance whose thread built
        // one before takes that one's import closure and compiled imports, and asks the cache
        // for its main files only. How many instances do so depends on how the work is split
        // between the threads, so the least an instance reuses is that of such a load,
        // measured here on one thread.
        assert!(two.computed() > 0 && two.reused() > 0);
        assert_eq!(many.computed(), two.computed());
        // The vendored fields the module uses are parsed when first used, once for the run,
        // on whichever thread gets there first.
        assert!(two.fields_parsed() > 0);
        assert_eq!(many.fields_parsed(), two.fields_parsed());
        assert_eq!(alone_cache.fields_parsed(), 0);
        // And the files are read from the disk once for the run: six instances on one thread
        // read what two read (on more threads, a file may be read once by each thread that
        // asks for it at the same moment).
        let serial = Arc::new(ParseCache::new());
        build_all_sharing(&bundle_of(&dir, 6), "main", 1, None, &serial).unwrap();
        assert!(two.files_read() > 0);
        assert_eq!(serial.files_read(), two.files_read());
        assert!(many.files_read() <= 3 * two.files_read());
        let through_share = Arc::new(ParseCache::new());
        let pair = bundle_of(&dir, 2);
        let mut share = ImportShare::new();
        // What the cache answered by the time each instance is built (a load also asks it
        // again for what it computed itself: a file's skim, the trees of its unlabelled
        // declarations).
        let (mut reused, mut computed) = (Vec::new(), Vec::new());
        for bi in &pair.instances {
            build_instance_at(
                bi,
                &dir,
                DEVEL_VERSION,
                "main",
                Some(&through_share),
                &mut share,
            )
            .unwrap();
            reused.push(through_share.reused());
            computed.push(through_share.computed());
        }
        assert_eq!(share.reused(), 1, "the second instance takes the imports");
        assert_eq!(share.resolved(), 1, "and the import closure");
        assert_eq!(
            computed[1], computed[0],
            "the second instance parses nothing"
        );
        let least = reused[1] - reused[0];
        assert!(least > 0 && least <= two.computed(), "{least} {two:?}");
        assert!(many.reused() >= 5 * least, "{many:?} vs {least}");
        for (i, b) in built.iter().enumerate() {
            assert_eq!(b.namespace, format!("ns{i}"));
            assert_eq!(b.apply_sets.len(), single[0].apply_sets.len());
        }
        // Sharing changes nothing: the same instance built alone renders the same objects.
        let alone = build_instance(&bundle_of(&dir, 6).instances[5], "main").unwrap();
        assert_eq!(
            crate::render::objects_yaml(&alone.objects()),
            crate::render::objects_yaml(&built[5].objects())
        );
    }

    #[test]
    fn schema_errors_name_the_path() {
        let dir = tempfile::tempdir().unwrap();
        let a = src(
            "b.cue",
            r#"bundle: {apiVersion: "v1alpha1", name: "Demo", instances: x: {module: url: "http://x", namespace: "n"}}"#,
        );
        let opts = LoadOptions {
            workdir: Some(dir.path().to_path_buf()),
            ..LoadOptions::default()
        };
        let err = load_bundle(&[a], &opts).unwrap_err().to_string();
        assert!(err.contains("bundle.name"), "{err}");
        assert!(err.contains("bundle.instances.x.module.url"), "{err}");
    }
}
