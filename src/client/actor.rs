//! The actor that owns the link: it composes the flight table ([`Flights`]), the outbox of
//! events and fates ([`Outbox`]) and the lifecycle (connect, back off, reconnect, close in
//! `lifecycle`; the connected phase in `link`).

use super::events::ClientEvent;
use super::fate::{DrainReport, FateCause};
use super::flight::Flights;
use super::options::ClientOptions;
use super::outbox::Outbox;
use super::pending::Pending;
use super::state::{self, Reason, State};
use super::{Command, Shared};
use crate::transport::Connector;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{broadcast, mpsc, oneshot};
use tokio::time::Instant;

/// The actor composes the flight table, the outbox and the link's lifecycle, and routes
/// commands, ACKs and timers between them.
pub(crate) struct Actor {
    pub(super) connector: Arc<dyn Connector>,
    pub(super) options: Arc<ClientOptions>,
    pub(super) rx: mpsc::Receiver<Command>,
    pub(super) flights: Flights,
    pub(super) out: Outbox,
    pub(super) state: State,
    /// Callers of `close()` waiting for the drain to end.
    pub(super) closing: Vec<oneshot::Sender<DrainReport>>,
    pub(super) episode: Option<Episode>,
    /// Whether the current connection wrote a frame, and whether anything came back on it: a
    /// link that takes frames and answers nothing before it drops does not end a reconnect
    /// episode, so a peer that closes every connection at once meets the retry limits.
    pub(super) wrote_on_link: bool,
    pub(super) heard_on_link: bool,
    pub(super) last_success: Option<Instant>,
}

/// One reconnect episode: from the first failure to the next connection that proved useful
/// (something came back on it, or it had nothing to carry).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Episode {
    pub started: Instant,
    pub attempt: u32,
    pub last_delay: Option<Duration>,
}

impl Actor {
    pub fn new(
        connector: Arc<dyn Connector>,
        options: Arc<ClientOptions>,
        shared: Arc<Shared>,
        events: broadcast::Sender<ClientEvent>,
        rx: mpsc::Receiver<Command>,
    ) -> Self {
        Actor {
            connector,
            flights: Flights::new(options.clone()),
            options,
            out: Outbox::new(shared, events),
            rx,
            state: State::Connecting,
            closing: Vec::new(),
            episode: None,
            wrote_on_link: false,
            heard_on_link: false,
            last_success: None,
        }
    }

    pub fn emit(&self, event: ClientEvent) {
        self.out.emit(event);
    }

    pub fn transition(&mut self, to: State, reason: Reason) {
        match state::apply(self.state, to, reason) {
            Ok(t) => {
                self.state = to;
                self.out.shared().counters().state = to;
                self.emit(ClientEvent::StateChange(t));
            }
            // The actor only asks for table transitions; reaching this is a bug, reported not applied.
            Err(illegal) => debug_assert!(false, "{illegal}"),
        }
    }

    /// Take in a new send, or settle it at once when it cannot be taken.
    pub fn accept(&mut self, p: Pending) {
        let open = !matches!(
            self.state,
            State::Draining | State::Disconnected | State::Closed
        );
        self.flights.admit(&mut self.out, p, open);
    }

    pub fn cancel(&mut self, id: u64, now: Instant) {
        self.flights.cancel(&mut self.out, id, now);
    }

    pub fn settle_all(&mut self, cause: FateCause) {
        self.flights.settle_all(&mut self.out, cause);
    }
}
