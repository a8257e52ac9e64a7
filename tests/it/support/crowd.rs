//! A hostile crowd for load tests: many connections from one source address, each of one kind
//! (slow drip, half frame, garbage, idle, a TLS handshake that never finishes), each coming back
//! whenever the listener closes it, until stopped.

use super::mllp_client::tcp_from;
use super::peer_wire::VT;
use mllp::tls::TlsClient;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

/// Before coming back after a close, so refused connections do not spin.
const COME_BACK: Duration = Duration::from_millis(250);
/// Payload bytes a half frame sends before it stops.
const HALF_FRAME: usize = 256 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A VT, then a byte every 100 ms.
    Drip,
    /// A VT and 256 KiB of payload, then nothing.
    HalfFrame,
    /// Bytes that are neither MLLP nor TLS.
    Garbage,
    /// Connected, silent.
    Idle,
    /// The first part of a TLS ClientHello, then nothing.
    TlsStall,
}

pub const KINDS: [Kind; 5] = [
    Kind::Drip,
    Kind::HalfFrame,
    Kind::Garbage,
    Kind::Idle,
    Kind::TlsStall,
];

#[derive(Debug, Default)]
pub struct Tally {
    pub connects: AtomicU64,
    pub connect_failures: AtomicU64,
    pub closed_by_listener: AtomicU64,
}

pub struct Crowd {
    stop: CancellationToken,
    tasks: Vec<tokio::task::JoinHandle<()>>,
    pub tally: Arc<Tally>,
}

impl Crowd {
    /// `per_kind` connections of every kind from `source` to `addr`; drips and half frames go
    /// through a finished TLS handshake when `tls` is given.
    pub fn start(
        addr: SocketAddr,
        source: IpAddr,
        per_kind: usize,
        tls: Option<Arc<TlsClient>>,
    ) -> Crowd {
        let stop = CancellationToken::new();
        let tally = Arc::new(Tally::default());
        let mut tasks = Vec::new();
        for i in 0..per_kind {
            for kind in KINDS {
                let (stop, tally, tls) = (stop.clone(), Arc::clone(&tally), tls.clone());
                tasks.push(tokio::spawn(async move {
                    // Spread the first connects a little.
                    tokio::time::sleep(Duration::from_millis((i % 50) as u64 * 5)).await;
                    member(kind, addr, source, tls, &stop, &tally).await
                }));
            }
        }
        Crowd { stop, tasks, tally }
    }

    pub async fn stop(self) {
        self.stop.cancel();
        for task in self.tasks {
            let _ = task.await;
        }
    }
}

async fn member(
    kind: Kind,
    addr: SocketAddr,
    source: IpAddr,
    tls: Option<Arc<TlsClient>>,
    stop: &CancellationToken,
    tally: &Tally,
) {
    while !stop.is_cancelled() {
        let tcp = tokio::select! {
            _ = stop.cancelled() => return,
            tcp = tokio::time::timeout(Duration::from_secs(5), tcp_from(source, addr)) => tcp,
        };
        let Ok(Ok(tcp)) = tcp else {
            tally.connect_failures.fetch_add(1, Ordering::Relaxed);
            tokio::time::sleep(COME_BACK).await;
            continue;
        };
        tally.connects.fetch_add(1, Ordering::Relaxed);
        let behave = async {
            match (&tls, kind) {
                (Some(tls), Kind::Drip | Kind::HalfFrame) => {
                    let connector = tokio_rustls::TlsConnector::from(Arc::clone(&tls.config));
                    let handshake = connector.connect(tls.server_name.clone(), tcp);
                    if let Ok(Ok(stream)) =
                        tokio::time::timeout(Duration::from_secs(10), handshake).await
                    {
                        misbehave(kind, stream).await
                    }
                }
                _ => misbehave(kind, tcp).await,
            }
        };
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = behave => {}
        }
        tally.closed_by_listener.fetch_add(1, Ordering::Relaxed);
        tokio::time::sleep(COME_BACK).await;
    }
}

/// Do `kind`'s harm on `stream` until the listener closes it.
async fn misbehave<S: AsyncRead + AsyncWrite + Unpin>(kind: Kind, stream: S) {
    let (mut reader, mut writer) = tokio::io::split(stream);
    let closed = async move {
        let mut sink = [0u8; 4096];
        while let Ok(n) = reader.read(&mut sink).await {
            if n == 0 {
                break;
            }
        }
    };
    let harm = async move {
        match kind {
            Kind::Drip => {
                let _ = writer.write_all(&[&[VT][..], b"MSH|"].concat()).await;
                loop {
                    if writer.write_all(b"x").await.is_err() || writer.flush().await.is_err() {
                        break;
                    }
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
            Kind::HalfFrame => {
                let mut half = vec![b'x'; HALF_FRAME];
                half[0] = VT;
                let _ = writer.write_all(&half).await;
                let _ = writer.flush().await;
                std::future::pending::<()>().await;
            }
            Kind::Garbage => loop {
                let garbage = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n\xff\x00\xfe garbage";
                if writer.write_all(garbage).await.is_err() {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            },
            Kind::Idle => std::future::pending::<()>().await,
            Kind::TlsStall => {
                // A handshake record announcing 512 bytes, of which 11 ever come.
                let hello = [
                    0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03,
                ];
                let _ = writer.write_all(&hello).await;
                std::future::pending::<()>().await;
            }
        }
    };
    tokio::select! {
        _ = closed => {}
        _ = harm => {}
    }
}
