//! The relay's run: bind like `listen`, start the upstream client like `send`, join them with a
//! pass-through or queue sink, serve until a signal, and exit as `listen` does.

use super::args::RelayArgs;
use super::render;
use super::status;
use crate::diag::{Diag, Fatal};
use crate::exit::Exit;
use crate::listen::render::Answers;
use mllp::client::{Client, Window};
use mllp::relay::{self, Enqueue, Forward, ForwardOptions, Recorder, Store};
use mllp::server::{BindError, Server, Shutdown, Sink};
use std::sync::Arc;
use std::time::Duration;

pub fn run(args: RelayArgs, diag: &Diag) -> anyhow::Result<Exit> {
    crate::listen::serve_on_runtime(args.server_tls.acceptor(), |tls| serve(&args, tls, diag))
}

async fn serve(
    args: &RelayArgs,
    tls: Option<mllp::tls::TlsAcceptor>,
    diag: &Diag,
) -> anyhow::Result<Exit> {
    let link = args.link();
    let config = mllp::server::ServerConfig {
        drain_timeout: link.drain_timeout,
        ..args.guards.config()
    };
    let resolver = crate::netargs::resolver()?;
    let upstream_tls = match args
        .tls
        .options()
        .map(|o| o.build(&args.to.host))
        .transpose()
    {
        Ok(tls) => tls,
        Err(e) => {
            let message = format!("cannot load the upstream TLS material: {e}");
            return Ok(Fatal::new(Exit::Permanent, message).report());
        }
    };
    let options = relay::upstream::client_options(
        &link,
        Window {
            count: Some(args.window),
            bytes: None,
        },
    );
    let (host, port) = (args.to.host.clone(), args.to.port_or_default());
    let connector = link.connector(&host, port, upstream_tls, Arc::clone(&resolver));
    let store = match args.queue.as_ref().or(args.record.as_ref()) {
        Some(file) => match Store::open(file) {
            Ok(store) => Some(store),
            Err(e) => return Ok(Fatal::new(Exit::Usage, &e).report()),
        },
        None => None,
    };
    let bound = mllp::server::bind_with(
        &*resolver,
        &args.listen.host,
        args.listen.port,
        args.allow_wildcard,
    );
    let listener = match bound.await {
        Ok(listener) => listener,
        Err(e @ BindError::Wildcard { .. }) => {
            return Ok(crate::listen::wildcard_refused(&e).report())
        }
        Err(e) => return Ok(Fatal::new(Exit::Permanent, &e).cause(e.cause()).report()),
    };
    let metrics = match crate::listen::bind_metrics(args.metrics, args.allow_wildcard) {
        Ok(metrics) => metrics,
        Err(exit) => return Ok(exit),
    };
    let client = match Client::new(Arc::new(connector), options) {
        Ok(client) => Arc::new(client),
        Err(e) => return Ok(Fatal::new(Exit::Usage, e).report()),
    };
    let (listening, announced) = tokio::sync::oneshot::channel();
    let link_seen = Arc::new(std::sync::Mutex::new(render::Link::default()));
    let gauges = Arc::new(relay::Gauges::default());
    let upstream_events = render::upstream(
        diag.clone(),
        client.subscribe(),
        args.to.to_string(),
        announced,
        Arc::clone(&link_seen),
    );
    let status = status::Status::start(
        diag,
        status::Sources {
            gauges: Arc::clone(&gauges),
            link: Arc::clone(&link_seen),
            downstream: Arc::default(),
            queue: args.queue.is_some(),
        },
    );
    let stats_events = render::stats(diag.clone(), Arc::clone(&gauges), link_seen);
    let stop = tokio_util::sync::CancellationToken::new();
    let (sink, forwarder): (Arc<dyn Sink>, _) = match (&args.queue, store) {
        (Some(_), Some(store)) => {
            let wake = Arc::new(tokio::sync::Notify::new());
            let sink = Enqueue::new(store.clone(), args.max_queue, Arc::clone(&wake))
                .gauged(Arc::clone(&gauges));
            let options = ForwardOptions {
                window: args.window,
                max_attempts: mllp::client::DEFAULT_MAX_RESENDS,
                retry_pause: link.backoff.initial.max(Duration::from_millis(50)),
                gauges: Arc::clone(&gauges),
            };
            let forwarding = tokio::spawn(relay::queue::forward(
                store,
                Arc::clone(&client),
                options,
                wake,
                stop.clone(),
            ));
            (Arc::new(sink), Some(forwarding))
        }
        (_, store) => {
            let mut forward =
                Forward::new(Arc::clone(&client), link.connect_timeout).gauged(Arc::clone(&gauges));
            if let Some(store) = store {
                forward = forward.recording(Arc::new(Recorder::new(store)));
            }
            (Arc::new(forward), None)
        }
    };
    // Pass-through commits nothing: a positive answer is the upstream's, passed on.
    let answers = match args.queue {
        Some(_) => Answers::Committed,
        None => Answers::PassedOn,
    };
    let (tx, rx) = tokio::sync::mpsc::channel(4096);
    // With a status drawn, the server's events pass a counter of open connections first.
    let (tx, counting) = match &status {
        Some(status) => {
            let (counted, from) = tokio::sync::mpsc::channel(4096);
            (counted, Some((status.count(from, tx), status.tick())))
        }
        None => (tx, None),
    };
    let renderer = crate::listen::render::spawn_announcing(
        diag.clone(),
        rx,
        metrics,
        args.log_rate.limiter(),
        answers,
        listening,
    )?;
    let server = Server::builder(config, sink)
        .events(tx)
        .message_events(
            (!diag.quiet && crate::listen::render::stderr_is_read()) || metrics.is_some(),
        )
        .build()?;
    let shutdown = Shutdown::new();
    let signals = crate::listen::watch_signals(shutdown.clone())?;
    let stats = crate::listen::run_server(&server, listener, tls, shutdown).await;
    signals.abort();
    stop.cancel();
    if let Some(forwarding) = forwarder {
        let _ = forwarding.await;
    }
    drop(server);
    if let Some(status) = &status {
        status.stop();
    }
    // Pass-through has drained with the server; a queue keeps what is pending for next time.
    client.destroy().await;
    upstream_events.abort();
    stats_events.abort();
    if let Some((counter, tick)) = counting {
        tick.abort();
        let _ = counter.await;
    }
    let _ = tokio::task::spawn_blocking(move || renderer.join()).await;
    if let Some(status) = status {
        status.finish();
    }
    crate::listen::render::stats(diag, &stats, None, answers);
    Ok(Exit::Success)
}
