//! `--from-db --pace original`: the recorded gaps between messages (scaled by `--speed`, capped
//! by `--max-gap`) kept by a feeder that hands each message over when its time comes. A wait
//! ends early at the run's deadline or once a signal stopped the run: the rest is handed over
//! at once, to be reported unsent. The store is read a page at a time on a thread of its own,
//! so a long replay holds only the next few messages.

use super::signals;
use crate::diag::Fatal;
use crate::exit::Exit;
use mllp::delivery::Input;
use mllp::input::{InputSet, SplitOptions, StoreFilter, StoreRows};
use mllp::pace::{wait_gap, RecordedGaps};
use std::path::{Path, PathBuf};
use tokio::time::Instant;

/// The store `file` opened for its errors (reported, exit 2) and the widest label a replay of
/// it shows; it is read page by page later.
pub fn opened(file: &Path, filter: &StoreFilter) -> Result<usize, Exit> {
    let refused = |err: &dyn std::fmt::Display| {
        Fatal::new(Exit::Usage, err)
            .then("nothing was sent")
            .report()
    };
    // Opened without the statuses first, to say which flag cannot apply.
    let any_status = StoreFilter {
        statuses: Vec::new(),
        ..filter.clone()
    };
    let rows =
        StoreRows::open(file, any_status, SplitOptions::default()).map_err(|e| refused(&e))?;
    if !filter.statuses.is_empty() && !rows.keeps_status() {
        return Err(refused(&format!(
            "--status: {} is a receiver's store (listen --sqlite), which keeps no upstream \
             fate; --status chooses among the rows of a relay's --queue or --record file",
            file.display()
        )));
    }
    Ok(rows
        .last_id()
        .map_or(8, |id| format!("{}#{id}", rows.source()).chars().count()))
}

/// The messages of `set` (the checked rows of `file`), each handed over after its gap, or at
/// once after `deadline` or a signal. Needs a runtime.
pub fn paced(
    mut set: InputSet,
    (file, filter): (PathBuf, StoreFilter),
    mut gaps: RecordedGaps,
    deadline: Option<Instant>,
) -> Input {
    let (tx, rx) = tokio::sync::mpsc::channel(1);
    let (rows_tx, mut rows_rx) = tokio::sync::mpsc::channel(16);
    std::thread::spawn(move || {
        // The same rows' arrival times, read without their payloads. The check has read the
        // store once already: a failure now ends the replay early.
        let Ok(rows) = StoreRows::open(&file, filter, Default::default()) else {
            return;
        };
        let mut times = rows.arrivals();
        for message in set.messages() {
            let Ok(message) = message else {
                return;
            };
            // The message is the row it is named by; rows the check did not see are skipped.
            let at = loop {
                match times.next() {
                    Some(Ok((id, at))) if id == message.index => break at,
                    Some(Ok(_)) => continue,
                    _ => return,
                }
            };
            if rows_tx.blocking_send((message, gaps.next(at))).is_err() {
                return;
            }
        }
    });
    let hurry = signals::stopping();
    tokio::spawn(async move {
        let mut pacing = true;
        while let Some((message, gap)) = rows_rx.recv().await {
            if pacing && !gap.is_zero() {
                pacing = wait_gap(gap, deadline, &hurry).await;
            }
            if tx.send(message).await.is_err() {
                return;
            }
        }
    });
    Input::from_channel(rx, false)
}
