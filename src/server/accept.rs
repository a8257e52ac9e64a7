//! The seam between an accepted TCP socket and the stream a connection reads: plain TCP here,
//! a TLS handshake in the TLS acceptor.

use crate::cause::{Cause, Hint};
use crate::tls::AcceptedTls;
use std::future::Future;
use std::pin::Pin;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;

/// What [`Accept::accept`] returns: the stream to serve, or why there is none.
pub(crate) type AcceptFuture<S> =
    Pin<Box<dyn Future<Output = Result<Accepted<S>, AcceptError>> + Send>>;

/// A stream ready to serve, and what its handshake established (for `connection_opened`).
#[derive(Debug)]
pub struct Accepted<S> {
    /// The stream to serve the connection on.
    pub stream: S,
    /// What the TLS handshake established; `None` on plain TCP.
    pub tls: Option<AcceptedTls>,
}

/// Why an accepted socket never became a connection (a failed handshake, say). The message
/// names what failed, never payload.
#[derive(Debug, thiserror::Error)]
#[error("{cause}: {detail}")]
pub struct AcceptError {
    /// The class of the failure, as `AcceptFailed` reports it.
    pub cause: Cause,
    /// What failed, in words.
    pub detail: String,
    /// What would fix it, when that is known.
    pub hint: Option<Hint>,
}

/// Turns an accepted socket into the stream a connection is served on. Runs inside the
/// connection's task, so a slow handshake never holds up the accept loop; it must bound its
/// own wait.
pub trait Accept: Send + Sync + 'static {
    /// The stream served after the handshake.
    type Stream: AsyncRead + AsyncWrite + Unpin + Send + 'static;
    /// Turn `tcp` into the stream to serve, within a bounded time.
    fn accept(&self, tcp: TcpStream) -> AcceptFuture<Self::Stream>;
}

/// Plain TCP: the socket as it is.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct PlainTcp;

impl Accept for PlainTcp {
    type Stream = TcpStream;
    fn accept(&self, tcp: TcpStream) -> AcceptFuture<TcpStream> {
        Box::pin(std::future::ready(Ok(Accepted {
            stream: tcp,
            tls: None,
        })))
    }
}

/// TLS: the handshake (bounded by the acceptor's timeout) runs in the connection's own task; a
/// failure becomes an [`AcceptError`] and a `tls_client_error` event, never a crash.
impl Accept for crate::tls::TlsAcceptor {
    type Stream = tokio_rustls::server::TlsStream<TcpStream>;
    fn accept(&self, tcp: TcpStream) -> AcceptFuture<Self::Stream> {
        let acceptor = self.clone();
        Box::pin(async move {
            match crate::tls::TlsAcceptor::accept(&acceptor, tcp).await {
                Ok((stream, info)) => Ok(Accepted {
                    stream,
                    tls: Some(info),
                }),
                Err(e) => Err(AcceptError {
                    cause: e.cause,
                    detail: e.detail,
                    hint: e.hint,
                }),
            }
        })
    }
}
