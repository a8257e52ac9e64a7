//! ACK correlation (by control ID or FIFO, enhanced two-phase mode, which send holds a control
//! ID) and the timers of the connected phase: ACK, application ACK, dead peer, drain.

use super::actor::{Actor, Pending};
use super::fate::{AckPayload, Fate, FateCause};
use super::lifecycle::End;
use super::options::Correlation;
use super::Commit;
use crate::ack::AckCode;
use crate::cause::Cause;
use crate::hl7;
use crate::warning::WarningCode;
use bytes::Bytes;
use std::sync::atomic::Ordering;
use tokio::time::Instant;

/// What a message's MSH-16 (application acknowledgement type, HL7 Table 0155) asks of the peer
/// after it committed the message with `CA`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AppAck {
    /// Absent, empty, `""` (HL7 null) or `NE`: the `CA` is the final answer.
    Never,
    /// `AL`, or a value outside the table: the application ACK decides; silence is not success.
    Always,
    /// `ER`: only an error is answered, so silence through the window is success.
    OnError,
    /// `SU`: only success is answered; silence is not success.
    OnSuccess,
}

/// Whether a message's MSH-16 asks for an application ACK after the accept ACK (`AL`, `ER`,
/// `SU`, or a value outside HL7 Table 0155): such a message may get two replies, which only
/// control-ID correlation can pair with it.
pub fn asks_for_application_ack(payload: &[u8]) -> bool {
    let msh16 = hl7::scan(payload)
        .msh
        .and_then(|m| m.application_ack_type());
    AppAck::of(msh16) != AppAck::Never
}

impl AppAck {
    pub fn of(msh16: Option<&[u8]>) -> AppAck {
        match msh16.unwrap_or_default() {
            b"" | b"\"\"" | b"NE" => AppAck::Never,
            b"ER" => AppAck::OnError,
            b"SU" => AppAck::OnSuccess,
            _ => AppAck::Always,
        }
    }
}

impl Actor {
    /// One inbound frame on the client: an ACK to credit, or a warning. `Some` ends the link.
    pub(crate) fn on_ack(&mut self, payload: Bytes, offset: u64, now: Instant) -> Option<End> {
        let at = Some(offset);
        // A reply without a readable MSA cannot be credited to any send: say so, and let the
        // ACK timeout decide.
        let Some((code, msa2)) = hl7::ack_reply(&payload) else {
            self.warn(WarningCode::AckUnmatchedControlId, at);
            return None;
        };
        // Neither settles anything: the reply says nothing that could be credited.
        let code = match AckCode::parse(code) {
            Some(code) => code,
            None if code.is_empty() => {
                self.warn(WarningCode::AckMsa1Absent, at);
                return None;
            }
            None => {
                self.warn(WarningCode::AckMsa1Unclassifiable, at);
                return None;
            }
        };
        let msa2 = payload.slice_ref(msa2);
        let ack = AckPayload::new(payload);
        let progress = self.write_progress.load(Ordering::Relaxed);
        let id = match self.options.correlation {
            Correlation::Fifo => {
                let head = self.flight.front().copied();
                let matches = head
                    .and_then(|slot| self.sends.get(&slot.id))
                    .is_some_and(|p| p.control_id.as_deref() == Some(&msa2[..]));
                // A repeat of an ACK already credited on this connection (some receivers answer
                // every earlier message again): crediting it to the next send would report a
                // delivery its receiver never confirmed.
                if !matches && self.answered.contains(&msa2) {
                    self.warn(WarningCode::AckUnmatchedControlId, at);
                    return None;
                }
                // A reply while nothing written awaits one: the peer answers what it has not
                // read, and every later pairing in order would be wrong.
                let awaiting = head.filter(|slot| {
                    self.sends
                        .get(&slot.id)
                        .is_none_or(|p| p.written_on(self.link, progress))
                });
                let Some(slot) = awaiting else {
                    return Some(End::Failed(Cause::UnsolicitedAck));
                };
                self.flight.pop_front();
                // A cancelled send's slot: its ACK is consumed here, credited to no one.
                let p = self.sends.get(&slot.id)?;
                if !matches {
                    self.warn(WarningCode::AckControlIdMismatch, at);
                }
                if let Some(cid) = p.control_id.clone() {
                    self.answered.insert(cid);
                }
                slot.id
            }
            Correlation::ControlId => {
                let Some(&id) = self.by_control.get(&msa2) else {
                    let code = if self.late.contains(&msa2) {
                        WarningCode::AckAfterTimeout
                    } else {
                        WarningCode::AckUnmatchedControlId
                    };
                    self.warn(code, at);
                    return None;
                };
                let link = self.link;
                let p = self.sends.get_mut(&id)?;
                if !p.written_on(link, progress) {
                    self.warn(WarningCode::AckBeforeWrite, at);
                    return None;
                }
                if code == AckCode::CA {
                    if p.commit.is_some() {
                        self.warn(WarningCode::AckCommitAlreadyReported, at);
                        return None;
                    }
                    if p.app_ack != AppAck::Never {
                        let latency = p.latency(now);
                        p.commit = Some((ack.clone(), now));
                        p.notify_commit(Commit { code, ack, latency });
                        self.shared.counters().awaiting_app_ack += 1;
                        self.app_wait.push_back(id);
                        return None;
                    }
                }
                id
            }
        };
        let p = self.sends.get(&id)?;
        let latency = p.latency(now);
        let fate = if code.is_positive() {
            Fate::Accepted { code, ack, latency }
        } else {
            Fate::Negative { code, ack, latency }
        };
        self.settle(id, fate);
        None
    }

    /// A send with control ID `cid` settled: when it held the ID, the next send waiting for
    /// the ID (the earliest queued) holds it now.
    pub(crate) fn release_control_id(&mut self, cid: &Bytes, id: u64) {
        if self.by_control.get(cid) != Some(&id) {
            // A waiting send that settled before its turn.
            if let Some(n) = self.shared_ids.get_mut(cid) {
                *n -= 1;
                if *n == 0 {
                    self.shared_ids.remove(cid);
                }
            }
            return;
        }
        self.by_control.remove(cid);
        let Some(n) = self.shared_ids.get_mut(cid) else {
            return;
        };
        *n -= 1;
        if *n == 0 {
            self.shared_ids.remove(cid);
        }
        let next = self.queue.iter().copied().find(|q| {
            self.sends
                .get(q)
                .is_some_and(|p| p.control_id.as_ref() == Some(cid))
        });
        if let Some(next) = next {
            self.by_control.insert(cid.clone(), next);
        }
    }

    /// Whether the send may be written on this connection now: under control-ID correlation,
    /// it must hold its control ID, and the ID must not have been given up on here.
    pub(crate) fn may_write(&self, p: &Pending) -> bool {
        match (&self.options.correlation, &p.control_id) {
            (Correlation::ControlId, Some(cid)) => {
                self.by_control.get(cid) == Some(&p.id) && !self.given_up_here.contains_key(cid)
            }
            _ => true,
        }
    }

    /// A written send is settled without its final answer: a late reply to it must not credit
    /// another send with the same ID on this connection.
    pub(crate) fn give_up(&mut self, cid: Option<Bytes>) {
        if let Some(cid) = cid {
            self.late.insert(cid.clone());
            self.given_up_here.insert(cid, ());
        }
    }

    /// Drop slots of settled or committed sends from the front: their ACK clock no longer runs.
    pub(crate) fn prune_flight(&mut self) {
        if self.options.correlation == Correlation::Fifo {
            return;
        }
        while let Some(slot) = self.flight.front() {
            match self.sends.get(&slot.id) {
                Some(p) if p.commit.is_none() => break,
                _ => {
                    self.flight.pop_front();
                }
            }
        }
        while let Some(id) = self.app_wait.front() {
            if self.sends.contains_key(id) {
                break;
            }
            self.app_wait.pop_front();
        }
    }

    /// The earliest deadline of the connected phase. Deadlines in each list are monotone, so
    /// the fronts are enough.
    pub(crate) fn next_deadline(
        &mut self,
        last_inbound: Instant,
        drain: Option<Instant>,
    ) -> Option<Instant> {
        self.prune_flight();
        let ack = self.flight.front().and_then(|s| s.deadline);
        let app = self
            .app_wait
            .front()
            .and_then(|id| self.sends.get(id))
            .and_then(|p| p.commit.as_ref())
            .map(|(_, at)| *at + self.options.app_ack_timeout);
        let dead = self.options.dead_peer_timeout.map(|t| last_inbound + t);
        [ack, app, dead, drain].into_iter().flatten().min()
    }

    /// Fire every deadline that has passed. `Some` ends the connected phase.
    pub(crate) fn on_timers(
        &mut self,
        last_inbound: Instant,
        drain: Option<Instant>,
    ) -> Option<End> {
        let now = Instant::now();
        if self
            .options
            .dead_peer_timeout
            .is_some_and(|t| last_inbound + t <= now)
        {
            return Some(End::Failed(Cause::DeadPeer));
        }
        if drain.is_some_and(|d| d <= now) {
            return Some(End::Drained { timed_out: true });
        }
        loop {
            self.prune_flight();
            let Some(slot) = self.flight.front().copied() else {
                break;
            };
            if slot.deadline.is_none_or_after(now) {
                break;
            }
            self.flight.pop_front();
            self.shared.counters().timed_out += 1;
            if let Some(p) = self.sends.get(&slot.id) {
                let fate = p.unknown(FateCause::Link(Cause::AckTimeout), now);
                let cid = p.control_id.clone();
                self.give_up(cid);
                self.settle(slot.id, fate);
            }
            // FIFO: any later ACK on this connection could only be credited to the wrong send.
            if self.options.correlation == Correlation::Fifo {
                return Some(End::Failed(Cause::AckTimeout));
            }
        }
        while let Some(&id) = self.app_wait.front() {
            let Some(p) = self.sends.get(&id) else {
                self.app_wait.pop_front();
                continue;
            };
            let Some((ack, at)) = p.commit.clone() else {
                self.app_wait.pop_front();
                continue;
            };
            if at + self.options.app_ack_timeout > now {
                break;
            }
            self.app_wait.pop_front();
            let latency = p.written.map(|w| at - w.started).unwrap_or_default();
            // MSH-16 `ER`: the peer answers only an error, and none came in the window.
            let fate = if p.app_ack == AppAck::OnError {
                Fate::Accepted {
                    code: AckCode::CA,
                    ack,
                    latency,
                }
            } else {
                Fate::CommittedOnly {
                    cause: FateCause::AppAckTimeout,
                    ack,
                    latency,
                }
            };
            let cid = p.control_id.clone();
            self.give_up(cid);
            self.settle(id, fate);
        }
        None
    }
}

trait DeadlineExt {
    fn is_none_or_after(&self, now: Instant) -> bool;
}

impl DeadlineExt for Option<Instant> {
    /// No deadline yet (still writing), or not passed.
    fn is_none_or_after(&self, now: Instant) -> bool {
        match self {
            None => true,
            Some(d) => *d > now,
        }
    }
}
