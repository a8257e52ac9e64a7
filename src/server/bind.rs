//! Binding the listener, and refusing a wildcard address unless asked: the check runs on the
//! address the OS actually bound, so every spelling of "all interfaces" is caught.

use std::net::{IpAddr, SocketAddr};
use tokio::net::TcpListener;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BindError {
    #[error("{addr} listens on every interface; pass --allow-wildcard if that is intended")]
    Wildcard { addr: SocketAddr },
    #[error("cannot bind {host}:{port}: {source}")]
    Io {
        host: String,
        port: u16,
        #[source]
        source: std::io::Error,
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

/// Bind `host:port` (port 0 picks a free port). A wildcard bind is dropped again and refused
/// unless `allow_wildcard`.
pub async fn bind(host: &str, port: u16, allow_wildcard: bool) -> Result<TcpListener, BindError> {
    // `[::1]` is how people write IPv6 next to a port; the resolver wants it bare.
    let bare = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    let io = |source| BindError::Io {
        host: host.to_string(),
        port,
        source,
    };
    let listener = TcpListener::bind((bare, port)).await.map_err(io)?;
    let addr = listener.local_addr().map_err(io)?;
    if is_wildcard(addr.ip()) && !allow_wildcard {
        return Err(BindError::Wildcard { addr });
    }
    Ok(listener)
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
}
