//! Fuzz target bodies, kept in the library (behind the `fuzzing` feature) so the corpus also
//! replays as ordinary tests.
//! Not a stable interface.

mod header_ack;
mod reader;
pub use header_ack::header_and_ack;
pub use reader::read_message;

use crate::framing::{encode_frame, Decoded, MllpCodec, Tolerance, DEFAULT_MAX_FRAME, FS, VT};
use bytes::BytesMut;
use tokio_util::codec::Decoder;

/// What a decoder yields for a stream: items, then at most one error (as its message).
pub(crate) type DecodeOutcome = Vec<Result<Decoded, String>>;

/// Feed `chunks` one by one to a fresh decoder, then signal end of stream.
pub(crate) fn decode_chunks<'a>(
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
pub(crate) fn split_by_seed(stream: &[u8], seed: u8) -> Vec<&[u8]> {
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

/// What the input splitter yields: (index, line, offset, payload) per message, then at most one
/// error (as its message).
pub(crate) type SplitOutcome = Vec<Result<(u64, u64, u64, Vec<u8>), String>>;

/// A reader handing out `chunks` one per read.
struct ChunkReader<'a> {
    chunks: std::vec::IntoIter<&'a [u8]>,
    current: &'a [u8],
}

impl std::io::Read for ChunkReader<'_> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        while self.current.is_empty() {
            match self.chunks.next() {
                Some(chunk) => self.current = chunk,
                None => return Ok(0),
            }
        }
        let n = out.len().min(self.current.len());
        out[..n].copy_from_slice(&self.current[..n]);
        self.current = &self.current[n..];
        Ok(n)
    }
}

/// Split `chunks` (read one per read, through a buffer of `buffer` bytes) with `options`.
pub(crate) fn split_chunks(
    options: crate::input::SplitOptions,
    buffer: usize,
    chunks: Vec<&[u8]>,
) -> SplitOutcome {
    let reader = ChunkReader {
        chunks: chunks.into_iter(),
        current: &[],
    };
    let reader = std::io::BufReader::with_capacity(buffer.max(1), reader);
    crate::input::Splitter::new("fuzz", reader, options)
        .map(|item| {
            item.map(|m| (m.index, m.line, m.offset, m.payload.to_vec()))
                .map_err(|e| e.to_string())
        })
        .collect()
}

/// Input splitter target. Byte 0: bit 0 raw, bit 1 batch, high 4 bits the maximum message
/// size; byte 1 the chunking; the rest is the input. The same messages come out under any
/// chunking, none empty, none holding VT or FS.
pub fn split_input(data: &[u8]) {
    let [config, seed, stream @ ..] = data else {
        return;
    };
    let options = crate::input::SplitOptions {
        raw: config & 1 != 0,
        batch: config & 2 != 0,
        max_message: match config >> 4 {
            15 => crate::input::DEFAULT_MAX_MESSAGE,
            n => usize::from(n) * 7 + 1,
        },
    };
    let whole = split_chunks(options, stream.len(), vec![stream]);
    let seeded = split_chunks(
        options,
        usize::from(*seed % 7) + 1,
        split_by_seed(stream, *seed),
    );
    assert_eq!(whole, seeded, "seeded chunking changed the outcome");
    let bytewise = split_chunks(options, 1, stream.chunks(1).collect());
    assert_eq!(whole, bytewise, "byte-by-byte chunking changed the outcome");

    let errors = whole.iter().filter(|item| item.is_err()).count();
    assert!(errors <= 1, "splitting continued after an error");
    assert!(
        errors == 0 || whole.last().is_some_and(Result::is_err),
        "error is last"
    );
    let mut last_offset = None;
    for (n, (index, _line, offset, payload)) in whole.iter().flatten().enumerate() {
        assert_eq!(*index, n as u64 + 1, "indices are consecutive from 1");
        assert!(!payload.is_empty(), "empty message");
        assert!(payload.len() <= options.max_message, "message over the cap");
        assert!(
            memchr::memchr2(VT, FS, payload).is_none(),
            "VT or FS in a message"
        );
        assert!(last_offset < Some(*offset), "offsets go forward");
        last_offset = Some(*offset);
        let head = &payload[..payload.len().min(3)];
        assert!(
            head == b"MSH" || (options.batch && (head == b"FHS" || head == b"BHS")),
            "message starts with a header segment"
        );
        if !options.raw {
            assert!(payload.ends_with(b"\r"), "normalised message ends with CR");
            assert!(!payload.contains(&b'\n'), "normalised message holds no LF");
            assert!(
                !payload.windows(2).any(|w| w == b"\r\r"),
                "empty segment kept"
            );
        }
    }
}

#[cfg(test)]
mod tests;
