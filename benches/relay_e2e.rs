//! `mllp relay` end to end, both ends ours: `mllp send` -> `mllp relay` (pass-through) ->
//! `mllp listen` (stdout to /dev/null) on loopback, against `mllp send` -> `mllp listen` direct
//! in the same run with the same messages: throughput pipelined (window 64) as a ratio to the
//! direct path, and the latency the relay adds per message one at a time (p50/p99 of a blocking
//! client's round trips through the relay and direct), plus the relay's peak RSS (VmHWM). Then
//! store and forward: `mllp send` -> `mllp relay --queue` -> `mllp listen`, the rate the queue
//! takes messages at (each committed to its file before the answer) and the rate they reach the
//! upstream (until no row is pending), as ratios to pass-through, from one connection and from
//! eight (`send --connections 8`, against pass-through from eight). Then `relay --mirror`: the
//! pipelined rate with a healthy shadow (an `mllp listen`) as a ratio to the same relay without
//! a mirror, and the one-at-a-time p50 with the shadow down (nothing listening) and stalled
//! (connections taken, never read) as ratios to the relay without a mirror.
//!
//! `cargo bench --bench relay_e2e` (MESSAGES=N for the throughput runs, ROUNDS=N for the
//! latency samples, RUNS=N rounds whose medians are shown, TRIPLES=N sends direct, through the
//! relay and through the mirroring relay in turn a round, 3 by default; MLLP_BASE=PATH measures
//! another build too, each round both builds one after the other, in alternating order).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

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

/// One build of `mllp` under measurement.
struct Build {
    name: String,
    bin: PathBuf,
}

impl Build {
    /// Start `mllp ARGS` and read the bound address from its JSON events.
    fn spawn(&self, args: &[&str]) -> (Child, SocketAddr) {
        let mut child = Command::new(&self.bin)
            .args(["--log-format", "json"])
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let addr = loop {
            let Some(Ok(line)) = lines.next() else {
                panic!("mllp {args:?} ended before listening: {:?}", child.wait());
            };
            let event: serde_json::Value = serde_json::from_str(&line).unwrap();
            if let Some(addr) = event["addr"].as_str() {
                break addr.parse().unwrap();
            }
        };
        std::thread::spawn(move || for _ in lines {});
        (child, addr)
    }

    fn listen(&self) -> (Child, SocketAddr) {
        self.spawn(&["listen", "--port", "0"])
    }

    fn relay(&self, to: SocketAddr, more: &[&str]) -> (Child, SocketAddr) {
        let to = to.to_string();
        self.spawn(&[&["relay", "--listen", "0", "--to", &to], more].concat())
    }

    /// `mllp send FILE` to `to`, window 64: messages per second.
    fn send_rate(&self, file: &Path, messages: usize, to: SocketAddr) -> f64 {
        self.send_rate_over(1, file, messages, to)
    }

    /// `mllp send FILE` to `to` over `connections`, window 64 each: messages per second.
    fn send_rate_over(
        &self,
        connections: usize,
        file: &Path,
        messages: usize,
        to: SocketAddr,
    ) -> f64 {
        let mut send = Command::new(&self.bin);
        send.args(["--quiet", "send", "--progress", "never", "--window", "64"]);
        if connections > 1 {
            send.args([
                "--connections",
                &connections.to_string(),
                "--order-key",
                "none",
            ]);
        }
        let started = Instant::now();
        let out = send
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
}

/// Rows of the queue `file` still pending.
fn pending(file: &Path) -> i64 {
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

/// Round trips of one message at a time over one connection, each until its whole ACK frame,
/// after a warm-up of 50.
fn round_trips(to: SocketAddr, rounds: usize) -> Vec<Duration> {
    let mut tcp = TcpStream::connect(to).unwrap();
    tcp.set_nodelay(true).unwrap();
    let mut buf = [0u8; 4096];
    let mut times = Vec::with_capacity(rounds);
    for i in 0..rounds + 50 {
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
        if i >= 50 {
            times.push(started.elapsed());
        }
        assert!(got.windows(7).any(|w| w == b"MSA|AA|"), "not an AA");
    }
    times.sort();
    times
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i].as_secs_f64() * 1e6
}

/// A shadow that takes connections and never reads from them; they stay open.
fn stalled() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            held.push(stream);
        }
    });
    addr
}

/// A port nothing listens on.
fn down() -> SocketAddr {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
}

/// One round's figures of one build.
#[derive(Default, Clone, Copy)]
struct Figures {
    direct: f64,
    relayed: f64,
    rss_mb: f64,
    taken: f64,
    through: f64,
    /// Pass-through and the queue from eight connections.
    relayed_8: f64,
    taken_8: f64,
    through_8: f64,
    mirrored: f64,
    /// Ratios of sends made one after the other, the median of a round's: relay to direct,
    /// mirror to relay.
    relay_ratio: f64,
    mirror_ratio: f64,
    direct_p: (f64, f64),
    relay_p: (f64, f64),
    shadow_down_p50: f64,
    shadow_stalled_p50: f64,
}

fn measure(build: &Build, file: &Path, messages: usize, rounds: usize, queue: &Path) -> Figures {
    let mut f = Figures::default();
    let (upstream, up) = build.listen();
    let (shadow, shadow_at) = build.listen();
    let (relay, via) = build.relay(up, &[]);
    let shadow_arg = shadow_at.to_string();
    let (mirroring, mirrored_via) = build.relay(up, &["--mirror", &shadow_arg]);
    // Direct, through the relay and through the mirroring relay one right after the other,
    // several times: each ratio is taken between sends a moment apart, so a build starting
    // elsewhere on the machine moves both sides of it (one send each swung the mirror's
    // ratio from 0.4x to 0.8x).
    let mut samples: [Vec<f64>; 3] = Default::default();
    let (mut relay_ratios, mut mirror_ratios) = (Vec::new(), Vec::new());
    for _ in 0..env("TRIPLES", 3).max(1) {
        let direct = build.send_rate(file, messages, up);
        let relayed = build.send_rate(file, messages, via);
        let mirrored = build.send_rate(file, messages, mirrored_via);
        relay_ratios.push(relayed / direct);
        mirror_ratios.push(mirrored / relayed);
        for (kept, rate) in samples.iter_mut().zip([direct, relayed, mirrored]) {
            kept.push(rate);
        }
    }
    let [direct, relayed, mirrored] = samples;
    (f.direct, f.relayed, f.mirrored) = (median(direct), median(relayed), median(mirrored));
    (f.relay_ratio, f.mirror_ratio) = (median(relay_ratios), median(mirror_ratios));
    f.rss_mb = peak_kib(relay.id()) as f64 / 1024.0;
    stop(mirroring);

    f.relayed_8 = build.send_rate_over(8, file, messages, via);
    (f.taken, f.through) = queued(build, up, 1, file, messages, queue);
    (f.taken_8, f.through_8) = queued(build, up, 8, file, messages, queue);

    let direct = round_trips(up, rounds);
    let relayed = round_trips(via, rounds);
    f.direct_p = (percentile(&direct, 0.5), percentile(&direct, 0.99));
    f.relay_p = (percentile(&relayed, 0.5), percentile(&relayed, 0.99));
    for (shadow, p50) in [
        (down(), &mut f.shadow_down_p50),
        (stalled(), &mut f.shadow_stalled_p50),
    ] {
        let (relay, via) = build.relay(up, &["--mirror", &shadow.to_string()]);
        *p50 = percentile(&round_trips(via, rounds), 0.5);
        stop(relay);
    }
    stop(relay);
    stop(shadow);
    stop(upstream);
    f
}

/// `relay --queue` from `connections`: the rate it takes messages at, and the rate they reach
/// the upstream (until no row is pending).
fn queued(
    build: &Build,
    up: SocketAddr,
    connections: usize,
    file: &Path,
    messages: usize,
    queue: &Path,
) -> (f64, f64) {
    let (queued, queued_via) = build.relay(up, &["--queue", queue.to_str().unwrap()]);
    let started = Instant::now();
    let taken = build.send_rate_over(connections, file, messages, queued_via);
    while pending(queue) > 0 {
        std::thread::sleep(Duration::from_millis(5));
    }
    let through = messages as f64 / started.elapsed().as_secs_f64();
    stop(queued);
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", queue.display()));
    }
    (taken, through)
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(|a, b| a.total_cmp(b));
    values[values.len() / 2]
}

fn report(build: &Build, rounds: usize, runs: &[Figures]) {
    let m = |pick: fn(&Figures) -> f64| median(runs.iter().map(pick).collect());
    println!(
        "{}: medians of {} rounds (ratios: median of each round's ratio)",
        build.name,
        runs.len()
    );
    println!(
        "  mllp send -> mllp listen, window 64                {:>9.0} msg/s",
        m(|f| f.direct)
    );
    println!(
        "  mllp send -> mllp relay -> mllp listen, window 64  {:>9.0} msg/s  {:.2}x direct  relay peak RSS {:.1} MB",
        m(|f| f.relayed),
        m(|f| f.relay_ratio),
        m(|f| f.rss_mb)
    );
    println!(
        "  relay --queue: taken {:>9.0} msg/s  {:.2}x pass-through; through {:>9.0} msg/s  {:.2}x",
        m(|f| f.taken),
        m(|f| f.taken / f.relayed),
        m(|f| f.through),
        m(|f| f.through / f.relayed)
    );
    println!(
        "  from 8 connections: pass-through {:>9.0} msg/s; relay --queue taken {:>9.0} msg/s  {:.2}x; through {:>9.0} msg/s  {:.2}x",
        m(|f| f.relayed_8),
        m(|f| f.taken_8),
        m(|f| f.taken_8 / f.relayed_8),
        m(|f| f.through_8),
        m(|f| f.through_8 / f.relayed_8)
    );
    println!(
        "  relay --mirror, shadow an mllp listen: {:>9.0} msg/s  {:.2}x without --mirror",
        m(|f| f.mirrored),
        m(|f| f.mirror_ratio)
    );
    println!("  one at a time, {rounds} round trips (us):  p50 / p99");
    println!(
        "    direct                 {:>8.0} / {:>8.0}",
        m(|f| f.direct_p.0),
        m(|f| f.direct_p.1)
    );
    println!(
        "    through the relay      {:>8.0} / {:>8.0}",
        m(|f| f.relay_p.0),
        m(|f| f.relay_p.1)
    );
    println!(
        "    added by the relay     {:>8.0} / {:>8.0}",
        m(|f| f.relay_p.0 - f.direct_p.0),
        m(|f| f.relay_p.1 - f.direct_p.1)
    );
    println!(
        "    --mirror, shadow down  {:>8.0} p50  {:.2}x without --mirror",
        m(|f| f.shadow_down_p50),
        m(|f| f.shadow_down_p50 / f.relay_p.0)
    );
    println!(
        "    --mirror, shadow stalled {:>6.0} p50  {:.2}x without --mirror",
        m(|f| f.shadow_stalled_p50),
        m(|f| f.shadow_stalled_p50 / f.relay_p.0)
    );
}

fn main() {
    let messages = env("MESSAGES", 20_000);
    let rounds = env("ROUNDS", 2_000);
    let runs = env("RUNS", 3).max(1);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("all.hl7");
    let mut all = std::io::BufWriter::new(std::fs::File::create(&file).unwrap());
    for i in 1..=messages {
        all.write_all(&adt(i)).unwrap();
    }
    drop(all);
    println!(
        "relay_e2e: {messages} ADT messages of ~{} bytes, loopback",
        adt(1).len()
    );
    let mut builds = vec![Build {
        name: "this build".into(),
        bin: env!("CARGO_BIN_EXE_mllp").into(),
    }];
    if let Ok(base) = std::env::var("MLLP_BASE") {
        builds.insert(
            0,
            Build {
                name: format!("MLLP_BASE ({base})"),
                bin: base.into(),
            },
        );
    }
    let mut figures = vec![Vec::new(); builds.len()];
    for run in 0..runs {
        // Alternate which build goes first, so neither always gets the quieter moment.
        let mut order: Vec<usize> = (0..builds.len()).collect();
        if run % 2 == 1 {
            order.reverse();
        }
        for i in order {
            let queue = dir.path().join("q.db");
            figures[i].push(measure(&builds[i], &file, messages, rounds, &queue));
        }
    }
    for (build, runs) in builds.iter().zip(&figures) {
        report(build, rounds, runs);
    }
}
