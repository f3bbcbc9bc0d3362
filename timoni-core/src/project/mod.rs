//! Timoni Projects (seed 000): a set of bundles published as one OCI artifact and deployed to
//! each cluster that subscribes to it with a `Project` resource. [`api`] is the resource,
//! [`definition`] the `project.cue` file and its component DAG, [`source`] publishing and
//! fetching the artifact, [`plan`] the decisions of a run, and [`reconcile`] applying the components to a cluster, in parallel
//! where `needs` allows. The controller and the `timoni project` commands are thin adapters over
//! these.

pub mod admin;
pub mod api;
pub mod definition;
pub mod plan;
pub mod reconcile;
pub mod source;
