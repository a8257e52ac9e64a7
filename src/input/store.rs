//! Messages read back from a store: table `messages` of a receiver's SQLite file or table
//! `queue` of a relay's, in arrival order, filtered by arrival time, MSH-9 and MSH-10. Each
//! message is named by its row (`rx.db#17`) and keeps its arrival time, for replay at the
//! recorded pace. Rows are read a page at a time, so a store of any size replays in bounded
//! memory.

use super::message::Message;
use rusqlite::{Connection, OpenFlags};
use std::collections::VecDeque;
use std::path::Path;
use std::sync::Arc;
use std::time::SystemTime;

/// Rows read from the file at once.
pub const PAGE_ROWS: usize = 256;

/// Which rows to read. Times compare as instants; the type matches by leading components
/// (`ADT^A08` matches `ADT^A08^ADT_A01`, not `ADT^A081`).
#[derive(Debug, Clone, Default)]
pub struct StoreFilter {
    /// Only messages that arrived at or after this instant; rows without a readable arrival
    /// time are then left out.
    pub since: Option<SystemTime>,
    /// Only messages that arrived before this instant; rows without a readable arrival time
    /// are then left out.
    pub until: Option<SystemTime>,
    /// Only messages whose MSH-9 is this type or starts with it followed by more components.
    pub message_type: Option<String>,
    /// Only messages whose MSH-10 is exactly this.
    pub control_id: Option<String>,
    /// Only messages these admit; the others are counted ([`StoreRows::filtered`]).
    pub select: crate::hl7::Filters,
}

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

/// Read the matching messages of `file` in arrival order (by row id), all at once.
pub fn read_store(file: &Path, filter: &StoreFilter) -> Result<Vec<Stored>, StoreReadError> {
    StoreRows::open(file, filter.clone())?.collect()
}

/// The matching messages of a store in arrival order, read a page of rows at a time: at most
/// [`PAGE_ROWS`] rows are held at once.
pub struct StoreRows {
    db: Connection,
    table: &'static str,
    sql: String,
    source: Arc<str>,
    name: String,
    filter: StoreFilter,
    /// The last row id read.
    after: i64,
    page: VecDeque<Stored>,
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
    /// Open `file` read-only and find its table; nothing is read yet.
    pub fn open(file: &Path, filter: StoreFilter) -> Result<StoreRows, StoreReadError> {
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
        let sql = format!(
            "SELECT id, received_at, control_id, message_type, payload FROM {table}
             WHERE id > ?1 ORDER BY id LIMIT {PAGE_ROWS}"
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
            after: i64::MIN,
            page: VecDeque::new(),
            done: false,
            filtered: 0,
        })
    }

    /// Rows the filter's `select` left out so far.
    pub fn filtered(&self) -> u64 {
        self.filtered
    }

    /// Rows read from the file and not yet handed out.
    pub fn buffered(&self) -> usize {
        self.page.len()
    }

    /// The largest row id in the file: the widest label a replay shows.
    pub fn last_id(&self) -> Option<i64> {
        let sql = format!("SELECT MAX(id) FROM {}", self.table);
        self.db
            .query_row(&sql, [], |r| r.get::<_, Option<i64>>(0))
            .ok()
            .flatten()
    }

    /// The file as the user named it.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Read the next page of rows; false when there are no more.
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
        let rows = query
            .query_map([self.after], |r| {
                let payload = match r.get_ref(4)? {
                    rusqlite::types::ValueRef::Blob(b) | rusqlite::types::ValueRef::Text(b) => {
                        b.to_vec()
                    }
                    _ => Vec::new(),
                };
                Ok((
                    r.get::<_, i64>(0)?,
                    text(r, 1)?,
                    text(r, 2)?,
                    text(r, 3)?,
                    payload,
                ))
            })
            .map_err(fail)?;
        let mut read = false;
        for row in rows {
            let (id, received, control_id, message_type, payload) = row.map_err(fail)?;
            read = true;
            self.after = id;
            let received_at = received
                .as_deref()
                .and_then(|t| humantime::parse_rfc3339_weak(t.trim_end_matches('Z')).ok());
            if !self
                .filter
                .admits(received_at, control_id.as_deref(), message_type.as_deref())
            {
                continue;
            }
            if !self.filter.select.admits(&payload) {
                self.filtered += 1;
                continue;
            }
            self.page.push_back(Stored {
                message: Message {
                    source: Arc::clone(&self.source),
                    index: id.max(0) as u64,
                    line: 1,
                    offset: 0,
                    payload: bytes::Bytes::from(payload),
                    original_control_id: None,
                },
                received_at,
            });
        }
        Ok(read)
    }
}

impl Iterator for StoreRows {
    type Item = Result<Stored, StoreReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(stored) = self.page.pop_front() {
                return Some(Ok(stored));
            }
            if self.done {
                return None;
            }
            match self.fill() {
                Ok(true) => {}
                Ok(false) => self.done = true,
                Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
            }
        }
    }
}

impl StoreFilter {
    fn admits(
        &self,
        received_at: Option<SystemTime>,
        control_id: Option<&str>,
        message_type: Option<&str>,
    ) -> bool {
        let in_time = match received_at {
            Some(at) => {
                self.since.is_none_or(|since| at >= since) && self.until.is_none_or(|u| at < u)
            }
            None => self.since.is_none() && self.until.is_none(),
        };
        let typed = match (&self.message_type, message_type) {
            (None, _) => true,
            (Some(want), Some(have)) => {
                have == want
                    || have
                        .strip_prefix(want.as_str())
                        .is_some_and(|r| r.starts_with('^'))
            }
            (Some(_), None) => false,
        };
        let named = self
            .control_id
            .as_deref()
            .is_none_or(|want| control_id == Some(want));
        in_time && typed && named
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_type_matches_by_leading_components() {
        let f = StoreFilter {
            message_type: Some("ADT^A08".into()),
            ..StoreFilter::default()
        };
        assert!(f.admits(None, None, Some("ADT^A08")));
        assert!(f.admits(None, None, Some("ADT^A08^ADT_A01")));
        assert!(!f.admits(None, None, Some("ADT^A081")));
        assert!(!f.admits(None, None, Some("ADT^A01")));
    }

    #[test]
    fn rows_are_read_a_page_at_a_time_in_arrival_order() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("rx.db");
        let db = Connection::open(&file).unwrap();
        db.execute_batch(
            "CREATE TABLE messages (id INTEGER PRIMARY KEY, received_at TEXT NOT NULL,
             control_id TEXT, message_type TEXT, payload BLOB NOT NULL)",
        )
        .unwrap();
        let rows = PAGE_ROWS * 3 + 7;
        for i in 0..rows {
            let kind = if i % 2 == 0 { "ADT^A01" } else { "ORU^R01" };
            db.execute(
                "INSERT INTO messages (received_at, control_id, message_type, payload)
                 VALUES ('2024-01-31T08:00:00Z', ?1, ?2, 'MSH|')",
                rusqlite::params![format!("C{i}"), kind],
            )
            .unwrap();
        }
        let filter = StoreFilter {
            message_type: Some("ADT".into()),
            ..StoreFilter::default()
        };
        let mut read = StoreRows::open(&file, filter).unwrap();
        assert_eq!(read.last_id(), Some(rows as i64));
        let mut ids = Vec::new();
        while let Some(row) = read.next() {
            assert!(read.buffered() < PAGE_ROWS, "{} rows held", read.buffered());
            ids.push(row.unwrap().message.index);
        }
        let expected: Vec<u64> = (1..=rows as u64).step_by(2).collect();
        assert_eq!(ids, expected);
    }
}
