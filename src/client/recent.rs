//! A bounded memory of recent control IDs: late ACKs and repeated ACKs are told apart with it.

use bytes::Bytes;
use std::collections::{HashSet, VecDeque};

/// A bounded set of recent control IDs, the oldest forgotten first.
#[derive(Debug, Default)]
pub(crate) struct RecentIds {
    order: VecDeque<Bytes>,
    set: HashSet<Bytes>,
}

impl RecentIds {
    const CAPACITY: usize = 4096;
    pub fn insert(&mut self, id: Bytes) {
        if self.set.insert(id.clone()) {
            self.order.push_back(id);
            if self.order.len() > Self::CAPACITY {
                if let Some(old) = self.order.pop_front() {
                    self.set.remove(&old);
                }
            }
        }
    }
    pub fn contains(&self, id: &[u8]) -> bool {
        self.set.contains(id)
    }
    pub fn clear(&mut self) {
        self.order.clear();
        self.set.clear();
    }
}
