//! The upstream link as the relay shows it: each state change, reconnect and failure as a line
//! on stderr (`upstream_state`, `upstream_reconnecting`, `upstream_error` in JSON).

use crate::diag::Diag;
use mllp::client::ClientEvent;
use serde_json::json;
use tokio::sync::broadcast;

/// Print the upstream link's events until the link is gone.
pub fn upstream(
    diag: Diag,
    mut events: broadcast::Receiver<ClientEvent>,
    to: String,
    announced: tokio::sync::oneshot::Receiver<()>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        // The bound address is the first line; the link's events since the start wait for it.
        let _ = announced.await;
        loop {
            let event = match events.recv().await {
                Ok(event) => event,
                Err(broadcast::error::RecvError::Lagged(_)) => continue,
                Err(broadcast::error::RecvError::Closed) => return,
            };
            if diag.quiet {
                continue;
            }
            match &event {
                ClientEvent::StateChange(t) => diag.event(
                    "upstream_state",
                    || format!("upstream {to}: {t}"),
                    json!({"upstream": to, "from": t.from, "to": t.to, "reason": t.reason}),
                ),
                ClientEvent::Reconnecting { attempt, delay } => diag.event(
                    "upstream_reconnecting",
                    || format!("upstream {to}: {event}"),
                    json!({"upstream": to, "attempt": attempt, "delay_ms": delay.as_millis() as u64}),
                ),
                ClientEvent::Error { cause, class } => diag.event(
                    "upstream_error",
                    || format!("upstream {to}: {cause} ({class})"),
                    json!({"upstream": to, "cause": cause, "class": class}),
                ),
                ClientEvent::SecurityWarning(code) => diag.security_warning(
                    code.as_str(),
                    "the upstream's certificate is not verified (--insecure)",
                ),
                _ => {}
            }
        }
    })
}
