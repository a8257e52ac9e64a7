//! `send`'s run: the whole input checked before the first byte, the client built from the
//! flags, then the run over one link or several on a runtime of its own, and the exit code.

use super::args::{CorrelateArg, PaceArg, SendArgs};
use super::{dry_run, links, live, render, replay, single, summary};
use crate::diag::{Diag, Fatal};
use crate::exit::Exit;
use crate::netargs;
use anyhow::Context;
use mllp::client::{Client, Correlation, OnBackpressure, Window};
use mllp::delivery::{FailedOut, Input, RunOptions};
use mllp::input::{
    collect_inputs, ControlIds, InputError, InputOptions, InputSet, SplitOptions, StoreFilter,
};
use mllp::pace::RecordedGaps;
use mllp::target::Target;
use std::io::IsTerminal;

/// FIFO pairs replies with messages in order; a message whose MSH-16 asks for an application
/// ACK gets two replies, and the second would be credited to the next message.
fn refuse_two_phase(set: &mut InputSet) -> Option<Exit> {
    let message = set
        .messages()
        .filter_map(Result::ok)
        .find(|m| mllp::client::asks_for_application_ack(&m.payload))?;
    let error = format!(
        "{}#{}: its MSH-16 asks for an application ACK, so it may get two replies, which \
         --correlate fifo cannot pair with it; use --correlate control-id",
        message.source, message.index
    );
    Some(
        Fatal::new(Exit::Usage, error)
            .then("nothing was sent")
            .report(),
    )
}

/// An input refused at the check, with the flag that helps where one does.
pub fn refusal(err: &InputError) -> String {
    match err {
        InputError::EmptyControlId { .. } => format!(
            "{err}; --fresh-control-ids gives every message a unique one (its record keeps the \
             original)"
        ),
        InputError::MessageTooLarge { .. } => {
            format!("{err} (--max-frame-size); the receiver must take frames that large too")
        }
        InputError::SeveralMessages { .. } => {
            format!("{err}; --batch sends a batch envelope (FHS/BHS ... BTS/FTS) as one message")
        }
        InputError::NotAMessage { .. } => format!(
            "{err}; choose rows that leave it out (--since, --until, --type, --control-id, \
             --status)"
        ),
        InputError::IsDirectory { .. } => {
            format!("{err}; pass --recursive to send the files inside it")
        }
        InputError::StdinTooLarge { .. } => format!(
            "{err} (--max-input); raise --max-input, or pass --stream to send without checking \
             first"
        ),
        _ => err.to_string(),
    }
}

/// Where the link goes, for the lines that say so.
#[derive(Debug, Clone)]
pub struct Plan {
    /// `host:port`, for the lines that say where the link goes.
    pub endpoint: String,
    /// When reconnecting stops, for the first failure's line.
    pub gives_up: String,
}

/// What to say when there is nothing to read: stdin is a terminal and no file was named.
const NO_INPUT: &str = "no input: name the files or directories to send \
    (mllp send adt/*.hl7 --host HOST), or pipe messages in (cat adt.hl7 | mllp send --host HOST); \
    `-` reads the terminal itself, ended by Ctrl-D";

pub fn run(args: SendArgs, diag: &Diag) -> anyhow::Result<Exit> {
    let started = std::time::Instant::now();
    let input_error = |err: &dyn std::fmt::Display| {
        Ok(Fatal::new(Exit::Usage, err)
            .then("nothing was sent")
            .report())
    };
    let refused = |err: &InputError| input_error(&refusal(err));
    if args.files.is_empty() && args.from_db.is_none() && std::io::stdin().is_terminal() {
        return input_error(&NO_INPUT);
    }
    let (host, port) = match args.host.first() {
        Some(target) => match netargs::endpoint(target, args.port, args.origin) {
            Ok(endpoint) => endpoint,
            Err(err) => return input_error(&err),
        },
        // Only a dry run goes without a host.
        None => (
            String::new(),
            args.port.unwrap_or(mllp::target::DEFAULT_PORT),
        ),
    };
    let options = InputOptions {
        split: SplitOptions {
            raw: args.raw,
            batch: args.batch,
            max_message: usize::try_from(args.max_frame_size).unwrap_or(usize::MAX),
        },
        max_input: args.max_input,
        stream: args.stream,
        control_ids: if args.fresh_control_ids {
            ControlIds::fresh_now()
        } else {
            ControlIds::AsGiven
        },
    };
    let filters = mllp::hl7::Filters {
        filters: args.filters.clone(),
        charset: None,
    };
    let mut gaps = None;
    // What --failed-out must not hold.
    let mut inputs = Vec::new();
    let (mut set, width) = match &args.from_db {
        Some(file) => {
            let filter = StoreFilter {
                since: args.since,
                until: args.until,
                message_type: args.message_type.clone(),
                control_id: args.control_id.clone(),
                statuses: args.status.clone(),
                select: filters.clone(),
            };
            let width = match replay::opened(file, &filter) {
                Ok(width) => width,
                Err(exit) => return Ok(exit),
            };
            if args.pace == Some(PaceArg::Original) {
                let recorded = RecordedGaps::new(args.speed, args.max_gap);
                gaps = Some(((file.clone(), filter.clone()), recorded));
            }
            inputs.push(mllp::input::InputSource::File(file.clone()));
            (InputSet::of_store(file.clone(), filter, options), width)
        }
        None => {
            let sources = match collect_inputs(&args.files, args.recursive) {
                Ok(sources) => sources,
                Err(err) => return refused(&err),
            };
            let width = summary::label_width(&sources);
            inputs.clone_from(&sources);
            match InputSet::prepare(sources, options) {
                Ok(set) => (set.with_filters(filters), width),
                Err(err) => return refused(&err),
            }
        }
    };
    let checked = match set.validate() {
        Ok(summary) => summary,
        Err(err) => return refused(&err),
    };
    if checked.filtered > 0 {
        super::summary::filtered(diag, checked.filtered, checked.messages);
    }
    if args.connections > 1 && args.order_key.is_none() {
        let error = format!(
            "--connections {} needs --order-key, which says what order is kept: \
             --order-key PID-3 (or any field path, PID-3.1) keeps each patient's messages in \
             file order; --order-key none sends each connection's share in file order, with no \
             order across connections",
            args.connections
        );
        return Ok(Fatal::new(Exit::Usage, error)
            .then("nothing was sent")
            .report());
    }
    if args.check_hl7 {
        if let Some(exit) = crate::check::refuse_ill_formed(&mut set, diag) {
            return Ok(exit);
        }
    }
    if args.dry_run {
        return dry_run::list(set, &args, diag, width);
    }
    // A streamed stdin can be read only once: its messages are refused one by one instead.
    if args.correlate == CorrelateArg::Fifo && !args.stream {
        if let Some(exit) = refuse_two_phase(&mut set) {
            return Ok(exit);
        }
    }
    let failed_out = match &args.failed_out {
        Some(dir) => match FailedOut::create(dir, &inputs) {
            Ok(f) => Some(f),
            Err(err) => {
                return Ok(Fatal::new(Exit::Usage, format!("--failed-out {err}"))
                    .then(
                        "nothing was sent; give each run a new directory \
                         (send retry1 --failed-out retry2, then retry2 --failed-out retry3)",
                    )
                    .report())
            }
        },
        None => None,
    };
    let tls = match args.tls.options() {
        Some(options) => match options.build(&host) {
            Ok(tls) => Some(tls),
            Err(err) => {
                return Ok(
                    Fatal::new(Exit::Permanent, format!("TLS configuration: {err}"))
                        .then("nothing was sent")
                        .report(),
                )
            }
        },
        None => None,
    };
    let mut client_options = args.link.settings().client_options();
    client_options.correlation = match args.correlate {
        CorrelateArg::Fifo => Correlation::Fifo,
        CorrelateArg::ControlId => Correlation::ControlId,
    };
    client_options.window = Window {
        count: Some(args.window),
        bytes: args.window_bytes.map(|b| b.min(usize::MAX as u64) as usize),
    };
    client_options.on_backpressure = OnBackpressure::Wait;
    client_options.pipeline = !args.no_pipeline;
    client_options.event_capacity = 4096;
    client_options.max_resends = args.max_resends;
    client_options.at_least_once = args.at_least_once;
    client_options.max_poison_closes = args.max_poison_closes;
    client_options.retry_on = args.retry_on.clone();
    if args.mllp2 {
        client_options.release = mllp::framing::Release::Two;
    }
    if let Err(err) = client_options.validate() {
        return Ok(Fatal::new(Exit::Usage, err).report());
    }
    client_options.write_events = diag.verbose > 0;
    let primary = args
        .link
        .settings()
        .connector(&host, port, tls, netargs::resolver()?);
    let connector = match super::failover::connector(&args, primary, &mut client_options)? {
        Ok(connector) => connector,
        Err(err) => return input_error(&err),
    };
    let endpoint = Target {
        host,
        port: Some(port),
    }
    .to_string();
    let (connector, endpoint) = match super::accept::connector(&args, connector, endpoint, diag)? {
        Ok(accepting) => accepting,
        Err(exit) => return Ok(exit),
    };
    let options = RunOptions {
        rate: args.rate,
        // Counted from the start, input checking included.
        deadline: args
            .timeout
            .map(|d| tokio::time::Instant::from_std(started + d)),
        messages: (!checked.unvalidated_stdin).then_some(checked.messages),
        failed_out,
    };
    let plan = Plan {
        endpoint,
        gives_up: args.link.gives_up(),
    };
    let mut output = render::Output::new(&args, diag, width);
    let live = live::Live::new(
        &args,
        diag,
        (!checked.unvalidated_stdin).then_some(checked.messages),
        &plan,
    );
    output.around(live.bar());
    // One thread: the link, the producer and the collector hand each message along without
    // cross-thread wake-ups; file reading has its own thread.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the runtime")?;
    let (order_key, connections) = (args.order_key, args.connections);
    let stream = args.stream;
    let end = runtime.block_on(async move {
        let input = match gaps {
            Some((store, recorded)) => replay::paced(set, store, recorded, options.deadline),
            None => Input::from_set(set, stream),
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

#[cfg(test)]
mod tests {
    use super::refusal;
    use mllp::input::InputError;

    #[test]
    fn refusals_name_the_flag_that_helps() {
        let dir = refusal(&InputError::IsDirectory { path: "in".into() });
        assert_eq!(
            dir,
            "in: is a directory; pass --recursive to send the files inside it"
        );
        let stdin = refusal(&InputError::StdinTooLarge { max: 100 });
        assert!(
            stdin.contains("(--max-input); raise --max-input"),
            "{stdin}"
        );
        assert!(stdin.contains("--stream"), "{stdin}");
    }
}
