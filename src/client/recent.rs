//! A bounded memory of recent control IDs: late ACKs and repeated ACKs are told apart with it.

use bytes::Bytes;
use std::collections::{HashMap, VecDeque};

/// Control IDs mapped with FxHash, for the actor's maps (looked up per ACK under control-ID
/// correlation): the keys are the application's own control IDs (a peer's ACK only looks one
/// up), where SipHash cost more than the rest of a lookup.
pub(crate) type CidMap<V> = HashMap<Bytes, V, rustc_hash::FxBuildHasher>;

/// A bounded memory of recent control IDs, the oldest forgotten first. FIFO correlation
/// remembers every credited ID but looks one up only when an ACK does not match its send, so
/// the lookup index is built on the first lookup and kept from then on: with a peer that answers
/// in order, remembering is a push onto a ring.
#[derive(Debug, Default)]
pub(crate) struct RecentIds {
    order: VecDeque<Bytes>,
    /// How many times each ID is in `order`; `None` until the first lookup.
    index: Option<CidMap<u32>>,
}

impl RecentIds {
    const CAPACITY: usize = 4096;
    pub(crate) fn insert(&mut self, id: Bytes) {
        if let Some(index) = &mut self.index {
            *index.entry(id.clone()).or_default() += 1;
        }
        self.order.push_back(id);
        if self.order.len() > Self::CAPACITY {
            if let Some(old) = self.order.pop_front() {
                self.forget(&old);
            }
        }
    }
    fn forget(&mut self, old: &Bytes) {
        let Some(index) = &mut self.index else {
            return;
        };
        if let Some(n) = index.get_mut(old) {
            *n -= 1;
            if *n == 0 {
                index.remove(old);
            }
        }
    }
    pub(crate) fn contains(&mut self, id: &[u8]) -> bool {
        let order = &self.order;
        let index = self.index.get_or_insert_with(|| {
            let mut index = CidMap::default();
            for old in order {
                *index.entry(old.clone()).or_default() += 1;
            }
            index
        });
        index.contains_key(id)
    }
}

#[cfg(test)]
#[test]
fn remembers_the_last_capacity_ids() {
    let mut recent = RecentIds::default();
    let id = |i: usize| Bytes::from(format!("{i:010}"));
    recent.insert(id(0));
    recent.insert(id(0));
    assert!(recent.contains(b"0000000000"));
    for i in 1..RecentIds::CAPACITY {
        recent.insert(id(i));
    }
    // One copy of id 0 is forgotten, the other is still within the last CAPACITY.
    assert!(recent.contains(b"0000000000"));
    recent.insert(id(RecentIds::CAPACITY));
    assert!(!recent.contains(b"0000000000"));
    assert!(recent.contains(&id(1)));
    let mut lazy = RecentIds::default();
    for i in 0..=RecentIds::CAPACITY {
        lazy.insert(id(i));
    }
    assert!(!lazy.contains(&id(0)), "built after eviction");
    assert!(lazy.contains(&id(RecentIds::CAPACITY)));
}
