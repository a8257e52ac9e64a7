//! The raw baseline the end-to-end benchmarks measure against: an in-process peer answering each
//! frame with an AA naming its MSH-10, and a raw tokio client pipelining frames to a peer (the
//! floor, in `benches/floor`, is the blocking, one-process-each counterpart).

use crate::floor::wire::{control_id, msa};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Answers each frame with `ack_head` (VT through `MSA|AA|`) and its MSH-10, the ACKs of one
/// read in one write.
pub async fn echo_peer(mut tcp: tokio::net::TcpStream, ack_head: &'static [u8]) {
    tcp.set_nodelay(true).unwrap();
    let mut buf = Vec::with_capacity(1 << 16);
    let mut out = Vec::with_capacity(1 << 16);
    loop {
        match tcp.read_buf(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let mut start = 0;
        while let Some(end) = memchr::memchr(0x1c, &buf[start..]) {
            out.extend_from_slice(ack_head);
            out.extend_from_slice(control_id(&buf[start + 1..start + end]));
            out.extend_from_slice(b"\r\x1c\r");
            start += end + 2;
        }
        buf.drain(..start.min(buf.len()));
        if !out.is_empty() {
            if tcp.write_all(&out).await.is_err() {
                return;
            }
            out.clear();
        }
    }
}

/// Sends `frames` over one connection, at most `window` unacknowledged (a semaphore refilled as
/// whole ACK frames arrive, each checked to be the AA naming the next message in order: FIFO, as
/// `send` correlates). Returns the time from connected to the last ACK.
pub async fn pipeline(
    addr: std::net::SocketAddr,
    frames: Arc<Vec<Vec<u8>>>,
    window: usize,
) -> Duration {
    let messages = frames.len();
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    tcp.set_nodelay(true).unwrap();
    let (mut rd, mut wr) = tcp.into_split();
    let credit = Arc::new(tokio::sync::Semaphore::new(window));
    let started = Instant::now();
    let reader = {
        let credit = credit.clone();
        let frames = frames.clone();
        tokio::spawn(async move {
            let mut buf = Vec::with_capacity(1 << 16);
            let mut acked = 0;
            while acked < messages {
                let n = rd.read_buf(&mut buf).await.unwrap();
                assert!(n > 0, "peer closed early");
                // Only whole ACK frames count; a partial frame waits for the next read.
                let mut start = 0;
                let mut k = 0;
                while let Some(end) = memchr::memchr(0x1c, &buf[start..]) {
                    let (code, id) = msa(&buf[start..start + end]);
                    assert_eq!(code, b"AA", "ACK {acked} is not AA");
                    let sent = control_id(&frames[acked + k][1..]);
                    assert_eq!(id, sent, "ACK {acked} names another message");
                    k += 1;
                    start += end + 2;
                }
                buf.drain(..start.min(buf.len()));
                acked += k;
                credit.add_permits(k);
            }
        })
    };
    let mut batch = Vec::with_capacity(1 << 16);
    let mut sent = 0;
    while sent < messages {
        credit.acquire().await.unwrap().forget();
        let mut take = 1;
        while let Ok(p) = credit.try_acquire() {
            p.forget();
            take += 1;
        }
        for f in &frames[sent..(sent + take).min(messages)] {
            batch.extend_from_slice(f);
        }
        sent += take;
        wr.write_all(&batch).await.unwrap();
        batch.clear();
    }
    reader.await.unwrap();
    started.elapsed()
}
