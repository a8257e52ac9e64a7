//! Integration tests: `mllp listen` over TLS as a real process: client authentication (must,
//! want), unloadable material, and the `tls_client_error` events, worded from the listener's
//! side: what the connecting client did, never what a client would say about its own
//! certificate.

use crate::support::certs::{Certs, Pair};
use crate::support::listen_proc::{is, ListenProc};
use crate::support::mllp_client::marked;
use crate::support::no_payload::{assert_no_marker, MARKER};
use crate::support::peer_wire::{frame, Deframer};
use mllp::tls::ClientTlsOptions;
use serde_json::Value;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;

const WAIT: Duration = Duration::from_secs(10);

/// One message over any stream; the first ACK's MSA-1, or `None` when the link failed first.
async fn round_trip<S: AsyncRead + AsyncWrite + Unpin>(
    stream: &mut S,
    payload: &[u8],
) -> Option<String> {
    stream.write_all(&frame(payload)).await.ok()?;
    let mut deframer = Deframer::canonical();
    let ack = tokio::time::timeout(WAIT, deframer.read_frame(stream))
        .await
        .ok()??;
    let view = mllp::hl7::scan_ack(&ack)?;
    Some(String::from_utf8_lossy(view.code).into_owned())
}

/// A TLS MLLP exchange with `client` presenting `cert` (if any): the ACK code, or `None`.
async fn tls_exchange(addr: SocketAddr, certs: &Certs, cert: Option<&Pair>) -> Option<String> {
    let options = ClientTlsOptions {
        cert_file: cert.map(|p| p.cert.clone()),
        key_file: cert.map(|p| p.key.clone()),
        ..certs.client_options()
    };
    let client = options.build("localhost").unwrap();
    let connector = tokio_rustls::TlsConnector::from(client.config);
    let tcp = TcpStream::connect(addr).await.unwrap();
    let mut tls = tokio::time::timeout(WAIT, connector.connect(client.server_name, tcp))
        .await
        .expect("handshake wait")
        .ok()?;
    round_trip(&mut tls, &marked("T1", "")).await
}

fn tls_args<'a>(certs: &'a Certs, auth: &'a str) -> Vec<&'a str> {
    vec![
        "--tls-cert",
        certs.server.cert.to_str().unwrap(),
        "--tls-key",
        certs.server.key.to_str().unwrap(),
        "--client-ca",
        certs.ca.to_str().unwrap(),
        "--client-auth",
        auth,
        "--format",
        "json",
    ]
}

#[tokio::test]
async fn tls_must_refuses_without_a_certificate_and_keeps_serving() {
    let certs = Certs::generate();
    let server = ListenProc::start(&tls_args(&certs, "must"));
    assert_eq!(
        tls_exchange(server.addr, &certs, None).await,
        None,
        "no cert, no ACK"
    );
    let error = server.wait_event(is("tls_client_error"));
    assert!(error["cause"].is_string(), "{error}");
    let untrusted = tls_exchange(server.addr, &certs, Some(&certs.untrusted_client)).await;
    assert_eq!(untrusted, None);
    server.wait_event(is("tls_client_error"));
    // Still serving after bad handshakes.
    let ok = tls_exchange(server.addr, &certs, Some(&certs.client)).await;
    assert_eq!(ok.as_deref(), Some("AA"));
    let opened = server.wait_event(is("connection_opened"));
    assert_eq!(opened["authorized"], true, "{opened}");
    assert!(
        opened["subject"].as_str().is_some_and(|s| !s.is_empty()),
        "{opened}"
    );
    server.signal("TERM");
    let (status, rest, _) = server.wait();
    assert_eq!(status.code(), Some(0));
    assert_no_marker(
        "listen events",
        &format!("{rest:?} {error} {opened}"),
        MARKER,
    );
}

#[tokio::test]
async fn tls_want_accepts_both_and_says_which_was_authorized() {
    let certs = Certs::generate();
    let server = ListenProc::start(&tls_args(&certs, "want"));
    assert_eq!(
        tls_exchange(server.addr, &certs, None).await.as_deref(),
        Some("AA")
    );
    let anonymous = server.wait_event(is("connection_opened"));
    assert_eq!(anonymous["authorized"], false, "{anonymous}");
    assert_eq!(
        tls_exchange(server.addr, &certs, Some(&certs.client))
            .await
            .as_deref(),
        Some("AA")
    );
    let known = server.wait_event(is("connection_opened"));
    assert_eq!(known["authorized"], true, "{known}");
}

#[test]
fn unloadable_tls_material_exits_5_naming_the_file() {
    let out = crate::support::mllp()
        .args([
            "listen",
            "--port",
            "0",
            "--tls-cert",
            "/nonexistent/s.pem",
            "--tls-key",
            "/nonexistent/s.key",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(5));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/s.pem"));
}

fn detail(event: &Value) -> &str {
    event["detail"].as_str().unwrap_or_default()
}

fn hint(event: &Value) -> &str {
    event["hint"].as_str().unwrap_or_default()
}

#[tokio::test]
async fn a_ca_flagged_client_certificate_is_worded_as_the_clients() {
    let certs = Certs::generate();
    let server = ListenProc::start(&tls_args(&certs, "must"));
    let refused = tls_exchange(server.addr, &certs, Some(&certs.openssl_style)).await;
    assert_eq!(refused, None);
    let event = server.wait_event(is("tls_client_error"));
    assert_eq!(event["cause"], "tls-verify", "{event}");
    assert!(detail(&event).starts_with("client certificate"), "{event}");
    assert!(!detail(&event).contains("server's"), "{event}");
    assert!(
        hint(&event).contains("issued by a CA in --client-ca, not a CA's own"),
        "{event}"
    );
}

#[tokio::test]
async fn a_missing_or_untrusted_client_certificate_is_the_clients_doing() {
    let certs = Certs::generate();
    let server = ListenProc::start(&tls_args(&certs, "must"));
    assert_eq!(tls_exchange(server.addr, &certs, None).await, None);
    let missing = server.wait_event(is("tls_client_error"));
    assert_eq!(missing["cause"], "tls-handshake", "{missing}");
    assert!(
        detail(&missing).starts_with("client did not present a certificate"),
        "{missing}"
    );
    assert!(hint(&missing).contains("--client-auth want"), "{missing}");
    let untrusted = tls_exchange(server.addr, &certs, Some(&certs.untrusted_client)).await;
    assert_eq!(untrusted, None);
    let untrusted = server.wait_event(is("tls_client_error"));
    assert_eq!(untrusted["cause"], "tls-verify", "{untrusted}");
    assert!(
        detail(&untrusted).starts_with("client certificate not trusted"),
        "{untrusted}"
    );
    assert!(hint(&untrusted).contains("--client-ca"), "{untrusted}");
}

#[tokio::test]
async fn a_client_that_does_not_trust_our_certificate_aborted_the_handshake() {
    let certs = Certs::generate();
    // Self-signed: the client, trusting only the test CA, gives up on it.
    let server = ListenProc::start(&[
        "--tls-cert",
        certs.untrusted.cert.to_str().unwrap(),
        "--tls-key",
        certs.untrusted.key.to_str().unwrap(),
    ]);
    assert_eq!(tls_exchange(server.addr, &certs, None).await, None);
    let error = server.wait_event(is("tls_client_error"));
    assert_eq!(error["cause"], "tls-handshake", "{error}");
    let detail = detail(&error);
    assert!(
        detail.starts_with("client aborted the handshake")
            && detail.contains("it likely does not trust our certificate"),
        "{error}"
    );
    assert!(!detail.contains("our client certificate"), "{error}");
    assert!(
        hint(&error).contains("the CA that issued --tls-cert"),
        "{error}"
    );
}
