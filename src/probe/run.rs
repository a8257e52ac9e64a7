//! Running one probe: resolve, connect, TLS, then the banner wait and optionally one message;
//! each phase timed and recorded, the first failure decides the verdict.

use super::exchange;
use super::eyeballs::{interleave, race};
use super::handshake;
use super::message::{synthetic_adt, unique_control_id};
use super::record::{failure, PhaseLog};
use super::report::{Detail, FailedAttempt, PhaseName, ProbeReport, Verdict, VerdictClass};
use super::tls::ProbeTls;
use crate::cause::{classify_io, Cause};
use crate::framing::Release;
use crate::resolve::Resolver;
use crate::transport::{configure_socket, BoxStream};
use bytes::Bytes;
use std::sync::Arc;
use std::time::{Duration, SystemTime};
use tokio::net::TcpStream;
use tokio::time::Instant;

/// Every wait a probe can make is bounded by one of these.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// Bounds name resolution, and separately the TCP connect over all addresses.
    pub connect: Duration,
    /// Bounds the TLS handshake.
    pub tls: Duration,
    /// Bounds writing the message and waiting for its ACK.
    pub ack: Duration,
    /// How long to listen for unsolicited bytes after connecting; zero skips the wait.
    pub banner_wait: Duration,
    /// Delay before the next address is tried while one is still pending (Happy Eyeballs).
    pub stagger: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            connect: Duration::from_secs(5),
            tls: Duration::from_secs(5),
            ack: Duration::from_secs(10),
            banner_wait: Duration::from_millis(500),
            stagger: super::eyeballs::DEFAULT_STAGGER,
        }
    }
}

/// What to send, if anything.
#[derive(Debug, Clone)]
pub enum SendPhase {
    /// Only connect (and TLS) and listen.
    Nothing,
    /// A synthetic ADT^A01 with a fresh control ID per probe.
    Synthetic,
    /// This message, as given.
    Message(Bytes),
}

/// A probe, built once and run any number of times.
#[derive(Debug, Clone)]
pub struct ProbeConfig {
    /// The host to probe: a name or an IP address.
    pub host: String,
    /// The port to probe.
    pub port: u16,
    /// How `host` becomes addresses.
    pub resolver: Arc<dyn Resolver>,
    /// TLS, when the port speaks it.
    pub tls: Option<ProbeTls>,
    /// The bound on every wait.
    pub timeouts: Timeouts,
    /// What to send, if anything.
    pub send: SendPhase,
    /// Which MLLP release the answer comes in.
    pub release: Release,
}

impl ProbeConfig {
    /// `host:port`, IPv6 literals in brackets.
    pub fn target(&self) -> String {
        if self.host.contains(':') && !self.host.starts_with('[') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }
}

/// Runs one probe. Never fails: every failure is a phase and a verdict.
pub async fn run(config: &ProbeConfig) -> ProbeReport {
    let mut run = PhaseLog::default();
    let mut verdict = match phases(config, &mut run).await {
        Ok(verdict) | Err(verdict) => verdict,
    };
    let negative = verdict.class == VerdictClass::Ok
        && verdict.ack_code.as_deref().is_some_and(|code| {
            crate::ack::AckCode::parse(code.as_bytes()).is_none_or(|c| !c.is_positive())
        });
    if negative {
        // The peer answered, but not positively: not `ok`, as the exit code says.
        verdict.class = VerdictClass::Negative;
    }
    ProbeReport {
        target: config.target(),
        tls: config.tls.is_some(),
        phases: run.phases,
        verdict,
        negative,
        unknown_fate: run.unknown_fate,
    }
}

async fn phases(config: &ProbeConfig, run: &mut PhaseLog) -> Result<Verdict, Verdict> {
    let t = config.timeouts;
    let addrs = resolve(config, run).await?;
    let tcp = connect(&addrs, t, run).await?;
    let mut stream: BoxStream = match &config.tls {
        None => Box::new(tcp),
        Some(tls) => handshake::tls_phase(tls, tcp, t.tls, run).await?,
    };
    let banner = exchange::banner(&mut stream, t.banner_wait, config.tls.is_some(), run).await?;
    let payload = match &config.send {
        SendPhase::Nothing => return Ok(banner),
        SendPhase::Synthetic => {
            let now = SystemTime::now();
            synthetic_adt(&unique_control_id(now), now)
        }
        SendPhase::Message(payload) => payload.clone(),
    };
    let tls = config.tls.is_some();
    exchange::send_and_await_ack(&mut stream, &payload, t.ack, tls, config.release, run).await
}

async fn resolve(
    config: &ProbeConfig,
    run: &mut PhaseLog,
) -> Result<Vec<std::net::SocketAddr>, Verdict> {
    let started = Instant::now();
    let limit = config.timeouts.connect;
    let lookup = config.resolver.resolve(&config.host, config.port);
    match tokio::time::timeout(limit, lookup).await {
        Ok(Ok(addrs)) => {
            let addresses = addrs.iter().map(|a| a.ip().to_string()).collect();
            run.pass(
                PhaseName::Resolve,
                started,
                Some(Detail::Resolve { addresses }),
            );
            Ok(addrs)
        }
        Ok(Err(err)) => {
            let detail = err.to_string();
            run.fail(PhaseName::Resolve, started, None, &detail);
            Err(failure(err.cause(), detail, err.cause().hint()))
        }
        Err(_) => {
            let detail = format!(
                "{}: no answer from the resolver within {}",
                config.host,
                humantime::format_duration(limit)
            );
            run.fail(PhaseName::Resolve, started, None, &detail);
            Err(failure(Cause::DnsFailed, detail, Cause::DnsFailed.hint()))
        }
    }
}

async fn connect(
    addrs: &[std::net::SocketAddr],
    t: Timeouts,
    run: &mut PhaseLog,
) -> Result<TcpStream, Verdict> {
    let started = Instant::now();
    let order = interleave(addrs);
    let raced = tokio::time::timeout(t.connect, race(&order, t.stagger, TcpStream::connect)).await;
    let describe = |attempts: Vec<super::eyeballs::Attempt>| -> Vec<FailedAttempt> {
        attempts
            .into_iter()
            .filter_map(|a| {
                let error = a.error?;
                Some(FailedAttempt {
                    address: a.addr.to_string(),
                    cause: classify_io(&error),
                    error: error.to_string(),
                })
            })
            .collect()
    };
    match raced {
        Ok(Ok((tcp, addr, failed))) => {
            // TCP_NODELAY: the probe writes one small frame and times its answer.
            let _ = configure_socket(&tcp, None);
            let detail = Detail::Connect {
                address: Some(addr.to_string()),
                failed: describe(failed),
            };
            run.pass(PhaseName::Connect, started, Some(detail));
            Ok(tcp)
        }
        Ok(Err(attempts)) => {
            let failed = describe(attempts);
            let (cause, error) = match failed.last() {
                Some(last) => (last.cause, format!("{}: {}", last.address, last.error)),
                None => (Cause::DnsNotFound, "no addresses to connect to".to_string()),
            };
            let error = if failed.len() > 1 {
                format!("all {} addresses failed; last {error}", failed.len())
            } else {
                error
            };
            let detail = Detail::Connect {
                address: None,
                failed,
            };
            run.fail(PhaseName::Connect, started, Some(detail), &error);
            Err(failure(cause, error, cause.hint()))
        }
        Err(_) => {
            let error = format!(
                "no TCP connection within {} ({} address{})",
                humantime::format_duration(t.connect),
                order.len(),
                if order.len() == 1 { "" } else { "es" }
            );
            let detail = Detail::Connect {
                address: None,
                failed: Vec::new(),
            };
            run.fail(PhaseName::Connect, started, Some(detail), &error);
            Err(failure(
                Cause::ConnectTimeout,
                error,
                Cause::ConnectTimeout.hint(),
            ))
        }
    }
}
