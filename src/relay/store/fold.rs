//! Folding the WAL into the main file off the answer's path. A commit group is answered once
//! its synced commit is in the WAL and the path still names the file; the checkpoint that copies
//! it into the main file (a second and third wait for the disk) comes once writes pause, and at
//! the end. SQLite folds the WAL at close only while the path names the file, so a file moved
//! away is folded here by hand before it is let go: its rows stay in it, wherever it is.

use super::{file, Open, Store};
use crate::server::{ServerEvent, StoreReports};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;
use tokio::sync::Notify;

/// How long writes must pause before the WAL is folded: under a steady stream of commits the
/// WAL is folded by SQLite's own checkpoint every 1,000 pages instead.
const FOLD_WHEN_IDLE: Duration = Duration::from_millis(100);

impl Store {
    /// Say that the file was written: the WAL is folded once writes pause.
    pub(super) fn wrote(&self) {
        let written = self.written.get_or_init(|| {
            let written = Arc::new(Notify::new());
            // A weak hold: the store closes (and folds) when its last user lets it go.
            let open = Arc::downgrade(&self.open);
            let said = (self.file.clone(), Arc::clone(&self.reports));
            tokio::spawn(fold_when_idle(open, said, Arc::clone(&written)));
            written
        });
        written.notify_one();
    }
}

/// Fold the WAL each time writes pause for [`FOLD_WHEN_IDLE`], until the store is gone; what
/// goes wrong is said in `reports`.
async fn fold_when_idle(
    open: Weak<Mutex<Open>>,
    (path, reports): (PathBuf, Arc<OnceLock<StoreReports>>),
    written: Arc<Notify>,
) {
    loop {
        written.notified().await;
        while tokio::time::timeout(FOLD_WHEN_IDLE, written.notified())
            .await
            .is_ok()
        {}
        let Some(open) = open.upgrade() else {
            return;
        };
        let at = path.clone();
        let folded = tokio::task::spawn_blocking(move || {
            let mut open = open.lock().unwrap_or_else(|p| p.into_inner());
            open.fold(&at)
        })
        .await;
        if let (Ok(Err(detail)), Some(reports)) = (folded, reports.get()) {
            reports.send(ServerEvent::StoreError { detail }).await;
        }
    }
}

impl Open {
    /// Copy the WAL into the main file; a file moved away meanwhile is let go (folded) and the
    /// path opened anew, and why is returned to be said.
    fn fold(&mut self, path: &Path) -> Result<(), String> {
        self.check(path)?;
        file::fold_wal(&self.db);
        Ok(())
    }
}

impl Drop for Open {
    fn drop(&mut self) {
        // At close SQLite folds only a file still at its path; one moved away is folded here.
        if !file::is_at(&self.path, self.id) {
            let _ = file::checkpoint(&self.db);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::relay::store::Taking;
    use crate::server::Inbound;
    use bytes::Bytes;

    fn rows_in_main_file_alone(file: &Path) -> i64 {
        let alone = tempfile::tempdir().unwrap();
        let copy = alone.path().join("copy.db");
        std::fs::copy(file, &copy).unwrap();
        let db = rusqlite::Connection::open(&copy).unwrap();
        // No table at all while the schema itself is only in the WAL.
        db.query_row("SELECT COUNT(*) FROM queue", [], |r| r.get(0))
            .unwrap_or(0)
    }

    #[tokio::test]
    async fn a_file_moved_away_is_folded_when_the_store_closes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("q.db");
        let store = Store::open(&path).unwrap();
        let payload = Bytes::from_static(b"MSH|^~\\&|A|B|C|D|20240101||ADT^A01|M1|P|2.5\r");
        let message = Inbound::new(1, 1, Arc::from("peer"), payload, false);
        let taken = store.insert(vec![Taking::of(&[message])], None).await;
        assert!(matches!(taken.as_deref(), Ok([Ok(Some(_))])), "{taken:?}");
        // Moved before writes paused long enough for a fold, and closed at once.
        let moved = dir.path().join("q.db.1");
        std::fs::rename(&path, &moved).unwrap();
        drop(store);
        assert_eq!(rows_in_main_file_alone(&moved), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn the_wal_is_folded_once_writes_pause() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("q.db");
        let store = Store::open(&path).unwrap();
        let payload = Bytes::from_static(b"MSH|^~\\&|A|B|C|D|20240101||ADT^A01|M1|P|2.5\r");
        let message = Inbound::new(1, 1, Arc::from("peer"), payload, false);
        store.insert(vec![Taking::of(&[message])], None).await.unwrap();
        assert_eq!(rows_in_main_file_alone(&path), 0, "answered before any fold");
        tokio::time::sleep(FOLD_WHEN_IDLE * 2).await;
        // The fold runs off the runtime's workers: give it a moment of real time.
        for _ in 0..200 {
            if rows_in_main_file_alone(&path) == 1 {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
            tokio::task::yield_now().await;
        }
        assert_eq!(rows_in_main_file_alone(&path), 1);
    }
}
