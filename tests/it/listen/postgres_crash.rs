//! Integration tests: a COMMIT lost with the server (the link cut as it was sent, then the server
//! stopped at once, or the backend killed as COMMIT was due, as a crash does) is settled by
//! looking the rows up, not by asking about a transaction ID the server forgot and hands out
//! again: once other sessions have used the IDs up, the answer is still true, and it comes within
//! a bound.

use super::postgres::CommitCutter;
use crate::support::listen_proc::ListenProc;
use crate::support::mllp_client::{marked, MllpClient};
use crate::support::pg;
use std::sync::atomic::Ordering;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread")]
async fn a_commit_lost_in_a_server_crash_is_never_answered_by_a_reused_transaction_id() {
    let (Some(server), Some(ctl)) = (
        pg::required("MLLP_TEST_PG_OUTAGE"),
        pg::required("MLLP_TEST_PG_OUTAGE_CTL"),
    ) else {
        return;
    };
    let _one_at_a_time = crate::listen::postgres_link::OUTAGE.lock().await;
    let url = pg::fresh_database(&server, "crash_txid").await;
    let cutter = CommitCutter::start(pg::host_port(&url), false).await;
    let db = url.rsplit('/').next().unwrap();
    let via = format!("postgres://postgres@{}/{db}", cutter.addr);
    let listener = ListenProc::start(&["--postgres", &via]);
    let mut client = MllpClient::connect(listener.addr).await;
    client.send(&marked("WARM", "")).await;
    assert_eq!(client.ack().await.unwrap().code, "AA");
    cutter.armed.store(true, Ordering::SeqCst);
    client.send(&marked("LOST", "")).await;
    while !cutter.cut.load(Ordering::SeqCst) {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    // The transaction dies with the server, before its ID reached the disk.
    let crashed = ctl.clone();
    tokio::task::spawn_blocking(move || {
        pg::ctl(&crashed, "crash");
        pg::ctl(&crashed, "start");
    })
    .await
    .unwrap();
    // Other sessions use transaction IDs up, the forgotten one among them.
    let other = pg::connect(&url).await;
    for _ in 0..3000 {
        other.batch_execute("SELECT txid_current()").await.unwrap();
    }
    let answer = tokio::time::timeout(Duration::from_secs(30), client.ack())
        .await
        .expect("an answer within the settling bound");
    let stored = pg::rows(&url).await.iter().any(|(id, _)| id == "LOST");
    match answer {
        Some(ack) => assert_eq!(
            (ack.code.as_str(), stored),
            (if stored { "AA" } else { "AE" }, stored),
            "the answer matches the table"
        ),
        None => assert!(!stored, "closed unanswered, and nothing kept"),
    }
    listener.assert_no_payload();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_backend_killed_as_its_commit_was_due_is_never_answered_by_a_reused_transaction_id() {
    let Some(server) = pg::required("MLLP_TEST_PG_OUTAGE") else {
        return;
    };
    let _one_at_a_time = crate::listen::postgres_link::OUTAGE.lock().await;
    let url = pg::fresh_database(&server, "kill_txid").await;
    let cutter = CommitCutter::start(pg::host_port(&url), false).await;
    cutter.hold.store(true, Ordering::SeqCst);
    let db = url.rsplit('/').next().unwrap();
    let via = format!("postgres://postgres@{}/{db}", cutter.addr);
    let listener = ListenProc::start(&["--postgres", &via]);
    let mut client = MllpClient::connect(listener.addr).await;
    client.send(&marked("WARM", "")).await;
    assert_eq!(client.ack().await.unwrap().code, "AA");
    cutter.armed.store(true, Ordering::SeqCst);
    client.send(&marked("LOST", "")).await;
    while !cutter.cut.load(Ordering::SeqCst) {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    // The backend dies with its transaction open: the server restarts every session, and the
    // transaction's ID, never on disk, is handed out again.
    let admin = pg::connect(&url).await;
    let waiting = admin
        .query(
            "SELECT pid FROM pg_stat_activity
             WHERE datname = current_database() AND state LIKE 'idle in transaction%'",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(waiting.len(), 1, "the listener's transaction, open");
    let pid: i32 = waiting[0].get(0);
    let killed = std::process::Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    // The server notices the dead backend a moment later and cuts every session, this one's
    // too: the IDs are used up across that restart.
    let mut other = pg::connect(&url).await;
    let mut used = 0;
    while used < 3000 {
        match other.batch_execute("SELECT txid_current()").await {
            Ok(()) => used += 1,
            Err(e) if e.code().is_none_or(|c| c.code().starts_with("57P")) => {
                other = pg::connect(&url).await;
            }
            Err(e) => panic!("using transaction IDs up: {e}"),
        }
    }
    let answer = tokio::time::timeout(Duration::from_secs(30), client.ack())
        .await
        .expect("an answer within the settling bound");
    let stored = pg::rows(&url).await.iter().any(|(id, _)| id == "LOST");
    match answer {
        Some(ack) => assert_eq!(
            (ack.code.as_str(), stored),
            (if stored { "AA" } else { "AE" }, stored),
            "the answer matches the table"
        ),
        None => assert!(!stored, "closed unanswered, and nothing kept"),
    }
    listener.assert_no_payload();
}
