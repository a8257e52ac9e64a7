//! Acknowledgement building that can never lie: the code follows MSH-15 and the commit outcome,
//! and is downgraded whenever the inbound cannot be correlated or was damaged.

use crate::warning::WarningCode;
use serde::Serialize;
use std::fmt;

/// HL7 Table 0008.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum AckCode {
    AA,
    AE,
    AR,
    CA,
    CE,
    CR,
}

impl AckCode {
    pub fn as_str(self) -> &'static str {
        match self {
            AckCode::AA => "AA",
            AckCode::AE => "AE",
            AckCode::AR => "AR",
            AckCode::CA => "CA",
            AckCode::CE => "CE",
            AckCode::CR => "CR",
        }
    }
    pub fn parse(bytes: &[u8]) -> Option<AckCode> {
        match bytes {
            b"AA" => Some(AckCode::AA),
            b"AE" => Some(AckCode::AE),
            b"AR" => Some(AckCode::AR),
            b"CA" => Some(AckCode::CA),
            b"CE" => Some(AckCode::CE),
            b"CR" => Some(AckCode::CR),
            _ => None,
        }
    }
    pub fn is_positive(self) -> bool {
        matches!(self, AckCode::AA | AckCode::CA)
    }
    /// An accept (commit) acknowledgement code: CA, CE, CR.
    pub fn is_commit_level(self) -> bool {
        matches!(self, AckCode::CA | AckCode::CE | AckCode::CR)
    }
}

impl fmt::Display for AckCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What became of the inbound at the receiver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Disposition {
    Committed,
    CommitFailed,
    Rejected,
}

/// Why a positive code was not given. Reason strings are public.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum NackReason {
    HandlerRejected,
    UncorrelatableInbound,
    DiscardedBytes,
}

impl NackReason {
    pub fn as_str(self) -> &'static str {
        match self {
            NackReason::HandlerRejected => "handler-rejected",
            NackReason::UncorrelatableInbound => "uncorrelatable-inbound",
            NackReason::DiscardedBytes => "discarded-bytes",
        }
    }
}

/// Inputs the builder cannot derive from the inbound.
#[derive(Debug, Clone, Default)]
pub struct AckContext {
    /// MSH-10 of the ACK itself (must be fresh per ACK).
    pub control_id: String,
    /// MSH-7 of the ACK, `YYYYMMDDHHMMSS` style.
    pub timestamp: String,
    /// MSA-3 text for a negative ACK; a fixed phrase, never payload content.
    pub text: Option<String>,
    /// Force this code (testing); still bound by the commit contract and the downgrades.
    pub forced: Option<AckCode>,
}

/// A built acknowledgement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuiltAck {
    pub payload: Vec<u8>,
    pub code: AckCode,
    /// Set when the answer is non-positive for a reason other than a plain commit failure.
    pub reason: Option<NackReason>,
    pub warnings: Vec<WarningCode>,
}

/// Build the accept-level answer to `inbound`. `None` when the inbound is itself an ACK.
/// `damaged` is true when the frame carried `MLLP_TRAILING_BYTES`.
pub fn build_ack(
    inbound: &[u8],
    disposition: Disposition,
    damaged: bool,
    ctx: &AckContext,
) -> Option<BuiltAck> {
    let _ = (inbound, disposition, damaged, ctx);
    todo!("ack::build_ack")
}
