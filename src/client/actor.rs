//! The actor that owns the link: it composes the flight table ([`Flights`]), the outbox of
//! events and fates ([`Outbox`]) and the lifecycle state ([`Lifecycle`]), and drives them:
//! connect, back off, reconnect and close in `lifecycle`, the connected phase in `link`.

mod lifecycle;
mod link;

use super::events::ClientEvent;
use super::fate::FateCause;
use super::flight::Flights;
use super::life::Lifecycle;
use super::options::ClientOptions;
use super::outbox::Outbox;
use super::pending::Pending;
use super::state::{Reason, State};
use super::{ClientShared, Command};
use crate::transport::Connector;
use std::sync::Arc;
use tokio::sync::{broadcast, mpsc};
use tokio::time::Instant;

/// The actor composes the flight table, the outbox and the lifecycle, and routes commands,
/// ACKs and timers between them.
pub(crate) struct Actor {
    connector: Arc<dyn Connector>,
    options: Arc<ClientOptions>,
    rx: mpsc::Receiver<Command>,
    flights: Flights,
    out: Outbox,
    life: Lifecycle,
    /// The host (its place in the connector's list) of the last connect: the connector says
    /// when the next goes elsewhere, and hears how a connection to it ended.
    host: Option<usize>,
}

impl Actor {
    pub(crate) fn new(
        connector: Arc<dyn Connector>,
        options: Arc<ClientOptions>,
        shared: Arc<ClientShared>,
        events: broadcast::Sender<ClientEvent>,
        rx: mpsc::Receiver<Command>,
    ) -> Self {
        Actor {
            connector,
            flights: Flights::new(options.clone()),
            options,
            out: Outbox::new(shared, events),
            rx,
            life: Lifecycle::new(),
            host: None,
        }
    }

    pub(crate) fn emit(&self, event: ClientEvent) {
        self.out.emit(event);
    }

    pub(crate) fn state(&self) -> State {
        self.life.state()
    }

    pub(crate) fn transition(&mut self, to: State, reason: Reason) {
        self.life.transition(&self.out, to, reason);
    }

    /// Take in a new send, or settle it at once when it cannot be taken.
    pub(crate) fn accept(&mut self, p: Box<Pending>) {
        self.flights.admit(&mut self.out, p, self.life.is_open());
    }

    pub(crate) fn cancel(&mut self, id: u64, now: Instant) {
        self.flights.cancel(&mut self.out, id, now);
    }

    pub(crate) fn settle_all(&mut self, cause: FateCause) {
        self.flights.settle_all(&mut self.out, cause);
    }
}
