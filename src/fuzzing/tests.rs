//! The fuzz target bodies as property tests: the decoder's outcome under any chunking, and the
//! header scanner and ACK builder on header-like bytes.

use super::*;
use crate::framing::{CR, LF};
use proptest::prelude::*;

fn any_tolerance() -> impl Strategy<Value = Tolerance> {
    (any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>()).prop_map(|(a, b, c, d)| {
        Tolerance {
            fs_without_cr: a,
            lf_after_fs: b,
            leading_whitespace: c,
            missing_leading_vt: d,
        }
    })
}

/// Streams made of frame-ish pieces, so that deviations are common and not only noise.
fn stream() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        4 => proptest::collection::vec(b'A'..=b'Z', 0..12)
            .prop_map(|p| [&[VT][..], &p, &[FS, CR]].concat()),
        1 => Just(vec![VT]),
        1 => Just(vec![FS]),
        1 => Just(vec![CR]),
        1 => Just(vec![LF]),
        1 => Just(vec![b' ']),
        1 => proptest::collection::vec(any::<u8>(), 1..6),
    ];
    proptest::collection::vec(piece, 0..12).prop_map(|pieces| pieces.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn every_chunking_yields_the_same_items(
        stream in stream(),
        tolerance in any_tolerance(),
        max_frame in prop_oneof![Just(4usize), Just(11), Just(DEFAULT_MAX_FRAME)],
        seed in any::<u8>(),
        cuts in proptest::collection::vec(any::<usize>(), 0..8),
    ) {
        let whole = decode_chunks(tolerance, max_frame, [&stream[..]]);
        prop_assert_eq!(&whole, &decode_chunks(tolerance, max_frame, stream.chunks(1)));
        prop_assert_eq!(&whole, &decode_chunks(tolerance, max_frame, split_by_seed(&stream, seed)));
        let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (stream.len() + 1)).collect();
        cuts.sort_unstable();
        let mut pieces = Vec::new();
        let mut from = 0;
        for cut in cuts.into_iter().chain([stream.len()]) {
            pieces.push(&stream[from..cut]);
            from = cut;
        }
        prop_assert_eq!(&whole, &decode_chunks(tolerance, max_frame, pieces));
    }

    #[test]
    fn fuzz_body_holds_on_random_bytes(data in proptest::collection::vec(
        prop_oneof![Just(VT), Just(FS), Just(CR), Just(LF), Just(b' '), Just(b'A'), any::<u8>()],
        0..80,
    )) {
        decode(&data);
    }

    #[test]
    fn fuzz_invariants_hold_on_header_like_bytes(
        tail in proptest::collection::vec(
            prop::sample::select(b"MSHACKBTFE|^~\\&!#\r\n 012".to_vec()),
            0..80,
        ),
    ) {
        let mut data = b"MSH".to_vec();
        data.extend_from_slice(&tail);
        header_and_ack(&data);
        header_and_ack(&tail);
    }
}
