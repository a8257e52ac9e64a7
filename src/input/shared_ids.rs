//! Control IDs shared by several messages, counted in a temporary SQLite file instead of in
//! memory: a dry run over millions of messages holds a page cache, not a map of every ID. Counts
//! as [`ControlIdCount`](super::ControlIdCount) does (the first MSH-10 of each message, the
//! first few messages named, IDs in the order they first came).

use super::control_id::{counted_control_id, NAMED};
use super::message::Message;
use super::SharedControlId;
use rusqlite::Connection;

/// Messages written to the file in one transaction, at most.
const PER_TRANSACTION: u32 = 50_000;

/// The control IDs of the messages it is shown, kept in a temporary file deleted when dropped.
pub struct SharedControlIds {
    db: Connection,
    /// Messages written since the transaction began.
    pending: u32,
}

impl std::fmt::Debug for SharedControlIds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedControlIds").finish_non_exhaustive()
    }
}

fn io(e: rusqlite::Error) -> std::io::Error {
    std::io::Error::other(e)
}

impl SharedControlIds {
    /// A fresh count in a temporary file of the system's temporary directory.
    pub fn new() -> std::io::Result<SharedControlIds> {
        // An empty name: a private file SQLite deletes when the connection closes.
        let db = Connection::open("").map_err(io)?;
        db.execute_batch(
            "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA cache_size = -2048;
             PRAGMA temp_store = FILE;
             CREATE TABLE ids (control_id BLOB NOT NULL, label TEXT NOT NULL);
             BEGIN;",
        )
        .map_err(io)?;
        Ok(SharedControlIds { db, pending: 0 })
    }

    /// Count the MSH-10 of `message`'s first MSH segment; an empty or absent one is not counted.
    pub fn observe(&mut self, message: &Message) -> std::io::Result<()> {
        let Some(id) = counted_control_id(&message.payload) else {
            return Ok(());
        };
        self.db
            .prepare_cached("INSERT INTO ids (control_id, label) VALUES (?1, ?2)")
            .and_then(|mut insert| insert.execute(rusqlite::params![id, message.label()]))
            .map_err(io)?;
        self.pending += 1;
        if self.pending == PER_TRANSACTION {
            self.pending = 0;
            self.db.execute_batch("COMMIT; BEGIN;").map_err(io)?;
        }
        Ok(())
    }

    /// Each ID more than one message had, in the order they first came, handed to `each` as it
    /// is read from the file.
    pub fn shared(self, mut each: impl FnMut(SharedControlId)) -> std::io::Result<()> {
        self.db.execute_batch("COMMIT;").map_err(io)?;
        let mut query = self
            .db
            .prepare(&format!(
                "SELECT control_id, n, label FROM (
                     SELECT control_id, label,
                         count(*) OVER byid AS n,
                         min(rowid) OVER byid AS first,
                         row_number() OVER (byid ORDER BY rowid) AS k
                     FROM ids WINDOW byid AS (PARTITION BY control_id))
                 WHERE n > 1 AND k <= {NAMED} ORDER BY first, k"
            ))
            .map_err(io)?;
        let mut rows = query.query([]).map_err(io)?;
        let mut current: Option<SharedControlId> = None;
        while let Some(row) = rows.next().map_err(io)? {
            let id: Vec<u8> = row.get(0).map_err(io)?;
            let id = String::from_utf8_lossy(&id).into_owned();
            let (messages, label): (i64, String) =
                (row.get(1).map_err(io)?, row.get(2).map_err(io)?);
            match current.as_mut() {
                Some(shared) if shared.control_id == id => shared.first.push(label),
                _ => {
                    if let Some(done) = current.take() {
                        each(done);
                    }
                    current = Some(SharedControlId {
                        control_id: id,
                        messages: messages as u64,
                        first: vec![label],
                    });
                }
            }
        }
        if let Some(done) = current {
            each(done);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::ControlIdCount;
    use super::*;
    use bytes::Bytes;

    fn message(index: u64, id: &str) -> Message {
        Message {
            source: "a.hl7".into(),
            index,
            line: 1,
            offset: 0,
            payload: Bytes::from(format!("MSH|^~\\&|A|B|C|D|2024||ADT^A01|{id}|P\r")),
            original_control_id: None,
        }
    }

    proptest::proptest! {
        /// Any run of IDs from a few: the file counts what the map counts, in the same order.
        #[test]
        fn the_file_counts_as_the_map_does(
            ids in proptest::collection::vec(proptest::sample::select(vec!["A", "B", "C", "D", ""]), 0..60)
        ) {
            let (mut disk, mut map) = (SharedControlIds::new().unwrap(), ControlIdCount::default());
            for (i, id) in ids.iter().enumerate() {
                let m = message(i as u64 + 1, id);
                disk.observe(&m).unwrap();
                map.observe(&m);
            }
            let mut found = Vec::new();
            disk.shared(|s| found.push(s)).unwrap();
            proptest::prop_assert_eq!(found, map.shared());
        }
    }
}
