//! `mllp relay` as a child process: JSON events from stderr, the bound address from the first.

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

pub struct RelayProc {
    child: Child,
    #[allow(dead_code)]
    pub events: mpsc::Receiver<Value>,
    pub addr: SocketAddr,
}

impl RelayProc {
    /// Start `mllp --log-format json relay --listen 0 --to TO ARGS`.
    pub fn start(to: &str, args: &[&str]) -> RelayProc {
        let mut child = Command::new(crate::support::mllp_bin())
            .args(["--log-format", "json", "relay", "--listen", "0", "--to", to])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start mllp relay");
        let stderr = child.stderr.take().unwrap();
        let (tx, events) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                let value =
                    serde_json::from_str(&line).unwrap_or_else(|_| Value::String(line.clone()));
                if tx.send(value).is_err() {
                    break;
                }
            }
        });
        let first = events
            .recv_timeout(Duration::from_secs(15))
            .expect("no listening event");
        assert_eq!(first["event"], "listening", "first event: {first}");
        let addr = first["addr"].as_str().unwrap().parse().unwrap();
        RelayProc {
            child,
            events,
            addr,
        }
    }

    /// Kill it outright (SIGKILL), as a crash would.
    #[allow(dead_code)]
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for RelayProc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
