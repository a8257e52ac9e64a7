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
//! - [`ack`]: acknowledgements that never lie: code by MSH-15 and commit, MSA-2 echoes MSH-10.
//! - [`warning`]: the stable warning codes, each with its byte offset in the stream.
//! - [`cause`]: failure causes, their class (transient or permanent), and what to do about each.
//! - [`target`]: `HOST[:PORT]` endpoints, checked by shape before any lookup.
//! - [`resolve`]: name resolution, replaceable so that tests never query DNS.
//! - [`tls`]: rustls configuration for both ends (ring provider, TLS 1.2 floor).
//! - [`transport`]: connecting under one connect timeout, and the [`transport::Connector`] seam.
//! - [`duration`]: durations rounded for people.
//! - [`outcome`]: what a run observed (failure classes, unknown fates, negatives), as facts.
//! - [`pace`]: when each message of a paced run is due, so latency counts from that moment.
//! - [`client`]: the client core: link states, reconnects, ACK correlation, window, fates.
//! - [`delivery`]: runs on the client: one outcome per message in input order, resends, totals.
//! - [`server`]: the server core: accept loop, guards, [`server::Sink`]s, commit, de-duplication.
//! - [`input`]: HL7 files and streams split into messages, checked before anything is sent.
//! - [`sniff`]: what a peer's first bytes say it is when it is not MLLP (HTTP, SSH, SMTP, TLS).
//! - [`relay`]: standing between a sender and an engine: the answer table, pass-through and
//!   queue sinks, the forwarder and the record (feature `sqlite`).
//! - [`probe`]: one diagnostic connection, phase by phase, and a verdict.
//! - [`soak`]: load and endurance runs: plan, pacing, chaos, ledger, and a report that adds up.
//!
//! # Features
//!
//! - `cli` (default): what the `mllp` binary needs (clap, terminal views, Prometheus metrics)
//!   and `sqlite`. `cargo build --lib --no-default-features` builds the core alone.
//! - `sqlite`: `server::sink::SqliteSink`, with SQLite compiled in.
//! - `metrics`: the dependencies of the Prometheus exporter the command serves.
//! - `fuzzing`: the fuzz target bodies, for `fuzz/` and the tests replaying its corpus; not an
//!   interface, off unless asked for.
//!
//! # Example
//!
//! A receiver on a free loopback port that commits to nowhere ([`server::DiscardSink`]), and a
//! client that sends it one message and gets that message's fate:
//!
//! ```
//! use bytes::Bytes;
//! use mllp::server::DiscardSink;
//! use mllp::{Client, ClientOptions, Fate, Server, ServerConfig, Shutdown, TcpConnector};
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
//! # Sending
//!
//! A [`client::Client`] owns one link through a task. [`client::Client::send`] returns a
//! [`client::SendHandle`] as soon as the send is admitted to the window; awaiting the handle
//! gives the one [`client::Fate`]: `Accepted`, `Negative`, `CommittedOnly`, `UnknownFate`,
//! `NeverDelivered` or `Refused`, each with its code or cause. A caller pipelines by keeping
//! handles and awaiting them later; [`client::Client::send_many`] admits a sequence at once.
//! The ACK bytes travel in the fate and never appear in its `Debug` or `Display`.
//!
//! - Options ([`client::ClientOptions`]) are validated by `Client::new`: an error names the
//!   option as the command line spells it.
//! - The link goes through CONNECTING, CONNECTED, DRAINING, RECONNECTING, DISCONNECTED and
//!   CLOSED ([`client::State`]); every transition is a [`client::ClientEvent`] with its reason
//!   (`client.subscribe()`; the first subscriber sees every event since creation).
//! - Reconnect is off by default in the library; [`client::ExponentialBackoff`],
//!   [`client::MaxRetries`], [`client::GiveUpAfter`] or any [`client::RetryStrategy`] turn it on.
//!   Only transient causes are retried.
//! - `close()` drains (written sends are awaited up to the drain timeout) and returns a
//!   [`client::DrainReport`] by population; `destroy()`, or dropping the client, settles
//!   everything at once.
//! - `stats()` is a serde struct; `latency_histogram()` an HDR histogram for merging.
//!
//! # Receiving
//!
//! [`server::Server::builder`] takes a [`server::ServerConfig`] and a [`server::Sink`] (commit
//! one message, or a batch that shares one flush or fsync, and say committed, failed or
//! rejected); [`server::sink::StdoutSink`], [`server::sink::OutDirSink`],
//! [`server::sink::ExecSink`], `server::sink::SqliteSink` (feature `sqlite`) and
//! [`server::DiscardSink`] ship with the crate. A [`server::Policy`] decides per message
//! before the commit (commit, duplicate, fail, reject, delay, stay silent, close after).
//! [`server::Server::run`] serves a bound listener, `run_with` any [`server::Accept`] (a TLS
//! handshake, say), and [`server::Server::serve`] one stream of any kind (tests use
//! `tokio::io::duplex`). Events arrive as typed [`server::ServerEvent`]s on a bounded channel:
//! a slow reader slows the server, nothing is dropped.
//!
//! # Connecting
//!
//! [`transport::TcpConnector`] resolves through a replaceable [`resolve::Resolver`]
//! ([`resolve::SystemResolver`], or [`resolve::StaticResolver`] for a fixed table), tries each
//! address, sets TCP_NODELAY and keepalive, and runs the TLS handshake ([`tls`]: rustls with the
//! ring provider, TLS 1.2 floor, native roots plus an optional CA file, client certificates).
//! The client reaches the network only through the [`transport::Connector`] trait, so its timing
//! logic is tested over in-memory streams on a paused clock. [`transport::classify`] gives the
//! [`cause::Cause`] of any error the library returns.

#![warn(missing_docs)]

pub mod ack;
pub mod cause;
pub mod client;
pub mod delivery;
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

// The front door: what a program embedding a sender or a receiver names first.
pub use cause::{Cause, Class};
pub use client::{Client, ClientOptions, Fate, SendHandle};
pub use framing::{encode_frame, MllpCodec};
pub use server::{Server, ServerConfig, Shutdown, Sink};
pub use transport::{Connector, TcpConnector};
