//! `--metrics ADDR` at the command line: the exporter (`mllp::prometheus`) bound and its address
//! announced as a diagnostic event.

use std::net::SocketAddr;

/// Bind the exporter, then announce the bound address at once.
pub fn install(addr: SocketAddr, buckets: Option<&[f64]>) -> anyhow::Result<()> {
    let (human, fields) = announcement(mllp::prometheus::bind(addr, buckets, true)?);
    crate::diag::emit(ANNOUNCEMENT, || human, fields);
    Ok(())
}

/// The event announcing where metrics are served.
pub fn announce_line(diag: &crate::diag::Diag, addr: SocketAddr) -> String {
    let (human, fields) = announcement(addr);
    diag.line(ANNOUNCEMENT, || human, fields)
}

const ANNOUNCEMENT: &str = "metrics_listening";

/// The announcement's human text and fields.
fn announcement(addr: SocketAddr) -> (String, serde_json::Value) {
    (
        format!("metrics on http://{addr}/metrics"),
        serde_json::json!({ "addr": addr.to_string() }),
    )
}
