//! The soak report: the in-memory [`SoakTotals`] the run adds to, and the serialized
//! [`SoakReport`] (`soak --report`, `--json`) whose counters sum and whose HDR histogram (V2,
//! base64) merges, so reports from several machines combine into one. Thresholds ([`super::thresholds`]) are judged on a
//! report.

use super::thresholds::Judgement;
use crate::client::FateTally;
use base64::Engine;
use hdrhistogram::serialization::{Deserializer, Serializer, V2Serializer};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Duration;

/// Latency range recorded, in microseconds: 1 us to 1 hour, 3 significant digits.
pub(crate) const LATENCY_MAX_US: u64 = 3_600_000_000;

/// An empty latency histogram with the bounds every soak histogram shares (1 us to
/// [`LATENCY_MAX_US`], 3 significant digits), so any two merge.
pub(crate) fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, LATENCY_MAX_US, 3).expect("constant histogram bounds are valid")
}

/// Record one latency, clamped into the histogram's range.
pub(crate) fn record(histogram: &mut Histogram<u64>, latency: Duration) {
    let micros = (latency.as_micros() as u64).clamp(1, LATENCY_MAX_US);
    histogram.saturating_record(micros);
}

/// A report that cannot be read back.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReportError {
    /// The histogram field is not valid base64.
    #[error("the histogram is not base64: {0}")]
    Base64(#[from] base64::DecodeError),
    /// The decoded bytes are not an HDR histogram in V2 encoding.
    #[error("the histogram is not an HDR V2 histogram: {0}")]
    Histogram(String),
    /// The report file could not be read.
    #[error("reading {}: {error}", path.display())]
    Read {
        /// The file named.
        path: std::path::PathBuf,
        /// Why it could not be read.
        error: std::io::Error,
    },
    /// The file is not JSON of a soak report.
    #[error("{} is not a soak report: {error}", path.display())]
    NotAReport {
        /// The file named.
        path: std::path::PathBuf,
        /// What the JSON parser objected to.
        error: serde_json::Error,
    },
}

/// One second of the run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Second {
    /// Messages handed to the client in this second.
    pub sent: u64,
    /// Messages that ended accepted in this second.
    pub accepted: u64,
    /// Messages that ended any other way in this second.
    pub failed: u64,
}

/// A soak run's totals, as `delivery::Totals` are a send run's: the fates counted by a
/// [`FateTally`], beside latency, links and bytes. Every field sums when totals merge.
#[derive(Debug, Clone)]
pub struct SoakTotals {
    /// Messages generated: built and handed to the client.
    pub generated: u64,
    /// The six fates and final ACK codes.
    pub fates: FateTally,
    /// Microseconds.
    pub latency: Histogram<u64>,
    /// Reconnect attempts over all connections.
    pub reconnects: u64,
    /// `FROM->TO` transition counts.
    pub state_changes: BTreeMap<String, u64>,
    /// Link failures by cause.
    pub errors_by_cause: BTreeMap<String, u64>,
    /// Messages that did not end accepted or negative, by cause.
    pub outcomes_by_cause: BTreeMap<String, u64>,
    /// Client warnings by code (repeated or unmatched ACKs, framing tolerated on the way in).
    pub warnings_by_code: BTreeMap<String, u64>,
    /// One entry per second of the run, from the first (index 0).
    pub per_second: Vec<Second>,
    /// Bytes written to the peer: frames, before any TLS.
    pub bytes_sent: u64,
    /// Bytes read from the peer: frames, after any TLS.
    pub bytes_received: u64,
    /// How long the run took (merging keeps the longest: runs are taken to be concurrent).
    pub elapsed: Duration,
}

impl Default for SoakTotals {
    fn default() -> Self {
        SoakTotals {
            generated: 0,
            fates: FateTally::default(),
            latency: new_histogram(),
            reconnects: 0,
            state_changes: BTreeMap::new(),
            errors_by_cause: BTreeMap::new(),
            outcomes_by_cause: BTreeMap::new(),
            warnings_by_code: BTreeMap::new(),
            per_second: Vec::new(),
            bytes_sent: 0,
            bytes_received: 0,
            elapsed: Duration::ZERO,
        }
    }
}

fn add_map(into: &mut BTreeMap<String, u64>, from: &BTreeMap<String, u64>) {
    for (k, v) in from {
        *into.entry(k.clone()).or_default() += v;
    }
}

impl SoakTotals {
    /// Sum of the six populations.
    pub fn settled(&self) -> u64 {
        self.fates.settled()
    }

    /// The second bucket at `index`, created as needed.
    pub fn second(&mut self, index: usize) -> &mut Second {
        if self.per_second.len() <= index {
            self.per_second.resize(index + 1, Second::default());
        }
        &mut self.per_second[index]
    }

    /// The outcome counters only (no histogram, no seconds): cheap enough for every redraw.
    pub(crate) fn merge_counts(&mut self, other: &SoakTotals) {
        self.fates.merge(&other.fates);
        self.reconnects += other.reconnects;
        add_map(&mut self.errors_by_cause, &other.errors_by_cause);
        add_map(&mut self.outcomes_by_cause, &other.outcomes_by_cause);
    }

    /// Add every field of `other` (the elapsed time takes the longer of the two).
    pub fn merge(&mut self, other: &SoakTotals) {
        self.merge_counts(other);
        self.generated += other.generated;
        // Same bounds on both sides, so adding cannot fail; saturate rather than panic if it did.
        if self.latency.add(&other.latency).is_err() {
            for v in other.latency.iter_recorded() {
                self.latency
                    .saturating_record_n(v.value_iterated_to(), v.count_at_value());
            }
        }
        add_map(&mut self.state_changes, &other.state_changes);
        add_map(&mut self.warnings_by_code, &other.warnings_by_code);
        for (i, s) in other.per_second.iter().enumerate() {
            let mine = self.second(i);
            mine.sent += s.sent;
            mine.accepted += s.accepted;
            mine.failed += s.failed;
        }
        self.bytes_sent += other.bytes_sent;
        self.bytes_received += other.bytes_received;
        self.elapsed = self.elapsed.max(other.elapsed);
    }

    /// Latency percentiles of the answered messages, in milliseconds; zeros when none was.
    pub fn latency_ms(&self) -> LatencyMs {
        if self.latency.is_empty() {
            return LatencyMs::default();
        }
        let ms = |q: f64| self.latency.value_at_quantile(q) as f64 / 1000.0;
        LatencyMs {
            p50: ms(0.5),
            p90: ms(0.9),
            p99: ms(0.99),
            p999: ms(0.999),
            max: self.latency.max() as f64 / 1000.0,
        }
    }

    /// Accepted messages per second over the run.
    pub fn throughput(&self) -> f64 {
        let secs = self.elapsed.as_secs_f64();
        if secs > 0.0 {
            self.fates.accepted as f64 / secs
        } else {
            0.0
        }
    }
}

/// Latency percentiles, in milliseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencyMs {
    /// The median.
    pub p50: f64,
    /// The 90th percentile.
    pub p90: f64,
    /// The 99th percentile.
    pub p99: f64,
    /// The 99.9th percentile.
    pub p999: f64,
    /// The largest latency recorded.
    pub max: f64,
}

/// Bytes over the run's links: frames, not TLS records.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ByteCounts {
    /// Written to the peer.
    pub sent: u64,
    /// Read from the peer.
    pub received: u64,
}

/// The accounting check. `problems` says in words what did not close.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Accounting {
    /// Messages generated.
    pub generated: u64,
    /// The six fate populations added up; equal to `generated` when the accounting closes.
    pub populations_sum: u64,
    /// What the embedded listener committed, when there was one.
    pub listener: Option<crate::soak::ledger::LedgerTotals>,
    /// Each problem in words; empty when the accounting closes.
    pub problems: Vec<String>,
}

/// The report `soak --report` writes. Field names are interface: add, never rename.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SoakReport {
    /// The plan the run followed (target, connections, rate, ...) and why generating stopped;
    /// for a merged report, `{"merged": [...]}` with each report's config.
    pub config: serde_json::Value,
    /// Messages generated.
    pub generated: u64,
    /// The six fates and final ACK codes, as top-level fields.
    #[serde(flatten)]
    pub fates: FateTally,
    /// Latency percentiles of the answered messages, in milliseconds.
    pub latency_ms: LatencyMs,
    /// HDR histogram of latencies in microseconds, V2 encoding, base64.
    pub histogram: String,
    /// Reconnect attempts over all connections.
    pub reconnects: u64,
    /// `FROM->TO` link state transition counts.
    pub state_changes: BTreeMap<String, u64>,
    /// Link failures by cause.
    pub errors_by_cause: BTreeMap<String, u64>,
    /// Messages that did not end accepted or negative, by cause.
    pub outcomes_by_cause: BTreeMap<String, u64>,
    /// Client warnings by code.
    #[serde(default)]
    pub warnings_by_code: BTreeMap<String, u64>,
    /// What happened in each second of the run, from the first.
    pub per_second: Vec<Second>,
    /// Bytes written and read: frames, not TLS records.
    pub bytes: ByteCounts,
    /// How long the run took, in seconds.
    pub elapsed_s: f64,
    /// Accepted messages per second.
    pub throughput: f64,
    /// The accounting check: generated against the six populations, and the listener's commits.
    pub accounting: Accounting,
    /// `accounting.problems` is empty: the populations add up to `generated` and, with the
    /// embedded listener, its commits agree with the fates.
    pub accounting_ok: bool,
    /// The CI thresholds judged on this report; empty when none was set.
    #[serde(default)]
    pub thresholds: Vec<Judgement>,
    /// How many runs this report covers.
    #[serde(default = "one")]
    pub runs: u64,
}

fn one() -> u64 {
    1
}

impl SoakReport {
    /// The report of `tally`. The accounting's sum check is (re)done here; `accounting` brings
    /// the listener-side problems, if any.
    pub fn new(
        config: serde_json::Value,
        tally: &SoakTotals,
        mut accounting: Accounting,
    ) -> SoakReport {
        accounting.generated = tally.generated;
        accounting.populations_sum = tally.settled();
        if tally.generated != tally.settled() {
            accounting.problems.push(format!(
                "generated {} but the populations add up to {}",
                tally.generated,
                tally.settled()
            ));
        }
        SoakReport {
            config,
            generated: tally.generated,
            fates: tally.fates.clone(),
            latency_ms: tally.latency_ms(),
            histogram: encode_histogram(&tally.latency),
            reconnects: tally.reconnects,
            state_changes: tally.state_changes.clone(),
            errors_by_cause: tally.errors_by_cause.clone(),
            outcomes_by_cause: tally.outcomes_by_cause.clone(),
            warnings_by_code: tally.warnings_by_code.clone(),
            per_second: tally.per_second.clone(),
            bytes: ByteCounts {
                sent: tally.bytes_sent,
                received: tally.bytes_received,
            },
            elapsed_s: tally.elapsed.as_secs_f64(),
            throughput: tally.throughput(),
            accounting_ok: accounting.problems.is_empty(),
            accounting,
            thresholds: Vec::new(),
            runs: 1,
        }
    }

    /// A report written by `soak --report` (or its JSON on stdout), for [`SoakReport::merge`].
    pub fn read(path: &std::path::Path) -> Result<SoakReport, ReportError> {
        let path = path.to_path_buf();
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(error) => return Err(ReportError::Read { path, error }),
        };
        serde_json::from_str(&text).map_err(|error| ReportError::NotAReport { path, error })
    }

    /// The tally this report was made from.
    pub fn tally(&self) -> Result<SoakTotals, ReportError> {
        Ok(SoakTotals {
            generated: self.generated,
            fates: self.fates.clone(),
            latency: decode_histogram(&self.histogram)?,
            reconnects: self.reconnects,
            state_changes: self.state_changes.clone(),
            errors_by_cause: self.errors_by_cause.clone(),
            outcomes_by_cause: self.outcomes_by_cause.clone(),
            warnings_by_code: self.warnings_by_code.clone(),
            per_second: self.per_second.clone(),
            bytes_sent: self.bytes.sent,
            bytes_received: self.bytes.received,
            elapsed: Duration::from_secs_f64(self.elapsed_s.max(0.0)),
        })
    }

    /// Fraction of generated messages that did not end accepted.
    pub(crate) fn error_rate(&self) -> f64 {
        if self.generated == 0 {
            0.0
        } else {
            (self.generated - self.fates.accepted.min(self.generated)) as f64
                / self.generated as f64
        }
    }

    /// Every threshold holds (also `true` when none was set).
    pub fn thresholds_ok(&self) -> bool {
        self.thresholds.iter().all(|v| v.ok)
    }

    /// The run's verdict: the accounting closes and every threshold holds.
    pub fn passed(&self) -> bool {
        self.accounting_ok && self.thresholds_ok()
    }

    /// Combine reports: counters summed, histograms merged, percentiles recomputed, accounting
    /// closed only when it closed in every report and still closes in the sum.
    pub fn merge(reports: &[SoakReport]) -> Result<SoakReport, ReportError> {
        let mut tally = SoakTotals::default();
        let mut accounting = Accounting::default();
        let mut runs = 0;
        for (i, report) in reports.iter().enumerate() {
            tally.merge(&report.tally()?);
            runs += report.runs;
            for problem in &report.accounting.problems {
                accounting
                    .problems
                    .push(format!("report {}: {problem}", i + 1));
            }
            if let Some(l) = report.accounting.listener {
                let sum = accounting.listener.get_or_insert_with(Default::default);
                sum.committed += l.committed;
                sum.duplicates += l.duplicates;
                sum.foreign += l.foreign;
            }
        }
        let config = serde_json::json!({
            "merged": reports.iter().map(|r| r.config.clone()).collect::<Vec<_>>(),
        });
        let mut merged = SoakReport::new(config, &tally, accounting);
        merged.runs = runs;
        Ok(merged)
    }
}

/// The histogram as the report carries it: HDR V2 encoding, base64.
pub(crate) fn encode_histogram(histogram: &Histogram<u64>) -> String {
    let mut bytes = Vec::new();
    // Writing to a Vec cannot fail for a histogram of this size.
    let _ = V2Serializer::new().serialize(histogram, &mut bytes);
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Read a histogram [`encode_histogram`] wrote, re-homed into the standard bounds.
pub(crate) fn decode_histogram(text: &str) -> Result<Histogram<u64>, ReportError> {
    let bytes = base64::engine::general_purpose::STANDARD.decode(text.trim())?;
    let decoded: Histogram<u64> = Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .map_err(|e| ReportError::Histogram(format!("{e:?}")))?;
    // Re-home into the standard bounds so every tally merges with every other.
    let mut histogram = new_histogram();
    for v in decoded.iter_recorded() {
        histogram.saturating_record_n(
            v.value_iterated_to().clamp(1, LATENCY_MAX_US),
            v.count_at_value(),
        );
    }
    Ok(histogram)
}

#[cfg(test)]
mod tests;
