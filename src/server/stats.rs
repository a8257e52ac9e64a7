//! Running counters of a server, and the plain-JSON snapshot printed on exit.

use crate::ack::AckCode;
use crate::cause::Cause;
use crate::warning::WarningCode;
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::Mutex;

/// A point-in-time copy of the counters. Field names are public.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct StatsSnapshot {
    /// Connections accepted and served (refused ones not included).
    pub connections_accepted: u64,
    /// Accepted and closed at once: `max_connections` were open, the peer's address had its
    /// share, or descriptors ran out (`closed_by_cause` says which).
    pub connections_refused: u64,
    /// Connections open now.
    pub connections_open: u64,
    /// Accepted sockets whose handshake failed.
    pub accept_failed: u64,
    /// Failed accepts (out of descriptors and the like).
    pub accept_errors: u64,
    /// Behind a PROXY-protocol balancer: its own health-check connections (LOCAL headers),
    /// closed without an event.
    pub health_checks: u64,
    /// Closed connections by cause.
    pub closed_by_cause: BTreeMap<&'static str, u64>,
    /// Frames received (messages, inbound ACKs and duplicates included).
    pub messages: u64,
    /// Messages committed (duplicates apart).
    pub committed: u64,
    /// Messages whose commit failed: nothing kept.
    pub commit_failed: u64,
    /// Messages the sink or policy rejected: nothing kept.
    pub rejected: u64,
    /// Answered negatively before the sink: no MSH-10 to name in an ACK, a damaged frame, a
    /// batch not answered per message. Nothing kept.
    pub refused: u64,
    /// Messages found committed before: answered positively, not stored again.
    pub duplicates: u64,
    /// Inbound messages that were themselves ACKs: committed, never answered.
    pub inbound_acks: u64,
    /// Messages left unanswered on purpose (`--ack none`, a silent policy).
    pub unanswered: u64,
    /// ACKs written, by code.
    pub acks_by_code: BTreeMap<&'static str, u64>,
    /// Negative ACKs written, by reason.
    pub nacks_by_reason: BTreeMap<&'static str, u64>,
    /// Warnings, by code.
    pub warnings_by_code: BTreeMap<&'static str, u64>,
    /// Bytes read from peers.
    pub bytes_in: u64,
    /// Bytes of ACKs written to peers.
    pub bytes_out: u64,
    /// With a sink that commits messages in groups (SQLite, PostgreSQL): how many groups, of
    /// what sizes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit_groups: Option<crate::server::sink::CommitGroups>,
}

/// The live counters. Connections count into a local [`StatsSnapshot`] and add it here under
/// one short lock per batch of messages.
#[derive(Debug, Default)]
pub(crate) struct ServerStats(Mutex<Live>);

#[derive(Debug, Default)]
struct Live {
    counters: StatsSnapshot,
    /// The connections' ACK counts, kept as an array (no map lookup per batch) and added to
    /// `acks_by_code` in a snapshot.
    acks: AckTally,
}

impl ServerStats {
    fn lock(&self) -> std::sync::MutexGuard<'_, Live> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub(crate) fn update(&self, f: impl FnOnce(&mut StatsSnapshot)) {
        f(&mut self.lock().counters);
    }

    /// Add a connection's batch counters and its ACK counts, and reset both.
    pub(crate) fn absorb(&self, delta: &mut StatsSnapshot, acks: &mut AckTally) {
        {
            let mut live = self.lock();
            live.counters.absorb(delta);
            for (into, n) in live.acks.0.iter_mut().zip(&mut acks.0) {
                *into += std::mem::take(n);
            }
        }
        delta.reset();
    }

    pub(crate) fn snapshot(&self) -> StatsSnapshot {
        let live = self.lock();
        let mut snapshot = live.counters.clone();
        let mut acks = live.acks;
        drop(live);
        acks.drain_into(&mut snapshot);
        snapshot
    }
}

impl StatsSnapshot {
    /// Add the message counters of `delta` (gathered over one batch without the lock).
    pub(crate) fn absorb(&mut self, delta: &StatsSnapshot) {
        let add = |into: &mut BTreeMap<&'static str, u64>, from: &BTreeMap<&'static str, u64>| {
            for (key, n) in from {
                *into.entry(key).or_default() += n;
            }
        };
        self.messages += delta.messages;
        self.committed += delta.committed;
        self.commit_failed += delta.commit_failed;
        self.rejected += delta.rejected;
        self.refused += delta.refused;
        self.duplicates += delta.duplicates;
        self.inbound_acks += delta.inbound_acks;
        self.unanswered += delta.unanswered;
        self.bytes_in += delta.bytes_in;
        self.bytes_out += delta.bytes_out;
        add(&mut self.acks_by_code, &delta.acks_by_code);
        add(&mut self.nacks_by_reason, &delta.nacks_by_reason);
        add(&mut self.warnings_by_code, &delta.warnings_by_code);
    }

    /// Back to zero. Empty maps are neither freed nor made, as they are for a batch without
    /// negative ACKs or warnings.
    fn reset(&mut self) {
        *self = StatsSnapshot::default();
    }

    pub(crate) fn closed(&mut self, cause: Cause) {
        *self.closed_by_cause.entry(cause.as_str()).or_default() += 1;
    }
    fn acks(&mut self, code: AckCode, n: u64) {
        *self.acks_by_code.entry(code.as_str()).or_default() += n;
    }
    pub(crate) fn nack(&mut self, reason: &'static str) {
        *self.nacks_by_reason.entry(reason).or_default() += 1;
    }
    pub(crate) fn warning(&mut self, code: WarningCode) {
        *self.warnings_by_code.entry(code.as_str()).or_default() += 1;
    }
}

/// ACKs written per code, counted in an array on the per-message path (no map lookup) and added
/// to `acks_by_code` once per batch.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct AckTally([u64; 6]);

impl AckTally {
    pub(crate) fn count(&mut self, code: AckCode) {
        self.0[code as usize] += 1;
    }

    /// Add the counts to `into` and start again from zero.
    pub(crate) fn drain_into(&mut self, into: &mut StatsSnapshot) {
        for (code, n) in AckCode::ALL.iter().zip(&mut self.0) {
            if *n > 0 {
                into.acks(*code, *n);
                *n = 0;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reset_snapshot_is_a_new_one() {
        let mut s = StatsSnapshot {
            messages: 3,
            bytes_in: 9,
            unanswered: 1,
            ..StatsSnapshot::default()
        };
        s.nack("forced");
        s.warning(WarningCode::FrameTooLarge);
        s.closed(Cause::PeerClosed);
        s.reset();
        assert_eq!(s, StatsSnapshot::default());
    }

    #[test]
    fn ack_counts_reach_the_snapshot_by_code_and_start_again() {
        let mut tally = AckTally::default();
        for code in [AckCode::AA, AckCode::CR, AckCode::AA, AckCode::AE] {
            tally.count(code);
        }
        let mut snapshot = StatsSnapshot::default();
        snapshot.acks(AckCode::AA, 1);
        tally.drain_into(&mut snapshot);
        let want = BTreeMap::from([("AA", 3), ("AE", 1), ("CR", 1)]);
        assert_eq!(snapshot.acks_by_code, want);
        tally.drain_into(&mut snapshot);
        assert_eq!(
            snapshot.acks_by_code, want,
            "drained counts are not added twice"
        );
    }
}
