//! The relay: a receiver and a sender joined, built from the server core and the client core.
//!
//! - [`Upstream`], [`pass_through`]: what the downstream peer is told for each upstream outcome (pass-through).
//! - [`Forward`]: the pass-through sink, handing each message upstream as it arrives.
//! - [`Enqueue`], [`forward()`]: store and forward: the queue sink and the forwarder that empties it in order.
//! - [`Store`]: the SQLite file of `--queue` and `--record` (table `queue`).
//! - [`Gauges`]: running figures for the live view (rates, ACK latency, queue depth).
//! - [`Mirror`]: a copy of every message for a shadow engine, and the two answers compared.
//! - [`Recorder`]: keeping every passed-through message with its upstream fate.
//! - [`client_options`]: the upstream link's options (reconnect for as long as the relay runs).

pub(crate) mod forward;
pub(crate) mod gauges;
pub(crate) mod mirror;
pub(crate) mod queue;
pub(crate) mod record;
pub(crate) mod store;
pub(crate) mod table;
pub(crate) mod upstream;

pub use forward::Forward;
pub use gauges::{Gauges, Reading};
pub use mirror::{
    same_listener, Compare, Compared, Counts, Ignore, Mirror, MirrorEvent, MirrorOptions, Outcome,
    Pending, Worker, DEFAULT_QUEUE,
};
pub use queue::{forward, Enqueue, ForwardOptions};
pub use record::Recorder;
pub use store::{PendingRow, Settlement, Status, Store, StoreError, Unreadable};
pub use table::{pass_through, Upstream};
pub use upstream::client_options;
