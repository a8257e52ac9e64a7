//! `send --from-db` as a user meets it: rows checked like files before the first byte (each
//! refusal named by its row), the recorded pace stopped by `--timeout`, Ctrl-C and SIGTERM and
//! capped by `--max-gap`, rows chosen by their upstream status, and the memory a replay or its
//! dry run holds, read from outside. (The filters of arrival time, type and control ID are in
//! `relay::replay`.)

mod checks;
mod memory;
mod pace;
mod status;

use crate::support::no_payload::MARKER;
use crate::support::peer_wire::message;
use rusqlite::types::Value;
use std::path::{Path, PathBuf};

/// A `listen --sqlite`-shaped store at `dir/rx.db` holding `rows` (arrival time, payload), in
/// that order: row ids 1, 2, .... The payload column takes any value, as a file written by
/// another tool may hold.
fn receiver_store(dir: &Path, rows: &[(&str, Value)]) -> PathBuf {
    let file = dir.join("rx.db");
    let db = rusqlite::Connection::open(&file).unwrap();
    db.execute_batch(
        "CREATE TABLE messages (id INTEGER PRIMARY KEY, received_at TEXT NOT NULL,
         peer TEXT NOT NULL, msh3 TEXT, msh4 TEXT, control_id TEXT, msh7 TEXT,
         message_type TEXT, bytes INTEGER NOT NULL, payload BLOB, dedupe INTEGER)",
    )
    .unwrap();
    for (at, payload) in rows {
        db.execute(
            "INSERT INTO messages (received_at, peer, message_type, bytes, payload)
             VALUES (?1, 'p', 'ADT^A01', 0, ?2)",
            rusqlite::params![at, payload],
        )
        .unwrap();
    }
    file
}

/// A relay's `--queue` or `--record` file at `dir/q.db` holding one row per (control ID,
/// status), in that order.
fn relay_store(dir: &Path, rows: &[(&str, &str)]) -> PathBuf {
    let file = dir.join("q.db");
    let db = rusqlite::Connection::open(&file).unwrap();
    db.execute_batch(
        "CREATE TABLE queue (id INTEGER PRIMARY KEY, received_at TEXT NOT NULL,
         peer TEXT NOT NULL, msh3 TEXT, msh4 TEXT, control_id TEXT, msh7 TEXT,
         message_type TEXT, bytes INTEGER NOT NULL, payload BLOB NOT NULL,
         status TEXT NOT NULL, ack_code TEXT, ack BLOB, attempts INTEGER NOT NULL DEFAULT 0,
         forwarded_at TEXT, settled_at TEXT)",
    )
    .unwrap();
    for (id, status) in rows {
        let payload = message(id, MARKER);
        db.execute(
            "INSERT INTO queue (received_at, peer, control_id, message_type, bytes, payload,
             status) VALUES ('2024-01-31T08:00:00.000000Z', 'p', ?1, 'ADT^A01', ?2, ?3, ?4)",
            rusqlite::params![id, payload.len() as i64, payload, status],
        )
        .unwrap();
    }
    file
}

/// A stored payload: the message `id` carrying the payload marker.
fn hl7(id: &str) -> Value {
    Value::Blob(message(id, MARKER))
}

/// Arrival times a second apart, from 08:00:00 on 31 January 2024.
fn second(n: u32) -> String {
    format!("2024-01-31T08:00:{n:02}.000000Z")
}
