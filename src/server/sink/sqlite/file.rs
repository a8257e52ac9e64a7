//! An SQLite file as the stores hold it (the sink, the relay's queue and record): opened at a
//! path that is no symbolic link, WAL with full synchronous commits, known by its device and
//! inode so a file moved, replaced or deleted under the path is noticed, and let go only once
//! its committed rows are in the main file (checkpointed): closing a moved database does not
//! checkpoint it, and its WAL, left under the old name, would be lost.

use rusqlite::{Connection, OpenFlags};
use std::path::Path;

/// Device and inode.
pub(crate) type Identity = (u64, u64);

/// Open (or create) `path`, refusing a symbolic link there, with WAL and full synchronous
/// commits; the connection and the file's identity.
pub(crate) fn open(path: &Path) -> Result<(Connection, Identity), String> {
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err("is a symbolic link: give the path of the file itself".into());
    }
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX
        | OpenFlags::SQLITE_OPEN_NOFOLLOW;
    let db = Connection::open_with_flags(path, flags).map_err(|e| e.to_string())?;
    let mode: String = db
        .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
        .map_err(|e| e.to_string())?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(format!("cannot use WAL mode (journal mode is {mode})"));
    }
    db.execute_batch("PRAGMA synchronous=FULL; PRAGMA busy_timeout=5000;")
        .map_err(|e| e.to_string())?;
    let id = identity(path).map_err(|e| e.to_string())?;
    Ok((db, id))
}

/// The identity of the file `path` names now (the link itself, were it one).
pub(crate) fn identity(path: &Path) -> std::io::Result<Identity> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::symlink_metadata(path)?;
    Ok((meta.dev(), meta.ino()))
}

/// Whether `path` still names the file known as `id`.
pub(crate) fn is_at(path: &Path, id: Identity) -> bool {
    identity(path).is_ok_and(|now| now == id)
}

/// Move every committed row into the main file (wherever it is now) and empty the WAL; then the
/// connection can be closed without losing a row.
pub(crate) fn checkpoint(db: &Connection) -> Result<(), String> {
    let (busy, log, done): (i64, i64, i64) = db
        .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })
        .map_err(|e| format!("checkpoint: {e}"))?;
    if busy != 0 || log != done {
        return Err(format!(
            "checkpoint: {done} of {log} pages moved, another connection holds the file"
        ));
    }
    Ok(())
}

/// Copy what the last commit put in the WAL into the main file, before it is answered: a file
/// moved away later (while idle, say) cannot be checkpointed any more (SQLite refuses to write
/// a file no longer at its path), and its WAL, left under the old name, would go with the
/// connection. Best effort: a row still only in the WAL is durable there while the file stays.
pub(crate) fn fold_wal(db: &Connection) {
    let _ = db.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()));
}

/// For each of `ids` (in insertion order), whether it was the last to be given its id: SQLite
/// hands a deleted row's id to the next INSERT, so an earlier holder of a repeated id was
/// deleted, whatever a look-up by id finds.
pub(crate) fn last_holders(ids: &[i64]) -> Vec<bool> {
    (0..ids.len())
        .map(|i| !ids[i + 1..].contains(&ids[i]))
        .collect()
}

/// Let the open file go once its rows are in its main file, leaving an empty in-memory database
/// in `db`'s place; on failure it stays open there, and why says so (for `path`, moved away).
pub(crate) fn let_go(db: &mut Connection, path: &Path) -> Result<(), String> {
    let gone = |why: String| {
        format!(
            "{} was moved, replaced or deleted, and its rows could not be secured in it yet ({why}); the path is not reopened until they are",
            path.display()
        )
    };
    checkpoint(db).map_err(gone)?;
    let placeholder = Connection::open_in_memory().map_err(|e| gone(e.to_string()))?;
    let old = std::mem::replace(db, placeholder);
    old.close().map_err(|(old, e)| {
        *db = old;
        gone(format!("close: {e}"))
    })
}
