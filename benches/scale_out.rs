//! Several receivers, one store: the throughput of `mllp listen --postgres` with one listener
//! and with two on the same database, beside `--sqlite`, under the same load in the same run,
//! with the commit groups each listener reports and the CPU each row cost: the database's (the
//! whole cluster, and the backends serving the listeners), the listeners', the senders' (this
//! process), and the cores the whole machine was busy meanwhile, ours and everyone else's.
//!
//! `cargo bench --bench scale_out` (env: SCALE_CONNECTIONS 8, SCALE_WINDOW 16, SCALE_SECONDS 3,
//! SCALE_RUNS 3; SCALE_MESSAGES=N sends N messages a row instead of running for a time;
//! SCALE_BASELINE=PATH runs each PostgreSQL row with that build of `mllp` too, beside this one;
//! MLLP_BENCH_PG=URL uses that server, measured when MLLP_BENCH_PG_DATA names its data
//! directory, else a throw-away cluster is started with
//! `.ci/pg-cluster` with fsync on, and stopped at the end). Each connection sends a window of
//! messages, reads every ACK, checks it is AA, and repeats; the connections are spread over the
//! listeners of the row. The rows of a round run one after the other; rounds are interleaved,
//! and each row's figure is the median over rounds, its ratios the medians of the per-round
//! ratios to `--sqlite` and to the same build's one listener.

#[path = "scale_out/cluster.rs"]
mod cluster;
mod listener;
// The tests' PostgreSQL helpers; the benchmark needs only some of them.
#[allow(dead_code)]
#[path = "../tests/it/support/pg.rs"]
mod pg;

use cluster::Cluster;
use listener::Listener;
use serde_json::Value;
use std::net::SocketAddr;
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A 470-byte-class ADT^A01 with a control ID unique in the run.
fn message(n: u64) -> Vec<u8> {
    format!("\x0bMSH|^~\\&|LOAD|FAC|RCV|FAC|20240101120000||ADT^A01|S{n:012}|P|2.5\rEVN|A01|20240101120000\rPID|1||{n}^^^HOSP^MR||DOE^JANE||19800101|F|||1 MAIN ST^^TOWN^ST^12345||555-0100\rPV1|1|I|W^1^1^HOSP||||1234^WELBY^MARCUS|||MED||||1|||1234^WELBY^MARCUS|IN||||||||||||||||||HOSP|||||20240101120000\r\x1c\r").into_bytes()
}

/// The rows: a name and the listeners' sink arguments (`{db}` is the row's URL).
const ROWS: [(&str, &[&str], usize); 4] = [
    ("--sqlite, 1 listener", &["--sqlite", "{file}"], 1),
    ("--postgres, 1 listener", &["--postgres", "{db}"], 1),
    ("--postgres, 2 listeners", &["--postgres", "{db}"], 2),
    (
        "--postgres --dedupe, 2 listeners",
        &["--postgres", "{db}", "--dedupe"],
        2,
    ),
];

fn process_cpu(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = [11, 12]
        .iter()
        .filter_map(|&i| f.get(i)?.parse::<u64>().ok())
        .sum();
    ticks as f64 / 100.0
}

/// The machine's CPU ticks so far: busy (neither idle nor waiting for I/O), and all.
fn machine_cpu() -> (u64, u64) {
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let ticks: Vec<u64> = stat
        .lines()
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .skip(1)
        .filter_map(|t| t.parse().ok())
        .collect();
    let all: u64 = ticks.iter().take(8).sum();
    let idle = ticks.get(3).copied().unwrap_or(0) + ticks.get(4).copied().unwrap_or(0);
    (all - idle, all)
}

/// WAL syncs (fsyncs of the write-ahead log) so far; PostgreSQL 14 and later.
async fn wal_syncs(url: &str) -> Option<i64> {
    let row = pg::connect(url)
        .await
        .query_one("SELECT wal_sync FROM pg_stat_wal", &[])
        .await
        .ok()?;
    row.try_get(0).ok()
}

/// `mllp --log-format json -q listen --port 0 ARGS`.
fn start_listener(bin: &str, args: &[String]) -> Listener {
    let mut all: Vec<String> = ["--log-format", "json", "-q", "listen", "--port", "0"]
        .map(String::from)
        .to_vec();
    all.extend_from_slice(args);
    Listener::start(bin, &all)
}

/// SIGTERM, then its `stats` event.
fn stop(mut l: Listener) -> Value {
    let _ = Command::new("kill")
        .args(["-TERM", &l.child.id().to_string()])
        .status();
    let stats = loop {
        match l.lines.recv_timeout(Duration::from_secs(30)) {
            Ok(line) => {
                let event: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
                if event["event"] == "stats" {
                    break event;
                }
            }
            Err(_) => break Value::Null,
        }
    };
    let _ = l.child.wait();
    stats
}

/// How long a row runs: for a time, or until a number of messages were sent.
#[derive(Clone, Copy)]
enum Length {
    Seconds(u64),
    Messages(u64),
}

/// Each connection sends `window` messages, reads their ACKs (each must be AA), and repeats
/// until the row's length is reached; connection `c` goes to listener `c % n`. Messages
/// acknowledged.
async fn drive(
    addrs: &[SocketAddr],
    connections: u64,
    window: u64,
    length: Length,
    base: u64,
) -> u64 {
    let start = Instant::now();
    let claimed = Arc::new(AtomicU64::new(0));
    let mut tasks = Vec::new();
    for c in 0..connections {
        let addr = addrs[c as usize % addrs.len()];
        let claimed = claimed.clone();
        tasks.push(tokio::spawn(async move {
            let mut stream = TcpStream::connect(addr).await.unwrap();
            let mut done = 0u64;
            let mut buf = vec![0u8; 64 * 1024];
            let mut pending = Vec::new();
            loop {
                let more = match length {
                    Length::Seconds(s) => start.elapsed() < Duration::from_secs(s),
                    Length::Messages(n) => claimed.fetch_add(window, Ordering::Relaxed) < n,
                };
                if !more {
                    break;
                }
                let mut batch = Vec::new();
                for i in 0..window {
                    batch.extend_from_slice(&message(base + c * 1_000_000_000 + done + i));
                }
                stream.write_all(&batch).await.unwrap();
                let mut acks = 0;
                while acks < window {
                    let n = stream.read(&mut buf).await.unwrap();
                    assert!(n > 0, "listen closed the connection");
                    pending.extend_from_slice(&buf[..n]);
                    while let Some(end) = pending.iter().position(|b| *b == 0x1c) {
                        let frame: Vec<u8> = pending.drain(..=end).collect();
                        let text = String::from_utf8_lossy(&frame);
                        assert!(text.contains("MSA|AA|"), "not AA: {text:?}");
                        acks += 1;
                    }
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
    total
}

struct Sample {
    rate: f64,
    /// Mean rows per commit group, over the row's listeners.
    mean_group: f64,
    wal_syncs_per_s: Option<f64>,
    /// Cores used: the whole cluster, the listeners.
    pg_cpu: Option<f64>,
    listen_cpu: f64,
    /// CPU microseconds per message: the whole cluster, its backends serving the row's
    /// database, the listeners.
    pg_us: Option<f64>,
    backend_us: Option<f64>,
    listen_us: f64,
    /// CPU microseconds per message of the senders (this process).
    send_us: f64,
    /// Cores the whole machine was busy, and those of them not ours (neither the cluster, the
    /// listeners nor the senders: other work on the machine).
    machine_cpu: f64,
    others_cpu: Option<f64>,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// A row of the table: its store and listeners, and the build of `mllp` it runs.
struct Row {
    name: &'static str,
    args: &'static [&'static str],
    listeners: usize,
    /// Run with the baseline build (`SCALE_BASELINE`), not this one.
    baseline: bool,
}

/// The rows: `ROWS`, each PostgreSQL row also with the baseline build when there is one.
fn rows(baseline: bool) -> Vec<Row> {
    let mut rows = Vec::new();
    for (name, args, listeners) in ROWS {
        let row = |baseline| Row {
            name,
            args,
            listeners,
            baseline,
        };
        if baseline && args[0] == "--postgres" {
            rows.push(row(true));
        }
        rows.push(row(false));
    }
    rows
}

/// The median of `f` over the samples that have it, with `digits`; `-` when none has.
fn opt(s: &[Sample], f: &dyn Fn(&Sample) -> Option<f64>, digits: usize) -> String {
    let v: Vec<f64> = s.iter().filter_map(f).collect();
    if v.is_empty() {
        "-".to_string()
    } else {
        format!("{:.*}", digits, median(v))
    }
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        println!("scale_out: bench");
        return;
    }
    let connections = env_or("SCALE_CONNECTIONS", 8);
    let window = env_or("SCALE_WINDOW", 16);
    let length = match std::env::var("SCALE_MESSAGES")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        Some(n) => Length::Messages(n),
        None => Length::Seconds(env_or("SCALE_SECONDS", 3)),
    };
    let runs = env_or("SCALE_RUNS", 3).max(1);
    let Some(cluster) = Cluster::start() else {
        println!("scale_out: skipped: no PostgreSQL (set MLLP_BENCH_PG, or install postgresql for .ci/pg-cluster)");
        return;
    };
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let bin = env!("CARGO_BIN_EXE_mllp");
    let baseline = std::env::var("SCALE_BASELINE").ok();
    let rows = rows(baseline.is_some());
    let scratch = tempfile::tempdir().unwrap();
    println!(
        "scale_out: {connections} connections, window {window}, {} per row, {runs} rounds; PostgreSQL {}{}",
        match length {
            Length::Seconds(s) => format!("{s} s"),
            Length::Messages(n) => format!("{n} messages"),
        },
        if cluster.own() { "throw-away cluster, fsync on" } else { "from MLLP_BENCH_PG" },
        baseline.as_deref().map_or(String::new(), |b| format!("; baseline build {b}")),
    );
    let mut samples: Vec<Vec<Sample>> = rows.iter().map(|_| Vec::new()).collect();
    let mut base = 0u64;
    for round in 0..runs {
        for (r, row) in rows.iter().enumerate() {
            let db = runtime.block_on(pg::fresh_database(&cluster.url, &format!("scale_{r}")));
            let db_name = db.rsplit('/').next().unwrap().split('?').next().unwrap();
            let file = scratch.path().join(format!("rx{round}_{r}.db"));
            let args: Vec<String> = row
                .args
                .iter()
                .map(|a| {
                    a.replace("{db}", &db)
                        .replace("{file}", &file.to_string_lossy())
                })
                .collect();
            let bin = match (&baseline, row.baseline) {
                (Some(b), true) => b.as_str(),
                _ => bin,
            };
            let started: Vec<Listener> = (0..row.listeners)
                .map(|_| start_listener(bin, &args))
                .collect();
            let addrs: Vec<SocketAddr> = started.iter().map(|l| l.addr).collect();
            let uses_pg = args.iter().any(|a| a == "--postgres");
            let syncs0 = uses_pg
                .then(|| runtime.block_on(wal_syncs(&cluster.url)))
                .flatten();
            let pg0 = cluster.cpu();
            let cpu0: f64 = started.iter().map(|l| process_cpu(l.child.id())).sum();
            let send0 = process_cpu(std::process::id());
            let machine0 = machine_cpu();
            let t0 = Instant::now();
            base += 100_000_000_000;
            let acked = runtime.block_on(drive(&addrs, connections, window, length, base));
            let elapsed = t0.elapsed().as_secs_f64();
            let machine1 = machine_cpu();
            let send_cpu = process_cpu(std::process::id()) - send0;
            let listen_cpu = started
                .iter()
                .map(|l| process_cpu(l.child.id()))
                .sum::<f64>()
                - cpu0;
            let pg_cpu = match (pg0, cluster.cpu()) {
                (Some(a), Some(b)) if uses_pg => Some(b.since(&a, db_name)),
                _ => None,
            };
            let syncs1 = uses_pg
                .then(|| runtime.block_on(wal_syncs(&cluster.url)))
                .flatten();
            let stats: Vec<Value> = started.into_iter().map(stop).collect();
            let (groups, committed) = stats.iter().fold((0.0, 0.0), |(g, n), s| {
                let c = &s["commit_groups"];
                (
                    g + c["groups"].as_f64().unwrap_or(0.0),
                    n + c["rows"].as_f64().unwrap_or(0.0),
                )
            });
            let sizes = stats
                .iter()
                .map(|s| s["commit_groups"]["sizes"].to_string())
                .collect::<Vec<_>>()
                .join(" + ");
            let per_message = |seconds: f64| seconds * 1e6 / acked.max(1) as f64;
            // Ticks of all cores over the row's wall time: how many cores the machine has.
            let cores = (machine1.1 - machine0.1) as f64 / 100.0 / elapsed;
            let busy = (machine1.0 - machine0.0) as f64 / 100.0 / elapsed;
            let sample = Sample {
                rate: acked as f64 / elapsed,
                mean_group: if groups > 0.0 {
                    committed / groups
                } else {
                    0.0
                },
                wal_syncs_per_s: match (syncs0, syncs1) {
                    (Some(a), Some(b)) => Some((b - a) as f64 / elapsed),
                    _ => None,
                },
                pg_cpu: pg_cpu.map(|(all, _)| all / elapsed),
                listen_cpu: listen_cpu / elapsed,
                pg_us: pg_cpu.map(|(all, _)| per_message(all)),
                backend_us: pg_cpu.map(|(_, backends)| per_message(backends)),
                listen_us: per_message(listen_cpu),
                send_us: per_message(send_cpu),
                machine_cpu: busy,
                others_cpu: pg_cpu
                    .map(|(all, _)| (busy - (all + listen_cpu + send_cpu) / elapsed).max(0.0)),
            };
            println!(
                "  round {}: {:<34} {:<8} {:>8.0} msg/s  group mean {:>6.1}  WAL syncs/s {:>6}  PG CPU {:>5} ({} us/msg, backends {})  listen CPU {:.2} ({:.1} us/msg)  send {:.1} us/msg  machine {:.2} of {cores:.1} cores (others {})  sizes {sizes}",
                round + 1,
                row.name,
                if row.baseline { "baseline" } else { "this" },
                sample.rate,
                sample.mean_group,
                sample.wal_syncs_per_s.map_or("-".into(), |s| format!("{s:.0}")),
                sample.pg_cpu.map_or("-".into(), |c| format!("{c:.2}")),
                sample.pg_us.map_or("-".into(), |c| format!("{c:.1}")),
                sample.backend_us.map_or("-".into(), |c| format!("{c:.1}")),
                sample.listen_cpu,
                sample.listen_us,
                sample.send_us,
                sample.machine_cpu,
                sample.others_cpu.map_or("-".into(), |c| format!("{c:.2}")),
            );
            samples[r].push(sample);
        }
    }
    println!("\n| store | build | msg/s (median) | x --sqlite | x 1 listener | rows per commit group | WAL syncs/s | PostgreSQL CPU (cores) | PostgreSQL µs/msg (backends) | listeners' CPU (cores) | listeners' µs/msg | senders' µs/msg | all µs/msg | machine busy (cores) | others' (cores) |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    // The same build's one-listener PostgreSQL row, for the two-listener rows.
    let single = |baseline: bool| {
        rows.iter()
            .position(|r| r.baseline == baseline && r.listeners == 1 && r.args[0] == "--postgres")
    };
    for (r, row) in rows.iter().enumerate() {
        let s = &samples[r];
        let ratio_to = |other: usize| {
            median(
                s.iter()
                    .zip(&samples[other])
                    .map(|(a, b)| a.rate / b.rate)
                    .collect(),
            )
        };
        let to_one = match single(row.baseline) {
            Some(one) if row.listeners > 1 => format!("{:.2}", ratio_to(one)),
            _ => "-".into(),
        };
        println!(
            "| {} | {} | {:.0} | {:.2} | {to_one} | {:.1} | {} | {} | {} ({}) | {:.2} | {:.1} | {:.1} | {} | {:.2} | {} |",
            row.name,
            if row.baseline { "baseline" } else { "this" },
            median(s.iter().map(|x| x.rate).collect()),
            ratio_to(0),
            median(s.iter().map(|x| x.mean_group).collect()),
            opt(s, &|x| x.wal_syncs_per_s, 0),
            opt(s, &|x| x.pg_cpu, 2),
            opt(s, &|x| x.pg_us, 1),
            opt(s, &|x| x.backend_us, 1),
            median(s.iter().map(|x| x.listen_cpu).collect()),
            median(s.iter().map(|x| x.listen_us).collect()),
            median(s.iter().map(|x| x.send_us).collect()),
            opt(s, &|x| x.pg_us.map(|pg| pg + x.listen_us + x.send_us), 1),
            median(s.iter().map(|x| x.machine_cpu).collect()),
            opt(s, &|x| x.others_cpu, 2),
        );
    }
}
