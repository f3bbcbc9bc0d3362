//! `timoni project bootstrap`: the objects that subscribe a cluster to a Project (its namespace,
//! the registry pull Secret, the ServiceAccount the controller impersonates, a RoleBinding of a
//! ClusterRole to it, and the `Project` itself), and the controller's installation: the `Project`
//! CRD (waited for until Established) and the `timoni-controller` module embedded in the binary
//! (`timoni-core/blueprints/controller`), applied with the apply engine as the instance
//! `timoni-controller` in `timoni-system`.
//!
//! The builders are pure; the install functions go through [`Cluster`].

use std::path::Path;
use std::time::{Duration, Instant};

use base64::Engine;
use cue_eval::encode::{Data, Field};
use include_dir::{Dir, include_dir};
use kube::CustomResourceExt;
use serde_json::{Value, json};

use super::{AdminError, cerr};
use crate::cluster::apply::{ApplyReport, ApplyRequest, Event, apply_instance};
use crate::cluster::inventory::{LABEL_CREATED_BY, ModuleReference};
use crate::cluster::{ApplyOptions, Cluster, ObjRef, Object};
use crate::instance::BuildOptions;
use crate::oci::{ArtifactUrl, Registry};
use crate::project::api::{
    CLUSTER_ANNOTATION, GROUP_ANNOTATION, Project, ProjectSource, ProjectSpec, parse_duration,
};

static CONTROLLER: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/blueprints/controller");

/// The controller's namespace.
pub const CONTROLLER_NAMESPACE: &str = "timoni-system";
/// The controller's instance, ServiceAccount, ClusterRole(Binding) and Deployment name.
pub const CONTROLLER_NAME: &str = "timoni-controller";
/// The module path of the embedded controller module (recorded in its inventory).
pub const CONTROLLER_MODULE: &str = "timoni.sh/timoni-controller";
/// The controller image repository used when no image is given.
pub const DEFAULT_CONTROLLER_REPOSITORY: &str = "ghcr.io/timoni-rs/timoni-controller";
/// The name of the Project CRD.
pub const CRD_NAME: &str = "projects.projects.timoni.sh";

/// The files of the embedded controller module, as (relative path, contents), sorted by path.
pub fn controller_module_files() -> Vec<(&'static Path, &'static [u8])> {
    crate::blueprint::embedded_files(&CONTROLLER)
}

/// Writes the embedded controller module into `dest` (created if needed).
pub fn write_controller_module(dest: &Path) -> Result<(), AdminError> {
    for (rel, contents) in controller_module_files() {
        crate::blueprint::write_file(&dest.join(rel), contents).map_err(AdminError::Io)?;
    }
    Ok(())
}

/// An image reference split into what the module's `image` value holds.
#[derive(Clone, Debug, PartialEq, Eq, serde::Deserialize)]
pub struct ImageRef {
    pub repository: String,
    pub tag: String,
    pub digest: String,
}

/// Splits `repo[:tag][@digest]` (a registry port is not a tag); the tag defaults to
/// `default_tag`.
pub fn split_image(image: &str, default_tag: &str) -> Result<ImageRef, AdminError> {
    let bad = |why: &str| AdminError::Invalid(format!("invalid controller image {image:?}: {why}"));
    if image.is_empty() || image.chars().any(char::is_whitespace) {
        return Err(bad("expected repository[:tag][@digest]"));
    }
    let (rest, digest) = match image.split_once('@') {
        Some((r, d)) if d.contains(':') => (r, d.to_string()),
        Some(_) => return Err(bad("the digest must be algorithm:hex")),
        None => (image, String::new()),
    };
    let slash = rest.rfind('/').map_or(0, |i| i + 1);
    let (repository, tag) = match rest[slash..].rfind(':') {
        Some(i) => (&rest[..slash + i], &rest[slash + i + 1..]),
        None => (rest, default_tag),
    };
    if repository.is_empty() || repository.ends_with('/') || tag.is_empty() {
        return Err(bad("expected repository[:tag][@digest]"));
    }
    Ok(ImageRef {
        repository: repository.to_string(),
        tag: tag.to_string(),
        digest,
    })
}

impl ImageRef {
    /// `repository:tag`, the reference a registry resolves to a digest.
    pub fn tagged(&self) -> String {
        format!("{}:{}", self.repository, self.tag)
    }

    /// The reference the Deployment names: `repository@digest` when the digest is known.
    pub fn reference(&self) -> String {
        if self.digest.is_empty() {
            self.tagged()
        } else {
            format!("{}@{}", self.repository, self.digest)
        }
    }
}

/// The image the embedded controller module names by default: the one its `values.cue` holds
/// (written by `controller-image --values-file` when a release is pushed).
pub fn default_image() -> Result<ImageRef, AdminError> {
    let text = CONTROLLER
        .get_file("values.cue")
        .and_then(|f| f.contents_utf8())
        .unwrap_or_default();
    image_of_values(text)
}

/// The `values.image` of a controller module's `values.cue`, defaults taken.
pub fn image_of_values(text: &str) -> Result<ImageRef, AdminError> {
    let bad = |e: cue_eval::Error| {
        AdminError::Invalid(format!("the controller module's values.cue: {e}"))
    };
    cue_eval::Context::new()
        .compile_file("values.cue", text)
        .and_then(|v| v.lookup("values.image"))
        .and_then(|v| v.decode::<ImageRef>())
        .map_err(bad)
}

/// The image to install: `given` (`--controller-image`) else the module's default. Either may
/// lack a digest; [`resolve_image`] then asks its registry.
pub fn chosen_image(given: Option<&str>, version: &str) -> Result<ImageRef, AdminError> {
    match given {
        Some(image) => split_image(image, version),
        None => default_image(),
    }
}

/// The OCI URL of `image`'s tag, for a registry client.
pub fn image_url(image: &ImageRef) -> Result<ArtifactUrl, AdminError> {
    ArtifactUrl::parse(&format!("oci://{}", image.tagged())).map_err(|e| {
        AdminError::Invalid(format!("invalid controller image {}: {e}", image.tagged()))
    })
}

/// `image` with its digest: kept when it has one, else the digest `registry` answers for its
/// tag. A tag is never installed as such: a Deployment naming a tag runs whatever the tag
/// points to when a node pulls it, so the installed controller could differ from node to node.
pub fn resolve_image(image: &ImageRef, registry: &dyn Registry) -> Result<ImageRef, AdminError> {
    if !image.digest.is_empty() {
        return Ok(image.clone());
    }
    let url = image_url(image)?;
    let digest = registry.manifest_digest(&url).map_err(|e| {
        AdminError::Registry(format!(
            "cannot resolve the controller image {} to a digest: {e}; give it by digest with --controller-image {}@sha256:<digest>",
            image.tagged(),
            image.repository
        ))
    })?;
    Ok(ImageRef {
        digest,
        ..image.clone()
    })
}

/// The controller's installation.
#[derive(Clone, Debug)]
pub struct ControllerInstall {
    /// The image; installed by digest when it has one (see [`resolve_image`]).
    pub image: ImageRef,
    /// The version recorded as the module version (the CLI's version).
    pub version: String,
    /// Wait for the Deployment to become ready.
    pub wait: bool,
    pub timeout: Duration,
    pub poll: Duration,
}

/// The values given to the controller module for `image`.
pub fn controller_values(image: &ImageRef) -> Data {
    Data::Struct(vec![Field::new(
        "image",
        Data::Struct(vec![
            Field::new("repository", Data::string(&image.repository)),
            Field::new("tag", Data::string(&image.tag)),
            Field::new("digest", Data::string(&image.digest)),
        ]),
    )])
}

/// The controller module's `values.cue` naming `image` as the default: what the image tool
/// writes into `timoni-core/blueprints/controller/values.cue` with the digest the registry
/// answered when it pushed, so that `project bootstrap` installs that image by digest.
pub fn image_values_file(image: &ImageRef) -> String {
    let q = |s: &str| serde_json::to_string(s).unwrap_or_default();
    format!(
        "// Default values. Timoni merges the user-supplied values over these ones;
// they must be concrete and this file must have no imports.
//
// The image is the one `controller-image --push ... --values-file` pushed last, with the
// digest the registry answered; `timoni project bootstrap` installs it by digest unless
// --controller-image is given.

@if(!debug)

package main

values: {{
	image: {{
		repository: *{} | string
		tag:        *{} | string
		digest:     *{} | string
	}}
}}
",
        q(&image.repository),
        q(&image.tag),
        q(&image.digest)
    )
}

/// The apply request of the controller module written in `module_dir`.
pub fn controller_request(
    module_dir: &Path,
    install: &ControllerInstall,
) -> Result<ApplyRequest, AdminError> {
    let mut build = BuildOptions::new(
        CONTROLLER_NAME,
        CONTROLLER_NAMESPACE,
        &module_dir.display().to_string(),
    );
    build.module_version = install.version.clone();
    build.values_data = vec![controller_values(&install.image)];
    let mut req = ApplyRequest::new(build);
    req.module = ModuleReference {
        name: CONTROLLER_MODULE.into(),
        repository: CONTROLLER_MODULE.into(),
        version: install.version.clone(),
        ..Default::default()
    };
    req.wait = install.wait;
    req.timeout = install.timeout;
    req.poll = install.poll;
    Ok(req)
}

/// Applies the embedded controller module (from a temporary copy) with the apply engine.
pub fn install_controller(
    cluster: &dyn Cluster,
    install: &ControllerInstall,
    events: &mut dyn FnMut(&Event),
) -> Result<ApplyReport, AdminError> {
    let tmp = tempfile::tempdir()
        .map_err(|e| AdminError::Io(format!("creating a temporary directory: {e}")))?;
    write_controller_module(tmp.path())?;
    let req = controller_request(tmp.path(), install)?;
    apply_instance(cluster, &req, events).map_err(AdminError::Apply)
}

/// The Project CRD as a JSON object.
pub fn crd_object() -> Object {
    serde_json::to_value(Project::crd()).unwrap_or(Value::Null)
}

fn crd_ref() -> ObjRef {
    ObjRef {
        api_version: "apiextensions.k8s.io/v1".into(),
        kind: "CustomResourceDefinition".into(),
        namespace: String::new(),
        name: CRD_NAME.into(),
    }
}

fn deployment_ref() -> ObjRef {
    ObjRef {
        api_version: "apps/v1".into(),
        kind: "Deployment".into(),
        namespace: CONTROLLER_NAMESPACE.into(),
        name: CONTROLLER_NAME.into(),
    }
}

/// Whether the CRD and the controller Deployment exist.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ControllerState {
    pub crd: bool,
    pub deployment: bool,
}

impl ControllerState {
    pub fn installed(&self) -> bool {
        self.crd && self.deployment
    }
}

/// Looks for the CRD and the controller Deployment.
pub fn controller_state(cluster: &dyn Cluster) -> Result<ControllerState, AdminError> {
    let crd = crd_ref();
    let dep = deployment_ref();
    Ok(ControllerState {
        crd: cluster
            .get(&crd)
            .map_err(cerr(format!("reading {crd}")))?
            .is_some(),
        deployment: cluster
            .get(&dep)
            .map_err(cerr(format!("reading {dep}")))?
            .is_some(),
    })
}

fn established(crd: &Object) -> bool {
    crd.pointer("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|cs| {
            cs.iter().any(|c| {
                c.get("type").and_then(Value::as_str) == Some("Established")
                    && c.get("status").and_then(Value::as_str) == Some("True")
            })
        })
}

/// Applies the Project CRD and waits until it is Established.
pub fn install_crd(
    cluster: &dyn Cluster,
    timeout: Duration,
    poll: Duration,
) -> Result<(), AdminError> {
    let r = crd_ref();
    cluster
        .apply(&crd_object(), ApplyOptions::default())
        .map_err(cerr(format!("applying {r}")))?;
    let start = Instant::now();
    loop {
        let live = cluster.get(&r).map_err(cerr(format!("reading {r}")))?;
        if live.as_ref().is_some_and(established) {
            return Ok(());
        }
        if start.elapsed() >= timeout {
            return Err(AdminError::Timeout(format!(
                "timeout waiting for {r} to become Established"
            )));
        }
        std::thread::sleep(poll);
    }
}

/// What `timoni project bootstrap` creates in the Project's namespace.
#[derive(Clone, Debug, Default)]
pub struct BootstrapSpec {
    /// The Project name (the `name` of the Project file).
    pub project: String,
    pub namespace: String,
    pub service_account: String,
    /// The ClusterRole bound to the service account in the namespace.
    pub role: String,
    /// `oci://host/repo`, without tag.
    pub repository: String,
    pub tag: String,
    /// The Project file inside the artifact.
    pub path: String,
    /// The `runtime.timoni.sh/cluster` annotation (none when empty).
    pub cluster_name: String,
    /// The `runtime.timoni.sh/group` annotation (none when empty).
    pub cluster_group: String,
    /// `spec.interval`, if given.
    pub interval: Option<String>,
    /// `user:password` for the repository's registry: a pull Secret is created.
    pub creds: Option<String>,
}

/// The name of the pull Secret of a Project.
pub fn pull_secret_name(project: &str) -> String {
    format!("{project}-registry")
}

/// The name of the RoleBinding of `role` to `service_account`.
pub fn role_binding_name(service_account: &str, role: &str) -> String {
    format!("{service_account}-{role}")
}

fn dns_label(what: &str, s: &str) -> Result<(), AdminError> {
    let b = s.as_bytes();
    let ok = !b.is_empty()
        && b.len() <= 63
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        && b[0] != b'-'
        && b[b.len() - 1] != b'-';
    if ok {
        Ok(())
    } else {
        Err(AdminError::Invalid(format!(
            "invalid {what} {s:?}: it must be lowercase alphanumerics and '-', starting and ending with an alphanumeric, at most 63 characters"
        )))
    }
}

/// The `.dockerconfigjson` of `user:password` for `registry` (Docker Hub under its legacy key).
pub fn docker_config_json(registry: &str, creds: &str) -> Result<String, AdminError> {
    let Some((user, password)) = creds.split_once(':').filter(|(u, _)| !u.is_empty()) else {
        return Err(AdminError::Invalid(
            "invalid --repository-creds: expected user:password".into(),
        ));
    };
    let key = match registry {
        "docker.io" | "index.docker.io" | "registry-1.docker.io" => "https://index.docker.io/v1/",
        r => r,
    };
    let auth = base64::engine::general_purpose::STANDARD.encode(creds);
    Ok(json!({"auths": {key: {"username": user, "password": password, "auth": auth}}}).to_string())
}

/// The objects bootstrap applies, in order: Namespace, pull Secret (with creds),
/// ServiceAccount, RoleBinding, Project.
pub fn bootstrap_objects(spec: &BootstrapSpec) -> Result<Vec<Object>, AdminError> {
    dns_label("project name", &spec.project)?;
    dns_label("namespace", &spec.namespace)?;
    dns_label("service account", &spec.service_account)?;
    if spec.role.is_empty() {
        return Err(AdminError::Invalid(
            "the service account role is empty".into(),
        ));
    }
    let url = ArtifactUrl::parse(&spec.repository)
        .map_err(|e| AdminError::Invalid(format!("invalid --repository: {e}")))?;
    if url.tag.is_some() || url.digest.is_some() {
        return Err(AdminError::Invalid(format!(
            "invalid --repository {:?}: give the tag with --tag, not in the URL",
            spec.repository
        )));
    }
    let tag_ok = spec.tag.len() <= 128
        && spec.tag.bytes().enumerate().all(|(i, c)| {
            c.is_ascii_alphanumeric() || c == b'_' || i > 0 && (c == b'.' || c == b'-')
        });
    if spec.tag.is_empty() || !tag_ok {
        return Err(AdminError::Invalid(format!(
            "invalid --tag {:?}: expected [a-zA-Z0-9_][a-zA-Z0-9._-]{{0,127}}",
            spec.tag
        )));
    }
    if let Some(i) = &spec.interval {
        parse_duration(i).map_err(|e| AdminError::Invalid(format!("invalid --interval: {e}")))?;
    }
    let labels = json!({LABEL_CREATED_BY: "timoni"});
    let ns = &spec.namespace;
    let mut out = vec![json!({
        "apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": ns, "labels": labels},
    })];
    let mut sa = json!({
        "apiVersion": "v1", "kind": "ServiceAccount",
        "metadata": {"name": spec.service_account, "namespace": ns, "labels": labels},
    });
    if let Some(creds) = &spec.creds {
        let secret = pull_secret_name(&spec.project);
        let config = docker_config_json(&url.registry, creds)?;
        out.push(json!({
            "apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": secret, "namespace": ns, "labels": labels},
            "type": "kubernetes.io/dockerconfigjson",
            "data": {".dockerconfigjson": base64::engine::general_purpose::STANDARD.encode(config)},
        }));
        sa["imagePullSecrets"] = json!([{"name": secret}]);
    }
    out.push(sa);
    out.push(json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
        "metadata": {
            "name": role_binding_name(&spec.service_account, &spec.role),
            "namespace": ns, "labels": labels,
        },
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": spec.role},
        "subjects": [{"kind": "ServiceAccount", "name": spec.service_account, "namespace": ns}],
    }));
    let mut project = Project::new(
        &spec.project,
        ProjectSpec {
            service_account_name: spec.service_account.clone(),
            source: ProjectSource {
                repository: url.to_string(),
                tag: Some(spec.tag.clone()),
                path: Some(spec.path.clone()),
            },
            interval: spec.interval.clone(),
            ..Default::default()
        },
    );
    project.metadata.namespace = Some(ns.clone());
    let annotations: std::collections::BTreeMap<String, String> = [
        (CLUSTER_ANNOTATION, &spec.cluster_name),
        (GROUP_ANNOTATION, &spec.cluster_group),
    ]
    .into_iter()
    .filter(|(_, v)| !v.is_empty())
    .map(|(k, v)| (k.to_string(), v.clone()))
    .collect();
    if !annotations.is_empty() {
        project.metadata.annotations = Some(annotations);
    }
    let mut p = serde_json::to_value(&project)
        .map_err(|e| AdminError::Invalid(format!("encoding the Project: {e}")))?;
    if let Some(m) = p.as_object_mut() {
        m.remove("status");
    }
    out.push(p);
    Ok(out)
}

/// Server-side applies each object in order; `applied` is called after each one.
pub fn apply_objects(
    cluster: &dyn Cluster,
    objects: &[Object],
    applied: &mut dyn FnMut(&ObjRef),
) -> Result<(), AdminError> {
    for o in objects {
        let r = ObjRef::of(o);
        cluster
            .apply(o, ApplyOptions::default())
            .map_err(cerr(format!("applying {r}")))?;
        applied(&r);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> BootstrapSpec {
        BootstrapSpec {
            project: "my-project".into(),
            namespace: "my-ns".into(),
            service_account: "my-sa".into(),
            role: "admin".into(),
            repository: "oci://127.0.0.1:5000/projects/my-project".into(),
            tag: "production".into(),
            path: "project.cue".into(),
            cluster_name: "k8s-prod-1".into(),
            cluster_group: "production".into(),
            interval: Some("1m".into()),
            creds: Some("user:pa:ss".into()),
        }
    }

    #[test]
    fn the_controller_module_has_the_module_contract() {
        let files: Vec<String> = controller_module_files()
            .iter()
            .map(|(p, _)| p.display().to_string())
            .collect();
        for want in [
            "cue.mod/module.cue",
            "timoni.cue",
            "values.cue",
            "templates/config.cue",
            "templates/deployment.cue",
            "templates/rbac.cue",
        ] {
            assert!(files.contains(&want.to_string()), "{want} in {files:?}");
        }
    }

    #[test]
    fn the_default_image_is_the_one_the_image_tool_recorded() {
        // The checked-in values are in the format the image tool writes; no image was pushed
        // from this checkout, so they name the tag without a digest (resolved at install).
        let checked_in = include_str!("../../../blueprints/controller/values.cue");
        let unreleased = ImageRef {
            repository: DEFAULT_CONTROLLER_REPOSITORY.into(),
            tag: "latest".into(),
            digest: String::new(),
        };
        assert_eq!(checked_in, image_values_file(&unreleased));
        assert_eq!(default_image().unwrap(), unreleased);
        assert_eq!(chosen_image(None, "0.1.0").unwrap(), unreleased);
        // After a push: the digest the registry answered; --controller-image still wins.
        let pushed = ImageRef {
            repository: "registry.example:5000/timoni/controller".into(),
            tag: "v1.2.3".into(),
            digest: "sha256:0123abcd".into(),
        };
        assert_eq!(
            image_of_values(&image_values_file(&pushed)).unwrap(),
            pushed
        );
        assert_eq!(
            chosen_image(Some("other.example/c"), "0.1.0").unwrap(),
            ImageRef {
                repository: "other.example/c".into(),
                tag: "0.1.0".into(),
                digest: String::new(),
            }
        );
    }

    /// A registry that knows the digest of one tag.
    struct OneTag(&'static str, &'static str);

    impl Registry for OneTag {
        fn push_blob(&self, _: &ArtifactUrl, _: &str, _: &[u8]) -> crate::oci::Result<()> {
            unreachable!("resolving pushes nothing")
        }
        fn push_manifest(
            &self,
            _: &ArtifactUrl,
            _: &str,
            _: &[u8],
            _: &str,
        ) -> crate::oci::Result<()> {
            unreachable!("resolving pushes nothing")
        }
        fn pull_manifest(&self, _: &ArtifactUrl) -> crate::oci::Result<Vec<u8>> {
            unreachable!("a HEAD request is enough")
        }
        fn manifest_digest(&self, url: &ArtifactUrl) -> crate::oci::Result<String> {
            if url.tag.as_deref() == Some(self.0) {
                Ok(self.1.into())
            } else {
                Err(crate::oci::OciError::Registry {
                    op: "HEAD manifest",
                    reference: url.to_string(),
                    message: "manifest unknown".into(),
                })
            }
        }
        fn pull_blob(
            &self,
            _: &ArtifactUrl,
            _: &str,
            _: u64,
            _: u64,
        ) -> crate::oci::Result<Vec<u8>> {
            unreachable!("a HEAD request is enough")
        }
        fn list_tags(&self, _: &ArtifactUrl) -> crate::oci::Result<Vec<String>> {
            unreachable!("a HEAD request is enough")
        }
    }

    #[test]
    fn a_tag_is_resolved_to_its_digest_and_a_digest_is_kept() {
        let registry = OneTag("v2", "sha256:feed");
        let tagged = split_image("localhost:5000/c:v2", "1.0").unwrap();
        let resolved = resolve_image(&tagged, &registry).unwrap();
        assert_eq!(resolved.digest, "sha256:feed");
        assert_eq!(resolved.reference(), "localhost:5000/c@sha256:feed");
        let pinned = split_image("localhost:5000/c:v9@sha256:abc", "1.0").unwrap();
        assert_eq!(resolve_image(&pinned, &registry).unwrap(), pinned);
        let err = resolve_image(
            &split_image("localhost:5000/c:v3", "1.0").unwrap(),
            &registry,
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.starts_with(
                "cannot resolve the controller image localhost:5000/c:v3 to a digest: "
            ) && err.ends_with(
                "give it by digest with --controller-image localhost:5000/c@sha256:<digest>"
            ),
            "{err}"
        );
    }

    #[test]
    fn the_controller_module_builds_its_objects() {
        let tmp = tempfile::tempdir().unwrap();
        write_controller_module(tmp.path()).unwrap();
        let install = ControllerInstall {
            image: split_image(
                "registry.example:5000/timoni/controller@sha256:abc",
                "0.1.0",
            )
            .unwrap(),
            version: "0.1.0".into(),
            wait: false,
            timeout: Duration::from_secs(1),
            poll: Duration::from_millis(10),
        };
        let req = controller_request(tmp.path(), &install).unwrap();
        assert_eq!(req.module.repository, CONTROLLER_MODULE);
        let built = crate::instance::build(&req.build).unwrap();
        let objects: Vec<Value> = built
            .objects()
            .iter()
            .map(|d| serde_json::from_str(&cue_eval::encode::to_json_compact(d)).unwrap())
            .collect();
        let kinds: Vec<String> = objects.iter().map(|o| ObjRef::of(o).to_string()).collect();
        assert_eq!(
            kinds,
            [
                "Namespace/timoni-system",
                "ServiceAccount/timoni-system/timoni-controller",
                "ClusterRole/timoni-controller",
                "ClusterRoleBinding/timoni-controller",
                "Deployment/timoni-system/timoni-controller",
            ]
        );
        let dep = &objects[4];
        let c = &dep["spec"]["template"]["spec"]["containers"][0];
        assert_eq!(
            c["image"],
            "registry.example:5000/timoni/controller@sha256:abc"
        );
        // Flags of the `timoni-controller` binary.
        assert_eq!(
            c["args"],
            json!(["--cache-dir=/tmp/cache", "--leader-elect"])
        );
        assert_eq!(c["livenessProbe"]["httpGet"]["path"], "/healthz");
        assert_eq!(c["readinessProbe"]["httpGet"]["path"], "/readyz");
        assert_eq!(c["ports"][0]["containerPort"], 8080);
        assert_eq!(
            dep["spec"]["template"]["spec"]["securityContext"]["runAsNonRoot"],
            true
        );
        assert_eq!(
            dep["metadata"]["labels"]["app.kubernetes.io/version"],
            "0.1.0"
        );
        let rules = objects[2]["rules"].as_array().unwrap();
        let allows = |group: &str, resource: &str, verb: &str| {
            rules.iter().any(|r| {
                r["apiGroups"].as_array().unwrap().contains(&json!(group))
                    && r["resources"]
                        .as_array()
                        .unwrap()
                        .contains(&json!(resource))
                    && r["verbs"].as_array().unwrap().contains(&json!(verb))
            })
        };
        for (g, r, v) in [
            ("projects.timoni.sh", "projects", "watch"),
            ("projects.timoni.sh", "projects/status", "patch"),
            ("projects.timoni.sh", "projects/finalizers", "update"),
            ("", "events", "create"),
            ("coordination.k8s.io", "leases", "update"),
            ("", "secrets", "get"),
            ("", "serviceaccounts", "impersonate"),
            ("", "users", "impersonate"),
            ("", "groups", "impersonate"),
        ] {
            assert!(allows(g, r, v), "{g} {r} {v}");
        }
        assert!(!allows("", "secrets", "create"));
    }

    #[test]
    fn images_split_into_repository_tag_and_digest() {
        let img = |r: &str, t: &str, d: &str| ImageRef {
            repository: r.into(),
            tag: t.into(),
            digest: d.into(),
        };
        assert_eq!(
            split_image("ghcr.io/x/c", "1.0").unwrap(),
            img("ghcr.io/x/c", "1.0", "")
        );
        assert_eq!(
            split_image("localhost:5000/c:v2", "1.0").unwrap(),
            img("localhost:5000/c", "v2", "")
        );
        assert_eq!(
            split_image("localhost:5000/c@sha256:ab", "1.0").unwrap(),
            img("localhost:5000/c", "1.0", "sha256:ab")
        );
        for bad in ["", "a b", "c:", "x@y", ":tag"] {
            assert!(split_image(bad, "1.0").is_err(), "{bad}");
        }
    }

    #[test]
    fn bootstrap_builds_the_namespace_secret_account_binding_and_project() {
        let objects = bootstrap_objects(&spec()).unwrap();
        let refs: Vec<String> = objects.iter().map(|o| ObjRef::of(o).to_string()).collect();
        assert_eq!(
            refs,
            [
                "Namespace/my-ns",
                "Secret/my-ns/my-project-registry",
                "ServiceAccount/my-ns/my-sa",
                "RoleBinding/my-ns/my-sa-admin",
                "Project/my-ns/my-project",
            ]
        );
        let secret = &objects[1];
        assert_eq!(secret["type"], "kubernetes.io/dockerconfigjson");
        let config = base64::engine::general_purpose::STANDARD
            .decode(secret["data"][".dockerconfigjson"].as_str().unwrap())
            .unwrap();
        let config: Value = serde_json::from_slice(&config).unwrap();
        let auth = &config["auths"]["127.0.0.1:5000"];
        assert_eq!(auth["username"], "user");
        assert_eq!(auth["password"], "pa:ss");
        assert_eq!(auth["auth"], "dXNlcjpwYTpzcw==");
        assert_eq!(
            objects[2]["imagePullSecrets"],
            json!([{"name": "my-project-registry"}])
        );
        assert_eq!(objects[3]["roleRef"]["name"], "admin");
        assert_eq!(objects[3]["subjects"][0]["name"], "my-sa");
        let p: Project = serde_json::from_value(objects[4].clone()).unwrap();
        assert_eq!(p.spec.service_account_name, "my-sa");
        assert_eq!(
            p.spec.source.repository,
            "oci://127.0.0.1:5000/projects/my-project"
        );
        assert_eq!(p.spec.tag(), "production");
        assert_eq!(p.spec.interval.as_deref(), Some("1m"));
        let ann = p.metadata.annotations.unwrap();
        assert_eq!(ann[CLUSTER_ANNOTATION], "k8s-prod-1");
        assert_eq!(ann[GROUP_ANNOTATION], "production");
        assert!(objects[4].get("status").is_none());
    }

    #[test]
    fn without_creds_there_is_no_secret_and_empty_annotations_are_left_out() {
        let mut s = spec();
        s.creds = None;
        s.cluster_group = String::new();
        let objects = bootstrap_objects(&s).unwrap();
        assert_eq!(objects.len(), 4);
        assert!(objects[1].get("imagePullSecrets").is_none());
        assert_eq!(
            objects[3]["metadata"]["annotations"],
            json!({CLUSTER_ANNOTATION: "k8s-prod-1"}),
            "no group annotation without a group"
        );
    }

    #[test]
    fn bad_bootstrap_input_is_refused_clearly() {
        type Change = fn(&mut BootstrapSpec);
        let cases: Vec<(Change, &str)> = vec![
            (|s| s.namespace = "My_NS".into(), "invalid namespace"),
            (
                |s| s.repository = "https://x/y".into(),
                "invalid --repository",
            ),
            (|s| s.repository = "oci://x/y:v1".into(), "not in the URL"),
            (|s| s.tag = "a b".into(), "invalid --tag"),
            (|s| s.interval = Some("5".into()), "invalid --interval"),
            (|s| s.creds = Some("token".into()), "expected user:password"),
            (|s| s.role = String::new(), "role is empty"),
        ];
        for (change, want) in cases {
            let mut s = spec();
            change(&mut s);
            let err = bootstrap_objects(&s).unwrap_err().to_string();
            assert!(err.contains(want), "{err:?} should contain {want:?}");
        }
    }

    #[test]
    fn docker_hub_uses_its_legacy_key() {
        let c = docker_config_json("docker.io", "u:p").unwrap();
        assert!(c.contains("https://index.docker.io/v1/"), "{c}");
    }

    #[test]
    fn the_crd_object_is_the_project_crd() {
        let crd = crd_object();
        assert_eq!(crd["kind"], "CustomResourceDefinition");
        assert_eq!(crd["metadata"]["name"], CRD_NAME);
        assert!(!established(&crd));
        let ready = json!({"status": {"conditions": [{"type": "Established", "status": "True"}]}});
        assert!(established(&ready));
    }
}
