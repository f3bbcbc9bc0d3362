//! Schema vendoring for Timoni modules: CUE definitions generated into a module's `cue.mod/gen`.
//!
//! * [`crd`]: `timoni mod vendor crd`, Kubernetes CustomResourceDefinitions (their OpenAPI v3
//!   schemas) to `cue.mod/gen/<group>/<kind>/<version>/types_gen.cue`.
//! * [`schema`]: the OpenAPI/JSON-Schema to CUE expression conversion both use.
//! * [`k8s`]: the Kubernetes API definitions (`_definitions.json` of the `kubernetes-validate`
//!   package) to the `k8s.io/api/...` and `k8s.io/apimachinery/...` CUE packages.
//! * [`k8s_artifact`]: the registry artifacts of those packages that `timoni mod vendor k8s -v`
//!   pulls, as Timoni publishes them.
//!
//! Nothing here prints; the writers return the paths they wrote.

pub mod crd;
pub mod k8s;
pub mod k8s_artifact;
pub mod schema;
