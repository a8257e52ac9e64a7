//! The relay's answer table: what became of a message upstream, and what the downstream peer
//! is told about it. Pass-through passes the upstream's answers on as they came and never claims
//! more than it knows; a message never written upstream is refused (nothing was kept anywhere),
//! and one written but not answered gets no answer at all.

use crate::ack::{AckCode, Disposition};
use crate::cause::Cause;
use crate::client::{Commit, Fate, FateCause};
use crate::framing::Block;
use crate::server::{Reply, SinkResult};
use bytes::Bytes;

/// MSA-3 of the refusal of a message the relay could not hand on.
pub(crate) const UNAVAILABLE_TEXT: &str =
    "Upstream unavailable (upstream-unavailable): nothing kept";

/// MSA-3 of the answer to a message a Release 2 upstream answered with a NAK block.
pub(crate) const NAK_TEXT: &str = "Upstream kept nothing (NAK block)";

/// What became of one message handed upstream, as far as its answers go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Upstream {
    /// No byte of it was written upstream: nothing kept there.
    NotWritten {
        /// Why it was not written.
        cause: String,
    },
    /// The final answer came, positive or negative; in an enhanced exchange, the accept
    /// answer (`CA`) before it.
    Answered {
        /// The accept answer (`CA`) that came first, in an enhanced exchange.
        commit: Option<Bytes>,
        /// The final answer.
        last: Bytes,
    },
    /// The upstream committed it (`CA`); its application answer never came.
    CommitOnly {
        /// The accept answer.
        commit: Bytes,
        /// Why the application answer never came.
        cause: Cause,
    },
    /// Written, and nothing came back: it may or may not be kept upstream.
    Unanswered {
        /// Why no answer came.
        cause: Cause,
    },
}

impl Upstream {
    /// Read a send's fate and, if one came, its `CA`.
    pub(crate) fn from_fate(fate: &Fate, commit: Option<Commit>) -> Upstream {
        let commit = commit.map(|c| c.ack.bytes().clone());
        match fate {
            Fate::Accepted { ack, .. } | Fate::Negative { ack, .. } => {
                let last = ack.bytes().clone();
                // A `CA` that was itself the final answer is passed on once.
                let commit = commit.filter(|c| *c != last);
                Upstream::Answered { commit, last }
            }
            Fate::CommittedOnly { ack, cause, .. } => Upstream::CommitOnly {
                commit: ack.bytes().clone(),
                cause: close_cause(*cause),
            },
            Fate::UnknownFate { cause, .. } => Upstream::Unanswered {
                cause: close_cause(*cause),
            },
            Fate::NeverDelivered { cause } => Upstream::NotWritten {
                cause: cause.as_str().to_string(),
            },
            Fate::Refused { reason } => Upstream::NotWritten {
                cause: reason.as_str().to_string(),
            },
            // Fate is non-exhaustive: an outcome not known here is not claimed as anything.
            #[allow(unreachable_patterns)]
            _ => Upstream::Unanswered {
                cause: Cause::ConnectionLost,
            },
        }
    }
}

/// Why the downstream connection closes when the upstream left a message unanswered: the
/// public cause of the send's fate, so the close says what truly happened upstream.
fn close_cause(cause: FateCause) -> Cause {
    match cause {
        FateCause::Link(cause) => cause,
        FateCause::AppAckTimeout | FateCause::DrainTimeout => Cause::AckTimeout,
        // Written just as the relay gave up waiting for the link: as unknown as an ACK timeout.
        FateCause::Cancelled => Cause::ConnectTimeout,
        // The upstream closed before answering it, each time it was written alone.
        FateCause::Poison => Cause::PeerClosed,
        FateCause::NotMllp(_) | FateCause::PayloadContainsFramingByte => Cause::FramingFatal,
        FateCause::TwoPhaseUnavailable => Cause::FifoUnsafe,
        // The upstream link was closed under it: the relay is stopping.
        FateCause::Closed | FateCause::Destroyed | FateCause::ClientDropped => Cause::Shutdown,
    }
}

/// What the downstream peer is told under pass-through, as the server core's sink result.
pub fn pass_through(upstream: Upstream) -> SinkResult {
    match upstream {
        Upstream::NotWritten { cause } => {
            SinkResult::failed(format!("upstream-unavailable: {cause}"))
                .replying(Reply::Saying(UNAVAILABLE_TEXT))
        }
        Upstream::Answered { commit: None, last } if Block::of(&last).is_some() => {
            match Block::of(&last) {
                // A Release 2 upstream committed it and has no HL7 answer to follow: the
                // relay answers it kept, as its own table says (a commit block, or an AA).
                Some(Block::Commit) => SinkResult::committed(),
                _ => SinkResult::failed("upstream: NAK block").replying(Reply::Saying(NAK_TEXT)),
            }
        }
        Upstream::Answered { commit, last } => relayed(disposition_of(&last), commit, last),
        Upstream::CommitOnly { commit, cause } => SinkResult {
            disposition: Disposition::Committed,
            detail: Some(format!("upstream: no application answer ({cause})")),
            duplicate: false,
            reply: Reply::Relayed {
                acks: vec![commit],
                close: Some(cause),
            },
        },
        Upstream::Unanswered { cause } => SinkResult {
            disposition: Disposition::CommitFailed,
            detail: Some(format!("upstream: no answer ({cause})")),
            duplicate: false,
            reply: Reply::Relayed {
                acks: Vec::new(),
                close: Some(cause),
            },
        },
    }
}

/// [`pass_through`] of a send's `fate` and its `CA`, if one came: the final answer's code is the
/// one the upstream link read from its MSA-1 when it credited the answer, not read again.
pub(crate) fn pass_through_fate(fate: &Fate, commit: Option<Commit>) -> SinkResult {
    let (Fate::Accepted { code, ack, .. } | Fate::Negative { code, ack, .. }) = fate else {
        return pass_through(Upstream::from_fate(fate, commit));
    };
    let last = ack.bytes();
    if Block::of(last).is_some() {
        return pass_through(Upstream::from_fate(fate, commit));
    }
    // A `CA` that was itself the final answer is passed on once.
    let commit = commit.map(|c| c.ack.bytes().clone()).filter(|c| c != last);
    relayed(disposition_of_code(Some(*code)), commit, last.clone())
}

/// The upstream's answers passed on as they came, `commit` first.
fn relayed(disposition: Disposition, commit: Option<Bytes>, last: Bytes) -> SinkResult {
    SinkResult {
        disposition,
        detail: None,
        duplicate: false,
        reply: Reply::Relayed {
            acks: commit.into_iter().chain([last]).collect(),
            close: None,
        },
    }
}

/// The disposition an upstream answer stands for (counted, never used to build an answer).
fn disposition_of(ack: &[u8]) -> Disposition {
    disposition_of_code(crate::hl7::ack_reply(ack).and_then(|(code, _)| AckCode::parse(code)))
}

/// The disposition an upstream answer's MSA-1 stands for.
fn disposition_of_code(code: Option<AckCode>) -> Disposition {
    match code {
        Some(code) if code.is_positive() => Disposition::Committed,
        Some(AckCode::AR | AckCode::CR) => Disposition::Rejected,
        _ => Disposition::CommitFailed,
    }
}

#[cfg(test)]
mod tests;
