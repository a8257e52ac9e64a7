//! Where each message of a parallel run goes, and when. A message whose key has an earlier
//! message out (handed to a link and not yet settled) waits behind it, then goes to the link
//! holding the key; any other message goes at once to the least busy link still taking
//! messages, so a few busy keys do not load one link. At most one message per key is out, so a
//! reconnect, a resend or a slow ACK can never put a later message of a key on the wire before
//! an earlier one has its final fate, whichever link each one takes.

use super::super::gate::Gate;
use super::link::Pending;
use std::collections::VecDeque;

/// The routing of a parallel run: per link, what is routed to it and not yet handed over, and
/// how many handed over are not yet settled; per key, the link holding it and what waits.
pub(super) struct Routes {
    gate: Gate<Pending>,
    ready: Vec<VecDeque<Pending>>,
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
            ready: (0..links).map(|_| VecDeque::new()).collect(),
            out: vec![0; links],
            open: vec![true; links],
            next: 0,
        }
    }

    /// The link `key` would take now: the one holding it, else the least busy open one.
    pub(super) fn link_for(&mut self, key: Option<u64>) -> usize {
        match key.and_then(|k| self.gate.holder(k)) {
            Some(link) => link,
            None => self.least_busy(),
        }
    }

    /// A message read, its link set by [`Routes::link_for`]: ready for its link, or waiting
    /// behind its key.
    pub(super) fn route(&mut self, p: Pending) {
        let ready = match p.key {
            Some(key) => self.gate.admit(key, p.link, p),
            None => Some(p),
        };
        if let Some(p) = ready {
            self.ready[p.link].push_back(p);
        }
    }

    /// The open link with the fewest messages out and ready, the next in turn among equals;
    /// any link when none is open (what goes there then ends unsent).
    fn least_busy(&mut self) -> usize {
        let n = self.out.len();
        let load = |i: usize| self.out[i] + self.ready[i].len();
        let best = (0..n)
            .map(|k| (self.next + k) % n)
            .filter(|&i| self.open[i])
            .min_by_key(|&i| load(i))
            .unwrap_or(self.next % n);
        self.next = (best + 1) % n;
        best
    }

    /// Whether `link` may be handed another message.
    pub(super) fn has_room(&self, link: usize, most: usize) -> bool {
        self.out[link] < most
    }

    /// The next message ready for `link`, taken out: the caller hands it over (then
    /// [`Routes::handed`]) or ends it unsent (then [`Routes::released`] with its key).
    pub(super) fn pop_ready(&mut self, link: usize) -> Option<Pending> {
        self.ready[link].pop_front()
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
    /// next of that key, if one waits, is ready for the same link, or for the least busy one
    /// when that link takes no more.
    pub(super) fn released(&mut self, key: Option<u64>) {
        let Some(key) = key else { return };
        let Some(mut next) = self.gate.settle(key) else {
            return;
        };
        if !self.open[next.link] {
            next.link = self.least_busy();
            self.gate.hold(key, next.link);
        }
        self.ready[next.link].push_back(next);
    }

    /// `link` takes no more messages: what is ready for it goes to the least busy open link
    /// (its key free for it, it may go anywhere; with none open it stays, to end unsent).
    pub(super) fn close(&mut self, link: usize) {
        self.open[link] = false;
        let moved: Vec<Pending> = self.ready[link].drain(..).collect();
        for mut p in moved {
            p.link = self.least_busy();
            if let Some(key) = p.key {
                self.gate.hold(key, p.link);
            }
            self.ready[p.link].push_back(p);
        }
    }

    /// Every message ready or waiting, taken out, in input order. Those that waited for their
    /// key never held it: their key is cleared, so ending them releases nothing.
    pub(super) fn drain(&mut self) -> Vec<Pending> {
        let mut held: Vec<Pending> = self
            .gate
            .drain()
            .into_iter()
            .map(|p| Pending { key: None, ..p })
            .collect();
        for ready in &mut self.ready {
            held.extend(ready.drain(..));
        }
        held.sort_by_key(|p| p.seq);
        held
    }
}

#[cfg(test)]
mod tests;
