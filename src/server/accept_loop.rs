//! The accept loop: each new socket passes the per-address and overall connection caps or is
//! closed at once; a failed accept (out of descriptors and the like) is counted, reported and
//! backed off, and peers waiting in the backlog meanwhile are turned away rather than left
//! hanging.

use super::connection::{self, Admission};
use super::event::ServerEvent;
use super::limits::PeerSlot;
use super::proxy::{Header, ProxyError};
use super::{Accept, Shared, Shutdown};
use crate::cause::Cause;
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::OwnedSemaphorePermit;
use tokio_util::task::TaskTracker;

/// The first wait after a failed accept; it doubles up to [`MAX_BACKOFF`] while accepts keep
/// failing.
const FIRST_BACKOFF: Duration = Duration::from_millis(10);
const MAX_BACKOFF: Duration = Duration::from_secs(1);
/// Waiting peers turned away per failed accept, at most.
const SHED_AT_ONCE: usize = 4096;
/// How long a new peer waits for the place of the connection evicted for it.
const EVICTION_WAIT: Duration = Duration::from_secs(1);

/// Accept until `shutdown.graceful`, spawning each connection on `tracker`.
pub(crate) async fn accept_until_stopped<A: Accept>(
    shared: &Arc<Shared>,
    listener: &TcpListener,
    acceptor: &Arc<A>,
    shutdown: &Shutdown,
    tracker: &TaskTracker,
) {
    let mut failures = Failures::new();
    loop {
        let accepted = tokio::select! {
            biased;
            _ = shutdown.graceful.cancelled() => return,
            accepted = listener.accept() => accepted,
        };
        let (tcp, peer_addr) = match accepted {
            Ok(pair) => pair,
            Err(error) => {
                let backoff = failures.failed(shared, listener, &error).await;
                tokio::select! {
                    _ = shutdown.graceful.cancelled() => return,
                    _ = tokio::time::sleep(backoff) => continue,
                }
            }
        };
        failures.succeeded();
        let id = shared.next_connection.fetch_add(1, Ordering::Relaxed) + 1;
        let Some((permit, peer_slot, tcp)) = admit(shared, tcp, id, peer_addr).await else {
            continue;
        };
        let _ = tcp.set_nodelay(true);
        let (shared, acceptor) = (Arc::clone(shared), Arc::clone(acceptor));
        let shutdown = shutdown.clone();
        tracker.spawn(async move {
            let Some((tcp, peer_addr, peer_slot)) =
                behind_proxy(&shared, tcp, id, peer_addr, peer_slot).await
            else {
                return;
            };
            let admission = Admission {
                slot: Some(permit),
                peer: peer_slot,
            };
            handshake(
                &shared, &*acceptor, tcp, id, peer_addr, &shutdown, admission,
            )
            .await;
        });
    }
}

/// A place under the connection cap and, without a proxy, under the per-address cap; a socket
/// over either is refused here.
async fn admit(
    shared: &Shared,
    tcp: TcpStream,
    id: u64,
    peer_addr: SocketAddr,
) -> Option<(OwnedSemaphorePermit, Option<PeerSlot>, TcpStream)> {
    let permit = match Arc::clone(&shared.slots).try_acquire_owned() {
        Ok(permit) => permit,
        Err(_) => match evict_for(shared).await {
            Some(permit) => permit,
            None => {
                refuse(shared, tcp, id, peer_addr, Cause::MaxConnections).await;
                return None;
            }
        },
    };
    // Behind a proxy the per-address cap waits for the header's address.
    let peer_slot = match shared.config.proxy {
        Some(_) => None,
        None => match shared.limits.admit(peer_addr.ip()) {
            Some(slot) => Some(slot),
            None => {
                refuse(shared, tcp, id, peer_addr, Cause::PerPeerLimit).await;
                return None;
            }
        },
    };
    Some((permit, peer_slot, tcp))
}

/// The peer's address and its per-address place: the socket's own when admitted already, else
/// those of the address the proxy header names. `None` when the connection ends here.
async fn behind_proxy(
    shared: &Shared,
    mut tcp: TcpStream,
    id: u64,
    peer_addr: SocketAddr,
    peer_slot: Option<PeerSlot>,
) -> Option<(TcpStream, SocketAddr, PeerSlot)> {
    match (&shared.config.proxy, peer_slot) {
        (_, Some(slot)) => Some((tcp, peer_addr, slot)),
        // Without a proxy every connection was admitted above.
        (None, None) => None,
        (Some(proxy), None) => match proxy.read(&mut tcp, peer_addr).await {
            Ok(Header::Proxied(client)) => match shared.limits.admit(client.ip()) {
                Some(slot) => Some((tcp, client, slot)),
                None => {
                    refuse(shared, tcp, id, client, Cause::PerPeerLimit).await;
                    None
                }
            },
            // The proxy's own health check: counted, not logged.
            Ok(Header::Local) => {
                shared.stats.update(|s| s.health_checks += 1);
                None
            }
            Err(error) => {
                let cause = match error {
                    ProxyError::Untrusted => Cause::ProxyUntrusted,
                    _ => Cause::ProxyHeader,
                };
                refuse(shared, tcp, id, peer_addr, cause).await;
                None
            }
        },
    }
}

/// The TLS (or plain) handshake, then the connection; a failed handshake is counted and
/// reported.
async fn handshake<A: Accept>(
    shared: &Arc<Shared>,
    acceptor: &A,
    tcp: TcpStream,
    id: u64,
    peer_addr: SocketAddr,
    shutdown: &Shutdown,
    admission: Admission,
) {
    let peer: Arc<str> = Arc::from(peer_addr.to_string());
    match acceptor.accept(tcp).await {
        Ok(accepted) => connection::serve(shared, accepted, id, peer, shutdown, admission).await,
        Err(e) => {
            shared.stats.update(|s| {
                s.accept_failed += 1;
                s.closed(e.cause)
            });
            shared
                .events
                .emit(ServerEvent::AcceptFailed {
                    connection: id,
                    peer,
                    cause: e.cause,
                    detail: e.detail,
                    hint: e.hint,
                })
                .await;
        }
    }
}

/// At the connection cap: close the connection idle the longest (if idle long enough) and take
/// its place once it has given it back.
async fn evict_for(shared: &Shared) -> Option<OwnedSemaphorePermit> {
    let min = shared.config.evict_idle_after?;
    if !shared.idle.evict_oldest(min) {
        return None;
    }
    let slot = Arc::clone(&shared.slots).acquire_owned();
    // The evicted connection ends at its next poll; a bound keeps the accept loop moving.
    tokio::time::timeout(EVICTION_WAIT, slot).await.ok()?.ok()
}

/// Close an accepted socket at once and report why.
async fn refuse(shared: &Shared, tcp: TcpStream, id: u64, peer: SocketAddr, cause: Cause) {
    drop(tcp);
    shared.stats.update(|s| {
        s.connections_refused += 1;
        s.closed(cause);
    });
    shared
        .events
        .emit(ServerEvent::ConnectionClosed {
            connection: id,
            peer: Arc::from(peer.to_string()),
            cause,
            code: None,
        })
        .await;
}

/// Failed accepts: their count, the current backoff, and a spare descriptor kept open so that,
/// when descriptors run out, one can be freed to accept and close the peers waiting.
struct Failures {
    count: u64,
    backoff: Duration,
    spare: Option<std::fs::File>,
}

impl Failures {
    fn new() -> Failures {
        Failures {
            count: 0,
            backoff: FIRST_BACKOFF,
            spare: open_spare(),
        }
    }

    fn succeeded(&mut self) {
        self.backoff = FIRST_BACKOFF;
    }

    /// Count and report `error`; when descriptors ran out, turn away the peers waiting. Returns
    /// how long to wait before accepting again.
    async fn failed(
        &mut self,
        shared: &Shared,
        listener: &TcpListener,
        error: &std::io::Error,
    ) -> Duration {
        self.count += 1;
        shared.stats.update(|s| s.accept_errors += 1);
        shared
            .events
            .emit(ServerEvent::AcceptError {
                error: error.to_string(),
                count: self.count,
            })
            .await;
        if out_of_descriptors(error) {
            self.shed(shared, listener).await;
        }
        let wait = self.backoff;
        self.backoff = (self.backoff * 2).min(MAX_BACKOFF);
        wait
    }

    /// Free the spare descriptor, accept and close every peer waiting (each then sees its
    /// connection closed instead of hanging in the backlog), and take the spare back.
    async fn shed(&mut self, shared: &Shared, listener: &TcpListener) {
        if self.spare.take().is_none() {
            return;
        }
        for _ in 0..SHED_AT_ONCE {
            let Some(Ok((tcp, peer))) = try_accept(listener).await else {
                break;
            };
            let id = shared.next_connection.fetch_add(1, Ordering::Relaxed) + 1;
            refuse(shared, tcp, id, peer, Cause::MaxConnections).await;
        }
        self.spare = open_spare();
    }
}

fn open_spare() -> Option<std::fs::File> {
    std::fs::File::open("/dev/null").ok()
}

/// EMFILE or ENFILE: the process or the system has no descriptor left.
fn out_of_descriptors(error: &std::io::Error) -> bool {
    const ENFILE: i32 = 23;
    const EMFILE: i32 = 24;
    matches!(error.raw_os_error(), Some(ENFILE | EMFILE))
}

/// A socket already waiting, without waiting for one.
async fn try_accept(listener: &TcpListener) -> Option<std::io::Result<(TcpStream, SocketAddr)>> {
    std::future::poll_fn(|cx| match listener.poll_accept(cx) {
        Poll::Ready(result) => Poll::Ready(Some(result)),
        Poll::Pending => Poll::Ready(None),
    })
    .await
}
