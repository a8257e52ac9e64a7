//! Batch envelopes: FHS ... FTS around BHS ... BTS around messages, each pair balanced and
//! each count (BTS-1 the messages of its batch, FTS-1 the batches of its file) right.

use super::{finding, Code, Finding, Severity};
use crate::hl7::{is_envelope_segment, segments, split_batch, Delimiters, Segment};

/// The messages of `payload` when it is a batch (it holds an envelope segment); `None` for a
/// message alone.
pub(super) fn envelope(payload: &[u8]) -> Option<Vec<&[u8]>> {
    segments(payload)
        .any(|(_, s)| is_envelope_segment(s))
        .then(|| split_batch(payload))
}

/// What the envelope gets wrong, in order of the segments.
pub(super) fn check_envelope(payload: &[u8], findings: &mut Vec<Finding>) {
    let delimiters = segments(payload)
        .map(|(_, s)| s)
        .find(|s| matches!(s.get(..3), Some(b"FHS" | b"BHS" | b"MSH")))
        .map(Delimiters::of_header)
        .unwrap_or_default();
    let mut walk = Walk::default();
    for (i, (_, bytes)) in segments(payload).enumerate() {
        let segment = Segment::new(bytes, delimiters);
        match bytes.get(..3) {
            Some(b"FHS") => {
                if i > 0 {
                    walk.unbalanced(at(i), "FHS opens the file: it comes first", None);
                }
                walk.file_open = true;
            }
            Some(b"BHS") => walk.batch_header(i),
            Some(b"BTS") => walk.batch_trailer(i, &segment),
            Some(b"FTS") => walk.file_trailer(i, &segment),
            Some(b"MSH") => walk.messages += 1,
            _ => {}
        }
    }
    if walk.batch_open {
        walk.unbalanced(String::new(), "a BHS without its BTS", None);
    }
    if walk.file_open {
        walk.unbalanced(String::new(), "an FHS without its FTS", None);
    }
    findings.append(&mut walk.findings);
}

/// Where the envelope stands after the segments read so far, and what it got wrong.
#[derive(Default)]
struct Walk {
    findings: Vec<Finding>,
    file_open: bool,
    file_done: bool,
    batch_open: bool,
    batches: usize,
    /// Messages of the batch open now.
    messages: usize,
}

/// Where segment `i` (from 0) stands, as a finding names it.
fn at(i: usize) -> String {
    format!("segment {}", i + 1)
}

/// Field 1 of a trailer: the count it declares.
fn count<'a>(segment: &Segment<'a>) -> &'a [u8] {
    segment.field(1).map(|v| v.raw()).unwrap_or_default()
}

impl Walk {
    fn unbalanced(&mut self, at: String, what: &str, value: Option<&[u8]>) {
        self.findings.push(finding(
            Code::BatchUnbalanced,
            Severity::Error,
            at,
            what,
            value,
        ));
    }

    fn batch_header(&mut self, i: usize) {
        if self.batch_open {
            self.unbalanced(at(i), "a BHS before the BTS of the batch before it", None);
        }
        if self.file_done {
            self.unbalanced(at(i), "a BHS after the FTS", None);
        }
        self.batch_open = true;
        self.batches += 1;
        self.messages = 0;
    }

    fn batch_trailer(&mut self, i: usize, segment: &Segment<'_>) {
        if !self.batch_open {
            self.unbalanced(at(i), "a BTS without its BHS", None);
        } else if !count_holds(count(segment), self.messages) {
            self.unbalanced(
                "BTS-1".into(),
                "BTS-1 is not the number of messages in the batch",
                Some(count(segment)),
            );
        }
        self.batch_open = false;
    }

    fn file_trailer(&mut self, i: usize, segment: &Segment<'_>) {
        if !self.file_open {
            self.unbalanced(at(i), "an FTS without its FHS", None);
        } else if self.batch_open {
            self.unbalanced(at(i), "the FTS before the BTS of the last batch", None);
            self.batch_open = false;
        }
        if self.file_open && !count_holds(count(segment), self.batches) {
            self.unbalanced(
                "FTS-1".into(),
                "FTS-1 is not the number of batches in the file",
                Some(count(segment)),
            );
        }
        self.file_open = false;
        self.file_done = true;
    }
}

/// A count field holds when it is empty (optional) or the number counted.
fn count_holds(field: &[u8], counted: usize) -> bool {
    field.is_empty()
        || std::str::from_utf8(field)
            .ok()
            .and_then(|t| t.trim().parse::<usize>().ok())
            == Some(counted)
}
