//! A delivery run over several links: a router reads the input once, holds a message back while
//! an earlier one of its [`OrderKey`] is still out and then sends it over the link that held
//! its key, sends any other to the least busy link with room, and feeds one [`Run`] per link, each on its
//! own [`Client`] with its own connection, reconnects and backpressure. Their outcomes come back
//! through the router, which renumbers them in input order, writes failed-message files, and
//! keeps the one accounting: every message read gets exactly one outcome, from its link or,
//! when the run ends before its link took it, from the router.

mod link;
mod router;
mod routes;

use super::event::RunEvent;
use super::event::{EventBatch, BATCHES_AHEAD};
use super::feed::Input;
use super::key::OrderKey;
use super::totals::{Ending, RunSummary, Totals};
use super::{Run, RunControls, RunOptions, EVENTS_AHEAD};
use crate::client::{Client, Stats};
use link::{FromLink, Link};
use router::Router;
use routes::Routes;
use std::sync::Weak;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

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
    events: mpsc::Receiver<EventBatch<LinkEvent>>,
    /// The rest of the last batch taken, handed out before the next is taken.
    taken: std::vec::IntoIter<LinkEvent>,
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
                while let Some(events) = run.next_batch().await {
                    if to.send((i, FromLink::Events(events))).await.is_err() {
                        break;
                    }
                }
                let summary = run.finish().await;
                let _ = to.send((i, FromLink::Done(summary))).await;
            });
        }
        let controls = RunControls::new();
        let (tx, events) = mpsc::channel(BATCHES_AHEAD);
        let router = Router {
            key,
            links,
            routes: Routes::new(n),
            options,
            out: tx,
            held_events: Vec::new(),
            totals: Totals::default(),
            ending: Ending::default(),
            held: 0,
            held_bytes: 0,
            closing_sent: false,
        };
        let task = tokio::spawn(router.run(feed, endless, from_links, controls.clone()));
        ParallelRun {
            events,
            taken: Vec::new().into_iter(),
            controls,
            clients: weak,
            task: Some(task),
            ended: false,
        }
    }

    /// The next event; `None` once the run is over. Cancel-safe.
    pub async fn next(&mut self) -> Option<LinkEvent> {
        loop {
            if let Some(event) = self.taken.next() {
                return Some(event);
            }
            match self.events.recv().await {
                Some(EventBatch::One(event)) => return Some(event),
                Some(EventBatch::Many(events)) => self.taken = events.into_iter(),
                None => {
                    self.ended = true;
                    return None;
                }
            }
        }
    }

    /// Whether events are waiting to be taken.
    pub fn has_pending(&self) -> bool {
        self.taken.len() > 0 || !self.events.is_empty()
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
        super::summary_of(self.task.take()).await
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

#[cfg(test)]
mod tests;
