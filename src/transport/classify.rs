//! The one table from TLS errors (and OS errors, through `cause::classify_io`) to causes, with a
//! short detail that names what went wrong and never carries payload.

use crate::cause::{classify_io, Cause};
use crate::resolve::ResolveError;
use crate::transport::LinkError;
use rustls::{AlertDescription as A, CertificateError as C, Error as E, PeerIncompatible as P};
use std::error::Error;
use std::io;

/// Certificate problems are `tls-verify`; everything else TLS (alerts, versions, non-TLS bytes,
/// a refused client certificate) is `tls-handshake`. Both permanent.
pub fn classify_tls(err: &rustls::Error) -> (Cause, String) {
    match err {
        E::InvalidCertificate(cert) => (Cause::TlsVerify, certificate_detail(cert)),
        E::AlertReceived(alert) => (Cause::TlsHandshake, alert_detail(*alert)),
        E::InvalidMessage(_) | E::InappropriateMessage { .. } => (
            Cause::TlsHandshake,
            "peer did not answer with TLS (non-TLS or malformed bytes)".into(),
        ),
        E::InappropriateHandshakeMessage { .. } | E::PeerMisbehaved(_) => (
            Cause::TlsHandshake,
            "peer broke the TLS handshake protocol".into(),
        ),
        E::PeerIncompatible(incompatible) => {
            (Cause::TlsHandshake, incompatible_detail(incompatible))
        }
        E::NoCertificatesPresented => (Cause::TlsHandshake, "no certificate was presented".into()),
        E::DecryptError => (Cause::TlsHandshake, "TLS decryption failed".into()),
        other => (Cause::TlsHandshake, format!("TLS error: {other}")),
    }
}

pub(crate) fn certificate_detail(err: &rustls::CertificateError) -> String {
    match err {
        C::UnknownIssuer => "certificate issuer is not trusted (unknown issuer)".into(),
        C::Expired | C::ExpiredContext { .. } => "certificate expired".into(),
        C::NotValidYet | C::NotValidYetContext { .. } => "certificate is not valid yet".into(),
        C::NotValidForNameContext {
            expected,
            presented,
        } => {
            let names = if presented.is_empty() {
                "no name".to_string()
            } else {
                presented
                    .iter()
                    .map(|name| plain_name(name))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            format!("certificate is for {names}, not {}", expected.to_str())
        }
        C::NotValidForName => "certificate is not valid for the server name".into(),
        C::BadSignature => "certificate signature is invalid".into(),
        C::UnsupportedSignatureAlgorithmContext { .. }
        | C::UnsupportedSignatureAlgorithmForPublicKeyContext { .. } => {
            "certificate signature does not match a trusted issuer's key algorithm".into()
        }
        C::Revoked => "certificate is revoked".into(),
        C::BadEncoding => "certificate is malformed".into(),
        C::InvalidPurpose | C::InvalidPurposeContext { .. } => {
            "certificate is not issued for this use (key usage)".into()
        }
        other => format!("certificate rejected: {other:?}"),
    }
}

/// rustls renders presented names as `DnsName("x")` / `IpAddress(..)`: keep the name alone.
fn plain_name(name: &str) -> &str {
    name.strip_prefix("DnsName(\"")
        .and_then(|rest| rest.strip_suffix("\")"))
        .unwrap_or(name)
}

fn alert_detail(alert: rustls::AlertDescription) -> String {
    match alert {
        A::CertificateRequired => "peer requires a client certificate".into(),
        A::BadCertificate
        | A::UnknownCA
        | A::CertificateUnknown
        | A::CertificateExpired
        | A::CertificateRevoked
        | A::UnsupportedCertificate
        | A::AccessDenied => format!("peer refused our client certificate (alert {alert:?})"),
        A::ProtocolVersion => "peer refused the TLS version (no version in common)".into(),
        A::HandshakeFailure | A::InsufficientSecurity => {
            format!("peer refused the handshake (alert {alert:?})")
        }
        other => format!("peer sent TLS alert {other:?}"),
    }
}

fn incompatible_detail(incompatible: &rustls::PeerIncompatible) -> String {
    match incompatible {
        P::ServerDoesNotSupportTls12Or13
        | P::ServerTlsVersionIsDisabledByOurConfig
        | P::SupportedVersionsExtensionRequired
        | P::Tls12NotOffered
        | P::Tls12NotOfferedOrEnabled => "no TLS version in common with the peer".into(),
        P::NoCipherSuitesInCommon => "no cipher suite in common with the peer".into(),
        other => format!("peer is incompatible: {other:?}"),
    }
}

/// An I/O error from a TLS stream: a wrapped rustls error goes through [`classify_tls`]; an
/// end of stream during the handshake is `tls-handshake` (a peer that hangs up on a
/// ClientHello does not speak TLS here, or refused us); other OS errors through the OS table.
pub fn classify_handshake_io(err: &io::Error) -> (Cause, String) {
    if let Some(tls) = err
        .get_ref()
        .and_then(|e| e.downcast_ref::<rustls::Error>())
    {
        return classify_tls(tls);
    }
    if err.kind() == io::ErrorKind::UnexpectedEof {
        return (
            Cause::TlsHandshake,
            "peer closed the connection during the TLS handshake".into(),
        );
    }
    (classify_io(err), err.to_string())
}

/// The cause of any failure the library reports, for the CLI and `probe`: walks the error and
/// its sources for a [`LinkError`], [`ResolveError`], rustls error or OS error. A TLS error
/// wrapped in an I/O error after the handshake (a TLS 1.3 server refusing our client
/// certificate on its first read) is still `tls-handshake`. Anything else is `network-error`.
pub fn classify(err: &(dyn Error + 'static)) -> Cause {
    let mut current: Option<&(dyn Error + 'static)> = Some(err);
    while let Some(err) = current {
        if let Some(link) = err.downcast_ref::<LinkError>() {
            return link.cause;
        }
        if let Some(resolve) = err.downcast_ref::<ResolveError>() {
            return resolve.cause();
        }
        if let Some(tls) = err.downcast_ref::<rustls::Error>() {
            return classify_tls(tls).0;
        }
        if let Some(io) = err.downcast_ref::<io::Error>() {
            if let Some(tls) = io.get_ref().and_then(|e| e.downcast_ref::<rustls::Error>()) {
                return classify_tls(tls).0;
            }
            return classify_io(io);
        }
        current = err.source();
    }
    Cause::NetworkError
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cause::Class;
    use crate::transport::Phase;
    use rustls::pki_types::ServerName;

    #[test]
    fn certificate_problems_are_tls_verify_with_a_named_reason() {
        let cases = [
            (E::InvalidCertificate(C::UnknownIssuer), "unknown issuer"),
            (E::InvalidCertificate(C::Expired), "certificate expired"),
            (E::InvalidCertificate(C::NotValidYet), "not valid yet"),
            (
                E::InvalidCertificate(C::NotValidForNameContext {
                    expected: ServerName::try_from("localhost").unwrap(),
                    presented: vec!["other.example".into()],
                }),
                "certificate is for other.example, not localhost",
            ),
        ];
        for (err, want) in cases {
            let (cause, detail) = classify_tls(&err);
            assert_eq!(cause, Cause::TlsVerify);
            assert_eq!(cause.class(), Class::Permanent);
            assert!(detail.contains(want), "{detail}");
        }
    }

    #[test]
    fn other_tls_failures_are_tls_handshake() {
        let cases = [
            E::AlertReceived(A::ProtocolVersion),
            E::AlertReceived(A::CertificateRequired),
            E::AlertReceived(A::BadCertificate),
            E::PeerIncompatible(P::NoCipherSuitesInCommon),
            E::InvalidMessage(rustls::InvalidMessage::InvalidContentType),
            E::General("odd".into()),
        ];
        for err in cases {
            assert_eq!(classify_tls(&err).0, Cause::TlsHandshake, "{err:?}");
        }
    }

    #[test]
    fn io_wrapping_and_chains_classify() {
        let wrapped = io::Error::new(
            io::ErrorKind::InvalidData,
            E::AlertReceived(A::CertificateRequired),
        );
        assert_eq!(classify(&wrapped), Cause::TlsHandshake);
        let eof = io::Error::new(io::ErrorKind::UnexpectedEof, "tls handshake eof");
        assert_eq!(classify_handshake_io(&eof).0, Cause::TlsHandshake);
        let refused = io::Error::from(io::ErrorKind::ConnectionRefused);
        assert_eq!(classify(&refused), Cause::ConnectionRefused);
        let link = LinkError {
            cause: Cause::DnsFailed,
            phase: Phase::Resolve,
            detail: "x".into(),
        };
        assert_eq!(classify(&link), Cause::DnsFailed);
        let resolve = ResolveError::NotFound { host: "h".into() };
        assert_eq!(classify(&resolve), Cause::DnsNotFound);
        assert_eq!(classify(&io::Error::other("odd")), Cause::NetworkError);
    }
}
