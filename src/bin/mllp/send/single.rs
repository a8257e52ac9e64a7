//! The run over one link as `send` shows it: the library's delivery run started on the client,
//! Ctrl-C turned into its controls (drain, then stop at once), each outcome, client event and note
//! rendered as it comes, a closed stdout turned into an abandon, then the summary and the exit code.

use super::live::Live;
use super::render::Output;
use super::signals::{Signals, Stop};
use super::summary;
use crate::diag::count;
use crate::exit::Exit;
use crate::output::send::{LinkFigures, SendEvent, SendSummary};
use mllp::client::Client;
use mllp::delivery::{Input, LinkSummary, Run, RunEvent, RunNote, RunOptions, RunSummary};

pub async fn run(
    client: Client,
    input: Input,
    options: RunOptions,
    mut output: Output,
    live: Live,
) -> Exit {
    // Before the first message goes out, so an early Ctrl-C is a drain, not a kill.
    let signals = Signals::install();
    live.start();
    let mut run = Run::start(client, input, options);
    // The first signal names the interruption and decides its exit code.
    let stopped_by = signals.drive(run.controls());
    while let Some(event) = run.next().await {
        match event {
            RunEvent::Outcome(outcome) => {
                live.answered(|| outcome.item.control_id(), &outcome.fate);
                output.message(&outcome.item, &outcome.fate, outcome.cause);
                // A stats snapshot computes latency quantiles: take one only when the bar shows it.
                live.settled(|| {
                    run.stats().map_or((0, 0), |stats| {
                        (
                            (stats.in_flight + stats.queue_depth) as u64,
                            stats.reconnect_attempts,
                        )
                    })
                });
            }
            RunEvent::Client(event) => live.event(&event),
            RunEvent::Note(note) => say(&live, note, stopped_by.get().copied()),
            RunEvent::Closing => {
                output.flush();
                live.finish();
            }
            _ => {}
        }
        if !run.has_pending() {
            output.flush();
        }
        if crate::stdout::is_closed() {
            run.controls().abandon();
        }
    }
    let summary = run.finish().await;
    finish(&summary, &mut output, &live, stopped_by.get().copied())
}

/// A note about the run, on stderr.
pub fn say(live: &Live, note: RunNote, stopped_by: Option<Stop>) {
    if let (RunNote::Interrupted, Some(stop)) = (&note, stopped_by) {
        let human = || {
            format!(
                "mllp: {}: nothing more is sent; the rest of the input is reported; \
                 draining ({})",
                interruption(stop),
                stop.again()
            )
        };
        let event = SendEvent::Interrupted {
            draining: true,
            signal: Some(stop.signal()),
        };
        return live.note(human, &event);
    }
    let human = || match &note {
        RunNote::InputError(error) => format!("mllp: error: {error}; no more messages are read"),
        RunNote::TimedOut => {
            "mllp: --timeout ran out: nothing more is sent; the rest is reported".into()
        }
        RunNote::Interrupted => {
            "interrupted: no more messages are read; draining (Ctrl-C again to stop at once)".into()
        }
        RunNote::GaveUp(failure) => format!("mllp: {}: {}", failure.cause, failure.detail),
        RunNote::FailedOutWrite { file, error } => {
            format!("mllp: warning: --failed-out: cannot write {file}: {error}")
        }
    };
    live.note(human, &SendEvent::note(&note));
}

/// `interrupted by Ctrl-C`, `stopped by SIGTERM`.
pub fn interruption(stop: Stop) -> String {
    match stop {
        Stop::CtrlC => format!("interrupted by {}", stop.name()),
        Stop::Sigterm => format!("stopped by {}", stop.name()),
    }
}

/// Print the summary and decide the exit code; a count that does not close is a bug report.
fn finish(
    summary: &RunSummary,
    output: &mut Output,
    live: &Live,
    stopped_by: Option<Stop>,
) -> Exit {
    finish_with(summary, None, output, live, stopped_by)
}

/// As [`finish`], with each link's share of a run over several.
pub fn finish_with(
    summary: &RunSummary,
    links: Option<&[LinkSummary]>,
    output: &mut Output,
    live: &Live,
    stopped_by: Option<Stop>,
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
                let mut text = summary::human(totals, *elapsed, *ending, stopped_by);
                for (i, link) in links.unwrap_or_default().iter().enumerate() {
                    text.push('\n');
                    text.push_str(&summary::link_line(i, link));
                }
                text
            },
            &SendEvent::Summary(&record),
        );
    }
    exit
}
