//! The stable, public warning codes, and a warning as it travels: a code and a byte offset.

use serde::Serialize;
use std::fmt;

/// Stable codes. The strings are part of the public interface: never rename one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[non_exhaustive]
pub enum WarningCode {
    /// A payload began without its VT; offset: its first byte.
    #[serde(rename = "MLLP_MISSING_LEADING_VT")]
    MissingLeadingVt,
    /// The FS was not followed by CR; offset: the FS.
    #[serde(rename = "MLLP_FS_WITHOUT_CR")]
    FsWithoutCr,
    /// The FS was followed by LF instead of CR; offset: the LF.
    #[serde(rename = "MLLP_LF_AFTER_FS")]
    LfAfterFs,
    /// SP, HT, CR or LF between frames, before a VT; offset: the first of them.
    #[serde(rename = "MLLP_LEADING_WHITESPACE")]
    LeadingWhitespace,
    /// A VT inside a payload: the part before it is discarded, the rest delivered and flagged
    /// damaged ([`Frame::is_damaged`](crate::framing::Frame::is_damaged)); offset: that VT.
    #[serde(rename = "MLLP_TRAILING_BYTES")]
    TrailingBytes,
    /// `VT FS`: a frame with an empty payload.
    #[serde(rename = "MLLP_EMPTY_PAYLOAD")]
    EmptyPayload,
    /// A frame over the size limit or the receiver's buffer budget: fatal for the connection.
    #[serde(rename = "MLLP_FRAME_TOO_LARGE")]
    FrameTooLarge,
    /// A payload holding a VT, which cannot be framed.
    #[serde(rename = "MLLP_PAYLOAD_CONTAINS_VT")]
    PayloadContainsVt,
    /// A payload holding an FS, which cannot be framed.
    #[serde(rename = "MLLP_PAYLOAD_CONTAINS_FS")]
    PayloadContainsFs,
    /// An ACK naming a control ID no message awaiting an answer has: credits nothing.
    #[serde(rename = "MLLP_ACK_UNMATCHED_CONTROL_ID")]
    AckUnmatchedControlId,
    /// An ACK for a message that already timed out: credits nothing.
    #[serde(rename = "MLLP_ACK_AFTER_TIMEOUT")]
    AckAfterTimeout,
    /// In FIFO correlation, an ACK whose MSA-2 is not the message's MSH-10: still credited.
    #[serde(rename = "MLLP_ACK_CONTROL_ID_MISMATCH")]
    AckControlIdMismatch,
    /// A send asking for two acknowledgement phases on a FIFO client, which cannot pair them:
    /// refused.
    #[serde(rename = "MLLP_ACK_TWO_PHASE_UNAVAILABLE")]
    AckTwoPhaseUnavailable,
    /// A second `CA` for a message whose commit was already reported: it settles nothing.
    #[serde(rename = "MLLP_ACK_COMMIT_ALREADY_REPORTED")]
    AckCommitAlreadyReported,
    /// A reply naming a message not yet completely written on this connection: credited to none.
    #[serde(rename = "MLLP_ACK_BEFORE_WRITE")]
    AckBeforeWrite,
    /// The peer does not answer pipelined frames (or closes after each answer): the link goes
    /// one message at a time for the rest of the run.
    #[serde(rename = "MLLP_PEER_NO_PIPELINING")]
    PeerNoPipelining,
    /// A reply whose MSA-1 is empty: no answer to credit.
    #[serde(rename = "MLLP_ACK_MSA1_ABSENT")]
    AckMsa1Absent,
    /// A reply whose MSA-1 is not a code of HL7 Table 0008: no answer to credit.
    #[serde(rename = "MLLP_ACK_MSA1_UNCLASSIFIABLE")]
    AckMsa1Unclassifiable,
    /// A reply with no readable MSA segment (an HL7 message that is no ACK, or not HL7 at all):
    /// nothing to credit.
    #[serde(rename = "MLLP_REPLY_NOT_AN_ACK")]
    ReplyNotAnAck,
    /// MSH-15 holds a value outside HL7 Table 0155; answered as if absent.
    #[serde(rename = "MLLP_UNKNOWN_ACCEPT_ACK_TYPE")]
    UnknownAcceptAckType,
    /// Certificate verification is off for a TLS connection (a security warning).
    #[serde(rename = "MLLP_TLS_VERIFY_DISABLED")]
    TlsVerifyDisabled,
    /// A listener bound to a wildcard address, all interfaces (a security warning).
    #[serde(rename = "MLLP_BIND_ALL_INTERFACES")]
    BindAllInterfaces,
    /// Bytes of a message shown as text that its character set (MSH-18, or the one chosen)
    /// cannot decode: shown escaped (`\Xhh\`), never dropped.
    #[serde(rename = "MLLP_TEXT_NOT_IN_CHARSET")]
    TextNotInCharset,
    /// MSH-18 names a character set that is not known: the text is read as UTF-8.
    #[serde(rename = "MLLP_CHARSET_UNKNOWN")]
    CharsetUnknown,
    /// An HL7 acknowledgement where an MLLP Release 2 commit block was due: the peer speaks
    /// Release 1.
    #[serde(rename = "MLLP_PEER_NOT_MLLP2")]
    PeerNotMllp2,
}

impl WarningCode {
    /// The stable code string, e.g. `MLLP_FS_WITHOUT_CR`; the same as its serialized form.
    pub fn as_str(self) -> &'static str {
        match self {
            WarningCode::MissingLeadingVt => "MLLP_MISSING_LEADING_VT",
            WarningCode::FsWithoutCr => "MLLP_FS_WITHOUT_CR",
            WarningCode::LfAfterFs => "MLLP_LF_AFTER_FS",
            WarningCode::LeadingWhitespace => "MLLP_LEADING_WHITESPACE",
            WarningCode::TrailingBytes => "MLLP_TRAILING_BYTES",
            WarningCode::EmptyPayload => "MLLP_EMPTY_PAYLOAD",
            WarningCode::FrameTooLarge => "MLLP_FRAME_TOO_LARGE",
            WarningCode::PayloadContainsVt => "MLLP_PAYLOAD_CONTAINS_VT",
            WarningCode::PayloadContainsFs => "MLLP_PAYLOAD_CONTAINS_FS",
            WarningCode::AckUnmatchedControlId => "MLLP_ACK_UNMATCHED_CONTROL_ID",
            WarningCode::AckAfterTimeout => "MLLP_ACK_AFTER_TIMEOUT",
            WarningCode::AckControlIdMismatch => "MLLP_ACK_CONTROL_ID_MISMATCH",
            WarningCode::AckTwoPhaseUnavailable => "MLLP_ACK_TWO_PHASE_UNAVAILABLE",
            WarningCode::AckCommitAlreadyReported => "MLLP_ACK_COMMIT_ALREADY_REPORTED",
            WarningCode::AckBeforeWrite => "MLLP_ACK_BEFORE_WRITE",
            WarningCode::PeerNoPipelining => "MLLP_PEER_NO_PIPELINING",
            WarningCode::AckMsa1Absent => "MLLP_ACK_MSA1_ABSENT",
            WarningCode::AckMsa1Unclassifiable => "MLLP_ACK_MSA1_UNCLASSIFIABLE",
            WarningCode::ReplyNotAnAck => "MLLP_REPLY_NOT_AN_ACK",
            WarningCode::UnknownAcceptAckType => "MLLP_UNKNOWN_ACCEPT_ACK_TYPE",
            WarningCode::TlsVerifyDisabled => "MLLP_TLS_VERIFY_DISABLED",
            WarningCode::BindAllInterfaces => "MLLP_BIND_ALL_INTERFACES",
            WarningCode::TextNotInCharset => "MLLP_TEXT_NOT_IN_CHARSET",
            WarningCode::CharsetUnknown => "MLLP_CHARSET_UNKNOWN",
            WarningCode::PeerNotMllp2 => "MLLP_PEER_NOT_MLLP2",
        }
    }
}

impl fmt::Display for WarningCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A tolerated deviation: what it was and where. Never carries payload bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Warning {
    /// What the deviation was.
    pub code: WarningCode,
    /// 0-based offset in the connection's inbound byte stream, when the warning is about bytes.
    pub byte_offset: Option<u64>,
}

impl Warning {
    /// A warning about the byte at `byte_offset` of the inbound stream.
    pub fn at(code: WarningCode, byte_offset: u64) -> Self {
        Warning {
            code,
            byte_offset: Some(byte_offset),
        }
    }

    /// A warning not tied to a byte of the stream.
    pub fn new(code: WarningCode) -> Self {
        Warning {
            code,
            byte_offset: None,
        }
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.byte_offset {
            Some(offset) => write!(f, "{} at byte {}", self.code, offset),
            None => write!(f, "{}", self.code),
        }
    }
}
