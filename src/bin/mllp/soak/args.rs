//! The flags of `mllp soak`.

use crate::netargs::{LinkArgs, TlsArgs};
use crate::values;
use clap::{Args, ValueEnum};
use mllp::soak::{ChaosSpec, Thresholds};
use mllp::target::Target;
use std::path::PathBuf;
use std::time::Duration;

const EXAMPLES: &str = "\
Examples:
  mllp soak --duration 10s                           embedded listener, live view, report
  mllp soak --connections 4 --rate 2000 --duration 1m --json > run.json
  mllp soak --chaos reset=0.01,delay=0.1:50ms,drop=0.0005:3s --duration 5m
  mllp soak --host engine.test --template adt.hl7 --rate 50 --duration 8h --report soak.json
  mllp soak --host engine.test --allow-synthetic --max-p99 200ms --min-throughput 500
  mllp soak --merge a.json b.json                    combine reports from several machines";

#[derive(Debug, Args)]
#[command(after_help = crate::exit::after_help(EXAMPLES, crate::exit::For::Soak))]
pub struct SoakArgs {
    /// The peer to drive, HOST or HOST:PORT (IPv6 in brackets). Without it, an embedded
    /// listener on 127.0.0.1 takes the load. Never taken from the environment.
    #[arg(long, value_name = "HOST[:PORT]", value_parser = values::target())]
    pub host: Option<Target>,
    /// The peer's port, when --host names none [default: 2575].
    #[arg(long, value_name = "PORT", requires = "host", value_parser = values::port())]
    pub port: Option<u16>,
    /// Send the built-in synthetic ADT^A01 (processing ID T) to a real --host.
    #[arg(long)]
    pub allow_synthetic: bool,
    /// Message templates: the first message of each file, used in turn. Each message sent gets a
    /// unique MSH-10 and a fresh MSH-7.
    #[arg(long, value_name = "FILE", num_args = 1..)]
    pub template: Vec<PathBuf>,

    /// Connections, one client each.
    #[arg(long, short = 'c', default_value_t = 1)]
    pub connections: usize,
    /// Total messages per second, spread evenly over the connections (`2000` or `2000/s`).
    /// Unset: as fast as the window allows.
    #[arg(long, value_name = "N/s", value_parser = values::rate())]
    pub rate: Option<f64>,
    /// Stop generating after this long.
    #[arg(long, value_name = "DURATION", value_parser = values::positive_duration())]
    pub duration: Option<Duration>,
    /// Stop after this many messages in total.
    #[arg(long, value_name = "N")]
    pub messages: Option<u64>,
    /// Climb linearly to --rate over this long (without --rate: start the connections one by one
    /// over this long).
    #[arg(long, value_name = "DURATION", value_parser = values::duration())]
    pub ramp_up: Option<Duration>,
    /// Messages written and not yet acknowledged, per connection.
    #[arg(long, value_name = "N", default_value = "64", value_parser = values::at_least_one())]
    pub window: usize,

    /// Inject faults: comma-separated kind=probability[:duration] with kinds reset, nack,
    /// delay, stall, drop (e.g. reset=0.01,delay=0.1:50ms,drop=0.0005:3s).
    #[arg(long, value_name = "SPEC", value_parser = parse_chaos)]
    pub chaos: Option<ChaosSpec>,
    /// Seed for the fault dice and the run's control IDs.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Embedded listener: commit each message as an fsynced file in DIR instead of memory.
    #[arg(long, value_name = "DIR", conflicts_with = "host")]
    pub out_dir: Option<PathBuf>,

    /// Write the report (JSON) to FILE.
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    /// Print the report as JSON on stdout (and no live view).
    #[arg(long)]
    pub json: bool,
    /// The live view: auto (when stderr is a terminal), always, never. Under --log-format json
    /// it is never drawn: progress events come instead.
    #[arg(long, value_enum, default_value_t = Live::Auto)]
    pub live: Live,
    /// How often a plain progress line (or progress event) is printed when the live view is off.
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = values::positive_duration())]
    pub report_interval: Duration,
    /// Serve Prometheus metrics on ADDR (e.g. 127.0.0.1:9898).
    #[arg(long, value_name = "ADDR")]
    pub metrics: Option<std::net::SocketAddr>,

    /// Fail (exit 6) when the p99 latency is above this.
    #[arg(long, value_name = "DURATION", value_parser = values::duration())]
    pub max_p99: Option<Duration>,
    /// Fail (exit 6) when more than this fraction of messages did not end accepted.
    #[arg(long, value_name = "FRACTION", value_parser = values::fraction())]
    pub max_error_rate: Option<f64>,
    /// Fail (exit 6) when fewer messages than this were accepted per second.
    #[arg(long, value_name = "N/s", value_parser = values::rate())]
    pub min_throughput: Option<f64>,

    /// Combine these reports into one on stdout, and run nothing.
    #[arg(long, value_name = "REPORT", num_args = 1.., conflicts_with_all = ["host", "duration", "messages", "chaos"])]
    pub merge: Vec<PathBuf>,

    #[command(flatten)]
    pub tls: TlsArgs,
    #[command(flatten)]
    pub link: LinkArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Live {
    Auto,
    Always,
    Never,
}

impl SoakArgs {
    pub fn thresholds(&self) -> Thresholds {
        Thresholds {
            max_p99: self.max_p99,
            max_error_rate: self.max_error_rate,
            min_throughput: self.min_throughput,
        }
    }
}

fn parse_chaos(text: &str) -> Result<ChaosSpec, String> {
    text.parse::<ChaosSpec>().map_err(|e| e.to_string())
}
