//! soak's events on stderr under `--log-format json` ([`SoakEvent`]): `progress` every
//! `--report-interval`, `state_change`, `interrupted`, and the closing `report`. The report
//! that `--report FILE` writes and `--json` prints is [`SoakReport`] itself.

use crate::exit::Exit;
use mllp::client::{FateTally, Transition};
use mllp::soak::{Sample, SoakReport};
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

/// The `report` event that ends every run: [`SoakReport`]'s fields (documented there) but the
/// bulky `histogram` and `per_second`, which `--report` and `--json` keep, with the verdict and
/// the exit code beside them.
#[derive(Debug, Clone, Serialize)]
pub struct ReportSummary<'a> {
    /// The report's own fields, less its bulk.
    #[serde(flatten)]
    pub report: WithoutBulk<'a>,
    /// Every threshold held.
    pub thresholds_ok: bool,
    /// The file `--report` wrote, if any.
    pub report_file: Option<String>,
    /// The code the command exits with.
    pub exit_code: u8,
}

/// A report serialized without `histogram` and `per_second`: any field the report gains
/// reaches the event too, with nothing to copy by hand.
#[derive(Debug, Clone, Copy)]
pub struct WithoutBulk<'a>(pub &'a SoakReport);

impl Serialize for WithoutBulk<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut fields = match serde_json::to_value(self.0).map_err(serde::ser::Error::custom)? {
            serde_json::Value::Object(fields) => fields,
            _ => return Err(serde::ser::Error::custom("a report is a JSON object")),
        };
        fields.remove("histogram");
        fields.remove("per_second");
        fields.serialize(serializer)
    }
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
            report: WithoutBulk(r),
            thresholds_ok: r.thresholds_ok(),
            report_file,
            exit_code: exit.code(),
        })
    }
}

#[cfg(test)]
mod tests;
