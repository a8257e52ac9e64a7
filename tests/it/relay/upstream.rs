//! An upstream that misbehaves: the link reports each failure with its class and hint on one
//! line, backs off within `--backoff-max` (5 s by default) and reconnects, whatever the class;
//! pass-through says nothing is committed.

use super::proc::RelayProc;
use crate::support::certs::Certs;
use crate::support::listen_proc::ListenProc;
use crate::support::mllp_client::{adt, MllpClient};
use crate::support::peer::{Behaviour, Peer, Script};
use crate::support::ports::closed_port;
use serde_json::Value;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn s(p: &std::path::Path) -> &str {
    p.to_str().unwrap()
}

/// The next event `pred` accepts, within a few seconds.
fn next_event(relay: &RelayProc, pred: impl Fn(&Value) -> bool) -> Value {
    relay.events_until(pred).pop().expect("the event accepted")
}

#[tokio::test]
async fn a_permanent_failure_upstream_is_reported_and_the_link_comes_back() {
    // The upstream serves a certificate nobody trusts: a permanent cause, until it is fixed.
    let certs = Certs::generate();
    let mut upstream = ListenProc::start(&[
        "--tls-cert",
        s(&certs.untrusted.cert),
        "--tls-key",
        s(&certs.untrusted.key),
    ]);
    let port = upstream.addr.port();
    let relay = RelayProc::start(
        &upstream.addr.to_string(),
        &[
            "--ca",
            s(&certs.ca),
            "--backoff-initial",
            "50ms",
            "--backoff-max",
            "200ms",
        ],
    );
    let failed = next_event(&relay, |e| e["class"] == "permanent");
    assert_eq!(failed["event"], "upstream_reconnecting", "{failed}");
    assert_eq!(failed["cause"], "tls-verify", "{failed}");
    assert!(
        failed["hint"].as_str().is_some_and(|h| h.contains("--ca")),
        "{failed}"
    );
    // Fixed: the same port now serves a certificate the relay trusts.
    upstream.kill();
    let fixed = ListenProc::start_at(
        port,
        &[
            "--tls-cert",
            s(&certs.server.cert),
            "--tls-key",
            s(&certs.server.key),
        ],
    );
    next_event(&relay, |e| {
        e["event"] == "upstream_state" && e["to"] == "CONNECTED"
    });
    let mut client = MllpClient::connect(relay.addr).await;
    for id in ["P1", "P2"] {
        client.send(&adt(id.as_bytes(), "")).await;
        assert_eq!(client.ack().await.expect("an answer").code, "AA", "{id}");
    }
    drop(fixed);
}

/// Each message on its own downstream connection, answered `code`.
async fn each_answered(relay: &RelayProc, ids: &[&str], code: &str) {
    for id in ids {
        let mut client = MllpClient::connect(relay.addr).await;
        client.send(&adt(id.as_bytes(), "")).await;
        assert_eq!(client.ack().await.expect("an answer").code, code, "{id}");
    }
}

#[tokio::test]
async fn a_stray_ack_upstream_affects_no_other_message() {
    // Each answer is followed by one naming no message in flight.
    let peer = Peer::start(Script::always(Behaviour::AckThenStray("AA"))).await;
    let relay = RelayProc::start(
        &peer.addr().to_string(),
        &["--backoff-initial", "20ms", "--backoff-max", "100ms"],
    );
    each_answered(&relay, &["S1", "S2", "S3", "S4"], "AA").await;
    let stats = relay.terminate();
    let stats = stats.iter().find(|e| e["event"] == "stats").expect("stats");
    assert_eq!(stats["accepted_upstream"], 4, "{stats}");
}

#[tokio::test]
async fn a_queue_row_written_once_counts_one_attempt_through_a_permanent_failure() {
    let dir = tempfile::tempdir().unwrap();
    let queue = dir.path().join("q.db");
    let certs = Certs::generate();
    let mut upstream = ListenProc::start(&[
        "--tls-cert",
        s(&certs.untrusted.cert),
        "--tls-key",
        s(&certs.untrusted.key),
    ]);
    let port = upstream.addr.port();
    let relay = RelayProc::start(
        &upstream.addr.to_string(),
        &[
            "--queue",
            s(&queue),
            "--ca",
            s(&certs.ca),
            "--backoff-max",
            "200ms",
        ],
    );
    let mut client = MllpClient::connect(relay.addr).await;
    for id in ["Q1", "Q2", "Q3"] {
        client.send(&adt(id.as_bytes(), "")).await;
        assert_eq!(client.ack().await.expect("an answer").code, "AA");
    }
    next_event(&relay, |e| e["class"] == "permanent");
    // A while of failing handshakes: no row is written meanwhile.
    tokio::time::sleep(Duration::from_secs(1)).await;
    upstream.kill();
    let fixed = ListenProc::start_at(
        port,
        &[
            "--tls-cert",
            s(&certs.server.cert),
            "--tls-key",
            s(&certs.server.key),
        ],
    );
    let db = rusqlite::Connection::open(&queue).unwrap();
    let rows = || -> Vec<(String, String, u32)> {
        db.prepare("SELECT control_id, status, attempts FROM queue ORDER BY id")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    while rows().iter().any(|(_, status, _)| status != "accepted") && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let rows = rows();
    let want: Vec<(String, String, u32)> = ["Q1", "Q2", "Q3"]
        .iter()
        .map(|id| (id.to_string(), "accepted".to_string(), 1))
        .collect();
    assert_eq!(rows, want, "each row written once, one attempt");
    drop(fixed);
}

#[tokio::test]
async fn reconnect_delays_are_capped_at_five_seconds_by_default() {
    let port = closed_port();
    let relay = RelayProc::start(
        &format!("127.0.0.1:{port}"),
        &["--backoff-initial", "4s", "--backoff-jitter", "0.2"],
    );
    // Uncapped, the second delay would be 8 s give or take a fifth.
    let second = next_event(&relay, |e| {
        e["event"] == "upstream_reconnecting" && e["attempt"] == 2
    });
    let delay = second["delay_ms"].as_u64().unwrap();
    assert!(delay <= 5000, "{second}");
}

#[test]
fn each_failed_reconnect_is_one_line() {
    let port = closed_port();
    let mut child = Command::new(crate::support::mllp_bin())
        .args([
            "relay",
            "--listen",
            "0",
            "--to",
            &format!("127.0.0.1:{port}"),
        ])
        .args(["--backoff-initial", "20ms", "--backoff-max", "50ms"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let _ = child.kill();
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let upstream: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("upstream "))
        .collect();
    assert!(upstream.len() >= 5, "{stderr}");
    for (n, line) in upstream.iter().enumerate() {
        let attempt = format!("; reconnecting: attempt {} in ", n + 1);
        assert!(
            line.contains("connection-refused (transient): ") && line.contains(&attempt),
            "line {n}: {line}\n{stderr}"
        );
    }
}

#[tokio::test]
async fn pass_through_says_nothing_is_committed() {
    let peer = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let relay = RelayProc::start(&peer.addr().to_string(), &[]);
    let mut client = MllpClient::connect(relay.addr).await;
    client.send(&adt(b"W1", "")).await;
    assert_eq!(client.ack().await.expect("an answer").code, "AA");
    drop(client);
    let message = next_event(&relay, |e| e["event"] == "message");
    assert!(message["upstream_ms"].as_f64().is_some(), "{message}");
    let events = relay.terminate();
    let stats = events
        .iter()
        .find(|e| e["event"] == "stats")
        .expect("the stats");
    assert_eq!(stats["accepted_upstream"], 1, "{stats}");
    for event in events.iter().chain([&message]) {
        assert!(!event.to_string().contains("commit"), "{event}");
    }
}

/// An upstream whose answers name another control ID fails permanently: the message written
/// there ends at once with unknown fate (the downstream connection ends unanswered, with that
/// cause), never rewritten for ever, and the stats count it once.
#[tokio::test]
async fn an_upstream_naming_other_control_ids_ends_the_message_unknown_not_rewritten() {
    let peer = Peer::start(Script::always(Behaviour::WrongId("AA"))).await;
    let relay = RelayProc::start(
        &peer.addr().to_string(),
        &[
            "--backoff-initial",
            "20ms",
            "--backoff-max",
            "100ms",
            "--ack-timeout",
            "3s",
        ],
    );
    let mut client = MllpClient::connect(relay.addr).await;
    client.send(&adt(b"W1", "")).await;
    let answer = client.ack_within(Duration::from_secs(10)).await;
    assert!(matches!(answer, Ok(None)), "no answer, closed");
    let closed = next_event(&relay, |e| e["event"] == "connection_closed");
    assert_eq!(closed["cause"], "ack-control-id-mismatch", "{closed}");
    // Written once or twice (the first connection's verdict comes after a short grace), never
    // again after the permanent failure.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        peer.payloads().len() <= 2,
        "{} writes",
        peer.payloads().len()
    );
    let events = relay.terminate();
    let stats = events
        .iter()
        .find(|e| e["event"] == "stats")
        .expect("stats");
    assert_eq!(stats["messages"], 1, "{stats}");
    assert_eq!(stats["unanswered"], 1, "{stats}");
    assert_eq!(
        stats["failed_upstream"], 0,
        "counted once, as unanswered: {stats}"
    );
}

/// An upstream mixing AA, AE, AR, silence, closes and answers naming other control IDs: each
/// message the relay received is counted in exactly one fate of its stats.
#[tokio::test]
async fn every_message_received_is_counted_in_one_fate() {
    use crate::support::peer::Step;
    let script = Script::then(
        vec![
            Behaviour::Steps(&[Step::Ack("AA"), Step::Ack("AE"), Step::Silent, Step::Close]),
            Behaviour::WrongId("AA"),
            Behaviour::Steps(&[Step::Ack("AR"), Step::Close]),
        ],
        Behaviour::Ack("AA"),
    );
    let peer = Peer::start(script).await;
    let relay = RelayProc::start(
        &peer.addr().to_string(),
        &[
            "--backoff-initial",
            "20ms",
            "--backoff-max",
            "100ms",
            "--ack-timeout",
            "1s",
        ],
    );
    let sent = 9;
    let mut answered = 0;
    for i in 0..sent {
        let mut client = MllpClient::connect(relay.addr).await;
        client.send(&adt(format!("M{i}").as_bytes(), "")).await;
        if let Ok(Some(_)) = client.ack_within(Duration::from_secs(10)).await {
            answered += 1;
        }
    }
    let events = relay.terminate();
    let stats = events
        .iter()
        .find(|e| e["event"] == "stats")
        .expect("stats");
    let n = |key: &str| stats[key].as_u64().unwrap_or(0);
    assert_eq!(n("messages"), sent, "{stats}");
    let fates = [
        "accepted_upstream",
        "rejected_upstream",
        "failed_upstream",
        "refused",
        "unanswered",
    ];
    assert_eq!(fates.iter().map(|k| n(k)).sum::<u64>(), sent, "{stats}");
    assert_eq!(n("unanswered"), sent - answered, "{stats}");
    assert!(
        n("unanswered") >= 2 && n("accepted_upstream") >= 4,
        "{stats}"
    );
}
