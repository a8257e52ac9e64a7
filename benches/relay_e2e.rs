//! `mllp relay` end to end, both ends ours: `mllp send` -> `mllp relay` (pass-through) ->
//! `mllp listen` (stdout to /dev/null) on loopback, against `mllp send` -> `mllp listen` direct
//! in the same run with the same messages: throughput pipelined (window 64) as a ratio to the
//! direct path, and the latency the relay adds per message one at a time (p50/p99 of a blocking
//! client's round trips through the relay and direct), plus the relay's peak RSS (VmHWM). Then
//! store and forward: `mllp send` -> `mllp relay --queue` -> `mllp listen`, the rate the queue
//! takes messages at (each committed to its file before the answer) and the rate they reach the
//! upstream (until no row is pending), as ratios to pass-through.
//!
//! `cargo bench --bench relay_e2e` (MESSAGES=N for the throughput runs, ROUNDS=N for the
//! latency samples).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_mllp");

fn adt(i: usize) -> Vec<u8> {
    format!(
        "MSH|^~\\&|SENDER|FAC|RECEIVER|FAC|20240101120000||ADT^A01^ADT_A01|MSG{i:08}|P|2.5\r\
         EVN|A01|20240101120000\r\
         PID|1||{i:08}^^^HOSP^MR||DOE^JOHN^Q||19700101|M|||1 MAIN ST^^TOWN^ST^12345||555-0100\r\
         PV1|1|I|WARD^101^A||||1234^SMITH^ANNE|||MED||||||||V{i:08}\r"
    )
    .into_bytes()
}

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Start `mllp ARGS` and read the bound address from its first JSON event.
fn spawn(args: &[&str]) -> (Child, SocketAddr) {
    let mut child = Command::new(BIN)
        .args(["--log-format", "json"])
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    let event: serde_json::Value = serde_json::from_str(&first).unwrap();
    let addr = event["addr"].as_str().unwrap().parse().unwrap();
    std::thread::spawn(move || for _ in lines {});
    (child, addr)
}

fn listen() -> (Child, SocketAddr) {
    spawn(&["listen", "--port", "0"])
}

fn relay(to: SocketAddr) -> (Child, SocketAddr) {
    spawn(&["relay", "--listen", "0", "--to", &to.to_string()])
}

fn queue_relay(to: SocketAddr, file: &std::path::Path) -> (Child, SocketAddr) {
    let file = file.to_str().unwrap();
    spawn(&[
        "relay",
        "--listen",
        "0",
        "--to",
        &to.to_string(),
        "--queue",
        file,
    ])
}

/// Rows of the queue `file` still pending.
fn pending(file: &std::path::Path) -> i64 {
    rusqlite::Connection::open(file)
        .and_then(|db| {
            db.query_row(
                "SELECT COUNT(*) FROM queue WHERE status = 'pending'",
                [],
                |r| r.get(0),
            )
        })
        .unwrap_or(i64::MAX)
}

fn stop(mut child: Child) {
    let _ = child.kill();
    let _ = child.wait();
}

fn peak_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

/// `mllp send FILE` to `to`, window 64: messages per second.
fn send_rate(file: &std::path::Path, messages: usize, to: SocketAddr) -> f64 {
    let started = Instant::now();
    let out = Command::new(BIN)
        .args(["--quiet", "send", "--progress", "never", "--window", "64"])
        .arg(file)
        .args(["--host", &to.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let elapsed = started.elapsed();
    assert!(out.status.success(), "send failed: {}", out.status);
    messages as f64 / elapsed.as_secs_f64()
}

/// Round trips of one message at a time over one connection, each until its whole ACK frame.
fn round_trips(to: SocketAddr, rounds: usize) -> Vec<Duration> {
    let mut tcp = TcpStream::connect(to).unwrap();
    tcp.set_nodelay(true).unwrap();
    let mut buf = [0u8; 4096];
    let mut times = Vec::with_capacity(rounds);
    for i in 0..rounds {
        let mut frame = vec![0x0b];
        frame.extend_from_slice(&adt(i + 1));
        frame.extend_from_slice(&[0x1c, 0x0d]);
        let started = Instant::now();
        tcp.write_all(&frame).unwrap();
        let mut got = Vec::new();
        while !got.ends_with(&[0x1c, 0x0d]) {
            let n = tcp.read(&mut buf).unwrap();
            assert!(n > 0, "the connection closed");
            got.extend_from_slice(&buf[..n]);
        }
        times.push(started.elapsed());
        assert!(got.windows(7).any(|w| w == b"MSA|AA|"), "not an AA");
    }
    times
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i].as_secs_f64() * 1e6
}

fn main() {
    let messages = env("MESSAGES", 20_000);
    let rounds = env("ROUNDS", 2_000);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("all.hl7");
    let mut all = std::io::BufWriter::new(std::fs::File::create(&file).unwrap());
    for i in 1..=messages {
        all.write_all(&adt(i)).unwrap();
    }
    drop(all);
    println!(
        "relay_e2e: {messages} ADT messages of ~{} bytes, loopback, pass-through",
        adt(1).len()
    );

    let (upstream, up) = listen();
    let direct = send_rate(&file, messages, up);
    let (relayed_child, via) = relay(up);
    let relayed = send_rate(&file, messages, via);
    let relay_rss = peak_kib(relayed_child.id());
    let queue = dir.path().join("q.db");
    let (queued_child, queued_via) = queue_relay(up, &queue);
    let started = Instant::now();
    let taken = send_rate(&file, messages, queued_via);
    while pending(&queue) > 0 {
        std::thread::sleep(Duration::from_millis(5));
    }
    let through = messages as f64 / started.elapsed().as_secs_f64();
    stop(queued_child);

    // Warm both paths, then sample one message at a time.
    round_trips(up, 50);
    round_trips(via, 50);
    let mut direct_rt = round_trips(up, rounds);
    let mut relay_rt = round_trips(via, rounds);
    stop(relayed_child);
    stop(upstream);
    direct_rt.sort();
    relay_rt.sort();
    let (d50, d99) = (percentile(&direct_rt, 0.5), percentile(&direct_rt, 0.99));
    let (r50, r99) = (percentile(&relay_rt, 0.5), percentile(&relay_rt, 0.99));

    println!("  mllp send -> mllp listen, window 64              {direct:>10.0} msg/s");
    println!(
        "  mllp send -> mllp relay -> mllp listen, window 64 {relayed:>9.0} msg/s  {:.2}x direct  relay peak RSS {:.1} MB",
        relayed / direct,
        relay_rss as f64 / 1024.0
    );
    println!(
        "  mllp send -> mllp relay --queue -> mllp listen  taken {taken:>9.0} msg/s  {:.2}x pass-through; through {through:>9.0} msg/s  {:.2}x",
        taken / relayed,
        through / relayed
    );
    println!("  one at a time, {rounds} round trips (us):  p50 / p99");
    println!("    direct                 {d50:>8.0} / {d99:>8.0}");
    println!("    through the relay      {r50:>8.0} / {r99:>8.0}");
    println!(
        "    added by the relay     {:>8.0} / {:>8.0}",
        r50 - d50,
        r99 - d99
    );
}
