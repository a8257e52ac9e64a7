//! Unit and property tests of the codec: grammar, warnings and offsets, cap, profiles, chunking.

use super::*;
use proptest::prelude::*;
use WarningCode::*;

/// Decode `stream` in one piece, then end of stream: the items and the error, if any.
fn run(tolerance: Tolerance, stream: &[u8]) -> (Vec<Decoded>, Option<FramingError>) {
    run_capped(tolerance, 1024, stream)
}

fn run_capped(
    tolerance: Tolerance,
    max_frame: usize,
    stream: &[u8],
) -> (Vec<Decoded>, Option<FramingError>) {
    let mut codec = MllpCodec::new(tolerance, max_frame);
    let mut buf = BytesMut::from(stream);
    let mut items = Vec::new();
    loop {
        match codec.decode_eof(&mut buf) {
            Ok(Some(item)) => items.push(item),
            Ok(None) => return (items, None),
            Err(e) => return (items, Some(e)),
        }
    }
}

fn frame(item: &Decoded) -> &Frame {
    match item {
        Decoded::Frame(frame) => frame,
        other => panic!("expected a frame, got {other:?}"),
    }
}

fn late(frame_index: u64, code: WarningCode, at: u64) -> Decoded {
    Decoded::LateWarning {
        frame_index,
        warning: Warning::at(code, at),
    }
}

fn fatal(error: &Option<FramingError>) -> (WarningCode, u64, Option<u8>) {
    match error {
        Some(FramingError::Fatal {
            code,
            byte_offset,
            byte,
        }) => (*code, *byte_offset, *byte),
        other => panic!("expected a fatal error, got {other:?}"),
    }
}

#[test]
fn canonical_frames_decode_with_absolute_offsets() {
    let (items, error) = run(Tolerance::STRICT, b"\x0babc\x1c\x0d\x0bde\x1c\x0d");
    assert!(error.is_none());
    assert_eq!(items.len(), 2);
    let second = frame(&items[1]);
    assert_eq!((second.index, second.offset), (1, 7));
    assert_eq!(&second.payload[..], b"de");
    assert!(second.warnings.is_empty());
}

#[test]
fn leading_whitespace_warns_at_first_whitespace_byte() {
    let (items, error) = run(Tolerance::RECEIVER, b"\x0ba\x1c\x0d \t\r\n\x0bb\x1c\x0d");
    assert!(error.is_none());
    let second = frame(&items[1]);
    assert_eq!(second.warnings, vec![Warning::at(LeadingWhitespace, 4)]);
    assert_eq!(second.offset, 9);
}

#[test]
fn missing_leading_vt_warns_at_first_payload_byte() {
    let tolerance = Tolerance {
        missing_leading_vt: true,
        ..Tolerance::STRICT
    };
    let (items, error) = run(tolerance, b"\x0ba\x1c\x0dMSH\x1c\x0d");
    assert!(error.is_none());
    let second = frame(&items[1]);
    assert_eq!((second.offset, &second.payload[..]), (4, &b"MSH"[..]));
    assert_eq!(second.warnings, vec![Warning::at(MissingLeadingVt, 4)]);
}

#[test]
fn fs_without_cr_is_a_late_warning_at_the_fs() {
    let (items, error) = run(Tolerance::RECEIVER, b"\x0babc\x1c\x0bde\x1c\x0d");
    assert!(error.is_none());
    assert_eq!(frame(&items[0]).warnings, vec![]);
    assert_eq!(items[1], late(0, FsWithoutCr, 4));
    assert_eq!(&frame(&items[2]).payload[..], b"de");
    assert_eq!(items.len(), 3);
}

#[test]
fn fs_only_frame_is_delivered_before_the_terminator_arrives() {
    let mut codec = MllpCodec::new(Tolerance::ACK_READER, 1024);
    let mut buf = BytesMut::from(&b"\x0bACK\x1c"[..]);
    let item = codec.decode(&mut buf).unwrap().expect("frame at its FS");
    assert_eq!(&frame(&item).payload[..], b"ACK");
    assert_eq!(codec.decode(&mut buf).unwrap(), None);
    // A CR arriving later is that frame's terminator, silently.
    buf.extend_from_slice(b"\x0d");
    assert_eq!(codec.decode(&mut buf).unwrap(), None);
    assert_eq!(codec.decode_eof(&mut buf).unwrap(), None);
}

#[test]
fn fs_at_end_of_stream() {
    let (items, error) = run(Tolerance::RECEIVER, b"\x0babc\x1c");
    assert!(error.is_none());
    assert_eq!(items[1], late(0, FsWithoutCr, 4));
    let (items, error) = run(Tolerance::STRICT, b"\x0babc\x1c");
    assert!(items.is_empty());
    assert_eq!(fatal(&error), (FsWithoutCr, 4, Some(FS)));
}

#[test]
fn lf_after_fs_warns_at_the_lf() {
    let (items, error) = run(Tolerance::RECEIVER, b"\x0babc\x1c\n\x0bd\x1c\x0d");
    assert!(error.is_none());
    assert_eq!(items[1], late(0, LfAfterFs, 5));
    assert_eq!(items.len(), 3);
    // Without FS-only tolerance the LF belongs to the frame itself.
    let tolerance = Tolerance {
        lf_after_fs: true,
        ..Tolerance::STRICT
    };
    let (items, error) = run(tolerance, b"\x0babc\x1c\n");
    assert!(error.is_none());
    assert_eq!(frame(&items[0]).warnings, vec![Warning::at(LfAfterFs, 5)]);
}

#[test]
fn vt_mid_payload_delivers_the_remnant_flagged() {
    let (items, error) = run(Tolerance::STRICT, b"\x0bab\x0bcd\x1c\x0d");
    assert!(error.is_none());
    let only = frame(&items[0]);
    assert_eq!((only.offset, &only.payload[..]), (4, &b"cd"[..]));
    assert_eq!(only.warnings, vec![Warning::at(TrailingBytes, 3)]);
    assert!(only.is_damaged());
}

#[test]
fn empty_payload_warns_at_the_fs() {
    let (items, error) = run(Tolerance::STRICT, b"\x0b\x1c\x0d");
    assert!(error.is_none());
    let only = frame(&items[0]);
    assert!(only.payload.is_empty());
    assert_eq!(only.warnings, vec![Warning::at(EmptyPayload, 1)]);
}

#[test]
fn trailing_whitespace_at_end_of_stream_names_the_last_frame() {
    let (items, error) = run(Tolerance::RECEIVER, b"\x0ba\x1c\x0d\r\n");
    assert!(error.is_none());
    assert_eq!(items[1], late(0, LeadingWhitespace, 4));
}

#[test]
fn end_of_stream_inside_a_frame_is_truncated() {
    let (items, error) = run(Tolerance::RECEIVER, b"\x0ba\x1c\x0d\x0bpartial");
    assert_eq!(items.len(), 1);
    assert!(matches!(
        error,
        Some(FramingError::Truncated {
            frame_offset: 5,
            payload_bytes: 7
        })
    ));
}

#[test]
fn cap_fires_at_the_first_byte_past_it_without_waiting_for_fs() {
    let mut codec = MllpCodec::new(Tolerance::RECEIVER, 4);
    let mut buf = BytesMut::from(&b"\x0b1234"[..]);
    assert_eq!(codec.decode(&mut buf).unwrap(), None);
    buf.extend_from_slice(b"5");
    let error = codec.decode(&mut buf).unwrap_err();
    assert_eq!(fatal(&Some(error)), (FrameTooLarge, 5, Some(b'5')));
    // Exactly the cap is fine.
    let (items, error) = run_capped(Tolerance::STRICT, 4, b"\x0b1234\x1c\x0d");
    assert!(error.is_none());
    assert_eq!(frame(&items[0]).payload.len(), 4);
}

#[test]
fn cap_counts_the_remnant_after_a_mid_payload_vt() {
    let (items, error) = run_capped(Tolerance::STRICT, 4, b"\x0b123\x0b1234\x1c\x0d");
    assert!(error.is_none());
    assert_eq!(frame(&items[0]).payload.len(), 4);
}

#[test]
fn profiles_differ_as_documented() {
    let leading_ws = b"\r\n\x0ba\x1c\x0d";
    assert_eq!(
        fatal(&run(Tolerance::STRICT, leading_ws).1).0,
        LeadingWhitespace
    );
    assert!(run(Tolerance::RECEIVER, leading_ws).1.is_none());
    assert_eq!(
        fatal(&run(Tolerance::ACK_READER, leading_ws).1),
        (LeadingWhitespace, 0, Some(CR))
    );

    let fs_only = b"\x0ba\x1c\x0bb\x1c\x0d";
    assert_eq!(
        fatal(&run(Tolerance::STRICT, fs_only).1),
        (FsWithoutCr, 2, Some(FS))
    );
    assert!(run(Tolerance::RECEIVER, fs_only).1.is_none());
    assert!(run(Tolerance::ACK_READER, fs_only).1.is_none());

    let lf = b"\x0ba\x1c\n";
    assert_eq!(
        fatal(&run(Tolerance::STRICT, lf).1),
        (LfAfterFs, 3, Some(LF))
    );
    assert!(run(Tolerance::RECEIVER, lf).1.is_none());
    assert!(run(Tolerance::ACK_READER, lf).1.is_none());

    let no_vt = b"MSH|\x1c\x0d";
    for tolerance in [
        Tolerance::STRICT,
        Tolerance::RECEIVER,
        Tolerance::ACK_READER,
    ] {
        assert_eq!(
            fatal(&run(tolerance, no_vt).1),
            (MissingLeadingVt, 0, Some(b'M'))
        );
    }
}

#[test]
fn frames_before_a_fatal_byte_are_delivered_first() {
    let (items, error) = run(
        Tolerance::STRICT,
        b"\x0ba\x1c\x0d\x0bb\x1c\x0dX\x0bc\x1c\x0d",
    );
    assert_eq!(items.len(), 2);
    assert_eq!(fatal(&error), (MissingLeadingVt, 8, Some(b'X')));
}

#[test]
fn fatal_is_final() {
    let mut codec = MllpCodec::new(Tolerance::STRICT, 1024);
    let mut buf = BytesMut::from(&b"X"[..]);
    let first = codec.decode(&mut buf).unwrap_err().to_string();
    buf.extend_from_slice(b"\x0bgood\x1c\x0d");
    assert_eq!(codec.decode(&mut buf).unwrap_err().to_string(), first);
    assert_eq!(codec.decode_eof(&mut buf).unwrap_err().to_string(), first);
    assert!(buf.is_empty(), "a failed decoder holds no bytes");
}

#[test]
fn debug_shows_payload_length_not_bytes() {
    let (items, _) = run(Tolerance::STRICT, b"\x0bSECRET\x1c\x0d");
    let shown = format!("{:?}", items[0]);
    assert!(!shown.contains("SECRET"), "{shown}");
    assert!(shown.contains("payload_len: 6"), "{shown}");
}

#[test]
fn encoder_refuses_framing_bytes() {
    let mut dst = BytesMut::new();
    let refused = encode_frame(b"ab\x0bc", &mut dst).unwrap_err();
    assert_eq!((refused.code, refused.position), (PayloadContainsVt, 2));
    let refused = encode_frame(b"\x1c", &mut dst).unwrap_err();
    assert_eq!((refused.code, refused.position), (PayloadContainsFs, 0));
    assert!(dst.is_empty());
    let mut codec = MllpCodec::new(Tolerance::STRICT, 16);
    codec.encode(Bytes::from_static(b"ok"), &mut dst).unwrap();
    codec.encode(&b"ok"[..], &mut dst).unwrap();
    assert_eq!(&dst[..], b"\x0bok\x1c\x0d\x0bok\x1c\x0d");
    let refused = Encoder::<&[u8]>::encode(&mut codec, b"\x0b", &mut dst).unwrap_err();
    assert!(matches!(refused, EncoderError::Refused(_)));
}

proptest! {
    #[test]
    fn encode_then_decode_is_the_identity(
        payloads in proptest::collection::vec(
            proptest::collection::vec(any::<u8>().prop_filter("no VT/FS", |b| *b != VT && *b != FS), 0..64),
            0..6,
        ),
    ) {
        let mut wire = BytesMut::new();
        let mut codec = MllpCodec::new(Tolerance::STRICT, 64);
        for payload in &payloads {
            codec.encode(&payload[..], &mut wire).unwrap();
        }
        let (items, error) = run_capped(Tolerance::STRICT, 64, &wire);
        prop_assert!(error.is_none());
        let decoded: Vec<&[u8]> = items.iter().map(|item| &frame(item).payload[..]).collect();
        let expected: Vec<&[u8]> = payloads.iter().map(|p| &p[..]).collect();
        prop_assert_eq!(decoded, expected);
    }
}

/// Discarding oversize frames: the frame past the cap arrives as its head with
/// `MLLP_FRAME_TOO_LARGE`, whatever the chunking, and the next frame is decoded as usual.
#[test]
fn an_oversize_frame_is_delivered_as_its_head_and_the_stream_goes_on() {
    let mut stream = vec![VT, b'a', b'b', CR];
    stream.extend(std::iter::repeat_n(b'x', 100));
    stream.extend([FS, CR, VT, b'o', b'k', FS, CR]);
    for chunk in [1, 7, stream.len()] {
        let mut codec = MllpCodec::new(Tolerance::RECEIVER, 10).discarding_oversize();
        let mut buf = BytesMut::new();
        let mut items = Vec::new();
        for piece in stream.chunks(chunk) {
            buf.extend_from_slice(piece);
            while let Some(item) = codec.decode(&mut buf).unwrap() {
                items.push(item);
            }
            assert!(buf.len() <= 10 + chunk, "bytes past the cap are not kept");
        }
        let frames: Vec<_> = items.iter().map(frame).collect();
        assert_eq!(frames.len(), 2, "chunks of {chunk}");
        assert_eq!(
            &frames[0].payload[..],
            b"ab\r",
            "whole segments of the head"
        );
        assert_eq!(frames[0].warnings, vec![Warning::at(FrameTooLarge, 11)]);
        assert_eq!(&frames[1].payload[..], b"ok");
        assert!(frames[1].warnings.is_empty());
        assert_eq!(frames[1].index, 1);
        assert!(codec.between_frames());
    }
}

proptest! {
    #[test]
    fn holds_framing_byte_is_a_search_for_vt_or_fs(
        bytes in proptest::collection::vec(
            prop_oneof![Just(VT), Just(FS), Just(0u8), Just(0x8B), Just(0x9C), any::<u8>()],
            0..40,
        ),
    ) {
        let model = bytes.iter().any(|&b| b == VT || b == FS);
        prop_assert_eq!(holds_framing_byte(&bytes), model, "{:?}", bytes);
    }
}

proptest! {
    #[test]
    fn a_frame_closed_in_place_is_the_encoded_frame_or_nothing(
        before in proptest::collection::vec(any::<u8>(), 0..8),
        payload in proptest::collection::vec(
            prop_oneof![Just(VT), Just(FS), Just(CR), any::<u8>()],
            0..40,
        ),
    ) {
        let mut encoded = BytesMut::from(&before[..]);
        let want = encode_frame(&payload, &mut encoded);
        let mut dst = before.clone();
        dst.push(VT);
        dst.extend_from_slice(&payload);
        let got = close_frame(&mut dst, before.len(), false);
        prop_assert_eq!(&got, &want);
        prop_assert_eq!(&dst[..], &encoded[..], "the frame, or what was there before it");
    }
}
