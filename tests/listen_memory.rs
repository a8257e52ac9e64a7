//! The listener's memory under hostile and heavy load, measured from outside: the peak resident
//! size (`VmHWM` in /proc/PID/status) of a child `mllp listen` with default limits. A test target
//! of its own, so its hundreds of sockets and its load do not share a process with other tests.

#![cfg(target_os = "linux")]

use socket2::{Domain, Socket, Type};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// One load at a time: two loaded listeners would share the machine's cores and memory.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The bound the listener must stay under with defaults, whatever its peers do.
const LIMIT_KIB: u64 = 512 * 1024;
const VT: u8 = 0x0b;
const FS: u8 = 0x1c;
const CR: u8 = 0x0d;

struct Listener {
    child: Child,
    addr: SocketAddr,
    /// How many connections closed, by cause.
    causes: Arc<Mutex<BTreeMap<String, usize>>>,
}

impl Listener {
    fn start(args: &[&str]) -> Listener {
        let mut child = Command::new(env!("CARGO_BIN_EXE_mllp"))
            .args(["--log-format", "json", "listen", "--port", "0"])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start mllp listen");
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let first = lines.next().expect("a first event").unwrap();
        let event: serde_json::Value = serde_json::from_str(&first).unwrap();
        assert_eq!(event["event"], "listening", "first event: {first}");
        let addr = event["addr"].as_str().unwrap().parse().unwrap();
        // The log is read so that writing it never holds the listener up; close causes are
        // kept to explain a failure.
        let causes = Arc::new(Mutex::new(BTreeMap::new()));
        let seen = causes.clone();
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                let Ok(event) = serde_json::from_str::<serde_json::Value>(&line) else {
                    continue;
                };
                if let Some(cause) = event["cause"].as_str() {
                    *seen.lock().unwrap().entry(cause.to_string()).or_insert(0) += 1;
                }
            }
        });
        Listener {
            child,
            addr,
            causes,
        }
    }

    /// The peak resident size so far, in KiB.
    fn peak_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A client socket from `source` (127.0.0.x: each address has its own share of the limits),
/// with a small receive buffer when `rcvbuf` is set, so unread ACKs pile up at the listener.
async fn connect(to: SocketAddr, source: u8, rcvbuf: Option<usize>) -> TcpStream {
    let socket = Socket::new(Domain::IPV4, Type::STREAM, None).unwrap();
    if let Some(size) = rcvbuf {
        socket.set_recv_buffer_size(size).unwrap();
    }
    let from: SocketAddr = format!("127.0.0.{source}:0").parse().unwrap();
    socket.bind(&from.into()).unwrap();
    socket.set_nonblocking(true).unwrap();
    let socket = tokio::net::TcpSocket::from_std_stream(socket.into());
    socket.connect(to).await.expect("connect to the listener")
}

fn frame(payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(payload.len() + 3);
    out.push(VT);
    out.extend_from_slice(payload);
    out.extend_from_slice(&[FS, CR]);
    out
}

fn message(id: usize, size: usize) -> Vec<u8> {
    let mut m = format!("MSH|^~\\&|A|B|C|D|20240101120000||ADT^A01|BIG{id:05}|P|2.5\rOBX|1|TX|||")
        .into_bytes();
    m.resize(size - 1, b'x');
    m.push(CR);
    m
}

/// Whether the answer to one frame, read from `stream`, is an `AA`.
async fn answered_aa(stream: &mut TcpStream) -> bool {
    let mut reply = Vec::new();
    let mut chunk = [0u8; 1024];
    while !reply.ends_with(&[FS, CR]) {
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return false,
            Ok(n) => reply.extend_from_slice(&chunk[..n]),
        }
    }
    reply.windows(7).any(|w| w == b"\rMSA|AA")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn five_hundred_peers_that_never_read_their_acks_stay_within_the_budget() {
    let _alone = ONE_AT_A_TIME.lock().await;
    let listener = Listener::start(&[]);
    let addr = listener.addr;
    // 4-byte frames without a header: each is answered (rejected), none is kept.
    let burst: Vec<u8> = (0..16 * 1024).flat_map(|_| frame(b"ABCD")).collect();
    let burst = Arc::new(burst);
    let mut clients = Vec::new();
    for i in 0..500 {
        let burst = burst.clone();
        clients.push(tokio::spawn(async move {
            let mut stream = connect(addr, 2 + (i % 4) as u8, Some(4096)).await;
            // Write until the listener stops reading (a write stalls) or 4 MiB went out.
            for _ in 0..36 {
                let write = stream.write_all(&burst);
                match tokio::time::timeout(Duration::from_secs(2), write).await {
                    Ok(Ok(())) => continue,
                    _ => break,
                }
            }
            stream
        }));
    }
    let mut held = Vec::new();
    for client in clients {
        held.push(client.await.unwrap());
    }
    // Every peer is stalled and still connected; a well-behaved client is served beside them.
    let mut good = connect(addr, 1, None).await;
    good.write_all(&frame(&message(0, 200))).await.unwrap();
    let served = tokio::time::timeout(Duration::from_secs(20), answered_aa(&mut good)).await;
    let peak = listener.peak_kib();
    drop(held);
    assert!(
        peak < LIMIT_KIB,
        "peak resident size {peak} KiB with 500 peers not reading (limit {LIMIT_KIB} KiB)"
    );
    let causes = listener.causes.lock().unwrap().clone();
    assert_eq!(
        served.ok(),
        Some(true),
        "the good client was not answered AA; {causes:?}"
    );
    eprintln!("500 non-reading peers: peak resident size {peak} KiB");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_large_frames_waiting_for_a_slow_command_stay_within_the_budget() {
    let _alone = ONE_AT_A_TIME.lock().await;
    let listener = Listener::start(&[
        "--exec",
        "sleep 0.3; cat >/dev/null",
        "--exec-concurrency",
        "16",
    ]);
    let addr = listener.addr;
    let size = 8 * 1024 * 1024;
    let mut clients = Vec::new();
    for id in 0..100 {
        clients.push(tokio::spawn(async move {
            let wire = frame(&message(id, size));
            // A sender's retry: a connection closed before the answer is tried again after a
            // growing pause, as a real sender backs off; retrying at once only races the
            // queue that closed it, and on a loaded machine can spend every attempt there.
            for attempt in 0..8u64 {
                if attempt > 0 {
                    tokio::time::sleep(Duration::from_millis(100 * attempt)).await;
                }
                let mut stream = connect(addr, 2 + (id % 4) as u8, None).await;
                if stream.write_all(&wire).await.is_err() {
                    continue;
                }
                let answer =
                    tokio::time::timeout(Duration::from_secs(60), answered_aa(&mut stream));
                if answer.await == Ok(true) {
                    return true;
                }
            }
            false
        }));
    }
    let mut accepted = 0;
    for client in clients {
        accepted += usize::from(client.await.unwrap());
    }
    let peak = listener.peak_kib();
    assert!(
        peak < LIMIT_KIB,
        "peak resident size {peak} KiB with 100 frames of 8 MiB waiting (limit {LIMIT_KIB} KiB)"
    );
    let causes = listener.causes.lock().unwrap().clone();
    assert_eq!(
        accepted, 100,
        "every frame ends answered AA; closes: {causes:?}"
    );
    eprintln!("100 frames of 8 MiB on a slow command: peak resident size {peak} KiB; {causes:?}");
}
