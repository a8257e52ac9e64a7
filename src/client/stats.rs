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
use std::time::SystemTime;

/// Every ACK code, in declaration order (the index of `acked_by_code`).
const ACK_CODES: [AckCode; 6] = AckCode::ALL;

/// Latency percentiles in milliseconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Latency {
    /// Latencies recorded.
    pub count: u64,
    /// Median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
    /// 99.9th percentile.
    pub p999: f64,
    /// Largest recorded.
    pub max: f64,
}

/// The latest failure of the link: its cause and what went wrong, in words that name
/// addresses, names and certificate checks, never payload.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LinkFailure {
    /// The failure's cause.
    pub cause: Cause,
    /// What went wrong, in words (never payload bytes).
    pub detail: String,
}

/// A point-in-time view, plain JSON.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Stats {
    /// The link's state.
    pub state: State,
    /// Admitted, not yet written.
    pub queue_depth: usize,
    /// Payload bytes of the sends admitted and not yet written.
    pub queue_bytes: usize,
    /// Written, not yet settled.
    pub in_flight: usize,
    /// Of those, committed (`CA`) and waiting for their application ACK.
    pub awaiting_app_ack: usize,
    /// Frames written (a resend counts again).
    pub sent: u64,
    /// Final ACKs counted by code (`AA`, `AE`, ...); codes never seen are left out.
    pub acked_by_code: BTreeMap<String, u64>,
    /// Written frames whose ACK did not come in time.
    pub timed_out: u64,
    /// Reconnect attempts scheduled.
    pub reconnect_attempts: u64,
    /// Warnings raised, by code.
    pub warnings_by_code: BTreeMap<String, u64>,
    /// Settled sends by population; populations with none are left out.
    pub by_population: BTreeMap<String, u64>,
    /// Bytes read from the peer.
    pub bytes_in: u64,
    /// Bytes written to the peer.
    pub bytes_out: u64,
    /// RFC 3339, UTC.
    pub last_connected: Option<String>,
    /// When the last final ACK came; RFC 3339, UTC.
    pub last_ack: Option<String>,
    /// From flush to answer.
    pub latency_ms: Latency,
    /// The latest failure that came with a detail (a connect attempt, a refusal by TLS).
    pub last_failure: Option<LinkFailure>,
}

/// The live counters behind [`Stats`]. Their fields are private: every change goes through a
/// method named for the event it records, so the counting rules live here.
#[derive(Debug)]
pub(crate) struct Counters {
    state: State,
    queue_depth: usize,
    queue_bytes: usize,
    in_flight: usize,
    awaiting_app_ack: usize,
    sent: u64,
    /// By [`AckCode`], in declaration order: an array, not a map, as it is counted per ACK.
    acked_by_code: [u64; ACK_CODES.len()],
    timed_out: u64,
    reconnect_attempts: u64,
    warnings_by_code: BTreeMap<WarningCode, u64>,
    /// By [`Population`], in [`Population::ALL`] order.
    by_population: [u64; Population::ALL.len()],
    bytes_in: u64,
    bytes_out: u64,
    last_connected: Option<SystemTime>,
    last_ack: Option<SystemTime>,
    last_failure: Option<LinkFailure>,
    /// Microseconds, 1 us .. 1 h, 3 significant digits.
    latency: Histogram<u64>,
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
    /// The link's state machine moved to `state`.
    pub(crate) fn record_state(&mut self, state: State) {
        self.state = state;
    }

    /// A connection came up at `at`.
    pub(crate) fn record_connected(&mut self, at: SystemTime) {
        self.last_connected = Some(at);
    }

    /// A connect attempt, or the link, failed with a detail worth keeping.
    pub(crate) fn record_link_failure(&mut self, failure: LinkFailure) {
        self.last_failure = Some(failure);
    }

    /// The link ended with `cause`: a detail kept from an earlier failure with another cause
    /// must not pass for this one's.
    pub(crate) fn record_link_end(&mut self, cause: Cause) {
        if self.last_failure.as_ref().map(|f| f.cause) != Some(cause) {
            self.last_failure = None;
        }
    }

    /// A reconnect attempt is scheduled.
    pub(crate) fn record_reconnect(&mut self) {
        self.reconnect_attempts += 1;
    }

    /// A warning was raised.
    pub(crate) fn record_warning(&mut self, code: WarningCode) {
        *self.warnings_by_code.entry(code).or_default() += 1;
    }

    /// A write of `frames` frames, `bytes` bytes in all, was flushed (a resend counts again).
    pub(crate) fn record_written(&mut self, frames: u64, bytes: u64) {
        self.sent += frames;
        self.bytes_out += bytes;
    }

    /// `bytes` more came from the peer.
    pub(crate) fn record_received(&mut self, bytes: u64) {
        self.bytes_in += bytes;
    }

    /// A written frame's ACK did not come in time.
    pub(crate) fn record_ack_timeout(&mut self) {
        self.timed_out += 1;
    }

    /// A send was committed (`CA`) and now waits for its application ACK.
    pub(crate) fn record_commit(&mut self) {
        self.awaiting_app_ack += 1;
    }

    /// The depth and bytes of the queue and the sends in flight, as the flight table has them.
    pub(crate) fn record_flight(
        &mut self,
        queue_depth: usize,
        queue_bytes: usize,
        in_flight: usize,
    ) {
        self.queue_depth = queue_depth;
        self.queue_bytes = queue_bytes;
        self.in_flight = in_flight;
    }

    /// A send's fate was decided before the actor held it (refused, never delivered).
    pub(crate) fn record_fate(&mut self, fate: &Fate) {
        self.record_settled(fate, false, None);
    }

    /// A send's fate was decided; `committed` when it was waiting for its application ACK, with
    /// the wall-clock time of the read that brought its ACK (read once for all the ACKs of
    /// that read) when there is one.
    pub(crate) fn record_settled(
        &mut self,
        fate: &Fate,
        committed: bool,
        wall: Option<SystemTime>,
    ) {
        let (acked, micros) = self.settled(fate, committed);
        if acked {
            self.last_ack = Some(wall.unwrap_or_else(SystemTime::now));
        }
        if let Some(micros) = micros {
            self.latency.saturating_record(micros);
        }
    }

    /// A settled send counted by population and ACK code; whether it was answered, and its
    /// latency in microseconds, for the caller to record.
    #[inline]
    fn settled(&mut self, fate: &Fate, committed: bool) -> (bool, Option<u64>) {
        let (population, acked, micros) = counted(fate);
        if committed {
            self.awaiting_app_ack -= 1;
        }
        self.by_population[population as usize] += 1;
        if let Some(code) = acked {
            self.acked_by_code[code as usize] += 1;
        }
        (acked.is_some(), micros)
    }

    /// The sends settled by one read's worth of ACKs, each with whether it was committed, at
    /// `wall`, the read's wall-clock time: counted as [`Counters::record_settled`] of each, a
    /// run of equal latencies recorded at once (sends flushed together and answered in one
    /// read share theirs).
    pub(crate) fn record_settled_all<'a>(
        &mut self,
        settled: impl IntoIterator<Item = (&'a Fate, bool)>,
        wall: SystemTime,
    ) {
        let mut run: Option<(u64, u64)> = None;
        for (fate, committed) in settled {
            let (acked, micros) = self.settled(fate, committed);
            if acked {
                self.last_ack = Some(wall);
            }
            match (micros, &mut run) {
                (None, _) => {}
                (Some(micros), Some((last, n))) if *last == micros => *n += 1,
                (Some(micros), _) => {
                    if let Some((last, n)) = run.replace((micros, 1)) {
                        self.latency.saturating_record_n(last, n);
                    }
                }
            }
        }
        if let Some((last, n)) = run {
            self.latency.saturating_record_n(last, n);
        }
    }

    /// The link's current state.
    pub(crate) fn state(&self) -> State {
        self.state
    }

    /// The latency histogram (microseconds).
    pub(crate) fn latency(&self) -> &Histogram<u64> {
        &self.latency
    }

    pub(crate) fn snapshot(&self) -> Stats {
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

/// What [`Counters::record_settled`] counts of a fate: its population, its final ACK code when
/// an ACK came, its latency in microseconds (within the histogram's bounds) when it has one.
fn counted(fate: &Fate) -> (Population, Option<AckCode>, Option<u64>) {
    let acked = fate.ack_code().filter(|_| fate.ack().is_some());
    let micros = fate
        .latency()
        .map(|latency| (latency.as_micros() as u64).clamp(1, 3_600_000_000));
    (fate.population(), acked, micros)
}

#[cfg(test)]
#[test]
fn a_read_s_fates_count_as_one_by_one() {
    use super::fate::AckPayload;
    use std::time::Duration;
    let wall = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
    let ack = AckPayload::new(Default::default());
    let fates = [
        (Duration::from_micros(40), AckCode::AA),
        (Duration::from_micros(40), AckCode::AA),
        (Duration::from_micros(70), AckCode::AE),
        (Duration::from_micros(40), AckCode::AA),
        (Duration::ZERO, AckCode::CR),
    ]
    .map(|(latency, code)| {
        let ack = ack.clone();
        if code.is_positive() {
            Fate::Accepted { code, ack, latency }
        } else {
            Fate::Negative { code, ack, latency }
        }
    });
    let mut one_by_one = Counters::default();
    let mut at_once = Counters::default();
    one_by_one.record_commit();
    at_once.record_commit();
    for (i, fate) in fates.iter().enumerate() {
        one_by_one.record_settled(fate, i == 2, Some(wall));
    }
    at_once.record_settled_all(fates.iter().enumerate().map(|(i, f)| (f, i == 2)), wall);
    assert_eq!(at_once.snapshot(), one_by_one.snapshot());
    assert_eq!(at_once.latency(), one_by_one.latency());
    at_once.record_settled_all([], wall);
    assert_eq!(at_once.snapshot(), one_by_one.snapshot());
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
