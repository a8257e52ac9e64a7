//! What an acknowledgement says: MSA-1, MSA-2, MSA-3 and ERR-3, under the ACK's own delimiters.

use super::mask;
use super::{Message, Segment};

/// What an ACK says: MSA-1, MSA-2, MSA-3 under the ACK's own field separator, and ERR-3's code if present.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AckView<'a> {
    /// MSA-1, the acknowledgement code as written; empty when absent.
    pub code: &'a [u8],
    /// MSA-2, the control ID of the message acknowledged; empty when absent.
    pub control_id: &'a [u8],
    /// MSA-3, the text; `None` when absent or empty.
    pub text: Option<&'a [u8]>,
    /// ERR-3's first component, the HL7 error code; `None` when absent or empty.
    pub error_code: Option<&'a [u8]>,
}

/// The first MSA and (with `want_err`) the first ERR of an acknowledgement, as the reader finds
/// them, reading no further than needed; `None` without an MSH or an MSA.
fn ack_segments(payload: &[u8], want_err: bool) -> Option<(Segment<'_>, Option<Segment<'_>>)> {
    let mut msh = false;
    let mut msa = None;
    let mut err = None;
    for segment in Message::new(payload).segments() {
        match segment.name() {
            b"MSH" => msh = true,
            b"MSA" if msa.is_none() => msa = Some(segment),
            b"ERR" if want_err && err.is_none() => err = Some(segment),
            _ => {}
        }
        if msh && msa.is_some() && (err.is_some() || !want_err) {
            break;
        }
    }
    if !msh {
        return None;
    }
    Some((msa?, err))
}

/// Read MSA of an acknowledgement payload; `None` when there is no MSH or no MSA.
/// Only the first MSA (and first ERR) is read.
pub fn scan_ack(payload: &[u8]) -> Option<AckView<'_>> {
    let (msa, err) = ack_segments(payload, true)?;
    let field = |n| msa.field(n).map(|v| v.raw());
    let error_code = err
        .and_then(|e| e.field(3))
        .and_then(|f| f.repetition(1))
        .and_then(|r| r.component(1))
        .map(|c| c.raw())
        .filter(|c| !c.is_empty());
    Some(AckView {
        code: field(1).unwrap_or_default(),
        control_id: field(2).unwrap_or_default(),
        text: field(3).filter(|t| !t.is_empty()),
        error_code,
    })
}

/// MSA-1 and MSA-2 of an acknowledgement, as [`scan_ack`] reads them (empty when absent),
/// reading no further than the MSA: a client credits every ACK it gets with these two alone.
pub fn ack_reply(payload: &[u8]) -> Option<(&[u8], &[u8])> {
    if let Some(reply) = ack_reply_in_place(payload) {
        return Some(reply);
    }
    let (msa, _) = ack_segments(payload, false)?;
    let field = |n| msa.field(n).map(|v| v.raw()).unwrap_or_default();
    Some((field(1), field(2)))
}

/// The first `N` places from `from` on that hold `a`, `b` or `c`, the payload's end for
/// those that are not there.
#[inline(always)]
fn find<const N: usize>(payload: &[u8], from: usize, a: u8, b: u8, c: u8) -> [usize; N] {
    let len = payload.len();
    let mut ends = [len; N];
    let mut found = 0;
    let hits = |chunk: &[u8; 16]| mask::either16(chunk, a, b) | mask::either16(chunk, c, c);
    let mut take = |base: usize, mut m: u32| {
        while m != 0 && found < N {
            ends[found] = base + m.trailing_zeros() as usize;
            found += 1;
            m &= m - 1;
        }
        found == N
    };
    let mut at = from;
    // Thirty-two bytes a step while they last (a header is longer than that), then sixteen.
    while let Some(chunk) = payload.get(at..).and_then(<[u8]>::first_chunk::<32>) {
        let (low, high) = chunk.split_at(16);
        let (Some(low), Some(high)) = (low.first_chunk(), high.first_chunk()) else {
            break;
        };
        if take(at, hits(low) | hits(high) << 16) {
            return ends;
        }
        at += 32;
    }
    while let Some(chunk) = payload.get(at..).and_then(<[u8]>::first_chunk::<16>) {
        if take(at, hits(chunk)) {
            return ends;
        }
        at += 16;
    }
    if at < len {
        match payload.last_chunk::<16>() {
            // The last few bytes: the sixteen that end the payload, those before `at`
            // shifted out.
            Some(chunk) => {
                take(at, hits(chunk) >> (at - (len - 16)));
            }
            None => {
                let m = payload[at..]
                    .iter()
                    .enumerate()
                    .filter(|(_, &x)| x == a || x == b || x == c)
                    .fold(0u32, |m, (i, _)| m | 1 << i);
                take(at, m);
            }
        }
    }
    ends
}

/// [`ack_reply`] of the usual ACK, MSA right behind MSH, read in one pass over the payload
/// in place: the header's end, then the ends of MSA's first three fields, found sixteen bytes
/// at a time in a mask of the bytes that end them (a search costs more to start than to run
/// on fields this short, and a byte at a time costs more than a mask). `None` for any other
/// shape, which the general reader handles.
fn ack_reply_in_place(payload: &[u8]) -> Option<(&[u8], &[u8])> {
    if !payload.starts_with(b"MSH") {
        return None;
    }
    let [header_end] = find::<1>(payload, 3, b'\r', b'\n', b'\n');
    // A bare `MSH` declares nothing: the default separator, as the reader takes it.
    let separator = if header_end > 3 { payload[3] } else { b'|' };
    let mut at = header_end;
    while at < payload.len() && matches!(payload[at], b'\r' | b'\n') {
        at += 1;
    }
    if !payload[at..].starts_with(b"MSA") {
        return None;
    }
    // A separator among `MSA`'s own letters would split the segment's name, and a name that
    // goes on past `MSA` is another segment's: the general reader.
    if matches!(separator, b'M' | b'S' | b'A')
        || payload
            .get(at + 3)
            .is_some_and(|&b| b != separator && b != b'\r' && b != b'\n')
    {
        return None;
    }
    // Fields 1 and 2 of the MSA segment, split as the reader splits them; the segment ends
    // at the first CR or LF, so each field ends at the first separator, CR or LF after the
    // one before, and only a separator there lets another field follow.
    let ends = find::<3>(payload, at + 3, separator, b'\r', b'\n');
    let more = |n: usize| payload.get(n) == Some(&separator);
    if !more(ends[0]) {
        return Some((&[], &[]));
    }
    let code = &payload[ends[0] + 1..ends[1]];
    if !more(ends[1]) {
        return Some((code, &[]));
    }
    Some((code, &payload[ends[1] + 1..ends[2]]))
}
