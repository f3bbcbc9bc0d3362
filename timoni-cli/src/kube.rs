//! The kubectl-style flags of the cluster commands (`--kubeconfig`, `--kube-context`,
//! `--kube-as`, ..., `-n`, `--timeout`) and the connection they make.

use std::time::Duration;

use anyhow::Context;
use timoni_core::cluster::kube::{KubeCluster, KubeOptions};

#[derive(clap::Args, Debug, Clone)]
pub struct KubeFlags {
    /// The namespace (default: the kube context's namespace, else `default`).
    #[arg(short = 'n', long = "namespace")]
    pub namespace: Option<String>,
    /// Path to the kubeconfig file (default: $KUBECONFIG, else ~/.kube/config).
    #[arg(long)]
    pub kubeconfig: Option<String>,
    /// The kubeconfig context to use.
    #[arg(long = "kube-context")]
    pub kube_context: Option<String>,
    /// Username to impersonate.
    #[arg(long = "kube-as")]
    pub kube_as: Option<String>,
    /// Group to impersonate (repeatable).
    #[arg(long = "kube-as-group")]
    pub kube_as_group: Vec<String>,
    /// UID to impersonate.
    #[arg(long = "kube-as-uid")]
    pub kube_as_uid: Option<String>,
    /// Bearer token for the API server.
    #[arg(long = "kube-token")]
    pub kube_token: Option<String>,
    /// The address of the API server.
    #[arg(long = "kube-server")]
    pub kube_server: Option<String>,
    /// Server name for the TLS certificate check.
    #[arg(long = "kube-tls-server-name")]
    pub kube_tls_server_name: Option<String>,
    /// Path to a client certificate file for TLS.
    #[arg(long = "kube-client-certificate")]
    pub kube_client_certificate: Option<String>,
    /// Path to a client key file for TLS.
    #[arg(long = "kube-client-key")]
    pub kube_client_key: Option<String>,
    /// Path to a certificate authority file.
    #[arg(long = "kube-certificate-authority")]
    pub kube_certificate_authority: Option<String>,
    /// Do not check the server's certificate (insecure).
    #[arg(long = "kube-insecure-skip-tls-verify")]
    pub kube_insecure_skip_tls_verify: bool,
    /// How long to wait for the cluster operations (e.g. 30s, 5m, 1h).
    #[arg(long, default_value = "5m", value_parser = parse_duration)]
    pub timeout: Duration,
}

/// A Go-style duration: a sequence of `<number><unit>` with units `ms`, `s`, `m`, `h`.
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

impl KubeFlags {
    /// The core's connection options.
    pub fn options(&self) -> KubeOptions {
        KubeOptions {
            kubeconfig: self.kubeconfig.as_ref().map(Into::into),
            context: self.kube_context.clone(),
            as_user: self.kube_as.clone(),
            as_groups: self.kube_as_group.clone(),
            as_uid: self.kube_as_uid.clone(),
            token: self.kube_token.clone(),
            server: self.kube_server.clone(),
            tls_server_name: self.kube_tls_server_name.clone(),
            client_certificate: self.kube_client_certificate.clone(),
            client_key: self.kube_client_key.clone(),
            certificate_authority: self.kube_certificate_authority.clone(),
            insecure_skip_tls_verify: self.kube_insecure_skip_tls_verify,
        }
    }

    /// Connects, and returns the cluster with the namespace to use.
    pub fn connect(&self) -> anyhow::Result<(KubeCluster, String)> {
        let cluster = KubeCluster::connect(&self.options()).context("connecting to the cluster")?;
        let ns = self
            .namespace
            .clone()
            .unwrap_or_else(|| cluster.default_namespace().to_string());
        Ok((cluster, ns))
    }
}

#[cfg(test)]
mod tests {
    use super::parse_duration;
    use std::time::Duration;

    #[test]
    fn go_durations_parse() {
        assert_eq!(parse_duration("5m"), Ok(Duration::from_secs(300)));
        assert_eq!(parse_duration("1h30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert!(parse_duration("5").is_err());
        assert!(parse_duration("5x").is_err());
    }
}
