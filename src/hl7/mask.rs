//! Bit masks of the bytes of a block that equal one given byte or one of two, sixteen at a time
//! (SSE2 on x86_64, words elsewhere): a header's short fields and a payload's short segments
//! then cost a few instructions each, not a search each.

/// Bytes of a block in [`either_from`].
pub(crate) const BLOCK: usize = 64;

/// Bit `i` set when `chunk[i]` is `a` or `b`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) fn either16(chunk: &[u8; 16], a: u8, b: u8) -> u32 {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
    };
    // SAFETY: SSE2 is part of every x86_64 processor, so its instructions need no detection;
    // the load reads exactly the 16 bytes of `chunk`, with no alignment required.
    unsafe {
        let v = _mm_loadu_si128(chunk.as_ptr().cast::<__m128i>());
        let hit = _mm_or_si128(
            _mm_cmpeq_epi8(v, _mm_set1_epi8(a as i8)),
            _mm_cmpeq_epi8(v, _mm_set1_epi8(b as i8)),
        );
        u32::from(_mm_movemask_epi8(hit) as u16)
    }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
pub(crate) fn either16(chunk: &[u8; 16], a: u8, b: u8) -> u32 {
    either16_by_word(chunk, a, b)
}

/// Bit `i` set when `chunk[i]` is `a` or `b`.
#[inline(always)]
fn either_block(chunk: &[u8; BLOCK], a: u8, b: u8) -> u64 {
    let (parts, _) = chunk.as_chunks::<16>();
    parts.iter().enumerate().fold(0u64, |bits, (k, part)| {
        bits | u64::from(either16(part, a, b)) << (16 * k)
    })
}

/// Bit `i` set when `chunk[i]` is `a`: one compare a step where [`either_block`] needs two.
#[inline(always)]
fn one_block(chunk: &[u8; BLOCK], a: u8) -> u64 {
    let (parts, _) = chunk.as_chunks::<16>();
    parts.iter().enumerate().fold(0u64, |bits, (k, part)| {
        bits | u64::from(one16(part, a)) << (16 * k)
    })
}

/// `block`'s mask of `bytes[at..]`, its first 64 bytes (or fewer, all there are; none past the
/// end). Short of a whole block, the last 64 bytes are read and their bits moved down, with no
/// copy; only bytes shorter than a block are copied into a padded one.
#[inline(always)]
fn from(bytes: &[u8], at: usize, block: impl Fn(&[u8; BLOCK]) -> u64) -> u64 {
    if let Some(chunk) = bytes.get(at..).and_then(<[u8]>::first_chunk::<BLOCK>) {
        return block(chunk);
    }
    let rest = bytes.len().saturating_sub(at);
    if rest == 0 {
        return 0;
    }
    match bytes.last_chunk::<BLOCK>() {
        Some(last) => block(last) >> (BLOCK - rest),
        None => {
            // Fewer bytes than a block: padded, the padding's bits cleared.
            let mut chunk = [0; BLOCK];
            chunk[..rest].copy_from_slice(&bytes[at..]);
            block(&chunk) & ((1u64 << rest) - 1)
        }
    }
}

/// Bit `i` set when `bytes[at + i]` is `a` or `b`, for the 64 bytes from `at` (or fewer, all
/// there are).
#[inline]
pub(crate) fn either_from(bytes: &[u8], at: usize, a: u8, b: u8) -> u64 {
    from(bytes, at, |chunk| either_block(chunk, a, b))
}

/// Bit `i` set when `bytes[at + i]` is `a`, for the 64 bytes from `at` (or fewer, all there
/// are).
#[inline]
pub(crate) fn one_from(bytes: &[u8], at: usize, a: u8) -> u64 {
    from(bytes, at, |chunk| one_block(chunk, a))
}

/// Bit `i` set when `bytes[i]` is `a` or `b`, for the first 64 bytes (or fewer, all there are).
#[inline]
pub(crate) fn either64(bytes: &[u8], a: u8, b: u8) -> u64 {
    either_from(bytes, 0, a, b)
}

/// Bit `i` set when `chunk[i]` is `a`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn one16(chunk: &[u8; 16], a: u8) -> u32 {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_set1_epi8,
    };
    // SAFETY: as in `either16`.
    unsafe {
        let v = _mm_loadu_si128(chunk.as_ptr().cast::<__m128i>());
        u32::from(_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(a as i8))) as u16)
    }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn one16(chunk: &[u8; 16], a: u8) -> u32 {
    either16_by_word(chunk, a, a)
}

/// Bit `i` set when `bytes[i]` is `a`, for the first 64 bytes (or fewer, all there are): one
/// compare a step where [`either_from`] needs two.
pub(crate) fn one64(bytes: &[u8], a: u8) -> u64 {
    one_from(bytes, 0, a)
}

/// Bit `i` set when `chunk[i]` is `a` or `b`: eight bytes at a time in a word.
#[cfg(any(test, not(target_arch = "x86_64")))]
fn either16_by_word(chunk: &[u8; 16], a: u8, b: u8) -> u32 {
    let splat = |x: u8| u64::from(x) * 0x0101_0101_0101_0101;
    let half = |bytes: &[u8]| {
        let word = u64::from_le_bytes(bytes.try_into().unwrap_or_default());
        let hits = zero_bytes(word ^ splat(a)) | zero_bytes(word ^ splat(b));
        // One bit per matching byte, gathered into the top byte (each byte is 0 or 1 first).
        (((hits >> 7).wrapping_mul(0x0102_0408_1020_4080)) >> 56) as u32
    };
    half(&chunk[..8]) | (half(&chunk[8..]) << 8)
}

/// The high bit of each byte of `word` that is zero, and no other bit (exact, unlike the
/// usual `(x - 0x01..) & !x & 0x80..` test, which can flag a 0x01 byte after a zero one).
#[cfg(any(test, not(target_arch = "x86_64")))]
pub(super) fn zero_bytes(word: u64) -> u64 {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    !(((word & LOW7) + LOW7) | word | LOW7)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn byte() -> impl Strategy<Value = u8> {
        prop_oneof![
            Just(b'|'),
            Just(b'\r'),
            Just(b'\n'),
            Just(0x80),
            Just(0),
            any::<u8>()
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2048, ..ProptestConfig::default() })]

        /// The mask, by the processor's compare and by words, is the bytes' own.
        #[test]
        fn masks_are_the_bytes(
            chunk in prop::array::uniform16(byte()),
            a in byte(),
            b in byte(),
        ) {
            let want = (0..16).fold(0u32, |m, i| {
                m | (u32::from(chunk[i] == a || chunk[i] == b) << i)
            });
            prop_assert_eq!(either16(&chunk, a, b), want);
            prop_assert_eq!(either16_by_word(&chunk, a, b), want);
            prop_assert_eq!(either16(&chunk, a, a).count_ones(), chunk.iter().filter(|&&c| c == a).count() as u32);
        }

        /// A block of any length up to 64 and past it: the first 64 bytes' own bits, none for
        /// the padding even when the wanted byte is the padding's.
        #[test]
        fn blocks_are_the_bytes(
            bytes in prop::collection::vec(byte(), 0..80),
            a in byte(),
            b in byte(),
        ) {
            let want = bytes.iter().take(BLOCK).enumerate().fold(0u64, |m, (i, &c)| {
                m | (u64::from(c == a || c == b) << i)
            });
            prop_assert_eq!(either64(&bytes, a, b), want);
            let want_a = bytes.iter().take(BLOCK).enumerate().fold(0u64, |m, (i, &c)| {
                m | (u64::from(c == a) << i)
            });
            prop_assert_eq!(one64(&bytes, a), want_a);
        }

        /// From any offset, in bytes short of a block or past one: the bits of the 64 bytes from
        /// there, none past the end.
        #[test]
        fn masks_from_an_offset_are_the_bytes(
            bytes in prop::collection::vec(byte(), 0..200),
            at in 0usize..210,
            a in byte(),
            b in byte(),
        ) {
            let of = |hit: &dyn Fn(u8) -> bool| {
                bytes.iter().skip(at).take(BLOCK).enumerate().fold(0u64, |m, (i, &c)| {
                    m | (u64::from(hit(c)) << i)
                })
            };
            prop_assert_eq!(either_from(&bytes, at, a, b), of(&|c| c == a || c == b));
            prop_assert_eq!(one_from(&bytes, at, a), of(&|c| c == a));
        }
    }
}
