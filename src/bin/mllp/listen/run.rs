//! `listen`'s run: the validated server configuration, the database or file sink, the bind, the
//! metrics endpoint and the signals, then the server until a stop, its statistics, and the exit
//! code. The bind, metrics and signal steps are shared with `relay`.

use super::args::ListenArgs;
use super::render;
use crate::diag::{Diag, Fatal};
use crate::exit::Exit;
use crate::prometheus::MetricsError;
use anyhow::Context;
use mllp::server::{Server, ServerConfig, Shutdown};
use mllp::tls::{TlsAcceptor, TlsConfigError};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

pub fn run(args: ListenArgs, diag: &Diag) -> anyhow::Result<Exit> {
    let config = args.config()?;
    serve_on_runtime(args.tls(), |tls| serve(&args, config, tls, diag))
}

/// The TLS material loaded (or its failure said, as permanent), then `serve` on a runtime of
/// its own until it ends. Shared with `relay`.
pub fn serve_on_runtime<Serve, Run>(
    tls: Result<Option<TlsAcceptor>, TlsConfigError>,
    serve: Serve,
) -> anyhow::Result<Exit>
where
    Serve: FnOnce(Option<TlsAcceptor>) -> Run,
    Run: Future<Output = anyhow::Result<Exit>>,
{
    let tls = match tls {
        Ok(tls) => tls,
        Err(e) => {
            let message = format!("cannot load the TLS material: {e}");
            return Ok(Fatal::new(Exit::Permanent, message).report());
        }
    };
    super::memory::return_freed_buffers();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .max_blocking_threads(super::memory::BLOCKING_THREADS)
        .build()
        .context("starting the runtime")?;
    let exit = runtime.block_on(serve(tls));
    // A blocking write stuck on a dead pipe must not keep the process alive after the stop.
    runtime.shutdown_timeout(Duration::from_secs(1));
    exit
}

async fn serve(
    args: &ListenArgs,
    config: ServerConfig,
    tls: Option<mllp::tls::TlsAcceptor>,
    diag: &Diag,
) -> anyhow::Result<Exit> {
    let (sink, memory) = match &args.postgres {
        Some(url) => match mllp::server::PostgresSink::open(url, args.dedupe).await {
            Ok(sink) => (Arc::new(sink) as Arc<dyn mllp::server::Sink>, None),
            Err(e) => return Ok(postgres_refused(&e)),
        },
        None => args.sink()?,
    };
    // Said after the address, which is always the first line.
    let skipped = memory
        .as_ref()
        .map(|m| m.skipped().to_vec())
        .unwrap_or_default();
    let (policy, seed) = args.policy(memory)?;
    // The same replaceable resolver as every other command (MLLP_HOSTS_FILE).
    let resolver = crate::netargs::resolver()?;
    let link = match super::dial::open(args, resolver).await {
        Ok(link) => link,
        Err(exit) => return Ok(exit),
    };
    let metrics = match bind_metrics(args.metrics, args.allow_wildcard) {
        Ok(metrics) => metrics,
        Err(exit) => return Ok(exit),
    };
    let (tx, rx) = tokio::sync::mpsc::channel(4096);
    // The metrics address is announced by the renderer, right after `listening`.
    let renderer = render::spawn(diag.clone(), rx, metrics, skipped, args.log_rate.limiter())?;
    let server = Server::builder(config, sink)
        .policy(policy)
        .events(tx)
        // Under --quiet, or with stderr on /dev/null, no per-message line is read; only metrics
        // still count them.
        .message_events((!diag.quiet && render::stderr_is_read()) || args.metrics.is_some())
        .build()?;
    let shutdown = Shutdown::new();
    let signals = watch_signals(shutdown.clone())?;
    let stats = link.serve(&server, tls, shutdown).await;
    signals.abort();
    drop(server);
    // The renderer ends when the last event sender (inside the server) is gone.
    let _ = tokio::task::spawn_blocking(move || renderer.join()).await;
    render::stats(diag, &stats, seed, render::Answers::Committed);
    Ok(Exit::Success)
}

/// Why the listener does not start without its database, and the exit code: 2 for a connection
/// string that is not one, 4 when the server cannot be reached (a supervisor's restart may find
/// it up), 5 when it refuses these settings.
fn postgres_refused(e: &mllp::server::PostgresError) -> Exit {
    use mllp::server::PostgresError as E;
    let (exit, message) = match e {
        E::ConnInfo(_) => (Exit::Usage, format!("--postgres: {e}")),
        E::Tls(_) => (Exit::Permanent, format!("--postgres: {e}")),
        _ if e.is_transient() => (
            Exit::Transient,
            format!(
                "--postgres: cannot reach the database {e}; the listener starts only when it can commit: start the database or check its host and port"
            ),
        ),
        _ => (
            Exit::Permanent,
            format!(
                "--postgres: the database refused the listener: {e}; check the user, the password (PGPASSWORD, ~/.pgpass), the database name, the grants and sslmode"
            ),
        ),
    };
    Fatal::new(exit, message).cause(e.cause()).report()
}

/// Start the Prometheus endpoint on `addr`, if given, under the wildcard rule of the listener;
/// the exit code of a refusal, already reported.
pub(crate) fn bind_metrics(
    addr: Option<std::net::SocketAddr>,
    allow_wildcard: bool,
) -> Result<Option<std::net::SocketAddr>, Exit> {
    let Some(addr) = addr else {
        return Ok(None);
    };
    let buckets = Some(crate::prometheus::server::COMMIT_BUCKETS);
    match crate::prometheus::bind(addr, buckets, allow_wildcard) {
        Ok(bound) => Ok(Some(bound)),
        Err(e @ MetricsError::WildcardRefused(_)) => {
            let refused = Fatal::new(Exit::Usage, &e).code("MLLP_BIND_ALL_INTERFACES");
            Err(refused.report())
        }
        Err(e) => Err(Fatal::new(Exit::Permanent, &e).report()),
    }
}

/// First SIGINT/SIGTERM: graceful stop. Second: stop at once.
pub(crate) fn watch_signals(shutdown: Shutdown) -> anyhow::Result<tokio::task::JoinHandle<()>> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut int = signal(SignalKind::interrupt()).context("installing the SIGINT handler")?;
    let mut term = signal(SignalKind::terminate()).context("installing the SIGTERM handler")?;
    Ok(tokio::spawn(async move {
        for stop in [&shutdown.graceful, &shutdown.immediate] {
            tokio::select! {
                _ = int.recv() => {}
                _ = term.recv() => {}
            }
            stop.cancel();
        }
    }))
}
