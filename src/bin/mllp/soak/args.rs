//! The flags of `mllp soak`, and the library's plan they describe.

use crate::global::heading;
use crate::manual::SOAK;
use crate::netargs::{LinkArgs, TlsArgs};
use crate::values;
use anyhow::Context;
use clap::{Args, ValueEnum};
use mllp::soak::{Backups, ChaosSpec, SoakPlan, SoakTarget, Template, Thresholds};
use mllp::target::Target;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, Args)]
#[command(after_help = SOAK.short_after_help(), after_long_help = SOAK.long_after_help())]
pub struct SoakArgs {
    /// Message templates: the first message of each FILE, in turn.
    ///
    /// Each message sent gets a unique MSH-10 and a fresh MSH-7.
    #[arg(long, value_name = "FILE", num_args = 1.., help_heading = heading::INPUT)]
    pub template: Vec<PathBuf>,
    /// Send the built-in synthetic ADT^A01 (processing ID T) to a real --host.
    #[arg(long, help_heading = heading::INPUT)]
    pub allow_synthetic: bool,

    /// Peer to drive, HOST[:PORT] (default: embedded listener).
    ///
    /// IPv6 in brackets: [fd00::7]:2575. Never taken from the environment, so that synthetic
    /// patients cannot reach an engine by accident.
    /// With several, the connections move to the next as send's link does (--failover-after,
    /// --failback-after).
    #[arg(long, value_name = "HOST[:PORT]", value_parser = values::target(), action = clap::ArgAction::Append, help_heading = heading::CONNECTION)]
    pub host: Vec<Target>,
    /// Next --host after N failed connects in a row.
    #[arg(long, value_name = "N", requires = "host", value_parser = clap::value_parser!(u32).range(1..), help_heading = heading::CONNECTION)]
    pub failover_after: Option<u32>,
    /// Back to the first --host after this long away (default: never).
    #[arg(long, value_name = "DURATION", requires = "host", value_parser = values::duration(), help_heading = heading::CONNECTION)]
    pub failback_after: Option<Duration>,
    /// Port, when --host has none [default: 2575].
    #[arg(long, value_name = "PORT", requires = "host", value_parser = values::port(), help_heading = heading::CONNECTION)]
    pub port: Option<u16>,
    #[command(flatten)]
    pub link: LinkArgs,
    #[command(flatten, next_help_heading = heading::TLS)]
    pub tls: TlsArgs,

    /// Connections, one client each.
    #[arg(long, short = 'c', value_name = "N", default_value_t = 1, help_heading = heading::LOAD)]
    pub connections: usize,
    /// Total messages per second over all connections (`2000` or `2000/s`).
    ///
    /// Unset: as fast as the window allows.
    #[arg(long, value_name = "RATE", value_parser = values::rate(), help_heading = heading::LOAD)]
    pub rate: Option<f64>,
    /// Stop generating after this long.
    #[arg(long, value_name = "DURATION", value_parser = values::positive_duration(), help_heading = heading::LOAD)]
    pub duration: Option<Duration>,
    /// Stop after this many messages in total.
    #[arg(long, value_name = "N", help_heading = heading::LOAD)]
    pub messages: Option<u64>,
    /// Climb linearly to --rate over this long.
    ///
    /// Without --rate: start the connections one by one over this long.
    #[arg(long, value_name = "DURATION", value_parser = values::duration(), help_heading = heading::LOAD)]
    pub ramp_up: Option<Duration>,
    /// Messages in flight per connection, at most.
    #[arg(long, value_name = "N", default_value = "64", value_parser = values::at_least_one(), help_heading = heading::LOAD)]
    pub window: usize,
    /// Inject faults: kind=probability[:duration],... (see --help).
    ///
    /// Comma-separated, with kinds reset, nack, delay, stall, drop: for example
    /// reset=0.01,delay=0.1:50ms,drop=0.0005:3s.
    #[arg(long, value_name = "FAULTS", value_parser = parse_chaos, help_heading = heading::LOAD)]
    pub chaos: Option<ChaosSpec>,
    /// Seed for the fault dice and the run's control IDs.
    #[arg(long, value_name = "SEED", help_heading = heading::LOAD)]
    pub seed: Option<u64>,
    /// Embedded listener: commit each message as an fsynced file in DIR.
    #[arg(long, value_name = "DIR", conflicts_with = "host", help_heading = heading::LOAD)]
    pub out_dir: Option<PathBuf>,

    /// Fail (exit 6) when the p99 latency is above this.
    #[arg(long, value_name = "DURATION", value_parser = values::duration(), help_heading = heading::THRESHOLDS)]
    pub max_p99: Option<Duration>,
    /// Fail (exit 6) when more than this share did not end accepted.
    #[arg(long, value_name = "FRACTION", value_parser = values::fraction(), help_heading = heading::THRESHOLDS)]
    pub max_error_rate: Option<f64>,
    /// Fail (exit 6) when fewer than N were accepted per second.
    #[arg(long, value_name = "N", value_parser = values::rate(), help_heading = heading::THRESHOLDS)]
    pub min_throughput: Option<f64>,

    /// Write the report (JSON) to FILE.
    #[arg(long, value_name = "FILE", help_heading = heading::OUTPUT)]
    pub report: Option<PathBuf>,
    /// Print the report as JSON on stdout (and no live view).
    #[arg(long, help_heading = heading::OUTPUT)]
    pub json: bool,
    /// The live view on stderr: auto, always, never.
    ///
    /// auto: when stderr is a terminal. Under --log-format json it is never drawn: progress
    /// events come instead.
    #[arg(long, value_name = "WHEN", value_enum, hide_possible_values = true, default_value_t = Live::Auto, help_heading = heading::OUTPUT)]
    pub live: Live,
    /// Progress line interval without the live view.
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = values::positive_duration(), help_heading = heading::OUTPUT)]
    pub report_interval: Duration,
    /// Serve Prometheus metrics on ADDR (e.g. 127.0.0.1:9898).
    #[arg(long, value_name = "ADDR", help_heading = heading::OUTPUT)]
    pub metrics: Option<std::net::SocketAddr>,
    /// Combine these reports into one on stdout, and run nothing.
    #[arg(long, value_name = "FILE", num_args = 1.., conflicts_with_all = ["host", "duration", "messages", "chaos"], help_heading = heading::OUTPUT)]
    pub merge: Vec<PathBuf>,
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

    /// The run these flags describe, checked; samples and per-message results are the
    /// caller's to ask for.
    pub fn plan(&self) -> anyhow::Result<SoakPlan> {
        let load = SoakPlan {
            connections: self.connections,
            messages: self.messages,
            window: self.window,
            ..SoakPlan::default()
        };
        // The load's own limits are said before any host is parsed or file read.
        load.validate().map_err(super::words::plan)?;
        let rules = crate::failover::Rules {
            failover_after: self.failover_after,
            failback_after: self.failback_after,
        };
        // With one host they would do nothing: say so rather than accept them silently.
        if let Some(refused) = rules.refused_for_one(self.host.len(), "--host") {
            anyhow::bail!(refused);
        }
        let origin = crate::netargs::Origin::default();
        let mut endpoints = Vec::with_capacity(self.host.len());
        for host in &self.host {
            let endpoint = crate::netargs::endpoint(host, self.port, origin);
            endpoints.push(endpoint.map_err(anyhow::Error::msg)?);
        }
        let mut endpoints = endpoints.into_iter();
        let target = match endpoints.next() {
            Some((host, port)) => SoakTarget::Remote {
                host,
                port,
                tls: self.tls.options(),
            },
            None => {
                if self.tls.enabled() {
                    anyhow::bail!("TLS flags need --host: the embedded listener speaks plain TCP");
                }
                SoakTarget::Embedded {
                    out_dir: self.out_dir.clone(),
                }
            }
        };
        let templates = if self.template.is_empty() {
            vec![Template::builtin()]
        } else {
            let mut templates = Vec::new();
            for path in &self.template {
                let bytes = std::fs::read(path)
                    .with_context(|| format!("reading --template {}", path.display()))?;
                let template = Template::parse(&bytes)
                    .with_context(|| format!("--template {}", path.display()))?;
                templates.push(template.named(path.display().to_string()));
            }
            templates
        };
        let plan = SoakPlan {
            target,
            rate: self.rate,
            duration: self.duration,
            ramp_up: self.ramp_up,
            templates,
            allow_synthetic: self.allow_synthetic,
            chaos: self.chaos.clone(),
            seed: self.seed.unwrap_or_else(rand::random),
            link: self.link.settings(),
            resolver: crate::netargs::resolver()?,
            thresholds: self.thresholds(),
            backups: Backups {
                hosts: endpoints.collect(),
                failover_after: self.failover_after,
                failback_after: self.failback_after,
            },
            ..load
        };
        plan.validate().map_err(super::words::plan)?;
        Ok(plan)
    }
}

fn parse_chaos(text: &str) -> Result<ChaosSpec, String> {
    text.parse::<ChaosSpec>().map_err(|e| e.to_string())
}
