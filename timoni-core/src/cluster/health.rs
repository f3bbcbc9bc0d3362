//! The module's custom health checks (`timoni: healthChecks: [string]: #HealthCheck`, Timoni's
//! `internal/engine/healthcheck.go`): for a live object of a checked API group (and kind), the
//! module is evaluated again with an in-memory file that fills the check's `#object` with the
//! object; then `inProgress`, `failed` and `current` are read in that order and the first that
//! is true wins. An incomplete expression counts as false; none true means InProgress.

use cue_eval::encode::Data;

use super::status::Status;
use super::{ObjRef, Object};
use crate::error::{CueError, Error, Result};
use crate::instance::{self, BuildOptions, export_at};

const INFO_FILE: &str = "timoni.healthchecks.cue";
const INFO_FIELD: &str = "timoniHealthCheckInfo";
const EVAL_FIELD: &str = "timoniHealthCheckEval";

/// One declared check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Check {
    pub name: String,
    pub group: String,
    /// Empty: every kind of the group.
    pub kind: String,
}

/// The checks of a module and how to build it again to evaluate them.
#[derive(Clone, Debug)]
pub struct HealthChecks {
    opts: BuildOptions,
    package: String,
    pub checks: Vec<Check>,
}

fn quote(s: &str) -> String {
    serde_json::Value::String(s.to_string()).to_string()
}

impl HealthChecks {
    /// Reads the checks of the instance `opts` builds (none when the module declares none).
    /// Two checks of the same group and kind are an error.
    pub fn load(opts: &BuildOptions) -> Result<HealthChecks> {
        let mut probe = opts.clone();
        probe.extra_files.push((
            INFO_FILE.into(),
            format!(
                "package {}\n{INFO_FIELD}: [if timoni.healthChecks != _|_ for k, v in timoni.healthChecks {{\
                 name: k, group: v.group, kind: *v.kind | \"\"}}]\n",
                opts.package
            ),
        ));
        let loaded = instance::load_module(&probe, false)?;
        let info = export_at(&loaded.value, &[INFO_FIELD])
            .map_err(|e| Error::Cue(CueError::new(e).in_context("timoni.healthChecks")))?;
        let mut checks: Vec<Check> = Vec::new();
        if let Data::List(items) = info {
            for it in items {
                let s = |k: &str| crate::meta::get_str(&it, &[k]).unwrap_or("").to_string();
                let c = Check {
                    name: s("name"),
                    group: s("group"),
                    kind: s("kind"),
                };
                if let Some(other) = checks
                    .iter()
                    .find(|o| o.group == c.group && o.kind == c.kind)
                {
                    return Err(Error::Cue(CueError::at_path(
                        "timoni.healthChecks",
                        format!(
                            "{:?} and {:?} check the same group and kind {}/{}",
                            other.name, c.name, c.group, c.kind
                        ),
                    )));
                }
                checks.push(c);
            }
        }
        Ok(HealthChecks {
            package: opts.package.clone(),
            opts: opts.clone(),
            checks,
        })
    }

    /// The check covering an object, if any (a kind-specific check wins over a group one).
    pub fn check_for(&self, r: &ObjRef) -> Option<&Check> {
        let g = r.group();
        self.checks
            .iter()
            .find(|c| c.group == g && c.kind == r.kind)
            .or_else(|| {
                self.checks
                    .iter()
                    .find(|c| c.group == g && c.kind.is_empty())
            })
    }

    /// The status of a live object under its check, or `None` when no check covers it.
    pub fn evaluate(&self, obj: &Object) -> Option<(Status, String)> {
        let r = ObjRef::of(obj);
        let check = self.check_for(&r)?;
        if obj
            .pointer("/metadata/deletionTimestamp")
            .is_some_and(|v| !v.is_null())
        {
            return Some((
                Status::Terminating,
                "Resource scheduled for deletion".into(),
            ));
        }
        let mut opts = self.opts.clone();
        opts.extra_files.push((
            INFO_FILE.into(),
            format!(
                "package {}\n{EVAL_FIELD}: timoni.healthChecks[{}] & {{#object: {obj}}}\n",
                self.package,
                quote(&check.name)
            ),
        ));
        let loaded = match instance::load_module(&opts, false) {
            Ok(l) => l,
            Err(e) => {
                return Some((
                    Status::InProgress,
                    format!("health check {}: {e}", check.name),
                ));
            }
        };
        for (field, status) in [
            ("inProgress", Status::InProgress),
            ("failed", Status::Failed),
            ("current", Status::Current),
        ] {
            if let Ok(Data::Bool(true)) = export_at(&loaded.value, &[EVAL_FIELD, field]) {
                return Some((status, format!("health check {}: {field}", check.name)));
            }
        }
        Some((
            Status::InProgress,
            format!("health check {}: not current yet", check.name),
        ))
    }
}
