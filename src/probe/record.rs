//! The record of one probe run: each phase as it passed or failed, and the verdict builders
//! every phase shares.

use super::report::{ClientCertificate, Detail, PhaseName, PhaseReport, Verdict, VerdictClass};
use crate::cause::{Cause, Hint};
use tokio::time::Instant;

/// Phases recorded so far.
#[derive(Debug, Default)]
pub(crate) struct PhaseLog {
    pub phases: Vec<PhaseReport>,
    pub unknown_fate: bool,
}

fn ms_since(started: Instant) -> f64 {
    started.elapsed().as_secs_f64() * 1000.0
}

impl PhaseLog {
    pub(crate) fn pass(&mut self, name: PhaseName, started: Instant, detail: Option<Detail>) {
        self.push(name, started, detail, None);
    }

    pub(crate) fn fail(
        &mut self,
        name: PhaseName,
        started: Instant,
        detail: Option<Detail>,
        error: &str,
    ) {
        self.push(name, started, detail, Some(error.to_string()));
    }

    fn push(&mut self, name: PhaseName, at: Instant, detail: Option<Detail>, err: Option<String>) {
        self.phases.push(PhaseReport {
            name,
            ok: err.is_none(),
            ms: ms_since(at),
            error: err,
            detail,
        });
    }

    /// Updates what the TLS phase says about our client certificate; a refusal seen after the
    /// handshake (TLS 1.3 reports it on the first read) fails the TLS phase after the fact.
    pub(crate) fn client_certificate(&mut self, state: ClientCertificate, error: Option<&str>) {
        let Some(phase) = self.phases.iter_mut().find(|p| p.name == PhaseName::Tls) else {
            return;
        };
        if let Some(Detail::Tls(tls)) = &mut phase.detail {
            tls.client_certificate = state;
        }
        if let Some(error) = error {
            phase.ok = false;
            phase.error = Some(error.to_string());
        }
    }

    pub(crate) fn presented_client_certificate(&self) -> bool {
        self.phases.iter().any(|p| {
            matches!(&p.detail, Some(Detail::Tls(tls))
                if tls.client_certificate == ClientCertificate::Presented)
        })
    }
}

/// A failure verdict: the cause's class, a detail and a hint.
pub(crate) fn failure(cause: Cause, detail: impl Into<String>, hint: Hint) -> Verdict {
    Verdict {
        class: cause.class().into(),
        cause: Some(cause),
        hint,
        detail: detail.into(),
        ack_code: None,
    }
}

/// A verdict of a probe that worked: a detail and a hint.
pub(crate) fn healthy(detail: impl Into<String>, hint: Hint) -> Verdict {
    Verdict {
        class: VerdictClass::Ok,
        cause: None,
        hint,
        detail: detail.into(),
        ack_code: None,
    }
}
