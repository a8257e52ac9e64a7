//! The router: reads the input once, routes each message (by `routes`: behind its key, or to
//! the least busy link with room), and turns the links' outcomes into the run's one accounting.

mod outcomes;

use super::super::event::{EventBatch, Item, MessageOutcome, RunNote};
use super::super::feed::Feed;
use super::super::key::{key_hash, OrderKey};
use super::super::totals::{Ending, RunSummary, Totals};
use super::super::why;
use super::super::{RunControls, RunOptions};
use super::link::{Entry, FromLink, Link, Pending};
use super::routes::Routes;
use super::{LinkEvent, LinkSummary, ParallelSummary, HOLD, HOLD_BYTES, LINK_AHEAD};
use crate::cause::Cause;
use crate::input::{InputError, Message};
use tokio::sync::mpsc;
use tokio::time::Instant;

/// Messages read, or things the links said, taken in one turn of the loop at most, before the
/// controls and the deadline are looked at again.
const TAKEN_PER_TURN: usize = 64;

pub(super) struct Router {
    pub(super) key: OrderKey,
    pub(super) links: Vec<Link>,
    pub(super) routes: Routes,
    pub(super) options: RunOptions,
    pub(super) out: mpsc::Sender<EventBatch<LinkEvent>>,
    /// Events made and not yet handed out, in order: sent as one batch at the end of a turn,
    /// or once [`BATCH_EVENTS`] are held.
    pub(super) held_events: Vec<LinkEvent>,
    pub(super) totals: Totals,
    pub(super) ending: Ending,
    pub(super) held: usize,
    pub(super) held_bytes: usize,
    pub(super) closing_sent: bool,
}

/// Where the run stands: whether the input is still read, and what has ended the run.
#[derive(Debug, Default)]
struct Flow {
    reading: bool,
    input_done: bool,
    past_deadline: bool,
    stopped: bool,
    destroyed: bool,
    abandoned: bool,
    read: u64,
}

impl Flow {
    /// The cause a message read now ends with, never sent; `None` while the run sends.
    fn unsent_cause(&self) -> Option<Cause> {
        let ending = Ending {
            timed_out: self.past_deadline,
            interrupted: self.stopped || self.destroyed,
            ..Ending::default()
        };
        why::cause(None, &ending)
    }

    /// Nothing more will be handed to a link.
    fn handing_over(&self) -> bool {
        self.reading && !self.past_deadline && !self.stopped && !self.destroyed
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
        let mut flow = Flow {
            reading: true,
            ..Flow::default()
        };
        // Made once: waits made afresh each turn register with their token, and unregister,
        // every time the loop goes round.
        let any = controls.any.cancelled();
        let stop = controls.stop.cancelled();
        let destroy = controls.destroy.cancelled();
        let abandon = controls.abandon.cancelled();
        tokio::pin!(any, stop, destroy, abandon);
        // Until a control came, one wait stands for the three; then each is looked at.
        let mut controlled = false;
        loop {
            let room = self.held < HOLD && self.held_bytes < HOLD_BYTES;
            tokio::select! {
                biased;
                from = from_links.recv() => {
                    if self.heard_all(from, &mut from_links).await {
                        break;
                    }
                }
                () = &mut timer, if !flow.past_deadline => {
                    self.deadline_passed(&mut flow, &mut feed, endless).await;
                }
                () = &mut any, if !controlled => controlled = true,
                () = &mut stop, if controlled && !flow.stopped && !flow.destroyed => {
                    self.stopped(&mut flow, &mut feed, endless).await;
                }
                () = &mut destroy, if controlled && !flow.destroyed => {
                    flow.destroyed = true;
                    self.ended_now(&mut flow, &mut feed).await;
                    self.links.iter().for_each(|l| l.controls.destroy());
                }
                () = &mut abandon, if controlled && !flow.abandoned => {
                    flow.abandoned = true;
                    self.ending.abandoned = !flow.input_done;
                    self.ending.interrupted |= flow.destroyed;
                    self.ended_now(&mut flow, &mut feed).await;
                    self.links.iter().for_each(|l| l.controls.abandon());
                }
                message = feed.recv(), if flow.reading && room => {
                    self.read_some(message, &mut feed, &mut flow).await;
                }
            }
            self.flush().await;
            self.hand_out().await;
            // Nothing more to hand over: each link's input ends, and each link drains.
            if !flow.handing_over() && self.held == 0 {
                self.links.iter_mut().for_each(|l| l.tx = None);
            }
        }
        self.read_rest(&mut feed, endless, &mut flow).await;
        self.hand_out().await;
        self.summary(started)
    }

    /// What the links said, the first and what else came meanwhile (without a select each);
    /// `true` once every link is done (or none can say more).
    async fn heard_all(
        &mut self,
        first: Option<(usize, FromLink)>,
        from_links: &mut mpsc::Receiver<(usize, FromLink)>,
    ) -> bool {
        let Some(first) = first else { return true };
        let mut from = Some(first);
        let mut more = TAKEN_PER_TURN;
        while let Some((i, said)) = from.take() {
            if self.heard(i, said).await {
                return true;
            }
            more -= 1;
            if more > 0 {
                from = from_links.try_recv().ok();
            }
        }
        false
    }

    /// The deadline passed: what is held ends unsent (`run-timeout`); an endless input is
    /// read no more.
    async fn deadline_passed(&mut self, flow: &mut Flow, feed: &mut Feed, endless: bool) {
        flow.past_deadline = true;
        self.ending.timed_out = true;
        self.note(RunNote::TimedOut).await;
        self.unsend_held(Some(Cause::RunTimeout)).await;
        if endless {
            flow.reading = false;
            feed.close();
        }
    }

    /// Stopped: what is held ends unsent (`interrupted`), each link drains. A finite input is
    /// read to its end, each message reported, never sent.
    async fn stopped(&mut self, flow: &mut Flow, feed: &mut Feed, endless: bool) {
        flow.stopped = true;
        self.ending.interrupted = true;
        if endless {
            flow.reading = false;
            feed.close();
        }
        self.note(RunNote::Interrupted).await;
        self.unsend_held(Some(Cause::Interrupted)).await;
        self.links.iter().for_each(|l| l.controls.stop());
    }

    /// Destroyed or abandoned: nothing more is read, what is held ends unsent.
    async fn ended_now(&mut self, flow: &mut Flow, feed: &mut Feed) {
        self.ending.interrupted |= flow.destroyed;
        flow.reading = false;
        feed.close();
        self.unsend_held(None).await;
    }

    /// A message read (`None`: the input is over), and the others of the chunk in hand while
    /// there is room for them.
    async fn read_some(
        &mut self,
        mut message: Option<Result<Message, InputError>>,
        feed: &mut Feed,
        flow: &mut Flow,
    ) {
        if message.is_none() {
            (flow.reading, flow.input_done) = (false, true);
        }
        let mut more = TAKEN_PER_TURN;
        while let Some(next) = message.take() {
            match next {
                Ok(message) => {
                    flow.read += 1;
                    self.totals.read += 1;
                    self.route(message, flow.read, flow.unsent_cause()).await;
                }
                Err(error) => {
                    (flow.reading, flow.input_done) = (false, true);
                    self.ending.input_failed = true;
                    self.note(RunNote::InputError(error)).await;
                    return;
                }
            }
            more -= 1;
            if more > 0 && self.held < HOLD && self.held_bytes < HOLD_BYTES {
                message = feed.try_recv();
            }
        }
    }

    /// The links ended before a finite input did (past the deadline, or stopped): the rest is
    /// read, each message reported, never sent.
    async fn read_rest(&mut self, feed: &mut Feed, endless: bool, flow: &mut Flow) {
        let cause = if flow.past_deadline {
            Cause::RunTimeout
        } else {
            Cause::Interrupted
        };
        while flow.reading && !endless {
            match feed.recv().await {
                Some(Ok(message)) => {
                    flow.read += 1;
                    self.totals.read += 1;
                    self.route(message, flow.read, Some(cause)).await;
                }
                Some(Err(error)) => {
                    flow.reading = false;
                    self.ending.input_failed = true;
                    self.note(RunNote::InputError(error)).await;
                }
                None => flow.reading = false,
            }
        }
    }

    /// A message read: ready for its link or waiting behind its key; when the run no longer
    /// sends, its fate at once.
    async fn route(&mut self, message: Message, seq: u64, unsent: Option<Cause>) {
        let key = match self.key {
            OrderKey::None => None,
            OrderKey::Field(path) => Some(key_hash(path.value(&message.payload))),
        };
        let link = self.routes.link_for(key);
        let pending = Pending {
            message,
            seq,
            key,
            link,
        };
        if let Some(cause) = unsent {
            // It never held its key: ending it releases nothing.
            let pending = Pending {
                key: None,
                ..pending
            };
            self.unsend(pending, Some(cause)).await;
            return;
        }
        self.held += 1;
        self.held_bytes += pending.message.payload.len();
        self.routes.route(pending);
    }

    /// Hand free messages to links with room; a link that takes no more (its run ended)
    /// leaves them unsent.
    async fn flush(&mut self) {
        while let Some(p) = self.routes.next_out(LINK_AHEAD) {
            let i = p.link;
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
            self.routes.handed(i);
            self.links[i].ledger.push_back(Some(Entry {
                seq: p.seq,
                key: p.key,
                message: p.message,
            }));
        }
    }

    /// Every message held (waiting for its key or for its link) ends unsent.
    async fn unsend_held(&mut self, cause: Option<Cause>) {
        let held = self.routes.drain();
        self.held = 0;
        self.held_bytes = 0;
        for p in held {
            self.unsend(p, cause).await;
        }
    }

    /// A routed message's fate without its link: never delivered. The caller has taken it out
    /// of what the router holds.
    async fn unsend(&mut self, p: Pending, cause: Option<Cause>) {
        let fate = why::never_handed_over(cause);
        let outcome = MessageOutcome {
            item: Item::new(p.message, p.seq),
            fate,
            cause: None,
        };
        self.settle(p.link, p.key, outcome).await;
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
