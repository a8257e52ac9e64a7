//! Where each message of a parallel run goes, and when. A message whose key has an earlier
//! message out (handed to a link and not yet settled) waits behind it; any other is free, and
//! goes to a link only when one has room, the least busy first, the earliest read first. A
//! message whose key was just released is thus not stuck behind what its old link was given
//! meanwhile, and while messages wait on their keys each link runs only [`KEYED_AHEAD`] ahead,
//! so a patient's next message finds a short queue. At most one message per key is out, so a
//! reconnect, a resend or a slow ACK can never put a later message of a key on the wire before
//! an earlier one has its final fate, whichever link each one takes.

use super::super::gate::Gate;
use super::link::Pending;
use std::collections::{BTreeMap, VecDeque};

/// Messages out on one link, at most, while others wait on their keys: one at the engine and
/// one on its way, so the link never idles for want of work, and a patient's next message,
/// released when the previous one settles, waits behind one other at most.
pub(super) const KEYED_AHEAD: usize = 2;

/// The routing of a parallel run: the free messages not yet handed over, how many handed to
/// each link are not yet settled, and per key the message out and what waits behind it.
pub(super) struct Routes {
    gate: Gate<Pending>,
    /// Free messages as read (their seq rising), and those freed when their key was released
    /// (earlier ones, by seq): the earliest of both goes first.
    fresh: VecDeque<Pending>,
    freed: BTreeMap<u64, Pending>,
    /// Messages waiting on their key.
    waiting: usize,
    out: Vec<usize>,
    /// Whether each link still takes messages.
    open: Vec<bool>,
    /// Where the search for the least busy link starts: equals take turns.
    next: usize,
}

impl Routes {
    pub(super) fn new(links: usize) -> Routes {
        Routes {
            gate: Gate::default(),
            fresh: VecDeque::new(),
            freed: BTreeMap::new(),
            waiting: 0,
            out: vec![0; links],
            open: vec![true; links],
            next: 0,
        }
    }

    /// The link `key` would take now, to count a message that ends before it is handed over:
    /// the one holding it, else the least busy open one.
    pub(super) fn link_for(&mut self, key: Option<u64>) -> usize {
        match key.and_then(|k| self.gate.holder(k)) {
            Some(link) => link,
            None => self.least_busy(usize::MAX).unwrap_or(self.next),
        }
    }

    /// A message read: free, or waiting behind its key.
    pub(super) fn route(&mut self, p: Pending) {
        let free = match p.key {
            Some(key) => self.gate.admit(key, p.link, p),
            None => Some(p),
        };
        match free {
            Some(p) => self.fresh.push_back(p),
            None => self.waiting += 1,
        }
    }

    /// The open link with the fewest messages out, below `most`, the next in turn among
    /// equals; `None` when none is open or none has room.
    fn least_busy(&mut self, most: usize) -> Option<usize> {
        let n = self.out.len();
        let best = (0..n)
            .map(|k| (self.next + k) % n)
            .filter(|&i| self.open[i] && self.out[i] < most)
            .min_by_key(|&i| self.out[i])?;
        self.next = (best + 1) % n;
        Some(best)
    }

    /// The next free message to hand over, taken out with its link set: the earliest read, to
    /// the least busy open link with fewer than `most` out (fewer than [`KEYED_AHEAD`] while
    /// messages wait on their keys). The caller hands it over (then [`Routes::handed`]) or,
    /// when its link takes no more, ends it unsent (then [`Routes::released`] with its key).
    /// With no link open, every free message comes out, to end unsent.
    pub(super) fn next_out(&mut self, most: usize) -> Option<Pending> {
        let earliest_freed = self.freed.first_key_value().map(|(&seq, _)| seq);
        let from_freed = match (self.fresh.front(), earliest_freed) {
            (_, None) => false,
            (None, Some(_)) => true,
            (Some(p), Some(seq)) => seq < p.seq,
        };
        if self.fresh.is_empty() && !from_freed {
            return None;
        }
        let most = match self.waiting {
            0 => most,
            _ => most.min(KEYED_AHEAD),
        };
        let link = match self.least_busy(most) {
            Some(link) => link,
            None if self.open.iter().any(|&o| o) => return None,
            None => self.next,
        };
        let mut p = match from_freed {
            true => self.freed.pop_first().map(|(_, p)| p),
            false => self.fresh.pop_front(),
        }?;
        p.link = link;
        if let Some(key) = p.key {
            self.gate.hold(key, link);
        }
        Some(p)
    }

    /// A message was handed to `link`.
    pub(super) fn handed(&mut self, link: usize) {
        self.out[link] += 1;
    }

    /// `n` messages handed to `link` are settled (or will never be, its run having ended).
    pub(super) fn returned(&mut self, link: usize, n: usize) {
        self.out[link] -= n;
    }

    /// The message of `key` that held it is settled, whether it was out or ended unsent: the
    /// next of that key, if one waits, is free, for whichever link has room first.
    pub(super) fn released(&mut self, key: Option<u64>) {
        let Some(key) = key else { return };
        if let Some(next) = self.gate.settle(key) {
            self.waiting -= 1;
            self.freed.insert(next.seq, next);
        }
    }

    /// `link` takes no more messages.
    pub(super) fn close(&mut self, link: usize) {
        self.open[link] = false;
    }

    /// Every message free or waiting, taken out, in input order. Those that waited for their
    /// key never held it: their key is cleared, so ending them releases nothing.
    pub(super) fn drain(&mut self) -> Vec<Pending> {
        let mut held: Vec<Pending> = self
            .gate
            .drain()
            .into_iter()
            .map(|p| Pending { key: None, ..p })
            .collect();
        self.waiting = 0;
        held.extend(self.fresh.drain(..));
        held.extend(std::mem::take(&mut self.freed).into_values());
        held.sort_by_key(|p| p.seq);
        held
    }
}

#[cfg(test)]
mod tests;
