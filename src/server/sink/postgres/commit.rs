//! One commit group as one transaction, and what each row became: stored (the INSERT returned
//! its id), a duplicate (with de-duplication: nothing inserted, and a row of its key is there),
//! or not stored (nothing inserted and no such row: a trigger or a rule dropped it, or inserted
//! and gone again before COMMIT: a trigger run after the INSERT deleted it). A row the
//! server refuses is named, so the group can be tried again without it. A COMMIT whose reply
//! never came is settled by looking the rows themselves up, once the old transaction is over:
//! it holds an advisory lock of the group's own random key, which a new session can take only
//! after it ended (committed, rolled back, or lost with the server).

use super::{catalog, failure};
use super::{Conn, Row, GROUP_TIMEOUT};
use tokio::time::timeout;

/// What became of one row inside the transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Fate {
    /// Inserted with this id.
    Stored(i64),
    /// Not inserted: a row of its key is there.
    Duplicate,
    /// Not inserted, and no row of its key: dropped by a trigger or a rule.
    Dropped,
}

/// What became of a commit group.
pub(super) enum Outcome {
    /// COMMIT answered: each row's fate, in order.
    Committed(Vec<Fate>),
    /// Row `index` was refused by the server (a constraint, a trigger's error): rolled back.
    Refused { index: usize, why: String },
    /// Nothing kept (rolled back, or never committed). `lost`: the connection is gone;
    /// `again`: worth trying at once (a deadlock between listeners).
    NotCommitted {
        why: String,
        lost: bool,
        again: bool,
    },
    /// COMMIT sent, no reply: the transaction holding advisory lock `key` may have committed.
    Unknown { key: i64, fates: Vec<Fate> },
}

fn not_committed(e: &tokio_postgres::Error) -> Outcome {
    let state = e.code().map(|c| c.code().to_string()).unwrap_or_default();
    Outcome::NotCommitted {
        why: failure::of(e).what,
        lost: e.as_db_error().is_none(),
        again: state.starts_with("40"),
    }
}

fn timed_out(what: &str) -> Outcome {
    Outcome::NotCommitted {
        why: format!("{what} timed out"),
        lost: true,
        again: false,
    }
}

/// One transaction for `rows`: BEGIN with synchronous commit and the group's lock, the inserts
/// pipelined, the key lookups of rows not inserted, COMMIT; each step bounded by
/// [`GROUP_TIMEOUT`].
pub(super) async fn group(c: &Conn, rows: &[&Row]) -> Outcome {
    let key: i64 = rand::random();
    let begin =
        format!("BEGIN; SET LOCAL synchronous_commit TO on; SELECT pg_advisory_xact_lock({key})");
    match timeout(GROUP_TIMEOUT, c.client.batch_execute(&begin)).await {
        Err(_) => return timed_out("BEGIN"),
        Ok(Err(e)) => return not_committed(&e),
        Ok(Ok(())) => {}
    }
    let inserts = rows.iter().map(|row| insert(c, row));
    let inserted = match timeout(GROUP_TIMEOUT, futures_util::future::join_all(inserts)).await {
        Err(_) => return timed_out("the inserts"),
        Ok(inserted) => inserted,
    };
    if let Some((index, e)) = inserted
        .iter()
        .enumerate()
        .find_map(|(i, r)| r.as_ref().err().map(|e| (i, e)))
    {
        if e.as_db_error().is_none() {
            return not_committed(e);
        }
        // Rolled back first: the names the error may show are read from the catalog anew (a
        // constraint added since), which an aborted transaction cannot do.
        let _ = timeout(GROUP_TIMEOUT, c.client.batch_execute("ROLLBACK")).await;
        let _ = timeout(GROUP_TIMEOUT, catalog::learn_names(&c.client)).await;
        return refused(index, e, &inserted);
    }
    let mut fates = Vec::with_capacity(rows.len());
    for (row, result) in rows.iter().zip(inserted) {
        let fate = match result {
            Ok(Some(id)) => Fate::Stored(id),
            Ok(None) if row.dedupe => match find_key(c, row).await {
                Ok(true) => Fate::Duplicate,
                Ok(false) => Fate::Dropped,
                Err(e) => return rolled_back(c, not_committed(&e)).await,
            },
            _ => Fate::Dropped,
        };
        fates.push(fate);
    }
    if let Err(outcome) = still_there(c, &mut fates).await {
        return rolled_back(c, outcome).await;
    }
    match timeout(GROUP_TIMEOUT, c.client.batch_execute("COMMIT")).await {
        Ok(Ok(())) => Outcome::Committed(fates),
        // The server refused the COMMIT: it rolled back.
        Ok(Err(e)) if e.as_db_error().is_some() => not_committed(&e),
        // Sent, and no reply: it may have committed.
        _ => Outcome::Unknown { key, fates },
    }
}

/// Turn each row inserted but no longer in the table (deleted by a trigger after its INSERT,
/// within this transaction) into [`Fate::Dropped`]: one look-up for the group, before COMMIT.
async fn still_there(c: &Conn, fates: &mut [Fate]) -> Result<(), Outcome> {
    let ids: Vec<i64> = fates
        .iter()
        .filter_map(|f| match f {
            Fate::Stored(id) => Some(*id),
            _ => None,
        })
        .collect();
    if ids.is_empty() {
        return Ok(());
    }
    let found = match timeout(
        GROUP_TIMEOUT,
        c.client.query(&c.statements.present, &[&ids]),
    )
    .await
    {
        Err(_) => return Err(timed_out("the look-up of the rows inserted")),
        Ok(Err(e)) => return Err(not_committed(&e)),
        Ok(Ok(found)) => found,
    };
    let present: std::collections::HashSet<i64> = found.iter().map(|r| r.get(0)).collect();
    for fate in fates.iter_mut() {
        if matches!(fate, Fate::Stored(id) if !present.contains(id)) {
            *fate = Fate::Dropped;
        }
    }
    Ok(())
}

/// The outcome of the first failed insert: the row the server refused, named by the first error
/// that is not the transaction's being already aborted; or the link's loss.
fn refused(
    first: usize,
    e: &tokio_postgres::Error,
    all: &[Result<Option<i64>, tokio_postgres::Error>],
) -> Outcome {
    if e.as_db_error().is_none() {
        return not_committed(e);
    }
    let aborted = |e: &tokio_postgres::Error| {
        e.code()
            .is_some_and(|c| *c == tokio_postgres::error::SqlState::IN_FAILED_SQL_TRANSACTION)
    };
    let culprit = all
        .iter()
        .enumerate()
        .skip(first)
        .find_map(|(i, r)| r.as_ref().err().filter(|e| !aborted(e)).map(|e| (i, e)));
    match culprit {
        Some((index, e)) if !e.code().is_some_and(|c| c.code().starts_with("40")) => {
            Outcome::Refused {
                index,
                why: failure::of(e).what,
            }
        }
        Some((_, e)) => not_committed(e),
        None => not_committed(e),
    }
}

async fn rolled_back(c: &Conn, outcome: Outcome) -> Outcome {
    if !matches!(outcome, Outcome::NotCommitted { lost: true, .. }) {
        let _ = timeout(GROUP_TIMEOUT, c.client.batch_execute("ROLLBACK")).await;
    }
    outcome
}

async fn insert(c: &Conn, row: &Row) -> Result<Option<i64>, tokio_postgres::Error> {
    let bytes = row.payload.len() as i64;
    let payload: &[u8] = &row.payload;
    let dedupe = row.dedupe.then_some(true);
    let f = &row.fields;
    let found = c
        .client
        .query_opt(
            &c.statements.insert,
            &[
                &row.received_at,
                &row.peer,
                &f[0],
                &f[1],
                &f[2],
                &f[3],
                &f[4],
                &bytes,
                &payload,
                &dedupe,
            ],
        )
        .await?;
    Ok(found.map(|r| r.get(0)))
}

async fn find_key(c: &Conn, row: &Row) -> Result<bool, tokio_postgres::Error> {
    let f = &row.fields;
    let found = c
        .client
        .query_one(&c.statements.find_key, &[&f[0], &f[1], &f[2], &f[3]])
        .await?;
    Ok(found.get(0))
}

async fn find_row(c: &Conn, row: &Row, id: i64) -> Result<bool, tokio_postgres::Error> {
    let payload: &[u8] = &row.payload;
    let found = c
        .client
        .query_one(&c.statements.find_row, &[&id, &row.received_at, &payload])
        .await?;
    Ok(found.get(0))
}

/// On a new connection `c`: wait (at most `wait_ms`) for the transaction holding lock `key` to
/// be over, then say for each row whether it is stored. `None` when the old transaction still
/// holds its lock; `Err` when this connection failed too.
pub(super) async fn settled(
    c: &Conn,
    key: i64,
    rows: &[&Row],
    fates: &[Fate],
    wait_ms: u64,
) -> Result<Option<Vec<bool>>, tokio_postgres::Error> {
    let begin =
        format!("BEGIN; SET LOCAL lock_timeout = {wait_ms}; SELECT pg_advisory_xact_lock({key})");
    if let Err(e) = c.client.batch_execute(&begin).await {
        let _ = c.client.batch_execute("ROLLBACK").await;
        let busy = e
            .code()
            .is_some_and(|c| *c == tokio_postgres::error::SqlState::LOCK_NOT_AVAILABLE);
        return if busy { Ok(None) } else { Err(e) };
    }
    let mut stored = Vec::with_capacity(rows.len());
    for (row, fate) in rows.iter().zip(fates) {
        stored.push(match fate {
            Fate::Stored(id) => find_row(c, row, *id).await?,
            Fate::Duplicate => find_key(c, row).await?,
            Fate::Dropped => false,
        });
    }
    c.client.batch_execute("ROLLBACK").await?;
    Ok(Some(stored))
}
