//! Verdict permanent: certificates refused either way, and peers that do not speak MLLP (or
//! speak it without TLS, or only with it).

use super::{acceptor, expect, phase, verdict_mentions, Scratch};
use crate::support::certs::Certs;
use crate::support::listen_proc::ListenProc;
use crate::support::peer::{Behaviour, Peer, Script};
use mllp::tls::ClientAuth;
use serde_json::Value;
use std::path::Path;

/// Probes both ways and expects a permanent verdict for `cause` (always exit 5).
async fn permanent(args: &[&str], hosts: &Path, cause: &str) -> Value {
    expect(args, hosts, "permanent", Some(cause), 5).await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_must_server_refuses_a_probe_without_a_client_certificate() {
    let (s, certs) = (Scratch::new(), Certs::generate());
    let ca = certs.ca.display().to_string();
    let peer = Peer::start_tls(
        Script::always(Behaviour::Ack("AA")),
        acceptor(&certs, certs.mtls_server_options(ClientAuth::Must)),
    )
    .await;
    let target = format!("localhost:{}", peer.port());
    let report = permanent(&[&target, "--ca", &ca], &s.hosts(), "tls-client-cert").await;
    assert_eq!(phase(&report, "tls")["client_certificate"], "required");
    verdict_mentions(&report, "hint", "--cert");
    let (cert, key) = (
        certs.untrusted_client.cert.display().to_string(),
        certs.untrusted_client.key.display().to_string(),
    );
    let args = [
        target.as_str(),
        "--ca",
        &ca,
        "--cert",
        &cert,
        "--key",
        &key,
        "--send",
    ];
    let report = permanent(&args, &s.hosts(), "tls-client-cert").await;
    assert_eq!(phase(&report, "tls")["client_certificate"], "refused");
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_certificates_say_which_check_failed() {
    let (s, certs) = (Scratch::new(), Certs::generate());
    let ca = certs.ca.display().to_string();
    let cases = [
        (&certs.untrusted, "self-signed"),
        (&certs.expired, "expired"),
        (&certs.not_yet_valid, "not valid until"),
        (&certs.wrong_name, "other.example"),
    ];
    for (pair, says) in cases {
        let peer = Peer::start_tls(
            Script::always(Behaviour::Ack("AA")),
            acceptor(&certs, certs.server_options(pair)),
        )
        .await;
        let target = format!("localhost:{}", peer.port());
        let report = permanent(&[&target, "--ca", &ca], &s.hosts(), "tls-verify").await;
        let verdict = report["verdict"].to_string();
        assert!(verdict.contains(says), "{says}: {verdict}");
        assert!(
            phase(&report, "tls")["peer_certificate"]["subject"].is_string(),
            "{report}"
        );
        if says == "other.example" {
            assert_eq!(phase(&report, "tls")["name_matched"], false);
            verdict_mentions(&report, "hint", "--server-name");
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn peers_that_are_not_mllp_are_recognised() {
    let (s, certs) = (Scratch::new(), Certs::generate());
    let message = s.message();
    let http = Peer::start(Script::always(Behaviour::Http)).await;
    let target = format!("127.0.0.1:{}", http.port());
    let report = permanent(
        &[&target, "--message", &message],
        &s.hosts(),
        "framing-fatal",
    )
    .await;
    verdict_mentions(&report, "detail", "HTTP");

    let ssh = Peer::start(Script::always(Behaviour::SshBanner)).await;
    let target = format!("127.0.0.1:{}", ssh.port());
    let report = permanent(&[&target], &s.hosts(), "framing-fatal").await;
    verdict_mentions(&report, "detail", "SSH");
    assert_eq!(phase(&report, "connect")["banner"]["peer"]["kind"], "ssh");
    assert_eq!(phase(&report, "connect")["banner"]["ok"], false);

    // A TLS server spoken to in plain TCP answers the frame with a TLS alert.
    let tls = Peer::start_tls(
        Script::always(Behaviour::Ack("AA")),
        acceptor(&certs, certs.server_options(&certs.server)),
    )
    .await;
    let target = format!("127.0.0.1:{}", tls.port());
    let report = permanent(
        &[&target, "--message", &message],
        &s.hosts(),
        "framing-fatal",
    )
    .await;
    verdict_mentions(&report, "hint", "--tls");

    // A plain server spoken to in TLS: an HTTP answer to the ClientHello, or a hang-up.
    let target = format!("127.0.0.1:{}", http.port());
    let report = permanent(
        &[&target, "--tls", "--insecure"],
        &s.hosts(),
        "tls-handshake",
    )
    .await;
    verdict_mentions(&report, "detail", "HTTP");
    verdict_mentions(&report, "hint", "without --tls");
    let listen = ListenProc::start(&[]);
    let target = format!("127.0.0.1:{}", listen.addr.port());
    let report = permanent(
        &[&target, "--tls", "--insecure"],
        &s.hosts(),
        "tls-handshake",
    )
    .await;
    verdict_mentions(&report, "hint", "without --tls");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_peer_whose_msa_2_never_names_our_control_id_is_told_at_once_with_the_fifo_hint() {
    let s = Scratch::new();
    let peer = Peer::start(Script::always(Behaviour::WrongId("AA"))).await;
    let target = format!("localhost:{}", peer.port());
    let message = s.message();
    // An ACK timeout far longer than the test may take: the answer itself says enough.
    let args = [
        target.as_str(),
        "--message",
        &message,
        "--ack-timeout",
        "10m",
    ];
    let report = permanent(&args, &s.hosts(), "ack-control-id-mismatch").await;
    verdict_mentions(&report, "detail", "the peer answered AA");
    verdict_mentions(&report, "detail", "PROBE42");
    verdict_mentions(&report, "hint", "--correlate fifo");
    assert_eq!(phase(&report, "ack")["ok"], false, "{report}");
    let human = super::probe(&args, &s.hosts()).await;
    assert!(
        !human.stdout.contains("never acknowledged"),
        "{}",
        human.stdout
    );
    assert!(!human.stdout.contains("no ACK within"), "{}", human.stdout);
}
