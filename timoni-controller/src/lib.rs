//! The `timoni-controller`: reconciles `projects.timoni.sh/v1alpha1` `Project` resources pulled from
//! OCI registries, in the controller-rs shape. Built on `timoni-core`; not implemented yet.
