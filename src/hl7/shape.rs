//! How a payload is shaped (one message, a batch, concatenated messages, no MSH), and the
//! messages of a batch.

use super::{is_envelope_segment, segments, Msh};

/// How a payload is shaped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// One message.
    Single,
    /// FHS or BHS envelope (or a stray BTS/FTS), even when it holds no MSH.
    Batch,
    /// More than one MSH without a batch envelope.
    Concatenated,
    /// No MSH segment found (and no envelope).
    NoMsh,
}

/// The scan of one payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scan<'a> {
    /// The first MSH of the payload.
    pub msh: Option<Msh<'a>>,
    /// Single message, batch, concatenated messages or no MSH.
    pub shape: Shape,
}

/// Find the first segment starting `MSH` (segments end in CR or LF) and classify the payload.
pub fn scan(payload: &[u8]) -> Scan<'_> {
    let mut msh = None;
    let mut msh_count = 0usize;
    let mut envelope = false;
    for (at, segment) in segments(payload) {
        if segment.starts_with(b"MSH") {
            msh_count += 1;
            if msh.is_none() {
                msh = Msh::parse_in(payload, at, segment);
            }
        } else if is_envelope_segment(segment) {
            envelope = true;
        }
    }
    let shape = if envelope {
        Shape::Batch
    } else if msh_count > 1 {
        Shape::Concatenated
    } else if msh.is_some() {
        Shape::Single
    } else {
        Shape::NoMsh
    };
    Scan { msh, shape }
}

/// The messages of a batch (or of concatenated messages): each runs from its MSH segment to the
/// next MSH or envelope segment, terminators included. Bytes before the first MSH and envelope
/// segments belong to no message.
pub fn split_batch(payload: &[u8]) -> Vec<&[u8]> {
    let mut messages = Vec::new();
    let mut current: Option<usize> = None;
    for (at, segment) in segments(payload) {
        let is_msh = segment.starts_with(b"MSH");
        if is_msh || is_envelope_segment(segment) {
            if let Some(start) = current.take() {
                messages.push(&payload[start..at]);
            }
            if is_msh {
                current = Some(at);
            }
        }
    }
    if let Some(start) = current {
        messages.push(&payload[start..]);
    }
    messages
}
