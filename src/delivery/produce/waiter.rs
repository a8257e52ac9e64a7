//! The waiter: takes the producer's batches in the order they were handed over, awaits each
//! message's fate in that order, and passes the fates on to the collector a run at a time (all
//! that are settled before it must wait), so results come out in input order with one note,
//! not one channel hop and wake-up, per run of fates.

use super::super::collect::Note;
use super::super::event::Item;
use crate::client::{Fate, SendHandle};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;
use tokio::sync::{mpsc, Semaphore};

/// Messages handed to the client whose fate is not yet passed on, at most (beyond the
/// window): the producer takes room here per batch, the waiter gives it back per note. When
/// the oldest message is slow this holds the producer back, which keeps memory bounded.
pub(super) const ORDER_QUEUE: usize = 1024;

/// Fates passed on in one note at most, so the collector is not kept waiting for a long run.
const NOTE_MAX: usize = 256;

/// Messages in the order they were handed over, with their fates to come.
pub(super) enum Batch {
    /// Handed to the client: one handle per item, in order.
    Sent(Vec<Item>, Vec<SendHandle>),
    /// One handed to the client (each one at window 1): no Vecs made for it.
    One(Item, SendHandle),
    /// Never handed over, all with this fate.
    Unsent(Vec<Item>, Fate),
}

impl Batch {
    fn len(&self) -> usize {
        match self {
            Batch::Sent(items, _) | Batch::Unsent(items, _) => items.len(),
            Batch::One(..) => 1,
        }
    }

    /// The messages handed to the client, each with its handle, in order.
    pub fn into_handed_over(self) -> Vec<(Item, SendHandle)> {
        match self {
            Batch::Sent(items, handles) => items.into_iter().zip(handles).collect(),
            Batch::One(item, handle) => vec![(item, handle)],
            Batch::Unsent(..) => Vec::new(),
        }
    }
}

/// The producer's end: batches go to the waiter in order, each once it has room.
pub(super) struct Order {
    batches: mpsc::UnboundedSender<Batch>,
    room: Arc<Semaphore>,
}

impl Order {
    /// Hand `batch` to the waiter, waiting for room for its messages; `Err` gives it back when
    /// the waiter is gone (the run is over).
    pub async fn send(&self, batch: Batch) -> Result<(), Batch> {
        let n = u32::try_from(batch.len()).unwrap_or(u32::MAX);
        // Room as it comes (straight away, the usual case), given back by the waiter per note.
        match self.room.try_acquire_many(n) {
            Ok(permit) => permit.forget(),
            Err(_) => match self.room.acquire_many(n).await {
                Ok(permit) => permit.forget(),
                Err(_) => return Err(batch),
            },
        }
        self.batches.send(batch).map_err(|e| e.0)
    }
}

/// Start the waiter; its fates go to `notes`.
pub(super) fn spawn_waiter(notes: mpsc::UnboundedSender<Note>) -> Order {
    let (batches, mut rx) = mpsc::unbounded_channel::<Batch>();
    let room = Arc::new(Semaphore::new(ORDER_QUEUE));
    let order = Order {
        batches,
        room: room.clone(),
    };
    tokio::spawn(async move {
        let mut run = Run {
            notes,
            room,
            done: Vec::new(),
        };
        while let Some(batch) = rx.recv().await {
            match batch {
                Batch::Unsent(items, fate) => {
                    for item in items {
                        run.push(item, fate.clone());
                    }
                }
                Batch::Sent(items, handles) => {
                    for (item, handle) in items.into_iter().zip(handles) {
                        run.settled(item, handle).await;
                    }
                }
                Batch::One(item, handle) => run.settled(item, handle).await,
            }
            if rx.is_empty() {
                run.flush();
            }
        }
        run.flush();
    });
    order
}

/// The fates settled and not yet passed on, in order.
struct Run {
    notes: mpsc::UnboundedSender<Note>,
    room: Arc<Semaphore>,
    done: Vec<(Item, Fate)>,
}

impl Run {
    /// Await a handed-over message's fate (passing on what is settled before waiting).
    async fn settled(&mut self, mut item: Item, mut handle: SendHandle) {
        let fate = match now(&mut handle).await {
            Some(fate) => fate,
            None => {
                self.flush();
                (&mut handle).await
            }
        };
        item.writes = handle.writes();
        self.push(item, fate);
    }

    fn push(&mut self, item: Item, fate: Fate) {
        self.done.push((item, fate));
        if self.done.len() >= NOTE_MAX {
            self.flush();
        }
    }

    fn flush(&mut self) {
        if self.done.is_empty() {
            return;
        }
        let n = self.done.len();
        let done = std::mem::replace(&mut self.done, Vec::with_capacity(n));
        let _ = self.notes.send(Note::Settled(done));
        self.room.add_permits(n);
    }
}

/// The handle's fate if it is settled already; `None` when it would wait.
async fn now(handle: &mut SendHandle) -> Option<Fate> {
    std::future::poll_fn(|cx| match Pin::new(&mut *handle).poll(cx) {
        Poll::Ready(fate) => Poll::Ready(Some(fate)),
        Poll::Pending => Poll::Ready(None),
    })
    .await
}
