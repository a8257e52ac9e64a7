//! The Prometheus exporter both `listen` and `soak` serve with `--metrics ADDR`.

use metrics_exporter_prometheus::{Matcher, PrometheusBuilder};

/// Install the global recorder and serve it over HTTP on `addr`. With `buckets`, histograms
/// whose names end in `_seconds` are exported as Prometheus histograms with those bounds
/// (otherwise as summaries).
pub fn install(addr: std::net::SocketAddr, buckets: Option<&[f64]>) -> anyhow::Result<()> {
    let mut builder = PrometheusBuilder::new().with_http_listener(addr);
    if let Some(buckets) = buckets {
        builder = builder
            .set_buckets_for_metric(Matcher::Suffix("_seconds".into()), buckets)
            .map_err(|e| anyhow::anyhow!("--metrics: {e}"))?;
    }
    builder
        .install()
        .map_err(|e| anyhow::anyhow!("--metrics {addr}: {e}"))
}
