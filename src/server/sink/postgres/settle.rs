//! A COMMIT whose reply never came, settled by looking the rows themselves up once the old
//! transaction is over: it holds an advisory lock of the group's own random key, which a new
//! session can take only after it ended (committed, rolled back, or lost with the server).

use super::commit::{find_key, Fate};
use super::{Conn, Row};

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
    // Pipelined: a group of thousands of rows is looked up in about one round trip.
    let lookups = rows.iter().zip(fates).map(|(row, fate)| async move {
        match fate {
            Fate::Stored(id) => find_row(c, row, *id).await,
            Fate::Duplicate => find_key(c, row).await,
            Fate::Dropped => Ok(false),
        }
    });
    let stored = futures_util::future::join_all(lookups)
        .await
        .into_iter()
        .collect::<Result<Vec<bool>, _>>()?;
    c.client.batch_execute("ROLLBACK").await?;
    Ok(Some(stored))
}
