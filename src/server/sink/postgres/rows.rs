//! Messages read back from a `listen --postgres` store: table `messages`, in arrival order (by
//! row id), a page of rows at a time, each named by its row (`user@host:5432/db#17`).

use super::conninfo;
use crate::input::{Message, StoreFilter, StoreReadError, Stored, PAGE_ROWS};
use std::collections::VecDeque;
use std::sync::Arc;

/// The matching messages of a PostgreSQL store in arrival order: at most [`PAGE_ROWS`] rows are
/// held at once. Reads through a runtime of its own, so it is an ordinary iterator.
pub struct PostgresRows {
    runtime: tokio::runtime::Runtime,
    client: tokio_postgres::Client,
    source: Arc<str>,
    filter: StoreFilter,
    after: i64,
    page: VecDeque<Stored>,
    done: bool,
    filtered: u64,
}

impl std::fmt::Debug for PostgresRows {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresRows")
            .field("source", &self.source)
            .field("after", &self.after)
            .finish()
    }
}

impl PostgresRows {
    /// Connect to the store `url` names (a PostgreSQL URL; what it leaves out from the `PG*`
    /// variables, as libpq does); nothing is read yet. Errors never hold the password.
    pub fn open(url: &str, filter: StoreFilter) -> Result<PostgresRows, StoreReadError> {
        let info =
            conninfo::resolve(url, &|k| std::env::var(k).ok()).map_err(|e| StoreReadError {
                file: "the PostgreSQL URL".into(),
                what: e.to_string(),
            })?;
        let source: Arc<str> = Arc::from(info.describe());
        let fail = |what: String| StoreReadError {
            file: source.to_string(),
            what,
        };
        let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
        let tls = super::tls_connector(&info, home.as_deref())
            .map_err(|e| fail(format!("TLS settings: {e}")))?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| fail(e.to_string()))?;
        let client = runtime.block_on(async {
            let (client, connection) = info
                .config
                .connect(tls)
                .await
                .map_err(|e| fail(format!("cannot connect: {e}")))?;
            tokio::spawn(connection);
            Ok::<_, StoreReadError>(client)
        })?;
        Ok(PostgresRows {
            runtime,
            client,
            source,
            filter,
            after: i64::MIN,
            page: VecDeque::new(),
            done: false,
            filtered: 0,
        })
    }

    /// Rows the filter's `select` left out so far.
    pub fn filtered(&self) -> u64 {
        self.filtered
    }

    /// Read the next page of rows; false when there are no more.
    fn fill(&mut self) -> Result<bool, StoreReadError> {
        let sql =
            format!("SELECT id, payload FROM messages WHERE id > $1 ORDER BY id LIMIT {PAGE_ROWS}");
        let rows = self
            .runtime
            .block_on(self.client.query(sql.as_str(), &[&self.after]))
            .map_err(|e| StoreReadError {
                file: self.source.to_string(),
                what: format!("reading table messages: {e}"),
            })?;
        let read = !rows.is_empty();
        for row in rows {
            let id: i64 = row.get(0);
            let payload: Vec<u8> = row.get(1);
            self.after = id;
            if !self.filter.select.admits(&payload) {
                self.filtered += 1;
                continue;
            }
            self.page.push_back(Stored {
                message: Message {
                    source: Arc::clone(&self.source),
                    index: id.max(0) as u64,
                    line: 1,
                    offset: 0,
                    payload: bytes::Bytes::from(payload),
                    original_control_id: None,
                },
                received_at: None,
            });
        }
        Ok(read)
    }
}

impl Iterator for PostgresRows {
    type Item = Result<Stored, StoreReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(stored) = self.page.pop_front() {
                return Some(Ok(stored));
            }
            if self.done {
                return None;
            }
            match self.fill() {
                Ok(true) => {}
                Ok(false) => self.done = true,
                Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
            }
        }
    }
}
