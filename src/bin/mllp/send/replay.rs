//! `--from-db --pace original`: the recorded gaps between messages, scaled by `--speed`, kept
//! by a feeder that hands each message over when its time comes.

use mllp::delivery::Input;
use mllp::input::{InputSet, Stored};
use std::time::Duration;

/// The wait before each message: the gap since the one before it (none before the first, and
/// none where a time is missing or goes backwards), divided by `speed`.
pub fn gaps(stored: &[Stored], speed: f64) -> Vec<Duration> {
    let mut last = None;
    stored
        .iter()
        .map(|s| {
            let gap = match (last, s.received_at) {
                (Some(before), Some(at)) => at.duration_since(before).unwrap_or_default(),
                _ => Duration::ZERO,
            };
            if s.received_at.is_some() {
                last = s.received_at;
            }
            gap.div_f64(speed)
        })
        .collect()
}

/// The messages of `set`, each handed over after its gap. Needs a runtime.
pub fn paced(mut set: InputSet, gaps: Vec<Duration>) -> Input {
    let (tx, rx) = tokio::sync::mpsc::channel(1);
    // The set holds messages already read: taking them out never blocks.
    let messages: Vec<_> = set.messages().filter_map(Result::ok).collect();
    tokio::spawn(async move {
        for (message, gap) in messages.into_iter().zip(gaps) {
            if !gap.is_zero() {
                tokio::time::sleep(gap).await;
            }
            if tx.send(message).await.is_err() {
                return;
            }
        }
    });
    Input::from_channel(rx, false)
}
