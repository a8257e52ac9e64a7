//! The de-duplication memory and sink: the key, the window, in-group repeats, and the journal's
//! recovery from a crash between a file and its line.

use super::*;
use crate::server::sink::DiscardSink;
use bytes::Bytes;
use std::io::Write;

fn from(msh3: &str, id: &str, msh7: &str) -> Inbound {
    let payload = format!("MSH|^~\\&|{msh3}|B|C|D|{msh7}||ADT^A01|{id}|P|2.5\rPID|1\r");
    Inbound::new(1, 1, Arc::from("p"), Bytes::from(payload), false)
}

fn msg(id: &str, msh7: &str) -> Inbound {
    from("A", id, msh7)
}

/// Records what reaches it; fails every message whose control ID ends in `-fail`.
#[derive(Default)]
struct Recording(Mutex<Vec<String>>);

impl Sink for Recording {
    fn commit<'a>(&'a self, message: &'a Inbound) -> SinkFuture<'a, SinkResult> {
        Box::pin(async move {
            let id = message.control_id_lossy();
            self.0.lock().unwrap().push(id.clone());
            if id.ends_with("-fail") {
                SinkResult::failed("scripted")
            } else {
                SinkResult::committed()
            }
        })
    }
}

#[tokio::test]
async fn remembers_across_a_reopen_and_never_an_empty_control_id() {
    let dir = tempfile::tempdir().unwrap();
    let memory = Arc::new(DedupeMemory::for_out_dir(10, dir.path(), 1 << 20).unwrap());
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
        !memory.contains(&from("OTHER", "A1", "20240101")),
        "MSH-3 is part of the key"
    );
    assert!(
        !memory.contains(&msg("", "20240101")),
        "empty MSH-10 never de-duplicated"
    );
    drop((sink, memory));
    let again = DedupeMemory::for_out_dir(10, dir.path(), 1 << 20).unwrap();
    assert!(again.contains(&msg("A1", "20240101")));
}

#[tokio::test]
async fn a_repeat_inside_one_commit_group_is_committed_once() {
    let memory = Arc::new(DedupeMemory::in_memory(10));
    let inner = Arc::new(Recording::default());
    let sink = DedupeSink::new(inner.clone(), memory);
    let group = [
        msg("a", "1"),
        msg("b", "1"),
        msg("a", "1"),
        from("Z", "a", "1"),
        msg("c-fail", "1"),
        msg("c-fail", "1"),
    ];
    let results = sink.commit_batch(&group).await;
    assert_eq!(*inner.0.lock().unwrap(), ["a", "b", "a", "c-fail"]);
    let seen: Vec<(Disposition, bool)> = results
        .iter()
        .map(|r| (r.disposition, r.duplicate))
        .collect();
    use Disposition::*;
    assert_eq!(
        seen,
        [
            (Committed, false),
            (Committed, false),
            (Committed, true),
            (Committed, false),
            (CommitFailed, false),
            // The first copy was not kept, so neither is its repeat: a negative answer.
            (CommitFailed, false),
        ]
    );
}

/// Commits slowly, recording what reached it.
struct Slow(Recording);

impl Sink for Slow {
    fn commit<'a>(&'a self, message: &'a Inbound) -> SinkFuture<'a, SinkResult> {
        Box::pin(async move {
            tokio::time::sleep(std::time::Duration::from_secs(1)).await;
            self.0.commit(message).await
        })
    }
}

#[tokio::test(start_paused = true)]
async fn a_copy_on_another_connection_waits_for_the_first_commit() {
    let memory = Arc::new(DedupeMemory::in_memory(10));
    let inner = Arc::new(Slow(Recording::default()));
    let sink = Arc::new(DedupeSink::new(inner.clone(), memory));
    let first = {
        let sink = Arc::clone(&sink);
        tokio::spawn(async move { sink.commit(&msg("X", "1")).await })
    };
    tokio::task::yield_now().await;
    let second = sink.commit_batch(&[msg("X", "1"), msg("Y", "1")]).await;
    assert_eq!(first.await.unwrap(), SinkResult::committed());
    assert_eq!(
        second,
        [SinkResult::duplicate(), SinkResult::committed()],
        "the copy waited and found the first remembered"
    );
    assert_eq!(*inner.0 .0.lock().unwrap(), ["X", "Y"]);
}

#[test]
fn the_window_forgets_the_oldest_and_the_journal_is_compacted() {
    let dir = tempfile::tempdir().unwrap();
    let path = DedupeMemory::journal_in(dir.path());
    let memory = DedupeMemory::for_out_dir(2, dir.path(), 1 << 20).unwrap();
    for i in 0..6 {
        let m = msg(&format!("M{i}"), "1");
        let name = format!("2024-{i}.hl7");
        memory.remember(vec![(name, m.dedupe_key())]).unwrap();
    }
    assert!(!memory.contains(&msg("M3", "1")));
    assert!(memory.contains(&msg("M5", "1")));
    drop(memory);
    // A torn last line is skipped.
    std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap()
        .write_all(b"2024-9.hl7 4d3")
        .unwrap();
    let reopened = DedupeMemory::for_out_dir(2, dir.path(), 1 << 20).unwrap();
    assert!(reopened.contains(&msg("M4", "1")) && reopened.contains(&msg("M5", "1")));
    let lines = std::fs::read_to_string(&path).unwrap().lines().count();
    assert_eq!(lines, 2, "compacted to the window");
}

#[tokio::test]
async fn a_file_committed_before_a_crash_kept_its_line_out_is_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let sink = crate::server::sink::OutDirSink::new(dir.path()).unwrap();
    // Written by the sink, never journaled: what a kill between the two steps leaves.
    let orphan = msg("LOST", "20240101");
    assert_eq!(sink.commit(&orphan).await, SinkResult::committed());
    // And a journal from an earlier version, whose lines name no file and no sender.
    std::fs::write(DedupeMemory::journal_in(dir.path()), "4c4f5354 3230\n").unwrap();
    let memory = DedupeMemory::for_out_dir(10, dir.path(), 1 << 20).unwrap();
    assert!(memory.contains(&orphan));
    assert!(!memory.contains(&from("B", "LOST", "20240101")));
    drop(memory);
    // Read back once: the journal names it now.
    let journal = std::fs::read_to_string(DedupeMemory::journal_in(dir.path())).unwrap();
    assert!(
        journal.contains(&OutDirSink::file_name(&orphan)),
        "{journal}"
    );
}
