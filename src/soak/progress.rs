//! What a running soak tells its caller ([`SoakUpdate`]): periodic samples of its figures, each
//! connection's link events, why generating stopped, and (when asked) each message's result.
//! Codes, counts and timings only: never payload bytes.

use super::{Done, SoakTotals};
use crate::client::{ClientEvent, State};
use std::collections::BTreeMap;
use std::time::Duration;

/// One update of a running soak, in the order things happened.
#[derive(Debug)]
#[non_exhaustive]
pub enum SoakUpdate {
    /// The figures at the end of an interval (every [`SoakPlan::sample_every`], and once at
    /// the end).
    ///
    /// [`SoakPlan::sample_every`]: super::SoakPlan::sample_every
    Sample(Box<Sample>),
    /// An event of connection `conn`'s client (0-based): state changes with their reason,
    /// reconnect attempts, classified link errors, warnings, security warnings.
    Connection {
        /// The connection's index, from 0.
        conn: usize,
        /// What its client reported.
        event: ClientEvent,
    },
    /// Generating stopped; what was generated now settles.
    Stopping(StoppedBy),
    /// Results of messages settled on connection `conn`, in batches (with
    /// [`SoakPlan::per_message`](super::SoakPlan::per_message) only).
    Settled {
        /// The connection's index, from 0.
        conn: usize,
        /// One entry per message settled.
        results: Vec<Done>,
    },
}

/// Why generating stopped, as the report's `config.stopped_by` says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoppedBy {
    /// The plan's duration ran out.
    Duration,
    /// Every connection generated its share of the plan's messages.
    Messages,
    /// The run was stopped from outside ([`SoakRun::stop`](super::SoakRun::stop); Ctrl-C for
    /// the command line).
    Interrupt,
    /// A connection gave up reconnecting (set at the end, over the others).
    GaveUp,
}

impl StoppedBy {
    /// The stable name, as the report's `config.stopped_by` says it.
    pub fn as_str(self) -> &'static str {
        match self {
            StoppedBy::Duration => "duration",
            StoppedBy::Messages => "messages",
            StoppedBy::Interrupt => "interrupt",
            StoppedBy::GaveUp => "gave-up",
        }
    }
}

/// The run's figures at one moment: rates and latency over the interval since the last sample,
/// totals since the start.
#[derive(Debug, Clone)]
pub struct Sample {
    /// Since the start of the run.
    pub elapsed: Duration,
    /// Messages generated per second over the interval.
    pub sent_per_s: f64,
    /// Messages settled per second over the interval.
    pub done_per_s: f64,
    /// Latency of the messages answered in the interval.
    pub latency: RecentLatency,
    /// Messages in flight or queued over all connections.
    pub in_flight: usize,
    /// Counters since the start: generated, the six fates and ACK codes, reconnects, link
    /// errors and outcomes by cause (no latency histogram, no seconds).
    pub totals: SoakTotals,
    /// One entry per connection, in order.
    pub connections: Vec<ConnSample>,
}

impl Sample {
    /// How many connections are in each state, by the state's name (`CONNECTED`, ...).
    pub fn states(&self) -> BTreeMap<&'static str, usize> {
        let mut by_state = BTreeMap::new();
        for c in &self.connections {
            *by_state.entry(c.state.as_str()).or_default() += 1;
        }
        by_state
    }
}

/// Latency over one interval, in milliseconds; zero when nothing was answered.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RecentLatency {
    /// The median.
    pub p50_ms: f64,
    /// The 99th percentile.
    pub p99_ms: f64,
    /// The largest.
    pub max_ms: f64,
}

/// One connection at the moment of a sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnSample {
    /// The link state of its client.
    pub state: State,
    /// Reconnect attempts so far.
    pub reconnects: u64,
    /// Messages in flight or queued on this connection.
    pub in_flight: usize,
    /// Messages generated on this connection so far.
    pub generated: u64,
}
