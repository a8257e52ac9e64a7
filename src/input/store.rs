//! Messages read back from a store: table `messages` of a receiver's SQLite file or table
//! `queue` of a relay's, in arrival order, filtered by arrival time, MSH-9, MSH-10, upstream
//! status and field filters. Each row is checked exactly as a file holding its payload is (`row`), and named by
//! its row (`rx.db#17`); it keeps its arrival time, for replay at the recorded pace. A page of
//! rows' columns is read at a time and each payload only when its message is taken, so a store
//! of any size, with rows of any size, replays in bounded memory.

mod filter;
mod row;

pub use filter::StoreFilter;

use super::error::InputError;
use super::message::{Message, SplitOptions};
use filter::Columns;
use row::Kind;
use rusqlite::{Connection, OpenFlags};
use std::collections::VecDeque;
use std::path::Path;
use std::sync::Arc;
use std::time::SystemTime;

/// Rows whose columns are read from the file at once.
pub const PAGE_ROWS: usize = 256;

/// A payload this large at most comes with its row's columns; a larger one is read when its
/// message is taken, so a page holds at most [`PAGE_ROWS`] of these.
const INLINE_PAYLOAD: i64 = 16 * 1024;

/// One stored message and when it arrived.
#[derive(Debug, Clone)]
pub struct Stored {
    /// The message, named by its row (`rx.db#17`).
    pub message: Message,
    /// When the store recorded its arrival; `None` when the row's time cannot be read.
    pub received_at: Option<SystemTime>,
}

/// The store could not be read. Names the file and says what to do.
#[derive(Debug, thiserror::Error)]
#[error("{file}: {what}")]
pub struct StoreReadError {
    /// The store's file, as shown to the user.
    pub file: String,
    /// What went wrong and what to do about it.
    pub what: String,
}

impl From<StoreReadError> for InputError {
    fn from(e: StoreReadError) -> InputError {
        InputError::Read {
            name: e.file,
            error: std::io::Error::other(e.what),
        }
    }
}

/// A row's columns as a page holds them, its payload not yet read.
#[derive(Debug)]
struct Row {
    id: i64,
    received_at: Option<SystemTime>,
    kind: Kind,
    /// The payload, when it is small enough to come with the page.
    payload: Option<Vec<u8>>,
}

/// The matching messages of a store in arrival order, read a page of rows at a time: at most
/// [`PAGE_ROWS`] rows' columns and one payload are held at once.
pub struct StoreRows {
    db: Connection,
    table: &'static str,
    sql: String,
    source: Arc<str>,
    name: String,
    filter: StoreFilter,
    options: SplitOptions,
    /// The last row id read.
    after: i64,
    /// Rows after this one are left out.
    last: i64,
    page: VecDeque<Row>,
    done: bool,
    /// Rows the filter's `select` left out so far.
    filtered: u64,
}

impl std::fmt::Debug for StoreRows {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoreRows")
            .field("file", &self.name)
            .field("after", &self.after)
            .finish()
    }
}

impl StoreRows {
    /// Open `file` read-only and find its table; nothing is read yet. Each payload is split
    /// and checked by `options` when its message is taken.
    pub fn open(
        file: &Path,
        filter: StoreFilter,
        options: SplitOptions,
    ) -> Result<StoreRows, StoreReadError> {
        let name = file.display().to_string();
        let fail = |what: String| StoreReadError {
            file: name.clone(),
            what,
        };
        if !file.is_file() {
            return Err(fail(
                "no such file: give the SQLite file of a receiver or of a relay's queue".into(),
            ));
        }
        let db = Connection::open_with_flags(file, OpenFlags::SQLITE_OPEN_READ_ONLY)
            .map_err(|e| fail(format!("not a readable SQLite database: {e}")))?;
        let tables: Vec<String> = db
            .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
            .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
            .map_err(|e| fail(format!("not a readable SQLite database: {e}")))?;
        let table = ["messages", "queue"]
            .into_iter()
            .find(|t| tables.iter().any(|n| n == t))
            .ok_or_else(|| {
                fail("no table `messages` or `queue`: not a listen or relay store".into())
            })?;
        let keeps_status = table == "queue";
        if !filter.statuses.is_empty() && !keeps_status {
            return Err(fail(
                "a receiver's store (table `messages`) keeps no upstream status: only a \
                 relay's queue or record can be chosen by status"
                    .into(),
            ));
        }
        let status = if keeps_status { "status" } else { "NULL" };
        // typeof() and octet_length() are answered from the row's header: a payload is read
        // only when it is small.
        let sql = format!(
            "SELECT id, received_at, control_id, message_type, {status}, typeof(payload),
                    octet_length(payload),
                    CASE WHEN octet_length(payload) <= {INLINE_PAYLOAD} THEN payload END
             FROM {table} WHERE id > ?1 AND id <= ?2 ORDER BY id LIMIT {PAGE_ROWS}"
        );
        db.prepare_cached(&sql).map_err(|e| fail(e.to_string()))?;
        let source: Arc<str> = Arc::from(
            file.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or(name.clone()),
        );
        Ok(StoreRows {
            db,
            table,
            sql,
            source,
            name,
            filter,
            options,
            after: i64::MIN,
            last: i64::MAX,
            page: VecDeque::new(),
            done: false,
            filtered: 0,
        })
    }

    /// Rows the filter's `select` left out so far.
    pub fn filtered(&self) -> u64 {
        self.filtered
    }

    /// Read no row after `last`: a second pass reads the rows the first one checked, not the
    /// ones a live store took in meanwhile.
    pub fn upto(mut self, last: i64) -> StoreRows {
        self.last = last;
        self
    }

    /// Rows whose columns are read from the file and not yet handed out.
    pub fn buffered(&self) -> usize {
        self.page.len()
    }

    /// The largest row id in the file: the widest label a replay shows, and where a pass that
    /// starts now ends.
    pub fn last_id(&self) -> Option<i64> {
        let sql = format!("SELECT MAX(id) FROM {}", self.table);
        self.db
            .query_row(&sql, [], |r| r.get::<_, Option<i64>>(0))
            .ok()
            .flatten()
    }

    /// Whether the store keeps each row's upstream status (a relay's), so rows can be chosen
    /// by it.
    pub fn keeps_status(&self) -> bool {
        self.table == "queue"
    }

    /// The file as the user named it.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The matching rows' ids and arrival times, in order, without reading any payload.
    pub fn arrivals(
        mut self,
    ) -> impl Iterator<Item = Result<(u64, Option<SystemTime>), InputError>> {
        std::iter::from_fn(move || {
            self.next_row()
                .map(|row| row.map(|r| (r.id.max(0) as u64, r.received_at)))
        })
    }

    /// The next matching row's columns, reading a page when none is held.
    fn next_row(&mut self) -> Option<Result<Row, InputError>> {
        loop {
            if let Some(row) = self.page.pop_front() {
                return Some(Ok(row));
            }
            if self.done {
                return None;
            }
            match self.fill() {
                Ok(true) => {}
                Ok(false) => self.done = true,
                Err(e) => {
                    self.done = true;
                    return Some(Err(e.into()));
                }
            }
        }
    }

    /// Read the next page of rows' columns; false when there are no more.
    fn fill(&mut self) -> Result<bool, StoreReadError> {
        let fail = |e: rusqlite::Error| StoreReadError {
            file: self.name.clone(),
            what: e.to_string(),
        };
        let mut query = self.db.prepare_cached(&self.sql).map_err(fail)?;
        let text = |r: &rusqlite::Row<'_>, i| -> rusqlite::Result<Option<String>> {
            Ok(match r.get_ref(i)? {
                rusqlite::types::ValueRef::Text(t) | rusqlite::types::ValueRef::Blob(t) => {
                    Some(String::from_utf8_lossy(t).into_owned())
                }
                _ => None,
            })
        };
        let mut rows = query.query([self.after, self.last]).map_err(fail)?;
        let mut read = false;
        while let Some(r) = rows.next().map_err(fail)? {
            read = true;
            let id: i64 = r.get(0).map_err(fail)?;
            self.after = id;
            let received = text(r, 1).map_err(fail)?;
            let (control_id, message_type) = (text(r, 2).map_err(fail)?, text(r, 3).map_err(fail)?);
            let status = text(r, 4).map_err(fail)?;
            let received_at = received
                .as_deref()
                .and_then(|t| humantime::parse_rfc3339_weak(t.trim_end_matches('Z')).ok());
            let columns = Columns {
                received_at,
                control_id: control_id.as_deref(),
                message_type: message_type.as_deref(),
                status: status.as_deref(),
            };
            if !self.filter.admits(columns) {
                continue;
            }
            let type_name: String = r.get(5).map_err(fail)?;
            let kind = Kind::of(&type_name, r.get(6).map_err(fail)?);
            let payload = match r.get_ref(7).map_err(fail)? {
                rusqlite::types::ValueRef::Blob(b) | rusqlite::types::ValueRef::Text(b)
                    if matches!(kind, Kind::Bytes(_)) =>
                {
                    Some(b.to_vec())
                }
                _ => None,
            };
            self.page.push_back(Row {
                id,
                received_at,
                kind,
                payload,
            });
        }
        Ok(read)
    }

    /// The message of `row`: its payload read, split and checked now.
    fn stored(&self, row: Row) -> Result<Stored, InputError> {
        let name = format!("{}#{}", self.source, row.id);
        let at = row::At {
            db: &self.db,
            table: self.table,
            id: row.id,
            name: &name,
        };
        let mut message = match row.payload {
            Some(payload) => row::one_message(&name, &payload[..], self.options)?,
            None => row::message(&at, row.kind, self.options)?,
        };
        message.source = Arc::clone(&self.source);
        message.index = row.id.max(0) as u64;
        Ok(Stored {
            message,
            received_at: row.received_at,
        })
    }
}

impl Iterator for StoreRows {
    type Item = Result<Stored, InputError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let stored = self.next_row()?.and_then(|row| self.stored(row));
            // Only a payload answers the filter's `select`: it is read first.
            if let Ok(row) = &stored {
                if !self.filter.select.admits(&row.message.payload) {
                    self.filtered += 1;
                    continue;
                }
            }
            return Some(stored);
        }
    }
}

#[cfg(test)]
mod tests;
