//! What one probe found: its phases, each timed, and the verdict. `Serialize` gives the phases'
//! fields in `probe --json` (the command's `output::probe`, which also words the verdict's hint).

use crate::cause::{Cause, Class, Hint};
use crate::sniff::Recognised;
use crate::tls::CertSummary;
use serde::Serialize;

/// The steps of a probe, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PhaseName {
    /// The host name to addresses.
    Resolve,
    /// TCP to one of the addresses.
    Connect,
    /// The TLS handshake.
    Tls,
    /// Listening for unsolicited bytes after connecting.
    Banner,
    /// Writing the one message.
    Send,
    /// Waiting for its ACK.
    Ack,
}

impl PhaseName {
    /// Its name, as JSON and the table give it.
    pub fn as_str(self) -> &'static str {
        match self {
            PhaseName::Resolve => "resolve",
            PhaseName::Connect => "connect",
            PhaseName::Tls => "tls",
            PhaseName::Banner => "banner",
            PhaseName::Send => "send",
            PhaseName::Ack => "ack",
        }
    }
}

/// One phase: whether it worked, how long it took, and what it saw.
#[derive(Debug, Clone, Serialize)]
pub struct PhaseReport {
    /// Which phase.
    pub name: PhaseName,
    /// It worked.
    pub ok: bool,
    /// How long it took, in milliseconds.
    #[serde(serialize_with = "crate::duration::microsecond_ms")]
    pub ms: f64,
    /// What went wrong, when it did: hosts, addresses, OS and TLS errors; never payload.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// What the phase saw, when it has something to say.
    #[serde(flatten)]
    pub detail: Option<Detail>,
}

/// Phase-specific findings.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum Detail {
    /// The name resolved.
    Resolve {
        /// Every address it resolved to, in the order tried.
        addresses: Vec<String>,
    },
    /// The TCP connect.
    Connect {
        /// The address that answered.
        address: Option<String>,
        /// Addresses that failed before it (or all of them), with the cause.
        failed: Vec<FailedAttempt>,
    },
    /// The handshake.
    Tls(TlsDetail),
    /// The banner wait.
    Banner {
        /// Nothing came within the wait.
        silent: bool,
        /// What the peer's unsolicited bytes look like.
        peer: Option<Recognised>,
    },
    /// The message written.
    Send {
        /// Its length in bytes, unframed.
        bytes: usize,
        /// Its MSH-10 (empty when it has none): the one per-message field shown.
        control_id: String,
    },
    /// The ACK awaited.
    Ack {
        /// MSA-1 of the ACK, when one came.
        ack_code: Option<String>,
        /// MSA-2 equals the MSH-10 sent.
        control_id_matches: bool,
        /// Frames that were not the awaited ACK (other control IDs, not ACKs), ignored.
        ignored_frames: usize,
    },
}

/// An address whose connect failed.
#[derive(Debug, Clone, Serialize)]
pub struct FailedAttempt {
    /// The address tried.
    pub address: String,
    /// Why it failed.
    pub cause: Cause,
    /// The OS error, in words.
    pub error: String,
}

/// Whether the server took our client certificate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ClientCertificate {
    /// We had none to present, and the server did not complain.
    None,
    /// Presented; no refusal seen (yet).
    Presented,
    /// Presented and no refusal came within the wait after the handshake.
    Accepted,
    /// Presented and refused.
    Refused,
    /// The server demanded one and we had none.
    Required,
}

impl ClientCertificate {
    /// Its name, as JSON and the table give it.
    pub fn as_str(self) -> &'static str {
        match self {
            ClientCertificate::None => "none",
            ClientCertificate::Presented => "presented",
            ClientCertificate::Accepted => "accepted",
            ClientCertificate::Refused => "refused",
            ClientCertificate::Required => "required",
        }
    }
}

/// What the TLS phase negotiated and saw.
#[derive(Debug, Clone, Serialize)]
pub struct TlsDetail {
    /// The negotiated version, once the handshake worked.
    pub version: Option<String>,
    /// The negotiated cipher suite, once the handshake worked.
    pub cipher_suite: Option<String>,
    /// The chain was verified against the trusted roots (false in insecure mode).
    pub verified: bool,
    /// The certificate names the server name (checked even in insecure mode).
    pub name_matched: Option<bool>,
    /// The CA file holds this very certificate: it is trusted as itself, whatever its names.
    pub pinned: bool,
    /// The name sent as SNI and checked.
    pub server_name: String,
    /// The server's certificate, when it sent one that parses.
    pub peer_certificate: Option<CertSummary>,
    /// What became of our client certificate.
    pub client_certificate: ClientCertificate,
}

/// How a probe ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum VerdictClass {
    /// The link works and the peer answered positively (or, without a message, accepted it).
    Ok,
    /// The peer answered, negatively (`AE`, `AR`, `CE`, `CR`): the link works, the message
    /// was refused.
    Negative,
    /// It failed, and trying again may work.
    Transient,
    /// It failed, and will fail the same way until something changes.
    Permanent,
}

impl VerdictClass {
    /// Its name, as JSON and the table give it.
    pub fn as_str(self) -> &'static str {
        match self {
            VerdictClass::Ok => "ok",
            VerdictClass::Negative => "negative",
            VerdictClass::Transient => "transient",
            VerdictClass::Permanent => "permanent",
        }
    }
}

impl From<Class> for VerdictClass {
    fn from(class: Class) -> Self {
        match class {
            Class::Transient => VerdictClass::Transient,
            Class::Permanent => VerdictClass::Permanent,
        }
    }
}

/// How a probe ended: its class, the cause when it failed, what was seen and what to do.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// `ok`, `negative`, `transient` or `permanent`.
    pub class: VerdictClass,
    /// The failure's cause, when it failed.
    pub cause: Option<Cause>,
    /// What to do, in one line once the command words it.
    pub hint: Hint,
    /// What was seen, in one line.
    pub detail: String,
    /// MSA-1 of the ACK, when one came.
    pub ack_code: Option<String>,
}

/// One probe.
#[derive(Debug, Clone)]
pub struct ProbeReport {
    /// `host:port` as probed.
    pub target: String,
    /// TLS was used.
    pub tls: bool,
    /// The phases in order, as far as the probe got.
    pub phases: Vec<PhaseReport>,
    /// How it ended.
    pub verdict: Verdict,
    /// For the exit code: the ACK was negative.
    pub negative: bool,
    /// For the exit code: a message was written and no ACK came.
    pub unknown_fate: bool,
}

impl ProbeReport {
    /// The verdict is ok: the ACK, if any, positive.
    pub fn ok(&self) -> bool {
        self.verdict.class == VerdictClass::Ok && !self.negative
    }

    /// The phase of that name, if the probe got to it.
    pub fn phase(&self, name: PhaseName) -> Option<&PhaseReport> {
        self.phases.iter().find(|p| p.name == name)
    }

    /// (name, ms) of every phase that worked, for statistics.
    pub fn timings(&self) -> impl Iterator<Item = (&'static str, f64)> + '_ {
        self.phases
            .iter()
            .filter(|p| p.ok)
            .map(|p| (p.name.as_str(), p.ms))
    }

    /// What this probe observed. An ACK timeout is an unknown fate, not a transient failure: the
    /// message was written.
    pub fn observed(&self) -> crate::outcome::Observed {
        crate::outcome::Observed {
            permanent: self.verdict.class == VerdictClass::Permanent,
            transient: self.verdict.class == VerdictClass::Transient
                && self.verdict.cause != Some(crate::cause::Cause::AckTimeout),
            unknown_fate: self.unknown_fate,
            negative: self.negative,
            ..Default::default()
        }
    }
}
