//! The order gate of a keyed parallel run: at most one message per key is out (handed to its
//! link and not yet settled); the next of the same key waits, in input order, until it settles.
//! A reconnect, a resend or a slow ACK can then never put a later message of a key on the wire
//! before an earlier one has its final fate. The gate remembers which link holds each key, so
//! the messages waiting behind it go to that link.

use std::collections::{HashMap, VecDeque};

/// The keys are hashes already: FxHash's multiply mixes them, where SipHash cost more than the
/// rest of the gate's work per message.
type Mix = rustc_hash::FxBuildHasher;

/// Messages waiting for their key, and the keys that have one out with the link holding each.
/// Keys are hashes: two values that collide only wait for each other, which keeps order all
/// the same.
#[derive(Debug)]
pub(super) struct Gate<T> {
    out: HashMap<u64, usize, Mix>,
    waiting: HashMap<u64, VecDeque<T>, Mix>,
    held: usize,
}

impl<T> Default for Gate<T> {
    fn default() -> Self {
        Gate {
            out: HashMap::default(),
            waiting: HashMap::default(),
            held: 0,
        }
    }
}

impl<T> Gate<T> {
    /// The link holding `key`: the one its message out went to.
    pub(crate) fn holder(&self, key: u64) -> Option<usize> {
        self.out.get(&key).copied()
    }

    /// `key`, held, is now held by `link` (its message out moved there before it went out).
    pub(crate) fn hold(&mut self, key: u64, link: usize) {
        if let Some(holder) = self.out.get_mut(&key) {
            *holder = link;
        }
    }

    /// A message of `key` arrives for `link`: it may go now (returned), or it waits behind its
    /// key (which a link holds already: give `link` as [`Gate::holder`] says).
    pub(crate) fn admit(&mut self, key: u64, link: usize, item: T) -> Option<T> {
        if let std::collections::hash_map::Entry::Vacant(free) = self.out.entry(key) {
            free.insert(link);
            return Some(item);
        }
        self.waiting.entry(key).or_default().push_back(item);
        self.held += 1;
        None
    }

    /// The message of `key` that was out settled: the next of that key may go (returned).
    pub(crate) fn settle(&mut self, key: u64) -> Option<T> {
        let Some(queue) = self.waiting.get_mut(&key) else {
            self.out.remove(&key);
            return None;
        };
        let next = queue.pop_front();
        if queue.is_empty() {
            self.waiting.remove(&key);
        }
        self.held -= usize::from(next.is_some());
        next
    }

    /// Messages waiting.
    #[cfg(test)]
    pub(crate) fn held(&self) -> usize {
        self.held
    }

    /// Every message waiting, taken out (the run is ending: they get their fate unsent).
    pub(crate) fn drain(&mut self) -> Vec<T> {
        self.held = 0;
        self.waiting.drain().flat_map(|(_, q)| q).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[derive(Debug, Clone)]
    enum Op {
        /// A message of key k arrives.
        Arrive(u8),
        /// The i-th (mod count) message out settles.
        Settle(usize),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (0u8..4).prop_map(Op::Arrive),
            any::<usize>().prop_map(Op::Settle)
        ]
    }

    proptest! {
        /// Against the rule itself: a message goes out only once every earlier message of its
        /// key has settled, messages of a key go out in arrival order, one whose key has
        /// nothing out goes at once, and once everything settles nothing is left waiting.
        #[test]
        fn one_out_per_key_in_arrival_order(ops in proptest::collection::vec(op(), 0..200)) {
            let mut gate = Gate::default();
            // The model: every message by arrival number, its key, whether out, whether settled.
            let mut keys: Vec<u8> = Vec::new();
            let mut released: Vec<bool> = Vec::new();
            let mut settled: Vec<bool> = Vec::new();
            let mut out: Vec<usize> = Vec::new();
            let release = |n: usize, keys: &[u8], released: &mut Vec<bool>, settled: &[bool]| {
                // Every earlier message of its key settled, and it was not out before.
                prop_assert!(!released[n]);
                for e in 0..n {
                    if keys[e] == keys[n] {
                        prop_assert!(settled[e], "message {n} out before {e} settled");
                    }
                }
                released[n] = true;
                Ok(())
            };
            for op in ops {
                match op {
                    Op::Arrive(k) => {
                        let n = keys.len();
                        keys.push(k);
                        released.push(false);
                        settled.push(false);
                        let free = (0..n).all(|e| keys[e] != k || settled[e]);
                        match gate.admit(u64::from(k), 0, n) {
                            Some(m) => {
                                prop_assert_eq!(m, n);
                                release(n, &keys, &mut released, &settled)?;
                                out.push(n);
                            }
                            None => prop_assert!(!free, "message {} held with its key free", n),
                        }
                    }
                    Op::Settle(i) if !out.is_empty() => {
                        let m = out.remove(i % out.len());
                        settled[m] = true;
                        if let Some(next) = gate.settle(u64::from(keys[m])) {
                            prop_assert_eq!(keys[next], keys[m]);
                            // The earliest waiting message of that key.
                            let first = (0..keys.len())
                                .find(|&e| keys[e] == keys[m] && !released[e]);
                            prop_assert_eq!(Some(next), first);
                            release(next, &keys, &mut released, &settled)?;
                            out.push(next);
                        }
                    }
                    Op::Settle(_) => {}
                }
                let waiting = released.iter().filter(|r| !**r).count();
                prop_assert_eq!(gate.held(), waiting);
            }
            // Settle everything: every message goes out in the end.
            while let Some(m) = out.pop() {
                settled[m] = true;
                if let Some(next) = gate.settle(u64::from(keys[m])) {
                    release(next, &keys, &mut released, &settled)?;
                    out.push(next);
                }
            }
            prop_assert!(released.iter().all(|r| *r));
            prop_assert_eq!(gate.held(), 0);
            prop_assert!(gate.out.is_empty());
        }
    }
}
