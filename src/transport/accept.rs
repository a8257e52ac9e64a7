//! The sender that accepts: a [`Connector`] whose links are connections the engine opens to
//! it, for engines that only dial out. Each [`Connector::connect`] waits (bounded by the connect
//! timeout) for the next inbound connection; the client core's reconnect policy then applies to
//! the wait as to any connect, so a peer that never comes ends the messages never-delivered.
//! One link at a time: a connection arriving while one is in use, or while one already waits to
//! be taken, is closed at once and reported.

use super::{Connection, Connector, LinkError, Phase};
use crate::cause::Cause;
use crate::resolve::BoxFuture;
use crate::tls::TlsAcceptor;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::mpsc;
use tokio_util::sync::{CancellationToken, DropGuard};

/// What the accepting side reports besides the links it hands out.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AcceptEvent {
    /// A connection came while another was in use (or waiting to be used): closed at once.
    Refused {
        /// Who connected.
        peer: SocketAddr,
    },
    /// Accepting failed (out of descriptors and the like); the next accept follows shortly.
    Failed {
        /// What the operating system said.
        error: String,
    },
}

/// A connector that waits for the peer to connect.
pub struct AcceptConnector {
    local: SocketAddr,
    wait: Option<Duration>,
    /// The listener and what the accept task needs, until the first connect starts it.
    idle: Mutex<Option<Start>>,
    links: tokio::sync::Mutex<mpsc::Receiver<Result<Connection, LinkError>>>,
    /// Set while a link handed out is open.
    in_use: Arc<AtomicBool>,
    /// Stops the accept task when the connector goes.
    _stop: DropGuard,
}

struct Start {
    listener: std::net::TcpListener,
    tls: Option<TlsAcceptor>,
    events: Option<mpsc::Sender<AcceptEvent>>,
    links: mpsc::Sender<Result<Connection, LinkError>>,
    stop: CancellationToken,
}

impl std::fmt::Debug for AcceptConnector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AcceptConnector")
            .field("local", &self.local)
            .field("wait", &self.wait)
            .finish_non_exhaustive()
    }
}

impl AcceptConnector {
    /// Accept on `listener` (already bound; made non-blocking here). Nothing is accepted before
    /// the first connect, which must run inside a tokio runtime.
    pub fn new(listener: std::net::TcpListener) -> io::Result<AcceptConnector> {
        listener.set_nonblocking(true)?;
        let local = listener.local_addr()?;
        let (tx, rx) = mpsc::channel(1);
        let stop = CancellationToken::new();
        Ok(AcceptConnector {
            local,
            wait: None,
            idle: Mutex::new(Some(Start {
                listener,
                tls: None,
                events: None,
                links: tx,
                stop: stop.clone(),
            })),
            links: tokio::sync::Mutex::new(rx),
            in_use: Arc::new(AtomicBool::new(false)),
            _stop: stop.drop_guard(),
        })
    }

    /// Bound each wait for the peer by `wait`; expiry is [`Cause::ConnectTimeout`].
    pub fn with_wait(mut self, wait: Duration) -> Self {
        self.wait = Some(wait);
        self
    }

    /// Run a TLS handshake (as a server) on each connection before handing it out.
    pub fn with_tls(self, tls: TlsAcceptor) -> Self {
        self.edit(|start| start.tls = Some(tls));
        self
    }

    /// Report refused connections and failed accepts here; an event that finds the channel
    /// full is dropped rather than holding up the accepts.
    pub fn with_events(self, events: mpsc::Sender<AcceptEvent>) -> Self {
        self.edit(|start| start.events = Some(events));
        self
    }

    /// The address accepted on.
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    fn edit(&self, change: impl FnOnce(&mut Start)) {
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(start) = idle.as_mut() {
            change(start);
        }
    }

    /// Start accepting, once.
    fn start(&self) -> Result<(), LinkError> {
        let Some(start) = self.idle.lock().unwrap_or_else(|e| e.into_inner()).take() else {
            return Ok(());
        };
        let listener =
            tokio::net::TcpListener::from_std(start.listener).map_err(|e| LinkError {
                cause: crate::cause::classify_io(&e),
                phase: Phase::Connect,
                detail: format!("accepting on {}: {e}", self.local),
            })?;
        let in_use = Arc::clone(&self.in_use);
        tokio::spawn(accept_loop(
            listener,
            start.tls,
            start.events,
            start.links,
            in_use,
            start.stop,
        ));
        Ok(())
    }

    async fn next(&self) -> Result<Connection, LinkError> {
        self.start()?;
        let mut links = self.links.lock().await;
        let taken = match self.wait {
            Some(wait) => tokio::time::timeout(wait, links.recv())
                .await
                .map_err(|_| LinkError {
                    cause: Cause::ConnectTimeout,
                    phase: Phase::Connect,
                    detail: format!(
                        "no peer connected to {} within {}",
                        self.local,
                        humantime::format_duration(wait)
                    ),
                })?,
            None => links.recv().await,
        };
        let Some(link) = taken else {
            return Err(LinkError {
                cause: Cause::ConnectionRefused,
                phase: Phase::Connect,
                detail: format!("no longer accepting on {}", self.local),
            });
        };
        // In use since the accept loop queued it.
        let mut link = link?;
        link.stream = Box::new(InUse {
            stream: link.stream,
            flag: Arc::clone(&self.in_use),
        });
        Ok(link)
    }
}

impl Connector for AcceptConnector {
    fn connect(&self) -> BoxFuture<'_, Result<Connection, LinkError>> {
        Box::pin(self.next())
    }
}

/// Accept until stopped: each connection becomes the next link, unless one is in use or one is
/// already waiting to be taken, in which case it is closed at once.
async fn accept_loop(
    listener: tokio::net::TcpListener,
    tls: Option<TlsAcceptor>,
    events: Option<mpsc::Sender<AcceptEvent>>,
    links: mpsc::Sender<Result<Connection, LinkError>>,
    in_use: Arc<AtomicBool>,
    stop: CancellationToken,
) {
    let report = |event: AcceptEvent| {
        if let Some(events) = &events {
            let _ = events.try_send(event);
        }
    };
    loop {
        let accepted = tokio::select! {
            _ = stop.cancelled() => return,
            accepted = listener.accept() => accepted,
        };
        let (tcp, peer) = match accepted {
            Ok(pair) => pair,
            Err(error) => {
                report(AcceptEvent::Failed {
                    error: error.to_string(),
                });
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let slot = match links.try_reserve() {
            Ok(slot) if !in_use.load(Ordering::SeqCst) => slot,
            Ok(_) | Err(mpsc::error::TrySendError::Full(())) => {
                drop(tcp);
                report(AcceptEvent::Refused { peer });
                continue;
            }
            Err(mpsc::error::TrySendError::Closed(())) => return,
        };
        let _ = super::configure_socket(&tcp, None);
        let link = match &tls {
            None => Ok(Connection {
                stream: Box::new(tcp),
                peer: Some(peer),
                tls: None,
                security_warnings: Vec::new(),
            }),
            Some(acceptor) => match acceptor.accept(tcp).await {
                Ok((stream, accepted)) => Ok(Connection {
                    stream: Box::new(stream),
                    peer: Some(peer),
                    tls: Some(accepted.tls),
                    security_warnings: Vec::new(),
                }),
                Err(e) => Err(LinkError {
                    cause: e.cause,
                    phase: Phase::Tls,
                    detail: format!("{peer}: {}", e.detail),
                }),
            },
        };
        // Claimed from now on, so a connection arriving before the link is taken is refused.
        in_use.store(link.is_ok(), Ordering::SeqCst);
        slot.send(link);
    }
}

/// A link handed out: while it is open, further connections are refused.
struct InUse {
    stream: super::BoxStream,
    flag: Arc<AtomicBool>,
}

impl Drop for InUse {
    fn drop(&mut self) {
        self.flag.store(false, Ordering::SeqCst);
    }
}

impl AsyncRead for InUse {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for InUse {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests;
