//! The chaos proxy: a TCP forwarder on 127.0.0.1 with a free port, placed in front of a real
//! peer. It sees bytes, not messages: it counts frames by their end byte (FS) from the sender,
//! and per frame may reset both sockets, stall (stop forwarding the sender's bytes), delay the
//! peer's next answer, or drop the link (cut everything and refuse connections for a while). It
//! cannot forge a NAK: that needs the embedded listener.

use super::chaos::{ChaosSpec, Fault, FaultKind};
use crate::resolve::Resolver;
use rand::rngs::SmallRng;
use rand::SeedableRng;
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

const CHUNK: usize = 64 * 1024;
const UPSTREAM_CONNECT: Duration = Duration::from_secs(10);

struct ProxyShared {
    host: String,
    port: u16,
    resolver: Arc<dyn Resolver>,
    spec: ChaosSpec,
    rng: Mutex<SmallRng>,
    drops: mpsc::Sender<Duration>,
    /// Milliseconds the peer's next answer on each connection is held; shared per connection.
    injected: AtomicU64,
}

/// A running proxy. Dropping it (or [`ChaosProxy::stop`]) ends it.
pub(crate) struct ChaosProxy {
    addr: SocketAddr,
    stop: CancellationToken,
}

impl ChaosProxy {
    /// Listen on 127.0.0.1 (a free port) and forward to `host:port`. A `nack` fault is ignored:
    /// a byte proxy cannot answer for the peer (callers refuse it up front).
    pub(crate) async fn start(
        host: String,
        port: u16,
        resolver: Arc<dyn Resolver>,
        spec: ChaosSpec,
        seed: u64,
    ) -> io::Result<ChaosProxy> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let (drops, drops_rx) = mpsc::channel(1);
        let shared = Arc::new(ProxyShared {
            host,
            port,
            resolver,
            spec,
            rng: Mutex::new(SmallRng::seed_from_u64(seed)),
            drops,
            injected: AtomicU64::new(0),
        });
        let stop = CancellationToken::new();
        tokio::spawn(accept_loop(listener, addr, shared, drops_rx, stop.clone()));
        Ok(ChaosProxy { addr, stop })
    }

    pub(crate) fn addr(&self) -> SocketAddr {
        self.addr
    }

    pub(crate) fn stop(self) {
        self.stop.cancel();
    }
}

impl Drop for ChaosProxy {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

async fn accept_loop(
    mut listener: TcpListener,
    addr: SocketAddr,
    shared: Arc<ProxyShared>,
    mut drops: mpsc::Receiver<Duration>,
    stop: CancellationToken,
) {
    loop {
        let epoch = stop.child_token();
        let down_for = loop {
            let accepted = tokio::select! {
                _ = stop.cancelled() => return,
                Some(d) = drops.recv() => break d,
                accepted = listener.accept() => accepted,
            };
            let Ok((client, _)) = accepted else {
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            };
            tokio::spawn(serve(client, shared.clone(), epoch.child_token()));
        };
        epoch.cancel();
        drop(listener);
        listener = match reopen_after(down_for, addr, &mut drops, &stop).await {
            Some(listener) => listener,
            None => return,
        };
    }
}

async fn connect_upstream(shared: &ProxyShared) -> Option<TcpStream> {
    let addrs = shared
        .resolver
        .resolve(&shared.host, shared.port)
        .await
        .ok()?;
    for addr in addrs {
        if let Ok(Ok(stream)) =
            tokio::time::timeout(UPSTREAM_CONNECT, TcpStream::connect(addr)).await
        {
            return Some(stream);
        }
    }
    None
}

/// One proxied connection. Both sockets close with a reset when the connection is cut.
async fn serve(client: TcpStream, shared: Arc<ProxyShared>, cut: CancellationToken) {
    let Some(upstream) = connect_upstream(&shared).await else {
        // The peer is unreachable: the sender sees its connection cut and retries.
        let _ = socket2::SockRef::from(&client).set_linger(Some(Duration::ZERO));
        return;
    };
    for s in [&client, &upstream] {
        let _ = s.set_nodelay(true);
        let _ = socket2::SockRef::from(s).set_linger(Some(Duration::ZERO));
    }
    let (client_rx, client_tx) = client.into_split();
    let (upstream_rx, upstream_tx) = upstream.into_split();
    // Delays of the peer's answers, decided on the sender's side, applied on the way back.
    let (delay_tx, delay_rx) = mpsc::channel::<Duration>(64);
    let forward = forward_requests(client_rx, upstream_tx, &shared, &cut, delay_tx);
    let back = forward_answers(upstream_rx, client_tx, delay_rx);
    tokio::select! {
        _ = cut.cancelled() => {}
        _ = async { tokio::join!(forward, back) } => {}
    }
}

async fn forward_requests(
    mut from: OwnedReadHalf,
    mut to: OwnedWriteHalf,
    shared: &ProxyShared,
    cut: &CancellationToken,
    delays: mpsc::Sender<Duration>,
) {
    let mut buf = vec![0u8; CHUNK];
    loop {
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        if to.write_all(&buf[..n]).await.is_err() {
            break;
        }
        let frames = memchr::memchr_iter(0x1C, &buf[..n]).count();
        for _ in 0..frames {
            let faults: Vec<Fault> = {
                let mut rng = shared.rng.lock().unwrap_or_else(|p| p.into_inner());
                shared.spec.roll(&mut *rng)
            };
            for fault in faults {
                shared.injected.fetch_add(1, Ordering::Relaxed);
                let duration = fault.duration.unwrap_or_default();
                match fault.kind {
                    FaultKind::Drop => {
                        let _ = shared.drops.try_send(duration);
                    }
                    FaultKind::Reset => {
                        cut.cancel();
                        return;
                    }
                    FaultKind::Stall => tokio::select! {
                        _ = tokio::time::sleep(duration) => {}
                        _ = cut.cancelled() => return,
                    },
                    FaultKind::Delay => {
                        let _ = delays.try_send(duration);
                    }
                    FaultKind::Nack => {}
                }
            }
        }
    }
    let _ = to.shutdown().await;
}

async fn forward_answers(
    mut from: OwnedReadHalf,
    mut to: OwnedWriteHalf,
    mut delays: mpsc::Receiver<Duration>,
) {
    let mut buf = vec![0u8; CHUNK];
    loop {
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        while let Ok(delay) = delays.try_recv() {
            tokio::time::sleep(delay).await;
        }
        if to.write_all(&buf[..n]).await.is_err() {
            break;
        }
    }
    let _ = to.shutdown().await;
}

/// After a drop: keep the port closed for `down_for` (connects are refused), fold the drops
/// that struck meanwhile into this one, then listen on `addr` again. `None` once `stop` fires.
pub(super) async fn reopen_after(
    down_for: Duration,
    addr: SocketAddr,
    drops: &mut mpsc::Receiver<Duration>,
    stop: &CancellationToken,
) -> Option<TcpListener> {
    tokio::select! {
        _ = tokio::time::sleep(down_for) => {}
        _ = stop.cancelled() => return None,
    }
    while drops.try_recv().is_ok() {}
    loop {
        match TcpListener::bind(addr).await {
            Ok(l) => return Some(l),
            Err(_) => tokio::select! {
                _ = tokio::time::sleep(Duration::from_millis(50)) => {}
                _ = stop.cancelled() => return None,
            },
        }
    }
}
