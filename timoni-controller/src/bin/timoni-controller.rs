//! The `timoni-controller` binary: parses flags, builds the client configuration (the
//! kubeconfig and context when given, else the in-cluster or default one) and runs
//! [`timoni_controller::run`] until SIGTERM or Ctrl-C.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;
use clap::Parser;
use kube::config::{KubeConfigOptions, Kubeconfig};
use timoni_controller::{LeaseSettings, Settings, run};

/// Reconciles Timoni Projects (projects.timoni.sh/v1alpha1).
#[derive(Parser, Debug)]
#[command(name = "timoni-controller", version)]
struct Args {
    /// Path to a kubeconfig; without it, the in-cluster configuration (or $KUBECONFIG).
    #[arg(long)]
    kubeconfig: Option<PathBuf>,
    /// The kubeconfig context to use.
    #[arg(long)]
    kube_context: Option<String>,
    /// Where /metrics, /healthz and /readyz are served.
    #[arg(long, default_value = "0.0.0.0:8080")]
    metrics_addr: SocketAddr,
    /// Elect a leader with a coordination.k8s.io Lease (for more than one replica).
    #[arg(long)]
    leader_elect: bool,
    /// The namespace of the Lease (default: the pod's namespace, else `timoni-system`).
    #[arg(long)]
    leader_elect_namespace: Option<String>,
    /// How long the Lease stays valid without renewal: a new leader takes over within it.
    #[arg(long, default_value = "15s", value_parser = lease_duration)]
    leader_elect_lease_duration: Duration,
    /// Layer cache and temporary directory.
    #[arg(long, default_value = "/tmp/timoni-controller")]
    cache_dir: PathBuf,
    /// Use plain HTTP for every registry.
    #[arg(long)]
    registry_insecure: bool,
    /// Log lines as JSON objects (one per line, for log collectors) or as text.
    #[arg(long, value_enum, default_value = "json")]
    log_format: LogFormat,
    #[command(flatten)]
    cloud: timoni_controller::workload_identity::CloudArgs,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum LogFormat {
    Json,
    Text,
}

/// Logs to stderr at `RUST_LOG` (default `info,kube=warn`), colour only on a terminal.
fn init_logs(format: LogFormat) {
    use std::io::IsTerminal as _;
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| "info,kube=warn".into());
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal());
    match format {
        LogFormat::Json => builder.json().flatten_event(true).init(),
        LogFormat::Text => builder.init(),
    }
}

fn lease_duration(s: &str) -> Result<Duration, String> {
    let d = timoni_core::project::api::parse_duration(s)?;
    if d < Duration::from_secs(2) {
        return Err("the lease duration must be at least 2s".into());
    }
    Ok(d)
}

async fn config(args: &Args) -> anyhow::Result<kube::Config> {
    let options = KubeConfigOptions {
        context: args.kube_context.clone(),
        ..Default::default()
    };
    match &args.kubeconfig {
        Some(path) => {
            let kc = Kubeconfig::read_from(path)
                .with_context(|| format!("reading {}", path.display()))?;
            Ok(kube::Config::from_custom_kubeconfig(kc, &options).await?)
        }
        None if args.kube_context.is_some() => Ok(kube::Config::from_kubeconfig(&options).await?),
        None => Ok(kube::Config::infer().await?),
    }
}

async fn shutdown() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(s) => s,
                Err(_) => {
                    let _ = ctrl_c.await;
                    return;
                }
            };
        tokio::select! {
            _ = ctrl_c => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = ctrl_c.await;
    }
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let args = Args::parse();
    init_logs(args.log_format);
    let result = async {
        let config = config(&args).await.context("kubernetes configuration")?;
        let mut settings = Settings::new(config, args.cache_dir.clone());
        settings.metrics_addr = Some(args.metrics_addr);
        settings.registry_insecure = args.registry_insecure;
        settings.cloud = args.cloud.settings(|k| std::env::var(k).ok());
        if args.leader_elect {
            let namespace = args
                .leader_elect_namespace
                .clone()
                .or_else(|| std::env::var("POD_NAMESPACE").ok())
                .unwrap_or_else(|| "timoni-system".into());
            let identity = std::env::var("POD_NAME")
                .or_else(|_| std::env::var("HOSTNAME"))
                .unwrap_or_else(|_| format!("timoni-controller-{}", std::process::id()));
            settings.leader_election = Some(LeaseSettings {
                name: "timoni-controller".into(),
                namespace,
                identity,
                duration: args.leader_elect_lease_duration,
            });
        }
        run(settings, shutdown()).await
    }
    .await;
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("timoni-controller: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
