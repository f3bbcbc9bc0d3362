//! The flag groups the commands share, as clap structs flattened into them, and the rules every
//! flag follows so that `timoni` parses command lines as Timoni (cobra and pflag) does:
//!
//! - [`GlobalFlags`] are Timoni's persistent flags (`-n`, `--timeout`, the `--kube-*` flags,
//!   `--cache-dir`, `--registry-insecure`, `--log-*`): accepted by every command, before or
//!   after the subcommand;
//! - [`RuntimeFlags`] are the persistent flags of `timoni bundle`, accepted on `bundle` itself and
//!   on each of its subcommands;
//! - every boolean flag is a Go boolean ([`go_bools`]): `--wait` or `--wait=false`, never
//!   `--wait false`, so a flag does not swallow the argument after it (one documented exception,
//!   [`SEPARATE_VALUE`]);
//! - lists that Timoni declares as string slices (`-f/--values`, `-r/--runtime`, the bundle
//!   `-f/--file`) split on commas as well as repeat.
//!
//! Parsing stops here: no file is read and no variable looked up; `settings.rs` turns the flags
//! and the environment into one resolved value.

use std::path::PathBuf;
use std::time::Duration;

use clap::ArgAction;

/// Timoni's persistent flags (`cmd/timoni/main.go`), global to every command.
#[derive(clap::Args, Debug, Clone)]
#[command(next_help_heading = "Global Flags")]
pub struct GlobalFlags {
    #[command(flatten)]
    pub kube: KubeFlags,
    /// The length of time to wait before giving up on the current operation (e.g. 30s, 5m, 1h).
    #[arg(long, global = true, default_value = "5m", value_parser = parse_duration)]
    pub timeout: Duration,
    /// Artifacts cache dir, can be disabled with the TIMONI_CACHING=false env var [default:
    /// $TIMONI_CACHE_DIR, else $HOME/.timoni/cache].
    #[arg(long, global = true, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    /// Allow connecting to a container registry without TLS or with a self-signed certificate.
    #[arg(long, global = true)]
    pub registry_insecure: bool,
    /// The registry provider: `generic` (--creds, else the docker config), or `aws`, `gcp`,
    /// `azure` to log in to the registry with the machine's cloud identity.
    #[arg(long, global = true, default_value = "generic",
          value_parser = ["generic", "aws", "gcp", "azure"])]
    pub provider: String,
    /// Add timestamps to the logs.
    #[arg(long, global = true, value_name = "BOOL", action = ArgAction::Set, num_args = 0..=1,
          require_equals = true, default_value = "true", default_missing_value = "true",
          value_parser = parse_bool)]
    pub log_pretty: bool,
    /// Colourise the logs [default: true on a terminal].
    #[arg(long, global = true, value_name = "BOOL", action = ArgAction::Set, num_args = 0..=1,
          require_equals = true, default_missing_value = "true", value_parser = parse_bool)]
    pub log_color: Option<bool>,
}

/// The kubectl-style flags (`genericclioptions`), global to every command as in Timoni.
#[derive(clap::Args, Debug, Clone)]
#[command(next_help_heading = "Global Flags")]
pub struct KubeFlags {
    /// The namespace scope for the operation [default: the kubeconfig context's namespace,
    /// else `default`].
    #[arg(short = 'n', long = "namespace", global = true)]
    pub namespace: Option<String>,
    /// Path to the kubeconfig file [default: $KUBECONFIG, else ~/.kube/config].
    #[arg(long, global = true)]
    pub kubeconfig: Option<String>,
    /// The name of the kubeconfig context to use.
    #[arg(long = "kube-context", global = true)]
    pub kube_context: Option<String>,
    /// Username to impersonate for the operation.
    #[arg(long = "kube-as", global = true)]
    pub kube_as: Option<String>,
    /// Group to impersonate for the operation (repeatable).
    #[arg(long = "kube-as-group", global = true)]
    pub kube_as_group: Vec<String>,
    /// UID to impersonate for the operation.
    #[arg(long = "kube-as-uid", global = true)]
    pub kube_as_uid: Option<String>,
    /// Bearer token for authentication to the API server.
    #[arg(long = "kube-token", global = true)]
    pub kube_token: Option<String>,
    /// The address and port of the Kubernetes API server.
    #[arg(long = "kube-server", global = true)]
    pub kube_server: Option<String>,
    /// Server name to use for the server certificate validation.
    #[arg(long = "kube-tls-server-name", global = true)]
    pub kube_tls_server_name: Option<String>,
    /// Path to a client certificate file for TLS.
    #[arg(long = "kube-client-certificate", global = true)]
    pub kube_client_certificate: Option<String>,
    /// Path to a client key file for TLS.
    #[arg(long = "kube-client-key", global = true)]
    pub kube_client_key: Option<String>,
    /// Path to a cert file for the certificate authority.
    #[arg(long = "kube-certificate-authority", global = true)]
    pub kube_certificate_authority: Option<String>,
    /// Do not check the API server's certificate (insecure).
    #[arg(long = "kube-insecure-skip-tls-verify", global = true)]
    pub kube_insecure_skip_tls_verify: bool,
}

/// The persistent flags of `timoni bundle`: accepted on `bundle` and on its subcommands.
#[derive(clap::Args, Debug, Clone)]
#[command(next_help_heading = "Bundle Flags")]
pub struct RuntimeFlags {
    /// Runtime files (.cue, .yaml, .yml, .json), repeatable or comma-separated.
    #[arg(
        short = 'r',
        long = "runtime",
        value_name = "FILE",
        global = true,
        value_delimiter = ','
    )]
    pub runtime: Vec<PathBuf>,
    /// Inject runtime values from the environment.
    #[arg(long = "runtime-from-env", global = true)]
    pub runtime_from_env: bool,
    /// Filter runtime clusters by name (case-insensitive, '*' for all).
    #[arg(long = "runtime-cluster", default_value = "*", global = true)]
    pub runtime_cluster: String,
    /// Filter runtime clusters by group (case-insensitive, '*' for all).
    #[arg(long = "runtime-group", default_value = "*", global = true)]
    pub runtime_group: String,
    /// The CUE module root (the directory containing cue.mod) used to resolve imports in the
    /// bundle and runtime definitions [default: the current directory].
    #[arg(long = "workdir", global = true)]
    pub workdir: Option<PathBuf>,
}

/// `--creds`, on every command that may reach a registry.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct Creds {
    /// Registry credentials, `user:password` or a token.
    #[arg(long)]
    pub creds: Option<String>,
}

impl Creds {
    /// The credentials, if given.
    pub fn get(&self) -> Option<&str> {
        self.creds.as_deref()
    }
}

/// The boolean flags that also take their value as the next argument: `project bootstrap
/// --push-artifact true` is the form the Project RFC documents (Projects are not in Timoni, so
/// no Timoni script relies on the Go form there).
const SEPARATE_VALUE: &[&str] = &["push_artifact"];

/// Makes every boolean flag of `cmd` and its subcommands a Go boolean, as pflag parses them:
/// `--flag` sets it, `--flag=true|false` (and Go's other spellings) sets its value, and the next
/// argument is never taken as its value. Flags declared `bool` (clap's `SetTrue`) get the full
/// treatment with `false` as their default; flags that already take an optional value (the
/// default-true booleans such as `--wait`, declared `num_args = 0..=1`) must now give it with `=`.
pub fn go_bools(cmd: clap::Command) -> clap::Command {
    cmd.mut_args(|arg| {
        if arg.is_require_equals_set() || SEPARATE_VALUE.contains(&arg.get_id().as_str()) {
            return arg;
        }
        if matches!(arg.get_action(), ArgAction::SetTrue) {
            arg.action(ArgAction::Set)
                .num_args(0..=1)
                .require_equals(true)
                .default_value("false")
                .default_missing_value("true")
                .value_parser(parse_bool)
                .value_name("BOOL")
                .hide_default_value(true)
        } else if arg.get_long().is_some()
            && matches!(arg.get_action(), ArgAction::Set)
            && arg.get_num_args() == Some((0..=1).into())
        {
            arg.require_equals(true)
                .value_parser(parse_bool)
                .value_name("BOOL")
        } else {
            arg
        }
    })
    .mut_subcommands(go_bools)
}

/// A boolean as Go's `strconv.ParseBool` reads it.
pub fn parse_bool(s: &str) -> Result<bool, String> {
    match s {
        "1" | "t" | "T" | "true" | "TRUE" | "True" => Ok(true),
        "0" | "f" | "F" | "false" | "FALSE" | "False" => Ok(false),
        _ => Err(format!("invalid boolean {s:?} (true or false)")),
    }
}

/// A Go duration: a sequence of `<number><unit>` with units `ms`, `s`, `m`, `h`.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let mut total = Duration::ZERO;
    let mut rest = s.trim();
    if rest.is_empty() {
        return Err("empty duration".into());
    }
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit() && c != '.')
            .ok_or_else(|| format!("invalid duration {s:?}: missing unit (ms, s, m, h)"))?;
        let n: f64 = rest[..digits]
            .parse()
            .map_err(|_| format!("invalid duration {s:?}"))?;
        let unit_end = rest[digits..]
            .find(|c: char| c.is_ascii_digit())
            .map_or(rest.len(), |i| digits + i);
        let secs = match &rest[digits..unit_end] {
            "ms" => n / 1000.0,
            "s" => n,
            "m" => n * 60.0,
            "h" => n * 3600.0,
            u => return Err(format!("invalid duration {s:?}: unknown unit {u:?}")),
        };
        total += Duration::from_secs_f64(secs);
        rest = &rest[unit_end..];
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::{parse_bool, parse_duration};
    use std::time::Duration;

    #[test]
    fn go_durations_parse() {
        assert_eq!(parse_duration("5m"), Ok(Duration::from_secs(300)));
        assert_eq!(parse_duration("1h30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert!(parse_duration("5").is_err());
        assert!(parse_duration("5x").is_err());
    }

    #[test]
    fn go_booleans_parse() {
        for t in ["1", "t", "T", "true", "TRUE", "True"] {
            assert_eq!(parse_bool(t), Ok(true));
        }
        for f in ["0", "f", "F", "false", "FALSE", "False"] {
            assert_eq!(parse_bool(f), Ok(false));
        }
        assert!(parse_bool("yes").is_err());
    }
}
