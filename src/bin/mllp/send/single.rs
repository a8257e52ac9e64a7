//! The run over one link as `send` shows it: the library's delivery run started on the client,
//! Ctrl-C turned into its controls (drain, then stop at once), its events taken by the shared
//! loop (`drive`), then the summary and the exit code (`summary::finish`).

use super::live::Live;
use super::render::Output;
use super::signals::Signals;
use super::summary;
use crate::exit::Exit;
use mllp::client::Client;
use mllp::delivery::{Input, Run, RunOptions};

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
    summary::finish(
        &summary,
        None,
        &mut output,
        &live,
        stopped_by.get().copied(),
    )
}
