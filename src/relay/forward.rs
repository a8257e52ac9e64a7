//! Pass-through: a [`Sink`] that hands each message to the upstream client as it arrives and
//! answers with what the upstream said. The server core commits one connection's messages in
//! arrival order and this sink writes them upstream in that order, so per-connection order holds.

use super::gauges::{self, Gauges};
use super::mirror::Mirror;
use super::record::Recorder;
use super::table::pass_through_fate;
use crate::client::{Client, Fate, SendHandle};
use crate::server::sink::SinkFuture;
use crate::server::{Inbound, Sink, SinkResult};
use std::sync::Arc;
use std::time::{Duration, SystemTime};
use tokio_util::sync::CancellationToken;

/// Forwards every message upstream and answers with the upstream's answers.
pub struct Forward {
    client: Arc<Client>,
    /// A message not written upstream this long after it arrived is refused.
    write_within: Duration,
    record: Option<Arc<Recorder>>,
    gauges: Arc<Gauges>,
    mirror: Option<Mirror>,
    /// Taken while a batch is handed to the upstream link, in the order the batches asked
    /// (the lock is fair): a connection's next batch, started while this one waits for room in
    /// the window, goes after it.
    handing: tokio::sync::Mutex<()>,
}

impl Forward {
    /// `write_within` bounds how long a message may wait for the upstream link to take it
    /// (the connect timeout): after that it is refused, nothing kept.
    pub fn new(client: Arc<Client>, write_within: Duration) -> Forward {
        Forward {
            client,
            write_within,
            record: None,
            gauges: Arc::default(),
            mirror: None,
            handing: tokio::sync::Mutex::new(()),
        }
    }

    /// Copy every message to the shadow of `mirror` as it goes upstream, its upstream answer
    /// handed over for the comparison. Never waits for the shadow.
    pub fn mirroring(mut self, mirror: Mirror) -> Forward {
        self.mirror = Some(mirror);
        self
    }

    /// Count what passes through in `gauges`.
    pub fn gauged(mut self, gauges: Arc<Gauges>) -> Forward {
        self.gauges = gauges;
        self
    }

    /// Keep every message with its upstream answer and timings in `record`.
    pub fn recording(mut self, record: Arc<Recorder>) -> Forward {
        self.record = Some(record);
        self
    }

    async fn forward(&self, messages: &[Inbound]) -> Vec<SinkResult> {
        self.gauges.received(messages.len() as u64);
        // The deadline is watched here, by the batch's own future, not by a task of its own:
        // once it passes, `expired` stops the waits for room in the window (those sends are
        // never delivered, and refused downstream) and every send still unwritten is cancelled.
        let deadline = tokio::time::sleep(self.write_within);
        tokio::pin!(deadline);
        let expired = CancellationToken::new();
        let mut copies: Vec<_> = match &self.mirror {
            Some(mirror) => mirror.copy_many(messages.iter().map(|m| &m.payload[..])),
            None => Vec::new(),
        };
        let handles = {
            // A function, not a closure: the future must be `Send` for every borrow of the batch.
            let payloads = messages.iter().map(payload_of);
            let sending = async {
                let _turn = self.handing.lock().await;
                self.client.send_many_cancellable(payloads, &expired).await
            };
            tokio::pin!(sending);
            loop {
                tokio::select! {
                    biased;
                    handles = &mut sending => break handles,
                    () = &mut deadline, if !expired.is_cancelled() => expired.cancel(),
                }
            }
        };
        let mut results = Vec::with_capacity(messages.len());
        let mut closing = false;
        for (i, (message, mut handle)) in messages.iter().zip(handles).enumerate() {
            if closing {
                // An earlier message of this batch closes the connection: this one's answer
                // would never be read. Unwritten, it never reaches the upstream.
                handle.cancel();
            }
            let forwarded_at = self.record.is_some().then(SystemTime::now);
            let (fate, commit) = settle(&mut handle, deadline.as_mut(), &expired).await;
            self.gauges.settled(gauges::latency(&fate));
            // `None` when there is no mirror; `Some(None)` when the copy was skipped.
            let compared = copies
                .get_mut(i)
                .map(|copy| copy.take().and_then(|copy| copy.answered(&fate)));
            if let (Some(record), Some(forwarded_at)) = (&self.record, forwarded_at) {
                let row = record
                    .keep(message, &fate, handle.writes(), forwarded_at)
                    .await;
                if let (Some(row), Some(compared)) = (row, compared) {
                    record.mirrored(row, compared);
                }
            }
            let result = pass_through_fate(&fate, commit);
            closing |= matches!(
                &result.reply,
                crate::server::Reply::Relayed { close: Some(_), .. }
            );
            results.push(result);
        }
        results
    }
}

fn payload_of(message: &Inbound) -> bytes::Bytes {
    message.payload.clone()
}

/// Wait for a send's fate and its `CA`, if one comes; once `deadline` passes (`expired` is then
/// cancelled), a send still not written is cancelled (it then ends never delivered).
async fn settle(
    handle: &mut SendHandle,
    mut deadline: std::pin::Pin<&mut tokio::time::Sleep>,
    expired: &CancellationToken,
) -> (Fate, Option<crate::client::Commit>) {
    let commit = handle.take_committed();
    tokio::pin!(commit);
    let mut committed = None;
    let mut commit_done = false;
    let mut watching = true;
    loop {
        if watching && expired.is_cancelled() {
            watching = false;
            if handle.writes() == 0 {
                handle.cancel();
            }
        }
        tokio::select! {
            biased;
            c = &mut commit, if !commit_done => {
                committed = c;
                commit_done = true;
            }
            fate = &mut *handle => {
                // The `CA`, if any, was sent before the fate settled: it is ready now.
                if !commit_done {
                    committed = commit.await;
                }
                return (fate, committed);
            }
            () = &mut deadline, if watching => expired.cancel(),
        }
    }
}

impl Sink for Forward {
    fn commit<'a>(&'a self, message: &'a Inbound) -> SinkFuture<'a, SinkResult> {
        Box::pin(async move {
            let mut results = self.forward(std::slice::from_ref(message)).await;
            results
                .pop()
                .unwrap_or_else(|| SinkResult::failed("upstream: no result"))
        })
    }

    fn commit_batch<'a>(&'a self, messages: &'a [Inbound]) -> SinkFuture<'a, Vec<SinkResult>> {
        Box::pin(self.forward(messages))
    }

    /// A connection's batches are handed upstream in the order they start, each answered with
    /// its own upstream answers, so the next may start while one waits for them. Not while
    /// recording: the record keeps each connection's rows in arrival order.
    fn overlapping(&self) -> bool {
        self.record.is_none()
    }

    fn report_to(&self, reports: crate::server::StoreReports) {
        if let Some(record) = &self.record {
            record.report_to(reports);
        }
    }
}
