//! The sequence of `timoni project bootstrap`: check the Project's objects, decide what the
//! cluster lacks ([`steps`]), ask before installing the controller, resolve its image to a
//! digest, push the Project, install the CRD and the controller, then apply the objects that
//! subscribe the cluster. The CLI parses flags into [`BootstrapOptions`], calls
//! [`bootstrap`] and renders what [`BootstrapUi`] is told.

use std::path::PathBuf;
use std::time::Duration;

use super::AdminError;
use super::bootstrap::{
    self, BootstrapSpec, ControllerInstall, ControllerState, ImageRef, apply_objects,
    bootstrap_objects, chosen_image, controller_state, image_url, install_controller, install_crd,
    resolve_image,
};
use crate::cluster::apply::{ApplyReport, Event};
use crate::cluster::{Cluster, ObjRef};
use crate::oci::{self, ArtifactReference, ArtifactUrl, ConnectOptions};
use crate::project::source::push_project;

/// What `timoni project bootstrap` was asked to do.
#[derive(Clone, Debug)]
pub struct BootstrapOptions {
    /// The objects of the subscription; `spec.creds` also push the Project.
    pub spec: BootstrapSpec,
    /// Push the Project directory (its file `spec.path`) under `spec.tag` first.
    pub push: Option<PushProject>,
    /// Install the controller when the cluster lacks it (`--install-controller`); when false
    /// the controller runs elsewhere and only the CRD is installed, if missing.
    pub install_controller: bool,
    /// Install without asking (`--yes`).
    pub yes: bool,
    /// `--controller-image`, `repository[:tag][@digest]`; `None`: the module's default.
    pub controller_image: Option<String>,
    /// The version recorded for the controller module (the CLI's).
    pub version: String,
    /// Wait for the controller's Deployment to become ready.
    pub wait: bool,
    pub timeout: Duration,
    pub poll: Duration,
    /// How to reach registries (the push adds `spec.creds`; the image uses the rest).
    pub connect: ConnectOptions,
}

/// The Project directory to push.
#[derive(Clone, Debug)]
pub struct PushProject {
    pub dir: PathBuf,
    pub source_date_epoch: Option<String>,
}

/// What the user answered when asked to install the controller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Consent {
    Given,
    Refused,
    /// There is no one to ask (no terminal).
    Unavailable,
}

/// What happened, as it happens.
#[derive(Debug)]
pub enum Progress<'a> {
    Pushed {
        url: &'a ArtifactUrl,
        pushed: &'a ArtifactReference,
    },
    CrdEstablished,
    /// An event of the controller module's apply.
    Controller(&'a Event),
    Applied(&'a ObjRef),
}

/// The front end of a bootstrap: asks for consent and shows progress.
pub trait BootstrapUi {
    /// Asked once before the controller is installed, unless `yes`.
    fn confirm_install(&mut self) -> Consent;
    fn progress(&mut self, p: Progress<'_>);
}

/// What the cluster needs, from what it has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Steps {
    pub ask: bool,
    pub install_crd: bool,
    pub install_controller: bool,
}

/// The installation steps for a cluster in `state`: the CRD and the controller when the
/// controller is not fully installed (asking first unless `yes`); with `install_controller`
/// false only a missing CRD, without asking (the Project cannot exist without it).
pub fn steps(state: ControllerState, install_controller: bool, yes: bool) -> Steps {
    if !install_controller {
        return Steps {
            ask: false,
            install_crd: !state.crd,
            install_controller: false,
        };
    }
    let missing = !state.installed();
    Steps {
        ask: missing && !yes,
        install_crd: missing,
        install_controller: missing,
    }
}

/// The controller's part in a bootstrap.
#[derive(Debug)]
pub enum ControllerOutcome {
    /// The CRD and the Deployment were there.
    AlreadyInstalled,
    /// Installed now, with this image (by digest).
    Installed {
        image: ImageRef,
        report: ApplyReport,
    },
    /// Not managed by this bootstrap (`install_controller` false).
    Skipped,
}

/// What a bootstrap did.
#[derive(Debug)]
pub struct BootstrapReport {
    pub pushed: Option<ArtifactReference>,
    pub controller: ControllerOutcome,
    pub applied: Vec<ObjRef>,
}

/// Runs `timoni project bootstrap`. Nothing is pushed or installed before the objects are
/// checked, the user's consent given and the controller image resolved to a digest.
pub fn bootstrap(
    cluster: &dyn Cluster,
    opts: &BootstrapOptions,
    ui: &mut dyn BootstrapUi,
) -> Result<BootstrapReport, AdminError> {
    let objects = bootstrap_objects(&opts.spec)?;
    let state = controller_state(cluster)?;
    let steps = steps(state, opts.install_controller, opts.yes);
    let chosen = steps
        .install_controller
        .then(|| chosen_image(opts.controller_image.as_deref(), &opts.version))
        .transpose()?;
    if steps.ask {
        let ns = bootstrap::CONTROLLER_NAMESPACE;
        match ui.confirm_install() {
            Consent::Given => {}
            Consent::Refused => {
                return Err(AdminError::Invalid(
                    "aborted: the Timoni controller is needed to reconcile Projects".into(),
                ));
            }
            Consent::Unavailable => {
                return Err(AdminError::Invalid(format!(
                    "the Timoni controller is not installed in {ns} and there is no terminal to confirm its installation: run again with --yes to install it, or with --install-controller=false if it runs elsewhere"
                )));
            }
        }
    }

    let image = chosen
        .map(|image| resolve(&image, &opts.connect))
        .transpose()?;

    let pushed = match &opts.push {
        Some(push) => Some(push_artifact(opts, push, ui)?),
        None => None,
    };

    if steps.install_crd {
        install_crd(cluster, opts.timeout, opts.poll)?;
        ui.progress(Progress::CrdEstablished);
    }
    let controller = match image {
        Some(image) => {
            let install = ControllerInstall {
                image: image.clone(),
                version: opts.version.clone(),
                wait: opts.wait,
                timeout: opts.timeout,
                poll: opts.poll,
            };
            let report = install_controller(cluster, &install, &mut |e| {
                ui.progress(Progress::Controller(e))
            })?;
            ControllerOutcome::Installed { image, report }
        }
        None if opts.install_controller => ControllerOutcome::AlreadyInstalled,
        None => ControllerOutcome::Skipped,
    };

    let mut applied = Vec::new();
    apply_objects(cluster, &objects, &mut |r| {
        ui.progress(Progress::Applied(r));
        applied.push(r.clone());
    })?;
    Ok(BootstrapReport {
        pushed,
        controller,
        applied,
    })
}

/// `image` by digest, asking its registry when it names only a tag.
fn resolve(image: &ImageRef, connect: &ConnectOptions) -> Result<ImageRef, AdminError> {
    if !image.digest.is_empty() {
        return Ok(image.clone());
    }
    let url = image_url(image)?;
    let registry = oci::connect(&url, connect).map_err(|e| {
        AdminError::Registry(format!(
            "cannot resolve the controller image {} to a digest: {e}",
            image.tagged()
        ))
    })?;
    resolve_image(image, &registry)
}

fn push_artifact(
    opts: &BootstrapOptions,
    push: &PushProject,
    ui: &mut dyn BootstrapUi,
) -> Result<ArtifactReference, AdminError> {
    let failed = |e: &dyn std::fmt::Display| AdminError::Registry(e.to_string());
    let url = ArtifactUrl::parse(&opts.spec.repository)
        .map_err(|e| AdminError::Invalid(format!("invalid --repository: {e}")))?;
    let connect = ConnectOptions {
        creds: opts.spec.creds.clone(),
        ..opts.connect.clone()
    };
    let registry = oci::connect(&url, &connect).map_err(|e| failed(&e))?;
    let (_, pushed) = push_project(
        &registry,
        &push.dir,
        &opts.spec.path,
        &url,
        std::slice::from_ref(&opts.spec.tag),
        &Default::default(),
        push.source_date_epoch.as_deref(),
    )
    .map_err(|e| failed(&e))?;
    ui.progress(Progress::Pushed {
        url: &url,
        pushed: &pushed,
    });
    Ok(pushed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(crd: bool, deployment: bool) -> ControllerState {
        ControllerState { crd, deployment }
    }

    #[test]
    fn a_cluster_without_the_controller_gets_it_after_consent() {
        let all = Steps {
            ask: true,
            install_crd: true,
            install_controller: true,
        };
        assert_eq!(steps(state(false, false), true, false), all);
        // A CRD without a Deployment (or the reverse) is a partial install: both again.
        assert_eq!(steps(state(true, false), true, false), all);
        assert_eq!(steps(state(false, true), true, false), all);
        assert_eq!(
            steps(state(false, false), true, true),
            Steps { ask: false, ..all },
            "--yes does not ask"
        );
    }

    #[test]
    fn an_installed_controller_is_left_alone() {
        let nothing = Steps {
            ask: false,
            install_crd: false,
            install_controller: false,
        };
        assert_eq!(steps(state(true, true), true, false), nothing);
        assert_eq!(steps(state(true, true), false, false), nothing);
    }

    #[test]
    fn a_controller_running_elsewhere_only_needs_the_crd() {
        assert_eq!(
            steps(state(false, false), false, false),
            Steps {
                ask: false,
                install_crd: true,
                install_controller: false,
            }
        );
        assert_eq!(
            steps(state(true, false), false, false),
            Steps {
                ask: false,
                install_crd: false,
                install_controller: false,
            }
        );
    }
}
