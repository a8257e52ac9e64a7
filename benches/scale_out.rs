//! Several receivers, one store: the throughput of `mllp listen --postgres` with one listener
//! and with two on the same database, beside `--sqlite`, under the same load in the same run,
//! with the commit groups each listener reports and what the database spent.
//!
//! `cargo bench --bench scale_out` (env: SCALE_CONNECTIONS 8, SCALE_WINDOW 16, SCALE_SECONDS 3,
//! SCALE_RUNS 3; MLLP_BENCH_PG=URL uses that server, else a throw-away cluster is started with
//! `.ci/pg-cluster` with fsync on, and stopped at the end). Each connection sends a window of
//! messages, reads every ACK, checks it is AA, and repeats; the connections are spread over the
//! listeners of the row. The rows of a round run one after the other; rounds are interleaved,
//! and each row's figure is the median over rounds, its ratio the median of the per-round ratios
//! to `--sqlite`.

mod listener;
// The tests' PostgreSQL helpers; the benchmark needs only some of them.
#[allow(dead_code)]
#[path = "../tests/it/support/pg.rs"]
mod pg;

use listener::Listener;
use serde_json::Value;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
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

struct Cluster {
    url: String,
    /// The control script and the postmaster's data directory, when this run started it.
    own: Option<(PathBuf, PathBuf, tempfile::TempDir)>,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if let Some((ctl, _, _)) = &self.own {
            let _ = Command::new(ctl).arg("stop").stdout(Stdio::null()).status();
        }
    }
}

fn cluster() -> Option<Cluster> {
    if let Ok(url) = std::env::var("MLLP_BENCH_PG") {
        return Some(Cluster { url, own: None });
    }
    let dir = tempfile::tempdir().ok()?;
    let _ = std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    );
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join(".ci/pg-cluster");
    let out = Command::new(script)
        .arg(dir.path().join("pg"))
        .env("PG_FSYNC", "on")
        .stderr(Stdio::inherit())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let value = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix('='))
            .map(str::to_string)
    };
    let ctl = PathBuf::from(value("MLLP_TEST_PG_CTL")?);
    let data = dir.path().join("pg/data");
    Some(Cluster {
        url: value("MLLP_TEST_PG")?,
        own: Some((ctl, data, dir)),
    })
}

/// CPU seconds of the cluster's processes (the postmaster and its children) so far.
fn cluster_cpu(data: &Path) -> Option<f64> {
    let pid: u32 = std::fs::read_to_string(data.join("postmaster.pid"))
        .ok()?
        .lines()
        .next()?
        .trim()
        .parse()
        .ok()?;
    let mut ticks = 0u64;
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // The fields after the command name, which is in parentheses.
        let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
            continue;
        };
        let f: Vec<&str> = rest.split_whitespace().collect();
        let (Some(own), Some(parent)) = (entry.file_name().to_str().map(str::to_string), f.get(1))
        else {
            continue;
        };
        if own == pid.to_string() || *parent == pid.to_string() {
            ticks += f[11].parse::<u64>().unwrap_or(0) + f[12].parse::<u64>().unwrap_or(0);
        }
    }
    Some(ticks as f64 / 100.0)
}

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

/// Each connection sends `window` messages, reads their ACKs (each must be AA), and repeats
/// until `run` is over; connection `c` goes to listener `c % n`. Messages acknowledged.
async fn drive(
    addrs: &[SocketAddr],
    connections: u64,
    window: u64,
    run: Duration,
    base: u64,
) -> u64 {
    let start = Instant::now();
    let mut tasks = Vec::new();
    for c in 0..connections {
        let addr = addrs[c as usize % addrs.len()];
        tasks.push(tokio::spawn(async move {
            let mut stream = TcpStream::connect(addr).await.unwrap();
            let mut done = 0u64;
            let mut buf = vec![0u8; 64 * 1024];
            let mut pending = Vec::new();
            while start.elapsed() < run {
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
    sizes: String,
    wal_syncs_per_s: Option<f64>,
    pg_cpu: Option<f64>,
    listen_cpu: f64,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        println!("scale_out: bench");
        return;
    }
    let connections = env_or("SCALE_CONNECTIONS", 8);
    let window = env_or("SCALE_WINDOW", 16);
    let seconds = env_or("SCALE_SECONDS", 3);
    let runs = env_or("SCALE_RUNS", 3).max(1);
    let Some(cluster) = cluster() else {
        println!("scale_out: skipped: no PostgreSQL (set MLLP_BENCH_PG, or install postgresql for .ci/pg-cluster)");
        return;
    };
    let data = cluster.own.as_ref().map(|(_, d, _)| d.clone());
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let bin = env!("CARGO_BIN_EXE_mllp");
    let scratch = tempfile::tempdir().unwrap();
    println!(
        "scale_out: {connections} connections, window {window}, {seconds} s per row, {runs} rounds; PostgreSQL {}",
        if data.is_some() { "throw-away cluster, fsync on" } else { "from MLLP_BENCH_PG" }
    );
    let mut samples: Vec<Vec<Sample>> = ROWS.iter().map(|_| Vec::new()).collect();
    let mut base = 0u64;
    for round in 0..runs {
        for (r, (name, args, listeners)) in ROWS.iter().enumerate() {
            let db = runtime.block_on(pg::fresh_database(&cluster.url, &format!("scale_{r}")));
            let file = scratch.path().join(format!("rx{round}_{r}.db"));
            let args: Vec<String> = args
                .iter()
                .map(|a| {
                    a.replace("{db}", &db)
                        .replace("{file}", &file.to_string_lossy())
                })
                .collect();
            let started: Vec<Listener> = (0..*listeners)
                .map(|_| start_listener(bin, &args))
                .collect();
            let addrs: Vec<SocketAddr> = started.iter().map(|l| l.addr).collect();
            let uses_pg = args.iter().any(|a| a == "--postgres");
            let syncs0 = uses_pg
                .then(|| runtime.block_on(wal_syncs(&cluster.url)))
                .flatten();
            let pg0 = data.as_deref().and_then(cluster_cpu);
            let cpu0: f64 = started.iter().map(|l| process_cpu(l.child.id())).sum();
            let t0 = Instant::now();
            base += 100_000_000_000;
            let acked = runtime.block_on(drive(
                &addrs,
                connections,
                window,
                Duration::from_secs(seconds),
                base,
            ));
            let elapsed = t0.elapsed().as_secs_f64();
            let listen_cpu = started
                .iter()
                .map(|l| process_cpu(l.child.id()))
                .sum::<f64>()
                - cpu0;
            let pg_cpu = match (pg0, data.as_deref().and_then(cluster_cpu)) {
                (Some(a), Some(b)) if uses_pg => Some(b - a),
                _ => None,
            };
            let syncs1 = uses_pg
                .then(|| runtime.block_on(wal_syncs(&cluster.url)))
                .flatten();
            let stats: Vec<Value> = started.into_iter().map(stop).collect();
            let (groups, rows) = stats.iter().fold((0.0, 0.0), |(g, n), s| {
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
            let sample = Sample {
                rate: acked as f64 / elapsed,
                mean_group: if groups > 0.0 { rows / groups } else { 0.0 },
                sizes,
                wal_syncs_per_s: match (syncs0, syncs1) {
                    (Some(a), Some(b)) => Some((b - a) as f64 / elapsed),
                    _ => None,
                },
                pg_cpu: pg_cpu.map(|c| c / elapsed),
                listen_cpu: listen_cpu / elapsed,
            };
            println!(
                "  round {}: {name:<34} {:>8.0} msg/s  group mean {:>6.1}  WAL syncs/s {:>6}  PG CPU {:>5}  listen CPU {:.2}  sizes {}",
                round + 1,
                sample.rate,
                sample.mean_group,
                sample.wal_syncs_per_s.map_or("-".into(), |s| format!("{s:.0}")),
                sample.pg_cpu.map_or("-".into(), |c| format!("{c:.2}")),
                sample.listen_cpu,
                sample.sizes
            );
            samples[r].push(sample);
        }
    }
    println!("\n| store | msg/s (median) | x --sqlite | rows per commit group | WAL syncs/s | PostgreSQL CPU (cores) | listeners' CPU (cores) |");
    println!("|---|---|---|---|---|---|---|");
    for (r, (name, _, _)) in ROWS.iter().enumerate() {
        let s = &samples[r];
        let ratio = median(
            s.iter()
                .zip(&samples[0])
                .map(|(a, b)| a.rate / b.rate)
                .collect(),
        );
        let opt = |f: &dyn Fn(&Sample) -> Option<f64>, digits: usize| {
            let v: Vec<f64> = s.iter().filter_map(f).collect();
            if v.is_empty() {
                "-".to_string()
            } else {
                format!("{:.*}", digits, median(v))
            }
        };
        println!(
            "| {name} | {:.0} | {ratio:.2} | {:.1} | {} | {} | {:.2} |",
            median(s.iter().map(|x| x.rate).collect()),
            median(s.iter().map(|x| x.mean_group).collect()),
            opt(&|x| x.wal_syncs_per_s, 0),
            opt(&|x| x.pg_cpu, 2),
            median(s.iter().map(|x| x.listen_cpu).collect()),
        );
    }
}
