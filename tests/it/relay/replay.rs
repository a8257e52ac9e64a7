//! `send --from-db`: a store's messages replayed in arrival order, each filter, the recorded
//! pace.

use crate::support::peer::{Behaviour, Peer, Script};
use crate::support::peer_wire::{control_id, message};
use crate::support::send_proc::finish;
use std::path::Path;

/// A `listen --sqlite`-shaped store: rows R1..R4 a second apart, two types.
fn store(dir: &Path) -> std::path::PathBuf {
    let file = dir.join("rx.db");
    let db = rusqlite::Connection::open(&file).unwrap();
    db.execute_batch(
        "CREATE TABLE messages (id INTEGER PRIMARY KEY, received_at TEXT NOT NULL,
         peer TEXT NOT NULL, msh3 TEXT, msh4 TEXT, control_id TEXT, msh7 TEXT,
         message_type TEXT, bytes INTEGER NOT NULL, payload BLOB NOT NULL, dedupe INTEGER)",
    )
    .unwrap();
    let rows = [
        ("R1", "ADT^A01", "2024-01-31T08:00:00.000000Z"),
        ("R2", "ADT^A08^ADT_A01", "2024-01-31T08:00:01.000000Z"),
        ("R3", "ORU^R01", "2024-01-31T08:00:02.000000Z"),
        ("R4", "ADT^A08", "2024-01-31T08:00:03.000000Z"),
    ];
    for (id, kind, at) in rows {
        let payload = message(id, "X");
        db.execute(
            "INSERT INTO messages (received_at, peer, control_id, message_type, bytes, payload)
             VALUES (?1, 'p', ?2, ?3, ?4, ?5)",
            rusqlite::params![at, id, kind, payload.len() as i64, payload],
        )
        .unwrap();
    }
    file
}

async fn replay(args: &[&str]) -> (Vec<String>, serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    let file = store(dir.path());
    let peer = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let mut send = tokio::process::Command::new(crate::support::mllp_bin());
    send.arg("send")
        .arg("--from-db")
        .arg(&file)
        .args(["--host", &peer.addr().to_string(), "--json"])
        .args(args);
    let run = finish(send, None).await;
    let got = peer
        .payloads()
        .iter()
        .map(|p| control_id(p).unwrap_or_default())
        .collect();
    (got, run.summary())
}

#[tokio::test]
async fn every_row_in_arrival_order_named_by_its_row() {
    let dir = tempfile::tempdir().unwrap();
    let file = store(dir.path());
    let peer = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let mut send = tokio::process::Command::new(crate::support::mllp_bin());
    send.arg("send").arg("--from-db").arg(&file).args([
        "--host",
        &peer.addr().to_string(),
        "--json",
    ]);
    let run = finish(send, None).await;
    let sources: Vec<_> = run
        .messages()
        .iter()
        .map(|m| m["source"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(sources, ["rx.db#1", "rx.db#2", "rx.db#3", "rx.db#4"]);
    let got: Vec<_> = peer
        .payloads()
        .iter()
        .map(|p| control_id(p).unwrap_or_default())
        .collect();
    assert_eq!(got, ["R1", "R2", "R3", "R4"]);
}

#[tokio::test]
async fn since_and_until_bound_the_arrival_time() {
    let (got, _) = replay(&[
        "--since",
        "2024-01-31T08:00:01Z",
        "--until",
        "2024-01-31T08:00:03Z",
    ])
    .await;
    assert_eq!(got, ["R2", "R3"]);
}

#[tokio::test]
async fn the_type_matches_by_leading_components() {
    let (got, _) = replay(&["--type", "ADT^A08"]).await;
    assert_eq!(got, ["R2", "R4"]);
}

#[tokio::test]
async fn a_control_id_picks_its_message() {
    let (got, _) = replay(&["--control-id", "R3"]).await;
    assert_eq!(got, ["R3"]);
}

#[tokio::test]
async fn the_original_pace_keeps_the_recorded_gaps_scaled_by_speed() {
    // Three seconds recorded, played four times faster: at least 750 ms.
    let (got, summary) = replay(&["--pace", "original", "--speed", "4"]).await;
    assert_eq!(got, ["R1", "R2", "R3", "R4"]);
    assert!(
        summary["elapsed_ms"].as_f64().unwrap() >= 700.0,
        "{summary}"
    );
    let (_, fast) = replay(&[]).await;
    assert_eq!(fast["accepted"], 4);
}

/// VmHWM (peak resident memory) of a running process in KiB.
fn peak_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[test]
fn a_large_store_replays_in_bounded_memory() {
    use std::io::BufRead;
    // 6000 rows of 16 KiB: 96 MiB of payload, far above the bound below.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("big.db");
    let mut db = rusqlite::Connection::open(&file).unwrap();
    db.execute_batch(
        "CREATE TABLE messages (id INTEGER PRIMARY KEY, received_at TEXT NOT NULL,
         peer TEXT NOT NULL, control_id TEXT, message_type TEXT, bytes INTEGER NOT NULL,
         payload BLOB NOT NULL)",
    )
    .unwrap();
    let filler = "Z".repeat(16 * 1024);
    let tx = db.transaction().unwrap();
    for i in 0..6000 {
        let id = format!("B{i}");
        let mut payload = message(&id, "X");
        payload.extend_from_slice(format!("NTE|1||{filler}\r").as_bytes());
        tx.execute(
            "INSERT INTO messages (received_at, peer, control_id, message_type, bytes, payload)
             VALUES ('2024-01-31T08:00:00Z', 'p', ?1, 'ADT^A01', ?2, ?3)",
            rusqlite::params![id, payload.len() as i64, payload],
        )
        .unwrap();
    }
    tx.commit().unwrap();
    drop(db);

    let mut child = std::process::Command::new(crate::support::mllp_bin())
        .args(["send", "--dry-run", "--from-db"])
        .arg(&file)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    // Read slowly: the unread rest of the listing (more than a pipe holds) keeps the process
    // alive at each reading.
    let mut peak = 0;
    for n in 1..=3000 {
        lines.next().expect("a listed message").unwrap();
        if n % 500 == 1 {
            peak = peak.max(peak_kib(pid));
        }
    }
    let listed = 3000 + lines.map_while(Result::ok).count();
    let status = child.wait().unwrap();
    assert!(status.success());
    assert_eq!(listed, 6001, "every row listed, then the summary");
    assert!(peak < 48 * 1024, "peak resident memory {peak} KiB");
}
