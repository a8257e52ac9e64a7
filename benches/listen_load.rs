//! Load benchmark for `mllp listen`: concurrent connections pipelining small messages, against
//! the real binary (stdout sink to /dev/null) and, in the same run, a minimal tokio ACK-echo
//! server (no parsing, no sink) started from this same benchmark binary. Prints messages per
//! second and server CPU per message (from /proc), and the ratio to the echo server.
//!
//! Then `listen` alone against the floor (`benches/floor`: blocking sender and receiver
//! processes, same framing and ACK checks): the floor's sender drives the floor's receiver,
//! `mllp listen` with stdout and stderr on /dev/null, and `mllp listen` with its events read
//! through a pipe, in turn, one connection, window 64, the same messages, several rounds
//! interleaved; each round's rate (the sender's connect to last ACK), each side's CPU per
//! message, and the median ratio to the floor's receiver with its spread.
//!
//! `cargo bench --bench listen_load` (env: LOAD_CONNECTIONS, LOAD_WINDOW, LOAD_SECONDS, 0 to
//! skip the echo comparison; FLOOR_MESSAGES for the floor runs, 0 to skip them; FLOOR_RUNS
//! rounds of them, interleaved; MLLP_BIN another build of `mllp`). `LOAD_SECONDS=0 cargo bench --bench listen_load` is `listen`
//! alone against the floor's receiver.

mod floor;

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;

const MESSAGE: &[u8] = b"MSH|^~\\&|LOAD|FAC|RCV|FAC|20240101120000||ADT^A01|LOAD000001|P|2.5\rEVN|A01|20240101120000\rPID|1||123456^^^HOSP^MR||DOE^JANE||19800101|F\rPV1|1|I|W^1^1\r";
const ECHO_ACK: &[u8] =
    b"\x0bMSH|^~\\&|RCV|FAC|LOAD|FAC|20240101120000||ACK^A01|1|P|2.5\rMSA|AA|LOAD000001\r\x1c\r";

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    floor::serve_if_asked();
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--echo-server") {
        return echo_server();
    }
    if args.iter().any(|a| a == "--list") {
        println!("listen_load: bench");
        return;
    }
    // MLLP_BIN measures another build of `mllp` against the same floor.
    let bin = std::env::var("MLLP_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_mllp").into());
    let bin = bin.as_str();
    let seconds = env_or("LOAD_SECONDS", 3);
    if seconds > 0 {
        against_echo(seconds, bin);
    }
    let floor_messages = env_or("FLOOR_MESSAGES", 100_000) as usize;
    if floor_messages > 0 {
        against_floor(floor_messages, env_or("FLOOR_RUNS", 3).max(1) as usize, bin);
    }
}

/// `listen` and `listen -q` under 8 pipelining connections, beside the echo server.
fn against_echo(seconds: u64, bin: &str) {
    let connections = env_or("LOAD_CONNECTIONS", 8) as usize;
    let window = env_or("LOAD_WINDOW", 32) as usize;
    let tick = clock_ticks();
    println!(
        "listen_load: {connections} connections, window {window}, {seconds} s per run, {} byte messages",
        MESSAGE.len()
    );
    let me = std::env::current_exe().unwrap();
    let runs: [(&str, Command); 4] = [
        ("echo", {
            let mut c = Command::new(&me);
            c.arg("--echo-server");
            c
        }),
        ("listen", {
            let mut c = Command::new(bin);
            c.args(["listen", "--port", "0"]);
            c
        }),
        ("listen -q", {
            let mut c = Command::new(bin);
            c.args(["-q", "listen", "--port", "0"]);
            c
        }),
        ("echo", {
            let mut c = Command::new(&me);
            c.arg("--echo-server");
            c
        }),
    ];
    let mut echo_rates = Vec::new();
    let mut results = Vec::new();
    for (name, mut command) in runs {
        let (mut child, addr) = start(&mut command);
        let before = cpu_seconds(child.id(), tick);
        let (messages, elapsed) = drive(addr, connections, window, Duration::from_secs(seconds));
        let cpu = cpu_seconds(child.id(), tick) - before;
        let _ = child.kill();
        let _ = child.wait();
        let rate = messages as f64 / elapsed;
        let us_per_msg = cpu * 1e6 / messages.max(1) as f64;
        if name == "echo" {
            echo_rates.push(rate);
        }
        println!("{name:>10}: {rate:>10.0} msg/s  server CPU {us_per_msg:>6.2} us/msg  ({messages} messages)");
        results.push((name, rate, us_per_msg));
    }
    let echo = echo_rates.iter().sum::<f64>() / echo_rates.len() as f64;
    for (name, rate, us) in results.iter().filter(|r| r.0 != "echo") {
        println!(
            "{name:>10}: {:.2}x echo throughput (target >= 0.6x), {us:.2} us CPU/msg (target <= 5 us)",
            rate / echo
        );
    }
}

const FLOOR_WINDOW: usize = 64;

/// One receiver under the floor's sender: the link's rate and each side's CPU per message.
struct Leg {
    rate: f64,
    send_us: f64,
    recv_us: f64,
}

/// The receivers `listen alone` compares, in the order each round runs them.
const LEGS: [&str; 3] = ["floor recv", "listen", "listen events"];

/// The floor's sender against the floor's receiver, then against `mllp listen` (stdout and
/// stderr on /dev/null: nobody reads a line per message), then against `mllp listen` whose
/// events a reader drains through a pipe; `runs` rounds, interleaved.
fn against_floor(messages: usize, runs: usize, bin: &str) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("load.hl7");
    let at = memchr::memmem::find(MESSAGE, b"LOAD000001").unwrap();
    let payloads: Vec<Vec<u8>> = (0..messages)
        .map(|i| {
            let mut m = MESSAGE.to_vec();
            m[at..at + 10].copy_from_slice(format!("L{i:09}").as_bytes());
            m
        })
        .collect();
    floor::write_messages(&file, payloads.iter().map(Vec::as_slice));
    println!(
        "listen alone: the floor's sender, 1 connection, window {FLOOR_WINDOW}, {messages} messages, {runs} rounds"
    );
    let us = |cpu: f64| cpu * 1e6 / messages as f64;
    let mut legs: Vec<Vec<Leg>> = LEGS.iter().map(|_| Vec::new()).collect();
    for _ in 0..runs {
        for (name, results) in LEGS.iter().zip(&mut legs) {
            let (port, pid, stop): (u16, u32, Box<dyn FnOnce() -> f64>) = match *name {
                "floor recv" => {
                    let r = floor::Receiver::start();
                    (r.port, r.pid(), Box::new(move || r.stop().cpu_s))
                }
                "listen" => {
                    let port = free_port();
                    let mut child = Command::new(bin)
                        .args(["listen", "--port", &port.to_string()])
                        .stdin(Stdio::null())
                        .stdout(Stdio::null())
                        .stderr(Stdio::null())
                        .spawn()
                        .expect("start listen");
                    wait_listening(port);
                    let pid = child.id();
                    (
                        port,
                        pid,
                        Box::new(move || floor::reap(&mut child, true).cpu_s),
                    )
                }
                _ => {
                    let (mut child, addr) =
                        start(Command::new(bin).args(["listen", "--port", "0"]));
                    let pid = child.id();
                    let stop = move || floor::reap(&mut child, true).cpu_s;
                    (addr.port(), pid, Box::new(stop))
                }
            };
            let ready = floor::cpu_now(pid);
            let sent = floor::send(port, &file, FLOOR_WINDOW)
                .unwrap_or_else(|e| panic!("floor sender against {name}: {e}"));
            let recv_cpu = stop() - ready;
            let leg = Leg {
                rate: sent.messages as f64 / sent.link_s,
                send_us: us(sent.usage.cpu_s),
                recv_us: us(recv_cpu),
            };
            println!(
                "  floor send -> {name:<14} {:>10.0} msg/s  sender CPU {:>5.2} us/msg  receiver CPU {:>5.2} us/msg",
                leg.rate, leg.send_us, leg.recv_us
            );
            results.push(leg);
        }
    }
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let floor_rates: Vec<f64> = legs[0].iter().map(|l| l.rate).collect();
    for (name, results) in LEGS.iter().zip(&legs).skip(1) {
        // Each round's rate against the floor of the same round.
        let ratios: Vec<f64> = results
            .iter()
            .zip(&floor_rates)
            .map(|(l, f)| l.rate / f)
            .collect();
        let (lo, hi) = ratios
            .iter()
            .fold((f64::MAX, f64::MIN), |(lo, hi), r| (lo.min(*r), hi.max(*r)));
        println!(
            "  {name}: {:.2}x the floor's receiver (median; {lo:.2}x-{hi:.2}x; target >= 0.6x), \
             receiver CPU {:.2} us/msg against {:.2}, sender CPU {:.2} us/msg against {:.2}",
            median(ratios.clone()),
            median(results.iter().map(|l| l.recv_us).collect()),
            median(legs[0].iter().map(|l| l.recv_us).collect()),
            median(results.iter().map(|l| l.send_us).collect()),
            median(legs[0].iter().map(|l| l.send_us).collect()),
        );
    }
}

/// A port nothing listens on now, for a server whose stderr nobody reads.
fn free_port() -> u16 {
    let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    probe.local_addr().unwrap().port()
}

/// Waits until something accepts on `port`.
fn wait_listening(port: u16) {
    let until = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < until,
            "listen did not start on port {port}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Start a server process with stdout and stderr to /dev/null except the first stderr line,
/// which names the address.
fn start(command: &mut Command) -> (Child, SocketAddr) {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start server");
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    let addr = line
        .trim()
        .rsplit(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap_or_else(|_| panic!("no address in {line:?}"));
    // Keep draining the events so the server never blocks on a full pipe.
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    (child, addr)
}

fn drive(addr: SocketAddr, connections: usize, window: usize, run: Duration) -> (u64, f64) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async move {
        let acked = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let mut frame = vec![0x0b];
        frame.extend_from_slice(MESSAGE);
        frame.extend_from_slice(b"\x1c\r");
        let frame: Arc<[u8]> = frame.into();
        let started = Instant::now();
        let mut tasks = Vec::new();
        for _ in 0..connections {
            let stream = TcpStream::connect(addr).await.unwrap();
            stream.set_nodelay(true).unwrap();
            let (mut rd, mut wr) = stream.into_split();
            let credits = Arc::new(Semaphore::new(window));
            let (acked, stop, frame, c2) =
                (acked.clone(), stop.clone(), frame.clone(), credits.clone());
            tasks.push(tokio::spawn(async move {
                let mut buf = Vec::with_capacity(window * frame.len());
                while !stop.load(Ordering::Relaxed) {
                    let Ok(first) = c2.acquire().await else { break };
                    first.forget();
                    let mut n = 1;
                    while n < window {
                        match c2.try_acquire() {
                            Ok(p) => {
                                p.forget();
                                n += 1
                            }
                            Err(_) => break,
                        }
                    }
                    buf.clear();
                    for _ in 0..n {
                        buf.extend_from_slice(&frame);
                    }
                    if wr.write_all(&buf).await.is_err() {
                        break;
                    }
                }
            }));
            tasks.push(tokio::spawn(async move {
                let mut buf = vec![0u8; 64 * 1024];
                loop {
                    let n = match rd.read(&mut buf).await {
                        Ok(0) | Err(_) => break,
                        Ok(n) => n,
                    };
                    let acks = memchr::memchr_iter(0x1c, &buf[..n]).count();
                    acked.fetch_add(acks as u64, Ordering::Relaxed);
                    credits.add_permits(acks);
                }
            }));
        }
        tokio::time::sleep(run).await;
        let count = acked.load(Ordering::Relaxed);
        let elapsed = started.elapsed().as_secs_f64();
        stop.store(true, Ordering::Relaxed);
        for t in tasks {
            t.abort();
        }
        (count, elapsed)
    })
}

/// The baseline: answer every FS CR with a fixed ACK. No parsing, no sink, no events.
fn echo_server() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        eprintln!("listening on {}", listener.local_addr().unwrap());
        loop {
            let (mut stream, _) = listener.accept().await.unwrap();
            stream.set_nodelay(true).unwrap();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 64 * 1024];
                let mut out = Vec::new();
                loop {
                    let n = match stream.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => n,
                    };
                    out.clear();
                    for _ in memchr::memchr_iter(0x1c, &buf[..n]) {
                        out.extend_from_slice(ECHO_ACK);
                    }
                    if stream.write_all(&out).await.is_err() {
                        return;
                    }
                }
            });
        }
    })
}

/// utime + stime of a process, in seconds.
fn cpu_seconds(pid: u32, tick: f64) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the parenthesised command name; utime and stime are the 12th and 13th.
    let rest = stat.rsplit(')').next().unwrap_or("");
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = fields
        .get(11..13)
        .map(|f| f.iter().filter_map(|v| v.parse::<f64>().ok()).sum())
        .unwrap_or(0.0);
    ticks / tick
}

fn clock_ticks() -> f64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(100.0)
}
