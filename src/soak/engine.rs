//! A soak run from start to report ([`SoakRun`]): start the peer (the embedded listener, or the
//! chaos proxy in front of a real one), one client and worker per connection and the monitor;
//! stop generating at the first of the duration, the message budget or [`SoakRun::stop`]; let
//! what was generated settle; then account and judge.

use super::monitor::{self, Conn};
use super::plan::{PlanError, SoakPlan, SoakTarget};
use super::progress::{SoakUpdate, StoppedBy};
use super::proxy::ChaosProxy;
use super::report::Accounting;
use super::worker::{Countdown, Worker, WorkerEnd};
use super::{ControlIds, Embedded, EmbeddedError, SoakReport};
use crate::client::{Client, OptionsError};
use crate::pace::Schedule;
use crate::tls::TlsConfigError;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::task::{JoinError, JoinHandle};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// Updates waiting for the caller before the run waits for it.
const UPDATES_QUEUED: usize = 256;

/// Why a run could not start, or could not finish its report.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SoakError {
    /// The plan does not pass [`SoakPlan::validate`].
    #[error(transparent)]
    Plan(#[from] PlanError),
    /// The embedded listener's directory for committed messages cannot be written.
    #[error("{}: not a writable directory for the embedded listener", dir.display())]
    OutDir {
        /// The directory given.
        dir: PathBuf,
        /// Why it cannot be written.
        #[source]
        source: std::io::Error,
    },
    /// The embedded listener could not be built or bound.
    #[error(transparent)]
    Embedded(EmbeddedError),
    /// The chaos proxy in front of a remote peer could not bind its loopback port.
    #[error("starting the chaos proxy")]
    Proxy(#[source] std::io::Error),
    /// The plan's TLS settings do not make a client configuration (a certificate or key that
    /// cannot be read, say).
    #[error(transparent)]
    Tls(#[from] TlsConfigError),
    /// The plan's link settings make invalid client options.
    #[error("--{}: {}", .0.option, .0.problem)]
    Client(OptionsError),
    /// A connection's worker panicked or was cancelled.
    #[error("a connection task failed")]
    Connection(#[source] JoinError),
    /// The monitor that counts the run's results panicked or was cancelled.
    #[error("the monitor task failed")]
    Monitor(#[source] JoinError),
    /// The task driving the run panicked or was cancelled.
    #[error("the run's task failed")]
    Run(#[source] JoinError),
}

/// How a run ended: its report, and whether a connection gave up (for an exit code).
#[derive(Debug, Clone)]
pub struct SoakOutcome {
    /// Accounting checked and thresholds judged.
    pub report: SoakReport,
    /// A connection gave up on a permanent cause (refused by TLS, say).
    pub permanent: bool,
    /// A connection gave up on a transient cause (its reconnect bound ran out).
    pub transient: bool,
}

/// A soak run under way: its updates, a way to stop it, and at the end its outcome.
///
/// Updates wait in a bounded queue: a caller that neither reads them ([`SoakRun::next_update`])
/// nor waits for the end ([`SoakRun::finish`]) holds the run up, and nothing is dropped.
/// Dropping the run stops generating; it then settles and ends on its own.
pub struct SoakRun {
    updates: mpsc::Receiver<SoakUpdate>,
    stop: CancellationToken,
    task: Option<JoinHandle<Result<SoakOutcome, SoakError>>>,
}

/// What the run's driver owns once everything has started.
struct Running {
    plan: SoakPlan,
    start: Instant,
    /// Cancelled by the caller.
    stop: CancellationToken,
    /// Cancelled by the driver: the workers stop generating, and their settle wait is bounded.
    halt: CancellationToken,
    generated_all: Countdown,
    workers: Vec<JoinHandle<WorkerEnd>>,
    monitor: JoinHandle<monitor::Monitored>,
    embedded: Option<Embedded>,
    proxy: Option<ChaosProxy>,
}

/// Where the messages go: the embedded listener, a chaos proxy before the remote peer, failover
/// hosts, or the peer itself; with what must be stopped or shared afterwards.
struct Peer {
    connector: Arc<dyn crate::transport::Connector>,
    embedded: Option<Embedded>,
    proxy: Option<ChaosProxy>,
    hosts: Option<Arc<crate::client::HostList>>,
}

impl Peer {
    async fn start(plan: &SoakPlan, ids: ControlIds) -> Result<Peer, SoakError> {
        let mut embedded = None;
        let mut proxy = None;
        let mut hosts = None;
        let connector: Arc<dyn crate::transport::Connector> = match &plan.target {
            SoakTarget::Embedded { out_dir } => {
                let listener = Embedded::start(
                    ids,
                    plan.connections,
                    out_dir.as_deref(),
                    plan.chaos.as_ref(),
                    plan.seed,
                )
                .await
                .map_err(|e| match e {
                    EmbeddedError::OutDir { dir, source } => SoakError::OutDir { dir, source },
                    e => SoakError::Embedded(e),
                })?;
                let port = listener.addr.port();
                embedded = Some(listener);
                plan.connector("127.0.0.1", port, "127.0.0.1")?
            }
            SoakTarget::Remote { host, port, .. } => match &plan.chaos {
                Some(spec) => {
                    let resolver = plan.resolver.clone();
                    let started =
                        ChaosProxy::start(host.clone(), *port, resolver, spec.clone(), plan.seed)
                            .await
                            .map_err(SoakError::Proxy)?;
                    let local = started.addr().port();
                    proxy = Some(started);
                    plan.connector("127.0.0.1", local, host)?
                }
                None => match plan.failover_connector(host, *port)? {
                    Some(list) => {
                        hosts = Some(list.clone());
                        list
                    }
                    None => plan.connector(host, *port, host)?,
                },
            },
        };
        Ok(Peer {
            connector,
            embedded,
            proxy,
            hosts,
        })
    }
}

/// One client per connection, over failover hosts with the reconnect policy per host.
fn clients(
    plan: &SoakPlan,
    connector: &Arc<dyn crate::transport::Connector>,
    hosts: Option<&Arc<crate::client::HostList>>,
) -> Result<Vec<Arc<Client>>, OptionsError> {
    (0..plan.connections)
        .map(|index| {
            let mut options = plan.client_options(index);
            // Over failover hosts the reconnect policy applies to each host in turn.
            if let Some(hosts) = hosts {
                options.reconnect.strategy = hosts.per_host(options.reconnect.strategy);
            }
            Client::new(connector.clone(), options).map(Arc::new)
        })
        .collect()
}

/// Connection `index`'s share of the messages, its schedule under a rate, and how long it waits
/// before starting under a ramp-up without one.
fn pacing(plan: &SoakPlan, index: usize) -> (Option<u64>, Option<Schedule>, Duration) {
    let n = plan.connections;
    let budget = plan
        .messages
        .map(|m| m / n as u64 + u64::from((index as u64) < m % n as u64));
    let ramp_up = plan.ramp_up.unwrap_or_default();
    let schedule = plan
        .rate
        .and_then(|rate| Schedule::new(rate, n, index, ramp_up));
    let delay_start = match (plan.rate, ramp_up.is_zero()) {
        (None, false) => ramp_up.mul_f64(index as f64 / n as f64),
        _ => Duration::ZERO,
    };
    (budget, schedule, delay_start)
}

impl SoakRun {
    /// Check the plan, start the peer, the connections and the monitor. Must be called inside
    /// a tokio runtime. Errors name the option at fault as the command line spells it.
    pub async fn start(plan: SoakPlan) -> Result<SoakRun, SoakError> {
        plan.validate()?;
        let ids = ControlIds::new(plan.seed ^ 0x5eed_cafe);
        let Peer {
            connector,
            mut embedded,
            proxy,
            hosts,
        } = Peer::start(&plan, ids).await?;
        let clients = clients(&plan, &connector, hosts.as_ref());
        let clients = match clients {
            Ok(clients) => clients,
            Err(e) => {
                // The listener's task would outlive a run that never starts.
                if let Some(listener) = embedded.take() {
                    listener.stop().await;
                }
                return Err(SoakError::Client(e));
            }
        };

        let stop = CancellationToken::new();
        let halt = CancellationToken::new();
        let generated_all = Countdown::new(plan.connections);
        let start = Instant::now();
        let (worker_updates, worker_rx) = mpsc::channel(1024);
        let templates = Arc::new(plan.templates.clone());
        let mut conns = Vec::new();
        let mut workers = Vec::new();
        for (index, client) in clients.into_iter().enumerate() {
            let (budget, schedule, delay_start) = pacing(&plan, index);
            let worker = Worker {
                index,
                client: client.clone(),
                templates: templates.clone(),
                ids,
                budget,
                schedule,
                delay_start,
                start,
                window: plan.window,
                stop: halt.clone(),
                countdown: generated_all.clone(),
                updates: worker_updates.clone(),
                ledger: embedded.as_ref().map(|e| e.ledger.clone()),
                settle_quiet: plan.settle_quiet(),
                drain_timeout: plan.link.drain_timeout,
                generated_counter: Arc::default(),
            };
            conns.push(Conn::new(client, worker.generated()));
            workers.push(tokio::spawn(worker.run()));
        }
        drop(worker_updates);
        let (updates, updates_rx) = mpsc::channel(UPDATES_QUEUED);
        let output = monitor::Output {
            updates: updates.clone(),
            sample_every: plan.sample_every,
            per_message: plan.per_message,
        };
        let monitor = tokio::spawn(monitor::run(worker_rx, conns, start, output));
        let running = Running {
            plan,
            start,
            stop: stop.clone(),
            halt,
            generated_all,
            workers,
            monitor,
            embedded,
            proxy,
        };
        Ok(SoakRun {
            updates: updates_rx,
            stop,
            task: Some(tokio::spawn(running.drive(updates))),
        })
    }

    /// The next update; `None` once the run has no more to say (it is then accounting).
    pub async fn next_update(&mut self) -> Option<SoakUpdate> {
        self.updates.recv().await
    }

    /// Stop generating. What was generated settles within the link's drain timeout; when the
    /// message budget was already spent, this cuts the wait for the last fates to that bound.
    pub fn stop(&self) {
        self.stop.cancel();
    }

    /// A token that stops the run when cancelled, for another task (a signal handler, say).
    pub fn stop_token(&self) -> CancellationToken {
        self.stop.clone()
    }

    /// Wait for the end (without stopping the run) and return its outcome. Updates not yet
    /// read are discarded.
    pub async fn finish(mut self) -> Result<SoakOutcome, SoakError> {
        self.updates.close();
        let task = self.task.take().expect("the task is taken only here");
        match task.await {
            Ok(outcome) => outcome,
            Err(e) => Err(SoakError::Run(e)),
        }
    }
}

impl Drop for SoakRun {
    fn drop(&mut self) {
        if self.task.is_some() {
            self.stop.cancel();
        }
    }
}

impl Running {
    async fn drive(mut self, updates: mpsc::Sender<SoakUpdate>) -> Result<SoakOutcome, SoakError> {
        let stopped_by = tokio::select! {
            _ = sleep_or_forever(self.plan.duration) => StoppedBy::Duration,
            _ = self.stop.cancelled() => StoppedBy::Interrupt,
            _ = self.generated_all.done() => StoppedBy::Messages,
        };
        let _ = updates.send(SoakUpdate::Stopping(stopped_by)).await;
        drop(updates);
        // Out of messages, the workers wait for every fate; `halt` would cut that wait to the
        // drain timeout, so it fires at once only for the duration or a stop, and otherwise
        // when the caller stops the run while the last fates settle.
        let relay = match stopped_by {
            StoppedBy::Messages => {
                let (stop, halt) = (self.stop.clone(), self.halt.clone());
                Some(tokio::spawn(async move {
                    stop.cancelled().await;
                    halt.cancel();
                }))
            }
            _ => {
                self.halt.cancel();
                None
            }
        };
        let mut ends = Vec::new();
        for w in self.workers.drain(..) {
            ends.push(w.await.map_err(SoakError::Connection)?);
        }
        if let Some(relay) = relay {
            relay.abort();
        }
        let elapsed = self.start.elapsed();
        let monitored = self.monitor.await.map_err(SoakError::Monitor)?;

        let mut tally = monitored.total();
        tally.elapsed = elapsed;
        let mut accounting = Accounting::default();
        for end in &ends {
            accounting.problems.extend(end.problems.iter().cloned());
        }
        if let Some(listener) = self.embedded.take() {
            listener.account(&tally, &ends, &mut accounting).await;
        }
        if let Some(proxy) = self.proxy.take() {
            proxy.stop();
        }
        let stopped_by = if monitored.permanent || monitored.transient {
            StoppedBy::GaveUp
        } else {
            stopped_by
        };
        let mut config = self.plan.config();
        config["stopped_by"] = serde_json::Value::from(stopped_by.as_str());
        let mut report = SoakReport::new(config, &tally, accounting);
        report.thresholds = self.plan.thresholds.evaluate(&report);
        Ok(SoakOutcome {
            report,
            permanent: monitored.permanent,
            transient: monitored.transient,
        })
    }
}

async fn sleep_or_forever(duration: Option<Duration>) {
    match duration {
        Some(d) => tokio::time::sleep(d).await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests;
