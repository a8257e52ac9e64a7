//! Load benchmark for `mllp listen`: concurrent connections pipelining small messages, against
//! the real binary (stdout sink to /dev/null) and, in the same run, a minimal tokio ACK-echo
//! server (no parsing, no sink) started from this same benchmark binary. Prints messages per
//! second and server CPU per message (from /proc), and the ratio to the echo server.
//!
//! Then `listen` alone against the floor (`benches/floor`: blocking sender and receiver
//! processes, same framing and ACK checks): the floor's sender drives the floor's receiver and
//! `mllp listen` in turn, one connection, window 64, the same messages; rates, the ratio, and
//! each side's CPU per message.
//!
//! `cargo bench --bench listen_load` (env: LOAD_CONNECTIONS, LOAD_WINDOW, LOAD_SECONDS;
//! FLOOR_MESSAGES for the floor runs, 0 to skip them).

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
    let connections = env_or("LOAD_CONNECTIONS", 8) as usize;
    let window = env_or("LOAD_WINDOW", 32) as usize;
    let seconds = env_or("LOAD_SECONDS", 3);
    let tick = clock_ticks();
    println!(
        "listen_load: {connections} connections, window {window}, {seconds} s per run, {} byte messages",
        MESSAGE.len()
    );
    let me = std::env::current_exe().unwrap();
    let bin = env!("CARGO_BIN_EXE_mllp");
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
    let floor_messages = env_or("FLOOR_MESSAGES", 100_000) as usize;
    if floor_messages > 0 {
        against_floor(floor_messages, bin);
    }
}

const FLOOR_WINDOW: usize = 64;

/// The floor's sender against the floor's receiver, then against `mllp listen`.
fn against_floor(messages: usize, bin: &str) {
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
    println!("listen alone: the floor's sender, 1 connection, window {FLOOR_WINDOW}, {messages} messages");
    let floor_recv = floor::Receiver::start();
    let ready = floor::cpu_now(floor_recv.pid());
    let sent = floor::send(floor_recv.port, &file, FLOOR_WINDOW).expect("floor sender");
    let recv_cpu = floor_recv.stop().cpu_s - ready;
    let floor_rate = sent.rate();
    let us = |cpu: f64| cpu * 1e6 / messages as f64;
    println!(
        "  floor send -> floor recv  {floor_rate:>10.0} msg/s  sender CPU {:>5.2} us/msg  receiver CPU {:>5.2} us/msg",
        us(sent.usage.cpu_s),
        us(recv_cpu)
    );
    let (mut listen, addr) = start(Command::new(bin).args(["listen", "--port", "0"]));
    let ready = floor::cpu_now(listen.id());
    let sent = floor::send(addr.port(), &file, FLOOR_WINDOW).expect("floor sender against listen");
    let recv_cpu = floor::reap(&mut listen, true).cpu_s - ready;
    let rate = sent.rate();
    println!(
        "  floor send -> mllp listen {rate:>10.0} msg/s  sender CPU {:>5.2} us/msg  receiver CPU {:>5.2} us/msg",
        us(sent.usage.cpu_s),
        us(recv_cpu)
    );
    println!(
        "  listen alone: {:.2}x the floor's receiver (target >= 0.6x)",
        rate / floor_rate
    );
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
