//! The run's summary for people, from the library's totals and ending (the record is
//! `crate::output::send::SendSummary`, the exit code `Totals::exit`).

use super::live::Live;
use super::render::Output;
use super::signals::StopSignal;
use crate::diag::count;
use crate::exit::Exit;
use crate::output::send::{hint, per_second, LinkFigures, PoisonMessage, SendEvent, SendSummary};
use mllp::cause::Cause;
use mllp::client::Population;
use mllp::delivery::{Ending, LinkSummary, RunSummary, Totals};
use mllp::input::InputSource;
use std::time::Duration;

/// Width of the `source#n` column: the longest source name plus `#` and a few digits.
pub fn label_width(sources: &[InputSource]) -> usize {
    let longest = sources.iter().map(|s| s.name().len()).max().unwrap_or(1);
    (longest + 4).min(60)
}

/// The poison messages the summary names, each on a line of its own; past `SHOWN`, a count.
fn poison_lines(poison: &[PoisonMessage], more: u64) -> String {
    let mut text = String::new();
    for p in poison {
        text.push_str(&format!(
            "\n  poison: {} {}: the peer dropped the connection on it (written {}); not sent again",
            p.source,
            p.control_id.as_deref().unwrap_or("-"),
            crate::diag::count(u64::from(p.attempts), "time"),
        ));
    }
    if more > 0 {
        text.push_str(&format!("\n  poison: {more} more (see the records)"));
    }
    text
}

/// What would help (see [`hint`]); under `--accept` a connect timeout is an engine that did
/// not connect in time, not a host that did not answer.
fn hint_for(ending: &Ending, accepting: bool) -> Option<String> {
    match ending.gave_up.or(ending.last_failure) {
        Some(Cause::ConnectTimeout) if accepting => Some(ACCEPT_TIMEOUT.to_string()),
        _ => hint(ending),
    }
}

/// The hint for an engine that never connected under `--accept`.
const ACCEPT_TIMEOUT: &str = "no engine connected within the connect timeout: check the \
                                  address and port the engine dials, and the firewalls between";

/// The summary for people, on stderr.
/// Laid out for an 80-column terminal: lines break between items, never inside a word.
pub fn human(
    tally: &Totals,
    elapsed: Duration,
    ending: Ending,
    stopped_by: Option<StopSignal>,
    (poison, more): (&[PoisonMessage], u64),
    accepting: bool,
) -> String {
    use crate::diag::{pack, TEXT_WIDTH};
    let populations: Vec<String> = Population::ALL
        .iter()
        .map(|p| format!("{} {}", tally.count(*p), p.as_str()))
        .collect();
    let codes: Vec<String> = tally
        .fates
        .by_code
        .iter()
        .map(|(code, n)| format!("{code} {n}"))
        .collect();
    // "sent" counts what went on the wire; the rate is over those alone.
    let written = tally.written();
    let sent = if written == tally.read {
        crate::diag::count(written, "message")
    } else {
        format!("{written} of {}", crate::diag::count(tally.read, "message"))
    };
    let mut lines = vec![format!(
        "sent {sent} in {:.2}s ({} msg/s)",
        elapsed.as_secs_f64(),
        per_second(written, elapsed),
    )];
    lines.extend(pack(&populations, TEXT_WIDTH, "  ", ", "));
    let counts = [
        format!(
            "by code: {}",
            if codes.is_empty() {
                "none".to_string()
            } else {
                codes.join(", ")
            }
        ),
        format!("reconnects: {}", tally.reconnects),
        format!("resent: {}", tally.resent),
    ];
    lines.extend(pack(&counts, TEXT_WIDTH, "  ", "; "));
    let mut text = lines.join("\n");
    text.push_str(&poison_lines(poison, more));
    let hint = hint_for(&ending, accepting).unwrap_or_default();
    if let Some(cause) = ending.gave_up {
        text.push_str(&format!("\n  gave up: {cause} ({}): {hint}", cause.class()));
    }
    if ending.interrupted {
        let by = stopped_by.map_or("interrupted".to_string(), StopSignal::interruption);
        text.push_str(&format!(
            "\n  {by}: the messages not sent then are never-delivered (interrupted)"
        ));
    }
    if ending.timed_out {
        text.push_str("\n  timed out: --timeout ran out; nothing more was sent");
    }
    if let (None, Some(cause)) = (ending.gave_up, ending.last_failure) {
        text.push_str(&format!(
            "\n  last failure: {cause} ({}): {hint}",
            cause.class()
        ));
    }
    text
}

/// One link's share of a run over several: `  link 2: 250 messages, 249 accepted, 1 negative;
/// reconnects 3`.
pub fn link_line(link: usize, share: &LinkSummary) -> String {
    let t = &share.totals;
    let mut text = format!("  link {link}: {}", crate::diag::count(t.read, "message"));
    for p in Population::ALL {
        let n = t.count(p);
        if n > 0 {
            text.push_str(&format!(", {n} {}", p.as_str()));
        }
    }
    text.push_str(&format!("; reconnects {}", t.reconnects));
    if let Some(cause) = share.ending.gave_up {
        text.push_str(&format!("; gave up: {cause}"));
    }
    text
}

/// The messages --where left out, said once before the run (unless --quiet).
pub fn filtered(diag: &crate::diag::Diag, left_out: u64, kept: u64) {
    if diag.quiet {
        return;
    }
    diag.event(
        "filtered",
        || {
            format!(
                "--where left out {} of {}; they are not sent",
                crate::diag::count(left_out, "message"),
                left_out + kept
            )
        },
        serde_json::json!({ "filtered": left_out, "messages": kept }),
    );
}

/// Print the summary and decide the exit code; a count that does not close is a bug report.
/// `links`: each link's share of a run over several.
pub fn finish(
    summary: &RunSummary,
    links: Option<&[LinkSummary]>,
    output: &mut Output,
    live: &Live,
    stopped_by: Option<StopSignal>,
) -> Exit {
    let RunSummary {
        totals,
        ending,
        elapsed,
    } = summary;
    if !totals.adds_up() {
        live.note(
            || {
                format!(
                    "mllp: internal error: {} read but {} counted; please report this",
                    count(totals.read, "message"),
                    count(totals.settled(), "outcome")
                )
            },
            &SendEvent::InternalError {
                read: totals.read,
                settled: totals.settled(),
            },
        );
    }
    let exit = match (crate::exit::exit_for(totals.observed(*ending)), stopped_by) {
        (Exit::Interrupted, Some(stop)) => stop.exit(),
        (exit, _) => exit,
    };
    let mut record = SendSummary::new(summary, exit);
    record.hint = hint_for(ending, live.accepting());
    record.poison = output.poison().0.to_vec();
    record.links = links.map(|links| {
        links
            .iter()
            .enumerate()
            .map(|(i, l)| LinkFigures::new(i, l))
            .collect()
    });
    if output.json() {
        output.summary_record(&record);
    } else {
        live.note(
            || {
                let poison = output.poison();
                let mut text = human(
                    totals,
                    *elapsed,
                    *ending,
                    stopped_by,
                    poison,
                    live.accepting(),
                );
                for (i, link) in links.unwrap_or_default().iter().enumerate() {
                    text.push('\n');
                    text.push_str(&link_line(i, link));
                }
                text
            },
            &SendEvent::Summary(&record),
        );
    }
    exit
}
