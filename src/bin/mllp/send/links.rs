//! The run over several links (`--connections N --order-key FIELD`) as `send` shows it: the
//! library's parallel run, Ctrl-C and SIGTERM turned into its controls as for one link, each
//! outcome with the link it went over, each link's events named by link, links up in the bar, and
//! each link's share after the summary.

use super::live::Live;
use super::render::Output;
use super::signals::Signals;
use super::single::{finish_with, say};
use crate::exit::Exit;
use mllp::client::Client;
use mllp::delivery::{Input, LinkEvent, OrderKey, ParallelRun, RunEvent, RunOptions};

pub async fn run(
    clients: Vec<Client>,
    input: Input,
    options: RunOptions,
    key: OrderKey,
    mut output: Output,
    live: Live,
) -> Exit {
    let signals = Signals::install();
    live.start();
    let mut run = ParallelRun::start(clients, input, options, key);
    let stopped_by = signals.drive(run.controls());
    while let Some(LinkEvent { link, event }) = run.next().await {
        match event {
            RunEvent::Outcome(outcome) => {
                live.answered(|| outcome.item.control_id(), &outcome.fate);
                output.message_on(link, &outcome.item, &outcome.fate, outcome.cause);
                live.settled(|| {
                    run.stats().iter().flatten().fold((0, 0), |(q, r), s| {
                        (
                            q + (s.in_flight + s.queue_depth) as u64,
                            r + s.reconnect_attempts,
                        )
                    })
                });
            }
            RunEvent::Client(event) => live.event_on(link.unwrap_or(0), &event),
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
    finish_with(
        &summary.run,
        Some(&summary.links),
        &mut output,
        &live,
        stopped_by.get().copied(),
    )
}
