//! `mllp listen`: flags, a validated server configuration, the run, and the exit code.

mod render;

use crate::diag::Diag;
use crate::exit::Exit;
use anyhow::Context;
use clap::{Args, ValueEnum};
use mllp::ack::AckCode;
use mllp::framing::Tolerance;
use mllp::server::sink::{ExecOptions, ExecSink, OutDirSink, OutputFormat, StdoutSink};
use mllp::server::{AckMode, BindError, Server, ServerConfig, Shutdown, Sink};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

const EXAMPLES: &str = "\
Examples:
  mllp listen --port 0                          print each message on stdout, ACK after the flush
  mllp listen --out-dir inbox/                  one fsynced .hl7 file per message before its ACK
  mllp listen --exec './store.sh' --format json exit 0 -> AA, 2 -> AR, other -> AE
  mllp listen --ack none > capture.hl7          a pure sink: commit, never answer";

#[derive(Debug, Args)]
#[command(after_help = EXAMPLES)]
pub struct ListenArgs {
    /// Address to bind. A wildcard (0.0.0.0, ::) needs --allow-wildcard.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: String,
    /// Port to bind; 0 picks a free one (the `listening` event says which).
    #[arg(long, default_value_t = 2575)]
    pub port: u16,
    /// Allow binding every interface (prints security warning MLLP_BIND_ALL_INTERFACES).
    #[arg(long)]
    pub allow_wildcard: bool,

    /// How the stdout sink prints each message.
    #[arg(long, value_enum, default_value_t = Format::Hl7)]
    pub format: Format,
    /// Commit each message as one fsynced .hl7 file in DIR instead of printing it.
    #[arg(long, value_name = "DIR", conflicts_with = "exec")]
    pub out_dir: Option<PathBuf>,
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

    /// Turn every framing tolerance off (FS without CR, LF after FS, whitespace before VT).
    #[arg(long)]
    pub strict: bool,
    /// Largest payload accepted, in bytes (suffixes K, KiB, M, MiB); larger frames end the
    /// connection.
    #[arg(long, value_parser = parse_size, default_value = "16MiB")]
    pub max_frame_size: usize,
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

fn parse_size(text: &str) -> Result<usize, String> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, unit) = t.split_at(split);
    let n: usize = digits
        .parse()
        .map_err(|_| format!("`{text}` is not a size"))?;
    let scale = match unit.trim() {
        "" | "B" => 1,
        "K" | "KiB" | "k" => 1024,
        "M" | "MiB" => 1024 * 1024,
        other => return Err(format!("unknown size unit `{other}` (use K, KiB, M, MiB)")),
    };
    match n.checked_mul(scale) {
        Some(0) | None => Err(format!("`{text}` must be between 1 byte and 4 GiB")),
        Some(size) => Ok(size),
    }
}

impl ListenArgs {
    fn config(&self) -> anyhow::Result<ServerConfig> {
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
            max_frame: self.max_frame_size,
            max_connections: self.max_connections,
            idle_timeout: self.idle_timeout,
            drain_timeout: self.drain_timeout,
            ack,
            ..ServerConfig::default()
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

    fn sink(&self) -> anyhow::Result<Arc<dyn Sink>> {
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
}

pub fn run(args: ListenArgs, diag: &Diag) -> anyhow::Result<Exit> {
    let config = args.config()?;
    let sink = args.sink()?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the runtime")?;
    let exit = runtime.block_on(serve(&args, config, sink, diag));
    // A blocking write stuck on a dead pipe must not keep the process alive after the stop.
    runtime.shutdown_timeout(Duration::from_secs(1));
    exit
}

async fn serve(
    args: &ListenArgs,
    config: ServerConfig,
    sink: Arc<dyn Sink>,
    diag: &Diag,
) -> anyhow::Result<Exit> {
    let listener = match mllp::server::bind(&args.host, args.port, args.allow_wildcard).await {
        Ok(listener) => listener,
        Err(e @ BindError::Wildcard { .. }) => {
            eprintln!("mllp: error: {e}");
            return Ok(Exit::Usage);
        }
        Err(e) => {
            eprintln!("mllp: error: {e}");
            return Ok(Exit::Permanent);
        }
    };
    let (tx, rx) = tokio::sync::mpsc::channel(4096);
    let renderer = render::spawn(diag.clone(), rx)?;
    let server = Server::builder(config, sink).events(tx).build()?;
    let shutdown = Shutdown::new();
    let signals = watch_signals(shutdown.clone())?;
    let stats = server.run(listener, shutdown).await;
    signals.abort();
    drop(server);
    // The renderer ends when the last event sender (inside the server) is gone.
    let _ = tokio::task::spawn_blocking(move || renderer.join()).await;
    render::stats(diag, &stats);
    Ok(Exit::Success)
}

/// First SIGINT/SIGTERM: graceful stop. Second: stop at once.
fn watch_signals(shutdown: Shutdown) -> anyhow::Result<tokio::task::JoinHandle<()>> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut int = signal(SignalKind::interrupt()).context("installing the SIGINT handler")?;
    let mut term = signal(SignalKind::terminate()).context("installing the SIGTERM handler")?;
    Ok(tokio::spawn(async move {
        for stop in [&shutdown.graceful, &shutdown.immediate] {
            tokio::select! {
                _ = int.recv() => {}
                _ = term.recv() => {}
            }
            stop.cancel();
        }
    }))
}
