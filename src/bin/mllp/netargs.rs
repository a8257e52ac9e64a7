//! Connection flags shared by `send`, `probe` and `soak`: the endpoint (`HOST[:PORT]`, `--port`
//! and their environment defaults), TLS, timeouts and reconnects, and the name resolver.

use crate::cli::heading;
use crate::values;
use anyhow::Context;
use clap::Args;
use mllp::client::{
    BackoffConfig, ClientOptions, ExponentialBackoff, GiveUpAfter, MaxRetries, Reconnect,
    RetryStrategy,
};
use mllp::resolve::{Resolver, StaticResolver, SystemResolver};
use mllp::target::{Target, DEFAULT_PORT};
use mllp::tls::{ClientTlsOptions, TlsClient};
use mllp::transport::TcpConnector;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Where the endpoint's parts came from: the command line, or `MLLP_HOST`/`MLLP_PORT`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Origin {
    pub host_from_env: bool,
    pub port_from_env: bool,
}

impl Origin {
    /// Read from a subcommand's matches (clap knows which values its `env` filled in).
    pub fn of(matches: Option<&clap::ArgMatches>) -> Origin {
        let from_env = |id: &str| {
            matches.and_then(|m| m.value_source(id)) == Some(clap::parser::ValueSource::EnvVariable)
        };
        Origin {
            host_from_env: from_env("host"),
            port_from_env: from_env("port"),
        }
    }
}

/// Host and port to connect to. A port given both in `HOST:PORT` and by `--port` is refused
/// when both come from the same place; otherwise the command line beats the environment.
pub fn endpoint(host: &Target, port: Option<u16>, origin: Origin) -> Result<(String, u16), String> {
    let port = match (host.port, port) {
        (Some(a), Some(b)) if origin.host_from_env == origin.port_from_env => {
            let bare = Target {
                port: None,
                ..host.clone()
            };
            return Err(if origin.host_from_env {
                format!(
                    "the port is given twice, in MLLP_HOST={host} and MLLP_PORT={b}: set it in \
                     one of them"
                )
            } else {
                format!(
                    "the port is given twice, in --host {host} and --port {b}: give it once, \
                     for example --host {} or --host {bare} --port {b}",
                    Target {
                        port: Some(a),
                        ..bare.clone()
                    }
                )
            });
        }
        (Some(a), Some(b)) => {
            if origin.port_from_env {
                a
            } else {
                b
            }
        }
        (Some(p), None) | (None, Some(p)) => p,
        (None, None) => DEFAULT_PORT,
    };
    Ok((host.host.clone(), port))
}

/// TLS flags of a client.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = heading::TLS)]
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
#[command(next_help_heading = heading::CONNECTION)]
pub struct LinkArgs {
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
    /// Do not reconnect after a transient failure.
    #[arg(long)]
    pub no_reconnect: bool,
    /// Stop after N failed reconnect attempts in a row.
    #[arg(long, value_name = "N")]
    pub max_retries: Option<u32>,
    /// Stop reconnecting after this long.
    ///
    /// Counted from the last working connection; the messages left end never-delivered.
    #[arg(long, value_name = "DURATION", default_value = "2m", value_parser = values::duration())]
    pub give_up_after: Duration,
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

impl LinkArgs {
    /// The reconnect policy these flags describe: exponential backoff (permanent causes never
    /// retried), stopped after `--max-retries` failed attempts and after `--give-up-after`.
    pub fn reconnect(&self) -> Reconnect {
        let backoff: Arc<dyn RetryStrategy> = Arc::new(ExponentialBackoff::new(BackoffConfig {
            initial: self.backoff_initial,
            multiplier: self.backoff_multiplier,
            max: self.backoff_max,
            jitter: self.backoff_jitter,
        }));
        let bounded: Arc<dyn RetryStrategy> = match self.max_retries {
            Some(max) => Arc::new(MaxRetries {
                inner: backoff,
                max,
            }),
            None => backoff,
        };
        Reconnect {
            enabled: !self.no_reconnect,
            strategy: Arc::new(GiveUpAfter {
                inner: bounded,
                limit: self.give_up_after,
            }),
        }
    }

    /// What happens after a failure, for people: `retrying; giving up after 2m`.
    pub fn gives_up(&self) -> String {
        if self.no_reconnect {
            return "not retrying (--no-reconnect)".to_string();
        }
        let after = humantime::format_duration(self.give_up_after);
        match self.max_retries {
            Some(n) => format!("retrying; giving up after {after} or {n} retries"),
            None => format!("retrying; giving up after {after}"),
        }
    }

    /// The client-core options these flags set; flow options (window, correlation, pipeline)
    /// stay at the library's defaults for the caller to fill in.
    pub fn client_options(&self) -> ClientOptions {
        ClientOptions {
            ack_timeout: self.ack_timeout,
            app_ack_timeout: self.app_ack_timeout,
            drain_timeout: self.drain_timeout,
            dead_peer_timeout: self.dead_peer_timeout,
            reconnect: self.reconnect(),
            ..ClientOptions::default()
        }
    }

    /// A connector to `host:port` with these timeouts, `tls` (built already) and `resolver`.
    pub fn connector(
        &self,
        host: &str,
        port: u16,
        tls: Option<TlsClient>,
        resolver: Arc<dyn Resolver>,
    ) -> TcpConnector {
        let mut connector = TcpConnector::new(host, port)
            .with_resolver(resolver)
            .with_connect_timeout(self.connect_timeout);
        if let Some(tls) = tls {
            connector = connector.with_tls(tls);
        }
        if let Some(interval) = self.keepalive {
            connector = connector.with_keepalive(interval);
        }
        connector
    }
}

/// The resolver the binary uses. `MLLP_HOSTS_FILE` names a hosts-format file (`ADDRESS NAME...`
/// lines) that replaces name resolution entirely: names it does not list are not found, and a
/// line `fail NAME...` makes those names fail as a resolver error. It pins names for tests and
/// for air-gapped rehearsals without touching /etc/hosts.
pub fn resolver() -> anyhow::Result<Arc<dyn Resolver>> {
    match std::env::var_os("MLLP_HOSTS_FILE") {
        None => Ok(Arc::new(SystemResolver)),
        Some(path) => {
            let text = std::fs::read_to_string(&path).with_context(|| {
                format!("reading MLLP_HOSTS_FILE {}", PathBuf::from(&path).display())
            })?;
            parse_hosts(&text)
                .with_context(|| format!("in MLLP_HOSTS_FILE {}", PathBuf::from(&path).display()))
        }
    }
}

fn parse_hosts(text: &str) -> anyhow::Result<Arc<dyn Resolver>> {
    let mut by_name: Vec<(String, Vec<std::net::IpAddr>)> = Vec::new();
    let mut resolver = StaticResolver::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        let mut words = line.split_whitespace();
        let Some(first) = words.next() else { continue };
        if first == "fail" {
            for name in words {
                resolver = resolver.failing(name, "resolver failure (MLLP_HOSTS_FILE)");
            }
            continue;
        }
        let addr: std::net::IpAddr = first
            .parse()
            .with_context(|| format!("line {}: `{first}` is not an IP address", n + 1))?;
        for name in words {
            match by_name.iter_mut().find(|(known, _)| known == name) {
                Some((_, addrs)) => addrs.push(addr),
                None => by_name.push((name.to_string(), vec![addr])),
            }
        }
    }
    for (name, addrs) in by_name {
        resolver = resolver.with(&name, addrs);
    }
    Ok(Arc::new(resolver))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_beats_the_environment_and_never_contradicts_itself() {
        let t = |text: &str| Target::parse(text).unwrap();
        let cli = Origin::default();
        let env_host = Origin {
            host_from_env: true,
            port_from_env: false,
        };
        let env_both = Origin {
            host_from_env: true,
            port_from_env: true,
        };
        let env_port = Origin {
            host_from_env: false,
            port_from_env: true,
        };
        assert_eq!(endpoint(&t("h"), None, cli), Ok(("h".into(), 2575)));
        assert_eq!(endpoint(&t("h:1"), None, cli), Ok(("h".into(), 1)));
        assert_eq!(endpoint(&t("h"), Some(2), cli), Ok(("h".into(), 2)));
        assert!(endpoint(&t("h:1"), Some(2), cli)
            .unwrap_err()
            .contains("--host h:1 or --host h --port 2"));
        assert!(endpoint(&t("h:1"), Some(1), cli).is_err());
        assert!(endpoint(&t("h:1"), Some(2), env_both)
            .unwrap_err()
            .contains("MLLP_HOST=h:1"));
        assert_eq!(endpoint(&t("h:1"), Some(2), env_host), Ok(("h".into(), 2)));
        assert_eq!(endpoint(&t("h:1"), Some(2), env_port), Ok(("h".into(), 1)));
        assert_eq!(endpoint(&t("[::1]:9"), None, cli), Ok(("::1".into(), 9)));
    }

    #[tokio::test]
    async fn hosts_file_pins_names_and_fails_the_rest() {
        let resolver =
            parse_hosts("127.0.0.1 engine engine.test\n::1 engine\nfail broken # note\n").unwrap();
        let addrs = resolver.resolve("engine", 2575).await.unwrap();
        assert_eq!(addrs.len(), 2);
        assert_eq!(addrs[0].to_string(), "127.0.0.1:2575");
        assert!(matches!(
            resolver.resolve("nowhere", 1).await,
            Err(mllp::resolve::ResolveError::NotFound { .. })
        ));
        assert!(matches!(
            resolver.resolve("broken", 1).await,
            Err(mllp::resolve::ResolveError::Failed { .. })
        ));
        assert!(parse_hosts("not-an-ip name").is_err());
    }
}
