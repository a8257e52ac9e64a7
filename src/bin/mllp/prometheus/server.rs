//! `listen --metrics`: server events counted into the metrics recorder, under the names the
//! receiver's Prometheus endpoint exposes.

use mllp::cause::Cause;
use mllp::server::ServerEvent;

/// Bounds of the commit-latency histogram, in seconds.
pub const COMMIT_BUCKETS: &[f64] = &[
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
];

/// Count one event (events that count nothing are ignored).
pub fn record(event: &ServerEvent) {
    match event {
        ServerEvent::ConnectionOpened { .. } => {
            metrics::counter!("mllp_listen_connections_total").increment(1);
            metrics::gauge!("mllp_listen_connections_open").increment(1.0);
        }
        ServerEvent::ConnectionClosed { cause, .. } => {
            // A peer refused at once was never counted open.
            if !matches!(cause, Cause::MaxConnections | Cause::PerPeerLimit) {
                metrics::gauge!("mllp_listen_connections_open").decrement(1.0);
            }
            metrics::counter!("mllp_listen_connections_closed_total", "cause" => cause.as_str())
                .increment(1);
        }
        ServerEvent::AcceptFailed { cause, .. } => {
            metrics::counter!("mllp_listen_tls_client_errors_total", "cause" => cause.as_str())
                .increment(1);
        }
        ServerEvent::AcceptError { .. } => {
            metrics::counter!("mllp_listen_accept_errors_total").increment(1);
        }
        ServerEvent::Warning { warning, .. } => {
            metrics::counter!("mllp_listen_warnings_total", "code" => warning.code.as_str())
                .increment(1);
        }
        ServerEvent::Message {
            ack_code,
            duplicate,
            commit_ms,
            ..
        } => {
            metrics::counter!("mllp_listen_messages_total").increment(1);
            if let Some(code) = ack_code {
                metrics::counter!("mllp_listen_acks_total", "code" => code.as_str()).increment(1);
            }
            if *duplicate {
                metrics::counter!("mllp_listen_duplicates_total").increment(1);
            } else if let Some(ms) = commit_ms {
                metrics::histogram!("mllp_listen_commit_seconds").record(ms / 1000.0);
            }
        }
        ServerEvent::Nack { why, .. } => {
            metrics::counter!("mllp_listen_nacks_total", "reason" => why.as_str()).increment(1);
        }
        _ => {}
    }
}
