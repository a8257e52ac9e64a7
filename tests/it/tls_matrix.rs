//! The TLS matrix through the binary: each way a TLS link is refused (an expired, not yet valid,
//! wrong-name or unpinned self-signed certificate, a TLS 1.1-only peer, a client certificate
//! missing or from another CA) ends `send`, `soak` and `probe` with its own cause, permanent
//! (exit 5), after one connection: never retried, nothing delivered, and a hint naming the step
//! that fixes it. Then that step, for self-signed certificates: `--ca` with the certificate.

mod pinning;

use crate::support::certs::{Certs, Pair};
use crate::support::mllp;
use crate::support::no_payload::MARKER;
use crate::support::openssl_peer::OpensslPeer;
use crate::support::peer::{Behaviour, Peer, Script};
use crate::support::peer_wire::message;
use crate::support::run::Run;
use mllp::tls::{ClientAuth, ServerTlsOptions};
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

/// Runs `mllp ARGS` off the runtime, so the in-process peers keep serving.
async fn run(args: Vec<String>) -> Run {
    tokio::task::spawn_blocking(move || {
        let out = mllp()
            .args(&args)
            .timeout(Duration::from_secs(60))
            .output()
            .unwrap();
        Run::checked(&out, &format!("{} stderr", args[0]))
    })
    .await
    .unwrap()
}

fn strings(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

fn path(p: &Path) -> String {
    p.display().to_string()
}

/// A peer that acknowledges everything, behind `options`.
async fn tls_peer(options: ServerTlsOptions) -> Peer {
    let acceptor = options.acceptor(Duration::from_secs(5)).unwrap();
    Peer::start_tls(Script::always(Behaviour::Ack("AA")), acceptor).await
}

/// One refusal: where, with which client TLS arguments, and what must be reported.
struct Case<'a> {
    name: &'a str,
    port: u16,
    tls: Vec<String>,
    cause: &'a str,
    /// A word the hint must contain: the step that fixes it.
    hint: &'a str,
    /// Our own peer, whose connections and payloads are counted (openssl's are not).
    peer: Option<&'a Peer>,
}

impl Case<'_> {
    fn connections(&self) -> usize {
        self.peer.map_or(0, Peer::connections)
    }

    /// One more connection than `before`, and nothing delivered.
    async fn one_connection_since(&self, before: usize, command: &str) {
        if let Some(peer) = self.peer {
            let record = peer.wait_for(|r| r.connections > before).await;
            // A retry would come within the backoff: give it the time to show.
            tokio::time::sleep(Duration::from_millis(150)).await;
            assert_eq!(
                peer.connections(),
                before + 1,
                "{}: {command} retried: {record:?}",
                self.name
            );
            assert!(peer.payloads().is_empty(), "{}: {command}", self.name);
        }
    }
}

/// `send --json` with two marked messages.
async fn send_is_refused(case: &Case<'_>, dir: &Path) {
    let file = dir.join("adt.hl7");
    let mut bytes = message("TLS1", MARKER);
    bytes.extend(message("TLS2", MARKER));
    std::fs::write(&file, bytes).unwrap();
    let mut args = strings(&["send", &path(&file), "--json", "--host", "127.0.0.1"]);
    args.extend(strings(&["--port", &case.port.to_string()]));
    args.extend(strings(&[
        "--backoff-initial",
        "10ms",
        "--backoff-max",
        "20ms",
    ]));
    args.extend(case.tls.clone());
    let before = case.connections();
    let sent = run(args.clone()).await;
    let name = case.name;
    assert_eq!(sent.code, 5, "{name}: send: {}{}", sent.stdout, sent.stderr);
    let messages = sent.messages();
    assert_eq!(messages.len(), 2, "{name}: {}", sent.stdout);
    for record in &messages {
        assert_eq!(record["outcome"], "never-delivered", "{name}: {record}");
        assert_eq!(record["cause"], case.cause, "{name}: {record}");
    }
    let summary = sent.summary();
    assert_eq!(summary["gave_up"], case.cause, "{name}: {summary}");
    assert_eq!(summary["reconnects"], 0, "{name}: {summary}");
    case.one_connection_since(before, "send").await;

    // The human summary names the cause and a step that fixes it.
    let before = case.connections();
    let human = run(args.into_iter().filter(|a| a != "--json").collect()).await;
    assert_eq!(human.code, 5, "{name}: send: {}", human.stderr);
    let what = format!("mllp: {}: ", case.cause);
    assert!(human.stderr.contains(&what), "{name}: {}", human.stderr);
    let gave_up = format!("gave up: {} (permanent): ", case.cause);
    assert!(human.stderr.contains(&gave_up), "{name}: {}", human.stderr);
    assert!(human.stderr.contains(case.hint), "{name}: {}", human.stderr);
    case.one_connection_since(before, "send").await;
}

/// `soak --json` against the peer.
async fn soak_is_refused(case: &Case<'_>) {
    let mut args = strings(&["soak", "--host", "127.0.0.1", "--allow-synthetic", "--json"]);
    args.extend(strings(&[
        "--port",
        &case.port.to_string(),
        "--messages",
        "20",
    ]));
    args.extend(strings(&[
        "--backoff-initial",
        "10ms",
        "--backoff-max",
        "20ms",
    ]));
    args.extend(case.tls.clone());
    let before = case.connections();
    let soaked = run(args.clone()).await;
    let name = case.name;
    assert_eq!(
        soaked.code, 5,
        "{name}: soak: {}{}",
        soaked.stdout, soaked.stderr
    );
    let report: Value = serde_json::from_str(soaked.stdout.trim()).unwrap();
    assert_eq!(report["accounting_ok"], true, "{name}: {report}");
    assert_eq!(report["reconnects"], 0, "{name}: {report}");
    assert_eq!(
        report["errors_by_cause"],
        serde_json::json!({ case.cause: 1 }),
        "{name}: {report}"
    );
    assert_eq!(report["accepted"], 0, "{name}: {report}");
    assert_eq!(report["unknown_fate"], 0, "{name}: {report}");
    assert_eq!(
        report["never_delivered"], report["generated"],
        "{name}: {report}"
    );
    case.one_connection_since(before, "soak").await;

    // The human report names the cause and a step that fixes it.
    let before = case.connections();
    let human = run(args.into_iter().filter(|a| a != "--json").collect()).await;
    assert_eq!(human.code, 5, "{name}: soak: {}", human.stderr);
    let says = format!("{} (permanent): ", case.cause);
    assert!(human.stdout.contains(&says), "{name}: {}", human.stdout);
    assert!(human.stdout.contains(case.hint), "{name}: {}", human.stdout);
    case.one_connection_since(before, "soak").await;
}

/// `probe --json` (sending a message once connected).
async fn probe_is_refused(case: &Case<'_>) {
    let mut args = strings(&["probe", &format!("127.0.0.1:{}", case.port), "--json"]);
    args.extend(strings(&["--send", "--banner-wait", "200ms"]));
    args.extend(case.tls.clone());
    let before = case.connections();
    let run = run(args).await;
    let name = case.name;
    assert_eq!(run.code, 5, "{name}: probe: {}{}", run.stdout, run.stderr);
    let report: Value = serde_json::from_str(run.stdout.trim()).unwrap();
    let verdict = &report["verdict"];
    assert_eq!(verdict["class"], "permanent", "{name}: {report}");
    assert_eq!(verdict["cause"], case.cause, "{name}: {report}");
    let hint = verdict["hint"].as_str().unwrap();
    assert!(hint.contains(case.hint), "{name}: hint {hint:?}");
    case.one_connection_since(before, "probe").await;
}

async fn refused_everywhere(case: Case<'_>) {
    let dir = tempfile::tempdir().unwrap();
    send_is_refused(&case, dir.path()).await;
    soak_is_refused(&case).await;
    probe_is_refused(&case).await;
}

fn trusting(ca: &Path) -> Vec<String> {
    strings(&["--ca", &path(ca)])
}

#[tokio::test(flavor = "multi_thread")]
async fn certificate_problems_are_tls_verify_everywhere() {
    let certs = Certs::generate();
    let cases: [(&str, &Pair, &str); 5] = [
        ("expired", &certs.expired, "renew"),
        ("not yet valid", &certs.not_yet_valid, "clock"),
        ("wrong name", &certs.wrong_name, "--server-name"),
        ("self-signed, not pinned", &certs.untrusted, "--ca"),
        ("openssl-style, not pinned", &certs.openssl_style, "--ca"),
    ];
    for (name, pair, hint) in cases {
        let peer = tls_peer(certs.server_options(pair)).await;
        refused_everywhere(Case {
            name,
            port: peer.port(),
            tls: trusting(&certs.ca),
            cause: "tls-verify",
            hint,
            peer: Some(&peer),
        })
        .await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_refused_client_certificate_is_tls_client_cert_everywhere() {
    let certs = Certs::generate();
    let peer = tls_peer(certs.mtls_server_options(ClientAuth::Must)).await;
    let stranger = &certs.untrusted_client;
    let mut from_another_ca = trusting(&certs.ca);
    from_another_ca.extend(strings(&["--cert", &path(&stranger.cert)]));
    from_another_ca.extend(strings(&["--key", &path(&stranger.key)]));
    for (name, tls) in [
        ("client certificate missing", trusting(&certs.ca)),
        ("client certificate from another CA", from_another_ca),
    ] {
        refused_everywhere(Case {
            name,
            port: peer.port(),
            tls,
            cause: "tls-client-cert",
            hint: "--cert",
            peer: Some(&peer),
        })
        .await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tls_1_1_only_peer_is_tls_handshake_everywhere() {
    let certs = Certs::generate();
    let test = "a_tls_1_1_only_peer_is_tls_handshake_everywhere";
    let Some(peer) = OpensslPeer::tls11(test, &certs.server.cert, &certs.server.key) else {
        return;
    };
    refused_everywhere(Case {
        name: "TLS 1.1-only peer",
        port: peer.port,
        tls: trusting(&certs.ca),
        cause: "tls-handshake",
        hint: "TLS 1.2",
        peer: None,
    })
    .await;
}

/// An OpenSSL server under TLS 1.2 refuses a client without a certificate by a bare
/// `handshake_failure`: it asked for one, so that is the client certificate's refusal.
#[tokio::test(flavor = "multi_thread")]
async fn an_openssl_tls_1_2_server_refusing_a_missing_certificate_is_tls_client_cert() {
    let certs = Certs::generate();
    let test = "an_openssl_tls_1_2_server_refusing_a_missing_certificate_is_tls_client_cert";
    let (cert, key) = (&certs.server.cert, &certs.server.key);
    let Some(peer) = OpensslPeer::tls12_requiring_client_cert(test, cert, key, &certs.ca) else {
        return;
    };
    refused_everywhere(Case {
        name: "client certificate missing, OpenSSL TLS 1.2",
        port: peer.port,
        tls: trusting(&certs.ca),
        cause: "tls-client-cert",
        hint: "--cert",
        peer: None,
    })
    .await;
}
