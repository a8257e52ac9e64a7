//! `--from-db --pace original`: the recorded gaps between messages, scaled by `--speed`, kept
//! by a feeder that hands each message over when its time comes. The store is read a page at a
//! time on a thread of its own, so a long replay holds only the next few messages.

use mllp::delivery::Input;
use mllp::input::{InputSet, StoreFilter, StoreRows};
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

/// The wait before each message: the gap since the one before it (none before the first, and
/// none where a time is missing or goes backwards), divided by `speed`.
struct Gaps {
    last: Option<SystemTime>,
    speed: f64,
}

impl Gaps {
    fn next(&mut self, at: Option<SystemTime>) -> Duration {
        let gap = match (self.last, at) {
            (Some(before), Some(at)) => at.duration_since(before).unwrap_or_default(),
            _ => Duration::ZERO,
        };
        if at.is_some() {
            self.last = at;
        }
        gap.div_f64(self.speed)
    }
}

/// The messages of `set` (the matching rows of `file`), each handed over after its gap. Needs a
/// runtime.
pub fn paced(mut set: InputSet, file: PathBuf, filter: StoreFilter, speed: f64) -> Input {
    let (tx, rx) = tokio::sync::mpsc::channel(1);
    let (rows_tx, mut rows_rx) = tokio::sync::mpsc::channel(16);
    // The validation pass has read the store once already: a failure now ends the replay early.
    std::thread::spawn(move || {
        // The set's messages (as the options make them) and the same rows' arrival times.
        let Ok(times) = StoreRows::open(&file, filter) else {
            return;
        };
        let mut gaps = Gaps { last: None, speed };
        for (message, row) in set.messages().zip(times) {
            let (Ok(message), Ok(row)) = (message, row) else {
                return;
            };
            let gap = gaps.next(row.received_at);
            if rows_tx.blocking_send((message, gap)).is_err() {
                return;
            }
        }
    });
    tokio::spawn(async move {
        while let Some((message, gap)) = rows_rx.recv().await {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaps_follow_the_recorded_times_scaled_and_never_backwards() {
        let t = |s| Some(SystemTime::UNIX_EPOCH + Duration::from_secs(s));
        let mut gaps = Gaps {
            last: None,
            speed: 2.0,
        };
        let got: Vec<_> = [t(10), t(14), None, t(12), t(20)]
            .into_iter()
            .map(|at| gaps.next(at))
            .collect();
        let secs = |s: f64| Duration::from_secs_f64(s);
        assert_eq!(got, [secs(0.0), secs(2.0), secs(0.0), secs(0.0), secs(4.0)]);
    }
}
