//! The sender's correlation rules under control-ID correlation, written down as plainly as
//! possible: lists scanned from the start, times in milliseconds, no shortcuts. The real client
//! must reach the same fate for every message.

/// What MSH-16 asks for after a `CA`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AfterCa {
    /// Absent, empty, `""`, `NE`: the `CA` is final.
    Nothing,
    /// `AL` (and any other value): the application ACK decides; silence is committed-only.
    AppAck,
    /// `ER`: silence through the window is success.
    OnlyErrors,
    /// `SU`: silence is committed-only.
    OnlySuccess,
}

impl AfterCa {
    pub(crate) fn of(msh16: &str) -> AfterCa {
        match msh16 {
            "" | "\"\"" | "NE" => AfterCa::Nothing,
            "ER" => AfterCa::OnlyErrors,
            "SU" => AfterCa::OnlySuccess,
            _ => AfterCa::AppAck,
        }
    }
}

/// A message's fate: its population and, when an answer decided it, the code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    Accepted(&'static str),
    Negative(&'static str),
    CommittedOnly,
    UnknownFate,
    NeverDelivered,
}

/// One mode's rules, as the driver plays a script against them.
pub(crate) trait Rules {
    /// Each submitted message's outcome (`None`: still open) and how often it was written.
    fn outcomes(&self) -> Vec<(Option<Outcome>, u32)>;
    fn submit(&mut self, cid: &str, msh16: &str);
    fn reply(&mut self, cid: &str, code: &str);
    fn close(&mut self);
    /// The peer dropped the connection; reconnecting is immediate.
    fn link_failed(&mut self);
    fn advance(&mut self, ms: u64);
}

pub(crate) struct Timeouts {
    pub ack: u64,
    pub app_ack: u64,
    pub drain: u64,
}

#[derive(Debug)]
struct Message {
    cid: String,
    after_ca: AfterCa,
    outcome: Option<Outcome>,
    /// The connection of its last write, and when.
    written: Option<(u32, u64)>,
    writes: u32,
    /// When its `CA` came, if one did and an application ACK may follow.
    committed: Option<u64>,
}

pub(crate) struct Model {
    t: Timeouts,
    now: u64,
    messages: Vec<Message>,
    /// Unwritten on this connection, in submission order.
    queue: Vec<usize>,
    link: u32,
    given_up_here: Vec<String>,
    /// The drain deadline, once closing began.
    draining: Option<u64>,
    closed: bool,
    /// Off: one message outstanding at a time.
    pipeline: bool,
    /// Most writes of one message after its first, each on a new connection.
    max_resends: u32,
}

impl Model {
    pub(crate) fn new(t: Timeouts, pipeline: bool, max_resends: u32) -> Model {
        Model {
            t,
            pipeline,
            max_resends,
            now: 0,
            messages: vec![],
            queue: vec![],
            link: 1,
            given_up_here: vec![],
            draining: None,
            closed: false,
        }
    }

    fn unsettled(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.messages.len()).filter(|&i| self.messages[i].outcome.is_none())
    }

    /// The message a reply naming `cid` is about: the earliest unsettled one with that ID.
    fn holder(&self, cid: &str) -> Option<usize> {
        self.unsettled().find(|&i| self.messages[i].cid == cid)
    }

    fn settle(&mut self, i: usize, outcome: Outcome) {
        self.messages[i].outcome = Some(outcome);
        self.queue.retain(|&q| q != i);
    }

    /// Settled without a final answer: a late reply must not credit another send with the ID.
    fn give_up(&mut self, i: usize) {
        self.given_up_here.push(self.messages[i].cid.clone());
    }

    /// What a message becomes when the link or the drain cuts its wait short.
    fn cut_off(&self, i: usize) -> Outcome {
        let m = &self.messages[i];
        if m.committed.is_some() {
            Outcome::CommittedOnly
        } else if m.writes > 0 {
            Outcome::UnknownFate
        } else {
            Outcome::NeverDelivered
        }
    }

    pub(crate) fn submit(&mut self, cid: &str, msh16: &str) {
        self.messages.push(Message {
            cid: cid.to_string(),
            after_ca: AfterCa::of(msh16),
            outcome: None,
            written: None,
            writes: 0,
            committed: None,
        });
        self.queue.push(self.messages.len() - 1);
        self.write_what_may_go();
    }

    /// Write queued messages in order while the head may go: it must be the earliest unsettled
    /// message with its ID, and the ID must not have been given up on this connection; without
    /// pipelining, nothing else may be outstanding.
    fn write_what_may_go(&mut self) {
        if self.closed || self.draining.is_some() {
            return;
        }
        while let Some(&head) = self.queue.first() {
            let cid = self.messages[head].cid.clone();
            if self.holder(&cid) != Some(head) || self.given_up_here.contains(&cid) {
                break;
            }
            if !self.pipeline && !self.unsettled().all(|i| self.queue.contains(&i)) {
                break;
            }
            self.queue.remove(0);
            let m = &mut self.messages[head];
            m.written = Some((self.link, self.now));
            m.writes += 1;
        }
        // A head held back by a given-up ID, with nothing else outstanding: renew the link.
        if let Some(&head) = self.queue.first() {
            let all_queued = self.unsettled().all(|i| self.queue.contains(&i));
            if all_queued && self.given_up_here.contains(&self.messages[head].cid) {
                self.link_failed();
            }
        }
    }

    pub(crate) fn reply(&mut self, cid: &str, code: &str) {
        if self.closed {
            return;
        }
        let Some(code) = known_code(code) else {
            return; // empty or unknown MSA-1: settles nothing
        };
        let Some(i) = self.holder(cid) else {
            return; // unmatched or late
        };
        let m = &self.messages[i];
        if m.written.map(|(link, _)| link) != Some(self.link) || self.queue.contains(&i) {
            return; // not written on this connection (yet)
        }
        if code == "CA" {
            if m.committed.is_some() {
                return; // a repeated CA
            }
            if m.after_ca != AfterCa::Nothing {
                self.messages[i].committed = Some(self.now);
                return;
            }
        }
        let outcome = if code == "AA" || code == "CA" {
            Outcome::Accepted(code)
        } else {
            Outcome::Negative(code)
        };
        self.settle(i, outcome);
        self.after_change();
    }

    fn after_change(&mut self) {
        self.write_what_may_go();
        if self.draining.is_some() && !self.closed && self.unsettled().next().is_none() {
            self.closed = true;
        }
    }

    pub(crate) fn close(&mut self) {
        if self.closed || self.draining.is_some() {
            return;
        }
        self.draining = Some(self.now + self.t.drain);
        for i in std::mem::take(&mut self.queue) {
            let outcome = self.cut_off(i);
            self.settle(i, outcome);
        }
        self.after_change();
    }

    /// The peer closed the link (or the client renewed it).
    pub(crate) fn link_failed(&mut self) {
        if self.closed {
            return;
        }
        let unsettled: Vec<usize> = self.unsettled().collect();
        if self.draining.is_some() {
            for i in unsettled {
                let outcome = self.cut_off(i);
                self.settle(i, outcome);
            }
            self.closed = true;
            return;
        }
        // Reconnect at once: a committed message cannot be sent again, one written as often
        // as allowed is given up; the rest are rewritten.
        for &i in &unsettled {
            if self.messages[i].committed.is_some() {
                self.settle(i, Outcome::CommittedOnly);
            } else if self.messages[i].writes > self.max_resends {
                self.settle(i, Outcome::UnknownFate);
            }
        }
        self.queue = self.unsettled().collect();
        self.link += 1;
        self.given_up_here.clear();
        self.write_what_may_go();
    }

    /// The earliest deadline still running: the drain first, then ACK waits, then app-ACK waits.
    fn next_deadline(&self) -> Option<u64> {
        let mut deadlines: Vec<u64> = self.draining.into_iter().collect();
        for i in self.unsettled() {
            let m = &self.messages[i];
            match (m.committed, m.written) {
                (Some(at), _) => deadlines.push(at + self.t.app_ack),
                (None, Some((link, at))) if link == self.link && !self.queue.contains(&i) => {
                    deadlines.push(at + self.t.ack)
                }
                _ => {}
            }
        }
        deadlines.into_iter().min()
    }

    pub(crate) fn advance(&mut self, ms: u64) {
        let until = self.now + ms;
        while !self.closed {
            let Some(at) = self.next_deadline().filter(|&at| at <= until) else {
                break;
            };
            self.now = at;
            self.fire();
        }
        self.now = until;
    }

    /// Everything due now, in the client's order: the drain ends all; then ACK waits in write
    /// order; then app-ACK waits in `CA` order.
    fn fire(&mut self) {
        let now = self.now;
        if self.draining.is_some_and(|d| d <= now) {
            for i in self.unsettled().collect::<Vec<_>>() {
                let outcome = self.cut_off(i);
                self.settle(i, outcome);
            }
            self.closed = true;
            return;
        }
        let mut expired: Vec<(u64, usize)> = self
            .unsettled()
            .filter_map(|i| {
                let m = &self.messages[i];
                match (m.committed, m.written) {
                    (None, Some((link, at)))
                        if link == self.link
                            && !self.queue.contains(&i)
                            && at + self.t.ack <= now =>
                    {
                        Some((at, i))
                    }
                    _ => None,
                }
            })
            .collect();
        expired.sort();
        for (_, i) in expired {
            self.settle(i, Outcome::UnknownFate);
            self.give_up(i);
        }
        let mut app: Vec<(u64, usize)> = self
            .unsettled()
            .filter_map(|i| {
                let at = self.messages[i].committed?;
                (at + self.t.app_ack <= now).then_some((at, i))
            })
            .collect();
        app.sort();
        for (_, i) in app {
            let outcome = match self.messages[i].after_ca {
                AfterCa::OnlyErrors => Outcome::Accepted("CA"),
                _ => Outcome::CommittedOnly,
            };
            self.settle(i, outcome);
            self.give_up(i);
        }
        self.after_change();
    }
}

impl Rules for Model {
    fn outcomes(&self) -> Vec<(Option<Outcome>, u32)> {
        self.messages
            .iter()
            .map(|m| (m.outcome, m.writes))
            .collect()
    }
    fn submit(&mut self, cid: &str, msh16: &str) {
        Model::submit(self, cid, msh16)
    }
    fn reply(&mut self, cid: &str, code: &str) {
        Model::reply(self, cid, code)
    }
    fn close(&mut self) {
        Model::close(self)
    }
    fn link_failed(&mut self) {
        Model::link_failed(self)
    }
    fn advance(&mut self, ms: u64) {
        Model::advance(self, ms)
    }
}

/// The six MSA-1 codes the rules know; anything else settles nothing.
pub(crate) fn known_code(code: &str) -> Option<&'static str> {
    ["AA", "AE", "AR", "CA", "CE", "CR"]
        .into_iter()
        .find(|known| *known == code)
}
