//! The TLS phase of a probe: the handshake, what it negotiated and what the certificate says,
//! and for each way it fails, a verdict that says which and what to do.

use super::record::{failure, PhaseLog};
use super::report::{ClientCertificate, Detail, PhaseName, TlsDetail, Verdict};
use super::tls::{ProbeTls, Recording};
use crate::cause::{Cause, Hint};
use crate::sniff::recognise;
use crate::tls::{describe_handshake_io, rustls_error, CertSummary, Seen, Side, TlsFailure};
use crate::transport::BoxStream;
use rustls::Error as E;
use std::io;
use std::time::Duration;
use tokio::net::TcpStream;
use tokio::time::Instant;

/// What a refusal of our client certificate says about it: refused when we presented one,
/// required when we had none.
pub(crate) fn refused_client_certificate(presented: bool) -> ClientCertificate {
    if presented {
        ClientCertificate::Refused
    } else {
        ClientCertificate::Required
    }
}

/// A TLS failure as a probe verdict, its detail prefixed with `during` when given.
pub(crate) fn tls_verdict(failed: TlsFailure, during: Option<&str>) -> Verdict {
    let detail = match during {
        Some(during) => format!("{during}: {}", failed.detail),
        None => failed.detail,
    };
    failure(failed.cause, detail, failed.hint)
}

/// A read or write on the established session failed with a TLS error before the peer sent
/// anything: under TLS 1.3 that is where a server refuses our client certificate. The table's
/// verdict; `None` when the error is not TLS.
pub(crate) fn session_verdict(
    err: &io::Error,
    run: &mut PhaseLog,
    during: &str,
) -> Option<Verdict> {
    rustls_error(err)?;
    let presented = run.presented_client_certificate();
    let seen = Seen {
        client_certificate: Some(presented),
        ..Seen::default()
    };
    let verdict = tls_verdict(describe_handshake_io(err, Side::Client, seen), Some(during));
    if verdict.cause == Some(Cause::TlsClientCert) {
        run.client_certificate(refused_client_certificate(presented), Some(&verdict.detail));
    }
    Some(verdict)
}

/// Runs the handshake over `tcp`, bounded by `limit`.
pub(crate) async fn tls_phase(
    tls: &ProbeTls,
    tcp: TcpStream,
    limit: Duration,
    run: &mut PhaseLog,
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
        pinned: seen.as_ref().is_some_and(|s| s.pinned),
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
                Hint::TurnTlsOffForSilentPeer,
            ));
        }
    };
    let first = first_bytes.lock().map(|b| b.clone()).unwrap_or_default();
    let seen = Seen {
        peer_certificate: certificate.as_ref(),
        client_certificate: Some(tls.client_cert),
        certificate_requested: Some(tls.certificate_requested()),
    };
    let failed = describe_handshake_io(&err, Side::Client, seen);
    if failed.cause == Cause::TlsClientCert {
        detail.client_certificate = refused_client_certificate(tls.client_cert);
    }
    let verdict = match rustls_error(&err) {
        Some(E::InvalidMessage(_) | E::InappropriateMessage { .. }) => {
            let seen = recognise(&first)
                .map(|r| format!("{} (first byte 0x{:02X})", r.kind, r.first_byte))
                .unwrap_or_else(|| "bytes that are not TLS".into());
            failure(
                failed.cause,
                format!("the peer answered the TLS ClientHello with non-TLS bytes: {seen}"),
                failed.hint,
            )
        }
        _ => tls_verdict(failed, None),
    };
    run.fail(
        PhaseName::Tls,
        started,
        Some(Detail::Tls(detail)),
        &verdict.detail,
    );
    Err(verdict)
}
