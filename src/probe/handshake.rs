//! The TLS phase of a probe: the handshake, what it negotiated and what the certificate says,
//! and for each way it fails, a verdict that says which and what to do.

use super::report::{ClientCertificate, Detail, PhaseName, TlsDetail, Verdict};
use super::run::{failure, Run};
use super::sniff::recognise;
use super::tls::{ProbeTls, Recording};
use crate::cause::Cause;
use crate::tls::CertSummary;
use crate::transport::{classify_handshake_io, BoxStream};
use rustls::{AlertDescription as A, CertificateError as C, Error as E};
use std::io;
use std::time::Duration;
use tokio::net::TcpStream;
use tokio::time::Instant;

/// The rustls error inside an I/O error from a TLS stream, if that is what it is.
pub(crate) fn rustls_error(err: &io::Error) -> Option<&rustls::Error> {
    err.get_ref()
        .and_then(|e| e.downcast_ref::<rustls::Error>())
}

/// A TLS alert that says the server did not take our client certificate (or wanted one).
pub(crate) fn client_certificate_alert(
    err: &io::Error,
    presented: bool,
) -> Option<ClientCertificate> {
    let E::AlertReceived(alert) = rustls_error(err)? else {
        return None;
    };
    let about_certificate = matches!(
        alert,
        A::CertificateRequired
            | A::BadCertificate
            | A::UnknownCA
            | A::CertificateUnknown
            | A::CertificateExpired
            | A::CertificateRevoked
            | A::UnsupportedCertificate
            | A::AccessDenied
    );
    match (about_certificate, presented) {
        (true, true) => Some(ClientCertificate::Refused),
        (true, false) => Some(ClientCertificate::Required),
        (false, _) => None,
    }
}

/// The verdict for a refused or missing client certificate.
pub(crate) fn client_certificate_verdict(state: ClientCertificate, detail: &str) -> Verdict {
    let hint = match state {
        ClientCertificate::Required => {
            "the server requires a client certificate: pass --cert and --key"
        }
        _ => "the server refused our client certificate: use one issued by a CA the server trusts",
    };
    failure(Cause::TlsHandshake, detail, hint)
}

/// Runs the handshake over `tcp`, bounded by `limit`.
pub(crate) async fn tls_phase(
    tls: &ProbeTls,
    tcp: TcpStream,
    limit: Duration,
    run: &mut Run,
) -> Result<BoxStream, Verdict> {
    tls.reset();
    let (recording, first_bytes) = Recording::new(tcp);
    let started = Instant::now();
    let connector = tokio_rustls::TlsConnector::from(tls.config.clone());
    let handshake = connector.connect(tls.server_name.clone(), recording);
    let outcome = tokio::time::timeout(limit, handshake).await;
    let seen = tls.seen();
    let certificate = seen.as_ref().and_then(|s| CertSummary::from_der(&s.cert));
    let mut detail = TlsDetail {
        version: None,
        cipher_suite: None,
        verified: false,
        name_matched: seen.as_ref().map(|s| s.name_matched),
        server_name: tls.server_name_text(),
        peer_certificate: certificate.clone(),
        client_certificate: if tls.client_cert {
            ClientCertificate::Presented
        } else {
            ClientCertificate::None
        },
    };
    let err = match outcome {
        Ok(Ok(stream)) => {
            let (_, session) = stream.get_ref();
            detail.version = Some(crate::tls::version_name(session.protocol_version()));
            detail.cipher_suite = Some(crate::tls::suite_name(session.negotiated_cipher_suite()));
            detail.verified = !tls.verify_disabled;
            run.pass(PhaseName::Tls, started, Some(Detail::Tls(detail)));
            return Ok(Box::new(stream));
        }
        Ok(Err(err)) => err,
        Err(_) => {
            let error = format!("no TLS answer within {}", humantime::format_duration(limit));
            run.fail(PhaseName::Tls, started, Some(Detail::Tls(detail)), &error);
            return Err(failure(
                Cause::ConnectTimeout,
                error,
                "the peer accepted TCP but never answered the TLS ClientHello, as a plain \
                 (non-TLS) server does: try without --tls",
            ));
        }
    };
    let first = first_bytes.lock().map(|b| b.clone()).unwrap_or_default();
    let (cause, what) = classify_handshake_io(&err);
    let verdict = if let Some(state) = client_certificate_alert(&err, tls.client_cert) {
        detail.client_certificate = state;
        client_certificate_verdict(state, &what)
    } else {
        match rustls_error(&err) {
            Some(E::InvalidCertificate(cert)) => verify_failure(cert, &what, certificate.as_ref()),
            Some(E::InvalidMessage(_) | E::InappropriateMessage { .. }) => {
                let seen = recognise(&first)
                    .map(|r| format!("{} (first byte 0x{:02X})", r.kind, r.first_byte))
                    .unwrap_or_else(|| "bytes that are not TLS".into());
                failure(
                    Cause::TlsHandshake,
                    format!("the peer answered the TLS ClientHello with non-TLS bytes: {seen}"),
                    "the peer does not speak TLS on this port: try without --tls",
                )
            }
            None if cause == Cause::TlsHandshake => failure(
                cause,
                what.clone(),
                "the peer hung up on the TLS ClientHello: it may not speak TLS on this port \
                 (try without --tls), or it refused this client",
            ),
            _ => failure(cause, what.clone(), cause.hint()),
        }
    };
    run.fail(
        PhaseName::Tls,
        started,
        Some(Detail::Tls(detail)),
        &verdict.detail,
    );
    Err(verdict)
}

/// Says which certificate check failed, with the certificate's own names and dates.
fn verify_failure(
    err: &rustls::CertificateError,
    what: &str,
    cert: Option<&CertSummary>,
) -> Verdict {
    let names = cert
        .map(|c| c.sans.join(", "))
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| "no names".into());
    let (detail, hint) = match err {
        C::Expired | C::ExpiredContext { .. } => (
            match cert {
                Some(c) => {
                    let days = -c.days_left;
                    let unit = if days == 1 { "day" } else { "days" };
                    format!("certificate expired on {} ({days} {unit} ago)", c.not_after)
                }
                None => what.to_string(),
            },
            "the peer's certificate has expired: the peer must renew it".to_string(),
        ),
        C::NotValidYet | C::NotValidYetContext { .. } => (
            match cert {
                Some(c) => format!("certificate is not valid until {}", c.not_before),
                None => what.to_string(),
            },
            "the peer's certificate is not valid yet: check the clocks on both sides".to_string(),
        ),
        C::NotValidForName | C::NotValidForNameContext { .. } => (
            what.to_string(),
            format!("the certificate is for {names}: connect by one of those names, or pass --server-name"),
        ),
        // webpki may report a self-signed certificate as a signature mismatch against a trusted
        // root rather than as an unknown issuer: its issuer naming itself says which it is.
        _ if cert.is_some_and(|c| c.issuer == c.subject) => (
            format!(
                "certificate is self-signed ({}), not issued by a trusted CA",
                cert.map(|c| c.subject.as_str()).unwrap_or_default()
            ),
            "pass --ca with the certificate itself to trust it, or have the peer use a CA-issued one".to_string(),
        ),
        C::UnknownIssuer => (
            match cert {
                Some(c) => format!("certificate issuer {} is not trusted", c.issuer),
                None => what.to_string(),
            },
            "pass --ca with the issuing CA's certificate".to_string(),
        ),
        _ => (what.to_string(), Cause::TlsVerify.hint().to_string()),
    };
    failure(Cause::TlsVerify, detail, hint)
}
