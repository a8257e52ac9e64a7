//! CI thresholds on a soak report ([`Thresholds`]) and their judgements, each worded as the
//! threshold was set: `max-p99 1us (observed 12.345ms)`.

use super::SoakReport;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::time::Duration;

/// One threshold judged against a report: its name, limit, what was observed, and whether it holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Judgement {
    /// The flag: `max-p99`, `max-error-rate`, `min-throughput`.
    pub name: String,
    /// The bound, in the threshold's unit: milliseconds for `max-p99`, a fraction for
    /// `max-error-rate`, accepted messages per second for `min-throughput`.
    pub limit: f64,
    /// What the report shows, in the same unit.
    pub observed: f64,
    /// `observed` is within `limit` (at most, or for `min-throughput` at least).
    pub ok: bool,
}

/// CI thresholds; each unset one is not judged.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Thresholds {
    /// The largest 99th-percentile latency that passes.
    pub max_p99: Option<Duration>,
    /// Fraction of generated messages that did not end accepted.
    pub max_error_rate: Option<f64>,
    /// Accepted messages per second.
    pub min_throughput: Option<f64>,
}

impl Thresholds {
    /// One judgement per threshold set, in the order `max-p99`, `max-error-rate`, `min-throughput`.
    pub fn evaluate(&self, report: &SoakReport) -> Vec<Judgement> {
        let mut out = Vec::new();
        if let Some(limit) = self.max_p99 {
            // From whole nanoseconds: `1ns` is 0.000001 ms, not float noise around it.
            let limit = limit.as_nanos() as f64 / 1e6;
            let observed = report.latency_ms.p99;
            out.push(judgement("max-p99", limit, observed, observed <= limit));
        }
        if let Some(limit) = self.max_error_rate {
            let observed = report.error_rate();
            out.push(judgement(
                "max-error-rate",
                limit,
                observed,
                observed <= limit,
            ));
        }
        if let Some(limit) = self.min_throughput {
            let observed = report.throughput;
            out.push(judgement(
                "min-throughput",
                limit,
                observed,
                observed >= limit,
            ));
        }
        out
    }
}

fn judgement(name: &str, limit: f64, observed: f64, ok: bool) -> Judgement {
    Judgement {
        name: name.into(),
        limit,
        observed,
        ok,
    }
}

impl fmt::Display for Judgement {
    /// The threshold with its limit, and what was observed: `max-p99 1us (observed 12.345ms)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (limit, observed) = match self.name.as_str() {
            "max-p99" => (duration_ms(self.limit), duration_ms(self.observed)),
            "min-throughput" => (
                format!("{}", self.limit),
                format!("{} messages/s", trimmed(self.observed, 1)),
            ),
            _ => (format!("{}", self.limit), trimmed(self.observed, 4)),
        };
        write!(f, "{} {limit} (observed {observed})", self.name)
    }
}

/// Milliseconds in the unit that suits them (`1ns`, `412.3us`, `12.345ms`, `1.5s`): the
/// limit reads as the flag was given.
fn duration_ms(ms: f64) -> String {
    let ns = (ms * 1e6).round().max(0.0);
    if ns < 1e3 {
        format!("{ns}ns")
    } else if ns < 1e6 {
        format!("{}us", trimmed(ns / 1e3, 1))
    } else if ns < 1e9 {
        format!("{}ms", trimmed(ns / 1e6, 3))
    } else {
        format!("{}s", trimmed(ns / 1e9, 3))
    }
}

/// `value` to `places` decimals, without trailing zeros.
fn trimmed(value: f64, places: usize) -> String {
    let s = format!("{value:.places$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_in_human_units() {
        assert_eq!(duration_ms(1e-6), "1ns");
        assert_eq!(duration_ms(0.0), "0ns");
        assert_eq!(duration_ms(0.4123), "412.3us");
        assert_eq!(duration_ms(1.0), "1ms");
        assert_eq!(duration_ms(12.3456), "12.346ms");
        assert_eq!(duration_ms(1500.0), "1.5s");
        assert_eq!(trimmed(0.25, 4), "0.25");
        assert_eq!(trimmed(3.0, 1), "3");
    }

    #[test]
    fn a_judgement_reads_as_its_flag_with_what_was_observed() {
        let p99 = judgement("max-p99", 0.001, 12.3456, false);
        assert_eq!(p99.to_string(), "max-p99 1us (observed 12.346ms)");
        let rate = judgement("max-error-rate", 0.01, 0.052345, false);
        assert_eq!(rate.to_string(), "max-error-rate 0.01 (observed 0.0523)");
        let floor = judgement("min-throughput", 1e12, 812.25, false);
        assert_eq!(
            floor.to_string(),
            "min-throughput 1000000000000 (observed 812.2 messages/s)"
        );
    }
}
