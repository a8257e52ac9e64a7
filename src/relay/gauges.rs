//! The relay's running figures for its live view and events: messages taken from downstream and
//! settled upstream, recent upstream ACK latencies (p50/p99), and the queue depth as last read.
//! Counters only: nothing here holds a payload. Every update is an atomic store or add, so the
//! per-message path takes no lock; a reading taken while latencies are being recorded may see a
//! slot before its update, so its percentiles are of nearly (not exactly) the latest answers.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Latencies kept for the percentiles: the most recent this many.
const LATENCIES: usize = 1024;

/// Shared by the sinks, the forwarder and whoever shows the figures.
#[derive(Debug)]
pub struct Gauges {
    received: AtomicU64,
    settled: AtomicU64,
    queue_depth: AtomicU64,
    /// Latencies answered so far; the next one goes to slot `answered % LATENCIES`.
    answered: AtomicU64,
    /// A ring of the recent latencies, in nanoseconds plus one: 0 is a slot never written.
    latencies: [AtomicU64; LATENCIES],
}

impl Default for Gauges {
    fn default() -> Self {
        Gauges {
            received: AtomicU64::new(0),
            settled: AtomicU64::new(0),
            queue_depth: AtomicU64::new(0),
            answered: AtomicU64::new(0),
            latencies: std::array::from_fn(|_| AtomicU64::new(0)),
        }
    }
}

/// One reading of the gauges.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Reading {
    /// Messages taken from downstream so far.
    pub received: u64,
    /// Messages settled upstream (answered, or given up on) so far.
    pub settled: u64,
    /// Pending rows of the queue, as last read (0 in pass-through).
    pub queue_depth: u64,
    /// Upstream ACK latency percentiles of the recent answers, if any came.
    pub ack_p50: Option<Duration>,
    /// The 99th percentile of the same answers.
    pub ack_p99: Option<Duration>,
}

impl Gauges {
    /// `n` more messages taken from downstream.
    pub fn received(&self, n: u64) {
        self.received.fetch_add(n, Ordering::Relaxed);
    }

    /// One message settled upstream, with its ACK latency if it was answered.
    pub fn settled(&self, latency: Option<Duration>) {
        self.settled.fetch_add(1, Ordering::Relaxed);
        if let Some(latency) = latency {
            // The oldest slot is overwritten: the ring keeps the most recent latencies.
            let at = self.answered.fetch_add(1, Ordering::Relaxed) as usize % LATENCIES;
            let nanos = u64::try_from(latency.as_nanos()).unwrap_or(u64::MAX - 1);
            self.latencies[at].store(nanos + 1, Ordering::Relaxed);
        }
    }

    /// The queue's pending rows, as just read.
    pub fn queue_depth(&self, depth: u64) {
        self.queue_depth.store(depth, Ordering::Relaxed);
    }

    /// The figures now, percentiles computed from the recent latencies.
    pub fn read(&self) -> Reading {
        let mut sorted: Vec<Duration> = self
            .latencies
            .iter()
            .map(|slot| slot.load(Ordering::Relaxed))
            .filter(|&stored| stored > 0)
            .map(|stored| Duration::from_nanos(stored - 1))
            .collect();
        sorted.sort_unstable();
        let at = |p: f64| {
            (!sorted.is_empty()).then(|| sorted[((sorted.len() - 1) as f64 * p).round() as usize])
        };
        Reading {
            received: self.received.load(Ordering::Relaxed),
            settled: self.settled.load(Ordering::Relaxed),
            queue_depth: self.queue_depth.load(Ordering::Relaxed),
            ack_p50: at(0.5),
            ack_p99: at(0.99),
        }
    }
}

/// The ACK latency of a send's fate, when an answer came.
pub(crate) fn latency(fate: &crate::client::Fate) -> Option<Duration> {
    use crate::client::Fate;
    match fate {
        Fate::Accepted { latency, .. }
        | Fate::Negative { latency, .. }
        | Fate::CommittedOnly { latency, .. } => Some(*latency),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_come_from_the_recent_latencies() {
        let g = Gauges::default();
        assert_eq!(g.read().ack_p50, None);
        for ms in 1..=100 {
            g.settled(Some(Duration::from_millis(ms)));
        }
        g.settled(None);
        g.received(101);
        let r = g.read();
        assert_eq!((r.received, r.settled), (101, 101));
        assert_eq!(r.ack_p50, Some(Duration::from_millis(51)));
        assert_eq!(r.ack_p99, Some(Duration::from_millis(99)));
        for _ in 0..LATENCIES {
            g.settled(Some(Duration::from_millis(7)));
        }
        assert_eq!(g.read().ack_p99, Some(Duration::from_millis(7)));
    }
}
