//! De-duplication by MSH-3, MSH-4, MSH-10 and MSH-7: a bounded memory of committed messages
//! (for `--out-dir` kept crash-safe by a journal, [`JOURNAL_NAME`], and the directory itself),
//! a sink wrapper that commits one copy of each key per commit group and remembers what its
//! sink committed, and a policy wrapper that answers repeats as duplicates.
//!
//! A copy is only called a duplicate once the first is durably committed, so a duplicate answer
//! is never a false positive: a copy in the same commit group follows the first's fate, and a
//! copy on another connection while the first is being committed waits for that commit.

mod journal;

pub(crate) use journal::JOURNAL_NAME;

use super::policy::{Action, Decision, Policy};
use super::sink::out_dir::OutDirSink;
use super::sink::{DedupeKey, Inbound, Sink, SinkFuture, SinkResult};
use crate::ack::Disposition;
use bytes::Bytes;
use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet, VecDeque};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The remembered keys, oldest first; the oldest are forgotten beyond the window.
#[derive(Debug)]
struct Window {
    set: HashSet<DedupeKey>,
    order: VecDeque<DedupeKey>,
    capacity: usize,
}

impl Window {
    fn new(capacity: usize) -> Window {
        Window {
            set: HashSet::new(),
            order: VecDeque::new(),
            capacity: capacity.max(1),
        }
    }

    fn insert(&mut self, key: DedupeKey) {
        if self.set.contains(&key) {
            return;
        }
        // The fields are slices of their message: a copy lets the message's memory go.
        let key = DedupeKey {
            sending_application: Bytes::copy_from_slice(&key.sending_application),
            sending_facility: Bytes::copy_from_slice(&key.sending_facility),
            control_id: Bytes::copy_from_slice(&key.control_id),
            date_time: Bytes::copy_from_slice(&key.date_time),
        };
        if self.order.len() >= self.capacity {
            if let Some(old) = self.order.pop_front() {
                self.set.remove(&old);
            }
        }
        self.set.insert(key.clone());
        self.order.push_back(key);
    }
}

/// Committed messages' keys, bounded to a window; for an `--out-dir`, journaled.
#[derive(Debug)]
pub struct DedupeMemory {
    window: Mutex<Window>,
    journal: Option<Mutex<File>>,
    /// Keys some commit group is committing right now, and a signal each time some are let go.
    claims: Mutex<HashSet<DedupeKey>>,
    released: tokio::sync::Notify,
    /// What loading skipped (a link, a FIFO, a file larger than a frame), one line each.
    skipped: Vec<String>,
}

impl DedupeMemory {
    /// A memory of the last `window` keys (at least one), kept only in memory.
    pub fn in_memory(window: usize) -> DedupeMemory {
        DedupeMemory {
            window: Mutex::new(Window::new(window)),
            journal: None,
            claims: Mutex::default(),
            released: tokio::sync::Notify::new(),
            skipped: Vec::new(),
        }
    }

    /// A memory of the last `window` keys committed to the directory sink's `dir`: the journal
    /// there is loaded, every recent file it does not name (a crash came between the file and
    /// its line) is read back (up to `max_file` bytes, the largest frame) and added, and new
    /// keys are journaled before their ACKs. Links, FIFOs and oversize files are skipped
    /// ([`DedupeMemory::skipped`]).
    pub fn for_out_dir(
        window: usize,
        dir: &Path,
        max_file: usize,
    ) -> std::io::Result<DedupeMemory> {
        let mut memory = Window::new(window);
        let mut skipped = Vec::new();
        let file = journal::open(dir, &mut memory, max_file, &mut skipped)?;
        Ok(DedupeMemory {
            window: Mutex::new(memory),
            journal: Some(Mutex::new(file)),
            claims: Mutex::default(),
            released: tokio::sync::Notify::new(),
            skipped,
        })
    }

    /// What loading skipped, one line each naming the file and why: for warnings.
    pub fn skipped(&self) -> &[String] {
        &self.skipped
    }

    /// The journal path for an `--out-dir`.
    pub fn journal_in(dir: &Path) -> PathBuf {
        dir.join(JOURNAL_NAME)
    }

    /// Whether `message`'s de-duplication key is remembered (committed before).
    pub fn contains(&self, message: &Inbound) -> bool {
        message.dedupe_key().is_some_and(|key| self.knows(&key))
    }

    fn knows(&self, key: &DedupeKey) -> bool {
        self.window
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .set
            .contains(key)
    }

    /// Claim `keys` for one commit group, once no other group holds any of them: a copy arriving
    /// on another connection while the first is being committed waits for that commit, then
    /// finds it remembered. A group holds no claim while it waits, so two groups never wait on
    /// each other.
    async fn claim(self: &Arc<Self>, keys: Vec<DedupeKey>) -> Claim {
        loop {
            let released = self.released.notified();
            tokio::pin!(released);
            released.as_mut().enable();
            {
                let mut claims = self.claims.lock().unwrap_or_else(|p| p.into_inner());
                if !keys.iter().any(|k| claims.contains(k)) {
                    claims.extend(keys.iter().cloned());
                    return Claim {
                        memory: Arc::clone(self),
                        keys,
                    };
                }
            }
            released.await;
        }
    }

    /// Remember what was committed: journaled and fsynced first (blocking), then in memory.
    fn remember(&self, entries: Vec<journal::Entry>) -> std::io::Result<()> {
        let mut result = Ok(());
        if let Some(journal) = &self.journal {
            let mut file = journal.lock().unwrap_or_else(|p| p.into_inner());
            result = journal::append(&mut file, &entries);
        }
        let mut window = self.window.lock().unwrap_or_else(|p| p.into_inner());
        for key in entries.into_iter().filter_map(|(_, key)| key) {
            window.insert(key);
        }
        result
    }
}

/// Keys a commit group holds; let go when it is dropped (committed and remembered, or
/// abandoned).
struct Claim {
    memory: Arc<DedupeMemory>,
    keys: Vec<DedupeKey>,
}

impl Drop for Claim {
    fn drop(&mut self) {
        if self.keys.is_empty() {
            return;
        }
        let mut claims = self.memory.claims.lock().unwrap_or_else(|p| p.into_inner());
        for key in &self.keys {
            claims.remove(key);
        }
        drop(claims);
        self.memory.released.notify_waiters();
    }
}

/// What becomes of one message of a commit group.
#[derive(Debug, Clone, Copy)]
enum Plan {
    /// Handed to the sink, at this index of what it is given.
    Commit(usize),
    /// Its key is remembered: answered as a duplicate, not committed again.
    Known,
    /// Its key is the key of this earlier message of the group: it shares that one's fate.
    Repeat(usize),
}

/// Commits through `inner` one copy of each key in a group, then remembers what it committed
/// before the ACKs go out.
pub struct DedupeSink {
    inner: Arc<dyn Sink>,
    memory: Arc<DedupeMemory>,
}

impl DedupeSink {
    /// Commit through `inner`, skipping (and answering positively) what `memory` knows.
    pub fn new(inner: Arc<dyn Sink>, memory: Arc<DedupeMemory>) -> DedupeSink {
        DedupeSink { inner, memory }
    }

    fn plan(&self, messages: &[Inbound]) -> Vec<Plan> {
        let mut first: HashMap<DedupeKey, usize> = HashMap::new();
        let mut committed = 0;
        let mut commit = || {
            committed += 1;
            Plan::Commit(committed - 1)
        };
        let mut plans = Vec::with_capacity(messages.len());
        for (i, message) in messages.iter().enumerate() {
            let plan = match message.dedupe_key() {
                Some(key) if self.memory.knows(&key) => Plan::Known,
                Some(key) => match first.entry(key) {
                    Entry::Occupied(earlier) => Plan::Repeat(*earlier.get()),
                    Entry::Vacant(slot) => {
                        slot.insert(i);
                        commit()
                    }
                },
                None => commit(),
            };
            plans.push(plan);
        }
        plans
    }
}

impl Sink for DedupeSink {
    fn commit<'a>(&'a self, message: &'a Inbound) -> SinkFuture<'a, SinkResult> {
        super::sink::commit_as_batch(self, message, "no result")
    }

    fn commit_batch<'a>(&'a self, messages: &'a [Inbound]) -> SinkFuture<'a, Vec<SinkResult>> {
        Box::pin(async move {
            let fresh: Vec<DedupeKey> = messages
                .iter()
                .zip(self.plan(messages))
                .filter(|(_, p)| matches!(p, Plan::Commit(_)))
                .filter_map(|(m, _)| m.dedupe_key())
                .collect();
            let _claim = self.memory.claim(fresh).await;
            // Planned again: a copy committed elsewhere meanwhile is now remembered.
            let plans = self.plan(messages);
            let committed = self.commit_chosen(messages, &plans).await;
            let mut results = answers(&plans, committed);
            self.remember(messages, &plans, &mut results).await;
            results
        })
    }
}

impl DedupeSink {
    /// Commits through `inner` the messages planned for it, one result each.
    async fn commit_chosen(&self, messages: &[Inbound], plans: &[Plan]) -> Vec<SinkResult> {
        let count = plans
            .iter()
            .filter(|p| matches!(p, Plan::Commit(_)))
            .count();
        let committed = if count == messages.len() {
            self.inner.commit_batch(messages).await
        } else {
            let chosen: Vec<Inbound> = messages
                .iter()
                .zip(plans)
                .filter(|(_, p)| matches!(p, Plan::Commit(_)))
                .map(|(m, _)| m.clone())
                .collect();
            if chosen.is_empty() {
                Vec::new()
            } else {
                self.inner.commit_batch(&chosen).await
            }
        };
        super::sink::pad_results(committed, count)
    }

    /// Remembers what was committed before the ACKs go out.
    async fn remember(&self, messages: &[Inbound], plans: &[Plan], results: &mut [SinkResult]) {
        let journaled = self.memory.journal.is_some();
        let entries: Vec<journal::Entry> = messages
            .iter()
            .zip(plans)
            .zip(results.iter())
            .filter(|((_, p), r)| {
                matches!(p, Plan::Commit(_))
                    && r.disposition == Disposition::Committed
                    && !r.duplicate
            })
            .filter_map(|((m, _), _)| {
                let key = m.dedupe_key();
                let name = journaled.then(|| OutDirSink::file_name(m));
                (key.is_some() || journaled).then(|| (name.unwrap_or_default(), key))
            })
            .collect();
        if entries.is_empty() {
            return;
        }
        let memory = Arc::clone(&self.memory);
        let outcome = tokio::task::spawn_blocking(move || memory.remember(entries)).await;
        let problem = match outcome {
            Ok(Ok(())) => None,
            Ok(Err(e)) => Some(format!("dedupe journal: {e}")),
            Err(e) => Some(format!("dedupe journal: writer task: {e}")),
        };
        // The messages are committed either way: they are answered positively, and the
        // journal failure is reported (the directory is read back at the next start).
        if let Some(detail) = problem {
            if let Some(first) = results
                .iter_mut()
                .find(|r| r.disposition == Disposition::Committed)
            {
                first.detail = Some(detail);
            }
        }
    }
}

/// Each message's answer: its own commit's, a duplicate for a key remembered, and for a repeat
/// within the group what its first copy came to.
fn answers(plans: &[Plan], committed: Vec<SinkResult>) -> Vec<SinkResult> {
    let mut results: Vec<SinkResult> = Vec::with_capacity(plans.len());
    for plan in plans {
        let result = match *plan {
            Plan::Commit(j) => committed[j].clone(),
            Plan::Known => SinkResult::duplicate(),
            Plan::Repeat(i) => match &results[i] {
                r if r.disposition == Disposition::Committed => SinkResult::duplicate(),
                // The first copy was not kept: neither is this one.
                r => SinkResult {
                    detail: None,
                    ..r.clone()
                },
            },
        };
        results.push(result);
    }
    results
}

/// Answers repeats of remembered messages as duplicates; everything else as `inner` decides.
pub struct DedupePolicy {
    inner: Arc<dyn Policy>,
    memory: Arc<DedupeMemory>,
}

impl DedupePolicy {
    /// Decide with `inner`, answering what `memory` knows as a duplicate.
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
mod tests;
