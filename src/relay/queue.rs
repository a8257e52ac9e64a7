//! Store and forward: a [`Sink`] that commits each message as a pending row of the queue (the
//! downstream peer is then answered by the MSH-15 table: the relay has taken responsibility),
//! and the forwarder that sends pending rows upstream in arrival order and writes each row's
//! fate. Only a window of rows is in memory at once; the rest waits on disk.
//!
//! Nothing the store says is dropped: a row that cannot be read is set aside as a dead letter
//! and reported, and forwarding goes on; the fates of a window are written in one transaction,
//! tried again (and reported) until they are written, before any later row is sent, so a failed
//! write never sends a row again after the rows behind it. The queue depth shown is read from
//! the table once a second, whatever the forwarder is doing. With a mirror, each row is copied
//! to the shadow once its upstream fate is settled.

use super::gauges::{self, Gauges};
use super::mirror::Mirror;
use super::record::settlement;
use super::store::{PendingRow, RowValues, Status, Store, Taking};
use crate::client::{Client, Fate};
use crate::server::sink::groups::{submit, GroupCounter, Job};
use crate::server::sink::{CommitGroups, SinkFuture};
use crate::server::{Inbound, Sink, SinkResult, StoreReports};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};
use tokio::sync::{mpsc, Notify};
use tokio_util::sync::CancellationToken;
use writer::Writer;

mod writer;

/// MSA-3 of the refusal of a message the full queue could not take.
pub(crate) const QUEUE_FULL_TEXT: &str = "Relay queue full (queue-full): nothing kept";

/// Commits messages to the queue through one writer: the batches taken in while a commit is
/// under way (from any connection, or the next of the same one) go together in the next, one
/// synced commit for all.
pub struct Enqueue {
    jobs: mpsc::Sender<Job<RowValues>>,
    /// The writer, until the first batch starts it on the runtime.
    writer: Mutex<Option<(Writer, mpsc::Receiver<Job<RowValues>>)>>,
    store: Store,
    groups: Arc<GroupCounter>,
}

/// Batches waiting for the writer at most: beyond, committers wait for room.
const WAITING: usize = 1024;

impl Enqueue {
    /// `wake` is notified after each commit, for the forwarder.
    pub fn new(store: Store, max_pending: Option<u64>, wake: Arc<Notify>) -> Enqueue {
        let (jobs, rx) = mpsc::channel(WAITING);
        let groups = Arc::new(GroupCounter::default());
        let writer = Writer {
            store: store.clone(),
            max_pending,
            wake,
            gauges: Arc::default(),
            groups: Arc::clone(&groups),
        };
        Enqueue {
            jobs,
            writer: Mutex::new(Some((writer, rx))),
            store,
            groups,
        }
    }

    /// Count what is taken in `gauges`.
    pub fn gauged(mut self, gauges: Arc<Gauges>) -> Enqueue {
        if let Some((writer, _)) = self.writer.get_mut().unwrap_or_else(|p| p.into_inner()) {
            writer.gauges = gauges;
        }
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
        let start = self.writer.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some((writer, rx)) = start {
            // A task of its own: a connection that ends meanwhile drops its wait, never the
            // commit of the others' rows nor their answers. It ends with the sink.
            tokio::spawn(writer.run(rx));
        }
        let rows = Taking::of(messages).0;
        Box::pin(submit(&self.jobs, rows, "queue: the writer stopped"))
    }

    /// A connection's next batch joins the next commit while its earlier one is written: the
    /// writer commits batches in the order they came, so its rows keep their arrival order.
    fn overlapping(&self) -> bool {
        true
    }

    fn report_to(&self, reports: StoreReports) {
        self.store.report_to(reports);
    }

    fn commit_groups(&self) -> Option<CommitGroups> {
        Some(self.groups.snapshot())
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
    /// Copy each row to this mirror's shadow as its upstream fate is settled.
    pub mirror: Option<Mirror>,
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
    let depth = tokio::spawn(show_depth(
        store.clone(),
        Arc::clone(&options.gauges),
        stop.clone(),
    ));
    let mut cursor = 0i64;
    let mut said = Said::default();
    loop {
        if stop.is_cancelled() {
            break;
        }
        let (rows, unreadable) = match store.pending(cursor, options.window.max(1)).await {
            Ok(read) => read,
            Err(e) => {
                said.once_a_second(&store, || format!("queue: reading pending rows: {e}"))
                    .await;
                pause(&stop, options.retry_pause).await;
                continue;
            }
        };
        for u in unreadable {
            let detail = format!(
                "queue: row {} cannot be read ({}): set aside as a dead letter (status unreadable), forwarding goes on",
                u.id, u.why
            );
            store.report(detail).await;
        }
        if rows.is_empty() {
            if cursor > 0 && store.first_pending().await.ok().flatten().is_some() {
                // Rows left pending behind the cursor are tried again, oldest first.
                cursor = 0;
                pause(&stop, options.retry_pause).await;
                continue;
            }
            tokio::select! {
                _ = stop.cancelled() => break,
                _ = wake.notified() => {}
                _ = tokio::time::sleep(Duration::from_secs(1)) => {}
            }
            continue;
        }
        cursor = rows.last().map_or(cursor, |r| r.id);
        let retry = send_rows(&store, &client, &options, rows, &stop, &mut said).await;
        if retry {
            cursor = 0;
            pause(&stop, options.retry_pause).await;
        }
    }
    depth.abort();
}

/// Read the pending rows' count into the gauges once a second until `stop`.
async fn show_depth(store: Store, gauges: Arc<Gauges>, stop: CancellationToken) {
    loop {
        if let Ok(depth) = store.depth().await {
            gauges.queue_depth(depth);
        }
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = tokio::time::sleep(Duration::from_secs(1)) => {}
        }
    }
}

/// When a repeated store failure was last said: at most once a second, with how many there
/// were meanwhile.
#[derive(Default)]
struct Said {
    at: Option<tokio::time::Instant>,
    unsaid: u64,
}

impl Said {
    async fn once_a_second(&mut self, store: &Store, what: impl FnOnce() -> String) {
        self.unsaid += 1;
        if self
            .at
            .is_some_and(|at| at.elapsed() < Duration::from_secs(1))
        {
            return;
        }
        let times = match self.unsaid {
            1 => String::new(),
            n => format!(" ({n} times since last said)"),
        };
        store.report(format!("{}{times}", what())).await;
        self.at = Some(tokio::time::Instant::now());
        self.unsaid = 0;
    }
}

/// Send `rows` and settle each; `true` when one of them stays pending to be tried again.
async fn send_rows(
    store: &Store,
    client: &Client,
    options: &ForwardOptions,
    rows: Vec<PendingRow>,
    stop: &CancellationToken,
    said: &mut Said,
) -> bool {
    let now = SystemTime::now();
    let generation = rows.first().map_or(0, |r| r.generation);
    let ids = rows.iter().map(|r| r.id).collect();
    if let Err(e) = store.attempted(generation, ids, now).await {
        let detail = format!("queue: counting the attempts of {} rows: {e}", rows.len());
        store.report(detail).await;
    }
    let payloads: Vec<_> = rows.iter().map(|r| r.payload.clone()).collect();
    let handles = client.send_many_cancellable(payloads, stop).await;
    let mut retry = false;
    let mut fates = Vec::with_capacity(rows.len());
    for (row, handle) in rows.iter().zip(handles) {
        let fate = tokio::select! {
            fate = handle => fate,
            // Stopping: what is in flight stays pending; what was answered is written.
            _ = stop.cancelled() => break,
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
        // Copied once its upstream fate is settled: once per row, whatever it took to get
        // there, and compared with the answer the row keeps. Never waits.
        if let Some(copy) = options.mirror.as_ref().and_then(|m| m.copy(&row.payload)) {
            copy.answered(&fate);
        }
        fates.push((row.id, settled));
    }
    write_fates(store, generation, fates, options, stop, said).await;
    retry
}

/// Write `fates` in one transaction, again and again (each failure said) until it is written,
/// the file they were read from is gone from the path, or the relay stops: no later row is sent
/// before, so a row never goes upstream again behind the rows after it.
async fn write_fates(
    store: &Store,
    generation: u64,
    fates: Vec<(i64, crate::relay::store::Settlement)>,
    options: &ForwardOptions,
    stop: &CancellationToken,
    said: &mut Said,
) {
    if fates.is_empty() {
        return;
    }
    loop {
        match store.settle(generation, fates.clone()).await {
            Ok(true) => return,
            Ok(false) => {
                let detail = format!(
                    "queue: {} was moved, replaced or deleted since these {} rows were read: their fates stay unwritten in the file they came from",
                    store.file().display(),
                    fates.len()
                );
                store.report(detail).await;
                return;
            }
            Err(e) => {
                let n = fates.len();
                said.once_a_second(store, || {
                    format!("queue: writing the fates of {n} rows failed ({e}); trying again before sending any later row")
                })
                .await;
            }
        }
        if stop.is_cancelled() {
            return;
        }
        pause(stop, options.retry_pause).await;
    }
}

async fn pause(stop: &CancellationToken, pause: Duration) {
    tokio::select! {
        _ = stop.cancelled() => {}
        _ = tokio::time::sleep(pause) => {}
    }
}

#[cfg(test)]
mod tests;
