//! A commit group's rows as one `COPY messages FROM STDIN (FORMAT binary)`: the server plans no
//! statement and writes the rows a page at a time, for less CPU a row than the one INSERT. COPY
//! says only how many rows it stored, aborts wholesale on one refused row, has no ON CONFLICT,
//! and runs no rule of the table, so it is used only without de-duplication, on columns of the
//! very types the listener writes, and kept only when the table has no trigger and no rule of
//! its own (the commit checks that after the COPY, under its lock): then every row copied is
//! there, under the id it was given.

use super::catalog::COPY_COLUMNS;
use super::inserts::Together;
use super::{Conn, Row};
use bytes::{BufMut, Bytes, BytesMut};
use futures_util::SinkExt;
use std::time::SystemTime;
use tokio_postgres::types::ToSql;
use tokio_postgres::Statement;

/// The binary format's signature, flags and header extension length.
const HEADER: &[u8] = b"PGCOPY\n\xff\r\n\0\0\0\0\0\0\0\0\0";
/// Bytes encoded before they are handed to the connection.
const FLUSH: usize = 64 * 1024;

/// Copy `rows` under `ids` (one each, from the sequence): stored when the server counts every
/// row, else [`Together::Unsure`] (a trigger skipped some, or the server refused the COPY: the
/// transaction is aborted either way). `Err` only when the link failed.
pub(super) async fn rows(
    c: &Conn,
    copy: &Statement,
    rows: &[&Row],
    ids: &[i64],
) -> Result<Together, tokio_postgres::Error> {
    let sink = match c.client.copy_in::<_, Bytes>(copy).await {
        Ok(sink) => sink,
        Err(e) if e.as_db_error().is_some() => return Ok(Together::Unsure),
        Err(e) => return Err(e),
    };
    futures_util::pin_mut!(sink);
    let mut buf = BytesMut::with_capacity(FLUSH * 2);
    buf.put_slice(HEADER);
    for (row, id) in rows.iter().zip(ids) {
        if encode(&mut buf, row, *id).is_err() {
            // Dropping the sink aborts the COPY; the INSERT will say what it cannot store.
            return Ok(Together::Unsure);
        }
        if buf.len() >= FLUSH {
            sink.send(buf.split().freeze()).await?;
        }
    }
    buf.put_i16(-1);
    sink.send(buf.freeze()).await?;
    match sink.finish().await {
        Ok(n) if n == rows.len() as u64 => {
            Ok(Together::Stored(
            ids.iter().map(|id| Some(*id)).collect(),
        ))
        }
        Ok(_) => Ok(Together::Unsure),
        Err(e) if e.as_db_error().is_some() => Ok(Together::Unsure),
        Err(e) => Err(e),
    }
}

/// One row of the binary format: the field count, then each field's length and bytes (-1 for
/// NULL), in the order of [`COPY_COLUMNS`].
fn encode(buf: &mut BytesMut, row: &Row, id: i64) -> Result<(), Box<dyn std::error::Error + Sync + Send>> {
    let bytes = row.payload.len() as i64;
    let payload: &[u8] = &row.payload;
    let dedupe = row.dedupe.then_some(true);
    let f = &row.fields;
    let values: [&(dyn ToSql + Sync); 11] = [
        &id,
        &row.received_at as &SystemTime,
        &row.peer,
        &f[0],
        &f[1],
        &f[2],
        &f[3],
        &f[4],
        &bytes,
        &payload,
        &dedupe,
    ];
    buf.put_i16(values.len() as i16);
    for (value, (_, ty)) in values.iter().zip(&COPY_COLUMNS) {
        let at = buf.len();
        buf.put_i32(0);
        let len = match value.to_sql_checked(ty, buf)? {
            tokio_postgres::types::IsNull::Yes => -1,
            tokio_postgres::types::IsNull::No => i32::try_from(buf.len() - at - 4)?,
        };
        buf[at..at + 4].copy_from_slice(&len.to_be_bytes());
    }
    Ok(())
}
