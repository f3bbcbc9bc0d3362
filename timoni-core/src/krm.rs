//! Timoni as a KRM function (the kustomize/kpt functions specification): `timoni fn` reads a
//! `ResourceList` (`config.kubernetes.io/v1`), builds the Timoni instance or bundle its
//! `functionConfig` describes with the existing instance and bundle builders, and returns the
//! input items followed by the generated objects; `timoni fn vet` checks every item against CUE
//! schemas. Problems become structured results (severity, message, resource reference, field
//! path, file).
//!
//! The function config is one of:
//!
//! ```yaml
//! apiVersion: timoni.sh/v1alpha1
//! kind: Instance
//! metadata: {name: podinfo, namespace: apps}   # namespace: or metadata.namespace, else default
//! module: {url: oci://ghcr.io/org/podinfo, version: 6.5.0, digest: sha256:...}  # or file://, a path
//! values: {replicas: 2}
//! ---
//! apiVersion: timoni.sh/v1alpha1
//! kind: Bundle
//! metadata: {name: apps}                 # the bundle name, unless name: is given
//! instances: {podinfo: {module: {url: ...}, namespace: apps, values: {}}}   # as in #Bundle
//! ```
//!
//! Modules come through a [`ModuleFetch`]; the CLI passes one that reads the local OCI cache only
//! unless network access is allowed. The output is deterministic: the same input gives the same
//! bytes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use cue_eval::decode;
use cue_eval::encode::{Data, Field};

use crate::bundle::{self, LoadOptions, SourceFile};
use crate::error::Error;
use crate::instance::{self, BuildOptions, BuiltInstance};
use crate::meta::{get, get_str};
use crate::oci::ModuleFetch;
use crate::render;

/// `apiVersion` of a `ResourceList`.
pub const RESOURCE_LIST_API_VERSION: &str = "config.kubernetes.io/v1";
/// `apiVersion` of Timoni's function configs.
pub const CONFIG_API_VERSION: &str = "timoni.sh/v1alpha1";
/// Annotations the functions specification and kustomize use for files and order.
pub const PATH_ANNOTATION: &str = "config.kubernetes.io/path";
pub const INDEX_ANNOTATION: &str = "config.kubernetes.io/index";
pub const INTERNAL_PATH_ANNOTATION: &str = "internal.config.kubernetes.io/path";
pub const INTERNAL_INDEX_ANNOTATION: &str = "internal.config.kubernetes.io/index";
/// kustomize's origin annotation: where a generated object comes from.
pub const ORIGIN_ANNOTATION: &str = "config.kubernetes.io/origin";

/// How bad a result is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    Error,
    Warning,
    Info,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        }
    }
}

/// The object a result is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceRef {
    pub api_version: String,
    pub kind: String,
    pub name: String,
    pub namespace: Option<String>,
}

impl ResourceRef {
    /// The reference of an object (empty strings for missing fields).
    pub fn of(obj: &Data) -> ResourceRef {
        let s = |p: &[&str]| get_str(obj, p).unwrap_or_default().to_string();
        ResourceRef {
            api_version: s(&["apiVersion"]),
            kind: s(&["kind"]),
            name: s(&["metadata", "name"]),
            namespace: get_str(obj, &["metadata", "namespace"])
                .filter(|n| !n.is_empty())
                .map(str::to_string),
        }
    }
}

/// One entry of `results`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KrmResult {
    pub severity: Severity,
    pub message: String,
    pub resource_ref: Option<ResourceRef>,
    /// The field path inside the resource (`spec.replicas`).
    pub field: Option<String>,
    /// The file of the resource and its index in that file, from its annotations.
    pub file: Option<(String, Option<i64>)>,
}

impl KrmResult {
    fn error(message: impl Into<String>) -> KrmResult {
        KrmResult {
            severity: Severity::Error,
            message: message.into(),
            resource_ref: None,
            field: None,
            file: None,
        }
    }

    fn about(mut self, obj: &Data) -> KrmResult {
        self.resource_ref = Some(ResourceRef::of(obj));
        self.file = file_of(obj);
        self
    }

    fn at(mut self, field: &str) -> KrmResult {
        self.field = Some(field.to_string());
        self
    }

    fn to_data(&self) -> Data {
        let mut f = vec![
            Field::new("message", Data::string(self.message.clone())),
            Field::new("severity", Data::string(self.severity.as_str())),
        ];
        if let Some(r) = &self.resource_ref {
            let mut rf = vec![
                Field::new("apiVersion", Data::string(r.api_version.clone())),
                Field::new("kind", Data::string(r.kind.clone())),
                Field::new("name", Data::string(r.name.clone())),
            ];
            if let Some(ns) = &r.namespace {
                rf.push(Field::new("namespace", Data::string(ns.clone())));
            }
            f.push(Field::new("resourceRef", Data::Struct(rf)));
        }
        if let Some(p) = &self.field {
            f.push(Field::new(
                "field",
                Data::Struct(vec![Field::new("path", Data::string(p.clone()))]),
            ));
        }
        if let Some((path, index)) = &self.file {
            let mut ff = vec![Field::new("path", Data::string(path.clone()))];
            if let Some(i) = index {
                ff.push(Field::new("index", Data::int(i.to_string())));
            }
            f.push(Field::new("file", Data::Struct(ff)));
        }
        Data::Struct(f)
    }
}

/// The file annotation of an object and its index, if it has them.
fn file_of(obj: &Data) -> Option<(String, Option<i64>)> {
    let ann = |k: &str| get_str(obj, &["metadata", "annotations", k]);
    let path = ann(INTERNAL_PATH_ANNOTATION).or(ann(PATH_ANNOTATION))?;
    let index = ann(INTERNAL_INDEX_ANNOTATION)
        .or(ann(INDEX_ANNOTATION))
        .and_then(|i| i.parse().ok());
    Some((path.to_string(), index))
}

/// A parsed `ResourceList`.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceList {
    pub items: Vec<Data>,
    pub function_config: Option<Data>,
}

/// Parses a `ResourceList` (YAML or JSON).
pub fn parse_resource_list(text: &str) -> Result<ResourceList, String> {
    let docs = decode::yaml(text)
        .map_err(|e| format!("reading the ResourceList: {}", e.in_file("stdin")))?;
    let Some(doc) = docs.into_iter().next() else {
        return Err("reading the ResourceList: the input is empty".into());
    };
    if !matches!(doc, Data::Struct(_)) {
        return Err("reading the ResourceList: the input is not a mapping".into());
    }
    let kind = get_str(&doc, &["kind"]).unwrap_or_default();
    let api = get_str(&doc, &["apiVersion"]).unwrap_or_default();
    if kind != "ResourceList" || !api.starts_with("config.kubernetes.io/") {
        return Err(format!(
            "the input is not a ResourceList: apiVersion {api:?}, kind {kind:?} (expected {RESOURCE_LIST_API_VERSION}, ResourceList)"
        ));
    }
    let items = match get(&doc, &["items"]) {
        None | Some(Data::Null) => Vec::new(),
        Some(Data::List(items)) => items.clone(),
        Some(_) => return Err("ResourceList.items: must be a list".into()),
    };
    if let Some(i) = items.iter().position(|i| !matches!(i, Data::Struct(_))) {
        return Err(format!("ResourceList.items.{i}: must be an object"));
    }
    let function_config = get(&doc, &["functionConfig"])
        .filter(|d| !matches!(d, Data::Null))
        .cloned();
    Ok(ResourceList {
        items,
        function_config,
    })
}

/// What a function returns: the items to write back and the results.
#[derive(Debug, Clone, PartialEq)]
pub struct FnOutput {
    pub items: Vec<Data>,
    pub results: Vec<KrmResult>,
}

impl FnOutput {
    /// Whether a result is an error (the function then exits non-zero).
    pub fn failed(&self) -> bool {
        self.results.iter().any(|r| r.severity == Severity::Error)
    }
}

/// The output `ResourceList` as YAML, keys in the order `render` writes objects.
pub fn render_resource_list(function_config: Option<&Data>, output: &FnOutput) -> String {
    let mut f = vec![
        Field::new("apiVersion", Data::string(RESOURCE_LIST_API_VERSION)),
        Field::new("kind", Data::string("ResourceList")),
        Field::new("items", Data::List(output.items.clone())),
    ];
    if let Some(fc) = function_config {
        f.push(Field::new("functionConfig", fc.clone()));
    }
    if !output.results.is_empty() {
        f.push(Field::new(
            "results",
            Data::List(output.results.iter().map(KrmResult::to_data).collect()),
        ));
    }
    render::object_yaml(&Data::Struct(f))
}

/// An output for input that could not even be read.
pub fn input_error(message: String) -> FnOutput {
    FnOutput {
        items: Vec::new(),
        results: vec![KrmResult::error(message)],
    }
}

/// Options of [`run`].
pub struct FnOptions<'a> {
    /// Fetches `oci://` modules (the cache only, unless network access is allowed).
    pub fetcher: &'a dyn ModuleFetch,
    /// The directory relative module paths are resolved against (the working directory).
    pub base_dir: PathBuf,
}

/// A function config read: an instance or a bundle.
enum Config {
    Instance(InstanceConfig),
    Bundle(Data),
}

struct InstanceConfig {
    name: String,
    namespace: String,
    url: String,
    version: Option<String>,
    digest: Option<String>,
    package: String,
    values: Data,
}

/// A function config problem, as the one result it becomes.
type ConfigResult<T> = Result<T, Box<KrmResult>>;

fn config_error(fc: &Data, field: &str, msg: impl Into<String>) -> Box<KrmResult> {
    Box::new(
        KrmResult::error(format!("functionConfig.{field}: {}", msg.into()))
            .about(fc)
            .at(field),
    )
}

fn string_field(fc: &Data, path: &[&str]) -> ConfigResult<Option<String>> {
    match get(fc, path) {
        None | Some(Data::Null) => Ok(None),
        Some(Data::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(config_error(fc, &path.join("."), "must be a string")),
    }
}

fn read_config(fc: &Data) -> ConfigResult<Config> {
    let api = get_str(fc, &["apiVersion"]).unwrap_or_default();
    let kind = get_str(fc, &["kind"]).unwrap_or_default();
    if api != CONFIG_API_VERSION {
        return Err(config_error(
            fc,
            "apiVersion",
            format!("must be {CONFIG_API_VERSION}, not {api:?}"),
        ));
    }
    let Data::Struct(fields) = fc else {
        return Err(config_error(fc, "", "must be an object"));
    };
    let allowed: &[&str] = match kind {
        "Instance" => &[
            "apiVersion",
            "kind",
            "metadata",
            "module",
            "namespace",
            "package",
            "values",
        ],
        "Bundle" => &["apiVersion", "kind", "metadata", "name", "instances"],
        _ => {
            return Err(config_error(
                fc,
                "kind",
                format!("must be Instance or Bundle, not {kind:?}"),
            ));
        }
    };
    if let Some(f) = fields.iter().find(|f| !allowed.contains(&f.name.as_str())) {
        return Err(config_error(
            fc,
            &f.name,
            format!(
                "field not allowed in a {kind} (allowed: {})",
                allowed.join(", ")
            ),
        ));
    }
    if kind == "Bundle" {
        let name = match string_field(fc, &["name"])? {
            Some(n) => n,
            None => string_field(fc, &["metadata", "name"])?.unwrap_or_default(),
        };
        let bundle = Data::Struct(vec![Field::new(
            "bundle",
            Data::Struct(vec![
                Field::new("apiVersion", Data::string("v1alpha1")),
                Field::new("name", Data::string(name)),
                Field::new(
                    "instances",
                    get(fc, &["instances"])
                        .cloned()
                        .unwrap_or(Data::Struct(Vec::new())),
                ),
            ]),
        )]);
        return Ok(Config::Bundle(bundle));
    }
    let name = string_field(fc, &["metadata", "name"])?
        .filter(|n| !n.is_empty())
        .ok_or_else(|| config_error(fc, "metadata.name", "the instance name is required"))?;
    let namespace = match string_field(fc, &["namespace"])? {
        Some(n) => n,
        None => string_field(fc, &["metadata", "namespace"])?.unwrap_or_else(|| "default".into()),
    };
    if let Some(m) = get(fc, &["module"])
        && let Data::Struct(mf) = m
        && let Some(f) = mf
            .iter()
            .find(|f| !["url", "version", "digest"].contains(&f.name.as_str()))
    {
        return Err(config_error(
            fc,
            &format!("module.{}", f.name),
            "field not allowed (allowed: url, version, digest)",
        ));
    }
    let url = string_field(fc, &["module", "url"])?
        .filter(|u| !u.is_empty())
        .ok_or_else(|| config_error(fc, "module.url", "the module URL is required"))?;
    let values = match get(fc, &["values"]) {
        None | Some(Data::Null) => Data::Struct(Vec::new()),
        Some(v @ Data::Struct(_)) => v.clone(),
        Some(_) => return Err(config_error(fc, "values", "must be an object")),
    };
    Ok(Config::Instance(InstanceConfig {
        name,
        namespace,
        url,
        version: string_field(fc, &["module", "version"])?,
        digest: string_field(fc, &["module", "digest"])?,
        package: string_field(fc, &["package"])?.unwrap_or_else(|| "main".into()),
        values,
    }))
}

/// A local module path resolved against `base` (`file://` stripped); `oci://` kept.
fn resolve_url(url: &str, base: &Path) -> String {
    if url.starts_with("oci://") {
        return url.to_string();
    }
    let path = Path::new(url.strip_prefix("file://").unwrap_or(url));
    if path.is_absolute() {
        path.display().to_string()
    } else {
        base.join(path).display().to_string()
    }
}

/// Results of a build error: one per invalid object, else one. Fetch errors point at the module
/// URL (`module_field`); CUE errors in the values at that value's path in the function config.
fn build_errors(e: Error, fc: &Data, module_field: &str) -> Vec<KrmResult> {
    match e {
        Error::Objects(errs) => errs
            .into_iter()
            .map(|m| KrmResult::error(m).about(fc))
            .collect(),
        Error::Fetch(m) | Error::Verification(m) => {
            vec![KrmResult::error(m).about(fc).at(module_field)]
        }
        other => {
            let msg = other.to_string();
            let r = KrmResult::error(msg.clone()).about(fc);
            let head = msg.split(':').next().unwrap_or("");
            let is_path = !head.contains(char::is_whitespace);
            match head.strip_prefix("values.") {
                Some(_) if is_path && module_field == "module.url" => vec![r.at(head)],
                _ => vec![r],
            }
        }
    }
}

/// `timoni fn`: builds the function config's instance or bundle and appends its objects to the
/// items. On any error the items are returned unchanged with the results.
pub fn run(list: &ResourceList, opts: &FnOptions<'_>) -> FnOutput {
    let fail = |results: Vec<KrmResult>| FnOutput {
        items: list.items.clone(),
        results,
    };
    let Some(fc) = &list.function_config else {
        return fail(vec![KrmResult::error(
            "the ResourceList has no functionConfig: give a timoni.sh/v1alpha1 Instance or Bundle",
        )]);
    };
    let config = match read_config(fc) {
        Ok(c) => c,
        Err(r) => return fail(vec![*r]),
    };
    let built: Vec<(BuiltInstance, String, String)> = match config {
        Config::Instance(ic) => {
            let module = resolve_url(&ic.url, &opts.base_dir);
            let mut bo = BuildOptions::new(&ic.name, &ic.namespace, &module);
            bo.package = ic.package.clone();
            bo.values_data = vec![ic.values.clone()];
            bo.version = ic.version.clone();
            bo.digest = ic.digest.clone();
            match instance::build_with(&bo, Some(opts.fetcher)) {
                Ok(b) => {
                    let reference = ic.digest.clone().or(ic.version.clone()).unwrap_or_default();
                    vec![(b, ic.url.clone(), reference)]
                }
                Err(e) => return fail(build_errors(e, fc, "module.url")),
            }
        }
        Config::Bundle(data) => {
            let b = match load_function_bundle(&data, opts) {
                Ok(b) => b,
                Err(e) => return fail(build_errors(e, fc, "instances")),
            };
            match bundle::build_all_with(&b, "main", 1, Some(opts.fetcher)) {
                Ok(built) => built
                    .into_iter()
                    .zip(&b.instances)
                    .map(|(bi, i)| {
                        let reference = match (&i.digest, i.module_dir.is_some()) {
                            (_, true) => String::new(),
                            (Some(d), _) => d.clone(),
                            (None, _) => i.version.clone(),
                        };
                        (bi, i.url.clone(), reference)
                    })
                    .collect(),
                Err(e) => return fail(build_errors(e, fc, "instances")),
            }
        }
    };
    let mut items = list.items.clone();
    let configured_in = file_of(fc).map(|(p, _)| p);
    for (inst, url, reference) in &built {
        let mut objects = inst.objects();
        render::sort_for_apply(&mut objects);
        let with_ns = render::spans_namespaces(&objects);
        for o in objects {
            let path = format!(
                "timoni/{}/{}",
                inst.name,
                render::resource_file_name(&o, with_ns)
            );
            let origin = origin(fc, configured_in.as_deref(), url, reference);
            items.push(annotate(
                o,
                &[
                    (INDEX_ANNOTATION, "0".to_string()),
                    (INTERNAL_INDEX_ANNOTATION, "0".to_string()),
                    (PATH_ANNOTATION, path.clone()),
                    (INTERNAL_PATH_ANNOTATION, path),
                    (ORIGIN_ANNOTATION, origin),
                ],
            ));
        }
    }
    FnOutput {
        items,
        results: Vec::new(),
    }
}

/// The origin annotation of a generated object, in kustomize's `Origin` fields.
fn origin(fc: &Data, configured_in: Option<&str>, url: &str, reference: &str) -> String {
    let mut out = String::new();
    if let Some(p) = configured_in {
        out.push_str(&format!("configuredIn: {p}\n"));
    }
    out.push_str("configuredBy:\n");
    out.push_str(&format!("  apiVersion: {CONFIG_API_VERSION}\n"));
    let kind = get_str(fc, &["kind"]).unwrap_or_default();
    out.push_str(&format!("  kind: {kind}\n"));
    if let Some(n) = get_str(fc, &["metadata", "name"]) {
        out.push_str(&format!("  name: {n}\n"));
    }
    out.push_str(&format!("repo: {url}\n"));
    if !reference.is_empty() {
        out.push_str(&format!("ref: {reference}\n"));
    }
    out
}

/// Adds annotations to an object (replacing those of the same key).
fn annotate(obj: Data, annotations: &[(&str, String)]) -> Data {
    let Data::Struct(mut fields) = obj else {
        return obj;
    };
    let meta_i = match fields.iter().position(|f| f.name == "metadata") {
        Some(i) => i,
        None => {
            fields.push(Field::new("metadata", Data::Struct(Vec::new())));
            fields.len() - 1
        }
    };
    if let Data::Struct(meta) = &mut fields[meta_i].value {
        let ann_i = match meta.iter().position(|f| f.name == "annotations") {
            Some(i) => i,
            None => {
                meta.push(Field::new("annotations", Data::Struct(Vec::new())));
                meta.len() - 1
            }
        };
        if !matches!(meta[ann_i].value, Data::Struct(_)) {
            meta[ann_i].value = Data::Struct(Vec::new());
        }
        if let Data::Struct(ann) = &mut meta[ann_i].value {
            for (k, v) in annotations {
                ann.retain(|f| f.name != *k);
                ann.push(Field::new(*k, Data::string(v.clone())));
            }
        }
    }
    Data::Struct(fields)
}

/// Where `fn vet` finds schemas: the `cue.mod/gen`, `pkg` and `usr` trees of the function
/// config's modules (an instance's module, or every module of a bundle in declaration order),
/// searched in order, then the Kubernetes schemas embedded in the binary. The sources are
/// returned too: fetched modules live in temporary directories as long as they do.
type SchemaRoots = (Vec<PathBuf>, Vec<instance::ModuleSource>);

fn schema_roots(list: &ResourceList, opts: &FnOptions<'_>) -> Result<SchemaRoots, Vec<KrmResult>> {
    let Some(fc) = &list.function_config else {
        return Ok((Vec::new(), Vec::new()));
    };
    // (module, version, digest, the field path of the module URL in the function config)
    let modules: Vec<(String, Option<String>, Option<String>, String)> = match read_config(fc) {
        Ok(Config::Instance(ic)) => vec![(
            resolve_url(&ic.url, &opts.base_dir),
            ic.version,
            ic.digest,
            "module.url".to_string(),
        )],
        Ok(Config::Bundle(data)) => {
            let b =
                load_function_bundle(&data, opts).map_err(|e| build_errors(e, fc, "instances"))?;
            b.instances
                .into_iter()
                .map(|i| {
                    let module = match &i.module_dir {
                        Some(d) => d.display().to_string(),
                        None => i.url.clone(),
                    };
                    let field = format!("instances.{}.module.url", i.name);
                    (module, Some(i.version), i.digest, field)
                })
                .collect()
        }
        Err(r) => return Err(vec![*r]),
    };
    let mut roots = Vec::new();
    let mut sources = Vec::new();
    for (module, version, digest, field) in modules {
        let src = instance::open_module(
            &module,
            version.as_deref(),
            digest.as_deref(),
            Some(opts.fetcher),
        )
        .map_err(|e| build_errors(e, fc, &field))?;
        let root = src.dir.join("cue.mod");
        roots.extend([root.join("gen"), root.join("pkg"), root.join("usr")]);
        sources.push(src);
    }
    Ok((roots, sources))
}

/// Loads the bundle of a `kind: Bundle` function config with the bundle loader (schema checks,
/// relative `file://` URLs against the working directory).
fn load_function_bundle(data: &Data, opts: &FnOptions<'_>) -> crate::Result<bundle::Bundle> {
    let file = SourceFile {
        path: opts.base_dir.join("functionConfig.cue"),
        text: decode::to_cue_source(data),
    };
    let lo = LoadOptions {
        runtime_values: BTreeMap::new(),
        workdir: Some(opts.base_dir.clone()),
    };
    bundle::load_bundle(&[file], &lo)
}

/// The candidate import paths of the package defining `apiVersion` (Timoni's vendoring
/// layouts): `<group>/<kind>/<version>` for CRDs, `k8s.io/api/<group>/<version>` for Kubernetes.
fn schema_packages(api_version: &str, kind: &str) -> Vec<String> {
    let (group, version) = match api_version.rsplit_once('/') {
        Some((g, v)) => (g, v),
        None => ("", api_version),
    };
    let mut out = Vec::new();
    if !group.is_empty() {
        out.push(format!("{group}/{}/{version}", kind.to_lowercase()));
    }
    match group {
        "" => out.push(format!("k8s.io/api/core/{version}")),
        "apiextensions.k8s.io" => out.push(format!(
            "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/{version}"
        )),
        "apiregistration.k8s.io" => out.push(format!(
            "k8s.io/kube-aggregator/pkg/apis/apiregistration/{version}"
        )),
        g => {
            let short = g.strip_suffix(".k8s.io").unwrap_or(g);
            let short = short.split('.').next().unwrap_or(short);
            out.push(format!("k8s.io/api/{short}/{version}"));
        }
    }
    out
}

/// The `.cue` files of the package at `import_path`: from the first root that has it, else from
/// the embedded starter's `cue.mod/gen`.
fn package_files(import_path: &str, roots: &[PathBuf]) -> Option<Vec<(String, String)>> {
    for root in roots {
        let dir = root.join(import_path);
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut files: Vec<(String, String)> = rd
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "cue") && p.is_file())
            .filter_map(|p| Some((p.display().to_string(), std::fs::read_to_string(&p).ok()?)))
            .collect();
        if !files.is_empty() {
            files.sort();
            return Some(files);
        }
    }
    let prefix = Path::new("cue.mod/gen").join(import_path);
    let files: Vec<(String, String)> = crate::blueprint::starter_files()
        .into_iter()
        .filter(|(p, _)| p.parent() == Some(prefix.as_path()))
        .filter(|(p, _)| p.extension().is_some_and(|x| x == "cue"))
        .map(|(p, c)| {
            (
                p.display().to_string(),
                String::from_utf8_lossy(c).into_owned(),
            )
        })
        .collect();
    (!files.is_empty()).then_some(files)
}

/// `timoni fn vet`: every item checked against the schema of its kind (see [`schema_roots`]). Each violation is an
/// error result with the item's reference and the field path; an item whose kind has no schema
/// is a warning. Items are returned unchanged.
pub fn vet(list: &ResourceList, opts: &FnOptions<'_>) -> FnOutput {
    let mut results = Vec::new();
    let (roots, _sources) = match schema_roots(list, opts) {
        Ok(r) => r,
        Err(errs) => {
            return FnOutput {
                items: list.items.clone(),
                results: errs,
            };
        }
    };
    // One CUE file: `item<i>: <alias>.#<Kind> & <item>` for every item with a schema.
    let mut imports: BTreeMap<String, String> = BTreeMap::new();
    let mut body = String::new();
    let mut checked: BTreeMap<String, usize> = BTreeMap::new();
    for (i, item) in list.items.iter().enumerate() {
        let api = get_str(item, &["apiVersion"]).unwrap_or_default();
        let kind = get_str(item, &["kind"]).unwrap_or_default();
        if api.is_empty() || kind.is_empty() {
            results.push(
                KrmResult::error("the item has no apiVersion or kind")
                    .about(item)
                    .at(if api.is_empty() { "apiVersion" } else { "kind" }),
            );
            continue;
        }
        let def = format!("#{kind}");
        let found = schema_packages(api, kind).into_iter().find(|p| {
            package_files(p, &roots).is_some_and(|files| {
                files
                    .iter()
                    .any(|(_, t)| t.lines().any(|l| l.starts_with(&format!("{def}:"))))
            })
        });
        let Some(pkg) = found else {
            results.push(KrmResult {
                severity: Severity::Warning,
                ..KrmResult::error(format!("no schema found for {api} {kind}: not validated"))
                    .about(item)
            });
            continue;
        };
        let n = imports.len();
        let alias = imports
            .entry(pkg.clone())
            .or_insert_with(|| format!("s{n}"))
            .clone();
        body.push_str(&format!(
            "item{i}: {alias}.{def} & {}\n",
            decode::to_cue_expr(item)
        ));
        checked.insert(format!("item{i}"), i);
    }
    if !checked.is_empty() {
        let mut text = String::from("package vet\n\nimport (\n");
        for (pkg, alias) in &imports {
            text.push_str(&format!("\t{alias} \"{pkg}\"\n"));
        }
        text.push_str(")\n\n");
        text.push_str(&body);
        let loader = |p: &str| -> Result<Vec<(String, String)>, String> {
            package_files(p, &roots).ok_or_else(|| format!("package {p:?} not found"))
        };
        let vet = cue_eval::Context::new()
            .compile_package(&[("vet.cue".to_string(), text)], loader)
            .and_then(|v| v.validate(cue_eval::ValidateOptions::default()));
        match vet {
            Ok(()) => {}
            // Errors outside the items (syntax, imports) are the schemas' own.
            Err(errs) => {
                let mut seen = std::collections::BTreeSet::new();
                for e in errs.errors() {
                    let (head, rest) = match e.path().split_once('.') {
                        Some((h, r)) => (h, r.to_string()),
                        None => (e.path(), String::new()),
                    };
                    let Some(&i) = checked.get(head) else {
                        results.push(KrmResult::error(format!("schema: {}", e.message())));
                        continue;
                    };
                    if !seen.insert((i, rest.clone(), e.message().to_string())) {
                        continue;
                    }
                    let mut r = KrmResult::error(e.message()).about(&list.items[i]);
                    if !rest.is_empty() {
                        r = r.at(&rest);
                    }
                    results.push(r);
                }
            }
        }
    }
    FnOutput {
        items: list.items.clone(),
        results,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_packages_follow_timoni_vendoring_layouts() {
        assert_eq!(schema_packages("v1", "Service"), ["k8s.io/api/core/v1"]);
        assert_eq!(
            schema_packages("apps/v1", "Deployment"),
            ["apps/deployment/v1", "k8s.io/api/apps/v1"]
        );
        assert_eq!(
            schema_packages("rbac.authorization.k8s.io/v1", "Role")[1],
            "k8s.io/api/rbac/v1"
        );
        assert_eq!(
            schema_packages("cert-manager.io/v1", "Certificate")[0],
            "cert-manager.io/certificate/v1"
        );
    }

    #[test]
    fn resource_lists_must_say_what_they_are() {
        let err = parse_resource_list("kind: List\napiVersion: v1\n").unwrap_err();
        assert!(err.contains("not a ResourceList"), "{err}");
        let err = parse_resource_list(
            "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: [1]\n",
        )
        .unwrap_err();
        assert!(err.contains("items.0"), "{err}");
        let ok = parse_resource_list(
            "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n",
        )
        .unwrap();
        assert!(ok.items.is_empty() && ok.function_config.is_none());
    }

    #[test]
    fn annotate_adds_and_replaces() {
        let o = decode::json(r#"{"kind":"A","metadata":{"name":"x","annotations":{"k":"old"}}}"#)
            .unwrap();
        let a = annotate(o, &[("k", "new".into()), ("z", "1".into())]);
        assert_eq!(get_str(&a, &["metadata", "annotations", "k"]), Some("new"));
        assert_eq!(get_str(&a, &["metadata", "annotations", "z"]), Some("1"));
    }
}
