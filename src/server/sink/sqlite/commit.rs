//! The SQLite sink's writer thread: each commit group as one transaction, each row's answer by
//! what its INSERT did, and a group whose file moved under it meanwhile taken back.

use super::{file, Job, Store, GROUP_ROWS};
use crate::server::sink::{groups, Reply, SinkResult};
use rusqlite::{params, Connection};
use tokio::sync::mpsc;

/// Take every job queued, commit them in one transaction, answer each.
pub(super) fn writer(mut store: Store, mut rx: mpsc::Receiver<Job>, groups: &groups::GroupCounter) {
    while let Some(first) = rx.blocking_recv() {
        let (jobs, rows) = groups::gather(first, &mut rx, GROUP_ROWS);
        let results = match store.check() {
            Ok(()) => {
                groups.record(rows);
                let (results, stored) = commit_group(&mut store.db, &jobs, store.dedupe);
                // Folded when nothing else waits: under load the next group's fold covers
                // this one before the listener can drain and stop.
                if rx.is_empty() {
                    file::fold_wal(&store.db);
                }
                moved_meanwhile(&mut store, results, &stored)
            }
            Err(why) => failed_all(&jobs, &why),
        };
        for (job, results) in jobs.into_iter().zip(results) {
            // A committer that went away (its connection was dropped) needs no answer.
            let _ = job.reply.send(results);
        }
    }
}

/// A group committed into a file the path no longer names (moved or replaced while it was
/// written) is taken back out of that file and answered negatively; one that cannot be taken
/// back gets no answer (its connections close: kept, but not where the path says).
fn moved_meanwhile(
    store: &mut Store,
    results: Vec<Vec<SinkResult>>,
    stored: &[i64],
) -> Vec<Vec<SinkResult>> {
    if stored.is_empty() || file::is_at(&store.file, store.id) {
        return results;
    }
    let path = store.file.display();
    let taken_back = store.db.transaction().and_then(|tx| {
        {
            let mut delete = tx.prepare("DELETE FROM messages WHERE id = ?1")?;
            for id in stored {
                delete.execute([id])?;
            }
        }
        tx.commit()
    });
    let instead = match taken_back {
        Ok(()) => SinkResult::failed(format!(
            "sqlite: {path} was moved or replaced during the commit; its rows were taken back"
        )),
        Err(e) => SinkResult::failed(format!(
            "sqlite: {path} was moved or replaced during the commit, and taking its rows back failed ({e}): not answered"
        ))
        .replying(Reply::Relayed {
            acks: Vec::new(),
            close: Some(crate::cause::Cause::ConnectionLost),
        }),
    };
    results
        .into_iter()
        .map(|answers| {
            answers
                .into_iter()
                .map(|r| match r.disposition {
                    crate::ack::Disposition::Committed if !r.duplicate => instead.clone(),
                    _ => r,
                })
                .collect()
        })
        .collect()
}

/// Every message of `jobs` failed, for `what`.
fn failed_all(jobs: &[Job], what: &str) -> Vec<Vec<SinkResult>> {
    jobs.iter()
        .map(|j| vec![SinkResult::failed(format!("sqlite: {what}")); j.rows.len()])
        .collect()
}

const INSERT: &str = "INSERT INTO messages
    (received_at, peer, msh3, msh4, control_id, msh7, message_type, bytes, payload, dedupe)
    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)";
/// With de-duplication only the key's own index makes a duplicate; any other constraint refuses.
const ON_KEY: &str = " ON CONFLICT (msh3, msh4, control_id, msh7) WHERE dedupe = 1 DO NOTHING";
const FIND_KEY: &str = "SELECT EXISTS (SELECT 1 FROM messages
    WHERE msh3 IS ?1 AND msh4 IS ?2 AND control_id IS ?3 AND msh7 IS ?4 AND dedupe = 1)";

/// Where a positive answer stands (job, row) and its id, or none for a duplicate.
type Positive = (usize, usize, Option<i64>);

/// One transaction for every row of `jobs`; the answers, and the ids of the rows stored.
fn commit_group(
    db: &mut Connection,
    jobs: &[Job],
    dedupe: bool,
) -> (Vec<Vec<SinkResult>>, Vec<i64>) {
    let failed_all = |what: String| (failed_all(jobs, &what), Vec::new());
    let tx = match db.transaction() {
        Ok(tx) => tx,
        Err(e) => return failed_all(e.to_string()),
    };
    let (mut results, positive) = match insert_all(&tx, jobs, dedupe) {
        Ok(inserted) => inserted,
        Err(e) => return failed_all(e.to_string()),
    };
    if let Err(e) = look_again(&tx, jobs, &positive, &mut results) {
        return failed_all(e.to_string());
    }
    let stored = positive
        .iter()
        .filter(|&&(j, r, _)| results[j][r].disposition == crate::ack::Disposition::Committed)
        .filter_map(|&(_, _, id)| id)
        .collect();
    match tx.commit() {
        Ok(()) => (results, stored),
        Err(e) => failed_all(e.to_string()),
    }
}

/// Every row inserted: the answers, and where the positive ones stand. An error here is one
/// that fails the whole group.
fn insert_all(
    tx: &Connection,
    jobs: &[Job],
    dedupe: bool,
) -> rusqlite::Result<(Vec<Vec<SinkResult>>, Vec<Positive>)> {
    let insert = if dedupe {
        format!("{INSERT}{ON_KEY}")
    } else {
        INSERT.to_string()
    };
    let mut insert = tx.prepare_cached(&insert)?;
    let mut find_key = tx.prepare_cached(FIND_KEY)?;
    let mut results = Vec::with_capacity(jobs.len());
    let mut positive = Vec::new();
    for (j, job) in jobs.iter().enumerate() {
        let mut answers = Vec::with_capacity(job.rows.len());
        for (r, row) in job.rows.iter().enumerate() {
            let inserted = insert.execute(params![
                row.received_at,
                row.peer,
                row.msh3,
                row.msh4,
                row.control_id,
                row.msh7,
                row.message_type,
                row.payload.len() as i64,
                &row.payload[..],
                row.dedupe.then_some(1),
            ]);
            // Nothing inserted: a duplicate only when a row of its key is there; else a
            // trigger dropped it.
            answers.push(match inserted {
                Ok(0) if row.dedupe => match find_key.query_row(key(row), |r| r.get(0)) {
                    Ok(true) => {
                        positive.push((j, r, None));
                        SinkResult::duplicate()
                    }
                    Ok(false) => SinkResult::failed(DROPPED),
                    Err(e) => SinkResult::failed(format!("sqlite: {e}")),
                },
                Ok(0) => SinkResult::failed(DROPPED),
                Ok(_) => {
                    positive.push((j, r, Some(tx.last_insert_rowid())));
                    SinkResult::committed()
                }
                Err(e) => SinkResult::failed(format!("sqlite: {e}")),
            });
        }
        results.push(answers);
    }
    Ok((results, positive))
}

/// A trigger run after an INSERT may have deleted its row (or an earlier one): each positive
/// answer is looked up again once every row is in, before COMMIT, and failed when its row is
/// gone.
fn look_again(
    tx: &Connection,
    jobs: &[Job],
    positive: &[Positive],
    results: &mut [Vec<SinkResult>],
) -> rusqlite::Result<()> {
    // An id given again was taken from a row deleted meanwhile.
    let ids: Vec<i64> = positive.iter().map(|p| p.2.unwrap_or(0)).collect();
    let last = file::last_holders(&ids);
    let mut find_id = tx.prepare_cached(FIND_ID)?;
    let mut find_key = tx.prepare_cached(FIND_KEY)?;
    for (&(j, r, id), last) in positive.iter().zip(last) {
        let there = match id {
            Some(_) if !last => false,
            Some(id) => {
                let payload = &jobs[j].rows[r].payload[..];
                find_id.query_row(params![id, payload], |row| row.get::<_, bool>(0))?
            }
            None => find_key.query_row(key(&jobs[j].rows[r]), |row| row.get(0))?,
        };
        if !there {
            results[j][r] = SinkResult::failed(DROPPED);
        }
    }
    Ok(())
}

/// The de-duplication key of `row`, as [`FIND_KEY`] takes it.
fn key(row: &super::Row) -> [&Option<rusqlite::types::Value>; 4] {
    [&row.msh3, &row.msh4, &row.control_id, &row.msh7]
}

const FIND_ID: &str = "SELECT EXISTS (SELECT 1 FROM messages WHERE id = ?1 AND payload = ?2)";

const DROPPED: &str =
    "sqlite: the database kept nothing for this message (a trigger dropped or deleted the row)";
