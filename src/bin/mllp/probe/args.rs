//! `mllp probe`'s flags: the endpoint, each phase's timeout (defaults from the library), TLS,
//! what to send, how often, and the probe configuration they make.

use crate::global::heading;
use crate::manual::PROBE;
use crate::netargs::endpoint_of;
use crate::netargs::{resolver, Origin, TlsArgs};
use crate::values;
use anyhow::Context;
use clap::Args;
use mllp::framing::Release;
use mllp::probe::{ProbeConfig, ProbeTls, SendPhase, Timeouts};
use mllp::target::Target;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, Args)]
#[command(after_help = PROBE.short_after_help(), after_long_help = PROBE.long_after_help())]
pub struct ProbeArgs {
    /// The endpoint, HOST or HOST:PORT (IPv6 literals in brackets: [fd00::7]:2575).
    #[arg(value_name = "HOST[:PORT]", value_parser = values::target(), required_unless_present = "host")]
    pub target: Option<Target>,
    /// Endpoint instead of the positional; repeatable.
    ///
    /// With several (the failover hosts of a send, say), each is probed in turn, then one line
    /// says which answered; the exit code is the worst of theirs.
    #[arg(long, value_name = "HOST[:PORT]", env = "MLLP_HOST", value_parser = values::target(), action = clap::ArgAction::Append, help_heading = heading::CONNECTION)]
    pub host: Vec<Target>,
    /// Port if the endpoint has none [default: 2575].
    ///
    /// A port both in the endpoint and here is a usage error.
    #[arg(long, value_name = "PORT", env = "MLLP_PORT", value_parser = values::port(), help_heading = heading::CONNECTION)]
    pub port: Option<u16>,
    /// Where --host and --port came from (flags or environment); set after parsing.
    #[arg(skip)]
    pub origin: Origin,
    /// Connect, TLS and ACK timeouts at once (specific flags win).
    #[arg(long, value_name = "DURATION", value_parser = values::positive_duration(), help_heading = heading::CONNECTION)]
    pub timeout: Option<Duration>,
    #[arg(long, value_name = "DURATION", value_parser = values::positive_duration(), help_heading = heading::CONNECTION,
          help = with_default("Bound on resolving and connecting", Timeouts::default().connect))]
    pub connect_timeout: Option<Duration>,
    #[arg(long, value_name = "DURATION", value_parser = values::positive_duration(), help_heading = heading::CONNECTION,
          help = with_default("Bound on the TLS handshake", Timeouts::default().tls))]
    pub tls_timeout: Option<Duration>,
    #[arg(long, value_name = "DURATION", value_parser = values::positive_duration(), help_heading = heading::CONNECTION,
          help = with_default("Bound on the wait for the ACK, from the write", Timeouts::default().ack))]
    pub ack_timeout: Option<Duration>,

    #[command(flatten, next_help_heading = heading::TLS)]
    pub tls: TlsArgs,

    /// Send one message and wait for its ACK (proves MLLP is spoken).
    ///
    /// A synthetic ADT^A01 with processing ID D and a unique control ID, unless --message.
    #[arg(long, help_heading = heading::PROBE)]
    pub send: bool,
    /// Send the first message of FILE instead; implies --send.
    #[arg(long, value_name = "FILE", help_heading = heading::PROBE)]
    pub message: Option<PathBuf>,
    /// Expect MLLP Release 2 (a commit or NAK block); implies --send.
    ///
    /// A commit block passes, a NAK block says the link works but the peer kept nothing, and
    /// an HL7 ACK instead names a Release 1 peer (peer-not-mllp2).
    #[arg(long, help_heading = heading::PROBE)]
    pub mllp2: bool,
    /// A receiver stays silent until it is sent a message; bytes mean the peer is not MLLP.
    #[arg(long, value_name = "DURATION", value_parser = values::duration(), help_heading = heading::PROBE,
          help = with_default("Listen this long for unsolicited bytes (0 skips)", Timeouts::default().banner_wait))]
    pub banner_wait: Option<Duration>,
    /// Probe N times, one line each, then statistics.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..), help_heading = heading::PROBE)]
    pub count: u32,
    /// Pause between probes with --count.
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = values::duration(), help_heading = heading::PROBE)]
    pub interval: Duration,

    /// One JSON object per probe on stdout (then a summary after several).
    #[arg(long, help_heading = heading::OUTPUT)]
    pub json: bool,
}

/// A timeout's default as the help shows it: the library's own value.
fn default(d: Duration) -> String {
    humantime::format_duration(d).to_string()
}

fn with_default(text: &str, d: Duration) -> String {
    format!("{text} [default: {}].", default(d))
}

impl ProbeArgs {
    /// One configuration for each host to probe, in the order given.
    pub(super) fn configs(&self) -> anyhow::Result<Vec<ProbeConfig>> {
        // The positional endpoint, or each --host (from the command line or MLLP_HOST).
        let first = endpoint_of(
            self.target.as_ref(),
            self.host.first(),
            self.port,
            self.origin,
        )?;
        let mut endpoints = vec![first];
        if self.target.is_none() {
            for host in self.host.iter().skip(1) {
                endpoints.push(endpoint_of(None, Some(host), self.port, self.origin)?);
            }
        }
        endpoints
            .into_iter()
            .map(|(host, port)| self.config(host, port))
            .collect()
    }

    fn config(&self, host: String, port: u16) -> anyhow::Result<ProbeConfig> {
        let tls = match self.tls.options() {
            None => None,
            Some(options) => Some(ProbeTls::new(&options, &host).context("TLS configuration")?),
        };
        let send = match (&self.message, self.send || self.mllp2) {
            (Some(path), _) => SendPhase::Message(mllp::probe::first_message(path)?),
            (None, true) => SendPhase::Synthetic,
            (None, false) => SendPhase::Nothing,
        };
        Ok(ProbeConfig {
            host,
            port,
            resolver: resolver()?,
            tls,
            timeouts: Timeouts::chosen(
                self.timeout,
                self.connect_timeout,
                self.tls_timeout,
                self.ack_timeout,
                self.banner_wait,
            ),
            send,
            release: if self.mllp2 {
                Release::Two
            } else {
                Release::One
            },
        })
    }
}
