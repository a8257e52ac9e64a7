//! De-duplication by MSH-10 + MSH-7: a bounded memory of committed messages, optionally kept in
//! an append-only journal (fsynced before the ACK, reloaded at start), a sink wrapper that
//! remembers what its sink committed, and a policy wrapper that answers repeats as duplicates.
//!
//! Two copies of one message in flight at the same moment are both committed: a copy is only
//! called a duplicate once the first is durably committed, so a duplicate answer is never a
//! false positive.

use super::policy::{Action, Decision, Policy};
use super::sink::{Inbound, Sink, SinkFuture, SinkResult};
use crate::ack::Disposition;
use bytes::Bytes;
use std::collections::{HashSet, VecDeque};
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The journal's name inside `--out-dir`; a dot file, so `*.hl7` readers never see it.
pub const JOURNAL_NAME: &str = ".mllp-dedupe.journal";

type Key = (Bytes, Bytes);

/// The remembered keys, oldest first; the oldest are forgotten beyond the window.
#[derive(Debug)]
struct Window {
    set: HashSet<Key>,
    order: VecDeque<Key>,
    capacity: usize,
}

impl Window {
    fn insert(&mut self, key: Key) {
        if self.set.contains(&key) {
            return;
        }
        if self.order.len() >= self.capacity {
            if let Some(old) = self.order.pop_front() {
                self.set.remove(&old);
            }
        }
        self.set.insert(key.clone());
        self.order.push_back(key);
    }
}

/// Committed messages' keys, bounded to a window, optionally journaled.
#[derive(Debug)]
pub struct DedupeMemory {
    window: Mutex<Window>,
    journal: Option<Mutex<File>>,
}

impl DedupeMemory {
    /// A memory of the last `window` keys (at least one). With `journal`, the keys already in
    /// that file are loaded (the file is compacted when it holds far more than the window) and
    /// new keys are appended to it.
    pub fn open(window: usize, journal: Option<&Path>) -> std::io::Result<DedupeMemory> {
        let mut memory = Window {
            set: HashSet::new(),
            order: VecDeque::new(),
            capacity: window.max(1),
        };
        let journal = match journal {
            None => None,
            Some(path) => {
                let lines = load(path, &mut memory)?;
                if lines > 2 * memory.capacity {
                    compact(path, &memory.order)?;
                }
                let file = OpenOptions::new().create(true).append(true).open(path)?;
                Some(Mutex::new(file))
            }
        };
        Ok(DedupeMemory {
            window: Mutex::new(memory),
            journal,
        })
    }

    /// The journal path for an `--out-dir`.
    pub fn journal_in(dir: &Path) -> PathBuf {
        dir.join(JOURNAL_NAME)
    }

    pub fn contains(&self, message: &Inbound) -> bool {
        message.dedupe_key().is_some_and(|key| {
            self.window
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .set
                .contains(&key)
        })
    }

    /// Remember `keys`: journaled and fsynced first (blocking), then in memory.
    fn remember(&self, keys: Vec<Key>) -> std::io::Result<()> {
        if keys.is_empty() {
            return Ok(());
        }
        let mut result = Ok(());
        if let Some(journal) = &self.journal {
            let mut text = Vec::with_capacity(keys.len() * 48);
            for (control_id, msh7) in &keys {
                text.extend_from_slice(hex(control_id).as_bytes());
                text.push(b' ');
                text.extend_from_slice(hex(msh7).as_bytes());
                text.push(b'\n');
            }
            let mut file = journal.lock().unwrap_or_else(|p| p.into_inner());
            result = file.write_all(&text).and_then(|()| file.sync_data());
        }
        let mut window = self.window.lock().unwrap_or_else(|p| p.into_inner());
        for key in keys {
            window.insert(key);
        }
        result
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Option<Bytes> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect::<Option<Vec<u8>>>()
        .map(Bytes::from)
}

/// Load a journal into `window`; returns the number of lines. A torn last line (a crash in
/// the middle of an append) is skipped: its message was never acknowledged.
fn load(path: &Path, window: &mut Window) -> std::io::Result<usize> {
    let file = match File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(e),
    };
    let mut lines = 0;
    for line in BufReader::new(file).lines() {
        let line = line?;
        lines += 1;
        let mut parts = line.split(' ');
        if let (Some(Some(id)), Some(Some(msh7)), None) = (
            parts.next().map(unhex),
            parts.next().map(unhex),
            parts.next(),
        ) {
            window.insert((id, msh7));
        }
    }
    Ok(lines)
}

/// Rewrite the journal with only the keys still in the window, atomically.
fn compact(path: &Path, keys: &VecDeque<Key>) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::Builder::new()
        .prefix(".mllp-dedupe-")
        .tempfile_in(dir)?;
    let mut out = std::io::BufWriter::new(tmp.as_file_mut());
    for (id, msh7) in keys {
        writeln!(out, "{} {}", hex(id), hex(msh7))?;
    }
    out.flush()?;
    drop(out);
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    File::open(dir)?.sync_all()
}

/// Commits through `inner`, then remembers what it committed before the ACKs go out.
pub struct DedupeSink {
    inner: Arc<dyn Sink>,
    memory: Arc<DedupeMemory>,
}

impl DedupeSink {
    pub fn new(inner: Arc<dyn Sink>, memory: Arc<DedupeMemory>) -> DedupeSink {
        DedupeSink { inner, memory }
    }
}

impl Sink for DedupeSink {
    fn commit<'a>(&'a self, message: &'a Inbound) -> SinkFuture<'a, SinkResult> {
        Box::pin(async move {
            let mut results = self.commit_batch(std::slice::from_ref(message)).await;
            results
                .pop()
                .unwrap_or_else(|| SinkResult::failed("no result"))
        })
    }

    fn commit_batch<'a>(&'a self, messages: &'a [Inbound]) -> SinkFuture<'a, Vec<SinkResult>> {
        Box::pin(async move {
            let mut results =
                super::sink::pad_results(self.inner.commit_batch(messages).await, messages.len());
            let keys: Vec<Key> = messages
                .iter()
                .zip(&results)
                .filter(|(_, r)| r.disposition == Disposition::Committed && !r.duplicate)
                .filter_map(|(m, _)| m.dedupe_key())
                .collect();
            if keys.is_empty() {
                return results;
            }
            let memory = Arc::clone(&self.memory);
            let outcome = tokio::task::spawn_blocking(move || memory.remember(keys)).await;
            let problem = match outcome {
                Ok(Ok(())) => None,
                Ok(Err(e)) => Some(format!("dedupe journal: {e}")),
                Err(e) => Some(format!("dedupe journal: writer task: {e}")),
            };
            // The messages are committed either way: they are answered positively, and the
            // journal failure is reported (a later repeat may then be committed again).
            if let Some(detail) = problem {
                if let Some(first) = results
                    .iter_mut()
                    .find(|r| r.disposition == Disposition::Committed)
                {
                    first.detail = Some(detail);
                }
            }
            results
        })
    }
}

/// Answers repeats of remembered messages as duplicates; everything else as `inner` decides.
pub struct DedupePolicy {
    inner: Arc<dyn Policy>,
    memory: Arc<DedupeMemory>,
}

impl DedupePolicy {
    pub fn new(inner: Arc<dyn Policy>, memory: Arc<DedupeMemory>) -> DedupePolicy {
        DedupePolicy { inner, memory }
    }
}

impl Policy for DedupePolicy {
    fn decide(&self, message: &Inbound) -> Decision {
        let mut decision = self.inner.decide(message);
        if decision.action == Action::Commit && self.memory.contains(message) {
            decision.action = Action::Duplicate;
        }
        decision
    }

    fn committed(&self, message: &Inbound) {
        self.inner.committed(message)
    }

    fn closed(&self, connection: u64) {
        self.inner.closed(connection)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::sink::DiscardSink;

    fn msg(id: &str, msh7: &str) -> Inbound {
        let payload = format!("MSH|^~\\&|A|B|C|D|{msh7}||ADT^A01|{id}|P|2.5\rPID|1\r");
        Inbound::new(1, 1, Arc::from("p"), Bytes::from(payload), false)
    }

    #[tokio::test]
    async fn remembers_across_a_reopen_and_never_an_empty_control_id() {
        let dir = tempfile::tempdir().unwrap();
        let path = DedupeMemory::journal_in(dir.path());
        let memory = Arc::new(DedupeMemory::open(10, Some(&path)).unwrap());
        let sink = DedupeSink::new(Arc::new(DiscardSink), Arc::clone(&memory));
        let batch = [msg("A1", "20240101"), msg("", "20240101")];
        let results = sink.commit_batch(&batch).await;
        assert!(results.iter().all(|r| r == &SinkResult::committed()));
        assert!(memory.contains(&msg("A1", "20240101")));
        assert!(
            !memory.contains(&msg("A1", "20240102")),
            "MSH-7 is part of the key"
        );
        assert!(
            !memory.contains(&msg("", "20240101")),
            "empty MSH-10 never de-duplicated"
        );
        drop((sink, memory));
        let again = DedupeMemory::open(10, Some(&path)).unwrap();
        assert!(again.contains(&msg("A1", "20240101")));
    }

    #[test]
    fn the_window_forgets_the_oldest_and_the_journal_is_compacted() {
        let dir = tempfile::tempdir().unwrap();
        let path = DedupeMemory::journal_in(dir.path());
        let memory = DedupeMemory::open(2, Some(&path)).unwrap();
        for i in 0..6 {
            memory
                .remember(
                    msg(&format!("M{i}"), "1")
                        .dedupe_key()
                        .into_iter()
                        .collect(),
                )
                .unwrap();
        }
        assert!(!memory.contains(&msg("M3", "1")));
        assert!(memory.contains(&msg("M5", "1")));
        drop(memory);
        // A torn last line is skipped.
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(b"4d3")
            .unwrap();
        let reopened = DedupeMemory::open(2, Some(&path)).unwrap();
        assert!(reopened.contains(&msg("M4", "1")) && reopened.contains(&msg("M5", "1")));
        let lines = std::fs::read_to_string(&path).unwrap().lines().count();
        assert_eq!(lines, 2, "compacted to the window");
    }
}
