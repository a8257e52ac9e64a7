//! A stalled upstream (it accepts TCP and never reads or answers) while a downstream sender
//! pushes far more than the bound below: the relay's peak resident memory stays bounded, in
//! pass-through (messages wait only within the window, then are refused or their connection
//! closed) and with a queue (the backlog is on disk).

use super::proc::RelayProc;
use crate::support::peer_wire::message;
use crate::support::send_proc::finish;
use tokio::net::TcpListener;

/// Messages pushed and the size of each: 64 MiB in all.
const MESSAGES: usize = 1000;
const FILLER: usize = 64 * 1024;
/// Peak resident memory allowed to the relay, KiB.
const BOUND_KIB: u64 = 48 * 1024;

/// An upstream that takes connections and never reads from them; they stay open.
async fn stalled() -> (std::net::SocketAddr, tokio::task::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let task = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((stream, _)) = listener.accept().await {
            held.push(stream);
        }
    });
    (addr, task)
}

fn input(dir: &std::path::Path) -> std::path::PathBuf {
    let filler = "Z".repeat(FILLER);
    let mut all = Vec::new();
    for i in 0..MESSAGES {
        all.extend(message(&format!("M{i}"), "X"));
        all.extend(format!("NTE|1||{filler}\r\n").as_bytes());
    }
    let file = dir.join("in.hl7");
    std::fs::write(&file, all).unwrap();
    file
}

fn peak_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

async fn push(relay: &RelayProc, file: &std::path::Path, args: &[&str]) -> serde_json::Value {
    let mut send = tokio::process::Command::new(crate::support::mllp_bin());
    send.arg("send")
        .arg(file)
        .args(["--host", &relay.addr.to_string(), "--json"])
        .args(args);
    finish(send, None).await.summary()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pass_through_memory_stays_bounded_under_a_stalled_upstream() {
    let dir = tempfile::tempdir().unwrap();
    let file = input(dir.path());
    let (upstream, holder) = stalled().await;
    let relay = RelayProc::start(
        &upstream.to_string(),
        &["--connect-timeout", "50ms", "--ack-timeout", "100ms"],
    );
    let summary = push(
        &relay,
        &file,
        &[
            "--ack-timeout",
            "5s",
            "--max-resends",
            "0",
            "--window",
            "64",
            "--backoff-initial",
            "10ms",
            "--backoff-max",
            "50ms",
        ],
    )
    .await;
    // Nothing was answered upstream, and the relay claimed nothing.
    assert_eq!(summary["accepted"], 0, "{summary}");
    let peak = peak_kib(relay.pid());
    assert!(peak < BOUND_KIB, "peak resident memory {peak} KiB");
    holder.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queue_keeps_the_backlog_on_disk_under_a_stalled_upstream() {
    let dir = tempfile::tempdir().unwrap();
    let file = input(dir.path());
    let queue = dir.path().join("q.db");
    let (upstream, holder) = stalled().await;
    let relay = RelayProc::start(&upstream.to_string(), &["--queue", queue.to_str().unwrap()]);
    let summary = push(&relay, &file, &["--window", "64"]).await;
    assert_eq!(summary["accepted"], MESSAGES, "{summary}");
    let peak = peak_kib(relay.pid());
    let db = rusqlite::Connection::open(&queue).unwrap();
    let pending: i64 = db
        .query_row(
            "SELECT COUNT(*) FROM queue WHERE status = 'pending'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(pending, MESSAGES as i64, "the upstream settled nothing");
    assert!(peak < BOUND_KIB, "peak resident memory {peak} KiB");
    holder.abort();
}
