//! The rows of the relay's file: messages taken in (each INSERT must store its row, and the
//! group must still be in the file the path names when it commits), a record written settled in
//! one transaction, pending rows read leniently (a row that cannot be read is set aside as a
//! dead letter, never a stall), and fates written a group at a time, only into the file the rows
//! were read from.

use super::{stamp, Open, Status, Store};
use crate::server::Inbound;
use rusqlite::types::{Value, ValueRef};
use rusqlite::{params, OptionalExtension, Transaction};
use std::time::SystemTime;

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
    /// Which opening of the path it was read from.
    pub generation: u64,
}

/// A pending row set aside as a dead letter, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreadable {
    /// The row's ID.
    pub id: i64,
    /// What could not be read.
    pub why: String,
}

fn text(bytes: Option<&[u8]>) -> Option<Value> {
    bytes.map(|b| match std::str::from_utf8(b) {
        Ok(t) => Value::Text(t.to_string()),
        Err(_) => Value::Blob(b.to_vec()),
    })
}

/// One message as the values of its row.
pub(crate) type RowValues = (String, String, [Option<Value>; 5], bytes::Bytes);

fn row_values(m: &Inbound) -> RowValues {
    (
        stamp(m.received_at),
        m.peer.to_string(),
        [
            text(m.msh3()),
            text(m.msh4()),
            text(m.control_id()),
            text(m.msh7()),
            text(m.message_type()),
        ],
        m.payload.clone(),
    )
}

/// Insert `rows` as `pending` in `tx`; their ids. A row the database did not store (a trigger
/// dropped it, or deleted it after its INSERT) fails the whole group.
fn insert_rows(
    tx: &rusqlite::Connection,
    rows: &[RowValues],
) -> rusqlite::Result<Result<Vec<i64>, String>> {
    let mut insert = tx.prepare_cached(
        "INSERT INTO queue (received_at, peer, msh3, msh4, control_id, msh7,
            message_type, bytes, payload, status, attempts)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 'pending', 0)",
    )?;
    let mut ids = Vec::with_capacity(rows.len());
    for (at, peer, f, payload) in rows {
        let stored = insert.execute(params![
            at,
            peer,
            f[0],
            f[1],
            f[2],
            f[3],
            f[4],
            payload.len() as i64,
            &payload[..]
        ])?;
        if stored == 0 {
            return Ok(Err(
                "the database stored nothing for a message (a trigger dropped the row)".into(),
            ));
        }
        ids.push(tx.last_insert_rowid());
    }
    // A trigger run after an INSERT may have deleted its row (or an earlier one's).
    // An id given again was taken from a row deleted meanwhile.
    let last = super::file::last_holders(&ids);
    let mut find =
        tx.prepare_cached("SELECT EXISTS (SELECT 1 FROM queue WHERE id = ?1 AND payload = ?2)")?;
    for ((id, last), (_, _, _, payload)) in ids.iter().zip(last).zip(rows) {
        if !last || !find.query_row(params![id, &payload[..]], |r| r.get::<_, bool>(0))? {
            return Ok(Err(
                "the database kept nothing for a message (a trigger deleted the row)".into(),
            ));
        }
    }
    Ok(Ok(ids))
}

impl Open {
    /// Take back rows `ids` of a group whose file was moved while it was written.
    fn take_back(&mut self, ids: &[i64], file: &std::path::Path) -> String {
        let taken = self.db.transaction().and_then(|tx| {
            {
                let mut delete = tx.prepare("DELETE FROM queue WHERE id = ?1")?;
                for id in ids {
                    delete.execute([id])?;
                }
            }
            tx.commit()
        });
        match taken {
            Ok(()) => format!(
                "{} was moved or replaced during the commit; its rows were taken back",
                file.display()
            ),
            Err(e) => format!(
                "{} was moved or replaced during the commit, and taking its rows back failed: {e}",
                file.display()
            ),
        }
    }
}

/// One batch's rows, made from its messages as it is taken in.
pub(crate) struct Taking(pub(crate) Vec<RowValues>);

impl Taking {
    pub(crate) fn of(messages: &[Inbound]) -> Taking {
        Taking(messages.iter().map(row_values).collect())
    }
}

/// What became of one batch of a group: its new ids in order, `None` when the queue had no
/// room for it (nothing kept), `Err` when nothing of it was kept.
pub(crate) type Taken = Result<Option<Vec<i64>>, String>;

/// Insert `rows` as pending in a savepoint of `tx`, unless that would make more than
/// `max_pending` rows pending; a refused row keeps nothing of the batch.
fn insert_batch(tx: &mut Transaction<'_>, rows: &[RowValues], max_pending: Option<u64>) -> Taken {
    let inserted = (|| {
        let batch = tx.savepoint()?;
        if let Some(max) = max_pending {
            let pending: i64 = batch.query_row(
                "SELECT COUNT(*) FROM queue WHERE status = 'pending'",
                [],
                |r| r.get(0),
            )?;
            if pending as u64 + rows.len() as u64 > max {
                return Ok(Ok(None));
            }
        }
        // Dropped unreleased, the savepoint rolls back.
        let ids = match insert_rows(&batch, rows)? {
            Ok(ids) => ids,
            Err(why) => return Ok(Err(why)),
        };
        batch.commit()?;
        Ok(Ok(Some(ids)))
    })();
    inserted.map_err(|e: rusqlite::Error| e.to_string())?
}

impl Store {
    /// Insert the rows of `batches` as pending, all in one transaction and one synced commit,
    /// in order: each batch whole or not at all (see [`Taken`]). `Err` keeps nothing of any
    /// (the commit failed, or the file moved meanwhile and its rows were taken back).
    pub(crate) async fn insert(
        &self,
        batches: Vec<Taking>,
        max_pending: Option<u64>,
    ) -> Result<Vec<Taken>, String> {
        self.with(move |open, file| {
            open.check(file)?;
            let mut tx = open.db.transaction().map_err(|e| e.to_string())?;
            let taken: Vec<Taken> = batches
                .iter()
                .map(|batch| insert_batch(&mut tx, &batch.0, max_pending))
                .collect();
            tx.commit().map_err(|e| e.to_string())?;
            super::file::fold_wal(&open.db);
            if !super::file::is_at(file, open.id) {
                let ids: Vec<i64> = taken
                    .iter()
                    .flatten()
                    .flatten()
                    .flatten()
                    .copied()
                    .collect();
                return Err(open.take_back(&ids, file));
            }
            Ok(taken)
        })
        .await
    }

    /// Keep one message already settled (a pass-through record), in one transaction. Returns
    /// the file's generation and the row's ID.
    pub async fn record(&self, message: &Inbound, s: Settlement) -> Result<(u64, i64), String> {
        let row = row_values(message);
        self.with(move |open, file| {
            open.check(file)?;
            let generation = open.generation;
            let tx = open.db.transaction().map_err(|e| e.to_string())?;
            let id =
                match insert_rows(&tx, std::slice::from_ref(&row)).map_err(|e| e.to_string())? {
                    Ok(ids) => ids[0],
                    Err(why) => return Err(why),
                };
            settle_row(&tx, id, &s).map_err(|e| e.to_string())?;
            tx.commit().map_err(|e| e.to_string())?;
            Ok((generation, id))
        })
        .await
    }

    /// Up to `limit` pending rows after `after`, in arrival order; rows among them that cannot
    /// be read are set aside (status `unreadable`) and returned apart.
    pub async fn pending(
        &self,
        after: i64,
        limit: usize,
    ) -> Result<(Vec<PendingRow>, Vec<Unreadable>), String> {
        self.with(move |open, _| {
            let generation = open.generation;
            let mut good = Vec::new();
            let mut bad = Vec::new();
            {
                let mut q = open
                    .db
                    .prepare_cached(
                        "SELECT id, payload, attempts FROM queue
                         WHERE status = 'pending' AND id > ?1 ORDER BY id LIMIT ?2",
                    )
                    .map_err(|e| e.to_string())?;
                let mut rows = q
                    .query(params![after, limit as i64])
                    .map_err(|e| e.to_string())?;
                while let Some(r) = rows.next().map_err(|e| e.to_string())? {
                    let id: i64 = r.get(0).map_err(|e| e.to_string())?;
                    match read_row(r, generation, id) {
                        Ok(row) => good.push(row),
                        Err(why) => bad.push(Unreadable { id, why }),
                    }
                }
            }
            if !bad.is_empty() {
                let tx = open.db.transaction().map_err(|e| e.to_string())?;
                for u in &bad {
                    tx.execute(
                        "UPDATE queue SET status = ?1, settled_at = ?2 WHERE id = ?3",
                        params![Status::Unreadable.as_str(), stamp(SystemTime::now()), u.id],
                    )
                    .map_err(|e| e.to_string())?;
                }
                tx.commit().map_err(|e| e.to_string())?;
            }
            Ok((good, bad))
        })
        .await
    }

    /// Rows still pending in the file the path names.
    pub async fn depth(&self) -> Result<u64, String> {
        self.with(|open, _| {
            open.db
                .query_row(
                    "SELECT COUNT(*) FROM queue WHERE status = 'pending'",
                    [],
                    |r| r.get::<_, i64>(0),
                )
                .map(|n| n as u64)
                .map_err(|e| e.to_string())
        })
        .await
    }

    /// The oldest pending row's id, if any.
    pub(crate) async fn first_pending(&self) -> Result<Option<i64>, String> {
        self.with(|open, _| {
            open.db
                .query_row(
                    "SELECT MIN(id) FROM queue WHERE status = 'pending'",
                    [],
                    |r| r.get::<_, Option<i64>>(0),
                )
                .optional()
                .map(Option::flatten)
                .map_err(|e| e.to_string())
        })
        .await
    }
}

pub(super) fn same_generation(
    open: &Open,
    generation: u64,
    file: &std::path::Path,
) -> Result<(), String> {
    if open.generation == generation {
        return Ok(());
    }
    Err(format!(
        "{} was moved, replaced or deleted since these rows were read: their fate is not written there",
        file.display()
    ))
}

/// One pending row, or what in it cannot be read.
fn read_row(r: &rusqlite::Row<'_>, generation: u64, id: i64) -> Result<PendingRow, String> {
    let payload = match r.get_ref(1).map_err(|e| e.to_string())? {
        ValueRef::Blob(b) => bytes::Bytes::copy_from_slice(b),
        ValueRef::Text(_) => return Err("its payload is text, not a blob".into()),
        ValueRef::Null => return Err("its payload is NULL".into()),
        _ => return Err("its payload is a number, not a blob".into()),
    };
    let attempts = match r.get_ref(2).map_err(|e| e.to_string())? {
        ValueRef::Integer(n) => u32::try_from(n).map_err(|_| format!("its attempts is {n}"))?,
        ValueRef::Null => return Err("its attempts is NULL".into()),
        _ => return Err("its attempts is not a number".into()),
    };
    Ok(PendingRow {
        id,
        payload,
        attempts,
        generation,
    })
}

pub(super) fn settle_row(tx: &Transaction<'_>, id: i64, s: &Settlement) -> rusqlite::Result<()> {
    let changed = tx.execute(
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
    )?;
    if changed == 1 {
        Ok(())
    } else {
        Err(rusqlite::Error::QueryReturnedNoRows)
    }
}
