//! `spec.verify` of a Project against real servers (an envtest kube-apiserver and Debian's
//! docker-registry, as in `projects.rs`): an artifact signed with the key whose public half is
//! in the Project's Secret is applied; pointed at an unsigned tag, or verified with a Secret
//! holding another key, the Project is `Ready=False` reason `VerificationFailed` with a
//! `ReconciliationFailed` Event, and what was applied stays as it was. Keyless: the trust root
//! in the Secret and `matchOIDCIdentity`, with the Sigstore stand-in of
//! `timoni-core/tests/support/sigstore.rs`, in cosign's `.sig` image and in the bundle form
//! attached through the OCI referrers tag. Skips loudly without the servers, as the other
//! controller tests do.

#[path = "../../timoni-core/tests/support/sigstore.rs"]
mod fake;
#[path = "../../timoni-core/tests/support/registry.rs"]
mod registry;
#[allow(dead_code)]
mod support;

use std::collections::BTreeMap;
use std::path::Path;

use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Secret, ServiceAccount};
use k8s_openapi::api::events::v1::Event;
use k8s_openapi::api::rbac::v1::ClusterRoleBinding;
use kube::Api;
use kube::api::ListParams;
use serde_json::json;
use support::cluster::{Cluster, wait_for};
use timoni_core::oci::sign::{self, SigningKey};
use timoni_core::oci::{self, ArtifactUrl, ConnectOptions, Registry};
use timoni_core::project::api::{Project, ProjectStatus};

const NS: &str = "team";

impl Cluster {
    fn status(&self) -> ProjectStatus {
        let api: Api<Project> = Api::namespaced(self.client.clone(), NS);
        self.rt
            .block_on(api.get_opt("solo"))
            .unwrap()
            .and_then(|p| p.status)
            .unwrap_or_default()
    }

    /// Waits until `Ready` has `status` and `reason` with the attempted digest `digest`.
    fn wait_ready(&self, status: &str, reason: &str, digest: &str) -> ProjectStatus {
        wait_for(&format!("Ready={status} {reason} at {digest}"), || {
            let st = self.status();
            let ready = st.conditions.iter().find(|c| c.type_ == "Ready")?;
            (ready.status == status
                && ready.reason == reason
                && st.last_attempted_digest.as_deref() == Some(digest))
            .then_some(st.clone())
        })
    }

    fn config_map(&self, ns: &str, name: &str) -> Option<BTreeMap<String, String>> {
        let api: Api<ConfigMap> = Api::namespaced(self.client.clone(), ns);
        self.rt
            .block_on(api.get_opt(name))
            .unwrap()
            .map(|c| c.data.unwrap_or_default())
    }

    fn failure_notes(&self) -> Vec<String> {
        let api: Api<Event> = Api::namespaced(self.client.clone(), NS);
        self.rt
            .block_on(api.list(&ListParams::default()))
            .unwrap()
            .items
            .into_iter()
            .filter(|e| e.reason.as_deref() == Some("ReconciliationFailed"))
            .filter_map(|e| e.note)
            .collect()
    }

    fn project(&self, url: &str, tag: &str, secret: &str) {
        self.project_with(
            url,
            tag,
            json!({"provider": "cosign", "secretRef": {"name": secret}}),
        );
    }

    fn project_with(&self, url: &str, tag: &str, verify: serde_json::Value) {
        self.apply::<Project>(json!({
            "apiVersion": "projects.timoni.sh/v1alpha1", "kind": "Project",
            "metadata": {"name": "solo", "namespace": NS,
                "annotations": {"runtime.timoni.sh/cluster": "test"}},
            "spec": {"serviceAccountName": "deployer", "source": {"repository": url, "tag": tag},
                "interval": "1s", "timeout": "30s",
                "retry": {"minBackoff": "500ms", "maxBackoff": "2s"},
                "verify": verify}
        }));
    }
}

/// A Project of one component: the `cm` module at `version`, from `module` (the body of the
/// instance's `module` field; the module is also shipped inside the artifact).
fn project_dir(version: &str, module: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let src = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/testdata/modules/cm"
    ));
    let m = dir.path().join("modules/cm");
    std::fs::create_dir_all(m.join("cue.mod")).unwrap();
    for f in ["timoni.cue", "values.cue", "cue.mod/module.cue"] {
        std::fs::copy(src.join(f), m.join(f)).unwrap();
    }
    std::fs::write(
        dir.path().join("project.cue"),
        "project: {\n\tapiVersion: \"v1alpha1\"\n\tname: \"solo\"\n\tcomponents: web: bundle: [\"bundles/web.cue\"]\n}\n",
    )
    .unwrap();
    std::fs::create_dir_all(dir.path().join("bundles")).unwrap();
    std::fs::write(
        dir.path().join("bundles/web.cue"),
        format!(
            r#"bundle: {{
	apiVersion: "v1alpha1"
	name: "web"
	instances: "web": {{
		module: {{{module}}}
		namespace: "web"
		values: version: "{version}"
	}}
}}
"#
        ),
    )
    .unwrap();
    dir
}

const LOCAL_MODULE: &str = r#"url: "file://../modules/cm""#;

/// Pushes the Project at `version` under `tag`, signed with `key` when given; returns the digest.
fn push(
    url: &ArtifactUrl,
    version: &str,
    module: &str,
    tag: &str,
    key: Option<&SigningKey>,
) -> String {
    let connect = ConnectOptions::default();
    let registry = oci::connect(url, &connect).unwrap();
    let dir = project_dir(version, module);
    let digest = oci::push_artifact(
        &registry,
        dir.path(),
        url,
        &[tag.to_string()],
        timoni_core::project::source::CONTENT_TYPE_PROJECT,
        &BTreeMap::new(),
        None,
        false,
    )
    .unwrap()
    .digest;
    if let Some(key) = key {
        sign::sign(&url.with_digest(&digest), key, &connect).unwrap();
    }
    digest
}

#[test]
fn a_project_with_verify_applies_signed_artifacts_only() {
    let Some(reg) = registry::start(None) else {
        return;
    };
    let Some(c) = Cluster::start(|_| {}) else {
        return;
    };
    let keys = sign::generate_key_pair(b"pw").unwrap();
    let key = SigningKey::from_encrypted_pem(keys.private_key.as_bytes(), b"pw", "k").unwrap();
    let other = sign::generate_key_pair(b"pw").unwrap();
    let url_text = reg.url("team/solo");
    let url = ArtifactUrl::parse(&url_text).unwrap();
    let signed = push(&url, "v1", LOCAL_MODULE, "signed", Some(&key));
    let unsigned = push(&url, "v2", LOCAL_MODULE, "unsigned", None);

    c.apply::<Namespace>(
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}),
    );
    c.apply::<ServiceAccount>(json!({"apiVersion": "v1", "kind": "ServiceAccount",
        "metadata": {"name": "deployer", "namespace": NS}}));
    c.apply::<ClusterRoleBinding>(json!({"apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding", "metadata": {"name": "team-deployer"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
        "subjects": [{"kind": "ServiceAccount", "name": "deployer", "namespace": NS}]}));
    for (name, public) in [
        ("cosign-keys", &keys.public_key),
        ("other-keys", &other.public_key),
    ] {
        c.apply::<Secret>(json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": name, "namespace": NS},
            "stringData": {"cosign.pub": public}}));
    }

    // Signed with the Secret's key: applied.
    c.project(&url_text, "signed", "cosign-keys");
    let st = c.wait_ready("True", "ReconciliationSucceeded", &signed);
    assert_eq!(st.last_applied_digest.as_deref(), Some(signed.as_str()));
    assert_eq!(c.config_map("web", "web-main").unwrap()["version"], "v1");

    // An unsigned tag: refused before it is pulled; the applied version stays.
    c.project(&url_text, "unsigned", "cosign-keys");
    let st = c.wait_ready("False", "VerificationFailed", &unsigned);
    let ready = st.conditions.iter().find(|c| c.type_ == "Ready").unwrap();
    assert_eq!(
        ready.message,
        format!("verifying {url_text}@{unsigned} failed: no signatures found")
    );
    assert_eq!(st.last_applied_digest.as_deref(), Some(signed.as_str()));
    assert_eq!(c.config_map("web", "web-main").unwrap()["version"], "v1");
    let note = format!("VerificationFailed: {}", ready.message);
    wait_for("the VerificationFailed Event", || {
        c.failure_notes().contains(&note).then_some(())
    });

    // The signed tag with a Secret holding another key: refused too.
    c.project(&url_text, "signed", "other-keys");
    let st = wait_for("the foreign key to be refused", || {
        let st = c.status();
        let ready = st.conditions.iter().find(|c| c.type_ == "Ready")?;
        (ready.reason == "VerificationFailed" && ready.message.contains("no matching signatures"))
            .then_some(st.clone())
    });
    let ready = st.conditions.iter().find(|c| c.type_ == "Ready").unwrap();
    assert_eq!(
        ready.message,
        format!(
            "verifying {url_text}@{signed} failed: no matching signatures: none of the 1 signature(s) verifies with other-keys/cosign.pub"
        )
    );
    assert_eq!(c.config_map("web", "web-main").unwrap()["version"], "v1");

    // Modules pulled from a registry are verified too: a signed one is applied, an unsigned
    // one fails its component with VerificationFailed before it is built.
    let module_url = reg.url("modules/cm");
    let modules = ArtifactUrl::parse(&module_url).unwrap();
    let registry = oci::connect(&modules, &ConnectOptions::default()).unwrap();
    let src = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/testdata/modules/cm"
    ));
    for (version, signed) in [("0.1.0", true), ("0.2.0", false)] {
        let pushed = oci::push_module(
            &registry,
            src,
            &modules,
            version,
            false,
            &BTreeMap::new(),
            None,
            false,
        )
        .unwrap();
        if signed {
            sign::sign(
                &modules.with_digest(&pushed.digest),
                &key,
                &ConnectOptions::default(),
            )
            .unwrap();
        }
    }
    let from_registry = |v: &str| format!(r#"url: "{module_url}", version: "{v}""#);
    let good = push(&url, "v3", &from_registry("0.1.0"), "modules", Some(&key));
    c.project(&url_text, "modules", "cosign-keys");
    c.wait_ready("True", "ReconciliationSucceeded", &good);
    assert_eq!(c.config_map("web", "web-main").unwrap()["version"], "v3");
    let bad = push(&url, "v4", &from_registry("0.2.0"), "modules", Some(&key));
    let st = c.wait_ready("False", "VerificationFailed", &bad);
    let ready = st.conditions.iter().find(|c| c.type_ == "Ready").unwrap();
    assert!(
        ready
            .message
            .contains(&format!("verifying {module_url}@sha256:"))
            && ready.message.ends_with("failed: no signatures found"),
        "{}",
        ready.message
    );
    assert_eq!(c.config_map("web", "web-main").unwrap()["version"], "v3");
}

#[test]
fn a_project_with_keyless_verify_matches_the_oidc_identity_against_the_secrets_trust_root() {
    let Some(reg) = registry::start(None) else {
        return;
    };
    let Some(c) = Cluster::start(|_| {}) else {
        return;
    };
    let url_text = reg.url("team/keyless");
    let url = ArtifactUrl::parse(&url_text).unwrap();
    let digest = push(&url, "v1", LOCAL_MODULE, "latest", None);
    let sigstore = fake::FakeSigstore::new();
    let registry = oci::OciClientRegistry::new(
        &url,
        &oci::RegistryOptions {
            insecure: false,
            credentials: oci::Credentials::Anonymous,
        },
    )
    .unwrap();
    let payload = fake::simple_signing_payload(&url, &digest);
    let workflow = "https://github.com/org/fleet/.github/workflows/release.yaml@refs/heads/main";
    let actions = "https://token.actions.githubusercontent.com";
    let annotations = sigstore.sign(&payload, workflow, actions);
    fake::push_signature_image(&registry, &url, &digest, &payload, &annotations);

    c.apply::<Namespace>(
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}),
    );
    c.apply::<ServiceAccount>(json!({"apiVersion": "v1", "kind": "ServiceAccount",
        "metadata": {"name": "deployer", "namespace": NS}}));
    c.apply::<ClusterRoleBinding>(json!({"apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding", "metadata": {"name": "team-deployer"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
        "subjects": [{"kind": "ServiceAccount", "name": "deployer", "namespace": NS}]}));
    c.apply::<Secret>(json!({"apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "sigstore", "namespace": NS},
        "stringData": {"trusted_root.json": sigstore.root_json()}}));
    let verify = |subject: &str| {
        json!({"provider": "cosign", "secretRef": {"name": "sigstore"},
            "matchOIDCIdentity": [{"issuer": "^https://token\\.actions\\.githubusercontent\\.com$", "subject": subject}]})
    };

    c.project_with(
        &url_text,
        "latest",
        verify("^https://github.com/org/fleet/"),
    );
    c.wait_ready("True", "ReconciliationSucceeded", &digest);
    assert_eq!(c.config_map("web", "web-main").unwrap()["version"], "v1");

    c.project_with(&url_text, "latest", verify("^https://github.com/evil/"));
    let st = wait_for("another identity to be refused", || {
        let st = c.status();
        let ready = st.conditions.iter().find(|c| c.type_ == "Ready")?;
        (ready.reason == "VerificationFailed").then_some(st.clone())
    });
    let ready = st.conditions.iter().find(|c| c.type_ == "Ready").unwrap();
    assert!(
        ready
            .message
            .contains("no matching signatures: none of the 1 signature(s) has a trusted certificate for identity matching /^https://github.com/evil//"),
        "{}",
        ready.message
    );

    // Signed only in the bundle form cosign v2.5+/v3 attaches through the referrers tag.
    let d2 = push(&url, "v2", LOCAL_MODULE, "v2", None);
    let size = registry.pull_manifest(&url.with_digest(&d2)).unwrap().len();
    let bundle = sigstore.bundle(&d2, workflow, actions);
    fake::attach_bundles(&registry, &url, &d2, size, &[bundle]);
    c.project_with(&url_text, "v2", verify("^https://github.com/org/fleet/"));
    c.wait_ready("True", "ReconciliationSucceeded", &d2);
    assert_eq!(c.config_map("web", "web-main").unwrap()["version"], "v2");
}
