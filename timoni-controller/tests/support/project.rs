//! Project artifacts for the controller tests: a Project directory holding the local module
//! `testdata/modules/cm` (one ConfigMap, ready at once on an API server without controllers)
//! and bundles of it, pushed as a real `project` artifact, so that no module registry is
//! needed.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::Path;

use timoni_core::oci::{self, ArtifactUrl, ConnectOptions};

/// The `cm` module.
pub fn module_dir() -> &'static Path {
    Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/testdata/modules/cm"
    ))
}

/// A Project directory: the `cm` module and `files` (path, text).
pub fn project_dir(files: &[(&str, String)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("modules/cm");
    std::fs::create_dir_all(m.join("cue.mod")).unwrap();
    for f in ["timoni.cue", "values.cue", "cue.mod/module.cue"] {
        std::fs::copy(module_dir().join(f), m.join(f)).unwrap();
    }
    for (path, text) in files {
        let p = dir.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    dir
}

/// Writes `files` as a Project directory and pushes it as `url:latest`; returns the digest.
pub fn publish(files: &[(&str, String)], url: &str) -> String {
    let dir = project_dir(files);
    push(dir.path(), url, &["latest"], None)
}

/// A bundle of one `cm` instance `name` in `namespace` with `version`, and the cluster name
/// from the Project's annotation.
pub fn bundle(name: &str, namespace: &str, version: &str) -> String {
    bundle_of(name, namespace, version, r#"url: "file://../modules/cm""#)
}

/// Like [`bundle`], with `module` as the body of the instance's `module` field.
pub fn bundle_of(name: &str, namespace: &str, version: &str, module: &str) -> String {
    format!(
        r#"bundle: {{
	apiVersion: "v1alpha1"
	name: "{name}"
	instances: "{name}": {{
		module: {{{module}}}
		namespace: "{namespace}"
		values: version: "{version}"
		values: cluster: string @timoni(runtime:string:TIMONI_CLUSTER_NAME)
	}}
}}
"#
    )
}

/// Pushes `dir` to `url` under `tags` without checking it (so that broken Projects can be
/// published too); returns the digest.
pub fn push(dir: &Path, url: &str, tags: &[&str], creds: Option<&str>) -> String {
    let url = ArtifactUrl::parse(url).unwrap();
    let connect = ConnectOptions {
        creds: creds.map(str::to_string),
        ..Default::default()
    };
    let registry = oci::connect(&url, &connect).unwrap();
    let tags: Vec<String> = tags.iter().map(|t| t.to_string()).collect();
    oci::push_artifact(
        &registry,
        dir,
        &url,
        &tags,
        timoni_core::project::source::CONTENT_TYPE_PROJECT,
        &BTreeMap::new(),
        None,
        false,
    )
    .unwrap()
    .digest
}
