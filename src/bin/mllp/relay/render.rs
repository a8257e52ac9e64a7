//! The upstream link as the relay shows it: each failed attempt as one line with its cause,
//! class and hint and the next attempt (`upstream_reconnecting` in JSON), each state it settles
//! in (`upstream_state`), and with
//! `--log-format json` a `relay_stats` event every second: messages per second each way, queue
//! depth, upstream ACK latency p50/p99, the link's state, reconnects and the last failure.

use crate::diag::Diag;
use mllp::cause::{Cause, Hint};
use mllp::client::ClientEvent;
use mllp::relay::Gauges;
use mllp::transport::Move;
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
    /// The link's state as the events name it (`connecting` before the first).
    pub fn state_name(&self) -> &str {
        self.state.as_str().unwrap_or("connecting")
    }

    pub fn reconnects(&self) -> u64 {
        self.reconnects
    }

    /// The last failure's cause and class.
    pub fn failure(&self) -> Option<&(String, String)> {
        self.failure.as_ref()
    }

    #[cfg(test)]
    pub fn failed(&mut self, cause: String, class: &str) {
        self.failure = Some((cause, class.into()));
    }

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

/// The mirror as the figures show it: its counts and its shadow link.
#[derive(Clone)]
pub struct Shadow {
    pub mirror: mllp::relay::Mirror,
    pub link: Arc<Mutex<Link>>,
}

impl Shadow {
    /// The counts, the link's state and reconnects, as `relay_stats` carries them.
    pub fn json(&self) -> serde_json::Value {
        let mut fields = super::mirror::counts_json(&self.mirror.counts());
        let link = self.link.lock().unwrap_or_else(|p| p.into_inner());
        fields["state"] = link.state.clone();
        fields["reconnects"] = json!(link.reconnects);
        fields
    }
}

/// Every second, a `relay_stats` event (JSON log format only) until aborted.
pub fn stats(
    diag: Diag,
    gauges: Arc<Gauges>,
    link: Arc<Mutex<Link>>,
    mirror: Option<Shadow>,
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
            let mut fields = json!({
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
            });
            drop(link);
            if let Some(shadow) = &mirror {
                fields["mirror"] = shadow.json();
            }
            diag.event("relay_stats", String::new, fields);
            last = now;
        }
    })
}

/// Print the upstream link's events until the link is gone: one line for each failed attempt
/// (its cause, class and hint, and when the next attempt starts), one for each state the link
/// settles in; the passage through CONNECTING and RECONNECTING is said by those lines.
pub fn upstream(
    diag: Diag,
    events: broadcast::Receiver<ClientEvent>,
    to: String,
    announced: tokio::sync::oneshot::Receiver<()>,
    link: Arc<Mutex<Link>>,
) -> tokio::task::JoinHandle<()> {
    link_events(diag, events, ("upstream", to), announced, link)
}

/// As [`upstream`], for the link named `side` (`upstream`, `mirror`): its lines start with the
/// side and its address, its events are named `SIDE_state`, `SIDE_reconnecting`, `SIDE_error`.
pub fn link_events(
    diag: Diag,
    mut events: broadcast::Receiver<ClientEvent>,
    (side, mut to): (&'static str, String),
    announced: tokio::sync::oneshot::Receiver<()>,
    link: Arc<Mutex<Link>>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        // The bound address is the first line; the link's events since the start wait for it.
        let _ = announced.await;
        // The failure behind the next reconnect line.
        let mut failure = None;
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
                // Over several `--to`s, the lines name the host of each connection.
                ClientEvent::Host(turn) => {
                    if let Some(moved) = &turn.moved {
                        moved_on(&diag, side, moved, &turn.endpoint);
                    }
                    to.clone_from(&turn.endpoint);
                }
                ClientEvent::Error { cause, .. } => failure = Some(*cause),
                ClientEvent::StateChange(t) if says_itself(t) => {
                    if let Some(cause) = failure.take() {
                        failed(&diag, (side, &to), cause, None);
                    }
                    diag.event(
                        &format!("{side}_state"),
                        || format!("{side} {to}: {t}"),
                        json!({side: to, "from": t.from, "to": t.to, "reason": t.reason}),
                    )
                }
                ClientEvent::Reconnecting { attempt, delay } => match failure.take() {
                    Some(cause) => failed(&diag, (side, &to), cause, Some((*attempt, *delay))),
                    None => diag.event(
                        &format!("{side}_reconnecting"),
                        || format!("{side} {to}: {event}"),
                        json!({side: to, "attempt": attempt, "delay_ms": delay.as_millis() as u64}),
                    ),
                },
                ClientEvent::SecurityWarning(code) => diag.security_warning(
                    code.as_str(),
                    match side {
                        "upstream" => "the upstream's certificate is not verified (--insecure)",
                        _ => "the shadow's certificate is not verified (--mirror-insecure)",
                    },
                ),
                _ => {}
            }
        }
    })
}

/// The link moved between hosts: `upstream: failover from A to B` (`upstream_failover` or
/// `upstream_failback`, with `from` and `to`).
fn moved_on(diag: &Diag, side: &str, moved: &Move, to: &str) {
    let (name, from) = match moved {
        Move::Failover { from } => ("failover", from),
        Move::Failback { from } => ("failback", from),
    };
    diag.event(
        &format!("{side}_{name}"),
        || format!("{side}: {name} from {from} to {to}"),
        json!({"from": from, "to": to}),
    );
}

/// Whether a state change gets a line of its own: not the way into RECONNECTING (the failure's
/// line says it) nor the way from it to the next attempt (the same line said when).
fn says_itself(t: &mllp::client::Transition) -> bool {
    use mllp::client::State;
    !matches!(
        (t.from, t.to),
        (_, State::Reconnecting) | (State::Reconnecting, State::Connecting)
    )
}

/// One line for a failure of the upstream link: its cause, class and hint, and the attempt
/// that follows (when one does).
fn failed(diag: &Diag, (side, to): (&str, &str), cause: Cause, next: Option<(u32, Duration)>) {
    let class = cause.class();
    let hint = hint(cause);
    let then = match next {
        Some((attempt, delay)) => format!(
            "; reconnecting: attempt {attempt} in {}",
            mllp::duration::Rounded(delay)
        ),
        None => String::new(),
    };
    let (name, mut fields) = match next {
        Some((attempt, delay)) => (
            "reconnecting",
            json!({"attempt": attempt, "delay_ms": delay.as_millis() as u64}),
        ),
        None => ("error", json!({})),
    };
    fields[side] = json!(to);
    fields["cause"] = json!(cause);
    fields["class"] = json!(class);
    fields["hint"] = json!(hint);
    diag.event(
        &format!("{side}_{name}"),
        || format!("{side} {to}: {cause} ({class}): {hint}{then}"),
        fields,
    );
}

/// What an operator can do about an upstream failure, worded for the relay, which pairs the
/// upstream's answers by control ID and has no flag to pair them otherwise.
fn hint(cause: Cause) -> std::borrow::Cow<'static, str> {
    match cause.hint() {
        Hint::CorrelateInOrder | Hint::CorrelateByControlId => std::borrow::Cow::Borrowed(
            "the upstream's ACKs do not name the messages' control IDs (MSH-10 in MSA-2), and \
             the relay pairs answers by control ID: have the upstream echo them",
        ),
        hint => crate::hint::words(&hint),
    }
}
