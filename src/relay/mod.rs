//! The relay: a receiver and a sender joined, built from the server core and the client core.
//!
//! - [`table`]: what the downstream peer is told for each upstream outcome (pass-through).
//! - [`forward`]: the pass-through sink, handing each message upstream as it arrives.
//! - [`queue`]: store and forward: the queue sink and the forwarder that empties it in order.
//! - [`store`]: the SQLite file of `--queue` and `--record` (table `queue`).
//! - [`gauges`]: running figures for the live view (rates, ACK latency, queue depth).
//! - [`mirror`]: a copy of every message for a shadow engine, and the two answers compared.
//! - [`record`]: keeping every passed-through message with its upstream fate.
//! - [`upstream`]: the upstream link's options (reconnect for as long as the relay runs).

pub mod forward;
pub mod gauges;
pub mod mirror;
pub mod queue;
pub mod record;
pub mod store;
pub mod table;
pub mod upstream;

pub use forward::Forward;
pub use gauges::{Gauges, Reading};
pub use mirror::{Mirror, MirrorEvent, MirrorOptions};
pub use queue::{Enqueue, ForwardOptions};
pub use record::Recorder;
pub use store::{Status, Store, StoreError};
pub use table::{pass_through, Upstream};
