//! What each warning code means, in one short line for people: the one table the human output
//! words warnings from (JSON keeps the bare code).

use mllp::warning::{Warning, WarningCode};

/// One short line of meaning for `code`.
pub fn meaning(code: WarningCode) -> &'static str {
    use WarningCode as W;
    match code {
        W::MissingLeadingVt => "a frame began without its VT start byte (tolerated)",
        W::FsWithoutCr => "a frame's FS end byte was not followed by CR (tolerated)",
        W::LfAfterFs => "a frame's FS end byte was followed by LF instead of CR (tolerated)",
        W::LeadingWhitespace => "whitespace between frames, before a VT (skipped)",
        W::TrailingBytes => {
            "a VT inside a payload: the bytes before it were discarded, the rest flagged damaged"
        }
        W::EmptyPayload => "an empty frame (VT FS), nothing to deliver",
        W::FrameTooLarge => {
            "a frame over the size limit: dropped, nothing kept (a receiver answers it AR)"
        }
        W::PayloadContainsVt => "a payload holding a VT byte cannot be framed",
        W::PayloadContainsFs => "a payload holding an FS byte cannot be framed",
        W::AckUnmatchedControlId => "an ACK named a control ID no message in flight has",
        W::AckAfterTimeout => "an ACK came for a message that had already timed out",
        W::AckControlIdMismatch => {
            "an ACK's MSA-2 is not the message's MSH-10 (credited in order anyway)"
        }
        W::AckTwoPhaseUnavailable => {
            "two-phase acknowledgement is not available when pairing in order"
        }
        W::AckCommitAlreadyReported => "a repeated commit ACK (CA): it settles nothing",
        W::AckBeforeWrite => "an ACK named a message not yet completely written",
        W::PeerNoPipelining => {
            "the peer does not answer pipelined messages: sending one at a time from now on"
        }
        W::AckMsa1Absent => "an ACK with an empty MSA-1 code: it settles nothing",
        W::AckMsa1Unclassifiable => {
            "an ACK whose MSA-1 is no acknowledgement code: it settles nothing"
        }
        W::ReplyNotAnAck => "a reply with no MSA segment is no usable ACK: it settles nothing",
        W::UnknownAcceptAckType => {
            "an MSH-15 value this receiver does not know: answered as if absent"
        }
        W::TlsVerifyDisabled => "TLS certificate verification is disabled",
        W::BindAllInterfaces => "listening on every interface",
        W::PeerNotMllp2 => {
            "an HL7 ACK came where an MLLP Release 2 commit block was due: the peer speaks \
             Release 1"
        }
        _ => "a tolerated deviation from the protocol",
    }
}

/// `CODE at byte N: meaning`, the human form of a warning.
pub fn human(warning: &Warning) -> String {
    format!("{warning}: {}", meaning(warning.code))
}
