//! A negative answer an answer-code rule makes transient: the send goes back to the head of
//! the queue and is written again after a pause, while its resend budget lasts.

use super::Flights;
use crate::ack::AckCode;
use crate::client::fate::AckPayload;
use crate::client::pending::Pending;
use crate::client::retry;
use tokio::time::Instant;

impl Flights {
    /// `p` answered `code` with `ack`: when a rule makes that transient and its budget lasts,
    /// it waits to be written again (`Ok`); otherwise it is given back to be settled.
    pub(super) fn try_again(
        &mut self,
        p: Box<Pending>,
        code: AckCode,
        ack: &AckPayload,
        now: Instant,
    ) -> Result<(), Box<Pending>> {
        let rules = &self.options.retry_on;
        if rules.is_empty() || !retry::transient(rules, code, ack.bytes()) {
            return Err(p);
        }
        // Committed (`CA`) before its application answer: the peer holds it, and writing it
        // again would commit it twice.
        let spent = !p.free_rewrite && p.charged >= self.options.max_resends;
        if spent || p.commit.is_some() {
            return Err(p);
        }
        // By control ID the send must hold its ID again; another send sharing it took it on.
        if !self.fifo() {
            if let Some(cid) = &p.control_id {
                if self.by_control.contains_key(cid) {
                    return Err(p);
                }
                self.by_control.insert(cid.clone(), p.id);
            }
        }
        let id = p.id;
        let pause = retry::pause(
            self.options.retry_backoff.initial,
            self.options.retry_backoff.max,
            p.charged + 1,
        );
        self.flight.retain(|slot| slot.id != id);
        self.sends.insert(id, p);
        self.write_again(id);
        let until = now + pause;
        self.here.hold_until = Some(self.here.hold_until.map_or(until, |at| at.max(until)));
        Ok(())
    }
}

impl Flights {
    /// `id`, written before, goes again: back in the queue in admission order, so rewrites
    /// keep input order too.
    pub(super) fn write_again(&mut self, id: u64) {
        let mut again = self.queue.take_all();
        again.push(id);
        again.sort_unstable();
        again.dedup();
        self.queue = super::queue::Queue::of(again, &self.sends);
    }
}
