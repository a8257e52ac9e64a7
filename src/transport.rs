//! Connecting: resolve, TCP connect (TCP_NODELAY, keepalive), TLS handshake, all bounded by one
//! connect timeout, every failure classified. The client reaches the network only through
//! [`Connector`], so its timing logic is testable over in-memory streams.

use crate::cause::Cause;
use crate::resolve::BoxFuture;
use crate::warning::WarningCode;
use std::net::SocketAddr;
use tokio::io::{AsyncRead, AsyncWrite};

/// A byte stream: plain TCP, TLS, or an in-memory duplex in tests.
pub trait AsyncStream: AsyncRead + AsyncWrite + Send + Unpin {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin> AsyncStream for T {}
pub type BoxStream = Box<dyn AsyncStream>;

/// Which step of establishing a connection failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    Resolve,
    Connect,
    Tls,
}

/// A classified failure to establish a link. `detail` names files, hosts and OS errors, never payload.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{phase:?} failed ({cause}): {detail}")]
pub struct LinkError {
    pub cause: Cause,
    pub phase: Phase,
    pub detail: String,
}

/// What TLS negotiated, for events and `probe`.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct TlsSummary {
    pub version: String,
    pub cipher_suite: String,
    pub verified: bool,
}

/// An established link.
pub struct Connection {
    pub stream: BoxStream,
    pub peer: Option<SocketAddr>,
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
    fn connect(&self) -> BoxFuture<'_, Result<Connection, LinkError>>;
}
