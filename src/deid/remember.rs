//! Replacements remembered by a session: one growing buffer of originals and replacements and
//! an open-addressed table of where each lies, so remembering one costs no allocation of its
//! own and forgetting them all costs none either.

use super::pass::differ;

/// Probes a lookup makes before it gives up: a value missed is only derived again, so inputs
/// made to collide cost a bounded search, never one that grows with the table.
const PROBES: usize = 16;

/// At most `most` replacements, then all forgotten at once; originals longer than the caller
/// allows are never offered.
pub(super) struct Remembered {
    most: usize,
    len: usize,
    /// For each slot, where its entry starts in `bytes` plus one (0: none) in the low half and
    /// the top of its original's hash in the high half: a slot of another original is passed
    /// over without reading its entry, and a hit reads the slot and then one entry's bytes,
    /// side by side. Twice `most`, a power of two.
    slots: Vec<u64>,
    /// Each entry: its original's length and its replacement's (a byte each), the head, the
    /// original, the replacement.
    bytes: Vec<u8>,
}

/// What a replacement depends on besides its original: the method and the date offset.
pub(super) type Head = [u8; 3];

/// An original's hash, computed once for the lookup and the insert that follows a miss.
#[derive(Clone, Copy)]
pub(super) struct Hashed(u64);

impl Hashed {
    pub(super) fn of(head: Head, original: &[u8]) -> Hashed {
        Hashed(hash(head, original))
    }

    fn tag(self) -> u64 {
        self.0 >> 32
    }
}

impl Remembered {
    /// At most `most` remembered, and never more than a slot can number.
    pub(super) fn new(most: usize) -> Remembered {
        Remembered {
            most: most.min(usize::from(u16::MAX)),
            len: 0,
            slots: Vec::new(),
            bytes: Vec::new(),
        }
    }

    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// The replacement remembered for `original`.
    #[cfg(test)]
    pub(super) fn get(&self, original: &[u8]) -> Option<&[u8]> {
        self.find(Hashed::of([0; 3], original), [0; 3], original)
    }

    /// The replacement remembered for `head` and `original`, whose hash is `hashed`.
    #[inline]
    pub(super) fn find(&self, hashed: Hashed, head: Head, original: &[u8]) -> Option<&[u8]> {
        if self.len == 0 {
            return None;
        }
        let mask = self.slots.len() - 1;
        let mut at = hashed.0 as usize & mask;
        for _ in 0..PROBES {
            let slot = self.slots[at];
            if slot == 0 {
                return None;
            }
            if slot >> 32 == hashed.tag() {
                let start = (slot as u32) as usize - 1;
                let (o, r) = (self.bytes[start] as usize, self.bytes[start + 1] as usize);
                let entry = &self.bytes[start + 2..start + 5 + o + r];
                if o == original.len() && entry[..3] == head && !differ(&entry[3..3 + o], original)
                {
                    return Some(&entry[3 + o..]);
                }
            }
            at = (at + 1) & mask;
        }
        None
    }

    /// Remember `replacement` for `head` and `original` (not remembered yet; `hashed` their
    /// hash). Either longer than a byte can count is not remembered.
    pub(super) fn insert(
        &mut self,
        hashed: Hashed,
        head: Head,
        original: &[u8],
        replacement: &[u8],
    ) {
        let (Ok(o), Ok(r)) = (
            u8::try_from(original.len()),
            u8::try_from(replacement.len()),
        ) else {
            return;
        };
        if self.most == 0 {
            return;
        }
        // Each entry's bytes are bounded by a byte's count twice: the buffer's bound is
        // checked too, so no input grows it without end.
        let full = self.len >= self.most || self.bytes.len() >= self.most * 256;
        if full || self.slots.is_empty() {
            self.clear();
        }
        let mask = self.slots.len() - 1;
        let mut at = hashed.0 as usize & mask;
        for _ in 0..PROBES {
            if self.slots[at] == 0 {
                self.slots[at] = hashed.tag() << 32 | (self.bytes.len() as u64 + 1);
                self.bytes.extend_from_slice(&[o, r]);
                self.bytes.extend_from_slice(&head);
                self.bytes.extend_from_slice(original);
                self.bytes.extend_from_slice(replacement);
                self.len += 1;
                return;
            }
            at = (at + 1) & mask;
        }
    }

    fn clear(&mut self) {
        let slots = (self.most * 2).next_power_of_two();
        if self.slots.len() != slots {
            self.slots = vec![0; slots];
        } else {
            self.slots.fill(0);
        }
        self.len = 0;
        self.bytes.clear();
    }
}

/// A fast hash of a head and a short byte string (FxHash's step, a final mix): spread enough
/// for a table whose probes are bounded.
fn hash(head: Head, bytes: &[u8]) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let step = |h: u64, word: u64| (h.rotate_left(5) ^ word).wrapping_mul(K);
    let mut h = bytes.len() as u64 | u64::from_le_bytes([0, 0, head[0], head[1], head[2], 0, 0, 0]);
    let mut rest = bytes;
    while let Some((word, tail)) = rest.split_first_chunk::<8>() {
        h = step(h, u64::from_le_bytes(*word));
        rest = tail;
    }
    // The last bytes read as words that overlap, not copied: the length is in the hash.
    let four = |b: Option<&[u8; 4]>| u64::from(u32::from_le_bytes(*b.unwrap_or(&[0; 4])));
    let last = match (rest.len(), bytes.last_chunk::<8>()) {
        (0, _) => 0,
        (_, Some(last)) => u64::from_le_bytes(*last),
        (4.., _) => four(rest.first_chunk()) << 32 | four(rest.last_chunk()),
        (n, _) => u64::from(rest[0]) << 16 | u64::from(rest[n / 2]) << 8 | u64::from(rest[n - 1]),
    };
    h = step(h, last);
    // Murmur3's finaliser: the low bits (the slot) depend on every bit.
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    proptest! {
        /// As a map that forgets everything when full: what it gives back is what was put in.
        #[test]
        fn gives_back_what_was_put_in(
            most in 1usize..8,
            ops in prop::collection::vec((prop::collection::vec(0u8..4, 0..10), any::<u8>()), 0..80),
        ) {
            let mut r = Remembered::new(most);
            let mut model: HashMap<Vec<u8>, Vec<u8>> = HashMap::new();
            for (original, v) in ops {
                let replacement = vec![v; usize::from(v % 5)];
                match r.get(&original) {
                    Some(known) => prop_assert_eq!(Some(&known.to_vec()), model.get(&original)),
                    None => {
                        if model.len() >= most {
                            model.clear();
                        }
                        r.insert(Hashed::of([0; 3], &original), [0; 3], &original, &replacement);
                        model.insert(original, replacement);
                    }
                }
                prop_assert!(r.len() <= most);
            }
        }
    }

    #[test]
    fn remembers_nothing_with_room_for_none() {
        let mut r = Remembered::new(0);
        r.insert(Hashed::of([0; 3], b"DOE"), [0; 3], b"DOE", b"ROE");
        assert_eq!(r.get(b"DOE"), None);
    }
}
