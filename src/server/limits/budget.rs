//! The one budget for every byte held for peers: partly received frames, complete frames
//! waiting for their commit and answer, and ACK bytes not yet written. Each connection owns one
//! account; growth is granted only within the overall budget and its peer address's share, so
//! at the budget a connection stops reading rather than buffering more.

use super::PeerUse;
use std::sync::atomic::{fence, AtomicUsize, Ordering};
use std::sync::Arc;
use tokio::sync::futures::Notified;
use tokio::sync::Notify;

/// Woken whenever held bytes are given back, so connections waiting for room try again; told
/// only while one waits, so giving bytes back costs no lock otherwise.
#[derive(Debug, Default)]
pub(crate) struct Released {
    notify: Notify,
    /// Connections waiting for room now.
    waiting: AtomicUsize,
}

/// A connection waiting for room: while it lives, every release is told.
pub(crate) struct Waiting<'a>(&'a Released);

impl Released {
    /// Start waiting for room: register with [`Released::notified`] and look again after.
    pub(crate) fn waiting(&self) -> Waiting<'_> {
        self.waiting.fetch_add(1, Ordering::SeqCst);
        // Paired with the fence in `tell`: either the releaser sees this waiter, or this
        // waiter's next look at the budget sees the bytes given back.
        fence(Ordering::SeqCst);
        Waiting(self)
    }

    pub(crate) fn notified(&self) -> Notified<'_> {
        self.notify.notified()
    }

    /// Bytes were given back: wake the connections waiting for room, if any.
    fn tell(&self) {
        fence(Ordering::SeqCst);
        if self.waiting.load(Ordering::Relaxed) > 0 {
            self.notify.notify_waiters();
        }
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.waiting.fetch_sub(1, Ordering::SeqCst);
    }
}

/// What a connection holds, by kind; all kinds count against the same budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Part {
    /// Bytes read but not yet a complete frame, and room reserved for the read under way.
    Partial = 0,
    /// Complete frames (with their bookkeeping) until their answers are written.
    Waiting = 1,
    /// ACK bytes not yet taken by the peer.
    Unsent = 2,
}

/// Bytes held by a set of connections (all of them, or one peer address's).
#[derive(Debug, Default)]
pub(crate) struct Pool {
    held: AtomicUsize,
    /// The part of `held` that frees itself: frames awaiting a commit, ACKs being written
    /// (bounded by the sink and the write timeout).
    draining: AtomicUsize,
}

impl Pool {
    pub(crate) fn held(&self) -> usize {
        self.held.load(Ordering::Relaxed)
    }

    fn add(&self, bytes: usize, draining: bool) {
        self.held.fetch_add(bytes, Ordering::Relaxed);
        if draining {
            self.draining.fetch_add(bytes, Ordering::Relaxed);
        }
    }

    fn sub(&self, bytes: usize, draining: bool) {
        self.held.fetch_sub(bytes, Ordering::Relaxed);
        if draining {
            self.draining.fetch_sub(bytes, Ordering::Relaxed);
        }
    }
}

/// What one connection holds of the budget; given back on drop.
#[derive(Debug)]
pub(crate) struct Buffered {
    total: Arc<Pool>,
    peer: Arc<PeerUse>,
    max_total: usize,
    max_peer: usize,
    released: Arc<Released>,
    parts: [usize; 3],
}

impl Buffered {
    pub(super) fn new(
        total: Arc<Pool>,
        peer: Arc<PeerUse>,
        max_total: usize,
        max_peer: usize,
        released: Arc<Released>,
    ) -> Buffered {
        Buffered {
            total,
            peer,
            max_total,
            max_peer,
            released,
            parts: [0; 3],
        }
    }

    /// Hold `bytes` of `part` from now on (more or less than before). `false`, holding what it
    /// held before, when more would pass the overall budget or the peer address's share.
    #[cfg(test)]
    pub(crate) fn hold(&mut self, part: Part, bytes: usize) -> bool {
        let held = self.parts[part as usize];
        if bytes <= held {
            self.set(part, bytes);
            return true;
        }
        let more = bytes - held;
        if self.grant(part, more) == more {
            return true;
        }
        self.set(part, held);
        false
    }

    /// Grow `part` by up to `more` bytes, as much as the budget has room for; how much was
    /// granted (0 at the budget).
    pub(crate) fn grant(&mut self, part: Part, more: usize) -> usize {
        let draining = part != Part::Partial;
        loop {
            let room = self
                .max_total
                .saturating_sub(self.total.held())
                .min(self.max_peer.saturating_sub(self.peer.buffered.held()));
            let more = more.min(room);
            if more == 0 {
                return 0;
            }
            self.total.add(more, draining);
            self.peer.buffered.add(more, draining);
            if self.total.held() <= self.max_total && self.peer.buffered.held() <= self.max_peer {
                self.parts[part as usize] += more;
                return more;
            }
            // Another connection took the same room at the same moment: give it back, retry.
            self.total.sub(more, draining);
            self.peer.buffered.sub(more, draining);
        }
    }

    /// Hold exactly `bytes` of `part`, within the budget or not: for bytes already in memory
    /// (a frame moving from partial to waiting, a batch's ACKs), which stopping reading bounds.
    pub(crate) fn set(&mut self, part: Part, bytes: usize) {
        let draining = part != Part::Partial;
        let held = self.parts[part as usize];
        if bytes == held {
            // Most batches set a part to what it holds already: no shared counter to touch.
            return;
        }
        if bytes > held {
            self.total.add(bytes - held, draining);
            self.peer.buffered.add(bytes - held, draining);
        } else {
            self.total.sub(held - bytes, draining);
            self.peer.buffered.sub(held - bytes, draining);
            self.released.tell();
        }
        self.parts[part as usize] = bytes;
    }

    /// Waiting for room can end: something held by another connection in either pool this
    /// account draws on frees itself. Otherwise the budget is all partial frames, and waiting
    /// could last until their deadline.
    pub(crate) fn room_will_come(&self) -> bool {
        let own = self.parts[Part::Waiting as usize] + self.parts[Part::Unsent as usize];
        let total = self.total.draining.load(Ordering::Relaxed);
        let peer = self.peer.buffered.draining.load(Ordering::Relaxed);
        total.max(peer) > own
    }

    /// The bytes of `part` held now.
    pub(crate) fn part(&self, part: Part) -> usize {
        self.parts[part as usize]
    }

    /// Woken when any connection gives bytes back.
    pub(crate) fn released(&self) -> Arc<Released> {
        Arc::clone(&self.released)
    }
}

impl Drop for Buffered {
    fn drop(&mut self) {
        for part in [Part::Partial, Part::Waiting, Part::Unsent] {
            self.set(part, 0);
        }
    }
}
