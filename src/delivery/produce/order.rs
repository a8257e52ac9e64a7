//! The messages the producer took, in the order they were taken, each awaiting its fate: the
//! producer polls the oldest while it waits for anything else (room, input, the rate), and
//! passes the fates on to the collector a run at a time (all that are settled before one must
//! wait), so results come out in input order. Kept with the producer, not in a task of
//! its own: at window 1 the ACK that settles a message also makes room for the next, and one
//! wake-up of one task does both.

use super::super::event::{Item, MessageOutcome, RunEvent, BATCH_EVENTS};
use super::super::inbox::{Note, Notes};
use crate::client::{Fate, SendHandle};
use std::collections::VecDeque;
use std::future::Future;
use std::pin::{pin, Pin};
use std::task::{Context, Poll};
use std::vec::Drain;

/// Messages taken whose fate is not yet passed on, at most (beyond the window): when the
/// oldest is slow this holds the producer back, which keeps memory bounded.
pub(super) const ORDER_QUEUE: usize = 1024;

/// Fates passed on in one note at most, so the collector is not kept waiting for a long run:
/// one batch of the run's events, so that a note's outcomes go out as they are.
const NOTE_MAX: usize = BATCH_EVENTS;

/// What one message taken waits on.
enum Wait {
    /// Handed to the client: its fate comes through the handle.
    Sent(SendHandle),
    /// Never handed over, its fate decided already.
    Decided(Fate),
}

/// The messages taken and not yet passed on, oldest first: each item beside what it waits on,
/// in two queues, so an item is moved in once, in a run with its batch, and out once, into
/// its outcome.
pub(super) struct Order {
    notes: Notes,
    items: VecDeque<Item>,
    /// `waits[i]` is what `items[i]` waits on.
    waits: VecDeque<Wait>,
    /// Outcomes taken off the front and not yet sent on, built where they are handed out: the
    /// collector decides each one's cause in place, and hands the batch on as it is.
    done: Vec<RunEvent>,
}

impl Order {
    pub(crate) fn new(notes: Notes) -> Order {
        Order {
            notes,
            items: VecDeque::new(),
            waits: VecDeque::new(),
            done: Vec::new(),
        }
    }

    /// Messages handed to the client, each with its handle, in order.
    pub(crate) fn sent(&mut self, items: Drain<'_, Item>, handles: Drain<'_, SendHandle>) {
        debug_assert_eq!(items.len(), handles.len());
        // One push each, not an extend: at window 1 the batch is a single message.
        for (item, handle) in items.zip(handles) {
            self.items.push_back(item);
            self.waits.push_back(Wait::Sent(handle));
        }
    }

    /// A message never handed over, with its fate.
    pub(crate) fn decided(&mut self, item: Item, fate: Fate) {
        self.items.push_back(item);
        self.waits.push_back(Wait::Decided(fate));
    }

    /// Whether `n` more fit before the oldest must be passed on.
    pub(crate) fn has_room(&self, n: usize) -> bool {
        self.items.is_empty() || self.items.len() + n <= ORDER_QUEUE
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Pass on every fate at the front that is settled; the oldest unsettled one wakes this
    /// task when it settles. `true` when any was passed on.
    pub(crate) fn poll_settled(&mut self, cx: &mut Context<'_>) -> bool {
        let mut passed = false;
        loop {
            let (fate, writes) = match self.waits.front_mut() {
                None => break,
                Some(Wait::Sent(handle)) => match Pin::new(&mut *handle).poll(cx) {
                    Poll::Ready(fate) => {
                        let writes = handle.writes();
                        self.waits.pop_front();
                        (fate, Some(writes))
                    }
                    Poll::Pending => break,
                },
                Some(Wait::Decided(_)) => match self.waits.pop_front() {
                    Some(Wait::Decided(fate)) => (fate, None),
                    _ => break,
                },
            };
            let Some(mut item) = self.items.pop_front() else {
                break;
            };
            if let Some(writes) = writes {
                item.writes = writes;
            }
            self.done.push(RunEvent::Outcome(MessageOutcome {
                item,
                fate,
                cause: None,
            }));
            passed = true;
            if self.done.len() >= NOTE_MAX {
                self.flush();
            }
        }
        self.flush();
        passed
    }

    fn flush(&mut self) {
        let note = match self.done.len() {
            0 => return,
            // One fate (each one at window 1): the buffer is kept, nothing allocated for it.
            1 => match self.done.pop() {
                Some(outcome) => Note::One(outcome),
                None => return,
            },
            n => Note::Settled(std::mem::replace(&mut self.done, Vec::with_capacity(n))),
        };
        self.notes.send(note);
    }

    /// Await `wait`, passing fates on as they settle meanwhile.
    pub(crate) async fn meanwhile<F: Future>(&mut self, wait: F) -> F::Output {
        let mut wait = pin!(wait);
        std::future::poll_fn(|cx| {
            self.poll_settled(cx);
            wait.as_mut().poll(cx)
        })
        .await
    }

    /// Ready once at least one fate was passed on (never while the order is empty).
    pub(crate) async fn advance(&mut self) {
        std::future::poll_fn(|cx| {
            if self.poll_settled(cx) {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        })
        .await
    }

    /// Wait until `n` more fit.
    pub(crate) async fn room_for(&mut self, n: usize) {
        while !self.has_room(n) {
            self.advance().await;
        }
    }
}
