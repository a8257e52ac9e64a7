//! The two MSH fields a send needs, MSH-10 and MSH-16, read in one pass over the header
//! segment that stops at MSH-16: nothing else of the header is indexed or kept.

use super::mask::either16;
use crate::framing::CR;

const LF: u8 = b'\n';

/// MSH-10 and MSH-16 as pieces of the segment after MSH-1, counted from MSH-2 as 0.
const CONTROL_ID: usize = 8;
const APP_ACK: usize = 14;

/// MSH-10 and MSH-16, each `None` when the segment ends before it.
pub(crate) type Fields<'a> = (Option<&'a [u8]>, Option<&'a [u8]>);

/// MSH-10 (the control ID) and MSH-16 (the application acknowledgement type) of a payload that
/// starts with `MSH`, as [`crate::hl7::Msh::parse`] of its first segment (up to the first CR
/// or LF) reads them with `control_id()` and `application_ack_type()`.
pub(crate) fn control_id_and_app_ack(payload: &[u8]) -> Fields<'_> {
    let end = memchr::memchr2(CR, LF, payload).unwrap_or(payload.len());
    let segment = &payload[..end];
    let Some(pieces) = Pieces::<{ APP_ACK + 1 }>::of(segment) else {
        // The segment is the name alone: no fields.
        return (None, None);
    };
    (pieces.piece(CONTROL_ID), pieces.piece(APP_ACK))
}

/// MSH-10 of a header `segment` that holds no CR or LF, as [`control_id_and_app_ack`] reads
/// it, looking no further than the separator after it.
pub(crate) fn control_id_of_segment(segment: &[u8]) -> Option<&[u8]> {
    Pieces::<{ CONTROL_ID + 1 }>::of(segment)?.piece(CONTROL_ID)
}

/// Where the first `N` pieces of a header segment end.
struct Pieces<'a, const N: usize> {
    segment: &'a [u8],
    /// Where each piece ends (the separator after it); no further than piece `N - 1`.
    ends: [usize; N],
    found: usize,
}

impl<'a, const N: usize> Pieces<'a, N> {
    /// `None` when the segment is the name alone.
    fn of(segment: &'a [u8]) -> Option<Self> {
        let &sep = segment.get(3)?;
        let mut ends = [0usize; N];
        let mut found = 0;
        let rest = segment.get(4..).unwrap_or_default();
        // Sixteen bytes at a time into a mask of the separators (fields are short: a memchr
        // call per field costs more than it saves), then the tail byte by byte.
        let mut chunks = rest.chunks_exact(16);
        let mut base = 4;
        'scan: {
            for chunk in &mut chunks {
                let mut hits = either16(chunk.try_into().unwrap_or(&[0; 16]), sep, sep);
                while hits != 0 {
                    ends[found] = base + hits.trailing_zeros() as usize;
                    found += 1;
                    if found == ends.len() {
                        break 'scan;
                    }
                    hits &= hits - 1;
                }
                base += 16;
            }
            for (i, &b) in chunks.remainder().iter().enumerate() {
                if b == sep {
                    ends[found] = base + i;
                    found += 1;
                    if found == ends.len() {
                        break 'scan;
                    }
                }
            }
        }
        Some(Pieces {
            segment,
            ends,
            found,
        })
    }

    /// Piece `k` (below `N`) runs from after the separator that ends piece `k - 1` (MSH-2 from
    /// 4) to its own, or to the segment's end for the last piece.
    fn piece(&self, k: usize) -> Option<&'a [u8]> {
        if k > self.found {
            return None;
        }
        let start = k.checked_sub(1).map_or(4, |before| self.ends[before] + 1);
        let stop = if k < self.found {
            self.ends[k]
        } else {
            self.segment.len()
        };
        self.segment.get(start..stop)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hl7::Msh;
    use proptest::prelude::*;

    /// The reading it replaces: the first segment, parsed with its field index.
    fn by_parse(payload: &[u8]) -> Fields<'_> {
        let end = memchr::memchr2(b'\r', b'\n', payload).unwrap_or(payload.len());
        match Msh::parse(&payload[..end]) {
            Some(msh) => (msh.control_id(), msh.application_ack_type()),
            None => (None, None),
        }
    }

    /// Bytes a header is made of: its separators, the usual encoding characters, CR and LF,
    /// letters, and any byte now and then.
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
            1 => prop::sample::select(vec![b'^', b'~', b'\\', b'#', b'M', b'\r', b'\n', 0, 0xff]),
            1 => any::<u8>(),
        ];
        sep.prop_flat_map(|sep| {
            let field = prop::collection::vec(header_byte(sep), 0..12);
            (
                Just(sep),
                prop::collection::vec(field, 0..20),
                prop::collection::vec(any::<u8>(), 0..12),
            )
        })
        .prop_map(|(sep, fields, tail)| {
            let mut h = b"MSH".to_vec();
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

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2048, ..ProptestConfig::default() })]

        /// Any header (odd separators, escapes, components and repetitions in the fields,
        /// fields missing, a segment cut anywhere): the same two fields as the parse.
        #[test]
        fn reads_as_the_parse(payload in header()) {
            prop_assert_eq!(control_id_and_app_ack(&payload), by_parse(&payload));
            // The control ID alone, of the segment up to its first CR or LF.
            let end = memchr::memchr2(b'\r', b'\n', &payload).unwrap_or(payload.len());
            prop_assert_eq!(control_id_of_segment(&payload[..end]), by_parse(&payload).0);
        }

        /// The usual header with MSH-10 and MSH-16 of any bytes.
        #[test]
        fn reads_the_usual_header_as_the_parse(
            cid in prop::collection::vec(header_byte(b'|'), 0..24),
            ack in prop::collection::vec(header_byte(b'|'), 0..4),
            more in 0usize..3,
        ) {
            let mut h = b"MSH|^~\\&|A|B|C|D|20240101120000||ADT^A01|".to_vec();
            h.extend_from_slice(&cid);
            h.extend_from_slice(b"|P|2.5|||AL|");
            h.extend_from_slice(&ack);
            h.extend(std::iter::repeat_n(b'|', more));
            h.extend_from_slice(b"\rPID|1\r");
            prop_assert_eq!(control_id_and_app_ack(&h), by_parse(&h));
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
        assert_eq!(control_id_and_app_ack(b"MSH\r|a"), (None, None));
    }
}
