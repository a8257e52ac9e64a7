//! Plumbing shared by the interop peers (python-hl7, node-hl7): what every peer offers
//! ([`InteropPeer`]), their server processes, killed on drop, and the `mllp` runs and outputs the
//! interop tests read the same way for every peer.

use super::mllp;
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

pub const WAIT: Duration = Duration::from_secs(15);

/// An independent MLLP implementation, found installed.
pub trait InteropPeer {
    /// Its server, answering every message with `code`; returns once it printed its port.
    fn server(&self, code: &str) -> LineServer;
}

/// A child process killed (and reaped) when dropped.
pub struct ChildGuard(pub Child);

impl Drop for ChildGuard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A peer server process that prints its port on the first stdout line, then one line per event.
pub struct LineServer {
    pub child: ChildGuard,
    pub lines: mpsc::Receiver<String>,
    pub port: u16,
}

impl LineServer {
    /// Starts `cmd` (`what` names it in failures); returns once it printed its port.
    pub fn start(mut cmd: Command, what: &str) -> LineServer {
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("start the {what}: {e}"));
        let stdout = child.stdout.take().unwrap();
        let child = ChildGuard(child);
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let first = lines
            .recv_timeout(WAIT)
            .unwrap_or_else(|_| panic!("the {what} printed no port"));
        let port = first.trim().parse().expect("a port number");
        LineServer { child, lines, port }
    }

    /// Stops the server and returns every control ID its handler was given (the `RECV` lines
    /// already written to its stdout pipe, read to the end).
    pub fn stop(self) -> Vec<String> {
        let LineServer { child, lines, .. } = self;
        drop(child);
        lines.iter().map(|line| recv_id(&line)).collect()
    }
}

/// The control ID of a `RECV <MSH-10>` line.
fn recv_id(line: &str) -> String {
    match line.strip_prefix("RECV ") {
        Some(id) => id.to_string(),
        None => panic!("unexpected server line {line:?}"),
    }
}

/// One JSON value per line.
pub fn json_lines(bytes: &[u8]) -> Vec<Value> {
    String::from_utf8(bytes.to_vec())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l:?}")))
        .collect()
}

/// Committed `.hl7` files of an `--out-dir`, in commit order (names sort by time and sequence).
pub fn committed(dir: &Path) -> Vec<Vec<u8>> {
    let mut names: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "hl7"))
        .collect();
    names.sort();
    names.iter().map(|p| std::fs::read(p).unwrap()).collect()
}

/// `mllp probe --send --json` against the peer server on `port`, expected to exit 0.
pub fn probe_send_json(port: u16) -> Value {
    let run = mllp()
        .args(["probe", &format!("127.0.0.1:{port}"), "--send"])
        .args(["--json", "--connect-timeout", "5s", "--ack-timeout", "5s"])
        .timeout(Duration::from_secs(30))
        .assert()
        .code(0)
        .get_output()
        .clone();
    serde_json::from_slice(&run.stdout).unwrap()
}

/// A two-second `mllp soak --json` against the peer server on `port`, expected to exit 0.
pub fn soak_json(port: u16) -> Value {
    let run = mllp()
        .args(["soak", "--host", "127.0.0.1", "--port"])
        .arg(port.to_string())
        .args(["--allow-synthetic", "--duration", "2s", "--json"])
        .timeout(Duration::from_secs(60))
        .assert()
        .code(0)
        .get_output()
        .clone();
    serde_json::from_slice(&run.stdout).unwrap()
}
