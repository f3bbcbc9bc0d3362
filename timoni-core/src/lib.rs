//! Timoni semantics over `cue-eval`: modules, instances, bundles, runtimes and projects, the apply
//! engine and OCI distribution. The cluster and the registry are reached through small traits, and
//! nothing here prints: every operation returns data for a frontend to render.
//!
//! Today: [`fmt`], the engine of `timoni fmt`; [`oci`], OCI distribution of modules and
//! artifacts; [`vendor`], the schema generators of `timoni mod vendor crd` and of the Kubernetes
//! schemas of the starter blueprint; and [`blueprint`], the embedded starter of `timoni mod init`.

pub mod blueprint;
pub mod fmt;
pub mod oci;
pub mod vendor;

pub use cue_eval;
