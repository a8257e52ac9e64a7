//! The receiver that dials out: for engines that only accept connections and push messages down
//! them. It connects through a [`Connector`] (the client core's resolve, TCP, TLS and connect
//! timeout), serves the connection exactly as an accepted one (same sinks, commit contract,
//! guards, budget and events), and when it ends connects again after the client core's backoff.
//! It never gives up while running: each failed connect is an event with its class, and the
//! next one follows the next delay.

use super::connection::{self, Admission};
use super::event::ServerEvent;
use super::{Accepted, Shared, Shutdown};
use crate::client::BackoffConfig;
use crate::transport::Connector;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

/// A connection open at least this long counts as working: the delays start again from the
/// first. A peer that accepts and closes at once meets growing delays instead of a busy loop.
const WORKED: Duration = Duration::from_secs(1);

/// Connect and serve until `shutdown.graceful`; the connection being served then finishes its
/// commits and answers, bounded by the drain timeout.
pub(crate) async fn dial_until_stopped(
    shared: &Shared,
    connector: &dyn Connector,
    target: Arc<str>,
    backoff: BackoffConfig,
    shutdown: &Shutdown,
) {
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64);
    let mut delays = backoff.iter(seed);
    let mut failed = 0u32;
    loop {
        let connected = tokio::select! {
            biased;
            _ = shutdown.graceful.cancelled() => return,
            connected = connector.connect() => connected,
        };
        let opened = match connected {
            Ok(opened) => opened,
            Err(error) => {
                failed = failed.saturating_add(1);
                let retry_in = delays.next().unwrap_or(backoff.max);
                shared
                    .events
                    .emit(ServerEvent::DialFailed {
                        target: Arc::clone(&target),
                        attempt: failed,
                        cause: error.cause,
                        phase: error.phase,
                        detail: error.detail,
                        retry_in,
                    })
                    .await;
                if !pause(retry_in, shutdown).await {
                    return;
                }
                continue;
            }
        };
        failed = 0;
        for code in &opened.security_warnings {
            let event = ServerEvent::SecurityWarning { code: *code };
            shared.events.emit(event).await;
        }
        let id = shared.next_connection.fetch_add(1, Ordering::Relaxed) + 1;
        shared
            .events
            .emit(ServerEvent::Dialled {
                connection: id,
                target: Arc::clone(&target),
                tls: opened.tls.map(Box::new),
            })
            .await;
        let peer: Arc<str> = match opened.peer {
            Some(addr) => Arc::from(addr.to_string()),
            None => Arc::clone(&target),
        };
        let started = Instant::now();
        serve_one(shared, opened.stream, id, peer, shutdown).await;
        if shutdown.graceful.is_cancelled() {
            return;
        }
        if started.elapsed() >= WORKED {
            delays = backoff.iter(seed.wrapping_add(id));
        }
        // A short wait even after a connection that worked: an engine that closes every
        // connection at once is not dialled in a busy loop.
        if !pause(delays.next().unwrap_or(backoff.max), shutdown).await {
            return;
        }
    }
}

/// Serve one dialled stream through the connection core, as the accept loop serves an accepted
/// one; after a graceful stop it has the drain timeout to finish, then stops at once.
async fn serve_one(
    shared: &Shared,
    stream: crate::transport::BoxStream,
    id: u64,
    peer: Arc<str>,
    shutdown: &Shutdown,
) {
    let accepted = Accepted { stream, tls: None };
    // Dialled connections take no place among `max_connections`: there is one at a time.
    let admission = Admission {
        slot: None,
        peer: shared.limits.unlisted(),
    };
    let serving = connection::serve(shared, accepted, id, peer, shutdown, admission);
    tokio::pin!(serving);
    let drained = async {
        shutdown.graceful.cancelled().await;
        tokio::time::sleep(shared.config.drain_timeout).await;
    };
    tokio::select! {
        () = &mut serving => {}
        () = drained => {
            shutdown.immediate.cancel();
            serving.await;
        }
    }
}

/// Wait `delay`; `false` when a stop came first.
async fn pause(delay: Duration, shutdown: &Shutdown) -> bool {
    tokio::select! {
        biased;
        _ = shutdown.graceful.cancelled() => false,
        _ = tokio::time::sleep(delay) => true,
    }
}
