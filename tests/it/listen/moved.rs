//! Integration tests: `mllp listen`'s stores when what they write to is moved under them: the
//! output directory rotated (`mv inbox inbox.N; mkdir inbox`) under a steady sender, the SQLite
//! file deleted, and planted links, FIFOs and huge files where the start-up read-back and the
//! de-duplication journal look.

use crate::support::listen_proc::{is, ListenProc};
use crate::support::mllp_client::{marked, MllpClient};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Every file under `root` (one level of directories), by name.
fn files_under(root: &Path) -> Vec<PathBuf> {
    let mut all = Vec::new();
    for dir in std::fs::read_dir(root).unwrap() {
        let dir = dir.unwrap().path();
        if dir.is_dir() {
            for file in std::fs::read_dir(&dir).unwrap() {
                all.push(file.unwrap().path());
            }
        }
    }
    all
}

/// The MSH-10 of a stored message.
fn control_id(payload: &[u8]) -> String {
    let text = String::from_utf8_lossy(payload);
    text.split('|').nth(9).unwrap_or_default().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rotated_out_dir_never_gets_a_negative_answer_for_a_file_it_kept() {
    let root = tempfile::tempdir().unwrap();
    let inbox = root.path().join("inbox");
    std::fs::create_dir(&inbox).unwrap();
    let server = ListenProc::start(&["--out-dir", inbox.to_str().unwrap()]);
    let answers: Arc<Mutex<HashMap<String, String>>> = Arc::default();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut senders = Vec::new();
    for s in 0..4 {
        let (answers, stop, addr) = (answers.clone(), stop.clone(), server.addr);
        senders.push(tokio::spawn(async move {
            let mut client = MllpClient::connect(addr).await;
            let mut n = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                n += 1;
                let id = format!("R{s}x{n}");
                client.send(&marked(&id, "")).await;
                let code = client.ack().await.expect("an answer").code;
                answers.lock().unwrap().insert(id, code);
            }
        }));
    }
    for round in 1..=40 {
        tokio::time::sleep(Duration::from_millis(25)).await;
        std::fs::rename(&inbox, root.path().join(format!("inbox.{round}"))).unwrap();
        std::fs::create_dir(&inbox).unwrap();
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for sender in senders {
        sender.await.unwrap();
    }
    drop(server);

    let mut stored: HashMap<String, usize> = HashMap::new();
    let mut temporary = Vec::new();
    for file in files_under(root.path()) {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        if name.ends_with(".tmp") {
            temporary.push(name);
        } else if name.ends_with(".hl7") {
            *stored
                .entry(control_id(&std::fs::read(&file).unwrap()))
                .or_default() += 1;
        }
    }
    assert!(temporary.is_empty(), "temporary files left: {temporary:?}");
    let answers = answers.lock().unwrap();
    assert!(
        answers.len() > 40,
        "the sender kept sending: {}",
        answers.len()
    );
    for (id, code) in answers.iter() {
        let copies = stored.get(id).copied().unwrap_or(0);
        match code.as_str() {
            "AA" => assert_eq!(copies, 1, "{id} answered AA is stored once"),
            _ => assert_eq!(copies, 0, "{id} answered {code} was kept"),
        }
    }
}

/// Control IDs of the rows in the SQLite file at `file`.
fn row_ids(file: &Path) -> Vec<String> {
    let db = rusqlite::Connection::open(file).unwrap();
    let mut q = db
        .prepare("SELECT control_id FROM messages ORDER BY id")
        .unwrap();
    q.query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

#[tokio::test]
async fn a_deleted_sqlite_file_is_answered_negatively_then_reopened() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("rx.db");
    let server = ListenProc::start(&["--sqlite", file.to_str().unwrap()]);
    let mut client = MllpClient::connect(server.addr).await;
    client.send(&marked("Q0", "")).await;
    assert_eq!(client.ack().await.unwrap().code, "AA");
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        std::fs::remove_file(entry.unwrap().path()).unwrap();
    }
    let mut codes = Vec::new();
    for i in 1..=5 {
        client.send(&marked(&format!("Q{i}"), "")).await;
        codes.push((format!("Q{i}"), client.ack().await.unwrap().code));
    }
    assert_ne!(
        codes[0].1, "AA",
        "the first answer after the delete: {codes:?}"
    );
    let event = server.wait_event(is("sink_error"));
    assert!(
        event["detail"]
            .as_str()
            .unwrap()
            .contains("moved, replaced or deleted"),
        "{event}"
    );
    let positive: Vec<String> = codes
        .iter()
        .filter(|(_, code)| code == "AA")
        .map(|(id, _)| id.clone())
        .collect();
    assert!(!positive.is_empty(), "reopened: {codes:?}");
    assert_eq!(
        row_ids(&file),
        positive,
        "every AA is in the file at the path"
    );
}

/// An inbox holding what anyone with write access could plant: a link to `/dev/zero`, a FIFO
/// and a 3 GiB sparse file, each named as a message file.
fn planted_inbox(root: &Path) -> PathBuf {
    let inbox = root.join("inbox");
    std::fs::create_dir(&inbox).unwrap();
    std::os::unix::fs::symlink("/dev/zero", inbox.join("x.hl7")).unwrap();
    let fifo = std::ffi::CString::new(inbox.join("y.hl7").to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path; the result is checked.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    let sparse = std::fs::File::create(inbox.join("z.hl7")).unwrap();
    sparse.set_len(3 << 30).unwrap();
    inbox
}

#[tokio::test]
async fn the_start_up_read_back_skips_links_fifos_and_huge_files() {
    let root = tempfile::tempdir().unwrap();
    let inbox = planted_inbox(root.path());
    let server = ListenProc::start(&["--out-dir", inbox.to_str().unwrap(), "--dedupe"]);
    let mut skipped: Vec<String> = (0..3)
        .map(|_| {
            let event = server.wait_event(is("read_back_skipped"));
            event["detail"].as_str().unwrap().to_string()
        })
        .collect();
    skipped.sort();
    assert!(skipped[0].contains("x.hl7: a symbolic link"), "{skipped:?}");
    assert!(
        skipped[1].contains("y.hl7: not a regular file"),
        "{skipped:?}"
    );
    assert!(skipped[2].contains("z.hl7: larger than"), "{skipped:?}");
    let mut client = MllpClient::connect(server.addr).await;
    client.send(&marked("P1", "")).await;
    assert_eq!(client.ack().await.unwrap().code, "AA");
}

#[tokio::test]
async fn a_planted_journal_link_is_replaced_not_followed() {
    let root = tempfile::tempdir().unwrap();
    let inbox = root.path().join("inbox");
    std::fs::create_dir(&inbox).unwrap();
    let victim = root.path().join("victim.conf");
    std::fs::write(&victim, b"keep me\n").unwrap();
    let journal = inbox.join(".mllp-dedupe.journal");
    std::os::unix::fs::symlink(&victim, &journal).unwrap();
    let server = ListenProc::start(&["--out-dir", inbox.to_str().unwrap(), "--dedupe"]);
    let event = server.wait_event(is("read_back_skipped"));
    assert!(
        event["detail"]
            .as_str()
            .unwrap()
            .contains("a symbolic link"),
        "{event}"
    );
    let mut client = MllpClient::connect(server.addr).await;
    client.send(&marked("J1", "")).await;
    assert_eq!(client.ack().await.unwrap().code, "AA");
    drop(server);
    assert_eq!(std::fs::read(&victim).unwrap(), b"keep me\n");
    let meta = std::fs::symlink_metadata(&journal).unwrap();
    assert!(
        meta.file_type().is_file(),
        "the journal is a file of its own"
    );
    assert!(!std::fs::read(&journal).unwrap().is_empty());
}

#[tokio::test]
async fn a_moved_sqlite_file_keeps_every_row_answered_before_the_move() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("rx.db");
    let server = ListenProc::start(&["--sqlite", file.to_str().unwrap()]);
    let mut client = MllpClient::connect(server.addr).await;
    for i in 1..=20 {
        client.send(&marked(&format!("M{i}"), "")).await;
        assert_eq!(client.ack().await.unwrap().code, "AA");
    }
    let moved = dir.path().join("rx.db.1");
    std::fs::rename(&file, &moved).unwrap();
    let mut after = Vec::new();
    for i in 21..=25 {
        client.send(&marked(&format!("M{i}"), "")).await;
        after.push((format!("M{i}"), client.ack().await.unwrap().code));
    }
    server.signal("TERM");
    drop(client);
    server.wait();
    let before: Vec<String> = (1..=20).map(|i| format!("M{i}")).collect();
    assert_eq!(row_ids(&moved), before, "the moved file holds every row");
    let positive: Vec<String> = after
        .iter()
        .filter(|(_, code)| code == "AA")
        .map(|(id, _)| id.clone())
        .collect();
    assert_ne!(after[0].1, "AA", "the first answer after the move");
    assert_eq!(row_ids(&file), positive, "every later AA is at the path");
}

#[tokio::test]
async fn a_symbolic_link_at_the_sqlite_path_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("elsewhere.db");
    let link = dir.path().join("rx.db");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let out = crate::support::mllp()
        .args(["listen", "--port", "0", "--sqlite"])
        .arg(&link)
        .timeout(Duration::from_secs(10))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("symbolic link"), "{stderr}");
    assert!(!target.exists(), "the link's target was created");
}

/// Control IDs held by the main file `file` alone (a copy read without any WAL beside it).
fn main_file_ids(file: &Path) -> Vec<String> {
    if !file.exists() {
        return Vec::new();
    }
    let alone = tempfile::tempdir().unwrap();
    let copy = alone.path().join("copy.db");
    std::fs::copy(file, &copy).unwrap();
    let db = rusqlite::Connection::open(&copy).unwrap();
    let ids = db
        .prepare("SELECT control_id FROM messages")
        .and_then(|mut q| q.query_map([], |r| r.get(0))?.collect());
    // A main file that never got its table holds nothing.
    ids.unwrap_or_default()
}

#[tokio::test]
async fn rows_of_a_sqlite_file_moved_while_idle_are_in_its_main_file_after_a_stop() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("rx.db");
    let mut server = ListenProc::start(&["--sqlite", file.to_str().unwrap()]);
    let mut client = MllpClient::connect(server.addr).await;
    let mut positive = Vec::new();
    for i in 0..5 {
        let id = format!("I{i}");
        client.send(&marked(&id, "")).await;
        if client.ack().await.unwrap().code == "AA" {
            positive.push(id);
        }
    }
    assert!(!positive.is_empty());
    tokio::time::sleep(Duration::from_millis(300)).await;
    let moved = dir.path().join("rx.db.1");
    std::fs::rename(&file, &moved).unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    server.signal("TERM");
    assert!(server.wait_exit().success());
    let mut kept = main_file_ids(&moved);
    kept.extend(main_file_ids(&file));
    for id in &positive {
        assert!(
            kept.contains(id),
            "{id} answered AA is in no main file: {kept:?}"
        );
    }
}
