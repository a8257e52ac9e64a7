//! `probe`'s engine: one connection, each phase timed (resolve, connect, TLS, banner wait,
//! one message and its ACK), and a verdict that names the cause and what to do.
//!
//! - [`run`]: runs one probe from a [`ProbeConfig`] into a [`ProbeReport`] (never an error: every
//!   failure is a phase and a verdict).
//! - [`crate::sniff`]: recognising HTTP, TLS, SSH and SMTP peers from their first bytes.
//! - Inside [`run`]: connecting to several addresses Happy-Eyeballs style.
//! - [`repeat`]: probing again and again, ping-style, into a [`Series`].
//! - [`ProbeStats`], [`StatsSummary`]: min/median/p99/max per phase over repeated probes.

mod exchange;
pub(crate) mod eyeballs;
mod handshake;
pub(crate) mod message;
mod record;
mod release2;
mod repeat;
mod report;
mod run;
pub(crate) mod stats;
mod tls;

pub use message::first_message;
pub use repeat::{repeat, Series};
pub use report::{
    ClientCertificate, Detail, FailedAttempt, PhaseName, PhaseReport, ProbeReport, TlsDetail,
    Verdict, VerdictClass,
};
pub use run::{run, ProbeConfig, SendPhase, Timeouts};
pub use stats::{ProbeStats, Spread, StatsSummary};
pub use tls::ProbeTls;
