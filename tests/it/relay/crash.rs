//! The queue through two SIGKILLs of the relay: every message answered downstream reaches the
//! upstream, and with the upstream's --dedupe none is stored twice. Both kills land mid-run.

use super::proc::RelayProc;
use crate::support::listen_proc::ListenProc;
use crate::support::send_proc::{finish, messages};
use std::collections::HashMap;
use std::time::{Duration, Instant};

fn count(db: &std::path::Path, sql: &str) -> i64 {
    let Ok(db) = rusqlite::Connection::open(db) else {
        return 0;
    };
    db.query_row(sql, [], |r| r.get(0)).unwrap_or(0)
}

#[tokio::test]
async fn two_sigkills_lose_nothing_answered_and_store_nothing_twice() {
    let dir = tempfile::tempdir().unwrap();
    let queue = dir.path().join("q.db");
    let rx = dir.path().join("rx.db");
    let input = dir.path().join("in.hl7");
    std::fs::write(&input, messages("K", 300)).unwrap();
    let upstream = ListenProc::start(&["--sqlite", rx.to_str().unwrap(), "--dedupe"]);
    let to = upstream.addr.to_string();
    let q = queue.to_str().unwrap().to_string();
    let args = ["--queue", q.as_str(), "--backoff-max", "200ms"];
    let mut relay = RelayProc::start(&to, &args);
    let port = relay.addr.port();

    let mut send = tokio::process::Command::new(crate::support::mllp_bin());
    send.arg("send")
        .arg(&input)
        .args(["--host", &format!("127.0.0.1:{port}"), "--json"])
        .args([
            "--window",
            "8",
            "--backoff-max",
            "200ms",
            "--give-up-after",
            "30s",
        ]);
    let sending = tokio::spawn(finish(send, None));

    for at in [60, 160] {
        // Each kill lands mid-run: the sender has not finished, some rows have reached the
        // upstream and some have not even arrived.
        let started = Instant::now();
        while (count(&queue, "SELECT COUNT(*) FROM queue") < at
            || count(&rx, "SELECT COUNT(*) FROM messages") == 0)
            && started.elapsed() < Duration::from_secs(20)
        {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        relay.kill();
        let queued = count(&queue, "SELECT COUNT(*) FROM queue");
        let upstream = count(&rx, "SELECT COUNT(*) FROM messages");
        assert!(
            !sending.is_finished(),
            "the sender finished before the kill"
        );
        assert!(
            queued >= at && queued < 300,
            "{queued} rows queued at the kill"
        );
        assert!(
            upstream > 0 && upstream < 300,
            "{upstream} upstream at the kill"
        );
        relay = RelayProc::start_at(port, &to, &args);
    }
    let run = sending.await.unwrap();
    let accepted: Vec<String> = run
        .messages()
        .iter()
        .filter(|m| m["outcome"] == "accepted")
        .map(|m| m["control_id"].as_str().unwrap().to_string())
        .collect();
    assert!(
        accepted.len() >= 100,
        "most were answered: {}",
        accepted.len()
    );

    let started = Instant::now();
    while count(
        &queue,
        "SELECT COUNT(*) FROM queue WHERE status = 'pending'",
    ) > 0
        && started.elapsed() < Duration::from_secs(30)
    {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let db = rusqlite::Connection::open(&rx).unwrap();
    let mut stored: HashMap<String, i64> = HashMap::new();
    let mut rows = db.prepare("SELECT control_id FROM messages").unwrap();
    for id in rows.query_map([], |r| r.get::<_, String>(0)).unwrap() {
        *stored.entry(id.unwrap()).or_default() += 1;
    }
    for id in &accepted {
        assert!(
            stored.contains_key(id),
            "{id} was answered downstream and is not upstream"
        );
    }
    let twice: Vec<_> = stored.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "stored twice: {twice:?}");
    drop(relay);
}
