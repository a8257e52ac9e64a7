//! `mllp relay`'s flags: the downstream side takes `listen`'s server TLS, guards and log rates,
//! the upstream side `send`'s waits, reconnect delays and TLS flags (never its give-up flags:
//! the upstream link reconnects for as long as the relay runs); the relay's own are where to
//! listen and forward, the window, and the queue or record file.

use crate::global::heading;
use crate::listen::args::{GuardArgs, LogRateArgs, ServerTlsArgs};
use crate::netargs::{BackoffArgs, TimingArgs, TlsArgs};
use crate::values;
use clap::Args;
use mllp::target::Target;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, Args)]
#[command(after_help = crate::manual::RELAY.short_after_help(), after_long_help = crate::manual::RELAY.long_after_help())]
// The upstream link reconnects for as long as the relay runs: its delays stay short, so
// forwarding resumes within seconds of the upstream's return.
#[command(mut_arg("backoff_max", |arg| arg.default_value("5s")))]
pub struct RelayArgs {
    /// Where to listen: PORT or HOST:PORT (host default 127.0.0.1).
    ///
    /// Port 0 picks a free one. The first line on stderr says which: `listening on 127.0.0.1:PORT`. A wildcard host
    /// needs --allow-wildcard.
    #[arg(long, value_name = "[HOST:]PORT", value_parser = listen_address, help_heading = heading::CONNECTION)]
    pub listen: ListenAddr,
    /// Allow a wildcard --listen (warns MLLP_BIND_ALL_INTERFACES).
    #[arg(long, help_heading = heading::CONNECTION)]
    pub allow_wildcard: bool,
    /// Where to forward: HOST[:PORT], repeatable [default port: 2575].
    ///
    /// With several, the upstream link moves to the next after --failover-after failed
    /// connects in a row (it never gives up on a host), and what was pending goes on the new
    /// connection as on any reconnect.
    #[arg(long, value_name = "HOST[:PORT]", value_parser = values::target(), required = true, action = clap::ArgAction::Append, help_heading = heading::CONNECTION)]
    pub to: Vec<Target>,
    /// Next --to after N failed connects in a row [default: 3].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..), help_heading = heading::CONNECTION)]
    pub failover_after: Option<u32>,
    /// Back to the first --to after this long away.
    ///
    /// Taken at the next connect: a working connection to a later host is kept until it ends.
    /// Default: never.
    #[arg(long, value_name = "DURATION", value_parser = values::duration(), help_heading = heading::CONNECTION)]
    pub failback_after: Option<Duration>,
    /// Answer downstream in MLLP Release 2 (commit, NAK blocks).
    ///
    /// A commit block (VT 0x06 FS CR) only once the message is kept: after the upstream's
    /// final positive answer, or with --queue once its row is on disk. A NAK block (VT 0x15 FS
    /// CR) when nothing was kept. An application ACK from the upstream follows the commit
    /// block as an HL7 message. No answer, and the connection closed, when the upstream's
    /// answer never came.
    #[arg(long, help_heading = heading::CONNECTION)]
    pub mllp2_downstream: bool,
    /// Speak MLLP Release 2 upstream (as send --mllp2).
    ///
    /// Its commit block is the final positive answer; a NAK block means nothing was kept: the
    /// message is written again, then answered negatively downstream. One message at a time
    /// awaits its block. A downstream peer speaking Release 1 gets an AA the relay builds once
    /// the commit block came, or the upstream's application ACK when one follows. An upstream
    /// answering with HL7 ACKs is named (peer-not-mllp2). Not with --mirror.
    #[arg(long, conflicts_with = "mirror", help_heading = heading::CONNECTION)]
    pub mllp2_upstream: bool,
    #[command(flatten)]
    pub timing: TimingArgs,
    #[command(flatten)]
    pub backoff: BackoffArgs,
    #[command(flatten, next_help_heading = heading::TLS)]
    pub tls: TlsArgs,
    #[command(flatten, next_help_heading = heading::SERVED_TLS)]
    pub server_tls: ServerTlsArgs,
    #[command(flatten)]
    pub mirror: super::mirror::MirrorArgs,
    #[command(flatten)]
    pub guards: GuardArgs,
    #[command(flatten)]
    pub log_rate: LogRateArgs,

    /// Messages written upstream and not yet acknowledged, at most.
    #[arg(long, value_name = "N", default_value = "64", value_parser = values::at_least_one(), help_heading = heading::FLOW)]
    pub window: usize,

    /// Store and forward through table `queue` of SQLite FILE.
    ///
    /// Each message is committed as a row, answered, then forwarded. The downstream peer is answered once the row is on disk; rows are forwarded in arrival
    /// order, and each row keeps its upstream fate (status, ack_code, ack, attempts,
    /// forwarded_at, settled_at). A negative upstream answer is kept as a dead letter, not sent
    /// again. Pending rows survive a crash and are forwarded after the next start.
    #[arg(long, value_name = "FILE", conflicts_with = "record", help_heading = heading::SINK)]
    pub queue: Option<PathBuf>,
    /// With --queue: most pending rows (beyond: AE, nothing kept).
    #[arg(long, value_name = "N", requires = "queue", help_heading = heading::SINK)]
    pub max_queue: Option<u64>,
    /// Keep each message, its upstream answer and timings in SQLite FILE.
    ///
    /// Pass-through only. Table `queue`, with the columns of --queue: a trace to share (it holds payloads).
    /// With --mirror, each row also keeps the shadow's answer: mirror_ack_code, mirror_ack and
    /// mirror_outcome (same, different, shadow-unanswered, shadow-skipped); a file made before
    /// them gains these columns when opened.
    #[arg(long, value_name = "FILE", help_heading = heading::OUTPUT)]
    pub record: Option<PathBuf>,
    /// Serve Prometheus metrics over HTTP on ADDR (as listen does).
    #[arg(long, value_name = "ADDR", help_heading = heading::OUTPUT)]
    pub metrics: Option<SocketAddr>,
}

impl RelayArgs {
    /// The first `--to`: the upstream the relay prefers.
    pub fn upstream(&self) -> &Target {
        // clap requires one.
        &self.to[0]
    }

    /// When the upstream link moves between `--to`s: it never gives up on one, so after
    /// failed connects (3 unless said).
    pub fn failover(&self) -> crate::failover::Rules {
        crate::failover::Rules {
            failover_after: Some(self.failover_after.unwrap_or(3)),
            failback_after: self.failback_after,
        }
    }

    /// The upstream link: `send`'s waits and delays; it reconnects after every failure.
    pub fn link(&self) -> mllp::client::LinkSettings {
        self.timing.settings(&self.backoff)
    }
}

/// Where the relay listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListenAddr {
    pub host: String,
    pub port: u16,
}

/// `PORT` or `HOST:PORT` (IPv6 in brackets): a port alone listens on loopback.
fn listen_address(text: &str) -> Result<ListenAddr, String> {
    let (host, port) = match text.rsplit_once(':') {
        Some((host, port)) => (host.trim_start_matches('[').trim_end_matches(']'), port),
        None => ("127.0.0.1", text),
    };
    let port = port
        .parse::<u16>()
        .map_err(|_| format!("`{text}`: give PORT or HOST:PORT, the port a number up to 65535"))?;
    if host.is_empty() {
        return Err(format!("`{text}`: the host before the port is empty"));
    }
    Ok(ListenAddr {
        host: host.to_string(),
        port,
    })
}
