//! MSH-10 and MSH-16 of a message's header, its field separators found 64 bytes at a time
//! into bit masks (fields are short: a step per field costs more). A fast path of the reader:
//! reads exactly what [`crate::hl7::Segment`] reads of the header, as its tests check.

use crate::framing::CR;
use crate::hl7::{mask, Segment};

const LF: u8 = b'\n';

/// MSH-10 and MSH-16, each `None` when the segment ends before it.
pub(crate) type Fields<'a> = (Option<&'a [u8]>, Option<&'a [u8]>);

/// MSH-10 and MSH-16 of the header that starts `bytes` (up to its first CR or LF), as the
/// reader reads them.
pub(crate) fn by_reader(bytes: &[u8]) -> Fields<'_> {
    let end = memchr::memchr2(CR, LF, bytes).unwrap_or(bytes.len());
    let header = Segment::header(&bytes[..end]);
    let raw = |n| header.field(n).map(|v| v.raw());
    (raw(10), raw(16))
}

/// MSH-10 of a header `segment` that holds no CR or LF, as the reader reads it.
pub(crate) fn control_id_of_segment(segment: &[u8]) -> Option<&[u8]> {
    Segment::header(segment).field(10).map(|v| v.raw())
}

/// MSH-10 and MSH-16 as pieces of the segment after MSH-1, counted from MSH-2 as 0.
const CONTROL_ID: usize = 8;
const APP_ACK: usize = 14;

/// MSH-10 and MSH-16 of the header segment (MSH, FHS or BHS) at the start of `bytes` (up to
/// its first CR or LF), its separators and its end found together, so its end is not searched
/// for first.
pub(crate) fn control_id_and_app_ack(bytes: &[u8]) -> Fields<'_> {
    // The name and MSH-1 (the separator): a segment ending before them has no fields.
    let Some(head) = bytes.first_chunk::<4>() else {
        return (None, None);
    };
    if head.iter().any(|&b| b == CR || b == LF) {
        return (None, None);
    }
    let sep = head[3];
    // Where each separator is, up to the one after the last field wanted.
    let mut ends = [0usize; APP_ACK + 1];
    let mut seen = 0;
    let mut base = 4;
    let end = 'scan: loop {
        let rest = &bytes[base..];
        if rest.len() < mask::BLOCK {
            // Within a block of the end of the bytes (a message of one short segment): the
            // reader's own reading, without copying the rest into a block.
            return by_reader(bytes);
        }
        let (seps, ends_at) = (mask::one64(rest, sep), mask::either64(rest, CR, LF));
        // The segment ends in this block at its first CR or LF, if it holds one.
        let mut hits = seps & ends_at.wrapping_sub(1) & !ends_at;
        while hits != 0 {
            ends[seen] = base + hits.trailing_zeros() as usize;
            seen += 1;
            if seen == APP_ACK + 1 {
                // The separator after the last field wanted: no need to read on to the end.
                break 'scan ends[APP_ACK];
            }
            hits &= hits - 1;
        }
        if ends_at != 0 {
            break base + ends_at.trailing_zeros() as usize;
        }
        base += mask::BLOCK;
    };
    let seps = Separators {
        segment: &bytes[..end],
        ends,
        seen,
    };
    (seps.piece(CONTROL_ID), seps.piece(APP_ACK))
}

/// MSH-10 of the header that is the first `len` bytes of `bytes`, as
/// [`control_id_of_segment`] reads it.
#[inline(always)]
pub(crate) fn control_id_within(bytes: &[u8], len: usize) -> Option<&[u8]> {
    Separators::<{ CONTROL_ID + 1 }>::within(bytes, len)?.piece(CONTROL_ID)
}

/// Where the first `N` field separators of a header are (after MSH-1).
struct Separators<'a, const N: usize> {
    segment: &'a [u8],
    ends: [usize; N],
    seen: usize,
}

impl<'a, const N: usize> Separators<'a, N> {
    /// Of the header that is the first `len` bytes of `bytes`, found 64 bytes at a time: the
    /// bytes after the header (the rest of the message) are read with it but not counted.
    /// `None` when the header is the name alone.
    #[inline(always)]
    fn within(bytes: &'a [u8], len: usize) -> Option<Self> {
        let segment = bytes.get(..len)?;
        let &sep = segment.get(3)?;
        let mut ends = [0usize; N];
        let mut seen = 0;
        let mut base = 4;
        'scan: while base < len {
            let mut hits = mask::one64(&bytes[base..], sep);
            if len - base < mask::BLOCK {
                hits &= (1u64 << (len - base)) - 1;
            }
            while hits != 0 {
                ends[seen] = base + hits.trailing_zeros() as usize;
                seen += 1;
                if seen == N {
                    break 'scan;
                }
                hits &= hits - 1;
            }
            base += mask::BLOCK;
        }
        Some(Separators {
            segment,
            ends,
            seen,
        })
    }

    /// Piece `k` (from 1, below `N`) after MSH-1, MSH-2 being 0: from after separator
    /// `k - 1` to its own, or to the segment's end.
    #[inline(always)]
    fn piece(&self, k: usize) -> Option<&'a [u8]> {
        if self.seen < k {
            return None;
        }
        let stop = if self.seen > k {
            self.ends[k]
        } else {
            self.segment.len()
        };
        self.segment.get(self.ends[k - 1] + 1..stop)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn header_byte(sep: u8) -> impl Strategy<Value = u8> {
        prop_oneof![
            4 => Just(sep),
            1 => prop::sample::select(vec![b'^', b'~', b'\\', b'&', b'"']),
            1 => prop::sample::select(vec![b'\r', b'\n']),
            6 => prop::sample::select(b"ACKNEALSUER0123456789".to_vec()),
            1 => any::<u8>(),
        ]
    }

    fn header() -> impl Strategy<Value = Vec<u8>> {
        let sep = prop_oneof![
            4 => Just(b'|'),
            1 => prop::sample::select(vec![b'^', b'\\', b'M', b'\r', b'\n', 0, 0xff]),
            1 => any::<u8>(),
        ];
        // The callers read headers only: a payload that starts with `MSH` (FHS and BHS are
        // laid out alike).
        let head = prop_oneof![
            8 => Just(b"MSH".to_vec()),
            1 => Just(b"FHS".to_vec()),
            1 => Just(b"BHS".to_vec()),
        ];
        (head, sep)
            .prop_flat_map(|(head, sep)| {
                let field = prop::collection::vec(header_byte(sep), 0..12);
                (
                    Just(head),
                    Just(sep),
                    prop::collection::vec(field, 0..20),
                    prop::collection::vec(any::<u8>(), 0..40),
                )
            })
            .prop_map(|(mut h, sep, fields, tail)| {
                h.push(sep);
                for (i, f) in fields.iter().enumerate() {
                    if i > 0 {
                        h.push(sep);
                    }
                    h.extend_from_slice(f);
                }
                h.extend_from_slice(&tail);
                h
            })
    }

    /// The reading this one stands in for: the reader's, of the first segment.
    fn reference(bytes: &[u8]) -> Fields<'_> {
        match crate::hl7::Message::new(bytes).segments().next() {
            Some(first) if first.offset() == 0 => {
                let raw = |n| first.field(n).map(|v| v.raw());
                (raw(10), raw(16))
            }
            _ => (None, None),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 4096, ..ProptestConfig::default() })]

        /// The control ID of a header of any length within any bytes.
        #[test]
        fn reads_the_control_id_within_as_the_header_reader(bytes in header(), cut in 0usize..200) {
            let len = cut.min(bytes.len());
            // The header's separator is never a line end (a header is one line).
            prop_assume!(!matches!(bytes.get(3), Some(b'\r' | b'\n')));
            prop_assert_eq!(
                control_id_within(&bytes, len),
                control_id_of_segment(&bytes[..len])
            );
        }

        #[test]
        fn reads_as_the_header_reader(bytes in header()) {
            prop_assert_eq!(control_id_and_app_ack(&bytes), reference(&bytes));
        }

        /// Every cut of one header: chunk edges, tails shorter than a chunk.
        #[test]
        fn reads_every_cut_as_the_header_reader(bytes in header(), cut in 0usize..200) {
            let cut = &bytes[..cut.min(bytes.len())];
            prop_assert_eq!(control_id_and_app_ack(cut), reference(cut));
        }

        /// The usual header with MSH-10 and MSH-16 of any bytes.
        #[test]
        fn reads_the_usual_header(
            cid in prop::collection::vec(header_byte(b'|'), 0..40),
            ack in prop::collection::vec(header_byte(b'|'), 0..4),
            more in 0usize..3,
        ) {
            let mut h = b"MSH|^~\\&|A|B|C|D|20240101120000||ADT^A01|".to_vec();
            h.extend_from_slice(&cid);
            h.extend_from_slice(b"|P|2.5|||AL|");
            h.extend_from_slice(&ack);
            h.extend(std::iter::repeat_n(b'|', more));
            h.extend_from_slice(b"\rPID|1\r");
            prop_assert_eq!(control_id_and_app_ack(&h), reference(&h));
        }
    }

    #[test]
    fn reads_the_two_fields() {
        let h = b"MSH|^~\\&|A|B|C|D|20240101||ADT^A01|MSG1|P|2.5||||AL|\rPID|1\r";
        assert_eq!(
            control_id_and_app_ack(h),
            (Some(&b"MSG1"[..]), Some(&b"AL"[..]))
        );
        assert_eq!(control_id_and_app_ack(b"MSH"), (None, None));
        assert_eq!(control_id_and_app_ack(b"MSH|"), (None, None));
        assert_eq!(control_id_and_app_ack(b"MSH\r|a"), (None, None));
    }
}
