//! A receiver put together from settings, as `mllp listen` takes them: the settings checked,
//! the sink opened (with the de-duplication memory in front when asked for), and the answering
//! policy. Errors name the setting as the command line spells it.

use mllp::server::{
    CommitAll, ConfigError, DedupeMemory, DedupePolicy, DedupeSink, DoubleError, DoubleOptions,
    Policy, ServerConfig, Sink, TestDouble,
};
use mllp::server::{ExecOptions, ExecSink, OutDirSink, OutputFormat, StdoutSink};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// The de-duplication memory the sink wrapper and the policy share, when there is one.
pub type Memory = Option<Arc<DedupeMemory>>;

/// Where a receiver commits its messages.
#[derive(Debug, Clone)]
pub enum Commit {
    /// Print each message on stdout in this format.
    Stdout(OutputFormat),
    /// One fsynced file per message in this directory.
    OutDir(PathBuf),
    /// A row per message in this SQLite file.
    #[cfg(feature = "sqlite")]
    Sqlite(PathBuf),
    /// Pipe each message to a shell command.
    Exec(ExecOptions),
}

/// A setting that cannot make a receiver, or a sink that cannot be opened.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SetupError {
    /// A server setting out of range.
    #[error("--{}", flag_name(.0))]
    Config(ConfigError),
    /// `--exec-concurrency 0`.
    #[error("--exec-concurrency must be greater than zero")]
    ExecConcurrency,
    /// `--exec-timeout 0`.
    #[error("--exec-timeout must be greater than zero")]
    ExecTimeout,
    /// `--dedupe-window 0`.
    #[error("--dedupe-window must be greater than zero")]
    DedupeWindow,
    /// The de-duplication journal in the output directory cannot be used.
    #[error("--dedupe: cannot use the journal {}", .journal.display())]
    Journal {
        /// The journal's path.
        journal: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The SQLite file cannot be opened.
    #[cfg(feature = "sqlite")]
    #[error("--sqlite")]
    Sqlite(#[source] mllp::server::SqliteError),
    /// The output directory cannot be written.
    #[error("--out-dir {}: not a writable directory", .dir.display())]
    OutDir {
        /// The directory.
        dir: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The stdout writer did not start.
    #[error("starting the stdout writer")]
    Stdout(#[source] std::io::Error),
    /// A test-double setting out of range.
    #[error("--{0}")]
    Double(DoubleError),
}

/// `max_frame` as the flag spells it: `max-frame-size`.
fn flag_name(error: &ConfigError) -> String {
    error
        .to_string()
        .replace('_', "-")
        .replace("max-frame", "max-frame-size")
}

/// Check the server settings and the `--exec` bounds that go with them.
pub fn check(
    config: &ServerConfig,
    exec_concurrency: usize,
    exec_timeout: Duration,
) -> Result<(), SetupError> {
    config.validate().map_err(SetupError::Config)?;
    if exec_concurrency == 0 {
        return Err(SetupError::ExecConcurrency);
    }
    if exec_timeout.is_zero() {
        return Err(SetupError::ExecTimeout);
    }
    Ok(())
}

/// The sink, and with `dedupe` (the window) the memory of committed messages wrapped around
/// it, shared with [`policy`]. SQLite remembers by its own unique index: no memory then.
/// `max_frame` bounds what an out-dir's files are read back at.
pub fn open_sink(
    commit: &Commit,
    dedupe: Option<usize>,
    max_frame: usize,
) -> Result<(Arc<dyn Sink>, Memory), SetupError> {
    let sink: Arc<dyn Sink> = match commit {
        #[cfg(feature = "sqlite")]
        Commit::Sqlite(file) => {
            let sink = mllp::server::SqliteSink::open(file, dedupe.is_some())
                .map_err(SetupError::Sqlite)?;
            return Ok((Arc::new(sink), None));
        }
        Commit::OutDir(dir) => {
            Arc::new(OutDirSink::new(dir).map_err(|source| SetupError::OutDir {
                dir: dir.clone(),
                source,
            })?)
        }
        Commit::Exec(options) => Arc::new(ExecSink::new(options.clone())),
        Commit::Stdout(format) => Arc::new(StdoutSink::new(*format).map_err(SetupError::Stdout)?),
    };
    let Some(window) = dedupe else {
        return Ok((sink, None));
    };
    if window == 0 {
        return Err(SetupError::DedupeWindow);
    }
    let memory = match commit {
        Commit::OutDir(dir) => {
            DedupeMemory::for_out_dir(window, dir, max_frame).map_err(|source| {
                SetupError::Journal {
                    journal: DedupeMemory::journal_in(dir),
                    source,
                }
            })?
        }
        _ => DedupeMemory::in_memory(window),
    };
    let memory = Arc::new(memory);
    Ok((
        Arc::new(DedupeSink::new(sink, Arc::clone(&memory))),
        Some(memory),
    ))
}

/// The answering policy: the test double when any of its options does something (else commit
/// everything), with the de-duplication check in front when there is a memory. Also the seed
/// the double uses, when there is one.
pub fn policy(
    double: DoubleOptions,
    memory: Memory,
) -> Result<(Arc<dyn Policy>, Option<u64>), SetupError> {
    let seed = double.seed;
    let (policy, seed): (Arc<dyn Policy>, _) = if double.is_inert() {
        (Arc::new(CommitAll), None)
    } else {
        let double = TestDouble::new(double).map_err(SetupError::Double)?;
        (Arc::new(double), Some(seed))
    };
    Ok(match memory {
        Some(memory) => (Arc::new(DedupePolicy::new(policy, memory)), seed),
        None => (policy, seed),
    })
}

/// A seed for the test double's rates from the clock, for runs that name none.
pub fn clock_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_out_of_range_are_named_as_flags() {
        let config = ServerConfig {
            max_frame: 0,
            ..ServerConfig::default()
        };
        let err = check(&config, 4, Duration::from_secs(1)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "--max-frame-size must be greater than zero"
        );
        let ok = ServerConfig::default();
        let err = check(&ok, 0, Duration::from_secs(1)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "--exec-concurrency must be greater than zero"
        );
        assert!(check(&ok, 1, Duration::ZERO).is_err());
        let exec = Commit::Exec(ExecOptions::new("true"));
        let err = open_sink(&exec, Some(0), 1024).err().unwrap();
        assert_eq!(err.to_string(), "--dedupe-window must be greater than zero");
    }

    #[test]
    fn dedupe_puts_one_memory_before_the_sink_and_the_policy() {
        let exec = Commit::Exec(ExecOptions::new("true"));
        let (_, memory) = open_sink(&exec, Some(8), 1024).unwrap();
        assert!(memory.is_some());
        assert!(open_sink(&exec, None, 1024).unwrap().1.is_none());
        let inert = DoubleOptions {
            seed: 7,
            ..DoubleOptions::default()
        };
        assert_eq!(policy(inert, memory).unwrap().1, None);
        let double = DoubleOptions {
            nack_rate: 0.5,
            seed: 7,
            ..DoubleOptions::default()
        };
        assert_eq!(policy(double, None).unwrap().1, Some(7));
    }
}
