//! Timoni semantics over `cue-eval`: modules, instances, bundles, runtimes and projects, the apply
//! engine and OCI distribution. The cluster and the registry are reached through small traits, and
//! nothing here prints. Not implemented yet beyond re-exporting the CUE front end.

pub use cue_eval;
