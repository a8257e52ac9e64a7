//! Replacements remembered by a session: one growing buffer of originals and replacements and
//! an open-addressed table of where each lies, so remembering one costs no allocation of its
//! own and forgetting them all costs none either.

/// Probes a lookup makes before it gives up: a value missed is only derived again, so inputs
/// made to collide cost a bounded search, never one that grows with the table.
const PROBES: usize = 16;

/// At most `most` replacements, then all forgotten at once; originals longer than the caller
/// allows are never offered.
pub(super) struct Remembered {
    most: usize,
    /// For each slot, entry number plus one (0: none) in the low half and the top of its
    /// original's hash in the high half, so a slot of another original is passed over without
    /// reading its entry; twice `most`, a power of two. Four bytes a slot, so the table of a
    /// session's few thousand stays in the CPU's nearest cache.
    slots: Vec<u32>,
    entries: Vec<Entry>,
    /// Each entry's original, then its replacement.
    bytes: Vec<u8>,
}

#[derive(Clone, Copy)]
struct Entry {
    at: u32,
    original: u32,
    replacement: u32,
}

impl Remembered {
    /// At most `most` remembered, and never more than a slot can number.
    pub(super) fn new(most: usize) -> Remembered {
        Remembered {
            most: most.min(usize::from(u16::MAX)),
            slots: Vec::new(),
            entries: Vec::new(),
            bytes: Vec::new(),
        }
    }

    pub(super) fn len(&self) -> usize {
        self.entries.len()
    }

    /// The replacement remembered for `original`.
    pub(super) fn get(&self, original: &[u8]) -> Option<&[u8]> {
        if self.entries.is_empty() {
            return None;
        }
        let hash = hash(original);
        let mask = self.slots.len() - 1;
        let mut at = hash as usize & mask;
        for _ in 0..PROBES {
            let slot = self.slots[at];
            if slot == 0 {
                return None;
            }
            if slot >> 16 == (hash >> 48) as u32 {
                let entry = self.entries[(slot & 0xffff) as usize - 1];
                let start = entry.at as usize;
                let middle = start + entry.original as usize;
                if self.bytes[start..middle] == *original {
                    return Some(&self.bytes[middle..middle + entry.replacement as usize]);
                }
            }
            at = (at + 1) & mask;
        }
        None
    }

    /// Remember `replacement` for `original` (not remembered yet).
    pub(super) fn insert(&mut self, original: &[u8], replacement: &[u8]) {
        if self.most == 0 {
            return;
        }
        // Each entry's bytes are bounded by the caller's longest original and its replacement;
        // the buffer's bound is checked too, so no input grows it without end.
        let full = self.entries.len() >= self.most || self.bytes.len() >= self.most * 256;
        if full || self.slots.is_empty() {
            self.clear();
        }
        let hash = hash(original);
        let mask = self.slots.len() - 1;
        let mut at = hash as usize & mask;
        for _ in 0..PROBES {
            if self.slots[at] == 0 {
                self.entries.push(Entry {
                    at: self.bytes.len() as u32,
                    original: original.len() as u32,
                    replacement: replacement.len() as u32,
                });
                self.bytes.extend_from_slice(original);
                self.bytes.extend_from_slice(replacement);
                self.slots[at] = ((hash >> 48) as u32) << 16 | self.entries.len() as u32;
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
        self.entries.clear();
        self.bytes.clear();
    }
}

/// A fast hash of a short byte string (FxHash's step, a final mix): spread enough for a
/// table whose probes are bounded.
fn hash(bytes: &[u8]) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let step = |h: u64, word: u64| (h.rotate_left(5) ^ word).wrapping_mul(K);
    let mut h = bytes.len() as u64;
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        h = step(h, u64::from_le_bytes(word));
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut word = [0u8; 8];
        word[..rest.len()].copy_from_slice(rest);
        h = step(h, u64::from_le_bytes(word));
    }
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
                        r.insert(&original, &replacement);
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
        r.insert(b"DOE", b"ROE");
        assert_eq!(r.get(b"DOE"), None);
    }
}
