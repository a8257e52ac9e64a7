//! The CRs of a buffer, in order, found 64 bytes at a time into a bit mask: a message's short
//! lines then cost a few instructions each, not a search each.

use crate::framing::CR;
use crate::hl7::mask::{self, BLOCK as STEP};

/// Gives the positions of the CRs in `bytes`, first to last.
pub(super) struct Crs<'a> {
    bytes: &'a [u8],
    /// Where the bytes `bits` stands for start.
    base: usize,
    /// One bit for each CR from `base` on not given out yet.
    bits: u64,
}

impl<'a> Crs<'a> {
    pub(super) fn new(bytes: &'a [u8]) -> Self {
        Crs {
            bytes,
            base: 0,
            bits: mask(bytes),
        }
    }
}

impl Iterator for Crs<'_> {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        while self.bits == 0 {
            self.base += STEP;
            let rest = self.bytes.get(self.base..).filter(|r| !r.is_empty())?;
            self.bits = mask(rest);
        }
        let at = self.base + self.bits.trailing_zeros() as usize;
        self.bits &= self.bits - 1;
        Some(at)
    }
}

/// Bit `i` set when `bytes[i]` is a CR, for the first 64 bytes (or fewer, all there are).
fn mask(bytes: &[u8]) -> u64 {
    mask::one64(bytes, CR)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1000))]

        /// Every CR, in order, and nothing else, at any length and any spacing.
        #[test]
        fn finds_each_cr_as_a_plain_search_does(
            bytes in prop::collection::vec(
                prop_oneof![3 => Just(CR), 1 => Just(b'\n'), 8 => any::<u8>()],
                0..300,
            ),
        ) {
            let want: Vec<usize> = (0..bytes.len()).filter(|&i| bytes[i] == CR).collect();
            prop_assert_eq!(Crs::new(&bytes).collect::<Vec<_>>(), want);
        }
    }

    #[test]
    fn a_buffer_of_nothing_or_only_crs() {
        assert_eq!(Crs::new(&[]).next(), None);
        assert_eq!(
            Crs::new(&[CR; 130]).collect::<Vec<_>>(),
            (0..130).collect::<Vec<_>>()
        );
    }
}
