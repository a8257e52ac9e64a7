//! End-to-end `mllp send` benchmark: 100,000 ADT messages from files to `mllp listen` (stdout to
//! /dev/null) on loopback, pipelined (window 64) and one at a time, beside a raw tokio TCP
//! ping-pong of the same sizes measured in the same run. Prints figures and ratios, and the peak
//! RSS (VmHWM) of the send process.
//!
//! `cargo bench --bench send_e2e` (MESSAGES=N to change the count).

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const FILES: usize = 100;

fn adt(i: usize) -> Vec<u8> {
    format!(
        "MSH|^~\\&|SENDER|FAC|RECEIVER|FAC|20240101120000||ADT^A01^ADT_A01|MSG{i:08}|P|2.5\r\
         EVN|A01|20240101120000\r\
         PID|1||{i:08}^^^HOSP^MR||DOE^JOHN^Q||19700101|M|||1 MAIN ST^^TOWN^ST^12345||555-0100\r\
         PV1|1|I|WARD^101^A||||1234^SMITH^ANNE|||MED||||||||V{i:08}\r"
    )
    .into_bytes()
}

const ACK: &[u8] =
    b"\x0bMSH|^~\\&|RECEIVER|FAC|SENDER|FAC|20240101120000||ACK^A01|A0000001|P|2.5\rMSA|AA|MSG00000001\r\x1c\r";

fn main() {
    let messages: usize = std::env::var("MESSAGES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
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
    let size = adt(1).len();
    println!("send_e2e: {messages} ADT messages of ~{size} bytes in {FILES} files, loopback");

    let raw_pipelined = raw_ping_pong(messages, size, 64);
    let raw_sequential = raw_ping_pong(messages, size, 1);
    let (pipelined, rss_p) = send_run(dir.path(), messages, &["--window", "64"]);
    let (sequential, rss_s) = send_run(dir.path(), messages, &["--no-pipeline"]);

    println!("raw ping-pong pipelined (64)  {raw_pipelined:>10.0} msg/s");
    println!("raw ping-pong sequential      {raw_sequential:>10.0} msg/s");
    println!(
        "mllp send pipelined (64)      {pipelined:>10.0} msg/s  {:.2}x raw  peak RSS {:.1} MB",
        pipelined / raw_pipelined,
        rss_p as f64 / 1024.0
    );
    println!(
        "mllp send --no-pipeline       {sequential:>10.0} msg/s  {:.2}x raw  peak RSS {:.1} MB",
        sequential / raw_sequential,
        rss_s as f64 / 1024.0
    );
    println!(
        "targets: pipelined >= 0.5x raw and > 100000 msg/s: {}; sequential >= 0.9x raw: {}; RSS < 20 MB: {}",
        verdict(pipelined >= 0.5 * raw_pipelined && pipelined > 100_000.0),
        verdict(sequential >= 0.9 * raw_sequential),
        verdict(rss_p.max(rss_s) < 20 * 1024)
    );
}

fn verdict(ok: bool) -> &'static str {
    if ok {
        "met"
    } else {
        "MISSED"
    }
}

/// One `mllp send` run against a fresh `mllp listen`: messages per second and VmHWM in KiB.
fn send_run(dir: &std::path::Path, messages: usize, extra: &[&str]) -> (f64, u64) {
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
    let addr: std::net::SocketAddr = event["addr"].as_str().unwrap().parse().unwrap();
    // Keep draining listen's stderr so it never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});

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

/// Raw tokio TCP: frames of `size` bytes out, a fixed ACK frame back for each, at most `window`
/// outstanding. Messages per second.
fn raw_ping_pong(messages: usize, size: usize, window: usize) -> f64 {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let (mut tcp, _) = listener.accept().await.unwrap();
            tcp.set_nodelay(true).unwrap();
            let mut buf = vec![0u8; 64 * 1024];
            let mut out = Vec::with_capacity(64 * 1024);
            loop {
                let n = match tcp.read(&mut buf).await {
                    Ok(0) | Err(_) => return,
                    Ok(n) => n,
                };
                for _ in memchr::memchr_iter(0x1c, &buf[..n]) {
                    out.extend_from_slice(ACK);
                }
                if !out.is_empty() {
                    tcp.write_all(&out).await.unwrap();
                    out.clear();
                }
            }
        });
        let mut frame = vec![0x0b];
        frame.resize(size + 1, b'X');
        frame.extend_from_slice(&[0x1c, 0x0d]);
        let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
        tcp.set_nodelay(true).unwrap();
        let (mut rd, mut wr) = tcp.into_split();
        let started = Instant::now();
        let (credit_tx, mut credit_rx) = tokio::sync::mpsc::unbounded_channel::<usize>();
        let reader = tokio::spawn(async move {
            let mut buf = vec![0u8; 64 * 1024];
            let mut acked = 0;
            while acked < messages {
                let n = rd.read(&mut buf).await.unwrap();
                let k = memchr::memchr_iter(0x1c, &buf[..n]).count();
                acked += k;
                if k > 0 {
                    let _ = credit_tx.send(k);
                }
            }
        });
        let mut sent = 0;
        let mut outstanding = 0;
        let mut batch = Vec::with_capacity(window * frame.len());
        while sent < messages {
            while outstanding < window && sent < messages {
                batch.extend_from_slice(&frame);
                outstanding += 1;
                sent += 1;
            }
            wr.write_all(&batch).await.unwrap();
            batch.clear();
            outstanding -= credit_rx.recv().await.unwrap();
            while let Ok(k) = credit_rx.try_recv() {
                outstanding -= k;
            }
        }
        reader.await.unwrap();
        messages as f64 / started.elapsed().as_secs_f64()
    })
}
