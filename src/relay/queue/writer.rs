//! The queue's one writer: each commit takes every batch waiting when it starts (from any
//! connection, and the next batches of the same one), in the order they came, and the next
//! group gathers while it is written, synced and folded into the file.

use super::QUEUE_FULL_TEXT;
use crate::relay::gauges::Gauges;
use crate::relay::store::{RowValues, Store, Taken, Taking};
use crate::server::sink::groups::{gather, GroupCounter, Job, Payload};
use crate::server::{Reply, SinkResult};
use std::sync::Arc;
use tokio::sync::{mpsc, Notify};

/// Rows in one commit at most (the last batch taken may pass it).
const GROUP_ROWS: usize = 4096;

/// What the writer works with.
pub(super) struct Writer {
    pub(super) store: Store,
    pub(super) max_pending: Option<u64>,
    /// Notified after each commit that kept rows, for the forwarder.
    pub(super) wake: Arc<Notify>,
    pub(super) gauges: Arc<Gauges>,
    pub(super) groups: Arc<GroupCounter>,
}

impl Payload for RowValues {
    fn payload_len(&self) -> usize {
        self.3.len()
    }
}

impl Writer {
    /// Commit the batches of `jobs` a group at a time until every sender is gone.
    pub(super) async fn run(self, mut jobs: mpsc::Receiver<Job<RowValues>>) {
        while let Some(first) = jobs.recv().await {
            let (group, rows) = gather(first, &mut jobs, GROUP_ROWS);
            self.groups.record(rows);
            let (batches, replies): (Vec<_>, Vec<_>) = group
                .into_iter()
                .map(|job| (Taking(job.rows), job.reply))
                .unzip();
            let lens: Vec<usize> = batches.iter().map(|b| b.0.len()).collect();
            let taken = match self.store.insert(batches, self.max_pending).await {
                Ok(taken) => taken,
                Err(e) => vec![Err(e); replies.len()],
            };
            let kept: usize = taken
                .iter()
                .zip(&lens)
                .filter_map(|(t, len)| matches!(t, Ok(Some(_))).then_some(len))
                .sum();
            if kept > 0 {
                self.gauges.received(kept as u64);
                self.wake.notify_one();
            }
            for ((reply, taken), len) in replies.into_iter().zip(&taken).zip(lens) {
                let _ = reply.send(vec![result(taken); len]);
            }
        }
    }
}

/// What each message of a batch is answered with.
fn result(taken: &Taken) -> SinkResult {
    match taken {
        Ok(Some(_)) => SinkResult::committed(),
        Ok(None) => SinkResult::failed("queue-full").replying(Reply::Saying(QUEUE_FULL_TEXT)),
        Err(e) => SinkResult::failed(format!("queue: {e}")),
    }
}
