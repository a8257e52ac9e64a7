//! A delivery run over several links: a router reads the input once, picks each message's link
//! by the hash of its [`OrderKey`] (or the least busy link without one), holds a message back
//! while an earlier one of its key is still out, and feeds one [`Run`] per link, each on its
//! own [`Client`] with its own connection, reconnects and backpressure. Their outcomes come back
//! through the router, which renumbers them in input order, writes failed-message files, and
//! keeps the one accounting: every message read gets exactly one outcome, from its link or,
//! when the run ends before its link took it, from the router.

use super::event::{Item, MessageOutcome, RunEvent, RunNote};
use super::failed::file_name;
use super::feed::{Feed, Input};
use super::gate::Gate;
use super::key::{key_hash, link_of, OrderKey};
use super::totals::{Ending, RunSummary, Totals};
use super::{Run, RunControls, RunOptions, EVENTS_AHEAD};
use crate::cause::Cause;
use crate::client::{Client, Fate, FateCause, Population, Stats};
use crate::input::Message;
use std::collections::VecDeque;
use std::sync::Weak;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::Instant;

/// Messages handed to one link and not yet settled, at most, beyond which the router holds
/// them; and what the router holds (waiting for a key or for room on a link), at most, in
/// messages and bytes, before it reads no more: memory stays bounded however long the input.
const LINK_AHEAD: usize = 256;
const HOLD: usize = 1024;
const HOLD_BYTES: usize = 8 << 20;

/// A run event and the link it came from (`None`: the run as a whole).
#[derive(Debug)]
pub struct LinkEvent {
    /// The link's 0-based place among the run's links.
    pub link: Option<usize>,
    /// The event, as a single run hands it out.
    pub event: RunEvent,
}

/// One link's share of a parallel run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkSummary {
    /// Messages routed to it (`read`) and their fates; its resends and reconnects.
    pub totals: Totals,
    /// How the link's run ended.
    pub ending: Ending,
}

/// A parallel run's summary: the whole run, as one run's would be, and each link's share.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParallelSummary {
    /// The whole run: all links' totals together, how it ended and how long it took.
    pub run: RunSummary,
    /// Each link's share, in link order.
    pub links: Vec<LinkSummary>,
}

/// A delivery run over several links, under way. Read its events to the end with
/// [`ParallelRun::next`], then take [`ParallelRun::finish`].
pub struct ParallelRun {
    events: mpsc::Receiver<LinkEvent>,
    controls: RunControls,
    clients: Vec<Weak<Client>>,
    task: Option<JoinHandle<ParallelSummary>>,
    ended: bool,
}

impl ParallelRun {
    /// Start sending `input` over `clients`, one link each, messages ordered by `key`. The
    /// options apply to every link; a rate is shared evenly among them. Needs a tokio runtime
    /// and at least one client. Clients should wait on backpressure
    /// ([`OnBackpressure::Wait`](crate::client::OnBackpressure::Wait)), as for [`Run::start`].
    pub fn start(
        clients: Vec<Client>,
        input: Input,
        options: RunOptions,
        key: OrderKey,
    ) -> ParallelRun {
        assert!(!clients.is_empty(), "a parallel run needs a link");
        let n = clients.len();
        let (feed, endless) = input.into_parts();
        let (from_links_tx, from_links) = mpsc::channel(EVENTS_AHEAD);
        let mut links = Vec::with_capacity(n);
        let mut weak = Vec::with_capacity(n);
        for (i, client) in clients.into_iter().enumerate() {
            let (tx, rx) = mpsc::channel(LINK_AHEAD);
            let link_options = RunOptions {
                rate: options.rate.map(|r| r / n as f64),
                // Written by the router, numbered in the whole input's order.
                failed_out: None,
                ..options.clone()
            };
            let mut run = Run::start(client, Input::from_channel(rx, endless), link_options);
            weak.push(run.client.clone());
            links.push(Link::new(tx, run.controls()));
            let to = from_links_tx.clone();
            tokio::spawn(async move {
                while let Some(event) = run.next().await {
                    if to.send((i, FromLink::Event(event))).await.is_err() {
                        break;
                    }
                }
                let summary = run.finish().await;
                let _ = to.send((i, FromLink::Done(summary))).await;
            });
        }
        let controls = RunControls::new();
        let (tx, events) = mpsc::channel(EVENTS_AHEAD);
        let router = Router {
            key,
            links,
            gate: Gate::default(),
            options,
            out: tx,
            totals: Totals::default(),
            ending: Ending::default(),
            held: 0,
            held_bytes: 0,
            next_link: 0,
            closing_sent: false,
        };
        let task = tokio::spawn(router.run(feed, endless, from_links, controls.clone()));
        ParallelRun {
            events,
            controls,
            clients: weak,
            task: Some(task),
            ended: false,
        }
    }

    /// The next event; `None` once the run is over. Cancel-safe.
    pub async fn next(&mut self) -> Option<LinkEvent> {
        let event = self.events.recv().await;
        self.ended = event.is_none();
        event
    }

    /// Whether events are waiting to be taken.
    pub fn has_pending(&self) -> bool {
        !self.events.is_empty()
    }

    /// Stop, destroy or abandon the whole run (every link), as for [`Run::controls`].
    pub fn controls(&self) -> RunControls {
        self.controls.clone()
    }

    /// Each link's client statistics, while its run still holds it.
    pub fn stats(&self) -> Vec<Option<Stats>> {
        self.clients
            .iter()
            .map(|c| c.upgrade().map(|c| c.stats()))
            .collect()
    }

    /// The summary, once the run is over (abandoned first when its events were not all taken).
    pub async fn finish(mut self) -> ParallelSummary {
        if !self.ended {
            self.controls.abandon();
            self.events.close();
        }
        let Some(task) = self.task.take() else {
            return std::future::pending().await;
        };
        match task.await {
            Ok(summary) => summary,
            Err(error) => match error.try_into_panic() {
                Ok(panic) => std::panic::resume_unwind(panic),
                Err(_) => std::future::pending().await,
            },
        }
    }
}

impl std::fmt::Debug for ParallelRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ParallelRun")
            .field("links", &self.clients.len())
            .field("ended", &self.ended)
            .finish_non_exhaustive()
    }
}

impl Drop for ParallelRun {
    fn drop(&mut self) {
        if self.task.is_some() {
            self.controls.abandon();
        }
    }
}

/// What a link's run hands the router.
enum FromLink {
    Event(RunEvent),
    Done(RunSummary),
}

/// A message read and routed, not yet handed to its link.
struct Pending {
    message: Message,
    seq: u64,
    key: Option<u64>,
    link: usize,
}

/// A message handed to a link, until its outcome names it.
struct Entry {
    seq: u64,
    key: Option<u64>,
    message: Message,
}

struct Link {
    tx: Option<mpsc::Sender<Message>>,
    controls: RunControls,
    /// By the link run's own numbering (the order it took them), from `base`.
    ledger: VecDeque<Option<Entry>>,
    base: u64,
    /// Entries still `Some`.
    out: usize,
    ready: VecDeque<Pending>,
    totals: Totals,
    closing: bool,
    done: Option<RunSummary>,
}

impl Link {
    fn new(tx: mpsc::Sender<Message>, controls: RunControls) -> Link {
        Link {
            tx: Some(tx),
            controls,
            ledger: VecDeque::new(),
            base: 1,
            out: 0,
            ready: VecDeque::new(),
            totals: Totals::default(),
            closing: false,
            done: None,
        }
    }

    /// Take the entry the link numbered `seq`.
    fn take(&mut self, seq: u64) -> Option<Entry> {
        let at = usize::try_from(seq.checked_sub(self.base)?).ok()?;
        let entry = self.ledger.get_mut(at)?.take()?;
        self.out -= 1;
        while let Some(None) = self.ledger.front() {
            self.ledger.pop_front();
            self.base += 1;
        }
        Some(entry)
    }
}

struct Router {
    key: OrderKey,
    links: Vec<Link>,
    gate: Gate<Pending>,
    options: RunOptions,
    out: mpsc::Sender<LinkEvent>,
    totals: Totals,
    ending: Ending,
    held: usize,
    held_bytes: usize,
    next_link: usize,
    closing_sent: bool,
}

/// Never written: the run ended before the message's link took it.
fn unsent(cause: Option<Cause>) -> Fate {
    Fate::NeverDelivered {
        cause: cause.map_or(FateCause::Closed, FateCause::Link),
    }
}

impl Router {
    async fn run(
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
        loop {
            let room = self.held < HOLD && self.held_bytes < HOLD_BYTES;
            tokio::select! {
                biased;
                from = from_links.recv() => match from {
                    Some((i, FromLink::Event(event))) => self.link_event(i, event).await,
                    Some((i, FromLink::Done(summary))) => {
                        self.links[i].done = Some(summary);
                        if self.links.iter().all(|l| l.done.is_some()) {
                            break;
                        }
                    }
                    None => break,
                },
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
                () = controls.stop.cancelled(), if !stopped && !destroyed => {
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
                () = controls.destroy.cancelled(), if !destroyed => {
                    destroyed = true;
                    self.ending.interrupted = true;
                    reading = false;
                    feed.close();
                    self.unsend_held(None).await;
                    self.links.iter().for_each(|l| l.controls.destroy());
                }
                () = controls.abandon.cancelled(), if !abandoned => {
                    abandoned = true;
                    self.ending.abandoned = !input_done;
                    reading = false;
                    feed.close();
                    self.unsend_held(None).await;
                    self.links.iter().for_each(|l| l.controls.abandon());
                }
                message = feed.recv(), if reading && room => match message {
                    Some(Ok(message)) => {
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
                    Some(Err(error)) => {
                        (reading, input_done) = (false, true);
                        self.ending.input_failed = true;
                        self.note(RunNote::InputError(error)).await;
                    }
                    None => (reading, input_done) = (false, true),
                },
            }
            self.flush().await;
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
        self.summary(started)
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

    async fn emit(&self, link: Option<usize>, event: RunEvent) {
        let _ = self.out.send(LinkEvent { link, event }).await;
    }

    async fn note(&self, note: RunNote) {
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

#[cfg(test)]
mod tests;
