//! A commit group's rows as one `COPY messages FROM STDIN (FORMAT binary)`: the server plans no
//! statement and writes the rows a page at a time, for less CPU a row than the one INSERT. COPY
//! says only how many rows it stored, aborts wholesale on one refused row, has no ON CONFLICT,
//! and runs no rule of the table, so it is used only without de-duplication, on columns of the
//! very types the listener writes, and kept only when the table has no trigger and no rule of
//! its own (the commit checks that after the COPY, under its lock): then every row copied is
//! there, under the id it was given.

use super::cells::{self, Cells, COLUMNS};
use super::inserts::Together;
use super::{Conn, Row};
use bytes::{BufMut, Bytes, BytesMut};
use futures_util::SinkExt;
use tokio_postgres::{CopyInSink, Statement};

/// The binary format's signature, flags and header extension length.
const HEADER: &[u8] = b"PGCOPY\n\xff\r\n\0\0\0\0\0\0\0\0\0";
/// Bytes encoded before they are handed to the connection.
const FLUSH: usize = 64 * 1024;

/// An open COPY: the connection sends nothing else until it is finished or dropped (dropping it
/// aborts the COPY, and with it the transaction).
pub(super) type Open = CopyInSink<Bytes>;

/// Start the COPY; `None` when the server refused it (the transaction is aborted). `Err` only
/// when the link failed.
pub(super) async fn start(
    c: &Conn,
    copy: &Statement,
) -> Result<Option<Open>, tokio_postgres::Error> {
    match c.client.copy_in::<_, Bytes>(copy).await {
        Ok(sink) => Ok(Some(sink)),
        Err(e) if e.as_db_error().is_some() => Ok(None),
        Err(e) => Err(e),
    }
}

/// Copy `rows` under `ids` (one each, from the sequence) into the COPY `sink` started: stored
/// when the server counts every row, else [`Together::Unsure`] (a trigger skipped some, or the
/// server refused a row: the transaction is aborted either way). `Err` only when the link
/// failed.
pub(super) async fn rows(
    sink: Open,
    rows: &[&Row],
    ids: &[i64],
) -> Result<Together, tokio_postgres::Error> {
    futures_util::pin_mut!(sink);
    let mut buf = BytesMut::with_capacity(FLUSH * 2);
    buf.put_slice(HEADER);
    for (row, id) in rows.iter().zip(ids) {
        if encode(&mut buf, &Cells::new(row, *id)).is_err() {
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
            Ok(Together::Stored(ids.iter().map(|id| Some(*id)).collect()))
        }
        Ok(_) => Ok(Together::Unsure),
        Err(e) if e.as_db_error().is_some() => Ok(Together::Unsure),
        Err(e) => Err(e),
    }
}

/// One row of the binary format: the field count, then each field, in the order of
/// [`COLUMNS`].
fn encode(buf: &mut BytesMut, row: &Cells) -> Result<(), Box<dyn std::error::Error + Sync + Send>> {
    let values = row.values();
    buf.put_i16(values.len() as i16);
    for (value, (_, ty)) in values.iter().zip(&COLUMNS) {
        cells::encode(buf, *value, ty)?;
    }
    Ok(())
}
