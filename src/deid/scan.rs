//! A segment's fields and their values' bounds found 64 bytes at a time: a mask of the field
//! separators, and one of the other separators and the escape character, for each block, so a
//! field or a value costs a few instructions rather than a search or a test of each byte.

use crate::hl7::{mask, Delimiters};

/// The fields of a segment's bytes after its name (the pieces between field separators, the
/// last one ending with the bytes), numbered from `first`; what `split` gives, with numbers.
pub(super) struct Fields<'a> {
    bytes: &'a [u8],
    separator: u8,
    /// Where the next field starts.
    start: usize,
    /// Where the bytes `ends` stands for start.
    base: usize,
    /// One bit for each separator from `base` on not reached yet.
    ends: u64,
    number: usize,
    done: bool,
}

impl<'a> Fields<'a> {
    pub(super) fn new(bytes: &'a [u8], separator: u8, first: usize) -> Fields<'a> {
        Fields {
            bytes,
            separator,
            start: 0,
            base: 0,
            ends: mask::one_from(bytes, 0, separator),
            number: first,
            done: false,
        }
    }

    /// Field `n`, when the segment has it and no later field has been read.
    #[inline]
    pub(super) fn get(&mut self, n: usize) -> Option<&'a [u8]> {
        if n < self.number || self.done {
            return None;
        }
        // The separators before it passed over, their fields never made.
        while self.number < n {
            while self.ends == 0 {
                self.base += mask::BLOCK;
                if self.base >= self.bytes.len() {
                    self.done = true;
                    return None;
                }
                self.ends = mask::one_from(self.bytes, self.base, self.separator);
            }
            self.start = self.base + self.ends.trailing_zeros() as usize + 1;
            self.ends &= self.ends - 1;
            self.number += 1;
        }
        self.next().map(|(_, field)| field)
    }
}

impl<'a> Iterator for Fields<'a> {
    type Item = (usize, &'a [u8]);

    // Inlined into the loop over a segment's fields: a call per field costs more than its work.
    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let (n, at) = (self.number, self.start);
        self.number += 1;
        while self.ends == 0 {
            self.base += mask::BLOCK;
            if self.base >= self.bytes.len() {
                self.done = true;
                return Some((n, &self.bytes[at..]));
            }
            self.ends = mask::one_from(self.bytes, self.base, self.separator);
        }
        let end = self.base + self.ends.trailing_zeros() as usize;
        self.ends &= self.ends - 1;
        self.start = end + 1;
        Some((n, &self.bytes[at..end]))
    }
}

/// The marks (repetition, component and subcomponent separators, escape characters) of one
/// segment's bytes, a block of 64 at a time, the last block read kept: the fields a plan
/// reads come in order, and most share a block with the one before.
pub(super) struct Marks<'a> {
    pub(super) bytes: &'a [u8],
    pub(super) d: Delimiters,
    /// The block `bits` are of, `usize::MAX` before the first.
    block: usize,
    bits: u64,
}

impl<'a> Marks<'a> {
    pub(super) fn new(bytes: &'a [u8], d: Delimiters) -> Marks<'a> {
        Marks {
            bytes,
            d,
            block: usize::MAX,
            bits: 0,
        }
    }

    /// Bit `i` set when byte `block + i` is a mark; `block` a multiple of 64.
    #[inline]
    pub(super) fn at(&mut self, block: usize) -> u64 {
        if block != self.block {
            self.block = block;
            self.bits = self.read(block);
        }
        self.bits
    }

    fn read(&self, at: usize) -> u64 {
        let d = &self.d;
        let marks = |chunk: &[u8; mask::BLOCK]| {
            let (parts, _) = chunk.as_chunks::<16>();
            parts.iter().enumerate().fold(0u64, |bits, (k, p)| {
                let hit = mask::either16(p, d.repetition, d.component)
                    | mask::either16(p, d.subcomponent, d.escape);
                bits | u64::from(hit) << (16 * k)
            })
        };
        let bytes = self.bytes;
        if let Some(chunk) = bytes.get(at..).and_then(<[u8]>::first_chunk) {
            return marks(chunk);
        }
        // Short of a block: the last 64 bytes, their bits moved down; fewer bytes than a block
        // padded, the padding's bits cleared.
        let rest = bytes.len().saturating_sub(at);
        match (rest, bytes.last_chunk()) {
            (0, _) => 0,
            (_, Some(last)) => marks(last) >> (mask::BLOCK - rest),
            (_, None) => {
                let mut chunk = [0; mask::BLOCK];
                chunk[..rest].copy_from_slice(&bytes[at..]);
                marks(&chunk) & ((1u64 << rest) - 1)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// As `split` numbers them, whatever the length and wherever the separators lie.
        #[test]
        fn the_fields_are_the_split_pieces(
            bytes in prop::collection::vec(prop_oneof![Just(b'|'), Just(b'a'), any::<u8>()], 0..300),
            first in 1usize..3,
            step in 1usize..4,
        ) {
            let want: Vec<(usize, &[u8])> = bytes
                .split(|&b| b == b'|')
                .enumerate()
                .map(|(i, f)| (first + i, f))
                .collect();
            let got: Vec<(usize, &[u8])> = Fields::new(&bytes, b'|', first).collect();
            prop_assert_eq!(&got, &want);
            let mut fields = Fields::new(&bytes, b'|', first);
            for n in (first..first + want.len() + 2).step_by(step) {
                prop_assert_eq!(fields.get(n), want.get(n - first).map(|&(_, f)| f));
            }
        }

        /// Against a test of each byte, whatever the length and the block.
        #[test]
        fn the_marks_are_the_marked_bytes(
            bytes in prop::collection::vec(prop_oneof![Just(b'^'), Just(b'\\'), Just(0u8), any::<u8>()], 0..200),
        ) {
            let d = Delimiters::default();
            let mut marks = Marks::new(&bytes, d);
            for block in (0..bytes.len() + 64).step_by(64) {
                let want = (0..64).filter(|i| bytes.get(block + i).is_some_and(|&b| {
                    [d.repetition, d.component, d.subcomponent, d.escape].contains(&b)
                }));
                let want = want.fold(0u64, |bits, i| bits | 1 << i);
                prop_assert_eq!(marks.at(block), want);
            }
        }
    }
}
