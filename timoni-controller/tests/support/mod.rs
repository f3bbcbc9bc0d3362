//! Helpers shared by the controller's integration tests (loopback cloud stand-ins).

pub mod cloud;
