//! The Prometheus exporter both `listen` and `soak` serve with `--metrics ADDR` (feature
//! `metrics`): the global recorder, and a small HTTP server for its scrapes.
//!
//! The listener is bound here rather than by the exporter so that `--metrics 127.0.0.1:0` works
//! and the bound address can be reported. What is counted: [`server`] for `listen`, [`soak`]
//! for `soak`.

use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;

/// Largest request head read; a scrape is one short GET.
const MAX_REQUEST: usize = 8 * 1024;
/// A scrape not done within this long (an idle scraper, say) is dropped.
const IDLE_TIMEOUT: Duration = Duration::from_secs(10);
/// Scrapes served at once; a connection past them is closed at once, so idle scrapers cannot
/// use up the descriptors the MLLP listener needs.
const MAX_SCRAPERS: usize = 16;

/// Why the metrics endpoint could not be served. The text names the flag as the command line
/// spells it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MetricsError {
    /// A wildcard address without the permission to bind every interface.
    #[error("--metrics {0} serves every interface; pass --allow-wildcard if that is intended")]
    WildcardRefused(SocketAddr),
    /// The address could not be bound.
    #[error("--metrics {addr}: {error}")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// What the system said.
        error: std::io::Error,
    },
    /// The bound listener has no local address.
    #[error("{0}")]
    LocalAddr(std::io::Error),
    /// The histogram buckets were refused.
    #[error("--metrics: {0}")]
    Buckets(String),
    /// The global recorder could not be installed (one is installed already).
    #[error("--metrics {addr}: {error}")]
    Install {
        /// The address asked for.
        addr: SocketAddr,
        /// What the exporter said.
        error: String,
    },
}

/// Bind `addr`, install the global recorder and serve it over HTTP from a task on the current
/// runtime (must be called inside one). Returns the bound address. With `buckets`, histograms
/// whose names end in `_seconds` are exported as Prometheus histograms with those bounds
/// (otherwise as summaries). A wildcard address is refused ([`MetricsError::WildcardRefused`])
/// unless `allow_wildcard`.
pub fn bind(
    addr: SocketAddr,
    buckets: Option<&[f64]>,
    allow_wildcard: bool,
) -> Result<SocketAddr, MetricsError> {
    if !allow_wildcard && mllp::server::is_wildcard(addr.ip()) {
        return Err(MetricsError::WildcardRefused(addr));
    }
    let bound_err = |error: std::io::Error| MetricsError::Bind { addr, error };
    let std_listener = std::net::TcpListener::bind(addr).map_err(bound_err)?;
    std_listener.set_nonblocking(true).map_err(bound_err)?;
    let listener = TcpListener::from_std(std_listener).map_err(bound_err)?;
    let bound = listener.local_addr().map_err(MetricsError::LocalAddr)?;
    let mut builder = PrometheusBuilder::new();
    if let Some(buckets) = buckets {
        builder = builder
            .set_buckets_for_metric(Matcher::Suffix("_seconds".into()), buckets)
            .map_err(|e| MetricsError::Buckets(e.to_string()))?;
    }
    let handle = builder
        .install_recorder()
        .map_err(|e| MetricsError::Install {
            addr,
            error: e.to_string(),
        })?;
    tokio::spawn(serve(listener, handle, MAX_SCRAPERS, IDLE_TIMEOUT));
    Ok(bound)
}

/// Serve scrapes, at most `max` at once, each bounded by `idle`.
async fn serve(listener: TcpListener, handle: PrometheusHandle, max: usize, idle: Duration) {
    let slots = Arc::new(Semaphore::new(max));
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            // Out of descriptors and the like: back off instead of spinning.
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        let Ok(slot) = Arc::clone(&slots).try_acquire_owned() else {
            drop(stream);
            continue;
        };
        let handle = handle.clone();
        tokio::spawn(async move {
            let _ = tokio::time::timeout(idle, respond(stream, &handle)).await;
            drop(slot);
        });
    }
}

/// One request, one response, then close (HTTP/1.1 with `Connection: close`).
async fn respond(mut stream: TcpStream, handle: &PrometheusHandle) -> std::io::Result<()> {
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(&mut buf).await?;
        if n == 0 || head.len() + n > MAX_REQUEST {
            return Ok(());
        }
        head.extend_from_slice(&buf[..n]);
    }
    let request_line = head.split(|&b| b == b'\r').next().unwrap_or_default();
    let mut parts = request_line.split(|&b| b == b' ');
    let (method, target) = (parts.next(), parts.next());
    let (status, body) = match (method, target) {
        (Some(b"GET"), Some(b"/metrics")) => ("200 OK", handle.render()),
        (Some(b"GET"), _) => ("404 Not Found", "not found\n".to_string()),
        _ => ("405 Method Not Allowed", "method not allowed\n".to_string()),
    };
    let response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(response.as_bytes()).await?;
    stream.shutdown().await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn only_get_metrics_is_served() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let handle = PrometheusBuilder::new().build_recorder().handle();
        tokio::spawn(serve(listener, handle, MAX_SCRAPERS, IDLE_TIMEOUT));
        for (request, status) in [
            ("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", "HTTP/1.1 200"),
            ("GET / HTTP/1.1\r\n\r\n", "HTTP/1.1 404"),
            ("POST /metrics HTTP/1.1\r\n\r\n", "HTTP/1.1 405"),
        ] {
            let mut s = TcpStream::connect(addr).await.unwrap();
            s.write_all(request.as_bytes()).await.unwrap();
            let mut out = String::new();
            s.read_to_string(&mut out).await.unwrap();
            assert!(out.starts_with(status), "{request:?}: {out}");
        }
    }

    #[tokio::test]
    async fn scrapers_past_the_cap_are_closed_at_once_and_idle_ones_later() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let handle = PrometheusBuilder::new().build_recorder().handle();
        tokio::spawn(serve(listener, handle, 2, Duration::from_millis(300)));
        let mut idle = Vec::new();
        for _ in 0..2 {
            idle.push(TcpStream::connect(addr).await.unwrap());
        }
        // Let the server take both before the third arrives.
        tokio::time::sleep(Duration::from_millis(50)).await;
        let mut extra = TcpStream::connect(addr).await.unwrap();
        let mut buf = [0u8; 16];
        let closed = tokio::time::timeout(Duration::from_millis(200), extra.read(&mut buf)).await;
        assert!(
            matches!(closed, Ok(Ok(0) | Err(_))),
            "past the cap: closed at once"
        );
        for mut s in idle {
            let read = tokio::time::timeout(Duration::from_secs(5), s.read(&mut buf)).await;
            assert!(matches!(read, Ok(Ok(0) | Err(_))), "idle scraper closed");
        }
        // The places are free again.
        let mut s = TcpStream::connect(addr).await.unwrap();
        s.write_all(b"GET /metrics HTTP/1.1\r\n\r\n").await.unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).await.unwrap();
        assert!(out.starts_with("HTTP/1.1 200"), "{out}");
    }

    #[test]
    fn a_wildcard_is_refused_without_permission() {
        let err = bind("0.0.0.0:0".parse().unwrap(), None, false).unwrap_err();
        assert!(matches!(err, MetricsError::WildcardRefused(_)), "{err}");
    }
}
