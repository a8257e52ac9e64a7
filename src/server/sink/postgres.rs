//! The PostgreSQL sink: the `messages` table of the SQLite sink with PostgreSQL types, shared by
//! every listener pointed at the database. One writer task commits everything queued when it
//! runs in one transaction (synchronous commit), and each message's ACK waits for that COMMIT.
//! With de-duplication, a unique index on (msh3, msh4, control_id, msh7) is the memory of every
//! listener at once (insert-or-ignore).
//!
//! The answers stay true across the network and the server's crashes: while the database cannot
//! be reached every message is answered negatively (nothing was kept) and the writer reconnects
//! with backoff; each row's INSERT says whether it stored the row (a trigger or a rule may store
//! nothing, and is answered negatively); a COMMIT whose reply never came (the link dropped after
//! it was sent) is settled on a new connection by looking the rows themselves up, once the old
//! transaction is over, before any answer.
//!
//! At start the catalog is read and only what is missing is created, so a role without CREATE
//! works on a prepared database; a role that cannot INSERT or SELECT is refused at once.

mod catalog;
mod cells;
mod commit;
pub(crate) mod conninfo;
mod copy;
mod failure;
mod inserts;
#[cfg(feature = "sqlite")]
mod rows;
mod settle;
mod tls;
mod writer;

use super::groups::GroupCounter;
use super::{CommitGroups, Inbound, Sink, SinkFuture, SinkResult};
use crate::cause::Cause;
use crate::server::StoreReports;
use conninfo::ConnInfo;
pub use conninfo::ConnInfoError;
pub use failure::Failure;
#[cfg(feature = "sqlite")]
pub use rows::PostgresRows;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};
pub(crate) use tls::connector as tls_connector;
use tokio::sync::{mpsc, oneshot};
use tokio_postgres::Client;
use tokio_postgres_rustls::MakeRustlsConnect;

/// Messages queued for the writer at most; beyond, committers wait (backpressure).
const QUEUE: usize = 1024;
/// Rows in one transaction at most.
const GROUP_ROWS: usize = 4096;
/// A commit group that takes longer is abandoned (and, when its COMMIT was sent, settled).
const GROUP_TIMEOUT: Duration = Duration::from_secs(30);
/// Reconnection backoff: from the first to the last, doubling.
const BACKOFF_FIRST: Duration = Duration::from_millis(100);
const BACKOFF_MAX: Duration = Duration::from_secs(2);
/// Key fields longer than this are stored but not de-duplicated: a B-tree entry has a size
/// limit, and one hostile header must not fail the transaction it shares with others.
const KEY_FIELD_MAX: usize = 512;
/// Deadlocks between listeners inserting the same keys in different orders: retried this often.
const RETRIES: usize = 3;

/// The database could not be used at start. Never holds the password.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PostgresError {
    #[error(transparent)]
    /// The connection string cannot be used.
    ConnInfo(#[from] ConnInfoError),
    #[error("TLS settings: {0}")]
    /// The TLS settings cannot be used, as described.
    Tls(String),
    /// Connecting, or creating the table, failed.
    #[error("{target}: {}", .failure.what)]
    Connect {
        /// The server connected to (host and port, never the password).
        target: String,
        /// What failed.
        failure: Failure,
    },
    /// Table `messages` lacks a column the listener writes.
    #[error("{target}: table messages has no column {column}")]
    Schema {
        /// The server connected to.
        target: String,
        /// The missing column.
        column: &'static str,
    },
    /// The role may not do what the listener needs on table `messages`.
    #[error("{target}: the role lacks the {privilege} privilege on table messages")]
    Privilege {
        /// The server connected to.
        target: String,
        /// `INSERT` or `SELECT`.
        privilege: &'static str,
    },
}

impl PostgresError {
    /// Whether trying later may work: the server could not be reached or was not ready, as
    /// opposed to settings it refused (authentication, a missing database, grants, TLS) or a
    /// connection string that is not one.
    pub fn is_transient(&self) -> bool {
        matches!(self, PostgresError::Connect { failure, .. } if failure.transient)
    }

    /// The cause, where one names the failure (`connection-refused`, `tls-verify`, ...).
    pub fn cause(&self) -> Option<Cause> {
        match self {
            PostgresError::Connect { failure, .. } => failure.cause,
            _ => None,
        }
    }
}

/// Writes messages into a PostgreSQL table.
pub struct PostgresSink {
    jobs: mpsc::Sender<Job>,
    dedupe: bool,
    reports: Reports,
    groups: Arc<GroupCounter>,
}

/// Where the writer says the link was lost and is back, once a run has said where.
type Reports = Arc<Mutex<Option<StoreReports>>>;

struct Row {
    /// When it arrived: with the payload and the row's id, what finds the row again.
    received_at: SystemTime,
    peer: String,
    fields: [Option<String>; 5],
    payload: bytes::Bytes,
    dedupe: bool,
}

type Job = super::groups::Job<Row>;

impl super::groups::Payload for Row {
    fn payload_len(&self) -> usize {
        self.payload.len()
    }
}

/// One live connection and its prepared statements; `closed` fires, with the reason, when the
/// connection ends.
struct Conn {
    client: Client,
    statements: catalog::Statements,
    closed: oneshot::Receiver<String>,
    /// Whether groups may go in by COPY: cleared, for the connection's life, once the table is
    /// found to have a trigger or a rule of its own.
    copying: AtomicBool,
}

impl PostgresSink {
    /// Resolve `url` with the `PG*` environment and the password file, connect, create the table
    /// (and with `dedupe` the unique index) if absent, and start the writer.
    pub async fn open(url: &str, dedupe: bool) -> Result<PostgresSink, PostgresError> {
        let info = conninfo::resolve(url, &|k| std::env::var(k).ok())?;
        let home = std::env::var_os("HOME").map(PathBuf::from);
        let tls = tls::connector(&info, home.as_deref()).map_err(PostgresError::Tls)?;
        let target = || info.describe();
        let refused = |failure| PostgresError::Connect {
            target: target(),
            failure,
        };
        let (client, closed) = link(&info, &tls).await.map_err(refused)?;
        catalog::prepare(&client, dedupe)
            .await
            .map_err(|e| e.at(target()))?;
        let conn = with_statements(client, closed, dedupe)
            .await
            .map_err(refused)?;
        let (jobs, rx) = mpsc::channel(QUEUE);
        let reports = Reports::default();
        let groups = Arc::new(GroupCounter::default());
        tokio::spawn(writer::run(
            info,
            tls,
            dedupe,
            conn,
            rx,
            reports.clone(),
            groups.clone(),
        ));
        Ok(PostgresSink {
            jobs,
            dedupe,
            reports,
            groups,
        })
    }

    fn row(&self, m: &Inbound) -> Row {
        let raw = [
            m.msh3(),
            m.msh4(),
            m.control_id(),
            m.msh7(),
            m.message_type(),
        ];
        let key = m.dedupe_key();
        // Text columns hold UTF-8 without NUL; anything else is stored lossily and, so that a
        // lossy copy can never make two messages one, not de-duplicated.
        let exact = raw.iter().all(|f| {
            f.is_none_or(|b| std::str::from_utf8(b).is_ok() && !b.contains(&0))
                && f.is_none_or(|b| b.len() <= KEY_FIELD_MAX)
        });
        let dedupe = self.dedupe && key.is_some() && exact;
        let text =
            |b: Option<&[u8]>| b.map(|b| String::from_utf8_lossy(b).replace('\0', "\u{fffd}"));
        let mut fields = raw.map(text);
        if dedupe {
            // The key as de-duplication defines it: an absent field is empty (NULLs never match).
            for field in fields.iter_mut().take(4) {
                field.get_or_insert_with(String::new);
            }
        }
        Row {
            received_at: m.received_at,
            peer: m.peer.to_string(),
            fields,
            payload: m.payload.clone(),
            dedupe,
        }
    }
}

/// Connect and prepare the statements (the insert as `dedupe` needs it).
async fn connect(info: &ConnInfo, tls: &MakeRustlsConnect, dedupe: bool) -> Result<Conn, Failure> {
    let (client, closed) = link(info, tls).await?;
    with_statements(client, closed, dedupe).await
}

/// Connect; the receiver fires, with the reason, when the connection ends.
async fn link(
    info: &ConnInfo,
    tls: &MakeRustlsConnect,
) -> Result<(Client, oneshot::Receiver<String>), Failure> {
    let (client, connection) = info
        .config
        .connect(tls.clone())
        .await
        .map_err(|e| failure::of(&e))?;
    let (ended, closed) = oneshot::channel();
    tokio::spawn(async move {
        // Its end, with the reason, wakes the writer even when no message is waiting.
        let why = match connection.await {
            Ok(()) => "the server closed the connection".to_string(),
            Err(e) => failure::of(&e).what,
        };
        let _ = ended.send(why);
    });
    Ok((client, closed))
}

async fn with_statements(
    client: Client,
    closed: oneshot::Receiver<String>,
    dedupe: bool,
) -> Result<Conn, Failure> {
    let statements = catalog::Statements::prepare(&client, dedupe)
        .await
        .map_err(|e| {
            let f = failure::of(&e);
            Failure {
                what: format!("table messages: {}", f.what),
                ..f
            }
        })?;
    Ok(Conn {
        client,
        statements,
        closed,
        copying: AtomicBool::new(true),
    })
}

impl Sink for PostgresSink {
    fn commit<'a>(&'a self, message: &'a Inbound) -> SinkFuture<'a, SinkResult> {
        super::commit_as_batch(self, message, "postgres: no result")
    }

    fn commit_batch<'a>(&'a self, messages: &'a [Inbound]) -> SinkFuture<'a, Vec<SinkResult>> {
        Box::pin(async move {
            let rows = messages.iter().map(|m| self.row(m)).collect();
            super::groups::submit(&self.jobs, rows, "postgres: the writer stopped").await
        })
    }

    fn report_to(&self, reports: StoreReports) {
        *self.reports.lock().unwrap_or_else(|p| p.into_inner()) = Some(reports);
    }

    fn commit_groups(&self) -> Option<CommitGroups> {
        Some(self.groups.snapshot())
    }
}
