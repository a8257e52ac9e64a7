//! The run over several links (`--connections N --order-key FIELD`) as `send` shows it: the
//! library's parallel run, Ctrl-C and SIGTERM turned into its controls as for one link, each
//! outcome with the link it went over, each link's events named by link, links up in the bar, and
//! each link's share after the summary.

use super::live::Live;
use super::render::Output;
use super::signals::Signals;
use super::summary;
use crate::exit::Exit;
use mllp::client::Client;
use mllp::delivery::{Input, OrderKey, ParallelRun, RunOptions};

pub async fn run(
    clients: Vec<Client>,
    input: Input,
    options: RunOptions,
    key: OrderKey,
    mut output: Output,
    live: Live,
) -> Exit {
    let signals = Signals::install();
    let mut run = ParallelRun::start(clients, input, options, key);
    let stopped_by = signals.drive(run.controls());
    super::drive::events(&mut run, &mut output, &live, &stopped_by).await;
    let summary = run.finish().await;
    summary::finish(
        &summary.run,
        Some(&summary.links),
        &mut output,
        &live,
        stopped_by.get().copied(),
    )
}
