//! soak's events on stderr under `--log-format json` ([`SoakEvent`]): `progress` every
//! `--report-interval`, `state_change`, `interrupted`, and the closing `report`. The report
//! that `--report FILE` writes and `--json` prints is [`SoakReport`] itself.

use crate::exit::Exit;
use mllp::client::{FateTally, Transition};
use mllp::soak::report::{Accounting, ByteCounts, LatencyMs};
use mllp::soak::{Sample, SoakReport, Verdict};
use serde::Serialize;
use std::collections::BTreeMap;

/// One soak event; `event` is the variant's name in snake case.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum SoakEvent<'a> {
    /// The run so far, every `--report-interval`.
    Progress(Progress<'a>),
    /// A connection's link changed state.
    StateChange {
        /// The connection's number, from 1.
        connection: usize,
        /// The state left (`CONNECTING`, `CONNECTED`, ...).
        from: mllp::client::State,
        /// The state entered.
        to: mllp::client::State,
        /// Why, in words.
        reason: String,
    },
    /// Ctrl-C: generating stops, what is in flight drains, then the report.
    Interrupted {
        /// What happens next, in words.
        message: &'static str,
    },
    /// The last event of every run: the report in short, the verdict and the exit code.
    Report(ReportSummary<'a>),
}

/// The run so far, every `--report-interval`, under the report's field names.
#[derive(Debug, Clone, Serialize)]
pub struct Progress<'a> {
    /// Seconds since the start.
    pub elapsed_s: f64,
    /// Messages generated per second over the interval.
    pub sent_per_s: f64,
    /// Messages settled per second over the interval.
    pub done_per_s: f64,
    /// `p50`, `p99` and `max` over the interval.
    pub latency_ms: IntervalLatency,
    /// Messages in flight or queued over all connections.
    pub in_flight: usize,
    /// Messages generated since the start.
    pub generated: u64,
    /// The six populations and `by_code`, since the start.
    #[serde(flatten)]
    pub fates: &'a FateTally,
    /// Reconnect attempts since the start.
    pub reconnects: u64,
    /// Link failures by cause since the start.
    pub errors_by_cause: &'a BTreeMap<String, u64>,
    /// Connections by link state (`CONNECTED`, ...).
    pub states: BTreeMap<&'static str, usize>,
}

/// Latency over one interval, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct IntervalLatency {
    /// The median.
    pub p50: f64,
    /// The 99th percentile.
    pub p99: f64,
    /// The slowest.
    pub max: f64,
}

/// The `report` event that ends every run: the report's fields but the bulky `histogram` and
/// `per_second` (which `--report` and `--json` keep), with the verdict and the exit code.
#[derive(Debug, Clone, Serialize)]
pub struct ReportSummary<'a> {
    /// The run's settings (`{"merged":[...]}` after `--merge`).
    pub config: &'a serde_json::Value,
    /// Messages generated.
    pub generated: u64,
    /// The six populations and `by_code`.
    #[serde(flatten)]
    pub fates: &'a FateTally,
    /// `p50`, `p90`, `p99`, `p999`, `max` over the run.
    pub latency_ms: &'a LatencyMs,
    /// Reconnect attempts.
    pub reconnects: u64,
    /// `FROM->TO` counts.
    pub state_changes: &'a BTreeMap<String, u64>,
    /// Link failures by cause.
    pub errors_by_cause: &'a BTreeMap<String, u64>,
    /// Messages neither accepted nor negative, by cause.
    pub outcomes_by_cause: &'a BTreeMap<String, u64>,
    /// Client warnings by code.
    pub warnings_by_code: &'a BTreeMap<String, u64>,
    /// `sent`, `received`.
    pub bytes: &'a ByteCounts,
    /// The run's duration in seconds.
    pub elapsed_s: f64,
    /// Accepted messages per second.
    pub throughput: f64,
    /// `generated`, `populations_sum`, `listener`, `problems`.
    pub accounting: &'a Accounting,
    /// The accounting closed.
    pub accounting_ok: bool,
    /// Each threshold given: its limit and the measured value.
    pub thresholds: &'a [Verdict],
    /// How many runs the report holds.
    pub runs: u64,
    /// Every threshold held.
    pub thresholds_ok: bool,
    /// The file `--report` wrote, if any.
    pub report_file: Option<String>,
    /// The code the command exits with.
    pub exit_code: u8,
}

impl<'a> SoakEvent<'a> {
    /// The `progress` event of a sample.
    pub fn progress(s: &'a Sample) -> SoakEvent<'a> {
        let t = &s.totals;
        SoakEvent::Progress(Progress {
            elapsed_s: s.elapsed.as_secs_f64(),
            sent_per_s: s.sent_per_s,
            done_per_s: s.done_per_s,
            latency_ms: IntervalLatency {
                p50: s.latency.p50_ms,
                p99: s.latency.p99_ms,
                max: s.latency.max_ms,
            },
            in_flight: s.in_flight,
            generated: t.generated,
            fates: &t.fates,
            reconnects: t.reconnects,
            errors_by_cause: &t.errors_by_cause,
            states: s.states(),
        })
    }

    /// Connection `index` (from 0) changed state.
    pub fn state_change(index: usize, t: &Transition) -> SoakEvent<'a> {
        SoakEvent::StateChange {
            connection: index + 1,
            from: t.from,
            to: t.to,
            reason: t.reason.to_string(),
        }
    }

    /// The closing `report` event; `report_file` where `--report` wrote the report.
    pub fn report(r: &'a SoakReport, report_file: Option<String>, exit: Exit) -> SoakEvent<'a> {
        SoakEvent::Report(ReportSummary {
            config: &r.config,
            generated: r.generated,
            fates: &r.fates,
            latency_ms: &r.latency_ms,
            reconnects: r.reconnects,
            state_changes: &r.state_changes,
            errors_by_cause: &r.errors_by_cause,
            outcomes_by_cause: &r.outcomes_by_cause,
            warnings_by_code: &r.warnings_by_code,
            bytes: &r.bytes,
            elapsed_s: r.elapsed_s,
            throughput: r.throughput,
            accounting: &r.accounting,
            accounting_ok: r.accounting_ok,
            thresholds: &r.thresholds,
            runs: r.runs,
            thresholds_ok: r.thresholds_ok(),
            report_file,
            exit_code: exit.code(),
        })
    }
}

#[cfg(test)]
mod tests;
