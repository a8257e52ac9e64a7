//! The sends waiting to be written, in order, with the bytes of their payloads kept as they
//! come and go: the stats publish the sum every turn of the link loop, and summing it there
//! cost a table lookup per queued send (with the pipeline off, the whole window waits here).

use super::Sends;
use std::collections::VecDeque;

/// Ids of sends to write, in order, each with its payload's length when it was queued.
#[derive(Debug, Default)]
pub(super) struct Queue {
    entries: VecDeque<(u64, usize)>,
    bytes: usize,
}

impl Queue {
    /// `ids` in that order, their lengths read from `sends` (an id no longer there counts none).
    pub(crate) fn of(ids: impl IntoIterator<Item = u64>, sends: &Sends) -> Queue {
        let mut queue = Queue::default();
        for id in ids {
            queue.push_back(id, sends.get(&id).map_or(0, |p| p.payload.len()));
        }
        queue
    }

    pub(crate) fn push_back(&mut self, id: u64, len: usize) {
        self.entries.push_back((id, len));
        self.bytes += len;
    }

    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Payload bytes queued.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    pub(crate) fn front(&self) -> Option<u64> {
        self.entries.front().map(|&(id, _)| id)
    }

    pub(crate) fn ids(&self) -> impl Iterator<Item = u64> + '_ {
        self.entries.iter().map(|&(id, _)| id)
    }

    /// Take the first `n` ids off.
    pub(crate) fn drop_front(&mut self, n: usize) {
        for (_, len) in self.entries.drain(..n) {
            self.bytes -= len;
        }
    }

    pub(crate) fn remove(&mut self, id: u64) {
        let bytes = &mut self.bytes;
        self.entries.retain(|&(q, len)| {
            let keep = q != id;
            if !keep {
                *bytes -= len;
            }
            keep
        });
    }

    /// Every id, in order, leaving the queue empty.
    pub(crate) fn take_all(&mut self) -> Vec<u64> {
        self.bytes = 0;
        self.entries.drain(..).map(|(id, _)| id).collect()
    }

    pub(crate) fn clear(&mut self) {
        self.entries.clear();
        self.bytes = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bytes_follow_what_comes_and_goes() {
        let mut q = Queue::default();
        q.push_back(1, 10);
        q.push_back(2, 20);
        q.push_back(3, 30);
        assert_eq!((q.len(), q.bytes()), (3, 60));
        q.remove(2);
        assert_eq!((q.ids().collect::<Vec<_>>(), q.bytes()), (vec![1, 3], 40));
        q.drop_front(1);
        assert_eq!((q.front(), q.bytes()), (Some(3), 30));
        q.push_back(4, 5);
        assert_eq!(
            (q.take_all(), q.bytes(), q.is_empty()),
            (vec![3, 4], 0, true)
        );
        q.push_back(5, 7);
        q.clear();
        assert_eq!((q.len(), q.bytes()), (0, 0));
    }
}
