//! The directory sink: one `.hl7` file per message holding exactly the de-framed bytes, written
//! to a temporary name, fsynced, renamed without overwriting, and the directory fsynced, all
//! before the ACK. Names sort by arrival: `<UTC stamp>-<seq>-c<connection>.hl7`. A failed
//! commit keeps nothing, and the temporary files a crash leaves behind are removed on start.

use super::{Inbound, Sink, SinkFuture, SinkResult};
use crate::server::clock::Utc;
use bytes::Bytes;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Writes each message to its own file in a directory.
#[derive(Debug, Clone)]
pub struct OutDirSink {
    dir: Arc<PathBuf>,
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
        // Prove we can create files there.
        tempfile::Builder::new()
            .prefix(".mllp-probe-")
            .suffix(TEMP_SUFFIX)
            .tempfile_in(&dir)?;
        remove_leftovers(&dir)?;
        Ok(OutDirSink { dir: Arc::new(dir) })
    }

    pub fn file_name(message: &Inbound) -> String {
        format!(
            "{}-{:012}-c{}.hl7",
            Utc::from_system(message.received_at).file_stamp(),
            message.seq,
            message.connection
        )
    }
}

/// Every temporary file of ours starts with this and ends with [`TEMP_SUFFIX`].
const TEMP_PREFIX: &str = ".mllp-";
const TEMP_SUFFIX: &str = ".tmp";

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

fn write_one(dir: &Path, name: &str, payload: &[u8]) -> std::io::Result<()> {
    let mut tmp = tempfile::Builder::new()
        .prefix(TEMP_PREFIX)
        .suffix(TEMP_SUFFIX)
        .tempfile_in(dir)?;
    tmp.write_all(payload)?;
    tmp.as_file().sync_all()?;
    tmp.persist_noclobber(dir.join(name)).map_err(|e| e.error)?;
    Ok(())
}

fn write_batch(dir: &Path, files: &[(String, Bytes)]) -> Vec<SinkResult> {
    let mut results: Vec<SinkResult> = files
        .iter()
        .map(|(name, payload)| match write_one(dir, name, payload) {
            Ok(()) => SinkResult::committed(),
            Err(e) => SinkResult::failed(format!("out-dir: {e}")),
        })
        .collect();
    // The renames are durable only once the directory itself is synced; if it cannot be, the
    // files are taken back so a negative answer keeps nothing.
    if let Err(e) = File::open(dir).and_then(|d| d.sync_all()) {
        for ((name, _), result) in files.iter().zip(&mut results) {
            if result.disposition == crate::ack::Disposition::Committed {
                let _ = std::fs::remove_file(dir.join(name));
            }
            *result = SinkResult::failed(format!("out-dir: directory fsync: {e}"));
        }
    }
    results
}

impl Sink for OutDirSink {
    fn commit<'a>(&'a self, message: &'a Inbound) -> SinkFuture<'a, SinkResult> {
        Box::pin(async move {
            let mut results = self.commit_batch(std::slice::from_ref(message)).await;
            results
                .pop()
                .unwrap_or_else(|| SinkResult::failed("out-dir: no result"))
        })
    }

    fn commit_batch<'a>(&'a self, messages: &'a [Inbound]) -> SinkFuture<'a, Vec<SinkResult>> {
        Box::pin(async move {
            let files: Vec<(String, Bytes)> = messages
                .iter()
                .map(|m| (Self::file_name(m), m.payload.clone()))
                .collect();
            let dir = Arc::clone(&self.dir);
            let len = files.len();
            match tokio::task::spawn_blocking(move || write_batch(&dir, &files)).await {
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
