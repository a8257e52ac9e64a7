//! The probe's answer under MLLP Release 2: a commit or NAK block is the answer, and an HL7
//! acknowledgement where a block was due names a Release 1 peer.

use super::record::{failure, healthy};
use super::report::Verdict;
use crate::cause::{Cause, Hint};
use crate::framing::{Block, Release};
use crate::hl7::scan_ack;

/// What `payload`, read where the answer was due, says under `release`: `Ok` for a block
/// (Release 2), `Err` for an HL7 ACK where a block was due, `None` when Release 1 reads it.
pub(super) fn answer(release: Release, payload: &[u8]) -> Option<Result<Verdict, Verdict>> {
    if release != Release::Two {
        return None;
    }
    if let Some(block) = Block::of(payload) {
        return Some(Ok(blocked(block)));
    }
    scan_ack(payload).map(|_| {
        Err(failure(
            Cause::PeerNotMllp2,
            "the peer answered with an HL7 ACK where an MLLP Release 2 commit block was due",
            Cause::PeerNotMllp2.hint(),
        ))
    })
}

fn blocked(block: Block) -> Verdict {
    let (code, mut verdict) = match block {
        Block::Commit => (
            "CA",
            healthy(
                "the peer committed the message (MLLP Release 2 commit block)",
                Hint::Prose("MLLP Release 2 works end to end"),
            ),
        ),
        Block::Nak => (
            "CE",
            healthy(
                "the link works, but the peer kept nothing of the message (MLLP Release 2 NAK \
                 block)",
                Hint::Prose("check the receiver's logs for why it refused the message"),
            ),
        ),
    };
    verdict.ack_code = Some(code.into());
    verdict
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_answers_only_under_release_2() {
        let ack = b"MSH|^~\\&|A|B|C|D|20240101||ACK|1|P|2.5\rMSA|AA|X\r";
        assert!(answer(Release::One, &[0x06]).is_none());
        assert!(answer(Release::One, ack).is_none());
        let commit = answer(Release::Two, &[0x06]).unwrap().unwrap();
        assert_eq!(commit.ack_code.as_deref(), Some("CA"));
        let nak = answer(Release::Two, &[0x15]).unwrap().unwrap();
        assert_eq!(nak.ack_code.as_deref(), Some("CE"));
        let r1 = answer(Release::Two, ack).unwrap().unwrap_err();
        assert_eq!(r1.cause, Some(Cause::PeerNotMllp2));
        assert!(answer(Release::Two, b"not an ack").is_none());
    }
}
