//! `mllp listen`'s flags, and what they build: the server configuration, the sink, the policy
//! and the TLS acceptor.

use anyhow::Context;
use clap::{Args, ValueEnum};
use mllp::ack::AckCode;
use mllp::framing::Tolerance;
use mllp::server::sink::{ExecOptions, ExecSink, OutDirSink, OutputFormat, SqliteSink, StdoutSink};
use mllp::server::{
    AckMode, CommitAll, DedupeMemory, DedupePolicy, DedupeSink, DoubleOptions, Policy,
    ServerConfig, Sink, TestDouble,
};
use mllp::tls::{ClientAuth, ServerTlsOptions, TlsAcceptor, TlsConfigError};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// The de-duplication memory shared by the sink wrapper and the policy.
pub type Memory = Option<Arc<DedupeMemory>>;

const EXAMPLES: &str = "\
Examples:
  mllp listen --port 0                          print each message on stdout, ACK after the flush
  mllp listen --out-dir inbox/                  one fsynced .hl7 file per message before its ACK
  mllp listen --exec './store.sh' --format json exit 0 -> AA, 2 -> AR, other -> AE
  mllp listen --ack none > capture.hl7          a pure sink: commit, never answer
  mllp listen --sqlite rx.db --dedupe           rows in SQLite, repeats answered, not stored
  mllp listen --tls-cert s.pem --tls-key s.key --client-ca ca.pem --client-auth must
  mllp listen --nack-rate 0.1 --ack-delay 200ms --seed 7   a misbehaving peer for testing";

#[derive(Debug, Args)]
#[command(after_help = crate::exit::after_help(EXAMPLES, crate::exit::For::Listen))]
pub struct ListenArgs {
    /// Address to bind. A wildcard (0.0.0.0, ::) needs --allow-wildcard.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: String,
    /// Port to bind; 0 picks a free one (the `listening` event says which).
    #[arg(long, default_value = "2575", value_parser = crate::values::bind_port())]
    pub port: u16,
    /// Allow binding every interface (prints security warning MLLP_BIND_ALL_INTERFACES).
    #[arg(long)]
    pub allow_wildcard: bool,

    /// How the stdout sink prints each message.
    #[arg(long, value_enum, default_value_t = Format::Hl7)]
    pub format: Format,
    /// Commit each message as one fsynced .hl7 file in DIR instead of printing it.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["exec", "sqlite"])]
    pub out_dir: Option<PathBuf>,
    /// Commit each message as a row of table `messages` in an SQLite database FILE (created on
    /// first use; WAL, full synchronous commits, one transaction per group of messages).
    #[arg(long, value_name = "FILE", conflicts_with = "exec")]
    pub sqlite: Option<PathBuf>,
    /// Commit each message by piping it to `sh -c CMD` (env MLLP_PEER, MLLP_CONTROL_ID,
    /// MLLP_MESSAGE_TYPE); exit 0 commits, --reject-exit-code rejects, anything else fails.
    #[arg(long, value_name = "CMD")]
    pub exec: Option<String>,
    /// The --exec exit status that rejects a message (AR/CR).
    #[arg(long, default_value_t = 2, requires = "exec")]
    pub reject_exit_code: i32,
    /// Kill an --exec command still running after this long and fail its message (AE/CE).
    #[arg(long, value_parser = humantime::parse_duration, default_value = "30s", requires = "exec")]
    pub exec_timeout: Duration,
    /// --exec commands running at once.
    #[arg(long, default_value_t = 4, requires = "exec")]
    pub exec_concurrency: usize,

    /// How to answer: `auto` follows MSH-15 and the commit; `none` never answers; a code forces
    /// it for testing (still never positive for an uncommitted or damaged message).
    #[arg(long, value_enum, default_value_t = AckArg::Auto)]
    pub ack: AckArg,

    /// Answer a message whose MSH-10 + MSH-7 was already committed positively, without committing
    /// it again (remembered in --out-dir's journal, or by a unique index with --sqlite).
    #[arg(long)]
    pub dedupe: bool,
    /// How many committed messages --dedupe remembers (not used with --sqlite: the table is the
    /// memory).
    #[arg(long, value_name = "N", default_value_t = 100_000, requires = "dedupe")]
    pub dedupe_window: usize,
    /// Commit a batch frame (FHS/BHS) as one unit and answer it with a batch acknowledgement.
    #[arg(long)]
    pub batch_ack: bool,

    /// Test double: hold every ACK back this long after the commit.
    #[arg(long, value_parser = humantime::parse_duration, value_name = "DURATION")]
    pub ack_delay: Option<Duration>,
    /// Test double: this share of messages (0..1) is not committed and answered AE/CE.
    #[arg(long, value_name = "P", default_value_t = 0.0)]
    pub nack_rate: f64,
    /// Test double: this share of messages (0..1) is not committed and answered AR/CR.
    #[arg(long, value_name = "P", default_value_t = 0.0)]
    pub reject_rate: f64,
    /// Test double: this share of messages (0..1) is committed and never answered.
    #[arg(long, value_name = "P", default_value_t = 0.0)]
    pub silent_rate: f64,
    /// Test double: answer N messages on each connection, then close it.
    #[arg(long, value_name = "N")]
    pub drop_after: Option<u64>,
    /// Seed for the test-double rates (default: from the clock, printed in the stats).
    #[arg(long, value_name = "S")]
    pub seed: Option<u64>,

    /// Serve TLS with this certificate chain (PEM); needs --tls-key.
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// The private key (PEM) of --tls-cert.
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// Roots (PEM) that client certificates are verified against; needed by --client-auth
    /// want|must.
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub client_ca: Option<PathBuf>,
    /// Client certificates: not asked for, asked for and verified when given, or required.
    #[arg(long, value_enum, default_value_t = ClientAuthArg::None, requires = "tls_cert")]
    pub client_auth: ClientAuthArg,
    /// A client that has not finished its TLS handshake within this long is dropped.
    #[arg(long, value_parser = humantime::parse_duration, default_value = "10s")]
    pub tls_handshake_timeout: Duration,

    /// Serve Prometheus metrics over HTTP on ADDR (e.g. 127.0.0.1:9898).
    #[arg(long, value_name = "ADDR")]
    pub metrics: Option<SocketAddr>,

    /// Turn every framing tolerance off (FS without CR, LF after FS, whitespace before VT).
    #[arg(long)]
    pub strict: bool,
    /// Largest payload accepted, in bytes (suffixes K, M, G, also KiB, MiB, GiB); larger frames
    /// end the connection.
    #[arg(long, value_name = "SIZE", value_parser = crate::values::size(), default_value = "16MiB")]
    pub max_frame_size: u64,
    /// Connections open at once; extra peers are accepted and closed at once.
    #[arg(long, default_value_t = 1024)]
    pub max_connections: usize,
    /// Close a connection that sends nothing for this long (default: never).
    #[arg(long, value_parser = humantime::parse_duration)]
    pub idle_timeout: Option<Duration>,
    /// On SIGINT/SIGTERM, how long commits under way may take to finish and be acknowledged.
    #[arg(long, value_parser = humantime::parse_duration, default_value = "30s")]
    pub drain_timeout: Duration,
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

impl ListenArgs {
    pub fn config(&self) -> anyhow::Result<ServerConfig> {
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
            tolerance: if self.strict {
                Tolerance::STRICT
            } else {
                Tolerance::RECEIVER
            },
            max_frame: usize::try_from(self.max_frame_size).unwrap_or(usize::MAX),
            max_connections: self.max_connections,
            idle_timeout: self.idle_timeout,
            drain_timeout: self.drain_timeout,
            ack,
            ..ServerConfig::default()
        };
        let config = ServerConfig {
            batch_ack: self.batch_ack,
            ..config
        };
        config.validate().map_err(|e| {
            anyhow::anyhow!(
                "--{}",
                e.to_string()
                    .replace('_', "-")
                    .replace("max-frame", "max-frame-size")
            )
        })?;
        if self.exec_concurrency == 0 {
            anyhow::bail!("--exec-concurrency must be greater than zero");
        }
        if self.exec_timeout.is_zero() {
            anyhow::bail!("--exec-timeout must be greater than zero");
        }
        Ok(config)
    }

    /// The sink, wrapped to remember committed messages under --dedupe, and that memory.
    pub fn sink(&self) -> anyhow::Result<(Arc<dyn Sink>, Memory)> {
        let sink = self.plain_sink()?;
        Ok(match self.dedupe_memory()? {
            Some(memory) => (
                Arc::new(DedupeSink::new(sink, Arc::clone(&memory))),
                Some(memory),
            ),
            None => (sink, None),
        })
    }

    /// The --dedupe memory, unless --sqlite's table is the memory.
    fn dedupe_memory(&self) -> anyhow::Result<Option<Arc<DedupeMemory>>> {
        if !self.dedupe || self.sqlite.is_some() {
            return Ok(None);
        }
        if self.dedupe_window == 0 {
            anyhow::bail!("--dedupe-window must be greater than zero");
        }
        let journal = self.out_dir.as_deref().map(DedupeMemory::journal_in);
        let memory =
            DedupeMemory::open(self.dedupe_window, journal.as_deref()).with_context(|| {
                match &journal {
                    Some(path) => format!("--dedupe: cannot use the journal {}", path.display()),
                    None => "--dedupe".to_string(),
                }
            })?;
        Ok(Some(Arc::new(memory)))
    }

    fn plain_sink(&self) -> anyhow::Result<Arc<dyn Sink>> {
        if let Some(file) = &self.sqlite {
            let sink = SqliteSink::open(file, self.dedupe).context("--sqlite")?;
            return Ok(Arc::new(sink));
        }
        if let Some(dir) = &self.out_dir {
            let sink = OutDirSink::new(dir).with_context(|| {
                format!("--out-dir {}: not a writable directory", dir.display())
            })?;
            return Ok(Arc::new(sink));
        }
        if let Some(command) = &self.exec {
            return Ok(Arc::new(ExecSink::new(ExecOptions {
                command: command.clone(),
                reject_exit_code: self.reject_exit_code,
                timeout: self.exec_timeout,
                concurrency: self.exec_concurrency,
            })));
        }
        let format = match self.format {
            Format::Hl7 => OutputFormat::Hl7,
            Format::Json => OutputFormat::Json,
            Format::Raw => OutputFormat::Raw,
        };
        Ok(Arc::new(
            StdoutSink::new(format).context("starting the stdout writer")?,
        ))
    }

    /// The test double (when any of its flags is set), with --dedupe's check in front; the
    /// seed actually used.
    pub fn policy(
        &self,
        sink_memory: Option<Arc<DedupeMemory>>,
    ) -> anyhow::Result<(Arc<dyn Policy>, Option<u64>)> {
        let seed = self.seed.unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(1)
        });
        let options = DoubleOptions {
            ack_delay: self.ack_delay,
            nack_rate: self.nack_rate,
            reject_rate: self.reject_rate,
            silent_rate: self.silent_rate,
            drop_after: self.drop_after,
            seed,
        };
        let (policy, seed): (Arc<dyn Policy>, _) = if options.is_inert() {
            (Arc::new(CommitAll), None)
        } else {
            let double = TestDouble::new(options).map_err(|e| anyhow::anyhow!("--{e}"))?;
            (Arc::new(double), Some(seed))
        };
        Ok(match sink_memory {
            Some(memory) => (Arc::new(DedupePolicy::new(policy, memory)), seed),
            None => (policy, seed),
        })
    }

    /// The TLS acceptor, when --tls-cert is given.
    pub fn tls(&self) -> Result<Option<TlsAcceptor>, TlsConfigError> {
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
