//! MLLP Release 2: the one-byte blocks a receiver answers each frame with (`VT ACK FS CR` once
//! committed, `VT NAK FS CR` when nothing was kept), and which release a link speaks.

use super::{CR, FS, VT};

/// Which MLLP release a link speaks; the two never mix on one connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Release {
    /// Release 1: every frame is answered by an HL7 acknowledgement, or by nothing.
    #[default]
    One,
    /// Release 2: every frame is answered by a [`Block`]; an HL7 acknowledgement, when the
    /// exchange has one, follows as an ordinary message, itself answered by a block.
    Two,
}

/// A Release 2 answer block. It names no message: blocks answer frames in the order the frames
/// were written on their connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Block {
    /// `VT 0x06 FS CR`: the frame is committed.
    Commit,
    /// `VT 0x15 FS CR`: nothing of the frame was kept.
    Nak,
}

/// The payload byte of a commit block.
pub(crate) const ACK_BYTE: u8 = 0x06;
/// The payload byte of a negative block.
pub(crate) const NAK_BYTE: u8 = 0x15;

impl Block {
    /// The block a de-framed payload is, if it is one: exactly its one byte.
    pub fn of(payload: &[u8]) -> Option<Block> {
        match payload {
            [ACK_BYTE] => Some(Block::Commit),
            [NAK_BYTE] => Some(Block::Nak),
            _ => None,
        }
    }

    /// The block as it goes on the wire, framing included.
    pub fn wire(self) -> &'static [u8] {
        match self {
            Block::Commit => &[VT, ACK_BYTE, FS, CR],
            Block::Nak => &[VT, NAK_BYTE, FS, CR],
        }
    }

    /// Its name as JSON and the text output give it.
    pub fn as_str(self) -> &'static str {
        match self {
            Block::Commit => "commit",
            Block::Nak => "nak",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::framing::{Decoded, MllpCodec, Tolerance, DEFAULT_MAX_FRAME};
    use bytes::BytesMut;
    use tokio_util::codec::Decoder;

    #[test]
    fn each_block_reads_back_as_itself_and_nothing_else_is_a_block() {
        for block in [Block::Commit, Block::Nak] {
            let mut wire = BytesMut::from(block.wire());
            let mut reader = MllpCodec::new(Tolerance::ACK_READER, DEFAULT_MAX_FRAME);
            let Some(Decoded::Frame(frame)) = reader.decode(&mut wire).unwrap() else {
                panic!("a whole block was given");
            };
            assert_eq!(Block::of(&frame.payload), Some(block));
        }
        for payload in [&b""[..], b"\x06\x06", b"\x06\r", b"MSH|", b"\x07", b" \x15"] {
            assert_eq!(Block::of(payload), None, "{payload:?}");
        }
    }
}
