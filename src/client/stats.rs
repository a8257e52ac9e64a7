//! Client statistics: counters the actor updates as it goes, and a serde snapshot with latency
//! percentiles from an HDR histogram.

use super::fate::{Fate, Population};
use super::state::State;
use crate::ack::AckCode;
use crate::cause::Cause;
use crate::warning::WarningCode;
use hdrhistogram::Histogram;
use serde::Serialize;
use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

/// Every ACK code, in declaration order (the index of `acked_by_code`).
const ACK_CODES: [AckCode; 6] = AckCode::ALL;

/// Latency percentiles in milliseconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Latency {
    pub count: u64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
}

/// The latest failure of the link: its cause and what went wrong, in words that name
/// addresses, names and certificate checks, never payload.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LinkFailure {
    pub cause: Cause,
    pub detail: String,
}

/// A point-in-time view, plain JSON.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Stats {
    pub state: State,
    /// Admitted, not yet written.
    pub queue_depth: usize,
    pub queue_bytes: usize,
    /// Written, not yet settled.
    pub in_flight: usize,
    /// Of those, committed (`CA`) and waiting for their application ACK.
    pub awaiting_app_ack: usize,
    /// Frames written (a resend counts again).
    pub sent: u64,
    pub acked_by_code: BTreeMap<String, u64>,
    pub timed_out: u64,
    pub reconnect_attempts: u64,
    pub warnings_by_code: BTreeMap<String, u64>,
    pub by_population: BTreeMap<String, u64>,
    pub bytes_in: u64,
    pub bytes_out: u64,
    /// RFC 3339, UTC.
    pub last_connected: Option<String>,
    pub last_ack: Option<String>,
    pub latency_ms: Latency,
    /// The latest failure that came with a detail (a connect attempt, a refusal by TLS).
    pub last_failure: Option<LinkFailure>,
}

/// The live counters behind [`Stats`].
#[derive(Debug)]
pub(crate) struct Counters {
    pub state: State,
    pub queue_depth: usize,
    pub queue_bytes: usize,
    pub in_flight: usize,
    pub awaiting_app_ack: usize,
    pub sent: u64,
    /// By [`AckCode`], in declaration order: an array, not a map, as it is counted per ACK.
    pub acked_by_code: [u64; ACK_CODES.len()],
    pub timed_out: u64,
    pub reconnect_attempts: u64,
    pub warnings_by_code: BTreeMap<WarningCode, u64>,
    /// By [`Population`], in [`Population::ALL`] order.
    pub by_population: [u64; Population::ALL.len()],
    pub bytes_in: u64,
    pub bytes_out: u64,
    pub last_connected: Option<SystemTime>,
    pub last_ack: Option<SystemTime>,
    pub last_failure: Option<LinkFailure>,
    /// Microseconds, 1 us .. 1 h, 3 significant digits.
    pub latency: Histogram<u64>,
}

impl Default for Counters {
    fn default() -> Self {
        Counters {
            state: State::Connecting,
            queue_depth: 0,
            queue_bytes: 0,
            in_flight: 0,
            awaiting_app_ack: 0,
            sent: 0,
            acked_by_code: [0; ACK_CODES.len()],
            timed_out: 0,
            reconnect_attempts: 0,
            warnings_by_code: BTreeMap::new(),
            by_population: [0; Population::ALL.len()],
            bytes_in: 0,
            bytes_out: 0,
            last_connected: None,
            last_ack: None,
            last_failure: None,
            latency: Histogram::new_with_bounds(1, 3_600_000_000, 3)
                .expect("constant histogram bounds are valid"),
        }
    }
}

impl Counters {
    pub fn record_fate(&mut self, fate: &Fate) {
        self.record_fate_at(fate, None);
    }

    /// As [`Counters::record_fate`], with the wall-clock time of the read that brought its ACK
    /// (read once for all the ACKs of that read) when there is one.
    pub fn record_fate_at(&mut self, fate: &Fate, wall: Option<SystemTime>) {
        self.by_population[fate.population() as usize] += 1;
        if let Some(code) = fate.ack_code() {
            if fate.ack().is_some() {
                self.acked_by_code[code as usize] += 1;
                self.last_ack = Some(wall.unwrap_or_else(SystemTime::now));
            }
        }
        if let Some(latency) = fate.latency() {
            self.record_latency(latency);
        }
    }

    pub fn record_latency(&mut self, latency: Duration) {
        let micros = (latency.as_micros() as u64).clamp(1, 3_600_000_000);
        self.latency.saturating_record(micros);
    }

    pub fn snapshot(&self) -> Stats {
        let ms = |q: f64| self.latency.value_at_quantile(q) as f64 / 1000.0;
        let latency = if self.latency.is_empty() {
            Latency::default()
        } else {
            Latency {
                count: self.latency.len(),
                p50: ms(0.5),
                p90: ms(0.9),
                p99: ms(0.99),
                p999: ms(0.999),
                max: self.latency.max() as f64 / 1000.0,
            }
        };
        let time =
            |t: Option<SystemTime>| t.map(|t| humantime::format_rfc3339_millis(t).to_string());
        Stats {
            state: self.state,
            queue_depth: self.queue_depth,
            queue_bytes: self.queue_bytes,
            in_flight: self.in_flight,
            awaiting_app_ack: self.awaiting_app_ack,
            sent: self.sent,
            acked_by_code: ACK_CODES
                .iter()
                .zip(self.acked_by_code)
                .filter(|(_, n)| *n > 0)
                .map(|(code, n)| (code.as_str().to_string(), n))
                .collect(),
            timed_out: self.timed_out,
            reconnect_attempts: self.reconnect_attempts,
            warnings_by_code: self
                .warnings_by_code
                .iter()
                .map(|(k, v)| (k.as_str().to_string(), *v))
                .collect(),
            by_population: Population::ALL
                .iter()
                .zip(self.by_population)
                .filter(|(_, n)| *n > 0)
                .map(|(pop, n)| (pop.as_str().to_string(), n))
                .collect(),
            bytes_in: self.bytes_in,
            bytes_out: self.bytes_out,
            last_connected: time(self.last_connected),
            last_ack: time(self.last_ack),
            latency_ms: latency,
            last_failure: self.last_failure.clone(),
        }
    }
}

#[cfg(test)]
#[test]
fn array_indices_follow_declaration_order() {
    for (i, pop) in Population::ALL.iter().enumerate() {
        assert_eq!(*pop as usize, i);
    }
    for (i, code) in ACK_CODES.iter().enumerate() {
        assert_eq!(*code as usize, i);
    }
}
