//! A segment's fields found 64 bytes at a time: one mask of the field separators for each
//! block, so a field costs a few instructions rather than a search of its own.

use crate::hl7::mask;

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
        ) {
            let want: Vec<(usize, &[u8])> = bytes
                .split(|&b| b == b'|')
                .enumerate()
                .map(|(i, f)| (first + i, f))
                .collect();
            let got: Vec<(usize, &[u8])> = Fields::new(&bytes, b'|', first).collect();
            prop_assert_eq!(got, want);
        }
    }
}
