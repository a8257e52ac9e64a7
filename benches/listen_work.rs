//! A fixed, repeatable workload for the server's per-message path, made to be counted under
//! callgrind rather than timed: one connection over an in-memory pipe on a single-threaded
//! runtime, `MESSAGES` frames (default 20,000) pipelined 32 at a time, committed by the discard
//! sink, every ACK read back and every event drained. Prints what it served.
//!
//! `cargo bench --bench listen_work --no-run`, then
//! `valgrind --tool=callgrind target/release/deps/listen_work-<hash>` and divide the total
//! instruction count by the messages (a run with `MESSAGES=0` gives the fixed cost).

use mllp::server::{DiscardSink, Server, ServerConfig, ServerEvent, Shutdown};
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const MESSAGE: &[u8] = b"MSH|^~\\&|LOAD|FAC|RCV|FAC|20240101120000||ADT^A01|LOAD000001|P|2.5\rEVN|A01|20240101120000\rPID|1||123456^^^HOSP^MR||DOE^JANE||19800101|F\rPV1|1|I|W^1^1\r";
const WINDOW: usize = 32;

fn main() {
    if std::env::args().any(|a| a == "--list") {
        println!("listen_work: bench");
        return;
    }
    let messages: usize = std::env::var("MESSAGES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (acks, events) = rt.block_on(run(messages));
    println!("listen_work: {messages} messages, {acks} ACKs, {events} events");
}

async fn run(messages: usize) -> (usize, usize) {
    let (tx, mut rx) = tokio::sync::mpsc::channel::<ServerEvent>(4096);
    let server = Server::builder(ServerConfig::default(), Arc::new(DiscardSink))
        .events(tx)
        .build()
        .unwrap();
    let drain = tokio::spawn(async move {
        let mut n = 0;
        while rx.recv().await.is_some() {
            n += 1;
        }
        n
    });
    let (client, peer) = tokio::io::duplex(64 * 1024);
    let shutdown = Shutdown::new();
    let serving = tokio::spawn(async move {
        server.serve(peer, "bench", &shutdown).await;
    });
    let (mut rd, mut wr) = tokio::io::split(client);
    let mut frame = vec![0x0b];
    frame.extend_from_slice(MESSAGE);
    frame.extend_from_slice(b"\x1c\r");
    let mut batch = Vec::new();
    let mut sent = 0;
    let mut acked = 0;
    let mut buf = vec![0u8; 64 * 1024];
    while acked < messages {
        while sent < messages && sent - acked < WINDOW {
            batch.extend_from_slice(&frame);
            sent += 1;
        }
        if !batch.is_empty() {
            wr.write_all(&batch).await.unwrap();
            batch.clear();
        }
        let n = rd.read(&mut buf).await.unwrap();
        assert!(n > 0, "the server closed early");
        acked += memchr::memchr_iter(0x1c, &buf[..n]).count();
    }
    wr.shutdown().await.unwrap();
    drop(wr);
    drop(rd);
    serving.await.unwrap();
    (acked, drain.await.unwrap())
}
