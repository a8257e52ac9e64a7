//! The TLS failure table: causes, both sides' wording, and hints that name a step.

use super::*;
use crate::cause::Class;
use rustls::pki_types::ServerName;

fn client(err: E) -> TlsFailure {
    describe(&err, Side::Client, Seen::default())
}

fn server(err: E) -> TlsFailure {
    describe_handshake_io(
        &io::Error::new(io::ErrorKind::InvalidData, err),
        Side::Server,
        Seen::default(),
    )
}

fn wrong_name() -> E {
    E::InvalidCertificate(C::NotValidForNameContext {
        expected: ServerName::try_from("localhost").unwrap(),
        presented: vec!["DnsName(\"other.example\")".into()],
    })
}

#[test]
fn certificate_problems_are_tls_verify_with_a_named_reason() {
    let cases = [
        (
            E::InvalidCertificate(C::UnknownIssuer),
            "unknown issuer",
            Hint::TrustIssuerOrPin,
        ),
        (
            E::InvalidCertificate(C::Expired),
            "certificate expired",
            Hint::Prose("the peer's certificate has expired: the peer must renew it"),
        ),
        (
            E::InvalidCertificate(C::NotValidYet),
            "not valid yet",
            Hint::Prose("the peer's certificate is not valid yet: check the clocks on both sides"),
        ),
        (
            wrong_name(),
            "certificate is for other.example, not localhost",
            Hint::GiveServerName { names: vec![] },
        ),
    ];
    for (err, detail, hint) in cases {
        let failure = client(err);
        assert_eq!(failure.cause, Cause::TlsVerify);
        assert_eq!(failure.cause.class(), Class::Permanent);
        assert!(failure.detail.contains(detail), "{failure:?}");
        assert_eq!(failure.hint, hint, "{failure:?}");
    }
}

#[test]
fn a_refused_client_certificate_is_its_own_permanent_cause() {
    for alert in [
        A::CertificateRequired,
        A::BadCertificate,
        A::UnknownCA,
        A::AccessDenied,
    ] {
        for presented in [None, Some(false), Some(true)] {
            let seen = Seen {
                client_certificate: presented,
                ..Seen::default()
            };
            let failure = describe(&E::AlertReceived(alert), Side::Client, seen);
            assert_eq!(failure.cause, Cause::TlsClientCert, "{alert:?}");
            assert_eq!(failure.cause.class(), Class::Permanent);
            let hint = match presented {
                Some(true) | None if alert != A::CertificateRequired => {
                    Hint::ReplaceClientCertificate
                }
                _ => Hint::GiveClientCertificate,
            };
            assert_eq!(failure.hint, hint, "{failure:?}");
        }
    }
    let wrapped = io::Error::new(
        io::ErrorKind::InvalidData,
        E::AlertReceived(A::CertificateRequired),
    );
    assert!(refuses_client_certificate(&wrapped));
    assert!(!refuses_client_certificate(&io::Error::other("x")));
}

/// A TLS 1.2 server that asked for a certificate and got none may answer a bare
/// `handshake_failure`: that refusal is about the certificate. Without the request it is not.
#[test]
fn a_handshake_failure_after_a_certificate_request_is_tls_client_cert() {
    let failure = |requested, presented| {
        let seen = Seen {
            client_certificate: Some(presented),
            certificate_requested: Some(requested),
            ..Seen::default()
        };
        describe(&E::AlertReceived(A::HandshakeFailure), Side::Client, seen)
    };
    let refused = failure(true, false);
    assert_eq!(refused.cause, Cause::TlsClientCert);
    assert!(
        refused.detail.contains("asked for a client certificate"),
        "{refused:?}"
    );
    assert_eq!(refused.hint, Hint::GiveClientCertificate, "{refused:?}");
    assert_eq!(failure(false, false).cause, Cause::TlsHandshake);
    assert_eq!(failure(true, true).cause, Cause::TlsHandshake);
}

#[test]
fn other_tls_failures_are_tls_handshake() {
    let cases = [
        (E::AlertReceived(A::ProtocolVersion), Some("TLS 1.2 or 1.3")),
        (
            E::PeerIncompatible(P::ServerDoesNotSupportTls12Or13),
            Some("TLS 1.2 or 1.3"),
        ),
        (E::AlertReceived(A::HandshakeFailure), None),
        (
            E::PeerIncompatible(P::NoCipherSuitesInCommon),
            Some("ECDHE"),
        ),
        (
            E::InvalidMessage(rustls::InvalidMessage::InvalidContentType),
            None,
        ),
        (E::General("odd".into()), Some("logs")),
    ];
    for (err, prose) in cases {
        let failure = client(err);
        assert_eq!(failure.cause, Cause::TlsHandshake, "{failure:?}");
        match (&failure.hint, prose) {
            (Hint::Prose(text), Some(part)) => assert!(text.contains(part), "{failure:?}"),
            (Hint::ClientCertificateOrSuites | Hint::TurnTlsOff, None) => {}
            _ => panic!("unexpected hint: {failure:?}"),
        }
    }
}

/// With the peer's certificate at hand the detail names its dates, issuer and names.
#[test]
fn a_known_certificate_makes_the_detail_precise() {
    let cert = CertSummary {
        subject: "CN=localhost".into(),
        issuer: "CN=localhost".into(),
        sans: vec![],
        not_before: "2026-01-01T00:00:00Z".into(),
        not_after: "2026-02-01T00:00:00Z".into(),
        days_left: -3,
    };
    let seen = Seen {
        peer_certificate: Some(&cert),
        ..Seen::default()
    };
    let expired = describe(&E::InvalidCertificate(C::Expired), Side::Client, seen);
    assert_eq!(
        expired.detail,
        "certificate expired on 2026-02-01T00:00:00Z (3 days ago)"
    );
    let unknown = describe(&E::InvalidCertificate(C::UnknownIssuer), Side::Client, seen);
    assert!(
        unknown.detail.contains("self-signed (CN=localhost)"),
        "{unknown:?}"
    );
    assert_eq!(unknown.hint, Hint::PinSelfSigned, "{unknown:?}");
    let issued = CertSummary {
        issuer: "CN=Some CA".into(),
        ..cert.clone()
    };
    let seen = Seen {
        peer_certificate: Some(&issued),
        ..seen
    };
    let unknown = describe(&E::InvalidCertificate(C::UnknownIssuer), Side::Client, seen);
    assert!(unknown.detail.contains("issuer CN=Some CA"), "{unknown:?}");
    assert_eq!(unknown.hint, Hint::TrustIssuerOrPin, "{unknown:?}");
}

#[test]
fn session_errors_before_the_first_byte_go_through_the_table() {
    let alert = || {
        io::Error::new(
            io::ErrorKind::InvalidData,
            E::AlertReceived(A::CertificateRequired),
        )
    };
    assert_eq!(session_cause(&alert(), true), Cause::TlsClientCert);
    assert_eq!(session_cause(&alert(), false), Cause::NetworkError);
    let reset = io::Error::from(io::ErrorKind::ConnectionReset);
    assert_eq!(session_cause(&reset, true), Cause::ConnectionReset);
}

#[test]
fn handshake_io_errors_classify() {
    let eof = io::Error::new(io::ErrorKind::UnexpectedEof, "tls handshake eof");
    let failure = describe_handshake_io(&eof, Side::Client, Seen::default());
    assert_eq!(failure.cause, Cause::TlsHandshake);
    assert_eq!(failure.hint, Hint::TurnTlsOffOrCheckAccess, "{failure:?}");
    let refused = io::Error::from(io::ErrorKind::ConnectionRefused);
    let failure = describe_handshake_io(&refused, Side::Client, Seen::default());
    assert_eq!(failure.cause, Cause::ConnectionRefused);
}

#[test]
fn listener_details_say_what_the_client_did() {
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
        let failure = server(err);
        assert_eq!(failure.cause, cause, "{name}");
        assert!(failure.detail.contains(want), "{name}: {failure:?}");
    }
}

#[test]
fn no_listener_detail_speaks_from_the_client_side() {
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
        let failure = server(err);
        assert!(
            !failure.detail.contains("our client certificate"),
            "{failure:?}"
        );
        assert!(!failure.detail.contains("peer "), "{failure:?}");
        assert_ne!(failure.cause, Cause::TlsClientCert, "{failure:?}");
    }
    let eof = io::Error::new(io::ErrorKind::UnexpectedEof, "tls handshake eof");
    let failure = describe_handshake_io(&eof, Side::Server, Seen::default());
    assert!(failure.detail.starts_with("client closed"), "{failure:?}");
}
