//! The relay's SQLite file (`--queue` and `--record`): table `queue`, one row per message with
//! the columns of the receiver's `messages` table and the message's upstream fate. WAL and full
//! synchronous commits: a row written is on disk before the downstream peer hears of it.

use crate::server::clock::Utc;
use crate::server::Inbound;
use rusqlite::types::Value;
use rusqlite::{params, Connection, OptionalExtension};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS queue (
    id INTEGER PRIMARY KEY,
    received_at TEXT NOT NULL,
    peer TEXT NOT NULL,
    msh3 TEXT,
    msh4 TEXT,
    control_id TEXT,
    msh7 TEXT,
    message_type TEXT,
    bytes INTEGER NOT NULL,
    payload BLOB NOT NULL,
    status TEXT NOT NULL,
    ack_code TEXT,
    ack BLOB,
    attempts INTEGER NOT NULL DEFAULT 0,
    forwarded_at TEXT,
    settled_at TEXT
);
CREATE INDEX IF NOT EXISTS queue_status ON queue (status, id);";

/// A row's upstream fate: `pending` until it is settled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Waiting to be forwarded (or, in a record, not yet settled).
    Pending,
    /// Answered positively upstream.
    Accepted,
    /// Answered negatively upstream: a dead letter, never sent again.
    Negative,
    /// Written upstream and never finally answered: it may or may not be kept there.
    UnknownFate,
    /// Never written upstream (a pass-through record only: a queue keeps such rows pending).
    NeverDelivered,
}

impl Status {
    /// Every status a row can have.
    pub const ALL: [Status; 5] = [
        Status::Pending,
        Status::Accepted,
        Status::Negative,
        Status::UnknownFate,
        Status::NeverDelivered,
    ];

    /// The status as stored in the `status` column.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pending => "pending",
            Status::Accepted => "accepted",
            Status::Negative => "negative",
            Status::UnknownFate => "unknown-fate",
            Status::NeverDelivered => "never-delivered",
        }
    }
}

/// The file could not be opened or written. Names the file.
#[derive(Debug, thiserror::Error)]
#[error("{file}: {what}")]
pub struct StoreError {
    /// The store's file.
    pub file: PathBuf,
    /// What went wrong with it.
    pub what: String,
}

/// How a row was settled upstream.
#[derive(Debug, Clone)]
pub struct Settlement {
    /// The fate the row is settled with.
    pub status: Status,
    /// MSA-1 of the final upstream answer, if one came.
    pub ack_code: Option<String>,
    /// The final upstream answer itself, if one came.
    pub ack: Option<bytes::Bytes>,
    /// How many times the message was written upstream.
    pub attempts: u32,
    /// When it was last written upstream, if ever.
    pub forwarded_at: Option<SystemTime>,
    /// When its fate was settled.
    pub settled_at: SystemTime,
}

/// One row waiting to be forwarded.
#[derive(Debug, Clone)]
pub struct PendingRow {
    /// The row's ID: the queue's order.
    pub id: i64,
    /// The message, as received.
    pub payload: bytes::Bytes,
    /// Times it was written upstream before.
    pub attempts: u32,
}

/// The open file, shared by the committing connections and the forwarder.
#[derive(Clone)]
pub struct Store {
    db: Arc<Mutex<Connection>>,
    file: PathBuf,
}

fn text(bytes: Option<&[u8]>) -> Option<Value> {
    bytes.map(|b| match std::str::from_utf8(b) {
        Ok(t) => Value::Text(t.to_string()),
        Err(_) => Value::Blob(b.to_vec()),
    })
}

fn stamp(at: SystemTime) -> String {
    Utc::from_system(at).rfc3339()
}

impl Store {
    /// Open (or create) `file` with WAL and full synchronous commits.
    pub fn open(file: &Path) -> Result<Store, StoreError> {
        let fail = |e: rusqlite::Error| StoreError {
            file: file.to_path_buf(),
            what: e.to_string(),
        };
        let db = Connection::open(file).map_err(fail)?;
        let mode: String = db
            .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
            .map_err(fail)?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(StoreError {
                file: file.to_path_buf(),
                what: format!("cannot use WAL mode (journal mode is {mode})"),
            });
        }
        db.execute_batch("PRAGMA synchronous=FULL; PRAGMA busy_timeout=5000;")
            .and_then(|()| db.execute_batch(SCHEMA))
            .map_err(fail)?;
        Ok(Store {
            db: Arc::new(Mutex::new(db)),
            file: file.to_path_buf(),
        })
    }

    /// The file the store was opened from.
    pub fn file(&self) -> &Path {
        &self.file
    }

    /// Run `f` on the connection off the runtime's workers.
    async fn with<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Connection) -> rusqlite::Result<T> + Send + 'static,
    ) -> Result<T, String> {
        let db = Arc::clone(&self.db);
        tokio::task::spawn_blocking(move || {
            let mut db = db.lock().unwrap_or_else(|p| p.into_inner());
            f(&mut db).map_err(|e| e.to_string())
        })
        .await
        .unwrap_or_else(|e| Err(format!("store task: {e}")))
    }

    /// Insert `messages` as rows of `status` in one transaction, unless that would make more
    /// than `max_pending` rows pending: then nothing is inserted and `Ok(None)`. The new ids, in
    /// order.
    pub async fn insert(
        &self,
        messages: &[Inbound],
        max_pending: Option<u64>,
    ) -> Result<Option<Vec<i64>>, String> {
        let rows: Vec<_> = messages.iter().map(row_values).collect();
        self.with(move |db| {
            let tx = db.transaction()?;
            if let Some(max) = max_pending {
                let pending: i64 = tx.query_row(
                    "SELECT COUNT(*) FROM queue WHERE status = 'pending'",
                    [],
                    |r| r.get(0),
                )?;
                if pending as u64 + rows.len() as u64 > max {
                    return Ok(None);
                }
            }
            let mut ids = Vec::with_capacity(rows.len());
            {
                let mut insert = tx.prepare_cached(
                    "INSERT INTO queue (received_at, peer, msh3, msh4, control_id, msh7,
                        message_type, bytes, payload, status)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 'pending')",
                )?;
                for r in &rows {
                    insert.execute(params![
                        r.0,
                        r.1,
                        r.2,
                        r.3,
                        r.4,
                        r.5,
                        r.6,
                        r.7.len() as i64,
                        &r.7[..]
                    ])?;
                    ids.push(tx.last_insert_rowid());
                }
            }
            tx.commit()?;
            Ok(Some(ids))
        })
        .await
    }

    /// Keep one message already settled (a pass-through record).
    pub async fn record(&self, message: &Inbound, settled: Settlement) -> Result<(), String> {
        let ids = self.insert(std::slice::from_ref(message), None).await?;
        let id = ids.and_then(|ids| ids.first().copied()).unwrap_or_default();
        self.settle(id, settled).await
    }

    /// Write row `id`'s upstream fate.
    pub async fn settle(&self, id: i64, s: Settlement) -> Result<(), String> {
        self.with(move |db| {
            db.execute(
                "UPDATE queue SET status = ?1, ack_code = ?2, ack = ?3, attempts = ?4,
                    forwarded_at = ?5, settled_at = ?6 WHERE id = ?7",
                params![
                    s.status.as_str(),
                    s.ack_code,
                    s.ack.as_deref(),
                    s.attempts,
                    s.forwarded_at.map(stamp),
                    stamp(s.settled_at),
                    id
                ],
            )
            .map(|_| ())
        })
        .await
    }

    /// Count one more attempt of row `id`, and when it was first forwarded.
    pub async fn attempted(&self, id: i64, at: SystemTime) -> Result<(), String> {
        self.with(move |db| {
            db.execute(
                "UPDATE queue SET attempts = attempts + 1,
                    forwarded_at = COALESCE(forwarded_at, ?1) WHERE id = ?2",
                params![stamp(at), id],
            )
            .map(|_| ())
        })
        .await
    }

    /// Up to `limit` pending rows after `after`, in arrival order.
    pub async fn pending(&self, after: i64, limit: usize) -> Result<Vec<PendingRow>, String> {
        self.with(move |db| {
            let mut q = db.prepare_cached(
                "SELECT id, payload, attempts FROM queue
                 WHERE status = 'pending' AND id > ?1 ORDER BY id LIMIT ?2",
            )?;
            let rows = q.query_map(params![after, limit as i64], |r| {
                Ok(PendingRow {
                    id: r.get(0)?,
                    payload: bytes::Bytes::from(r.get::<_, Vec<u8>>(1)?),
                    attempts: r.get(2)?,
                })
            })?;
            rows.collect()
        })
        .await
    }

    /// Rows still pending.
    pub async fn depth(&self) -> Result<u64, String> {
        self.with(|db| {
            db.query_row(
                "SELECT COUNT(*) FROM queue WHERE status = 'pending'",
                [],
                |r| r.get::<_, i64>(0),
            )
            .map(|n| n as u64)
        })
        .await
    }

    /// The oldest pending row's id, if any.
    pub async fn first_pending(&self) -> Result<Option<i64>, String> {
        self.with(|db| {
            db.query_row(
                "SELECT MIN(id) FROM queue WHERE status = 'pending'",
                [],
                |r| r.get::<_, Option<i64>>(0),
            )
            .optional()
            .map(Option::flatten)
        })
        .await
    }
}

type RowValues = (
    String,
    String,
    Option<Value>,
    Option<Value>,
    Option<Value>,
    Option<Value>,
    Option<Value>,
    bytes::Bytes,
);

fn row_values(m: &Inbound) -> RowValues {
    (
        stamp(m.received_at),
        m.peer.to_string(),
        text(m.msh3()),
        text(m.msh4()),
        text(m.control_id()),
        text(m.msh7()),
        text(m.message_type()),
        m.payload.clone(),
    )
}
