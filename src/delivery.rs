//! Delivery on top of the client: a run that takes messages in, sends each through one
//! [`Client`], and hands out exactly one final [`MessageOutcome`] per message, in input order
//! with the run's [`RunNote`]s and a [`RunSummary`] at the end. It is the
//! engine behind `mllp send`, with the same guarantees: nothing read is dropped, every fate is
//! counted once, memory stays bounded however long the input (a few hundred messages read
//! ahead, the window, and a bounded queue of fates awaited in order).
//!
//! - [`Input`]: an [`InputSet`](crate::input::InputSet) read on a thread of its own, or any
//!   channel of [`Message`](crate::input::Message)s.
//! - [`RunOptions`]: a rate, a deadline, and a [`FailedOut`] directory for the messages not
//!   accepted.
//! - [`Run`]: started on a client; [`Run::next`] gives [`RunEvent`]s until the run is over, then
//!   [`Run::finish`] gives the [`RunSummary`]: the [`Totals`] (built on the one
//!   [`FateTally`](crate::client::FateTally)) and the [`Ending`].
//! - [`RunControls`]: stop (no more reading; written messages drain), destroy (settle everything
//!   now), abandon (nobody takes the results any more), from any task.
//!
//! # Example
//!
//! Three messages from a channel to a receiver on a loopback port, each outcome as it comes:
//!
//! ```
//! use bytes::Bytes;
//! use mllp::client::{Client, ClientOptions, Population};
//! use mllp::delivery::{RunEvent, Input, RunOptions, Run};
//! use mllp::input::Message;
//! use mllp::server::{DiscardSink, Server, ServerConfig, Shutdown};
//! use mllp::transport::TcpConnector;
//! use std::sync::Arc;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
//! let port = listener.local_addr()?.port();
//! let server = Server::builder(ServerConfig::default(), Arc::new(DiscardSink)).build()?;
//! let shutdown = Shutdown::new();
//! tokio::spawn({
//!     let shutdown = shutdown.clone();
//!     async move { server.run(listener, shutdown).await }
//! });
//!
//! let (messages, input) = tokio::sync::mpsc::channel(16);
//! tokio::spawn(async move {
//!     for n in 1..=3u64 {
//!         let msh = format!("MSH|^~\\&|APP|FAC|RECV|FAC|20240101120000||ADT^A01|MSG{n}|P|2.5");
//!         let message = Message {
//!             source: "example".into(),
//!             index: n,
//!             line: 1,
//!             offset: 0,
//!             payload: Bytes::from(msh + "\r"),
//!             original_control_id: None,
//!         };
//!         if messages.send(message).await.is_err() {
//!             return;
//!         }
//!     }
//! });
//!
//! let connector = Arc::new(TcpConnector::new("127.0.0.1", port));
//! let client = Client::new(connector, ClientOptions::default())?;
//! let input = Input::from_channel(input, false);
//! let mut run = Run::start(client, input, RunOptions::default());
//! while let Some(event) = run.next().await {
//!     if let RunEvent::Outcome(outcome) = event {
//!         println!("{} {}", outcome.item.label(), outcome.fate.population().as_str());
//!     }
//! }
//! let summary = run.finish().await;
//! assert!(summary.totals.adds_up());
//! assert_eq!(summary.totals.count(Population::Accepted), 3);
//! shutdown.graceful.cancel();
//! # Ok(())
//! # }
//! ```

mod collect;
mod event;
mod failed;
mod feed;
mod gate;
mod inbox;
mod key;
mod parallel;
mod produce;
mod totals;
mod why;

pub use event::{Item, MessageOutcome, RunEvent, RunNote};
pub use failed::{FailedOut, FailedOutError};
pub use feed::Input;
pub use key::{OrderKey, OrderKeyError};
pub use parallel::{LinkEvent, LinkSummary, ParallelRun, ParallelSummary};
pub use totals::{Ending, RunSummary, Totals};
pub use why::shown_cause;

use crate::client::{Client, Stats};
use std::sync::{Arc, Weak};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// What a run needs to know beyond the client and its input. (What a reconnect leaves
/// unanswered the client writes again itself, in order, by its
/// [`ClientOptions`](crate::client::ClientOptions): `max_resends`, `at_least_once`.)
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Messages handed to the client per second, at most, evenly spaced; after a stall longer
    /// than a second the spacing starts afresh rather than bursting.
    pub rate: Option<f64>,
    /// The run ends by then: nothing more is sent, and what is left is reported. Sending stops
    /// early enough to report the rest (and write it to `failed_out`) by the deadline, as far as
    /// [`RunOptions::messages`] says how much is left.
    pub deadline: Option<tokio::time::Instant>,
    /// How many messages the input holds, when it was checked ahead: the deadline leaves room
    /// to report the ones not yet settled.
    pub messages: Option<u64>,
    /// Where each message that did not end accepted is written, one file each.
    pub failed_out: Option<FailedOut>,
}

/// How a run is stopped from outside ([`Run::controls`]); clones control the same run.
#[derive(Debug, Clone)]
pub struct RunControls {
    stop: CancellationToken,
    destroy: CancellationToken,
    abandon: CancellationToken,
    /// Cancelled after each of the three: the run's loops wait on it alone until one came,
    /// rather than polling three waits (each a lock) every time they go round.
    any: CancellationToken,
}

impl RunControls {
    fn new() -> RunControls {
        RunControls {
            stop: CancellationToken::new(),
            destroy: CancellationToken::new(),
            abandon: CancellationToken::new(),
            any: CancellationToken::new(),
        }
    }

    /// Send no more; written messages drain (their ACKs are awaited up to the client's drain
    /// timeout). The rest of a finite input is still read and each message reported
    /// never-delivered with cause `interrupted`, so the run accounts for all of it; an endless
    /// input is read no more. The run ends interrupted, with a [`RunNote::Interrupted`].
    pub fn stop(&self) {
        self.stop.cancel();
        self.any.cancel();
    }

    /// Settle every message now, awaiting no ACK; the rest of a finite input as for
    /// [`RunControls::stop`]. The run ends interrupted.
    pub fn destroy(&self) {
        self.destroy.cancel();
        self.any.cancel();
    }

    /// Nobody takes the results any more: read no more, drain, and end without calling it an
    /// interruption ([`Ending::abandoned`] when input was left unread).
    pub fn abandon(&self) {
        self.abandon.cancel();
        self.any.cancel();
    }
}

/// Events a run hands out ahead of its reader, at most: a slow reader holds the run back.
const EVENTS_AHEAD: usize = 1024;

/// One delivery run, under way.
pub struct Run {
    events: mpsc::Receiver<event::EventBatch>,
    /// The rest of the last batch taken, handed out before the next is taken.
    taken: std::vec::IntoIter<RunEvent>,
    controls: RunControls,
    client: Weak<Client>,
    task: Option<JoinHandle<RunSummary>>,
    ended: bool,
}

impl Run {
    /// Start sending `input` through `client` under `options`. Needs a tokio runtime. The run owns
    /// the client and closes it at its end. Read its events to the end with [`Run::next`]: they
    /// are what the run waits on. A client made with
    /// [`OnBackpressure::Wait`](crate::client::OnBackpressure::Wait) holds the input back when
    /// the window is full; with the default `Reject`, what does not fit ends `refused`.
    pub fn start(client: Client, input: Input, options: RunOptions) -> Run {
        let client = Arc::new(client);
        let controls = RunControls::new();
        let (tx, events) = mpsc::channel(event::BATCHES_AHEAD);
        let task = tokio::spawn(collect::collect(
            client.clone(),
            input,
            options,
            controls.clone(),
            event::Out(tx),
        ));
        Run {
            events,
            taken: Vec::new().into_iter(),
            controls,
            client: Arc::downgrade(&client),
            task: Some(task),
            ended: false,
        }
    }

    /// The next event; `None` once the run is over. Cancel-safe.
    pub async fn next(&mut self) -> Option<RunEvent> {
        loop {
            if let Some(event) = self.taken.next() {
                return Some(event);
            }
            match self.events.recv().await {
                Some(event::EventBatch::One(event)) => return Some(event),
                Some(event::EventBatch::Many(events)) => self.taken = events.into_iter(),
                None => {
                    self.ended = true;
                    return None;
                }
            }
        }
    }

    /// The next events, as many as came together (for a reader that passes them on); `None`
    /// once the run is over. Not to be mixed with [`Run::next`] but for events it left.
    async fn next_batch(&mut self) -> Option<event::EventBatch> {
        if self.taken.len() > 0 {
            return Some(event::EventBatch::Many(
                std::mem::take(&mut self.taken).collect(),
            ));
        }
        let batch = self.events.recv().await;
        self.ended = batch.is_none();
        batch
    }

    /// Whether events are waiting to be taken: a renderer that buffers flushes when none are.
    pub fn has_pending(&self) -> bool {
        self.taken.len() > 0 || !self.events.is_empty()
    }

    /// A handle that stops, destroys or abandons this run from another task.
    pub fn controls(&self) -> RunControls {
        self.controls.clone()
    }

    /// The client's statistics while the run still holds it.
    pub fn stats(&self) -> Option<Stats> {
        self.client.upgrade().map(|client| client.stats())
    }

    /// The run's summary, once it is over. Events not taken are dropped; a run whose events were
    /// not all taken is abandoned first.
    pub async fn finish(mut self) -> RunSummary {
        if !self.ended {
            self.controls.abandon();
            self.events.close();
        }
        summary_of(self.task.take()).await
    }
}

/// What a run's task returned: its panic carried on to the caller, and no end at all when there
/// is no task (already taken) or it was cancelled (the runtime is shutting down, and the run
/// with it).
pub(crate) async fn summary_of<T>(task: Option<JoinHandle<T>>) -> T {
    let Some(task) = task else {
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

impl std::fmt::Debug for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Run")
            .field("pending", &(self.taken.len() + self.events.len()))
            .field("ended", &self.ended)
            .finish_non_exhaustive()
    }
}

impl Drop for Run {
    /// A run dropped before its end is abandoned: it drains and ends on its own.
    fn drop(&mut self) {
        if self.task.is_some() {
            self.controls.abandon();
        }
    }
}

#[cfg(test)]
pub(crate) mod test_rig;
#[cfg(test)]
mod tests;
