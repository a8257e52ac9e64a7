//! One connection's load: a sender that renders and paces messages (unpaced: the window's free
//! room at once, in one batch), and a collector that awaits their fates in order, checks them
//! against the embedded listener's ledger, and hands results to the monitor in batches.

use super::update::{Done, WorkerNote};
use super::{ControlIds, Ledger, Template};
use crate::client::{Client, Fate, SendHandle};
use crate::pace::{Pacer, Schedule};
use crate::server::clock::Utc;
use bytes::{Bytes, BytesMut};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime};
use tokio::sync::{mpsc, OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// Largest batch of results handed to the monitor at once, and the longest it is held.
const BATCH: usize = 512;
const BATCH_AGE: Duration = Duration::from_millis(100);
/// Never-delivered messages remembered for the final ledger check.
const NEVER_DELIVERED_CHECKED: usize = 100_000;

/// Counts workers that have finished generating; fires when all have.
#[derive(Clone)]
pub(crate) struct Countdown {
    left: Arc<AtomicUsize>,
    token: CancellationToken,
}

impl Countdown {
    pub(crate) fn new(n: usize) -> Countdown {
        Countdown {
            left: Arc::new(AtomicUsize::new(n)),
            token: CancellationToken::new(),
        }
    }
    fn one_done(&self) {
        if self.left.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.token.cancel();
        }
    }
    pub(crate) async fn done(&self) {
        self.token.cancelled().await
    }
}

pub(crate) struct Worker {
    pub index: usize,
    pub client: Arc<Client>,
    pub templates: Arc<Vec<Template>>,
    pub ids: ControlIds,
    /// Messages this connection generates; `None`: until stopped.
    pub budget: Option<u64>,
    /// Due times with a rate; `None`: as fast as the window allows.
    pub schedule: Option<Schedule>,
    /// Wait this long before the first message (connection ramp-up without a rate).
    pub delay_start: Duration,
    pub start: Instant,
    pub window: usize,
    pub stop: CancellationToken,
    pub countdown: Countdown,
    pub updates: mpsc::Sender<WorkerNote>,
    pub ledger: Option<Arc<Ledger>>,
    /// How long the settle wait may see no fate at all before it gives up (the client's own
    /// bounds: ACK timeout plus reconnect give-up).
    pub settle_quiet: Duration,
    /// How long what was generated may take to settle once `stop` fired.
    pub drain_timeout: Duration,
    #[doc(hidden)]
    pub generated_counter: Arc<AtomicU64>,
}

/// Why generating ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Generated {
    /// The budget is spent (or the link gave up): every message is given its chance.
    Exhausted,
    /// `stop` fired (duration, Ctrl-C): what was generated settles within the drain timeout.
    Stopped,
}

type Collected = (Vec<u64>, Vec<String>);

/// What a connection leaves for the accounting.
pub(crate) struct WorkerEnd {
    pub index: usize,
    /// Sequence numbers that ended never-delivered (checked against the ledger at the end).
    pub never_delivered: Vec<u64>,
    pub problems: Vec<String>,
}

struct InFlight {
    handle: SendHandle,
    from: Instant,
    seq: u64,
    _permit: Option<OwnedSemaphorePermit>,
}

impl Worker {
    /// The count of messages generated so far, shared with the monitor.
    pub(crate) fn generated(&self) -> Arc<AtomicU64> {
        self.generated_counter.clone()
    }

    pub(crate) async fn run(self) -> WorkerEnd {
        let (tx, rx) = mpsc::channel::<InFlight>(self.window.max(64) * 2);
        let settled = Arc::new(AtomicU64::new(0));
        let collector = tokio::spawn(collect(
            self.index,
            rx,
            self.start,
            self.updates.clone(),
            self.ledger.clone(),
            settled.clone(),
        ));
        let closed = CancellationToken::new();
        let events = tokio::spawn(forward_events(
            self.index,
            self.client.subscribe(),
            self.updates.clone(),
            closed.clone(),
        ));
        let why = self.generate(&tx).await;
        self.countdown.one_done();
        drop(tx);
        // `close()` fails sends not yet written as never delivered, so it must wait until every
        // generated message has its fate; only a wait cut short closes with sends still pending.
        let collected = match self.settle(collector, &settled, why).await {
            Ok(collected) => {
                let _ = self.client.close().await;
                collected
            }
            Err(collector) => {
                // The wait's bound is spent: settle the rest now (unwritten -> never delivered,
                // written -> unknown fate) rather than wait a drain timeout more.
                let _ = self.client.destroy().await;
                collector.await.unwrap_or_default()
            }
        };
        let (never_delivered, problems) = collected;
        closed.cancel();
        let _ = events.await;
        WorkerEnd {
            index: self.index,
            never_delivered,
            problems,
        }
    }

    /// Wait until the collector has every generated message's fate. `Err` hands the collector
    /// back when the wait's bound ran out first: after `stop`, the drain timeout; otherwise (or
    /// before `stop`) `settle_quiet` without a single fate settling.
    async fn settle(
        &self,
        mut collector: JoinHandle<Collected>,
        settled: &AtomicU64,
        why: Generated,
    ) -> Result<Collected, JoinHandle<Collected>> {
        let mut drain_deadline =
            (why == Generated::Stopped).then(|| Instant::now() + self.drain_timeout);
        let mut seen = settled.load(Ordering::Relaxed);
        let mut quiet_deadline = Instant::now() + self.settle_quiet;
        loop {
            let deadline = drain_deadline.map_or(quiet_deadline, |d| d.min(quiet_deadline));
            tokio::select! {
                collected = &mut collector => return Ok(collected.unwrap_or_default()),
                // Ctrl-C while the last messages settle: bound the rest by the drain timeout.
                _ = self.stop.cancelled(), if drain_deadline.is_none() => {
                    drain_deadline = Some(Instant::now() + self.drain_timeout);
                }
                _ = tokio::time::sleep_until(deadline) => {
                    let now = Instant::now();
                    let progress = settled.load(Ordering::Relaxed);
                    if drain_deadline.is_some_and(|d| d <= now) || progress == seen {
                        return Err(collector);
                    }
                    seen = progress;
                    quiet_deadline = now + self.settle_quiet;
                }
            }
        }
    }

    async fn generate(&self, tx: &mpsc::Sender<InFlight>) -> Generated {
        if !self.delay_start.is_zero() {
            tokio::select! {
                _ = tokio::time::sleep(self.delay_start) => {}
                _ = self.stop.cancelled() => return Generated::Stopped,
            }
        }
        let mut pacer = self.schedule.map(|s| Pacer::new(s, self.start));
        let gate = self
            .schedule
            .is_none()
            .then(|| Arc::new(Semaphore::new(self.window)));
        let mut stamp = Stamp::default();
        let mut buf = BytesMut::with_capacity(64 * 1024);
        let mut payloads = Vec::with_capacity(self.window);
        let mut permits = Vec::with_capacity(self.window);
        let mut seq: u64 = 0;
        let mut next_state_check: u64 = 0;
        loop {
            let left = self.budget.map_or(u64::MAX, |b| b.saturating_sub(seq));
            if left == 0 {
                return Generated::Exhausted;
            }
            if self.stop.is_cancelled() {
                return Generated::Stopped;
            }
            // A link that gave up takes nothing more: stop rather than spin on refusals.
            if seq >= next_state_check {
                if self.client.state() == crate::client::State::Closed {
                    return Generated::Exhausted;
                }
                next_state_check = seq + 64;
            }
            // Paced: one message per due time. Unpaced: all the room the window has, handed to
            // the client in one batch (one command to its link instead of one per message).
            let from = match (&mut pacer, &gate) {
                (Some(pacer), _) => tokio::select! {
                    biased;
                    _ = self.stop.cancelled() => return Generated::Stopped,
                    due = pacer.tick() => due,
                },
                (None, Some(gate)) => match self.room(gate, &mut permits, left).await {
                    Ok(from) => from,
                    Err(why) => return why,
                },
                (None, None) => return Generated::Exhausted,
            };
            let count = permits.len().max(1) as u64;
            self.render(seq..seq + count, &mut stamp, &mut buf, &mut payloads);
            self.generated_counter.fetch_add(count, Ordering::Relaxed);
            let handles = self.client.send_many(payloads.drain(..)).await;
            let mut batch_permits = permits.drain(..);
            for handle in handles {
                let item = InFlight {
                    handle,
                    from,
                    seq,
                    _permit: batch_permits.next(),
                };
                // The collector is gone only if its task ended: nothing more can be counted.
                if tx.send(item).await.is_err() {
                    return Generated::Exhausted;
                }
                seq += 1;
            }
        }
    }

    /// All the room the window has now (at least one place, waited for), up to `left`; when
    /// it came. `Err` when the run is stopped or over meanwhile.
    async fn room(
        &self,
        gate: &Arc<Semaphore>,
        permits: &mut Vec<OwnedSemaphorePermit>,
        left: u64,
    ) -> Result<Instant, Generated> {
        let first = tokio::select! {
            biased;
            _ = self.stop.cancelled() => return Err(Generated::Stopped),
            permit = gate.clone().acquire_owned() => match permit {
                Ok(permit) => permit,
                Err(_) => return Err(Generated::Exhausted),
            },
        };
        permits.push(first);
        while (permits.len() as u64) < left {
            match gate.clone().try_acquire_owned() {
                Ok(permit) => permits.push(permit),
                Err(_) => break,
            }
        }
        Ok(Instant::now())
    }

    /// Messages `seqs`, each from its template in turn, onto `payloads`.
    fn render(
        &self,
        seqs: std::ops::Range<u64>,
        stamp: &mut Stamp,
        buf: &mut BytesMut,
        payloads: &mut Vec<Bytes>,
    ) {
        for k in seqs {
            let template = &self.templates[(k % self.templates.len() as u64) as usize];
            let id = self.ids.format(self.index, k);
            template.render(stamp.now(), &id, buf);
            payloads.push(buf.split().freeze());
            if buf.capacity() < 4096 {
                buf.reserve(64 * 1024);
            }
        }
    }
}

/// MSH-7 to the second, formatted once per second.
#[derive(Default)]
struct Stamp {
    second: u64,
    text: String,
}

impl Stamp {
    fn now(&mut self) -> &[u8] {
        let now = SystemTime::now();
        let second = now
            .duration_since(SystemTime::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or_default();
        if second != self.second || self.text.is_empty() {
            self.second = second;
            self.text = Utc::from_system(now).hl7();
        }
        self.text.as_bytes()
    }
}

async fn collect(
    index: usize,
    mut rx: mpsc::Receiver<InFlight>,
    start: Instant,
    updates: mpsc::Sender<WorkerNote>,
    ledger: Option<Arc<Ledger>>,
    settled: Arc<AtomicU64>,
) -> Collected {
    let mut batch = Vec::with_capacity(BATCH);
    let mut ticker = tokio::time::interval(BATCH_AGE);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut never_delivered = Vec::new();
    let mut problems = Vec::new();
    let flush = |batch: &mut Vec<Done>| {
        let items = std::mem::replace(batch, Vec::with_capacity(BATCH));
        let updates = updates.clone();
        async move {
            if !items.is_empty() {
                let _ = updates.send(WorkerNote::Done { conn: index, items }).await;
            }
        }
    };
    loop {
        let next = tokio::select! {
            next = rx.recv() => next,
            _ = ticker.tick() => { flush(&mut batch).await; continue; }
        };
        let Some(mut item) = next else { break };
        let fate = loop {
            tokio::select! {
                fate = &mut item.handle => break fate,
                _ = ticker.tick() => flush(&mut batch).await,
            }
        };
        settled.fetch_add(1, Ordering::Relaxed);
        let now = Instant::now();
        if let Some(ledger) = &ledger {
            if matches!(fate, Fate::Accepted { .. }) && !ledger.is_committed(index, item.seq) {
                problems.push(format!(
                    "connection {} message {}: accepted, but the listener has no commit of it",
                    index + 1,
                    item.seq
                ));
            }
        }
        if matches!(fate, Fate::NeverDelivered { .. })
            && never_delivered.len() < NEVER_DELIVERED_CHECKED
        {
            never_delivered.push(item.seq);
        }
        batch.push(Done {
            at: now.saturating_duration_since(start),
            latency: now.saturating_duration_since(item.from),
            population: fate.population(),
            code: fate.ack_code(),
            cause: fate.contract_cause(),
        });
        drop(item);
        if batch.len() >= BATCH {
            flush(&mut batch).await;
        }
    }
    flush(&mut batch).await;
    (never_delivered, problems)
}

async fn forward_events(
    index: usize,
    mut events: tokio::sync::broadcast::Receiver<crate::client::ClientEvent>,
    updates: mpsc::Sender<WorkerNote>,
    closed: CancellationToken,
) {
    use tokio::sync::broadcast::error::{RecvError, TryRecvError};
    loop {
        let next = tokio::select! {
            next = events.recv() => next,
            // The client is closed: what it said last is already queued.
            _ = closed.cancelled() => loop {
                match events.try_recv() {
                    Ok(event) => { let _ = updates.send(WorkerNote::Event { conn: index, event }).await; }
                    Err(TryRecvError::Lagged(n)) => { let _ = updates.send(WorkerNote::Lagged { conn: index, n }).await; }
                    Err(_) => return,
                }
            },
        };
        match next {
            Ok(event) => {
                if updates
                    .send(WorkerNote::Event { conn: index, event })
                    .await
                    .is_err()
                {
                    return;
                }
            }
            Err(RecvError::Lagged(n)) => {
                let _ = updates.send(WorkerNote::Lagged { conn: index, n }).await;
            }
            Err(RecvError::Closed) => return,
        }
    }
}
