//! `mllp listen`'s flags, and the library settings they stand for (`mllp::server::setup`): the
//! server configuration, the sink, the policy and the TLS acceptor.

use super::setup::{self, Commit, Memory, SetupError};
use crate::global::heading;
use crate::manual::LISTEN;
use clap::{Args, ValueEnum};
use mllp::ack::AckCode;
use mllp::framing::Release;
use mllp::framing::Tolerance;
use mllp::server::ProxyProtocol;
use mllp::server::{AckMode, DoubleOptions, Policy, ServerConfig, Sink};
use mllp::server::{ExecOptions, OutputFormat};
use mllp::tls::{ClientAuth, ServerTlsOptions, TlsAcceptor, TlsConfigError};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

#[derive(Debug, Args)]
#[command(after_help = LISTEN.short_after_help(), after_long_help = LISTEN.long_after_help())]
pub struct ListenArgs {
    /// Address to bind (a wildcard needs --allow-wildcard).
    #[arg(long, value_name = "HOST", default_value = "127.0.0.1", help_heading = heading::CONNECTION)]
    pub host: String,
    /// Port to bind; 0 picks a free one.
    ///
    /// The first line on stderr says which: `TIME listening on 127.0.0.1:PORT`.
    #[arg(long, value_name = "PORT", default_value = "2575", value_parser = crate::values::bind_port(), help_heading = heading::CONNECTION)]
    pub port: u16,
    /// Allow a wildcard --host or --metrics (warns MLLP_BIND_ALL_INTERFACES).
    #[arg(long, help_heading = heading::CONNECTION)]
    pub allow_wildcard: bool,
    /// Connect out to HOST[:PORT] instead of listening (one endpoint).
    ///
    /// For an engine that only accepts connections and pushes messages down them. The
    /// connection is served exactly as an accepted one (same sink, answers, guards and events);
    /// when it ends, or a connect fails, the next connect follows the backoff (100ms doubling
    /// to 30s; each connect and TLS handshake bounded by 10s), and dialling never gives up
    /// while running: each failed connect is a line with its cause and class. One endpoint;
    /// TLS with --tls, --ca, --cert, --key. Example:
    /// mllp listen --dial engine.example:6661 --out-dir inbox
    #[arg(long, value_name = "HOST[:PORT]", value_parser = crate::values::target(), conflicts_with_all = ["host", "port", "proxy_protocol", "tls_cert", "tls_key", "max_connections", "max_connections_per_peer", "evict_idle_after", "client_auth", "client_ca"], help_heading = heading::CONNECTION)]
    pub dial: Option<mllp::target::Target>,
    /// Take peer addresses from a load balancer's PROXY header (v1 or v2).
    ///
    /// The client address it names is the peer of events, of --max-connections-per-peer and of
    /// MLLP_PEER. A connection without a valid header, or not from --proxy-from, is closed
    /// (cause proxy-header or proxy-untrusted). The balancer's health checks (a LOCAL header:
    /// HAProxy's `check` with `send-proxy-v2`) are counted and closed without an event.
    #[arg(long, help_heading = heading::CONNECTION)]
    pub proxy_protocol: bool,
    /// Addresses trusted to send PROXY headers [default: loopback].
    #[arg(long, value_name = "CIDR", value_delimiter = ',', requires = "proxy_protocol", help_heading = heading::CONNECTION)]
    pub proxy_from: Vec<mllp::server::Cidr>,

    /// The stdout sink's format: hl7, json, raw [default: hl7].
    ///
    /// hl7: segments as lines, a blank line after each message. json: one object per message per
    /// line (`payload`, or `payload_base64` when the bytes are not UTF-8). raw: each message
    /// re-framed as MLLP, byte for byte. Only for the stdout sink: with --out-dir, --exec or
    /// --sqlite it is a usage error.
    #[arg(long, value_name = "FORMAT", value_enum, hide_possible_values = true, conflicts_with_all = ["out_dir", "exec", "sqlite", "postgres"], help_heading = heading::SINK)]
    pub format: Option<Format>,
    /// Commit each message as one fsynced .hl7 file in DIR.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["exec", "sqlite", "postgres"], help_heading = heading::SINK)]
    pub out_dir: Option<PathBuf>,
    /// Commit each message as a row of table `messages` in SQLite FILE.
    ///
    /// Created on first use; WAL, full synchronous commits, one transaction per group of
    /// messages that arrived together.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["exec", "postgres"], help_heading = heading::SINK)]
    pub sqlite: Option<PathBuf>,
    /// Commit each message as a row of table `messages` in PostgreSQL.
    ///
    /// URL is `postgres://USER@HOST:PORT/DB?sslmode=MODE` or libpq's `key=value` pairs; what it
    /// leaves out comes from PGHOST, PGPORT, PGUSER, PGDATABASE, PGPASSWORD, PGSSLMODE,
    /// PGSSLROOTCERT and ~/.pgpass (or PGPASSFILE). The table (and with --dedupe its unique
    /// index) is created if absent; listeners sharing the database share the duplicate memory.
    /// One transaction per group of messages that arrived together, ACKs after its COMMIT.
    /// Without the database at start the listener does not start (exit 4 unreachable, 5
    /// refused); once running, it answers AE while the link is lost and reconnects.
    #[arg(long, value_name = "URL", conflicts_with = "exec", help_heading = heading::SINK)]
    pub postgres: Option<String>,
    /// Commit each message by piping it to `sh -c CMD`.
    ///
    /// The command sees MLLP_PEER, MLLP_CONTROL_ID and MLLP_MESSAGE_TYPE in its environment;
    /// exit 0 commits, --reject-exit-code rejects, anything else fails. The first line it prints
    /// on stdout (control bytes and HL7 separators taken out, at most 80 bytes) words the answer:
    /// MSA-3, and ERR-8 when negative. Each command runs in its own process group, killed when
    /// the command exits.
    #[arg(long, value_name = "CMD", help_heading = heading::SINK)]
    pub exec: Option<String>,
    /// The --exec exit status that rejects a message (AR/CR).
    #[arg(long, value_name = "CODE", default_value_t = 2, requires = "exec", help_heading = heading::SINK)]
    pub reject_exit_code: i32,
    /// Kill an --exec command and its group after this long.
    ///
    /// Its whole process group is killed, as on a stop; the message is not committed and is
    /// answered AE/CE.
    #[arg(long, value_name = "DURATION", value_parser = crate::values::duration(), default_value = "30s", requires = "exec", help_heading = heading::SINK)]
    pub exec_timeout: Duration,
    /// --exec commands running at once.
    #[arg(long, value_name = "N", default_value_t = 4, requires = "exec", help_heading = heading::SINK)]
    pub exec_concurrency: usize,

    /// How to answer: auto, none, or a forced code (AA, AE, ...).
    ///
    /// `auto` follows MSH-15 and the commit; `none` never answers (and keeps everything); a code
    /// forces it for testing (still never positive for an uncommitted or damaged message, and a
    /// forced negative code keeps nothing).
    #[arg(long, value_name = "MODE", value_enum, hide_possible_values = true, default_value_t = AckArg::Auto, help_heading = heading::ANSWER)]
    pub ack: AckArg,
    /// Answer a repeated message positively without committing it again.
    ///
    /// A repeat has the same MSH-3, MSH-4, MSH-10 and MSH-7 as a message already committed, also
    /// within one group of pipelined messages (remembered in --out-dir's journal and files, or
    /// by a unique index with --sqlite and --postgres).
    #[arg(long, help_heading = heading::ANSWER)]
    pub dedupe: bool,
    /// Messages --dedupe remembers (not with a database sink).
    #[arg(long, value_name = "N", default_value_t = 100_000, requires = "dedupe", help_heading = heading::ANSWER)]
    pub dedupe_window: usize,
    /// Commit a batch (FHS/BHS) as one unit and answer it with one ACK.
    #[arg(long, help_heading = heading::ANSWER)]
    pub batch_ack: bool,
    /// Speak MLLP Release 2 (commit and NAK blocks).
    ///
    /// A commit block (VT 0x06 FS CR) once the message is committed, a NAK block (VT 0x15 FS
    /// CR) when nothing of it was kept. An application ACK (MSH-15/16 enhanced mode) follows
    /// as an HL7 message, and the sender's block for it is read, not committed.
    #[arg(long, help_heading = heading::ANSWER)]
    pub mllp2: bool,

    /// Hold every ACK back this long after the commit.
    #[arg(long, value_parser = crate::values::duration(), value_name = "DURATION", help_heading = heading::TEST_DOUBLE)]
    pub ack_delay: Option<Duration>,
    /// Share (0..1) not committed, answered AE/CE.
    #[arg(long, value_name = "FRACTION", default_value_t = 0.0, help_heading = heading::TEST_DOUBLE)]
    pub nack_rate: f64,
    /// Share (0..1) not committed, answered AR/CR.
    #[arg(long, value_name = "FRACTION", default_value_t = 0.0, help_heading = heading::TEST_DOUBLE)]
    pub reject_rate: f64,
    /// Share (0..1) committed, never answered.
    #[arg(long, value_name = "FRACTION", default_value_t = 0.0, help_heading = heading::TEST_DOUBLE)]
    pub silent_rate: f64,
    /// Answer N messages on each connection, then close it.
    #[arg(long, value_name = "N", help_heading = heading::TEST_DOUBLE)]
    pub drop_after: Option<u64>,
    /// Seed for the rates (default: from the clock, shown in the stats).
    #[arg(long, value_name = "SEED", help_heading = heading::TEST_DOUBLE)]
    pub seed: Option<u64>,

    #[command(flatten, next_help_heading = heading::TLS)]
    pub server_tls: ServerTlsArgs,
    /// TLS to the engine --dial connects to.
    #[command(flatten, next_help_heading = heading::DIAL_TLS)]
    pub dial_tls: crate::netargs::TlsArgs,
    #[command(flatten)]
    pub guards: GuardArgs,
    /// On a stop, how long commits under way may take.
    #[arg(long, value_name = "DURATION", value_parser = crate::values::duration(), default_value = "30s", help_heading = heading::LIMITS)]
    pub drain_timeout: Duration,

    /// JSON: --log-format json, and --format json when stdout is the sink.
    #[arg(long, help_heading = heading::OUTPUT)]
    pub json: bool,
    #[command(flatten)]
    pub log_rate: LogRateArgs,
    /// Serve Prometheus metrics over HTTP on ADDR (e.g. 127.0.0.1:9898).
    ///
    /// A wildcard address needs --allow-wildcard; at most 16 scrapes at once, each closed after
    /// 10 s.
    #[arg(long, value_name = "ADDR", help_heading = heading::OUTPUT)]
    pub metrics: Option<SocketAddr>,
}

/// How many lines a second the peers can make the log take (`listen`, and `relay`'s downstream
/// side).
#[derive(Debug, Clone, Args)]
pub struct LogRateArgs {
    /// Message lines a second per connection; 0: no limit.
    ///
    /// Message, answer and warning lines past it in one second are counted, not written; one
    /// `suppressed` line says how many, when the connection next writes or closes. The --exec
    /// command's stderr lines (labelled exec[PID], each cut at 1000 bytes) have the same limit.
    /// Lines opening and closing connections are always written.
    #[arg(long, value_name = "N", default_value_t = 100, help_heading = heading::OUTPUT)]
    pub log_rate: u32,
    /// Message lines a second, all together; 0: no limit.
    ///
    /// The lines --log-rate lets through (and its `suppressed` lines) past it in one second are
    /// counted, not written; one `suppressed` line a second says how many.
    #[arg(long, value_name = "N", default_value_t = 1000, help_heading = heading::OUTPUT)]
    pub log_rate_total: u32,
}

impl LogRateArgs {
    /// The limiter these flags set.
    pub fn limiter(&self) -> crate::listen::render::LogRate {
        crate::listen::render::LogRate::new(self.log_rate, self.log_rate_total)
    }
}

/// TLS served to the peers that connect (`listen`, and `relay`'s downstream side).
#[derive(Debug, Clone, Args)]
pub struct ServerTlsArgs {
    /// Serve TLS with this certificate chain (PEM).
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// The private key (PEM) of --tls-cert.
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// Roots (PEM) client certificates are verified against.
    ///
    /// Needed by --client-auth want and must.
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub client_ca: Option<PathBuf>,
    /// Client certificates: none, want, must.
    ///
    /// none: not asked for. want: asked for, verified when given. must: required.
    #[arg(long, value_name = "MODE", value_enum, hide_possible_values = true, default_value_t = ClientAuthArg::None, requires = "tls_cert")]
    pub client_auth: ClientAuthArg,
    /// Bound on a client's TLS handshake.
    #[arg(long, value_name = "DURATION", value_parser = crate::values::duration(), default_value = "10s")]
    pub tls_handshake_timeout: Duration,
}

/// Framing tolerance and the guards on what connecting peers may use (`listen`, and `relay`'s
/// downstream side).
#[derive(Debug, Clone, Args)]
pub struct GuardArgs {
    /// Turn every framing tolerance off.
    ///
    /// The tolerances: FS without CR, LF after FS, whitespace before VT.
    #[arg(long, help_heading = heading::LIMITS)]
    pub strict: bool,
    /// Largest payload accepted (K, M, G suffixes).
    ///
    /// A larger frame is dropped as it arrives and answered AR (nothing kept, MSA-3 and ERR say
    /// it is too large); the connection stays open.
    #[arg(long, value_name = "SIZE", value_parser = crate::values::size(), default_value = "16MiB", help_heading = heading::LIMITS)]
    pub max_frame_size: u64,
    /// Connections open at once.
    ///
    /// Peers beyond it are accepted and closed at once (cause max-connections).
    #[arg(long, value_name = "N", default_value_t = 1024, help_heading = heading::LIMITS)]
    pub max_connections: usize,
    /// Connections per address [default: --max-connections / 4].
    ///
    /// Extra ones are accepted and closed at once (cause per-peer-limit).
    #[arg(long, value_name = "N", help_heading = heading::LIMITS)]
    pub max_connections_per_peer: Option<usize>,
    /// Bound on receiving one frame; 0 turns it off.
    ///
    /// Runs from the first byte after the last complete frame (whitespace counts) to the frame's
    /// end; a connection past it is closed (cause frame-timeout).
    #[arg(long, value_parser = parse_optional_duration, default_value = "60s", value_name = "DURATION", help_heading = heading::LIMITS)]
    pub frame_timeout: OptionalDuration,
    /// Memory held for all peers.
    ///
    /// Counts, whatever the sink: the read buffers connections allocated for partial frames,
    /// complete frames until their answers are written (waiting in the sink's writer queue, an
    /// --exec pipe or --ack-delay included), ACKs not yet taken by the peer, and in relay the
    /// messages waiting for the upstream. At the budget, connections stop being read until room comes back; a
    /// partial frame that cannot grow while nothing held frees itself closes its connection
    /// (cause buffer-budget, code MLLP_FRAME_TOO_LARGE). One address may hold the same share of
    /// it as of --max-connections (but always room for one --max-frame-size).
    #[arg(long, value_parser = crate::values::size(), default_value = "256MiB", value_name = "SIZE", help_heading = heading::LIMITS)]
    pub max_buffered: u64,
    /// Close a link idle this long (default: never).
    #[arg(long, value_name = "DURATION", value_parser = crate::values::duration(), help_heading = heading::LIMITS)]
    pub idle_timeout: Option<Duration>,
    /// At the cap, evict one idle this long; 0: never.
    ///
    /// A new peer then closes the connection idle the longest (nothing partly received, nothing
    /// awaiting commit or answer), cause evicted-idle, instead of being turned away.
    #[arg(long, value_parser = parse_optional_duration, default_value = "60s", value_name = "DURATION", help_heading = heading::LIMITS)]
    pub evict_idle_after: OptionalDuration,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Segments as lines, a blank line after each message.
    Hl7,
    /// One JSON object per message per line.
    Json,
    /// Each message re-framed as MLLP, byte for byte.
    Raw,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ClientAuthArg {
    None,
    Want,
    Must,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
#[value(rename_all = "verbatim")]
pub enum AckArg {
    #[value(name = "auto")]
    Auto,
    #[value(name = "none")]
    None,
    AA,
    AE,
    AR,
    CA,
    CE,
    CR,
}

/// A duration where `0` means "none".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OptionalDuration(pub Option<Duration>);

fn parse_optional_duration(
    text: &str,
) -> Result<OptionalDuration, crate::values::grammar::InvalidValue> {
    crate::values::grammar::parse_optional_duration(text).map(OptionalDuration)
}

impl ListenArgs {
    /// The server settings, checked.
    pub fn config(&self) -> Result<ServerConfig, SetupError> {
        let ack = match self.ack {
            AckArg::Auto => AckMode::Auto,
            AckArg::None => AckMode::None,
            AckArg::AA => AckMode::Forced(AckCode::AA),
            AckArg::AE => AckMode::Forced(AckCode::AE),
            AckArg::AR => AckMode::Forced(AckCode::AR),
            AckArg::CA => AckMode::Forced(AckCode::CA),
            AckArg::CE => AckMode::Forced(AckCode::CE),
            AckArg::CR => AckMode::Forced(AckCode::CR),
        };
        let config = ServerConfig {
            drain_timeout: self.drain_timeout,
            ack,
            batch_ack: self.batch_ack,
            release: if self.mllp2 {
                Release::Two
            } else {
                Release::One
            },
            proxy: self.proxy_protocol.then(|| {
                let mut proxy = ProxyProtocol::default();
                if !self.proxy_from.is_empty() {
                    proxy.from = self.proxy_from.clone();
                }
                proxy
            }),
            ..self.guards.config()
        };
        setup::check(&config, self.exec_concurrency, self.exec_timeout)?;
        Ok(config)
    }

    /// The sink, wrapped to remember committed messages under --dedupe, and that memory.
    pub fn sink(&self) -> Result<(Arc<dyn Sink>, Memory), SetupError> {
        setup::open_sink(
            &self.commit(),
            self.dedupe.then_some(self.dedupe_window),
            usize::try_from(self.guards.max_frame_size).unwrap_or(usize::MAX),
        )
    }

    /// Where messages are committed: --sqlite, --out-dir, --exec, else stdout.
    fn commit(&self) -> Commit {
        if let Some(file) = &self.sqlite {
            return Commit::Sqlite(file.clone());
        }
        if let Some(dir) = &self.out_dir {
            return Commit::OutDir(dir.clone());
        }
        if let Some(command) = &self.exec {
            return Commit::Exec(ExecOptions {
                command: command.clone(),
                reject_exit_code: self.reject_exit_code,
                timeout: self.exec_timeout,
                concurrency: self.exec_concurrency,
            });
        }
        Commit::Stdout(match self.stdout_format() {
            Format::Hl7 => OutputFormat::Hl7,
            Format::Json => OutputFormat::Json,
            Format::Raw => OutputFormat::Raw,
        })
    }

    /// What the stdout sink prints: --format, else json under --json, else hl7.
    pub fn stdout_format(&self) -> Format {
        match (self.format, self.json) {
            (Some(format), _) => format,
            (None, true) => Format::Json,
            (None, false) => Format::Hl7,
        }
    }

    /// The test double (when any of its flags is set), with --dedupe's check in front; the
    /// seed actually used.
    pub fn policy(&self, memory: Memory) -> Result<(Arc<dyn Policy>, Option<u64>), SetupError> {
        let options = DoubleOptions {
            ack_delay: self.ack_delay,
            nack_rate: self.nack_rate,
            reject_rate: self.reject_rate,
            silent_rate: self.silent_rate,
            drop_after: self.drop_after,
            seed: self.seed.unwrap_or_else(setup::clock_seed),
        };
        setup::policy(options, memory)
    }

    /// The TLS acceptor, when --tls-cert is given.
    pub fn tls(&self) -> Result<Option<TlsAcceptor>, TlsConfigError> {
        self.server_tls.acceptor()
    }
}

impl ServerTlsArgs {
    /// The TLS acceptor, when --tls-cert is given.
    pub fn acceptor(&self) -> Result<Option<TlsAcceptor>, TlsConfigError> {
        let (Some(cert_file), Some(key_file)) = (&self.tls_cert, &self.tls_key) else {
            return Ok(None);
        };
        let options = ServerTlsOptions {
            cert_file: cert_file.clone(),
            key_file: key_file.clone(),
            client_ca: self.client_ca.clone(),
            client_auth: match self.client_auth {
                ClientAuthArg::None => ClientAuth::None,
                ClientAuthArg::Want => ClientAuth::Want,
                ClientAuthArg::Must => ClientAuth::Must,
            },
            ..ServerTlsOptions::default()
        };
        options.acceptor(self.tls_handshake_timeout).map(Some)
    }
}

impl GuardArgs {
    /// The server settings these guards fix; the rest at the library's defaults.
    pub fn config(&self) -> ServerConfig {
        ServerConfig {
            tolerance: if self.strict {
                Tolerance::STRICT
            } else {
                Tolerance::RECEIVER
            },
            max_frame: usize::try_from(self.max_frame_size).unwrap_or(usize::MAX),
            max_connections: self.max_connections,
            max_connections_per_peer: self.max_connections_per_peer,
            frame_timeout: self.frame_timeout.0,
            max_buffered: usize::try_from(self.max_buffered).unwrap_or(usize::MAX),
            idle_timeout: self.idle_timeout,
            evict_idle_after: self.evict_idle_after.0,
            ..ServerConfig::default()
        }
    }
}
