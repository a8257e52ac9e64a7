//! The directory sink: one `.hl7` file per message holding exactly the de-framed bytes, written
//! to a temporary name, fsynced, renamed without overwriting, and the directory fsynced, all
//! before the ACK, every step relative to one open directory handle. Names sort by arrival:
//! `<UTC stamp>-<seq>-c<connection>.hl7`. A failed commit keeps nothing, and the temporary files
//! a crash leaves behind are removed on start.
//!
//! The handle is checked against the path at each commit group: a directory renamed, replaced or
//! removed under the path is noticed, reported, and the directory the path names then (if any)
//! is opened. A group whose directory moved while it was written is taken back, so a positive
//! answer always means the file is durable in the directory the path names.

mod handle;

use super::{Inbound, Sink, SinkFuture, SinkResult};
use crate::server::clock::Utc;
use bytes::Bytes;
use handle::DirHandle;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Writes each message to its own file in a directory.
#[derive(Debug, Clone)]
pub struct OutDirSink {
    dir: Arc<PathBuf>,
    /// The directory the path named when last checked; replaced when the path moves on.
    handle: Arc<Mutex<Arc<DirHandle>>>,
}

impl OutDirSink {
    /// The directory must exist and be writable; checked here so a bad path is a usage error,
    /// not a stream of AE answers. Temporary files a crash left there are removed.
    pub fn new(dir: impl Into<PathBuf>) -> std::io::Result<OutDirSink> {
        let dir = dir.into();
        if !std::fs::metadata(&dir)?.is_dir() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("{} is not a directory", dir.display()),
            ));
        }
        let handle = DirHandle::open(&dir)?;
        // Prove we can create files there.
        let probe = temp_name();
        handle.create_new(&probe)?;
        handle.remove(&probe)?;
        remove_leftovers(&dir)?;
        Ok(OutDirSink {
            dir: Arc::new(dir),
            handle: Arc::new(Mutex::new(Arc::new(handle))),
        })
    }

    /// The name `message`'s file gets: its receipt time, arrival order and connection.
    pub fn file_name(message: &Inbound) -> String {
        format!(
            "{}-{:012}-c{}.hl7",
            Utc::from_system(message.received_at).file_stamp(),
            message.seq,
            message.connection
        )
    }

    /// The handle of the directory the path names now, and a note when that is not the one
    /// used so far (it was renamed, replaced or removed).
    fn current(&self) -> Result<(Arc<DirHandle>, Option<String>), String> {
        let mut held = self.handle.lock().unwrap_or_else(|p| p.into_inner());
        if held.is_at(&self.dir) {
            return Ok((Arc::clone(&held), None));
        }
        let path = self.dir.display();
        match DirHandle::open(&self.dir) {
            Ok(fresh) => {
                *held = Arc::new(fresh);
                let note = format!(
                    "out-dir: {path} was moved or replaced; now writing to the directory there now"
                );
                Ok((Arc::clone(&held), Some(note)))
            }
            Err(e) => Err(format!(
                "out-dir: {path} was moved, replaced or removed, and cannot be opened: {e}"
            )),
        }
    }
}

/// Every temporary file of ours starts with this and ends with [`TEMP_SUFFIX`].
const TEMP_PREFIX: &str = ".mllp-";
const TEMP_SUFFIX: &str = ".tmp";

fn temp_name() -> String {
    format!("{TEMP_PREFIX}{:016x}{TEMP_SUFFIX}", rand::random::<u64>())
}

/// Remove the temporary files a crash left in `dir`: never renamed, so never acknowledged.
fn remove_leftovers(dir: &Path) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with(TEMP_PREFIX) && name.ends_with(TEMP_SUFFIX) {
            match std::fs::remove_file(entry.path()) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
                _ => {}
            }
        }
    }
    Ok(())
}

/// Write `payload` to a new temporary file, fsync it and rename it to `name`, all in `dir`; on
/// failure the temporary file is removed.
fn write_one(dir: &DirHandle, name: &str, payload: &[u8]) -> std::io::Result<()> {
    let (tmp, mut file) = loop {
        let tmp = temp_name();
        match dir.create_new(&tmp) {
            Ok(file) => break (tmp, file),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    };
    let written = file
        .write_all(payload)
        .and_then(|()| file.sync_all())
        .and_then(|()| dir.rename_noclobber(&tmp, name));
    if written.is_err() {
        let _ = dir.remove(&tmp);
    }
    written
}

fn write_batch(sink: &OutDirSink, files: &[(String, Bytes)]) -> Vec<SinkResult> {
    let (dir, note) = match sink.current() {
        Ok(current) => current,
        Err(why) => return vec![SinkResult::failed(why); files.len()],
    };
    let mut results: Vec<SinkResult> = files
        .iter()
        .map(|(name, payload)| match write_one(&dir, name, payload) {
            Ok(()) => SinkResult::committed(),
            Err(e) => SinkResult::failed(format!("out-dir: {e}")),
        })
        .collect();
    let kept = |r: &SinkResult| r.disposition == crate::ack::Disposition::Committed;
    if results.iter().any(kept) {
        // The renames are durable only once the directory is synced, and count only if the path
        // still names the directory they were made in; else the files are taken back (from that
        // directory, wherever it is now) so a negative answer keeps nothing.
        let failure = match dir.sync() {
            Err(e) => Some(format!("out-dir: directory fsync: {e}")),
            Ok(()) if !dir.is_at(&sink.dir) => Some(format!(
                "out-dir: {} was moved or replaced during the commit; its files were taken back",
                sink.dir.display()
            )),
            Ok(()) => None,
        };
        if let Some(why) = failure {
            for ((name, _), result) in files.iter().zip(&mut results) {
                if kept(result) {
                    *result = match dir.remove(name) {
                        Ok(()) => SinkResult::failed(why.clone()),
                        Err(e) => SinkResult::failed(format!(
                            "{why}; removing {name} failed, it may remain: {e}"
                        )),
                    };
                }
            }
            let _ = dir.sync();
        }
    }
    if let (Some(note), Some(first)) = (note, results.first_mut()) {
        first.detail = Some(match first.detail.take() {
            Some(detail) => format!("{note}; {detail}"),
            None => note,
        });
    }
    results
}

impl Sink for OutDirSink {
    fn commit<'a>(&'a self, message: &'a Inbound) -> SinkFuture<'a, SinkResult> {
        super::commit_as_batch(self, message, "out-dir: no result")
    }

    fn commit_batch<'a>(&'a self, messages: &'a [Inbound]) -> SinkFuture<'a, Vec<SinkResult>> {
        Box::pin(async move {
            let files: Vec<(String, Bytes)> = messages
                .iter()
                .map(|m| (Self::file_name(m), m.payload.clone()))
                .collect();
            let sink = self.clone();
            let len = files.len();
            match tokio::task::spawn_blocking(move || write_batch(&sink, &files)).await {
                Ok(results) => results,
                Err(e) => vec![SinkResult::failed(format!("out-dir: writer task: {e}")); len],
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn files_hold_exact_bytes_and_sort_by_arrival() {
        let dir = tempfile::tempdir().unwrap();
        let sink = OutDirSink::new(dir.path()).unwrap();
        let peer: Arc<str> = Arc::from("test");
        let batch: Vec<Inbound> = (1..=3)
            .map(|seq| {
                Inbound::new(
                    7,
                    seq,
                    peer.clone(),
                    Bytes::from(format!("NOT HL7 {seq}\r")),
                    false,
                )
            })
            .collect();
        let results = sink.commit_batch(&batch).await;
        assert!(results.iter().all(|r| r == &SinkResult::committed()));
        let mut names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        assert_eq!(names.len(), 3, "no temporary files left: {names:?}");
        for (i, name) in names.iter().enumerate() {
            assert!(name.ends_with(&format!("-{:012}-c7.hl7", i + 1)), "{name}");
            let body = std::fs::read(dir.path().join(name)).unwrap();
            assert_eq!(body, format!("NOT HL7 {}\r", i + 1).as_bytes());
        }
    }

    #[test]
    fn a_crash_s_temporary_files_are_removed_on_start_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let keep = [
            "20240101T000000.000000Z-000000000001-c1.hl7",
            ".mllp-dedupe.journal",
            "notes.tmp",
        ];
        for name in keep
            .iter()
            .chain(&[".mllp-Ab12Cd.tmp", ".mllp-dedupe-Xy.tmp"])
        {
            std::fs::write(dir.path().join(name), b"x").unwrap();
        }
        OutDirSink::new(dir.path()).unwrap();
        let mut left: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        let mut want = keep.map(String::from).to_vec();
        want.sort();
        assert_eq!(left, want);
    }
}
