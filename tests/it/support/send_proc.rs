//! `mllp send` as a child process run to its end, or started and stopped by a signal mid-run:
//! what it printed and how it exited, with stderr checked for the payload marker. The caller
//! builds the command (arguments, environment).

use super::no_payload::MARKER;
use super::peer_wire::message;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::process::{Child, ChildStderr, ChildStdout};

pub use super::run::Run;

/// Run `cmd` with `stdin` piped in then closed (or no stdin at all), bounded in time.
pub async fn finish(mut cmd: tokio::process::Command, stdin: Option<Vec<u8>>) -> Run {
    cmd.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .kill_on_drop(true);
    let mut child = cmd.spawn().unwrap();
    if let Some(bytes) = stdin {
        use tokio::io::AsyncWriteExt;
        let mut pipe = child.stdin.take().unwrap();
        pipe.write_all(&bytes).await.unwrap();
    }
    let out = tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
        .await
        .expect("send finished")
        .unwrap();
    Run::checked(&out, "send stderr")
}

/// A run started with its output piped, to be signalled mid-run; the lines read before the
/// signal are kept in its output.
pub struct Running {
    child: Child,
    stdout: BufReader<ChildStdout>,
    stderr: BufReader<ChildStderr>,
    out: Vec<u8>,
    err: Vec<u8>,
}

impl Running {
    /// Start `cmd` with no stdin.
    pub fn start(mut cmd: tokio::process::Command) -> Running {
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        Running {
            stdout: BufReader::new(child.stdout.take().unwrap()),
            stderr: BufReader::new(child.stderr.take().unwrap()),
            child,
            out: Vec::new(),
            err: Vec::new(),
        }
    }

    /// The next line on stdout, which must come within 20 s.
    pub async fn stdout_line(&mut self) -> String {
        next_line(&mut self.stdout, &mut self.out, "stdout").await
    }

    /// The next line on stderr, which must come within 20 s.
    pub async fn stderr_line(&mut self) -> String {
        next_line(&mut self.stderr, &mut self.err, "stderr").await
    }

    /// Send `signal` (`INT`, `TERM`) to the run.
    pub fn signal(&self, signal: &str) {
        let pid = self.child.id().expect("the run is still going").to_string();
        let killed = std::process::Command::new("kill")
            .args([&format!("-{signal}"), &pid])
            .status();
        assert!(killed.unwrap().success());
    }

    /// Both outputs read to their end and the exit, within 20 s, then checked like any run.
    pub async fn finish(mut self) -> Run {
        let ended = async {
            let (out, err) = tokio::join!(
                self.stdout.read_to_end(&mut self.out),
                self.stderr.read_to_end(&mut self.err)
            );
            out.unwrap();
            err.unwrap();
            self.child.wait().await.unwrap()
        };
        let status = tokio::time::timeout(Duration::from_secs(20), ended)
            .await
            .expect("send ended after the signal");
        let out = std::process::Output {
            status,
            stdout: self.out,
            stderr: self.err,
        };
        Run::checked(&out, "send stderr")
    }
}

/// The next line of `pipe` (kept in `seen` too), without its line end.
async fn next_line<R: tokio::io::AsyncRead + Unpin>(
    pipe: &mut BufReader<R>,
    seen: &mut Vec<u8>,
    what: &str,
) -> String {
    let mut line = Vec::new();
    tokio::time::timeout(Duration::from_secs(20), pipe.read_until(b'\n', &mut line))
        .await
        .unwrap_or_else(|_| panic!("a line on {what} within 20 s"))
        .unwrap();
    seen.extend_from_slice(&line);
    String::from_utf8_lossy(&line).trim_end().to_string()
}

/// `n` messages `{prefix}{i}` (1-based), each a CR-terminated ADT carrying the marker.
pub fn messages(prefix: &str, n: usize) -> Vec<u8> {
    (1..=n)
        .flat_map(|i| message(&format!("{prefix}{i}"), MARKER))
        .collect()
}
