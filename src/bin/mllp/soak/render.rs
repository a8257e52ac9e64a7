//! The end of a run: the human summary for stdout, and on stderr the missed thresholds and
//! accounting problems, or under `--log-format json` one `report` event. Codes and counts only.

use crate::diag::Diag;
use crate::exit::Exit;
use crate::output::soak::SoakEvent;
use mllp::cause::{Cause, Class};
use mllp::client::Population;
use mllp::soak::SoakReport;
use std::collections::BTreeMap;
use std::path::Path;

/// The human report for stdout (without `--json`).
pub fn human(r: &SoakReport) -> String {
    let mut text = String::new();
    let mut line = |l: String| {
        text.push_str(&l);
        text.push('\n');
    };
    let l = &r.latency_ms;
    line(format!(
        "soak: {} generated in {:.1}s, {:.1} accepted/s",
        r.generated, r.elapsed_s, r.throughput
    ));
    let populations = Population::ALL.map(|p| format!("{} {}", p.as_str(), r.fates.count(p)));
    for packed in crate::diag::pack(&populations, crate::diag::TEXT_WIDTH, "  ", "  ") {
        line(packed);
    }
    line(format!("  ack codes:{}", or_none(&r.fates.by_code)));
    line(format!(
        "  latency ms: p50 {:.3}  p90 {:.3}  p99 {:.3}  p99.9 {:.3}  max {:.3}",
        l.p50, l.p90, l.p99, l.p999, l.max
    ));
    line(format!(
        "  reconnects {}  link errors:{}",
        r.reconnects,
        or_none(&r.errors_by_cause)
    ));
    // A permanent cause ends its connection for good: say what fixes it.
    for cause in r.errors_by_cause.keys().filter_map(|c| Cause::from_name(c)) {
        if cause.class() == Class::Permanent {
            line(format!(
                "  {cause} (permanent): {}",
                crate::hint::for_cause(cause)
            ));
        }
    }
    if !r.outcomes_by_cause.is_empty() {
        line(format!(
            "  not accepted, by cause:{}",
            or_none(&r.outcomes_by_cause)
        ));
    }
    if !r.warnings_by_code.is_empty() {
        line(format!("  warnings:{}", or_none(&r.warnings_by_code)));
    }
    line(format!(
        "  bytes sent {}  received {}",
        r.bytes.sent, r.bytes.received
    ));
    let listener = r
        .accounting
        .listener
        .map(|l| {
            format!(
                " (listener committed {}, duplicates {})",
                l.committed, l.duplicates
            )
        })
        .unwrap_or_default();
    let verdict = if r.accounting_ok {
        "closes"
    } else {
        "DOES NOT CLOSE"
    };
    line(format!("  accounting {verdict}{listener}"));
    text
}

fn or_none(map: &BTreeMap<String, u64>) -> String {
    if map.is_empty() {
        return " none".into();
    }
    map.iter().map(|(k, v)| format!(" {k}={v}")).collect()
}

/// The last word on stderr. For people: missed thresholds and accounting problems, if any. For
/// machines: one `report` event holding the report's fields (less the bulky `histogram` and
/// `per_second`, which `--report`/`--json` keep), `report_file` when one was written, and the
/// exit code.
pub fn report_event(diag: &Diag, r: &SoakReport, report_file: Option<&Path>, exit: Exit) {
    let human = verdicts(r);
    if !diag.json() && human.is_empty() {
        return;
    }
    let report_file = report_file.map(|p| p.display().to_string());
    diag.say(|| human, &SoakEvent::report(r, report_file, exit));
}

/// Missed thresholds and accounting problems, one per line; empty when there are none.
fn verdicts(r: &SoakReport) -> String {
    let mut lines = Vec::new();
    for v in r.thresholds.iter().filter(|v| !v.ok) {
        // The library names the threshold; here it is the flag that set it.
        lines.push(format!("mllp: threshold missed: --{v}"));
    }
    if !r.accounting_ok {
        lines.push("mllp: the accounting does not close:".into());
        for problem in r.accounting.problems.iter().take(20) {
            lines.push(format!("  {problem}"));
        }
        if r.accounting.problems.len() > 20 {
            lines.push(format!(
                "  ... and {} more",
                r.accounting.problems.len() - 20
            ));
        }
    }
    lines.join("\n")
}
