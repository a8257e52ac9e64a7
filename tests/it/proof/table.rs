//! One row per scenario cell: what was sent, how the sender accounted for it, what the receiver
//! kept, and the verdict; printed as a table and failed as a whole.

use serde_json::Value;
use std::fmt::Write;

/// The populations a sender reports, in the order the table shows them.
pub const POPULATIONS: [&str; 6] = [
    "accepted",
    "negative",
    "committed_only",
    "unknown_fate",
    "never_delivered",
    "refused",
];

#[derive(Debug, Default)]
pub struct Row {
    pub scenario: String,
    pub mode: String,
    pub messages: usize,
    /// Each population's count, as the sender's summary (or report) gave it.
    pub populations: Vec<u64>,
    pub stored: usize,
    pub duplicates: usize,
    /// What broke the bar; empty when the cell passed.
    pub failures: Vec<String>,
}

impl Row {
    /// The populations of a `send` summary record or a `soak` report.
    pub fn counts(summary: &Value) -> Vec<u64> {
        POPULATIONS
            .iter()
            .map(|p| summary[*p].as_u64().unwrap_or(0))
            .collect()
    }

    pub fn fail(&mut self, why: impl Into<String>) {
        self.failures.push(why.into());
    }

    pub fn check(&mut self, ok: bool, why: impl FnOnce() -> String) {
        if !ok {
            self.fail(why());
        }
    }

    pub fn verdict(&self) -> &'static str {
        if self.failures.is_empty() {
            "ok"
        } else {
            "FAIL"
        }
    }
}

/// The table, then a panic naming every failed cell and why.
pub fn report(title: &str, rows: &[Row]) {
    let mut out = format!("\n{title}\n");
    let _ = writeln!(
        out,
        "{:<22} {:<26} {:>8} {:>8} {:>8} {:>9} {:>8} {:>9} {:>7} {:>7} {:>10} {:>7}",
        "scenario",
        "mode",
        "messages",
        "accepted",
        "negative",
        "committed",
        "unknown",
        "never-del",
        "refused",
        "stored",
        "duplicates",
        "verdict"
    );
    for r in rows {
        let p = |i: usize| r.populations.get(i).copied().unwrap_or(0);
        let _ = writeln!(
            out,
            "{:<22} {:<26} {:>8} {:>8} {:>8} {:>9} {:>8} {:>9} {:>7} {:>7} {:>10} {:>7}",
            r.scenario,
            r.mode,
            r.messages,
            p(0),
            p(1),
            p(2),
            p(3),
            p(4),
            p(5),
            r.stored,
            r.duplicates,
            r.verdict()
        );
    }
    println!("{out}");
    let failed: Vec<String> = rows
        .iter()
        .filter(|r| !r.failures.is_empty())
        .map(|r| format!("{} / {}: {}", r.scenario, r.mode, r.failures.join("; ")))
        .collect();
    assert!(failed.is_empty(), "{out}\n{}", failed.join("\n"));
}
