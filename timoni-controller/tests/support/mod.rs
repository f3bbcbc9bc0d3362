//! Helpers shared by the controller's integration tests: an envtest API server with the CRD
//! and the in-process controller, Project artifacts of the test module, and loopback cloud
//! stand-ins.

#[path = "../../../timoni-core/tests/common/envtest.rs"]
pub mod envtest;

pub mod cloud;
pub mod cluster;
pub mod project;
