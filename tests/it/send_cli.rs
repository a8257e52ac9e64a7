//! Integration tests: `mllp send` as a child process against the scripted peer and `mllp
//! listen`: input shapes, every exit code from a real peer behaviour, the resend policy across
//! drops, `--json` records, `--failed-out` reruns, enhanced mode, Ctrl-C. No test finds the
//! payload marker on stderr.

use crate::support::listen_proc::ListenProc;
use crate::support::no_payload::{assert_no_marker, MARKER};
use crate::support::peer::{Behaviour, Peer, Script};
use crate::support::peer_wire::{control_id, frame, message};
use crate::support::{certs::Certs, mllp_bin};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Run {
    fn records(&self) -> Vec<Value> {
        self.stdout
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|_| panic!("not JSON: {l}")))
            .collect()
    }
    fn messages(&self) -> Vec<Value> {
        let mut records = self.records();
        let summary = records.pop().expect("a summary record");
        assert_eq!(summary["type"], "summary", "{}", self.stdout);
        records
    }
    fn summary(&self) -> Value {
        self.records().pop().expect("a summary record")
    }
}

/// Run `mllp send ARGS` (stdin from `stdin`), check stderr for the marker, return everything.
async fn send_with(args: &[String], stdin: Option<Vec<u8>>) -> Run {
    let mut cmd = tokio::process::Command::new(mllp_bin());
    cmd.arg("send")
        .args(args)
        .env("MLLP_TEST", "1")
        .env_remove("NO_COLOR")
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = cmd.spawn().unwrap();
    if let Some(bytes) = stdin {
        use tokio::io::AsyncWriteExt;
        let mut pipe = child.stdin.take().unwrap();
        pipe.write_all(&bytes).await.unwrap();
    }
    let out = tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
        .await
        .expect("send finished")
        .unwrap();
    let run = Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    assert_no_marker("send stderr", &run.stderr, MARKER);
    run
}

async fn send(args: &[String]) -> Run {
    send_with(args, None).await
}

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// `--host 127.0.0.1 --port PORT` plus quick reconnects.
fn to(port: u16, rest: &[&str]) -> Vec<String> {
    let mut v = args(&[
        "--host",
        "127.0.0.1",
        "--port",
        &port.to_string(),
        "--backoff-initial",
        "10ms",
        "--backoff-max",
        "50ms",
    ]);
    v.extend(args(rest));
    v
}

fn path(p: &Path) -> String {
    p.display().to_string()
}

/// `n` messages `{prefix}{i}` (1-based), each a CR-terminated ADT with the marker.
fn messages(prefix: &str, n: usize) -> Vec<u8> {
    (1..=n)
        .flat_map(|i| message(&format!("{prefix}{i}"), MARKER))
        .collect()
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, bytes).unwrap();
    p
}

fn ids(payloads: &[Vec<u8>]) -> Vec<String> {
    payloads.iter().filter_map(|p| control_id(p)).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn sends_every_input_shape_and_accounts_for_each() {
    let peer = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "one.hl7", &message("ONE", MARKER));
    write(d, "multi.hl7", &messages("MULTI", 3));
    let lf = String::from_utf8(message("LF1", MARKER))
        .unwrap()
        .replace('\r', "\n");
    write(d, "lf.hl7", lf.as_bytes());
    let framed: Vec<u8> = [
        frame(&message("FR1", MARKER)),
        frame(&message("FR2", MARKER)),
    ]
    .concat();
    write(d, "framed.mllp", &framed);
    let batch = [
        b"FHS|^~\\&|A\rBHS|^~\\&|A\r".to_vec(),
        messages("BATCH", 2),
        b"BTS|2\rFTS|1\r".to_vec(),
    ]
    .concat();
    write(d, "tree/batch.hl7", &batch);
    write(d, "tree/deeper/x.hl7", &message("DEEP", MARKER));

    let mut a = to(peer.port(), &["--json", "--recursive"]);
    a.extend([
        path(&d.join("*.hl7")),
        path(&d.join("framed.mllp")),
        path(&d.join("tree")),
        "-".into(),
    ]);
    let run = send_with(&a, Some(message("STDIN", MARKER))).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let got: Vec<String> = run
        .messages()
        .iter()
        .map(|r| r["control_id"].as_str().unwrap().to_string())
        .collect();
    let expected = [
        "LF1", "MULTI1", "MULTI2", "MULTI3", "ONE", "FR1", "FR2", "BATCH1", "BATCH2", "DEEP",
        "STDIN",
    ];
    assert_eq!(got, expected);
    assert_eq!(ids(&peer.payloads()), expected);
    // Segment ends normalised to CR, frames and envelopes removed.
    for p in peer.payloads() {
        assert!(!p.contains(&b'\n') && !p.contains(&0x0b) && !p.starts_with(b"FHS"));
    }
    let labels: Vec<String> = run
        .messages()
        .iter()
        .map(|r| r["source"].as_str().unwrap().to_string())
        .collect();
    assert!(labels[1].ends_with("multi.hl7#1") && labels[3].ends_with("multi.hl7#3"));
    assert_eq!(labels.last().unwrap(), "-#1");
    assert_eq!(run.summary()["messages"], 11);
    assert_eq!(run.summary()["accepted"], 11);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_non_hl7_file_is_refused_before_anything_is_sent() {
    let peer = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let dir = tempfile::tempdir().unwrap();
    let good = write(dir.path(), "good.hl7", &message("G1", MARKER));
    let bad = write(dir.path(), "notes.txt", b"hello\r\nMSH|not really\r\n");
    let run = send(&to(peer.port(), &[&path(&good), &path(&bad)])).await;
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("notes.txt line 1"), "{}", run.stderr);
    assert!(run.stderr.contains("nothing was sent"));
    assert_eq!(peer.connections(), 0);
    assert!(run.stdout.is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_nak_exits_1_and_json_records_carry_every_field() {
    let peer = Peer::start(Script::always(Behaviour::Ack("AE"))).await;
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "adt.hl7", &messages("N", 2));
    let run = send(&to(peer.port(), &["--json", "--print-ack", &path(&file)])).await;
    assert_eq!(run.code, 1, "{}", run.stderr);
    let records = run.messages();
    assert_eq!(records.len(), 2);
    let r = &records[0];
    assert_eq!(r["type"], "message");
    assert!(r["source"].as_str().unwrap().ends_with("adt.hl7#1"));
    assert_eq!(r["control_id"], "N1");
    assert_eq!(r["bytes"], message("N1", MARKER).len());
    assert_eq!(r["outcome"], "negative");
    assert_eq!(r["ack_code"], "AE");
    assert!(r["latency_ms"].as_f64().unwrap() >= 0.0);
    assert!(r.get("cause").is_some_and(Value::is_null));
    assert!(r["ack"].as_str().unwrap().contains("MSA|AE|N1"));
    let s = run.summary();
    for (field, want) in [
        ("messages", 2),
        ("accepted", 0),
        ("negative", 2),
        ("committed_only", 0),
        ("unknown_fate", 0),
        ("never_delivered", 0),
        ("refused", 0),
        ("exit_code", 1),
    ] {
        assert_eq!(s[field], want, "{field}");
    }
    assert_eq!(s["by_code"]["AE"], 2);
    assert!(s["elapsed_ms"].is_number() && s["messages_per_second"].is_number());
    assert!(s["reconnects"].is_number());
}

#[tokio::test(flavor = "multi_thread")]
async fn human_lines_show_code_and_the_summary_goes_to_stderr() {
    let peer = Peer::start(Script::always(Behaviour::Ack("AR"))).await;
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "adt.hl7", &message("H1", MARKER));
    let run = send(&to(peer.port(), &[&path(&file)])).await;
    assert_eq!(run.code, 1);
    let line = run.stdout.lines().next().unwrap();
    assert!(
        line.contains("adt.hl7#1") && line.contains("H1") && line.contains("AR"),
        "{line}"
    );
    assert!(run.stderr.contains("1 negative"), "{}", run.stderr);
    let quiet = send(&to(peer.port(), &["--quiet", &path(&file)])).await;
    assert!(quiet.stdout.is_empty());
    assert!(quiet.stderr.contains("sent 1 message in "));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_silent_peer_with_a_short_ack_timeout_exits_3() {
    let peer = Peer::start(Script::always(Behaviour::Stall)).await;
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "adt.hl7", &message("S1", MARKER));
    let run = send(&to(
        peer.port(),
        &["--json", "--ack-timeout", "200ms", &path(&file)],
    ))
    .await;
    assert_eq!(run.code, 3, "{}", run.stderr);
    let r = &run.messages()[0];
    assert_eq!(r["outcome"], "unknown-fate");
    assert_eq!(r["cause"], "ack-timeout");
    assert!(r["ack_code"].is_null() && r["latency_ms"].is_null());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_reset_mid_stream_leaves_orphans_of_unknown_fate() {
    let peer = Peer::start(Script::always(Behaviour::ResetAfter(2))).await;
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "adt.hl7", &messages("R", 10));
    let run = send(&to(peer.port(), &["--json", &path(&file)])).await;
    assert_eq!(run.code, 3, "{}", run.stderr);
    let s = run.summary();
    assert_eq!(s["messages"], 10);
    let accepted = s["accepted"].as_u64().unwrap();
    let unknown = s["unknown_fate"].as_u64().unwrap();
    assert!(accepted >= 2 && unknown >= 1);
    assert_eq!(
        accepted + unknown + s["never_delivered"].as_u64().unwrap(),
        10
    );
    for r in run.messages() {
        if r["outcome"] == "unknown-fate" {
            assert_eq!(r["cause"], "in-flight-orphan", "{r}");
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_refused_port_exits_4_after_the_retries() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "adt.hl7", &messages("P", 3));
    let run = send(&to(port, &["--json", "--max-retries", "1", &path(&file)])).await;
    assert_eq!(run.code, 4, "{}", run.stderr);
    let records = run.messages();
    assert_eq!(records.len(), 3);
    for r in &records {
        assert_eq!(r["outcome"], "never-delivered");
        assert_eq!(r["cause"], "connection-refused");
    }
    assert_eq!(run.summary()["never_delivered"], 3);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_untrusted_certificate_exits_5() {
    let certs = Certs::generate();
    let acceptor = certs
        .server_options(&certs.untrusted)
        .acceptor(Duration::from_secs(5))
        .unwrap();
    let peer = Peer::start_tls(Script::always(Behaviour::Ack("AA")), acceptor).await;
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
    let acceptor = certs
        .server_options(&certs.untrusted)
        .acceptor(Duration::from_secs(5))
        .unwrap();
    let peer = Peer::start_tls(Script::always(Behaviour::Ack("AA")), acceptor).await;
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

#[tokio::test(flavor = "multi_thread")]
async fn an_http_peer_exits_5() {
    let peer = Peer::start(Script::always(Behaviour::Http)).await;
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "adt.hl7", &message("W1", MARKER));
    let run = send(&to(peer.port(), &["--json", &path(&file)])).await;
    assert_eq!(run.code, 5, "{}", run.stderr);
    assert_eq!(run.summary()["gave_up"], "framing-fatal", "{}", run.stdout);
}

#[tokio::test(flavor = "multi_thread")]
async fn precedence_unknown_fate_over_negative_and_permanent_over_all() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "adt.hl7", &messages("X", 4));
    // First connection: one AA, then a reset (orphans); later ones answer AR.
    let script = Script::then(vec![Behaviour::ResetAfter(1)], Behaviour::Ack("AR"));
    let peer = Peer::start(script).await;
    let run = send(&to(peer.port(), &["--json", "--no-pipeline", &path(&file)])).await;
    let s = run.summary();
    assert!(s["unknown_fate"].as_u64().unwrap() >= 1, "{s}");
    assert!(s["negative"].as_u64().unwrap() >= 1, "{s}");
    assert_eq!(run.code, 3);

    let script = Script::then(vec![Behaviour::ResetAfter(1)], Behaviour::Http);
    let peer = Peer::start(script).await;
    let run = send(&to(peer.port(), &["--json", "--no-pipeline", &path(&file)])).await;
    assert!(run.summary()["unknown_fate"].as_u64().unwrap() >= 1);
    assert_eq!(run.code, 5, "{}", run.stderr);
}

#[tokio::test(flavor = "multi_thread")]
async fn control_id_mode_survives_drops_every_100_messages() {
    let peer = Peer::start(Script::always(Behaviour::DropEvery(100))).await;
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "adt.hl7", &messages("C", 350));
    let run = send(&to(
        peer.port(),
        &["--json", "--correlate", "control-id", &path(&file)],
    ))
    .await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let records = run.messages();
    assert_eq!(records.len(), 350);
    let mut seen = std::collections::HashSet::new();
    for r in &records {
        assert_eq!(r["outcome"], "accepted", "{r}");
        assert!(seen.insert(r["control_id"].as_str().unwrap().to_string()));
    }
    let received: std::collections::HashSet<String> = ids(&peer.payloads()).into_iter().collect();
    assert_eq!(received, seen);
    let s = run.summary();
    assert_eq!(s["accepted"], 350);
    assert!(s["reconnects"].as_u64().unwrap() >= 3, "{s}");
    assert_eq!(s["accounting_ok"], true);
}

#[tokio::test(flavor = "multi_thread")]
async fn fifo_mode_reports_orphans_and_resends_the_never_written() {
    let peer = Peer::start(Script::always(Behaviour::DropEvery(100))).await;
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "adt.hl7", &messages("F", 350));
    // One in flight, the rest of the window queued: a drop leaves never-written messages.
    let run = send(&to(
        peer.port(),
        &["--json", "--no-pipeline", "--window", "16", &path(&file)],
    ))
    .await;
    let s = run.summary();
    assert_eq!(s["messages"], 350);
    assert_eq!(s["accounting_ok"], true);
    assert!(s["resent"].as_u64().unwrap() >= 1, "{s}");
    let total: u64 = ["accepted", "unknown_fate", "never_delivered", "negative"]
        .iter()
        .map(|f| s[f].as_u64().unwrap())
        .sum();
    assert_eq!(total, 350);
    let records = run.messages();
    assert_eq!(records.len(), 350);
    for r in &records {
        match r["outcome"].as_str().unwrap() {
            "accepted" => {}
            "unknown-fate" => assert_eq!(r["cause"], "in-flight-orphan", "{r}"),
            other => panic!("unexpected outcome {other}: {r}"),
        }
    }
    assert!(records.iter().any(|r| r["attempts"].as_u64().unwrap() > 1));
    assert_eq!(run.code, if s["unknown_fate"] == 0 { 0 } else { 3 });
}

#[tokio::test(flavor = "multi_thread")]
async fn failed_out_keeps_the_failures_and_a_rerun_sends_only_those() {
    let peer = Peer::start(Script::always(Behaviour::ResetAfter(3))).await;
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "adt.hl7", &messages("Q", 6));
    let out = dir.path().join("failed");
    let run = send(&to(
        peer.port(),
        &[
            "--json",
            "--no-reconnect",
            "--failed-out",
            &path(&out),
            &path(&file),
        ],
    ))
    .await;
    let failed: Vec<String> = run
        .messages()
        .iter()
        .filter(|r| r["outcome"] != "accepted")
        .map(|r| r["control_id"].as_str().unwrap().to_string())
        .collect();
    assert!(!failed.is_empty() && failed.len() < 6, "{}", run.stdout);
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), failed.len());

    let good = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let rerun = send(&to(good.port(), &["--recursive", &path(&out)])).await;
    assert_eq!(rerun.code, 0, "{}", rerun.stderr);
    let mut resent = ids(&good.payloads());
    resent.sort();
    let mut failed = failed;
    failed.sort();
    assert_eq!(resent, failed);
}

const ENHANCED: &str =
    "MSH|^~\\&|A|B|C|D|20240101000000||ADT^A01|ENH1|P|2.5|||AL|AL\rPID|1||X||PAYLOADMARKER7Q3^P\r";

/// A peer that answers each message with `CA`, then (after a pause) `AA` for the same MSA-2.
async fn two_phase_peer() -> (u16, tokio::task::JoinHandle<()>) {
    use crate::support::peer_wire::{ack, Deframer};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let task = tokio::spawn(async move {
        let (mut tcp, _) = listener.accept().await.unwrap();
        let mut deframer = Deframer::default();
        let mut buf = [0u8; 4096];
        loop {
            let n = match tcp.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => n,
            };
            deframer.push(&buf[..n]);
            while let Some(payload) = deframer.next_frame() {
                tcp.write_all(&frame(&ack(&payload, "CA"))).await.unwrap();
                tokio::task::yield_now().await;
                tcp.write_all(&frame(&ack(&payload, "AA"))).await.unwrap();
            }
        }
    });
    (port, task)
}

#[tokio::test(flavor = "multi_thread")]
async fn enhanced_mode_settles_on_ca_then_aa() {
    let (port, _peer) = two_phase_peer().await;
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "enh.hl7", ENHANCED.as_bytes());
    let run = send(&to(
        port,
        &[
            "--json",
            "--print-ack",
            "--correlate",
            "control-id",
            &path(&file),
        ],
    ))
    .await;
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let r = &run.messages()[0];
    assert_eq!(r["outcome"], "accepted");
    assert_eq!(r["ack_code"], "AA");
    assert!(r["ack"].as_str().unwrap().contains("MSA|AA|ENH1"));
}

#[tokio::test(flavor = "multi_thread")]
async fn enhanced_mode_to_listen_without_an_application_ack_is_committed_only() {
    // `mllp listen` answers CA; with no application ACK following, the message is
    // committed-only (exit 3: "only its CA").
    let listen = ListenProc::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "enh.hl7", ENHANCED.as_bytes());
    let run = send(&to(
        listen.addr.port(),
        &[
            "--json",
            "--correlate",
            "control-id",
            "--app-ack-timeout",
            "300ms",
            &path(&file),
        ],
    ))
    .await;
    let r = &run.messages()[0];
    if r["outcome"] == "accepted" {
        // listen sends the application ACK: the full two-phase exchange.
        assert_eq!(r["ack_code"], "AA");
        assert_eq!(run.code, 0);
    } else {
        assert_eq!(r["outcome"], "committed-only", "{r}");
        assert_eq!(r["ack_code"], "CA");
        assert_eq!(run.code, 3);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn ctrl_c_drains_prints_the_summary_and_exits_130() {
    let peer = Peer::start(Script::always(Behaviour::Stall)).await;
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "adt.hl7", &messages("K", 3));
    let mut child = tokio::process::Command::new(mllp_bin())
        .arg("send")
        .args(to(
            peer.port(),
            &["--json", "--drain-timeout", "200ms", &path(&file)],
        ))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    peer.wait_for(|r| r.payloads.len() == 3).await;
    let pid = child.id().unwrap().to_string();
    assert!(std::process::Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .unwrap()
        .success());
    let (status, out) = tokio::time::timeout(Duration::from_secs(20), async {
        let status = child.wait().await.unwrap();
        let mut stdout = String::new();
        use tokio::io::AsyncReadExt;
        child
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut stdout)
            .await
            .unwrap();
        (status, stdout)
    })
    .await
    .unwrap();
    assert_eq!(status.code(), Some(130));
    let run = Run {
        code: 130,
        stdout: out,
        stderr: String::new(),
    };
    let s = run.summary();
    assert_eq!(s["messages"], 3);
    assert_eq!(s["unknown_fate"], 3);
    assert_eq!(s["exit_code"], 130);
    // The drain ran out: a SPEC cause, with the client's own reason beside it.
    for r in run.messages() {
        assert_eq!(r["outcome"], "unknown-fate", "{r}");
        assert_eq!(r["cause"], "ack-timeout", "{r}");
        assert_eq!(r["cause_detail"], "drain-timeout", "{r}");
    }
}

/// The SPEC's cause names; every `cause` a user sees is one of them (or a refusal reason).
const SPEC_CAUSES: &[&str] = &[
    "dns-not-found",
    "dns-failed",
    "permission-denied",
    "connection-refused",
    "connection-reset",
    "connect-timeout",
    "host-unreachable",
    "tls-verify",
    "tls-handshake",
    "framing-fatal",
    "dead-peer",
    "ack-timeout",
    "peer-closed",
    "in-flight-orphan",
    "fifo-unsafe",
    "connection-lost",
    "duplicate-control-id",
    "network-error",
    "idle-timeout",
    "max-connections",
    "shutdown",
];

#[tokio::test(flavor = "multi_thread")]
async fn a_missing_application_ack_is_committed_only_with_the_spec_cause_ack_timeout() {
    let peer = Peer::start(Script::always(Behaviour::Ack("CA"))).await;
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "enh.hl7", ENHANCED.as_bytes());
    let run = send(&to(
        peer.port(),
        &[
            "--json",
            "--correlate",
            "control-id",
            "--app-ack-timeout",
            "200ms",
            &path(&file),
        ],
    ))
    .await;
    let r = &run.messages()[0];
    assert_eq!(r["outcome"], "committed-only", "{r}");
    assert_eq!(r["cause"], "ack-timeout", "{r}");
    assert_eq!(r["cause_detail"], "app-ack-timeout", "{r}");
    assert_eq!(run.code, 3);
}

#[tokio::test(flavor = "multi_thread")]
async fn every_cause_in_records_is_a_spec_cause() {
    // Orphans after a reset, resent never-written messages, a refused reconnect: all causes
    // must come from the contract's list.
    let peer = Peer::start(Script::then(
        vec![Behaviour::ResetAfter(1)],
        Behaviour::CloseAtOnce,
    ))
    .await;
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "adt.hl7", &messages("C", 4));
    let run = send(&to(
        peer.port(),
        &["--json", "--max-retries", "1", &path(&file)],
    ))
    .await;
    let messages = run.messages();
    assert_eq!(messages.len(), 4, "{}", run.stdout);
    for r in &messages {
        assert!(r.as_object().unwrap().contains_key("cause_detail"), "{r}");
        if let Some(cause) = r["cause"].as_str() {
            assert!(SPEC_CAUSES.contains(&cause), "not a SPEC cause: {r}");
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tolerated_deviation_is_warned_about_without_verbose_flags() {
    // An enhanced-mode message on a FIFO client: the first reply settles it, with a warning.
    let peer = Peer::start(Script::always(Behaviour::Ack("CA"))).await;
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "enh.hl7", ENHANCED.as_bytes());
    let run = send(&to(peer.port(), &[&path(&file)])).await;
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("MLLP_ACK_TWO_PHASE_UNAVAILABLE"),
        "no warning: {}",
        run.stderr
    );
    let quiet = send(&to(peer.port(), &["--quiet", &path(&file)])).await;
    assert!(!quiet.stderr.contains("MLLP_ACK_TWO_PHASE_UNAVAILABLE"));
}
