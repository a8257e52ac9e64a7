//! Durable-sink and idle-memory benchmark for `mllp listen` (the real binary):
//! 1. throughput of `--sqlite` (group commit) beside `--out-dir` (one fsynced file per message),
//!    same load, same run, as a ratio;
//! 2. resident memory of `listen` holding idle connections opened by this process.
//!
//! `cargo bench --bench listen_sinks` (env: SINK_CONNECTIONS, SINK_WINDOW, SINK_SECONDS, 0 to
//! skip the sinks; IDLE_CONNECTIONS, default 10,000). The benchmark raises its descriptor limit
//! to the hard limit (the child inherits it), and `listen`'s `--max-connections` and
//! `--max-connections-per-peer` above IDLE_CONNECTIONS.

mod listener;

use listener::Listener;
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn message(n: u64) -> Vec<u8> {
    format!("\x0bMSH|^~\\&|LOAD|FAC|RCV|FAC|20240101120000||ADT^A01|L{n:09}|P|2.5\rEVN|A01|20240101120000\rPID|1||123456^^^HOSP^MR||DOE^JANE||19800101|F\rPV1|1|I|W^1^1\r\x1c\r").into_bytes()
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        println!("listen_sinks: bench");
        return;
    }
    raise_fd_limit();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let connections = env_or("SINK_CONNECTIONS", 8);
    let window = env_or("SINK_WINDOW", 16);
    let seconds = env_or("SINK_SECONDS", 3);
    let bin = env!("CARGO_BIN_EXE_mllp");
    if seconds > 0 {
        sinks(&runtime, bin, connections, window, seconds);
    }

    let idle = env_or("IDLE_CONNECTIONS", 10_000) as usize;
    let Listener {
        mut child, addr, ..
    } = Listener::start(
        bin,
        &[
            "-q",
            "listen",
            "--port",
            "0",
            "--max-connections",
            &(idle + 100).to_string(),
            "--max-connections-per-peer",
            &(idle + 100).to_string(),
        ],
    );
    let before = rss_kib(child.id());
    let held = runtime.block_on(async {
        let mut held = Vec::with_capacity(idle);
        for _ in 0..idle {
            match TcpStream::connect(addr).await {
                Ok(s) => held.push(s),
                Err(e) => {
                    println!(
                        "  connect failed after {}: {e} (raise ulimit -n)",
                        held.len()
                    );
                    break;
                }
            }
        }
        // One round trip on the last connection proves every earlier accept has been served.
        if let Some(last) = held.last_mut() {
            last.write_all(&message(0)).await.unwrap();
            let mut buf = [0u8; 512];
            let _ = last.read(&mut buf).await;
        }
        held
    });
    std::thread::sleep(Duration::from_millis(500));
    let after = rss_kib(child.id());
    println!(
        "    idle: {} connections held: VmRSS {:.1} MiB (empty server {:.1} MiB, {:.2} KiB per connection; target < 64 MiB)",
        held.len(),
        after as f64 / 1024.0,
        before as f64 / 1024.0,
        (after.saturating_sub(before)) as f64 / held.len().max(1) as f64
    );
    drop(held);
    let _ = child.kill();
    let _ = child.wait();
}

/// `--out-dir` beside `--sqlite`, same load.
fn sinks(
    runtime: &tokio::runtime::Runtime,
    bin: &str,
    connections: u64,
    window: u64,
    seconds: u64,
) {
    let dir = tempfile::tempdir().unwrap();
    println!("listen_sinks: {connections} connections, window {window}, {seconds} s per sink");
    let out_dir = dir.path().join("inbox");
    std::fs::create_dir(&out_dir).unwrap();
    let db = dir.path().join("rx.db");
    let mut rates = Vec::new();
    for (name, flag, target) in [
        ("out-dir", "--out-dir", &out_dir),
        ("sqlite", "--sqlite", &db),
    ] {
        let target = target.to_string_lossy();
        let Listener {
            mut child, addr, ..
        } = Listener::start(bin, &["-q", "listen", "--port", "0", flag, &target]);
        let (messages, elapsed) = runtime.block_on(drive(
            addr,
            connections,
            window,
            Duration::from_secs(seconds),
        ));
        let _ = child.kill();
        let _ = child.wait();
        let rate = messages as f64 / elapsed;
        println!("{name:>8}: {rate:>9.0} msg/s ({messages} messages)");
        rates.push(rate);
    }
    println!("  sqlite / out-dir throughput: {:.2}x", rates[1] / rates[0]);
}

/// Soft descriptor limit up to the hard one: each idle connection is a descriptor here and
/// one in `listen`, which inherits the limit.
fn raise_fd_limit() {
    // SAFETY: getrlimit and setrlimit read and write only the struct given.
    unsafe {
        let mut limit: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 && limit.rlim_cur < limit.rlim_max
        {
            limit.rlim_cur = limit.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
        }
    }
}

/// Each connection sends `window` messages, reads their ACKs, and repeats until `run` is over.
async fn drive(addr: SocketAddr, connections: u64, window: u64, run: Duration) -> (u64, f64) {
    let start = Instant::now();
    let mut tasks = Vec::new();
    for c in 0..connections {
        tasks.push(tokio::spawn(async move {
            let mut stream = TcpStream::connect(addr).await.unwrap();
            let mut done = 0u64;
            let mut buf = vec![0u8; 64 * 1024];
            while start.elapsed() < run {
                let mut batch = Vec::new();
                for i in 0..window {
                    batch.extend_from_slice(&message(c * 1_000_000_000 + done + i));
                }
                stream.write_all(&batch).await.unwrap();
                let mut acks = 0;
                while acks < window {
                    let n = stream.read(&mut buf).await.unwrap();
                    assert!(n > 0, "listen closed the connection");
                    acks += buf[..n].iter().filter(|b| **b == 0x1c).count() as u64;
                }
                done += window;
            }
            done
        }));
    }
    let mut total = 0;
    for t in tasks {
        total += t.await.unwrap();
    }
    (total, start.elapsed().as_secs_f64())
}

fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}
