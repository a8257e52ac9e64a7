//! `relay --mirror`: every message also goes to a shadow engine, whose answer never reaches
//! or delays the downstream peer; the two answers compared, each difference named by its
//! fields, every copy counted in one outcome.

use super::proc::RelayProc;
use crate::support::listen_proc::ListenProc;
use crate::support::mllp_client::{adt, MllpClient};
use crate::support::no_payload::{assert_no_marker, MARKER};
use crate::support::peer::{Behaviour, Peer, Script};
use crate::support::peer_wire::{ack, control_id, frame, Deframer};
use serde_json::Value;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::AsyncWriteExt;

/// A relay to `upstream` mirroring to `shadow`, with `more` flags.
fn mirrored(upstream: SocketAddr, shadow: SocketAddr, more: &[&str]) -> RelayProc {
    let shadow = shadow.to_string();
    RelayProc::start(
        &upstream.to_string(),
        &[&["--mirror", &shadow], more].concat(),
    )
}

/// A shadow that answers each message with what `answer` makes of it.
pub(super) async fn shadow(answer: fn(&[u8]) -> Vec<u8>) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut deframer = Deframer::canonical();
                while let Some(message) = deframer.read_frame(&mut socket).await {
                    if socket.write_all(&frame(&answer(&message))).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    addr
}

/// The shadow's answers: another engine's header (its own time, control ID and, for `M5`,
/// sending application), and a planted difference for `M2` to `M4`.
fn planted(message: &[u8]) -> Vec<u8> {
    let id = control_id(message).unwrap_or_default();
    let app = if id == "M5" { "SHADOW" } else { "PEER" };
    let msa = match id.as_str() {
        "M2" => format!("MSA|AE|{id}"),
        "M3" => format!("MSA|AA|{id}|another text"),
        _ => format!("MSA|AA|{id}"),
    };
    let err = if id == "M4" {
        "ERR|||207^Application error^HL70357|E\r"
    } else {
        ""
    };
    format!("MSH|^~\\&|{app}|TEST|MLLP|TEST|20991231235959||ACK|S-{id}|P|2.5\r{msa}\r{err}")
        .into_bytes()
}

/// Send `ids` one by one; each answer must be the upstream's `AA`, byte for byte.
async fn send_all(relay: &RelayProc, ids: &[&str]) {
    let mut client = MllpClient::connect(relay.addr).await;
    for id in ids {
        let message = adt(id.as_bytes(), "");
        client.send(&message).await;
        let answer = client.ack().await.expect("the upstream's answer");
        assert_eq!(
            answer.payload,
            ack(&message, "AA"),
            "{id}: the upstream's answer"
        );
    }
}

/// Events until one matches `pred` (every event swept for the payload marker). Blocks its
/// thread: the tests run on several, so the in-process shadow answers meanwhile.
fn until(relay: &RelayProc, pred: impl Fn(&Value) -> bool) -> Vec<Value> {
    // Events come every second: the wait is for the whole search, not for each event.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let mut seen = Vec::new();
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        let event = relay
            .events
            .recv_timeout(left)
            .unwrap_or_else(|_| panic!("no matching event; seen: {seen:?}"));
        assert_no_marker("relay event", &event.to_string(), MARKER);
        let done = pred(&event);
        seen.push(event);
        if done {
            return seen;
        }
    }
}

fn mirror_stats(relay: &RelayProc, done: impl Fn(&Value) -> bool) -> Value {
    until(relay, |e| e["event"] == "relay_stats" && done(&e["mirror"]))
        .pop()
        .unwrap()["mirror"]
        .clone()
}

fn diffs(events: &[Value]) -> Vec<(String, Vec<String>)> {
    events
        .iter()
        .filter(|e| e["event"] == "mirror_diff")
        .map(|e| {
            assert_eq!(e["message_type"], "ADT^A01", "{e}");
            let paths = e["paths"].as_array().unwrap();
            let paths = paths.iter().map(|p| p.as_str().unwrap().to_string());
            (
                e["control_id"].as_str().unwrap().to_string(),
                paths.collect(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn planted_differences_are_found_by_their_fields_and_nothing_else() {
    let upstream = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let shadow = shadow(planted).await;
    let relay = mirrored(upstream.addr(), shadow, &[]);
    send_all(&relay, &["M1", "M2", "M3", "M4", "M5"]).await;
    let mut events = until(&relay, |e| {
        e["event"] == "relay_stats" && e["mirror"]["same"] == 2 && e["mirror"]["different"] == 3
    });
    let stats = events.last().unwrap().clone();
    events.extend(relay.terminate());
    let mut found = diffs(&events);
    found.sort();
    let want = |id: &str, paths: &[&str]| {
        (
            id.to_string(),
            paths.iter().map(|p| p.to_string()).collect(),
        )
    };
    assert_eq!(
        found,
        [
            want("M2", &["MSA-1"]),
            want("M3", &["MSA-3"]),
            want("M4", &["ERR-3", "ERR-4"]),
        ]
    );
    let m = &stats["mirror"];
    assert_eq!(
        (
            m["shadow_unanswered"].as_u64(),
            m["shadow_skipped"].as_u64()
        ),
        (Some(0), Some(0)),
        "{m}"
    );
    assert_eq!(m["state"], "CONNECTED", "{m}");
    let summary = events
        .iter()
        .find(|e| e["event"] == "mirror_summary")
        .expect("a summary at the stop");
    assert_eq!(
        (summary["same"].as_u64(), summary["different"].as_u64()),
        (Some(2), Some(3)),
        "{summary}"
    );
    assert_eq!(upstream.payloads().len(), 5);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_whole_ack_is_compared_but_its_time_its_id_and_the_ignored_paths() {
    let upstream = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let shadow = shadow(planted).await;
    let relay = mirrored(
        upstream.addr(),
        shadow,
        &["--mirror-compare", "ack", "--ignore", "ERR"],
    );
    send_all(&relay, &["M1", "M3", "M4", "M5"]).await;
    let events = until(&relay, |e| {
        e["event"] == "relay_stats"
            && e["mirror"]["same"].as_u64().unwrap_or(0)
                + e["mirror"]["different"].as_u64().unwrap_or(0)
                == 4
    });
    let mut found = diffs(&events);
    found.sort();
    let want = |id: &str, paths: &[&str]| {
        (
            id.to_string(),
            paths.iter().map(|p| p.to_string()).collect(),
        )
    };
    assert_eq!(
        found,
        [want("M3", &["MSA-3"]), want("M5", &["MSH-3"])],
        "ERR left out, M1 and M4 the same"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shadow_that_is_down_changes_no_answer_and_its_copies_are_counted() {
    let upstream = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let down = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let relay = mirrored(
        upstream.addr(),
        down,
        &["--backoff-max", "200ms", "--drain-timeout", "500ms"],
    );
    let ids: Vec<String> = (0..20).map(|i| format!("D{i}")).collect();
    send_all(&relay, &ids.iter().map(String::as_str).collect::<Vec<_>>()).await;
    let mut events = until(&relay, |e| {
        e["event"] == "relay_stats" && e["mirror"]["queued"] == 20
    });
    let m = events.last().unwrap()["mirror"].clone();
    assert_eq!(m["same"], 0, "{m}");
    assert_ne!(m["state"], "CONNECTED", "{m}");
    events.extend(relay.terminate());
    let summary = events
        .iter()
        .find(|e| e["event"] == "mirror_summary")
        .expect("a summary");
    assert_eq!(
        summary["shadow_skipped"], 20,
        "never written to the shadow: {summary}"
    );
    assert!(
        events.iter().any(|e| e["event"] == "mirror_reconnecting"),
        "the shadow's link says it reconnects"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_shadow_changes_no_answer_and_a_full_mirror_queue_skips_copies() {
    for behaviour in [Behaviour::NeverRead, Behaviour::Stall] {
        let upstream = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
        let shadow = Peer::start(Script::always(behaviour)).await;
        let relay = mirrored(
            upstream.addr(),
            shadow.addr(),
            &["--mirror-queue", "3", "--drain-timeout", "300ms"],
        );
        let ids: Vec<String> = (0..10).map(|i| format!("S{i}")).collect();
        send_all(&relay, &ids.iter().map(String::as_str).collect::<Vec<_>>()).await;
        let m = mirror_stats(&relay, |m| m["queued"] == 3);
        assert_eq!(m["shadow_skipped"], 7, "{behaviour:?}: {m}");
        let events = relay.terminate();
        let summary = events
            .iter()
            .find(|e| e["event"] == "mirror_summary")
            .expect("a summary");
        let n = |k: &str| summary[k].as_u64().unwrap();
        assert_eq!(n("same") + n("different"), 0, "{summary}");
        assert_eq!(
            n("shadow_unanswered") + n("shadow_skipped"),
            10,
            "each copy in one outcome: {summary}"
        );
        if behaviour == Behaviour::Stall {
            assert_eq!(
                n("shadow_unanswered"),
                3,
                "written, never answered: {summary}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_shadow_delays_no_answer_and_is_compared_when_it_answers() {
    let upstream = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let slow = ListenProc::start(&["--ack-delay", "1500ms"]);
    let relay = mirrored(upstream.addr(), slow.addr, &[]);
    let mut client = MllpClient::connect(relay.addr).await;
    for id in ["W1", "W2", "W3"] {
        let message = adt(id.as_bytes(), "");
        client.send(&message).await;
        // Well inside the shadow's delay: the upstream's answer does not wait for it.
        let answer = client.ack_within(Duration::from_millis(1000)).await;
        let answer = answer
            .expect("answered before the shadow")
            .expect("an answer");
        assert_eq!(answer.payload, ack(&message, "AA"));
    }
    let m = mirror_stats(&relay, |m| {
        m["same"].as_u64().unwrap_or(0) + m["different"].as_u64().unwrap_or(0) == 3
    });
    assert_eq!(m["shadow_unanswered"], 0, "{m}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copies_past_half_the_byte_budget_are_skipped_and_the_downstream_keeps_reading() {
    let upstream = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let shadow = Peer::start(Script::always(Behaviour::NeverRead)).await;
    let relay = mirrored(
        upstream.addr(),
        shadow.addr(),
        &["--max-buffered", "1MiB", "--drain-timeout", "300ms"],
    );
    // 100 KiB each: half the budget takes four copies (with their book-keeping), no more.
    let filler = "X".repeat(100 * 1024);
    let mut client = MllpClient::connect(relay.addr).await;
    for i in 0..30 {
        let mut message = adt(format!("B{i}").as_bytes(), "");
        message.extend_from_slice(format!("NTE|1||{filler}\r").as_bytes());
        client.send(&message).await;
        let answer = client.ack().await.expect("the upstream's answer");
        assert_eq!(answer.payload, ack(&message, "AA"));
    }
    let m = mirror_stats(&relay, |m| {
        m["shadow_skipped"].as_u64().unwrap_or(0) + m["queued"].as_u64().unwrap_or(0) == 30
    });
    let queued = m["queued"].as_u64().unwrap();
    assert!(
        (1..=5).contains(&queued),
        "copies held within half the budget: {m}"
    );
}

#[test]
fn ignore_without_the_whole_ack_compared_is_a_usage_error() {
    let out = std::process::Command::new(crate::support::mllp_bin())
        .args([
            "relay",
            "--listen",
            "0",
            "--to",
            "127.0.0.1:9",
            "--mirror",
            "127.0.0.1:9",
        ])
        .args(["--ignore", "MSH-3"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--mirror-compare ack"), "{stderr}");
    let out = std::process::Command::new(crate::support::mllp_bin())
        .args([
            "relay",
            "--listen",
            "0",
            "--to",
            "127.0.0.1:9",
            "--mirror-queue",
            "5",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "--mirror-queue needs --mirror");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_queue_mode_each_row_is_copied_once_settled_and_compared() {
    let dir = tempfile::tempdir().unwrap();
    let queue = dir.path().join("q.db");
    let upstream = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let shadow = shadow(planted).await;
    let relay = mirrored(
        upstream.addr(),
        shadow,
        &["--queue", queue.to_str().unwrap()],
    );
    let mut client = MllpClient::connect(relay.addr).await;
    for id in ["M1", "M2", "M3"] {
        client.send(&adt(id.as_bytes(), "")).await;
        assert_eq!(client.ack().await.expect("the queue's answer").code, "AA");
    }
    let events = until(&relay, |e| {
        e["event"] == "relay_stats" && e["mirror"]["same"] == 1 && e["mirror"]["different"] == 2
    });
    let mut found = diffs(&events);
    found.sort();
    assert_eq!(
        found,
        [
            ("M2".to_string(), vec!["MSA-1".to_string()]),
            ("M3".to_string(), vec!["MSA-3".to_string()])
        ]
    );
    assert_eq!(upstream.payloads().len(), 3);
}

/// control_id, ack_code, mirror_ack_code, mirror_ack, mirror_outcome.
type RecordedRow = (
    String,
    String,
    Option<String>,
    Option<Vec<u8>>,
    Option<String>,
);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_record_keeps_both_answers_and_an_older_file_gains_the_columns() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("trace.db");
    // A record made before the mirror columns.
    rusqlite::Connection::open(&record)
        .unwrap()
        .execute_batch(
            "CREATE TABLE queue (id INTEGER PRIMARY KEY, received_at TEXT NOT NULL,
                peer TEXT NOT NULL, msh3 TEXT, msh4 TEXT, control_id TEXT, msh7 TEXT,
                message_type TEXT, bytes INTEGER NOT NULL, payload BLOB NOT NULL,
                status TEXT NOT NULL, ack_code TEXT, ack BLOB,
                attempts INTEGER NOT NULL DEFAULT 0, forwarded_at TEXT, settled_at TEXT);",
        )
        .unwrap();
    let upstream = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let shadow = shadow(planted).await;
    let relay = mirrored(
        upstream.addr(),
        shadow,
        &["--record", record.to_str().unwrap(), "--mirror-queue", "2"],
    );
    send_all(&relay, &["M1", "M2"]).await;
    until(&relay, |e| {
        e["event"] == "relay_stats" && e["mirror"]["queued"] == 0 && e["mirror"]["different"] == 1
    });
    relay.terminate();
    let db = rusqlite::Connection::open(&record).unwrap();
    let rows: Vec<RecordedRow> = db
        .prepare("SELECT control_id, ack_code, mirror_ack_code, mirror_ack, mirror_outcome FROM queue ORDER BY id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let message = |id: &str| adt(id.as_bytes(), "");
    assert_eq!(
        rows,
        [
            (
                "M1".into(),
                "AA".into(),
                Some("AA".into()),
                Some(planted(&message("M1"))),
                Some("same".into())
            ),
            (
                "M2".into(),
                "AA".into(),
                Some("AE".into()),
                Some(planted(&message("M2"))),
                Some("different".into())
            ),
        ]
    );
}

/// An engine's answer with the payload marker in MSA-3 and ERR-8, each engine its own wording.
fn marked(engine: &'static str) -> fn(&[u8]) -> Vec<u8> {
    fn answer(message: &[u8], engine: &str) -> Vec<u8> {
        let id = control_id(message).unwrap_or_default();
        format!(
            "MSH|^~\\&|{engine}|TEST|MLLP|TEST|20991231235959||ACK|{engine}-{id}|P|2.5\r\
             MSA|AA|{id}|{engine} kept {MARKER}\r\
             ERR|||0^Message accepted^HL70357|I||||{engine} saw {MARKER}\r"
        )
        .into_bytes()
    }
    match engine {
        "OLD" => |m| answer(m, "OLD"),
        _ => |m| answer(m, "NEW"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn differing_answers_with_text_show_no_payload_byte_in_any_event() {
    let upstream = shadow(marked("OLD")).await;
    let new = shadow(marked("NEW")).await;
    let relay = mirrored(upstream, new, &[]);
    let mut client = MllpClient::connect(relay.addr).await;
    for id in ["X1", "X2"] {
        let message = format!(
            "MSH|^~\\&|A|B|C|D|20240101000000||ADT^A01|{id}|P|2.5\rPID|1||{MARKER}||{MARKER}^PAT\r"
        );
        client.send(message.as_bytes()).await;
        client.ack().await.expect("the upstream's answer");
    }
    // Every event is swept for the marker as it is read: the differences, the counts.
    let mut events = until(&relay, |e| {
        e["event"] == "relay_stats" && e["mirror"]["different"] == 2
    });
    events.extend(relay.terminate());
    for event in &events {
        assert_no_marker("relay event", &event.to_string(), MARKER);
    }
    let found = diffs(&events);
    assert_eq!(found.len(), 2, "{events:?}");
    assert!(
        found
            .iter()
            .all(|(_, paths)| paths.contains(&"MSA-3".to_string())),
        "{found:?}"
    );
    let summary = events
        .iter()
        .find(|e| e["event"] == "mirror_summary")
        .expect("a summary at the stop");
    assert_eq!(summary["different"], 2, "{summary}");
}
