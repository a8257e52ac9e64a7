//! The timers of the connected phase: ACK, application ACK, dead peer and drain deadlines,
//! and what firing each settles.

use super::{Flights, Queue};
use crate::ack::AckCode;
use crate::cause::Cause;
use crate::client::fate::{Fate, FateCause};
use crate::client::life::LinkEnd;
use crate::client::options::Correlation;
use crate::client::outbox::Outbox;
use crate::client::pending::AppAck;
use tokio::time::Instant;

impl Flights {
    /// Drop slots of settled or committed sends from the front: their ACK clock no longer runs.
    pub(super) fn prune_flight(&mut self) {
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
        [
            ack,
            app,
            dead,
            drain,
            self.here.hold_until,
            self.here.mismatch_at,
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Fire every deadline that has passed. `Some` ends the connected phase.
    pub(crate) fn on_timers(
        &mut self,
        out: &mut Outbox,
        last_inbound: Instant,
        drain: Option<Instant>,
    ) -> Option<LinkEnd> {
        let now = Instant::now();
        if self
            .options
            .dead_peer_timeout
            .is_some_and(|t| last_inbound + t <= now)
        {
            return Some(LinkEnd::Failed(Cause::DeadPeer));
        }
        if drain.is_some_and(|d| d <= now) {
            return Some(LinkEnd::Drained { timed_out: true });
        }
        self.hold_passed(now);
        if let Some(end) = self.mismatch_verdict(now) {
            return Some(end);
        }
        if let Some(end) = self.ack_timeouts(out, now) {
            return Some(end);
        }
        self.app_ack_timeouts(out, now);
        None
    }

    /// Sends whose ACK is overdue, oldest first: written again, or ended unknown fate. `Some`
    /// ends the connected phase.
    #[inline]
    fn ack_timeouts(&mut self, out: &mut Outbox, now: Instant) -> Option<LinkEnd> {
        let fifo = self.options.correlation == Correlation::Fifo;
        loop {
            self.prune_flight();
            let Some(slot) = self.flight.front().copied() else {
                break;
            };
            if slot.deadline.is_none_or_after(now) {
                break;
            }
            let written = self.sends.get(&slot.id).and_then(|p| p.written);
            // The peer answered another frame and dropped this one with the rest of its read:
            // what it dropped goes again, one at a time (in FIFO only when asked for, on the
            // next connection; else it ends unknown fate like any timed-out send).
            if written.is_some_and(|w| self.dropped_pipelined(out, w.pipelined)) {
                if !fifo {
                    out.shared().counters().record_ack_timeout();
                    self.write_again_here(out, now);
                    continue;
                }
                if self.options.at_least_once {
                    out.shared().counters().record_ack_timeout();
                    return Some(LinkEnd::Failed(Cause::AckTimeout));
                }
            }
            self.flight.pop_front();
            out.shared().counters().record_ack_timeout();
            if let Some(p) = self.sends.get(&slot.id) {
                let fate = p.unknown(FateCause::Link(Cause::AckTimeout), now);
                let cid = p.control_id.clone();
                self.give_up(cid);
                self.settle(out, slot.id, fate);
            }
            // FIFO: any later ACK on this connection could only be credited to the wrong send;
            // Release 2: any later block.
            if fifo || self.release2() {
                return Some(LinkEnd::Failed(Cause::AckTimeout));
            }
        }
        None
    }

    /// Sends committed whose application ACK is overdue.
    #[inline]
    fn app_ack_timeouts(&mut self, out: &mut Outbox, now: Instant) {
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
            self.settle(out, id, fate);
        }
    }
}

impl Flights {
    /// Control-ID correlation: every send written here and not answered (nor committed) goes
    /// again on this connection, in admission order before the queue, within its resend budget;
    /// past it, it ends unknown fate as any timed-out send.
    fn write_again_here(&mut self, out: &mut Outbox, now: Instant) {
        let mut again: Vec<u64> = Vec::new();
        for slot in std::mem::take(&mut self.flight) {
            let Some(p) = self.sends.get(&slot.id) else {
                continue;
            };
            if p.commit.is_some() {
                self.flight.push_back(slot);
            } else if p.charged >= self.options.max_resends {
                let fate = p.unknown(FateCause::Link(Cause::AckTimeout), now);
                let cid = p.control_id.clone();
                self.give_up(cid);
                self.settle(out, slot.id, fate);
            } else {
                again.push(slot.id);
            }
        }
        again.extend(self.queue.take_all());
        again.sort_unstable();
        again.dedup();
        self.queue = Queue::of(again, &self.sends);
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
