//! What the forwarder writes into the queue: one more attempt of each row before a send, and
//! the fates of a window of rows after their answers, each in one transaction and only into the
//! file the rows were read from.

use super::rows::{same_generation, settle_row, Settlement};
use super::{stamp, Open, Store};
use rusqlite::params;
use std::time::SystemTime;

impl Store {
    /// Write the fates of rows read from `generation`, in one transaction; `Ok(false)` leaves
    /// rows of an earlier generation as they are in the file they were read from (moved away).
    pub async fn settle(
        &self,
        generation: u64,
        fates: Vec<(i64, Settlement)>,
    ) -> Result<bool, String> {
        self.with(move |open, _| {
            if open.generation != generation {
                return Ok(false);
            }
            unsynced(open, |open| {
                let tx = open.db.transaction().map_err(|e| e.to_string())?;
                for (id, s) in &fates {
                    settle_row(&tx, *id, s).map_err(|e| e.to_string())?;
                }
                tx.commit().map_err(|e| e.to_string())
            })?;
            Ok(true)
        })
        .await
    }

    /// Count one more attempt of each of rows `ids` of `generation`, and when each was first
    /// forwarded.
    pub async fn attempted(
        &self,
        generation: u64,
        ids: Vec<i64>,
        at: SystemTime,
    ) -> Result<(), String> {
        self.with(move |open, file| {
            same_generation(open, generation, file)?;
            unsynced(open, |open| count_attempts(open, &ids, at))
        })
        .await
    }
}

/// Run `write` on the file without waiting for the disk at its commit: for what the forwarder
/// writes (attempts, fates), never for rows taken in. A relay that dies has it written (in the
/// WAL, in order); a machine that dies before the next synced commit (a group taken in, which
/// carries every earlier write to the disk) may lose it, and then the rows are still pending and
/// sent again: a fate is lost to a duplicate upstream, never a row to nothing.
fn unsynced<T>(
    open: &mut Open,
    write: impl FnOnce(&mut Open) -> Result<T, String>,
) -> Result<T, String> {
    open.db
        .execute_batch("PRAGMA synchronous=NORMAL")
        .map_err(|e| e.to_string())?;
    let written = write(open);
    let synced = open.db.execute_batch("PRAGMA synchronous=FULL");
    let written = written?;
    synced.map_err(|e| e.to_string())?;
    Ok(written)
}

/// One more attempt of each of rows `ids`, and when each was first forwarded, in one transaction.
fn count_attempts(open: &mut Open, ids: &[i64], at: SystemTime) -> Result<(), String> {
    let tx = open.db.transaction().map_err(|e| e.to_string())?;
    {
        let mut update = tx
            .prepare_cached(
                "UPDATE queue SET attempts = attempts + 1,
                    forwarded_at = COALESCE(forwarded_at, ?1) WHERE id = ?2",
            )
            .map_err(|e| e.to_string())?;
        let at = stamp(at);
        for id in ids {
            update.execute(params![at, id]).map_err(|e| e.to_string())?;
        }
    }
    tx.commit().map_err(|e| e.to_string())
}
