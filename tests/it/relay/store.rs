//! The relay's SQLite file under what happens to files: the queue deleted or moved under a
//! running relay, rows it cannot read, a settle the database refuses, a record on a full disk,
//! a symbolic link at the path, and the queue depth as the table holds it.

use super::proc::RelayProc;
use crate::support::listen_proc::{is, ListenProc};
use crate::support::mllp_client::{adt, MllpClient};
use crate::support::ports::closed_port;
use crate::support::store::Tmpfs;
use serde_json::Value;
use std::path::Path;
use std::time::{Duration, Instant};

/// A loopback port nothing listens on (it was free a moment ago).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Control IDs of an upstream `listen --sqlite` file, in arrival order.
fn stored(rx: &Path) -> Vec<String> {
    let Ok(db) = rusqlite::Connection::open(rx) else {
        return Vec::new();
    };
    let Ok(mut q) = db.prepare("SELECT control_id FROM messages ORDER BY id") else {
        return Vec::new();
    };
    q.query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// Wait (bounded) until `done` holds of the upstream's rows; the rows.
async fn upstream_rows(rx: &Path, done: impl Fn(&[String]) -> bool) -> Vec<String> {
    let started = Instant::now();
    loop {
        let rows = stored(rx);
        if done(&rows) || started.elapsed() > Duration::from_secs(20) {
            return rows;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The next event of `relay` matching `pred` within `wait`.
fn relay_event(relay: &RelayProc, wait: Duration, pred: impl Fn(&Value) -> bool) -> Option<Value> {
    let deadline = Instant::now() + wait;
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        match relay.events.recv_timeout(left) {
            Ok(v) if pred(&v) => return Some(v),
            Ok(_) => {}
            Err(_) => return None,
        }
    }
    None
}

#[tokio::test]
async fn a_queue_deleted_or_moved_under_the_relay_loses_nothing_answered_after() {
    for how in ["delete", "move"] {
        let dir = tempfile::tempdir().unwrap();
        let queue = dir.path().join("q.db");
        let rx = dir.path().join("rx.db");
        let port = free_port();
        let q = queue.to_str().unwrap().to_string();
        let args = ["--queue", q.as_str(), "--backoff-max", "200ms"];
        let to = format!("127.0.0.1:{port}");
        let relay = RelayProc::start(&to, &args);
        let mut client = MllpClient::connect(relay.addr).await;
        client.send(&adt(b"B0", "")).await;
        assert_eq!(client.ack().await.unwrap().code, "AA");
        match how {
            "delete" => {
                for entry in std::fs::read_dir(dir.path()).unwrap() {
                    std::fs::remove_file(entry.unwrap().path()).unwrap();
                }
            }
            _ => std::fs::rename(&queue, dir.path().join("q.db.1")).unwrap(),
        }
        let mut positive = Vec::new();
        for i in 1..=50 {
            let id = format!("A{i}");
            client.send(&adt(id.as_bytes(), "")).await;
            if client.ack().await.unwrap().code == "AA" {
                positive.push(id);
            }
        }
        assert!(positive.len() >= 45, "{how}: {positive:?}");
        // A restart, then the upstream comes: what was answered is forwarded from the path.
        drop(relay);
        let relay = RelayProc::start(&to, &args);
        let upstream = ListenProc::start_at(port, &["--sqlite", rx.to_str().unwrap()]);
        let rows = upstream_rows(&rx, |rows| positive.iter().all(|p| rows.contains(p))).await;
        let missing: Vec<_> = positive.iter().filter(|p| !rows.contains(p)).collect();
        assert!(
            missing.is_empty(),
            "{how}: answered AA, never forwarded: {missing:?}"
        );
        drop((relay, upstream));
    }
}

/// A queue file made by hand: the relay's columns, `attempts` without NOT NULL, and rows the
/// forwarder cannot read ahead of good ones.
fn hand_made_queue(file: &Path) {
    let db = rusqlite::Connection::open(file).unwrap();
    db.execute_batch(
        "CREATE TABLE queue (id INTEGER PRIMARY KEY, received_at TEXT NOT NULL, peer TEXT NOT NULL,
            msh3 TEXT, msh4 TEXT, control_id TEXT, msh7 TEXT, message_type TEXT,
            bytes INTEGER NOT NULL, payload BLOB NOT NULL, status TEXT NOT NULL, ack_code TEXT,
            ack BLOB, attempts INTEGER, forwarded_at TEXT, settled_at TEXT);
         INSERT INTO queue (received_at, peer, control_id, bytes, payload, status, attempts)
            VALUES ('2024-01-01T00:00:00Z', 'x', 'T1', 3, 'abc', 'pending', 0);
         INSERT INTO queue (received_at, peer, control_id, bytes, payload, status, attempts)
            VALUES ('2024-01-01T00:00:00Z', 'x', 'N1', 3, x'616263', 'pending', NULL);",
    )
    .unwrap();
}

#[tokio::test]
async fn rows_the_forwarder_cannot_read_are_set_aside_and_the_rest_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let queue = dir.path().join("q.db");
    let rx = dir.path().join("rx.db");
    hand_made_queue(&queue);
    let upstream = ListenProc::start(&["--sqlite", rx.to_str().unwrap()]);
    let relay = RelayProc::start(
        &upstream.addr.to_string(),
        &["--queue", queue.to_str().unwrap()],
    );
    let mut client = MllpClient::connect(relay.addr).await;
    let ids: Vec<String> = (1..=10).map(|i| format!("G{i}")).collect();
    for id in &ids {
        client.send(&adt(id.as_bytes(), "")).await;
        assert_eq!(client.ack().await.unwrap().code, "AA");
    }
    let rows = upstream_rows(&rx, |rows| rows.len() >= 10).await;
    assert_eq!(rows, ids, "forwarding went on past the unreadable rows");
    let event = relay_event(&relay, Duration::from_secs(5), |e| {
        e["event"] == "store_error" && e["detail"].as_str().is_some_and(|d| d.contains("row 1"))
    });
    assert!(event.is_some(), "the unreadable row was reported");
    drop(relay);
    let db = rusqlite::Connection::open(&queue).unwrap();
    let statuses: Vec<String> = db
        .prepare("SELECT status FROM queue WHERE id <= 2 ORDER BY id")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(statuses, ["unreadable", "unreadable"]);
}

#[tokio::test]
async fn a_settle_the_database_refuses_keeps_arrival_order() {
    let dir = tempfile::tempdir().unwrap();
    let queue = dir.path().join("q.db");
    let rx = dir.path().join("rx.db");
    // The relay's own table, and a trigger refusing to settle S2 until it is dropped.
    drop(RelayProc::start(
        &format!("127.0.0.1:{}", closed_port()),
        &["--queue", queue.to_str().unwrap()],
    ));
    let db = rusqlite::Connection::open(&queue).unwrap();
    db.execute_batch(
        "CREATE TRIGGER refuse_settle BEFORE UPDATE OF status ON queue
           WHEN OLD.control_id = 'S2' BEGIN SELECT RAISE(ABORT, 'refused'); END;",
    )
    .unwrap();
    let upstream = ListenProc::start(&["--sqlite", rx.to_str().unwrap()]);
    let relay = RelayProc::start(
        &upstream.addr.to_string(),
        &["--queue", queue.to_str().unwrap(), "--backoff-max", "200ms"],
    );
    let mut client = MllpClient::connect(relay.addr).await;
    let ids: Vec<String> = (1..=5).map(|i| format!("S{i}")).collect();
    for id in &ids {
        client.send(&adt(id.as_bytes(), "")).await;
        assert_eq!(client.ack().await.unwrap().code, "AA");
    }
    let event = relay_event(&relay, Duration::from_secs(10), is("store_error"));
    assert!(event.is_some(), "the refused settle was reported");
    tokio::time::sleep(Duration::from_millis(500)).await;
    db.execute_batch("DROP TRIGGER refuse_settle").unwrap();
    let started = Instant::now();
    let pending = || {
        db.query_row(
            "SELECT COUNT(*) FROM queue WHERE status = 'pending'",
            [],
            |r| r.get::<_, i64>(0),
        )
        .unwrap()
    };
    while pending() > 0 && started.elapsed() < Duration::from_secs(20) {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(stored(&rx), ids, "each once, in arrival order");
}

#[tokio::test]
async fn a_record_on_a_full_disk_says_so() {
    let Some(disk) = Tmpfs::mount("record", 4 << 20) else {
        return;
    };
    let record = disk.path().join("trace.db");
    let upstream = ListenProc::start(&[]);
    let relay = RelayProc::start(
        &upstream.addr.to_string(),
        &["--record", record.to_str().unwrap()],
    );
    disk.fill();
    let mut client = MllpClient::connect(relay.addr).await;
    for i in 1..=200 {
        client.send(&adt(format!("F{i}").as_bytes(), "")).await;
        assert_eq!(client.ack().await.unwrap().code, "AA");
    }
    let event = relay_event(&relay, Duration::from_secs(5), |e| {
        e["event"] == "store_error" && e["detail"].as_str().is_some_and(|d| d.contains("record"))
    });
    assert!(event.is_some(), "the failed record writes were reported");
    drop(relay);
    let db = rusqlite::Connection::open(&record).unwrap();
    let pending: i64 = db
        .query_row(
            "SELECT COUNT(*) FROM queue WHERE status = 'pending'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(pending, 0, "no row half written");
}

#[tokio::test]
async fn a_symbolic_link_at_the_queue_or_record_path_is_refused() {
    for flag in ["--queue", "--record"] {
        let dir = tempfile::tempdir().unwrap();
        let foreign = dir.path().join("foreign.db");
        rusqlite::Connection::open(&foreign)
            .unwrap()
            .execute_batch("CREATE TABLE t (x)")
            .unwrap();
        let dangling = dir.path().join("nowhere.db");
        for target in [&foreign, &dangling] {
            let link = dir.path().join("q.db");
            let _ = std::fs::remove_file(&link);
            std::os::unix::fs::symlink(target, &link).unwrap();
            let out = crate::support::mllp()
                .args(["relay", "--listen", "0", "--to", "127.0.0.1:9", flag])
                .arg(&link)
                .timeout(Duration::from_secs(10))
                .output()
                .unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{flag}: {stderr}");
            assert!(stderr.contains("symbolic link"), "{flag}: {stderr}");
        }
        assert!(
            !dangling.exists(),
            "{flag}: the dangling link's target was made"
        );
        let tables: i64 = rusqlite::Connection::open(&foreign)
            .unwrap()
            .query_row("SELECT COUNT(*) FROM sqlite_master", [], |r| r.get(0))
            .unwrap();
        assert_eq!(tables, 1, "{flag}: the foreign database was left alone");
    }
}

#[tokio::test]
async fn a_queue_table_with_other_columns_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let queue = dir.path().join("q.db");
    rusqlite::Connection::open(&queue)
        .unwrap()
        .execute_batch("CREATE TABLE queue (job TEXT, due TEXT)")
        .unwrap();
    let out = crate::support::mllp()
        .args(["relay", "--listen", "0", "--to", "127.0.0.1:9", "--queue"])
        .arg(&queue)
        .timeout(Duration::from_secs(10))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("queue"), "{stderr}");
}

#[tokio::test]
async fn the_queue_depth_is_the_tables_pending_rows() {
    let dir = tempfile::tempdir().unwrap();
    let queue = dir.path().join("q.db");
    let relay = RelayProc::start(
        &format!("127.0.0.1:{}", closed_port()),
        &["--queue", queue.to_str().unwrap(), "--backoff-max", "200ms"],
    );
    let mut client = MllpClient::connect(relay.addr).await;
    for i in 1..=43 {
        client.send(&adt(format!("D{i}").as_bytes(), "")).await;
        assert_eq!(client.ack().await.unwrap().code, "AA");
    }
    let stats = relay_event(&relay, Duration::from_secs(10), |e| {
        e["event"] == "relay_stats" && e["queue_depth"] == 43
    });
    assert!(
        stats.is_some(),
        "relay_stats never showed the 43 pending rows"
    );
}

/// Wait (at most 10 s) for process `pid` to have exited: gone, or a zombie.
fn exited(pid: u32) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Ok(stat) if !stat.contains(") Z ") => {}
            _ => return true,
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

#[tokio::test]
async fn rows_of_a_queue_moved_are_in_its_main_file_after_a_stop_or_a_kill() {
    // Moved a while after the last answer, and at once (the stop comes before any pause); a
    // kill -9 at once gives the relay no moment to fold its WAL into the file it had open.
    for (pause, signal) in [(300, "-TERM"), (0, "-TERM"), (0, "-KILL")] {
        moved_then_stopped(Duration::from_millis(pause), signal).await;
    }
}

async fn moved_then_stopped(pause: Duration, signal: &str) {
    let dir = tempfile::tempdir().unwrap();
    let queue = dir.path().join("q.db");
    let relay = RelayProc::start("127.0.0.1:9", &["--queue", queue.to_str().unwrap()]);
    let mut client = MllpClient::connect(relay.addr).await;
    let mut positive = Vec::new();
    for i in 0..5 {
        let id = format!("Q{i}");
        client.send(&adt(id.as_bytes(), "")).await;
        if client.ack().await.unwrap().code == "AA" {
            positive.push(id);
        }
    }
    assert!(!positive.is_empty());
    tokio::time::sleep(pause).await;
    let moved = dir.path().join("q.db.1");
    std::fs::rename(&queue, &moved).unwrap();
    tokio::time::sleep(pause).await;
    let term = std::process::Command::new("kill")
        .args([signal, &relay.pid().to_string()])
        .status()
        .unwrap();
    assert!(
        term.success() && exited(relay.pid()),
        "relay stopped ({signal})"
    );
    // The main file alone, read without any WAL beside it.
    let alone = tempfile::tempdir().unwrap();
    let copy = alone.path().join("copy.db");
    std::fs::copy(&moved, &copy).unwrap();
    let db = rusqlite::Connection::open(&copy).unwrap();
    let kept: Vec<String> = db
        .prepare("SELECT control_id FROM queue")
        .and_then(|mut q| q.query_map([], |r| r.get(0))?.collect())
        .unwrap_or_default();
    for id in &positive {
        assert!(
            kept.contains(id),
            "{id} answered AA is in no main file ({pause:?}, {signal}): {kept:?}"
        );
    }
}
