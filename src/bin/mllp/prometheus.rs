//! `--metrics ADDR` at the command line: the exporter ([`exporter`]) bound and its address
//! announced as a diagnostic event.

mod exporter;
pub mod server;
pub mod soak;

pub use exporter::{bind, MetricsError};

use crate::output::diag::Diagnostic;
use std::net::SocketAddr;

/// Bind the exporter, then announce the bound address at once.
pub fn install(addr: SocketAddr, buckets: Option<&[f64]>) -> anyhow::Result<()> {
    let addr = bind(addr, buckets, true)?;
    crate::diag::say(|| human(addr), &announcement(addr));
    Ok(())
}

/// The event announcing where metrics are served: its human text and its JSON fields, for a
/// writer that adds its own (listen's time).
pub fn announcement_parts(addr: SocketAddr) -> (String, serde_json::Value) {
    let fields = serde_json::to_value(announcement(addr)).unwrap_or_default();
    (human(addr), fields)
}

fn human(addr: SocketAddr) -> String {
    format!("metrics on http://{addr}/metrics")
}

fn announcement(addr: SocketAddr) -> Diagnostic<'static> {
    Diagnostic::MetricsListening {
        addr: addr.to_string(),
    }
}
