//! The relay's run: bind like `listen`, start the upstream client like `send`, join them with a
//! pass-through or queue sink, serve until a signal, and exit as `listen` does.
//!
//! [`serve`] reads as its steps: the plan from the flags, the bound socket, the upstream link,
//! the lines that say what the links do, the sink, the server until a signal, the stop.

use super::args::RelayArgs;
use super::lines::Lines;
use super::plan::{self, Plan};
use super::status::Status;
use crate::diag::{Diag, Fatal};
use crate::exit::Exit;
use crate::listen::render::Answers;
use mllp::client::Client;
use mllp::relay::{self, Enqueue, Forward, ForwardOptions, Recorder, Store};
use mllp::server::{BindError, Server, Shutdown, Sink, StatsSnapshot};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

pub fn run(args: RelayArgs, diag: &Diag) -> anyhow::Result<Exit> {
    crate::listen::serve_on_runtime(args.server_tls.acceptor(), |tls| serve(&args, tls, diag))
}

async fn serve(
    args: &RelayArgs,
    tls: Option<mllp::tls::TlsAcceptor>,
    diag: &Diag,
) -> anyhow::Result<Exit> {
    let resolver = crate::netargs::resolver()?;
    let plan = match plan::plan(args, &resolver) {
        Ok(plan) => plan,
        Err(exit) => return Ok(exit),
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
    let Plan {
        link,
        config,
        connector,
        options,
        store,
    } = plan;
    let client = match Client::new(connector, options) {
        Ok(client) => Arc::new(client),
        Err(e) => return Ok(Fatal::new(Exit::Usage, e).report()),
    };
    let shadow = match &args.mirror.mirror {
        Some(to) => match plan::shadow_client(args, to, &link, &resolver) {
            Ok(client) => Some((to.to_string(), client)),
            Err(exit) => return Ok(exit),
        },
        None => None,
    };
    let (lines, listening) = Lines::start(args, diag, &client, shadow);
    let status = Status::start(diag, lines.sources(args));
    let stop = CancellationToken::new();
    let joined = join(args, &link, store, &client, &lines, stop.clone());
    let served = Served::start(args, diag, &status, metrics, listening, config, &joined)?;
    if let Some(shown) = lines.shown() {
        shown.mirror.budget(served.server.budget_share());
    }
    let mut stopped = served.run(listener, tls).await?;
    stop.cancel();
    if let Some(forwarding) = joined.forwarder {
        let _ = forwarding.await;
    }
    if let Some(status) = &status {
        status.stop();
    }
    // Pass-through has drained with the server; a queue keeps what is pending for next time.
    client.destroy().await;
    let drained = stopped.drained(link.drain_timeout).await;
    let mirrored = lines.finish(drained, joined.recording).await;
    stopped.summary(diag, status, mirrored).await;
    Ok(Exit::Success)
}

/// The server's sink joined to the upstream link: the queue and its forwarder, or pass-through
/// (recording, mirroring).
struct Joined {
    sink: Arc<dyn Sink>,
    forwarder: Option<JoinHandle<()>>,
    recording: Option<Arc<Recorder>>,
    answers: Answers,
}

fn join(
    args: &RelayArgs,
    link: &mllp::client::LinkSettings,
    store: Option<Store>,
    client: &Arc<Client>,
    lines: &Lines,
    stop: CancellationToken,
) -> Joined {
    let gauges = &lines.gauges;
    let shown = lines.shown();
    match (&args.queue, store) {
        (Some(_), Some(store)) => {
            let wake = Arc::new(tokio::sync::Notify::new());
            let sink = Enqueue::new(store.clone(), args.max_queue, Arc::clone(&wake))
                .gauged(Arc::clone(gauges));
            let options = ForwardOptions {
                window: args.window,
                max_attempts: mllp::client::DEFAULT_MAX_RESENDS,
                retry_pause: link.backoff.initial.max(Duration::from_millis(50)),
                gauges: Arc::clone(gauges),
                mirror: shown.map(|shown| shown.mirror),
            };
            let forwarding = tokio::spawn(relay::forward(
                store,
                Arc::clone(client),
                options,
                wake,
                stop,
            ));
            Joined {
                sink: Arc::new(sink),
                forwarder: Some(forwarding),
                recording: None,
                answers: Answers::Committed,
            }
        }
        (_, store) => {
            let mut forward =
                Forward::new(Arc::clone(client), link.connect_timeout).gauged(Arc::clone(gauges));
            let mut recording = None;
            if let Some(store) = store {
                let recorder = Arc::new(Recorder::new(store));
                recording = Some(Arc::clone(&recorder));
                forward = forward.recording(recorder);
            }
            if let Some(shown) = shown {
                forward = forward.mirroring(shown.mirror);
            }
            // Pass-through commits nothing: a positive answer is the upstream's, passed on.
            Joined {
                sink: Arc::new(forward),
                forwarder: None,
                recording,
                answers: Answers::PassedOn,
            }
        }
    }
}

/// The server with its event renderer and the status's connection counter, ready to run.
struct Served {
    server: Server,
    renderers: Renderers,
}

/// What says the server's events: the renderer's thread, and the status's connection counter
/// and tick.
struct Renderers {
    renderer: std::thread::JoinHandle<()>,
    counting: Option<(JoinHandle<()>, JoinHandle<()>)>,
    answers: Answers,
}

impl Renderers {
    /// Wait for every event said.
    async fn join(self) {
        if let Some((counter, tick)) = self.counting {
            tick.abort();
            let _ = counter.await;
        }
        let renderer = self.renderer;
        let _ = tokio::task::spawn_blocking(move || renderer.join()).await;
    }
}

/// The server stopped: its figures, when its stop began, and what still says its events.
struct Stopped {
    snapshot: StatsSnapshot,
    stop_began: JoinHandle<tokio::time::Instant>,
    renderers: Renderers,
}

impl Stopped {
    /// Once every event is said: the stats, and the shadow's counts.
    async fn summary(
        self,
        diag: &Diag,
        status: Option<Arc<Status>>,
        mirrored: Option<(String, mllp::relay::Counts)>,
    ) {
        let answers = self.renderers.answers;
        self.renderers.join().await;
        if let Some(status) = status {
            status.finish();
        }
        crate::listen::render::stats(diag, &self.snapshot, None, answers);
        if let Some((to, counts)) = mirrored {
            super::mirror::summary(diag, &to, &counts);
        }
    }

    /// How long the stop has taken so far, at most `cap`: the shadow's drain gets no longer.
    async fn drained(&mut self, cap: Duration) -> Duration {
        let drained = match self.stop_began.is_finished() {
            true => (&mut self.stop_began)
                .await
                .map(|at| at.elapsed())
                .unwrap_or_default(),
            false => {
                self.stop_began.abort();
                Duration::ZERO
            }
        };
        drained.min(cap)
    }
}

impl Served {
    fn start(
        args: &RelayArgs,
        diag: &Diag,
        status: &Option<Arc<Status>>,
        metrics: Option<std::net::SocketAddr>,
        listening: oneshot::Sender<()>,
        config: mllp::server::ServerConfig,
        joined: &Joined,
    ) -> anyhow::Result<Served> {
        let (tx, rx) = tokio::sync::mpsc::channel(4096);
        // With a status drawn, the server's events pass a counter of open connections first.
        let (tx, counting) = match status {
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
            joined.answers,
            listening,
        )?;
        let server = Server::builder(config, Arc::clone(&joined.sink))
            .events(tx)
            .message_events(
                (!diag.quiet && crate::listen::render::stderr_is_read()) || metrics.is_some(),
            )
            .build()?;
        let renderers = Renderers {
            renderer,
            counting,
            answers: joined.answers,
        };
        Ok(Served { server, renderers })
    }

    /// Serve on `listener` until a signal.
    async fn run(
        self,
        listener: tokio::net::TcpListener,
        tls: Option<mllp::tls::TlsAcceptor>,
    ) -> anyhow::Result<Stopped> {
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
        let snapshot = crate::listen::run_server(&self.server, listener, tls, shutdown).await;
        signals.abort();
        Ok(Stopped {
            snapshot,
            stop_began,
            renderers: self.renderers,
        })
    }
}
