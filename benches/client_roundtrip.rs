//! Pipelined send/ACK round trips per second through the client core, beside a raw tokio TCP
//! ping-pong of the same frame sizes and window, against the same in-process ACKing server.

use bytes::{BufMut, Bytes, BytesMut};
use mllp::client::{Client, ClientOptions, OnBackpressure, Population, Window};
use mllp::transport::TcpConnector;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, Semaphore};

const WINDOW: usize = 64;

fn message(i: usize, size: usize) -> Bytes {
    let head = format!("MSH|^~\\&|A|B|C|D|20240101000000||ADT^A01|{i:010}|P|2.5\rPID|1||");
    let mut s = head.into_bytes();
    s.resize(size.max(s.len() + 1), b'X');
    s.push(b'\r');
    Bytes::from(s)
}

/// MSH-10 of a payload (the tenth `|`-separated field, counting MSH-1 as the separator).
fn control_id(payload: &[u8]) -> &[u8] {
    let segment = payload.split(|b| *b == b'\r').next().unwrap_or_default();
    segment.split(|b| *b == b'|').nth(9).unwrap_or_default()
}

/// Reads frames and answers each with an AA whose MSA-2 is the frame's MSH-10, coalescing the
/// ACKs of one read into one write.
async fn serve(listener: TcpListener) {
    loop {
        let Ok((mut stream, _)) = listener.accept().await else {
            return;
        };
        stream.set_nodelay(true).unwrap();
        tokio::spawn(async move {
            let mut buf = BytesMut::with_capacity(1 << 16);
            let mut out = BytesMut::with_capacity(1 << 16);
            loop {
                match stream.read_buf(&mut buf).await {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {}
                }
                while let Some(end) = memchr::memchr(0x1C, &buf) {
                    let frame = buf.split_to(end + 2);
                    let payload = &frame[1..end];
                    out.put_slice(
                        b"\x0bMSH|^~\\&|C|D|A|B|20240101000000||ACK^A01|1|P|2.5\rMSA|AA|",
                    );
                    out.put_slice(control_id(payload));
                    out.put_slice(b"\r\x1c\r");
                }
                if !out.is_empty() && stream.write_all(&out.split()).await.is_err() {
                    return;
                }
            }
        });
    }
}

/// The baseline: the same frames, the same window, no correlation, no fates.
async fn raw(addr: std::net::SocketAddr, frames: &[Bytes]) -> Duration {
    let stream = TcpStream::connect(addr).await.unwrap();
    stream.set_nodelay(true).unwrap();
    let (mut rd, mut wr) = stream.into_split();
    let window = Arc::new(Semaphore::new(WINDOW));
    let n = frames.len();
    let start = Instant::now();
    let reader = {
        let window = window.clone();
        tokio::spawn(async move {
            let mut buf = vec![0u8; 1 << 16];
            let mut seen = 0;
            while seen < n {
                let k = rd.read(&mut buf).await.unwrap();
                let acks = memchr::memchr_iter(0x1C, &buf[..k]).count();
                seen += acks;
                window.add_permits(acks);
            }
        })
    };
    let mut batch = BytesMut::with_capacity(1 << 16);
    let mut i = 0;
    while i < n {
        window.acquire().await.unwrap().forget();
        let mut take = 1;
        while let Ok(p) = window.try_acquire() {
            p.forget();
            take += 1;
        }
        for f in &frames[i..(i + take).min(n)] {
            batch.put_u8(0x0B);
            batch.put_slice(f);
            batch.put_slice(&[0x1C, 0x0D]);
        }
        i += take;
        wr.write_all(&batch.split()).await.unwrap();
    }
    reader.await.unwrap();
    start.elapsed()
}

/// A client to `addr` that waits for room in a window of `WINDOW` sends.
fn windowed_client(addr: std::net::SocketAddr) -> Client {
    let options = ClientOptions {
        window: Window {
            count: Some(WINDOW),
            bytes: None,
        },
        on_backpressure: OnBackpressure::Wait,
        ..Default::default()
    };
    let connector = TcpConnector::new(addr.ip().to_string(), addr.port());
    Client::new(Arc::new(connector), options).unwrap()
}

async fn through_client(addr: std::net::SocketAddr, frames: &[Bytes]) -> Duration {
    let client = windowed_client(addr);
    let (tx, mut rx) = mpsc::channel(WINDOW * 2);
    let start = Instant::now();
    let checker = tokio::spawn(async move {
        let mut accepted = 0usize;
        while let Some(h) = rx.recv().await {
            let fate: mllp::client::Fate = h.await;
            accepted += usize::from(fate.population() == Population::Accepted);
        }
        accepted
    });
    for f in frames {
        tx.send(client.send(f.clone()).await).await.unwrap();
    }
    drop(tx);
    let accepted = checker.await.unwrap();
    let elapsed = start.elapsed();
    assert_eq!(accepted, frames.len());
    client.close().await;
    elapsed
}

/// As `through_client`, handing the frames over a window at a time with `send_many`.
async fn through_client_many(addr: std::net::SocketAddr, frames: &[Bytes]) -> Duration {
    let client = windowed_client(addr);
    let (tx, mut rx) = mpsc::channel::<Vec<mllp::client::SendHandle>>(4);
    let start = Instant::now();
    let checker = tokio::spawn(async move {
        let mut accepted = 0usize;
        while let Some(handles) = rx.recv().await {
            for h in handles {
                accepted += usize::from(h.await.population() == Population::Accepted);
            }
        }
        accepted
    });
    for chunk in frames.chunks(WINDOW) {
        tx.send(client.send_many(chunk.iter().cloned()).await)
            .await
            .unwrap();
    }
    drop(tx);
    let accepted = checker.await.unwrap();
    let elapsed = start.elapsed();
    assert_eq!(accepted, frames.len());
    client.close().await;
    elapsed
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(serve(listener));
        let n: usize = std::env::var("MLLP_BENCH_MESSAGES").ok().and_then(|v| v.parse().ok()).unwrap_or(200_000);
        let only = std::env::var("MLLP_BENCH_ONLY").ok();
        let reps: usize = std::env::var("MLLP_BENCH_REPS").ok().and_then(|v| v.parse().ok()).unwrap_or(5);
        for size in [256usize, 2048] {
            let frames: Vec<Bytes> = (0..n).map(|i| message(i, size)).collect();
            if only.as_deref() == Some("client") {
                // Profiling the client path alone.
                through_client(addr, &frames).await;
                continue;
            }
            if only.as_deref() == Some("raw") {
                raw(addr, &frames).await;
                continue;
            }
            if only.as_deref() == Some("many") {
                through_client_many(addr, &frames).await;
                continue;
            }
            // Warm up both paths once.
            raw(addr, &frames[..n / 10]).await;
            through_client(addr, &frames[..n / 10]).await;
            // The machine is shared: interleave the three paths and keep each one's best run.
            let (mut raw_t, mut client_t, mut many_t) = (Duration::MAX, Duration::MAX, Duration::MAX);
            for _ in 0..reps {
                raw_t = raw_t.min(raw(addr, &frames).await);
                client_t = client_t.min(through_client(addr, &frames).await);
                many_t = many_t.min(through_client_many(addr, &frames).await);
            }
            let rate = |d: Duration| n as f64 / d.as_secs_f64();
            let ratio = |d: Duration| raw_t.as_secs_f64() / d.as_secs_f64();
            println!(
                "size {size:>5} B, window {WINDOW}, best of {reps}: raw {:>9.0} msg/s, client send {:>9.0} msg/s (ratio {:.2}), send_many {:>9.0} msg/s (ratio {:.2})",
                rate(raw_t),
                rate(client_t),
                ratio(client_t),
                rate(many_t),
                ratio(many_t),
            );
        }
    });
}
