//! Statistics over repeated probes: per-phase min, median, p99 and max, and the loss count.

use serde::Serialize;
use std::collections::BTreeMap;

/// Summary of one phase's timings, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Spread {
    /// How many timings.
    pub count: usize,
    /// The fastest.
    pub min: f64,
    /// The middle one (nearest rank).
    pub median: f64,
    /// The 99th percentile (nearest rank).
    pub p99: f64,
    /// The slowest.
    pub max: f64,
}

/// Nearest-rank percentile of sorted samples (`q` in 0..=1); `None` when empty.
fn percentile(sorted: &[f64], q: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    Some(sorted[rank.clamp(1, sorted.len()) - 1])
}

impl Spread {
    /// The spread of `samples`; `None` when there are none.
    pub fn of(samples: &[f64]) -> Option<Spread> {
        let mut sorted: Vec<f64> = samples.iter().copied().filter(|s| s.is_finite()).collect();
        sorted.sort_by(f64::total_cmp);
        Some(Spread {
            count: sorted.len(),
            min: *sorted.first()?,
            median: percentile(&sorted, 0.5)?,
            p99: percentile(&sorted, 0.99)?,
            max: *sorted.last()?,
        })
    }
}

/// Accumulates repeated probes: timings of successful phases, and how many probes failed.
#[derive(Debug, Clone, Default)]
pub struct ProbeStats {
    probes: usize,
    failed: usize,
    /// Phase name -> its timings, in the order phases first appeared.
    samples: Vec<(String, Vec<f64>)>,
}

/// The statistics as reported.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StatsSummary {
    /// Probes run.
    pub probes: usize,
    /// Probes whose verdict was ok.
    pub ok: usize,
    /// Probes that failed.
    pub failed: usize,
    /// Failed probes as a percentage of all probes.
    pub loss_percent: f64,
    /// Per phase name, the spread of its timings in the probes where it worked.
    pub phases: BTreeMap<String, Spread>,
    /// Phase names in probe order, for tables.
    #[serde(skip)]
    pub order: Vec<String>,
}

impl ProbeStats {
    /// No probes yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// One probe: `ok` is its verdict, `phases` the (name, ms) of every phase that succeeded.
    pub fn record<'a>(&mut self, ok: bool, phases: impl IntoIterator<Item = (&'a str, f64)>) {
        self.probes += 1;
        if !ok {
            self.failed += 1;
        }
        for (name, ms) in phases {
            match self.samples.iter_mut().find(|(known, _)| known == name) {
                Some((_, list)) => list.push(ms),
                None => self.samples.push((name.to_string(), vec![ms])),
            }
        }
    }

    /// How many probes were recorded.
    pub fn probes(&self) -> usize {
        self.probes
    }

    /// The statistics so far.
    pub fn summary(&self) -> StatsSummary {
        let mut phases = BTreeMap::new();
        let mut order = Vec::new();
        for (name, list) in &self.samples {
            if let Some(spread) = Spread::of(list) {
                phases.insert(name.clone(), spread);
                order.push(name.clone());
            }
        }
        let loss_percent = if self.probes == 0 {
            0.0
        } else {
            100.0 * self.failed as f64 / self.probes as f64
        };
        StatsSummary {
            probes: self.probes,
            ok: self.probes - self.failed,
            failed: self.failed,
            loss_percent,
            phases,
            order,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_uses_nearest_rank() {
        let samples: Vec<f64> = (1..=100).rev().map(f64::from).collect();
        let s = Spread::of(&samples).unwrap();
        assert_eq!(
            (s.count, s.min, s.median, s.p99, s.max),
            (100, 1.0, 50.0, 99.0, 100.0)
        );
        let one = Spread::of(&[7.5]).unwrap();
        assert_eq!(
            (one.min, one.median, one.p99, one.max),
            (7.5, 7.5, 7.5, 7.5)
        );
        let three = Spread::of(&[3.0, 1.0, 2.0]).unwrap();
        assert_eq!((three.median, three.p99), (2.0, 3.0));
        assert!(Spread::of(&[]).is_none());
        assert!(Spread::of(&[f64::NAN]).is_none());
    }

    #[test]
    fn failed_probes_count_as_loss_and_keep_their_good_phases() {
        let mut stats = ProbeStats::new();
        stats.record(true, [("resolve", 0.1), ("connect", 1.0), ("ack", 4.0)]);
        stats.record(false, [("resolve", 0.3)]);
        stats.record(true, [("resolve", 0.2), ("connect", 3.0), ("ack", 2.0)]);
        stats.record(false, []);
        let summary = stats.summary();
        assert_eq!((summary.probes, summary.ok, summary.failed), (4, 2, 2));
        assert_eq!(summary.loss_percent, 50.0);
        assert_eq!(summary.order, ["resolve", "connect", "ack"]);
        assert_eq!(summary.phases["resolve"].count, 3);
        assert_eq!(summary.phases["resolve"].median, 0.2);
        assert_eq!(summary.phases["connect"].max, 3.0);
        assert_eq!(summary.phases["ack"].min, 2.0);
        let empty = ProbeStats::new().summary();
        assert_eq!((empty.probes, empty.loss_percent), (0, 0.0));
    }
}
