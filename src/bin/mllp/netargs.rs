//! Connection flags shared by `send`, `probe` and `soak`: the endpoint (`HOST[:PORT]`, `--port`
//! and their environment defaults), TLS, timeouts and reconnects, and the name resolver. What
//! they build is the library's (`mllp::target`, `mllp::client::LinkSettings`).

use crate::global::heading;
use crate::values;
use anyhow::Context;
use clap::Args;
use mllp::client::{BackoffConfig, LinkSettings};
use mllp::resolve::{Resolver, StaticResolver, SystemResolver};
use mllp::tls::ClientTlsOptions;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

pub use mllp::target::Origin;
use mllp::target::{EndpointError, Target};

/// An endpoint the command line does not name once, worded with the flags that name it.
#[derive(Debug)]
pub struct EndpointRefusal(pub EndpointError);

impl std::fmt::Display for EndpointRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            EndpointError::PortTwice { host, port } => write!(
                f,
                "the port is given twice, in --host {host} and --port {port}: give it once, for \
                 example --host {host} or --host {} --port {port}",
                host.without_port()
            ),
            EndpointError::Twice => f.write_str(
                "the endpoint is given twice, as HOST[:PORT] and as --host: give it once",
            ),
            EndpointError::Missing => f.write_str("name the endpoint: HOST[:PORT] or --host"),
            other => other.fmt(f),
        }
    }
}

impl std::error::Error for EndpointRefusal {}

/// Host and port from `--host` and `--port` ([`mllp::target::endpoint`]), refused in flag words.
pub fn endpoint(
    host: &Target,
    port: Option<u16>,
    origin: Origin,
) -> Result<(String, u16), EndpointRefusal> {
    mllp::target::endpoint(host, port, origin).map_err(EndpointRefusal)
}

/// Host and port from a positional endpoint or `--host` ([`mllp::target::endpoint_of`]).
pub fn endpoint_of(
    positional: Option<&Target>,
    host: Option<&Target>,
    port: Option<u16>,
    origin: Origin,
) -> Result<(String, u16), EndpointRefusal> {
    mllp::target::endpoint_of(positional, host, port, origin).map_err(EndpointRefusal)
}

/// Where the endpoint's parts came from, read from a subcommand's matches (clap knows which
/// values its `env` filled in).
pub fn origin(matches: Option<&clap::ArgMatches>) -> Origin {
    let from_env = |id: &str| {
        matches.and_then(|m| m.value_source(id)) == Some(clap::parser::ValueSource::EnvVariable)
    };
    Origin {
        host_from_env: from_env("host"),
        port_from_env: from_env("port"),
    }
}

/// TLS flags of a client; each command files them under its heading (`TLS`, or `listen`'s
/// `Dial TLS`).
#[derive(Debug, Clone, Args)]
pub struct TlsArgs {
    /// Speak TLS, verifying the server against the system roots and --ca.
    #[arg(long)]
    pub tls: bool,
    /// Extra CA certificate(s) to trust, PEM; implies --tls.
    ///
    /// A server's own certificate given here is trusted as itself, whatever names it carries
    /// (pinning): the way to trust a self-signed server.
    #[arg(long, value_name = "FILE")]
    pub ca: Option<PathBuf>,
    /// Client certificate chain (PEM) for mutual TLS; needs --key.
    #[arg(long, value_name = "FILE", requires = "key")]
    pub cert: Option<PathBuf>,
    /// Client private key (PEM) for mutual TLS; needs --cert.
    #[arg(long, value_name = "FILE", requires = "cert")]
    pub key: Option<PathBuf>,
    /// Name for SNI and the certificate check (default: the host).
    #[arg(long, value_name = "NAME")]
    pub server_name: Option<String>,
    /// Accept any server certificate (warns on every connect).
    #[arg(long)]
    pub insecure: bool,
}

impl TlsArgs {
    /// TLS is on when asked for, or implied by a TLS-only flag.
    pub fn enabled(&self) -> bool {
        self.tls || self.ca.is_some() || self.cert.is_some() || self.insecure
    }

    /// The library's options, or `None` for plain TCP.
    pub fn options(&self) -> Option<ClientTlsOptions> {
        self.enabled().then(|| ClientTlsOptions {
            ca_file: self.ca.clone(),
            cert_file: self.cert.clone(),
            key_file: self.key.clone(),
            server_name: self.server_name.clone(),
            insecure: self.insecure,
            ..Default::default()
        })
    }
}

/// Timeouts, liveness and reconnect flags of a long-lived client link (`send`, `soak`).
#[derive(Debug, Clone, Args)]
pub struct LinkArgs {
    #[command(flatten)]
    pub timing: TimingArgs,
    #[command(flatten)]
    pub giving_up: GiveUpArgs,
    #[command(flatten)]
    pub backoff: BackoffArgs,
}

/// The waits of a client link (`send`, `soak`, the relay's upstream link).
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = heading::CONNECTION)]
pub struct TimingArgs {
    /// Bound on TCP connect plus TLS handshake.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = values::positive_duration())]
    pub connect_timeout: Duration,
    /// Wait for an ACK, from the frame's flush.
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = values::positive_duration())]
    pub ack_timeout: Duration,
    /// Wait for the application ACK after a CA.
    ///
    /// Only when the message's MSH-16 asks for one (AL, ER, SU); the drain timeout bounds it too.
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = values::positive_duration())]
    pub app_ack_timeout: Duration,
    /// TCP keepalive interval (default: off).
    #[arg(long, value_name = "DURATION", value_parser = values::positive_duration())]
    pub keepalive: Option<Duration>,
    /// Reconnect after hearing nothing this long (default: off).
    #[arg(long, value_name = "DURATION", value_parser = values::positive_duration())]
    pub dead_peer_timeout: Option<Duration>,
    /// On closing, wait for ACKs of messages written.
    ///
    /// Application ACKs included: the drain bounds every wait still running.
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = values::positive_duration())]
    pub drain_timeout: Duration,
}

/// When a client link stops reconnecting (`send`, `soak`; the relay never does).
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = heading::CONNECTION)]
pub struct GiveUpArgs {
    /// Do not reconnect after a transient failure.
    ///
    /// With several --host, each is still tried once, in order.
    #[arg(long)]
    pub no_reconnect: bool,
    /// Stop after N failed reconnect attempts in a row.
    #[arg(long, value_name = "N")]
    pub max_retries: Option<u32>,
    /// Stop reconnecting after this long.
    ///
    /// Counted from the last working connection; no attempt starts after it (one under way
    /// ends within --connect-timeout); the messages left end never-delivered.
    #[arg(long, value_name = "DURATION", default_value = "2m", value_parser = values::duration())]
    pub give_up_after: Duration,
}

/// The delays between reconnect attempts.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = heading::CONNECTION)]
pub struct BackoffArgs {
    /// First reconnect delay.
    #[arg(long, value_name = "DURATION", default_value = "100ms", value_parser = values::duration())]
    pub backoff_initial: Duration,
    /// Largest reconnect delay.
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = values::duration())]
    pub backoff_max: Duration,
    /// Factor between consecutive reconnect delays.
    #[arg(long, value_name = "FACTOR", default_value_t = 2.0)]
    pub backoff_multiplier: f64,
    /// Random spread of each delay (0.2 = +/-20 %).
    #[arg(long, value_name = "FRACTION", default_value_t = 0.2)]
    pub backoff_jitter: f64,
}

impl TimingArgs {
    /// A link with these waits and `backoff`'s delays, reconnecting as the library does by
    /// default.
    pub fn settings(&self, backoff: &BackoffArgs) -> LinkSettings {
        LinkSettings {
            connect_timeout: self.connect_timeout,
            ack_timeout: self.ack_timeout,
            app_ack_timeout: self.app_ack_timeout,
            keepalive: self.keepalive,
            dead_peer_timeout: self.dead_peer_timeout,
            drain_timeout: self.drain_timeout,
            backoff: BackoffConfig {
                initial: backoff.backoff_initial,
                multiplier: backoff.backoff_multiplier,
                max: backoff.backoff_max,
                jitter: backoff.backoff_jitter,
            },
            ..LinkSettings::default()
        }
    }
}

impl LinkArgs {
    /// The link these flags describe.
    pub fn settings(&self) -> LinkSettings {
        LinkSettings {
            reconnect: !self.giving_up.no_reconnect,
            max_retries: self.giving_up.max_retries,
            give_up_after: self.giving_up.give_up_after,
            ..self.timing.settings(&self.backoff)
        }
    }

    /// What happens after a failure, for people: `retrying; giving up after 2m`.
    pub fn gives_up(&self) -> String {
        gives_up(&self.settings())
    }
}

fn gives_up(link: &LinkSettings) -> String {
    if !link.reconnect {
        return "not retrying (--no-reconnect)".to_string();
    }
    let after = humantime::format_duration(link.give_up_after);
    match link.max_retries {
        Some(n) => format!("retrying; giving up after {after} or {n} retries"),
        None => format!("retrying; giving up after {after}"),
    }
}

/// The resolver the binary uses. `MLLP_HOSTS_FILE` names a hosts-format file
/// ([`StaticResolver::from_hosts`]) that replaces name resolution entirely: names it does not
/// list are not found.
pub fn resolver() -> anyhow::Result<Arc<dyn Resolver>> {
    match std::env::var_os("MLLP_HOSTS_FILE") {
        None => Ok(Arc::new(SystemResolver)),
        Some(path) => {
            let text = std::fs::read_to_string(&path).with_context(|| {
                format!("reading MLLP_HOSTS_FILE {}", PathBuf::from(&path).display())
            })?;
            let resolver = StaticResolver::from_hosts(&text).with_context(|| {
                format!("in MLLP_HOSTS_FILE {}", PathBuf::from(&path).display())
            })?;
            Ok(Arc::new(resolver))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn giving_up_is_said_as_the_settings_bound_it() {
        let s = LinkSettings::default();
        assert_eq!(gives_up(&s), "retrying; giving up after 2m");
        let bounded = LinkSettings {
            max_retries: Some(3),
            ..LinkSettings::default()
        };
        assert_eq!(
            gives_up(&bounded),
            "retrying; giving up after 2m or 3 retries"
        );
        let off = LinkSettings {
            reconnect: false,
            ..LinkSettings::default()
        };
        assert_eq!(gives_up(&off), "not retrying (--no-reconnect)");
    }
}
