//! The relay's SQLite file (`--queue` and `--record`): table `queue`, one row per message with
//! the columns of the receiver's `messages` table and the message's upstream fate. WAL and full
//! synchronous commits for rows taken in: a row written is on disk before the downstream peer
//! hears of it (what the forwarder writes after, attempts and fates, is not waited for).
//!
//! The file is the one the path names: no symbolic link is followed there, a table `queue` with
//! other columns is refused at start, and at each commit group the path is checked against the
//! open file (device, inode). A file moved, replaced or deleted is checkpointed (its rows stay
//! in it, wherever it is) and let go, the path opened anew, and that group refused; a group
//! whose file moved while it was written is taken back out of it. Each opening of a file is a
//! generation: a row read from one is never settled in another. What goes wrong is said through
//! the server's events (`store_error`), never dropped.

mod fates;
mod mirrored;
mod rows;

use crate::server::clock::Utc;
use crate::server::sink::sqlite::file;
use crate::server::{ServerEvent, StoreReports};
use rusqlite::Connection;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::SystemTime;

pub use rows::{PendingRow, Settlement, Unreadable};
pub(crate) use rows::{RowValues, Taken, Taking};

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
    settled_at TEXT,
    mirror_ack_code TEXT,
    mirror_ack BLOB,
    mirror_outcome TEXT
);
CREATE INDEX IF NOT EXISTS queue_status ON queue (status, id);";
/// Every column the relay writes or reads.
const COLUMNS: [&str; 16] = [
    "id",
    "received_at",
    "peer",
    "msh3",
    "msh4",
    "control_id",
    "msh7",
    "message_type",
    "bytes",
    "payload",
    "status",
    "ack_code",
    "ack",
    "attempts",
    "forwarded_at",
    "settled_at",
];

/// The columns `--record` keeps a shadow's answer in, added to a file made before them.
const MIRROR_COLUMNS: [(&str, &str); 3] = [
    ("mirror_ack_code", "TEXT"),
    ("mirror_ack", "BLOB"),
    ("mirror_outcome", "TEXT"),
];

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
    /// A dead letter the forwarder could not read (a payload that is not a blob, attempts not
    /// a number): set aside, never sent, so the rows behind it go on.
    Unreadable,
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
            Status::Unreadable => "unreadable",
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

/// The open file and which opening of the path it is.
struct Open {
    db: Connection,
    id: file::Identity,
    generation: u64,
}

/// The open file, shared by the committing connections, the forwarder and the recorder.
#[derive(Clone)]
pub struct Store {
    open: Arc<Mutex<Open>>,
    file: PathBuf,
    reports: Arc<OnceLock<StoreReports>>,
}

fn stamp(at: SystemTime) -> String {
    Utc::from_system(at).rfc3339()
}

/// Open `file` as a queue file: no link, WAL, the table made if absent and checked if not.
fn open_file(file: &Path) -> Result<(Connection, file::Identity), String> {
    let (db, id) = file::open(file)?;
    db.execute_batch(SCHEMA).map_err(|e| e.to_string())?;
    let present: Vec<String> = db
        .prepare("SELECT name FROM pragma_table_info('queue')")
        .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
        .map_err(|e| e.to_string())?;
    if let Some(column) = COLUMNS.iter().find(|c| !present.iter().any(|p| p == *c)) {
        return Err(format!(
            "table `queue` has no column `{column}`: not a relay queue (give another file)"
        ));
    }
    for (column, kind) in MIRROR_COLUMNS {
        if !present.iter().any(|p| p == column) {
            db.execute_batch(&format!("ALTER TABLE queue ADD COLUMN {column} {kind}"))
                .map_err(|e| format!("adding column `{column}` to table `queue`: {e}"))?;
        }
    }
    Ok((db, id))
}

impl Store {
    /// Open (or create) `file` with WAL and full synchronous commits.
    pub fn open(file: &Path) -> Result<Store, StoreError> {
        let (db, id) = open_file(file).map_err(|what| StoreError {
            file: file.to_path_buf(),
            what,
        })?;
        Ok(Store {
            open: Arc::new(Mutex::new(Open {
                db,
                id,
                generation: 0,
            })),
            file: file.to_path_buf(),
            reports: Arc::default(),
        })
    }

    /// The file the store was opened from.
    pub fn file(&self) -> &Path {
        &self.file
    }

    /// Where store errors are said from now on (the server's events).
    pub(crate) fn report_to(&self, reports: StoreReports) {
        let _ = self.reports.set(reports);
    }

    /// Say `detail` as a `store_error` event, when anyone listens.
    pub async fn report(&self, detail: String) {
        if let Some(reports) = self.reports.get() {
            reports.send(ServerEvent::StoreError { detail }).await;
        }
    }

    /// Run `f` on the open file off the runtime's workers.
    async fn with<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Open, &Path) -> Result<T, String> + Send + 'static,
    ) -> Result<T, String> {
        let open = Arc::clone(&self.open);
        let file = self.file.clone();
        tokio::task::spawn_blocking(move || {
            let mut open = open.lock().unwrap_or_else(|p| p.into_inner());
            f(&mut open, &file)
        })
        .await
        .unwrap_or_else(|e| Err(format!("store task: {e}")))
    }
}

impl Open {
    /// Whether the path still names the open file; when not, the file is checkpointed and let
    /// go (its rows stay in it), the path opened anew as the next generation, and why is
    /// returned for the group that noticed.
    fn check(&mut self, file: &Path) -> Result<(), String> {
        if file::is_at(file, self.id) {
            return Ok(());
        }
        let path = file.display();
        let pending: i64 = self
            .db
            .query_row(
                "SELECT COUNT(*) FROM queue WHERE status = 'pending'",
                [],
                |r| r.get(0),
            )
            .unwrap_or(-1);
        file::let_go(&mut self.db, file)?;
        let left = match pending {
            n if n >= 0 => format!("{n} pending rows stay in that file, not forwarded from it"),
            _ => "its pending rows stay in that file, not forwarded from it".into(),
        };
        match open_file(file) {
            Ok((db, id)) => {
                (self.db, self.id) = (db, id);
                self.generation += 1;
                Err(format!(
                    "{path} was moved, replaced or deleted ({left}); opened the path anew for the next messages"
                ))
            }
            Err(e) => Err(format!(
                "{path} was moved, replaced or deleted ({left}), and opening the path anew failed: {e}"
            )),
        }
    }
}
