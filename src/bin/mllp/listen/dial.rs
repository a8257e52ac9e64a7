//! `listen`'s link to its peers: a bound address (the usual), or with `--dial` a connection out
//! to an engine that only accepts ([`mllp::server::Server::dial`]).

use super::args::ListenArgs;
use crate::diag::Fatal;
use crate::exit::Exit;
use mllp::client::BackoffConfig;
use mllp::resolve::Resolver;
use mllp::server::{BindError, Server, Shutdown, StatsSnapshot};
use mllp::tls::TlsAcceptor;
use mllp::transport::{Connector, TcpConnector};
use std::sync::Arc;

/// The bound on each connect and TLS handshake: the client core's default.
const CONNECT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// Where the messages come from.
pub enum Link {
    /// Peers connect to this listener.
    Listen(tokio::net::TcpListener),
    /// The listener connects out through this connector, to this endpoint.
    Dial(Arc<dyn Connector>, String),
}

/// Bind `--host`/`--port`, or with `--dial` set up the connector (resolved through `resolver`,
/// TLS from the client TLS flags). `Err`: the exit code of a refusal, already reported.
pub async fn open(args: &ListenArgs, resolver: Arc<dyn Resolver>) -> Result<Link, Exit> {
    let Some(target) = &args.dial else {
        if args.dial_tls.enabled() || args.dial_tls.server_name.is_some() {
            let message = "--tls, --ca, --cert, --key, --server-name and --insecure are TLS to \
                           the engine --dial connects to; a listener serves TLS with --tls-cert \
                           and --tls-key";
            return Err(Fatal::new(Exit::Usage, message).report());
        }
        let bound = mllp::server::bind_with(&*resolver, &args.host, args.port, args.allow_wildcard);
        return match bound.await {
            Ok(listener) => Ok(Link::Listen(listener)),
            Err(e @ BindError::Wildcard { .. }) => Err(wildcard_refused(&e).report()),
            Err(e) => Err(Fatal::new(Exit::Permanent, &e).cause(e.cause()).report()),
        };
    };
    let (host, port) = (target.host.clone(), target.port_or_default());
    let tls = match args.dial_tls.options().map(|o| o.build(&host)).transpose() {
        Ok(tls) => tls,
        Err(e) => {
            let message = format!("TLS configuration for --dial {target}: {e}");
            return Err(Fatal::new(Exit::Permanent, message).report());
        }
    };
    let mut connector = TcpConnector::new(host.clone(), port)
        .with_resolver(resolver)
        .with_connect_timeout(CONNECT_TIMEOUT);
    if let Some(tls) = tls {
        connector = connector.with_tls(tls);
    }
    let endpoint = mllp::target::Target {
        host,
        port: Some(port),
    };
    Ok(Link::Dial(Arc::new(connector), endpoint.to_string()))
}

/// A wildcard bind refused, with the flag that allows it.
pub(crate) fn wildcard_refused(e: &BindError) -> Fatal {
    let message = format!("{e}; pass --allow-wildcard if that is intended");
    Fatal::new(Exit::Usage, message).code("MLLP_BIND_ALL_INTERFACES")
}

/// `server` on `listener` until `shutdown`, with TLS when there is an acceptor. Shared with
/// `relay`.
pub async fn run_server(
    server: &Server,
    listener: tokio::net::TcpListener,
    tls: Option<TlsAcceptor>,
    shutdown: Shutdown,
) -> StatsSnapshot {
    match tls {
        Some(acceptor) => {
            server
                .run_with(listener, Arc::new(acceptor), shutdown)
                .await
        }
        None => server.run(listener, shutdown).await,
    }
}

impl Link {
    /// Serve until `shutdown`: accept on the listener (with TLS when there is an acceptor), or
    /// dial out and reconnect with the client core's backoff.
    pub async fn serve(
        self,
        server: &Server,
        tls: Option<TlsAcceptor>,
        shutdown: Shutdown,
    ) -> StatsSnapshot {
        match self {
            Link::Listen(listener) => run_server(server, listener, tls, shutdown).await,
            Link::Dial(connector, target) => {
                let backoff = BackoffConfig::default();
                server.dial(connector, target, backoff, shutdown).await
            }
        }
    }
}
