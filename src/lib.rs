//! `mllp`: MLLP framing for HL7 v2 over TCP, and the client and server cores behind the `mllp`
//! command.
//!
//! Map of the crate:
//! - [`framing`]: the MLLP codec, a strict writer and a tolerant, loud reader.
//! - [`hl7`]: the few header fields a transport needs (MSH, MSA), batch detection.
//! - [`ack`]: acknowledgements that never lie (MSH-15 table, downgrades).
//! - [`warning`], [`cause`]: stable warning codes; failure causes and their class.
//! - [`target`], [`resolve`], [`tls`], [`transport`]: `HOST[:PORT]`, name resolution, TLS
//!   configuration, connecting.
//! - [`duration`]: durations rounded for people.
//! - [`client`]: the client core: link state machine, reconnect, correlation, backpressure, drain.
//! - [`delivery`]: the resend policy on top of the client (FIFO resends after a reconnect).
//! - [`server`]: the server core: accept loop, per-address and memory guards, containment, sinks,
//!   the commit contract.
//! - [`input`]: splitting HL7 files and streams into messages.
//! - [`probe`]: one diagnostic connection, phase by phase, and a verdict.
//! - [`soak`]: load and endurance runs: templates, pacing, chaos, the ledger and the report.

pub mod ack;
pub mod cause;
pub mod client;
pub mod delivery;
pub mod duration;
pub mod framing;
#[doc(hidden)]
pub mod fuzzing;
pub mod hl7;
pub mod input;
pub mod probe;
pub mod resolve;
pub mod server;
pub mod soak;
pub mod target;
pub mod tls;
pub mod transport;
pub mod warning;
