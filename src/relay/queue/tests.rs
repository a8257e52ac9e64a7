//! The queue's writer: batches waiting together share one commit, in the order they came.

use super::*;
use crate::ack::Disposition;
use bytes::Bytes;

fn message(id: &str) -> Inbound {
    let payload = format!("MSH|^~\\&|A|B|C|D|20240101||ADT^A01|{id}|P|2.5\rPID|1\r");
    Inbound::new(1, 1, Arc::from("peer"), Bytes::from(payload), false)
}

/// Control IDs of the queue's rows in id order.
fn rows(file: &std::path::Path) -> Vec<String> {
    let db = rusqlite::Connection::open(file).unwrap();
    let mut q = db
        .prepare("SELECT control_id FROM queue ORDER BY id")
        .unwrap();
    let ids = q.query_map([], |r| r.get(0)).unwrap();
    ids.collect::<Result<_, _>>().unwrap()
}

#[tokio::test]
async fn batches_waiting_together_share_one_commit_in_the_order_they_came() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("q.db");
    let store = Store::open(&file).unwrap();
    let sink = Enqueue::new(store, None, Arc::new(Notify::new()));
    // Eight connections' batches of three, all handed over before the writer first runs.
    let batches: Vec<Vec<Inbound>> = (0..8)
        .map(|b| (0..3).map(|m| message(&format!("B{b}M{m}"))).collect())
        .collect();
    let commits = batches.iter().map(|batch| sink.commit_batch(batch));
    let results = futures::future::join_all(commits).await;
    for result in results.iter().flatten() {
        assert_eq!(result.disposition, Disposition::Committed, "{result:?}");
    }
    let groups = sink.commit_groups().unwrap();
    assert_eq!((groups.groups, groups.rows), (1, 24), "{groups:?}");
    let expected: Vec<String> = batches
        .iter()
        .flatten()
        .map(|m| m.control_id_lossy().to_string())
        .collect();
    assert_eq!(rows(&file), expected);
}

#[tokio::test]
async fn a_full_queue_refuses_a_whole_batch_and_keeps_the_rest_of_the_group() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("q.db");
    let sink = Enqueue::new(
        Store::open(&file).unwrap(),
        Some(4),
        Arc::new(Notify::new()),
    );
    let batches: Vec<Vec<Inbound>> = (0..3)
        .map(|b| (0..2).map(|m| message(&format!("F{b}M{m}"))).collect())
        .collect();
    let commits = batches.iter().map(|batch| sink.commit_batch(batch));
    let results = futures::future::join_all(commits).await;
    let kept: Vec<bool> = results
        .iter()
        .map(|r| r.iter().all(|r| r.disposition == Disposition::Committed))
        .collect();
    assert_eq!(kept, [true, true, false]);
    assert_eq!(rows(&file), ["F0M0", "F0M1", "F1M0", "F1M1"]);
}
