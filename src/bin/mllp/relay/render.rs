//! The upstream link as the relay shows it: each state change, reconnect and failure as a line
//! on stderr (`upstream_state`, `upstream_reconnecting`, `upstream_error` in JSON), and with
//! `--log-format json` a `relay_stats` event every second: messages per second each way, queue
//! depth, upstream ACK latency p50/p99, the link's state, reconnects and the last failure.

use crate::diag::Diag;
use mllp::client::ClientEvent;
use mllp::relay::Gauges;
use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::broadcast;

/// What the upstream link's events told so far.
#[derive(Debug, Default)]
pub struct Link {
    /// As the `upstream_state` event names it.
    state: serde_json::Value,
    reconnects: u64,
    /// The last failure's cause and class.
    failure: Option<(String, String)>,
}

impl Link {
    fn seen(&mut self, event: &ClientEvent) {
        match event {
            ClientEvent::StateChange(t) => self.state = json!(t.to),
            ClientEvent::Reconnecting { .. } => self.reconnects += 1,
            ClientEvent::Error { cause, class } => {
                self.failure = Some((cause.to_string(), class.to_string()));
            }
            _ => {}
        }
    }
}

/// Every second, a `relay_stats` event (JSON log format only) until aborted.
pub fn stats(
    diag: Diag,
    gauges: Arc<Gauges>,
    link: Arc<Mutex<Link>>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        if diag.quiet || !diag.json() {
            return;
        }
        let mut tick = tokio::time::interval(Duration::from_secs(1));
        tick.tick().await;
        let mut last = gauges.read();
        let mut at = tokio::time::Instant::now();
        loop {
            tick.tick().await;
            let now = gauges.read();
            let secs = at.elapsed().as_secs_f64().max(1e-3);
            at = tokio::time::Instant::now();
            let rate = |n: u64, before: u64| ((n - before) as f64 / secs * 10.0).round() / 10.0;
            let ms = |d: Option<Duration>| d.map(|d| (d.as_secs_f64() * 1e4).round() / 10.0);
            let link = link.lock().unwrap_or_else(|p| p.into_inner());
            let (cause, class) = link.failure.clone().unzip();
            diag.event(
                "relay_stats",
                String::new,
                json!({
                    "received": now.received,
                    "settled": now.settled,
                    "in_per_s": rate(now.received, last.received),
                    "out_per_s": rate(now.settled, last.settled),
                    "queue_depth": now.queue_depth,
                    "ack_p50_ms": ms(now.ack_p50),
                    "ack_p99_ms": ms(now.ack_p99),
                    "upstream_state": link.state,
                    "reconnects": link.reconnects,
                    "last_failure": cause,
                    "last_failure_class": class,
                }),
            );
            last = now;
        }
    })
}

/// Print the upstream link's events until the link is gone.
pub fn upstream(
    diag: Diag,
    mut events: broadcast::Receiver<ClientEvent>,
    to: String,
    announced: tokio::sync::oneshot::Receiver<()>,
    link: Arc<Mutex<Link>>,
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
            link.lock().unwrap_or_else(|p| p.into_inner()).seen(&event);
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
