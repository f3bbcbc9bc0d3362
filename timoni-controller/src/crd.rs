//! The `Project` CustomResourceDefinition as checked in at `config/crd/projects.timoni.sh.yaml`
//! and printed by `crdgen`: kube-derive's output of `timoni_core::project::api::Project`, as YAML.

use kube::CustomResourceExt;
use timoni_core::project::api::Project;

/// The CRD as YAML.
pub fn crd_yaml() -> String {
    let crd = Project::crd();
    // Serializing a CRD (plain maps and strings) cannot fail.
    serde_yaml_ng::to_string(&crd).unwrap_or_default()
}
