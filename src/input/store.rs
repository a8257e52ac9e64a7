//! Messages read back from a store: table `messages` of a receiver's SQLite file or table
//! `queue` of a relay's, in arrival order, filtered by arrival time, MSH-9 and MSH-10. Each
//! message is named by its row (`rx.db#17`) and keeps its arrival time, for replay at the
//! recorded pace.

use super::message::Message;
use rusqlite::{Connection, OpenFlags};
use std::path::Path;
use std::sync::Arc;
use std::time::SystemTime;

/// Which rows to read. Times compare as instants; the type matches by leading components
/// (`ADT^A08` matches `ADT^A08^ADT_A01`, not `ADT^A081`).
#[derive(Debug, Clone, Default)]
pub struct StoreFilter {
    pub since: Option<SystemTime>,
    pub until: Option<SystemTime>,
    pub message_type: Option<String>,
    pub control_id: Option<String>,
}

/// One stored message and when it arrived.
#[derive(Debug, Clone)]
pub struct Stored {
    pub message: Message,
    pub received_at: Option<SystemTime>,
}

/// The store could not be read. Names the file and says what to do.
#[derive(Debug, thiserror::Error)]
#[error("{file}: {what}")]
pub struct StoreReadError {
    pub file: String,
    pub what: String,
}

/// Read the matching messages of `file` in arrival order (by row id).
pub fn read_store(file: &Path, filter: &StoreFilter) -> Result<Vec<Stored>, StoreReadError> {
    let name = file.display().to_string();
    let fail = |what: String| StoreReadError {
        file: name.clone(),
        what,
    };
    if !file.is_file() {
        return Err(fail(
            "no such file: give a `listen --sqlite` or `relay` store".into(),
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
        "SELECT id, received_at, control_id, message_type, payload FROM {table} ORDER BY id"
    );
    let mut query = db.prepare(&sql).map_err(|e| fail(e.to_string()))?;
    let source: Arc<str> = Arc::from(
        file.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or(name.clone()),
    );
    let text = |r: &rusqlite::Row<'_>, i| -> rusqlite::Result<Option<String>> {
        Ok(match r.get_ref(i)? {
            rusqlite::types::ValueRef::Text(t) | rusqlite::types::ValueRef::Blob(t) => {
                Some(String::from_utf8_lossy(t).into_owned())
            }
            _ => None,
        })
    };
    let rows = query
        .query_map([], |r| {
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
        .map_err(|e| fail(e.to_string()))?;
    let mut out = Vec::new();
    for row in rows {
        let (id, received, control_id, message_type, payload) =
            row.map_err(|e| fail(e.to_string()))?;
        let received_at = received
            .as_deref()
            .and_then(|t| humantime::parse_rfc3339_weak(t.trim_end_matches('Z')).ok());
        if !filter.admits(received_at, control_id.as_deref(), message_type.as_deref()) {
            continue;
        }
        out.push(Stored {
            message: Message {
                source: Arc::clone(&source),
                index: id.max(0) as u64,
                line: 1,
                offset: 0,
                payload: bytes::Bytes::from(payload),
                original_control_id: None,
            },
            received_at,
        });
    }
    Ok(out)
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
}
