//! Fuzz target bodies, kept in the library so the corpus also replays as ordinary tests.
//! Not a stable interface.

mod header_ack;
pub use header_ack::header_and_ack;

use crate::framing::{encode_frame, Decoded, MllpCodec, Tolerance, DEFAULT_MAX_FRAME, FS, VT};
use bytes::BytesMut;
use tokio_util::codec::Decoder;

/// What a decoder yields for a stream: items, then at most one error (as its message).
pub type DecodeOutcome = Vec<Result<Decoded, String>>;

/// Feed `chunks` one by one to a fresh decoder, then signal end of stream.
pub fn decode_chunks<'a>(
    tolerance: Tolerance,
    max_frame: usize,
    chunks: impl IntoIterator<Item = &'a [u8]>,
) -> DecodeOutcome {
    let mut codec = MllpCodec::new(tolerance, max_frame);
    let mut buf = BytesMut::new();
    let mut out = Vec::new();
    for chunk in chunks {
        buf.extend_from_slice(chunk);
        loop {
            match codec.decode(&mut buf) {
                Ok(Some(item)) => out.push(Ok(item)),
                Ok(None) => break,
                Err(e) => {
                    out.push(Err(e.to_string()));
                    return out;
                }
            }
        }
    }
    loop {
        match codec.decode_eof(&mut buf) {
            Ok(Some(item)) => out.push(Ok(item)),
            Ok(None) => return out,
            Err(e) => {
                out.push(Err(e.to_string()));
                return out;
            }
        }
    }
}

/// Split `stream` into chunks whose lengths come from a small generator seeded by `seed`.
pub fn split_by_seed(stream: &[u8], seed: u8) -> Vec<&[u8]> {
    let mut state = u32::from(seed) | 0x100;
    let max_len = usize::from(seed % 23) + 1;
    let mut chunks = Vec::new();
    let mut rest = stream;
    while !rest.is_empty() {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        let len = (state as usize % max_len + 1).min(rest.len());
        let (head, tail) = rest.split_at(len);
        chunks.push(head);
        rest = tail;
    }
    chunks
}

/// Decoder target. Byte 0 picks the tolerance (low 4 bits) and the frame cap (high 4 bits),
/// byte 1 the chunking; the rest is the stream.
pub fn decode(data: &[u8]) {
    let [config, seed, stream @ ..] = data else {
        return;
    };
    let tolerance = Tolerance {
        fs_without_cr: config & 1 != 0,
        lf_after_fs: config & 2 != 0,
        leading_whitespace: config & 4 != 0,
        missing_leading_vt: config & 8 != 0,
    };
    let max_frame = match config >> 4 {
        15 => DEFAULT_MAX_FRAME,
        n => usize::from(n) * 3,
    };

    let whole = decode_chunks(tolerance, max_frame, [stream]);
    check_invariants(stream, max_frame, &whole);
    let seeded = decode_chunks(tolerance, max_frame, split_by_seed(stream, *seed));
    assert_eq!(whole, seeded, "seeded chunking changed the outcome");
    let bytewise = decode_chunks(tolerance, max_frame, stream.chunks(1));
    assert_eq!(whole, bytewise, "byte-by-byte chunking changed the outcome");

    // Strict writer, strict reader: the identity on anything without VT or FS.
    let payload: Vec<u8> = stream
        .iter()
        .copied()
        .filter(|&b| b != VT && b != FS)
        .collect();
    let mut wire = BytesMut::new();
    encode_frame(&payload, &mut wire).expect("payload without VT/FS is refused");
    let echoed = decode_chunks(Tolerance::STRICT, payload.len(), [&wire[..]]);
    match echoed.as_slice() {
        [Ok(Decoded::Frame(frame))] => assert_eq!(frame.payload, payload),
        other => panic!("round trip yielded {} items", other.len()),
    }
}

fn check_invariants(stream: &[u8], max_frame: usize, outcome: &DecodeOutcome) {
    let mut frames = 0u64;
    let mut last_offset = 0u64;
    let mut next_payload_from = 0u64;
    let mut note = |offset: u64| {
        assert!(offset < stream.len() as u64, "offset past the stream");
        assert!(offset >= last_offset, "offsets went backwards");
        last_offset = offset;
    };
    for item in outcome {
        match item {
            Ok(Decoded::Frame(frame)) => {
                assert_eq!(frame.index, frames, "frame indices are consecutive");
                frames += 1;
                assert!(frame.offset >= next_payload_from, "frames overlap");
                let start = usize::try_from(frame.offset).expect("offset fits");
                let end = start + frame.payload.len();
                assert_eq!(
                    &stream[start..end],
                    &frame.payload[..],
                    "payload is the stream's bytes"
                );
                assert!(frame.payload.len() <= max_frame, "payload over the cap");
                assert!(memchr::memchr2(VT, FS, &frame.payload).is_none());
                next_payload_from = end as u64;
                for warning in &frame.warnings {
                    note(warning.byte_offset.expect("framing warnings carry offsets"));
                }
            }
            Ok(Decoded::LateWarning {
                frame_index,
                warning,
            }) => {
                assert!(
                    *frame_index < frames.max(1),
                    "late warning names a later frame"
                );
                note(warning.byte_offset.expect("framing warnings carry offsets"));
            }
            Err(_) => {}
        }
    }
    let errors = outcome.iter().filter(|item| item.is_err()).count();
    assert!(errors <= 1, "decoding continued after an error");
    if errors == 1 {
        assert!(outcome.last().is_some_and(Result::is_err), "error is last");
    }
}
