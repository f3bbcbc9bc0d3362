//! Prometheus metrics (`prometheus-client`) and the small HTTP server that serves them with
//! the probes: `/metrics` (text format), `/healthz` (the process runs) and `/readyz` (the
//! controller's watch is set up).
//!
//! Metrics: `timoni_controller_reconciles_total`, `timoni_controller_reconcile_duration_seconds`
//! (histogram) and `timoni_controller_reconcile_errors_total{reason}`.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ReasonLabel {
    reason: String,
}

/// The controller's metrics and readiness.
pub struct Metrics {
    registry: Registry,
    reconciles: Counter,
    duration: Histogram,
    errors: Family<ReasonLabel, Counter>,
    ready: AtomicBool,
}

impl Default for Metrics {
    fn default() -> Self {
        let mut registry = Registry::default();
        let reconciles = Counter::default();
        let duration = Histogram::new(exponential_buckets(0.01, 2.0, 16));
        let errors = Family::<ReasonLabel, Counter>::default();
        registry.register(
            "timoni_controller_reconciles",
            "Reconciles of Projects",
            reconciles.clone(),
        );
        registry.register(
            "timoni_controller_reconcile_duration_seconds",
            "Duration of Project reconciles",
            duration.clone(),
        );
        registry.register(
            "timoni_controller_reconcile_errors",
            "Failed Project reconciles by reason",
            errors.clone(),
        );
        Metrics {
            registry,
            reconciles,
            duration,
            errors,
            ready: AtomicBool::new(false),
        }
    }
}

impl Metrics {
    /// Records one reconcile, failed with `error_reason` if any.
    pub fn observe(&self, elapsed: Duration, error_reason: Option<&str>) {
        self.reconciles.inc();
        self.duration.observe(elapsed.as_secs_f64());
        if let Some(r) = error_reason {
            self.errors
                .get_or_create(&ReasonLabel {
                    reason: r.to_string(),
                })
                .inc();
        }
    }

    /// The text exposition.
    pub fn encode(&self) -> String {
        let mut out = String::new();
        // Writing to a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }

    pub fn set_ready(&self, ready: bool) {
        self.ready.store(ready, Ordering::Relaxed);
    }

    pub fn is_ready(&self) -> bool {
        self.ready.load(Ordering::Relaxed)
    }
}

async fn metrics_handler(State(m): State<Arc<Metrics>>) -> impl IntoResponse {
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        m.encode(),
    )
}

async fn readyz(State(m): State<Arc<Metrics>>) -> impl IntoResponse {
    if m.is_ready() {
        (StatusCode::OK, "ok")
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, "not ready")
    }
}

/// Binds `addr` and returns the bound address and the server future, which ends when
/// `shutdown` completes.
pub async fn serve(
    addr: SocketAddr,
    metrics: Arc<Metrics>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<(SocketAddr, impl Future<Output = std::io::Result<()>>)> {
    let app = Router::new()
        .route("/metrics", get(metrics_handler))
        .route("/healthz", get(|| async { "ok" }))
        .route("/readyz", get(readyz))
        .with_state(metrics);
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let bound = listener.local_addr()?;
    let server = axum::serve(listener, app).with_graceful_shutdown(shutdown);
    Ok((bound, async move { server.await }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_have_the_documented_names() {
        let m = Metrics::default();
        m.observe(Duration::from_millis(30), None);
        m.observe(Duration::from_millis(30), Some("Forbidden"));
        let text = m.encode();
        assert!(
            text.contains("timoni_controller_reconciles_total 2"),
            "{text}"
        );
        assert!(
            text.contains("timoni_controller_reconcile_errors_total{reason=\"Forbidden\"} 1"),
            "{text}"
        );
        assert!(
            text.contains("timoni_controller_reconcile_duration_seconds_count 2"),
            "{text}"
        );
    }
}
