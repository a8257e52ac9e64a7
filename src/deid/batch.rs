//! A batch's trailer kept true: when messages of a batch are left out, BTS-1 (the batch's
//! message count) gives the messages written, so the envelope never claims what is not there.

/// `bts` (a BTS segment, its line end kept) appended to `out` with BTS-1 set to `count`; as
/// it is when BTS-1 is empty, since a batch that claimed no count still claims none.
///
/// ```
/// let mut out = Vec::new();
/// mllp::deid::batch_trailer(b"BTS|3|night run\r\n", 2, &mut out);
/// assert_eq!(out, b"BTS|2|night run\r\n");
/// ```
pub fn batch_trailer(bts: &[u8], count: u64, out: &mut Vec<u8>) {
    // The fourth byte is the field separator the batch header declared.
    let field = match bts.get(3) {
        Some(&b) if bts.starts_with(b"BTS") && b != b'\r' && b != b'\n' => b,
        _ => return out.extend_from_slice(bts),
    };
    let from = 4;
    let to = bts[from..]
        .iter()
        .position(|&b| b == field || b == b'\r' || b == b'\n')
        .map_or(bts.len(), |at| from + at);
    if to == from {
        return out.extend_from_slice(bts);
    }
    out.extend_from_slice(&bts[..from]);
    out.extend_from_slice(count.to_string().as_bytes());
    out.extend_from_slice(&bts[to..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trailer(bts: &[u8], count: u64) -> Vec<u8> {
        let mut out = b"kept".to_vec();
        batch_trailer(bts, count, &mut out);
        assert_eq!(&out[..4], b"kept");
        out[4..].to_vec()
    }

    #[test]
    fn the_count_is_the_messages_written_and_nothing_else_changes() {
        assert_eq!(trailer(b"BTS|3\r", 2), b"BTS|2\r");
        assert_eq!(trailer(b"BTS|3", 0), b"BTS|0");
        assert_eq!(
            trailer(b"BTS|1000|note|12^3\r\n", 999),
            b"BTS|999|note|12^3\r\n"
        );
        assert_eq!(trailer(b"BTS#3#x\n", 12), b"BTS#12#x\n");
        // No count claimed, or no field at all: as it was.
        for same in [&b"BTS||note\r"[..], b"BTS\r", b"BTS", b"BTS|\r"] {
            assert_eq!(trailer(same, 5), same);
        }
    }
}
