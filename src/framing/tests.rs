//! Unit and property tests of the codec: grammar, warnings and offsets, cap, profiles, chunking.

use super::*;

fn decode_all(
    tolerance: Tolerance,
    max_frame: usize,
    stream: &[u8],
) -> Vec<Result<Decoded, String>> {
    let mut codec = MllpCodec::new(tolerance, max_frame);
    let mut buf = BytesMut::from(stream);
    let mut out = Vec::new();
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

#[test]
fn canonical_frames_decode() {
    let out = decode_all(Tolerance::STRICT, 100, b"\x0babc\x1c\x0d\x0bde\x1c\x0d");
    assert_eq!(out.len(), 2);
    let Ok(Decoded::Frame(f)) = &out[1] else {
        panic!("{out:?}")
    };
    assert_eq!((f.index, f.offset, &f.payload[..]), (1, 7, &b"de"[..]));
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
    #[test]
    fn fuzz_body_holds_on_random_streams(data in proptest::collection::vec(
        proptest::prop_oneof![
            proptest::prelude::Just(VT), proptest::prelude::Just(FS), proptest::prelude::Just(CR),
            proptest::prelude::Just(LF), proptest::prelude::Just(b' '), proptest::prelude::Just(b'A'),
            proptest::num::u8::ANY,
        ],
        0..80,
    )) {
        crate::fuzzing::decode(&data);
    }
}
