//! Property test: the splitter's output does not depend on how the reader chunks the input.

use super::*;
use proptest::prelude::*;
use std::io;

/// Index, line, offset and payload of one message.
type Seen = (u64, u64, u64, Vec<u8>);

fn outcome(data: &[u8], sizes: Vec<usize>, options: SplitOptions) -> Vec<Result<Seen, String>> {
    let reader = io::BufReader::with_capacity(
        sizes[0].max(1),
        Chunky {
            data,
            sizes,
            turn: 0,
        },
    );
    Splitter::new("p", reader, options)
        .map(|r| {
            r.map(|m| (m.index, m.line, m.offset, m.payload.to_vec()))
                .map_err(|e| e.to_string())
        })
        .collect()
}

fn hl7ish() -> impl Strategy<Value = Vec<u8>> {
    let pieces = prop::sample::select(vec![
        b"MSH|^~\\&|A|B\r".to_vec(),
        b"MSH|^~\\&|C\n".to_vec(),
        b"PID|1||x\r\n".to_vec(),
        b"FHS|^~\\&\r".to_vec(),
        b"BHS|^~\\&\r".to_vec(),
        b"BTS|1\r".to_vec(),
        b"FTS|1\n".to_vec(),
        b"\x0b".to_vec(),
        b"\x1c\r".to_vec(),
        b"\r\n".to_vec(),
        b"  \n".to_vec(),
        b"x".to_vec(),
    ]);
    prop::collection::vec(pieces, 0..24).prop_map(|v| v.concat())
}

proptest! {
    #[test]
    fn splitting_is_independent_of_chunking(
        data in hl7ish(),
        sizes in prop::collection::vec(1usize..7, 1..8),
        raw: bool,
        batch: bool,
    ) {
        let options = SplitOptions { raw, batch, max_message: 64 };
        let whole = outcome(&data, vec![data.len().max(1)], options);
        let chunked = outcome(&data, sizes, options);
        prop_assert_eq!(&whole, &chunked);
        for (_, _, _, payload) in whole.iter().flatten() {
            prop_assert!(!payload.is_empty());
            prop_assert!(!payload.contains(&0x0b) && !payload.contains(&0x1c));
        }
    }
}
