//! The router: reads the input once, routes each message to its link, holds a message while an
//! earlier one of its key is out, and turns the links' outcomes into the run's one accounting.

use super::super::collect::{Batch, BATCH_EVENTS};
use super::super::event::{Item, MessageOutcome, RunEvent, RunNote};
use super::super::failed::file_name;
use super::super::feed::Feed;
use super::super::gate::Gate;
use super::super::key::{key_hash, link_of, OrderKey};
use super::super::totals::{Ending, RunSummary, Totals};
use super::super::{RunControls, RunOptions};
use super::link::{Entry, FromLink, Link, Pending};
use super::{LinkEvent, LinkSummary, ParallelSummary, HOLD, HOLD_BYTES, LINK_AHEAD};
use crate::cause::Cause;
use crate::client::woken::Woken;
use crate::client::{Fate, FateCause, Population};
use crate::input::Message;
use tokio::sync::mpsc;
use tokio::time::Instant;

/// Messages read, or things the links said, taken in one turn of the loop at most, before the
/// controls and the deadline are looked at again.
const TAKEN_PER_TURN: usize = 64;

pub(super) struct Router {
    pub(super) key: OrderKey,
    pub(super) links: Vec<Link>,
    pub(super) gate: Gate<Pending>,
    pub(super) options: RunOptions,
    pub(super) out: mpsc::Sender<Batch<LinkEvent>>,
    /// Events made and not yet handed out, in order: sent as one batch at the end of a turn,
    /// or once [`BATCH_EVENTS`] are held.
    pub(super) held_events: Vec<LinkEvent>,
    pub(super) totals: Totals,
    pub(super) ending: Ending,
    pub(super) held: usize,
    pub(super) held_bytes: usize,
    pub(super) next_link: usize,
    pub(super) closing_sent: bool,
}

/// Never written: the run ended before the message's link took it.
fn unsent(cause: Option<Cause>) -> Fate {
    Fate::NeverDelivered {
        cause: cause.map_or(FateCause::Closed, FateCause::Link),
    }
}

impl Router {
    pub(super) async fn run(
        mut self,
        mut feed: Feed,
        endless: bool,
        mut from_links: mpsc::Receiver<(usize, FromLink)>,
        controls: RunControls,
    ) -> ParallelSummary {
        let started = Instant::now();
        let deadline = self.options.deadline;
        let timer = async move {
            match deadline {
                Some(at) => tokio::time::sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        tokio::pin!(timer);
        let (mut reading, mut input_done, mut past_deadline) = (true, false, false);
        let (mut stopped, mut destroyed, mut abandoned) = (false, false, false);
        let mut read = 0u64;
        // Made once and polled only once woken: waits made afresh each turn register with
        // their token, and unregister, every time the loop goes round.
        let stop = controls.stop.cancelled();
        let destroy = controls.destroy.cancelled();
        let abandon = controls.abandon.cancelled();
        tokio::pin!(stop, destroy, abandon);
        let mut gates: [Woken; 3] = std::array::from_fn(|_| Woken::new());
        let [stopping, destroying, abandoning] = &mut gates;
        loop {
            let room = self.held < HOLD && self.held_bytes < HOLD_BYTES;
            tokio::select! {
                biased;
                from = from_links.recv() => {
                    // What else the links said meanwhile, without a select each.
                    let Some(first) = from else { break };
                    let mut from = Some(first);
                    let mut more = TAKEN_PER_TURN;
                    let mut all_done = false;
                    while let Some((i, said)) = from.take() {
                        if self.heard(i, said).await {
                            all_done = true;
                            break;
                        }
                        more -= 1;
                        if more > 0 {
                            from = from_links.try_recv().ok();
                        }
                    }
                    if all_done {
                        break;
                    }
                }
                () = &mut timer, if !past_deadline => {
                    past_deadline = true;
                    self.ending.timed_out = true;
                    self.note(RunNote::TimedOut).await;
                    self.unsend_held(Some(Cause::RunTimeout)).await;
                    if endless {
                        reading = false;
                        feed.close();
                    }
                }
                () = stopping.wait(&mut stop), if !stopped && !destroyed => {
                    stopped = true;
                    self.ending.interrupted = true;
                    // A finite input is read to its end, each message reported, never sent.
                    if endless {
                        reading = false;
                        feed.close();
                    }
                    self.note(RunNote::Interrupted).await;
                    self.unsend_held(Some(Cause::Interrupted)).await;
                    self.links.iter().for_each(|l| l.controls.stop());
                }
                () = destroying.wait(&mut destroy), if !destroyed => {
                    destroyed = true;
                    self.ending.interrupted = true;
                    reading = false;
                    feed.close();
                    self.unsend_held(None).await;
                    self.links.iter().for_each(|l| l.controls.destroy());
                }
                () = abandoning.wait(&mut abandon), if !abandoned => {
                    abandoned = true;
                    self.ending.abandoned = !input_done;
                    reading = false;
                    feed.close();
                    self.unsend_held(None).await;
                    self.links.iter().for_each(|l| l.controls.abandon());
                }
                message = feed.recv(), if reading && room => {
                    // The messages of the chunk in hand too, while there is room for them.
                    if message.is_none() {
                        (reading, input_done) = (false, true);
                    }
                    let mut message = message;
                    let mut more = TAKEN_PER_TURN;
                    while let Some(next) = message.take() {
                        match next {
                            Ok(message) => {
                                read += 1;
                                self.totals.read += 1;
                                let unsent = if past_deadline {
                                    Some(Cause::RunTimeout)
                                } else if stopped || destroyed {
                                    Some(Cause::Interrupted)
                                } else {
                                    None
                                };
                                self.route(message, read, unsent).await;
                            }
                            Err(error) => {
                                (reading, input_done) = (false, true);
                                self.ending.input_failed = true;
                                self.note(RunNote::InputError(error)).await;
                                break;
                            }
                        }
                        more -= 1;
                        if more > 0 && self.held < HOLD && self.held_bytes < HOLD_BYTES {
                            message = feed.try_recv();
                        }
                    }
                }
            }
            self.flush().await;
            self.hand_out().await;
            // Nothing more to hand over: each link's input ends, and each link drains.
            if (!reading || past_deadline || stopped || destroyed) && self.held == 0 {
                self.links.iter_mut().for_each(|l| l.tx = None);
            }
        }
        // The links ended before a finite input did (past the deadline, or stopped): the rest
        // is read, each message reported, never sent.
        let cause = if past_deadline {
            Cause::RunTimeout
        } else {
            Cause::Interrupted
        };
        while reading && !endless {
            match feed.recv().await {
                Some(Ok(message)) => {
                    read += 1;
                    self.totals.read += 1;
                    self.route(message, read, Some(cause)).await;
                }
                Some(Err(error)) => {
                    reading = false;
                    self.ending.input_failed = true;
                    self.note(RunNote::InputError(error)).await;
                }
                None => reading = false,
            }
        }
        self.hand_out().await;
        self.summary(started)
    }

    /// What link `i` said; `true` once every link is done.
    async fn heard(&mut self, i: usize, said: FromLink) -> bool {
        match said {
            FromLink::Events(Batch::One(event)) => self.link_event(i, event).await,
            FromLink::Events(Batch::Many(events)) => {
                for event in events {
                    self.link_event(i, event).await;
                }
            }
            FromLink::Done(summary) => {
                self.links[i].done = Some(summary);
                return self.links.iter().all(|l| l.done.is_some());
            }
        }
        false
    }

    /// A message read: to its link's queue, or to wait behind its key; past the deadline, its
    /// fate at once.
    async fn route(&mut self, message: Message, seq: u64, unsent: Option<Cause>) {
        let n = self.links.len();
        let key = match self.key {
            OrderKey::None => None,
            OrderKey::Field(path) => Some(key_hash(path.value(&message.payload))),
        };
        let link = match key {
            Some(hash) => link_of(hash, n),
            None => self.least_busy(),
        };
        self.links[link].totals.read += 1;
        let pending = Pending {
            message,
            seq,
            key,
            link,
        };
        if let Some(cause) = unsent {
            self.unsend(pending, Some(cause)).await;
            return;
        }
        self.held += 1;
        self.held_bytes += pending.message.payload.len();
        let ready = match key {
            Some(hash) => self.gate.admit(hash, pending),
            None => Some(pending),
        };
        if let Some(p) = ready {
            self.links[p.link].ready.push_back(p);
        }
    }

    /// The link with the fewest messages out and queued, the next in turn among equals.
    fn least_busy(&mut self) -> usize {
        let n = self.links.len();
        let load = |l: &Link| l.out + l.ready.len();
        let best = (0..n)
            .map(|k| (self.next_link + k) % n)
            .min_by_key(|&i| load(&self.links[i]))
            .unwrap_or(0);
        self.next_link = (best + 1) % n;
        best
    }

    /// Hand queued messages to links with room; a link that takes no more (its run ended)
    /// leaves them unsent.
    async fn flush(&mut self) {
        for i in 0..self.links.len() {
            while self.links[i].out < LINK_AHEAD {
                let Some(p) = self.links[i].ready.pop_front() else {
                    break;
                };
                let link = &self.links[i];
                let sent = match &link.tx {
                    Some(tx) if !link.closing => tx.try_send(p.message.clone()).is_ok(),
                    _ => false,
                };
                let cause = link.done.as_ref().and_then(|d| d.ending.gave_up);
                self.held -= 1;
                self.held_bytes -= p.message.payload.len();
                if !sent {
                    self.unsend(p, cause).await;
                    continue;
                }
                let link = &mut self.links[i];
                link.out += 1;
                link.ledger.push_back(Some(Entry {
                    seq: p.seq,
                    key: p.key,
                    message: p.message,
                }));
            }
        }
    }

    /// Every message held (waiting for its key or for room) ends unsent. Those waiting for
    /// their key never held it, so they release nothing.
    async fn unsend_held(&mut self, cause: Option<Cause>) {
        let mut held: Vec<Pending> = self
            .gate
            .drain()
            .into_iter()
            .map(|p| Pending { key: None, ..p })
            .collect();
        for link in &mut self.links {
            held.extend(link.ready.drain(..));
        }
        held.sort_by_key(|p| p.seq);
        self.held = 0;
        self.held_bytes = 0;
        for p in held {
            self.unsend(p, cause).await;
        }
    }

    /// A routed message's fate without its link: never delivered. The caller has taken it out
    /// of what the router holds.
    async fn unsend(&mut self, p: Pending, cause: Option<Cause>) {
        let fate = unsent(cause);
        let outcome = MessageOutcome {
            item: Item::new(p.message, p.seq),
            fate,
            cause: None,
        };
        self.settle(p.link, p.key, outcome).await;
    }

    async fn link_event(&mut self, i: usize, event: RunEvent) {
        match event {
            RunEvent::Outcome(mut outcome) => {
                let Some(entry) = self.links[i].take(outcome.item.seq) else {
                    // Not one the router handed over: impossible, so say so loudly in tests.
                    debug_assert!(false, "link {i} settled a message it was not given");
                    return;
                };
                outcome.item.seq = entry.seq;
                self.settle(i, entry.key, outcome).await;
            }
            RunEvent::Closing => {
                // No more outcomes from this link: what it never took ends unsent.
                self.links[i].closing = true;
                let left: Vec<Entry> = self.links[i].ledger.drain(..).flatten().collect();
                self.links[i].out = 0;
                for e in left {
                    let outcome = MessageOutcome {
                        item: Item::new(e.message, e.seq),
                        fate: unsent(None),
                        cause: None,
                    };
                    self.settle(i, e.key, outcome).await;
                }
                let ready: Vec<Pending> = self.links[i].ready.drain(..).collect();
                for p in ready {
                    self.held -= 1;
                    self.held_bytes -= p.message.payload.len();
                    self.unsend(p, None).await;
                }
                if !self.closing_sent && self.links.iter().all(|l| l.closing) {
                    self.closing_sent = true;
                    self.emit(None, RunEvent::Closing).await;
                }
            }
            // The router says these once for the whole run.
            RunEvent::Note(RunNote::TimedOut | RunNote::Interrupted) => {}
            other => self.emit(Some(i), other).await,
        }
    }

    /// A message's one outcome: counted, its key released, kept in `--failed-out`, handed out.
    async fn settle(&mut self, link: usize, key: Option<u64>, outcome: MessageOutcome) {
        self.totals.record(&outcome.fate);
        self.links[link].totals.record(&outcome.fate);
        if let Some(next) = key.and_then(|k| self.gate.settle(k)) {
            self.links[next.link].ready.push_back(next);
        }
        let kept = match &self.options.failed_out {
            Some(dir) if outcome.fate.population() != Population::Accepted => {
                let label = outcome.item.label();
                dir.write(outcome.item.seq, &label, &outcome.item.payload)
                    .err()
                    .map(|error| RunNote::FailedOutWrite {
                        file: file_name(outcome.item.seq, &label),
                        error,
                    })
            }
            _ => None,
        };
        self.emit(Some(link), RunEvent::Outcome(outcome)).await;
        if let Some(note) = kept {
            self.note(note).await;
        }
    }

    /// Hold an event to hand out; a whole batch goes at once.
    async fn emit(&mut self, link: Option<usize>, event: RunEvent) {
        self.held_events.push(LinkEvent { link, event });
        if self.held_events.len() >= BATCH_EVENTS {
            self.hand_out().await;
        }
    }

    /// Hand out the events held, in order, as one batch (waiting for room in the channel).
    async fn hand_out(&mut self) {
        let batch = match self.held_events.len() {
            0 => return,
            // One event: the buffer is kept, nothing allocated for it.
            1 => match self.held_events.pop() {
                Some(event) => Batch::One(event),
                None => return,
            },
            n => Batch::Many(std::mem::replace(
                &mut self.held_events,
                Vec::with_capacity(n),
            )),
        };
        if let Err(mpsc::error::TrySendError::Full(batch)) = self.out.try_send(batch) {
            let _ = self.out.send(batch).await;
        }
    }

    async fn note(&mut self, note: RunNote) {
        self.emit(None, RunEvent::Note(note)).await;
    }

    fn summary(mut self, started: Instant) -> ParallelSummary {
        let mut links = Vec::with_capacity(self.links.len());
        for link in &mut self.links {
            let done = link.done.take().unwrap_or_else(|| RunSummary {
                totals: Totals::default(),
                ending: Ending::default(),
                elapsed: started.elapsed(),
            });
            link.totals.resent = done.totals.resent;
            link.totals.reconnects = done.totals.reconnects;
            self.totals.resent += done.totals.resent;
            self.totals.reconnects += done.totals.reconnects;
            let e = done.ending;
            self.ending.gave_up = self.ending.gave_up.or(e.gave_up);
            self.ending.last_failure = self.ending.last_failure.or(e.last_failure);
            self.ending.timed_out |= e.timed_out;
            links.push(LinkSummary {
                totals: link.totals.clone(),
                ending: e,
            });
        }
        ParallelSummary {
            run: RunSummary {
                totals: self.totals,
                ending: self.ending,
                elapsed: started.elapsed(),
            },
            links,
        }
    }
}
