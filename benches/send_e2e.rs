//! End-to-end `mllp send` benchmark: 100,000 ADT messages from files to `mllp listen` (stdout to
//! /dev/null) on loopback, pipelined (window 64) and one at a time, beside two baselines measured
//! in the same run with the same frames and window: a raw tokio TCP client against an
//! in-process peer that answers each frame with an AA naming its MSH-10 (the client benchmark's
//! ping-pong), and the same raw client against `mllp listen` (which tells the receiver's share
//! from the sender's). Prints figures and ratios, and the peak RSS (VmHWM) of the send process.
//! The floor (`benches/floor`: blocking sender and receiver processes, same framing and ACK
//! checks) runs in the same run on the same messages, and `send -> listen` is given as a ratio
//! to it, pipelined and one at a time.
//!
//! `cargo bench --bench send_e2e` (MESSAGES=N to change the count, RUNS=N to repeat, PAD=N for
//! messages of N bytes: `MESSAGES=1500 PAD=64078` is the large-message peak RSS run).

mod common;
mod floor;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

const FILES: usize = 100;

fn adt(i: usize) -> Vec<u8> {
    let mut message = format!(
        "MSH|^~\\&|SENDER|FAC|RECEIVER|FAC|20240101120000||ADT^A01^ADT_A01|MSG{i:08}|P|2.5\r\
         EVN|A01|20240101120000\r\
         PID|1||{i:08}^^^HOSP^MR||DOE^JOHN^Q||19700101|M|||1 MAIN ST^^TOWN^ST^12345||555-0100\r\
         PV1|1|I|WARD^101^A||||1234^SMITH^ANNE|||MED||||||||V{i:08}\r"
    )
    .into_bytes();
    // PAD=N pads each message to N bytes with an OBX segment (large-message memory runs).
    static PAD: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    let pad = *PAD.get_or_init(|| {
        std::env::var("PAD")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    });
    let obx = b"OBX|1|TX|||";
    if pad > message.len() + obx.len() + 1 {
        message.extend_from_slice(obx);
        message.resize(pad - 1, b'x');
        message.push(b'\r');
    }
    message
}

const ACK_HEAD: &[u8] =
    b"\x0bMSH|^~\\&|RECEIVER|FAC|SENDER|FAC|20240101120000||ACK^A01|A0000001|P|2.5\rMSA|AA|";

fn main() {
    floor::serve_if_asked();
    let messages: usize = std::env::var("MESSAGES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let runs: usize = std::env::var("RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    let dir = tempfile::tempdir().unwrap();
    let per_file = messages.div_ceil(FILES);
    let mut written = 0;
    for f in 0..FILES {
        let mut file = std::io::BufWriter::new(
            std::fs::File::create(dir.path().join(format!("{f:03}.hl7"))).unwrap(),
        );
        for _ in 0..per_file {
            if written == messages {
                break;
            }
            written += 1;
            file.write_all(&adt(written)).unwrap();
        }
    }
    // The raw client sends exactly the bytes send reads from the files, framed.
    let frames: Arc<Vec<Vec<u8>>> = Arc::new(
        (1..=messages)
            .map(|i| {
                let mut f = vec![0x0b];
                f.extend_from_slice(&adt(i));
                f.extend_from_slice(&[0x1c, 0x0d]);
                f
            })
            .collect(),
    );
    // The floor reads one file, outside the directory `send` is given.
    let floor_dir = tempfile::tempdir().unwrap();
    let floor_file = floor_dir.path().join("all.hl7");
    floor::write_messages(&floor_file, frames.iter().map(|f| &f[1..f.len() - 2]));
    let size = adt(1).len();
    println!("send_e2e: {messages} ADT messages of ~{size} bytes in {FILES} files, loopback");

    for run in 1..=runs {
        let floor_p = floor::pairs(&[&floor_file], 64).rate();
        let floor_s = floor::pairs(&[&floor_file], 1).rate();
        let raw_p = raw_against(Peer::Echo, &frames, 64);
        let raw_s = raw_against(Peer::Echo, &frames, 1);
        let listen_p = raw_against(Peer::Listen, &frames, 64);
        let listen_s = raw_against(Peer::Listen, &frames, 1);
        let (pipelined, rss_p) = send_run(dir.path(), messages, &["--window", "64"]);
        let (sequential, rss_s) = send_run(dir.path(), messages, &["--no-pipeline"]);

        println!("run {run}/{runs}");
        println!("  floor send -> floor recv, window 64     {floor_p:>10.0} msg/s");
        println!("  floor send -> floor recv, window 1      {floor_s:>10.0} msg/s");
        println!("  raw client -> raw ACK peer, window 64   {raw_p:>10.0} msg/s");
        println!("  raw client -> raw ACK peer, window 1    {raw_s:>10.0} msg/s");
        println!("  raw client -> mllp listen, window 64    {listen_p:>10.0} msg/s");
        println!("  raw client -> mllp listen, window 1     {listen_s:>10.0} msg/s");
        println!(
            "  mllp send -> mllp listen, window 64     {pipelined:>10.0} msg/s  {:.2}x floor  {:.2}x raw peer  {:.2}x raw->listen  peak RSS {:.1} MB",
            pipelined / floor_p,
            pipelined / raw_p,
            pipelined / listen_p,
            rss_p as f64 / 1024.0
        );
        println!(
            "  mllp send -> mllp listen, --no-pipeline {sequential:>10.0} msg/s  {:.2}x floor  {:.2}x raw peer  {:.2}x raw->listen  peak RSS {:.1} MB",
            sequential / floor_s,
            sequential / raw_s,
            sequential / listen_s,
            rss_s as f64 / 1024.0
        );
        println!(
            "  targets (vs raw peer): pipelined >= 0.5x and > 100000 msg/s: {}; sequential >= 0.9x: {}; RSS < 20 MB: {}",
            verdict(pipelined >= 0.5 * raw_p && pipelined > 100_000.0),
            verdict(sequential >= 0.9 * raw_s),
            verdict(rss_p.max(rss_s) < 20 * 1024)
        );
        println!(
            "  targets (vs floor): pipelined >= 0.6x: {} ({:.2}x); sequential >= 0.9x: {} ({:.2}x)",
            verdict(pipelined >= 0.6 * floor_p),
            pipelined / floor_p,
            verdict(sequential >= 0.9 * floor_s),
            sequential / floor_s
        );
    }
}

fn verdict(ok: bool) -> &'static str {
    if ok {
        "met"
    } else {
        "MISSED"
    }
}

/// A fresh `mllp listen` on a free port (stdout to /dev/null), and its address.
fn spawn_listen() -> (std::process::Child, std::net::SocketAddr) {
    let bin = env!("CARGO_BIN_EXE_mllp");
    let mut listen = Command::new(bin)
        .args(["--log-format", "json", "listen", "--port", "0"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(listen.stderr.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    let event: serde_json::Value = serde_json::from_str(&first).unwrap();
    let addr = event["addr"].as_str().unwrap().parse().unwrap();
    // Keep draining listen's stderr so it never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    (listen, addr)
}

/// One `mllp send` run against a fresh `mllp listen`: messages per second and VmHWM in KiB.
fn send_run(dir: &std::path::Path, messages: usize, extra: &[&str]) -> (f64, u64) {
    let bin = env!("CARGO_BIN_EXE_mllp");
    let (mut listen, addr) = spawn_listen();

    let started = Instant::now();
    let mut send = Command::new(bin)
        .args(["--quiet", "send", "--recursive", "--progress", "never"])
        .arg(dir)
        .args(["--host", "127.0.0.1", "--port", &addr.port().to_string()])
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let status_path = format!("/proc/{}/status", send.id());
    let mut peak = 0u64;
    let status = loop {
        if let Ok(text) = std::fs::read_to_string(&status_path) {
            if let Some(kb) = text
                .lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
            {
                peak = peak.max(kb);
            }
        }
        if let Some(status) = send.try_wait().unwrap() {
            break status;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let elapsed = started.elapsed();
    let mut err = String::new();
    let _ = std::io::Read::read_to_string(&mut send.stderr.take().unwrap(), &mut err);
    assert!(status.success(), "send failed: {status}: {err}");
    let _ = listen.kill();
    let _ = listen.wait();
    (messages as f64 / elapsed.as_secs_f64(), peak)
}

#[derive(Clone, Copy)]
enum Peer {
    /// In-process: answers each frame with an AA naming its MSH-10, the ACKs of one read
    /// coalesced into one write (the client benchmark's peer).
    Echo,
    /// A fresh `mllp listen`, as the send runs use.
    Listen,
}

/// The baseline client: raw tokio TCP, the given frames, at most `window` unacknowledged (a
/// semaphore refilled as whole ACK frames arrive, each checked to be the AA of the next message
/// in order), no fates, no timers, no output. Messages per second.
fn raw_against(peer: Peer, frames: &Arc<Vec<Vec<u8>>>, window: usize) -> f64 {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let mut child = None;
    let addr = match peer {
        Peer::Listen => {
            let (c, addr) = spawn_listen();
            child = Some(c);
            addr
        }
        Peer::Echo => rt.block_on(async {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            tokio::spawn(async move {
                let (tcp, _) = listener.accept().await.unwrap();
                common::echo_peer(tcp, ACK_HEAD).await
            });
            addr
        }),
    };
    let elapsed = rt.block_on(common::pipeline(addr, frames.clone(), window));
    let rate = frames.len() as f64 / elapsed.as_secs_f64();
    if let Some(mut c) = child {
        let _ = c.kill();
        let _ = c.wait();
    }
    rate
}
