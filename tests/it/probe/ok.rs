//! Verdict ok: plain, TLS and mutual-TLS peers that answer, and a negative ACK (the link works).

use super::{acceptor, expect, phase, verdict_mentions, Scratch};
use crate::support::certs::Certs;
use crate::support::listen_proc::ListenProc;
use crate::support::peer::{Behaviour, Peer, Script};
use mllp::tls::ClientAuth;

#[tokio::test(flavor = "multi_thread")]
async fn mllp_listen_answers_ok_with_and_without_a_message() {
    let s = Scratch::new();
    let listen = ListenProc::start(&[]);
    let target = format!("engine.test:{}", listen.addr.port());
    let message = s.message();
    let report = expect(&[&target, "--message", &message], &s.hosts(), "ok", None, 0).await;
    assert_eq!(phase(&report, "ack")["ack_code"], "AA");
    assert_eq!(phase(&report, "ack")["control_id_matches"], true);
    assert_eq!(phase(&report, "send")["control_id"], "PROBE42");
    assert_eq!(phase(&report, "resolve")["addresses"][0], "127.0.0.1");

    let port = listen.addr.port().to_string();
    let report = expect(
        &["--host", "127.0.0.1", "--port", &port],
        &s.hosts(),
        "ok",
        None,
        0,
    )
    .await;
    assert_eq!(phase(&report, "connect")["banner"]["silent"], true);
    verdict_mentions(&report, "hint", "--send");
}

#[tokio::test(flavor = "multi_thread")]
async fn tls_and_mutual_tls_peers_answer_ok_with_certificate_details() {
    let (s, certs) = (Scratch::new(), Certs::generate());
    let ca = certs.ca.display().to_string();
    let peer = Peer::start_tls(
        Script::always(Behaviour::Ack("AA")),
        acceptor(&certs, certs.server_options(&certs.server)),
    )
    .await;
    let target = format!("localhost:{}", peer.port());
    let report = expect(&[&target, "--ca", &ca, "--send"], &s.hosts(), "ok", None, 0).await;
    let tls = phase(&report, "tls");
    assert_eq!(tls["name_matched"], true);
    assert_eq!(tls["verified"], true);
    assert_eq!(tls["client_certificate"], "none");
    assert!(tls["version"].as_str().unwrap().starts_with("TLS1."));
    assert!(tls["peer_certificate"]["subject"]
        .as_str()
        .unwrap()
        .contains("localhost"));
    assert!(tls["peer_certificate"]["issuer"]
        .as_str()
        .unwrap()
        .contains("mllp test CA"));
    assert!(tls["peer_certificate"]["days_left"].as_i64().unwrap() >= 29);

    let mtls = Peer::start_tls(
        Script::always(Behaviour::Ack("AA")),
        acceptor(&certs, certs.mtls_server_options(ClientAuth::Must)),
    )
    .await;
    let target = format!("localhost:{}", mtls.port());
    let (cert, key) = (
        certs.client.cert.display().to_string(),
        certs.client.key.display().to_string(),
    );
    let args = [target.as_str(), "--ca", &ca, "--cert", &cert, "--key", &key];
    let report = expect(&args, &s.hosts(), "ok", None, 0).await;
    assert_eq!(phase(&report, "tls")["client_certificate"], "accepted");
    let mut with_send = args.to_vec();
    with_send.push("--send");
    let report = expect(&with_send, &s.hosts(), "ok", None, 0).await;
    assert_eq!(phase(&report, "ack")["ack_code"], "AA");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_negative_ack_is_its_own_verdict_and_exits_1() {
    let s = Scratch::new();
    let peer = Peer::start(Script::always(Behaviour::Ack("AE"))).await;
    let target = format!("127.0.0.1:{}", peer.port());
    let message = s.message();
    let report = expect(
        &[&target, "--message", &message],
        &s.hosts(),
        "negative",
        None,
        1,
    )
    .await;
    assert_eq!(report["verdict"]["ack_code"], "AE");
    assert_eq!(report["ok"], false);
}
