//! The command sink: each message piped to `sh -c CMD`, its exit status deciding the answer
//! (0 committed, the reject code rejected, anything else or a timeout failed). A semaphore bounds
//! how many commands run at once across all connections. Each command runs in its own process
//! group, and a timeout or a stop kills the whole group: nothing it started is left behind.
//! When the server has an event channel, the command's stderr is reported as its own lines.

mod stderr;

use super::{Inbound, Sink, SinkFuture, SinkResult};
use crate::server::StoreReports;
use std::os::unix::ffi::OsStrExt;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::AsyncWriteExt;
use tokio::process::Command;
use tokio::sync::Semaphore;

pub use stderr::EXEC_STDERR_LINE_MAX;

/// After the command exits, how long its stderr may take to reach its end (a child it left
/// running may hold it open): its lines then come before the message's own event.
const STDERR_GRACE: Duration = Duration::from_millis(200);

#[derive(Debug, Clone)]
/// What the command sink runs for each message, and its bounds.
pub struct ExecOptions {
    /// Run with `sh -c`.
    pub command: String,
    /// This exit status rejects the message (AR/CR); default 2.
    pub reject_exit_code: i32,
    /// A command still running after this is killed and the message failed; default 30 s.
    pub timeout: Duration,
    /// Commands running at once; default 4.
    pub concurrency: usize,
}

impl ExecOptions {
    /// Run `command` for each message, with the default bounds.
    pub fn new(command: impl Into<String>) -> Self {
        ExecOptions {
            command: command.into(),
            reject_exit_code: 2,
            timeout: Duration::from_secs(30),
            concurrency: 4,
        }
    }
}

#[derive(Debug, Clone)]
/// Commits each message by piping it to a command; its exit status decides the answer.
pub struct ExecSink {
    options: Arc<ExecOptions>,
    slots: Arc<Semaphore>,
    /// Where the command's stderr lines go; unset, the command shares the server's stderr.
    reports: Arc<std::sync::OnceLock<StoreReports>>,
}

impl ExecSink {
    /// A sink running `options.command`.
    pub fn new(options: ExecOptions) -> ExecSink {
        let slots = Arc::new(Semaphore::new(options.concurrency.max(1)));
        ExecSink {
            options: Arc::new(options),
            slots,
            reports: Arc::default(),
        }
    }

    async fn run(&self, message: &Inbound) -> SinkResult {
        let Ok(_slot) = self.slots.acquire().await else {
            return SinkResult::failed("exec: closed");
        };
        let mut command = Command::new("sh");
        command
            .arg("-c")
            .arg(&self.options.command)
            .env("MLLP_PEER", &*message.peer)
            .env(
                "MLLP_CONTROL_ID",
                std::ffi::OsStr::from_bytes(message.control_id().unwrap_or_default()),
            )
            .env(
                "MLLP_MESSAGE_TYPE",
                std::ffi::OsStr::from_bytes(message.message_type().unwrap_or_default()),
            )
            .stdin(Stdio::piped())
            .stderr(match self.reports.get() {
                Some(_) => Stdio::piped(),
                None => Stdio::inherit(),
            })
            .process_group(0)
            .kill_on_drop(true);
        let mut child = match command.spawn() {
            Ok(child) => child,
            Err(e) => return SinkResult::failed(format!("exec: cannot start sh: {e}")),
        };
        // Declared after `child`, so dropped before it: the group dies while its leader is
        // not yet reaped, and the group ID cannot have been reused.
        let mut group = GroupKill(child.id());
        // Read from the start, so a command writing much on stderr is never blocked on it.
        let mut said = match (child.stderr.take(), self.reports.get(), child.id()) {
            (Some(err), Some(reports), Some(pid)) => Some(tokio::spawn(stderr::report(
                err,
                message.connection,
                pid,
                reports.clone(),
            ))),
            _ => None,
        };
        let stdin = child.stdin.take();
        let payload = message.payload.clone();
        let work = async {
            if let Some(mut stdin) = stdin {
                // A command that does not read its input is its own business.
                match stdin.write_all(&payload).await {
                    Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => return Err(e),
                    _ => {}
                }
            }
            child.wait().await
        };
        let status = match tokio::time::timeout(self.options.timeout, work).await {
            Ok(Ok(status)) => {
                // Reaped: the group ID may be reused from now on.
                group.0 = None;
                if let Some(said) = &mut said {
                    // Past the grace, the reader carries on alone.
                    let _ = tokio::time::timeout(STDERR_GRACE, said).await;
                }
                status
            }
            Ok(Err(e)) => return SinkResult::failed(format!("exec: {e}")),
            Err(_) => {
                group.kill();
                let _ = child.kill().await;
                return SinkResult::failed(format!(
                    "exec: still running after {}",
                    humantime::format_duration(self.options.timeout)
                ));
            }
        };
        match status.code() {
            Some(0) => SinkResult::committed(),
            Some(code) if code == self.options.reject_exit_code => {
                SinkResult::rejected(format!("exec: exit status {code} (reject)"))
            }
            Some(code) => SinkResult::failed(format!("exec: exit status {code}")),
            None => SinkResult::failed("exec: killed by a signal"),
        }
    }
}

/// The process group of a running command (its ID is the leader's PID), killed on drop.
struct GroupKill(Option<u32>);

impl GroupKill {
    fn kill(&mut self) {
        if let Some(pgid) = self.0.take().and_then(|id| i32::try_from(id).ok()) {
            // SAFETY: `kill` only sends a signal; a negative PID names the process group.
            unsafe {
                libc::kill(-pgid, libc::SIGKILL);
            }
        }
    }
}

impl Drop for GroupKill {
    fn drop(&mut self) {
        self.kill();
    }
}

impl Sink for ExecSink {
    fn commit<'a>(&'a self, message: &'a Inbound) -> SinkFuture<'a, SinkResult> {
        Box::pin(self.run(message))
    }

    fn report_to(&self, reports: StoreReports) {
        let _ = self.reports.set(reports);
    }
}
