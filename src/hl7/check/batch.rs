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
    let mut unbalanced = |at: String, what: &str, value: Option<&[u8]>| {
        findings.push(finding(
            Code::BatchUnbalanced,
            Severity::Error,
            at,
            what,
            value,
        ));
    };
    let mut file_open = false;
    let mut file_done = false;
    let mut batch_open = false;
    let mut batches = 0usize;
    let mut messages = 0usize;
    let mut first = true;
    for (i, (_, bytes)) in segments(payload).enumerate() {
        let at = || format!("segment {}", i + 1);
        let segment = Segment::new(bytes, delimiters);
        let count = || segment.field(1).map(|v| v.raw()).unwrap_or_default();
        match bytes.get(..3) {
            Some(b"FHS") => {
                if !first {
                    unbalanced(at(), "FHS opens the file: it comes first", None);
                }
                file_open = true;
            }
            Some(b"BHS") => {
                if batch_open {
                    unbalanced(at(), "a BHS before the BTS of the batch before it", None);
                }
                if file_done {
                    unbalanced(at(), "a BHS after the FTS", None);
                }
                batch_open = true;
                batches += 1;
                messages = 0;
            }
            Some(b"BTS") => {
                if !batch_open {
                    unbalanced(at(), "a BTS without its BHS", None);
                } else if !count_holds(count(), messages) {
                    unbalanced(
                        "BTS-1".into(),
                        "BTS-1 is not the number of messages in the batch",
                        Some(count()),
                    );
                }
                batch_open = false;
            }
            Some(b"FTS") => {
                if !file_open {
                    unbalanced(at(), "an FTS without its FHS", None);
                } else if batch_open {
                    unbalanced(at(), "the FTS before the BTS of the last batch", None);
                    batch_open = false;
                }
                if file_open && !count_holds(count(), batches) {
                    unbalanced(
                        "FTS-1".into(),
                        "FTS-1 is not the number of batches in the file",
                        Some(count()),
                    );
                }
                file_open = false;
                file_done = true;
            }
            Some(b"MSH") => messages += 1,
            _ => {}
        }
        first = false;
    }
    if batch_open {
        unbalanced(String::new(), "a BHS without its BTS", None);
    }
    if file_open {
        unbalanced(String::new(), "an FHS without its FTS", None);
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
