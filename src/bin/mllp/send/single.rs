//! The run over one link as `send` shows it: the library's delivery run started on the client,
//! Ctrl-C turned into its controls (drain, then stop at once), its events taken by the shared
//! loop (`drive`), then the summary and the exit code.

use super::live::Live;
use super::render::Output;
use super::signals::{Signals, StopSignal};
use super::summary;
use crate::diag::count;
use crate::exit::Exit;
use crate::output::send::{LinkFigures, SendEvent, SendSummary};
use mllp::client::Client;
use mllp::delivery::{Input, LinkSummary, Run, RunOptions, RunSummary};

pub async fn run(
    client: Client,
    input: Input,
    options: RunOptions,
    mut output: Output,
    live: Live,
) -> Exit {
    // Before the first message goes out, so an early Ctrl-C is a drain, not a kill.
    let signals = Signals::install();
    let mut run = Run::start(client, input, options);
    // The first signal names the interruption and decides its exit code.
    let stopped_by = signals.drive(run.controls());
    super::drive::events(&mut run, &mut output, &live, &stopped_by).await;
    let summary = run.finish().await;
    finish(&summary, &mut output, &live, stopped_by.get().copied())
}

/// Print the summary and decide the exit code; a count that does not close is a bug report.
fn finish(
    summary: &RunSummary,
    output: &mut Output,
    live: &Live,
    stopped_by: Option<StopSignal>,
) -> Exit {
    finish_with(summary, None, output, live, stopped_by)
}

/// As [`finish`], with each link's share of a run over several.
pub fn finish_with(
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
                let mut text = summary::human(totals, *elapsed, *ending, stopped_by, poison);
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
