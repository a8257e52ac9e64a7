//! `mllp send`'s flags: the inputs and how they are read, where to send, the flow of messages
//! on the link, and what is shown.

use crate::global::heading;
use crate::manual::SEND;
use crate::netargs::{LinkArgs, Origin, TlsArgs};
use crate::values;
use clap::{Args, ValueEnum};
use mllp::delivery::OrderKey;
use mllp::target::Target;
use std::path::PathBuf;
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
    /// Each row is checked before anything is sent, as a file holding its payload would be
    /// (one HL7 message with an MSH-10, no VT or FS inside, within --max-frame-size), and named
    /// by its row (`rx.db#17`). --since, --until, --type, --control-id and --status choose the
    /// rows; --pace original keeps the recorded gaps.
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
    /// With a relay store: rows whose upstream fate is STATUS (repeatable).
    ///
    /// pending, accepted, negative, unknown-fate or never-delivered, as the relay's store keeps
    /// it: `--status negative,unknown-fate` sends the dead letters again once the upstream is
    /// fixed. A listen --sqlite store keeps no upstream fate.
    #[arg(long, value_name = "STATUS", value_delimiter = ',', value_parser = statuses(), hide_possible_values = true, requires = "from_db", help_heading = heading::INPUT)]
    pub status: Vec<String>,
    /// With --from-db: `original` keeps the recorded gaps.
    #[arg(long, value_name = "PACE", value_enum, hide_possible_values = true, requires = "from_db", help_heading = heading::INPUT)]
    pub pace: Option<PaceArg>,
    /// With --pace original: the gaps this many times shorter.
    #[arg(long, value_name = "FACTOR", default_value_t = 1.0, value_parser = values::speed(), requires = "pace", help_heading = heading::INPUT)]
    pub speed: f64,
    /// Send only the messages for which FILTER holds (repeat: all must hold).
    ///
    /// PATH=VALUE, PATH!=VALUE, PATH~REGEX or PATH alone (not empty): `--where PID-3.1=100002`,
    /// `--where MSH-9.1=ADT --where 'PV1-2!=O'`. Values compare as text, escape sequences
    /// decoded. The others are counted, never sent and never refused. See docs/hl7.md.
    #[arg(long = "where", value_name = "FILTER", value_parser = values::filter(), help_heading = heading::INPUT)]
    pub filters: Vec<mllp::hl7::Filter>,
    /// Send nothing unless every message is well formed (as mllp check).
    ///
    /// A message with an error (no MSH first, a bad MSH-7, MSH-9 without a trigger, an unknown
    /// MSH-12, ...) refuses the whole run: each error is listed, nothing is sent, exit 2.
    #[arg(long, conflicts_with = "stream", help_heading = heading::INPUT)]
    pub check_hl7: bool,
    /// With --pace original: wait at most this long between two messages.
    ///
    /// A recorded gap of a night or a weekend becomes this wait (after --speed).
    #[arg(long, value_name = "DURATION", value_parser = values::duration(), requires = "pace", help_heading = heading::INPUT)]
    pub max_gap: Option<Duration>,
    /// Check and list what would be sent; connect to nothing.
    ///
    /// Every input is read and checked; each message is listed with its source, MSH-10, MSH-9
    /// and size, then the count. Exit 0, or 2 when an input is refused.
    #[arg(long, help_heading = heading::INPUT)]
    pub dry_run: bool,

    /// Where to send: HOST or HOST:PORT; repeatable.
    ///
    /// IPv6 in brackets: [fd00::7]:2575. A port both here and in --port is a usage error, and
    /// so is a string that cannot be a host name or address. With several, the link moves to
    /// the next when reconnecting gives up on one (or after --failover-after failed
    /// connects), and pending messages go on the new connection as on any reconnect.
    #[arg(long, value_name = "HOST[:PORT]", env = "MLLP_HOST", value_parser = values::target(), required_unless_present_any = ["dry_run", "accept"], action = clap::ArgAction::Append, help_heading = heading::CONNECTION)]
    pub host: Vec<Target>,
    /// Wait for the engine to connect on [HOST:]PORT; send over that.
    ///
    /// For an engine that only dials out: the messages go down the connection it opens. HOST defaults to 127.0.0.1; a wildcard needs
    /// --allow-wildcard. Each wait is bounded by --connect-timeout and retried as a connect
    /// (a peer that never comes ends the messages never-delivered after --give-up-after); a
    /// reconnect waits for the next connection. One connection at a time: another arriving
    /// meanwhile is closed and said. Plain TCP. Example: mllp send --accept 6661 adt/*.hl7
    #[arg(long, value_name = "[HOST:]PORT", value_parser = values::bind_addr, conflicts_with_all = ["tls", "ca", "cert", "key", "server_name", "insecure"], help_heading = heading::CONNECTION)]
    pub accept: Option<(String, u16)>,
    /// Allow a wildcard --accept address (warns).
    #[arg(long, requires = "accept", help_heading = heading::CONNECTION)]
    pub allow_wildcard: bool,
    /// Next --host after N failed connects in a row.
    ///
    /// A connection that took messages and ended before a single answer counts as a failed
    /// connect. Not with --no-reconnect, which tries each --host once, in order.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..), help_heading = heading::CONNECTION)]
    pub failover_after: Option<u32>,
    /// Back to the first --host after this long away.
    ///
    /// Taken at the next connect: a working connection to a later host is kept until it ends.
    /// Default: never.
    #[arg(long, value_name = "DURATION", value_parser = values::positive_duration(), help_heading = heading::CONNECTION)]
    pub failback_after: Option<Duration>,
    /// Port, when --host has none [default: 2575].
    #[arg(long, value_name = "PORT", env = "MLLP_PORT", value_parser = values::port(), help_heading = heading::CONNECTION)]
    pub port: Option<u16>,
    /// Where --host and --port came from (flags or environment); set after parsing.
    #[arg(skip)]
    pub origin: Origin,
    #[command(flatten)]
    pub link: LinkArgs,
    #[command(flatten, next_help_heading = heading::TLS)]
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
    ///
    /// With --correlate fifo, where a written message is not written again, the next message
    /// waits up to 250 ms after the first answer on each connection for the peer to close, so an
    /// engine that answers one message per connection never gets a frame it would not read. By
    /// control ID there is no such wait: such an engine is found at its first close, and the
    /// message it did not read goes again on the next connection.
    #[arg(long, help_heading = heading::FLOW)]
    pub no_pipeline: bool,
    /// Speak MLLP Release 2 (commit and NAK blocks).
    ///
    /// A commit block (VT 0x06 FS CR) is the commit: accepted, or, when MSH-16 asks for an
    /// application ACK, waiting for it as after a CA (each application ACK is answered with a
    /// commit block). A NAK block (VT 0x15 FS CR) means nothing was kept: the message is
    /// written again, at most --max-resends times, then ends negative. Blocks name no message,
    /// so one message at a time awaits its block. A peer answering with HL7 ACKs instead is
    /// named (MLLP_PEER_NOT_MLLP2).
    #[arg(long, help_heading = heading::FLOW)]
    pub mllp2: bool,
    /// Connections side by side; above 1 needs --order-key.
    ///
    /// Each connection has its own reconnects, window and backpressure; every message still
    /// has exactly one outcome, and the summary gives each connection's share. --window is per
    /// connection, --rate shared among them.
    #[arg(long, value_name = "N", default_value = "1", value_parser = values::at_least_one(), help_heading = heading::FLOW)]
    pub connections: usize,
    /// What keeps order over --connections: a path (PID-3), or none.
    ///
    /// PATH: messages with the same value there (PID-3, its first repetition as written: the
    /// same patient) go in file order, and none is written before every earlier one with that
    /// value has its final answer, across reconnects and resends; one that waited goes over the
    /// connection the one before it took, any other over the least busy connection. Different
    /// values go in parallel, in no order between them. A message without it (segment absent
    /// or too short) has the empty value, like an empty field: all such messages share one
    /// value and keep their order among themselves. `none`: each message goes to the least busy
    /// connection, and each connection sends its share in file order, pipelined; nothing
    /// orders messages across connections. Without --connections: one connection, file order.
    #[arg(long, value_name = "PATH", value_parser = parse_order_key, help_heading = heading::FLOW)]
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
    #[arg(long, value_name = "N", default_value_t = mllp::client::DEFAULT_MAX_RESENDS, help_heading = heading::FLOW)]
    pub max_resends: u32,
    /// Make a negative answer transient (repeatable), e.g. AE:206.
    ///
    /// CODE is AE, AR, CE or CR; with :ERR-3, only an answer whose ERR-3 (its identifier, in
    /// any ERR segment) is that code. Such an answer is transient: the message is written again
    /// after the backoff (--backoff-initial, doubling, at most --backoff-max), at most
    /// --max-resends times, then ends negative with the last answer. Without a rule every
    /// negative answer is final. Example: --retry-on AE:206 (record locked).
    #[arg(long, value_name = "CODE[:ERR-3]", value_parser = parse_retry_rule, help_heading = heading::FLOW)]
    pub retry_on: Vec<mllp::client::RetryRule>,
    /// Closes on one message that make it a poison message.
    ///
    /// When the peer closes the connection with the oldest message written unanswered, that
    /// message goes alone on the next connection. Once the peer has closed N connections
    /// before answering it, written alone, it ends unknown-fate (peer-closed: poison), is not
    /// written again, and the rest of the input goes on. The summary names it. A reset (a
    /// proxy whose engine is down) does not count.
    #[arg(long, value_name = "N", default_value_t = mllp::client::DEFAULT_MAX_POISON_CLOSES, value_parser = clap::value_parser!(u32).range(1..), help_heading = heading::FLOW)]
    pub max_poison_closes: u32,

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

/// The upstream fates a relay's store keeps, by the names its `status` column holds.
fn statuses() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(mllp::relay::Status::ALL.map(|s| s.as_str()))
}

fn parse_retry_rule(value: &str) -> Result<mllp::client::RetryRule, String> {
    value
        .parse()
        .map_err(|e: mllp::client::RetryRuleError| e.to_string())
}

fn parse_order_key(value: &str) -> Result<OrderKey, String> {
    value
        .parse()
        .map_err(|e: mllp::delivery::OrderKeyError| e.to_string())
}
