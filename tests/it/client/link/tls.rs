//! TLS link establishment against local TLS peers: trust, names, versions, client certificates.

use crate::support::certs::{Certs, Pair};
use crate::support::no_payload::assert_clean;
use crate::support::peer::{Behaviour, Peer, Script};
use mllp::cause::Cause;
use mllp::resolve::StaticResolver;
use mllp::tls::{ClientAuth, ClientTlsOptions, ServerTlsOptions, TlsVersions};
use mllp::transport::{classify, Connection, Connector, LinkError, Phase, TcpConnector};
use mllp::warning::WarningCode;
use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const HANDSHAKE: Duration = Duration::from_secs(5);

async fn tls_peer(options: &ServerTlsOptions, behaviour: Behaviour) -> Peer {
    Peer::start_tls(
        Script::always(behaviour),
        options.acceptor(HANDSHAKE).unwrap(),
    )
    .await
}

/// Connects to `localhost` (pinned to 127.0.0.1 by a static resolver) with `options`.
async fn connect(port: u16, options: &ClientTlsOptions) -> Result<Connection, LinkError> {
    let resolver = StaticResolver::new().with("localhost", [IpAddr::V4(Ipv4Addr::LOCALHOST)]);
    TcpConnector::new("localhost", port)
        .with_resolver(Arc::new(resolver))
        .with_tls(options.build("localhost").unwrap())
        .with_connect_timeout(Duration::from_secs(10))
        .connect()
        .await
}

async fn presenting(certs: &Certs, pair: &Pair) -> Peer {
    tls_peer(&certs.server_options(pair), Behaviour::Ack("AA")).await
}

fn assert_failure(err: &LinkError, cause: Cause, detail: &str) {
    assert_eq!(err.cause, cause, "{err}");
    assert_eq!(err.phase, Phase::Tls, "{err}");
    assert!(err.detail.contains(detail), "{err}");
    assert_eq!(classify(err), cause);
    assert_clean("link error", err, crate::support::no_payload::MARKER);
}

#[tokio::test]
async fn a_trusted_certificate_connects_and_summarises_the_session() {
    let certs = Certs::generate();
    let peer = presenting(&certs, &certs.server).await;
    let conn = connect(peer.port(), &certs.client_options()).await.unwrap();
    let tls = conn.tls.clone().unwrap();
    assert_eq!(tls.version, "TLS1.3");
    assert!(tls.cipher_suite.starts_with("TLS13_"), "{tls:?}");
    assert!(tls.verified && conn.security_warnings.is_empty());
    let cert = tls.peer_certificate.unwrap();
    assert!(cert.subject.contains("localhost"), "{cert:?}");
    assert!(cert.issuer.contains("mllp test CA"), "{cert:?}");
    assert_eq!(cert.sans, ["localhost", "127.0.0.1"]);
    assert!((28..=30).contains(&cert.days_left), "{cert:?}");

    // The IP SAN verifies a connection by address, and TLS 1.2 still works.
    let mut v12 = certs.client_options();
    v12.versions = TlsVersions::Tls12Only;
    let by_ip = TcpConnector::new("127.0.0.1", peer.port())
        .with_tls(v12.build("127.0.0.1").unwrap())
        .connect()
        .await
        .unwrap();
    assert_eq!(by_ip.tls.unwrap().version, "TLS1.2");
}

#[tokio::test]
async fn certificate_problems_are_tls_verify() {
    let certs = Certs::generate();
    let cases = [
        (&certs.untrusted, "unknown issuer"),
        (
            &certs.openssl_style,
            "most likely self-signed: it is marked as a CA",
        ),
        (&certs.expired, "certificate expired"),
        (&certs.not_yet_valid, "not valid yet"),
        (
            &certs.wrong_name,
            "certificate is for other.example, not localhost",
        ),
    ];
    for (pair, detail) in cases {
        let peer = presenting(&certs, pair).await;
        let err = connect(peer.port(), &certs.client_options())
            .await
            .unwrap_err();
        assert_failure(&err, Cause::TlsVerify, detail);
        assert_eq!(err.cause.class(), mllp::cause::Class::Permanent);
    }
}

#[tokio::test]
async fn insecure_mode_connects_to_anything_and_says_so_every_time() {
    let certs = Certs::generate();
    let peer = presenting(&certs, &certs.untrusted).await;
    let insecure = ClientTlsOptions {
        insecure: true,
        ..ClientTlsOptions::default()
    };
    for _ in 0..2 {
        let conn = connect(peer.port(), &insecure).await.unwrap();
        assert_eq!(conn.security_warnings, [WarningCode::TlsVerifyDisabled]);
        assert!(!conn.tls.unwrap().verified);
    }
}

#[tokio::test]
async fn non_tls_answers_and_hangups_are_tls_handshake_without_their_bytes() {
    let certs = Certs::generate();
    let cases = [
        (Behaviour::Http, "did not answer with TLS", "Bad Request"),
        (Behaviour::SshBanner, "did not answer with TLS", "OpenSSH"),
        (
            Behaviour::CloseAfterFirstRead,
            "closed the connection during the TLS handshake",
            "HTTP",
        ),
    ];
    for (behaviour, detail, peer_bytes) in cases {
        let peer = Peer::start(Script::always(behaviour)).await;
        let err = connect(peer.port(), &certs.client_options())
            .await
            .unwrap_err();
        assert_failure(&err, Cause::TlsHandshake, detail);
        assert_clean("non-TLS peer", &err, peer_bytes);
    }
}

#[tokio::test]
async fn a_reset_during_the_handshake_is_connection_reset() {
    let certs = Certs::generate();
    let peer = Peer::start(Script::always(Behaviour::ResetOnAccept)).await;
    let err = connect(peer.port(), &certs.client_options())
        .await
        .unwrap_err();
    assert_eq!(
        (err.cause, err.phase),
        (Cause::ConnectionReset, Phase::Tls),
        "{err}"
    );
}

#[tokio::test]
async fn no_common_tls_version_is_tls_handshake_both_ways() {
    let certs = Certs::generate();
    let mut server = certs.server_options(&certs.server);
    server.versions = TlsVersions::Tls13Only;
    let peer = tls_peer(&server, Behaviour::Ack("AA")).await;
    let mut client = certs.client_options();
    client.versions = TlsVersions::Tls12Only;
    let err = connect(peer.port(), &client).await.unwrap_err();
    assert_failure(&err, Cause::TlsHandshake, "TLS version");

    server.versions = TlsVersions::Tls12Only;
    let peer = tls_peer(&server, Behaviour::Ack("AA")).await;
    client.versions = TlsVersions::Tls13Only;
    let err = connect(peer.port(), &client).await.unwrap_err();
    assert_failure(&err, Cause::TlsHandshake, "TLS version");
}

/// Under TLS 1.2 the server refuses a missing client certificate inside the handshake; under
/// TLS 1.3 the client finishes first, so the refusal arrives on the first read. Both are
/// `tls-client-cert`, permanent.
#[tokio::test]
async fn a_refused_client_certificate_is_tls_client_cert() {
    let certs = Certs::generate();
    let peer = tls_peer(
        &certs.mtls_server_options(ClientAuth::Must),
        Behaviour::Ack("AA"),
    )
    .await;

    let mut v12 = certs.client_options();
    v12.versions = TlsVersions::Tls12Only;
    let err = connect(peer.port(), &v12).await.unwrap_err();
    assert_failure(&err, Cause::TlsClientCert, "requires a client certificate");
    assert_eq!(err.cause.class(), mllp::cause::Class::Permanent);

    let stranger = ClientTlsOptions {
        cert_file: Some(certs.untrusted_client.cert.clone()),
        key_file: Some(certs.untrusted_client.key.clone()),
        ..certs.client_options()
    };
    for options in [certs.client_options(), stranger] {
        let conn = connect(peer.port(), &options).await.unwrap();
        let mut stream = conn.stream;
        let _ = stream
            .write_all(&crate::support::peer_wire::frame(b"MSH|"))
            .await;
        let mut buf = [0u8; 16];
        let err = stream.read(&mut buf).await.unwrap_err();
        assert_eq!(classify(&err), Cause::TlsClientCert, "{err}");
        assert_eq!(mllp::tls::session_cause(&err, true), Cause::TlsClientCert);
    }
    let record = peer.wait_for(|r| r.tls_errors.len() == 3).await;
    let causes: Vec<Cause> = record.tls_errors.iter().map(|e| e.cause).collect();
    assert_eq!(
        causes,
        [Cause::TlsHandshake, Cause::TlsHandshake, Cause::TlsVerify]
    );
    assert!(record.tls_accepted.is_empty());
}

/// The client core over a TLS 1.3 link whose server refuses the client certificate after the
/// handshake: every message, written or not, is never delivered (the server decrypted none),
/// with cause `tls-client-cert`, and the link is not tried again.
#[tokio::test]
async fn the_client_settles_a_refused_certificate_as_never_delivered_without_retry() {
    use bytes::Bytes;
    use mllp::client::{
        BackoffConfig, Client, ClientOptions, Correlation, ExponentialBackoff, Fate, FateCause,
        Reconnect, State,
    };
    let certs = Certs::generate();
    let peer = tls_peer(
        &certs.mtls_server_options(ClientAuth::Must),
        Behaviour::Ack("AA"),
    )
    .await;
    let stranger = ClientTlsOptions {
        cert_file: Some(certs.untrusted_client.cert.clone()),
        key_file: Some(certs.untrusted_client.key.clone()),
        ..certs.client_options()
    };
    for correlation in [Correlation::ControlId, Correlation::Fifo] {
        for options in [certs.client_options(), stranger.clone()] {
            let connector = TcpConnector::new("127.0.0.1", peer.port())
                .with_tls(options.build("127.0.0.1").unwrap())
                .with_connect_timeout(Duration::from_secs(10));
            let backoff = BackoffConfig {
                initial: Duration::from_millis(10),
                max: Duration::from_millis(20),
                ..Default::default()
            };
            let client_options = ClientOptions {
                correlation,
                reconnect: Reconnect {
                    enabled: true,
                    strategy: Arc::new(ExponentialBackoff::new(backoff)),
                },
                ..Default::default()
            };
            let client = Client::new(Arc::new(connector), client_options).unwrap();
            let payloads = (0..60).map(|i| {
                Bytes::from(crate::support::peer_wire::message(
                    &format!("C{i}"),
                    crate::support::no_payload::MARKER,
                ))
            });
            let handles = client.send_many(payloads).await;
            for handle in handles {
                let fate = handle.await;
                assert_eq!(
                    fate,
                    Fate::NeverDelivered {
                        cause: FateCause::Link(Cause::TlsClientCert)
                    },
                    "{correlation:?}"
                );
            }
            assert_eq!(client.stats().reconnect_attempts, 0);
            assert_eq!(client.state(), State::Closed);
        }
    }
    assert_eq!(peer.connections(), 4);
    assert!(peer.payloads().is_empty());
}

/// `--ca` holding the server's own certificate trusts exactly it: a CA-marked certificate with
/// no subjectAltName (as `openssl req -x509` makes), a leaf for other names, still between
/// their dates; a certificate the CA file does not hold is verified as before.
#[tokio::test]
async fn a_certificate_in_the_ca_file_is_trusted_as_itself() {
    let certs = Certs::generate();
    let pin = |pair: &Pair| ClientTlsOptions {
        ca_file: Some(pair.cert.clone()),
        ca_only: true,
        ..ClientTlsOptions::default()
    };
    let openssl_style = presenting(&certs, &certs.openssl_style).await;
    let conn = connect(openssl_style.port(), &pin(&certs.openssl_style))
        .await
        .unwrap();
    assert!(conn.tls.unwrap().verified);
    // By address too, though the certificate names no host at all.
    TcpConnector::new("127.0.0.1", openssl_style.port())
        .with_tls(pin(&certs.openssl_style).build("127.0.0.1").unwrap())
        .connect()
        .await
        .unwrap();

    let wrong_name = presenting(&certs, &certs.wrong_name).await;
    connect(wrong_name.port(), &pin(&certs.wrong_name))
        .await
        .unwrap();

    let expired = presenting(&certs, &certs.expired).await;
    let err = connect(expired.port(), &pin(&certs.expired))
        .await
        .unwrap_err();
    assert_failure(&err, Cause::TlsVerify, "certificate expired");

    // Pinning one certificate trusts no other.
    let untrusted = presenting(&certs, &certs.untrusted).await;
    let err = connect(untrusted.port(), &pin(&certs.openssl_style))
        .await
        .unwrap_err();
    assert_eq!(err.cause, Cause::TlsVerify, "{err}");
}

#[tokio::test]
async fn client_certificates_are_reported_by_the_acceptor() {
    let certs = Certs::generate();
    let with_cert = ClientTlsOptions {
        cert_file: Some(certs.client.cert.clone()),
        key_file: Some(certs.client.key.clone()),
        ..certs.client_options()
    };
    for auth in [ClientAuth::Must, ClientAuth::Want] {
        let peer = tls_peer(&certs.mtls_server_options(auth), Behaviour::Ack("AA")).await;
        let conn = connect(peer.port(), &with_cert).await.unwrap();
        let mut stream = conn.stream;
        stream
            .write_all(&crate::support::peer_wire::frame(
                b"MSH|^~\\&|||||||ADT^A01|C1|P|2.5\r",
            ))
            .await
            .unwrap();
        let mut buf = [0u8; 256];
        assert!(stream.read(&mut buf).await.unwrap() > 0);
        let accepted = &peer.record().tls_accepted[0];
        assert!(accepted.client_cert_presented && accepted.client_cert_verified);
        assert!(accepted
            .client_subject
            .as_deref()
            .unwrap()
            .contains("mllp test client"));
    }
    let peer = tls_peer(
        &certs.mtls_server_options(ClientAuth::Want),
        Behaviour::Ack("AA"),
    )
    .await;
    let conn = connect(peer.port(), &certs.client_options()).await.unwrap();
    drop(conn);
    let record = peer.wait_for(|r| !r.tls_accepted.is_empty()).await;
    assert!(!record.tls_accepted[0].client_cert_presented);
    assert!(record.tls_accepted[0].client_subject.is_none());
}
