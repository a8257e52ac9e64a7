//! What became of each send: exactly one of six populations, the cause when it was not an
//! answer, and the drain report. ACK bytes travel here for `--print-ack`, never in Debug/Display.

use crate::ack::AckCode;
use crate::cause::Cause;
use bytes::Bytes;
use serde::Serialize;
use std::fmt;
use std::time::{Duration, SystemTime};

/// The ACK payload as received. Debug and Display show only its length.
#[derive(Clone, PartialEq, Eq)]
pub struct AckPayload(Bytes);

impl AckPayload {
    /// Wrap a reply exactly as the peer sent it, unframed.
    pub fn new(bytes: Bytes) -> Self {
        AckPayload(bytes)
    }
    /// The bytes, for output the user asked for (`send --print-ack`).
    pub fn bytes(&self) -> &Bytes {
        &self.0
    }
    /// The reply's length in bytes.
    pub fn len(&self) -> usize {
        self.0.len()
    }
    /// Whether the reply was empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Debug for AckPayload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "AckPayload({} bytes)", self.0.len())
    }
}

/// Why a send ended without a (final) answer. Link causes are the public causes; the others
/// are the client's own reasons.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FateCause {
    /// A public cause (`ack-timeout`, `in-flight-orphan`, `fifo-unsafe`,
    /// `connection-lost`, `unsolicited-ack`, or the link's own failure cause).
    Link(Cause),
    /// The send was cancelled by its caller.
    Cancelled,
    /// `close()` was called before the send was written.
    Closed,
    /// The drain timeout passed before its ACK arrived.
    DrainTimeout,
    /// `destroy()` was called.
    Destroyed,
    /// The client was dropped.
    ClientDropped,
    /// The application ACK did not follow the `CA` in time.
    AppAckTimeout,
    /// The payload contains a framing byte (VT or FS) and cannot be framed.
    PayloadContainsFramingByte,
    /// Its MSH-16 asks for an application ACK, whose second reply FIFO correlation cannot pair.
    TwoPhaseUnavailable,
    /// The peer's first bytes showed it is not an MLLP receiver (an HTTP server, an SSH or
    /// SMTP banner, TLS on a plain link): the public cause is `framing-fatal`.
    NotMllp(crate::sniff::PeerKind),
    /// A poison message: the peer closed the connection before answering it, each of the
    /// last times it was written alone; it is not written again. The public cause is
    /// `peer-closed`.
    Poison,
}

impl FateCause {
    /// Stable name, as used in `cause` fields.
    pub fn as_str(self) -> &'static str {
        match self {
            FateCause::Link(cause) => cause.as_str(),
            FateCause::Cancelled => "cancelled",
            FateCause::Closed => "closed",
            FateCause::DrainTimeout => "drain-timeout",
            FateCause::Destroyed => "destroyed",
            FateCause::ClientDropped => "client-dropped",
            FateCause::AppAckTimeout => "app-ack-timeout",
            FateCause::PayloadContainsFramingByte => "payload-contains-framing-byte",
            FateCause::TwoPhaseUnavailable => "two-phase-unavailable",
            FateCause::NotMllp(kind) => kind.as_str(),
            FateCause::Poison => "poison",
        }
    }
}

impl fmt::Display for FateCause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for FateCause {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// Why backpressure refused a send.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Refusal {
    /// The window was full and the policy is `reject`.
    WindowFull,
    /// The policy is `wait` and no room came within the ACK timeout.
    WaitTimedOut,
}

impl Refusal {
    /// The kebab-case name the outputs use (`window-full`, `wait-timed-out`).
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Refusal::WindowFull => "window-full",
            Refusal::WaitTimedOut => "wait-timed-out",
        }
    }
}

/// The one fate of one send.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Fate {
    /// A positive final answer: `AA`; a `CA` when MSH-16 asks for no application ACK; or a
    /// `CA` whose MSH-16 `ER` window passed without an error.
    Accepted {
        /// `AA`, or `CA` (see above).
        code: AckCode,
        /// The final ACK as received.
        ack: AckPayload,
        /// From the flush of its frame to its final ACK.
        latency: Duration,
    },
    /// The peer answered no: `AE`, `AR`, `CE`, `CR`.
    Negative {
        /// `AE`, `AR`, `CE` or `CR`.
        code: AckCode,
        /// The final ACK as received.
        ack: AckPayload,
        /// From the flush of its frame to its final ACK.
        latency: Duration,
    },
    /// The peer committed it (`CA`); its application ACK never came.
    CommittedOnly {
        /// Why no application ACK came.
        cause: FateCause,
        /// The `CA` as received.
        ack: AckPayload,
        /// From the flush of its frame to the `CA`.
        latency: Duration,
    },
    /// Written, no ACK: it may or may not have been committed.
    UnknownFate {
        /// Why no ACK came.
        cause: FateCause,
        /// Wall-clock time of the (last) flush.
        flushed_at: SystemTime,
        /// From that flush to the moment the fate was decided.
        elapsed: Duration,
        /// Frame bytes written.
        bytes: usize,
    },
    /// No byte of it was written: safe to send again.
    NeverDelivered {
        /// Why it was not written.
        cause: FateCause,
    },
    /// Refused by backpressure before the client took it in.
    Refused {
        /// Which backpressure rule refused it.
        reason: Refusal,
    },
}

/// The six populations. Every send ends in exactly one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Population {
    /// A positive final answer.
    Accepted,
    /// A negative final answer.
    Negative,
    /// Committed (`CA`), application ACK missing.
    CommittedOnly,
    /// Written, unanswered: it may or may not have been kept.
    UnknownFate,
    /// Not a byte of it written.
    NeverDelivered,
    /// Refused by backpressure before the client took it.
    Refused,
}

impl Population {
    /// Every population, in declaration order.
    pub const ALL: [Population; 6] = [
        Population::Accepted,
        Population::Negative,
        Population::CommittedOnly,
        Population::UnknownFate,
        Population::NeverDelivered,
        Population::Refused,
    ];
    /// The kebab-case name the outputs use (`accepted`, `unknown-fate`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Population::Accepted => "accepted",
            Population::Negative => "negative",
            Population::CommittedOnly => "committed-only",
            Population::UnknownFate => "unknown-fate",
            Population::NeverDelivered => "never-delivered",
            Population::Refused => "refused",
        }
    }
}

impl Fate {
    /// Which of the six populations this fate belongs to.
    pub fn population(&self) -> Population {
        match self {
            Fate::Accepted { .. } => Population::Accepted,
            Fate::Negative { .. } => Population::Negative,
            Fate::CommittedOnly { .. } => Population::CommittedOnly,
            Fate::UnknownFate { .. } => Population::UnknownFate,
            Fate::NeverDelivered { .. } => Population::NeverDelivered,
            Fate::Refused { .. } => Population::Refused,
        }
    }

    /// The final ACK code, or `CA` for committed-only.
    pub fn ack_code(&self) -> Option<AckCode> {
        match self {
            Fate::Accepted { code, .. } | Fate::Negative { code, .. } => Some(*code),
            Fate::CommittedOnly { .. } => Some(AckCode::CA),
            _ => None,
        }
    }

    /// The ACK payload, when one arrived.
    pub fn ack(&self) -> Option<&AckPayload> {
        match self {
            Fate::Accepted { ack, .. }
            | Fate::Negative { ack, .. }
            | Fate::CommittedOnly { ack, .. } => Some(ack),
            _ => None,
        }
    }

    /// The cause's stable name, for every population but accepted and negative.
    pub fn cause(&self) -> Option<&'static str> {
        match self {
            Fate::CommittedOnly { cause, .. }
            | Fate::UnknownFate { cause, .. }
            | Fate::NeverDelivered { cause } => Some(cause.as_str()),
            Fate::Refused { reason } => Some(reason.as_str()),
            _ => None,
        }
    }

    /// The public cause, for user-facing `cause` fields: the client's own
    /// reasons fold into the nearest public cause (an app-ACK or drain wait that ran out is
    /// `ack-timeout`; a link taken away after a `CA` is `connection-lost`; a written send the
    /// client was closed over is `in-flight-orphan`, an unwritten one `shutdown`).
    /// [`Fate::cause_detail`] keeps the client's own name.
    pub fn contract_cause(&self) -> Option<&'static str> {
        let (cause, written, committed) = match self {
            Fate::CommittedOnly { cause, .. } => (*cause, true, true),
            Fate::UnknownFate { cause, .. } => (*cause, true, false),
            Fate::NeverDelivered { cause } => (*cause, false, false),
            Fate::Refused { reason } => return Some(reason.as_str()),
            _ => return None,
        };
        let folded = match cause {
            FateCause::Link(cause) => cause,
            FateCause::DrainTimeout | FateCause::AppAckTimeout => Cause::AckTimeout,
            FateCause::PayloadContainsFramingByte | FateCause::NotMllp(_) => Cause::FramingFatal,
            FateCause::TwoPhaseUnavailable => Cause::FifoUnsafe,
            FateCause::Poison => Cause::PeerClosed,
            FateCause::Cancelled
            | FateCause::Closed
            | FateCause::Destroyed
            | FateCause::ClientDropped => match (committed, written) {
                (true, _) => Cause::ConnectionLost,
                (false, true) => Cause::InFlightOrphan,
                (false, false) => Cause::Shutdown,
            },
        };
        Some(folded.as_str())
    }

    /// The client's own reason when [`Fate::contract_cause`] folded it into a public cause
    /// (`app-ack-timeout`, `drain-timeout`, `cancelled`, `closed`, `destroyed`, ...).
    pub fn cause_detail(&self) -> Option<&'static str> {
        match (self.cause(), self.contract_cause()) {
            (Some(own), Some(contract)) if own != contract => Some(own),
            _ => None,
        }
    }

    /// From the flush to the answer, for a fate that had one (accepted, negative, committed-only).
    pub fn latency(&self) -> Option<Duration> {
        match self {
            Fate::Accepted { latency, .. }
            | Fate::Negative { latency, .. }
            | Fate::CommittedOnly { latency, .. } => Some(*latency),
            _ => None,
        }
    }
}

impl fmt::Display for Fate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pop = self.population().as_str();
        match self {
            Fate::Accepted { code, latency, .. } | Fate::Negative { code, latency, .. } => {
                write!(f, "{pop} {code} in {}", crate::duration::Rounded(*latency))
            }
            Fate::UnknownFate {
                cause,
                elapsed,
                bytes,
                ..
            } => write!(
                f,
                "{pop} ({cause}): {bytes} bytes written {} ago",
                crate::duration::Rounded(*elapsed)
            ),
            _ => match self.cause() {
                Some(cause) => write!(f, "{pop} ({cause})"),
                None => f.write_str(pop),
            },
        }
    }
}

/// A send's fate as listed in a drain report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settled {
    /// The send's id ([`super::SendHandle::id`]).
    pub id: u64,
    /// Its fate.
    pub fate: Fate,
}

/// What `close()` or `destroy()` left unresolved, by population.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DrainReport {
    /// Held inside the client, no bytes written: safe to resend.
    pub never_delivered: Vec<Settled>,
    /// Written, no ACK: flush time, elapsed and byte count in each fate.
    pub unknown_fate: Vec<Settled>,
    /// Committed by the peer (`CA`), application ACK lost.
    pub committed_only: Vec<Settled>,
    /// Whether the drain timeout cut the wait short.
    pub timed_out: bool,
    /// Whether a link failure cut the wait short.
    pub link_failed: bool,
}

impl DrainReport {
    /// Nothing was left unresolved (whether or not a timeout or failure cut the wait short).
    pub fn is_clean(&self) -> bool {
        self.never_delivered.is_empty()
            && self.unknown_fate.is_empty()
            && self.committed_only.is_empty()
    }

    pub(crate) fn record(&mut self, id: u64, fate: &Fate) {
        let entry = Settled {
            id,
            fate: fate.clone(),
        };
        match fate.population() {
            Population::NeverDelivered => self.never_delivered.push(entry),
            Population::UnknownFate => self.unknown_fate.push(entry),
            Population::CommittedOnly => self.committed_only.push(entry),
            _ => {}
        }
    }
}
