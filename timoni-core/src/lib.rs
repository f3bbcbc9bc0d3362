//! Timoni semantics over `cue-eval`: modules, instances, bundles, runtimes and projects, the apply
//! engine and OCI distribution. The cluster and the registry are reached through small traits, and
//! nothing here prints: every operation returns data for a frontend to render.
//!
//! Today: [`fmt`], the engine of `timoni fmt`; the offline workflow: [`instance`] (build a
//! module instance with [`values`] merged and the [`schema`] injected, objects checked by
//! [`meta`]), [`render`] (Timoni's YAML and JSON output), [`bundle`] and [`runtime`]; [`oci`],
//! OCI distribution of modules and artifacts; [`krm`], Timoni as a KRM function (`timoni fn`);
//! [`vendor`], the schema generators of `timoni mod
//! vendor crd` and of the Kubernetes schemas of the starter blueprint; and [`blueprint`], the
//! embedded starter of `timoni mod init`; and [`cluster`], the cluster side: the `Cluster` trait
//! over `kube`, the apply engine, the inventory Secret, prune, delete, status and list.

pub mod blueprint;
pub mod bundle;
pub mod cluster;
pub mod config_doc;
pub mod error;
pub mod fmt;
pub mod instance;
pub mod krm;
pub mod meta;
pub mod oci;
pub mod project;
pub mod render;
pub mod runtime;
pub mod schema;
pub mod values;
pub mod vendor;

pub use cue_eval;
pub use error::{CueError, Error, Result};
