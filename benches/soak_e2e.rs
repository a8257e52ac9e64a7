//! End-to-end `mllp soak` benchmark: the release binary against its embedded listener, as fast
//! as the window allows with 1 and 4 connections, and paced at 2,000 msg/s for 10 s; beside a
//! baseline measured in the same run: a raw tokio client pipelining the same frames (window 64,
//! 4 connections) against an in-process peer that answers each frame with an AA naming its MSH-10
//! (no parsing, no commit, no ledger). Prints rates, ratios to the baseline, CPU seconds per
//! 100,000 messages (soak: the child's user+sys; baseline: this process's), the cores each run
//! got (CPU seconds per second: the machine is shared), and the rate held. The floor
//! (`benches/floor`: a blocking sender and receiver process per connection, same framing and ACK
//! checks, window 64) runs on the same messages in the same run with 1 and 4 connections, and
//! each soak run is given as a ratio to the floor with as many connections.
//!
//! `cargo bench --bench soak_e2e` (MESSAGES=N per unpaced run, RUNS=N repeats, PACED_SECS=N for
//! the paced run's length, 0 to skip it; MLLP_BIN=PATH drives another build, e.g. an older one).

mod common;
mod floor;

use bytes::BytesMut;
use mllp::soak::{ControlIds, Template};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

const WINDOW: usize = 64;
const BASELINE_CONNECTIONS: usize = 4;
const TARGET_4: f64 = 80_000.0;
const PACED_RATE: f64 = 2_000.0;

const ACK_HEAD: &[u8] =
    b"\x0bMSH|^~\\&|RECEIVER|RECEIVER|MLLP-SOAK|SOAK|20240101120000||ACK^A01|A1|T|2.5\rMSA|AA|";

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    floor::serve_if_asked();
    let messages: usize = env_or("MESSAGES", 1_000_000);
    let runs: usize = env_or("RUNS", 1);
    let paced_secs: u64 = env_or("PACED_SECS", 10);
    let frames = frames(messages, BASELINE_CONNECTIONS);
    let size = frames[0][0].len() - 3;
    // The floor's sender reads files: one per connection of the 4, and all of them in one.
    let floor_dir = tempfile::tempdir().unwrap();
    let quarter: Vec<_> = (0..BASELINE_CONNECTIONS)
        .map(|c| floor_dir.path().join(format!("conn{c}.hl7")))
        .collect();
    for (path, share) in quarter.iter().zip(&frames) {
        floor::write_messages(path, share.iter().map(|f| &f[1..f.len() - 2]));
    }
    let whole = floor_dir.path().join("all.hl7");
    floor::write_messages(
        &whole,
        frames
            .iter()
            .flat_map(|share| share.iter().map(|f| &f[1..f.len() - 2])),
    );
    let quarter: Vec<&std::path::Path> = quarter.iter().map(|p| p.as_path()).collect();
    println!("soak_e2e: {messages} built-in ADT messages of {size} bytes per unpaced run, window {WINDOW}, loopback, 2 tokio workers per side");

    for run in 1..=runs {
        let base = baseline(&frames);
        let floor_1 = floor_run(&[&whole]);
        let floor_4 = floor_run(&quarter);
        let one = soak(&["--connections", "1", "--messages", &messages.to_string()]);
        let four = soak(&["--connections", "4", "--messages", &messages.to_string()]);
        println!("run {run}/{runs}");
        println!(
            "  {:<44} {:>9} {:>8} {:>8} {:>11} {:>6} {:>8}",
            "", "msg/s", "x base", "x floor", "CPU-s/100k", "cores", "p99 ms"
        );
        println!(
            "  {:<44} {:>9.0} {:>8} {:>8} {:>11.3} {:>6.2} {:>8}",
            "raw client -> raw ACK peer, 4 conns (base)",
            base.rate,
            "1.00",
            "-",
            base.cpu_per_100k,
            base.cores,
            "-"
        );
        for (label, f) in [
            ("floor send -> floor recv, 1 pair", &floor_1),
            ("floor send -> floor recv, 4 pairs", &floor_4),
        ] {
            println!(
                "  {:<44} {:>9.0} {:>8.3} {:>8} {:>11.3} {:>6.2} {:>8}",
                label,
                f.rate,
                f.rate / base.rate,
                "1.00",
                f.cpu_per_100k,
                f.cores,
                "-"
            );
        }
        for (label, r, floor) in [
            ("mllp soak -c 1 --messages N (embedded)", &one, &floor_1),
            ("mllp soak -c 4 --messages N (embedded)", &four, &floor_4),
        ] {
            println!(
                "  {:<44} {:>9.0} {:>8.3} {:>8.3} {:>11.3} {:>6.2} {:>8.2}{}",
                label,
                r.throughput,
                r.throughput / base.rate,
                r.throughput / floor.rate,
                r.cpu_s * 100_000.0 / r.generated.max(1) as f64,
                r.cpu_s / r.elapsed_s,
                r.p99_ms,
                if r.accounting_ok {
                    ""
                } else {
                    "  ACCOUNTING DID NOT CLOSE"
                }
            );
        }
        println!(
            "  target: > {TARGET_4:.0} msg/s with 4 connections: {} ({:.2}x the target)",
            if four.throughput > TARGET_4 {
                "met"
            } else {
                "MISSED"
            },
            four.throughput / TARGET_4
        );
        if paced_secs > 0 {
            let paced = soak(&[
                "--rate",
                &PACED_RATE.to_string(),
                "--duration",
                &format!("{paced_secs}s"),
            ]);
            let (low, high) = full_seconds(&paced.per_second);
            println!(
                "  paced --rate {PACED_RATE:.0} --duration {paced_secs}s: held {:.1} msg/s accepted ({:.4}x the rate), generated {}, refused {}, full seconds {low}..{high} accepted, p99 {:.2} ms, CPU {:.3} s ({:.2} s/100k){}",
                paced.throughput,
                paced.throughput / PACED_RATE,
                paced.generated,
                paced.refused,
                paced.p99_ms,
                paced.cpu_s,
                paced.cpu_s * 100_000.0 / paced.generated.max(1) as f64,
                if paced.accounting_ok {
                    ""
                } else {
                    ", ACCOUNTING DID NOT CLOSE"
                }
            );
        }
    }
}

/// The built-in message rendered for each connection, framed, with the control IDs soak uses.
fn frames(messages: usize, connections: usize) -> Vec<Arc<Vec<Vec<u8>>>> {
    let template = Template::builtin();
    let ids = ControlIds::new(0x5eed);
    let mut buf = BytesMut::new();
    (0..connections)
        .map(|conn| {
            let share = messages / connections + usize::from(conn < messages % connections);
            let frames = (0..share as u64)
                .map(|seq| {
                    buf.clear();
                    template.render(b"20240101120000", &ids.format(conn, seq), &mut buf);
                    let mut frame = Vec::with_capacity(buf.len() + 3);
                    frame.push(0x0b);
                    frame.extend_from_slice(&buf);
                    frame.extend_from_slice(&[0x1c, 0x0d]);
                    frame
                })
                .collect();
            Arc::new(frames)
        })
        .collect()
}

/// The accepted counts of the whole seconds of a paced run (the last bucket is partial).
fn full_seconds(per_second: &[serde_json::Value]) -> (u64, u64) {
    let counts: Vec<u64> = per_second
        .iter()
        .map(|s| s["accepted"].as_u64().unwrap_or(0))
        .collect();
    let whole = &counts[..counts.len().saturating_sub(1)];
    (
        whole.iter().copied().min().unwrap_or(0),
        whole.iter().copied().max().unwrap_or(0),
    )
}

/// User plus system CPU seconds of `who` so far.
fn cpu_seconds(who: libc::c_int) -> f64 {
    // SAFETY: getrusage only writes into the struct it is given.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        assert_eq!(libc::getrusage(who, &mut usage), 0);
        usage
    };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(usage.ru_utime) + secs(usage.ru_stime)
}

struct SoakRun {
    throughput: f64,
    generated: u64,
    refused: u64,
    accounting_ok: bool,
    p99_ms: f64,
    cpu_s: f64,
    elapsed_s: f64,
    per_second: Vec<serde_json::Value>,
}

/// One `mllp soak --json` run; its CPU time is the change in this process's reaped children's.
fn soak(args: &[&str]) -> SoakRun {
    let bin = std::env::var("MLLP_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_mllp").into());
    let before = cpu_seconds(libc::RUSAGE_CHILDREN);
    let out = Command::new(&bin)
        .args(["soak", "--json"])
        .args(args)
        .output()
        .unwrap();
    let cpu_s = cpu_seconds(libc::RUSAGE_CHILDREN) - before;
    assert!(
        out.status.success(),
        "mllp soak {args:?} failed: {}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    SoakRun {
        throughput: report["throughput"].as_f64().unwrap(),
        generated: report["generated"].as_u64().unwrap(),
        refused: report["refused"].as_u64().unwrap(),
        accounting_ok: report["accounting_ok"].as_bool().unwrap(),
        p99_ms: report["latency_ms"]["p99"].as_f64().unwrap_or(f64::NAN),
        cpu_s,
        elapsed_s: report["elapsed_s"].as_f64().unwrap(),
        per_second: report["per_second"].as_array().cloned().unwrap_or_default(),
    }
}

/// The floor pairs, one per file, side by side; CPU is both sides' in all.
fn floor_run(files: &[&std::path::Path]) -> Baseline {
    let run = floor::pairs(files, WINDOW);
    let cpu = run.send_cpu_s + run.recv_cpu_s;
    Baseline {
        rate: run.rate(),
        cpu_per_100k: cpu * 100_000.0 / run.messages.max(1) as f64,
        cores: cpu / run.elapsed_s,
    }
}

struct Baseline {
    rate: f64,
    cpu_per_100k: f64,
    /// CPU seconds per second of the run: how many of the cores the run got.
    cores: f64,
}

/// The raw client against the raw peer, both in this process on one 2-worker runtime (soak's
/// generator, client and listener share one runtime the same way).
fn baseline(frames: &[Arc<Vec<Vec<u8>>>]) -> Baseline {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let messages: usize = frames.iter().map(|f| f.len()).sum();
    let before = cpu_seconds(libc::RUSAGE_SELF);
    let elapsed = rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                tokio::spawn(common::echo_peer(tcp, ACK_HEAD));
            }
        });
        let started = Instant::now();
        let conns: Vec<_> = frames
            .iter()
            .map(|f| tokio::spawn(common::pipeline(addr, f.clone(), WINDOW)))
            .collect();
        for conn in conns {
            conn.await.unwrap();
        }
        started.elapsed()
    });
    let cpu = cpu_seconds(libc::RUSAGE_SELF) - before;
    rt.shutdown_timeout(Duration::from_secs(1));
    Baseline {
        rate: messages as f64 / elapsed.as_secs_f64(),
        cpu_per_100k: cpu * 100_000.0 / messages as f64,
        cores: cpu / elapsed.as_secs_f64(),
    }
}
