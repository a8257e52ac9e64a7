//! A tiny MLLP client for tests: connect, write frames (or any bytes), read ACK frames. Every wait
//! is bounded so a broken server fails the test instead of hanging it.

use super::peer_wire::{frame, Deframer};
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

const WAIT: Duration = Duration::from_secs(10);

/// One ACK as read off the wire.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AckFrame {
    pub code: String,
    /// MSA-2, bytes exactly as received.
    pub control_id: Vec<u8>,
    pub payload: Vec<u8>,
}

pub struct MllpClient {
    stream: TcpStream,
    /// The server must write canonical frames.
    deframer: Deframer,
}

impl MllpClient {
    pub async fn connect(addr: SocketAddr) -> MllpClient {
        let stream = tokio::time::timeout(WAIT, TcpStream::connect(addr))
            .await
            .expect("connect timed out")
            .expect("connect");
        MllpClient {
            stream,
            deframer: Deframer::canonical(),
        }
    }

    /// Connect from a chosen source address (127.0.0.2, say: a second host on loopback).
    pub async fn connect_from(source: std::net::IpAddr, addr: SocketAddr) -> MllpClient {
        let stream = tokio::time::timeout(WAIT, tcp_from(source, addr))
            .await
            .expect("connect timed out")
            .expect("connect");
        MllpClient {
            stream,
            deframer: Deframer::canonical(),
        }
    }

    /// The local address of the connection.
    pub fn local_addr(&self) -> SocketAddr {
        self.stream.local_addr().unwrap()
    }

    /// Connect, or `None` when nothing takes the connection within the wait.
    pub async fn try_connect(addr: SocketAddr) -> Option<MllpClient> {
        let stream = tokio::time::timeout(WAIT, TcpStream::connect(addr))
            .await
            .ok()?
            .ok()?;
        Some(MllpClient {
            stream,
            deframer: Deframer::canonical(),
        })
    }

    /// Write one canonical frame; `false` when the connection is gone.
    pub async fn try_send(&mut self, payload: &[u8]) -> bool {
        self.stream.write_all(&frame(payload)).await.is_ok()
    }

    /// Write one canonical frame.
    pub async fn send(&mut self, payload: &[u8]) {
        self.send_raw(&frame(payload)).await;
    }

    /// Write any bytes.
    pub async fn send_raw(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).await.expect("write");
    }

    /// The next ACK, or `None` when the server closed (or reset) the connection.
    pub async fn ack(&mut self) -> Option<AckFrame> {
        tokio::time::timeout(WAIT, self.next_ack())
            .await
            .expect("no ACK and no close within the wait")
    }

    /// The next ACK within `wait`: `Ok(None)` when the server closed, `Err(())` past the wait.
    pub async fn ack_within(&mut self, wait: Duration) -> Result<Option<AckFrame>, ()> {
        tokio::time::timeout(wait, self.next_ack())
            .await
            .map_err(|_| ())
    }

    async fn next_ack(&mut self) -> Option<AckFrame> {
        let payload = self.deframer.read_frame(&mut self.stream).await?;
        let view = mllp::hl7::scan_ack(&payload).expect("an ACK with an MSA");
        let code = String::from_utf8_lossy(view.code).into_owned();
        let control_id = view.control_id.to_vec();
        Some(AckFrame {
            code,
            control_id,
            payload,
        })
    }

    /// True when nothing arrives within `wait` and the connection is still open.
    pub async fn silent_for(&mut self, wait: Duration) -> bool {
        tokio::time::timeout(wait, self.next_ack()).await.is_err()
    }
}

/// A TCP connection to `addr` from `source` (port chosen by the system).
pub async fn tcp_from(source: std::net::IpAddr, addr: SocketAddr) -> std::io::Result<TcpStream> {
    let socket = match source {
        std::net::IpAddr::V4(_) => tokio::net::TcpSocket::new_v4()?,
        std::net::IpAddr::V6(_) => tokio::net::TcpSocket::new_v6()?,
    };
    socket.bind(SocketAddr::new(source, 0))?;
    socket.connect(addr).await
}

/// An ADT^A01 with control ID `control_id` and MSH-15 (and 16) `msh15`; the patient's name is
/// the payload marker.
pub fn adt(control_id: &[u8], msh15: &str) -> Vec<u8> {
    let mut m = b"MSH|^~\\&|SND|SF|RCV|RF|20240101120000||ADT^A01|".to_vec();
    m.extend_from_slice(control_id);
    let marker = super::no_payload::MARKER;
    m.extend_from_slice(format!("|P|2.5|||{msh15}\rPID|1||42^^^H||{marker}^JANE\r").as_bytes());
    m
}

/// An ADT^A01 (MSH-15 and MSH-16 in `msh15_16`) with the payload marker in an NTE segment too.
pub fn marked(id: &str, msh15_16: &str) -> Vec<u8> {
    let mut m = adt(id.as_bytes(), msh15_16);
    m.extend_from_slice(format!("NTE|1||{}\r", super::no_payload::MARKER).as_bytes());
    m
}
