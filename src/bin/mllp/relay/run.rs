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
    if let Err(e) = args.mirror.check() {
        return Ok(Fatal::new(Exit::Usage, e).report());
    }
    if let Err(e) = super::mirror::not_a_loop(args) {
        return Ok(Fatal::new(Exit::Usage, e).report());
    }
    let config = mllp::server::ServerConfig {
        drain_timeout: link.drain_timeout,
        ..args.guards.config()
    };
    let resolver = crate::netargs::resolver()?;
    let upstream_tls = match args
        .tls
        .options()
        .map(|o| o.build(&args.upstream().host))
        .transpose()
    {
        Ok(tls) => tls,
        Err(e) => {
            let message = format!("cannot load the upstream TLS material: {e}");
            return Ok(Fatal::new(Exit::Permanent, message).report());
        }
    };
    let mut options = relay::client_options(
        &link,
        Window {
            count: Some(args.window),
            bytes: None,
        },
    );
    let (host, port) = (&args.upstream().host, args.upstream().port_or_default());
    let primary = link.connector(host, port, upstream_tls, Arc::clone(&resolver));
    let more: Vec<_> = args.to[1..]
        .iter()
        .map(|t| (t.host.clone(), t.port_or_default()))
        .collect();
    let setup = (&args.tls, &link, &resolver);
    let connector =
        match crate::failover::connector(primary, &more, setup, args.failover(), &mut options) {
            Ok(connector) => connector,
            Err(e) => {
                let message = format!("cannot load the upstream TLS material: {e}");
                return Ok(Fatal::new(Exit::Permanent, message).report());
            }
        };
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
    let client = match Client::new(connector, options) {
        Ok(client) => Arc::new(client),
        Err(e) => return Ok(Fatal::new(Exit::Usage, e).report()),
    };
    let shadow = match &args.mirror.mirror {
        Some(to) => match shadow_client(args, to, &link, &resolver) {
            Ok(client) => Some((to.to_string(), client)),
            Err(exit) => return Ok(exit),
        },
        None => None,
    };
    let (listening, announced) = tokio::sync::oneshot::channel();
    // Both links' lines wait for the bound address, said first.
    let (upstream_announced, mirror_announced) = {
        let (up, up_rx) = tokio::sync::oneshot::channel();
        let (mirror, mirror_rx) = tokio::sync::oneshot::channel();
        tokio::spawn(async move {
            let _ = announced.await;
            let _ = up.send(());
            let _ = mirror.send(());
        });
        (up_rx, mirror_rx)
    };
    let link_seen = Arc::new(std::sync::Mutex::new(render::Link::default()));
    let gauges = Arc::new(relay::Gauges::default());
    let upstream_events = render::upstream(
        diag.clone(),
        client.subscribe(),
        args.upstream().to_string(),
        upstream_announced,
        Arc::clone(&link_seen),
    );
    let mirror = shadow.map(|(to, client)| {
        let seen = Arc::new(std::sync::Mutex::new(render::Link::default()));
        let events = render::link_events(
            diag.clone(),
            client.subscribe(),
            ("mirror", to.clone()),
            mirror_announced,
            Arc::clone(&seen),
        );
        let (mirror, worker) = relay::Mirror::start(client, args.mirror.options());
        let diffs = super::mirror::diffs(diag.clone(), mirror.subscribe(), to.clone());
        let shown = render::Shadow { mirror, link: seen };
        (to, shown, worker, [events, diffs])
    });
    let shown = mirror.as_ref().map(|(_, shown, _, _)| shown.clone());
    let status = status::Status::start(
        diag,
        status::Sources {
            gauges: Arc::clone(&gauges),
            link: Arc::clone(&link_seen),
            downstream: Arc::default(),
            queue: args.queue.is_some(),
            mirror: shown.clone(),
        },
    );
    let stats_events = render::stats(diag.clone(), Arc::clone(&gauges), link_seen, shown.clone());
    let stop = tokio_util::sync::CancellationToken::new();
    let mut recording = None;
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
                mirror: shown.as_ref().map(|shown| shown.mirror.clone()),
            };
            let forwarding = tokio::spawn(relay::forward(
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
                let recorder = Arc::new(Recorder::new(store));
                recording = Some(Arc::clone(&recorder));
                forward = forward.recording(recorder);
            }
            if let Some(shown) = &shown {
                forward = forward.mirroring(shown.mirror.clone());
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
    if let Some(shown) = &shown {
        shown.mirror.budget(server.budget_share());
    }
    let shutdown = Shutdown::new();
    let signals = crate::listen::watch_signals(shutdown.clone())?;
    // When the stop began: the upstream's drain is timed from it.
    let stop_began = {
        let graceful = shutdown.graceful.clone();
        tokio::spawn(async move {
            graceful.cancelled().await;
            tokio::time::Instant::now()
        })
    };
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
    // The shadow answers while the upstream drains, and gets no longer than the upstream's
    // drain took: a shadow that is down or never reads must not hold the stop.
    let drained = match stop_began.is_finished() {
        true => stop_began.await.map(|at| at.elapsed()).unwrap_or_default(),
        false => {
            stop_began.abort();
            Duration::ZERO
        }
    };
    let mirrored = match mirror {
        Some((to, shown, worker, tasks)) => {
            worker.finish(drained.min(link.drain_timeout)).await;
            if let Some(recorder) = &recording {
                recorder.mirrored_written().await;
            }
            tasks.into_iter().for_each(|t| t.abort());
            Some((to, shown.mirror.counts()))
        }
        None => None,
    };
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
    if let Some((to, counts)) = mirrored {
        super::mirror::summary(diag, &to, &counts);
    }
    Ok(Exit::Success)
}

/// The shadow's client link: the upstream's waits and reconnects, its own TLS flags.
fn shadow_client(
    args: &RelayArgs,
    to: &mllp::target::Target,
    link: &mllp::client::LinkSettings,
    resolver: &Arc<dyn mllp::resolve::Resolver>,
) -> Result<Arc<Client>, Exit> {
    let tls = match args
        .mirror
        .tls()
        .options()
        .map(|o| o.build(&to.host))
        .transpose()
    {
        Ok(tls) => tls,
        Err(e) => {
            let message = format!("cannot load the shadow's TLS material: {e}");
            return Err(Fatal::new(Exit::Permanent, message).report());
        }
    };
    let options = relay::client_options(
        link,
        Window {
            count: Some(args.window),
            bytes: None,
        },
    );
    let connector = link.connector(&to.host, to.port_or_default(), tls, Arc::clone(resolver));
    Client::new(Arc::new(connector), options)
        .map(Arc::new)
        .map_err(|e| Fatal::new(Exit::Usage, e).report())
}
