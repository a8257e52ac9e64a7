//! The one monitor: receives results and link events from every connection over a channel,
//! keeps a tally (with its own HDR histogram) per connection, feeds the live view and the
//! Prometheus metrics, and hands the tallies back for the report.

use super::view::{ConnLine, Mode, Snapshot, View};
use crate::diag::Diag;
use mllp::cause::Class;
use mllp::client::{Client, ClientEvent, Population, Reason, State};
use mllp::soak::report::{new_histogram, record};
use mllp::soak::Tally;
use mllp::soak::{Done, Update};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::time::Instant;

/// How often the monitor samples counters and considers redrawing.
const TICK: Duration = Duration::from_millis(250);

static METRICS: AtomicBool = AtomicBool::new(false);

/// One connection as the monitor follows it.
pub struct Conn {
    client: Arc<Client>,
    generated: Arc<AtomicU64>,
    tally: Tally,
    state: State,
    reconnects: u64,
    last_generated: u64,
}

impl Conn {
    pub fn new(client: Arc<Client>, generated: Arc<AtomicU64>) -> Conn {
        Conn {
            client,
            generated,
            tally: Tally::default(),
            state: State::Connecting,
            reconnects: 0,
            last_generated: 0,
        }
    }
}

/// What the monitor hands back.
pub struct Monitored {
    pub tallies: Vec<Tally>,
    pub permanent: bool,
    pub transient: bool,
}

impl Monitored {
    /// The per-connection tallies merged.
    pub fn total(&self) -> Tally {
        let mut total = Tally::default();
        for t in &self.tallies {
            total.merge(t);
        }
        total
    }
}

/// Serve Prometheus metrics on `addr`.
pub fn install_metrics(addr: std::net::SocketAddr) -> anyhow::Result<()> {
    crate::prometheus::install(addr, None)?;
    METRICS.store(true, Ordering::Relaxed);
    Ok(())
}

struct Monitor {
    conns: Vec<Conn>,
    view: View,
    start: Instant,
    window_start: Instant,
    /// When the generated counters were last sampled.
    sampled: Instant,
    recent: hdrhistogram::Histogram<u64>,
    recent_completed: u64,
    recent_generated: u64,
    permanent: bool,
    transient: bool,
    metrics: bool,
}

pub async fn run(
    mut rx: mpsc::Receiver<Update>,
    conns: Vec<Conn>,
    mode: Mode,
    start: Instant,
    diag: Diag,
) -> Monitored {
    let mut m = Monitor {
        view: View::new(mode, conns.len(), diag),
        conns,
        start,
        window_start: start,
        sampled: start,
        recent: new_histogram(),
        recent_completed: 0,
        recent_generated: 0,
        permanent: false,
        transient: false,
        metrics: METRICS.load(Ordering::Relaxed),
    };
    let mut ticker = tokio::time::interval(TICK);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            update = rx.recv() => match update {
                Some(update) => m.apply(update),
                None => break,
            },
            _ = ticker.tick() => m.tick(false),
        }
    }
    m.tick(true);
    for conn in &mut m.conns {
        let stats = conn.client.stats();
        conn.tally.bytes_sent = stats.bytes_out;
        conn.tally.bytes_received = stats.bytes_in;
        conn.tally.warnings_by_code = stats.warnings_by_code;
        conn.tally.generated = conn.generated.load(Ordering::Relaxed);
    }
    m.view.finish();
    Monitored {
        tallies: m.conns.into_iter().map(|c| c.tally).collect(),
        permanent: m.permanent,
        transient: m.transient,
    }
}

impl Monitor {
    fn apply(&mut self, update: Update) {
        match update {
            Update::Done { conn, items } => {
                let Some(c) = self.conns.get_mut(conn) else {
                    return;
                };
                for done in &items {
                    add(&mut c.tally, done);
                    if let Some(_code) = done.code {
                        record(&mut self.recent, done.latency);
                    }
                    if self.metrics {
                        metrics::counter!("mllp_soak_messages_total", "outcome" => done.population.as_str())
                            .increment(1);
                        if let Some(code) = done.code {
                            metrics::counter!("mllp_soak_acks_total", "code" => code.as_str())
                                .increment(1);
                            metrics::histogram!("mllp_soak_latency_seconds")
                                .record(done.latency.as_secs_f64());
                        }
                    }
                }
                self.recent_completed += items.len() as u64;
            }
            Update::Event { conn, event } => self.event(conn, event),
            Update::Lagged { conn, n } => {
                if let Some(c) = self.conns.get_mut(conn) {
                    *c.tally
                        .errors_by_cause
                        .entry("events-lost".into())
                        .or_default() += n;
                }
            }
        }
    }

    fn event(&mut self, conn: usize, event: ClientEvent) {
        let Some(c) = self.conns.get_mut(conn) else {
            return;
        };
        match event {
            ClientEvent::StateChange(t) => {
                let key = format!("{}->{}", t.from, t.to);
                *c.tally.state_changes.entry(key).or_default() += 1;
                c.state = t.to;
                if let Reason::GaveUp(cause) = t.reason {
                    match cause.class() {
                        Class::Permanent => self.permanent = true,
                        Class::Transient => self.transient = true,
                    }
                }
                if self.metrics {
                    metrics::counter!("mllp_soak_state_changes_total", "to" => t.to.as_str())
                        .increment(1);
                }
                self.view.transition(conn, &t);
            }
            ClientEvent::Reconnecting { .. } => {
                c.reconnects += 1;
                c.tally.reconnects += 1;
                if self.metrics {
                    metrics::counter!("mllp_soak_reconnects_total").increment(1);
                }
            }
            ClientEvent::Error { cause, .. } => {
                *c.tally
                    .errors_by_cause
                    .entry(cause.as_str().into())
                    .or_default() += 1;
                if self.metrics {
                    metrics::counter!("mllp_soak_link_errors_total", "cause" => cause.as_str())
                        .increment(1);
                }
            }
            ClientEvent::SecurityWarning(code) => self.view.security_warning(code.as_str()),
            _ => {}
        }
    }

    /// Sample the generated counters into their seconds; redraw when the view is due.
    fn tick(&mut self, last: bool) {
        let now = Instant::now();
        // What was generated since the last sample goes to the second of the interval's middle:
        // the second of `now` would shift a quarter second's messages into the next second.
        let middle = self.sampled + now.saturating_duration_since(self.sampled) / 2;
        self.sampled = now;
        let second = middle.saturating_duration_since(self.start).as_secs() as usize;
        for c in &mut self.conns {
            let generated = c.generated.load(Ordering::Relaxed);
            let delta = generated - c.last_generated.min(generated);
            if delta > 0 {
                c.tally.second(second).sent += delta;
            }
            c.last_generated = generated;
            self.recent_generated += delta;
        }
        if !(last || self.view.due(now)) {
            return;
        }
        let secs = now
            .saturating_duration_since(self.window_start)
            .as_secs_f64();
        let rate = |n: u64| if secs > 0.0 { n as f64 / secs } else { 0.0 };
        let mut totals = Tally::default();
        let mut lines = Vec::with_capacity(self.conns.len());
        let mut in_flight = 0;
        for c in &self.conns {
            let stats = c.client.stats();
            let pending = stats.in_flight + stats.queue_depth;
            in_flight += pending;
            lines.push(ConnLine {
                state: c.state,
                reconnects: c.reconnects,
                in_flight: pending,
                generated: c.last_generated,
            });
            totals.merge_counts(&c.tally);
        }
        totals.generated = lines.iter().map(|l| l.generated).sum();
        if self.metrics {
            metrics::gauge!("mllp_soak_in_flight").set(in_flight as f64);
        }
        let snapshot = Snapshot {
            elapsed: now.saturating_duration_since(self.start),
            sent_per_s: rate(self.recent_generated),
            done_per_s: rate(self.recent_completed),
            recent: latency(&self.recent),
            in_flight,
            totals: &totals,
            conns: &lines,
        };
        self.view.draw(&snapshot);
        self.recent.reset();
        self.recent_completed = 0;
        self.recent_generated = 0;
        self.window_start = now;
    }
}

fn latency(h: &hdrhistogram::Histogram<u64>) -> [f64; 3] {
    if h.is_empty() {
        return [0.0; 3];
    }
    let ms = |v: u64| v as f64 / 1000.0;
    [
        ms(h.value_at_quantile(0.5)),
        ms(h.value_at_quantile(0.99)),
        ms(h.max()),
    ]
}

/// Count one result into a tally.
fn add(t: &mut Tally, done: &Done) {
    t.fates.add(done.population, done.code);
    if done.code.is_some() {
        record(&mut t.latency, done.latency);
    }
    if let Some(cause) = done.cause {
        *t.outcomes_by_cause.entry(cause.into()).or_default() += 1;
    }
    let second = t.second(done.at.as_secs() as usize);
    if done.population == Population::Accepted {
        second.accepted += 1;
    } else {
        second.failed += 1;
    }
}
