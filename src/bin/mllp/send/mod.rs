//! `mllp send`: flags, input checking before the first byte, the client, and the exit code.

mod dry_run;
mod links;
mod live;
mod output;
mod replay;
mod run;
mod signals;
mod summary;

use crate::cli::global::heading;
use crate::diag::{Diag, Fatal};
use crate::exit::Exit;
use crate::manual::SEND;
use crate::netargs::{self, LinkArgs, Origin, TlsArgs};
use crate::values;
use anyhow::Context;
use clap::{Args, ValueEnum};
use mllp::client::{Client, Correlation, OnBackpressure, Window};
use mllp::delivery::{FailedOut, Input, OrderKey, RunOptions};
use mllp::input::{
    collect_inputs, ControlIds, InputError, InputOptions, InputSet, SplitOptions, StoreFilter,
    StoreRows,
};
use mllp::target::Target;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CorrelateArg {
    /// Each reply answers the oldest unanswered message (for peers whose MSA-2 cannot be trusted).
    Fifo,
    /// MSA-2 names the message's MSH-10; ACKs may come in any order; enhanced mode.
    ControlId,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ProgressArg {
    /// When stderr is a terminal, and not under --json or --quiet.
    Auto,
    /// Always, even when stderr is not a terminal (never under --log-format json).
    Always,
    /// Never.
    Never,
}

/// How a replay is paced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PaceArg {
    /// The gaps between the messages' recorded arrival times.
    Original,
}

#[derive(Debug, Args)]
#[command(
    after_help = SEND.short_after_help(),
    after_long_help = SEND.long_after_help(),
    // The host may come from the environment, and FILES may be left out (stdin).
    override_usage = "mllp send [OPTIONS] --host <HOST[:PORT]> [FILES]...\n       \
                      MLLP_HOST=<HOST[:PORT]> mllp send [OPTIONS] [FILES]..."
)]
pub struct SendArgs {
    /// Files, globs or directories (with --recursive); `-` or none reads stdin.
    #[arg(value_name = "FILES")]
    pub files: Vec<String>,

    /// Walk directories given as inputs.
    #[arg(short, long, help_heading = heading::INPUT)]
    pub recursive: bool,
    /// Send segment terminators as they are (no CRLF/LF -> CR).
    #[arg(long, help_heading = heading::INPUT)]
    pub raw: bool,
    /// Send each batch envelope (FHS/BHS ... BTS/FTS) as one frame.
    ///
    /// Without it, a batch is split into its messages, each sent and acknowledged on its own.
    #[arg(long, help_heading = heading::INPUT)]
    pub batch: bool,
    /// Read stdin as it comes, endlessly, without checking it first.
    ///
    /// A message goes when the next MSH starts, or once stdin has been quiet for 300ms after
    /// one of its line ends, so the last message of a live feed does not wait for the next
    /// one. A frame (VT ... FS) goes at its FS.
    #[arg(long, help_heading = heading::INPUT)]
    pub stream: bool,
    /// Largest message sent (K, M, G).
    ///
    /// A larger one is refused at the check, before anything is sent. Receivers refuse frames past their own limit (listen's --max-frame-size, 16MiB too).
    #[arg(long, value_name = "SIZE", value_parser = values::size(), default_value = "16MiB", help_heading = heading::INPUT)]
    pub max_frame_size: u64,
    /// Give every message a unique MSH-10 of its own.
    ///
    /// For inputs whose messages lack control IDs or share them (sample files): the ID is the
    /// run's start time in base 36 followed by the message's place in the run (000001 on), so
    /// reruns get new ones too. The records keep the input's MSH-10 (in --json, the field
    /// original_control_id).
    #[arg(long, help_heading = heading::INPUT)]
    pub fresh_control_ids: bool,
    /// Most bytes of stdin spooled for checking (K, M, G).
    #[arg(long, value_name = "SIZE", value_parser = values::size(), default_value = "1G", help_heading = heading::INPUT)]
    pub max_input: u64,
    /// Replay a listen --sqlite or relay store, in arrival order.
    ///
    /// Each message is named by its row (`rx.db#17`). --since, --until, --type and
    /// --control-id choose the rows; --pace original keeps the recorded gaps.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["files", "stream", "recursive"], help_heading = heading::INPUT)]
    pub from_db: Option<PathBuf>,
    /// With --from-db: rows that arrived at TIME (RFC 3339, UTC) or later.
    #[arg(long, value_name = "TIME", value_parser = values::instant(), requires = "from_db", help_heading = heading::INPUT)]
    pub since: Option<std::time::SystemTime>,
    /// With --from-db: rows that arrived before TIME (RFC 3339, UTC).
    #[arg(long, value_name = "TIME", value_parser = values::instant(), requires = "from_db", help_heading = heading::INPUT)]
    pub until: Option<std::time::SystemTime>,
    /// With --from-db: messages of this MSH-9, by leading components.
    ///
    /// `ADT^A08` matches `ADT^A08` and `ADT^A08^ADT_A01`.
    #[arg(long = "type", value_name = "MSH-9", requires = "from_db", help_heading = heading::INPUT)]
    pub message_type: Option<String>,
    /// With --from-db: the message with this MSH-10.
    #[arg(long, value_name = "ID", requires = "from_db", help_heading = heading::INPUT)]
    pub control_id: Option<String>,
    /// With --from-db: `original` keeps the recorded gaps.
    #[arg(long, value_name = "PACE", value_enum, hide_possible_values = true, requires = "from_db", help_heading = heading::INPUT)]
    pub pace: Option<PaceArg>,
    /// With --pace original: the gaps this many times shorter.
    #[arg(long, value_name = "FACTOR", default_value_t = 1.0, value_parser = values::speed(), requires = "pace", help_heading = heading::INPUT)]
    pub speed: f64,
    /// Check and list what would be sent; connect to nothing.
    ///
    /// Every input is read and checked; each message is listed with its source, MSH-10, MSH-9
    /// and size, then the count. Exit 0, or 2 when an input is refused.
    #[arg(long, help_heading = heading::INPUT)]
    pub dry_run: bool,

    /// Where to send: HOST or HOST:PORT.
    ///
    /// IPv6 in brackets: [fd00::7]:2575. A port both here and in --port is a usage error, and
    /// so is a string that cannot be a host name or address.
    #[arg(long, value_name = "HOST[:PORT]", env = "MLLP_HOST", value_parser = values::target(), required_unless_present = "dry_run", help_heading = heading::CONNECTION)]
    pub host: Option<Target>,
    /// Port, when --host has none [default: 2575].
    #[arg(long, value_name = "PORT", env = "MLLP_PORT", value_parser = values::port(), help_heading = heading::CONNECTION)]
    pub port: Option<u16>,
    /// Where --host and --port came from (flags or environment); set after parsing.
    #[arg(skip)]
    pub origin: Origin,
    #[command(flatten)]
    pub link: LinkArgs,
    #[command(flatten)]
    pub tls: TlsArgs,

    /// How ACKs are matched to messages (see --help).
    ///
    /// control-id: MSA-2 names the message's MSH-10, ACKs may come in any order, enhanced mode
    /// works. fifo: each reply answers the oldest unanswered message, for peers whose MSA-2
    /// cannot be trusted. See the correlation and resend policy.
    #[arg(long, value_name = "MODE", value_enum, hide_possible_values = true, default_value_t = CorrelateArg::ControlId, help_heading = heading::FLOW)]
    pub correlate: CorrelateArg,
    /// Messages written and not yet acknowledged, at most.
    #[arg(long, value_name = "N", default_value = "64", value_parser = values::at_least_one(), help_heading = heading::FLOW)]
    pub window: usize,
    /// Payload bytes written and not yet acknowledged, at most.
    #[arg(long, value_name = "SIZE", value_parser = values::size(), help_heading = heading::FLOW)]
    pub window_bytes: Option<u64>,
    /// One message at a time: write, wait for its ACK, then the next.
    #[arg(long, help_heading = heading::FLOW)]
    pub no_pipeline: bool,
    /// Connections side by side; above 1 needs --order-key.
    ///
    /// Each connection has its own reconnects, window and backpressure; every message still
    /// has exactly one outcome, and the summary gives each connection's share. --window is per
    /// connection, --rate shared among them.
    #[arg(long, value_name = "N", default_value = "1", value_parser = values::at_least_one(), help_heading = heading::FLOW)]
    pub connections: usize,
    /// What keeps order over --connections: PID-3, any SEG-n[.c], or none.
    ///
    /// FIELD: messages with the same value of the field (PID-3: the same patient) go over one
    /// connection, in file order, and none is written before every earlier one with that value
    /// has its final answer, across reconnects and resends; different values go in parallel,
    /// in no order between them. A message without the field (segment absent or too short)
    /// has the empty value, like an empty field: all such messages share one connection and
    /// keep their order among themselves. `none`: each message goes to the least busy
    /// connection, and each connection sends its share in file order, pipelined; nothing
    /// orders messages across connections. Without --connections: one connection, file order.
    #[arg(long, value_name = "FIELD", value_parser = parse_order_key, help_heading = heading::FLOW)]
    pub order_key: Option<OrderKey>,
    /// Send at most this many messages per second (`200` or `200/s`).
    #[arg(long, value_name = "RATE", value_parser = values::rate(), help_heading = heading::FLOW)]
    pub rate: Option<f64>,
    /// Bound on the whole run, like curl's --max-time.
    ///
    /// By then it has stopped and reported: messages not yet written end never-delivered
    /// (cause run-timeout), written ones without an answer unknown-fate.
    #[arg(long, value_name = "DURATION", value_parser = values::positive_duration(), help_heading = heading::FLOW)]
    pub timeout: Option<Duration>,
    /// FIFO: also rewrite unanswered messages after a reconnect.
    ///
    /// The risk becomes a duplicate at the receiver instead of a message of unknown fate.
    #[arg(long, help_heading = heading::FLOW)]
    pub at_least_once: bool,
    /// Most times one message is written again.
    ///
    /// control-id: a message is written again on each new connection, at most N times; a
    /// message whose link drops after that ends unknown-fate. fifo: written messages are not
    /// written again (with --at-least-once, at most N times). Messages never written, and
    /// frames written behind the one after which the peer closed, spend none of it.
    #[arg(long, value_name = "N", default_value_t = mllp::delivery::DEFAULT_MAX_RESENDS, help_heading = heading::FLOW)]
    pub max_resends: u32,

    /// NDJSON on stdout: one record per message, then a summary record.
    #[arg(long, help_heading = heading::OUTPUT)]
    pub json: bool,
    /// Show each ACK payload (in --json, a field `ack`).
    #[arg(long, help_heading = heading::OUTPUT)]
    pub print_ack: bool,
    /// Write each message not accepted to DIR, one file each.
    ///
    /// DIR must be absent or empty and hold none of the inputs, so runs never mix: give each
    /// run a new one (retry1, then send retry1 -r --failed-out retry2).
    #[arg(long, value_name = "DIR", help_heading = heading::OUTPUT)]
    pub failed_out: Option<PathBuf>,
    /// Progress bar on stderr: auto, always, never.
    ///
    /// auto: when stderr is a terminal, and not under --json or --quiet. always: even when stderr
    /// is not a terminal (never under --log-format json).
    #[arg(long, value_name = "WHEN", value_enum, hide_possible_values = true, default_value_t = ProgressArg::Auto, help_heading = heading::OUTPUT)]
    pub progress: ProgressArg,
    /// Print connection state changes and reconnects as they happen.
    #[arg(long, help_heading = heading::OUTPUT)]
    pub events: bool,
}

fn parse_order_key(value: &str) -> Result<OrderKey, String> {
    value
        .parse()
        .map_err(|e: mllp::delivery::OrderKeyError| e.to_string())
}

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
    let (host, port) = match &args.host {
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
            };
            // Opened here for its errors and the widest label; read page by page later.
            let rows = match StoreRows::open(file, filter.clone()) {
                Ok(rows) => rows,
                Err(err) => return input_error(&err),
            };
            let width = rows
                .last_id()
                .map_or(8, |id| format!("{}#{id}", rows.source()).chars().count());
            drop(rows);
            if args.pace == Some(PaceArg::Original) {
                gaps = Some((file.clone(), filter.clone(), args.speed));
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
                Ok(set) => (set, width),
                Err(err) => return refused(&err),
            }
        }
    };
    let checked = match set.validate() {
        Ok(summary) => summary,
        Err(err) => return refused(&err),
    };
    if args.connections > 1 && args.order_key.is_none() {
        let error = format!(
            "--connections {} needs --order-key, which says what order is kept: \
             --order-key PID-3 (or any SEG-n or SEG-n.c) keeps each patient's messages in \
             file order; --order-key none sends each connection's share in file order, with no \
             order across connections",
            args.connections
        );
        return Ok(Fatal::new(Exit::Usage, error)
            .then("nothing was sent")
            .report());
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
    if let Err(err) = client_options.validate() {
        return Ok(Fatal::new(Exit::Usage, err).report());
    }
    client_options.write_events = diag.verbose > 0;
    let connector = args
        .link
        .settings()
        .connector(&host, port, tls, netargs::resolver()?);
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
        endpoint: Target {
            host,
            port: Some(port),
        }
        .to_string(),
        gives_up: args.link.gives_up(),
    };
    let mut output = output::Output::new(&args, diag, width);
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
            Some((file, filter, speed)) => replay::paced(set, file, filter, speed),
            None => Input::from_set(set, stream),
        };
        let connector = Arc::new(connector);
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
        let rendering = tokio::spawn(run::run(client, input, options, output, live));
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
