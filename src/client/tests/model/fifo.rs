//! The sender's rules under FIFO correlation, as plainly as possible: each reply answers the
//! oldest written message, whatever its MSA-2 says, except one naming a message already settled
//! in the run, on any connection (a repeat or a stale reply: credits nothing); a reply naming a
//! message written after the oldest one awaiting, or with nothing awaiting it, ends the link for
//! good; an ACK timeout ends the link; what was never written waits for the next connection;
//! nothing is written twice.

use super::rules::{known_code, AfterCa, Outcome, Rules, Timeouts};

#[derive(Debug)]
struct Message {
    cid: String,
    outcome: Option<Outcome>,
    /// When it was written; FIFO writes a message at most once.
    written: Option<u64>,
}

pub(crate) struct FifoModel {
    t: Timeouts,
    now: u64,
    messages: Vec<Message>,
    /// Not yet written, in order.
    queue: Vec<usize>,
    /// Written on this connection and not yet answered, oldest first.
    flight: Vec<usize>,
    draining: Option<u64>,
    closed: bool,
    /// Off: one message outstanding at a time.
    pipeline: bool,
}

impl FifoModel {
    pub(crate) fn new(t: Timeouts, pipeline: bool) -> FifoModel {
        FifoModel {
            t,
            pipeline,
            now: 0,
            messages: vec![],
            queue: vec![],
            flight: vec![],
            draining: None,
            closed: false,
        }
    }

    fn unsettled(&self) -> Vec<usize> {
        (0..self.messages.len())
            .filter(|&i| self.messages[i].outcome.is_none())
            .collect()
    }

    fn settle(&mut self, i: usize, outcome: Outcome) {
        self.messages[i].outcome = Some(outcome);
        self.flight.retain(|&f| f != i);
        self.queue.retain(|&q| q != i);
    }

    /// Write queued messages in order; without pipelining, only when nothing is outstanding.
    fn write_what_may_go(&mut self) {
        if self.closed || self.draining.is_some() {
            return;
        }
        while let Some(&head) = self.queue.first() {
            if !self.pipeline && !self.flight.is_empty() {
                break;
            }
            self.queue.remove(0);
            self.messages[head].written = Some(self.now);
            self.flight.push(head);
        }
    }

    /// The link ends. Order cannot be resumed on a new connection: every written message still
    /// open ends here (unknown fate); unwritten ones wait for the next connection (the client
    /// reconnects at once), unless the cause is permanent or the client was draining
    /// (`for_good`): then they are never delivered.
    fn link_ends(&mut self, for_good: bool) {
        let for_good = for_good || self.draining.is_some();
        for i in self.unsettled() {
            match self.messages[i].written {
                Some(_) => self.settle(i, Outcome::UnknownFate),
                None if for_good => self.settle(i, Outcome::NeverDelivered),
                None => {}
            }
        }
        if for_good {
            self.closed = true;
        } else {
            self.write_what_may_go();
        }
    }

    fn check_drained(&mut self) {
        if self.draining.is_some() && !self.closed && self.unsettled().is_empty() {
            self.closed = true;
        }
    }
}

impl Rules for FifoModel {
    fn outcomes(&self) -> Vec<(Option<Outcome>, u32)> {
        self.messages
            .iter()
            .map(|m| (m.outcome, u32::from(m.written.is_some())))
            .collect()
    }

    fn submit(&mut self, cid: &str, msh16: &str) {
        // Two replies could not be paired in order; a client closed for good takes nothing.
        let refused = AfterCa::of(msh16) != AfterCa::Nothing || self.closed;
        self.messages.push(Message {
            cid: cid.to_string(),
            outcome: refused.then_some(Outcome::NeverDelivered),
            written: None,
        });
        if !refused {
            self.queue.push(self.messages.len() - 1);
            self.write_what_may_go();
        }
    }

    fn reply(&mut self, cid: &str, code: &str) {
        if self.closed {
            return;
        }
        let Some(code) = known_code(code) else {
            return; // empty or unknown MSA-1: settles nothing
        };
        let head = self.flight.first().copied();
        let matches = head.is_some_and(|h| self.messages[h].cid == cid);
        let settled = |m: &Message| m.outcome.is_some() && m.cid == cid;
        if !matches && self.messages.iter().any(settled) {
            return; // names a message already settled: a repeat or a stale reply
        }
        let later = self
            .flight
            .iter()
            .skip(1)
            .any(|&f| self.messages[f].cid == cid);
        let Some(head) = head.filter(|_| matches || !later) else {
            self.link_ends(true); // unsolicited, or out of order: permanent
            return;
        };
        let outcome = if code == "AA" || code == "CA" {
            Outcome::Accepted(code)
        } else {
            Outcome::Negative(code)
        };
        self.settle(head, outcome);
        self.write_what_may_go();
        self.check_drained();
    }

    fn close(&mut self) {
        if self.closed || self.draining.is_some() {
            return;
        }
        self.draining = Some(self.now + self.t.drain);
        // Nothing more is written: what is still queued was never delivered.
        for i in std::mem::take(&mut self.queue) {
            self.settle(i, Outcome::NeverDelivered);
        }
        self.check_drained();
    }

    fn link_failed(&mut self) {
        if !self.closed {
            self.link_ends(false);
        }
    }

    fn advance(&mut self, ms: u64) {
        let until = self.now + ms;
        while !self.closed {
            let ack = self
                .flight
                .first()
                .and_then(|&h| self.messages[h].written)
                .map(|at| at + self.t.ack);
            let Some(at) = self.draining.into_iter().chain(ack).min() else {
                break;
            };
            if at > until {
                break;
            }
            self.now = at;
            // The drain ends everything at once; an ACK timeout ends the link.
            self.link_ends(self.draining.is_some_and(|d| d <= at));
        }
        self.now = until;
    }
}
