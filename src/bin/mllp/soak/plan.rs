//! The validated plan of a soak run, and its execution: start the peer (embedded listener or
//! chaos proxy), one client and worker per connection, the monitor, then stop, drain, account
//! and report.

use super::args::SoakArgs;
use super::{monitor, summary, view};
use crate::diag::Diag;
use anyhow::Context;
use mllp::client::{
    BackoffConfig, Client, ClientOptions, Correlation, ExponentialBackoff, GiveUpAfter, MaxRetries,
    OnBackpressure, Reconnect, RetryStrategy, Window,
};
use mllp::soak::report::Accounting;
use mllp::soak::worker;
use mllp::soak::{ChaosSpec, ControlIds, FaultKind, Schedule, SoakReport, Template, Thresholds};
use mllp::soak::{Embedded, EmbeddedError};
use mllp::transport::{Connector, TcpConnector};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// Where the load goes.
#[derive(Debug, Clone)]
pub enum Target {
    Embedded { out_dir: Option<PathBuf> },
    Remote { host: String, port: u16 },
}

pub struct Plan {
    pub connections: usize,
    pub rate: Option<f64>,
    pub duration: Option<Duration>,
    pub messages: Option<u64>,
    pub ramp_up: Duration,
    pub window: usize,
    pub templates: Arc<Vec<Template>>,
    pub target: Target,
    pub chaos: Option<ChaosSpec>,
    pub seed: u64,
    pub link: crate::netargs::LinkArgs,
    pub tls: crate::netargs::TlsArgs,
    pub report_path: Option<PathBuf>,
    pub json: bool,
    pub view: view::Mode,
    pub metrics: Option<std::net::SocketAddr>,
    pub thresholds: Thresholds,
    pub config: serde_json::Value,
}

/// What the run ended with, for the exit code.
pub struct Outcome {
    pub report: SoakReport,
    pub permanent: bool,
    pub transient: bool,
}

impl Plan {
    pub fn from_args(args: &SoakArgs, diag: &Diag) -> anyhow::Result<Plan> {
        if args.connections == 0 || args.connections > mllp::soak::ledger::MAX_CONNECTIONS {
            anyhow::bail!("--connections must be from 1 to 999");
        }
        if args.messages == Some(0) {
            anyhow::bail!("--messages must be at least 1");
        }
        let target = match &args.host {
            Some(host) => {
                let origin = crate::netargs::Origin::default();
                let (host, port) = crate::netargs::endpoint(host, args.port, origin)
                    .map_err(anyhow::Error::msg)?;
                Target::Remote { host, port }
            }
            None => {
                if args.tls.enabled() {
                    anyhow::bail!("TLS flags need --host: the embedded listener speaks plain TCP");
                }
                Target::Embedded {
                    out_dir: args.out_dir.clone(),
                }
            }
        };
        let templates = if args.template.is_empty() {
            if matches!(target, Target::Remote { .. }) && !args.allow_synthetic {
                anyhow::bail!(
                    "against a real --host the built-in synthetic message needs --allow-synthetic \
                     (fake patients must not reach a production engine by accident), or give --template FILE"
                );
            }
            vec![Template::builtin()]
        } else {
            let mut templates = Vec::new();
            for path in &args.template {
                let bytes = std::fs::read(path)
                    .with_context(|| format!("reading --template {}", path.display()))?;
                let template = Template::parse(&bytes)
                    .with_context(|| format!("--template {}", path.display()))?;
                templates.push(template);
            }
            templates
        };
        if let (Some(chaos), Target::Remote { .. }) = (&args.chaos, &target) {
            if chaos.get(FaultKind::Nack).is_some() {
                anyhow::bail!(
                    "--chaos nack needs the embedded listener: the proxy in front of a real --host \
                     forwards bytes and cannot forge the peer's ACKs"
                );
            }
        }
        let seed = args.seed.unwrap_or_else(rand::random);
        let view = view::Mode::choose(args, diag);
        let config = serde_json::json!({
            "target": match &target {
                Target::Embedded { .. } => "embedded".to_string(),
                Target::Remote { host, port } => mllp::target::Target {
                    host: host.clone(),
                    port: Some(*port),
                }
                .to_string(),
            },
            "connections": args.connections,
            "rate": args.rate,
            "duration_s": args.duration.map(|d| d.as_secs_f64()),
            "messages": args.messages,
            "ramp_up_s": args.ramp_up.map(|d| d.as_secs_f64()),
            "window": args.window,
            "templates": if args.template.is_empty() {
                vec!["built-in ADT^A01".to_string()]
            } else {
                args.template.iter().map(|p| p.display().to_string()).collect()
            },
            "correlation": "control-id",
            "tls": args.tls.enabled(),
            "chaos": args.chaos,
            // A string: JSON readers that hold numbers as doubles (jq) would round a u64.
            "seed": seed.to_string(),
            "ack_timeout_s": args.link.ack_timeout.as_secs_f64(),
            "drain_timeout_s": args.link.drain_timeout.as_secs_f64(),
        });
        Ok(Plan {
            connections: args.connections,
            rate: args.rate,
            duration: args.duration,
            messages: args.messages,
            ramp_up: args.ramp_up.unwrap_or_default(),
            window: args.window,
            templates: Arc::new(templates),
            target,
            chaos: args.chaos.clone(),
            seed,
            link: args.link.clone(),
            tls: args.tls.clone(),
            report_path: args.report.clone(),
            json: args.json,
            view,
            metrics: args.metrics,
            thresholds: args.thresholds(),
            config,
        })
    }

    fn client_options(&self, index: usize) -> ClientOptions {
        let link = &self.link;
        let backoff = BackoffConfig {
            initial: link.backoff_initial,
            multiplier: link.backoff_multiplier,
            max: link.backoff_max,
            jitter: link.backoff_jitter,
        };
        let mut strategy: Arc<dyn RetryStrategy> = Arc::new(GiveUpAfter {
            inner: Arc::new(ExponentialBackoff::seeded(
                backoff,
                self.seed.wrapping_add(index as u64),
            )),
            limit: link.give_up_after,
        });
        if let Some(max) = link.max_retries {
            strategy = Arc::new(MaxRetries {
                inner: strategy,
                max,
            });
        }
        ClientOptions {
            ack_timeout: link.ack_timeout,
            app_ack_timeout: link.app_ack_timeout,
            drain_timeout: link.drain_timeout,
            dead_peer_timeout: link.dead_peer_timeout,
            reconnect: Reconnect {
                enabled: !link.no_reconnect,
                strategy,
            },
            correlation: Correlation::ControlId,
            window: Window {
                count: Some(self.window),
                bytes: None,
            },
            on_backpressure: OnBackpressure::Reject,
            ..ClientOptions::default()
        }
    }

    /// The connector for `host:port` (the embedded listener, the proxy, or the peer); TLS is
    /// verified against `tls_host`, the real peer's name.
    fn connector(
        &self,
        host: &str,
        port: u16,
        tls_host: &str,
    ) -> anyhow::Result<Arc<dyn Connector>> {
        let mut connector = TcpConnector::new(host, port)
            .with_resolver(crate::netargs::resolver()?)
            .with_connect_timeout(self.link.connect_timeout);
        if let Some(interval) = self.link.keepalive {
            connector = connector.with_keepalive(interval);
        }
        if let Some(tls) = self.tls.options() {
            connector = connector.with_tls(tls.build(tls_host)?);
        }
        Ok(Arc::new(connector))
    }
}

pub async fn execute(plan: Plan, diag: &Diag) -> anyhow::Result<Outcome> {
    let ids = ControlIds::new(plan.seed ^ 0x5eed_cafe);
    let mut embedded = None;
    let mut proxy = None;
    let connector = match &plan.target {
        Target::Embedded { out_dir } => {
            let listener = Embedded::start(
                ids,
                plan.connections,
                out_dir.as_deref(),
                plan.chaos.as_ref(),
                plan.seed,
            )
            .await
            .map_err(|e| match e {
                // Named by its flag, as the user wrote it.
                EmbeddedError::OutDir { dir, source } => anyhow::Error::new(source).context(
                    format!("--out-dir {}: not a writable directory", dir.display()),
                ),
                e => e.into(),
            })?;
            let port = listener.addr.port();
            embedded = Some(listener);
            plan.connector("127.0.0.1", port, "127.0.0.1")?
        }
        Target::Remote { host, port } => match &plan.chaos {
            Some(spec) => {
                let started = mllp::soak::proxy::ChaosProxy::start(
                    host.clone(),
                    *port,
                    crate::netargs::resolver()?,
                    spec.clone(),
                    plan.seed,
                )
                .await
                .context("starting the chaos proxy")?;
                let local = started.addr().port();
                proxy = Some(started);
                plan.connector("127.0.0.1", local, host)?
            }
            None => plan.connector(host, *port, host)?,
        },
    };
    if let Some(addr) = plan.metrics {
        monitor::install_metrics(addr)?;
    }

    let stop = CancellationToken::new();
    let generated_all = worker::Countdown::new(plan.connections);
    let start = Instant::now();
    let (updates, updates_rx) = tokio::sync::mpsc::channel(1024);
    let mut conns = Vec::new();
    let mut workers = Vec::new();
    for index in 0..plan.connections {
        let client = Arc::new(
            Client::new(connector.clone(), plan.client_options(index))
                .map_err(|e| anyhow::anyhow!("--{}: {}", e.option, e.problem))?,
        );
        let budget = plan.messages.map(|n| {
            let c = plan.connections as u64;
            n / c + u64::from((index as u64) < n % c)
        });
        let schedule = plan
            .rate
            .and_then(|rate| Schedule::new(rate, plan.connections, index, plan.ramp_up));
        let delay_start = match (plan.rate, plan.ramp_up.is_zero()) {
            (None, false) => plan.ramp_up.mul_f64(index as f64 / plan.connections as f64),
            _ => Duration::ZERO,
        };
        let worker = worker::Worker {
            index,
            client: client.clone(),
            templates: plan.templates.clone(),
            ids,
            budget,
            schedule,
            delay_start,
            start,
            window: plan.window,
            stop: stop.clone(),
            countdown: generated_all.clone(),
            updates: updates.clone(),
            ledger: embedded.as_ref().map(|e| e.ledger.clone()),
            settle_quiet: plan.link.ack_timeout
                + plan.link.give_up_after
                + plan.link.connect_timeout,
            drain_timeout: plan.link.drain_timeout,
            generated_counter: Arc::default(),
        };
        conns.push(monitor::Conn::new(client, worker.generated()));
        workers.push(tokio::spawn(worker.run()));
    }
    drop(updates);
    let monitor = tokio::spawn(monitor::run(
        updates_rx,
        conns,
        plan.view,
        start,
        diag.clone(),
    ));

    // Stop generating at the first of: the duration, Ctrl-C, every worker out of messages.
    let stopped_by = tokio::select! {
        _ = sleep_or_forever(plan.duration) => "duration",
        _ = tokio::signal::ctrl_c() => "interrupt",
        _ = generated_all.done() => "messages",
    };
    if stopped_by == "interrupt" && !diag.quiet {
        diag.event(
            "interrupted",
            || "mllp: interrupted: draining, then reporting".into(),
            serde_json::json!({ "message": "draining, then reporting" }),
        );
    }
    // Out of messages, the workers wait for every fate; `stop` would cut that wait to the drain
    // timeout, so it fires only for the duration or Ctrl-C (also while the last fates settle).
    let interrupt = if stopped_by == "messages" {
        let stop = stop.clone();
        Some(tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                stop.cancel();
            }
        }))
    } else {
        stop.cancel();
        None
    };
    let mut ends = Vec::new();
    for w in workers.drain(..) {
        ends.push(w.await.context("a connection task failed")?);
    }
    if let Some(interrupt) = interrupt {
        interrupt.abort();
    }
    let elapsed = start.elapsed();
    let monitored = monitor.await.context("the monitor task failed")?;

    let mut tally = monitored.total();
    tally.elapsed = elapsed;
    let mut accounting = Accounting::default();
    for end in &ends {
        accounting.problems.extend(end.problems.iter().cloned());
    }
    if let Some(listener) = embedded.take() {
        listener.account(&tally, &ends, &mut accounting).await;
    }
    if let Some(proxy) = proxy.take() {
        proxy.stop();
    }
    let stopped_by = if monitored.permanent || monitored.transient {
        "gave-up"
    } else {
        stopped_by
    };
    let mut config = plan.config.clone();
    config["stopped_by"] = serde_json::Value::from(stopped_by);
    let mut report = SoakReport::new(config, &tally, accounting);
    report.thresholds = plan.thresholds.evaluate(&report);
    if let Some(path) = &plan.report_path {
        let text = serde_json::to_string_pretty(&report)?;
        std::fs::write(path, text + "\n")
            .with_context(|| format!("writing --report {}", path.display()))?;
    }
    // A closed stdout loses only the copy for the reader who left: the run keeps its exit code.
    let _ = match plan.json {
        true => crate::stdout::line(serde_json::to_string(&report)?),
        false => crate::stdout::write_all(summary::human(&report).as_bytes()),
    };
    Ok(Outcome {
        permanent: monitored.permanent,
        transient: monitored.transient,
        report,
    })
}

async fn sleep_or_forever(duration: Option<Duration>) {
    match duration {
        Some(d) => tokio::time::sleep(d).await,
        None => std::future::pending().await,
    }
}
