//! What a replay holds, read from outside: the peak resident size of the child (VmHWM), whatever
//! the store's row count, row size, or an oversize row in it.

use crate::send::{path, send_bin};
use crate::support::peer::{Behaviour, Peer, Script};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// `rows` rows in a `listen --sqlite`-shaped store at `dir/big.db`, made by SQLite itself: row
/// `i` is an ADT whose MSH-10 is `C{i}`, with `filler` bytes of `x` in one OBX segment.
fn generated(dir: &Path, rows: u64, filler: u64) -> PathBuf {
    let file = dir.join("big.db");
    let db = rusqlite::Connection::open(&file).unwrap();
    db.execute_batch(
        "CREATE TABLE messages (id INTEGER PRIMARY KEY, received_at TEXT NOT NULL,
         peer TEXT NOT NULL, msh3 TEXT, msh4 TEXT, control_id TEXT, msh7 TEXT,
         message_type TEXT, bytes INTEGER NOT NULL, payload BLOB NOT NULL, dedupe INTEGER)",
    )
    .unwrap();
    db.execute(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
         INSERT INTO messages (received_at, peer, control_id, message_type, bytes, payload)
         SELECT '2024-01-31T08:00:00.000000Z', 'p', 'C' || i, 'ADT^A01', 0,
             CAST('MSH|^~\\&|A|B|C|D|20240131080000||ADT^A01|C' || i || '|P|2.5' || char(13)
                  || 'PID|1||' || i || char(13)
                  || 'OBX|1|TX|||' || replace(hex(zeroblob(?2 / 2)), '0', 'x') || char(13)
             AS BLOB)
         FROM n",
        rusqlite::params![rows as i64, filler as i64],
    )
    .unwrap();
    file
}

/// VmHWM (peak resident memory) of a running process in KiB; `None` once it is gone.
fn peak_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn child(args: &[&str], stderr: Stdio) -> std::process::Child {
    Command::new(send_bin())
        .arg("send")
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()
        .unwrap()
}

/// `mllp send --dry-run ARGS` listing `rows` rows, read slowly so that the unread rest of the
/// listing (more than a pipe holds) keeps it alive at each reading: its exit code and the
/// largest peak resident size seen while it listed.
fn listing_peak(args: &[&str], rows: usize) -> (i32, u64) {
    use std::io::BufRead;
    let mut run = child(args, Stdio::null());
    let pid = run.id();
    let mut lines = std::io::BufReader::new(run.stdout.take().unwrap()).lines();
    let mut peak = 0;
    let every = (rows / 8).max(1);
    for n in 1..=rows {
        lines.next().expect("a listed message").unwrap();
        if n % every == 0 || n == rows {
            peak = peak.max(peak_kib(pid).unwrap_or(0));
        }
    }
    let summary = lines.next().expect("the count").unwrap();
    assert!(summary.contains("would be sent"), "{summary}");
    let code = run.wait().unwrap().code().unwrap_or(-1);
    (code, peak)
}

/// `mllp send ARGS` with its stderr a pipe that is already full, so its first diagnostic
/// blocks it: its peak resident size read then, and what it said once the pipe is drained.
fn peak_at_first_diagnostic(args: &[&str]) -> (i32, String, u64) {
    let mut fds = [0; 2];
    // SAFETY: fds is a live array of two descriptors for pipe2 to fill.
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
    // SAFETY: both descriptors were just made by pipe2 and are owned here alone.
    let (read, write) = unsafe {
        use std::os::fd::FromRawFd;
        (
            std::fs::File::from_raw_fd(fds[0]),
            std::os::fd::OwnedFd::from_raw_fd(fds[1]),
        )
    };
    fill(&write);
    let mut run = child(args, Stdio::from(write));
    let pid = run.id();
    let mut out = run.stdout.take().unwrap();
    std::thread::spawn(move || std::io::copy(&mut out, &mut std::io::sink()));
    let wchan = format!("/proc/{pid}/wchan");
    let started = std::time::Instant::now();
    let peak = loop {
        let waiting = std::fs::read_to_string(&wchan).expect("send still running");
        if waiting.contains("pipe_write") {
            break peak_kib(pid).unwrap();
        }
        if started.elapsed() > std::time::Duration::from_secs(60) {
            let _ = run.kill();
            panic!("send wrote no diagnostic in 60 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    let mut said = Vec::new();
    let mut read = read;
    read.read_to_end(&mut said).unwrap();
    let said = String::from_utf8_lossy(&said[PIPE_FILLED.min(said.len())..]).into_owned();
    crate::support::no_payload::assert_no_marker(
        "send stderr",
        &said,
        crate::support::no_payload::MARKER,
    );
    (run.wait().unwrap().code().unwrap_or(-1), said, peak)
}

/// What `fill` writes: a pipe's default capacity.
const PIPE_FILLED: usize = 64 * 1024;

/// Fill the pipe `write` ends: its capacity is the default one.
fn fill(write: &std::os::fd::OwnedFd) {
    use std::os::fd::AsRawFd;
    let fd = write.as_raw_fd();
    // SAFETY: fd is a pipe's write end owned by the caller; the flags are only read and set.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK);
        let block = [b'.'; 4096];
        let mut written = 0;
        while libc::write(fd, block.as_ptr().cast(), block.len()) > 0 {
            written += block.len();
        }
        assert_eq!(written, PIPE_FILLED, "a pipe of the default capacity");
        // The child shares this open file: it must block, not fail, on the full pipe.
        libc::fcntl(fd, libc::F_SETFL, flags);
    }
}

#[test]
fn a_dry_run_over_many_rows_holds_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    // Enough rows that a map of their control IDs alone would pass the bound.
    let rows = 100_000;
    let file = generated(dir.path(), rows as u64, 16);
    let (code, peak) = listing_peak(&["--dry-run", "--from-db", &path(&file)], rows);
    assert_eq!(code, 0);
    assert!(peak < 40 * 1024, "peak resident {peak} KiB");
}

#[test]
fn a_dry_run_over_large_rows_holds_a_few_of_them() {
    let dir = tempfile::tempdir().unwrap();
    // 24 rows of 8 MiB: 192 MiB in the store.
    let file = generated(dir.path(), 24, 8 << 20);
    let (code, peak) = listing_peak(&["--dry-run", "--from-db", &path(&file)], 24);
    assert_eq!(code, 0);
    assert!(peak < 96 * 1024, "peak resident {peak} KiB");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_row_over_the_largest_frame_is_refused_without_being_read_whole() {
    let dir = tempfile::tempdir().unwrap();
    // 64 MiB, four times the default largest frame.
    let file = generated(dir.path(), 1, 64 << 20);
    let peer = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let host = peer.addr().to_string();
    let store = path(&file);
    let (code, said, peak) = tokio::task::spawn_blocking(move || {
        peak_at_first_diagnostic(&["--host", &host, "--from-db", &store])
    })
    .await
    .unwrap();
    assert_eq!(code, 2, "{said}");
    assert!(said.contains("big.db#1"), "{said}");
    assert!(said.contains("--max-frame-size"), "{said}");
    assert!(peer.payloads().is_empty());
    assert!(peak < 48 * 1024, "peak resident {peak} KiB");
}
