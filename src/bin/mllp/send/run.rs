//! `send`'s run, a straight line: the flags made a plan (`plan`), the whole input checked before
//! the first byte (`inputs`), the client built, then the run over one link or several on a
//! runtime of its own (`single`, `links`), rendered as it goes (`drive`, `render`, `live`), and
//! the exit code (`summary`).

use super::args::{CorrelateArg, SendArgs};
use super::inputs::{self, Inputs};
use super::live::Live;
use super::plan::{self, Plan};
use super::render::Output;
use super::{accept, dry_run, failover, links, single};
use crate::diag::{Diag, Fatal};
use crate::exit::Exit;
use crate::netargs;
use anyhow::Context;
use mllp::client::{Client, ClientOptions};
use mllp::delivery::{FailedOut, Input, RunOptions};
use mllp::input::{InputSet, InputSource};
use mllp::transport::Connector;
use std::sync::Arc;

pub fn run(args: SendArgs, diag: &Diag) -> anyhow::Result<Exit> {
    let started = std::time::Instant::now();
    let mut plan = match plan::plan(&args, diag.verbose > 0) {
        Ok(plan) => plan,
        Err(refused) => return Ok(refused.report()),
    };
    let Inputs {
        mut set,
        width,
        sources,
        checked,
    } = match inputs::check(&args, &plan, diag) {
        Ok(inputs) => inputs,
        Err(exit) => return Ok(exit),
    };
    if args.dry_run {
        return dry_run::list(set, &args, diag, width);
    }
    // A streamed stdin can be read only once: its messages are refused one by one instead.
    if args.correlate == CorrelateArg::Fifo && !args.stream {
        if let Some(exit) = inputs::refuse_two_phase(&mut set) {
            return Ok(exit);
        }
    }
    let failed_out = match failed_out(&args, &sources) {
        Ok(failed_out) => failed_out,
        Err(exit) => return Ok(exit),
    };
    let connector = match connector(&args, &mut plan, diag)? {
        Ok(connector) => connector,
        Err(exit) => return Ok(exit),
    };
    let messages = (!checked.unvalidated_stdin).then_some(checked.messages);
    let options = RunOptions {
        rate: plan.rate,
        // Counted from the start, input checking included.
        deadline: plan
            .timeout
            .map(|d| tokio::time::Instant::from_std(started + d)),
        messages,
        failed_out,
    };
    let mut output = Output::new(&args, diag, width);
    let live = Live::new(&args, diag, messages, &plan);
    output.around(live.bar());
    deliver(&args, plan, set, connector, options, output, live)
}

/// `--failed-out DIR`, created empty; `Err`: the exit once its refusal is reported.
fn failed_out(args: &SendArgs, sources: &[InputSource]) -> Result<Option<FailedOut>, Exit> {
    let Some(dir) = &args.failed_out else {
        return Ok(None);
    };
    FailedOut::create(dir, sources).map(Some).map_err(|err| {
        Fatal::new(Exit::Usage, format!("--failed-out {err}"))
            .then(
                "nothing was sent; give each run a new directory \
                 (send retry1 --failed-out retry2, then retry2 --failed-out retry3)",
            )
            .report()
    })
}

/// The link's connector: TLS built for the first host, then the failover hosts behind it, or
/// under `--accept` the connection the engine opens.
fn connector(
    args: &SendArgs,
    plan: &mut Plan,
    diag: &Diag,
) -> anyhow::Result<Result<Arc<dyn Connector>, Exit>> {
    let tls = match args.tls.options().map(|o| o.build(&plan.host)).transpose() {
        Ok(tls) => tls,
        Err(err) => {
            return Ok(Err(Fatal::new(
                Exit::Permanent,
                format!("TLS configuration: {err}"),
            )
            .then("nothing was sent")
            .report()))
        }
    };
    let primary = args
        .link
        .settings()
        .connector(&plan.host, plan.port, tls, netargs::resolver()?);
    let connector = match failover::connector(args, primary, &mut plan.client)? {
        Ok(connector) => connector,
        Err(err) => {
            return Ok(Err(Fatal::new(Exit::Usage, err)
                .then("nothing was sent")
                .report()))
        }
    };
    let endpoint = std::mem::take(&mut plan.endpoint);
    Ok(
        accept::connector(args, connector, endpoint, diag)?.map(|(connector, endpoint)| {
            plan.endpoint = endpoint;
            connector
        }),
    )
}

/// The run itself, on one thread: the link, the producer and the collector hand each message
/// along without cross-thread wake-ups; file reading has its own thread.
fn deliver(
    args: &SendArgs,
    plan: Plan,
    set: InputSet,
    connector: Arc<dyn Connector>,
    options: RunOptions,
    output: Output,
    live: Live,
) -> anyhow::Result<Exit> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the runtime")?;
    let (order_key, connections, stream) = (args.order_key, args.connections, args.stream);
    let client_options: ClientOptions = plan.client;
    let end = runtime.block_on(async move {
        let input = match plan.store {
            Some(plan::Replay {
                file,
                filter,
                gaps: Some(gaps),
            }) => super::replay::paced(set, (file, filter), gaps, options.deadline),
            _ => Input::from_set(set, stream),
        };
        if let Some(key) = order_key {
            let clients = (0..connections)
                .map(|_| Client::new(connector.clone(), client_options.clone()))
                .collect::<Result<Vec<_>, _>>()?;
            let rendering = tokio::spawn(links::run(clients, input, options, key, output, live));
            return rendering.await.context("the run's task ended abnormally");
        }
        let client = Client::new(connector, client_options)?;
        // A task of its own: woken by every outcome, the thread's top-level future would make
        // the runtime poll for I/O once more per message before it sleeps.
        let rendering = tokio::spawn(single::run(client, input, options, output, live));
        rendering.await.context("the run's task ended abnormally")
    })?;
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    Ok(end)
}
