//! The two ways a commit group's rows go into the table, inside its transaction: all of them in
//! one statement per [`STATEMENT_BYTES`] of payload (the common path: the server parses, plans
//! and answers once for the group, not once a row), or each row by its own INSERT, pipelined
//! (the fallback, which names the row the server refused). Either says, for each row, the id it
//! was stored under or that nothing was stored.

use super::catalog::GroupStatements;
use super::cells::{Cells, Column, COLUMNS};
use super::{Conn, Row};
use crate::server::sink::groups::GROUP_BYTES;
use std::collections::HashSet;
use tokio_postgres::types::ToSql;

/// Payload bytes one statement carries at most: a group whose last job passed the group's limit
/// is cut over several statements rather than sent as one unbounded message.
const STATEMENT_BYTES: usize = GROUP_BYTES;

/// Each row's id when stored, `None` when nothing was stored, in order; or the first error.
pub(super) type Inserted = Vec<Result<Option<i64>, tokio_postgres::Error>>;

/// Insert each row by its own INSERT, pipelined: every statement after a refused one fails too
/// (the transaction is aborted), so the first error names the row.
pub(super) async fn each(c: &Conn, rows: &[&Row]) -> Inserted {
    futures_util::future::join_all(rows.iter().map(|row| one(c, row))).await
}

async fn one(c: &Conn, row: &Row) -> Result<Option<i64>, tokio_postgres::Error> {
    // Every column but the id, which the table gives.
    let cells = Cells::new(row, 0);
    let found = c
        .client
        .query_opt(&c.statements.insert, &cells.values()[1..])
        .await?;
    Ok(found.map(|r| r.get(0)))
}

/// What one statement for the group could not say.
pub(super) enum Together {
    /// Each row's id when stored, `None` when not, in order.
    Stored(Vec<Option<i64>>),
    /// The server refused the statement (the transaction is aborted), or returned an id that is
    /// none of the group's (a trigger changed it): which row is which is unknown, so the group
    /// is to be tried again row by row.
    Unsure,
}

/// Insert `rows` under `ids` (one each, from the sequence) in one statement per
/// [`STATEMENT_BYTES`], pipelined; a row is stored when its id comes back. `Err` only when the
/// link failed.
pub(super) async fn together(
    c: &Conn,
    group: &GroupStatements,
    rows: &[&Row],
    ids: &[i64],
) -> Result<Together, tokio_postgres::Error> {
    let chunks = chunks(rows);
    let statements = chunks
        .iter()
        .map(|range| statement(c, group, &rows[range.clone()], &ids[range.clone()]));
    let mut returned = HashSet::with_capacity(rows.len());
    for result in futures_util::future::join_all(statements).await {
        match result {
            Ok(stored) => returned.extend(stored),
            Err(e) if e.as_db_error().is_some() => return Ok(Together::Unsure),
            Err(e) => return Err(e),
        }
    }
    let ours: HashSet<i64> = ids.iter().copied().collect();
    if !returned.is_subset(&ours) {
        return Ok(Together::Unsure);
    }
    let stored = ids
        .iter()
        .map(|id| returned.contains(id).then_some(*id))
        .collect();
    Ok(Together::Stored(stored))
}

/// The rows cut into runs of at most [`STATEMENT_BYTES`] of payload (a run holds one row at
/// least).
fn chunks(rows: &[&Row]) -> Vec<std::ops::Range<usize>> {
    let mut chunks = Vec::new();
    let (mut start, mut bytes) = (0, 0);
    for (i, row) in rows.iter().enumerate() {
        if i > start && bytes + row.payload.len() > STATEMENT_BYTES {
            chunks.push(start..i);
            (start, bytes) = (i, 0);
        }
        bytes += row.payload.len();
    }
    if start < rows.len() {
        chunks.push(start..rows.len());
    }
    chunks
}

/// One statement for `rows`, as arrays, one a column: the ids it stored.
async fn statement(
    c: &Conn,
    group: &GroupStatements,
    rows: &[&Row],
    ids: &[i64],
) -> Result<Vec<i64>, tokio_postgres::Error> {
    let cells: Vec<Cells> = rows
        .iter()
        .zip(ids)
        .map(|(row, id)| Cells::new(row, *id))
        .collect();
    let columns: Vec<Column> = (0..COLUMNS.len())
        .map(|k| Column { rows: &cells, k })
        .collect();
    let params: Vec<&(dyn ToSql + Sync)> = columns.iter().map(|c| c as _).collect();
    let found = c.client.query(&group.insert, &params).await?;
    Ok(found.iter().map(|r| r.get(0)).collect())
}

/// `n` ids from the sequence behind column `id`.
pub(super) async fn ids(
    c: &Conn,
    group: &GroupStatements,
    n: usize,
) -> Result<Vec<i64>, tokio_postgres::Error> {
    let n = n as i32;
    let found = c.client.query(&group.ids, &[&n]).await?;
    Ok(found.iter().map(|r| r.get(0)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(len: usize) -> Row {
        Row {
            received_at: std::time::SystemTime::UNIX_EPOCH,
            peer: String::new(),
            fields: Default::default(),
            payload: bytes::Bytes::from(vec![b'x'; len]),
            dedupe: false,
        }
    }

    #[test]
    fn chunks_cover_every_row_once_within_the_byte_limit_or_one_row() {
        let half = STATEMENT_BYTES / 2;
        // Each case: the payload sizes, and where each chunk starts.
        let cases: [(&[usize], &[usize]); 5] = [
            (&[], &[]),
            (&[470], &[0]),
            (&[half, half, 1], &[0, 2]),
            (&[STATEMENT_BYTES * 2, 1], &[0, 1]),
            (&[1, STATEMENT_BYTES * 2, 1], &[0, 1, 2]),
        ];
        for (sizes, starts) in cases {
            let rows: Vec<Row> = sizes.iter().map(|&n| row(n)).collect();
            let refs: Vec<&Row> = rows.iter().collect();
            let found = chunks(&refs);
            let ends: Vec<usize> = starts
                .iter()
                .skip(1)
                .copied()
                .chain([sizes.len()])
                .collect();
            let expected: Vec<_> = starts.iter().zip(ends).map(|(&s, e)| s..e).collect();
            assert_eq!(found, expected, "{sizes:?}");
        }
    }
}
