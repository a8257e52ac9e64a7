//! The embedded listener: the server core on 127.0.0.1 with a free port, de-duplicating and
//! counting every commit in the ledger (in memory, or as files with `--out-dir`), applying the
//! chaos policy, and taking the whole link down for a while when a drop strikes.

use super::report::Accounting;
use super::worker::WorkerEnd;
use super::{ChaosPolicy, ChaosSpec, ControlIds, FaultKind, Ledger, LedgerSink, SoakTotals};
use crate::server::sink::OutDirSink;
use crate::server::{
    Accept, AcceptFuture, ConfigError, PlainTcp, Server, ServerConfig, Shutdown, Sink,
};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// Why the embedded listener could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EmbeddedError {
    /// The directory for committed messages cannot be written.
    #[error("{}: not a writable directory", dir.display())]
    OutDir {
        /// The directory given.
        dir: PathBuf,
        /// Why it cannot be written.
        #[source]
        source: std::io::Error,
    },
    /// The server configuration was refused.
    #[error("building the embedded listener")]
    Build(#[source] ConfigError),
    /// No port could be bound on 127.0.0.1.
    #[error("binding the embedded listener on 127.0.0.1")]
    Bind(#[source] std::io::Error),
}

/// A listener in the soak process itself, whose ledger proves what was committed.
pub struct Embedded {
    /// Where it listens: 127.0.0.1 and the port it was given.
    pub addr: SocketAddr,
    /// Every commit, by connection and sequence number.
    pub ledger: Arc<Ledger>,
    stop: CancellationToken,
    task: tokio::task::JoinHandle<()>,
}

/// Accepted sockets close with a reset when dropped with unread input: a chaos reset is a
/// real TCP reset, not a polite close.
struct Abortive;

impl Accept for Abortive {
    type Stream = TcpStream;
    fn accept(&self, tcp: TcpStream) -> AcceptFuture<TcpStream> {
        let _ = socket2::SockRef::from(&tcp).set_linger(Some(Duration::ZERO));
        PlainTcp.accept(tcp)
    }
}

impl Embedded {
    /// Listen on 127.0.0.1 with a free port; with `chaos`, faults strike as `seed` decides.
    pub async fn start(
        ids: ControlIds,
        connections: usize,
        out_dir: Option<&Path>,
        chaos: Option<&ChaosSpec>,
        seed: u64,
    ) -> Result<Embedded, EmbeddedError> {
        let ledger = Arc::new(Ledger::new(ids, connections));
        let inner: Option<Arc<dyn Sink>> = match out_dir {
            Some(dir) => Some(Arc::new(OutDirSink::new(dir).map_err(|source| {
                EmbeddedError::OutDir {
                    dir: dir.to_path_buf(),
                    source,
                }
            })?)),
            None => None,
        };
        let sink = Arc::new(LedgerSink::new(ledger.clone(), inner));
        let defaults = ServerConfig::default();
        let config = ServerConfig {
            drain_timeout: Duration::from_secs(5),
            // Every connection comes from this process, on loopback.
            max_connections_per_peer: Some(defaults.max_connections),
            ..defaults
        };
        let (drops_tx, drops) = mpsc::channel(1);
        let mut builder = Server::builder(config, sink);
        if let Some(spec) = chaos {
            let drops = spec.get(FaultKind::Drop).map(|_| drops_tx);
            builder = builder.policy(Arc::new(ChaosPolicy::new(spec.clone(), seed, drops)));
        }
        let server = builder.build().map_err(EmbeddedError::Build)?;
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(EmbeddedError::Bind)?;
        let addr = listener.local_addr().map_err(EmbeddedError::Bind)?;
        let stop = CancellationToken::new();
        let task = tokio::spawn(supervise(server, listener, addr, drops, stop.clone()));
        Ok(Embedded {
            addr,
            ledger,
            stop,
            task,
        })
    }

    /// Stop gracefully: commits under way finish and are acknowledged.
    pub async fn stop(self) {
        self.stop.cancel();
        let _ = self.task.await;
    }

    /// Stop, then check the ledger against what the sender counted: every accepted message
    /// committed, nothing committed that was never delivered, no more and no fewer commits.
    pub(crate) async fn account(
        self,
        tally: &SoakTotals,
        ends: &[WorkerEnd],
        accounting: &mut Accounting,
    ) {
        let ledger = self.ledger.clone();
        self.stop().await;
        let totals = ledger.totals();
        for end in ends {
            for seq in &end.never_delivered {
                if ledger.is_committed(end.index, *seq) {
                    accounting.problems.push(format!(
                        "connection {} message {seq}: never delivered by the sender, committed by the listener",
                        end.index + 1
                    ));
                }
            }
        }
        let delivered_at_most = tally.generated - tally.fates.never_delivered.min(tally.generated);
        if totals.committed > delivered_at_most {
            accounting.problems.push(format!(
                "the listener committed {}, more than the {delivered_at_most} the sender may have delivered",
                count(totals.committed, "message")
            ));
        }
        if totals.committed < tally.fates.accepted {
            accounting.problems.push(format!(
                "{} accepted but only {} committed by the listener",
                count(tally.fates.accepted, "message"),
                totals.committed
            ));
        }
        accounting.listener = Some(totals);
    }
}

/// Serve until stopped; on a drop, cut every connection, close the port for the drop's
/// duration (connects are refused), then listen again on the same address.
async fn supervise(
    server: Server,
    mut listener: TcpListener,
    addr: SocketAddr,
    mut drops: mpsc::Receiver<Duration>,
    stop: CancellationToken,
) {
    let acceptor = Arc::new(Abortive);
    loop {
        let shutdown = Shutdown::new();
        let run = server.run_with(listener, acceptor.clone(), shutdown.clone());
        tokio::pin!(run);
        let down_for = tokio::select! {
            _ = &mut run => return,
            _ = stop.cancelled() => {
                shutdown.graceful.cancel();
                run.await;
                return;
            }
            Some(d) = drops.recv() => d,
        };
        shutdown.immediate.cancel();
        run.await;
        listener = match super::proxy::reopen_after(down_for, addr, &mut drops, &stop).await {
            Some(listener) => listener,
            None => return,
        };
    }
}

/// `1 message`, `2 messages`.
fn count(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}
