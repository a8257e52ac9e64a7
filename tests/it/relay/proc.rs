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
        Self::start_on(0, to, args)
    }

    /// Start on `port` (one a killed relay held), trying again while the port is still taken.
    pub fn start_at(port: u16, to: &str, args: &[&str]) -> RelayProc {
        for _ in 0..50 {
            if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Self::start_on(port, to, args)
    }

    fn start_on(port: u16, to: &str, args: &[&str]) -> RelayProc {
        let port = port.to_string();
        let mut child = Command::new(crate::support::mllp_bin())
            .args([
                "--log-format",
                "json",
                "relay",
                "--listen",
                &port,
                "--to",
                to,
            ])
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

    /// The events until `pred` accepts one (the last), within a few seconds.
    #[allow(dead_code)]
    pub fn events_until(&self, pred: impl Fn(&Value) -> bool) -> Vec<Value> {
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        let mut seen = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let Ok(event) = self.events.recv_timeout(left) else {
                panic!("no such event in time; seen: {seen:#?}");
            };
            let done = pred(&event);
            seen.push(event);
            if done {
                return seen;
            }
        }
    }

    /// Its process id, for /proc.
    #[allow(dead_code)]
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Stop it as an operator would (SIGTERM) and wait for it; every event it wrote.
    #[allow(dead_code)]
    pub fn terminate(mut self) -> Vec<Value> {
        let pid = self.child.id().to_string();
        let sent = Command::new("kill").args(["-TERM", &pid]).status();
        assert!(sent.is_ok_and(|s| s.success()), "SIGTERM to the relay");
        let _ = self.child.wait();
        self.events.try_iter().collect()
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
