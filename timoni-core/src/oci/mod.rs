//! OCI distribution of Timoni modules and artifacts: the artifact format of Timoni v0.33
//! (deterministic layers, config blob, manifest and annotations), safe extraction, the layer
//! cache, and the operations behind `timoni mod push|pull|list` and `timoni artifact …`.
//!
//! The registry is reached through the blocking [`Registry`] trait. [`OciClientRegistry`]
//! implements it over the async `oci-client` crate with a private single-threaded tokio runtime,
//! so callers (the CLI, `timoni build`) stay synchronous. Nothing here prints.
//!
//! The entry point for other commands that accept a module URL is [`fetch_module`]: it resolves
//! `oci://host/repo[:tag|@digest]` plus an optional version and digest, pulls the layers through
//! the cache and extracts them into a directory. [`Fetcher`] (behind the [`ModuleFetch`] seam)
//! does so for a URL's registry, or from the cache alone when network access is off. Images can
//! also be written to and read from local OCI layouts and archives ([`write_image`]).
//! Registries of AWS, Google Cloud and Azure can also be logged in to with workload identity
//! ([`cloud`]). Pushed artifacts are signed and verified the way cosign does it ([`sign`]).

mod auth;
mod build;
mod cache;
pub mod cloud;
mod container;
mod error;
mod extract;
mod images;
mod layout;
mod ops;
mod reference;
mod registry;
pub mod sign;

pub use auth::{
    Credentials, RegistryCredentials, docker_config_path, login, logout, resolve_credentials,
};
pub use build::{
    Descriptor, Image, Layer, artifact_layer, assemble_image, default_annotations, module_layers,
};
pub use cache::{Cache, CacheRegistry};
pub use container::{
    ContainerImage, ContainerSpec, IMAGE_CONFIG_MEDIA_TYPE, IMAGE_LAYER_MEDIA_TYPE,
    build_container_image, push_container_image,
};
pub use error::{OciError, Result};
pub use extract::{ExtractLimits, extract_layer};
pub use images::images_annotation;
pub use layout::{LayoutFormat, LocalImage, read_image, write_image};
pub use ops::{
    ArtifactReference, FetchedModule, Fetcher, ModuleFetch, ModulePush, ModulePushOptions,
    ModulePushSource, ModuleReference, PulledImage, artifact_digest, build_artifact_image,
    build_module_image, fetch_module, list_artifact_tags, list_module_versions, module_push_source,
    pull_artifact, pull_module, push_artifact, push_module, push_module_archive, push_module_path,
    tag_artifact, validate_version,
};
pub use reference::ArtifactUrl;
pub use registry::{ConnectOptions, OciClientRegistry, Registry, RegistryOptions, connect};

/// Manifest media type of every Timoni artifact (`types.OCIManifestSchema1`).
pub const MANIFEST_MEDIA_TYPE: &str = "application/vnd.oci.image.manifest.v1+json";
/// Config media type of every Timoni artifact.
pub const CONFIG_MEDIA_TYPE: &str = "application/vnd.timoni.config.v1+json";
/// Media type of every Timoni content layer.
pub const CONTENT_MEDIA_TYPE: &str = "application/vnd.timoni.content.v1.tar+gzip";
/// Layer annotation naming what a layer holds.
pub const CONTENT_TYPE_ANNOTATION: &str = "sh.timoni.content.type";
/// Content type of a module's first layer (`cue.mod/`).
pub const CONTENT_TYPE_VENDOR: &str = "module/vendor";
/// Content type of a module's second layer (everything but `cue.mod/`).
pub const CONTENT_TYPE_MODULE: &str = "module";
/// Default content type of `timoni artifact push`.
pub const CONTENT_TYPE_GENERIC: &str = "generic";
/// Content type of generated CUE schemas that belong in a module's `cue.mod/gen` (Timoni's
/// Kubernetes schema artifacts).
pub const CONTENT_TYPE_CUE_MOD_GEN: &str = "cue.mod/gen";

/// Manifest annotation keys Timoni sets.
pub mod annotations {
    /// The module version.
    pub const VERSION: &str = "org.opencontainers.image.version";
    /// RFC 3339 build time (from `SOURCE_DATE_EPOCH` or the git commit).
    pub const CREATED: &str = "org.opencontainers.image.created";
    /// The git remote URL.
    pub const SOURCE: &str = "org.opencontainers.image.source";
    /// The git commit.
    pub const REVISION: &str = "org.opencontainers.image.revision";
    /// Comma-joined container image references found in the module's `images.cue`.
    pub const IMAGES: &str = "sh.timoni.images";
}
