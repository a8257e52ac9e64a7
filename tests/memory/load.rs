//! The load: MLLP frames of a given size, client sockets from 127.0.0.x (each address has its
//! own share of the limits), and a flood of connections that each push their messages as fast
//! as the other side takes them while reading whatever answers come.

use socket2::{Domain, Socket, Type};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::OwnedWriteHalf;
use tokio::net::TcpStream;

const VT: u8 = 0x0b;
const FS: u8 = 0x1c;
const CR: u8 = 0x0d;

/// A client socket from `source` (127.0.0.x), with a small receive buffer when `rcvbuf` is set,
/// so unread ACKs pile up at the other side.
pub async fn connect(to: SocketAddr, source: u8, rcvbuf: Option<usize>) -> TcpStream {
    let socket = Socket::new(Domain::IPV4, Type::STREAM, None).unwrap();
    if let Some(size) = rcvbuf {
        socket.set_recv_buffer_size(size).unwrap();
    }
    let from: SocketAddr = format!("127.0.0.{source}:0").parse().unwrap();
    socket.bind(&from.into()).unwrap();
    socket.set_nonblocking(true).unwrap();
    let socket = tokio::net::TcpSocket::from_std_stream(socket.into());
    socket.connect(to).await.expect("connect")
}

pub fn frame(payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(payload.len() + 3);
    out.push(VT);
    out.extend_from_slice(payload);
    out.extend_from_slice(&[FS, CR]);
    out
}

/// An HL7 message of `size` bytes whose MSH-10 is `BIG<id>`.
pub fn message(id: usize, size: usize) -> Vec<u8> {
    let mut m = format!("MSH|^~\\&|A|B|C|D|20240101120000||ADT^A01|BIG{id:05}|P|2.5\rOBX|1|TX|||")
        .into_bytes();
    m.resize(size - 1, b'x');
    m.push(CR);
    m
}

/// Whether the answer to one frame, read from `stream`, is an `AA`.
pub async fn answered_aa(stream: &mut TcpStream) -> bool {
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

/// How hard to push.
#[derive(Debug, Clone, Copy)]
pub struct Load {
    pub connections: usize,
    pub messages: usize,
    pub size: usize,
    /// How long the flood lasts; then every connection is still open, for the reading.
    pub seconds: u64,
}

impl Load {
    /// The load every sink and both relay modes are held to: 1,000 connections each sending
    /// 32 messages of 64 KiB.
    pub const CROWD: Load = Load {
        connections: 1000,
        messages: 32,
        size: 64 * 1024,
        seconds: 20,
    };
}

/// What a flood did, and its connections, still open.
pub struct Flooded {
    /// Bytes the other side took from the sockets (or the kernel buffered for it).
    pub sent: u64,
    /// Answers read back.
    pub answers: u64,
    /// Held, never read: dropping them closes the connections.
    pub _open: Vec<OwnedWriteHalf>,
}

/// Push `load` at `to`: each connection writes its messages as fast as they are taken and reads
/// its answers; after `load.seconds` every connection is handed back open.
pub async fn flood(to: SocketAddr, load: Load) -> Flooded {
    let wire: Vec<u8> = (0..load.messages)
        .flat_map(|i| frame(&message(i, load.size)))
        .collect();
    let wire = Arc::new(wire);
    let sent = Arc::new(AtomicU64::new(0));
    let answers = Arc::new(AtomicU64::new(0));
    let until = tokio::time::Instant::now() + Duration::from_secs(load.seconds);
    let mut tasks = Vec::new();
    for i in 0..load.connections {
        let (wire, sent, answers) = (wire.clone(), sent.clone(), answers.clone());
        tasks.push(tokio::spawn(async move {
            let stream = connect(to, 2 + (i % 4) as u8, None).await;
            let (mut from, mut into) = stream.into_split();
            let reading = tokio::spawn(async move {
                let mut chunk = vec![0u8; 4096];
                while let Ok(n @ 1..) = from.read(&mut chunk).await {
                    let ends = chunk[..n].iter().filter(|&&b| b == FS).count();
                    answers.fetch_add(ends as u64, Ordering::Relaxed);
                }
            });
            let writing = async {
                let mut at = 0;
                while at < wire.len() {
                    let end = (at + 64 * 1024).min(wire.len());
                    match into.write(&wire[at..end]).await {
                        Ok(0) | Err(_) => break,
                        Ok(n) => {
                            at += n;
                            sent.fetch_add(n as u64, Ordering::Relaxed);
                        }
                    }
                }
                std::future::pending::<()>().await
            };
            let _ = tokio::time::timeout_at(until, writing).await;
            // The write half keeps the connection open; nothing is read any more.
            reading.abort();
            into
        }));
    }
    let mut streams = Vec::new();
    for task in tasks {
        streams.push(task.await.expect("a connection's task"));
    }
    Flooded {
        sent: sent.load(Ordering::Relaxed),
        answers: answers.load(Ordering::Relaxed),
        _open: streams,
    }
}
