//! The command sink: each message piped to `sh -c CMD`, its exit status deciding the answer
//! (0 committed, the reject code rejected, anything else or a timeout failed), and the first
//! line it prints wording the answer (MSA-3, and ERR-8 when negative; made safe first). A
//! semaphore bounds how many commands run at once across all connections. Each command runs in
//! its own process group, killed once the command exits (before it is reaped, so the group ID
//! cannot have been reused), at a timeout and at a stop: nothing it started outlives it. When
//! the server has an event channel, the command's stderr is reported as its own lines.

mod stderr;
mod words;

use super::{Inbound, Reply, Sink, SinkFuture, SinkResult};
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
        let mut child = match self.command(message).spawn() {
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
        let mut line = child
            .stdout
            .take()
            .map(|out| tokio::spawn(words::first_line(out)));
        let stdin = child.stdin.take();
        let payload = message.payload.clone();
        let pid = child.id();
        let work = async {
            if let Some(mut stdin) = stdin {
                // A command that does not read its input is its own business.
                match stdin.write_all(&payload).await {
                    Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => return Err(e),
                    _ => {}
                }
            }
            // Seen to exit, not yet reaped: what it left running in its group goes now.
            if let Some(pid) = pid {
                let _ = tokio::task::spawn_blocking(move || exited(pid)).await;
            }
            group.kill();
            child.wait().await
        };
        let status = match tokio::time::timeout(self.options.timeout, work).await {
            Ok(Ok(status)) => {
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
        let result = self.verdict(status);
        // The group is gone: the pipe's last writer with it.
        let first = match line.as_mut() {
            Some(task) => tokio::time::timeout(STDERR_GRACE, task)
                .await
                .ok()
                .and_then(Result::ok),
            None => None,
        };
        match first.and_then(|line| words::made_safe(&line)) {
            Some(words) => result.replying(Reply::Worded(words)),
            None => result,
        }
    }

    /// `sh -c` the command, in a process group of its own, told the message's peer, control
    /// ID and type.
    fn command(&self, message: &Inbound) -> Command {
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
            .stdout(Stdio::piped())
            .stderr(match self.reports.get() {
                Some(_) => Stdio::piped(),
                None => Stdio::inherit(),
            })
            .process_group(0)
            .kill_on_drop(true);
        command
    }

    /// The answer the exit status decides.
    fn verdict(&self, status: std::process::ExitStatus) -> SinkResult {
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

/// Wait until process `pid` has exited, leaving it to be reaped.
fn exited(pid: u32) {
    use rustix::process::{waitid, Pid, WaitId, WaitIdOptions};
    let Some(pid) = i32::try_from(pid).ok().and_then(Pid::from_raw) else {
        return;
    };
    let options = WaitIdOptions::EXITED | WaitIdOptions::NOWAIT;
    while let Err(rustix::io::Errno::INTR) = waitid(WaitId::Pid(pid), options) {}
}

/// The process group of a running command (its ID is the leader's PID), killed on drop.
struct GroupKill(Option<u32>);

impl GroupKill {
    fn kill(&mut self) {
        use rustix::process::{kill_process_group, Pid, Signal};
        let leader = self.0.take().and_then(|id| i32::try_from(id).ok());
        if let Some(pgid) = leader.and_then(Pid::from_raw) {
            let _ = kill_process_group(pgid, Signal::KILL);
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
