//! A connection's read buffer, and what it holds of the budget: not the bytes it has read but
//! the memory they live in. Every allocation is made here, of an exact size granted by the
//! budget first, and counted whole until it is freed: by the buffer while it reads into it, by
//! the batch of frames cut from it while they are served (the frames keep it alive). Growth is
//! never left to the allocator's doubling, so no byte is held that the budget did not grant.

use bytes::BytesMut;

/// A read is not worth making into less spare room than this: the buffer grows instead.
const MIN_READ: usize = 4096;

pub(super) struct ReadBuf {
    bytes: BytesMut,
    /// The size of the allocation `bytes` reads into, when this buffer made it; 0 while it holds
    /// nothing or a piece of the worker thread's scratch block (see `scratch`).
    alloc: usize,
    /// Where that allocation starts, to tell the frames cut from it.
    start: usize,
    /// Frames cut from that allocation are being served: their batch holds it in the budget.
    lent: bool,
}

/// What a read of up to some number of bytes needs first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Room {
    /// Read up to this many bytes into the room there is.
    Ready(usize),
    /// A new allocation, better of `best` bytes than of `least` (one more than there is room
    /// for now); failing that, `spare` bytes may be read into the room there is.
    Grow {
        least: usize,
        best: usize,
        spare: usize,
    },
}

impl Room {
    /// The bytes a read may take without growing the buffer.
    pub(super) fn ready(self) -> usize {
        match self {
            Room::Ready(n) => n,
            Room::Grow { spare, .. } => spare,
        }
    }
}

impl ReadBuf {
    pub(super) fn new() -> ReadBuf {
        ReadBuf {
            bytes: BytesMut::new(),
            alloc: 0,
            start: 0,
            lent: false,
        }
    }

    pub(super) fn bytes(&mut self) -> &mut BytesMut {
        &mut self.bytes
    }

    pub(super) fn len(&self) -> usize {
        self.bytes.len()
    }

    pub(super) fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Nothing buffered and no allocation of its own: a read may land in the scratch block.
    pub(super) fn is_unallocated(&self) -> bool {
        self.alloc == 0 && self.bytes.is_empty()
    }

    /// What the buffer holds of the budget itself: its allocation, unless a batch holds that;
    /// a scratch piece's bytes.
    pub(super) fn held(&self) -> usize {
        match (self.alloc, self.lent) {
            (0, _) => self.bytes.len(),
            (_, true) => 0,
            (alloc, false) => alloc,
        }
    }

    /// Let go of the allocation (nothing is buffered): an idle connection holds no memory.
    pub(super) fn free(&mut self) {
        debug_assert!(self.bytes.is_empty() && !self.lent);
        self.bytes = BytesMut::new();
        self.alloc = 0;
    }

    /// What a read of up to `want` bytes needs: the spare room of the allocation (reclaimed in
    /// place when nothing else holds it), or a new one.
    pub(super) fn room(&mut self, want: usize) -> Room {
        let mut spare = 0;
        if self.alloc > 0 {
            spare = self.bytes.capacity() - self.bytes.len();
            if spare >= want.min(MIN_READ) {
                return Room::Ready(spare.min(want));
            }
            // Moves what is buffered to the front when no frame still holds the allocation.
            if !self.lent && self.bytes.try_reclaim(want.min(MIN_READ)) {
                let spare = self.bytes.capacity() - self.bytes.len();
                return Room::Ready(spare.min(want));
            }
        }
        // A frame growing large grows its buffer by half again at least: copied a few times
        // in all, never once per read.
        let len = self.bytes.len();
        Room::Grow {
            least: len + spare + 1,
            best: len + want.max(len / 2),
            spare: spare.min(want),
        }
    }

    /// Move what is buffered into a new allocation of exactly `size` bytes (more than is
    /// buffered); the old one is freed unless frames still hold it.
    pub(super) fn grow(&mut self, size: usize) {
        debug_assert!(size > self.bytes.len());
        let mut fresh = BytesMut::with_capacity(size);
        fresh.extend_from_slice(&self.bytes);
        self.start = fresh.as_ptr() as usize;
        self.alloc = fresh.capacity();
        self.bytes = fresh;
        self.lent = false;
    }

    /// Frames were just cut from the buffer: what the batch they make holds of the budget for
    /// their bytes. The allocation they came from, whole, when this buffer made it (the buffer
    /// then holds none of it); else (a scratch piece) the bytes of each.
    pub(super) fn lend<'a>(&mut self, payloads: impl Iterator<Item = &'a [u8]>) -> usize {
        let (from, to) = (self.start, self.start + self.alloc);
        let mut held = 0;
        let mut within = false;
        for payload in payloads {
            let at = payload.as_ptr() as usize;
            if self.alloc > 0 && (from..to).contains(&at) {
                within = true;
            } else {
                held += payload.len();
            }
        }
        if within {
            self.lent = true;
            held += self.alloc;
        }
        held
    }

    /// The batch is served and its frames gone: the allocation, if still this buffer's, is the
    /// buffer's own again.
    pub(super) fn returned(&mut self) {
        self.lent = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_holds_the_allocation_whoever_keeps_it() {
        let mut buf = ReadBuf::new();
        let empty = Room::Grow {
            least: 1,
            best: 65536,
            spare: 0,
        };
        assert_eq!(buf.room(65536), empty);
        buf.grow(65536);
        assert_eq!(buf.held(), 65536, "an empty allocation is held whole");
        assert_eq!(buf.room(65536), Room::Ready(65536));
        buf.bytes().extend_from_slice(&[7u8; 50_000]);
        assert_eq!(buf.room(65536), Room::Ready(65536 - 50_000));
        let frame = buf.bytes().split_to(40_000).freeze();
        let lent = buf.lend([&frame[..]].into_iter());
        assert_eq!((lent, buf.held()), (65536, 0), "the batch holds all of it");
        // A frame holds the allocation: no reclaiming in place, a new one for what remains.
        buf.bytes().extend_from_slice(&[7u8; 15_000]);
        let Room::Grow { least, best, spare } = buf.room(65536) else {
            panic!("a frame still holds the allocation");
        };
        assert_eq!((least, best, spare), (25_537, 25_000 + 65536, 536));
        buf.grow(best);
        assert_eq!(buf.held(), best);
        assert_eq!(buf.len(), 25_000, "what was buffered moved");
        drop(frame);
        buf.returned();
        assert_eq!(buf.held(), best, "the new allocation was never lent");
    }

    #[test]
    fn a_returned_allocation_is_reused_in_place() {
        let mut buf = ReadBuf::new();
        buf.grow(8192);
        buf.bytes().extend_from_slice(&[1u8; 8000]);
        let frame = buf.bytes().split_to(7990).freeze();
        assert_eq!(buf.lend([&frame[..]].into_iter()), 8192);
        drop(frame);
        buf.returned();
        assert_eq!(buf.held(), 8192);
        let at = buf.bytes().as_ptr() as usize;
        assert_eq!(buf.room(65536), Room::Ready(8192 - 10));
        assert_ne!(buf.bytes().as_ptr() as usize, at, "moved to the front");
        assert_eq!(buf.held(), 8192, "the same allocation");
    }

    #[test]
    fn frames_of_a_scratch_piece_hold_their_own_bytes() {
        let mut buf = ReadBuf::new();
        buf.bytes().extend_from_slice(b"0123456789");
        assert_eq!(buf.held(), 10);
        let frame = buf.bytes().split_to(4).freeze();
        assert_eq!(buf.lend([&frame[..]].into_iter()), 4);
        assert_eq!(buf.held(), 6);
    }

    #[test]
    fn a_large_frame_grows_its_buffer_by_half_again() {
        let mut buf = ReadBuf::new();
        buf.grow(4 << 20);
        buf.bytes().resize(4 << 20, 0);
        assert_eq!(
            buf.room(65536),
            Room::Grow {
                least: (4 << 20) + 1,
                best: 6 << 20,
                spare: 0,
            }
        );
    }
}
