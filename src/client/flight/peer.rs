//! Engines as they are: what a connection shows of the peer (frames written, answers, replies
//! naming other control IDs, first bytes that are not MLLP, a close before an answer) and what
//! the run learns from it (the peer does not answer pipelined frames, or closes after each
//! answer, or chokes on one message: a poison message).
//!
//! A close with the oldest written frame unanswered proves nothing by itself: the peer may
//! answer one message per connection, or that message may be one it cannot take. The next
//! connection is careful: it writes that message alone, then the rest as before (by control ID;
//! in FIFO, where a written message is not written again, it writes one message at a time until
//! the first answer, after a close that followed answers). Answered, and the connection closes
//! right after, the peer closes after each answer: one message at a time from then on. Closed
//! before its answer each time it was written alone, the message is a poison message.

use super::Flights;
use crate::cause::Cause;
use crate::client::life::LinkEnd;
use crate::client::options::Correlation;
use crate::client::outbox::Outbox;
use crate::client::pending::Written;
use crate::sniff::PeerKind;
use crate::warning::WarningCode;
use std::time::Duration;
use tokio::time::Instant;

/// A peer that closes after each answer closes at once: after an answer, the next frame waits
/// this long for the close, so it goes on the next connection instead of behind the answered
/// one, where the peer would never read it. Only where a written frame may not be written again
/// (FIFO), or once the peer showed the habit.
pub(crate) const CLOSE_GRACE: Duration = Duration::from_millis(250);

/// How long the evidence that the peer does not echo MSH-10 must stand, with no reply naming a
/// message, before the link stops (at most the ACK timeout): a late or repeated ACK of an
/// earlier message just ahead of the right one is not that evidence.
pub(crate) const MISMATCH_GRACE: Duration = Duration::from_secs(1);

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
    /// The peer's first bytes showed it is not MLLP.
    pub foreign: Option<PeerKind>,
    /// No frame is written before then (see [`CLOSE_GRACE`]).
    pub hold_until: Option<Instant>,
    /// The last connection closed with its oldest frame unanswered: this one writes the
    /// suspect alone first (FIFO: one frame at a time until its first answer).
    pub careful: bool,
    /// When the link stops for `ack-control-id-mismatch`, if the evidence still stands then.
    pub mismatch_at: Option<Instant>,
    /// MLLP Release 2: blocks received (block `k` answers the `k`-th frame written).
    pub blocks: u64,
    /// MLLP Release 2: commit blocks owed for the peer's messages, written with the next write.
    pub owed_blocks: u32,
}

/// What the run learned of the peer.
#[derive(Debug, Default)]
pub(crate) struct Learned {
    /// It does not answer pipelined frames: one message at a time from now on.
    pub one_at_a_time: bool,
    /// It closed the connection right after its first answer.
    pub closes_after_answer: bool,
    /// The next connection is careful (see [`Here::careful`]).
    pub careful_next: bool,
    /// The send written alone on the next connection, first: the oldest one unanswered when the
    /// peer last closed.
    pub suspect: Option<u64>,
}

impl Flights {
    fn adapts(&self) -> bool {
        self.options.adapt_to_peer
    }

    /// Whether one frame at a time goes (pipeline off, the peer showed it needs that, or a
    /// careful connection has not had its answer yet).
    pub(super) fn one_at_a_time(&self) -> bool {
        !self.options.pipeline || self.peer.one_at_a_time || self.careful_now() || self.release2()
    }

    fn careful_now(&self) -> bool {
        if !self.here.careful {
            return false;
        }
        match self.peer.suspect {
            Some(id) => self.sends.get(&id).is_some_and(|p| p.commit.is_none()),
            None => self.here.answers == 0,
        }
    }

    /// Whether the next write waits for the peer's close (see [`CLOSE_GRACE`]).
    pub(super) fn holding(&self, now: Instant) -> bool {
        self.here.hold_until.is_some_and(|at| now < at)
    }

    /// A new connection: careful if the last one closed with its oldest frame unanswered.
    pub(super) fn begin_here(&mut self) {
        self.here = Here {
            careful: std::mem::take(&mut self.peer.careful_next),
            ..Here::default()
        };
    }

    /// Go one message at a time for the rest of the run, saying so once.
    fn fall_back(&mut self, out: &Outbox) {
        if self.options.pipeline && !self.peer.one_at_a_time {
            self.peer.one_at_a_time = true;
            out.warn(WarningCode::PeerNoPipelining, None);
        }
    }

    /// A reply credited send `id`, written as `written`.
    pub(super) fn credited(&mut self, id: u64, written: Option<Written>, now: Instant) {
        self.here.answers += 1;
        if self.peer.suspect == Some(id) {
            self.peer.suspect = None;
        }
        let link = self.link;
        if let Some(w) = written {
            if w.link == link {
                self.here.answered_seq = self.here.answered_seq.max(w.seq);
            }
        }
        // The next frame would go right behind this answer. Where a written frame may not go
        // again (FIFO: one at a time, or the first answer of a careful connection), and
        // wherever the peer showed it closes after each answer, it waits a moment for the
        // close of a peer that answers one message per connection.
        let first = self.here.answers == 1;
        let fifo = self.options.correlation == Correlation::Fifo;
        let habit = self.peer.closes_after_answer && self.one_at_a_time();
        let unrepeatable = fifo && first && (!self.options.pipeline || self.here.careful);
        if self.adapts() && (habit || unrepeatable) {
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
    /// matched, the peer does not echo MSH-10: the link stops unless a reply naming a message
    /// comes within the grace.
    pub(super) fn unmatched(&mut self, now: Instant) {
        // A stray reply before anything was written answers none of ours.
        if self.here.written == 0 {
            return;
        }
        self.here.unmatched += 1;
        if self.adapts() && self.ignores_control_ids() && self.here.mismatch_at.is_none() {
            // No later than the first ACK deadline: the verdict says more than the timeout.
            self.prune_flight();
            let first_deadline = self.flight.front().and_then(|slot| slot.deadline);
            let grace = now + MISMATCH_GRACE.min(self.options.ack_timeout);
            self.here.mismatch_at = Some(first_deadline.map_or(grace, |d| d.min(grace)));
        }
    }

    fn ignores_control_ids(&self) -> bool {
        ignores_control_ids(self.here.written, self.here.answers, self.here.unmatched)
    }

    /// The mismatch grace is over: `Some` when the evidence still stands.
    pub(super) fn mismatch_verdict(&mut self, now: Instant) -> Option<LinkEnd> {
        if self.here.mismatch_at.is_none_or(|at| at > now) {
            return None;
        }
        self.here.mismatch_at = None;
        self.ignores_control_ids()
            .then_some(LinkEnd::Failed(Cause::AckControlIdMismatch))
    }

    /// The peer's first bytes showed it is not MLLP.
    pub(crate) fn not_mllp(&mut self, kind: PeerKind) {
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

    /// The link dropped with `cause`: what the close says of the peer. Returns where in this
    /// connection's write order the frames the peer never read start (after the last frame it
    /// answered), and the send to give up on as a poison message, if any.
    pub(super) fn peer_closed(
        &mut self,
        out: &Outbox,
        cause: Cause,
        now: Instant,
    ) -> (Option<u64>, Option<u64>) {
        let closed = matches!(cause, Cause::PeerClosed | Cause::ConnectionReset);
        if !self.adapts() || !closed {
            return (None, None);
        }
        let after = (self.here.answers > 0).then_some(self.here.answered_seq);
        // A careful connection closed right after its first answer (frames behind it, or within
        // the hold): the peer answers one message per connection.
        let behind = self.here.written > self.here.answered_seq || self.holding(now);
        if self.here.careful && self.here.answers == 1 && behind {
            self.peer.closes_after_answer = true;
            self.fall_back(out);
            return (after, None);
        }
        let Some(oldest) = self.oldest_unanswered() else {
            return (after, None);
        };
        if !self.rewrites_written() {
            // FIFO: the oldest ends unknown fate; after answers, the next connection learns
            // whether the peer closes after each (a peer that answers nothing teaches nothing).
            self.peer.careful_next = self.here.answers > 0;
            return (after, None);
        }
        self.peer.careful_next = true;
        let Some(p) = self.sends.get_mut(&oldest) else {
            return (after, None);
        };
        // Written alone: the one frame written on this connection (a message written just
        // behind an answer may meet a close the peer had decided on before it came). Closed in
        // order, as a peer closes after reading what it cannot take; not reset, as a proxy
        // resets what it cannot pass on while the engine behind it is down.
        let alone = p
            .written
            .is_some_and(|w| w.seq == 1 && self.here.written == 1);
        if alone && cause == Cause::PeerClosed {
            p.poison_closes += 1;
        }
        if p.poison_closes >= self.options.max_poison_closes {
            self.peer.suspect = None;
            self.peer.careful_next = false;
            return (after, Some(oldest));
        }
        self.peer.suspect = Some(oldest);
        (after, None)
    }

    /// The drop settled the suspect (its budget was spent): the next connection need not wait
    /// for it.
    pub(super) fn forget_settled_suspect(&mut self) {
        if self
            .peer
            .suspect
            .is_some_and(|id| !self.sends.contains_key(&id))
        {
            self.peer.suspect = None;
            self.peer.careful_next = false;
        }
    }

    /// The oldest frame written here still waiting for its first answer.
    fn oldest_unanswered(&self) -> Option<u64> {
        self.flight.iter().find_map(|slot| {
            self.sends
                .get(&slot.id)
                .filter(|p| p.commit.is_none() && p.written.is_some_and(|w| w.link == self.link))
                .map(|_| slot.id)
        })
    }

    /// Whether a written send may be written again after a drop: by control ID, or in FIFO
    /// when asked for (`at_least_once`).
    pub(super) fn rewrites_written(&self) -> bool {
        self.options.correlation == Correlation::ControlId || self.options.at_least_once
    }
}
