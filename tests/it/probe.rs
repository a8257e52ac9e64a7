//! Integration tests: probe. The real binary against real local peers, one test per verdict;
//! each checks the class, the cause and the exit code in human and in JSON output.

use crate::support::certs::Certs;
use crate::support::no_payload::{assert_no_marker, MARKER};
use crate::support::peer::{Behaviour, Peer, Script};
use crate::support::{mllp, mllp_bin};
use mllp::tls::{ClientAuth, TlsAcceptor};
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

/// Runs `mllp probe ARGS` with names pinned by `hosts` (an MLLP_HOSTS_FILE), off the runtime so
/// the in-process peers keep serving.
async fn probe(args: &[&str], hosts: &Path) -> Run {
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    let hosts = hosts.to_path_buf();
    let output = tokio::task::spawn_blocking(move || {
        mllp()
            .arg("probe")
            .args(&args)
            .env("MLLP_HOSTS_FILE", hosts)
            .timeout(Duration::from_secs(30))
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let run = Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    };
    assert_no_marker("probe stderr", &run.stderr, MARKER);
    run
}

/// A scratch directory with a hosts file pinning `localhost` (and a failing name), and a
/// message file carrying the payload marker.
struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    fn new() -> Scratch {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("hosts"),
            "127.0.0.1 localhost engine.test\nfail broken.test\n",
        )
        .unwrap();
        let message = format!(
            "MSH|^~\\&|A|B|C|D|20240101000000||ADT^A01|PROBE42|D|2.5\r\nPID|1||1||{MARKER}^X\r\n"
        );
        std::fs::write(dir.path().join("adt.hl7"), message).unwrap();
        Scratch { dir }
    }
    fn hosts(&self) -> PathBuf {
        self.dir.path().join("hosts")
    }
    fn message(&self) -> String {
        self.dir.path().join("adt.hl7").display().to_string()
    }
}

/// Probes twice, human and JSON, and checks the verdict both ways. Returns the JSON report.
async fn expect(args: &[&str], hosts: &Path, class: &str, cause: Option<&str>, code: i32) -> Value {
    let human = probe(args, hosts).await;
    let headline = match cause {
        Some(cause) => format!("verdict: {class} ({cause})"),
        None => format!("verdict: {class}\n"),
    };
    assert!(
        human.stdout.contains(&headline),
        "want {headline:?}: {}",
        human.stdout
    );
    assert!(human.stdout.contains("hint: "), "{}", human.stdout);
    assert_eq!(human.code, code, "{}{}", human.stdout, human.stderr);

    let mut json_args = args.to_vec();
    json_args.push("--json");
    let run = probe(&json_args, hosts).await;
    assert_eq!(run.code, code, "{}{}", run.stdout, run.stderr);
    let report: Value = serde_json::from_str(run.stdout.trim()).expect(&run.stdout);
    assert_eq!(report["verdict"]["class"], class, "{report}");
    match cause {
        Some(cause) => assert_eq!(report["verdict"]["cause"], cause, "{report}"),
        None => assert!(report["verdict"]["cause"].is_null(), "{report}"),
    }
    assert!(report["verdict"]["hint"]
        .as_str()
        .is_some_and(|h| !h.is_empty()));
    assert!(report["phases"].as_array().is_some_and(|p| !p.is_empty()));
    report
}

fn phase<'a>(report: &'a Value, name: &str) -> &'a Value {
    // SPEC section 6 fixes the phase names.
    for p in report["phases"].as_array().into_iter().flatten() {
        let n = p["name"].as_str().unwrap_or_default();
        assert!(
            ["resolve", "connect", "tls", "send", "ack"].contains(&n),
            "phase name {n:?} is not SPEC's: {report}"
        );
    }
    report["phases"]
        .as_array()
        .and_then(|p| p.iter().find(|p| p["name"] == name))
        .unwrap_or_else(|| panic!("no {name} phase in {report}"))
}

fn acceptor(certs: &Certs, options: mllp::tls::ServerTlsOptions) -> TlsAcceptor {
    let _ = certs;
    options.acceptor(Duration::from_secs(5)).unwrap()
}

/// `mllp listen --port 0` as a child; killed on drop.
struct Listen {
    child: Child,
    port: u16,
}

impl Listen {
    fn start() -> Listen {
        let mut child = Command::new(mllp_bin())
            .args(["--log-format", "json", "listen", "--port", "0"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let first: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
        assert_eq!(first["event"], "listening", "{first}");
        let addr: std::net::SocketAddr = first["addr"].as_str().unwrap().parse().unwrap();
        // Keep draining stderr so the child never blocks on a full pipe.
        std::thread::spawn(move || lines.for_each(drop));
        Listen {
            child,
            port: addr.port(),
        }
    }
}

impl Drop for Listen {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn mllp_listen_answers_ok_with_and_without_a_message() {
    let s = Scratch::new();
    let listen = Listen::start();
    let target = format!("engine.test:{}", listen.port);
    let message = s.message();
    let report = expect(&[&target, "--message", &message], &s.hosts(), "ok", None, 0).await;
    assert_eq!(phase(&report, "ack")["ack_code"], "AA");
    assert_eq!(phase(&report, "ack")["control_id_matches"], true);
    assert_eq!(phase(&report, "send")["control_id"], "PROBE42");
    assert_eq!(phase(&report, "resolve")["addresses"][0], "127.0.0.1");

    let port = listen.port.to_string();
    let report = expect(
        &["--host", "127.0.0.1", "--port", &port],
        &s.hosts(),
        "ok",
        None,
        0,
    )
    .await;
    assert_eq!(phase(&report, "connect")["banner"]["silent"], true);
    assert!(report["verdict"]["hint"]
        .as_str()
        .unwrap()
        .contains("--send"));
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
async fn a_must_server_refuses_a_probe_without_a_client_certificate() {
    let (s, certs) = (Scratch::new(), Certs::generate());
    let ca = certs.ca.display().to_string();
    let peer = Peer::start_tls(
        Script::always(Behaviour::Ack("AA")),
        acceptor(&certs, certs.mtls_server_options(ClientAuth::Must)),
    )
    .await;
    let target = format!("localhost:{}", peer.port());
    let report = expect(
        &[&target, "--ca", &ca],
        &s.hosts(),
        "permanent",
        Some("tls-handshake"),
        5,
    )
    .await;
    assert_eq!(phase(&report, "tls")["client_certificate"], "required");
    assert!(report["verdict"]["hint"]
        .as_str()
        .unwrap()
        .contains("--cert"));
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
    let report = expect(&args, &s.hosts(), "permanent", Some("tls-handshake"), 5).await;
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
        let report = expect(
            &[&target, "--ca", &ca],
            &s.hosts(),
            "permanent",
            Some("tls-verify"),
            5,
        )
        .await;
        let verdict = report["verdict"].to_string();
        assert!(verdict.contains(says), "{says}: {verdict}");
        assert!(
            phase(&report, "tls")["peer_certificate"]["subject"].is_string(),
            "{report}"
        );
        if says == "other.example" {
            assert_eq!(phase(&report, "tls")["name_matched"], false);
            assert!(report["verdict"]["hint"]
                .as_str()
                .unwrap()
                .contains("--server-name"));
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn connection_failures_are_classified() {
    let s = Scratch::new();
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let target = format!("127.0.0.1:{closed}");
    expect(
        &[&target],
        &s.hosts(),
        "transient",
        Some("connection-refused"),
        4,
    )
    .await;

    let closing = Peer::start(Script::always(Behaviour::CloseAtOnce)).await;
    let target = format!("127.0.0.1:{}", closing.port());
    expect(&[&target], &s.hosts(), "transient", Some("peer-closed"), 4).await;

    let silent = Peer::start(Script::always(Behaviour::Stall)).await;
    let target = format!("127.0.0.1:{}", silent.port());
    let message = s.message();
    let args = [
        target.as_str(),
        "--message",
        &message,
        "--ack-timeout",
        "300ms",
    ];
    let report = expect(&args, &s.hosts(), "transient", Some("ack-timeout"), 3).await;
    assert_eq!(phase(&report, "send")["ok"], true);
    assert_eq!(phase(&report, "ack")["ok"], false);
}

#[tokio::test(flavor = "multi_thread")]
async fn names_that_do_not_resolve_fail_without_dns() {
    let s = Scratch::new();
    expect(
        &["nowhere.test"],
        &s.hosts(),
        "permanent",
        Some("dns-not-found"),
        5,
    )
    .await;
    expect(
        &["broken.test:7"],
        &s.hosts(),
        "transient",
        Some("dns-failed"),
        4,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn peers_that_are_not_mllp_are_recognised() {
    let (s, certs) = (Scratch::new(), Certs::generate());
    let message = s.message();
    let http = Peer::start(Script::always(Behaviour::Http)).await;
    let target = format!("127.0.0.1:{}", http.port());
    let report = expect(
        &[&target, "--message", &message],
        &s.hosts(),
        "permanent",
        Some("framing-fatal"),
        5,
    )
    .await;
    assert!(
        report["verdict"]["detail"]
            .as_str()
            .unwrap()
            .contains("HTTP"),
        "{report}"
    );

    let ssh = Peer::start(Script::always(Behaviour::SshBanner)).await;
    let target = format!("127.0.0.1:{}", ssh.port());
    let report = expect(
        &[&target],
        &s.hosts(),
        "permanent",
        Some("framing-fatal"),
        5,
    )
    .await;
    assert!(
        report["verdict"]["detail"]
            .as_str()
            .unwrap()
            .contains("SSH"),
        "{report}"
    );
    assert_eq!(phase(&report, "connect")["banner"]["peer"]["kind"], "ssh");
    assert_eq!(phase(&report, "connect")["banner"]["ok"], false);

    // A TLS server spoken to in plain TCP answers the frame with a TLS alert.
    let tls = Peer::start_tls(
        Script::always(Behaviour::Ack("AA")),
        acceptor(&certs, certs.server_options(&certs.server)),
    )
    .await;
    let target = format!("127.0.0.1:{}", tls.port());
    let report = expect(
        &[&target, "--message", &message],
        &s.hosts(),
        "permanent",
        Some("framing-fatal"),
        5,
    )
    .await;
    assert!(
        report["verdict"]["hint"]
            .as_str()
            .unwrap()
            .contains("--tls"),
        "{report}"
    );

    // A plain server spoken to in TLS: an HTTP answer to the ClientHello, or a hang-up.
    let target = format!("127.0.0.1:{}", http.port());
    let report = expect(
        &[&target, "--tls", "--insecure"],
        &s.hosts(),
        "permanent",
        Some("tls-handshake"),
        5,
    )
    .await;
    assert!(
        report["verdict"]["detail"]
            .as_str()
            .unwrap()
            .contains("HTTP"),
        "{report}"
    );
    assert!(report["verdict"]["hint"]
        .as_str()
        .unwrap()
        .contains("without --tls"));
    let listen = Listen::start();
    let target = format!("127.0.0.1:{}", listen.port);
    let report = expect(
        &[&target, "--tls", "--insecure"],
        &s.hosts(),
        "permanent",
        Some("tls-handshake"),
        5,
    )
    .await;
    assert!(report["verdict"]["hint"]
        .as_str()
        .unwrap()
        .contains("without --tls"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_negative_ack_is_ok_for_the_link_and_exits_1() {
    let s = Scratch::new();
    let peer = Peer::start(Script::always(Behaviour::Ack("AE"))).await;
    let target = format!("127.0.0.1:{}", peer.port());
    let message = s.message();
    let report = expect(&[&target, "--message", &message], &s.hosts(), "ok", None, 1).await;
    assert_eq!(report["verdict"]["ack_code"], "AE");
    assert_eq!(report["ok"], false);
}

#[tokio::test(flavor = "multi_thread")]
async fn repeated_probes_report_each_then_statistics() {
    let s = Scratch::new();
    let peer = Peer::start(Script::then(
        vec![Behaviour::Ack("AA"), Behaviour::CloseAtOnce],
        Behaviour::Ack("AA"),
    ))
    .await;
    let target = format!("127.0.0.1:{}", peer.port());
    let args = [
        &target,
        "--send",
        "--count",
        "3",
        "--interval",
        "10ms",
        "--banner-wait",
        "0s",
    ];
    let human = probe(&args, &s.hosts()).await;
    assert_eq!(human.code, 4, "{}", human.stdout);
    assert!(human.stdout.contains("1: ok AA"), "{}", human.stdout);
    assert!(human.stdout.contains("2: transient"), "{}", human.stdout);
    assert!(
        human.stdout.contains("3 probes, 2 ok, 1 failed"),
        "{}",
        human.stdout
    );
    assert!(human.stdout.contains("median"), "{}", human.stdout);

    let peer = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let target = format!("127.0.0.1:{}", peer.port());
    let args = [
        &target,
        "--send",
        "--count",
        "3",
        "--interval",
        "10ms",
        "--json",
    ];
    let run = probe(&args, &s.hosts()).await;
    assert_eq!(run.code, 0, "{}", run.stdout);
    let lines: Vec<Value> = run
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 4);
    assert!(lines[..3]
        .iter()
        .all(|l| l["type"] == "probe" && l["verdict"]["class"] == "ok"));
    let summary = &lines[3];
    assert_eq!(
        (summary["type"].as_str(), summary["probes"].as_u64()),
        (Some("summary"), Some(3))
    );
    assert_eq!(summary["failed"], 0);
    assert_eq!(summary["phases"]["ack"]["count"], 3);
    assert!(
        summary["phases"]["ack"]["p99"].as_f64().unwrap()
            >= summary["phases"]["ack"]["min"].as_f64().unwrap()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn ctrl_c_prints_the_statistics_so_far() {
    let s = Scratch::new();
    let peer = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let target = format!("127.0.0.1:{}", peer.port());
    let child = Command::new(mllp_bin())
        .args([
            "probe",
            &target,
            "--send",
            "--count",
            "1000",
            "--interval",
            "50ms",
        ])
        .env("MLLP_HOSTS_FILE", s.hosts())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    peer.wait_for(|r| r.payloads.len() >= 2).await;
    let interrupted = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(interrupted.success());
    let output = tokio::task::spawn_blocking(move || child.wait_with_output().unwrap())
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("1: ok AA"), "{stdout}");
    assert!(stdout.contains("0 failed (0.0% loss)"), "{stdout}");
    assert!(!stdout.contains("1000 probes"), "{stdout}");
    assert!(stdout.contains("median"), "{stdout}");
}
