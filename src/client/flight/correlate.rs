//! ACK correlation (by control ID or FIFO, enhanced two-phase mode) and which send holds a
//! control ID.

use super::Flights;
use crate::ack::AckCode;
use crate::cause::Cause;
use crate::client::fate::{AckPayload, Fate};
use crate::client::life::LinkEnd;
use crate::client::options::Correlation;
use crate::client::outbox::Outbox;
use crate::client::pending::{AppAck, Pending};
use crate::client::recent::CidMap;
use crate::client::Commit;
use crate::hl7;
use crate::warning::WarningCode;
use bytes::Bytes;
use std::collections::hash_map::Entry;
use std::sync::atomic::Ordering;
use tokio::time::Instant;

impl Flights {
    /// One inbound frame on the client: an ACK to credit, or a warning. `Some` ends the link.
    pub(crate) fn on_ack(
        &mut self,
        out: &mut Outbox,
        payload: Bytes,
        offset: u64,
        now: Instant,
    ) -> Option<LinkEnd> {
        let at = Some(offset);
        let ack = AckPayload::new(payload);
        // A reply without a readable MSA cannot be credited to any send: say so, and let the
        // ACK timeout decide. MSA-2 is read in place: only looked up, never kept.
        let Some((code, msa2)) = hl7::ack_reply(ack.bytes()) else {
            out.warn(WarningCode::ReplyNotAnAck, at);
            return None;
        };
        // Neither settles anything: the reply says nothing that could be credited.
        let code = match AckCode::parse(code) {
            Some(code) => code,
            None if code.is_empty() => {
                out.warn(WarningCode::AckMsa1Absent, at);
                return None;
            }
            None => {
                out.warn(WarningCode::AckMsa1Unclassifiable, at);
                return None;
            }
        };
        let progress = self.write_progress.load(Ordering::Relaxed);
        let id = match self.options.correlation {
            Correlation::Fifo => match self.fifo_reply(out, msa2, at, progress) {
                Ok(id) => id,
                Err(end) => return end,
            },
            Correlation::ControlId => {
                let (cid, id) = self.take_control_id(out, msa2, at, now)?;
                return self.control_id_reply(out, (cid, id), (code, ack), at, progress, now);
            }
        };
        let p = self.sends.remove(&id)?;
        if let Some(cid) = &p.control_id {
            self.release_control_id(cid, id);
        }
        self.credit(out, p, code, ack, now);
        None
    }

    /// In FIFO mode: the send a reply answers, the oldest awaiting one; `Err` when the reply
    /// settles nothing (with `Some` when it ends the link).
    fn fifo_reply(
        &mut self,
        out: &mut Outbox,
        msa2: &[u8],
        at: Option<u64>,
        progress: usize,
    ) -> Result<u64, Option<LinkEnd>> {
        let head = self.flight.front().copied();
        let matches = head
            .and_then(|slot| self.sends.get(&slot.id))
            .is_some_and(|p| p.control_id.as_deref() == Some(msa2));
        // A reply naming a message this run already settled, on this connection or an
        // earlier one: a repeat (some receivers answer every earlier message again with
        // each new one) or a stale reply from before a reconnect. Crediting it to the
        // send at its place would report a delivery its receiver never confirmed.
        if !matches && self.settled_ids.contains(msa2) {
            out.warn(WarningCode::AckUnmatchedControlId, at);
            return Err(None);
        }
        // A reply naming a message written after the oldest one awaiting answers out of
        // order, and a reply while nothing written awaits one answers what the peer has
        // not read: pairing in order would credit the wrong message, and every later one.
        let awaiting = head.filter(|slot| {
            self.sends
                .get(&slot.id)
                .is_none_or(|p| p.written_on(self.link, progress))
        });
        if !matches && self.names_a_later_one(msa2) {
            // A peer that answered frames here before and now names a later one skipped
            // the oldest: it drops what comes with another frame in one read. What it
            // dropped goes again, one at a time, on the next connection.
            let pipelined = head
                .and_then(|slot| self.sends.get(&slot.id))
                .and_then(|p| p.written)
                .is_some_and(|w| w.pipelined);
            if self.dropped_pipelined(out, pipelined) {
                return Err(Some(LinkEnd::Failed(Cause::AckTimeout)));
            }
            return Err(Some(LinkEnd::Failed(Cause::UnsolicitedAck)));
        }
        if awaiting.is_none() {
            return Err(Some(LinkEnd::Failed(Cause::UnsolicitedAck)));
        }
        let Some(slot) = awaiting else {
            return Err(None);
        };
        self.flight.pop_front();
        // A cancelled send's slot: its ACK is consumed here, credited to no one.
        if !self.sends.contains_key(&slot.id) {
            return Err(None);
        }
        if !matches {
            out.warn(WarningCode::AckControlIdMismatch, at);
        }
        Ok(slot.id)
    }

    /// In control-ID mode: the control ID a reply names and the send holding it, taken out of
    /// the map at once: the reply settles that send (the usual case) and its settling gives the
    /// ID up; put back when it does not. `None` (after a warning) when no send holds it.
    fn take_control_id(
        &mut self,
        out: &mut Outbox,
        msa2: &[u8],
        at: Option<u64>,
        now: Instant,
    ) -> Option<(Bytes, u64)> {
        // Taken out of the map at once: the reply settles the send that holds the ID
        // (the usual case) and its settling gives the ID up; put back when it does not.
        let entry = self.by_control.remove_entry(msa2);
        if entry.is_none() {
            let code = if self.late.contains(msa2) {
                WarningCode::AckAfterTimeout
            } else {
                WarningCode::AckUnmatchedControlId
            };
            out.warn(code, at);
            if code == WarningCode::AckUnmatchedControlId {
                self.unmatched(now);
            }
        }
        entry
    }

    /// In control-ID mode: the reply to send `id`, holding control ID `cid`: a commit ACK noted
    /// while the application ACK is awaited, or a final reply credited.
    fn control_id_reply(
        &mut self,
        out: &mut Outbox,
        (cid, id): (Bytes, u64),
        (code, ack): (AckCode, AckPayload),
        at: Option<u64>,
        progress: usize,
        now: Instant,
    ) -> Option<LinkEnd> {
        let link = self.link;
        // One lookup for the send, whether it stays or is taken out to be settled.
        let Entry::Occupied(mut entry) = self.sends.entry(id) else {
            self.by_control.insert(cid, id);
            return None;
        };
        let p = entry.get_mut();
        if !p.written_on(link, progress) {
            self.by_control.insert(cid, id);
            out.warn(WarningCode::AckBeforeWrite, at);
            return None;
        }
        if code == AckCode::CA {
            if p.commit.is_some() {
                self.by_control.insert(cid, id);
                out.warn(WarningCode::AckCommitAlreadyReported, at);
                return None;
            }
            if p.app_ack != AppAck::Never {
                let written = p.written;
                let latency = p.latency(now);
                p.commit = Some((ack.clone(), now));
                p.notify_commit(Commit { code, ack, latency });
                self.by_control.insert(cid, id);
                self.credited(id, written, now);
                out.shared().counters().record_commit();
                self.app_wait.push_back(id);
                return None;
            }
        }
        let p = entry.remove();
        self.pass_on_control_id(&cid, true);
        self.credit(out, p, code, ack, now);
        None
    }

    /// A final reply settles `p`, already out of the table with its control ID given up.
    pub(super) fn credit(
        &mut self,
        out: &mut Outbox,
        p: Box<Pending>,
        code: AckCode,
        ack: AckPayload,
        now: Instant,
    ) {
        self.credited(p.id, p.written, now);
        let Err(p) = self.try_again(p, code, &ack, now) else {
            return;
        };
        self.remember_settled(&p);
        let latency = p.latency(now);
        let fate = if code.is_positive() {
            Fate::Accepted { code, ack, latency }
        } else {
            Fate::Negative { code, ack, latency }
        };
        out.settle(p, fate);
    }

    /// FIFO: whether `msa2` names a message written on this connection after the oldest one
    /// awaiting an answer.
    fn names_a_later_one(&self, msa2: &[u8]) -> bool {
        self.flight.iter().skip(1).any(|slot| {
            self.sends
                .get(&slot.id)
                .is_some_and(|p| p.control_id.as_deref() == Some(msa2))
        })
    }

    /// A send with control ID `cid` settled: when it held the ID, the next send waiting for
    /// the ID (the earliest queued) holds it now.
    pub(super) fn release_control_id(&mut self, cid: &Bytes, id: u64) {
        // One lookup in the usual case, the settled send holding its ID; put back when another
        // holds it (nothing iterates the map, so its order does not matter).
        let held = match self.by_control.remove_entry(cid) {
            Some((_, holder)) if holder == id => true,
            Some((key, holder)) => {
                self.by_control.insert(key, holder);
                false
            }
            None => false,
        };
        self.pass_on_control_id(cid, held);
    }

    /// A send with control ID `cid` settled, out of `by_control` already when it `held` the ID:
    /// the next send waiting for the ID (the earliest queued) holds it now.
    #[inline(always)]
    fn pass_on_control_id(&mut self, cid: &Bytes, held: bool) {
        // Usually no other send shares an ID: nothing to look up, not even a call.
        if !self.shared_ids.is_empty() {
            self.pass_on_shared_id(cid, held);
        }
    }

    /// [`Flights::pass_on_control_id`] when some sends share an ID.
    fn pass_on_shared_id(&mut self, cid: &Bytes, held: bool) {
        if !held {
            // A waiting send that settled before its turn.
            if let Some(n) = self.shared_ids.get_mut(cid) {
                *n -= 1;
                if *n == 0 {
                    self.shared_ids.remove(cid);
                }
            }
            return;
        }
        let Some(n) = self.shared_ids.get_mut(cid) else {
            return;
        };
        *n -= 1;
        if *n == 0 {
            self.shared_ids.remove(cid);
        }
        let next = self.queue.ids().find(|q| {
            self.sends
                .get(q)
                .is_some_and(|p| p.control_id.as_ref() == Some(cid))
        });
        if let Some(next) = next {
            self.by_control.insert(cid.clone(), next);
        }
    }

    /// A written send is settled without its final answer: a late reply to it must not credit
    /// another send with the same ID on this connection.
    pub(super) fn give_up(&mut self, cid: Option<Bytes>) {
        if let Some(cid) = cid {
            self.late.insert(cid.clone());
            self.given_up_here.insert(cid, ());
        }
    }
}

/// Whether the send may be written on this connection now: under control-ID correlation, it
/// must hold its control ID, and the ID must not have been given up on here. The maps, not the
/// table, so a caller may hold a send of the table mutably meanwhile.
pub(super) fn may_write(
    correlation: Correlation,
    by_control: &CidMap<u64>,
    shared_ids: &CidMap<u32>,
    given_up_here: &CidMap<()>,
    p: &Pending,
) -> bool {
    match (correlation, &p.control_id) {
        (Correlation::ControlId, Some(cid)) => {
            // With no send waiting for a shared ID, every send holds its own.
            (shared_ids.is_empty() || by_control.get(cid) == Some(&p.id))
                && (given_up_here.is_empty() || !given_up_here.contains_key(cid))
        }
        _ => true,
    }
}
