//! The final counters of a run, said once at the end: one `stats` event, or a few labelled
//! lines for people.

use super::{Answers, Stamp};
use crate::diag::Diag;
use mllp::server::StatsSnapshot;
use serde_json::{json, Value};

/// How the message counters are named: by what a commit did, or (passing messages through) by
/// what the upstream answered.
fn outcomes(answers: Answers) -> [(&'static str, &'static str); 3] {
    match answers {
        Answers::Committed => [
            ("committed", "committed"),
            ("rejected", "rejected"),
            ("commit_failed", "commit failed"),
        ],
        Answers::PassedOn => [
            ("accepted_upstream", "accepted upstream"),
            ("rejected_upstream", "rejected upstream"),
            ("failed_upstream", "failed upstream"),
        ],
    }
}

/// Passing messages on, a message the upstream left unanswered is neither kept nor failed:
/// its fate is unknown, and it is counted once, as unanswered (the server also counts it under
/// the disposition the relay gave it, a failed commit).
fn one_fate_each(stats: &StatsSnapshot, answers: Answers) -> StatsSnapshot {
    let mut stats = stats.clone();
    if answers == Answers::PassedOn {
        stats.commit_failed = stats.commit_failed.saturating_sub(stats.unanswered);
    }
    stats
}

/// The final counters, one event (with the test double's seed, when one ran).
pub fn stats(diag: &Diag, stats: &StatsSnapshot, seed: Option<u64>, answers: Answers) {
    let stats = &one_fate_each(stats, answers);
    let mut fields = serde_json::to_value(stats).unwrap_or(Value::Null);
    if let Value::Object(map) = &mut fields {
        if let Some(seed) = seed {
            // A string: JSON readers that hold numbers as doubles (jq) would round a u64.
            map.insert("seed".into(), json!(seed.to_string()));
        }
        // The snapshot's keys are the listener's: renamed for what the counts stand for here.
        for ((from, _), (to, _)) in outcomes(Answers::Committed)
            .into_iter()
            .zip(outcomes(answers))
        {
            if let Some(count) = map.remove(from) {
                map.insert(to.into(), count);
            }
        }
    }
    let human = || stats_lines(stats, seed, answers);
    crate::diag::write_line(&Stamp::now().line(diag, "stats", human, fields));
}

/// The final counters for people: a few labelled lines, zero counts left out.
pub(super) fn stats_lines(s: &StatsSnapshot, seed: Option<u64>, answers: Answers) -> String {
    let listed = |counts: &std::collections::BTreeMap<&'static str, u64>| {
        if counts.is_empty() {
            return "none".to_string();
        }
        let items: Vec<String> = counts.iter().map(|(k, n)| format!("{k} {n}")).collect();
        items.join(", ")
    };
    let nonzero = |items: &[(&str, u64)]| {
        let items: Vec<String> = items
            .iter()
            .filter(|(_, n)| *n > 0)
            .map(|(k, n)| format!("{k} {n}"))
            .collect();
        if items.is_empty() {
            "none".to_string()
        } else {
            items.join(", ")
        }
    };
    let [(_, committed), (_, rejected), (_, failed)] = outcomes(answers);
    let mut lines = vec![
        format!(
            "stopped: {} received over {}",
            crate::diag::count(s.messages, "message"),
            crate::diag::count(s.connections_accepted, "connection")
        ),
        format!(
            "  messages: {}",
            nonzero(&[
                (committed, s.committed),
                ("duplicates", s.duplicates),
                (rejected, s.rejected),
                ("refused", s.refused),
                (failed, s.commit_failed),
                ("inbound ACKs", s.inbound_acks),
                ("unanswered", s.unanswered),
            ])
        ),
        format!("  ACKs: {}", listed(&s.acks_by_code)),
    ];
    if !s.nacks_by_reason.is_empty() {
        lines.push(format!("  negative ACKs: {}", listed(&s.nacks_by_reason)));
    }
    lines.push(format!(
        "  connections: {}; closed: {}",
        nonzero(&[
            ("refused", s.connections_refused),
            ("failed handshakes", s.accept_failed),
            ("open", s.connections_open),
        ]),
        listed(&s.closed_by_cause)
    ));
    if !s.warnings_by_code.is_empty() {
        lines.push(format!("  warnings: {}", listed(&s.warnings_by_code)));
    }
    lines.push(format!("  bytes: {} in, {} out", s.bytes_in, s.bytes_out));
    if let Some(g) = s.commit_groups.as_ref().filter(|g| g.groups > 0) {
        let sizes: Vec<String> = g
            .histogram()
            .iter()
            .map(|(size, n)| format!("{size}: {n}"))
            .collect();
        lines.push(format!(
            "  commit groups: {} of {:.1} rows on average (rows per group {})",
            g.groups,
            g.mean(),
            sizes.join(", ")
        ));
    }
    if let Some(seed) = seed {
        lines.push(format!("  test-double seed: {seed}"));
    }
    lines.join("\n")
}
