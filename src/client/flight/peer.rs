//! Engines as they are: what a connection shows of the peer (frames written, answers, replies
//! naming other control IDs, first bytes that are not MLLP) and what the run learns from it (the
//! peer does not answer pipelined frames, or closes after each answer).

use super::Flights;
use crate::cause::Cause;
use crate::client::life::End;
use crate::client::outbox::Outbox;
use crate::client::pending::Written;
use crate::sniff::PeerKind;
use crate::warning::WarningCode;
use std::time::Duration;
use tokio::time::Instant;

/// A peer that closes after each answer closes at once: after an answer, the next frame waits
/// this long for the close, so it goes on the next connection instead of behind the answered
/// one, where the peer would never read it.
pub(crate) const CLOSE_GRACE: Duration = Duration::from_millis(250);

/// The peer does not echo MSH-10 (`ack-control-id-mismatch`): every one of the `written` frames
/// of a connection had a reply naming another control ID and no reply credited one. `send` and
/// `probe` both judge by it.
pub(crate) fn ignores_control_ids(written: u64, credited: u32, unmatched: u32) -> bool {
    written > 0 && credited == 0 && u64::from(unmatched) >= written
}

/// What the current connection showed.
#[derive(Debug, Default)]
pub(crate) struct Here {
    /// Frames written on it.
    pub written: u64,
    /// Replies that credited a send (settled it, or reported its commit).
    pub answers: u32,
    /// The write order of the latest frame credited.
    pub answered_seq: u64,
    /// Replies naming no control ID in flight.
    pub unmatched: u32,
    /// FIFO: the peer showed it dropped pipelined frames; the written ones go again on the
    /// next connection.
    pub rewrite_written: bool,
    /// The peer's first bytes showed it is not MLLP.
    pub foreign: Option<PeerKind>,
    /// No frame is written before then (see [`CLOSE_GRACE`]).
    pub hold_until: Option<Instant>,
}

/// What the run learned of the peer.
#[derive(Debug, Default)]
pub(crate) struct Learned {
    /// It does not answer pipelined frames: one message at a time from now on.
    pub one_at_a_time: bool,
    /// It closed the connection right after its first answer.
    pub closes_after_answer: bool,
}

impl Flights {
    fn adapts(&self) -> bool {
        self.options.adapt_to_peer
    }

    /// Whether one frame at a time goes (pipeline off, or the peer showed it needs that).
    pub(super) fn one_at_a_time(&self) -> bool {
        !self.options.pipeline || self.peer.one_at_a_time
    }

    /// Whether the next write waits for the peer's close (see [`CLOSE_GRACE`]).
    pub(super) fn holding(&self, now: Instant) -> bool {
        self.here.hold_until.is_some_and(|at| now < at)
    }

    /// Go one message at a time for the rest of the run, saying so once.
    fn fall_back(&mut self, out: &Outbox) {
        if self.options.pipeline && !self.peer.one_at_a_time {
            self.peer.one_at_a_time = true;
            out.warn(WarningCode::PeerNoPipelining, None);
        }
    }

    /// A reply credited the send written as `written`.
    pub(super) fn credited(&mut self, written: Option<Written>, now: Instant) {
        self.here.answers += 1;
        let link = self.link;
        if let Some(w) = written {
            if w.link == link {
                self.here.answered_seq = self.here.answered_seq.max(w.seq);
            }
        }
        // One at a time, the next frame would go right behind this answer: after the first
        // answer of a connection (and after every answer once the peer closed after one), it
        // waits a moment for the close of a peer that answers one message per connection.
        let first = self.here.answers == 1;
        if self.adapts() && self.one_at_a_time() && (first || self.peer.closes_after_answer) {
            self.here.hold_until = Some(now + CLOSE_GRACE);
        }
    }

    /// The hold passed without a close: the peer keeps this connection open after all.
    pub(super) fn hold_passed(&mut self, now: Instant) {
        if self.here.hold_until.is_some_and(|at| at <= now) {
            self.here.hold_until = None;
            self.peer.closes_after_answer = false;
        }
    }

    /// A reply named no control ID in flight. Once every frame written here had one and none
    /// matched, the peer does not echo MSH-10: waiting for ACK timeouts would tell nothing more.
    pub(super) fn unmatched(&mut self) -> Option<End> {
        // A stray reply before anything was written answers none of ours.
        if self.here.written == 0 {
            return None;
        }
        self.here.unmatched += 1;
        (self.adapts()
            && ignores_control_ids(self.here.written, self.here.answers, self.here.unmatched))
        .then_some(End::Failed(Cause::AckControlIdMismatch))
    }

    /// The peer's first bytes showed it is not MLLP.
    pub fn not_mllp(&mut self, kind: PeerKind) {
        self.here.foreign = Some(kind);
    }

    /// An ACK timeout of a frame pipelined behind others: when the peer answered some other
    /// frame here, earlier or later, it drops frames that came with another in one read (a
    /// later frame answered alone proves it skipped this one). `true` when that is what
    /// happened (the link then goes one at a time).
    pub(super) fn dropped_pipelined(&mut self, out: &Outbox, pipelined: bool) -> bool {
        let evidence = self.adapts() && !self.one_at_a_time() && pipelined && self.here.answers > 0;
        if evidence {
            self.fall_back(out);
        }
        evidence
    }

    /// The link dropped with `cause`. When the peer closed it after answering, the frames
    /// written after the last one answered were never read: their place in the write order
    /// starts after the returned one. A close after the first answer, with frames behind it,
    /// shows a peer that answers one message per connection.
    pub(super) fn peer_closed_after(&mut self, out: &Outbox, cause: Cause) -> Option<u64> {
        let closed = matches!(cause, Cause::PeerClosed | Cause::ConnectionReset);
        if !self.adapts() || !closed || self.here.answers == 0 {
            return None;
        }
        let after = self.here.answered_seq;
        if self.here.answers == 1 && self.here.written > after {
            self.peer.closes_after_answer = true;
            self.fall_back(out);
        }
        Some(after)
    }
}
