//! The mirror: a copy of every message for a shadow engine, and the comparison of its answer
//! with the upstream's. The downstream never waits for the shadow: a copy is taken only when
//! the mirror's queue has a place and the receiver's budget has room for it (else it is
//! skipped and counted), and a worker hands copies to the shadow's own client link in order.
//! Each copy's comparison waits for both answers; its place and bytes are given back then.
//!
//! - [`compare`]: which parts of two answers are compared, and the paths where they differ.

pub(crate) mod compare;
mod tally;

pub(crate) use compare::differences;
pub use compare::{Compare, Ignore};
pub use tally::{Counts, Outcome};

use crate::client::{Client, Fate, SendHandle};
use crate::hl7::{Message, Path};
use crate::server::{BudgetShare, Held};
use bytes::Bytes;
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use tally::Tally;
use tokio::sync::{broadcast, mpsc, oneshot, OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// Default of [`MirrorOptions::queue`].
pub const DEFAULT_QUEUE: usize = 10_000;

/// Book-keeping a copy holds of the budget besides its bytes.
const COPY_OVERHEAD: usize = 256;

/// How the mirror runs.
#[derive(Debug, Clone)]
pub struct MirrorOptions {
    /// Copies waiting for the shadow or for their comparison, at most; beyond, skipped.
    pub queue: usize,
    /// What of the two answers is compared.
    pub compare: Compare,
}

impl Default for MirrorOptions {
    fn default() -> Self {
        MirrorOptions {
            queue: DEFAULT_QUEUE,
            compare: Compare::default(),
        }
    }
}

/// What the mirror tells as it goes. No payload, no value: names and paths only.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum MirrorEvent {
    /// The shadow answered a message otherwise than the upstream.
    Diff {
        /// MSH-10 of the message as it came (escapes not decoded): whoever shows it makes it
        /// safe for a log line.
        control_id: Bytes,
        /// MSH-9 of the message as it came.
        message_type: Bytes,
        /// The fields where the answers differ (`MSA-1`, `ERR(2)-3`).
        paths: Vec<String>,
    },
}

/// How one message's copy ended, with the shadow's final answer when one came: for whoever
/// keeps the answers (`--record`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compared {
    /// How it ended.
    pub outcome: Outcome,
    /// The shadow's final answer, as received.
    pub ack: Option<Bytes>,
}

/// The upstream's final answer to a copied message, to be handed over once it is known. Dropped
/// without it, the upstream counts as having said nothing.
#[derive(Debug)]
pub struct Pending {
    upstream: oneshot::Sender<Option<Bytes>>,
    compared: Option<oneshot::Receiver<Compared>>,
}

impl Pending {
    /// The upstream settled the message in `fate`. Returns where the comparison will come.
    pub fn answered(mut self, fate: &Fate) -> Option<oneshot::Receiver<Compared>> {
        let _ = self.upstream.send(final_answer(fate));
        self.compared.take()
    }
}

/// The copies and the shadow link. Cheap to clone.
#[derive(Clone)]
pub struct Mirror {
    shared: Arc<Shared>,
}

struct Shared {
    /// Copies go to the worker a batch at a time: one hand-over for all of a batch's.
    copies: mpsc::UnboundedSender<Vec<Copy>>,
    /// One permit per place in the queue: a copy holds one until compared.
    places: Arc<Semaphore>,
    queue: usize,
    budget: OnceLock<BudgetShare>,
    tally: Tally,
    events: broadcast::Sender<MirrorEvent>,
    compare: Compare,
}

/// One message's copy on its way to the shadow and its comparison.
struct Copy {
    payload: Bytes,
    upstream: oneshot::Receiver<Option<Bytes>>,
    compared: oneshot::Sender<Compared>,
    _place: OwnedSemaphorePermit,
    _held: Option<Held>,
}

/// The running mirror's worker, to stop at the end of the run.
pub struct Worker {
    stop: CancellationToken,
    task: tokio::task::JoinHandle<()>,
    tracker: TaskTracker,
    client: Arc<Client>,
}

impl std::fmt::Debug for Mirror {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mirror")
            .field("counts", &self.counts())
            .finish_non_exhaustive()
    }
}

impl Mirror {
    /// Start copying to the shadow through `client` (its own link, its own reconnects).
    pub fn start(client: Arc<Client>, options: MirrorOptions) -> (Mirror, Worker) {
        let (tx, rx) = mpsc::unbounded_channel();
        let queue = options.queue.max(1);
        let shared = Arc::new(Shared {
            copies: tx,
            places: Arc::new(Semaphore::new(queue)),
            queue,
            budget: OnceLock::new(),
            tally: Tally::default(),
            events: broadcast::channel(1024).0,
            compare: options.compare,
        });
        let stop = CancellationToken::new();
        let tracker = TaskTracker::new();
        let task = tokio::spawn(hand_over(
            Arc::clone(&shared),
            Arc::clone(&client),
            rx,
            stop.clone(),
            tracker.clone(),
        ));
        let worker = Worker {
            stop,
            task,
            tracker,
            client,
        };
        (Mirror { shared }, worker)
    }

    /// Count every copy's bytes in `budget` (a receiver's share): a copy it has no room for is
    /// skipped.
    pub fn budget(&self, budget: BudgetShare) {
        let _ = self.shared.budget.set(budget);
    }

    /// The mirror's events (a slow reader misses the oldest and is told how many).
    pub fn subscribe(&self) -> broadcast::Receiver<MirrorEvent> {
        self.shared.events.subscribe()
    }

    /// The counts so far.
    pub fn counts(&self) -> Counts {
        let queued = self.shared.queue - self.shared.places.available_permits();
        self.shared.tally.read(queued as u64)
    }

    /// A copy of `payload` for the shadow, when there is a place and room for it; `None` (counted
    /// skipped) when not. Never waits.
    pub fn copy(&self, payload: &[u8]) -> Option<Pending> {
        self.copy_many([payload]).pop().flatten()
    }

    /// Copies of `payloads` for the shadow, in order, handed to the worker together: one entry
    /// each, `None` (counted skipped) for each with no place or no room. Never waits.
    pub fn copy_many<'p>(
        &self,
        payloads: impl IntoIterator<Item = &'p [u8]>,
    ) -> Vec<Option<Pending>> {
        let mut copies = Vec::new();
        let pendings: Vec<Option<Pending>> = payloads
            .into_iter()
            .map(|payload| {
                let (copy, pending) = self.take(payload)?;
                copies.push(copy);
                Some(pending)
            })
            .collect();
        if copies.is_empty() {
            return pendings;
        }
        let taken = copies.len();
        if self.shared.copies.send(copies).is_err() {
            // The worker has stopped: the copies go nowhere.
            for _ in 0..taken {
                self.shared.tally.add(Outcome::ShadowSkipped);
            }
            return pendings.into_iter().map(|_| None).collect();
        }
        pendings
    }

    /// One copy of `payload`, holding its place and its bytes, and where its upstream answer
    /// goes; `None` (counted skipped) when there is no place or no room.
    fn take(&self, payload: &[u8]) -> Option<(Copy, Pending)> {
        let shared = &self.shared;
        let Ok(place) = Arc::clone(&shared.places).try_acquire_owned() else {
            shared.tally.add(Outcome::ShadowSkipped);
            return None;
        };
        let held = match shared.budget.get() {
            Some(budget) => match budget.try_hold(payload.len() + COPY_OVERHEAD) {
                Some(held) => Some(held),
                None => {
                    shared.tally.add(Outcome::ShadowSkipped);
                    return None;
                }
            },
            None => None,
        };
        let (upstream_tx, upstream_rx) = oneshot::channel();
        let (compared_tx, compared_rx) = oneshot::channel();
        // A copy of its own: the received bytes may share an allocation far larger than the
        // message, which the copy would keep alive uncounted.
        let copy = Copy {
            payload: Bytes::copy_from_slice(payload),
            upstream: upstream_rx,
            compared: compared_tx,
            _place: place,
            _held: held,
        };
        let pending = Pending {
            upstream: upstream_tx,
            compared: Some(compared_rx),
        };
        Some((copy, pending))
    }
}

impl Worker {
    /// Stop taking copies (those still queued are skipped), wait up to `drain` for the shadow's
    /// answers to those sent, then close the shadow link (what it never answered is
    /// unanswered).
    pub async fn finish(self, drain: Duration) {
        self.stop.cancel();
        let _ = self.task.await;
        self.tracker.close();
        if tokio::time::timeout(drain, self.tracker.wait())
            .await
            .is_err()
        {
            self.client.destroy().await;
            self.tracker.wait().await;
        }
        self.client.destroy().await;
    }
}

/// Copies taken from the queue for one hand-over to the shadow's link, at most.
const GATHER: usize = 1024;

/// Hand the copies to the shadow in order, all those waiting together, and start waiting for
/// their comparisons.
async fn hand_over(
    shared: Arc<Shared>,
    client: Arc<Client>,
    mut copies: mpsc::UnboundedReceiver<Vec<Copy>>,
    stop: CancellationToken,
    tracker: TaskTracker,
) {
    loop {
        let batch = tokio::select! {
            biased;
            _ = stop.cancelled() => break,
            batch = copies.recv() => batch,
        };
        let Some(mut batch) = batch else { break };
        // Copies queued meanwhile go with these: one command to the link, one write.
        while batch.len() < GATHER {
            match copies.try_recv() {
                Ok(more) => batch.extend(more),
                Err(_) => break,
            }
        }
        // A function, not a closure: the task's future must be `Send` for every borrow.
        let payloads = batch.iter().map(payload_of);
        let handles = client.send_many_cancellable(payloads, &stop).await;
        tracker.spawn(settle_all(Arc::clone(&shared), batch, handles));
    }
    // Stopping: what is still queued never went to the shadow.
    copies.close();
    while let Ok(batch) = copies.try_recv() {
        for copy in batch {
            shared.tally.add(Outcome::ShadowSkipped);
            let _ = copy.compared.send(Compared {
                outcome: Outcome::ShadowSkipped,
                ack: None,
            });
        }
    }
}

fn payload_of(copy: &Copy) -> Bytes {
    copy.payload.clone()
}

/// Compare the copies handed over together, in order, as each has both answers: one task for
/// the batch rather than one a copy.
async fn settle_all(shared: Arc<Shared>, copies: Vec<Copy>, handles: Vec<SendHandle>) {
    for (copy, handle) in copies.into_iter().zip(handles) {
        settle(&shared, copy, handle).await;
    }
}

/// Wait for both answers of one copy and compare them.
async fn settle(shared: &Shared, copy: Copy, handle: SendHandle) {
    let fate = handle.await;
    let shadow = final_answer(&fate);
    let (outcome, paths) = match (&fate, &shadow) {
        (_, Some(shadow)) => {
            let upstream = copy.upstream.await.ok().flatten();
            let paths = differences(upstream.as_deref(), Some(shadow), &shared.compare);
            match paths.is_empty() {
                true => (Outcome::Same, paths),
                false => (Outcome::Different, paths),
            }
        }
        (Fate::UnknownFate { .. } | Fate::CommittedOnly { .. }, None) => {
            (Outcome::ShadowUnanswered, Vec::new())
        }
        // Never written: refused, cancelled at the stop.
        _ => (Outcome::ShadowSkipped, Vec::new()),
    };
    shared.tally.add(outcome);
    if outcome == Outcome::Different {
        let message = Message::new(&copy.payload);
        let field = |path: &str| {
            let path: Path = path.parse().expect("a constant path");
            Bytes::copy_from_slice(message.get(&path).raw())
        };
        let _ = shared.events.send(MirrorEvent::Diff {
            control_id: field("MSH-10"),
            message_type: field("MSH-9"),
            paths,
        });
    }
    let _ = copy.compared.send(Compared {
        outcome,
        ack: shadow,
    });
}

/// Whether a connection to `a` reaches a listener on `b`, or the other way: the same port and
/// the same address, or one of them the wildcard (0.0.0.0, ::) and the other an address of this
/// machine (one it can bind).
pub fn same_listener(a: std::net::SocketAddr, b: std::net::SocketAddr) -> bool {
    let local = |ip: std::net::IpAddr| std::net::UdpSocket::bind((ip, 0)).is_ok();
    a.port() == b.port()
        && (a.ip() == b.ip()
            || (a.ip().is_unspecified() && local(b.ip()))
            || (b.ip().is_unspecified() && local(a.ip())))
}

/// The final answer a fate carries, if any.
fn final_answer(fate: &Fate) -> Option<Bytes> {
    match fate {
        Fate::Accepted { ack, .. } | Fate::Negative { ack, .. } => Some(ack.bytes().clone()),
        _ => None,
    }
}
