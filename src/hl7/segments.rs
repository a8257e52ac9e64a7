//! The segments of a payload, their ends found 64 bytes at a time.

use super::mask;

/// The segments of a payload with their byte offsets. CR and LF each end a segment (so CRLF
/// does too); the empty segments between consecutive terminators are skipped.
pub fn segments(payload: &[u8]) -> impl Iterator<Item = (usize, &[u8])> {
    Segments::of(payload)
}

impl<'a> Segments<'a> {
    /// The segments of `payload`, as [`segments`] gives them.
    pub(super) fn of(payload: &'a [u8]) -> Segments<'a> {
        Segments {
            payload,
            start: 0,
            base: 0,
            ends: mask::either_from(payload, 0, b'\r', b'\n'),
        }
    }
}

/// The segments of a payload, their ends found 64 bytes at a time into a bit mask of the CRs
/// and LFs (segments are short: a search per segment costs more to start than to run).
pub(super) struct Segments<'a> {
    payload: &'a [u8],
    /// Where the next segment starts.
    start: usize,
    /// Where the bytes `ends` stands for start.
    base: usize,
    /// One bit for each CR or LF from `base` on not reached yet.
    ends: u64,
}

impl<'a> Segments<'a> {
    /// The next CR or LF, or `None` past the last.
    #[inline(always)]
    fn next_end(&mut self) -> Option<usize> {
        while self.ends == 0 {
            self.base += mask::BLOCK;
            if self.base >= self.payload.len() {
                return None;
            }
            self.ends = mask::either_from(self.payload, self.base, b'\r', b'\n');
        }
        let at = self.base + self.ends.trailing_zeros() as usize;
        self.ends &= self.ends - 1;
        Some(at)
    }
}

impl<'a> Iterator for Segments<'a> {
    type Item = (usize, &'a [u8]);

    // Inlined into the loops over the segments: a call per segment costs more than its work.
    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let at = self.start;
            let Some(end) = self.next_end() else {
                // The last segment, when no terminator follows it.
                self.start = self.payload.len();
                return self
                    .payload
                    .get(at..)
                    .filter(|s| !s.is_empty())
                    .map(|s| (at, s));
            };
            self.start = end + 1;
            if end > at {
                return Some((at, &self.payload[at..end]));
            }
        }
    }
}

/// The segment is a batch or file envelope segment (FHS, BHS, BTS, FTS).
pub fn is_envelope_segment(segment: &[u8]) -> bool {
    matches!(segment.get(..3), Some(b"FHS" | b"BHS" | b"BTS" | b"FTS"))
}
