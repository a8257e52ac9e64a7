//! What the producer tells the collector, kept where the collector takes it: the outcomes it
//! passed on, in input order, the count of messages read, and the end of the input.

use super::event::RunEvent;
use crate::client::{Client, State};
use crate::input::InputError;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// What the producer tells the collector.
pub(super) enum Note {
    /// Outcomes, in input order, a run of them at a time (a batch at most): not yet counted,
    /// their causes not yet decided. The collector does both in place and hands the Vec on.
    Settled(Vec<RunEvent>),
    /// One outcome, when it is the only one settled (each one at window 1): no Vec for it.
    One(RunEvent),
    InputEnd(Option<InputError>),
}

/// What the producer tells the collector, kept where the collector takes it after polling the
/// producer: both run in one task, so a note is a push, not a channel hop and a wake-up.
#[derive(Default)]
struct Inbox {
    notes: Mutex<VecDeque<Note>>,
    /// Messages read so far (each is settled later): bumped per batch before any of them can
    /// settle, so it counts every message a note in `notes` settles. An atomic, not under the
    /// lock: at window 1 a batch is one message, and this is one lock a message fewer.
    read: AtomicU64,
}

/// The producer's end of the inbox (and the collector's).
#[derive(Clone, Default)]
pub(super) struct Notes(Arc<Inbox>);

impl Notes {
    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<Note>> {
        // Nothing panics while holding the lock; a poisoned one holds whole notes.
        self.0.notes.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn send(&self, note: Note) {
        self.lock().push_back(note);
    }

    /// `n` more messages were read (each is settled later).
    pub(crate) fn read(&self, n: u64) {
        self.0.read.fetch_add(n, Ordering::Release);
    }

    /// Up to `most` notes into `into` (empty), in order; the count of messages read, which
    /// counts every one they settle. The queues trade places when all of them go: no note is
    /// moved to be taken.
    pub(crate) fn take(&self, most: usize, into: &mut VecDeque<Note>) -> u64 {
        let mut notes = self.lock();
        if notes.len() <= most {
            std::mem::swap(&mut *notes, into);
        } else {
            into.extend(notes.drain(..most));
        }
        // Read under the lock, after the notes: the count made before each of them was sent.
        self.0.read.load(Ordering::Acquire)
    }
}

/// Whether the client is gone for good (it gave up, or was closed).
pub(super) fn client_closed(client: &Client) -> bool {
    matches!(client.state(), State::Closed | State::Disconnected)
}
