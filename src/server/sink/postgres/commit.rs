//! One commit group as one transaction, and what each row became: stored (its id came back),
//! a duplicate (with de-duplication: nothing inserted, and a row of its key is there), or not
//! stored (nothing inserted and no such row: a trigger or a rule dropped it, or inserted and
//! gone again before COMMIT: a trigger run after the INSERT deleted it). The rows go in as one
//! statement; when the server refuses it, the group is tried again row by row, which names the
//! refused row so the group can be tried once more without it. Each transaction holds an
//! advisory lock of the group's own random key, by which a COMMIT whose reply never came is
//! settled (see `settle`).

use super::catalog::GroupStatements;
use super::copy;
use super::inserts::{self, Together};
use super::{catalog, failure};
use super::{Conn, Row, GROUP_TIMEOUT};
use std::sync::atomic::Ordering;
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
    /// The group's COPY or one statement was refused, or could not say which row is which, or
    /// COPY met a trigger or a rule: rolled back, nothing kept; to be tried again the next way.
    Split,
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

/// How a group's rows are inserted: by COPY, in one statement, or each by its own (to name the
/// row the server refuses); each way falls back to the next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Insert {
    Copy,
    Together,
    Each,
}

impl Insert {
    /// The way to try after this one could not say which row is which.
    pub(super) fn slower(self) -> Insert {
        match self {
            Insert::Copy => Insert::Together,
            Insert::Together | Insert::Each => Insert::Each,
        }
    }
}

/// One transaction for `rows`: BEGIN with synchronous commit and the group's lock, the inserts,
/// the key lookups of rows not inserted, COMMIT; each step bounded by [`GROUP_TIMEOUT`].
/// `Copy` and `Together` fall back to [`Outcome::Split`] when they cannot say which row is which.
/// With ids from the sequence the group takes three round trips: BEGIN, the ids and the COPY's
/// start together; the rows and the look-up of the table's triggers and rules together; COMMIT.
pub(super) async fn group(c: &Conn, rows: &[&Row], how: Insert) -> Outcome {
    let key: i64 = rand::random();
    let begin =
        format!("BEGIN; SET LOCAL synchronous_commit TO on; SELECT pg_advisory_xact_lock({key})");
    let together = c.statements.group.as_ref().filter(|_| how != Insert::Each);
    let copy = together
        .and_then(|g| g.copy.as_ref())
        .filter(|_| how == Insert::Copy && c.copying.load(Ordering::Relaxed));
    // Sent in this order behind BEGIN, so taken inside the transaction; the COPY's start waits
    // for its rows behind the ids, which come back first.
    let ids = async {
        match together {
            Some(g) => inserts::ids(c, g, rows.len()).await.map(Some),
            None => Ok(None),
        }
    };
    let sink = async {
        match copy {
            Some(copy) => copy::start(c, copy).await.map(Some),
            None => Ok(None),
        }
    };
    let started = timeout(GROUP_TIMEOUT, async {
        tokio::join!(biased; c.client.batch_execute(&begin), ids, sink)
    })
    .await;
    let Ok((begun, ids, sink)) = started else {
        return timed_out("BEGIN");
    };
    // While a COPY is open the connection sends nothing else: after a failure it is dropped
    // (aborted) before anything more is sent.
    let ids = match (begun, ids) {
        (Err(e), _) => {
            drop(sink);
            return not_committed(&e);
        }
        (Ok(()), Err(e)) => {
            drop(sink);
            return match e.as_db_error() {
                Some(_) => split(c).await,
                None => not_committed(&e),
            };
        }
        (Ok(()), Ok(ids)) => ids,
    };
    match sink {
        Err(e) => not_committed(&e),
        // Refused: the transaction is aborted.
        Ok(Some(None)) => split(c).await,
        Ok(Some(Some(sink))) => inserted(c, rows, together, ids, Some(sink), key).await,
        Ok(None) => inserted(c, rows, together, ids, None, key).await,
    }
}

/// The rest of the group's transaction once BEGIN and the ids are back: the rows in (by the COPY
/// `sink` when one was started), each row's fate, the look-up of the table's triggers and rules,
/// COMMIT.
async fn inserted(
    c: &Conn,
    rows: &[&Row],
    together: Option<&GroupStatements>,
    ids: Option<Vec<i64>>,
    sink: Option<copy::Open>,
    key: i64,
) -> Outcome {
    let copied = sink.is_some();
    let (inserted, present) = match (together, ids) {
        (Some(g), Some(ids)) => {
            let statement = async {
                match sink {
                    Some(sink) => copy::rows(sink, rows, &ids).await,
                    None => inserts::together(c, g, rows, &ids).await,
                }
            };
            // The look-up goes out behind the rows (a COPY holds it back until it is done): one
            // round trip for both. It is of every id of the group; those not stored are not there.
            let both = async { tokio::join!(biased; statement, present(c, &ids)) };
            match timeout(GROUP_TIMEOUT, both).await {
                Err(_) => return timed_out("the insert"),
                Ok((Err(e), _)) => return not_committed(&e),
                Ok((Ok(Together::Unsure), _)) => return split(c).await,
                Ok((Ok(Together::Stored(stored)), present)) => (stored, Some(present)),
            }
        }
        _ => match timeout(GROUP_TIMEOUT, inserts::each(c, rows)).await {
            Err(_) => return timed_out("the inserts"),
            Ok(inserted) => match refusal(c, &inserted).await {
                Some(outcome) => return outcome,
                None => (
                    inserted.into_iter().map(|r| r.ok().flatten()).collect(),
                    None,
                ),
            },
        },
    };
    let mut fates = match fates(c, rows, &inserted).await {
        Ok(fates) => fates,
        Err(e) => return rolled_back(c, not_committed(&e)).await,
    };
    let present = match present {
        Some(present) => present,
        None => {
            let ids = stored_ids(&fates);
            if ids.is_empty() {
                Ok(None)
            } else {
                match timeout(GROUP_TIMEOUT, self::present(c, &ids)).await {
                    Err(_) => {
                        return rolled_back(c, timed_out("the look-up of the rows inserted")).await
                    }
                    Ok(present) => present,
                }
            }
        }
    };
    let hooks = match present {
        Err(e) => return rolled_back(c, not_committed(&e)).await,
        Ok(present) => still_there(&mut fates, present),
    };
    // COPY ran no rule, and a trigger may have moved a row to another id: the INSERT says.
    if hooks && copied {
        c.copying.store(false, Ordering::Relaxed);
        return split(c).await;
    }
    match timeout(GROUP_TIMEOUT, c.client.batch_execute("COMMIT")).await {
        Ok(Ok(())) => Outcome::Committed(fates),
        // The server refused the COMMIT: it rolled back.
        Ok(Err(e)) if e.as_db_error().is_some() => not_committed(&e),
        // Sent, and no reply: it may have committed.
        _ => Outcome::Unknown { key, fates },
    }
}

/// The statement for the whole group was refused, or could not say which row is which: rolled
/// back, to be tried again row by row.
async fn split(c: &Conn) -> Outcome {
    match timeout(GROUP_TIMEOUT, c.client.batch_execute("ROLLBACK")).await {
        Ok(Ok(())) => Outcome::Split,
        Ok(Err(e)) => not_committed(&e),
        Err(_) => timed_out("ROLLBACK"),
    }
}

/// When an insert of [`inserts::each`] failed: rolled back, the row the server refused, or the
/// link's loss.
async fn refusal(c: &Conn, inserted: &inserts::Inserted) -> Option<Outcome> {
    let (index, e) = inserted
        .iter()
        .enumerate()
        .find_map(|(i, r)| r.as_ref().err().map(|e| (i, e)))?;
    if e.as_db_error().is_none() {
        return Some(not_committed(e));
    }
    // Rolled back first: the names the error may show are read from the catalog anew (a
    // constraint added since), which an aborted transaction cannot do.
    let _ = timeout(GROUP_TIMEOUT, c.client.batch_execute("ROLLBACK")).await;
    let _ = timeout(GROUP_TIMEOUT, catalog::learn_names(&c.client)).await;
    Some(refused(index, e, inserted))
}

/// Each row's fate from its insert: stored under its id; else, with de-duplication, a duplicate
/// when a row of its key is there (inserted before, by another listener, or earlier in this
/// same group), dropped when not. The key look-ups are pipelined.
async fn fates(
    c: &Conn,
    rows: &[&Row],
    inserted: &[Option<i64>],
) -> Result<Vec<Fate>, tokio_postgres::Error> {
    let lookups = rows
        .iter()
        .zip(inserted)
        .filter(|(row, id)| id.is_none() && row.dedupe)
        .map(|(row, _)| find_key(c, row));
    let mut found = futures_util::future::join_all(lookups).await.into_iter();
    let mut fates = Vec::with_capacity(rows.len());
    for (row, id) in rows.iter().zip(inserted) {
        fates.push(match id {
            Some(id) => Fate::Stored(*id),
            None if row.dedupe => match found.next() {
                Some(Ok(true)) => Fate::Duplicate,
                Some(Err(e)) => return Err(e),
                _ => Fate::Dropped,
            },
            None => Fate::Dropped,
        });
    }
    Ok(fates)
}

/// The ids of the rows stored.
fn stored_ids(fates: &[Fate]) -> Vec<i64> {
    fates
        .iter()
        .filter_map(|f| match f {
            Fate::Stored(id) => Some(*id),
            _ => None,
        })
        .collect()
}

/// Which of `ids` are in the table, or `None` when it has no trigger and no rule of its own
/// (then every row inserted is there).
async fn present(c: &Conn, ids: &[i64]) -> Result<Option<Vec<i64>>, tokio_postgres::Error> {
    let found = c.client.query_one(&c.statements.present, &[&ids]).await?;
    Ok(found.get(0))
}

/// Turn each row inserted but no longer in the table (deleted by a trigger after its INSERT,
/// within this transaction) into [`Fate::Dropped`], by the look-up's answer. Whether the table
/// has a trigger or a rule of its own.
fn still_there(fates: &mut [Fate], present: Option<Vec<i64>>) -> bool {
    let Some(present) = present else {
        return false;
    };
    let present: std::collections::HashSet<i64> = present.into_iter().collect();
    for fate in fates.iter_mut() {
        if matches!(fate, Fate::Stored(id) if !present.contains(id)) {
            *fate = Fate::Dropped;
        }
    }
    true
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

pub(super) async fn find_key(c: &Conn, row: &Row) -> Result<bool, tokio_postgres::Error> {
    let f = &row.fields;
    let found = c
        .client
        .query_one(&c.statements.find_key, &[&f[0], &f[1], &f[2], &f[3]])
        .await?;
    Ok(found.get(0))
}
