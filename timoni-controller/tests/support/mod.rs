//! Helpers shared by the controller's integration tests: the in-process controller against an
//! envtest API server, and loopback cloud stand-ins.

#[path = "../../../timoni-core/tests/common/envtest.rs"]
pub mod envtest;

pub mod cloud;
pub mod cluster;
