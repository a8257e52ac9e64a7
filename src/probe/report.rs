//! What one probe found: its phases, each timed, and the verdict. `Serialize` gives the phases'
//! fields in `probe --json` (the command's `output::probe`, which also words the verdict's hint).

use super::sniff::Recognised;
use crate::cause::{Cause, Class, Hint};
use crate::tls::CertSummary;
use serde::Serialize;

/// The steps of a probe, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PhaseName {
    Resolve,
    Connect,
    Tls,
    /// Listening for unsolicited bytes after connecting.
    Banner,
    Send,
    Ack,
}

impl PhaseName {
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
    pub name: PhaseName,
    pub ok: bool,
    #[serde(serialize_with = "crate::duration::microsecond_ms")]
    pub ms: f64,
    /// What went wrong, when it did: hosts, addresses, OS and TLS errors; never payload.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(flatten)]
    pub detail: Option<Detail>,
}

/// Phase-specific findings.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum Detail {
    Resolve {
        addresses: Vec<String>,
    },
    Connect {
        /// The address that answered.
        address: Option<String>,
        /// Addresses that failed before it (or all of them), with the cause.
        failed: Vec<FailedAttempt>,
    },
    Tls(TlsDetail),
    Banner {
        silent: bool,
        /// What the peer's unsolicited bytes look like.
        peer: Option<Recognised>,
    },
    Send {
        bytes: usize,
        control_id: String,
    },
    Ack {
        ack_code: Option<String>,
        /// MSA-2 equals the MSH-10 sent.
        control_id_matches: bool,
        /// Frames that were not the awaited ACK (other control IDs, not ACKs), ignored.
        ignored_frames: usize,
    },
}

#[derive(Debug, Clone, Serialize)]
pub struct FailedAttempt {
    pub address: String,
    pub cause: Cause,
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

#[derive(Debug, Clone, Serialize)]
pub struct TlsDetail {
    pub version: Option<String>,
    pub cipher_suite: Option<String>,
    /// The chain was verified against the trusted roots (false under --insecure).
    pub verified: bool,
    /// The certificate names the server name (checked even under --insecure).
    pub name_matched: Option<bool>,
    /// The CA file holds this very certificate: it is trusted as itself, whatever its names.
    pub pinned: bool,
    pub server_name: String,
    pub peer_certificate: Option<CertSummary>,
    pub client_certificate: ClientCertificate,
}

/// How a probe ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum VerdictClass {
    Ok,
    Transient,
    Permanent,
}

impl VerdictClass {
    pub fn as_str(self) -> &'static str {
        match self {
            VerdictClass::Ok => "ok",
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

#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    pub class: VerdictClass,
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
    pub target: String,
    pub tls: bool,
    pub phases: Vec<PhaseReport>,
    pub verdict: Verdict,
    /// Facts for the exit code: the ACK was negative; a message was written and no ACK came.
    pub negative: bool,
    pub unknown_fate: bool,
}

impl ProbeReport {
    pub fn ok(&self) -> bool {
        self.verdict.class == VerdictClass::Ok && !self.negative
    }

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
