//! Connecting: resolve, TCP connect (TCP_NODELAY, keepalive), TLS handshake, all bounded by one
//! connect timeout, every failure classified. The client reaches the network only through
//! [`Connector`], so its timing logic is testable over in-memory streams.

mod accept;
mod attempt;
mod classify;

pub use accept::{AcceptConnector, AcceptEvent};
pub use attempt::{Attempt, HostTurn, Move};
pub use classify::classify;

use crate::cause::{classify_io, Cause};
use crate::resolve::{BoxFuture, Resolver, SystemResolver};
use crate::tls::{describe_handshake_io, Seen, Side, TlsClient, TlsSummary};
use crate::warning::WarningCode;
use socket2::{SockRef, TcpKeepalive};
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;

/// A byte stream: plain TCP, TLS, or an in-memory duplex in tests.
pub trait AsyncStream: AsyncRead + AsyncWrite + Send + Unpin {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin> AsyncStream for T {}
/// The stream a [`Connection`] carries.
pub(crate) type BoxStream = Box<dyn AsyncStream>;

/// Which step of establishing a connection failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    /// Name resolution (`resolve` in JSON).
    Resolve,
    /// The TCP connect to a resolved address (`connect`).
    Connect,
    /// The TLS handshake (`tls`).
    Tls,
}

/// A classified failure to establish a link. `detail` names files, hosts and OS errors, never payload.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{phase:?} failed ({cause}): {detail}")]
pub struct LinkError {
    /// Transient or permanent, and what to do about it.
    pub cause: Cause,
    /// The step that failed; for a connect timeout, the step it ran out in.
    pub phase: Phase,
    /// What failed, for people: host, address, OS or TLS error.
    pub detail: String,
}

/// An established link.
pub struct Connection {
    /// The connected stream, TLS already negotiated when configured.
    pub stream: BoxStream,
    /// The address connected to; `None` for streams with no socket address (test doubles).
    pub peer: Option<SocketAddr>,
    /// What TLS negotiated; `None` on plain TCP.
    pub tls: Option<TlsSummary>,
    /// Security warnings raised while connecting (`MLLP_TLS_VERIFY_DISABLED`).
    pub security_warnings: Vec<WarningCode>,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("peer", &self.peer)
            .field("tls", &self.tls)
            .finish()
    }
}

/// Opens links. The real one is [`TcpConnector`]; tests supply duplex streams.
pub trait Connector: Send + Sync + 'static {
    /// Open one link: resolve, connect and any handshake, every failure classified.
    fn connect(&self) -> BoxFuture<'_, Result<Connection, LinkError>>;

    /// A connect with the host it goes to, for the events to name (the client connects
    /// through this). `last`: the host (its place in the list) this link's previous
    /// connection went to, so that each link that changes hosts is told so.
    fn attempt(&self, last: Option<usize>) -> Attempt<'_> {
        let _ = last;
        Attempt {
            host: None,
            connect: self.connect(),
        }
    }

    /// A connection made by [`Connector::attempt`] to host `index` failed. `answered`: it
    /// proved useful (something came back on it, or nothing was written on it); one that took
    /// frames and answered nothing counts as a failed connect to that host.
    fn link_ended(&self, index: usize, answered: bool) {
        let _ = (index, answered);
    }
}

/// The real connector: resolve, try each address in order, TCP_NODELAY and keepalive, then TLS.
/// One connect timeout bounds resolution, TCP connect and the handshake together.
#[derive(Debug, Clone)]
pub struct TcpConnector {
    /// The name (or address literal) to resolve.
    pub host: String,
    /// The TCP port.
    pub port: u16,
    /// Where names resolve; [`SystemResolver`] unless replaced.
    pub resolver: Arc<dyn Resolver>,
    /// Run a TLS handshake after TCP when set; plain TCP when `None`.
    pub tls: Option<TlsClient>,
    /// One bound on resolution, TCP connect and handshake together; no bound when `None`.
    pub connect_timeout: Option<Duration>,
    /// TCP keepalive idle time and probe interval; off when `None`.
    pub keepalive: Option<Duration>,
}

impl TcpConnector {
    /// `host:port`, an IPv6 address in brackets.
    pub fn endpoint(&self) -> String {
        crate::target::Target {
            host: self.host.clone(),
            port: Some(self.port),
        }
        .to_string()
    }

    /// Plain TCP through the system resolver, no timeout, no keepalive.
    pub fn new(host: impl Into<String>, port: u16) -> Self {
        TcpConnector {
            host: host.into(),
            port,
            resolver: Arc::new(SystemResolver),
            tls: None,
            connect_timeout: None,
            keepalive: None,
        }
    }

    /// Resolve through `resolver` instead of the system resolver (tests use a fixed table).
    pub fn with_resolver(mut self, resolver: Arc<dyn Resolver>) -> Self {
        self.resolver = resolver;
        self
    }

    /// Run a TLS handshake with `tls` after the TCP connect.
    pub fn with_tls(mut self, tls: TlsClient) -> Self {
        self.tls = Some(tls);
        self
    }

    /// Bound resolution, TCP connect and handshake together by `timeout`; expiry is
    /// [`Cause::ConnectTimeout`].
    pub fn with_connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = Some(timeout);
        self
    }

    /// TCP keepalive with `interval` as both idle time and probe interval.
    pub fn with_keepalive(mut self, interval: Duration) -> Self {
        self.keepalive = Some(interval);
        self
    }

    /// Resolution and TCP connect with the socket options set, no TLS and no timeout: the first
    /// steps of [`Connector::connect`], public so callers (and tests) can inspect the socket.
    pub async fn connect_tcp(&self) -> Result<(TcpStream, SocketAddr), LinkError> {
        self.connect_tcp_tracked(&mut Phase::Resolve).await
    }

    async fn connect_tcp_tracked(
        &self,
        phase: &mut Phase,
    ) -> Result<(TcpStream, SocketAddr), LinkError> {
        *phase = Phase::Resolve;
        let addrs = self
            .resolver
            .resolve(&self.host, self.port)
            .await
            .map_err(|err| LinkError {
                cause: err.cause(),
                phase: Phase::Resolve,
                detail: err.to_string(),
            })?;
        *phase = Phase::Connect;
        let mut last: Option<(SocketAddr, io::Error)> = None;
        for addr in &addrs {
            let attempt = match TcpStream::connect(addr).await {
                Ok(stream) => configure_socket(&stream, self.keepalive).map(|()| stream),
                Err(err) => Err(err),
            };
            match attempt {
                Ok(stream) => return Ok((stream, *addr)),
                Err(err) => last = Some((*addr, err)),
            }
        }
        let Some((addr, err)) = last else {
            return Err(LinkError {
                cause: Cause::DnsNotFound,
                phase: Phase::Resolve,
                detail: format!("{}: no addresses", self.host),
            });
        };
        let tried = if addrs.len() > 1 {
            format!("all {} addresses failed; last ", addrs.len())
        } else {
            String::new()
        };
        Err(LinkError {
            cause: classify_io(&err),
            phase: Phase::Connect,
            detail: format!("{tried}{addr}: {err}"),
        })
    }

    async fn establish(&self, phase: &mut Phase) -> Result<Connection, LinkError> {
        let (tcp, peer) = self.connect_tcp_tracked(phase).await?;
        let Some(tls) = &self.tls else {
            return Ok(Connection {
                stream: Box::new(tcp),
                peer: Some(peer),
                tls: None,
                security_warnings: Vec::new(),
            });
        };
        *phase = Phase::Tls;
        let (config, asked) = tls.for_connection();
        let connector = tokio_rustls::TlsConnector::from(config);
        let stream = connector
            .connect(tls.server_name.clone(), tcp)
            .await
            .map_err(|err| {
                let seen = Seen {
                    client_certificate: Some(tls.client_certificate),
                    certificate_requested: Some(asked.get()),
                    ..Seen::default()
                };
                let failure = describe_handshake_io(&err, Side::Client, seen);
                LinkError {
                    cause: failure.cause,
                    phase: Phase::Tls,
                    detail: format!("{peer}: {}", failure.detail),
                }
            })?;
        let (_, session) = stream.get_ref();
        let summary = TlsSummary::of(session, !tls.verify_disabled);
        let security_warnings = if tls.verify_disabled {
            vec![WarningCode::TlsVerifyDisabled]
        } else {
            Vec::new()
        };
        Ok(Connection {
            stream: Box::new(stream),
            peer: Some(peer),
            tls: Some(summary),
            security_warnings,
        })
    }
}

impl Connector for TcpConnector {
    fn attempt(&self, _last: Option<usize>) -> Attempt<'_> {
        Attempt {
            host: Some(HostTurn {
                endpoint: self.endpoint(),
                index: 0,
                moved: None,
            }),
            connect: self.connect(),
        }
    }

    fn connect(&self) -> BoxFuture<'_, Result<Connection, LinkError>> {
        Box::pin(async move {
            let mut phase = Phase::Resolve;
            let Some(limit) = self.connect_timeout else {
                return self.establish(&mut phase).await;
            };
            let outcome = tokio::time::timeout(limit, self.establish(&mut phase)).await;
            outcome.unwrap_or_else(|_| {
                let during = match phase {
                    Phase::Resolve => "name resolution",
                    Phase::Connect => "TCP connect",
                    Phase::Tls => "the TLS handshake",
                };
                Err(LinkError {
                    cause: Cause::ConnectTimeout,
                    phase,
                    detail: format!(
                        "{}:{}: not connected within {} (during {during})",
                        self.host,
                        self.port,
                        humantime::format_duration(limit)
                    ),
                })
            })
        })
    }
}

/// TCP_NODELAY on (MLLP frames are small and answered one by one), and TCP keepalive with
/// `interval` as both idle time and probe interval when set.
pub(crate) fn configure_socket(stream: &TcpStream, keepalive: Option<Duration>) -> io::Result<()> {
    stream.set_nodelay(true)?;
    if let Some(interval) = keepalive {
        let params = TcpKeepalive::new()
            .with_time(interval)
            .with_interval(interval);
        SockRef::from(stream).set_tcp_keepalive(&params)?;
    }
    Ok(())
}
