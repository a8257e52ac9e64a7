//! The run's one monitor: receives results and link events from every connection's worker,
//! keeps a tally (with its own HDR histogram) per connection and its per-second buckets, passes
//! samples and events on to the caller, and hands the tallies back for the report.

use super::progress::{ConnSample, RecentLatency, Sample, SoakUpdate};
use super::report::{new_histogram, record};
use super::{Done, SoakTotals, WorkerNote};
use crate::cause::Class;
use crate::client::{Client, ClientEvent, Population, Reason, State};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::time::Instant;

/// How often the monitor samples counters and considers a sample for the caller.
const TICK: Duration = Duration::from_millis(250);

/// One connection as the monitor follows it.
pub(super) struct Conn {
    client: Arc<Client>,
    generated: Arc<AtomicU64>,
    tally: SoakTotals,
    state: State,
    reconnects: u64,
    last_generated: u64,
}

impl Conn {
    pub(super) fn new(client: Arc<Client>, generated: Arc<AtomicU64>) -> Conn {
        Conn {
            client,
            generated,
            tally: SoakTotals::default(),
            state: State::Connecting,
            reconnects: 0,
            last_generated: 0,
        }
    }
}

/// What the monitor hands back.
pub(super) struct Monitored {
    pub tallies: Vec<SoakTotals>,
    /// A connection gave up on a permanent cause.
    pub permanent: bool,
    /// A connection gave up on a transient cause.
    pub transient: bool,
}

impl Monitored {
    /// The per-connection tallies merged.
    pub(crate) fn total(&self) -> SoakTotals {
        let mut total = SoakTotals::default();
        for t in &self.tallies {
            total.merge(t);
        }
        total
    }
}

/// Where the monitor's output goes, and how often samples are due.
pub(super) struct Output {
    pub updates: mpsc::Sender<SoakUpdate>,
    pub sample_every: Option<Duration>,
    pub per_message: bool,
}

struct Monitor {
    conns: Vec<Conn>,
    out: Output,
    start: Instant,
    window_start: Instant,
    /// When the generated counters were last sampled.
    sampled: Instant,
    /// When the caller was last sent a sample.
    last_sample: Option<Instant>,
    recent: hdrhistogram::Histogram<u64>,
    recent_completed: u64,
    recent_generated: u64,
    permanent: bool,
    transient: bool,
}

pub(super) async fn run(
    mut rx: mpsc::Receiver<WorkerNote>,
    conns: Vec<Conn>,
    start: Instant,
    out: Output,
) -> Monitored {
    let mut m = Monitor {
        conns,
        out,
        start,
        window_start: start,
        sampled: start,
        last_sample: None,
        recent: new_histogram(),
        recent_completed: 0,
        recent_generated: 0,
        permanent: false,
        transient: false,
    };
    let mut ticker = tokio::time::interval(TICK);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            update = rx.recv() => match update {
                Some(update) => m.apply(update).await,
                None => break,
            },
            _ = ticker.tick() => m.tick(false).await,
        }
    }
    m.tick(true).await;
    for conn in &mut m.conns {
        let stats = conn.client.stats();
        conn.tally.bytes_sent = stats.bytes_out;
        conn.tally.bytes_received = stats.bytes_in;
        conn.tally.warnings_by_code = stats.warnings_by_code;
        conn.tally.generated = conn.generated.load(Ordering::Relaxed);
    }
    Monitored {
        tallies: m.conns.into_iter().map(|c| c.tally).collect(),
        permanent: m.permanent,
        transient: m.transient,
    }
}

impl Monitor {
    /// A closed update channel only means the caller stopped listening: the run goes on.
    async fn send(&self, update: SoakUpdate) {
        let _ = self.out.updates.send(update).await;
    }

    async fn apply(&mut self, update: WorkerNote) {
        match update {
            WorkerNote::Done { conn, items } => {
                let Some(c) = self.conns.get_mut(conn) else {
                    return;
                };
                for done in &items {
                    add(&mut c.tally, done);
                    if done.code.is_some() {
                        record(&mut self.recent, done.latency);
                    }
                }
                self.recent_completed += items.len() as u64;
                if self.out.per_message {
                    self.send(SoakUpdate::Settled {
                        conn,
                        results: items,
                    })
                    .await;
                }
            }
            WorkerNote::Event { conn, event } => {
                if self.event(conn, &event) {
                    self.send(SoakUpdate::Connection { conn, event }).await;
                }
            }
            WorkerNote::Lagged { conn, n } => {
                if let Some(c) = self.conns.get_mut(conn) {
                    *c.tally
                        .errors_by_cause
                        .entry("events-lost".into())
                        .or_default() += n;
                }
            }
        }
    }

    /// Count one link event; `false` for a connection the run does not have.
    fn event(&mut self, conn: usize, event: &ClientEvent) -> bool {
        let Some(c) = self.conns.get_mut(conn) else {
            return false;
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
            }
            ClientEvent::Reconnecting { .. } => {
                c.reconnects += 1;
                c.tally.reconnects += 1;
            }
            ClientEvent::Error { cause, .. } => {
                *c.tally
                    .errors_by_cause
                    .entry(cause.as_str().into())
                    .or_default() += 1;
            }
            _ => {}
        }
        true
    }

    /// Sample the generated counters into their seconds; send a sample when one is due.
    async fn tick(&mut self, last: bool) {
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
        if !(last || self.due(now)) {
            return;
        }
        let sample = self.sample(now);
        self.last_sample = Some(Instant::now());
        self.send(SoakUpdate::Sample(Box::new(sample))).await;
        self.recent.reset();
        self.recent_completed = 0;
        self.recent_generated = 0;
        self.window_start = now;
    }

    fn due(&self, now: Instant) -> bool {
        let Some(every) = self.out.sample_every else {
            return false;
        };
        self.last_sample
            .is_none_or(|last| now.duration_since(last) >= every)
    }

    fn sample(&self, now: Instant) -> Sample {
        let secs = now
            .saturating_duration_since(self.window_start)
            .as_secs_f64();
        let rate = |n: u64| if secs > 0.0 { n as f64 / secs } else { 0.0 };
        let mut totals = SoakTotals::default();
        let mut connections = Vec::with_capacity(self.conns.len());
        let mut in_flight = 0;
        for c in &self.conns {
            let stats = c.client.stats();
            let pending = stats.in_flight + stats.queue_depth;
            in_flight += pending;
            connections.push(ConnSample {
                state: c.state,
                reconnects: c.reconnects,
                in_flight: pending,
                generated: c.last_generated,
            });
            totals.merge_counts(&c.tally);
        }
        totals.generated = connections.iter().map(|l| l.generated).sum();
        Sample {
            elapsed: now.saturating_duration_since(self.start),
            sent_per_s: rate(self.recent_generated),
            done_per_s: rate(self.recent_completed),
            latency: latency(&self.recent),
            in_flight,
            totals,
            connections,
        }
    }
}

fn latency(h: &hdrhistogram::Histogram<u64>) -> RecentLatency {
    if h.is_empty() {
        return RecentLatency::default();
    }
    let ms = |v: u64| v as f64 / 1000.0;
    RecentLatency {
        p50_ms: ms(h.value_at_quantile(0.5)),
        p99_ms: ms(h.value_at_quantile(0.99)),
        max_ms: ms(h.max()),
    }
}

/// Count one result into a tally.
fn add(t: &mut SoakTotals, done: &Done) {
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
