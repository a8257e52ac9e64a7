//! A failed server-side handshake in the listener's words: what the connecting client did (sent
//! no certificate, sent one we do not trust, gave up on ours), not what a client would say.
//! The cause is the same as the client side's; only the detail is worded for the listener.

use crate::cause::Cause;
use crate::transport::{certificate_detail, classify_handshake_io, classify_tls};
use rustls::{AlertDescription as A, Error as E, PeerIncompatible as P};
use std::io;

/// The cause and detail of a handshake that failed on our side of an accepted connection.
pub(crate) fn describe_client_handshake_io(err: &io::Error) -> (Cause, String) {
    if let Some(tls) = err
        .get_ref()
        .and_then(|e| e.downcast_ref::<rustls::Error>())
    {
        return describe_client_tls(tls);
    }
    if err.kind() == io::ErrorKind::UnexpectedEof {
        return (
            Cause::TlsHandshake,
            "client closed the connection during the TLS handshake (it may not trust our \
             certificate, or not speak TLS)"
                .into(),
        );
    }
    classify_handshake_io(err)
}

fn describe_client_tls(err: &rustls::Error) -> (Cause, String) {
    let cause = classify_tls(err).0;
    let detail = match err {
        E::NoCertificatesPresented => {
            "client did not present a certificate (client authentication requires one)".into()
        }
        E::InvalidCertificate(cert) => {
            format!(
                "client certificate not trusted: {}",
                certificate_detail(cert)
            )
        }
        E::AlertReceived(alert) => alert_from_client(*alert),
        E::InvalidMessage(_) | E::InappropriateMessage { .. } => {
            "client did not speak TLS (non-TLS or malformed bytes: plain MLLP to a TLS port?)"
                .into()
        }
        E::InappropriateHandshakeMessage { .. } | E::PeerMisbehaved(_) => {
            "client broke the TLS handshake protocol".into()
        }
        E::PeerIncompatible(incompatible) => match incompatible {
            P::NoCipherSuitesInCommon => "client offered no cipher suite we accept".into(),
            P::SupportedVersionsExtensionRequired
            | P::Tls12NotOffered
            | P::Tls12NotOfferedOrEnabled => "client offered no TLS version we accept".into(),
            other => format!("client is incompatible: {other:?}"),
        },
        E::DecryptError => "TLS decryption of the client's data failed".into(),
        other => format!("TLS error with the client: {other}"),
    };
    (cause, detail)
}

fn alert_from_client(alert: A) -> String {
    match alert {
        A::BadCertificate
        | A::UnknownCA
        | A::CertificateUnknown
        | A::CertificateExpired
        | A::CertificateRevoked
        | A::UnsupportedCertificate => format!(
            "client aborted the handshake (alert {alert:?}): it likely does not trust our \
             certificate"
        ),
        A::ProtocolVersion => "client aborted the handshake: no TLS version in common".into(),
        A::AccessDenied | A::HandshakeFailure | A::InsufficientSecurity => {
            format!("client aborted the handshake (alert {alert:?})")
        }
        other => format!("client sent TLS alert {other:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustls::CertificateError as C;

    fn detail(err: rustls::Error) -> (Cause, String) {
        describe_client_handshake_io(&io::Error::new(io::ErrorKind::InvalidData, err))
    }

    #[test]
    fn details_say_what_the_client_did() {
        let cases = [
            (
                E::NoCertificatesPresented,
                Cause::TlsHandshake,
                "client did not present a certificate",
            ),
            (
                E::InvalidCertificate(C::UnknownIssuer),
                Cause::TlsVerify,
                "client certificate not trusted: certificate issuer is not trusted",
            ),
            (
                E::InvalidCertificate(C::Expired),
                Cause::TlsVerify,
                "client certificate not trusted: certificate expired",
            ),
            (
                E::AlertReceived(A::UnknownCA),
                Cause::TlsHandshake,
                "client aborted the handshake (alert UnknownCA): it likely does not trust our \
                 certificate",
            ),
            (
                E::AlertReceived(A::BadCertificate),
                Cause::TlsHandshake,
                "it likely does not trust our certificate",
            ),
            (
                E::InvalidMessage(rustls::InvalidMessage::InvalidContentType),
                Cause::TlsHandshake,
                "client did not speak TLS",
            ),
        ];
        for (err, cause, want) in cases {
            let name = format!("{err:?}");
            let (got_cause, got) = detail(err);
            assert_eq!(got_cause, cause, "{name}");
            assert!(got.contains(want), "{name}: {got}");
        }
    }

    #[test]
    fn no_detail_speaks_from_the_client_side() {
        let errors = [
            E::NoCertificatesPresented,
            E::InvalidCertificate(C::UnknownIssuer),
            E::AlertReceived(A::CertificateRequired),
            E::AlertReceived(A::UnknownCA),
            E::AlertReceived(A::AccessDenied),
            E::AlertReceived(A::ProtocolVersion),
            E::PeerIncompatible(P::NoCipherSuitesInCommon),
            E::General("odd".into()),
        ];
        for err in errors {
            let (_, got) = detail(err);
            assert!(!got.contains("our client certificate"), "{got}");
            assert!(!got.contains("peer "), "{got}");
        }
        let eof = io::Error::new(io::ErrorKind::UnexpectedEof, "tls handshake eof");
        assert!(describe_client_handshake_io(&eof)
            .1
            .starts_with("client closed"));
    }
}
