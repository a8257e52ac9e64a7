//! The SQLite sink: one row per message in table `messages`, WAL and `synchronous=FULL`, written
//! by one dedicated thread that commits everything queued when it runs (across connections) in
//! one transaction (group commit); each message's ACK waits for that commit. With
//! de-duplication, a unique index on (msh3, msh4, control_id, msh7) is the memory. A database
//! written by an earlier version (no `msh3`/`msh4`, an index on the control ID and MSH-7 alone)
//! is brought up to date when opened.
//!
//! A positive answer means the row is in the file the path names: each INSERT must store its
//! row (a trigger may drop it: answered negatively), the path is checked before and after each
//! group (a group whose file was moved or replaced meanwhile is taken back out of it), and a
//! file moved away is checkpointed before it is let go, so no committed row stays behind in a
//! WAL nobody will read.

mod commit;
pub(crate) mod file;

use super::{Inbound, Sink, SinkFuture, SinkResult};
use crate::server::clock::Utc;
use rusqlite::types::Value;
use rusqlite::{params, Connection};
use std::path::{Path, PathBuf};
use tokio::sync::mpsc;

/// Messages queued for the writer at most (backpressure beyond: committers wait).
const QUEUE: usize = 1024;
/// Rows in one transaction at most.
const GROUP_ROWS: usize = 4096;

const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS messages (
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
    dedupe INTEGER
)";
const DEDUPE_INDEX: &str = "CREATE UNIQUE INDEX IF NOT EXISTS messages_dedupe_key
    ON messages (msh3, msh4, control_id, msh7) WHERE dedupe = 1";
/// The earlier index, which took two senders' messages with one control ID for duplicates.
const OLD_DEDUPE_INDEX: &str = "DROP INDEX IF EXISTS messages_control_id_msh7";
const COLUMNS: [&str; 8] = [
    "id",
    "received_at",
    "peer",
    "control_id",
    "msh7",
    "message_type",
    "bytes",
    "payload",
];

/// The database could not be opened or is not one this sink can write. Names the file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SqliteError {
    #[error("{file}: not a usable SQLite database: {what}")]
    /// The file cannot be opened as a database.
    Open {
        /// The database file.
        file: PathBuf,
        /// What SQLite said.
        what: String,
    },
    #[error("{file}: table `messages` has no column `{column}`")]
    /// The table lacks a column this sink writes.
    Schema {
        /// The database file.
        file: PathBuf,
        /// The missing column.
        column: &'static str,
    },
    #[error("{file} is a symbolic link: give the path of the database file itself")]
    /// The path is a symbolic link, which is never followed.
    Link {
        /// The path given.
        file: PathBuf,
    },
    #[error("{file}: cannot start the writer thread: {what}")]
    /// The writer thread could not be started.
    Thread {
        /// The database file.
        file: PathBuf,
        /// What the system said.
        what: String,
    },
}

struct Row {
    received_at: String,
    peer: String,
    msh3: Option<Value>,
    msh4: Option<Value>,
    control_id: Option<Value>,
    msh7: Option<Value>,
    message_type: Option<Value>,
    payload: bytes::Bytes,
    dedupe: bool,
}

type Job = super::groups::Job<Row>;

impl super::groups::Payload for Row {
    fn payload_len(&self) -> usize {
        self.payload.len()
    }
}

/// Writes messages into an SQLite database file.
pub struct SqliteSink {
    jobs: mpsc::Sender<Job>,
    dedupe: bool,
    groups: std::sync::Arc<super::groups::GroupCounter>,
}

/// Text when the bytes are UTF-8 (what a user queries), else a blob (exact, never merged with
/// another value by a lossy conversion).
fn value(bytes: Option<&[u8]>) -> Option<Value> {
    bytes.map(|b| match std::str::from_utf8(b) {
        Ok(text) => Value::Text(text.to_string()),
        Err(_) => Value::Blob(b.to_vec()),
    })
}

fn open_error(file: &Path, e: rusqlite::Error) -> SqliteError {
    SqliteError::Open {
        file: file.to_path_buf(),
        what: e.to_string(),
    }
}

impl SqliteSink {
    /// Open (or create) `file`, set WAL and full synchronous commits, create the table (and,
    /// with `dedupe`, the unique index), and start the writer thread.
    pub fn open(file: &Path, dedupe: bool) -> Result<SqliteSink, SqliteError> {
        if std::fs::symlink_metadata(file).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(SqliteError::Link {
                file: file.to_path_buf(),
            });
        }
        let (db, id) = connect(file, dedupe)?;
        let store = Store {
            id,
            db,
            file: file.to_path_buf(),
            dedupe,
        };
        let (jobs, rx) = mpsc::channel(QUEUE);
        let groups = std::sync::Arc::new(super::groups::GroupCounter::default());
        let counter = groups.clone();
        std::thread::Builder::new()
            .name("mllp-sqlite".into())
            .spawn(move || commit::writer(store, rx, &counter))
            .map_err(|e| SqliteError::Thread {
                file: file.to_path_buf(),
                what: e.to_string(),
            })?;
        Ok(SqliteSink {
            jobs,
            dedupe,
            groups,
        })
    }

    fn row(&self, m: &Inbound) -> Row {
        Row {
            received_at: Utc::from_system(m.received_at).rfc3339(),
            peer: m.peer.to_string(),
            msh3: value(m.msh3()),
            msh4: value(m.msh4()),
            control_id: value(m.control_id()),
            msh7: value(m.msh7()),
            message_type: value(m.message_type()),
            payload: m.payload.clone(),
            dedupe: self.dedupe && m.dedupe_key().is_some(),
        }
    }
}

/// Open (or create) `file` and make it a database this sink can write; with its identity.
fn connect(file: &Path, dedupe: bool) -> Result<(Connection, file::Identity), SqliteError> {
    let (mut db, id) = file::open(file).map_err(|what| SqliteError::Open {
        file: file.to_path_buf(),
        what,
    })?;
    db.execute_batch(SCHEMA).map_err(|e| open_error(file, e))?;
    let present: Vec<String> = db
        .prepare("SELECT name FROM pragma_table_info('messages')")
        .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
        .map_err(|e| open_error(file, e))?;
    if let Some(column) = COLUMNS.iter().find(|c| !present.iter().any(|p| p == *c)) {
        return Err(SqliteError::Schema {
            file: file.to_path_buf(),
            column,
        });
    }
    if !present.iter().any(|p| p == "dedupe") {
        db.execute_batch("ALTER TABLE messages ADD COLUMN dedupe INTEGER")
            .map_err(|e| open_error(file, e))?;
    }
    if !present.iter().any(|p| p == "msh3") {
        add_senders(&mut db).map_err(|e| open_error(file, e))?;
    }
    db.execute_batch(OLD_DEDUPE_INDEX)
        .map_err(|e| open_error(file, e))?;
    if dedupe {
        db.execute_batch(DEDUPE_INDEX)
            .map_err(|e| open_error(file, e))?;
    }
    Ok((db, id))
}

/// The open database and the file it was opened as: device, inode.
struct Store {
    db: Connection,
    file: PathBuf,
    id: file::Identity,
    dedupe: bool,
}

impl Store {
    /// Whether the path still names the open file; when not (moved, replaced, deleted), the
    /// open file is checkpointed and let go, the path reopened for the groups after this one,
    /// and why is returned: this group is answered negatively, since what it would write goes
    /// to a file nobody will find at the path.
    fn check(&mut self) -> Result<(), String> {
        if file::is_at(&self.file, self.id) {
            return Ok(());
        }
        let path = self.file.display().to_string();
        // Its rows go into its main file first, wherever that is now; the connection closes
        // before the path is opened again, so its WAL is never the new database's.
        file::let_go(&mut self.db, &self.file)?;
        match connect(&self.file, self.dedupe) {
            Ok((db, id)) => {
                self.db = db;
                self.id = id;
                Err(format!(
                    "{path} was moved, replaced or deleted; its rows stay in that file, and the path was reopened for the next messages"
                ))
            }
            Err(e) => Err(format!(
                "{path} was moved, replaced or deleted, and reopening it failed: {e}"
            )),
        }
    }
}

/// Give a table written by an earlier version its `msh3` and `msh4` columns, filled from each
/// row's own payload, in one transaction: the duplicate key then covers the old rows too.
fn add_senders(db: &mut Connection) -> rusqlite::Result<()> {
    let tx = db.transaction()?;
    tx.execute_batch(
        "ALTER TABLE messages ADD COLUMN msh3 TEXT; ALTER TABLE messages ADD COLUMN msh4 TEXT;",
    )?;
    {
        let mut rows = tx.prepare("SELECT id, payload FROM messages")?;
        let mut update = tx.prepare("UPDATE messages SET msh3 = ?1, msh4 = ?2 WHERE id = ?3")?;
        let mut each = rows.query([])?;
        while let Some(row) = each.next()? {
            let id: i64 = row.get(0)?;
            let payload = match row.get_ref(1)? {
                rusqlite::types::ValueRef::Blob(b) | rusqlite::types::ValueRef::Text(b) => {
                    b.to_vec()
                }
                _ => Vec::new(),
            };
            let message = Inbound::new(
                0,
                0,
                std::sync::Arc::from(""),
                bytes::Bytes::from(payload),
                false,
            );
            let (msh3, msh4) = (value(message.msh3()), value(message.msh4()));
            update.execute(params![msh3, msh4, id])?;
        }
    }
    tx.commit()
}

impl Sink for SqliteSink {
    fn commit<'a>(&'a self, message: &'a Inbound) -> SinkFuture<'a, SinkResult> {
        super::commit_as_batch(self, message, "sqlite: no result")
    }

    fn commit_batch<'a>(&'a self, messages: &'a [Inbound]) -> SinkFuture<'a, Vec<SinkResult>> {
        Box::pin(async move {
            let rows = messages.iter().map(|m| self.row(m)).collect();
            super::groups::submit(&self.jobs, rows, "sqlite: the writer thread stopped").await
        })
    }

    fn commit_groups(&self) -> Option<super::CommitGroups> {
        Some(self.groups.snapshot())
    }
}

#[cfg(test)]
mod tests;
