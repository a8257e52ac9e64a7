//! `send` over TLS: an untrusted certificate is exit 5, `--insecure` warns and delivers.

use super::{path, send, to, write};
use crate::support::certs::Certs;
use crate::support::no_payload::MARKER;
use crate::support::peer::{Behaviour, Peer, Script};
use crate::support::peer_wire::message;
use std::time::Duration;

/// A TLS peer that ACKs everything, behind a self-signed certificate nobody's CA trusts.
async fn untrusted_peer(certs: &Certs) -> Peer {
    let acceptor = certs
        .server_options(&certs.untrusted)
        .acceptor(Duration::from_secs(5))
        .unwrap();
    Peer::start_tls(Script::always(Behaviour::Ack("AA")), acceptor).await
}

#[tokio::test(flavor = "multi_thread")]
async fn an_untrusted_certificate_exits_5() {
    let certs = Certs::generate();
    let peer = untrusted_peer(&certs).await;
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "adt.hl7", &message("T1", MARKER));
    let ca = path(&certs.ca);
    let run = send(&to(peer.port(), &["--json", "--ca", &ca, &path(&file)])).await;
    assert_eq!(run.code, 5, "{}", run.stderr);
    assert_eq!(run.messages()[0]["cause"], "tls-verify");
    assert!(peer.payloads().is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn insecure_tls_warns_on_connect_and_delivers() {
    let certs = Certs::generate();
    let peer = untrusted_peer(&certs).await;
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "adt.hl7", &message("I1", MARKER));
    let run = send(&to(peer.port(), &["--insecure", &path(&file)])).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains("MLLP_TLS_VERIFY_DISABLED"),
        "{}",
        run.stderr
    );
}

/// A TLS peer that ACKs everything, presenting `pair`.
async fn peer_presenting(certs: &Certs, pair: &crate::support::certs::Pair) -> Peer {
    let acceptor = certs
        .server_options(pair)
        .acceptor(Duration::from_secs(5))
        .unwrap();
    Peer::start_tls(Script::always(Behaviour::Ack("AA")), acceptor).await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_self_signed_ca_flagged_certificate_is_named_so_with_pinning_as_the_fix() {
    let certs = Certs::generate();
    let peer = peer_presenting(&certs, &certs.openssl_style).await;
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "adt.hl7", &message("S1", MARKER));
    let ca = path(&certs.ca);
    let run = send(&to(
        peer.port(),
        &["--ca", &ca, "--no-reconnect", &path(&file)],
    ))
    .await;
    assert_eq!(run.code, 5, "{}", run.stderr);
    assert!(run.stderr.contains("self-signed"), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("--ca with the CA that issued it, or with the server's own certificate"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("may not be"), "{}", run.stderr);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_name_mismatch_lists_the_names_without_rust_notation() {
    let certs = Certs::generate();
    let peer = peer_presenting(&certs, &certs.server).await;
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "adt.hl7", &message("N1", MARKER));
    let ca = path(&certs.ca);
    let run = send(&to(
        peer.port(),
        &[
            "--ca",
            &ca,
            "--server-name",
            "wrong.example",
            "--no-reconnect",
            &path(&file),
        ],
    ))
    .await;
    assert_eq!(run.code, 5, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("certificate is for localhost, 127.0.0.1, not wrong.example"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("IpAddress("), "{}", run.stderr);
}
