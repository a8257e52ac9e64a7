//! ACK correlation (FIFO or by control ID, enhanced two-phase mode) and the timers of the
//! connected phase: ACK, application ACK, dead peer, drain.

use super::actor::Actor;
use super::fate::{AckPayload, Fate, FateCause};
use super::lifecycle::End;
use super::options::Correlation;
use super::Commit;
use crate::ack::AckCode;
use crate::cause::Cause;
use crate::hl7;
use crate::warning::WarningCode;
use bytes::Bytes;
use tokio::time::Instant;

impl Actor {
    /// One inbound frame on the client: an ACK to credit, or a warning.
    pub(crate) fn on_ack(&mut self, payload: Bytes, offset: u64, now: Instant) {
        let at = Some(offset);
        let parsed = hl7::ack_reply(&payload)
            .and_then(|(code, control_id)| AckCode::parse(code).map(|code| (code, control_id)));
        // A reply without a readable MSA cannot be credited to any send: say so, and let the
        // ACK timeout decide.
        let Some((code, msa2)) = parsed else {
            self.warn(WarningCode::AckUnmatchedControlId, at);
            return;
        };
        let msa2 = payload.slice_ref(msa2);
        let ack = AckPayload::new(payload);
        let id = match self.options.correlation {
            Correlation::Fifo => {
                let Some(slot) = self.flight.front().copied() else {
                    self.warn(WarningCode::AckUnmatchedControlId, at);
                    return;
                };
                let head = self.sends.get(&slot.id);
                let matches = head.is_some_and(|p| p.control_id.as_deref() == Some(&msa2[..]));
                // A repeat of an ACK already credited on this connection (some receivers answer
                // every earlier message again): crediting it to the next send would report a
                // delivery its receiver never confirmed.
                if !matches && self.answered.contains(&msa2) {
                    self.warn(WarningCode::AckUnmatchedControlId, at);
                    return;
                }
                self.flight.pop_front();
                // A cancelled send's slot: its ACK is consumed here, credited to no one.
                let Some(p) = head else {
                    return;
                };
                if !matches {
                    self.warn(WarningCode::AckControlIdMismatch, at);
                }
                if p.enhanced {
                    self.warn(WarningCode::AckTwoPhaseUnavailable, at);
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
                    return;
                };
                let Some(p) = self.sends.get_mut(&id) else {
                    return;
                };
                if p.enhanced && code == AckCode::CA && p.commit.is_none() {
                    let latency = p.latency(now);
                    p.commit = Some((ack.clone(), now));
                    p.notify_commit(Commit { code, ack, latency });
                    self.app_wait.push_back(id);
                    return;
                }
                // An ACK for a send queued for re-writing: answered after all.
                self.queue.retain(|q| *q != id);
                id
            }
        };
        let Some(p) = self.sends.get(&id) else {
            return;
        };
        let latency = p.latency(now);
        let fate = if code.is_positive() {
            Fate::Accepted { code, ack, latency }
        } else {
            Fate::Negative { code, ack, latency }
        };
        self.settle(id, fate);
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
                if let Some(cid) = &p.control_id {
                    self.late.insert(cid.clone());
                }
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
            if let Some(cid) = &p.control_id {
                self.late.insert(cid.clone());
            }
            let latency = p.written.map(|w| at - w.started).unwrap_or_default();
            self.settle(
                id,
                Fate::CommittedOnly {
                    cause: FateCause::AppAckTimeout,
                    ack,
                    latency,
                },
            );
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
