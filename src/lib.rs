//! `mllp`: MLLP framing for HL7 v2 over TCP, and the client and server cores behind the `mllp`
//! command.
//!
//! The library gives an embedding program the guarantees the command line has: a receiver that
//! acknowledges a message only after committing it, a sender that reports `accepted` only for a
//! final, positive ACK naming that very message, exactly one [`client::Fate`] per message, no
//! payload bytes in any error, warning or event, and every failure classified transient or
//! permanent ([`cause`]). What those mean message by message is written down in the
//! repository's `docs/` (`delivery.md`, `receiver.md`, `output.md`).
//!
//! # Crate map
//!
//! - [`framing`]: the MLLP codec: a strict writer, a tolerant reader that reports each deviation.
//! - [`hl7`]: one reader of HL7 v2: segments, fields, repetitions, components in place, field
//!   paths (`PID-3(*).1`), filters, text by MSH-18; the header fast paths tested against it.
//! - [`diff`]: two sets of messages paired by key and compared field by field.
//! - [`deid`]: messages with their patients replaced, consistently under one key.
//! - [`ack`]: acknowledgements that never lie: code by MSH-15 and commit, MSA-2 echoes MSH-10.
//! - [`warning`]: the stable warning codes, each with its byte offset in the stream.
//! - [`cause`]: failure causes, their class (transient or permanent), and what to do about each.
//! - [`target`]: `HOST[:PORT]` endpoints, checked by shape before any lookup.
//! - [`resolve`]: name resolution, replaceable so that tests never query DNS.
//! - [`tls`]: rustls configuration for both ends (ring provider, TLS 1.2 floor).
//! - [`transport`]: connecting under one connect timeout, and the [`transport::Connector`] seam
//!   (also over connections a peer opens: [`transport::AcceptConnector`]).
//! - [`duration`]: durations rounded for people.
//! - [`outcome`]: what a run observed (failure classes, unknown fates, negatives), as facts.
//! - [`pace`]: when each message of a paced run is due, so latency counts from that moment.
//! - [`client`]: the client core: link states, reconnects, ACK correlation, window, fates.
//! - [`delivery`]: runs on the client: one outcome per message in input order, resends, totals.
//! - [`server`]: the server core: accept loop (or dialling out), guards, [`server::Sink`]s,
//!   commit, de-duplication.
//! - [`input`]: HL7 files and streams split into messages, checked before anything is sent.
//! - [`sniff`]: what a peer's first bytes say it is when it is not MLLP (HTTP, SSH, SMTP, TLS).
//! - [`relay`]: standing between a sender and an engine: the answer table, pass-through and
//!   queue sinks, the forwarder and the record (feature `sqlite`).
//! - [`probe`]: one diagnostic connection, phase by phase, and a verdict.
//! - [`soak`]: load and endurance runs: plan, pacing, chaos, ledger, and a report that adds up.
//!
//! # Features
//!
//! - `cli` (default): what the `mllp` binary needs (clap, terminal views, Prometheus metrics),
//!   with `sqlite` and `postgres`. `cargo build --lib --no-default-features` builds the core alone.
//! - `sqlite`: [`server::SqliteSink`] and the relay ([`relay`]), with SQLite compiled in.
//! - `postgres`: [`server::PostgresSink`], tokio-postgres over rustls.
//! - `metrics`: the dependencies of the Prometheus exporter the command serves.
//! - `fuzzing`: the fuzz target bodies, for `fuzz/` and the tests replaying its corpus; not an
//!   interface, off unless asked for.
//!
//! # Platforms
//!
//! Unix only (Linux, macOS, the BSDs): the stores rely on Unix file operations (directory
//! handles, permissions, atomic renames), and a build elsewhere stops with an error saying so.
//!
//! # Example
//!
//! A receiver on a free loopback port that commits to nowhere ([`server::DiscardSink`]), and a
//! client that sends it one message and gets that message's fate:
//!
//! ```
//! use bytes::Bytes;
//! use mllp::server::DiscardSink;
//! use mllp::client::{Client, ClientOptions, Fate};
//! use mllp::server::{Server, ServerConfig, Shutdown};
//! use mllp::transport::TcpConnector;
//! use std::sync::Arc;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
//! let port = listener.local_addr()?.port();
//! let server = Server::builder(ServerConfig::default(), Arc::new(DiscardSink)).build()?;
//! let shutdown = Shutdown::new();
//! let serving = tokio::spawn({
//!     let shutdown = shutdown.clone();
//!     async move { server.run(listener, shutdown).await }
//! });
//!
//! let connector = Arc::new(TcpConnector::new("127.0.0.1", port));
//! let client = Client::new(connector, ClientOptions::default())?;
//! let message = Bytes::from_static(
//!     b"MSH|^~\\&|APP|FAC|RECV|FAC|20240101120000||ADT^A01|MSG00001|P|2.5\rPID|1||12345\r",
//! );
//! // `send` returns once the message is admitted to the window; the handle is its fate.
//! let handle = client.send(message).await;
//! match handle.await {
//!     Fate::Accepted { code, latency, .. } => println!("{code:?} after {latency:?}"),
//!     other => panic!("not accepted: {other:?}"),
//! }
//! let report = client.close().await; // drain: nothing is left pending
//! println!("{report:?}");
//!
//! shutdown.graceful.cancel();
//! let stats = serving.await?;
//! println!("{stats:?}");
//! # Ok(())
//! # }
//! ```
//!
//! # More
//!
//! `examples/send_folder.rs` sends a folder of `.hl7` files with a [`client::Client`];
//! `examples/receive_sqlite.rs` is a [`server::Server`] storing into SQLite (CI runs one against the
//! other). The repository's `docs/library.md` walks through sending, receiving and connecting,
//! and `docs/architecture.md` maps the modules and the paths a message takes through them.

#![warn(missing_docs, unnameable_types, unreachable_pub)]

#[cfg(not(unix))]
compile_error!("mllp builds on Unix only: its stores use Unix file operations");

pub mod ack;
pub mod cause;
pub mod client;
pub mod deid;
pub mod delivery;
pub mod diff;
pub mod duration;
pub mod framing;
#[cfg(any(test, feature = "fuzzing"))]
#[doc(hidden)]
pub mod fuzzing;
pub mod hl7;
pub mod input;
pub mod outcome;
pub mod pace;
pub mod probe;
#[cfg(feature = "sqlite")]
pub mod relay;
pub mod resolve;
pub mod server;
pub mod sniff;
pub mod soak;
pub mod target;
pub mod tls;
pub mod transport;
pub mod warning;
