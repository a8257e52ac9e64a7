//! Store and forward: a [`Sink`] that commits each message as a pending row of the queue (the
//! downstream peer is then answered by the MSH-15 table: the relay has taken responsibility),
//! and the forwarder that sends pending rows upstream in arrival order and writes each row's
//! fate. Only a window of rows is in memory at once; the rest waits on disk.

use super::gauges::{self, Gauges};
use super::record::settlement;
use super::store::{PendingRow, Status, Store};
use crate::client::{Client, Fate};
use crate::server::sink::SinkFuture;
use crate::server::{Inbound, Reply, Sink, SinkResult};
use std::sync::Arc;
use std::time::{Duration, SystemTime};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// MSA-3 of the refusal of a message the full queue could not take.
pub const QUEUE_FULL_TEXT: &str = "Relay queue full (queue-full): nothing kept";

/// Commits messages to the queue.
pub struct Enqueue {
    store: Store,
    max_pending: Option<u64>,
    wake: Arc<Notify>,
    gauges: Arc<Gauges>,
}

impl Enqueue {
    /// `wake` is notified after each commit, for the forwarder.
    pub fn new(store: Store, max_pending: Option<u64>, wake: Arc<Notify>) -> Enqueue {
        Enqueue {
            store,
            max_pending,
            wake,
            gauges: Arc::default(),
        }
    }

    /// Count what is taken in `gauges`.
    pub fn gauged(mut self, gauges: Arc<Gauges>) -> Enqueue {
        self.gauges = gauges;
        self
    }
}

impl Sink for Enqueue {
    fn commit<'a>(&'a self, message: &'a Inbound) -> SinkFuture<'a, SinkResult> {
        Box::pin(async move {
            let mut results = self.commit_batch(std::slice::from_ref(message)).await;
            results
                .pop()
                .unwrap_or_else(|| SinkResult::failed("queue: no result"))
        })
    }

    fn commit_batch<'a>(&'a self, messages: &'a [Inbound]) -> SinkFuture<'a, Vec<SinkResult>> {
        Box::pin(async move {
            let len = messages.len();
            match self.store.insert(messages, self.max_pending).await {
                Ok(Some(_)) => {
                    self.gauges.received(len as u64);
                    self.wake.notify_one();
                    vec![SinkResult::committed(); len]
                }
                Ok(None) => {
                    let full =
                        SinkResult::failed("queue-full").replying(Reply::Saying(QUEUE_FULL_TEXT));
                    vec![full; len]
                }
                Err(e) => vec![SinkResult::failed(format!("queue: {e}")); len],
            }
        })
    }
}

/// How the forwarder runs.
#[derive(Debug, Clone)]
pub struct ForwardOptions {
    /// Rows handed to the client at once (its window).
    pub window: usize,
    /// A row whose send ended without an answer this many times is settled `unknown-fate`.
    pub max_attempts: u32,
    /// Pause before a row that could not be written is tried again.
    pub retry_pause: Duration,
    /// Where settled rows, their latencies and the queue depth are counted.
    pub gauges: Arc<Gauges>,
}

/// Send pending rows upstream in arrival order until `stop`; each row's fate is written as it
/// settles. Rows in flight at the stop stay pending for the next start.
pub async fn forward(
    store: Store,
    client: Arc<Client>,
    options: ForwardOptions,
    wake: Arc<Notify>,
    stop: CancellationToken,
) {
    let mut cursor = 0i64;
    // The depth is a count over the pending rows: read it at most once a second.
    let mut depth_read: Option<tokio::time::Instant> = None;
    loop {
        if stop.is_cancelled() {
            return;
        }
        if depth_read.is_none_or(|at| at.elapsed() >= Duration::from_secs(1)) {
            depth_read = Some(tokio::time::Instant::now());
            if let Ok(depth) = store.depth().await {
                options.gauges.queue_depth(depth);
            }
        }
        let rows = match store.pending(cursor, options.window.max(1)).await {
            Ok(rows) => rows,
            Err(_) => {
                pause(&stop, options.retry_pause).await;
                continue;
            }
        };
        if rows.is_empty() {
            if cursor > 0 && store.first_pending().await.ok().flatten().is_some() {
                // Rows left pending behind the cursor are tried again, oldest first.
                cursor = 0;
                pause(&stop, options.retry_pause).await;
                continue;
            }
            tokio::select! {
                _ = stop.cancelled() => return,
                _ = wake.notified() => {}
                _ = tokio::time::sleep(Duration::from_secs(1)) => {}
            }
            continue;
        }
        cursor = rows.last().map_or(cursor, |r| r.id);
        let retry = send_rows(&store, &client, &options, rows, &stop).await;
        if retry {
            cursor = 0;
            pause(&stop, options.retry_pause).await;
        }
    }
}

/// Send `rows` and settle each; `true` when one of them stays pending to be tried again.
async fn send_rows(
    store: &Store,
    client: &Client,
    options: &ForwardOptions,
    rows: Vec<PendingRow>,
    stop: &CancellationToken,
) -> bool {
    let now = SystemTime::now();
    for row in &rows {
        let _ = store.attempted(row.id, now).await;
    }
    let payloads: Vec<_> = rows.iter().map(|r| r.payload.clone()).collect();
    let handles = client.send_many_cancellable(payloads, stop).await;
    let mut retry = false;
    for (row, handle) in rows.iter().zip(handles) {
        let fate = tokio::select! {
            fate = handle => fate,
            // Stopping: what is in flight stays pending.
            _ = stop.cancelled() => return false,
        };
        let attempts = row.attempts + 1;
        let mut settled = settlement(&fate, attempts);
        settled.forwarded_at = Some(now);
        let keep_pending = match &fate {
            Fate::Accepted { .. } | Fate::Negative { .. } | Fate::CommittedOnly { .. } => false,
            Fate::UnknownFate { .. } => attempts < options.max_attempts,
            _ => true,
        };
        if keep_pending {
            retry = true;
            continue;
        }
        if settled.status == Status::NeverDelivered {
            settled.status = Status::UnknownFate;
        }
        options.gauges.settled(gauges::latency(&fate));
        let _ = store.settle(row.id, settled).await;
    }
    retry
}

async fn pause(stop: &CancellationToken, pause: Duration) {
    tokio::select! {
        _ = stop.cancelled() => {}
        _ = tokio::time::sleep(pause) => {}
    }
}
