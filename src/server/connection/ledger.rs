//! A connection's identity and what it has to tell: its counters since they were last added to
//! the server's, and the events noted since they were last sent.

use crate::ack::{AckCode, Disposition};
use crate::server::event::{NackWhy, ServerEvent};
use crate::server::stats::{AckTally, StatsSnapshot};
use crate::server::Shared;
use crate::warning::Warning;
use std::sync::Arc;

/// Who the connection is, and its counters and events on their way to the server's.
pub(super) struct Ledger<'a> {
    shared: &'a Shared,
    id: u64,
    peer: Arc<str>,
    /// This connection's counters since they were last added to the server's.
    tally: StatsSnapshot,
    /// ACKs written since the tally was last added to the server's.
    acks: AckTally,
    /// Events noted since they were last sent.
    pending: Vec<ServerEvent>,
}

impl<'a> Ledger<'a> {
    pub(super) fn new(shared: &'a Shared, id: u64, peer: Arc<str>) -> Ledger<'a> {
        Ledger {
            shared,
            id,
            peer,
            tally: StatsSnapshot::default(),
            acks: AckTally::default(),
            pending: Vec::new(),
        }
    }

    pub(super) fn id(&self) -> u64 {
        self.id
    }

    pub(super) fn peer(&self) -> &Arc<str> {
        &self.peer
    }

    pub(super) fn bytes_in(&mut self, n: usize) {
        self.tally.bytes_in += n as u64;
    }

    pub(super) fn bytes_out(&mut self, n: u64) {
        self.tally.bytes_out += n;
    }

    /// A message the connection does not answer (silenced, no ACKs to pass on, `--ack none`).
    pub(super) fn unanswered(&mut self) {
        self.tally.unanswered += 1;
    }

    /// An inbound message that is itself an ACK: kept like any message, never answered.
    pub(super) fn inbound_ack(&mut self) {
        self.tally.inbound_acks += 1;
    }

    /// An ACK written (or passed on) with `code`.
    pub(super) fn ack(&mut self, code: AckCode) {
        self.acks.count(code);
    }

    /// A negative ACK written, and why: counted, and told as an event.
    pub(super) fn nack(&mut self, ack_code: AckCode, why: NackWhy) {
        self.tally.nack(why.as_str());
        self.note(ServerEvent::Nack {
            connection: self.id,
            ack_code,
            why,
        });
    }

    /// One message's fate: `refused` when it was answered without reaching the sink.
    pub(super) fn message(&mut self, disposition: Disposition, refused: bool, duplicate: bool) {
        let s = &mut self.tally;
        s.messages += 1;
        match disposition {
            // Answered negatively without reaching the sink: nothing failed, it was refused.
            _ if refused => s.refused += 1,
            Disposition::Committed if duplicate => s.duplicates += 1,
            Disposition::Committed => s.committed += 1,
            Disposition::CommitFailed => s.commit_failed += 1,
            Disposition::Rejected => s.rejected += 1,
        }
    }

    pub(super) fn warn(&mut self, warning: Warning) {
        self.tally.warning(warning.code);
        self.note(ServerEvent::Warning {
            connection: self.id,
            warning,
        });
    }

    /// Whether the per-message events are wanted at all: the caller can skip building them.
    pub(super) fn per_message(&self) -> bool {
        self.shared.events.per_message()
    }

    /// Hold `event` until [`Ledger::send_events`]: one batch's events go out together.
    pub(super) fn note(&mut self, event: ServerEvent) {
        if self.shared.events.wants(&event) {
            self.pending.push(event);
        }
    }

    pub(super) async fn send_events(&mut self) {
        if !self.pending.is_empty() {
            self.shared.events.emit_all(&mut self.pending).await;
        }
    }

    /// Add this connection's counters to the server's, under one lock.
    pub(super) fn settle(&mut self) {
        self.shared.stats.absorb(&mut self.tally, &mut self.acks);
    }
}
