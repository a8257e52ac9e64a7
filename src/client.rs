//! The client core: one link state machine, reconnect with backoff, ACK correlation,
//! backpressure, drain, and per-message fate.
//!
//! A [`Client`] owns one link through an actor task: callers hand it payloads with
//! [`Client::send`] and get a [`SendHandle`] that resolves to the send's one [`Fate`]. The actor
//! connects through a [`Connector`], writes queued frames in coalesced batches, correlates ACKs
//! (by control ID, or FIFO when asked), times them out, reconnects, and drains on
//! [`Client::close`].
//!
//! # Example
//!
//! A peer that refuses every message with `AE`: the client reports the send `Negative`, never
//! `Accepted`, and nothing is left unresolved when the client closes.
//!
//! ```
//! use bytes::Bytes;
//! use mllp::client::{Client, ClientOptions, Fate};
//! use mllp::transport::TcpConnector;
//! use std::sync::Arc;
//! use tokio::io::{AsyncReadExt, AsyncWriteExt};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let peer = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
//! let port = peer.local_addr()?.port();
//! tokio::spawn(async move {
//!     let (mut socket, _) = peer.accept().await?;
//!     let mut frame = [0u8; 4096];
//!     let _ = socket.read(&mut frame).await?; // the one frame, whole on loopback
//!     let nack = b"\x0bMSH|^~\\&|RECV|FAC|APP|FAC|20240101120001||ACK|N1|P|2.5\rMSA|AE|MSG00001\r\x1c\r";
//!     socket.write_all(nack).await?;
//!     socket.read(&mut frame).await // hold the link until the client closes it
//! });
//!
//! let client = Client::new(Arc::new(TcpConnector::new("127.0.0.1", port)), ClientOptions::default())?;
//! let message = Bytes::from_static(
//!     b"MSH|^~\\&|APP|FAC|RECV|FAC|20240101120000||ADT^A01|MSG00001|P|2.5\rPID|1||12345\r",
//! );
//! match client.send(message).await.await {
//!     Fate::Negative { code, .. } => println!("refused with {code:?}"),
//!     other => panic!("a refusal is never reported as anything else: {other:?}"),
//! }
//! assert!(client.close().await.is_clean());
//! # Ok(())
//! # }
//! ```

pub(crate) mod backoff;
pub(crate) mod events;
pub(crate) mod fate;
pub(crate) mod options;
mod settings;
pub(crate) mod state;
pub(crate) mod stats;
pub(crate) mod tally;

mod actor;
mod admission;
mod fate_cell;
mod flight;
mod hosts;
pub(crate) use flight::ignores_control_ids;
mod life;
mod options_error;
mod outbox;
mod pending;
mod recent;
mod retry;
mod submit;
pub(crate) use submit::CallerStop;

pub use backoff::{
    Backoff, BackoffConfig, ExponentialBackoff, GiveUpAfter, LastError, MaxRetries, RetryContext,
    RetryStrategy,
};
pub use events::ClientEvent;
pub use fate::{AckPayload, DrainReport, Fate, FateCause, Population, Refusal, Settled};
pub use hosts::HostList;
pub use options::{
    ClientOptions, Correlation, OnBackpressure, OptionsError, Reconnect, Window,
    DEFAULT_MAX_POISON_CLOSES, DEFAULT_MAX_RESENDS,
};
pub use pending::asks_for_application_ack;
pub use retry::{RetryRule, RetryRuleError};
pub use settings::LinkSettings;
pub use state::{Reason, State, Transition};
pub use stats::{Latency, LinkFailure, Stats};
pub use tally::FateTally;

use crate::ack::AckCode;
use crate::transport::Connector;
use admission::WindowRoom;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::sync::{broadcast, mpsc, oneshot};

/// State shared between the handle side and the actor.
#[derive(Debug)]
pub(crate) struct ClientShared {
    pub admission: Arc<WindowRoom>,
    pub counters: Mutex<stats::Counters>,
}

impl ClientShared {
    pub(crate) fn counters(&self) -> std::sync::MutexGuard<'_, stats::Counters> {
        self.counters.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// What the actor is asked to do. A send travels in the box it was made in (see
/// [`pending::Pending::new`]).
pub(crate) enum Command {
    Send(Box<pending::Pending>),
    /// Sends admitted together by [`Client::send_many`], in order.
    // Each send keeps the box it was made in: unboxing here would copy it out and back.
    #[allow(clippy::vec_box)]
    SendMany(Vec<Box<pending::Pending>>),
    Cancel(u64),
    Close(oneshot::Sender<DrainReport>),
    Destroy(oneshot::Sender<DrainReport>),
}

/// The `CA` of an enhanced-mode send: the peer committed it; the application ACK may follow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Commit {
    /// The commit code (`CA`).
    pub code: AckCode,
    /// The commit ACK as received.
    pub ack: AckPayload,
    /// From the flush of its frame to the `CA`.
    pub latency: Duration,
}

/// An MLLP client over one link. Dropping it settles every pending send.
#[derive(Debug)]
pub struct Client {
    commands: mpsc::Sender<Command>,
    events: broadcast::Sender<ClientEvent>,
    first_events: Mutex<Option<broadcast::Receiver<ClientEvent>>>,
    shared: Arc<ClientShared>,
    options: Arc<ClientOptions>,
    next_id: AtomicU64,
}

impl Client {
    /// Validate `options` and start the link (state CONNECTING). Needs a tokio runtime.
    pub fn new(
        connector: Arc<dyn Connector>,
        options: ClientOptions,
    ) -> Result<Client, OptionsError> {
        options.validate()?;
        let options = Arc::new(options);
        let (events, first) = broadcast::channel(options.event_capacity);
        let capacity = options.window.count.unwrap_or(1024).clamp(1, 4096) + 8;
        let (commands, rx) = mpsc::channel(capacity);
        let shared = Arc::new(ClientShared {
            admission: Arc::new(WindowRoom::new(options.window)),
            counters: Mutex::new(stats::Counters::default()),
        });
        let actor = actor::Actor::new(
            connector,
            options.clone(),
            shared.clone(),
            events.clone(),
            rx,
        );
        tokio::spawn(actor.run());
        Ok(Client {
            commands,
            events,
            first_events: Mutex::new(Some(first)),
            shared,
            options,
            next_id: AtomicU64::new(1),
        })
    }

    /// Events. The first subscriber sees every event since creation; later ones from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<ClientEvent> {
        let first = self
            .first_events
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        first.unwrap_or_else(|| self.events.subscribe())
    }

    /// The options the client was made with, as validated.
    pub fn options(&self) -> &ClientOptions {
        &self.options
    }

    /// The link's current state.
    pub fn state(&self) -> State {
        self.shared.counters().state()
    }

    /// A snapshot of the statistics.
    pub fn stats(&self) -> Stats {
        self.shared.counters().snapshot()
    }

    /// The latency histogram (microseconds), mergeable across clients and runs.
    pub fn latency_histogram(&self) -> hdrhistogram::Histogram<u64> {
        self.shared.counters().latency().clone()
    }

    /// Drain: stop taking sends, wait for the ACKs of written sends (up to the drain timeout, or
    /// until the link fails), then close. Reports what is left by population.
    pub async fn close(&self) -> DrainReport {
        self.request(Command::Close).await
    }

    /// Close at once: every pending send settles now, no ACK is awaited.
    pub async fn destroy(&self) -> DrainReport {
        self.request(Command::Destroy).await
    }

    async fn request(&self, make: fn(oneshot::Sender<DrainReport>) -> Command) -> DrainReport {
        let (tx, rx) = oneshot::channel();
        if self.commands.send(make(tx)).await.is_err() {
            return DrainReport::default();
        }
        rx.await.unwrap_or_default()
    }
}

/// One send's future fate. Await it for the [`Fate`]; it never fails.
#[derive(Debug)]
pub struct SendHandle {
    id: u64,
    fate: fate_cell::FateRx,
    commit: Option<oneshot::Receiver<Commit>>,
    commands: mpsc::WeakSender<Command>,
}

impl SendHandle {
    /// This send's id within its client (drain reports list sends by id).
    pub fn id(&self) -> u64 {
        self.id
    }

    /// How many times its frame was written so far: more than once when control-ID
    /// correlation wrote it again on a new connection. Read it after awaiting `&mut handle`.
    pub fn writes(&self) -> u32 {
        self.fate.writes()
    }

    /// Cancel: never delivered if not yet written, unknown fate if written.
    pub fn cancel(&self) {
        if let Some(commands) = self.commands.upgrade() {
            // A full channel means the actor is busy; the cancel then waits its turn in a task.
            if let Err(mpsc::error::TrySendError::Full(cmd)) =
                commands.try_send(Command::Cancel(self.id))
            {
                tokio::spawn(async move {
                    let _ = commands.send(cmd).await;
                });
            }
        }
    }

    /// The `CA` of an enhanced-mode send under control-ID correlation, when it arrives; `None`
    /// once the send settled without one (or when called a second time).
    pub async fn committed(&mut self) -> Option<Commit> {
        self.commit.take()?.await.ok()
    }

    /// [`SendHandle::committed`] as a future that owns what it waits on, so the handle stays
    /// free to be awaited for its fate, or cancelled, meanwhile (a relay waits on both).
    #[cfg(feature = "sqlite")]
    pub(crate) fn take_committed(
        &mut self,
    ) -> impl Future<Output = Option<Commit>> + Send + 'static {
        let commit = self.commit.take();
        async move { commit?.await.ok() }
    }
}

impl Future for SendHandle {
    type Output = Fate;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Fate> {
        self.fate.poll_fate(cx).map(|fate| {
            fate.unwrap_or(Fate::NeverDelivered {
                cause: FateCause::ClientDropped,
            })
        })
    }
}

#[cfg(test)]
pub(crate) mod tests;
