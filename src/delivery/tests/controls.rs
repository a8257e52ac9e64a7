//! The controls one after another: each still acts once another has come first.

use super::{assert_one_fate_each, client_options, drive, input, paused, Peers};
use crate::client::{Client, Correlation, Population};
use crate::delivery::{Run, RunOptions};
use std::time::Duration;

#[test]
fn a_destroy_after_a_stop_ends_the_drain_at_once() {
    // A silent peer: what was written before the stop waits out the drain, unless destroyed.
    let peers = Peers::new(None);
    let (elapsed, outcomes, summary) = paused().block_on(async {
        let mut options = client_options(Correlation::ControlId, 4);
        options.ack_timeout = Duration::from_secs(600);
        options.drain_timeout = Duration::from_secs(600);
        let client = Client::new(peers, options).unwrap();
        let run = Run::start(client, input(20), RunOptions::default());
        let controls = run.controls();
        let started = tokio::time::Instant::now();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_secs(1)).await;
            controls.stop();
            tokio::time::sleep(Duration::from_secs(1)).await;
            controls.destroy();
        });
        let (outcomes, _, summary) = drive(run).await;
        (started.elapsed(), outcomes, summary)
    });
    assert!(elapsed < Duration::from_secs(60), "drained for {elapsed:?}");
    assert_one_fate_each(20, &outcomes, &summary);
    let by = |p| summary.totals.count(p);
    assert_eq!(by(Population::UnknownFate), 4, "the window written");
    assert_eq!(by(Population::NeverDelivered), 16);
    assert!(summary.ending.interrupted);
}
