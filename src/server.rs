//! The server core: accept loop, per-connection containment, sinks and the commit contract.
//!
//! A [`Server`] owns a [`Sink`] (where messages are committed), a [`Policy`] (per-message
//! decisions before the commit) and an optional event channel. [`Server::run`] serves a bound
//! listener until its [`Shutdown`] fires; [`Server::serve`] serves one already-open stream (any
//! `AsyncRead + AsyncWrite`, for TLS and for tests over in-memory pipes).
//!
//! # Example
//!
//! Serve one in-memory stream and read the ACK for one message:
//!
//! ```
//! use mllp::framing::encode_frame;
//! use mllp::server::{DiscardSink, Server, ServerConfig, Shutdown};
//! use std::sync::Arc;
//! use tokio::io::{AsyncReadExt, AsyncWriteExt};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let server = Server::builder(ServerConfig::default(), Arc::new(DiscardSink)).build()?;
//! let (mut peer, stream) = tokio::io::duplex(64 * 1024);
//! let shutdown = Shutdown::new();
//! let serving = async { server.serve(stream, "in-memory", &shutdown).await };
//! let talking = async {
//!     let mut frame = bytes::BytesMut::new();
//!     encode_frame(b"MSH|^~\\&|A|B|C|D|20240101||ADT^A01|MSG1|P|2.5\r", &mut frame)?;
//!     peer.write_all(&frame).await?;
//!     peer.shutdown().await?; // one message, then end of stream
//!     let mut answer = Vec::new();
//!     peer.read_to_end(&mut answer).await?;
//!     Ok::<_, Box<dyn std::error::Error>>(answer)
//! };
//! let ((), answer) = tokio::join!(serving, talking);
//! let answer = String::from_utf8_lossy(&answer?).into_owned();
//! // Committed (to nowhere), so acknowledged positively, naming the message's control ID.
//! assert!(answer.contains("MSA|AA|MSG1"));
//! # Ok(())
//! # }
//! ```

mod accept;
mod accept_loop;
mod bind;
pub(crate) mod clock;
mod config;
mod connection;
pub(crate) mod dedupe;
mod dial;
pub(crate) mod double;
mod event;
mod evict;
mod limits;
pub(crate) mod policy;
pub(crate) mod proxy;
pub(crate) mod sink;
mod stats;

pub use accept::{Accept, AcceptError, Accepted};
pub(crate) use accept::{AcceptFuture, PlainTcp};
pub use bind::{bind, bind_with, is_wildcard, BindError};
pub use config::{AckMode, ConfigError, ServerConfig};
pub use dedupe::{DedupeMemory, DedupePolicy, DedupeSink};
pub use double::{DoubleError, DoubleOptions, TestDouble};
pub use event::{ConnectionId, NackWhy, ServerEvent, StoreReports};
pub use policy::{Action, CommitAll, Decision, Policy};
pub use proxy::{Cidr, CidrError, ProxyProtocol};
#[cfg(all(feature = "postgres", feature = "sqlite"))]
pub use sink::PostgresRows;
pub use sink::{
    CommitGroups, DiscardSink, ExecOptions, ExecSink, Inbound, OutDirSink, OutputFormat, Reply,
    Sink, SinkResult, StdoutSink, EXEC_STDERR_LINE_MAX,
};
#[cfg(feature = "postgres")]
pub use sink::{ConnInfoError, Failure, PostgresError, PostgresSink};
#[cfg(feature = "sqlite")]
pub use sink::{SqliteError, SqliteSink};
pub use stats::StatsSnapshot;

use event::Events;
use limits::Limits;
pub use limits::{BudgetShare, Held};
use stats::ServerStats;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio::sync::{mpsc, Semaphore};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// How a server is stopped. `graceful` stops accepting and lets commits under way finish and be
/// acknowledged (bounded by the drain timeout); `immediate` drops everything at once. Cancelling
/// `immediate` also cancels `graceful`.
#[derive(Debug, Clone)]
pub struct Shutdown {
    /// Stop accepting; let the commits under way finish and be acknowledged.
    pub graceful: CancellationToken,
    /// Drop everything at once.
    pub immediate: CancellationToken,
}

impl Shutdown {
    /// A pair of untriggered stops, `graceful` a child of `immediate`.
    pub fn new() -> Self {
        let immediate = CancellationToken::new();
        Shutdown {
            graceful: immediate.child_token(),
            immediate,
        }
    }
}

impl Default for Shutdown {
    fn default() -> Self {
        Shutdown::new()
    }
}

impl From<CancellationToken> for Shutdown {
    /// A single token as the graceful stop; the immediate stop then comes only from the drain
    /// timeout.
    fn from(graceful: CancellationToken) -> Self {
        Shutdown {
            graceful,
            immediate: CancellationToken::new(),
        }
    }
}

/// State shared by the accept loop and every connection.
pub(crate) struct Shared {
    pub(crate) config: ServerConfig,
    pub(crate) sink: Arc<dyn Sink>,
    pub(crate) policy: Arc<dyn Policy>,
    pub(crate) events: Events,
    pub(crate) stats: ServerStats,
    next_connection: AtomicU64,
    next_seq: AtomicU64,
    next_ack: AtomicU64,
    /// Start time in seconds, in decimal: the prefix that makes ACK control IDs fresh across
    /// runs.
    ack_prefix: String,
    slots: Arc<Semaphore>,
    limits: Limits,
    /// Connections idle between frames, for eviction at the connection cap.
    idle: evict::IdleList,
}

impl Shared {
    pub(crate) fn next_seq(&self) -> u64 {
        self.next_seq.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// The next ACK control ID (the run's start second, then a counter padded to six digits),
    /// written over `out` so a connection reuses one string. `last` is the counter `out` holds
    /// (0: none yet); when the new one follows it, only the digits that change are rewritten.
    pub(crate) fn next_ack_control_id(&self, out: &mut String, last: &mut u64) {
        let n = self.next_ack.fetch_add(1, Ordering::Relaxed) + 1;
        let follows = *last != 0 && n == *last + 1;
        *last = n;
        if follows && increment_padded(out) {
            return;
        }
        out.clear();
        out.push_str(&self.ack_prefix);
        push_padded(out, n, 6);
    }
}

/// Add one to the decimal number at the end of `out` in place: its trailing nines become zeros
/// and the digit before them goes up. `false` (`out` untouched) when that digit is not within the
/// last six, which are always digits of the counter, so the caller writes it afresh.
fn increment_padded(out: &mut String) -> bool {
    let nines = out.bytes().rev().take(6).take_while(|&b| b == b'9').count();
    let bytes = out.as_bytes();
    let Some(&digit) = bytes
        .len()
        .checked_sub(nines + 1)
        .and_then(|i| bytes.get(i))
    else {
        return false;
    };
    if nines == 6 || !digit.is_ascii_digit() {
        return false;
    }
    out.truncate(out.len() - nines - 1);
    out.push(char::from(digit + 1));
    for _ in 0..nines {
        out.push('0');
    }
    true
}

/// `n` in decimal, zero-padded to at least `width` digits (what `{n:06}` writes for 6).
fn push_padded(out: &mut String, n: u64, width: usize) {
    let mut digits = itoa::Buffer::new();
    let digits = digits.format(n);
    for _ in digits.len()..width {
        out.push('0');
    }
    out.push_str(digits);
}

/// An MLLP receiver. Cheap to clone; clones share counters and configuration.
#[derive(Clone)]
pub struct Server {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("config", &self.shared.config)
            .finish_non_exhaustive()
    }
}

/// Builds a [`Server`].
pub struct ServerBuilder {
    config: ServerConfig,
    sink: Arc<dyn Sink>,
    policy: Arc<dyn Policy>,
    events: Option<mpsc::Sender<ServerEvent>>,
    message_events: bool,
}

impl ServerBuilder {
    /// Decide each message with `policy` before its commit (default: commit everything).
    pub fn policy(mut self, policy: Arc<dyn Policy>) -> Self {
        self.policy = policy;
        self
    }

    /// Send events here. The channel is bounded: a slow reader slows the server, nothing is lost.
    pub fn events(mut self, tx: mpsc::Sender<ServerEvent>) -> Self {
        self.events = Some(tx);
        self
    }

    /// Whether the per-message events (`Message`, `Nack`) are sent; on by default. An embedder
    /// that shows only connection-level events turns them off and saves an event per
    /// message. Counters ([`Server::stats`]) are kept either way.
    pub fn message_events(mut self, on: bool) -> Self {
        self.message_events = on;
        self
    }

    /// The server, once its configuration is valid.
    pub fn build(self) -> Result<Server, ConfigError> {
        self.config.validate()?;
        let run_stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs();
        let slots = Arc::new(Semaphore::new(self.config.max_connections));
        let limits = Limits::new(&self.config);
        Ok(Server {
            shared: Arc::new(Shared {
                config: self.config,
                sink: self.sink,
                policy: self.policy,
                events: Events::new(self.events, self.message_events),
                stats: ServerStats::default(),
                next_connection: AtomicU64::new(0),
                next_seq: AtomicU64::new(0),
                next_ack: AtomicU64::new(0),
                ack_prefix: run_stamp.to_string(),
                slots,
                limits,
                idle: evict::IdleList::default(),
            }),
        })
    }
}

impl Server {
    /// Start building a server that commits into `sink`.
    pub fn builder(config: ServerConfig, sink: Arc<dyn Sink>) -> ServerBuilder {
        ServerBuilder {
            config,
            sink,
            policy: Arc::new(CommitAll),
            events: None,
            message_events: true,
        }
    }

    /// The configuration it serves with.
    pub fn config(&self) -> &ServerConfig {
        &self.shared.config
    }

    /// A share of the server's byte budget for what a sink keeps after it answers (a relay's
    /// copies for its shadow engine): at most half the budget, never waited for.
    pub fn budget_share(&self) -> BudgetShare {
        self.shared.limits.share()
    }

    /// The server's counters now, with the sink's commit groups if it has any.
    pub fn stats(&self) -> StatsSnapshot {
        let mut stats = self.shared.stats.snapshot();
        stats.commit_groups = self.shared.sink.commit_groups();
        stats
    }

    /// Serve plain TCP on `listener` until `shutdown`; returns the final counters.
    pub async fn run(&self, listener: TcpListener, shutdown: impl Into<Shutdown>) -> StatsSnapshot {
        self.run_with(listener, Arc::new(PlainTcp), shutdown).await
    }

    /// Serve `listener`, turning each accepted socket into a stream with `acceptor` (a TLS
    /// handshake, say) inside the connection's own task.
    pub async fn run_with<A: Accept>(
        &self,
        listener: TcpListener,
        acceptor: Arc<A>,
        shutdown: impl Into<Shutdown>,
    ) -> StatsSnapshot {
        let shutdown = shutdown.into();
        let shared = &self.shared;
        if let Ok(addr) = listener.local_addr() {
            shared.events.emit(ServerEvent::Listening { addr }).await;
        }
        if let Some(reports) = shared.events.store_reports() {
            shared.sink.report_to(reports);
        }
        let tracker = TaskTracker::new();
        accept_loop::accept_until_stopped(shared, &listener, &acceptor, &shutdown, &tracker).await;
        drop(listener);
        tracker.close();
        tokio::select! {
            _ = tracker.wait() => {}
            _ = shutdown.immediate.cancelled() => {}
            _ = tokio::time::sleep(shared.config.drain_timeout) => shutdown.immediate.cancel(),
        }
        // Connections watch `immediate` at every await, so this wait is short.
        shutdown.immediate.cancel();
        tracker.wait().await;
        self.stats()
    }

    /// Receive by dialling out: connect through `connector` (to an engine that only accepts
    /// connections and pushes messages down them), serve that connection as an accepted one,
    /// and connect again after `backoff` whenever it ends or a connect fails, until
    /// `shutdown`. `target` names the endpoint in events. Returns the final counters.
    pub async fn dial(
        &self,
        connector: Arc<dyn crate::transport::Connector>,
        target: impl Into<Arc<str>>,
        backoff: crate::client::BackoffConfig,
        shutdown: impl Into<Shutdown>,
    ) -> StatsSnapshot {
        let shutdown = shutdown.into();
        let shared = &self.shared;
        let target = target.into();
        let dialling = ServerEvent::Dialling {
            target: Arc::clone(&target),
        };
        shared.events.emit(dialling).await;
        if let Some(reports) = shared.events.store_reports() {
            shared.sink.report_to(reports);
        }
        dial::dial_until_stopped(shared, &*connector, target, backoff, &shutdown).await;
        self.stats()
    }

    /// Serve one already-open stream until it closes or `shutdown` fires.
    pub async fn serve<S>(&self, stream: S, peer: impl Into<Arc<str>>, shutdown: &Shutdown)
    where
        S: AsyncRead + AsyncWrite + Unpin + Send,
    {
        let shared = &self.shared;
        let id = shared.next_connection.fetch_add(1, Ordering::Relaxed) + 1;
        let accepted = Accepted { stream, tls: None };
        let admission = connection::Admission {
            slot: None,
            peer: shared.limits.unlisted(),
        };
        connection::serve(shared, accepted, id, peer.into(), shutdown, admission).await
    }
}

#[cfg(test)]
mod tests;
