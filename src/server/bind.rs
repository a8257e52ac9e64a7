//! Binding the listener, and refusing a wildcard address unless asked: the check runs on every
//! address the name resolved to (before anything is bound) and again on the address the OS
//! actually bound, so every spelling of "all interfaces" is caught.

use crate::resolve::{ResolveError, Resolver, SystemResolver};
use std::net::{IpAddr, SocketAddr};
use tokio::net::TcpListener;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
/// Why the listening socket could not be opened; names the address.
pub enum BindError {
    /// A wildcard address without the caller's consent (`allow_wildcard`).
    #[error("{addr} listens on every interface")]
    Wildcard {
        /// The address asked for.
        addr: SocketAddr,
    },
    #[error("cannot bind {host}:{port}: {source}")]
    /// Binding the address failed.
    Io {
        /// The host asked for.
        host: String,
        /// The port asked for.
        port: u16,
        #[source]
        /// What the operating system said.
        source: std::io::Error,
    },
    #[error("cannot bind {host}:{port}: {source}")]
    /// The host name could not be resolved.
    Resolve {
        /// The host asked for.
        host: String,
        /// The port asked for.
        port: u16,
        #[source]
        /// Why it could not be resolved.
        source: ResolveError,
    },
}

/// True for 0.0.0.0, ::, and ::ffff:0.0.0.0.
pub fn is_wildcard(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_unspecified(),
        IpAddr::V6(v6) => {
            v6.is_unspecified() || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_unspecified())
        }
    }
}

/// Bind `host:port` (port 0 picks a free port) with the system resolver. A wildcard bind is
/// refused unless `allow_wildcard`.
pub async fn bind(host: &str, port: u16, allow_wildcard: bool) -> Result<TcpListener, BindError> {
    bind_with(&SystemResolver, host, port, allow_wildcard).await
}

/// [`bind`] with names resolved by `resolver`: the first resolved address that binds is used.
pub async fn bind_with(
    resolver: &dyn Resolver,
    host: &str,
    port: u16,
    allow_wildcard: bool,
) -> Result<TcpListener, BindError> {
    let addrs = resolver
        .resolve(host, port)
        .await
        .map_err(|source| BindError::Resolve {
            host: host.to_string(),
            port,
            source,
        })?;
    if !allow_wildcard {
        if let Some(addr) = addrs.iter().find(|a| is_wildcard(a.ip())) {
            return Err(BindError::Wildcard { addr: *addr });
        }
    }
    let io = |source| BindError::Io {
        host: host.to_string(),
        port,
        source,
    };
    let mut last = None;
    for addr in addrs {
        match TcpListener::bind(addr).await {
            Ok(listener) => {
                let bound = listener.local_addr().map_err(io)?;
                if is_wildcard(bound.ip()) && !allow_wildcard {
                    return Err(BindError::Wildcard { addr: bound });
                }
                return Ok(listener);
            }
            Err(e) => last = Some(e),
        }
    }
    Err(io(last.unwrap_or_else(|| {
        std::io::Error::new(std::io::ErrorKind::AddrNotAvailable, "no address to bind")
    })))
}

impl BindError {
    /// The failure cause of a bind that failed, for machines; `None` for a refused wildcard,
    /// which is a usage error rather than a failure.
    pub fn cause(&self) -> Option<crate::cause::Cause> {
        match self {
            BindError::Io { source, .. } => Some(crate::cause::classify_io(source)),
            BindError::Resolve { source, .. } => Some(source.cause()),
            BindError::Wildcard { .. } => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn every_spelling_of_all_interfaces_is_refused() {
        for host in ["0.0.0.0", "0", "::", "[::]", "0:0::0"] {
            match bind(host, 0, false).await {
                Err(BindError::Wildcard { addr }) => assert!(is_wildcard(addr.ip())),
                // A machine without IPv6 cannot bind `::` at all; that is not a wildcard bind.
                Err(BindError::Io { .. }) if host.contains(':') => {}
                other => panic!("{host}: {other:?}"),
            }
        }
        let ok = bind("127.0.0.1", 0, false).await.unwrap();
        assert!(ok.local_addr().unwrap().ip().is_loopback());
        let wild = bind("0.0.0.0", 0, true).await.unwrap();
        assert!(is_wildcard(wild.local_addr().unwrap().ip()));
    }

    #[tokio::test]
    async fn a_name_resolving_to_all_interfaces_is_refused() {
        let resolver = crate::resolve::StaticResolver::new()
            .with("anywhere", ["0.0.0.0".parse().unwrap()])
            .with("here", ["127.0.0.1".parse().unwrap()]);
        match bind_with(&resolver, "anywhere", 0, false).await {
            Err(BindError::Wildcard { addr }) => assert!(is_wildcard(addr.ip())),
            other => panic!("{other:?}"),
        }
        let ok = bind_with(&resolver, "here", 0, false).await.unwrap();
        assert!(ok.local_addr().unwrap().ip().is_loopback());
        assert!(matches!(
            bind_with(&resolver, "nowhere", 0, false).await,
            Err(BindError::Resolve { .. })
        ));
    }
}
