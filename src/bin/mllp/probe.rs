//! `mllp probe`: flags, the probe configuration, the ping-style loop, and the exit code.

mod render;
mod target;

use crate::diag::Diag;
use crate::exit::{for_delivery, Exit, Observed};
use crate::netargs::{resolver, TlsArgs};
use anyhow::Context;
use clap::Args;
use mllp::cause::Cause;
use mllp::probe::stats::ProbeStats;
use mllp::probe::{ProbeConfig, ProbeTls, Report, Send, Timeouts, VerdictClass};
use std::path::PathBuf;
use std::time::Duration;

const EXAMPLES: &str = "\
Examples:
  mllp probe engine.example                  resolve, connect, listen 500 ms for a banner
  mllp probe engine.example:6661 --send      also send a synthetic ADT^A01 (MSH-11 = D)
  mllp probe 10.0.0.7 --port 6661 --tls --ca ca.pem --send
  mllp probe [fd00::7]:2575 --message adt.hl7   send the first message of adt.hl7
  mllp probe engine.example --send --count 10 --interval 1s   ping style, then statistics
  mllp probe engine.example --json          one JSON object: phases and verdict

Verdicts: ok (exit 0; 1 when the ACK was negative), transient (exit 4; 3 when a message was
written and no ACK came), permanent (exit 5).

Exit codes:
  0  healthy
  1  the ACK was negative (AE, AR, CE, CR)
  2  usage error
  3  the message was written and no ACK came back (or only its CA)
  4  transient failure: trying later may work
  5  permanent failure: configuration, TLS trust, not an MLLP peer";

#[derive(Debug, Args)]
#[command(after_help = EXAMPLES)]
pub struct ProbeArgs {
    /// The endpoint, HOST or HOST:PORT (IPv6 literals in brackets: [fd00::7]:2575).
    #[arg(value_name = "HOST[:PORT]", required_unless_present = "host")]
    pub target: Option<String>,
    /// The host, instead of the positional HOST.
    #[arg(long, conflicts_with = "target")]
    pub host: Option<String>,
    /// The port (default 2575), when the target does not name one.
    #[arg(long)]
    pub port: Option<u16>,

    /// Send one message and wait for its ACK (a synthetic ADT^A01 with processing ID D and a
    /// unique control ID, unless --message).
    #[arg(long)]
    pub send: bool,
    /// Send the first message of FILE instead (line ends normalised to CR). Implies --send.
    #[arg(long, value_name = "FILE")]
    pub message: Option<PathBuf>,
    /// How long to listen for unsolicited bytes after connecting (0 skips it). A receiver
    /// should stay silent; bytes mean the peer is not MLLP.
    #[arg(long, value_name = "DURATION", default_value = "500ms", value_parser = humantime::parse_duration)]
    pub banner_wait: Duration,

    /// Sets the connect, TLS and ACK timeouts at once (the specific flags win).
    #[arg(long, value_name = "DURATION", value_parser = humantime::parse_duration)]
    pub timeout: Option<Duration>,
    /// Bound on name resolution, and on the TCP connect over all addresses [default: 5s].
    #[arg(long, value_name = "DURATION", value_parser = humantime::parse_duration)]
    pub connect_timeout: Option<Duration>,
    /// Bound on the TLS handshake [default: 5s].
    #[arg(long, value_name = "DURATION", value_parser = humantime::parse_duration)]
    pub tls_timeout: Option<Duration>,
    /// Bound on the wait for the ACK, from the start of the write [default: 10s].
    #[arg(long, value_name = "DURATION", value_parser = humantime::parse_duration)]
    pub ack_timeout: Option<Duration>,

    /// Probe this many times, one line each, then statistics per phase.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub count: u32,
    /// Pause between probes with --count.
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = humantime::parse_duration)]
    pub interval: Duration,
    /// One JSON object per probe on stdout (and a summary object after several).
    #[arg(long)]
    pub json: bool,

    // Last: a flattened group's heading applies to every flag after it.
    #[command(flatten)]
    pub tls: TlsArgs,
}

impl ProbeArgs {
    fn config(&self) -> anyhow::Result<ProbeConfig> {
        let (host, port) = match (&self.target, &self.host) {
            (Some(target), _) => target::parse(target, self.port)?,
            (None, Some(host)) => target::parse(host, self.port)?,
            (None, None) => anyhow::bail!("name the endpoint: HOST[:PORT] or --host"),
        };
        let tls = match self.tls.options() {
            None => None,
            Some(options) => Some(ProbeTls::new(&options, &host).context("TLS configuration")?),
        };
        let send = match (&self.message, self.send) {
            (Some(path), _) => Send::Message(mllp::probe::message::first_message(path)?),
            (None, true) => Send::Synthetic,
            (None, false) => Send::Nothing,
        };
        let pick = |specific: Option<Duration>, default: u64| {
            specific
                .or(self.timeout)
                .unwrap_or(Duration::from_secs(default))
        };
        Ok(ProbeConfig {
            host,
            port,
            resolver: resolver()?,
            tls,
            timeouts: Timeouts {
                connect: pick(self.connect_timeout, 5),
                tls: pick(self.tls_timeout, 5),
                ack: pick(self.ack_timeout, 10),
                banner_wait: self.banner_wait,
                ..Timeouts::default()
            },
            send,
        })
    }
}

/// What one report contributes to the exit code. An ACK timeout is an unknown fate (3), not a
/// transient failure (4): the message was written.
fn observed(report: &Report) -> Observed {
    Observed {
        permanent: report.verdict.class == VerdictClass::Permanent,
        transient: report.verdict.class == VerdictClass::Transient
            && report.verdict.cause != Some(Cause::AckTimeout),
        unknown_fate: report.unknown_fate,
        negative: report.negative,
        thresholds_missed: false,
    }
}

fn merge(a: Observed, b: Observed) -> Observed {
    Observed {
        permanent: a.permanent || b.permanent,
        transient: a.transient || b.transient,
        unknown_fate: a.unknown_fate || b.unknown_fate,
        negative: a.negative || b.negative,
        thresholds_missed: false,
    }
}

pub fn run(args: ProbeArgs, diag: &Diag) -> anyhow::Result<Exit> {
    let config = args.config()?;
    if config.tls.as_ref().is_some_and(|t| t.verify_disabled) {
        diag.security_warning(
            "MLLP_TLS_VERIFY_DISABLED",
            "--insecure: the server certificate is not verified",
        );
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the runtime")?;
    Ok(runtime.block_on(probe_loop(&args, &config)))
}

async fn probe_loop(args: &ProbeArgs, config: &ProbeConfig) -> Exit {
    let mut stats = ProbeStats::new();
    let mut seen = Observed::default();
    let repeated = args.count > 1;
    let interrupted = tokio::signal::ctrl_c();
    tokio::pin!(interrupted);
    for seq in 1..=args.count {
        let report = tokio::select! {
            _ = &mut interrupted => break,
            report = mllp::probe::run(config) => report,
        };
        stats.record(report.ok(), report.timings());
        seen = merge(seen, observed(&report));
        let text = match (args.json, repeated) {
            (true, _) => render::json(&report, repeated.then_some(seq)),
            (false, false) => render::table(&report),
            (false, true) => render::line(seq, &report),
        };
        if crate::stdout::line(text).is_err() {
            // Nobody reads the results any more: stop probing, keep what was seen.
            return for_delivery(seen);
        }
        if seq < args.count {
            tokio::select! {
                _ = &mut interrupted => break,
                _ = tokio::time::sleep(args.interval) => {}
            }
        }
    }
    let exit = for_delivery(seen);
    if repeated || stats.probes() == 0 {
        let summary = stats.summary();
        let text = if args.json {
            render::json_summary(&summary, exit)
        } else {
            render::stats_table(&config.target(), &summary)
        };
        let _ = crate::stdout::line(text);
    }
    exit
}
