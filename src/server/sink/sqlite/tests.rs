//! Unit tests of the SQLite sink: rows, duplicates, the sender in the key, migration.
use super::*;
use bytes::Bytes;
use std::sync::Arc;

fn msg(id: &str) -> Inbound {
    from("A", id)
}

fn from(msh3: &str, id: &str) -> Inbound {
    let payload = format!("MSH|^~\\&|{msh3}|B|C|D|20240101||ADT^A01|{id}|P|2.5\rPID|1\r");
    Inbound::new(1, 1, Arc::from("peer"), Bytes::from(payload), false)
}

#[tokio::test]
async fn another_sender_with_the_same_control_id_and_time_is_not_a_duplicate() {
    let dir = tempfile::tempdir().unwrap();
    let sink = SqliteSink::open(&dir.path().join("m.db"), true).unwrap();
    let results = sink
        .commit_batch(&[from("LAB", "7"), from("ADT", "7"), from("LAB", "7")])
        .await;
    let dup: Vec<bool> = results.iter().map(|r| r.duplicate).collect();
    assert_eq!(dup, [false, false, true]);
}

/// The schema and index the previous version wrote.
const OLD_SCHEMA: &str = "CREATE TABLE messages (
    id INTEGER PRIMARY KEY, received_at TEXT NOT NULL, peer TEXT NOT NULL, control_id TEXT,
    msh7 TEXT, message_type TEXT, bytes INTEGER NOT NULL, payload BLOB NOT NULL,
    dedupe INTEGER);
    CREATE UNIQUE INDEX messages_control_id_msh7 ON messages (control_id, msh7)
    WHERE dedupe = 1;";

#[tokio::test]
async fn a_database_of_the_earlier_schema_is_migrated_when_opened() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("old.db");
    {
        let db = Connection::open(&file).unwrap();
        db.execute_batch(OLD_SCHEMA).unwrap();
        let old = from("LAB", "7");
        db.execute(
            "INSERT INTO messages (received_at, peer, control_id, msh7, message_type, bytes,
             payload, dedupe) VALUES ('t', 'p', '7', '20240101', 'ADT^A01', ?1, ?2, 1)",
            params![old.payload.len() as i64, &old.payload[..]],
        )
        .unwrap();
    }
    let sink = SqliteSink::open(&file, true).unwrap();
    let dup: Vec<bool> = sink
        .commit_batch(&[from("LAB", "7"), from("ADT", "7")])
        .await
        .iter()
        .map(|r| r.duplicate)
        .collect();
    assert_eq!(dup, [true, false], "the old row keeps its place in the key");
    let db = Connection::open(&file).unwrap();
    let senders: Vec<(String, String)> = db
        .prepare("SELECT msh3, msh4 FROM messages ORDER BY id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        senders,
        [("LAB".into(), "B".into()), ("ADT".into(), "B".into())]
    );
}

#[tokio::test]
async fn rows_land_and_repeats_are_duplicates_with_dedupe() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("m.db");
    let sink = SqliteSink::open(&file, true).unwrap();
    let results = sink
        .commit_batch(&[msg("A"), msg("B"), msg("A"), msg("")])
        .await;
    let dup: Vec<bool> = results.iter().map(|r| r.duplicate).collect();
    assert_eq!(dup, [false, false, true, false]);
    let plain = SqliteSink::open(&file, false).unwrap();
    assert!(
        !plain.commit(&msg("A")).await.duplicate,
        "no dedupe: stored again"
    );
    let db = Connection::open(&file).unwrap();
    let n: i64 = db
        .query_row(
            "SELECT count(*) FROM messages WHERE message_type = 'ADT^A01'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(n, 4);
}

#[test]
fn a_file_that_is_not_a_database_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("notes.txt");
    std::fs::write(&file, vec![b'x'; 4096]).unwrap();
    let err = SqliteSink::open(&file, false).err().expect("refused");
    assert!(err.to_string().contains("notes.txt"), "{err}");
}
