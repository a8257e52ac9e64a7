//! `mllp send`: flags, input checking before the first byte, the client, and the exit code.

mod engine;
mod failed;
mod feed;
mod live;
mod output;
mod pace;
mod signals;
mod summary;

use crate::diag::{Diag, Fatal};
use crate::exit::Exit;
use crate::netargs::{self, LinkArgs, TlsArgs};
use anyhow::Context;
use clap::{Args, ValueEnum};
use mllp::client::{Client, Correlation, OnBackpressure, Window};
use mllp::input::{collect_inputs, InputOptions, InputSet, SplitOptions};
use std::path::PathBuf;
use std::sync::Arc;

const EXAMPLES: &str = "\
Examples:
  mllp send adt/*.hl7 --host engine.example            one line per message, summary on stderr
  mllp send inbox --recursive --host engine --json     NDJSON records, then a summary record
  cat batch.hl7 | mllp send --host engine --batch      stdin, a batch kept as one frame
  mllp send *.hl7 --host engine --failed-out retry/    keep every message not accepted
  mllp send retry --recursive --host engine            ... and send only those again

Correlation and resend policy (what each mode risks):
  --correlate control-id (default): an ACK counts only when its MSA-2 names the message's
     MSH-10 and it came after the message was written. Messages sharing an MSH-10 go one at a
     time, in order. Every pending message is written again on a new connection; the risk is a
     duplicate at the receiver (most engines, and `listen --dedupe`, de-duplicate on MSH-10).
  --correlate fifo: for peers whose MSA-2 cannot be trusted; each reply answers the oldest
     message. Input whose MSH-16 asks for an application ACK (AL, ER, SU) is refused, and a
     reply with nothing awaiting one ends the run (unsolicited-ack). After a reconnect,
     messages never written are resent (no risk); written but unacknowledged ones are
     unknown-fate and NOT resent, unless --at-least-once (risk: a duplicate).
After a CA, MSH-16 decides: absent, empty or NE make the CA final (accepted); AL and SU wait
--app-ack-timeout for the application ACK (none: committed-only); ER counts silence as success.
Every message still ends in exactly one reported outcome: a resent message's is its last try's.

Exit codes (when several apply: 5, then 4, then 3, then 1):
  0  every message accepted (AA, or CA when no application ACK was asked for)
  1  the peer said no (AE, AR, CE, CR) for at least one message
  2  usage error or unreadable input, before anything was sent
  3  unknown fate: a message was written and no ACK came back (or only its CA)
  4  transient connection failure, retries exhausted: trying later may work
  5  permanent connection failure: configuration, TLS trust, not an MLLP peer
  130 interrupted by Ctrl-C (the summary is still printed)";

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

#[derive(Debug, Args)]
#[command(after_help = EXAMPLES)]
pub struct SendArgs {
    /// Files, globs or directories (with --recursive); `-` or none reads stdin.
    #[arg(value_name = "FILES")]
    pub files: Vec<String>,
    /// Host to send to.
    #[arg(long)]
    pub host: String,
    /// Port to send to.
    #[arg(long, default_value_t = 2575)]
    pub port: u16,

    /// Walk directories given as inputs.
    #[arg(short, long, help_heading = "Input")]
    pub recursive: bool,
    /// Send segment terminators as they are (no CRLF/LF -> CR normalisation).
    #[arg(long, help_heading = "Input")]
    pub raw: bool,
    /// Send each batch envelope (FHS/BHS ... BTS/FTS) as one frame instead of its messages.
    #[arg(long, help_heading = "Input")]
    pub batch: bool,
    /// Read stdin as it comes, endlessly, without checking it first.
    #[arg(long, help_heading = "Input")]
    pub stream: bool,
    /// Most bytes of stdin spooled for checking (K, M, G suffixes).
    #[arg(long, value_name = "SIZE", value_parser = parse_size, default_value = "1G", help_heading = "Input")]
    pub max_input: u64,

    #[command(flatten)]
    pub tls: TlsArgs,
    #[command(flatten)]
    pub link: LinkArgs,

    /// How ACKs are matched to messages (see the resend policy below).
    #[arg(long, value_enum, default_value_t = CorrelateArg::ControlId, help_heading = "Flow")]
    pub correlate: CorrelateArg,
    /// Messages written and not yet acknowledged, at most.
    #[arg(long, value_name = "N", default_value_t = 64, help_heading = "Flow")]
    pub window: usize,
    /// Payload bytes written and not yet acknowledged, at most (K, M, G suffixes).
    #[arg(long, value_name = "SIZE", value_parser = parse_size, help_heading = "Flow")]
    pub window_bytes: Option<u64>,
    /// One message at a time: write, wait for its ACK, then the next.
    #[arg(long, help_heading = "Flow")]
    pub no_pipeline: bool,
    /// Send at most this many messages per second (`200` or `200/s`).
    #[arg(long, value_name = "N/s", value_parser = parse_rate, help_heading = "Flow")]
    pub rate: Option<f64>,
    /// FIFO: also resend messages of unknown fate after a reconnect (risk: duplicates).
    #[arg(long, help_heading = "Flow")]
    pub at_least_once: bool,
    /// Most times one message is resent after reconnects.
    #[arg(long, value_name = "N", default_value_t = 10, help_heading = "Flow")]
    pub max_resends: u32,

    /// NDJSON on stdout: one record per message, then a summary record.
    #[arg(long, help_heading = "Output")]
    pub json: bool,
    /// Show each ACK payload (in --json, a field `ack`).
    #[arg(long, help_heading = "Output")]
    pub print_ack: bool,
    /// Write every message that did not end accepted to DIR, one file each.
    #[arg(long, value_name = "DIR", help_heading = "Output")]
    pub failed_out: Option<PathBuf>,
    /// Progress bar on stderr.
    #[arg(long, value_enum, default_value_t = ProgressArg::Auto, help_heading = "Output")]
    pub progress: ProgressArg,
    /// Print connection state changes and reconnects on stderr as they happen.
    #[arg(long, help_heading = "Output")]
    pub events: bool,
}

fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, unit) = t.split_at(split);
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("`{text}` is not a size"))?;
    let scale: u64 = match unit.trim() {
        "" | "B" => 1,
        "K" | "KiB" | "k" => 1 << 10,
        "M" | "MiB" => 1 << 20,
        "G" | "GiB" => 1 << 30,
        other => return Err(format!("unknown size unit `{other}` (use K, M, G)")),
    };
    match n.checked_mul(scale) {
        Some(0) | None => Err(format!("`{text}` must be at least 1 byte")),
        Some(size) => Ok(size),
    }
}

fn parse_rate(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let t = t.strip_suffix("/s").unwrap_or(t);
    match t.parse::<f64>() {
        Ok(r) if r.is_finite() && r > 0.0 => Ok(r),
        _ => Err(format!(
            "`{text}` is not a rate: give messages per second, like 200 or 200/s"
        )),
    }
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

/// What the engine needs to know beyond the client.
#[derive(Debug, Clone)]
pub struct Plan {
    pub fifo: bool,
    pub at_least_once: bool,
    pub max_resends: u32,
    pub rate: Option<f64>,
    pub stream: bool,
}

pub fn run(args: SendArgs, diag: &Diag) -> anyhow::Result<Exit> {
    let input_error = |err: &dyn std::fmt::Display| {
        Ok(Fatal::new(Exit::Usage, err)
            .then("nothing was sent")
            .report())
    };
    let sources = match collect_inputs(&args.files, args.recursive) {
        Ok(sources) => sources,
        Err(err) => return input_error(&err),
    };
    let width = summary::label_width(&sources);
    let options = InputOptions {
        split: SplitOptions {
            raw: args.raw,
            batch: args.batch,
            ..SplitOptions::default()
        },
        max_input: args.max_input,
        stream: args.stream,
    };
    let mut set = match InputSet::prepare(sources, options) {
        Ok(set) => set,
        Err(err) => return input_error(&err),
    };
    let checked = match set.validate() {
        Ok(summary) => summary,
        Err(err) => return input_error(&err),
    };
    // A streamed stdin can be read only once: its messages are refused one by one instead.
    if args.correlate == CorrelateArg::Fifo && !args.stream {
        if let Some(exit) = refuse_two_phase(&mut set) {
            return Ok(exit);
        }
    }
    let failed = match &args.failed_out {
        Some(dir) => match failed::FailedOut::create(dir) {
            Ok(f) => Some(f),
            Err(err) => return input_error(&format!("{err:#}")),
        },
        None => None,
    };
    let tls = match args.tls.options() {
        Some(options) => match options.build(&args.host) {
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
    let mut client_options = args.link.client_options();
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
    if let Err(err) = client_options.validate() {
        return Ok(Fatal::new(Exit::Usage, err).report());
    }
    let connector = args
        .link
        .connector(&args.host, args.port, tls, netargs::resolver()?);
    let plan = Plan {
        fifo: client_options.correlation == Correlation::Fifo,
        at_least_once: args.at_least_once,
        max_resends: args.max_resends,
        rate: args.rate,
        stream: args.stream,
    };
    let output = output::Output::new(&args, diag, width);
    let live = live::Live::new(
        &args,
        diag,
        (!checked.unvalidated_stdin).then_some(checked.messages),
    );
    // One thread: the link, the producer and the collector hand each message along without
    // cross-thread wake-ups; file reading has its own thread.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the runtime")?;
    let end = runtime.block_on(async move {
        let client = Arc::new(Client::new(Arc::new(connector), client_options)?);
        anyhow::Ok(engine::run(client, set, plan, output, live, failed).await)
    })?;
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    Ok(end)
}
