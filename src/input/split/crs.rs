//! The CRs of a buffer, in order, found 64 bytes at a time into a bit mask: a message's short
//! lines then cost a few instructions each, not a search each.

use crate::framing::CR;

/// Bytes looked at in one step.
const STEP: usize = 64;

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
    match bytes.first_chunk::<STEP>() {
        Some(chunk) => mask_of(chunk),
        None => {
            // The last few bytes, padded with bytes that are not CR.
            let mut chunk = [0; STEP];
            chunk[..bytes.len()].copy_from_slice(bytes);
            mask_of(&chunk)
        }
    }
}

#[cfg(target_arch = "x86_64")]
fn mask_of(chunk: &[u8; STEP]) -> u64 {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_set1_epi8,
    };
    let mut bits = 0u64;
    // SAFETY: SSE2 is part of every x86_64 processor, so its instructions need no detection;
    // each load reads exactly the 16 bytes of `part`, in bounds, with no alignment required.
    unsafe {
        let cr = _mm_set1_epi8(CR as i8);
        for (k, part) in chunk.chunks_exact(16).enumerate() {
            let v = _mm_loadu_si128(part.as_ptr().cast::<__m128i>());
            let found = u64::from(_mm_movemask_epi8(_mm_cmpeq_epi8(v, cr)) as u16);
            bits |= found << (16 * k);
        }
    }
    bits
}

#[cfg(not(target_arch = "x86_64"))]
fn mask_of(chunk: &[u8; STEP]) -> u64 {
    by_byte(chunk)
}

#[cfg(any(test, not(target_arch = "x86_64")))]
fn by_byte(bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .take(STEP)
        .enumerate()
        .fold(0, |bits, (i, &b)| bits | (u64::from(b == CR) << i))
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
    fn the_masks_agree_with_the_bytes() {
        let mut chunk = [b'x'; STEP];
        for i in [0, 1, 15, 16, 31, 32, 47, 48, 62, 63] {
            chunk[i] = CR;
        }
        assert_eq!(mask_of(&chunk), by_byte(&chunk));
        assert_eq!(mask_of(&[CR; STEP]), u64::MAX);
        assert_eq!(Crs::new(&[]).next(), None);
    }
}
